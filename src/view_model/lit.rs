//! A highlight's bands as frames mark them: read from the layout once per highlight and layout, and,
//! for a big highlight, also rasterised once in data space, so that a frame over the whole trace costs
//! its pixels, not its bands (a search on a 2 GB snapshot picks two million allocations; marking each
//! took a frame 135 ms).

use memograph_snapshot::analysis::timeline::{reaching, TimelineLayout};
use memograph_snapshot::batch::{filled, ranges_paused, run_ready, NoPause, Pause};

/// A highlighted band as a frame needs it to mark it when it is too thin or narrow to fill: its
/// extent, read from the layout once (a million of them, scattered over tables of millions, cost a
/// frame 80 ms to look up each time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LitBand {
    pub band: u32,
    pub start: u32,
    pub end: u32,
    pub size: f32,
    /// Its bottom, for a band that never moves; NaN for one that does (drawn from the layout).
    pub offset: f32,
}

impl LitBand {
    /// Band `i` of `layout`.
    pub fn of(layout: &TimelineLayout, i: usize) -> LitBand {
        let b = &layout.bands[i];
        let offset = match layout.band_points(b) {
            [p] if p.x <= b.start => p.offset,
            _ => f32::NAN,
        };
        LitBand {
            band: i as u32,
            start: b.start,
            end: b.end,
            size: b.size as f32,
            offset,
        }
    }

    /// The entry after its last: a band that ends where it starts spans one entry as drawn.
    pub fn last(&self) -> f64 {
        f64::from(self.end).max(f64::from(self.start) + 1.0)
    }
}

/// The highlighted allocations' bands (in the highlight's order, or for a big highlight by span), and
/// for a big highlight its raster.
#[derive(Debug, Default, PartialEq)]
pub struct LitBands {
    /// The highlighted allocations, a bit each (a search can pick millions: a binary search per band
    /// of a fully detailed timeline took longer than the rest of the frame).
    lit: Vec<u64>,
    pub bands: Vec<LitBand>,
    /// A big highlight's bands are in the layout's span order: grouped by how many entries they last,
    /// by start within a group (see `TimelineLayout::span_groups`). Per group: the longest span a
    /// band of it may have, and where it ends in `bands`. Empty: in the highlight's order.
    groups: Vec<(u64, u32)>,
    /// The bands that are slivers in every view a level of the raster can draw, marked in it (see
    /// [`LitRaster`]).
    pub raster: Option<LitRaster>,
}

/// Highlights of fewer bands are not rasterised: marking each costs a frame less than a raster.
pub const RASTER_MIN: usize = 1 << 16;

impl LitBands {
    /// Which allocations are highlighted, and no bands: what a frame needs while a highlight's bands are
    /// read in the background.
    pub fn allocations(highlighted: &[u32]) -> LitBands {
        run_ready(LitBands::allocations_sliced(highlighted, &mut NoPause))
    }

    /// [`Self::allocations`], awaiting `pause` between batches (a search of a 2 GB snapshot can pick
    /// all of its six million allocations: read in one go, they made a task of 60-95 ms).
    async fn allocations_sliced<P: Pause>(highlighted: &[u32], pause: &mut P) -> LitBands {
        let mut most = None;
        let find_most = |range: std::ops::Range<usize>| {
            most = most.max(highlighted[range].iter().max().copied());
        };
        ranges_paused(highlighted.len(), find_most, pause).await;
        let words = most.map_or(0, |a| a as usize / 64 + 1);
        let mut lit = filled(0u64, words, pause).await;
        let set = |range: std::ops::Range<usize>| {
            for &a in &highlighted[range] {
                lit[a as usize / 64] |= 1 << (a % 64);
            }
        };
        ranges_paused(highlighted.len(), set, pause).await;
        LitBands {
            lit,
            ..LitBands::default()
        }
    }

    /// Whether allocation `a` is highlighted.
    pub fn is_lit(&self, a: u32) -> bool {
        self.lit
            .get(a as usize / 64)
            .is_some_and(|w| w >> (a % 64) & 1 == 1)
    }

