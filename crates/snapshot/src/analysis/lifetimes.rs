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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub addr: u64,
    pub size: u64,
    pub stream: u64,
    pub stack: StackId,
    /// Trace index of its `alloc`; `None` when it began before the trace.
    pub alloc_event: Option<u32>,
    /// Trace index of the free that ended it; `None` while still live at the end.
    pub free_event: Option<u32>,
    /// Trace index of its `free_requested` (blocks only): from then until `free_event` it is pending free.
    pub free_requested_event: Option<u32>,
    /// How many times this address had been freed before: the `_N` of `b7f3a…_N`.
    pub version: u32,
    pub origin: Origin,
}

impl Allocation {
    /// Live right after trace entry `event` (`-1`: before the first entry).
    pub fn is_live_at(&self, event: i64) -> bool {
        let opened = self.alloc_event.is_none_or(|a| i64::from(a) <= event);
        let open = self.free_event.is_none_or(|f| i64::from(f) > event);
        opened && open
    }
    /// True when it began before the trace.
    pub fn is_initial(&self) -> bool {
        self.alloc_event.is_none()
    }
    /// `b7f3a2c000000_3`: MemoryViz's searchable name for this block's lifetime.
    pub fn name(&self) -> String {
        block_name(self.addr, self.version)
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
        let mut open: HashMap<u64, u32> = HashMap::default();
        let mut versions: HashMap<u64, u32> = HashMap::default();
        let mut requested: HashMap<u64, u32> = HashMap::default();
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
                            &mut open,
                            &mut changes,
                            i as u32,
                            addr,
                            trace.size[i],
                        );
                        continue;
                    }
                    if kind == Kind::Blocks && action == Action::FreeRequested {
                        requested.insert(addr, i as u32);
                    }
                    if kind.opens(action) {
                        let version = versions.get(&addr).copied().unwrap_or(0);
                        allocations.push(Allocation {
                            addr,
                            size: trace.size[i],
                            stream: trace.stream[i],
                            stack: trace.stack[i],
                            alloc_event: Some(i as u32),
                            free_event: None,
                            free_requested_event: None,
                            version,
                            origin: Origin::Alloc,
                        });
                        let id = allocations.len() as u32 - 1;
                        open.insert(addr, id);
                        changes.push((i as u32, id));
                    } else if kind.closes(action) {
                        let version = versions.entry(addr).or_insert(0);
                        let current = *version;
                        *version += 1;
                        let free_requested_event = requested.remove(&addr);
                        let id = match open.remove(&addr) {
                            Some(id) => {
                                let a = &mut allocations[id as usize];
                                a.free_event = Some(i as u32);
                                a.free_requested_event = free_requested_event
                                    .filter(|&r| a.alloc_event.is_none_or(|x| r > x));
                                id
                            }
                            None => {
                                allocations.push(Allocation {
                                    addr,
                                    size: trace.size[i],
                                    stream: trace.stream[i],
                                    stack: trace.stack[i],
                                    alloc_event: None,
                                    free_event: Some(i as u32),
                                    free_requested_event,
                                    version: current,
                                    origin: Origin::FreeOnly,
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
            open.values()
                .map(|&id| (allocations[id as usize].addr, allocations[id as usize].size))
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
                        stream: seg.stream,
                        stack: seg.stack,
                        alloc_event: None,
                        free_event: None,
                        free_requested_event: None,
                        version: versions.get(&seg.address).copied().unwrap_or(0),
                        origin: Origin::SnapshotBlock,
                    });
                }
                continue;
            }
            for b in &seg.blocks {
                if b.state == BlockState::ActiveAllocated && !open.contains_key(&b.address) {
                    allocations.push(Allocation {
                        addr: b.address,
                        size: b.requested_size,
                        stream: seg.stream,
                        stack: b.stack,
                        alloc_event: None,
                        free_event: None,
                        free_requested_event: None,
                        version: versions.get(&b.address).copied().unwrap_or(0),
                        origin: Origin::SnapshotBlock,
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
                        if a.alloc_event == Some(x) {
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
        }
    }

    /// The maximum of live bytes and the first entry after which it is reached.
    pub fn peak(&self) -> Peak {
        let mut peak = Peak {
            bytes: self.initial_bytes,
            event: -1,
        };
        // In batches (see `batch`): asked for by most analyses, over up to tens of millions of entries.
        crate::batch::ranges(self.live_after.len(), |range| {
            for i in range {
                let b = self.live_after[i];
                if b > peak.bytes {
                    peak = Peak {
                        bytes: b,
                        event: i as i64,
                    };
                }
            }
        });
        peak
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
        self.allocations
            .iter()
            .enumerate()
            .filter(|(_, a)| a.is_live_at(event))
            .map(|(i, _)| i as u32)
            .collect()
    }
}

/// A segment free or unmap of `[addr, addr + size)` at entry `x`: every open range it overlaps closes, and
/// the parts of them it does not cover open again as new ranges. With nothing open there, it is a range
/// mapped before recording began.
fn close_range(
    allocations: &mut Vec<Allocation>,
    open: &mut HashMap<u64, u32>,
    changes: &mut Vec<(u32, u32)>,
    x: u32,
    addr: u64,
    size: u64,
) {
    let end = addr.saturating_add(size.max(1));
    let mut hit: Vec<u32> = open
        .values()
        .copied()
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
            stream: 0,
            stack: StackId::EMPTY,
            alloc_event: None,
            free_event: Some(x),
            free_requested_event: None,
            version: 0,
            origin: Origin::FreeOnly,
        });
        changes.push((x, allocations.len() as u32 - 1));
        return;
    }
    for id in hit {
        let old = allocations[id as usize];
        open.remove(&old.addr);
        allocations[id as usize].free_event = Some(x);
        changes.push((x, id));
        let old_end = old.addr + old.size;
        for (lo, hi) in [(old.addr, addr.max(old.addr)), (end.min(old_end), old_end)] {
            if hi > lo {
                allocations.push(Allocation {
                    addr: lo,
                    size: hi - lo,
                    alloc_event: Some(x),
                    free_event: None,
                    version: old.version + 1,
                    origin: Origin::Alloc,
                    ..old
                });
                let piece = allocations.len() as u32 - 1;
                open.insert(lo, piece);
                changes.push((x, piece));
            }
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
    let mut series = Vec::with_capacity(trace.len());
    let running = |r: std::ops::Range<usize>| {
        series.extend(r.map(|i| {
            cur += delta(i);
            cur.max(0) as u64
        }))
    };
    crate::batch::ranges_paused(trace.len(), running, pause).await;
    (start as u64, series)
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
