//! One timeline (blocks or segments) as the views draw it, and the view logic around it: the tooltip
//! text of an allocation and the minimap brush's viewport.

use memograph_snapshot::analysis::lifetimes::{segment_name, Kind, Lifetimes, Peak};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use memograph_snapshot::analysis::timeline::{RangeMax, SummaryPoint, TimelineLayout};
use memograph_snapshot::batch::{ranges_paused, Pause, BATCH};
#[cfg(test)]
use memograph_snapshot::batch::{run_ready, NoPause};
use memograph_snapshot::format::{bytes, grouped, seconds_since};

use super::lit::LitBands;
use crate::viewport::Viewport;

/// Highlights of at most this many allocations have their bands read in the frame that first shows
/// them (a few milliseconds); bigger ones in the background.
pub const LIT_IN_A_FRAME: usize = 100_000;

/// One timeline (blocks or segments) of one device at one detail level.
pub struct TimelineModel {
    /// Shared with layouts being built in the background (see `load::build`).
    pub lifetimes: Rc<Lifetimes>,
    /// Shared with highlights' bands being read in the background (see `load::build`).
    pub layout: Rc<TimelineLayout>,
    /// Live bytes after each entry, for the minimap and for fitting y to a range.
    pub totals: RangeMax,
    /// The summarized band's outline over ranges of its points (kept with `layout`).
    pub summary: SummaryOutline,
    pub peak: Peak,
    /// Share of allocations drawn as their own band (0.0–1.0): the one unit of detail everywhere.
    pub detail: f64,
    /// The highlighted bands of the last highlight drawn (kept with `layout`; see [`LitBands`]).
    lit: RefCell<Option<LitOf>>,
    /// A highlight a frame asked for whose bands are too many to read in a frame: read in the
    /// background (see [`Self::lit_for_frame`]).
    wanted_lit: RefCell<Option<Arc<Vec<u32>>>>,
    /// The allocations of the category last highlighted: which categories (by address: they live as
    /// long as the model), which category, and its allocations.
    members: RefCell<Option<MembersOf>>,
}

/// A category's allocations, and which categories (address) and category they are of.
type MembersOf = (usize, u16, Arc<Vec<u32>>);

/// Lit bands and the highlight they are of (held, so its address names it while kept).
type LitOf = (Arc<Vec<u32>>, Rc<LitBands>);

impl TimelineModel {
    /// [`Self::new_sliced`] at once (for tests).
    #[cfg(test)]
    pub fn new(lifetimes: Lifetimes, detail: f64) -> TimelineModel {
        run_ready(TimelineModel::new_sliced(lifetimes, detail, &mut NoPause))
    }

    /// The timeline of `lifetimes` at `detail`, its layout built in slices, awaiting `pause` between
    /// them.
    pub async fn new_sliced<P: Pause>(
        lifetimes: Lifetimes,
        detail: f64,
        pause: &mut P,
    ) -> TimelineModel {
        use memograph_snapshot::analysis::timeline::timeline_layout_sliced;
        let layout = timeline_layout_sliced(&lifetimes, detail, pause).await;
        let totals = RangeMax::new_sliced(&lifetimes.live_after, pause).await;
        let summary = SummaryOutline::new_sliced(&layout.summary, pause).await;
        TimelineModel {
            peak: lifetimes.peak_sliced(pause).await,
            lifetimes: Rc::new(lifetimes),
            layout: Rc::new(layout),
            summary,
            totals,
            detail,
            lit: RefCell::new(None),
            wanted_lit: RefCell::new(None),
            members: RefCell::new(None),
        }
    }

    /// Takes a layout of these lifetimes at `detail`, built apart (the page builds it in the background
    /// while the old one stays on screen).
    pub fn set_layout(&mut self, layout: TimelineLayout, summary: SummaryOutline, detail: f64) {
        self.lit = RefCell::new(None);
        self.summary = summary;
        self.layout = Rc::new(layout);
        self.detail = detail.clamp(0.0, 1.0);
    }

