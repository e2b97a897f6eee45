//! The snapshot model: plain data named as PyTorch names it.
//!
//! Strings, frames and whole stacks are interned once, so a frame shared by a million trace entries costs a
//! 4-byte [`StackId`] per entry. The trace of each device is stored in columns ([`DeviceTrace`]): about 48
//! bytes per entry whatever its stack depth.

/// Fast hashing for interning (foldhash: seeded per process, so crafted input cannot pick collisions).
type HashMap<K, V> = foldhash::HashMap<K, V>;

/// Index of an interned string in the snapshot's [`Interner`] (see [`Snapshot::str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct StrId(pub u32);

/// Index of an interned frame in the snapshot's [`Interner`] (see [`Snapshot::frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct FrameId(pub u32);

/// Index of an interned stack (a list of frames, innermost first) in the snapshot's [`Interner`]
/// (see [`Snapshot::stack`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
pub struct StackId(pub u32);

impl StackId {
    /// The empty stack: always interned first.
    pub const EMPTY: StackId = StackId(0);
}

/// One frame of a recorded stack, as PyTorch writes it (`filename`, `line`, `name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    pub filename: StrId,
    /// Exact 64-bit line; C++ frames use 0 and some builds write 2**64-1.
    pub line: u64,
    pub name: StrId,
    /// FX graph fields (`fx_node_op`, `fx_node_name`, `fx_node_target`, `fx_original_trace`), when present.
    pub fx: Option<FxFields>,
}

/// Extra fields torch.fx adds to frames of compiled graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FxFields {
    pub node_op: Option<StrId>,
    pub node_name: Option<StrId>,
    pub node_target: Option<StrId>,
    pub original_trace: Option<StrId>,
}

/// String, frame and stack tables. Everything in the model refers to them by id.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    string_ids: HashMap<Box<str>, StrId>,
    frames: Vec<Frame>,
    frame_ids: HashMap<Frame, FrameId>,
    stacks: Vec<Box<[FrameId]>>,
    stack_ids: HashMap<Box<[FrameId]>, StackId>,
    /// The stack interned last: traces pair `free_requested` with `free_completed` under the same stack,
    /// so checking it first skips about half of the hashing.
    last_stack: StackId,
}

impl Interner {
    pub fn new() -> Self {
        let mut i = Interner::default();
        i.intern_stack(&[]);
        i
    }

    /// Room for `n` more strings, so that interning them never grows the table: a table grown is
    /// rehashed whole, in one go, which sliced work (the page's decoder) cannot pause inside.
    pub fn reserve_strings(&mut self, n: usize) {
        self.strings.reserve(n);
        self.string_ids.reserve(n);
    }

    /// [`Self::reserve_strings`] for frames.
    pub fn reserve_frames(&mut self, n: usize) {
        self.frames.reserve(n);
        self.frame_ids.reserve(n);
    }

    /// [`Self::reserve_strings`] for stacks.
    pub fn reserve_stacks(&mut self, n: usize) {
        self.stacks.reserve(n);
        self.stack_ids.reserve(n);
    }

    pub fn intern_str(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = StrId(self.strings.len() as u32);
        self.strings.push(s.into());
        self.string_ids.insert(s.into(), id);
        id
    }

    pub fn lookup_str(&self, s: &str) -> Option<StrId> {
        self.string_ids.get(s).copied()
    }

    pub fn intern_frame(&mut self, f: Frame) -> FrameId {
        *self.frame_ids.entry(f).or_insert_with(|| {
            self.frames.push(f);
            FrameId(self.frames.len() as u32 - 1)
        })
    }

    pub fn intern_stack(&mut self, frames: &[FrameId]) -> StackId {
        if let Some(last) = self.stacks.get(self.last_stack.0 as usize) {
            if **last == *frames {
                return self.last_stack;
            }
        }
        if let Some(&id) = self.stack_ids.get(frames) {
            self.last_stack = id;
            return id;
        }
        let id = StackId(self.stacks.len() as u32);
        self.stacks.push(frames.into());
        self.stack_ids.insert(frames.into(), id);
        self.last_stack = id;
        id
    }

