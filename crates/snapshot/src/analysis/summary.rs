//! The headline figures of each device: what `memograph summary` prints and the reference files hold.

use std::collections::BTreeMap;

use foldhash::HashSet;

use super::lifetimes::Lifetimes;
use crate::model::{BlockState, Snapshot, StackId};

/// Headline figures of one device. Field names and meanings match `../shared/fixtures/reference`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeviceSummary {
    pub device: i64,
    /// Count of trace entries by action.
    pub events: BTreeMap<String, u64>,
    pub segments: usize,
    /// Sum of segment `total_size`.
    pub reserved_bytes: u64,
    /// Sum of block `size` over `active_allocated` and `active_pending_free` blocks.
    pub active_bytes: u64,
    /// Sum of block `requested_size` over `active_allocated` blocks.
    pub requested_bytes: u64,
    /// Lifetimes the Active Memory Timeline draws.
    pub allocations: usize,
    pub timeline_peak_bytes: u64,
    pub peak_event_index: i64,
    /// Distinct `(filename, line, name)` over trace entries, segments, blocks and legacy history records.
    pub unique_frames: usize,
}

/// What a snapshot cannot tell of `device`, as a sentence; `None` when it holds allocator history. A
/// snapshot taken without `torch.cuda.memory._record_memory_history()` (or with it off) holds only
/// what was allocated when it was taken; MemoryViz shows such a file as an empty timeline.
pub fn missing_history(snapshot: &Snapshot, device: i64) -> Option<&'static str> {
    if !snapshot.trace(device).is_empty() {
        return None;
    }
    if !snapshot.segments.iter().any(|s| s.device == device) {
        return Some(
            "No CUDA memory: no segments and no allocator history (the snapshot was taken before \
             anything was allocated on the GPU, or by a process that did not use it)",
        );
    }
    Some(
        "No allocator history: only what was allocated when the snapshot was taken, not how it got \
         there (call torch.cuda.memory._record_memory_history() before the steps you care about, \
         then _dump_snapshot())",
    )
}

/// Figures for every device of the snapshot, ascending by device.
pub fn summarize(snapshot: &Snapshot) -> Vec<DeviceSummary> {
    snapshot
        .devices()
        .into_iter()
        .map(|d| summarize_device(snapshot, d))
        .collect()
}

pub fn summarize_device(snapshot: &Snapshot, device: i64) -> DeviceSummary {
    summarize_with(snapshot, &Lifetimes::of(snapshot, device))
}

/// [`summarize_device`] from the device's block lifetimes, for callers that already hold them.
pub fn summarize_with(snapshot: &Snapshot, lifetimes: &Lifetimes) -> DeviceSummary {
    crate::batch::run_ready(summarize_sliced(
        snapshot,
        lifetimes,
        &mut crate::batch::NoPause,
    ))
}

/// [`summarize_with`], awaiting `pause` between batches of trace entries.
pub async fn summarize_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    pause: &mut P,
) -> DeviceSummary {
    let device = lifetimes.device;
    let trace = snapshot.trace(device);
    // A handful of distinct actions over up to millions of entries: a short list beats a map.
    let mut seen: Vec<(crate::model::Action, u64)> = Vec::new();
    let count = |r: std::ops::Range<usize>| {
        for &a in &trace.action[r] {
            match seen.iter_mut().find(|(b, _)| *b == a) {
                Some((_, n)) => *n += 1,
                None => seen.push((a, 1)),
            }
        }
    };
    crate::batch::ranges_paused(trace.action.len(), count, pause).await;
    let counts: BTreeMap<_, u64> = seen.into_iter().collect();
    let events = counts
        .into_iter()
        .map(|(a, n)| (a.name(&snapshot.interner).to_owned(), n))
        .collect();

    // Stack ids are dense: mark the ones used in a bitmap instead of hashing a million of them.
    let mut used = vec![false; snapshot.interner.stack_count()];
    let mut mark = |s: StackId| {
        if let Some(u) = used.get_mut(s.0 as usize) {
            *u = true;
        }
    };
    let stacks = |r: std::ops::Range<usize>| trace.stack[r].iter().for_each(|&s| mark(s));
    crate::batch::ranges_paused(trace.stack.len(), stacks, pause).await;
    let (mut segments, mut reserved, mut active, mut requested) = (0, 0, 0, 0);
    for s in snapshot.segments_of(device) {
        segments += 1;
        reserved += s.total_size;
        mark(s.stack);
        for b in &s.blocks {
            mark(b.stack);
            b.history.iter().for_each(|r| mark(r.stack));
            if b.state.is_active() {
                active += b.size;
            }
            if b.state == BlockState::ActiveAllocated {
                requested += b.requested_size;
            }
        }
    }
    let mut frames = HashSet::default();
    frames.extend(
        (0..used.len())
            .filter(|&i| used[i])
            .flat_map(|i| snapshot.stack(StackId(i as u32)).iter())
            .map(|&f| {
                let f = snapshot.frame(f);
                (f.filename, f.line, f.name)
            }),
    );

    let peak = lifetimes.peak_sliced(pause).await;
    DeviceSummary {
        device,
        events,
        segments,
        reserved_bytes: reserved,
        active_bytes: active,
        requested_bytes: requested,
        allocations: lifetimes.allocations.len(),
        timeline_peak_bytes: peak.bytes,
        peak_event_index: peak.event,
        unique_frames: frames.len(),
    }
}