    /// Whether the layout is the one for `detail`.
    pub fn is_at(&self, detail: f64) -> bool {
        (detail.clamp(0.0, 1.0) - self.detail).abs() <= f64::EPSILON
    }

    /// Lays the timeline out at `detail` (0.0–1.0) unless it already is (the page builds layouts in the
    /// background instead: see [`Self::set_layout`]).
    #[cfg(test)]
    pub fn set_detail(&mut self, detail: f64) {
        let detail = detail.clamp(0.0, 1.0);
        if !self.is_at(detail) {
            // Free the old layout first: wasm memory never shrinks, so its high-water mark is what counts.
            self.layout = Rc::default();
            use memograph_snapshot::analysis::timeline::timeline_layout;
            let layout = timeline_layout(&self.lifetimes, detail);
            let summary = SummaryOutline::new(&layout.summary);
            self.set_layout(layout, summary, detail);
        }
    }

    /// The bands of `highlighted` (a highlight's allocations), as frames draw them: read once per
    /// highlight and layout, not on every frame.
    pub fn lit_bands(&self, highlighted: &Arc<Vec<u32>>) -> Rc<LitBands> {
        if let Some(kept) = self.kept_lit(highlighted) {
            return kept;
        }
        let bands = Rc::new(LitBands::of(&self.layout, highlighted));
        *self.lit.borrow_mut() = Some((highlighted.clone(), bands.clone()));
        bands
    }

    /// The bands of `highlighted` if they are read for this layout.
    pub fn kept_lit(&self, highlighted: &Arc<Vec<u32>>) -> Option<Rc<LitBands>> {
        match &*self.lit.borrow() {
            Some((of, bands)) if Arc::ptr_eq(of, highlighted) => Some(bands.clone()),
            _ => None,
        }
    }

    /// The bands of `highlighted` for a frame: those read, else read now when few, else `None` with
    /// the highlight noted as wanted ([`Self::lit_wanted`]): a frame of a highlight of millions of
    /// bands fills its wide bands, and marks its slivers once they are read in the background.
    pub fn lit_for_frame(&self, highlighted: &Arc<Vec<u32>>) -> Option<Rc<LitBands>> {
        if let Some(kept) = self.kept_lit(highlighted) {
            return Some(kept);
        }
        if highlighted.len() <= LIT_IN_A_FRAME {
            return Some(self.lit_bands(highlighted));
        }
        *self.wanted_lit.borrow_mut() = Some(highlighted.clone());
        None
    }

    /// Notes `highlighted` as wanted unless its bands are read (a search has them read before it
    /// shows them).
    pub fn want_lit(&self, highlighted: &Arc<Vec<u32>>) {
        if self.kept_lit(highlighted).is_none() {
            *self.wanted_lit.borrow_mut() = Some(highlighted.clone());
        }
    }

    /// The highlight wanted and not read yet, with the layout to read its bands from (see
    /// [`LitBands::of_sliced`]).
    pub fn lit_wanted(&self) -> Option<(Arc<Vec<u32>>, Rc<TimelineLayout>)> {
        let wanted = self.wanted_lit.borrow().clone()?;
        self.kept_lit(&wanted)
            .is_none()
            .then(|| (wanted, self.layout.clone()))
    }

    /// Keeps `bands`, read from `layout` for `highlighted`, if `layout` is still this model's.
    pub fn keep_lit(
        &self,
        highlighted: &Arc<Vec<u32>>,
        layout: &Rc<TimelineLayout>,
        bands: LitBands,
    ) {
        if !Rc::ptr_eq(layout, &self.layout) {
            return;
        }
        *self.lit.borrow_mut() = Some((highlighted.clone(), Rc::new(bands)));
        let mut wanted = self.wanted_lit.borrow_mut();
        if wanted.as_ref().is_some_and(|w| Arc::ptr_eq(w, highlighted)) {
            *wanted = None;
        }
    }

