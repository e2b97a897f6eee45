//! Where a device ran out of memory: its trace's `oom` entries, with what was asked for, what the
//! device had free, what PyTorch held then and the code that asked.

use super::lifetimes::{reserved_at_sliced, Lifetimes};
use super::live_set::allocation_site;
use crate::batch::{run_ready, NoPause, Pause};
use crate::format::{at_entry, bytes};
use crate::model::{Action, DeviceTrace, Snapshot, StackId};

/// An `oom` entry of a device's trace: where the allocator could not find the memory it was asked
/// for, even after freeing its cache.
#[derive(Debug, Clone, PartialEq)]
pub struct OomMark {
    /// The entry, whose column's middle is the mark's moment on the timeline.
    pub entry: u32,
    pub requested: u64,
    /// What the driver reported free on the device then, when the entry says.
    pub device_free: Option<u64>,
    /// Bytes allocated by PyTorch then (the block timeline's live bytes), and reserved in its segments.
    pub allocated: u64,
    pub reserved: u64,
    /// The code that asked, when the entry has a stack.
    pub site: Option<String>,
}

impl OomMark {
    /// What a pointer on the mark reads.
    pub fn describe(&self) -> String {
        let free = self
            .device_free
            .map(|f| format!(" with {} free on the device", bytes(f)))
            .unwrap_or_default();
        let cached = self.reserved.saturating_sub(self.allocated);
        let mut text = format!(
            "out of memory {}\na request of {}{free}\nPyTorch held {} allocated, {} reserved ({} cached but free)",
            at_entry(i64::from(self.entry)),
            bytes(self.requested),
            bytes(self.allocated),
            bytes(self.reserved),
            bytes(cached)
        );
        if cached >= self.requested && self.requested > 0 {
            // The allocator frees whole cached segments before it gives up: what is left is free
            // space split among segments that also hold live blocks.
            text.push_str(
                "\nmore than the request was cached but free, in pieces: fragmentation \
                 (expandable_segments:True may help)",
            );
        }
        if let Some(site) = &self.site {
            text.push_str(&format!("\nasked for by {site}"));
        }
        text
    }
}

/// [`oom_marks_sliced`] at once.
pub fn oom_marks(snapshot: &Snapshot, device: i64, blocks: &Lifetimes) -> Vec<OomMark> {
    run_ready(oom_marks_sliced(snapshot, device, blocks, &mut NoPause))
}

/// The `oom` entries of `device`'s trace, with the bytes `blocks` has live and the segments reserve at
/// each.
pub async fn oom_marks_sliced<P: Pause>(
    snapshot: &Snapshot,
    device: i64,
    blocks: &Lifetimes,
    pause: &mut P,
) -> Vec<OomMark> {
    let trace = snapshot.trace(device);
    let found = oom_entries_sliced(trace, pause).await;
    if found.is_empty() {
        return Vec::new();
    }
    let reserved = reserved_at_sliced(snapshot, device, &found, pause).await;
    found
        .into_iter()
        .zip(reserved)
        .map(|(i, reserved)| {
            let entry = trace.get(i);
            OomMark {
                entry: i as u32,
                requested: entry.size,
                device_free: entry.device_free,
                allocated: blocks.live_bytes_at(i as i64),
                reserved,
                site: (entry.stack != StackId::EMPTY)
                    .then(|| allocation_site(snapshot, entry.stack)),
            }
        })
        .collect()
}

/// The indices of `trace`'s `oom` entries, in order, awaiting `pause` between batches.
pub async fn oom_entries_sliced<P: Pause>(trace: &DeviceTrace, pause: &mut P) -> Vec<usize> {
    let mut found = Vec::new();
    let scan = |r: std::ops::Range<usize>| {
        found.extend(r.filter(|&i| trace.action[i] == Action::Oom));
    };
    crate::batch::ranges_paused(trace.len(), scan, pause).await;
    found
}
