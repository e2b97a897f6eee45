//! The geometry of the Active Memory Timeline (and of the segment timeline), as PyTorch's MemoryViz
//! lays it out: allocations are stacked in the order they were made; when one is freed, everything above
//! it slides down by its size; lifetimes that began before the trace sit at the bottom; allocations below
//! the detail cut are merged into one summarized band on top.
//!
//! x is the trace entry index. Each drawn band is a list of breakpoints `(x, offset)`: the band's bottom
//! is at `offset` bytes from x on. Offsets are `f32` (8 bytes a breakpoint): exact to a pixel at any scale
//! a screen can show. A real training trace has about 20 breakpoints per allocation.

use super::lifetimes::Lifetimes;

use crate::batch::{ranges_paused, Pause, BATCH};

mod drift_tree;
mod range_max;
mod select;
mod stacking;

pub use range_max::RangeMax;

use select::{offer_sizes, Largest};
use stacking::{Event, Stacking};

/// One breakpoint of a band: from entry `x` on, its bottom is at `offset` bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandPoint {
    pub x: u32,
    pub offset: f32,
}

/// One drawn allocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// Index into [`Lifetimes::allocations`].
    pub allocation: u32,
    /// First x of the band (0 for lifetimes that began before the trace).
    pub start: u32,
    /// x where it ends (the free's entry), or [`TimelineLayout::x_len`] while live at the end.
    pub end: u32,
    pub size: u64,
    pub first_point: u32,
    pub point_count: u32,
}

/// The summarized band (everything below the detail cut) from entry `x` on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SummaryPoint {
    pub x: u32,
    pub bottom: f32,
    pub height: f32,
}

/// Everything a renderer needs to draw a timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimelineLayout {
    pub bands: Vec<Band>,
    pub points: Vec<BandPoint>,
    pub summary: Vec<SummaryPoint>,
    /// Number of x positions: the trace length (at least 1).
    pub x_len: u32,
    /// How many allocations are drawn as their own band, and how many there are.
    pub drawn: usize,
    pub total: usize,
    /// Highest stack (drawn plus summarized) over the whole trace.
    pub max_bytes: u64,
    /// 0 when every band is where MemoryViz would draw it; otherwise each band's drawn bottom is at most
    /// this many bytes above its true one (see [`POINT_BUDGET`]).
    pub tolerance: u64,
    /// Band of each allocation (`u32::MAX`: not drawn as its own band).
    band_of: Vec<u32>,
    spans: SpanIndex,
}

/// The bands grouped by how many entries they last, in powers of two, each group in opening order (so by
/// start): a frame finds the bands wide enough to see in its view, and a pointer the band under it,
/// without a walk over millions of bands (a fully detailed 2 GB snapshot has 6 M).
#[derive(Debug, Clone, PartialEq)]
struct SpanIndex {
    /// Band indices, group after group.
    order: Vec<u32>,
    /// Where each group begins in `order`, and where the last ends. Group `k` holds the bands whose span
    /// (`end - start`) is in `[2^k - 1, 2^(k+1) - 1)`.
    groups: [u32; SPAN_GROUPS + 1],
}

const SPAN_GROUPS: usize = 33;

impl Default for SpanIndex {
    fn default() -> SpanIndex {
        SpanIndex {
            order: Vec::new(),
            groups: [0; SPAN_GROUPS + 1],
        }
    }
}

/// Group of a band's span (see [`SpanIndex`]).
fn span_group(b: &Band) -> usize {
    (u64::from(b.end.saturating_sub(b.start)) + 1).ilog2() as usize
}

/// The longest span group `k` holds.
fn group_max_span(k: usize) -> u64 {
    (1u64 << (k + 1)) - 2
}

impl TimelineLayout {
    pub fn band_points(&self, band: &Band) -> &[BandPoint] {
        let first = band.first_point as usize;
        self.points
            .get(first..first + band.point_count as usize)
            .unwrap_or(&[])
    }

    /// The band's bottom offset at `x`.
    pub fn offset_at(&self, band: &Band, x: u32) -> f32 {
        let pts = self.band_points(band);
        let k = pts.partition_point(|p| p.x <= x);
        pts.get(k.saturating_sub(1)).map_or(0.0, |p| p.offset)
    }

