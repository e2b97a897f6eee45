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

/// Every lifetime on one device, with the live-bytes series over its trace.
#[derive(Debug, Clone)]
pub struct Lifetimes {
    pub device: i64,
    /// In MemoryViz's order: trace lifetimes in trace order, then snapshot-only blocks.
    pub allocations: Vec<Allocation>,
    /// Bytes live before the first entry (lifetimes that began before the trace).
    pub initial_bytes: u64,
    /// Bytes live right after each trace entry.
    pub live_after: Vec<u64>,
    /// For each trace entry, the allocation it opens or closes (`u32::MAX`: neither).
    pub allocation_of_event: Vec<u32>,
}

/// The peak of live bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Peak {
    pub bytes: u64,
    /// First trace index after which the peak is reached; `-1` when the starting state is the peak.
    pub event: i64,
}

impl Lifetimes {
    /// Lifetimes of `device`'s trace and blocks.
    pub fn of(snapshot: &Snapshot, device: i64) -> Lifetimes {
        let trace = snapshot.trace(device);
        let n = trace.len();
        let mut allocations: Vec<Allocation> = Vec::new();
        let mut open: HashMap<u64, u32> = HashMap::default();
        let mut versions: HashMap<u64, u32> = HashMap::default();
        let mut allocation_of_event = vec![u32::MAX; n];
        for (i, (&action, &addr)) in trace.action.iter().zip(&trace.addr).enumerate() {
            if action.opens_block() {
                let version = versions.get(&addr).copied().unwrap_or(0);
                allocations.push(Allocation {
                    addr,
                    size: trace.size[i],
                    stream: trace.stream[i],
                    stack: trace.stack[i],
                    alloc_event: Some(i as u32),
                    free_event: None,
                    version,
                    origin: Origin::Alloc,
                });
                let id = allocations.len() as u32 - 1;
                open.insert(addr, id);
                allocation_of_event[i] = id;
            } else if action.closes_block() {
                let version = versions.entry(addr).or_insert(0);
                let current = *version;
                *version += 1;
                let id = match open.remove(&addr) {
                    Some(id) => {
                        allocations[id as usize].free_event = Some(i as u32);
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
                            version: current,
                            origin: Origin::FreeOnly,
                        });
                        allocations.len() as u32 - 1
                    }
                };
                allocation_of_event[i] = id;
            }
        }
        for seg in snapshot.segments_of(device) {
            for b in &seg.blocks {
                if b.state == BlockState::ActiveAllocated && !open.contains_key(&b.address) {
                    allocations.push(Allocation {
                        addr: b.address,
                        size: b.requested_size,
                        stream: seg.stream,
                        stack: b.stack,
                        alloc_event: None,
                        free_event: None,
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
        for (i, &id) in allocation_of_event.iter().enumerate() {
            if id != u32::MAX {
                let a = &allocations[id as usize];
                if a.alloc_event == Some(i as u32) {
                    live += a.size as i128;
                } else {
                    live -= a.size as i128;
                }
            }
            live_after.push(live.max(0) as u64);
        }
        Lifetimes {
            device,
            allocations,
            initial_bytes,
            live_after,
            allocation_of_event,
        }
    }

    /// The maximum of live bytes and the first entry after which it is reached.
    pub fn peak(&self) -> Peak {
        let mut peak = Peak {
            bytes: self.initial_bytes,
            event: -1,
        };
        for (i, &b) in self.live_after.iter().enumerate() {
            if b > peak.bytes {
                peak = Peak {
                    bytes: b,
                    event: i as i64,
                };
            }
        }
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

/// Reserved bytes (memory held in segments) after each trace entry, from segment events.
///
/// The series ends at the snapshot's reserved total, so it starts at that total minus what the trace's
/// segment events added: right even when recording began after segments were already cached.
pub fn reserved_series(snapshot: &Snapshot, device: i64) -> (u64, Vec<u64>) {
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
    let net: i128 = (0..trace.len()).map(delta).sum();
    let start = (end - net).max(0);
    let mut cur = start;
    let series = (0..trace.len())
        .map(|i| {
            cur += delta(i);
            cur.max(0) as u64
        })
        .collect();
    (start as u64, series)
}
