//! Reading the binary form back, every length checked: whole, or as its pieces arrive, in slices
//! with pauses between them (the page's thread answers input meanwhile).

use super::layout;
use super::{block_state_of, DecodeError, Sizes, MAGIC, MAX_DEPTH};
use crate::batch::{self, NoPause, Pause};
use crate::model::*;

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

/// Decodes what [`encode`](super::encode) wrote. Ids are checked against their tables, so the model is safe to index.
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