    /// The allocations of category `k` of `categories` (this device's), found once for the frames
    /// that highlight it: a scan of every allocation, where a frame should cost its pixels.
    pub fn category_members(&self, categories: &super::Categories, k: u16) -> Arc<Vec<u32>> {
        let of = std::ptr::from_ref(categories) as usize;
        let mut members = self.members.borrow_mut();
        match &*members {
            Some((at, kept, all)) if (*at, *kept) == (of, k) => all.clone(),
            _ => {
                let all: Arc<Vec<u32>> = Arc::new(
                    (0..categories.of.len() as u32)
                        .filter(|&i| categories.of[i as usize] == k)
                        .collect(),
                );
                *members = Some((of, k, all.clone()));
                all
            }
        }
    }

    /// Highest live bytes over entries `[x0, x1)`, including what was live before `x0`.
    pub fn max_in(&self, x0: f64, x1: f64) -> u64 {
        let lo = x0.floor().max(0.0) as usize;
        let hi = (x1.ceil().max(0.0) as usize).max(lo + 1);
        let live = &self.lifetimes.live_after;
        let before = match lo {
            0 => self.lifetimes.initial_bytes,
            _ => live.get(lo - 1).copied().unwrap_or(0),
        };
        self.totals.max(live, lo, hi).max(before)
    }

    /// The whole trace, with room above the peak.
    pub fn full_view(&self) -> Viewport {
        Viewport::full(self.layout.x_len as f64, self.peak.bytes as f64)
    }

    /// The view a minimap brush from entry `a` to `b` asks for: that range with y fitted to its highest
    /// point; a click (a range under two entries) centres the current span `span` there instead.
    pub fn brushed(&self, a: f64, b: f64, span: Option<f64>) -> Viewport {
        let x_len = self.layout.x_len as f64;
        let (lo, hi) = (a.min(b), a.max(b));
        let (lo, hi) = if hi - lo < 2.0 {
            let span = span.unwrap_or(x_len);
            ((lo - span / 2.0).max(0.0), (lo + span / 2.0).min(x_len))
        } else {
            (lo, hi)
        };
        self.fitted(lo, hi.max(lo + 1.0))
    }

    /// Entries `x0..x1` with y fitted to their highest point, as a brush over them gives (the
    /// keyboard's `f` fits the view so).
    pub fn fitted(&self, x0: f64, x1: f64) -> Viewport {
        Viewport {
            x0,
            x1,
            // A view of at least a byte, where nothing is live.
            y_max: self.max_in(x0, x1).max(1) as f64 * 1.05,
        }
    }

    /// The tooltip text of an allocation: its name, size, when it was made and freed.
    pub fn describe(&self, allocation: u32, times: Option<&[i64]>) -> String {
        let Some(a) = self.lifetimes.allocations.get(allocation as usize) else {
            return String::new();
        };
        let name = match self.lifetimes.kind {
            Kind::Blocks => a.name(),
            Kind::Segments => segment_name(a.addr, a.version),
        };
        let when = |e: Option<u32>, what: &str| match e {
            None => format!("{what} before the trace"),
            Some(e) => match times.and_then(|ts| seconds_since(ts, e as usize)) {
                Some(s) => format!("{what} at entry {e} ({s})"),
                None => format!("{what} at entry {e}"),
            },
        };
        let freed = match a.free_event() {
            None => "live at the end".to_string(),
            f => when(f, "freed"),
        };
        let mut text = format!(
            "{name}  {} ({} bytes)\n{}\n{freed}",
            bytes(a.size),
            grouped(a.size),
            when(a.alloc_event(), "allocated")
        );
        if self.layout.tolerance > 0 {
            text.push_str(&format!(
                "\n(bands drawn within {} of their place)",
                bytes(self.layout.tolerance)
            ));
        }
        text
    }
}