    /// The band under `(x, bytes)`, if any (ties: the topmost drawn).
    pub fn band_at(&self, x: u32, bytes: f64) -> Option<usize> {
        // The last such band, as MemoryViz (within a tolerance, bands may overlap).
        self.bands_in(x, x, 0)
            .filter(|&i| {
                let b = &self.bands[i];
                if x < b.start || x >= b.end.max(b.start.saturating_add(1)) {
                    return false;
                }
                let bottom = self.offset_at(b, x) as f64;
                bytes >= bottom && bytes < bottom + b.size as f64
            })
            .max()
    }

    /// Index of the band of allocation `allocation`, if drawn.
    pub fn band_of(&self, allocation: u32) -> Option<usize> {
        let band = *self.band_of.get(allocation as usize)?;
        (band != u32::MAX).then_some(band as usize)
    }

    /// The bands that may reach into entries `[x0, x1]` and last `min_span` entries or more: every band
    /// that does, and some that do not (the caller checks each): at most about twice as many as there
    /// are, plus those of the longest spans. In no set order.
    pub fn bands_in(&self, x0: u32, x1: u32, min_span: u32) -> impl Iterator<Item = usize> + '_ {
        self.span_groups()
            // A band drawn spans an entry at least (a free at its own alloc's entry included).
            .filter(move |&(longest, _)| longest.max(1) >= u64::from(min_span))
            .flat_map(move |(longest, group)| {
                let start = |&b: &u32| self.bands[b as usize].start;
                &group[reaching(group, start, longest, x0, x1)]
            })
            .map(|&b| b as usize)
    }

    /// The `n` largest bands seen in entries `[x0, x1]`, largest first (equal sizes: the earlier
    /// allocation first): what the keyboard steps through on a timeline. Holds `n` at a time, however
    /// many bands the view reaches.
    pub fn largest_in(&self, x0: u32, x1: u32, n: usize) -> Vec<usize> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // Ordered so that the heap's top is the band to drop first: the smallest, the latest.
        let key = |i: usize| {
            let b = &self.bands[i];
            (Reverse(b.size), b.allocation, i)
        };
        let mut kept = BinaryHeap::with_capacity(n.saturating_add(1).min(1 << 16));
        for i in self.bands_in(x0, x1, 0) {
            let b = &self.bands[i];
            if b.start > x1 || b.end.max(b.start.saturating_add(1)) <= x0 {
                continue;
            }
            let k = key(i);
            if kept.len() < n {
                kept.push(k);
            } else if kept.peek().is_some_and(|top| k < *top) {
                // Most bands of a wide view are smaller than all kept: one comparison each.
                kept.pop();
                kept.push(k);
            }
        }
        kept.into_sorted_vec().into_iter().map(|k| k.2).collect()
    }

    /// The bands grouped by how many entries they last, in powers of two, each group by start: the
    /// longest span a band of the group may have, and its bands.
    pub fn span_groups(&self) -> impl Iterator<Item = (u64, &[u32])> + '_ {
        let index = &self.spans;
        (0..SPAN_GROUPS).map(move |k| {
            let group = &index.order[index.groups[k] as usize..index.groups[k + 1] as usize];
            (group_max_span(k), group)
        })
    }
}

/// The part of `group` (by `start`, each lasting at most `longest` entries) that may reach into entries
/// `[x0, x1]`: those starting from `longest` before `x0` through `x1`.
pub fn reaching<T>(
    group: &[T],
    start: impl Fn(&T) -> u32,
    longest: u64,
    x0: u32,
    x1: u32,
) -> std::ops::Range<usize> {
    let from = u64::from(x0).saturating_sub(longest);
    let lo = group.partition_point(|b| u64::from(start(b)) < from);
    let hi = group.partition_point(|b| start(b) <= x1);
    lo..hi.max(lo)
}

/// How many allocations a detail level (0.0–1.0) draws as their own band: the largest first.
pub fn drawn_count(total: usize, detail: f64) -> usize {
    ((total as f64) * detail.clamp(0.0, 1.0)).ceil() as usize
}

/// Detail level a fresh view starts at: everything for small traces, the largest allocations for huge
/// ones (the slider still goes to 100 %).
pub fn default_detail(allocations: usize) -> f64 {
    if allocations <= 50_000 {
        1.0
    } else {
        (50_000.0 / allocations as f64).max(0.01)
    }
}

