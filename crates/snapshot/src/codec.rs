//! A compact binary form of a [`Snapshot`], for handing a parsed model from a Web Worker to the page
//! (a transferable `ArrayBuffer`): columns are written as raw little-endian arrays, so encoding and
//! decoding are close to a memory copy. Decoding checks every length and never panics.

use crate::batch;
use crate::model::*;

const MAGIC: &[u8; 8] = b"MGSNAP03";
const MAX_DEPTH: usize = 64;

/// The layout of the fixed-width records, by byte offset: the writer fills and the reader reads them by
/// these names (everything else is a length followed by its items). Integers are little-endian.
mod layout {
    /// A segment: a head, the pool's two `i64` when `HAS_POOL` is set, a tail, then its blocks.
    pub mod segment {
        /// `i64`.
        pub const DEVICE: usize = 0;
        /// Six `u64`: address, total, allocated, active and requested size, stream.
        pub const FIGURES: usize = 8;
        /// `u32` string id of the segment type, or `NONE_ID`.
        pub const TYPE: usize = 56;
        /// `u8`: 1 when a pool record follows.
        pub const HAS_POOL: usize = 60;
        pub const HEAD: usize = 61;
        /// Two `i64`.
        pub const POOL: usize = 16;
        /// In the tail: `u8` is-expandable, then the `u32` stack id.
        pub const EXPANDABLE: usize = 0;
        pub const STACK: usize = 1;
        pub const TAIL: usize = 5;
        /// The least a segment takes: head, tail, its block count and its history count.
        pub const MIN: usize = HEAD + TAIL + 16;
    }
    /// A block of a segment.
    pub mod block {
        /// `u64` each.
        pub const ADDRESS: usize = 0;
        pub const SIZE: usize = 8;
        pub const REQUESTED: usize = 16;
        /// `u8` state code (see `block_state`), then the `u32` name of an unknown state.
        pub const STATE: usize = 24;
        pub const STATE_NAME: usize = 25;
        /// `u32` stack id.
        pub const STACK: usize = 29;
        pub const LEN: usize = 33;
    }
    /// A trace entry's action: `u8` code ([`crate::Action::code`]), then the `u32` name of an unknown one.
    pub const ACTION_LEN: usize = 5;
    /// A legacy history record of a segment's block: `u32` block index, `u64` address, `u64` real
    /// size, `u32` stack id.
    pub const HISTORY_LEN: usize = 24;
}

/// Block states by code, both ways (see [`block_state_of`]); code 3 is an unknown state, named by its
/// string id.
fn block_state_code(state: BlockState) -> (u8, u32) {
    match state {
        BlockState::ActiveAllocated => (0, NONE_ID),
        BlockState::ActivePendingFree => (1, NONE_ID),
        BlockState::Inactive => (2, NONE_ID),
        BlockState::Other(s) => (3, s.0),
    }
}

/// The known state of `code` (`None`: an unknown state, named by its string id).
fn block_state_of(code: u8) -> Option<BlockState> {
    match code {
        0 => Some(BlockState::ActiveAllocated),
        1 => Some(BlockState::ActivePendingFree),
        2 => Some(BlockState::Inactive),
        _ => None,
    }
}

fn put<const N: usize>(record: &mut [u8], at: usize, bytes: [u8; N]) {
    record[at..at + N].copy_from_slice(&bytes);
}

/// Why a buffer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "corrupt model buffer: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

/// What [`encode_into`] hands the encoding to.
type Sink<'a> = &'a mut dyn FnMut(&[u8]);

/// Where [`encode`] writes: `out`, handed in chunks of about [`CHUNK`] bytes to `sink` when there is one
/// (see [`encode_into`]).
struct Writer<'a> {
    out: Vec<u8>,
    sink: Option<Sink<'a>>,
    /// Bytes handed to the sink so far.
    flushed: usize,
}

/// The chunk [`encode_into`] hands on.
const CHUNK: usize = 1 << 20;

