//! Allocation lifetimes exactly as PyTorch's Active Memory Timeline (MemoryViz `process_alloc_data`)
//! defines them, and the series derived from them.
//!
//! - an `alloc` opens a lifetime at its address; the next `free_completed` (or legacy `free`) at that
//!   address closes it (`free_requested` does not: the block is held until the stream's work is done);
//! - a free whose address no earlier `alloc` opened is a lifetime that began before the trace;
//! - an `active_allocated` block of the snapshot whose address is not open at the end of the trace also
//!   began before the trace (it is counted with its `requested_size`).
//!
//! An `alloc` at an address that is already open replaces it in the address map (as MemoryViz does), so the
//! earlier lifetime never closes.

use std::num::NonZeroU32;

use foldhash::HashMap;

use crate::model::{Action, BlockState, Snapshot, StackId};

/// Where a lifetime comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Opened by an `alloc` in the trace.
    Alloc,
    /// Only its free is in the trace: it was allocated before recording began.
    FreeOnly,
    /// Only the snapshot's segments hold it: allocated before recording and never freed.
    SnapshotBlock,
}

/// One allocation's lifetime on a device.
///
/// 40 bytes: a 1 GB snapshot holds millions of these, so trace entries are 4-byte references, the stream
/// is an index into [`Lifetimes::streams`], and the [`Origin`] follows from which entries are there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub addr: u64,
    pub size: u64,
    pub stack: StackId,
    /// How many times this address had been freed before: the `_N` of `b7f3a…_N`.
    pub version: u32,
    alloc: EntryRef,
    free: EntryRef,
    free_requested: EntryRef,
    stream: u32,
}

// The page holds millions of these (see the type's comment).
const _: () = assert!(std::mem::size_of::<Allocation>() == 40);

impl Allocation {
    /// Trace index of its `alloc`; `None` when it began before the trace.
    pub fn alloc_event(&self) -> Option<u32> {
        self.alloc.get()
    }
    /// Trace index of the free that ended it; `None` while still live at the end.
    pub fn free_event(&self) -> Option<u32> {
        self.free.get()
    }
    /// Trace index of its `free_requested` (blocks only): from then until the free it is pending free.
    pub fn free_requested_event(&self) -> Option<u32> {
        self.free_requested.get()
    }
    /// Where the lifetime comes from.
    pub fn origin(&self) -> Origin {
        match (self.alloc_event(), self.free_event()) {
            (Some(_), _) => Origin::Alloc,
            (None, Some(_)) => Origin::FreeOnly,
            (None, None) => Origin::SnapshotBlock,
        }
    }
    /// Live right after trace entry `event` (`-1`: before the first entry).
    pub fn is_live_at(&self, event: i64) -> bool {
        let opened = self.alloc_event().is_none_or(|a| i64::from(a) <= event);
        let open = self.free_event().is_none_or(|f| i64::from(f) > event);
        opened && open
    }
    /// True when it began before the trace.
    pub fn is_initial(&self) -> bool {
        self.alloc_event().is_none()
    }
    /// An allocation of `size` bytes at `addr` on the first stream, with the empty stack, from entry
    /// `alloc` (or before the trace) to entry `free` (or the end): for tests that build lifetimes by hand.
    #[doc(hidden)]
    pub fn spanning(addr: u64, size: u64, alloc: Option<u32>, free: Option<u32>) -> Allocation {
        Allocation {
            addr,
            size,
            stack: StackId::EMPTY,
            version: 0,
            alloc: EntryRef::of(alloc),
            free: EntryRef::of(free),
            free_requested: EntryRef::NONE,
            stream: 0,
        }
    }
    /// `b7f3a2c000000_3`: MemoryViz's searchable name for this block's lifetime.
    pub fn name(&self) -> String {
        block_name(self.addr, self.version)
    }
}

/// A trace entry's index, or none, in 4 bytes (stored as index + 1). Trace indices are u32 throughout;
/// the last one (`u32::MAX`) would read as none, and no tab or file holds 4 G entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntryRef(Option<NonZeroU32>);

impl EntryRef {
    const NONE: EntryRef = EntryRef(None);
    fn at(i: u32) -> EntryRef {
        EntryRef(NonZeroU32::new(i.wrapping_add(1)))
    }
    fn of(i: Option<u32>) -> EntryRef {
        i.map_or(EntryRef::NONE, EntryRef::at)
    }
    fn get(self) -> Option<u32> {
        self.0.map(|v| v.get() - 1)
    }
}

