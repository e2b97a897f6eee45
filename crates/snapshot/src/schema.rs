//! From the pickle machine's skeleton to the [`Snapshot`] model, checking the snapshot's shape.
//!
//! Trace entries, frames and stacks were already specialised while reading; what is left here is small:
//! segments, blocks, settings and annotations. Unknown keys are ignored.

use crate::error::ReadError;
use crate::model::*;
use crate::pickle::{as_stack, as_str, as_u64, check_bytes, Machine, Slot, Value};

/// Deepest generic value kept (allocator settings nest two levels in practice).
const MAX_VALUE_DEPTH: usize = 64;

/// The snapshot `root` stands for. Its trace and tables are taken out of `m`; what is left (the memo and
/// the containers, about the file's size) is the caller's to drop when it has the time.
pub(crate) fn build(m: &mut Machine, root: Value) -> Result<Snapshot, ReadError> {
    let w = Walker::new(m);
    let (segments_value, traces_value, settings_value, annotations_value, format) =
        match w.resolve(root) {
            Value::Dict(_) => {
                let top = w.dict(root).expect("checked above");
                let segments = w.get(top, w.keys.segments).ok_or_else(|| {
                    let keys: Vec<String> = top
                        .iter()
                        .take(6)
                        .map(|[k, _]| w.describe_key(*k))
                        .collect();
                    ReadError::not_snapshot(if keys.is_empty() {
                        "top level is an empty dict".to_string()
                    } else {
                        format!(
                            "top-level dict has no 'segments' key; its keys are {}",
                            keys.join(", ")
                        )
                    })
                })?;
                (
                    segments,
                    w.get(top, w.keys.device_traces),
                    w.get(top, w.keys.allocator_settings),
                    w.get(top, w.keys.external_annotations),
                    Format::Current,
                )
            }
            Value::List(_) => match w.seq(root).and_then(|items| items.first()) {
                Some(first) if w.dict(*first).is_none() => {
                    return Err(ReadError::not_snapshot(format!(
                        "top level is {}",
                        w.type_name(root)
                    )))
                }
                _ => (root, None, None, None, Format::SegmentList),
            },
            other => {
                return Err(ReadError::not_snapshot(format!(
                    "top level is {}",
                    w.type_name(other)
                )))
            }
        };

    let segment_items = w.seq(segments_value).ok_or_else(|| {
        ReadError::not_snapshot(format!(
            "'segments' is {}, not a list",
            w.type_name(segments_value)
        ))
    })?;
    let mut legacy = false;
    let mut segments = Vec::with_capacity(segment_items.len());
    for (i, &s) in segment_items.iter().enumerate() {
        segments.push(w.segment(s, i, &mut legacy)?);
    }

    let mut trace_rows = Vec::new();
    if let Some(tv) = traces_value {
        let traces = w.seq(tv).ok_or_else(|| {
            ReadError::not_snapshot(format!(
                "'device_traces' is {}, not a list",
                w.type_name(tv)
            ))
        })?;
        for (d, &t) in traces.iter().enumerate() {
            trace_rows.push(w.trace_rows(t, d)?);
        }
    }

    if let Some((row, why)) = &m.invalid_entry {
        // Only an entry of a device trace counts: a stray dict with an 'action' key elsewhere is no entry.
        let place = trace_rows
            .iter()
            .enumerate()
            .find_map(|(d, rows)| rows.iter().position(|r| r == row).map(|i| (d, i)));
        if let Some((d, i)) = place {
            return Err(ReadError::not_snapshot(format!(
                "device_traces[{d}][{i}] has {why}"
            )));
        }
    }

    let allocator_settings = match settings_value {
        Some(v) if !matches!(v, Value::None) => Some(w.py_value(v, 0)?),
        _ => None,
    };
    let external_annotations = annotations_value
        .map(|v| w.annotations(v))
        .unwrap_or_default();

    let device_traces = split_traces(std::mem::take(&mut m.entries), &trace_rows);
    let format = if legacy && format == Format::Current {
        Format::LegacyHistory
    } else {
        format
    };
    let protocol = m.protocol;
    let mut interner = std::mem::take(&mut m.interner);
    interner.shrink();
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

/// `[address, address + size)` must lie in the 64-bit address space.
fn check_range(what: Place, address: u64, size: u64) -> Result<(), ReadError> {
    match address.checked_add(size) {
        Some(_) => Ok(()),
        None => Err(ReadError::not_snapshot(format!(
            "{what} at 0x{address:x} of {size} bytes runs past the end of the 64-bit address space"
        ))),
    }
}

/// Each device's trace from the machine's entry rows. Real pickles write the traces one after another, so
/// the rows are consecutive ranges and the columns are split, not copied (the first trace keeps the
/// machine's columns, their spare room given back).
#[inline(never)]
fn split_traces(mut all: DeviceTrace, rows: &[Vec<u32>]) -> Vec<DeviceTrace> {
    let mut next = 0u32;
    let consecutive = rows.iter().all(|r| {
        let ok = r.iter().enumerate().all(|(k, &row)| row == next + k as u32);
        next += r.len() as u32;
        ok
    });
    if consecutive {
        all.split_off(next as usize);
        let mut traces: Vec<DeviceTrace> = rows
            .iter()
            .rev()
            .map(|r| {
                let start = all.len() - r.len();
                let mut trace = all.split_off(start);
                trace.shrink_to_fit();
                trace
            })
            .collect();
        traces.reverse();
        traces
    } else {
        rows.iter().map(|r| all.gather(r)).collect()
    }
}

/// A key the schema reads: its name, and its id among the file's strings (`None` when the file never
/// wrote it, so it is in no dict).
#[derive(Clone, Copy)]
struct Key {
    name: &'static str,
    id: Option<StrId>,
}

/// Declares [`Keys`]: every key (and block state) the schema reads, each looked up once per file
/// rather than once per segment or block.
macro_rules! keys {
    ($($key:ident),* $(,)?) => {
        #[derive(Clone, Copy)]
        struct Keys {
            $($key: Key,)*
        }

        impl Keys {
            fn of(interner: &Interner) -> Keys {
                Keys {
                    $($key: Key {
                        name: stringify!($key),
                        id: interner.lookup_str(stringify!($key)),
                    },)*
                }
            }
        }
    };
}

keys!(
    segments,
    device_traces,
    allocator_settings,
    external_annotations,
    device,
    address,
    total_size,
    allocated_size,
    active_size,
    requested_size,
    stream,
    segment_type,
    segment_pool_id,
    is_expandable,
    frames,
    blocks,
    size,
    state,
    history,
    addr,
    real_size,
    stage,
    name,
    time_us,
    active_allocated,
    active_pending_free,
    inactive,
);

/// The error for a required field `key` that `what` lacks.
fn missing(what: Place, key: Key) -> ReadError {
    ReadError::not_snapshot(format!("{what} has no '{}'", key.name))
}

/// Where a field sits, for error messages; written out only when there is an error.
#[derive(Clone, Copy)]
enum Place {
    Segment(usize),
    Block(usize, usize),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Segment(i) => write!(f, "segment {i}"),
            Place::Block(i, j) => write!(f, "segment {i} block {j}"),
        }
    }
}