/// The summarized band's outline (lowest bottom, highest top) over ranges of its points, in
/// O(n / BLOCK + BLOCK) per range. The summary of a huge trace holds millions of points: a frame draws
/// it one pixel column at a time from this instead of walking them all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryOutline {
    /// Per block of points: (lowest bottom, highest top).
    blocks: Vec<(f32, f32)>,
    /// Whether any point has a height.
    any: bool,
}

const OUTLINE_BLOCK: usize = 64;

fn outline_of(points: &[SummaryPoint]) -> Option<(f32, f32)> {
    points.iter().fold(None, |o, p| {
        let (b, t) = (p.bottom, p.bottom + p.height);
        Some(o.map_or((b, t), |(lo, hi): (f32, f32)| (lo.min(b), hi.max(t))))
    })
}

fn merge(a: Option<(f32, f32)>, b: Option<(f32, f32)>) -> Option<(f32, f32)> {
    match (a, b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, b) => a.or(b),
    }
}

impl SummaryOutline {
    #[cfg(test)]
    pub fn new(points: &[SummaryPoint]) -> SummaryOutline {
        run_ready(SummaryOutline::new_sliced(points, &mut NoPause))
    }

    /// The outline of `points` (the tests' `new`), awaiting `pause` between batches of points (a huge
    /// trace's summary holds millions).
    pub async fn new_sliced<P: Pause>(points: &[SummaryPoint], pause: &mut P) -> SummaryOutline {
        // Batches start at multiples of BATCH, which the block divides: each block is whole in one.
        const { assert!(BATCH / OUTLINE_BLOCK * OUTLINE_BLOCK == BATCH) };
        let mut blocks = Vec::with_capacity(points.len().div_ceil(OUTLINE_BLOCK));
        let mut any = false;
        let batch = |r: std::ops::Range<usize>| {
            let points = &points[r];
            any |= points.iter().any(|p| p.height > 0.0);
            blocks.extend(points.chunks(OUTLINE_BLOCK).filter_map(outline_of));
        };
        ranges_paused(points.len(), batch, pause).await;
        SummaryOutline { blocks, any }
    }

    /// Whether the summarized band is ever drawn.
    pub fn any(&self) -> bool {
        self.any
    }

