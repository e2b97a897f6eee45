//! Which allocations a layout draws: the largest, ties to the earliest, picked in one pass over a
//! stream with a bounded set of candidates, cut in slices.

use std::ops::Range;

use crate::analysis::lifetimes::Allocation;
use crate::batch::{Pause, BATCH};

/// The `keep` largest of a stream of (size, index) offered in index order, ties to the earliest: what a
/// selection over all would pick, with about `cap` candidates held. Once `cap` collect, a cut keeps the
/// `keep` first and only larger ones enter after (a later one of equal size loses its tie). A cut is a
/// selection over the candidates, sliced ([`select_first`]): at a detail of half a 2 GB file's
/// allocations the candidates are millions.
pub(super) struct Largest {
    pub(super) keep: usize,
    pub(super) cap: usize,
    pub(super) floor: Option<u64>,
    pub(super) items: Vec<(u64, u32)>,
}

impl Largest {
    pub(super) fn new(keep: usize, cap: usize) -> Largest {
        Largest {
            keep,
            cap: cap.max(keep + 1),
            floor: None,
            items: Vec::new(),
        }
    }

    pub(super) fn first(x: &(u64, u32), y: &(u64, u32)) -> std::cmp::Ordering {
        y.0.cmp(&x.0).then(x.1.cmp(&y.1))
    }

    /// Offers the next; whether `cap` candidates have collected (a cut is due: until it is made, they
    /// grow past `cap`).
    pub(super) fn offer(&mut self, size: u64, index: u32) -> bool {
        if self.keep == 0 || self.floor.is_some_and(|f| size <= f) {
            return false;
        }
        if self.items.capacity() == 0 {
            // Room for the batch that fills it, too: a cut is made between batches.
            self.items.reserve_exact(self.cap.saturating_add(BATCH));
        }
        self.items.push((size, index));
        self.items.len() >= self.cap
    }

    /// Keeps the `keep` first candidates; only larger ones are offered a place after.
    pub(super) async fn cut<P: Pause>(&mut self, pause: &mut P) {
        if self.items.len() > self.keep {
            select_first(&mut self.items, self.keep, Largest::first, pause).await;
            self.items.truncate(self.keep);
            self.floor = Some(self.items[self.keep - 1].0);
        }
    }

    /// The `keep` largest (or all offered, if fewer), in no order.
    pub(super) async fn finish<P: Pause>(mut self, pause: &mut P) -> Vec<(u64, u32)> {
        if self.keep == 0 {
            return Vec::new();
        }
        self.cut(pause).await;
        self.items
    }
}

/// Offers `allocations[range]` to `largest`; whether a cut is due. A call per batch (see `batch`).
#[inline(never)]
pub(super) fn offer_sizes(
    largest: &mut Largest,
    allocations: &[Allocation],
    range: Range<usize>,
) -> bool {
    let mut due = false;
    for (i, a) in range.clone().zip(&allocations[range]) {
        due |= largest.offer(a.size, i as u32);
    }
    due
}

/// Rearranges `v` so that its `k` first in the order `first` (a total order) come first, the `k`-th at
/// `k - 1`, as `select_nth_unstable_by(k - 1, first)` does; a quickselect whose partitions run a batch
/// at a time, awaiting `pause` between batches (one selection over millions, in one go, held a page's
/// thread for tens of milliseconds).
pub(super) async fn select_first<T: Copy, P: Pause>(
    v: &mut [T],
    k: usize,
    first: impl Fn(&T, &T) -> std::cmp::Ordering,
    pause: &mut P,
) {
    use std::cmp::Ordering::{Equal, Greater, Less};
    if k == 0 || k > v.len() {
        return;
    }
    // Invariant: v[..lo] come before all of v[lo..hi], and v[hi..] after; lo < k <= hi.
    let (mut lo, mut hi) = (0, v.len());
    // After a run of bad pivots (past 64 rounds), the library's selection finishes the range.
    let mut rounds = 0;
    while hi - lo > BATCH && rounds < 64 {
        rounds += 1;
        // The median of three as the pivot, moved to the range's end.
        let (a, b, c) = (lo, lo + (hi - lo) / 2, hi - 1);
        let ab = first(&v[a], &v[b]) == Less;
        let bc = first(&v[b], &v[c]) == Less;
        let ac = first(&v[a], &v[c]) == Less;
        let median = if ab == bc {
            b
        } else if ab == ac {
            c
        } else {
            a
        };
        v.swap(median, hi - 1);
        let pivot = v[hi - 1];
        let mut store = lo;
        let mut at = lo;
        while at < hi - 1 {
            let end = at.saturating_add(BATCH).min(hi - 1);
            for j in at..end {
                if first(&v[j], &pivot) == Less {
                    v.swap(store, j);
                    store += 1;
                }
            }
            at = end;
            pause.pause().await;
        }
        v.swap(store, hi - 1);
        // v[lo..store] come before the pivot, now at `store`, and v[store + 1..hi] after it.
        match (store + 1).cmp(&k) {
            Equal => return,
            Greater => hi = store,
            Less => lo = store + 1,
        }
    }
    v[lo..hi].select_nth_unstable_by(k - 1 - lo, first);
}