impl Writer<'_> {
    /// Hands `out` to the sink once it holds a chunk (called between items: an item stays whole).
    fn flush_if_big(&mut self) {
        if self.out.len() >= CHUNK {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some(sink) = &mut self.sink {
            sink(&self.out);
            self.flushed += self.out.len();
            self.out.clear();
        }
    }

    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.u64(v as u64);
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.out.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<StrId>) {
        self.u32(s.map_or(NONE_ID, |s| s.0));
    }
    /// A column: its length, then `f` of each item. Long columns go in batches (see [`batch`]).
    fn u32s<T: Copy>(&mut self, v: &[T], f: impl Fn(T) -> u32) {
        self.len(v.len());
        batch::ranges(v.len(), |r| {
            for &x in &v[r] {
                self.u32(f(x));
            }
            self.flush_if_big();
        });
    }
    /// A trace column: its length, then `1` and one item when all are equal (the stream, compile-context
    /// and user-metadata columns usually are), else `0` and every item.
    fn trace_column<T: Copy + PartialEq, const W: usize>(
        &mut self,
        v: &[T],
        item: impl Fn(T) -> [u8; W],
    ) {
        self.len(v.len());
        if repeated(v) {
            self.u8(1);
            self.out.extend_from_slice(&item(v[0]));
            return;
        }
        self.u8(0);
        self.items(v, item);
    }
    /// Every item of `v`, `W` bytes each. A batch at a time (see [`batch`]), each sized once, then
    /// filled (a loop the compiler turns into little more than a copy), then handed on when big.
    fn items<T: Copy, const W: usize>(&mut self, v: &[T], item: impl Fn(T) -> [u8; W]) {
        batch::ranges(v.len(), |r| {
            let start = self.out.len();
            self.out.resize(start + r.len() * W, 0);
            for (dst, &x) in self.out[start..].chunks_exact_mut(W).zip(&v[r]) {
                dst.copy_from_slice(&item(x));
            }
            self.flush_if_big();
        });
    }
    fn action(a: Action) -> [u8; layout::ACTION_LEN] {
        let other = match a {
            Action::Other(s) => s.0,
            _ => NONE_ID,
        };
        let code = a.code();
        let o = other.to_le_bytes();
        [code, o[0], o[1], o[2], o[3]]
    }
    fn py(&mut self, v: &PyValue) {
        match v {
            PyValue::None => self.u8(0),
            PyValue::Bool(b) => {
                self.u8(1);
                self.u8(*b as u8)
            }
            PyValue::Int(i) => {
                self.u8(2);
                self.out.extend_from_slice(&i.to_le_bytes())
            }
            PyValue::Float(f) => {
                self.u8(3);
                self.u64(f.to_bits())
            }
            PyValue::Str(s) => {
                self.u8(4);
                self.str(s)
            }
            PyValue::Bytes(b) => {
                self.u8(5);
                self.bytes(b)
            }
            PyValue::List(items) | PyValue::Tuple(items) => {
                self.u8(if matches!(v, PyValue::List(_)) { 6 } else { 7 });
                self.len(items.len());
                for x in items {
                    self.py(x);
                }
            }
            PyValue::Dict(kv) => {
                self.u8(8);
                self.len(kv.len());
                for (k, x) in kv {
                    self.py(k);
                    self.py(x);
                }
            }
        }
    }
}

/// Whether a trace column is written as one repeated item (see `Writer::trace_column`). A function of
/// its own: inlined, its scan of a whole column made its caller (the worker's `end`, through
/// [`sizes`]) hot in a browser, which then optimised that 10 KB function, called once a load, as the
/// load ended (see "Tier-up" in `batch`).
#[inline(never)]
fn repeated<T: PartialEq>(v: &[T]) -> bool {
    v.len() > 1 && v.iter().all(|x| *x == v[0])
}

/// How long an encoding is, known before it is written: a page decodes a worker's encoding as its
/// pieces arrive (see [`Arriving`]), its lengths checked against `total` as for a whole one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// The whole encoding's bytes.
    pub total: usize,
    /// Its head's: everything before the first trace column (the interned tables, the segments and
    /// their blocks, the trace count). The decoder waits for the head whole, then for each slice of
    /// a trace column as it needs it, then for the rest.
    pub head: usize,
}

impl Sizes {
    /// An encoding that is all there: nothing to wait for.
    pub fn whole(len: usize) -> Sizes {
        Sizes {
            total: len,
            head: len,
        }
    }
}