/// Stream handles seen by one device's lifetimes, each stored once.
#[derive(Debug, Default)]
struct StreamTable {
    handles: Vec<u64>,
    index: HashMap<u64, u32>,
    last: Option<(u64, u32)>,
}

impl StreamTable {
    fn intern(&mut self, handle: u64) -> u32 {
        // Most entries are on the stream of the one before them.
        if let Some((h, i)) = self.last {
            if h == handle {
                return i;
            }
        }
        let handles = &mut self.handles;
        let i = *self.index.entry(handle).or_insert_with(|| {
            handles.push(handle);
            handles.len() as u32 - 1
        });
        self.last = Some((handle, i));
        i
    }
}

/// MemoryViz's name for a block lifetime: `b` + hex address + `_` + version.
pub fn block_name(addr: u64, version: u32) -> String {
    format!("b{addr:x}_{version}")
}

/// MemoryViz's name for a segment lifetime.
pub fn segment_name(addr: u64, version: u32) -> String {
    format!("s{addr:x}_{version}")
}

/// What a lifetime is of: a block (the Active Memory Timeline) or a segment (the Active Cached Segment
/// Timeline, where `segment_map`/`segment_unmap` ranges of expandable segments count as segments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Blocks,
    Segments,
}

impl Kind {
    fn opens(self, a: Action) -> bool {
        match self {
            Kind::Blocks => a.opens_block(),
            Kind::Segments => matches!(a, Action::SegmentAlloc | Action::SegmentMap),
        }
    }
    fn closes(self, a: Action) -> bool {
        match self {
            Kind::Blocks => a.closes_block(),
            Kind::Segments => matches!(a, Action::SegmentFree | Action::SegmentUnmap),
        }
    }
}

/// Every lifetime on one device, with the live-bytes series over its trace.
#[derive(Debug, Clone)]
pub struct Lifetimes {
    pub device: i64,
    pub kind: Kind,
    /// In MemoryViz's order: trace lifetimes in trace order, then snapshot-only blocks.
    pub allocations: Vec<Allocation>,
    /// Bytes live before the first entry (lifetimes that began before the trace).
    pub initial_bytes: u64,
    /// Bytes live right after each trace entry.
    pub live_after: Vec<u64>,
    /// Every opening and closing, in trace order: `(entry, allocation)`; it opens the allocation when
    /// `entry` is its `alloc_event`, else closes it. (A segment unmap can close one range and open the
    /// pieces it leaves, so an entry may appear more than once.)
    pub changes: Vec<(u32, u32)>,
    /// Stream handles, indexed by each allocation's stream (see [`Lifetimes::stream_of`]).
    pub streams: Vec<u64>,
}

/// The peak of live bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Peak {
    pub bytes: u64,
    /// First trace index after which the peak is reached; `-1` when the starting state is the peak.
    pub event: i64,
}

impl Lifetimes {
    /// Block lifetimes of `device`'s trace and snapshot blocks.
    pub fn of(snapshot: &Snapshot, device: i64) -> Lifetimes {
        Lifetimes::of_kind(snapshot, device, Kind::Blocks)
    }

    /// Segment lifetimes of `device`'s trace and snapshot segments.
    pub fn of_segments(snapshot: &Snapshot, device: i64) -> Lifetimes {
        Lifetimes::of_kind(snapshot, device, Kind::Segments)
    }

    pub fn of_kind(snapshot: &Snapshot, device: i64, kind: Kind) -> Lifetimes {
        crate::batch::run_ready(Lifetimes::of_kind_sliced(
            snapshot,
            device,
            kind,
            &mut crate::batch::NoPause,
        ))
    }

    /// [`Lifetimes::of`] a batch at a time, awaiting `pause` between batches (the page's event loop
    /// runs there).
    pub async fn of_sliced<P: crate::batch::Pause>(
        snapshot: &Snapshot,
        device: i64,
        pause: &mut P,
    ) -> Lifetimes {
        Lifetimes::of_kind_sliced(snapshot, device, Kind::Blocks, pause).await
    }