    /// The highlighted bands that may reach into entries `[x0, x1]` (the caller checks each): of a
    /// big highlight, those of each span group that start late enough and early enough, found by
    /// bisection (a zoomed view of a 2 GB snapshot reaches thousands of the two million a search
    /// found; walked, they were 10-60 ms of a frame); else all.
    pub fn reaching(&self, x0: u32, x1: u32) -> impl Iterator<Item = &LitBand> + '_ {
        let all = self.groups.is_empty().then_some(&self.bands[..]);
        let mut begin = 0;
        let groups = self.groups.iter().map(move |&(longest, end)| {
            let group = &self.bands[begin as usize..end as usize];
            begin = end;
            &group[reaching(group, |l| l.start, longest, x0, x1)]
        });
        all.into_iter().chain(groups).flatten()
    }

    pub fn of(layout: &TimelineLayout, highlighted: &[u32]) -> LitBands {
        run_ready(LitBands::of_sliced(layout, highlighted, &mut NoPause))
    }

    /// [`Self::of`], awaiting `pause` between batches.
    pub async fn of_sliced<P: Pause>(
        layout: &TimelineLayout,
        highlighted: &[u32],
        pause: &mut P,
    ) -> LitBands {
        LitBands::read_sliced(layout, highlighted, RASTER_MIN, pause).await
    }

    /// [`Self::of`], rasterised from `raster_min` bands on.
    #[cfg(test)]
    pub fn of_rasterised_from(
        layout: &TimelineLayout,
        highlighted: &[u32],
        raster_min: usize,
    ) -> LitBands {
        run_ready(LitBands::read_sliced(
            layout,
            highlighted,
            raster_min,
            &mut NoPause,
        ))
    }

    /// [`Self::of_sliced`], rasterised from `raster_min` bands on.
    async fn read_sliced<P: Pause>(
        layout: &TimelineLayout,
        highlighted: &[u32],
        raster_min: usize,
        pause: &mut P,
    ) -> LitBands {
        let mut lit = LitBands::allocations_sliced(highlighted, pause).await;
        // Room for every band it can have (a band per allocation, at most the layout's), taken up
        // front: grown as it fills, a table of six million bands was copied whole in one batch (a
        // task of 231 ms, most of it writing fresh memory).
        let mut bands = Vec::new();
        let _ = bands.try_reserve_exact(highlighted.len().min(layout.bands.len()));
        if highlighted.len() >= raster_min {
            // By span group: the layout's groups walked in a row, the highlighted bands kept.
            for (longest, group) in layout.span_groups() {
                let mut read = |range: std::ops::Range<usize>| {
                    let lit = &lit;
                    bands.extend(
                        group[range]
                            .iter()
                            .map(|&b| b as usize)
                            .filter(|&b| lit.is_lit(layout.bands[b].allocation))
                            .map(|b| LitBand::of(layout, b)),
                    )
                };
                ranges_paused(group.len(), &mut read, pause).await;
                let end = u32::try_from(bands.len()).unwrap_or(u32::MAX);
                lit.groups.push((longest, end));
            }
        } else {
            let mut read = |range: std::ops::Range<usize>| {
                bands.extend(
                    highlighted[range]
                        .iter()
                        .filter_map(|&a| Some(LitBand::of(layout, layout.band_of(a)?))),
                )
            };
            ranges_paused(highlighted.len(), &mut read, pause).await;
        }
        // A band per allocation is the most: at less than full detail many have none (shrunk in place).
        bands.shrink_to_fit();
        lit.bands = bands;
        if lit.bands.len() >= raster_min {
            let mut raster = LitRaster::new(layout.x_len, layout.max_bytes);
            // Each band's finest level (0: none), to order them by.
            let mut finest = Vec::with_capacity(lit.bands.len());
            let bands = &lit.bands;
            let mut mark = |range: std::ops::Range<usize>| {
                for l in &bands[range] {
                    let level = raster.finest(l);
                    if let Some(level) = level {
                        raster.mark(layout, l, level);
                    }
                    finest.push(level.map_or(0, |k| k as u8 + 1));
                }
            };
            ranges_paused(bands.len(), &mut mark, pause).await;
            raster.fill_coarser(pause).await;
            // Ordered by finest level with a counting sort (a few levels, millions of bands): those of
            // key `k` start after all of smaller keys (`starts[k]`), and level `l` does not hold keys
            // `0..=l`, the first `starts[l + 1]`.
            // Each pass a batch at a time: a highlight of six million bands made them a task of 58 ms.
            let mut starts = vec![0usize; raster.levels.len() + 2];
            let count = |range: std::ops::Range<usize>| {
                for &k in &finest[range] {
                    starts[usize::from(k) + 1] += 1;
                }
            };
            ranges_paused(finest.len(), count, pause).await;
            for k in 1..starts.len() {
                starts[k] += starts[k - 1];
            }
            raster.unheld = starts[1..=raster.levels.len()].to_vec();
            let mut order = filled(0u32, finest.len(), pause).await;
            let place = |range: std::ops::Range<usize>| {
                for (band, &k) in range.clone().zip(&finest[range]) {
                    let at = &mut starts[usize::from(k)];
                    order[*at] = band as u32;
                    *at += 1;
                }
            };
            ranges_paused(finest.len(), place, pause).await;
            raster.order = order;
            lit.raster = Some(raster);
        }
        lit
    }
}