/// The [`Sizes`] of `s`'s encoding, counted as [`encode`] writes it (a pass over the tables, and over
/// the trace columns that are one repeated value).
pub fn sizes(s: &Snapshot) -> Sizes {
    use layout::{block, segment};
    let i = &s.interner;
    let strings: usize = (0..i.string_count())
        .map(|k| 8 + i.str(StrId(k as u32)).len())
        .sum();
    let frames: usize = (0..i.frame_count())
        .map(|k| {
            17 + if i.frame(FrameId(k as u32)).fx.is_some() {
                16
            } else {
                0
            }
        })
        .sum();
    let stacks: usize = (0..i.stack_count())
        .map(|k| 8 + 4 * i.stack(StackId(k as u32)).len())
        .sum();
    let segments: usize = s
        .segments
        .iter()
        .map(|seg| {
            let pool = if seg.segment_pool_id.is_some() {
                segment::POOL
            } else {
                0
            };
            let history: usize = seg.blocks.iter().map(|b| b.history.len()).sum();
            segment::HEAD
                + pool
                + segment::TAIL
                + 8
                + seg.blocks.len() * block::LEN
                + 8
                + history * layout::HISTORY_LEN
        })
        .sum();
    let head = MAGIC.len() + 2 + 8 + strings + 8 + frames + 8 + stacks + 8 + segments + 8;
    fn column<T: PartialEq>(v: &[T], width: usize) -> usize {
        9 + if repeated(v) { width } else { v.len() * width }
    }
    let traces: usize = s
        .device_traces
        .iter()
        .map(|t| {
            8 + t.len() * layout::ACTION_LEN
                + column(&t.addr, 8)
                + column(&t.size, 8)
                + column(&t.stream, 8)
                + column(&t.time_us, 8)
                + column(&t.stack, 4)
                + column(&t.compile_context, 4)
                + column(&t.user_metadata, 4)
                + 8
                + 12 * t.device_free.len()
        })
        .sum();
    let settings = 1 + s.allocator_settings.as_ref().map_or(0, py_len);
    let annotations = 8 + 24 * s.external_annotations.len();
    Sizes {
        total: head + traces + settings + annotations,
        head,
    }
}

/// The bytes `Writer::py` writes for `v`.
fn py_len(v: &PyValue) -> usize {
    1 + match v {
        PyValue::None => 0,
        PyValue::Bool(_) => 1,
        PyValue::Int(_) => 16,
        PyValue::Float(_) => 8,
        PyValue::Str(s) => 8 + s.len(),
        PyValue::Bytes(b) => 8 + b.len(),
        PyValue::List(items) | PyValue::Tuple(items) => 8 + items.iter().map(py_len).sum::<usize>(),
        PyValue::Dict(kv) => 8 + kv.iter().map(|(k, x)| py_len(k) + py_len(x)).sum::<usize>(),
    }
}

/// Encodes `s` into a byte buffer that [`decode`] reads back exactly.
pub fn encode(s: &Snapshot) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(64 + s.heap_bytes()),
        sink: None,
        flushed: 0,
    };
    write(s, &mut w);
    w.out
}

/// [`encode`], handed to `sink` a chunk at a time (about a MiB each) instead of gathered in one buffer:
/// a page's worker copies them into the pieces it posts, and never holds the encoding whole. Returns
/// the length of the encoding.
pub fn encode_into(s: &Snapshot, sink: &mut dyn FnMut(&[u8])) -> usize {
    let mut w = Writer {
        out: Vec::with_capacity(2 * CHUNK),
        sink: Some(sink),
        flushed: 0,
    };
    write(s, &mut w);
    w.flush();
    w.flushed
}