    /// [`Lifetimes::of_kind`] a batch at a time, awaiting `pause` between batches.
    pub async fn of_kind_sliced<P: crate::batch::Pause>(
        snapshot: &Snapshot,
        device: i64,
        kind: Kind,
        pause: &mut P,
    ) -> Lifetimes {
        let trace = snapshot.trace(device);
        let n = trace.len();
        // Room for what the replay makes, reserved up front: growing a table of millions by doubling
        // copies it whole in one call (190 ms at 2 GB). Each open makes an allocation; a close makes
        // one only when nothing was open at its address (a free of what began before the trace), which
        // the excess of closes over opens bounds in a balanced trace, plus a margin.
        let (mut opens, mut closes) = (0usize, 0usize);
        let count = |range: std::ops::Range<usize>| {
            for &action in &trace.action[range] {
                opens += usize::from(kind.opens(action));
                closes += usize::from(kind.closes(action));
            }
        };
        crate::batch::ranges_paused(n, count, pause).await;
        let held: usize = snapshot
            .segments_of(device)
            .map(|s| s.blocks.len().max(1))
            .sum();
        let expected = opens + closes.saturating_sub(opens) + opens / 64 + held;
        // Only as a hint: where the memory is not there, the tables grow as they go.
        let mut allocations: Vec<Allocation> = Vec::new();
        let _ = allocations.try_reserve_exact(expected);
        // What is known of each address, in one table: one lookup per entry.
        let mut slots: HashMap<u64, Slot> = HashMap::default();
        let mut streams = StreamTable::default();
        let mut changes: Vec<(u32, u32)> = Vec::new();
        let _ = changes.try_reserve_exact(opens + closes);
        // In batches: this runs once per file on the page's thread (see `batch`).
        crate::batch::ranges_paused(
            n,
            |range| {
                for i in range {
                    let (action, addr) = (trace.action[i], trace.addr[i]);
                    if kind == Kind::Segments && kind.closes(action) {
                        close_range(
                            &mut allocations,
                            &mut slots,
                            &mut changes,
                            &mut streams,
                            i as u32,
                            addr,
                            trace.size[i],
                        );
                        continue;
                    }
                    if kind == Kind::Blocks && action == Action::FreeRequested {
                        slots.entry(addr).or_default().requested = i as u32;
                    }
                    if kind.opens(action) {
                        let slot = slots.entry(addr).or_default();
                        allocations.push(Allocation {
                            addr,
                            size: trace.size[i],
                            stack: trace.stack[i],
                            version: slot.version,
                            alloc: EntryRef::at(i as u32),
                            free: EntryRef::NONE,
                            free_requested: EntryRef::NONE,
                            stream: streams.intern(trace.stream[i]),
                        });
                        let id = allocations.len() as u32 - 1;
                        slot.open = id;
                        changes.push((i as u32, id));
                    } else if kind.closes(action) {
                        let slot = slots.entry(addr).or_default();
                        let current = slot.version;
                        slot.version += 1;
                        let free_requested_event = Slot::take(&mut slot.requested);
                        let id = match Slot::take(&mut slot.open) {
                            Some(id) => {
                                let a = &mut allocations[id as usize];
                                a.free = EntryRef::at(i as u32);
                                a.free_requested = EntryRef::of(
                                    free_requested_event
                                        .filter(|&r| a.alloc_event().is_none_or(|x| r > x)),
                                );
                                id
                            }
                            None => {
                                allocations.push(Allocation {
                                    addr,
                                    size: trace.size[i],
                                    stack: trace.stack[i],
                                    version: current,
                                    alloc: EntryRef::NONE,
                                    free: EntryRef::at(i as u32),
                                    free_requested: EntryRef::of(free_requested_event),
                                    stream: streams.intern(trace.stream[i]),
                                });
                                allocations.len() as u32 - 1
                            }
                        };
                        changes.push((i as u32, id));
                    }
                }
            },
            pause,
        )
        .await;
        // Open ranges by address, to find what each snapshot segment's range already covers.
        let mut open_ranges: Vec<(u64, u64)> = if kind == Kind::Segments {
            slots
                .values()
                .filter_map(|slot| slot.open())
                .map(|id| (allocations[id as usize].addr, allocations[id as usize].size))
                .collect()
        } else {
            Vec::new()
        };
        open_ranges.sort_unstable();
        for seg in snapshot.segments_of(device) {
            if kind == Kind::Segments {
                // Expandable segments are mapped in ranges: what the trace's open maps do not cover was
                // mapped before recording began.
                let end = seg.address.saturating_add(seg.total_size);
                let first = open_ranges.partition_point(|&(a, _)| a < seg.address);
                let covered: u64 = open_ranges[first..]
                    .iter()
                    .take_while(|&&(a, _)| a < end)
                    .map(|&(_, size)| size)
                    .sum();
                let before = seg.total_size.saturating_sub(covered);
                if before > 0 {
                    allocations.push(Allocation {
                        addr: seg.address,
                        size: before,
                        stack: seg.stack,
                        version: slots.get(&seg.address).map_or(0, |s| s.version),
                        alloc: EntryRef::NONE,
                        free: EntryRef::NONE,
                        free_requested: EntryRef::NONE,
                        stream: streams.intern(seg.stream),
                    });
                }
                continue;
            }
            for b in &seg.blocks {
                if b.state == BlockState::Inactive {
                    continue;
                }
                // Recorded with context="state", trace entries carry no frames but the snapshot's
                // blocks do: an allocation still open at the end is the block at its address.
                if let Some(id) = slots.get(&b.address).and_then(Slot::open) {
                    let a = &mut allocations[id as usize];
                    if a.stack == StackId::EMPTY && (a.size == b.size || a.size == b.requested_size)
                    {
                        a.stack = b.stack;
                    }
                    continue;
                }
                if b.state == BlockState::ActiveAllocated {
                    allocations.push(Allocation {
                        addr: b.address,
                        size: b.requested_size,
                        stack: b.stack,
                        version: slots.get(&b.address).map_or(0, |s| s.version),
                        alloc: EntryRef::NONE,
                        free: EntryRef::NONE,
                        free_requested: EntryRef::NONE,
                        stream: streams.intern(seg.stream),
                    });
                }
            }
        }

        let initial_bytes: u64 = allocations
            .iter()
            .filter(|a| a.is_initial())
            .map(|a| a.size)
            .sum();
        let mut live = initial_bytes as i128;
        let mut live_after = Vec::with_capacity(n);
        let mut next = changes.iter().peekable();
        crate::batch::ranges_paused(
            n,
            |range| {
                for i in range {
                    let i = i as u32;
                    while let Some(&&(x, id)) = next.peek() {
                        if x != i {
                            break;
                        }
                        let a = &allocations[id as usize];
                        if a.alloc_event() == Some(x) {
                            live += a.size as i128;
                        } else {
                            live -= a.size as i128;
                        }
                        next.next();
                    }
                    live_after.push(live.max(0) as u64);
                }
            },
            pause,
        )
        .await;
        Lifetimes {
            device,
            kind,
            allocations,
            initial_bytes,
            live_after,
            changes,
            streams: streams.handles,
        }
    }