/// How many breakpoints beyond each band's first a layout may hold (8 bytes each: 32 MiB).
///
/// A free moves every band above it, so exact geometry costs (frees × bands above): quadratic, 450 M
/// breakpoints for 30 000 allocations freed oldest first. Real training traces need about 20 per
/// allocation and stay exact; past the budget each band moves only once its bottom has drifted by the
/// layout's [`TimelineLayout::tolerance`] bytes, which bounds the breakpoints by (total drift / tolerance).
pub const POINT_BUDGET: u64 = 1 << 22;

/// Lays out `lifetimes` with the largest `detail` fraction of allocations drawn individually, within
/// [`POINT_BUDGET`].
pub fn timeline_layout(lifetimes: &Lifetimes, detail: f64) -> TimelineLayout {
    timeline_layout_within(lifetimes, detail, POINT_BUDGET)
}

/// [`timeline_layout`] with at most `budget` breakpoints beyond each band's first. Exact when the exact
/// geometry fits; otherwise every band's drawn bottom is within [`TimelineLayout::tolerance`] bytes
/// (below) of its true one. Costs O((changes + breakpoints) · log bands), whatever the trace's shape.
pub fn timeline_layout_within(lifetimes: &Lifetimes, detail: f64, budget: u64) -> TimelineLayout {
    crate::batch::run_ready(layout_sliced(
        lifetimes,
        detail,
        budget,
        &mut crate::batch::NoPause,
    ))
}

/// [`timeline_layout`] awaiting `pause` every [`BATCH`] trace changes of each pass (the page lays a
/// million-allocation timeline out without holding its thread for seconds).
pub async fn timeline_layout_sliced<P: Pause>(
    lifetimes: &Lifetimes,
    detail: f64,
    pause: &mut P,
) -> TimelineLayout {
    layout_sliced(lifetimes, detail, POINT_BUDGET, pause).await
}

async fn layout_sliced<P: Pause>(
    lifetimes: &Lifetimes,
    detail: f64,
    budget: u64,
    pause: &mut P,
) -> TimelineLayout {
    let allocs = &lifetimes.allocations;
    let total = allocs.len();
    let keep = drawn_count(total, detail);
    // The `keep` largest (ties: the earliest) are drawn; which they are matters, not their order, so a
    // selection does (linear) what a sort would (n log n).
    let mut drawn = crate::batch::filled(keep == total, total, pause).await;
    if keep < total && keep > 0 {
        let mut largest = Largest::new(keep, keep.saturating_mul(2).max(1 << 20));
        let mut start = 0;
        while start < total {
            let end = start.saturating_add(BATCH).min(total);
            if offer_sizes(&mut largest, allocs, start..end) {
                largest.cut(pause).await;
            }
            start = end;
            pause.pause().await;
        }
        for (_, a) in largest.finish(pause).await {
            drawn[a as usize] = true;
        }
    }
    let x_len = u32::try_from(lifetimes.live_after.len())
        .unwrap_or(u32::MAX)
        .max(1);
    pause.pause().await;
    let stack = Stacking::new(lifetimes, &drawn, pause).await;
    let (exact_moves, drift) = stack.cost(pause).await;
    let tolerance = if exact_moves <= budget {
        0
    } else {
        // Each breakpoint past a band's first absorbs at least `tolerance` bytes of drift.
        drift.div_ceil(budget.max(1)).max(1)
    };

    // One replay (the costly part: a drift-tree walk per free) counts each band's breakpoints and keeps
    // them in replay order; then they are written contiguously per band, so no per-band vectors are
    // needed. Past the budget each move absorbs at least `tolerance` bytes of drift: at most `budget`.
    let mut layout = TimelineLayout {
        x_len,
        drawn: keep,
        total,
        tolerance,
        ..Default::default()
    };
    // Every table here holds a row per band: millions at full detail, written a slice at a time.
    let bands = &mut layout.bands;
    bands.reserve_exact(stack.order.len());
    let band = |&allocation: &u32| Band {
        allocation,
        start: 0,
        end: x_len,
        size: allocs[allocation as usize].size,
        first_point: 0,
        point_count: 0,
    };
    let order = &stack.order;
    ranges_paused(
        order.len(),
        |r| bands.extend(order[r].iter().map(band)),
        pause,
    )
    .await;
    let mut counts = crate::batch::filled(0u32, layout.bands.len(), pause).await;
    let moves = usize::try_from(exact_moves.min(budget)).unwrap_or(usize::MAX);
    let mut points: Vec<(u32, BandPoint)> = Vec::with_capacity(moves + stack.order.len());
    let mut count = |ev| match ev {
        Event::Open { band, x, offset } => {
            layout.bands[band as usize].start = x;
            counts[band as usize] = 1;
            points.push((band, point(x, offset)));
        }
        Event::Move { band, x, offset } => {
            counts[band as usize] += 1;
            points.push((band, point(x, offset)));
        }
        Event::Close { band, x } => layout.bands[band as usize].end = x,
        Event::Summary { x, bottom, height } => {
            layout.max_bytes = layout.max_bytes.max(bottom.saturating_add(height));
            // While the summarized band is empty its position does not matter: keep one point.
            let empty_before = layout.summary.last().is_some_and(|p| p.height == 0.0);
            if !(empty_before && height == 0) {
                layout.summary.push(SummaryPoint {
                    x,
                    bottom: bottom as f32,
                    height: height as f32,
                });
            }
        }
    };
    stack.replay(tolerance, &mut count, pause).await;
    // The budget bounds the sum: it fits u32 (and memory) with room to spare.
    let mut next = 0u32;
    let bands = &mut layout.bands;
    let n = bands.len();
    // `counts` becomes where each band's next point goes.
    let place = |r: std::ops::Range<usize>| {
        for (b, c) in bands[r.clone()].iter_mut().zip(&mut counts[r]) {
            b.first_point = next;
            b.point_count = *c;
            next = next.saturating_add(*c);
            *c = b.first_point;
        }
    };
    ranges_paused(n, place, pause).await;
    let origin = BandPoint { x: 0, offset: 0.0 };
    layout.points = crate::batch::filled(origin, next as usize, pause).await;
    let out = &mut layout.points;
    let write = |r: std::ops::Range<usize>| {
        for &(band, p) in &points[r] {
            let at = &mut counts[band as usize];
            out[*at as usize] = p;
            *at += 1;
        }
    };
    ranges_paused(points.len(), write, pause).await;
    drop(points);
    layout.spans = SpanIndex::new(&layout.bands, pause).await;
    layout.band_of = stack.band_of;
    layout
}