fn write(s: &Snapshot, w: &mut Writer) {
    w.out.extend_from_slice(MAGIC);
    w.u8(s.protocol);
    w.u8(match s.format {
        Format::Current => 0,
        Format::LegacyHistory => 1,
        Format::SegmentList => 2,
    });
    let i = &s.interner;
    w.len(i.string_count());
    for k in 0..i.string_count() {
        w.str(i.str(StrId(k as u32)));
        w.flush_if_big();
    }
    w.len(i.frame_count());
    for k in 0..i.frame_count() {
        let f = i.frame(FrameId(k as u32));
        w.u32(f.filename.0);
        w.u64(f.line);
        w.u32(f.name.0);
        match f.fx {
            None => w.u8(0),
            Some(fx) => {
                w.u8(1);
                for x in [fx.node_op, fx.node_name, fx.node_target, fx.original_trace] {
                    w.opt_str(x);
                }
            }
        }
        w.flush_if_big();
    }
    w.len(i.stack_count());
    for k in 0..i.stack_count() {
        w.u32s(i.stack(StackId(k as u32)), |f| f.0);
    }
    w.len(s.segments.len());
    for seg in &s.segments {
        use layout::{block, segment};
        let mut head = [0u8; segment::HEAD];
        put(&mut head, segment::DEVICE, seg.device.to_le_bytes());
        let figures = [
            seg.address,
            seg.total_size,
            seg.allocated_size,
            seg.active_size,
            seg.requested_size,
            seg.stream,
        ];
        for (k, v) in figures.into_iter().enumerate() {
            put(&mut head, segment::FIGURES + 8 * k, v.to_le_bytes());
        }
        let segment_type = seg.segment_type.map_or(NONE_ID, |s| s.0);
        put(&mut head, segment::TYPE, segment_type.to_le_bytes());
        head[segment::HAS_POOL] = seg.segment_pool_id.is_some() as u8;
        w.out.extend_from_slice(&head);
        if let Some((a, b)) = seg.segment_pool_id {
            let mut pool = [0u8; segment::POOL];
            put(&mut pool, 0, a.to_le_bytes());
            put(&mut pool, 8, b.to_le_bytes());
            w.out.extend_from_slice(&pool);
        }
        let mut tail = [0u8; segment::TAIL];
        tail[segment::EXPANDABLE] = seg.is_expandable as u8;
        put(&mut tail, segment::STACK, seg.stack.0.to_le_bytes());
        w.out.extend_from_slice(&tail);
        w.len(seg.blocks.len());
        for b in &seg.blocks {
            let mut record = [0u8; block::LEN];
            put(&mut record, block::ADDRESS, b.address.to_le_bytes());
            put(&mut record, block::SIZE, b.size.to_le_bytes());
            put(
                &mut record,
                block::REQUESTED,
                b.requested_size.to_le_bytes(),
            );
            let (code, name) = block_state_code(b.state);
            record[block::STATE] = code;
            put(&mut record, block::STATE_NAME, name.to_le_bytes());
            put(&mut record, block::STACK, b.stack.0.to_le_bytes());
            w.out.extend_from_slice(&record);
            w.flush_if_big();
        }
        // Legacy history records, for the blocks that have them: (block index, address, real size,
        // stack) each.
        w.len(seg.blocks.iter().map(|b| b.history.len()).sum());
        let blocks = seg.blocks.iter().enumerate();
        for (k, r) in blocks.flat_map(|(k, b)| b.history.iter().map(move |r| (k, r))) {
            w.u32(k as u32);
            w.u64(r.address);
            w.u64(r.real_size);
            w.u32(r.stack.0);
            w.flush_if_big();
        }
        w.flush_if_big();
    }
    w.len(s.device_traces.len());
    for t in &s.device_traces {
        w.len(t.len());
        w.items(&t.action, Writer::action);
        w.trace_column(&t.addr, u64::to_le_bytes);
        w.trace_column(&t.size, u64::to_le_bytes);
        w.trace_column(&t.stream, u64::to_le_bytes);
        w.trace_column(&t.time_us, i64::to_le_bytes);
        w.trace_column(&t.stack, |x| x.0.to_le_bytes());
        w.trace_column(&t.compile_context, u32::to_le_bytes);
        w.trace_column(&t.user_metadata, u32::to_le_bytes);
        w.len(t.device_free.len());
        for &(k, f) in &t.device_free {
            w.u32(k);
            w.u64(f);
            w.flush_if_big();
        }
    }
    match &s.allocator_settings {
        None => w.u8(0),
        Some(v) => {
            w.u8(1);
            w.py(v);
        }
    }
    w.len(s.external_annotations.len());
    for a in &s.external_annotations {
        w.u32(a.stage.0);
        w.u32(a.name.0);
        w.i64(a.device);
        w.i64(a.time_us.unwrap_or(i64::MIN));
        w.flush_if_big();
    }
}

/// The items of `raw`, `W` bytes each, read by `item`; in batches (see [`batch`]).
fn items<T, const W: usize>(
    raw: &[u8],
    item: &impl Fn([u8; W]) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut out = Vec::with_capacity(raw.len() / W);
    items_into(raw, item, &mut out)?;
    Ok(out)
}

/// [`items`], appended to `out`.
fn items_into<T, const W: usize>(
    raw: &[u8],
    item: &impl Fn([u8; W]) -> Result<T, DecodeError>,
    out: &mut Vec<T>,
) -> Result<(), DecodeError> {
    batch::try_ranges(raw.len() / W, |r| {
        for c in raw[r.start * W..r.end * W].chunks_exact(W) {
            out.push(item(c.try_into().expect("W bytes"))?);
        }
        Ok(())
    })
}

use crate::batch::NoPause;
pub use crate::batch::Pause;

// Work between two pauses, sized for code the browser has not optimised yet (a cold page's decode):
// 2^18 items of a trace column in one slice held a cold page for 150–190 ms at 2 GB.
/// Items decoded between two pauses (a few milliseconds of work on baseline code).
const SLICE_ITEMS: usize = 1 << 15;
/// Strings, frames or stacks interned between pauses (each hashed and stored: 2^18 stacks took 60 ms
/// in one go on a page).
const SLICE_INTERNED: usize = 1 << 11;
/// Blocks decoded between pauses (each is a `Block` of its own, heavier than a column's item).
const SLICE_BLOCKS: usize = 1 << 12;

