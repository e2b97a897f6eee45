//! Writing the binary form: its sizes first (so the page can set its memory aside before the pieces
//! come), then the columns, into pieces handed to a sink as they fill.

use super::layout;
use super::{block_state_code, MAGIC};
use crate::batch;
use crate::model::*;

fn put<const N: usize>(record: &mut [u8], at: usize, bytes: [u8; N]) {
    record[at..at + N].copy_from_slice(&bytes);
}

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
/// pieces arrive (see [`Arriving`](super::Arriving)), its lengths checked against `total` as for a whole one.
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

/// Encodes `s` into a byte buffer that [`decode`](super::decode) reads back exactly.
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