fn point(x: u32, offset: u64) -> BandPoint {
    BandPoint {
        x,
        offset: offset as f32,
    }
}

impl SpanIndex {
    /// Bands in opening order start in order: a stable counting sort by group keeps each group so.
    async fn new<P: Pause>(bands: &[Band], pause: &mut P) -> SpanIndex {
        let mut groups = [0u32; SPAN_GROUPS + 1];
        let count = |r: std::ops::Range<usize>| {
            for b in &bands[r] {
                groups[span_group(b) + 1] += 1;
            }
        };
        ranges_paused(bands.len(), count, pause).await;
        for k in 0..SPAN_GROUPS {
            groups[k + 1] += groups[k];
        }
        let mut order = crate::batch::filled(0u32, bands.len(), pause).await;
        let mut next = groups;
        let place = |r: std::ops::Range<usize>| {
            for (i, b) in bands[r.clone()].iter().enumerate() {
                let k = span_group(b);
                order[next[k] as usize] = (r.start + i) as u32;
                next[k] += 1;
            }
        };
        ranges_paused(bands.len(), place, pause).await;
        SpanIndex { order, groups }
    }
}

#[cfg(test)]
mod tests {
    use super::drift_tree::DriftTree;
    use super::select::select_first;
    use super::stacking::{Drifts, OpenBands};
    use super::*;
    use crate::analysis::lifetimes::{Allocation, Kind};
    use crate::batch::{run_ready, NoPause};
    use crate::testing::xorshift;

    /// Lifetimes from `(alloc entry or None for initial, free entry or None, size)`, trace of `len`.
    fn lifetimes(spans: &[(Option<u32>, Option<u32>, u64)], len: u32) -> Lifetimes {
        let allocations: Vec<Allocation> = spans
            .iter()
            .enumerate()
            .map(|(i, &(a, f, size))| Allocation::spanning(i as u64 * 4096, size, a, f))
            .collect();
        let mut changes: Vec<(u32, u32)> = Vec::new();
        for (i, a) in allocations.iter().enumerate() {
            changes.extend(a.alloc_event().map(|x| (x, i as u32)));
            changes.extend(a.free_event().map(|x| (x, i as u32)));
        }
        changes.sort();
        let initial_bytes = allocations
            .iter()
            .filter(|a| a.is_initial())
            .map(|a| a.size)
            .sum();
        let live_after = (0..len as i64)
            .map(|x| {
                allocations
                    .iter()
                    .filter(|a| a.is_live_at(x))
                    .map(|a| a.size)
                    .sum()
            })
            .collect();
        Lifetimes {
            device: 0,
            kind: Kind::Blocks,
            allocations,
            initial_bytes,
            live_after,
            changes,
            streams: vec![0],
        }
    }