/// The first of `items` that is not `ok`, a batch at a time (a trace column holds millions).
async fn first_bad<T: Copy, P: Pause>(
    items: &[T],
    ok: impl Fn(T) -> bool,
    pause: &mut P,
) -> Option<T> {
    let mut bad = None;
    crate::batch::ranges_paused(
        items.len(),
        |r| {
            if bad.is_none() {
                bad = items[r].iter().copied().find(|&x| !ok(x));
            }
        },
        pause,
    )
    .await;
    bad
}

/// [`items_into`] for items that cannot be wrong (plain integers): a loop the compiler turns into
/// little more than a copy.
fn plain_items_into<T, const W: usize>(raw: &[u8], item: impl Fn([u8; W]) -> T, out: &mut Vec<T>) {
    batch::ranges(raw.len() / W, |r| {
        out.extend(
            raw[r.start * W..r.end * W]
                .chunks_exact(W)
                .map(|c| item(c.try_into().expect("W bytes"))),
        );
    });
}

/// What [`decode_sliced`] reads: an encoding whose bytes may still be arriving (a page's worker posts
/// its pieces as it writes them). The decoder reads only bytes it has waited for.
pub trait Arriving: std::io::Read {
    /// Waits until the first `upto` bytes of the encoding have arrived (read already or not); false
    /// if they never will (the input ended first).
    fn until(&mut self, upto: usize) -> impl std::future::Future<Output = bool>;
}

/// An input that is all there (a byte slice, a buffered reader): it never waits.
pub struct Whole<R>(pub R);

impl<R: std::io::Read> std::io::Read for Whole<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(out)
    }
}

impl<R: std::io::Read> Arriving for Whole<R> {
    fn until(&mut self, _upto: usize) -> impl std::future::Future<Output = bool> {
        std::future::ready(true)
    }
}

impl<A: Arriving> Arriving for &mut A {
    fn until(&mut self, upto: usize) -> impl std::future::Future<Output = bool> {
        (**self).until(upto)
    }
}

/// Reads the encoding from any `Read` (a JS buffer on the page: no full copy of it is ever made), with
/// the total length known so every count is checked against what is left.
struct Reader<R> {
    input: R,
    at: usize,
    total: usize,
    buf: Vec<u8>,
}