    /// The maximum of live bytes and the first entry after which it is reached.
    pub fn peak(&self) -> Peak {
        crate::batch::run_ready(self.peak_sliced(&mut crate::batch::NoPause))
    }

    /// [`Self::peak`], awaiting `pause` between batches (asked for by most analyses, over up to tens
    /// of millions of entries).
    pub async fn peak_sliced<P: crate::batch::Pause>(&self, pause: &mut P) -> Peak {
        let mut peak = Peak {
            bytes: self.initial_bytes,
            event: -1,
        };
        let scan = |range: std::ops::Range<usize>| {
            for i in range {
                let b = self.live_after[i];
                if b > peak.bytes {
                    peak = Peak {
                        bytes: b,
                        event: i as i64,
                    };
                }
            }
        };
        crate::batch::ranges_paused(self.live_after.len(), scan, pause).await;
        peak
    }

    /// The trace entries of `allocations` (indices into [`Self::allocations`]; others are skipped):
    /// each one's alloc, free request and free, in trace order, each once. What `memograph trace
    /// --find` prints, and what the page's state history lists while allocations are highlighted.
    pub fn events_of(&self, allocations: &[u32]) -> Vec<u32> {
        let mut events: Vec<u32> = allocations
            .iter()
            .filter_map(|&a| self.allocations.get(a as usize))
            .flat_map(|a| [a.alloc_event(), a.free_requested_event(), a.free_event()])
            .flatten()
            .collect();
        events.sort_unstable();
        events.dedup();
        events
    }

    /// The stream handle `a` was allocated on.
    pub fn stream_of(&self, a: &Allocation) -> u64 {
        self.streams.get(a.stream as usize).copied().unwrap_or(0)
    }

