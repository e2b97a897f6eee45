//! MemoryViz's stacking replayed: the drawn bands in opening order and each trace change as a band
//! that opens or closes, what the exact geometry would cost, and the bands that move, found by a list
//! of open bands (exact) or by the drift tree (within a tolerance).

use std::ops::Range;

use super::drift_tree::{DriftTree, Fenwick};
use crate::analysis::lifetimes::Lifetimes;
use crate::batch::{ranges_paused, Pause};

/// What a replay of the stacking reports. `band` is the band's place in opening order, which is its
/// index in [`TimelineLayout::bands`](super::TimelineLayout::bands).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Event {
    Open { band: u32, x: u32, offset: u64 },
    Move { band: u32, x: u32, offset: u64 },
    Close { band: u32, x: u32 },
    Summary { x: u32, bottom: u64, height: u64 },
}

/// MemoryViz's stacking of one timeline: the drawn allocations in the order they open (lifetimes that
/// began before the trace first, last element lowest, as MemoryViz), and each trace change as the band
/// that opens or closes.
pub(super) struct Stacking<'a> {
    pub(super) lifetimes: &'a Lifetimes,
    pub(super) drawn: &'a [bool],
    /// Allocation of each band, in opening order.
    pub(super) order: Vec<u32>,
    /// Bands `0..initial` are the lifetimes that began before the trace: they open at 0, bottom first.
    pub(super) initial: usize,
    /// Band of each allocation (`u32::MAX`: not drawn).
    pub(super) band_of: Vec<u32>,
}