    /// (Lowest bottom, highest top) of `points[lo..hi]` (clamped; `None` when empty). `points` is
    /// the summary `new` was given.
    pub fn over(&self, points: &[SummaryPoint], lo: usize, hi: usize) -> Option<(f32, f32)> {
        let hi = hi.min(points.len());
        if lo >= hi {
            return None;
        }
        let (bl, bh) = (lo.div_ceil(OUTLINE_BLOCK), hi / OUTLINE_BLOCK);
        if bl >= bh {
            return outline_of(&points[lo..hi]);
        }
        let head = outline_of(&points[lo..bl * OUTLINE_BLOCK]);
        let mid = self.blocks[bl..bh]
            .iter()
            .copied()
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
        let tail = outline_of(&points[bh * OUTLINE_BLOCK..hi]);
        merge(merge(head, mid), tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memograph_snapshot::{read_bytes, synth};

    #[test]
    fn the_summary_outline_over_any_range_is_that_of_its_points() {
        // Pseudo-random points: bottoms and heights that wander.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 1000) as f32
        };
        let points: Vec<SummaryPoint> = (0..1000u32)
            .map(|x| SummaryPoint {
                x,
                bottom: next(),
                height: next(),
            })
            .collect();
        let outline = SummaryOutline::new(&points);
        assert!(outline.any());
        for (lo, hi) in [
            (0, 1000),
            (0, 1),
            (5, 70),
            (63, 65),
            (64, 128),
            (100, 999),
            (990, 2000),
        ] {
            let naive = outline_of(&points[lo..hi.min(1000)]);
            assert_eq!(outline.over(&points, lo, hi), naive, "{lo}..{hi}");
        }
        assert_eq!(outline.over(&points, 10, 10), None);
        let flat = [SummaryPoint {
            x: 0,
            bottom: 5.0,
            height: 0.0,
        }];
        assert!(!SummaryOutline::new(&flat).any());
    }

    fn synth_model() -> TimelineModel {
        let s = read_bytes(&synth::pickle(60).bytes).unwrap();
        TimelineModel::new(Lifetimes::of(&s, 0), 1.0)
    }

    #[test]
    fn a_brush_fits_y_to_the_highest_point_of_its_range() {
        let t = synth_model();
        let peak = t.peak;
        let v = t.brushed(peak.event as f64 + 1.0, 0.0, None);
        assert_eq!(v.x0, 0.0);
        assert_eq!(v.y_max, peak.bytes as f64 * 1.05);
        // A click centres the current span on the entry clicked.
        let v = t.brushed(500.0, 500.5, Some(100.0));
        assert_eq!((v.x0, v.x1), (450.0, 550.0));
        // Fitting a view keeps its range and gives the brush's height over it.
        let brushed = t.brushed(0.0, 40.0, None);
        let fitted = t.fitted(0.0, 40.0);
        assert_eq!(fitted, brushed);
        assert!(fitted.y_max < peak.bytes as f64 * 1.05, "{fitted:?}");
    }

    #[test]
    fn the_tooltip_names_the_allocation_and_when_it_lived() {
        let t = synth_model();
        let (i, a) = t
            .lifetimes
            .allocations
            .iter()
            .enumerate()
            .find(|(_, a)| a.free_event().is_some() && a.alloc_event().is_some())
            .unwrap();
        let text = t.describe(i as u32, None);
        assert!(text.starts_with(&a.name()), "{text}");
        assert!(text.contains(&format!("allocated at entry {}", a.alloc_event().unwrap())));
        assert!(text.contains(&format!("freed at entry {}", a.free_event().unwrap())));
        assert_eq!(t.describe(u32::MAX, None), "");
    }

    #[test]
    fn detail_is_one_unit_and_setting_it_twice_does_nothing_twice() {
        let mut t = synth_model();
        t.set_detail(0.5);
        let drawn = t.layout.drawn;
        assert_eq!(drawn, t.layout.total.div_ceil(2));
        t.set_detail(0.5);
        assert_eq!(t.layout.drawn, drawn);
        t.set_detail(7.0);
        assert_eq!(t.detail, 1.0);
    }

    #[test]
    fn lit_bands_are_the_highlighted_bands_kept_per_highlight_and_layout() {
        let mut t = synth_model();
        t.set_detail(0.5);
        let picked: Arc<Vec<u32>> = Arc::new((0..t.layout.total as u32).step_by(3).collect());
        let lit = t.lit_bands(&picked);
        let drawn: Vec<u32> = picked
            .iter()
            .copied()
            .filter(|&a| t.layout.band_of(a).is_some())
            .collect();
        assert_eq!(lit.bands.len(), drawn.len());
        assert!(drawn.len() < picked.len(), "half the allocations are drawn");
        for l in &lit.bands {
            let b = &t.layout.bands[l.band as usize];
            assert!(picked.binary_search(&b.allocation).is_ok());
            assert_eq!((l.start, l.end, l.size), (b.start, b.end, b.size as f32));
            match t.layout.band_points(b) {
                [p] => assert_eq!(l.offset, p.offset),
                _ => assert!(l.offset.is_nan()),
            }
        }
        // Kept for the same highlight; read anew for another, and after a new layout.
        assert!(Rc::ptr_eq(&lit, &t.lit_bands(&picked)));
        let other = Arc::new(picked.as_ref().clone());
        assert!(!Rc::ptr_eq(&lit, &t.lit_bands(&other)));
        t.set_detail(1.0);
        assert_eq!(t.lit_bands(&picked).bands.len(), picked.len());
    }
}