    #[inline]
    pub fn str(&self, id: StrId) -> &str {
        &self.strings[id.0 as usize]
    }
    #[inline]
    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id.0 as usize]
    }
    #[inline]
    pub fn stack(&self, id: StackId) -> &[FrameId] {
        &self.stacks[id.0 as usize]
    }
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }
    pub fn stack_count(&self) -> usize {
        self.stacks.len()
    }
    pub fn string_count(&self) -> usize {
        self.strings.len()
    }
    /// Releases spare capacity once reading is done (the lookup maps stay, so interning keeps working).
    pub fn shrink(&mut self) {
        self.strings.shrink_to_fit();
        self.frames.shrink_to_fit();
        self.stacks.shrink_to_fit();
    }
}

/// A trace entry's action. Unknown actions are kept by name, not rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    /// Legacy single-step free (older PyTorch), and MemoryViz's merged free.
    Free,
    UserDefined,
    /// Any other action, by its name.
    Other(StrId),
}

/// Every action PyTorch names, with its name and its code in the model's encoding (`codec`): the one
/// table the reader, the model and the codec share. [`Action::Other`] takes the next code.
const ACTIONS: [(Action, &str); 11] = [
    (Action::Alloc, "alloc"),
    (Action::FreeRequested, "free_requested"),
    (Action::FreeCompleted, "free_completed"),
    (Action::SegmentAlloc, "segment_alloc"),
    (Action::SegmentFree, "segment_free"),
    (Action::SegmentMap, "segment_map"),
    (Action::SegmentUnmap, "segment_unmap"),
    (Action::Snapshot, "snapshot"),
    (Action::Oom, "oom"),
    (Action::Free, "free"),
    (Action::UserDefined, "user_defined"),
];

impl Action {
    /// The actions PyTorch names (every one but [`Action::Other`]), with their names.
    pub fn known() -> impl Iterator<Item = (Action, &'static str)> {
        ACTIONS.into_iter()
    }

    /// The name PyTorch writes for this action.
    pub fn name<'a>(&self, strings: &'a Interner) -> &'a str {
        match self {
            Action::Other(id) => strings.str(*id),
            known => ACTIONS
                .iter()
                .find(|(a, _)| a == known)
                .map_or("", |(_, name)| name),
        }
    }

    /// The action's code in the model's encoding: its place in the table, [`Action::Other`] last.
    pub fn code(self) -> u8 {
        match self {
            Action::Other(_) => ACTIONS.len() as u8,
            known => ACTIONS.iter().position(|(a, _)| *a == known).unwrap_or(0) as u8,
        }
    }

    /// The known action of `code` (`None` for [`Action::Other`]'s code and beyond).
    pub fn of_code(code: u8) -> Option<Action> {
        ACTIONS.get(code as usize).map(|(a, _)| *a)
    }

    /// Opens a block lifetime on the Active Memory Timeline.
    pub fn opens_block(self) -> bool {
        self == Action::Alloc
    }
    /// Closes a block lifetime on the Active Memory Timeline (`free_requested` does not: the memory is
    /// still held until the stream's work completes).
    pub fn closes_block(self) -> bool {
        matches!(self, Action::FreeCompleted | Action::Free)
    }
    pub fn is_segment(self) -> bool {
        matches!(
            self,
            Action::SegmentAlloc | Action::SegmentFree | Action::SegmentMap | Action::SegmentUnmap
        )
    }
}

/// Sentinel for "no value" in optional id columns.
pub const NONE_ID: u32 = u32::MAX;

/// One entry of a device trace, reassembled from the columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceEntry {
    pub action: Action,
    pub addr: u64,
    pub size: u64,
    pub stream: u64,
    pub time_us: Option<i64>,
    pub stack: StackId,
    pub compile_context: Option<StrId>,
    pub user_metadata: Option<StrId>,
    /// Free device memory reported with an `oom` entry.
    pub device_free: Option<u64>,
}

/// The trace of one device, in columns (one element per entry in each).
#[derive(Debug, Clone, Default)]
pub struct DeviceTrace {
    pub action: Vec<Action>,
    pub addr: Vec<u64>,
    pub size: Vec<u64>,
    pub stream: Vec<u64>,
    /// `i64::MIN` where the entry has no `time_us` (older PyTorch).
    pub time_us: Vec<i64>,
    pub stack: Vec<StackId>,
    /// [`NONE_ID`] where absent.
    pub compile_context: Vec<u32>,
    /// [`NONE_ID`] where absent.
    pub user_metadata: Vec<u32>,
    /// (entry index, bytes) for the entries that carry `device_free` (oom).
    pub device_free: Vec<(u32, u64)>,
}

/// A vector with room for `n` items when the memory is there: a size hint (an input's length, a
/// count read from a file) never aborts a read.
pub(crate) fn presized<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    let _ = v.try_reserve_exact(n);
    v
}