impl<'a> Stacking<'a> {
    pub(super) async fn new<P: Pause>(
        lifetimes: &'a Lifetimes,
        drawn: &'a [bool],
        pause: &mut P,
    ) -> Stacking<'a> {
        let allocs = &lifetimes.allocations;
        // Every walk over all allocations here pauses as it goes: a 2 GB snapshot has 6 M of them
        // (each unsliced walk or table was tens of ms of one task).
        let mut band_of = crate::batch::filled(u32::MAX, allocs.len(), pause).await;
        let mut order = Vec::new();
        let mut open = |id: usize, order: &mut Vec<u32>| {
            if drawn[id] && band_of[id] == u32::MAX {
                band_of[id] = order.len() as u32;
                order.push(id as u32);
            }
        };
        // Each walk is a batch per call (see `crate::batch`), last allocation first here.
        let last = allocs.len().saturating_sub(1);
        let initial = |r: Range<usize>| {
            for i in r.map(|k| last - k) {
                if allocs[i].is_initial() {
                    open(i, &mut order);
                }
            }
        };
        ranges_paused(allocs.len(), initial, pause).await;
        let initial = order.len();
        let changes = &lifetimes.changes;
        let opened = |r: Range<usize>| {
            for &(x, id) in &changes[r] {
                if allocs[id as usize].alloc_event() == Some(x) {
                    open(id as usize, &mut order);
                }
            }
        };
        ranges_paused(changes.len(), opened, pause).await;
        Stacking {
            lifetimes,
            drawn,
            order,
            initial,
            band_of,
        }
    }

    /// The exact geometry's breakpoints beyond each band's first (one per band above a free), and the
    /// total drift (bytes freed below a band, summed over the bands above each free): O(changes · log).
    pub(super) async fn cost<P: Pause>(&self, pause: &mut P) -> (u64, u64) {
        let allocs = &self.lifetimes.allocations;
        let n = self.order.len();
        let mut live = Fenwick {
            tree: crate::batch::filled(0, n + 1, pause).await,
        };
        let mut live_count = 0u64;
        let (mut moves, mut drift) = (0u64, 0u64);
        let initial = |r: Range<usize>| {
            for band in r {
                live.add(band, 1);
                live_count += 1;
            }
        };
        ranges_paused(self.initial, initial, pause).await;
        let changes = &self.lifetimes.changes;
        let change = |r: Range<usize>| {
            for &(x, id) in &changes[r] {
                let band = self.band_of[id as usize];
                if band == u32::MAX {
                    continue;
                }
                let a = &allocs[id as usize];
                let band = band as usize;
                if a.alloc_event() == Some(x) {
                    live.add(band, 1);
                    live_count += 1;
                } else if live.point(band) == 1 {
                    live.add(band, -1);
                    live_count -= 1;
                    let above = live_count - live.prefix(band + 1);
                    moves = moves.saturating_add(above);
                    drift = drift.saturating_add(above.saturating_mul(a.size));
                }
            }
        };
        ranges_paused(changes.len(), change, pause).await;
        (moves, drift)
    }

    /// Replays the stacking. A band below a free moves by the freed size; a band reports a move once its
    /// true bottom is `tolerance` bytes or more below where it last reported (any change when 0).
    pub(super) async fn replay<P: Pause>(
        &self,
        tolerance: u64,
        emit: impl FnMut(Event),
        pause: &mut P,
    ) {
        let n = self.order.len();
        if tolerance == 0 {
            // Every band above a free moves: walking the open bands costs what is emitted.
            let open = OpenBands::new(n, pause).await;
            self.replay_with(open, emit, pause).await
        } else {
            let threshold = tolerance.clamp(1, i64::MAX as u64) as i64;
            let drifts = Drifts {
                tree: DriftTree::new(n, pause).await,
                threshold,
            };
            self.replay_with(drifts, emit, pause).await
        }
    }

    pub(super) async fn replay_with<M: Movers, P: Pause>(
        &self,
        mut movers: M,
        mut emit: impl FnMut(Event),
        pause: &mut P,
    ) {
        let allocs = &self.lifetimes.allocations;
        let n = self.order.len();
        // Where each band last reported its bottom.
        let mut reported = crate::batch::filled(0u64, n, pause).await;
        let mut drawn_bytes = 0u64;
        let mut summarized = 0u64;
        // Each walk is a batch per call (see `crate::batch`).
        let order = &self.order;
        let initial = |r: Range<usize>| {
            for band in r {
                let a = &allocs[order[band] as usize];
                emit(Event::Open {
                    band: band as u32,
                    x: 0,
                    offset: drawn_bytes,
                });
                movers.open(band);
                reported[band] = drawn_bytes;
                drawn_bytes = drawn_bytes.saturating_add(a.size);
            }
        };
        ranges_paused(self.initial, initial, pause).await;
        let drawn = self.drawn;
        let summarized_initial = |r: Range<usize>| {
            for (a, &drawn) in allocs[r.clone()].iter().zip(&drawn[r]) {
                if a.is_initial() && !drawn {
                    summarized = summarized.saturating_add(a.size);
                }
            }
        };
        ranges_paused(allocs.len(), summarized_initial, pause).await;
        emit(Event::Summary {
            x: 0,
            bottom: drawn_bytes,
            height: summarized,
        });
        let changes = &self.lifetimes.changes;
        let change = |r: Range<usize>| {
            for &(x, id) in &changes[r] {
                let a = &allocs[id as usize];
                let opening = a.alloc_event() == Some(x);
                let band = self.band_of[id as usize];
                if band == u32::MAX {
                    summarized = match opening {
                        true => summarized.saturating_add(a.size),
                        false => summarized.saturating_sub(a.size),
                    };
                } else if opening {
                    let b = band as usize;
                    emit(Event::Open {
                        band,
                        x,
                        offset: drawn_bytes,
                    });
                    movers.open(b);
                    reported[b] = drawn_bytes;
                    drawn_bytes = drawn_bytes.saturating_add(a.size);
                } else if movers.close(band as usize) {
                    emit(Event::Close { band, x });
                    let size = a.size.min(i64::MAX as u64) as i64;
                    movers.freed(band as usize, size, &mut |above, fell| {
                        reported[above] = reported[above].saturating_sub(fell);
                        emit(Event::Move {
                            band: above as u32,
                            x,
                            offset: reported[above],
                        });
                    });
                    drawn_bytes = drawn_bytes.saturating_sub(a.size);
                }
                emit(Event::Summary {
                    x,
                    bottom: drawn_bytes,
                    height: summarized,
                });
            }
        };
        ranges_paused(changes.len(), change, pause).await;
    }
}