    /// MemoryViz's stacking replayed the obvious way: each drawn allocation's bottom after each entry.
    fn naive_bottoms(l: &Lifetimes, drawn: &[bool]) -> Vec<Vec<(u32, u64)>> {
        let mut bottoms = vec![Vec::new(); l.allocations.len()];
        let mut stack: Vec<u32> = Vec::new();
        for (i, a) in l.allocations.iter().enumerate().rev() {
            if a.is_initial() && drawn[i] {
                stack.push(i as u32);
            }
        }
        let record = |stack: &[u32], x: u32, bottoms: &mut Vec<Vec<(u32, u64)>>| {
            let mut at = 0;
            for &id in stack {
                let b: &mut Vec<(u32, u64)> = &mut bottoms[id as usize];
                // Several changes at one entry: what is drawn there is the state after the last.
                if b.last().is_some_and(|p| p.0 == x) {
                    b.pop();
                }
                b.push((x, at));
                at += l.allocations[id as usize].size;
            }
        };
        record(&stack, 0, &mut bottoms);
        for &(x, id) in &l.changes {
            if !drawn[id as usize] {
                continue;
            }
            if l.allocations[id as usize].alloc_event() == Some(x) {
                stack.push(id);
            } else {
                stack.retain(|&s| s != id);
            }
            record(&stack, x, &mut bottoms);
        }
        bottoms
    }

    fn random_spans(seed: u64, n: u32) -> Vec<(Option<u32>, Option<u32>, u64)> {
        let mut next = xorshift(seed);
        // Entries 0..2n: each allocation opens at its own entry and frees at a later, unused one.
        let mut used = vec![false; 2 * n as usize + 1];
        (0..n)
            .map(|i| {
                let size = 1 + next() % 5000;
                if i % 7 == 0 && !used[(n + i) as usize] {
                    used[(n + i) as usize] = true;
                    return (None, Some(n + i), size);
                }
                used[i as usize] = true;
                let free = n + (next() % u64::from(n)) as u32;
                let f = (!used[free as usize] && !next().is_multiple_of(4)).then(|| {
                    used[free as usize] = true;
                    free
                });
                (Some(i), f.filter(|&f| f > i), size)
            })
            .collect()
    }

    #[test]
    fn the_largest_are_what_a_full_selection_picks_ties_to_the_earliest() {
        let mut next = xorshift(17);
        for (n, keep, cap, sizes) in [
            (1000, 10, 30, 50),
            (1000, 100, 150, 7),
            (5000, 1, 2, 3),
            (300, 299, 300, 2),
            (300, 0, 10, 5),
            (10, 20, 30, 4),
        ] {
            let items: Vec<(u64, u32)> = (0..n).map(|i| (next() % sizes, i)).collect();
            let mut largest = Largest::new(keep, cap);
            for &(s, i) in &items {
                if largest.offer(s, i) {
                    run_ready(largest.cut(&mut NoPause));
                }
            }
            let mut got = run_ready(largest.finish(&mut NoPause));
            got.sort_unstable();
            let mut want = items.clone();
            want.sort_by(Largest::first);
            want.truncate(keep);
            want.sort_unstable();
            assert_eq!(got, want, "n {n} keep {keep} cap {cap}");
        }
    }

    #[test]
    fn the_sliced_selection_picks_what_a_full_sort_puts_first() {
        let mut next = xorshift(29);
        for (n, k, sizes) in [
            (3 * BATCH + 17, 1, 1000),
            (3 * BATCH + 17, 2 * BATCH, 5),
            (5 * BATCH, 5 * BATCH, 1 << 40),
            (10 * BATCH + 3, 4 * BATCH + 1, 1 << 20),
            (10 * BATCH, 7 * BATCH, 1),
            (100, 37, 3),
        ] {
            let random: Vec<(u64, u32)> = (0..n).map(|i| (next() % sizes, i as u32)).collect();
            let mut want = random.clone();
            want.sort_by(Largest::first);
            // Random, in the order wanted, and the reverse (each a bad case for some pivot rule).
            let mut reversed = want.clone();
            reversed.reverse();
            for items in [random, want.clone(), reversed] {
                let mut got = items;
                run_ready(select_first(&mut got, k, Largest::first, &mut NoPause));
                assert_eq!(got[k - 1], want[k - 1], "n {n} k {k} sizes {sizes}");
                got.truncate(k);
                got.sort_by(Largest::first);
                assert_eq!(got, want[..k], "n {n} k {k} sizes {sizes}");
            }
        }
    }

