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
    /// Distinct `(filename, line, name)` over trace entries, segments and blocks.
    pub unique_frames: usize,
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
    let trace = snapshot.trace(device);
    let mut counts: BTreeMap<_, u64> = BTreeMap::new();
    for &a in &trace.action {
        *counts.entry(a).or_default() += 1;
    }
    let events = counts
        .into_iter()
        .map(|(a, n)| (a.name(&snapshot.interner).to_owned(), n))
        .collect();

    let mut stacks: HashSet<StackId> = HashSet::default();
    stacks.extend(trace.stack.iter().copied());
    let (mut segments, mut reserved, mut active, mut requested) = (0, 0, 0, 0);
    for s in snapshot.segments_of(device) {
        segments += 1;
        reserved += s.total_size;
        stacks.insert(s.stack);
        for b in &s.blocks {
            stacks.insert(b.stack);
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
        stacks
            .iter()
            .flat_map(|&s| snapshot.stack(s).iter())
            .map(|&f| {
                let f = snapshot.frame(f);
                (f.filename, f.line, f.name)
            }),
    );

    let lifetimes = Lifetimes::of(snapshot, device);
    let peak = lifetimes.peak();
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