/// Rows (spans of bytes) of a [`LitRaster`], and the columns (spans of entries) of its coarsest and
/// finest levels.
const RASTER_ROWS: usize = 2048;
const COARSEST_COLS: usize = 256;
const FINEST_COLS: usize = 8192;

/// The cells of grids over the whole timeline (entries × bytes) that a highlight's slivers touch, at
/// several widths of cell (levels: 256 to 8192 columns, 4 MB in all). A view whose pixels are each at
/// least a cell wide and a cell tall at some level marks, per pixel, whether any cell under it is set
/// at the coarsest such level: the pixels a sliver touches, widened by less than a pixel, for the cost
/// of the view's pixels. A level holds the bands that are slivers in every such view (the renderer's
/// own tests for a sliver, at a pixel a cell): under half a cell wide, or under a quarter of a cell
/// tall. The others are marked one by one ([`Self::unheld`]); a coarser level holds more.
#[derive(Debug, Default, PartialEq)]
pub struct LitRaster {
    /// Coarsest first.
    levels: Vec<Level>,
    rows: usize,
    row_bytes: f64,
    /// Indices into [`LitBands::bands`]: those no level holds, then those held by coarser levels
    /// only, then finer (a band held at a level is held at every coarser one).
    order: Vec<u32>,
    /// Per level, how many of `order` it does not hold (they come first).
    unheld: Vec<usize>,
}

/// One level of a [`LitRaster`]: its cells as bits, a row (of columns) after another.
#[derive(Debug, Default, PartialEq)]
pub struct Level {
    cols: usize,
    /// Words per row.
    stride: usize,
    /// Entries per column.
    col_entries: f64,
    bits: Vec<u64>,
}

impl Level {
    pub fn cols(&self) -> usize {
        self.cols
    }

    pub fn col_entries(&self) -> f64 {
        self.col_entries
    }

    /// ORs rows `rows` into `into` (a row's words from word `words.start` on).
    pub fn union_rows(
        &self,
        rows: std::ops::Range<usize>,
        words: std::ops::Range<usize>,
        into: &mut [u64],
    ) {
        let words = words.start.min(self.stride)..words.end.min(self.stride);
        let rows = rows.start..rows.end.min(self.bits.len() / self.stride.max(1));
        for row in rows {
            let line = &self.bits[row * self.stride..][words.clone()];
            for (acc, w) in into.iter_mut().zip(line) {
                *acc |= w;
            }
        }
    }

    /// Whether the cell at `col`, `row` is set.
    #[cfg(test)]
    fn is_set(&self, col: usize, row: usize) -> bool {
        any_bit(&self.bits[row * self.stride..][..self.stride], col..col + 1)
    }
}

/// The cells `a..b` (in cells) touches, one at least, within `0..n`.
fn cells(a: f64, b: f64, n: usize) -> std::ops::Range<usize> {
    let lo = (a.floor().max(0.0) as usize).min(n.saturating_sub(1));
    let hi = (b.ceil().max(0.0) as usize).min(n).max(lo + 1);
    lo..hi
}

impl LitRaster {
    fn new(x_len: u32, max_bytes: u64) -> LitRaster {
        let x_len = x_len.max(1) as usize;
        let mut levels = Vec::new();
        let mut cols = COARSEST_COLS.min(x_len);
        loop {
            let stride = cols.div_ceil(64);
            levels.push(Level {
                cols,
                stride,
                col_entries: x_len as f64 / cols as f64,
                bits: vec![0; stride * RASTER_ROWS],
            });
            if cols >= FINEST_COLS.min(x_len) {
                break;
            }
            cols = (cols * 2).min(x_len);
        }
        LitRaster {
            levels,
            rows: RASTER_ROWS,
            row_bytes: (max_bytes.max(1) as f64) / RASTER_ROWS as f64,
            order: Vec::new(),
            unheld: Vec::new(),
        }
    }