impl<R: Arriving> Reader<R> {
    /// Waits until the next `n` bytes (at most what is left) have arrived.
    async fn wait(&mut self, n: usize) -> Result<(), DecodeError> {
        let upto = self.at.saturating_add(n).min(self.total);
        if self.input.until(upto).await {
            Ok(())
        } else {
            Err(DecodeError(format!("ends early at byte {}", self.at)))
        }
    }
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        if n > self.total - self.at {
            return Err(DecodeError(format!("ends early at byte {}", self.at)));
        }
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        self.input
            .read_exact(&mut self.buf[..n])
            .map_err(|_| DecodeError(format!("ends early at byte {}", self.at)))?;
        self.at += n;
        Ok(&self.buf[..n])
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(self.u64()? as i64)
    }
    /// A count of items that each take at least `min_item` bytes: bounded by what is left.
    fn len(&mut self, min_item: usize) -> Result<usize, DecodeError> {
        let n = self.u64()?;
        let left = (self.total - self.at) as u64;
        if n.saturating_mul(min_item.max(1) as u64) > left {
            return Err(DecodeError(format!(
                "count {n} at byte {} exceeds the buffer",
                self.at
            )));
        }
        Ok(n as usize)
    }
    fn bytes(&mut self) -> Result<&[u8], DecodeError> {
        let n = self.len(1)?;
        self.take(n)
    }
    fn str(&mut self) -> Result<&str, DecodeError> {
        std::str::from_utf8(self.bytes()?).map_err(|_| DecodeError("a string is not UTF-8".into()))
    }
    fn opt_str(&mut self, strings: usize) -> Result<Option<StrId>, DecodeError> {
        match self.u32()? {
            NONE_ID => Ok(None),
            v if (v as usize) < strings => Ok(Some(StrId(v))),
            v => Err(DecodeError(format!("string id {v} out of range"))),
        }
    }
    fn u32s(&mut self) -> Result<Vec<u32>, DecodeError> {
        self.column(|x: [u8; 4]| Ok(u32::from_le_bytes(x)))
    }
    /// A column of fixed-width items, each read by `item`; in batches (see [`batch`]).
    fn column<T, const W: usize>(
        &mut self,
        item: impl Fn([u8; W]) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let n = self.len(W)?;
        items(self.take(n * W)?, &item)
    }
    /// `n` items of `W` bytes, a slice of them at a time appended to the result by `append`, pausing
    /// between slices.
    async fn slices<T, const W: usize, P: Pause>(
        &mut self,
        n: usize,
        mut append: impl FnMut(&[u8], &mut Vec<T>) -> Result<(), DecodeError>,
        pause: &mut P,
    ) -> Result<Vec<T>, DecodeError> {
        n.checked_mul(W)
            .filter(|&bytes| bytes <= self.total - self.at)
            .ok_or_else(|| DecodeError(format!("ends early at byte {}", self.at)))?;
        let mut out = Vec::with_capacity(n);
        let mut done = 0;
        while done < n {
            let k = SLICE_ITEMS.min(n - done);
            self.wait(k * W).await?;
            append(self.take(k * W)?, &mut out)?;
            done += k;
            pause.pause().await;
        }
        Ok(out)
    }
    /// [`Reader::column`] a slice at a time, pausing between slices.
    async fn column_sliced<T, const W: usize, P: Pause>(
        &mut self,
        item: impl Fn([u8; W]) -> Result<T, DecodeError>,
        pause: &mut P,
    ) -> Result<Vec<T>, DecodeError> {
        self.wait(8).await?;
        let n = self.len(W)?;
        self.slices::<T, W, P>(n, |raw, out| items_into(raw, &item, out), pause)
            .await
    }
    /// A trace column of `len` plain integers (see `Writer::trace_column`), a slice at a time, pausing
    /// between slices. Compared with the trace's length, not with the bytes left: a repeated column is
    /// short.
    async fn trace_column_sliced<T: Clone, const W: usize, P: Pause>(
        &mut self,
        len: usize,
        item: impl Fn([u8; W]) -> T,
        pause: &mut P,
    ) -> Result<Vec<T>, DecodeError> {
        // The length, the tag and a repeated item.
        self.wait(9 + W).await?;
        if self.u64()? != len as u64 {
            return Err(DecodeError("trace columns differ in length".into()));
        }
        match self.u8()? {
            0 => {
                let append = |raw: &[u8], out: &mut Vec<T>| {
                    plain_items_into(raw, &item, out);
                    Ok(())
                };
                self.slices::<T, W, P>(len, append, pause).await
            }
            1 => {
                // Repeated: filled a slice at a time too (tens of MB at a million entries).
                let x = item(self.take(W)?.try_into().expect("W bytes"));
                Ok(crate::batch::filled(x, len, pause).await)
            }
            t => Err(DecodeError(format!("unknown column tag {t}"))),
        }
    }
    fn py(&mut self, depth: usize) -> Result<PyValue, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError("settings nest too deep".into()));
        }
        Ok(match self.u8()? {
            0 => PyValue::None,
            1 => PyValue::Bool(self.u8()? != 0),
            2 => PyValue::Int(i128::from_le_bytes(
                self.take(16)?.try_into().expect("16 bytes"),
            )),
            3 => PyValue::Float(f64::from_bits(self.u64()?)),
            4 => PyValue::Str(self.str()?.to_owned()),
            5 => PyValue::Bytes(self.bytes()?.to_vec()),
            t @ (6 | 7) => {
                let n = self.len(1)?;
                let items = (0..n)
                    .map(|_| self.py(depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                if t == 6 {
                    PyValue::List(items)
                } else {
                    PyValue::Tuple(items)
                }
            }
            8 => {
                let n = self.len(2)?;
                PyValue::Dict(
                    (0..n)
                        .map(|_| Ok((self.py(depth + 1)?, self.py(depth + 1)?)))
                        .collect::<Result<Vec<_>, DecodeError>>()?,
                )
            }
            t => return Err(DecodeError(format!("unknown value tag {t}"))),
        })
    }
}

/// Decodes what [`encode`] wrote. Ids are checked against their tables, so the model is safe to index.
pub fn decode(bytes: &[u8]) -> Result<Snapshot, DecodeError> {
    decode_from(bytes, bytes.len())
}

/// [`decode`] from a reader of `total` bytes, in pieces.
pub fn decode_from<R: std::io::Read>(input: R, total: usize) -> Result<Snapshot, DecodeError> {
    crate::batch::run_ready(decode_sliced(
        Whole(input),
        Sizes::whole(total),
        &mut NoPause,
    ))
}