impl DeviceTrace {
    /// Room for `n` entries when the memory is there (it is only a hint: columns grow as usual).
    pub fn with_capacity(n: usize) -> DeviceTrace {
        DeviceTrace {
            action: presized(n),
            addr: presized(n),
            size: presized(n),
            stream: presized(n),
            time_us: presized(n),
            stack: presized(n),
            compile_context: presized(n),
            user_metadata: presized(n),
            device_free: Vec::new(),
        }
    }

    /// Splits off the entries from `at` on, as `Vec::split_off` does (moves, no copy of the head; from 0,
    /// no copy at all, and no new columns of the old capacity left behind).
    pub fn split_off(&mut self, at: usize) -> DeviceTrace {
        if at == 0 {
            return std::mem::take(self);
        }
        let k = self
            .device_free
            .partition_point(|&(i, _)| (i as usize) < at);
        DeviceTrace {
            action: self.action.split_off(at),
            addr: self.addr.split_off(at),
            size: self.size.split_off(at),
            stream: self.stream.split_off(at),
            time_us: self.time_us.split_off(at),
            stack: self.stack.split_off(at),
            compile_context: self.compile_context.split_off(at),
            user_metadata: self.user_metadata.split_off(at),
            device_free: self
                .device_free
                .split_off(k)
                .into_iter()
                .map(|(i, f)| (i - at as u32, f))
                .collect(),
        }
    }

    /// Gives back room the columns do not use (in place: no column is copied).
    pub fn shrink_to_fit(&mut self) {
        self.action.shrink_to_fit();
        self.addr.shrink_to_fit();
        self.size.shrink_to_fit();
        self.stream.shrink_to_fit();
        self.time_us.shrink_to_fit();
        self.stack.shrink_to_fit();
        self.compile_context.shrink_to_fit();
        self.user_metadata.shrink_to_fit();
        self.device_free.shrink_to_fit();
    }

    /// A new trace of the given rows, in that order.
    pub fn gather(&self, rows: &[u32]) -> DeviceTrace {
        let mut t = DeviceTrace::with_capacity(rows.len());
        for &r in rows {
            t.push(&self.get(r as usize));
        }
        t
    }

    pub fn len(&self) -> usize {
        self.action.len()
    }
    pub fn is_empty(&self) -> bool {
        self.action.is_empty()
    }
    pub fn push(&mut self, e: &TraceEntry) {
        if let Some(free) = e.device_free {
            self.device_free.push((self.action.len() as u32, free));
        }
        self.action.push(e.action);
        self.addr.push(e.addr);
        self.size.push(e.size);
        self.stream.push(e.stream);
        self.time_us.push(e.time_us.unwrap_or(i64::MIN));
        self.stack.push(e.stack);
        self.compile_context
            .push(e.compile_context.map_or(NONE_ID, |s| s.0));
        self.user_metadata
            .push(e.user_metadata.map_or(NONE_ID, |s| s.0));
    }
    pub fn get(&self, i: usize) -> TraceEntry {
        let opt = |v: u32| (v != NONE_ID).then_some(StrId(v));
        TraceEntry {
            action: self.action[i],
            addr: self.addr[i],
            size: self.size[i],
            stream: self.stream[i],
            time_us: (self.time_us[i] != i64::MIN).then_some(self.time_us[i]),
            stack: self.stack[i],
            compile_context: opt(self.compile_context[i]),
            user_metadata: opt(self.user_metadata[i]),
            device_free: self
                .device_free
                .binary_search_by_key(&(i as u32), |&(idx, _)| idx)
                .ok()
                .map(|k| self.device_free[k].1),
        }
    }
    /// True when every entry has a `time_us`.
    pub fn has_time(&self) -> bool {
        crate::batch::run_ready(self.has_time_sliced(&mut crate::batch::NoPause))
    }
    /// [`Self::has_time`], awaiting `pause` between batches (tens of millions of entries are tens of
    /// milliseconds to scan on a page).
    pub async fn has_time_sliced<P: crate::batch::Pause>(&self, pause: &mut P) -> bool {
        let mut all = !self.time_us.is_empty();
        let scan =
            |r: std::ops::Range<usize>| all = all && self.time_us[r].iter().all(|&t| t != i64::MIN);
        crate::batch::ranges_paused(self.time_us.len(), scan, pause).await;
        all
    }
    /// Heap bytes held by the columns.
    pub fn heap_bytes(&self) -> usize {
        self.action.capacity() * std::mem::size_of::<Action>()
            + (self.addr.capacity() + self.size.capacity() + self.stream.capacity()) * 8
            + self.time_us.capacity() * 8
            + self.stack.capacity() * 4
            + (self.compile_context.capacity() + self.user_metadata.capacity()) * 4
            + self.device_free.capacity() * 16
    }
}

