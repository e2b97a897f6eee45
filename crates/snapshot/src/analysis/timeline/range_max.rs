//! The largest of any range of a series in O(1) after a linear build: the live total's highest point
//! under a pixel column or a view, whatever the zoom.

use crate::batch::{ranges_paused, Pause, BATCH};

/// Maximum of a series over index ranges, in O(n / BLOCK + BLOCK) per query. Holds only the block
/// maxima; the series itself is passed to each query (it already lives in [`Lifetimes::live_after`](crate::analysis::lifetimes::Lifetimes::live_after)).
#[derive(Debug, Clone, Default)]
pub struct RangeMax {
    blocks: Vec<u64>,
}

const BLOCK: usize = 256;

impl RangeMax {
    pub fn new(values: &[u64]) -> RangeMax {
        crate::batch::run_ready(RangeMax::new_sliced(values, &mut crate::batch::NoPause))
    }

    /// [`Self::new`], awaiting `pause` between batches of values.
    pub async fn new_sliced<P: Pause>(values: &[u64], pause: &mut P) -> RangeMax {
        // Batches start at multiples of BATCH, which BLOCK divides: each block is whole in one batch.
        const { assert!(BATCH / BLOCK * BLOCK == BATCH) };
        let mut blocks = Vec::with_capacity(values.len().div_ceil(BLOCK));
        let max = |c: &[u64]| c.iter().copied().max().unwrap_or(0);
        let batch = |r: std::ops::Range<usize>| blocks.extend(values[r].chunks(BLOCK).map(max));
        ranges_paused(values.len(), batch, pause).await;
        RangeMax { blocks }
    }

    /// Max over `values[lo..hi]` (clamped); 0 when empty. `values` is the series `new` was given.
    pub fn max(&self, values: &[u64], lo: usize, hi: usize) -> u64 {
        let hi = hi.min(values.len());
        if lo >= hi {
            return 0;
        }
        let (bl, bh) = (lo.div_ceil(BLOCK), hi / BLOCK);
        if bl >= bh {
            return values[lo..hi].iter().copied().max().unwrap_or(0);
        }
        let head = values[lo..bl * BLOCK].iter().copied().max().unwrap_or(0);
        let mid = self.blocks[bl..bh].iter().copied().max().unwrap_or(0);
        let tail = values[bh * BLOCK..hi].iter().copied().max().unwrap_or(0);
        head.max(mid).max(tail)
    }
}