    /// Live bytes right after `event` (`-1`: before the first entry).
    pub fn live_bytes_at(&self, event: i64) -> u64 {
        if event < 0 {
            self.initial_bytes
        } else {
            self.live_after
                .get(event as usize)
                .copied()
                .unwrap_or_else(|| *self.live_after.last().unwrap_or(&self.initial_bytes))
        }
    }

    /// Indices into [`Self::allocations`] of the lifetimes live right after `event`.
    pub fn live_set_at(&self, event: i64) -> Vec<u32> {
        crate::batch::run_ready(self.live_set_at_sliced(event, &mut crate::batch::NoPause))
    }

    /// [`Self::live_set_at`], awaiting `pause` between batches of allocations.
    pub async fn live_set_at_sliced<P: crate::batch::Pause>(
        &self,
        event: i64,
        pause: &mut P,
    ) -> Vec<u32> {
        let mut live = Vec::new();
        let scan = |r: std::ops::Range<usize>| {
            let from = r.start;
            let found = self.allocations[r].iter().enumerate();
            live.extend(
                found
                    .filter(|(_, a)| a.is_live_at(event))
                    .map(|(i, _)| (from + i) as u32),
            );
        };
        crate::batch::ranges_paused(self.allocations.len(), scan, pause).await;
        live
    }
}

/// A segment free or unmap of `[addr, addr + size)` at entry `x`: every open range it overlaps closes, and
/// the parts of them it does not cover open again as new ranges. With nothing open there, it is a range
/// mapped before recording began.
fn close_range(
    allocations: &mut Vec<Allocation>,
    slots: &mut HashMap<u64, Slot>,
    changes: &mut Vec<(u32, u32)>,
    streams: &mut StreamTable,
    x: u32,
    addr: u64,
    size: u64,
) {
    let end = addr.saturating_add(size.max(1));
    let mut hit: Vec<u32> = slots
        .values()
        .filter_map(Slot::open)
        .filter(|&id| {
            let a = &allocations[id as usize];
            a.addr < end && addr < a.addr.saturating_add(a.size)
        })
        .collect();
    hit.sort_unstable();
    if hit.is_empty() {
        allocations.push(Allocation {
            addr,
            size,
            stack: StackId::EMPTY,
            version: 0,
            alloc: EntryRef::NONE,
            free: EntryRef::at(x),
            free_requested: EntryRef::NONE,
            stream: streams.intern(0),
        });
        changes.push((x, allocations.len() as u32 - 1));
        return;
    }
    for id in hit {
        let old = allocations[id as usize];
        // Segment slots hold only what is open: the table stays as small as the open segments.
        slots.remove(&old.addr);
        allocations[id as usize].free = EntryRef::at(x);
        changes.push((x, id));
        let old_end = old.addr + old.size;
        for (lo, hi) in [(old.addr, addr.max(old.addr)), (end.min(old_end), old_end)] {
            if hi > lo {
                allocations.push(Allocation {
                    addr: lo,
                    size: hi - lo,
                    version: old.version + 1,
                    alloc: EntryRef::at(x),
                    free: EntryRef::NONE,
                    ..old
                });
                let piece = allocations.len() as u32 - 1;
                slots.entry(lo).or_default().open = piece;
                changes.push((x, piece));
            }
        }
    }
}

/// What the replay knows of one address: the lifetime open there, how many closed there (its next
/// version), and the `free_requested` waiting for its `free_completed` (`NONE`: none).
#[derive(Debug, Clone, Copy)]
struct Slot {
    open: u32,
    version: u32,
    requested: u32,
}

impl Slot {
    const NONE: u32 = u32::MAX;

    fn open(&self) -> Option<u32> {
        (self.open != Slot::NONE).then_some(self.open)
    }

    /// The entry or lifetime in `field`, leaving none.
    fn take(field: &mut u32) -> Option<u32> {
        let v = std::mem::replace(field, Slot::NONE);
        (v != Slot::NONE).then_some(v)
    }
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            open: Slot::NONE,
            version: 0,
            requested: Slot::NONE,
        }
    }
}

/// Reserved bytes (memory held in segments) after each trace entry, from segment events.
///
/// The series ends at the snapshot's reserved total, so it starts at that total minus what the trace's
/// segment events added: right even when recording began after segments were already cached.
pub fn reserved_series(snapshot: &Snapshot, device: i64) -> (u64, Vec<u64>) {
    crate::batch::run_ready(reserved_series_sliced(
        snapshot,
        device,
        &mut crate::batch::NoPause,
    ))
}