/// A block's state in the caching allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockState {
    ActiveAllocated,
    ActivePendingFree,
    Inactive,
    Other(StrId),
}

impl BlockState {
    pub fn name<'a>(&self, strings: &'a Interner) -> &'a str {
        match self {
            BlockState::ActiveAllocated => "active_allocated",
            BlockState::ActivePendingFree => "active_pending_free",
            BlockState::Inactive => "inactive",
            BlockState::Other(s) => strings.str(*s),
        }
    }
    pub fn is_active(self) -> bool {
        matches!(
            self,
            BlockState::ActiveAllocated | BlockState::ActivePendingFree
        )
    }
}

/// A block inside a segment, at the moment the snapshot was taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub address: u64,
    pub size: u64,
    /// Bytes the caller asked for (legacy snapshots: `history[0].real_size`, else `size`).
    pub requested_size: u64,
    pub state: BlockState,
    /// Where it was allocated (legacy snapshots: `history[0].frames`).
    pub stack: StackId,
    /// Legacy snapshots (PyTorch 2.0): every record of the block's `history`, oldest first (the first
    /// gives `address`, `requested_size` and `stack` when the block has none of its own). Empty otherwise.
    pub history: Vec<HistoryRecord>,
}

/// One record of a legacy block's `history`: an allocation that used the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryRecord {
    pub address: u64,
    pub real_size: u64,
    pub stack: StackId,
}

/// A segment: one cudaMalloc (or one expandable-segment mapping range) held by the caching allocator.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub device: i64,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: u64,
    pub active_size: u64,
    pub requested_size: u64,
    pub stream: u64,
    /// `large` or `small`.
    pub segment_type: Option<StrId>,
    pub segment_pool_id: Option<(i64, i64)>,
    pub is_expandable: bool,
    pub stack: StackId,
    pub blocks: Vec<Block>,
}

impl Segment {
    /// The private pool the segment belongs to (a CUDA graph's or a `torch.cuda.MemPool`'s, whose
    /// blocks only that graph or pool reuses); `None` for the allocator's own, `(0, 0)`.
    pub fn private_pool(&self) -> Option<(i64, i64)> {
        self.segment_pool_id.filter(|&p| p != (0, 0))
    }
}

/// Where a mark at time `t` (µs) falls among a trace's entry times: the first entry at or after it
/// (the entries before it happened before the mark). The page's annotation spans, the compare view's
/// alignment and the trace's steps place annotations so.
pub fn entry_at_time(times: &[i64], t: i64) -> usize {
    times.partition_point(|&x| x < t)
}

/// A START/END mark recorded with `torch.cuda.memory._record_memory_history` (profiler annotations).
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub stage: StrId,
    pub name: StrId,
    pub device: i64,
    pub time_us: Option<i64>,
}

/// A small generic value, kept for fields shown as they are (`allocator_settings`).
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<PyValue>),
    Tuple(Vec<PyValue>),
    Dict(Vec<(PyValue, PyValue)>),
}

impl PyValue {
    /// Python-like rendering, for display.
    pub fn to_python(&self) -> String {
        let mut s = String::new();
        self.write_python(&mut s);
        s
    }
    fn write_python(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            PyValue::None => out.push_str("None"),
            PyValue::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            PyValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            PyValue::Float(f) => {
                let _ = write!(out, "{f:?}");
            }
            PyValue::Str(s) => {
                let _ = write!(out, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
            }
            PyValue::Bytes(b) => {
                let _ = write!(out, "b'<{} bytes>'", b.len());
            }
            PyValue::List(v) | PyValue::Tuple(v) => {
                let (open, close) = if matches!(self, PyValue::List(_)) {
                    ('[', ']')
                } else {
                    ('(', ')')
                };
                out.push(open);
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    x.write_python(out);
                }
                out.push(close);
            }
            PyValue::Dict(kv) => {
                out.push('{');
                for (i, (k, v)) in kv.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write_python(out);
                    out.push_str(": ");
                    v.write_python(out);
                }
                out.push('}');
            }
        }
    }
}