    /// Coarsest first.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn row_bytes(&self) -> f64 {
        self.row_bytes
    }

    /// The bands level `level` does not hold (indices into [`LitBands::bands`]).
    pub fn unheld(&self, level: usize) -> &[u32] {
        let n = self.unheld.get(level).copied().unwrap_or(self.order.len());
        &self.order[..n]
    }

    /// The finest level that holds `l` (see the type's header), if any.
    fn finest(&self, l: &LitBand) -> Option<usize> {
        if f64::from(l.size) < 0.25 * self.row_bytes {
            return self.levels.len().checked_sub(1);
        }
        let span = l.last() - f64::from(l.start);
        self.levels
            .iter()
            .rposition(|level| span < 0.5 * level.col_entries)
    }

    /// Sets the cells of level `finest` that band `l` touches, step by step for one that moves; the
    /// coarser levels get them from [`Self::fill_coarser`]. A step that touches the cells the step
    /// before it touched marks nothing again (a band that moves thousands of times, each move less than a
    /// cell, touches a few).
    fn mark(&mut self, layout: &TimelineLayout, l: &LitBand, finest: usize) {
        let (start, last, size) = (f64::from(l.start), l.last(), f64::from(l.size));
        let (rows_of, row_bytes) = (self.rows, self.row_bytes);
        // The finest level, capped at the trace's entries, may not double the one before it: its cells
        // cannot be folded into that level's, so a band it holds is marked at both.
        let levels = if finest > 0 && !self.doubles(finest) {
            finest - 1..finest + 1
        } else {
            finest..finest + 1
        };
        for level in &mut self.levels[levels] {
            let mut last_cover = None;
            let mut cover = |x0: f64, x1: f64, b0: f64| {
                let rows = cells(b0 / row_bytes, (b0 + size) / row_bytes, rows_of);
                let cols = cells(x0 / level.col_entries, x1 / level.col_entries, level.cols);
                let this = Some((rows.clone(), cols.clone()));
                if this == last_cover {
                    return;
                }
                last_cover = this;
                for row in rows {
                    set_bits(
                        &mut level.bits[row * level.stride..][..level.stride],
                        cols.clone(),
                    );
                }
            };
            if !l.offset.is_nan() {
                cover(start, last, f64::from(l.offset));
                continue;
            }
            let Some(b) = layout.bands.get(l.band as usize) else {
                return;
            };
            let points = layout.band_points(b);
            for (k, p) in points.iter().enumerate() {
                let a = f64::from(p.x).max(start);
                let z = points.get(k + 1).map_or(last, |q| f64::from(q.x)).min(last);
                if z > a {
                    cover(a, z, f64::from(p.offset));
                }
            }
        }
    }

    /// Whether level `k` has twice the columns of level `k - 1`, so that its cell `c` lies in
    /// `k - 1`'s cell `c / 2` exactly (its entries per column are half, to the bit).
    fn doubles(&self, k: usize) -> bool {
        k > 0 && self.levels[k].cols == 2 * self.levels[k - 1].cols
    }

    /// Sets, at each level, the cells under those set at the next finer level (finest first): a band
    /// held at a level is held at every coarser one, and the cells it touches there are exactly those
    /// under the cells it touches at the finer level (see [`Self::doubles`]; a level that does not
    /// double the next coarser one had its bands marked at both). Awaits `pause` between batches of rows.
    async fn fill_coarser<P: Pause>(&mut self, pause: &mut P) {
        for k in (1..self.levels.len()).rev() {
            if !self.doubles(k) {
                continue;
            }
            let (coarser, finer) = self.levels.split_at_mut(k);
            let (coarser, finer) = (&mut coarser[k - 1], &finer[0]);
            ranges_paused(
                self.rows,
                |rows| {
                    for row in rows {
                        let fine = &finer.bits[row * finer.stride..][..finer.stride];
                        let coarse = &mut coarser.bits[row * coarser.stride..][..coarser.stride];
                        for (w, &word) in fine.iter().enumerate() {
                            if word != 0 {
                                // Bits 2c and 2c + 1 of the fine word fold into bit c of the coarse
                                // row: 32 of them into half a word.
                                let folded = fold_pairs(word);
                                coarse[w / 2] |= folded << (32 * (w % 2));
                            }
                        }
                    }
                },
                pause,
            )
            .await;
        }
    }
}