struct Walker<'a> {
    m: &'a Machine,
    keys: Keys,
}

impl<'a> Walker<'a> {
    fn new(m: &'a Machine) -> Self {
        Walker {
            m,
            keys: Keys::of(&m.interner),
        }
    }

    fn resolve(&self, v: Value) -> Value {
        match v {
            Value::List(s) | Value::Dict(s) | Value::Tuple(s) | Value::Set(s) => {
                match &self.m.slots[s as usize] {
                    Slot::Done(done) => *done,
                    _ => v,
                }
            }
            _ => v,
        }
    }

    fn dict(&self, v: Value) -> Option<&'a [[Value; 2]]> {
        match self.resolve(v) {
            Value::Dict(s) => match &self.m.slots[s as usize] {
                Slot::Dict(pairs) => Some(pairs),
                _ => None,
            },
            _ => None,
        }
    }

    fn seq(&self, v: Value) -> Option<&'a [Value]> {
        match self.resolve(v) {
            Value::List(s) | Value::Tuple(s) | Value::Set(s) => match &self.m.slots[s as usize] {
                Slot::Seq(items) => Some(items),
                _ => None,
            },
            _ => None,
        }
    }

    fn get(&self, pairs: &[[Value; 2]], key: Key) -> Option<Value> {
        let id = key.id?;
        pairs
            .iter()
            .find(|[k, _]| *k == Value::Str(id))
            .map(|[_, v]| self.resolve(*v))
    }

    fn describe_key(&self, k: Value) -> String {
        match k {
            Value::Str(s) => format!("'{}'", self.m.interner.str(s)),
            other => self.type_name(other),
        }
    }

    /// "an int", "a list of ints", … for error messages.
    fn type_name(&self, v: Value) -> String {
        match self.resolve(v) {
            Value::None => "None".into(),
            Value::Bool(_) => "a bool".into(),
            Value::Int(_) | Value::U64(_) | Value::Wide(_) | Value::Big(_) => "an int".into(),
            Value::Float(_) => "a float".into(),
            Value::Str(_) => "a str".into(),
            Value::Bytes(_) => "bytes".into(),
            Value::Dict(_) => "a dict".into(),
            Value::Tuple(_) => "a tuple".into(),
            Value::Set(_) => "a set".into(),
            Value::Frame(_) => "a stack frame".into(),
            Value::Entry(_) => "a trace entry".into(),
            Value::Stack(_) => "a list of stack frames".into(),
            Value::List(_) => match self.seq(v).unwrap_or(&[]).first() {
                None => "an empty list".into(),
                // One level only: nesting is attacker-controlled and must not recurse.
                Some(first) => format!("a list of {}", self.plural_name(*first)),
            },
        }
    }

    fn plural_name(&self, v: Value) -> &'static str {
        match self.resolve(v) {
            Value::None => "Nones",
            Value::Bool(_) => "bools",
            Value::Int(_) | Value::U64(_) | Value::Wide(_) | Value::Big(_) => "ints",
            Value::Float(_) => "floats",
            Value::Str(_) => "strs",
            Value::Bytes(_) => "bytes",
            Value::Dict(_) => "dicts",
            Value::Tuple(_) => "tuples",
            Value::Set(_) => "sets",
            Value::Frame(_) => "stack frames",
            Value::Entry(_) => "trace entries",
            Value::Stack(_) | Value::List(_) => "lists",
        }
    }

    fn int_field(
        &self,
        pairs: &[[Value; 2]],
        key: Key,
        what: Place,
    ) -> Result<Option<u64>, ReadError> {
        self.field(pairs, key, what, |v| {
            as_u64(v).ok_or_else(|| format!("{}, not an int", self.type_name(v)))
        })
    }

    /// A byte count: an int, never negative, at most 1 PiB.
    fn bytes_field(
        &self,
        pairs: &[[Value; 2]],
        key: Key,
        what: Place,
    ) -> Result<Option<u64>, ReadError> {
        self.field(pairs, key, what, check_bytes)
    }

    /// Field `key` read by `read` (which says what is wrong with a bad value); `None` when absent.
    fn field(
        &self,
        pairs: &[[Value; 2]],
        key: Key,
        what: Place,
        read: impl FnOnce(Value) -> Result<u64, String>,
    ) -> Result<Option<u64>, ReadError> {
        match self.get(pairs, key) {
            None | Some(Value::None) => Ok(None),
            Some(v) => read(v).map(Some).map_err(|why| {
                ReadError::not_snapshot(format!("{what} has '{}' = {why}", key.name))
            }),
        }
    }

    /// Segment `i`. Never inlined: called once per segment, so a browser runs it optimised after the
    /// first few hundred (see [`crate::batch`]), where inlined into [`build`] it would stay baseline.
    #[inline(never)]
    fn segment(&self, v: Value, i: usize, legacy: &mut bool) -> Result<Segment, ReadError> {
        let k = self.keys;
        let what = Place::Segment(i);
        let pairs = self.dict(v).ok_or_else(|| {
            ReadError::not_snapshot(format!("{what} is {}, not a dict", self.type_name(v)))
        })?;
        let address = self
            .int_field(pairs, k.address, what)?
            .ok_or_else(|| missing(what, k.address))?;
        let total_size = self
            .bytes_field(pairs, k.total_size, what)?
            .ok_or_else(|| missing(what, k.total_size))?;
        check_range(what, address, total_size)?;
        let block_values = match self.get(pairs, k.blocks) {
            Some(b) => self.seq(b).ok_or_else(|| {
                ReadError::not_snapshot(format!("{what} has 'blocks' = {}", self.type_name(b)))
            })?,
            None => &[],
        };
        let mut blocks = Vec::with_capacity(block_values.len());
        let mut next_address = address;
        for (j, &b) in block_values.iter().enumerate() {
            let block = self.block(b, Place::Block(i, j), next_address, legacy)?;
            next_address = block.address.wrapping_add(block.size);
            blocks.push(block);
        }
        let sum = |f: fn(&Block) -> u64, pred: fn(&Block) -> bool| {
            blocks.iter().filter(|b| pred(b)).map(f).sum::<u64>()
        };
        Ok(Segment {
            device: self.int_field(pairs, k.device, what)?.unwrap_or(0) as i64,
            address,
            total_size,
            allocated_size: match self.int_field(pairs, k.allocated_size, what)? {
                Some(x) => x,
                None => sum(|b| b.size, |b| b.state == BlockState::ActiveAllocated),
            },
            active_size: match self.int_field(pairs, k.active_size, what)? {
                Some(x) => x,
                None => sum(|b| b.size, |b| b.state.is_active()),
            },
            requested_size: match self.int_field(pairs, k.requested_size, what)? {
                Some(x) => x,
                None => sum(
                    |b| b.requested_size,
                    |b| b.state == BlockState::ActiveAllocated,
                ),
            },
            stream: self.int_field(pairs, k.stream, what)?.unwrap_or(0),
            segment_type: self.get(pairs, k.segment_type).and_then(as_str),
            segment_pool_id: self.get(pairs, k.segment_pool_id).and_then(|p| {
                let items = self.seq(p)?;
                match items {
                    [a, b] => Some((as_u64(*a)? as i64, as_u64(*b)? as i64)),
                    _ => None,
                }
            }),
            is_expandable: matches!(self.get(pairs, k.is_expandable), Some(Value::Bool(true))),
            stack: self
                .get(pairs, k.frames)
                .and_then(as_stack)
                .unwrap_or(StackId::EMPTY),
            blocks,
        })
    }

    fn block(
        &self,
        v: Value,
        what: Place,
        implied_address: u64,
        legacy: &mut bool,
    ) -> Result<Block, ReadError> {
        let k = self.keys;
        let pairs = self.dict(v).ok_or_else(|| {
            ReadError::not_snapshot(format!("{what} is {}, not a dict", self.type_name(v)))
        })?;
        let size = self
            .bytes_field(pairs, k.size, what)?
            .ok_or_else(|| missing(what, k.size))?;
        // PyTorch 2.0 wrote `history: [{addr, real_size, frames}, ...]` instead of `address`/`frames`.
        let records = self
            .get(pairs, k.history)
            .and_then(|h| self.seq(h))
            .unwrap_or(&[]);
        let history = records.first().and_then(|h| self.dict(*h));
        if history.is_some() {
            *legacy = true;
        }
        let from_history = |key: Key| history.and_then(|h| self.get(h, key));
        let state = match self.get(pairs, k.state).and_then(as_str) {
            Some(s) if Some(s) == k.active_allocated.id => BlockState::ActiveAllocated,
            Some(s) if Some(s) == k.active_pending_free.id => BlockState::ActivePendingFree,
            Some(s) if Some(s) == k.inactive.id => BlockState::Inactive,
            Some(s) => BlockState::Other(s),
            None => BlockState::Inactive,
        };
        let address = match self.int_field(pairs, k.address, what)? {
            Some(a) => a,
            None => from_history(k.addr)
                .and_then(as_u64)
                .unwrap_or(implied_address),
        };
        check_range(what, address, size)?;
        let requested_size = match self.bytes_field(pairs, k.requested_size, what)? {
            Some(r) => r,
            None => from_history(k.real_size).and_then(as_u64).unwrap_or(size),
        };
        let stack = self
            .get(pairs, k.frames)
            .or_else(|| from_history(k.frames))
            .and_then(as_stack)
            .unwrap_or(StackId::EMPTY);
        let history = records
            .iter()
            .filter_map(|&r| self.dict(r))
            .map(|r| HistoryRecord {
                address: self.get(r, k.addr).and_then(as_u64).unwrap_or(address),
                real_size: self
                    .get(r, k.real_size)
                    .and_then(as_u64)
                    .unwrap_or(size)
                    .min(size),
                stack: self
                    .get(r, k.frames)
                    .and_then(as_stack)
                    .unwrap_or(StackId::EMPTY),
            })
            .collect();
        Ok(Block {
            address,
            size,
            requested_size,
            state,
            stack,
            history,
        })
    }

    /// The rows of `self.m.entries` that make up `device_traces[device]`, in order. Never inlined: its
    /// loop over every entry would make [`build`] (run once) busy enough for a browser to compile all of
    /// it to optimised code that never runs (see [`crate::batch`]). `wasm-opt` ignores the attribute;
    /// the web app's index.html names this function to keep it apart there too.
    #[inline(never)]
    fn trace_rows(&self, v: Value, device: usize) -> Result<Vec<u32>, ReadError> {
        let items = self.seq(v).ok_or_else(|| {
            ReadError::not_snapshot(format!(
                "device_traces[{device}] is {}, not a list",
                self.type_name(v)
            ))
        })?;
        items
            .iter()
            .enumerate()
            .map(|(i, &e)| match self.resolve(e) {
                Value::Entry(row) => Ok(row),
                other => Err(ReadError::not_snapshot(format!(
                    "device_traces[{device}][{i}] is {}, not a trace entry (a dict with a str 'action' and int fields)",
                    self.type_name(other)
                ))),
            })
            .collect()
    }

    fn annotations(&self, v: Value) -> Vec<Annotation> {
        let Some(items) = self.seq(v) else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|&a| {
                let pairs = self.dict(a)?;
                let k = self.keys;
                Some(Annotation {
                    stage: self.get(pairs, k.stage).and_then(as_str)?,
                    name: self.get(pairs, k.name).and_then(as_str)?,
                    device: self.get(pairs, k.device).and_then(as_u64).unwrap_or(0) as i64,
                    time_us: self
                        .get(pairs, k.time_us)
                        .and_then(as_u64)
                        .map(|t| t as i64),
                })
            })
            .collect()
    }

    fn py_value(&self, v: Value, depth: usize) -> Result<PyValue, ReadError> {
        if depth > MAX_VALUE_DEPTH {
            return Err(ReadError::not_snapshot(format!(
                "a setting nests deeper than {MAX_VALUE_DEPTH} levels"
            )));
        }
        let i = &self.m.interner;
        let s = |id: StrId| PyValue::Str(i.str(id).to_owned());
        Ok(match self.resolve(v) {
            Value::None => PyValue::None,
            Value::Bool(b) => PyValue::Bool(b),
            Value::Int(x) => PyValue::Int(x as i128),
            Value::U64(x) => PyValue::Int(x as i128),
            Value::Wide(w) => PyValue::Int(self.m.wide[w as usize]),
            Value::Big(x) | Value::Float(x) => PyValue::Float(x),
            Value::Str(id) => s(id),
            Value::Bytes(b) => PyValue::Bytes(self.m.bytes[b as usize].to_vec()),
            Value::Frame(f) => {
                let f = i.frame(f);
                PyValue::Dict(vec![
                    (PyValue::Str("filename".into()), s(f.filename)),
                    (PyValue::Str("line".into()), PyValue::Int(f.line as i128)),
                    (PyValue::Str("name".into()), s(f.name)),
                ])
            }
            Value::Stack(st) => PyValue::List(
                i.stack(st)
                    .iter()
                    .map(|&f| self.py_value(Value::Frame(f), depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Entry(_) => PyValue::Str("<trace entry>".into()),
            Value::Dict(_) => {
                let pairs = self.dict(v).unwrap_or(&[]);
                PyValue::Dict(
                    pairs
                        .iter()
                        .map(|[k, x]| {
                            Ok((self.py_value(*k, depth + 1)?, self.py_value(*x, depth + 1)?))
                        })
                        .collect::<Result<_, ReadError>>()?,
                )
            }
            list @ (Value::List(_) | Value::Tuple(_) | Value::Set(_)) => {
                let items = self
                    .seq(list)
                    .unwrap_or(&[])
                    .iter()
                    .map(|x| self.py_value(*x, depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                if matches!(list, Value::List(_)) {
                    PyValue::List(items)
                } else {
                    PyValue::Tuple(items)
                }
            }
        })
    }
}
