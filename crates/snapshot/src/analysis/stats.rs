//! The allocator's state per segment: what is allocated, what is cached free, what rounding wastes.

use crate::model::{BlockState, Snapshot};

/// Figures of one segment at the moment of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SegmentStats {
    pub address: u64,
    pub total_size: u64,
    pub segment_type: String,
    pub is_expandable: bool,
    pub stream: u64,
    /// The private pool the segment belongs to, if any ([`crate::Segment::private_pool`]).
    pub private_pool: Option<(i64, i64)>,
    pub blocks: usize,
    /// Bytes in `active_allocated` blocks.
    pub allocated: u64,
    /// Bytes in `active_pending_free` blocks (freed, waiting for their stream).
    pub pending_free: u64,
    /// Bytes in inactive blocks: cached, reusable.
    pub free: u64,
    /// Largest inactive block.
    pub largest_free: u64,
    /// `size - requested_size` over allocated blocks: lost to the allocator's rounding.
    pub rounding_waste: u64,
}

/// Totals over a device's segments.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct StatsTotals {
    pub segments: usize,
    pub blocks: usize,
    pub reserved: u64,
    pub allocated: u64,
    pub pending_free: u64,
    pub free: u64,
    pub largest_free: u64,
    pub rounding_waste: u64,
}

/// Per-segment figures of `device`, by address, and their totals.
pub fn segment_stats(snapshot: &Snapshot, device: i64) -> (Vec<SegmentStats>, StatsTotals) {
    let mut rows: Vec<SegmentStats> = snapshot
        .segments_of(device)
        .map(|s| {
            let mut r = SegmentStats {
                address: s.address,
                total_size: s.total_size,
                segment_type: s
                    .segment_type
                    .map(|t| snapshot.str(t).to_owned())
                    .unwrap_or_default(),
                is_expandable: s.is_expandable,
                stream: s.stream,
                private_pool: s.private_pool(),
                blocks: s.blocks.len(),
                allocated: 0,
                pending_free: 0,
                free: 0,
                largest_free: 0,
                rounding_waste: 0,
            };
            for b in &s.blocks {
                match b.state {
                    BlockState::ActiveAllocated => {
                        r.allocated += b.size;
                        r.rounding_waste += b.size.saturating_sub(b.requested_size);
                    }
                    BlockState::ActivePendingFree => r.pending_free += b.size,
                    BlockState::Inactive => {
                        r.free += b.size;
                        r.largest_free = r.largest_free.max(b.size);
                    }
                    BlockState::Other(_) => {}
                }
            }
            r
        })
        .collect();
    rows.sort_by_key(|r| r.address);
    let mut t = StatsTotals {
        segments: rows.len(),
        ..Default::default()
    };
    for r in &rows {
        t.blocks += r.blocks;
        t.reserved += r.total_size;
        t.allocated += r.allocated;
        t.pending_free += r.pending_free;
        t.free += r.free;
        t.largest_free = t.largest_free.max(r.largest_free);
        t.rounding_waste += r.rounding_waste;
    }
    (rows, t)
}