impl serde::Serialize for PyValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            PyValue::None => s.serialize_none(),
            PyValue::Bool(b) => s.serialize_bool(*b),
            PyValue::Int(i) => match i64::try_from(*i) {
                Ok(v) => s.serialize_i64(v),
                Err(_) => s.serialize_str(&i.to_string()),
            },
            PyValue::Float(f) => s.serialize_f64(*f),
            PyValue::Str(x) => s.serialize_str(x),
            PyValue::Bytes(b) => s.serialize_str(&format!("<{} bytes>", b.len())),
            PyValue::List(v) | PyValue::Tuple(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for x in v {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            PyValue::Dict(kv) => {
                let mut map = s.serialize_map(Some(kv.len()))?;
                for (k, v) in kv {
                    let key = match k {
                        PyValue::Str(x) => x.clone(),
                        other => other.to_python(),
                    };
                    map.serialize_entry(&key, v)?;
                }
                map.end()
            }
        }
    }
}

/// Which shape of snapshot the file had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `{'segments', 'device_traces', ...}` as written since PyTorch 2.1.
    Current,
    /// Blocks carry `history` lists instead of `frames` (PyTorch 2.0).
    LegacyHistory,
    /// A bare list of segments (oldest `torch.cuda.memory_snapshot()` output).
    SegmentList,
}

impl Format {
    /// The shape in words, with the PyTorch that writes it.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Current => "segments and device traces (PyTorch 2.1 and later)",
            Format::LegacyHistory => "segments whose blocks keep history records (PyTorch 2.0)",
            Format::SegmentList => "a bare list of segments (torch.cuda.memory_snapshot())",
        }
    }
}

/// A whole snapshot: every device's segments and trace, plus the recorded settings.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub interner: Interner,
    pub segments: Vec<Segment>,
    /// Indexed by device.
    pub device_traces: Vec<DeviceTrace>,
    pub allocator_settings: Option<PyValue>,
    pub external_annotations: Vec<Annotation>,
    pub format: Format,
    /// Pickle protocol of the file ([`FROM_JSON`] for a snapshot saved as JSON).
    pub protocol: u8,
}

/// [`Snapshot::protocol`] of a snapshot read from JSON: pickle's protocols are 0 to 5.
pub const FROM_JSON: u8 = u8::MAX;

impl Snapshot {
    /// How the file was written: "pickle protocol 4", or "JSON".
    pub fn encoding(&self) -> String {
        if self.protocol == FROM_JSON {
            "JSON".into()
        } else {
            format!("pickle protocol {}", self.protocol)
        }
    }

    pub fn str(&self, id: StrId) -> &str {
        self.interner.str(id)
    }
    pub fn frame(&self, id: FrameId) -> &Frame {
        self.interner.frame(id)
    }
    pub fn stack(&self, id: StackId) -> &[FrameId] {
        self.interner.stack(id)
    }

    /// Devices that have a non-empty trace or at least one segment, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut d: Vec<i64> = self
            .device_traces
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(i, _)| i as i64)
            .chain(self.segments.iter().map(|s| s.device))
            .collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    /// The trace of `device`, empty if it has none.
    pub fn trace(&self, device: i64) -> &DeviceTrace {
        static EMPTY: std::sync::OnceLock<DeviceTrace> = std::sync::OnceLock::new();
        usize::try_from(device)
            .ok()
            .and_then(|d| self.device_traces.get(d))
            .unwrap_or_else(|| EMPTY.get_or_init(DeviceTrace::default))
    }

    pub fn segments_of(&self, device: i64) -> impl Iterator<Item = &Segment> {
        self.segments.iter().filter(move |s| s.device == device)
    }

    /// The device a viewer should open first: the one with the longest trace (ties: the lowest).
    pub fn default_device(&self) -> Option<i64> {
        let devices = self.devices();
        devices
            .iter()
            .copied()
            .max_by_key(|&d| (self.trace(d).len(), std::cmp::Reverse(d)))
    }

    /// Approximate heap bytes of the model (for the memory-per-entry figures in the docs and benchmarks).
    pub fn heap_bytes(&self) -> usize {
        let traces: usize = self.device_traces.iter().map(|t| t.heap_bytes()).sum();
        let blocks: usize = self
            .segments
            .iter()
            .map(|s| s.blocks.capacity() * std::mem::size_of::<Block>())
            .sum();
        traces + blocks + self.segments.capacity() * std::mem::size_of::<Segment>()
    }
}