/// [`reserved_series`], awaiting `pause` between batches of entries.
pub async fn reserved_series_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    device: i64,
    pause: &mut P,
) -> (u64, Vec<u64>) {
    let mut series = Vec::with_capacity(snapshot.trace(device).len());
    let start = reserved_walk(snapshot, device, pause, |_, r| series.push(r)).await;
    (start, series)
}

/// Reserved bytes right after each of `entries` (ascending) of `device`'s trace, as
/// [`reserved_series`] has them, without keeping the series (a few entries of a long trace).
pub async fn reserved_at_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    device: i64,
    entries: &[usize],
    pause: &mut P,
) -> Vec<u64> {
    let mut at = Vec::with_capacity(entries.len());
    reserved_walk(snapshot, device, pause, |i, r| {
        if entries.get(at.len()) == Some(&i) {
            at.push(r);
        }
    })
    .await;
    at
}

/// Walks `device`'s trace handing `each` every entry's index and the reserved bytes right after it;
/// returns the reserved bytes before the first entry.
pub(crate) async fn reserved_walk<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    device: i64,
    pause: &mut P,
    mut each: impl FnMut(usize, u64),
) -> u64 {
    let trace = snapshot.trace(device);
    let end: i128 = snapshot
        .segments_of(device)
        .map(|s| s.total_size as i128)
        .sum();
    let delta = |i: usize| -> i128 {
        match trace.action[i] {
            Action::SegmentAlloc | Action::SegmentMap => trace.size[i] as i128,
            Action::SegmentFree | Action::SegmentUnmap => -(trace.size[i] as i128),
            _ => 0,
        }
    };
    let mut net: i128 = 0;
    let sum = |r: std::ops::Range<usize>| net += r.map(delta).sum::<i128>();
    crate::batch::ranges_paused(trace.len(), sum, pause).await;
    let start = (end - net).max(0);
    let mut cur = start;
    let running = |r: std::ops::Range<usize>| {
        for i in r {
            cur += delta(i);
            each(i, cur.max(0) as u64);
        }
    };
    crate::batch::ranges_paused(trace.len(), running, pause).await;
    start as u64
}

/// MemoryViz's version of each trace entry's address: how many times that block address (or segment
/// address, for segment actions) had been freed before it. With the address it names one lifetime
/// (`b7f3a…_2`), so searching for it finds both ends. Entries without an address get 0.
pub fn event_versions(trace: &crate::model::DeviceTrace) -> Vec<u32> {
    crate::batch::run_ready(event_versions_sliced(trace, &mut crate::batch::NoPause))
}

/// [`event_versions`], awaiting `pause` between batches of entries.
pub async fn event_versions_sliced(
    trace: &crate::model::DeviceTrace,
    pause: &mut impl crate::batch::Pause,
) -> Vec<u32> {
    let mut blocks: HashMap<u64, u32> = HashMap::default();
    let mut segments: HashMap<u64, u32> = HashMap::default();
    let mut versions = Vec::with_capacity(trace.len());
    crate::batch::ranges_paused(
        trace.len(),
        |range| {
            versions.extend(range.map(|i| {
                let (map, bump) = match trace.action[i] {
                    Action::Alloc | Action::FreeRequested => (&mut blocks, false),
                    Action::FreeCompleted | Action::Free => (&mut blocks, true),
                    Action::SegmentAlloc | Action::SegmentMap => (&mut segments, false),
                    Action::SegmentFree | Action::SegmentUnmap => (&mut segments, true),
                    _ => return 0,
                };
                let v = map.entry(trace.addr[i]).or_insert(0);
                let current = *v;
                if bump {
                    *v += 1;
                }
                current
            }))
        },
        pause,
    )
    .await;
    versions
}

/// The display name of trace entry `i`: `b…_N` for block actions, `s…_N` for segment actions.
pub fn event_name(action: Action, addr: u64, version: u32) -> String {
    if action.is_segment() {
        segment_name(addr, version)
    } else if matches!(
        action,
        Action::Alloc | Action::FreeRequested | Action::FreeCompleted | Action::Free
    ) {
        block_name(addr, version)
    } else {
        String::new()
    }
}