    #[test]
    fn within_the_budget_every_band_is_exactly_where_memoryviz_stacks_it() {
        for seed in 1..20 {
            let spans = random_spans(seed * 7919, 300);
            let l = lifetimes(&spans, 601);
            for detail in [1.0, 0.5] {
                let layout = timeline_layout(&l, detail);
                assert_eq!(layout.tolerance, 0);
                let drawn: Vec<bool> = {
                    let mut d = vec![false; l.allocations.len()];
                    layout
                        .bands
                        .iter()
                        .for_each(|b| d[b.allocation as usize] = true);
                    d
                };
                let truth = naive_bottoms(&l, &drawn);
                for b in &layout.bands {
                    for &(x, bottom) in &truth[b.allocation as usize] {
                        if x >= b.start && x < b.end {
                            assert_eq!(layout.offset_at(b, x) as u64, bottom, "seed {seed}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_span_index_finds_every_band_a_view_or_a_point_reaches_and_the_largest_there() {
        for seed in 1..12 {
            let spans = random_spans(seed * 6151, 300);
            let l = lifetimes(&spans, 601);
            for detail in [1.0, 0.3] {
                let layout = timeline_layout(&l, detail);
                for (i, b) in layout.bands.iter().enumerate() {
                    assert_eq!(layout.band_of(b.allocation), Some(i));
                }
                let drawn = layout.bands.len();
                // The groups hold every band once, each group by start, no band longer than its
                // group says.
                let mut seen = vec![0; drawn];
                for (longest, group) in layout.span_groups() {
                    let starts: Vec<u32> = group
                        .iter()
                        .map(|&b| layout.bands[b as usize].start)
                        .collect();
                    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "seed {seed}");
                    for &b in group {
                        let b = &layout.bands[b as usize];
                        assert!(u64::from(b.end - b.start) <= longest);
                        seen[layout.band_of(b.allocation).unwrap()] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "seed {seed}");
                assert_eq!(
                    (0..l.allocations.len() as u32)
                        .filter(|&a| layout.band_of(a).is_some())
                        .count(),
                    drawn
                );
                for (x0, x1, min_span) in [(0, 600, 0), (100, 140, 0), (250, 250, 3), (0, 40, 90)] {
                    let mut found: Vec<usize> = layout.bands_in(x0, x1, min_span).collect();
                    found.sort_unstable();
                    assert!(found.windows(2).all(|w| w[0] < w[1]), "each band once");
                    let wanted = layout.bands.iter().enumerate().filter(|(_, b)| {
                        b.start <= x1 && b.end >= x0 && b.end - b.start >= min_span
                    });
                    for (i, _) in wanted {
                        assert!(found.binary_search(&i).is_ok(), "seed {seed}: band {i}");
                    }
                }
                // What the keyboard steps through: the largest bands a view reaches, as a full sort.
                for (x0, x1, n) in [
                    (0, 600, 10),
                    (100, 140, 5),
                    (250, 250, 3),
                    (0, 40, 1000),
                    (7, 9, 0),
                ] {
                    let mut seen: Vec<usize> = (0..layout.bands.len())
                        .filter(|&i| {
                            let b = &layout.bands[i];
                            b.start <= x1 && b.end.max(b.start + 1) > x0
                        })
                        .collect();
                    seen.sort_by_key(|&i| {
                        let b = &layout.bands[i];
                        (std::cmp::Reverse(b.size), b.allocation)
                    });
                    seen.truncate(n);
                    assert_eq!(layout.largest_in(x0, x1, n), seen, "seed {seed} {x0}..{x1}");
                }
                for x in (0..601).step_by(7) {
                    for bytes in [0.0, 3000.0, 40_000.0, 200_000.0] {
                        let naive = layout.bands.iter().enumerate().rev().find_map(|(i, b)| {
                            let inside = x >= b.start && x < b.end.max(b.start + 1);
                            let bottom = layout.offset_at(b, x) as f64;
                            (inside && bytes >= bottom && bytes < bottom + b.size as f64)
                                .then_some(i)
                        });
                        assert_eq!(layout.band_at(x, bytes), naive, "seed {seed} at {x}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_list_of_open_bands_replays_as_the_drift_tree_does_at_tolerance_zero() {
        use crate::batch::{run_ready, NoPause};
        let replayed = |stack: &Stacking, exact: bool| {
            let mut events = Vec::new();
            let emit = |e: Event| events.push(e);
            let n = stack.order.len();
            run_ready(async {
                if exact {
                    let open = OpenBands::new(n, &mut NoPause).await;
                    stack.replay_with(open, emit, &mut NoPause).await
                } else {
                    let tree = DriftTree::new(n, &mut NoPause).await;
                    let drifts = Drifts { tree, threshold: 1 };
                    stack.replay_with(drifts, emit, &mut NoPause).await
                }
            });
            events
        };
        let mut next = xorshift(99);
        for seed in 1..15 {
            let mut spans = random_spans(seed * 6_151, 300);
            // Empty allocations move nothing.
            spans.iter_mut().step_by(11).for_each(|s| s.2 = 0);
            let l = lifetimes(&spans, 601);
            for every in [1, 2, 5] {
                let drawn: Vec<bool> = (0..l.allocations.len())
                    .map(|_| next().is_multiple_of(every))
                    .collect();
                let stack = run_ready(Stacking::new(&l, &drawn, &mut NoPause));
                let exact = replayed(&stack, true);
                assert!(exact.iter().any(|e| matches!(e, Event::Move { .. })));
                assert_eq!(
                    exact,
                    replayed(&stack, false),
                    "seed {seed}, 1 in {every} drawn"
                );
            }
        }
    }

    #[test]
    fn past_the_budget_bands_stay_within_the_tolerance_and_the_budget() {
        for seed in 1..10 {
            let spans = random_spans(seed * 104_729, 400);
            let l = lifetimes(&spans, 801);
            let exact = timeline_layout(&l, 1.0);
            let budget = 200;
            let layout = timeline_layout_within(&l, 1.0, budget);
            assert!(layout.tolerance > 0);
            assert!(layout.points.len() as u64 <= layout.bands.len() as u64 + budget);
            assert_eq!(layout.max_bytes, exact.max_bytes);
            let drawn = vec![true; l.allocations.len()];
            let truth = naive_bottoms(&l, &drawn);
            for b in &layout.bands {
                for &(x, bottom) in &truth[b.allocation as usize] {
                    if x >= b.start && x < b.end {
                        let at = layout.offset_at(b, x) as u64;
                        assert!(
                            at >= bottom && at - bottom < layout.tolerance,
                            "seed {seed}: drawn {at}, true {bottom}, tolerance {}",
                            layout.tolerance
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn freeing_oldest_first_costs_what_is_drawn_not_frees_times_bands() {
        // 30 000 allocations of 512 B freed oldest first: 450 M breakpoints exactly.
        let n = 30_000u32;
        let spans: Vec<_> = (0..n).map(|i| (Some(i), Some(n + i), 512)).collect();
        let l = Lifetimes {
            live_after: (0..2 * n)
                .map(|x| u64::from(if x < n { x + 1 } else { 2 * n - 1 - x }) * 512)
                .collect(),
            ..lifetimes(&[], 0)
        };
        let l = Lifetimes {
            allocations: lifetimes(&spans, 0).allocations,
            changes: (0..n)
                .map(|i| (i, i))
                .chain((0..n).map(|i| (n + i, i)))
                .collect(),
            ..l
        };
        let layout = timeline_layout(&l, 1.0);
        assert_eq!(layout.bands.len(), n as usize);
        assert!(layout.points.len() as u64 <= u64::from(n) + POINT_BUDGET);
        assert_eq!(layout.max_bytes, u64::from(n) * 512);
        assert!(layout.tolerance > 0 && layout.tolerance < layout.max_bytes / 100);
        // The last band (lowest) reaches the floor once every band below it is freed.
        let top = &layout.bands[n as usize - 1];
        assert!(layout.offset_at(top, 2 * n - 2) as u64 <= layout.tolerance);
        assert_eq!(layout.offset_at(top, n - 1) as u64, u64::from(n - 1) * 512);
    }
}