/// Bit `c` (of 32) set where bit `2c` or `2c + 1` of `word` is.
fn fold_pairs(word: u64) -> u64 {
    // Each pair's OR in its low bit, then the low bits gathered (the usual bit compaction).
    let mut x = (word | word >> 1) & 0x5555_5555_5555_5555;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x >> 4) & 0x00FF_00FF_00FF_00FF;
    x = (x | x >> 8) & 0x0000_FFFF_0000_FFFF;
    (x | x >> 16) & 0x0000_0000_FFFF_FFFF
}

/// The words of a bit table of `len` words that bits `range` fall in, each with the mask of those bits.
fn word_masks(range: std::ops::Range<usize>, len: usize) -> impl Iterator<Item = (usize, u64)> {
    let end = range.end.min(len * 64);
    let mut at = range.start;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let (word, bit) = (at / 64, at % 64);
        let n = (end - at).min(64 - bit);
        at += n;
        Some((
            word,
            if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << bit
            },
        ))
    })
}

/// Sets bits `range` of `words`.
fn set_bits(words: &mut [u64], range: std::ops::Range<usize>) {
    for (word, mask) in word_masks(range, words.len()) {
        words[word] |= mask;
    }
}

/// Whether any of bits `range` of `words` is set.
pub fn any_bit(words: &[u64], range: std::ops::Range<usize>) -> bool {
    word_masks(range, words.len()).any(|(word, mask)| words[word] & mask != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memograph_snapshot::analysis::lifetimes::Lifetimes;
    use memograph_snapshot::analysis::timeline::timeline_layout;
    use memograph_snapshot::model::{Action, DeviceTrace, TraceEntry};
    use memograph_snapshot::{read_bytes, synth, testing, Snapshot};

    #[test]
    fn bit_ranges_are_set_and_found_across_words() {
        let mut w = vec![0u64; 4];
        set_bits(&mut w, 60..130);
        assert_eq!(w[0], 0xF << 60);
        assert_eq!(w[1], u64::MAX);
        assert_eq!(w[2], 0b11);
        assert_eq!(w[3], 0);
        assert!(any_bit(&w, 0..61));
        assert!(!any_bit(&w, 0..60));
        assert!(any_bit(&w, 129..200));
        assert!(!any_bit(&w, 130..256));
        set_bits(&mut w, 250..400);
        assert_eq!(w[3], 0b111111 << 58);
    }

    #[test]
    fn a_big_highlight_is_rasterised_and_every_band_is_held_or_marked_alone() {
        let s = read_bytes(&synth::pickle(300).bytes).unwrap();
        let layout = timeline_layout(&Lifetimes::of(&s, 0), 1.0);
        let all: Vec<u32> = (0..layout.total as u32).collect();
        let lit = LitBands::of_rasterised_from(&layout, &all, 1000);
        let raster = lit.raster.as_ref().expect("rasterised");
        let levels = raster.levels();
        assert_eq!(levels[0].cols(), COARSEST_COLS);
        assert_eq!(
            levels.last().unwrap().cols(),
            FINEST_COLS.min(layout.x_len as usize)
        );
        // The long-lived bands of a short trace are wide at every level; the others are held.
        let coarsest = raster.unheld(0).len();
        assert!(coarsest < all.len() / 2, "{coarsest} bands left out");
        for (k, level) in levels.iter().enumerate() {
            let unheld: std::collections::HashSet<u32> = raster.unheld(k).iter().copied().collect();
            // Finer levels hold fewer.
            assert!(unheld.len() >= raster.unheld(k.saturating_sub(1)).len());
            assert!(k == 0 || level.col_entries() < levels[k - 1].col_entries());
            for (i, l) in lit.bands.iter().enumerate() {
                let held = raster.finest(l).is_some_and(|f| f >= k);
                assert_eq!(held, !unheld.contains(&(i as u32)));
                if !held {
                    continue;
                }
                // The cell at the band's start and bottom is set.
                let b = &layout.bands[l.band as usize];
                let bottom = layout.offset_at(b, l.start);
                let col = (f64::from(l.start) / level.col_entries()) as usize;
                let row =
                    ((f64::from(bottom) / raster.row_bytes()) as usize).min(raster.rows() - 1);
                assert!(
                    level.is_set(col, row),
                    "band {i} at level {k}, col {col}, row {row}"
                );
            }
        }
        // A small highlight is not rasterised.
        let few = LitBands::of_rasterised_from(&layout, &all[..100], 1000);
        assert!(few.raster.is_none());
        assert_eq!(few.bands.len(), 100);
        assert!(few.is_lit(99) && !few.is_lit(100) && !few.is_lit(u32::MAX));
        let picked = LitBands::allocations(&[3, 64, 200]);
        assert!(picked.bands.is_empty());
        assert_eq!(picked.reaching(0, layout.x_len).count(), 0);
        let lit: Vec<u32> = (0..300).filter(|&a| picked.is_lit(a)).collect();
        assert_eq!(lit, [3, 64, 200]);
    }

    /// Each band marked at every level that holds it, step by step, with nothing skipped or folded:
    /// what [`LitRaster::mark`] and [`LitRaster::fill_coarser`] must set, bit for bit.
    fn marked_one_by_one(layout: &TimelineLayout, lit: &LitBands) -> Vec<Vec<u64>> {
        let raster = lit.raster.as_ref().expect("rasterised");
        let mut levels: Vec<Vec<u64>> = raster
            .levels
            .iter()
            .map(|l| vec![0; l.bits.len()])
            .collect();
        for l in &lit.bands {
            let Some(finest) = raster.finest(l) else {
                continue;
            };
            let (start, last, size) = (f64::from(l.start), l.last(), f64::from(l.size));
            let mut steps = Vec::new();
            if l.offset.is_nan() {
                let points = layout.band_points(&layout.bands[l.band as usize]);
                for (k, p) in points.iter().enumerate() {
                    let a = f64::from(p.x).max(start);
                    let z = points.get(k + 1).map_or(last, |q| f64::from(q.x)).min(last);
                    if z > a {
                        steps.push((a, z, f64::from(p.offset)));
                    }
                }
            } else {
                steps.push((start, last, f64::from(l.offset)));
            }
            for (k, level) in raster.levels[..=finest].iter().enumerate() {
                for &(x0, x1, b0) in &steps {
                    let rows = cells(
                        b0 / raster.row_bytes,
                        (b0 + size) / raster.row_bytes,
                        raster.rows,
                    );
                    let cols = cells(x0 / level.col_entries, x1 / level.col_entries, level.cols);
                    for row in rows {
                        set_bits(
                            &mut levels[k][row * level.stride..][..level.stride],
                            cols.clone(),
                        );
                    }
                }
            }
        }
        levels
    }

    #[test]
    fn a_rasters_levels_are_what_marking_each_band_at_each_level_sets() {
        let mut checked = 0;
        // Traces of fewer entries than the finest level's columns (its last level is capped, and does
        // not double the one before) and of more; bands that move and bands that do not.
        let mut inputs: Vec<(String, Vec<u8>)> = [40, 300, 3000]
            .into_iter()
            .map(|steps| (format!("synth {steps}"), synth::pickle(steps).bytes))
            .collect();
        for name in ["training.pickle", "pools.pickle", "expandable.pickle"] {
            let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
            inputs.push((name.into(), std::fs::read(path).unwrap()));
        }
        let (mut moving, mut capped, mut six) = (0, 0, 0);
        let mut snapshots: Vec<(String, Snapshot)> = inputs
            .iter()
            .map(|(name, bytes)| (name.clone(), read_bytes(bytes).unwrap()))
            .collect();
        // Freed oldest first: every free moves each band drawn above it (a band moves thousands of
        // times, most moves less than a row), across more entries than the finest level has columns.
        for (n, live) in [(30_000, 400), (3_000, 2_500)] {
            let mut s = read_bytes(&synth::pickle(40).bytes).unwrap();
            let mut next = testing::xorshift(n as u64);
            let mut trace = DeviceTrace::default();
            let entry = |action, addr, size| TraceEntry {
                action,
                addr,
                size,
                stream: 0,
                time_us: None,
                stack: s.trace(0).stack[0],
                compile_context: None,
                user_metadata: None,
                device_free: None,
            };
            let mut held = std::collections::VecDeque::new();
            for k in 0..n as u64 {
                let size = 512 * (1 + next() % 4096);
                trace.push(&entry(Action::Alloc, k << 24, size));
                held.push_back((k << 24, size));
                if held.len() > live {
                    let (addr, size) = held.pop_front().unwrap();
                    trace.push(&entry(Action::FreeCompleted, addr, size));
                }
            }
            s.device_traces = vec![trace];
            snapshots.push((format!("{n} freed oldest first"), s));
        }
        for (name, s) in &snapshots {
            let lifetimes = Lifetimes::of(s, s.default_device().unwrap());
            for detail in [0.3, 1.0] {
                let layout = timeline_layout(&lifetimes, detail);
                for step in [1, 3] {
                    let picked: Vec<u32> = (0..layout.total as u32).step_by(step).collect();
                    let lit = LitBands::of_rasterised_from(&layout, &picked, 0);
                    let raster = lit.raster.as_ref().expect("rasterised");
                    let want = marked_one_by_one(&layout, &lit);
                    moving += lit.bands.iter().filter(|l| l.offset.is_nan()).count();
                    capped += usize::from(!raster.doubles(raster.levels.len() - 1));
                    six += usize::from(raster.levels.len() == 6);
                    for (k, level) in raster.levels.iter().enumerate() {
                        assert!(
                            level.bits == want[k],
                            "{name}, detail {detail}, every {step}th: level {k} of {}",
                            raster.levels.len()
                        );
                        checked += level.bits.iter().filter(|&&w| w != 0).count();
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked} words set");
        assert!(
            moving > 1000 && capped > 0 && six > 0,
            "{moving} {capped} {six}"
        );
    }

    #[test]
    fn pairs_of_bits_fold_into_one() {
        assert_eq!(fold_pairs(0), 0);
        assert_eq!(fold_pairs(u64::MAX), u64::from(u32::MAX));
        assert_eq!(fold_pairs(0b0110), 0b11);
        assert_eq!(fold_pairs(1 << 63), 1 << 31);
        assert_eq!(fold_pairs(1 << 62 | 1 << 1), 1 << 31 | 1);
        for c in 0..32 {
            assert_eq!(fold_pairs(1 << (2 * c)), 1 << c);
            assert_eq!(fold_pairs(1 << (2 * c + 1)), 1 << c);
        }
    }

    #[test]
    fn a_big_highlight_finds_the_bands_reaching_a_view_by_span_as_a_walk_would() {
        let s = read_bytes(&synth::pickle(300).bytes).unwrap();
        let layout = timeline_layout(&Lifetimes::of(&s, 0), 1.0);
        let x_len = layout.x_len;
        let reaches = |l: &LitBand, x0: u32, x1: u32| l.start <= x1 && l.last() >= f64::from(x0);
        let key = |l: &LitBand| (l.band, l.start, l.end, l.size.to_bits(), l.offset.to_bits());
        let mut reached = 0;
        for step in [1, 2, 7, 50] {
            let picked: Vec<u32> = (0..layout.total as u32).step_by(step).collect();
            // In the highlight's order (walked whole), and by span (found by bisection).
            let walked = LitBands::of_rasterised_from(&layout, &picked, usize::MAX);
            let by_span = LitBands::of_rasterised_from(&layout, &picked, 0);
            assert!(walked.groups.is_empty() && by_span.groups.len() > 1);
            let mut all: Vec<_> = walked.bands.iter().map(key).collect();
            let mut again: Vec<_> = by_span.bands.iter().map(key).collect();
            all.sort_unstable();
            again.sort_unstable();
            assert_eq!(all, again, "step {step}: the same bands");
            for (x0, x1) in [
                (0, x_len),
                (x_len / 2, x_len / 2 + 20),
                (x_len - 3, x_len),
                (5, 5),
                (x_len + 5, x_len + 9),
            ] {
                let of = |lit: &LitBands| {
                    let mut found: Vec<_> = lit
                        .reaching(x0, x1)
                        .filter(|l| reaches(l, x0, x1))
                        .map(key)
                        .collect();
                    found.sort_unstable();
                    found
                };
                let want = of(&walked);
                assert_eq!(walked.reaching(x0, x1).count(), walked.bands.len());
                assert_eq!(of(&by_span), want, "step {step}, view {x0}..{x1}");
                // Bisection leaves most of the others out.
                if x1 - x0 <= 20 {
                    assert!(by_span.reaching(x0, x1).count() < by_span.bands.len() / 4);
                }
                reached += want.len();
            }
        }
        assert!(reached > 100, "{reached}");
    }
}