/// Which bands a free moves, for [`Stacking::replay_with`]: bands open in band order (each opens above
/// every band open before it, as the stacking numbers them so).
pub(super) trait Movers {
    fn open(&mut self, band: usize);
    /// Closes `band`; false when it was not open (nothing to draw).
    fn close(&mut self, band: usize) -> bool;
    /// `band` has just closed, freeing `size` bytes: calls `f(above, fell)` for each band above it that
    /// reports a move, in band order, with the bytes it fell since it last reported.
    fn freed(&mut self, band: usize, size: i64, f: &mut impl FnMut(usize, u64));
}

/// The exact stacking: every open band above a free reports its move. The open bands as a list in band
/// order (opening appends: see [`Movers`]), so a free walks exactly the bands it moves.
pub(super) struct OpenBands {
    /// The next open band above each open band (`NO_BAND`: none); a closed band keeps the one it had,
    /// where the walk of its free starts.
    pub(super) next: Vec<u32>,
    /// The open band below each open band (`NO_BAND`: none), or `UNOPENED` / `CLOSED`.
    pub(super) prev: Vec<u32>,
    /// The highest open band (`NO_BAND`: none).
    pub(super) last: u32,
}

const NO_BAND: u32 = u32::MAX;

const UNOPENED: u32 = u32::MAX - 1;

const CLOSED: u32 = u32::MAX - 2;

impl OpenBands {
    /// Written a slice at a time, awaiting `pause` between (millions of bands at full detail).
    pub(super) async fn new<P: Pause>(n: usize, pause: &mut P) -> OpenBands {
        OpenBands {
            next: crate::batch::filled(NO_BAND, n, pause).await,
            prev: crate::batch::filled(UNOPENED, n, pause).await,
            last: NO_BAND,
        }
    }
}

impl Movers for OpenBands {
    fn open(&mut self, band: usize) {
        debug_assert!(self.last == NO_BAND || (self.last as usize) < band);
        self.prev[band] = self.last;
        self.next[band] = NO_BAND;
        if self.last != NO_BAND {
            self.next[self.last as usize] = band as u32;
        }
        self.last = band as u32;
    }

    fn close(&mut self, band: usize) -> bool {
        if self
            .prev
            .get(band)
            .is_none_or(|&p| p == UNOPENED || p == CLOSED)
        {
            return false;
        }
        let (p, n) = (self.prev[band], self.next[band]);
        if p != NO_BAND {
            self.next[p as usize] = n;
        }
        if n != NO_BAND {
            self.prev[n as usize] = p;
        } else {
            self.last = p;
        }
        self.prev[band] = CLOSED;
        true
    }

    fn freed(&mut self, band: usize, size: i64, f: &mut impl FnMut(usize, u64)) {
        if size <= 0 {
            return;
        }
        let mut above = self.next[band];
        while above != NO_BAND {
            f(above as usize, size as u64);
            above = self.next[above as usize];
        }
    }
}

/// The stacking within a tolerance: a band reports once its drift reaches `threshold` bytes.
pub(super) struct Drifts {
    pub(super) tree: DriftTree,
    pub(super) threshold: i64,
}

impl Movers for Drifts {
    fn open(&mut self, band: usize) {
        self.tree.activate(band);
    }

    fn close(&mut self, band: usize) -> bool {
        let open = self.tree.is_active(band);
        if open {
            self.tree.deactivate(band);
        }
        open
    }

    fn freed(&mut self, band: usize, size: i64, f: &mut impl FnMut(usize, u64)) {
        self.tree.add_from(band + 1, size);
        self.tree.take_at_least(band + 1, self.threshold, f);
    }
}