/// [`decode_from`] in slices, awaiting `pause` between them (the page's event loop runs there), from
/// an input that may still be arriving: its head whole first, then each slice of a trace column as it
/// is needed, then the rest (see [`Sizes`]).
pub async fn decode_sliced<R: Arriving, P: Pause>(
    input: R,
    sizes: Sizes,
    pause: &mut P,
) -> Result<Snapshot, DecodeError> {
    let mut r = Reader {
        input,
        at: 0,
        total: sizes.total,
        buf: Vec::new(),
    };
    r.wait(sizes.head).await?;
    if r.take(8)? != MAGIC {
        return Err(DecodeError("wrong magic".into()));
    }
    let protocol = r.u8()?;
    let format = match r.u8()? {
        0 => Format::Current,
        1 => Format::LegacyHistory,
        2 => Format::SegmentList,
        f => return Err(DecodeError(format!("unknown format {f}"))),
    };
    let mut interner = Interner::new();
    let n = r.len(8)?;
    interner.reserve_strings(n);
    for k in 0..n {
        let id = interner.intern_str(r.str()?);
        if id.0 as usize != k {
            return Err(DecodeError("duplicate string".into()));
        }
        if k % SLICE_INTERNED == SLICE_INTERNED - 1 {
            pause.pause().await;
        }
    }
    pause.pause().await;
    let strings = n;
    let str_id = |v: u32| {
        if (v as usize) < strings {
            Ok(StrId(v))
        } else {
            Err(DecodeError(format!("string id {v} out of range")))
        }
    };
    let n = r.len(17)?;
    interner.reserve_frames(n);
    for k in 0..n {
        let filename = str_id(r.u32()?)?;
        let line = r.u64()?;
        let name = str_id(r.u32()?)?;
        let fx = match r.u8()? {
            0 => None,
            _ => Some(FxFields {
                node_op: r.opt_str(strings)?,
                node_name: r.opt_str(strings)?,
                node_target: r.opt_str(strings)?,
                original_trace: r.opt_str(strings)?,
            }),
        };
        interner.intern_frame(Frame {
            filename,
            line,
            name,
            fx,
        });
        if k % SLICE_INTERNED == SLICE_INTERNED - 1 {
            pause.pause().await;
        }
    }
    pause.pause().await;
    let frames = interner.frame_count();
    let n = r.len(8)?;
    interner.reserve_stacks(n);
    for k in 0..n {
        let ids = r.u32s()?;
        if ids.iter().any(|&f| f as usize >= frames) {
            return Err(DecodeError("frame id out of range".into()));
        }
        let ids: Vec<FrameId> = ids.into_iter().map(FrameId).collect();
        // Stack 0 (empty) is interned by Interner::new and written first.
        let id = interner.intern_stack(&ids);
        if id.0 as usize != k {
            return Err(DecodeError("duplicate stack".into()));
        }
        if k % SLICE_INTERNED == SLICE_INTERNED - 1 {
            pause.pause().await;
        }
    }
    pause.pause().await;
    let stacks = interner.stack_count();
    let stack_id = |v: u32| {
        if (v as usize) < stacks {
            Ok(StackId(v))
        } else {
            Err(DecodeError(format!("stack id {v} out of range")))
        }
    };
    use layout::{block, segment};
    let n = r.len(segment::MIN)?;
    let mut segments = Vec::with_capacity(n);
    let mut since_pause = 0;
    // Fixed-width runs are read in one piece each: a big snapshot has tens of thousands of segments.
    let u64_at = |b: &[u8], k: usize| u64::from_le_bytes(b[k..k + 8].try_into().expect("8 bytes"));
    let u32_at = |b: &[u8], k: usize| u32::from_le_bytes(b[k..k + 4].try_into().expect("4 bytes"));
    for _ in 0..n {
        let head = r.take(segment::HEAD)?;
        let device = u64_at(head, segment::DEVICE) as i64;
        let v: [u64; 6] = std::array::from_fn(|k| u64_at(head, segment::FIGURES + 8 * k));
        let segment_type = match u32_at(head, segment::TYPE) {
            NONE_ID => None,
            id => Some(str_id(id)?),
        };
        let segment_pool_id = match head[segment::HAS_POOL] {
            0 => None,
            _ => {
                let pool = r.take(segment::POOL)?;
                Some((u64_at(pool, 0) as i64, u64_at(pool, 8) as i64))
            }
        };
        let tail = r.take(segment::TAIL)?;
        let is_expandable = tail[segment::EXPANDABLE] != 0;
        let stack = stack_id(u32_at(tail, segment::STACK))?;
        let nb = r.len(block::LEN)?;
        let mut blocks = Vec::with_capacity(nb);
        // A slice of blocks at a time, read as it is decoded: one segment can hold millions of them
        // (taken whole, a 2 GB file's were a 190 MB copy in one task).
        while blocks.len() < nb {
            let k = SLICE_BLOCKS.min(nb - blocks.len());
            for b in r.take(k * block::LEN)?.chunks_exact(block::LEN) {
                let state = match block_state_of(b[block::STATE]) {
                    Some(known) => known,
                    None => BlockState::Other(str_id(u32_at(b, block::STATE_NAME))?),
                };
                blocks.push(Block {
                    address: u64_at(b, block::ADDRESS),
                    size: u64_at(b, block::SIZE),
                    requested_size: u64_at(b, block::REQUESTED),
                    state,
                    stack: stack_id(u32_at(b, block::STACK))?,
                    history: Vec::new(),
                });
            }
            since_pause += k;
            if since_pause >= SLICE_BLOCKS {
                pause.pause().await;
                since_pause = 0;
            }
        }
        let nh = r.len(layout::HISTORY_LEN)?;
        for _ in 0..nh {
            let k = r.u32()? as usize;
            let record = HistoryRecord {
                address: r.u64()?,
                real_size: r.u64()?,
                stack: stack_id(r.u32()?)?,
            };
            blocks
                .get_mut(k)
                .ok_or_else(|| DecodeError(format!("history of block {k} out of range")))?
                .history
                .push(record);
        }
        since_pause += 8; // a segment's own fields: about as much work as eight blocks
        if since_pause >= SLICE_BLOCKS {
            pause.pause().await;
            since_pause = 0;
        }
        segments.push(Segment {
            device,
            address: v[0],
            total_size: v[1],
            allocated_size: v[2],
            active_size: v[3],
            requested_size: v[4],
            stream: v[5],
            segment_type,
            segment_pool_id,
            is_expandable,
            stack,
            blocks,
        });
    }
    let n = r.len(8)?;
    let mut device_traces = Vec::with_capacity(n);
    for _ in 0..n {
        pause.pause().await;
        let action = r
            .column_sliced(
                |x: [u8; layout::ACTION_LEN]| {
                    let (code, other) = (x[0], u32::from_le_bytes([x[1], x[2], x[3], x[4]]));
                    match Action::of_code(code) {
                        Some(known) => Ok(known),
                        None => Ok(Action::Other(str_id(other)?)),
                    }
                },
                pause,
            )
            .await?;
        let len = action.len();
        let addr = r
            .trace_column_sliced(len, u64::from_le_bytes, pause)
            .await?;
        let size = r
            .trace_column_sliced(len, u64::from_le_bytes, pause)
            .await?;
        let stream = r
            .trace_column_sliced(len, u64::from_le_bytes, pause)
            .await?;
        let time_us = r
            .trace_column_sliced(len, i64::from_le_bytes, pause)
            .await?;
        let stack = r
            .trace_column_sliced(len, |x: [u8; 4]| StackId(u32::from_le_bytes(x)), pause)
            .await?;
        if let Some(bad) = first_bad(&stack, |s| (s.0 as usize) < stacks, pause).await {
            return Err(DecodeError(format!("stack id {} out of range", bad.0)));
        }
        let compile_context = r
            .trace_column_sliced(len, u32::from_le_bytes, pause)
            .await?;
        let user_metadata = r
            .trace_column_sliced(len, u32::from_le_bytes, pause)
            .await?;
        for column in [&compile_context, &user_metadata] {
            if let Some(v) = first_bad(column, |v| v == NONE_ID || str_id(v).is_ok(), pause).await {
                str_id(v)?;
            }
        }
        pause.pause().await;
        // (entry, bytes) pairs, 12 bytes each.
        let device_free = r
            .column_sliced(|x: [u8; 12]| Ok((u32_at(&x, 0), u64_at(&x, 4))), pause)
            .await?;
        let t = DeviceTrace {
            action,
            addr,
            size,
            stream,
            time_us,
            stack,
            compile_context,
            user_metadata,
            device_free,
        };
        let cols = [
            t.addr.len(),
            t.size.len(),
            t.stream.len(),
            t.time_us.len(),
            t.stack.len(),
            t.compile_context.len(),
            t.user_metadata.len(),
        ];
        if cols.iter().any(|&c| c != len) || t.device_free.iter().any(|&(k, _)| k as usize >= len) {
            return Err(DecodeError("trace columns differ in length".into()));
        }
        device_traces.push(t);
    }
    let left = r.total - r.at;
    r.wait(left).await?;
    let allocator_settings = match r.u8()? {
        0 => None,
        _ => Some(r.py(0)?),
    };
    let n = r.len(24)?;
    let mut external_annotations = Vec::with_capacity(n);
    for _ in 0..n {
        let stage = str_id(r.u32()?)?;
        let name = str_id(r.u32()?)?;
        let device = r.i64()?;
        let t = r.i64()?;
        external_annotations.push(Annotation {
            stage,
            name,
            device,
            time_us: (t != i64::MIN).then_some(t),
        });
    }
    Ok(Snapshot {
        interner,
        segments,
        device_traces,
        allocator_settings,
        external_annotations,
        format,
        protocol,
    })
}
