//! Draws a timeline (blocks or segments): stacked bands, the summarized band, axes, annotations and the
//! peak marker. Bands outside the view, under a quarter pixel tall or under half a pixel wide are skipped
//! (their bytes still count in the offsets of those above, and the live area shades them), so a frame
//! costs what is visible, not what exists.

use memograph_snapshot::analysis::report::CategorySeries;
use memograph_snapshot::analysis::timeline::{Band, TimelineLayout};
use memograph_snapshot::format::bytes;

use super::colors::{self, Theme};
use super::{Pen, Surface};
use crate::pixels::{self, Pixels};
use crate::scale::{annotation_strip, Scale, ANNOTATION_ROW, ANNOTATION_ROWS};
use crate::view_model::lit::{any_bit, LitBand, LitBands, LitRaster};
use crate::view_model::{AnnotationSpan, OomMark, TimelineModel, LIT_IN_A_FRAME};
use crate::viewport::{byte_ticks, nice_ticks, tick_decimals};

/// What to draw besides the bands.
pub struct Overlay<'a> {
    pub annotations: &'a [AnnotationSpan],
    /// Where the allocator ran out of memory: a line and a label each.
    pub ooms: &'a [OomMark],
    /// The band under the pointer and its allocation: drawn only while that band still is that
    /// allocation's (a layout made since, at another detail, has other bands).
    pub hovered: Option<(usize, u32)>,
    pub pinned: Option<u32>,
    pub show_peak: bool,
    /// Allocations to show at full strength (sorted); the others are dimmed. Empty: all.
    pub highlighted: &'a [u32],
    /// Their bands, when the caller keeps them between frames (else read from the layout here).
    pub lit: Option<&'a LitBands>,
    /// Colour by category: each allocation's category and the number of categories.
    pub categories: Option<(&'a [u16], usize)>,
    /// Live bytes per category across the trace: shades the area under the total by category instead of
    /// in grey (for short canvases, where most bands are too thin to draw).
    pub stacked: Option<&'a CategorySeries>,
}

impl Overlay<'static> {
    /// Bands only (plus the peak marker if `show_peak`): nothing hovered, pinned, highlighted or coloured.
    pub fn plain(show_peak: bool) -> Overlay<'static> {
        Overlay {
            annotations: &[],
            ooms: &[],
            hovered: None,
            pinned: None,
            show_peak,
            highlighted: &[],
            lit: None,
            categories: None,
            stacked: None,
        }
    }
}

/// Draws `model` on `s` as `f` maps it.
pub fn draw<P: Pen>(
    s: &Surface<P>,
    f: &Scale,
    model: &TimelineModel,
    overlay: &Overlay,
    theme: &Theme,
) {
    let ctx = &s.ctx;
    ctx.set_fill_style_str(theme.background);
    ctx.fill_rect(0.0, 0.0, s.width, s.height);
    draw_grid(s, f, theme);
    ctx.save();
    ctx.begin_path();
    ctx.rect(f.plot.left, f.plot.top, f.plot.width, f.plot.height);
    ctx.clip();
    match overlay.stacked {
        Some(series) => draw_category_area(s, f, series),
        None => draw_live_area(s, f, model, theme),
    }
    draw_bands(s, f, &model.layout, overlay, theme);
    draw_summary(s, f, model, theme);
    if overlay.show_peak {
        draw_peak(s, f, model, theme);
    }
    draw_ooms(s, f, overlay.ooms, theme);
    ctx.restore();
    draw_annotations(s, f, overlay.annotations, theme);
    draw_x_axis(s, f, theme);
}

fn draw_grid<P: Pen>(s: &Surface<P>, f: &Scale, theme: &Theme) {
    let ctx = &s.ctx;
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_align("right");
    ctx.set_text_baseline("middle");
    ctx.set_line_width(1.0);
    for t in byte_ticks(f.view.y_max, 6) {
        let y = f.py(t).round() + 0.5;
        ctx.set_stroke_style_str(theme.grid);
        ctx.begin_path();
        ctx.move_to(f.plot.left, y);
        ctx.line_to(f.plot.left + f.plot.width, y);
        ctx.stroke();
        ctx.set_fill_style_str(theme.muted);
        ctx.fill_text(&bytes(t as u64), f.plot.left - 6.0, y);
    }
}

fn draw_x_axis<P: Pen>(s: &Surface<P>, f: &Scale, theme: &Theme) {
    let ctx = &s.ctx;
    ctx.set_fill_style_str(theme.muted);
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    let y = f.plot.top + f.plot.height + 6.0;
    match f.time_range() {
        Some((t0, a, b)) => {
            let ticks = nice_ticks((a - t0) / 1e6, (b - t0) / 1e6, 8);
            let decimals = tick_decimals(&ticks, 3);
            for t in ticks {
                let px = f.px_at_time(t0 + t * 1e6);
                ctx.fill_text(&format!("{t:.decimals$} s"), px, y);
            }
        }
        None => {
            // Entries are whole: a view of a few entries gets no fractional ticks.
            for t in nice_ticks(f.view.x0, f.view.x1, 8)
                .into_iter()
                .filter(|t| t.fract() == 0.0)
            {
                ctx.fill_text(&format!("{}", t as u64), f.px(t), y);
            }
        }
    }
}

/// The area under the live-bytes total, per pixel column, in a neutral shade. Bands are drawn on top;
/// where many bands are too thin to draw (they are skipped below a quarter pixel) the stack still reads
/// as full instead of showing a hole.
fn draw_live_area<P: Pen>(s: &Surface<P>, f: &Scale, model: &TimelineModel, theme: &Theme) {
    let ctx = &s.ctx;
    let bottom = f.py(0.0);
    ctx.begin_path();
    ctx.move_to(f.plot.left, bottom);
    for c in 0..f.plot.width.ceil() as usize {
        let px = f.plot.left + c as f64;
        let (a, b) = (f.x_at(px), f.x_at(px + 1.0));
        let y = f.py(model.max_in(a, b.max(a + 1.0)) as f64);
        ctx.line_to(px, y);
        ctx.line_to(px + 1.0, y);
    }
    ctx.line_to(f.plot.left + f.plot.width.ceil(), bottom);
    ctx.close_path();
    ctx.set_global_alpha(0.45);
    ctx.set_fill_style_str(theme.summarized);
    ctx.fill();
    ctx.set_global_alpha(1.0);
}

/// The area under the total split by category, one column per sample of `series` (each sample holds
/// its run's highest total).
fn draw_category_area<P: Pen>(s: &Surface<P>, f: &Scale, series: &CategorySeries) {
    let ctx = &s.ctx;
    let n = series.entries.len();
    let count = series.categories.len();
    for k in 0..n {
        let a = series.entries[k].max(0) as f64;
        let z = series
            .entries
            .get(k + 1)
            .map_or(f.view.x1, |&e| e.max(0) as f64);
        if z < f.view.x0 || a > f.view.x1 {
            continue;
        }
        let (pa, pz) = (f.px(a.max(f.view.x0)), f.px(z.min(f.view.x1)));
        let mut below = 0u64;
        for (c, bytes) in series.bytes.iter().enumerate() {
            let b = bytes[k];
            if b == 0 {
                continue;
            }
            let (y0, y1) = (f.py(below as f64), f.py((below + b) as f64));
            ctx.set_fill_style_str(colors::category(c as u16, count));
            ctx.fill_rect(pa, y1, (pz - pa).max(1.0), y0 - y1);
            below += b;
        }
    }
}

/// Reusable scratch for band outlines: (left px, right px, bottom offset).
struct Steps(Vec<(f64, f64, f64)>);

fn band_steps(f: &Scale, layout: &TimelineLayout, band: usize, steps: &mut Steps) {
    steps.0.clear();
    let Some(b) = layout.bands.get(band) else {
        return;
    };
    let pts = layout.band_points(b);
    let end = if b.end > b.start { b.end } else { b.start + 1 } as f64;
    let (lo, hi) = (f.view.x0 - 1.0, f.view.x1 + 1.0);
    // Only the steps in view: from the last breakpoint at or before the view's start, until one past
    // its end (a long-lived band can hold thousands of breakpoints).
    let first = pts
        .partition_point(|p| (p.x as f64) <= lo)
        .saturating_sub(1);
    for (k, p) in pts.iter().enumerate().skip(first) {
        let a = (p.x as f64).max(b.start as f64);
        if a >= hi {
            break;
        }
        let z = pts.get(k + 1).map_or(end, |q| q.x as f64).min(end);
        if z <= lo || z <= a {
            continue;
        }
        let (pa, pz) = (f.px(a.max(lo)), f.px(z.min(hi)));
        // Pixel decimation: a step narrower than a pixel extends the previous one.
        if let Some(last) = steps.0.last_mut() {
            if pz - last.0 < 1.0 {
                last.1 = pz;
                continue;
            }
        }
        steps.0.push((pa, pz, p.offset as f64));
    }
}

/// The plot's pixels, each marked or not: many tiny shapes drawn as the runs of pixels they cover.
/// A bit a pixel: a million marks land on random rows, and a byte a pixel (600 KB) missed the cache on
/// nearly every one (70 ns each in Chromium).
struct Mask {
    left: f64,
    top: f64,
    width: usize,
    height: usize,
    /// Words per row.
    stride: usize,
    bits: Vec<u64>,
}

impl Mask {
    fn new(plot: &crate::scale::Plot) -> Mask {
        let (width, height) = (
            plot.width.max(0.0) as usize + 1,
            plot.height.max(0.0) as usize + 1,
        );
        let stride = width.div_ceil(64);
        Mask {
            left: plot.left,
            top: plot.top,
            width,
            height,
            stride,
            bits: vec![0; stride * height],
        }
    }

    /// Marks the pixels the rectangle from x `x0..x1`, y `y0..y1` touches (one at least), a word of
    /// each row at a time: a highlighted sliver can be as long as the plot is wide, and a frame of a
    /// zoomed 190 MB snapshot marked tens of thousands of them (pixel by pixel, 30 ms a frame).
    fn cover(&mut self, x0: f64, x1: f64, y0: f64, y1: f64) {
        let cols = Mask::span(x0.min(x1) - self.left, x0.max(x1) - self.left, self.width);
        let rows = Mask::span(y0.min(y1) - self.top, y0.max(y1) - self.top, self.height);
        if cols.is_empty() {
            return;
        }
        let (first, last) = (cols.start / 64, (cols.end - 1) / 64);
        // The bits of the first word from the first column up, of the last up to the last column.
        let lead = !0u64 << (cols.start % 64);
        let tail = !0u64 >> (63 - (cols.end - 1) % 64);
        for row in rows {
            let line = &mut self.bits[row * self.stride..][..self.stride];
            if first == last {
                line[first] |= lead & tail;
            } else {
                line[first] |= lead;
                line[first + 1..last].fill(!0);
                line[last] |= tail;
            }
        }
    }

    /// The cells `a..b` (in pixels from the plot's edge) touches, one at least, within `0..n`.
    fn span(a: f64, b: f64, n: usize) -> std::ops::Range<usize> {
        let lo = (a.floor().max(0.0) as usize).min(n);
        let hi = (b.ceil().max(0.0) as usize).min(n).max(lo + 1).min(n);
        lo..hi
    }

    fn mark(&mut self, col: usize, row: usize) {
        if col < self.width && row < self.height {
            self.bits[row * self.stride + col / 64] |= 1 << (col % 64);
        }
    }

    fn is_marked(line: &[u64], col: usize) -> bool {
        line[col / 64] >> (col % 64) & 1 == 1
    }

    /// Fills the marked pixels with few rectangles (see [`Mask::rectangles`]).
    fn fill<P: Pen>(&self, s: &Surface<P>) {
        self.rectangles(|col, row, width, height| {
            let (x, y) = (self.left + col as f64, self.top + row as f64);
            s.ctx.fill_rect(x, y, width as f64, height as f64);
        });
    }

    /// The marked pixels as disjoint rectangles `(column, row, width, height)`: each run of marked
    /// pixels of a row, and a run repeated in the rows below it (same first column, same length)
    /// taken with it as one rectangle. A highlighted sliver is a pixel or two wide and many rows
    /// tall: filled a row at a time, they were tens of thousands of canvas calls, most of a zoomed,
    /// highlighted frame of a 1 GB snapshot (70-80 ms frames, profiled on the benchmark's machine).
    fn rectangles(&self, mut emit: impl FnMut(usize, usize, usize, usize)) {
        // Rectangles still growing down, as (first column, width, first row), in column order; the
        // runs of the row at hand.
        let mut open: Vec<(usize, usize, usize)> = Vec::new();
        let mut next: Vec<(usize, usize, usize)> = Vec::new();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (row, line) in self.bits.chunks(self.stride).enumerate() {
            self.runs(line, &mut runs);
            let mut k = 0;
            for &(col, len) in &runs {
                // What opened left of this run, or at it with another width, ends above this row.
                while k < open.len() && (open[k].0 < col || (open[k].0 == col && open[k].1 != len))
                {
                    let (c, w, top) = open[k];
                    emit(c, top, w, row - top);
                    k += 1;
                }
                if k < open.len() && open[k].0 == col {
                    next.push(open[k]);
                    k += 1;
                } else {
                    next.push((col, len, row));
                }
            }
            for &(c, w, top) in &open[k..] {
                emit(c, top, w, row - top);
            }
            std::mem::swap(&mut open, &mut next);
            next.clear();
        }
        for (c, w, top) in open {
            emit(c, top, w, self.height - top);
        }
    }

    /// The runs of marked pixels of one row, as (first column, length), left to right.
    fn runs(&self, line: &[u64], runs: &mut Vec<(usize, usize)>) {
        runs.clear();
        let mut col = 0;
        while col < self.width {
            if line[col / 64] >> (col % 64) == 0 {
                // Nothing marked in the rest of this word.
                col = (col / 64 + 1) * 64;
                continue;
            }
            if !Mask::is_marked(line, col) {
                col += 1;
                continue;
            }
            let run = (col..self.width)
                .take_while(|&c| Mask::is_marked(line, c))
                .count();
            runs.push((col, run));
            col += run;
        }
    }
}

/// The rectangles `(column, row, width, height)` a mask over `plot` fills for the rectangles
/// `(x0, x1, y0, y1)`.
#[cfg(test)]
pub(super) fn mask_rectangles(
    plot: &crate::scale::Plot,
    rects: &[(f64, f64, f64, f64)],
) -> Vec<(usize, usize, usize, usize)> {
    let mut mask = Mask::new(plot);
    for &(x0, x1, y0, y1) in rects {
        mask.cover(x0, x1, y0, y1);
    }
    let mut out = Vec::new();
    mask.rectangles(|c, r, w, h| out.push((c, r, w, h)));
    out
}

/// The pixels (column, row) a mask over `plot` marks for the rectangles `(x0, x1, y0, y1)`.
#[cfg(test)]
pub(super) fn masked(
    plot: &crate::scale::Plot,
    rects: &[(f64, f64, f64, f64)],
) -> Vec<(usize, usize)> {
    let mut mask = Mask::new(plot);
    for &(x0, x1, y0, y1) in rects {
        mask.cover(x0, x1, y0, y1);
    }
    let mut marked = Vec::new();
    for (row, line) in mask.bits.chunks(mask.stride).enumerate() {
        marked.extend(
            (0..mask.width)
                .filter(|&c| Mask::is_marked(line, c))
                .map(|c| (c, row)),
        );
    }
    marked
}

/// Whether frames over `f`'s view mark `raster`'s slivers from it (at which level).
#[cfg(test)]
pub(super) fn raster_level(f: &Scale, raster: &LitRaster) -> Option<usize> {
    RasterColumns::fit(f, raster).map(|c| c.level)
}

/// The raster columns under each pixel column of a view whose pixels are each at least a cell of a
/// level of a highlight's raster wide and tall (see `view_model::lit::LitRaster`).
struct RasterColumns {
    /// The level: the coarsest that fits.
    level: usize,
    /// Per pixel column (as [`Mask`] counts them), its columns at that level (empty past the view).
    cols: Vec<(usize, usize)>,
    /// The words of a row of the level those columns are in.
    words: std::ops::Range<usize>,
}

impl RasterColumns {
    /// `None` when some pixel of the view is smaller than a cell at every level: its slivers are marked
    /// one by one.
    fn fit(f: &Scale, raster: &LitRaster) -> Option<RasterColumns> {
        if f.view.y_max / f.plot.height.max(1.0) < raster.row_bytes() {
            return None;
        }
        let width = f.plot.width.max(0.0) as usize + 1;
        let spans: Vec<(f64, f64)> = (0..width)
            .map(|c| {
                let left = f.plot.left + c as f64;
                (f.x_at(left), f.x_at(left + 1.0))
            })
            .collect();
        // The narrowest whole column (the last may be cut by the plot's edge) picks the level.
        let narrowest = spans
            .iter()
            .enumerate()
            .filter(|&(c, &(a, _))| a < f.view.x1 && c as f64 + 1.0 <= f.plot.width)
            .map(|(_, &(a, b))| b - a)
            .fold(f64::INFINITY, f64::min);
        let level = raster
            .levels()
            .iter()
            .position(|l| l.col_entries() <= narrowest)?;
        let at = &raster.levels()[level];
        let per_col = at.col_entries();
        let (mut lo, mut hi) = (usize::MAX, 0);
        let cols = spans
            .iter()
            .map(|&(a, b)| {
                if a >= f.view.x1 {
                    return (0, 0);
                }
                let c0 = ((a / per_col).floor().max(0.0) as usize).min(at.cols() - 1);
                let c1 = ((b / per_col).ceil().max(0.0) as usize)
                    .min(at.cols())
                    .max(c0 + 1);
                (lo, hi) = (lo.min(c0), hi.max(c1));
                (c0, c1)
            })
            .collect();
        (lo < hi).then(|| RasterColumns {
            level,
            cols,
            words: lo / 64..hi.div_ceil(64),
        })
    }

    /// Marks each pixel of `mask` with a set cell of `raster` under it.
    fn mark(&self, f: &Scale, raster: &LitRaster, mask: &mut Mask) {
        let level = &raster.levels()[self.level];
        let base = self.words.start * 64;
        let mut row_bits = vec![0u64; self.words.len()];
        let per_row = raster.row_bytes();
        for y in 0..mask.height {
            let top = f.plot.top + y as f64;
            let (high, low) = (f.bytes_at(top), f.bytes_at(top + 1.0).max(0.0));
            if high <= 0.0 {
                continue;
            }
            let r0 = ((low / per_row).floor() as usize).min(raster.rows());
            let r1 = ((high / per_row).ceil() as usize).min(raster.rows());
            if r0 >= r1 {
                continue;
            }
            row_bits.fill(0);
            level.union_rows(r0..r1, self.words.clone(), &mut row_bits);
            if row_bits.iter().all(|&w| w == 0) {
                continue;
            }
            for (c, &(c0, c1)) in self.cols.iter().enumerate() {
                if c1 > c0 && any_bit(&row_bits, c0 - base..c1 - base) {
                    mask.mark(c, y);
                }
            }
        }
    }
}

fn trace_band<P: Pen>(s: &Surface<P>, f: &Scale, steps: &Steps, size: f64) {
    let ctx = &s.ctx;
    ctx.begin_path();
    let first = steps.0[0];
    ctx.move_to(first.0, f.py(first.2));
    for &(a, z, off) in &steps.0 {
        let y = f.py(off);
        ctx.line_to(a, y);
        ctx.line_to(z, y);
    }
    for &(a, z, off) in steps.0.iter().rev() {
        let y = f.py(off + size);
        ctx.line_to(z, y);
        ctx.line_to(a, y);
    }
    ctx.close_path();
}

fn draw_bands<P: Pen>(
    s: &Surface<P>,
    f: &Scale,
    layout: &TimelineLayout,
    overlay: &Overlay,
    theme: &Theme,
) {
    let ctx = &s.ctx;
    let min_bytes = 0.25 * f.view.y_max / f.plot.height;
    let mut steps = Steps(Vec::with_capacity(256));
    let dim = !overlay.highlighted.is_empty();
    // The highlight's bands, read once per highlight and layout. Drawn without them (an export, a
    // test), they are read here when few; a frame of millions fills those wide enough and marks the
    // slivers once they are read in the background.
    let read_here;
    let lit = match overlay.lit {
        Some(lit) => lit,
        None if dim && overlay.highlighted.len() <= LIT_IN_A_FRAME => {
            read_here = LitBands::of(layout, overlay.highlighted);
            &read_here
        }
        None if dim => {
            read_here = LitBands::allocations(overlay.highlighted);
            &read_here
        }
        None => &LitBands::default(),
    };
    let hovered = overlay
        .hovered
        .filter(|&(i, a)| layout.bands.get(i).is_some_and(|b| b.allocation == a))
        .map(|(i, _)| i);
    let pinned = overlay.pinned.and_then(|a| layout.band_of(a));
    // A band from entry `start` to `last` (past its end: a band that ends where it starts spans one
    // entry as drawn), `size` bytes tall.
    let (x0, x1) = (f.view.x0 - 1.0, f.view.x1 + 1.0);
    let in_view = |start: f64, last: f64| !(last < x0 || start > x1);
    // Too thin or too narrow to see filled. Under half a pixel wide on screen, the live area already
    // shades it (millions of short-lived allocations at full view would otherwise each be a path).
    let unseen = |start: f64, last: f64, size: f64| {
        let narrow = f.px(last.min(f.view.x1)) - f.px(start.max(f.view.x0)) < 0.5;
        size < min_bytes || narrow
    };
    let extent = |b: &Band| {
        let start = f64::from(b.start);
        (start, f64::from(b.end).max(start + 1.0), b.size as f64)
    };
    // A band's steps filled into `pixels` when there are (a canvas), else as a path.
    let fill = |i: usize, b: &Band, steps: &mut Steps, pixels: Option<&mut Pixels>| {
        band_steps(f, layout, i, steps);
        if steps.0.is_empty() {
            return;
        }
        let lit = dim && lit.is_lit(b.allocation);
        let alpha = if dim && !lit { 0.25 } else { 1.0 };
        let colour = match overlay.categories {
            Some((of, n)) => colors::category(of[b.allocation as usize], n),
            None => colors::allocation(b.allocation),
        };
        let size = b.size as f64;
        match pixels {
            Some(pixels) => {
                let value = pixels::rgba(colour, alpha);
                for &(a, z, off) in &steps.0 {
                    pixels.fill(a, z, f.py(off), f.py(off + size), value);
                }
            }
            None => {
                ctx.set_global_alpha(alpha);
                ctx.set_fill_style_str(colour);
                trace_band(s, f, steps, size);
                ctx.fill();
            }
        }
    };
    // On a canvas the bands are a raster filled here, drawn at once (a path each cost most of a
    // fully detailed frame: see `crate::pixels`).
    let mut raster = s.pixel_ratio.map(|ratio| Pixels::over(&f.plot, ratio));
    // Only the bands long enough to be half a pixel wide here, found by span (a fully detailed 2 GB
    // snapshot has 6 M bands, nearly all narrower than that at full view).
    let min_span = (0.5 * (f.view.x1 - f.view.x0) / f.plot.width.max(1.0)).floor();
    let (vx0, vx1) = (x0.max(0.0) as u32, x1.clamp(0.0, u32::MAX as f64) as u32);
    let wide = layout.bands_in(vx0, vx1, min_span.clamp(0.0, u32::MAX as f64) as u32);
    for i in wide {
        let b = &layout.bands[i];
        let (start, last, size) = extent(b);
        if Some(i) == hovered
            || Some(i) == pinned
            || !in_view(start, last)
            || unseen(start, last, size)
        {
            continue;
        }
        fill(i, b, &mut steps, raster.as_mut());
    }
    if let Some(raster) = raster {
        ctx.draw_pixels(&raster);
    }
    // Hovered and pinned bands are filled however thin, and outlined below.
    for i in [hovered, pinned.filter(|&p| Some(p) != hovered)]
        .into_iter()
        .flatten()
    {
        let b = &layout.bands[i];
        let (start, last, _) = extent(b);
        if in_view(start, last) {
            fill(i, b, &mut steps, None);
        }
    }
    ctx.set_global_alpha(1.0);
    // Highlighted bands too thin or narrow to see filled: the pixels they touch, marked after the others,
    // at least a pixel each, so what was picked is never invisible (a search can pick a million of them:
    // a path each, or one path of them all, takes seconds to rasterise; the marked pixels cost what the
    // plot's area does). A big highlight's slivers come from its raster when the view's pixels are at
    // least a cell of it each (a frame then costs its pixels), the rest one by one.
    let mut mask: Option<Mask> = None;
    let mark = |l: &LitBand, steps: &mut Steps, mask: &mut Option<Mask>| {
        let i = l.band as usize;
        if Some(i) == hovered || Some(i) == pinned {
            return;
        }
        let (start, last, size) = (f64::from(l.start), l.last(), f64::from(l.size));
        if !in_view(start, last) || !unseen(start, last, size) {
            return;
        }
        let mask = mask.get_or_insert_with(|| Mask::new(&f.plot));
        if !l.offset.is_nan() {
            // A band that never moves: one step, without the general walk.
            let (a, z) = (start.max(x0), last.min(x1));
            if z > a {
                let off = f64::from(l.offset);
                mask.cover(f.px(a), f.px(z), f.py(off + size), f.py(off));
            }
            return;
        }
        band_steps(f, layout, i, steps);
        for &(a, z, off) in &steps.0 {
            mask.cover(a, z, f.py(off + size), f.py(off));
        }
    };
    match lit
        .raster
        .as_ref()
        .and_then(|r| RasterColumns::fit(f, r).map(|c| (r, c)))
    {
        Some((raster, columns)) => {
            columns.mark(f, raster, mask.get_or_insert_with(|| Mask::new(&f.plot)));
            for &k in raster.unheld(columns.level) {
                mark(&lit.bands[k as usize], &mut steps, &mut mask);
            }
        }
        None => {
            for l in lit.reaching(vx0, vx1) {
                mark(l, &mut steps, &mut mask);
            }
        }
    }
    if let Some(mask) = mask {
        ctx.set_fill_style_str(theme.highlight);
        mask.fill(s);
    }
    for (i, width) in [(hovered, 1.5), (pinned, 2.5)] {
        let Some(i) = i else { continue };
        band_steps(f, layout, i, &mut steps);
        if steps.0.is_empty() {
            continue;
        }
        ctx.set_stroke_style_str(theme.highlight);
        ctx.set_line_width(width);
        trace_band(s, f, &steps, layout.bands[i].size as f64);
        ctx.stroke();
    }
}

fn draw_summary<P: Pen>(s: &Surface<P>, f: &Scale, model: &TimelineModel, theme: &Theme) {
    let pts = &model.layout.summary;
    if !model.summary.any() {
        return;
    }
    let ctx = &s.ctx;
    let end = model.layout.x_len as f64;
    // One (left, right, bottom y, top y) step per pixel column at most: the outline of the points in
    // force over it (lowest bottom, highest top), so a frame costs the width, not the trace length (a
    // huge trace's summary holds millions of points).
    let mut steps: Vec<(f64, f64, f64, f64)> = Vec::with_capacity(f.plot.width as usize + 2);
    for c in 0..f.plot.width.ceil() as usize {
        let left = f.plot.left + c as f64;
        let (a, b) = (f.x_at(left), f.x_at(left + 1.0));
        if a >= end {
            break;
        }
        // From the last point at or before `a` through the last one before `b`.
        let lo = pts.partition_point(|p| (p.x as f64) <= a).saturating_sub(1);
        let hi = pts.partition_point(|p| (p.x as f64) < b);
        let Some((bottom, top)) = model.summary.over(pts, lo, hi.max(lo + 1)) else {
            continue;
        };
        let (yb, yt) = (f.py(bottom as f64), f.py(top as f64));
        match steps.last_mut() {
            Some(last) if last.1 == left && last.2 == yb && last.3 == yt => last.1 = left + 1.0,
            _ => steps.push((left, left + 1.0, yb, yt)),
        }
    }
    if steps.is_empty() {
        return;
    }
    ctx.begin_path();
    ctx.move_to(steps[0].0, steps[0].2);
    for &(a, z, yb, _) in &steps {
        ctx.line_to(a, yb);
        ctx.line_to(z, yb);
    }
    for &(a, z, _, yt) in steps.iter().rev() {
        ctx.line_to(z, yt);
        ctx.line_to(a, yt);
    }
    ctx.close_path();
    ctx.set_fill_style_str(theme.summarized);
    ctx.fill();
}

fn draw_peak<P: Pen>(s: &Surface<P>, f: &Scale, model: &TimelineModel, theme: &Theme) {
    let ctx = &s.ctx;
    // An entry's moment is the middle of its column; a peak before the first entry (memory held
    // before recording, the whole trace one `snapshot` entry) stands at the left edge.
    let x = if model.peak.event < 0 {
        0.0
    } else {
        model.peak.event as f64 + 0.5
    };
    let Some(px) = entry_line(s, f, x, theme.peak, 1.0, &[4.0, 3.0]) else {
        return;
    };
    ctx.set_fill_style_str(theme.peak);
    ctx.set_font("bold 11px system-ui, sans-serif");
    let label = format!("peak {}", bytes(model.peak.bytes));
    // Clear of the line and of the analysis' marker head (10 px wide) when it stands at the peak.
    const GAP: f64 = 8.0;
    let right = px + GAP + 90.0 > f.plot.left + f.plot.width;
    ctx.set_text_align(if right { "right" } else { "left" });
    ctx.set_text_baseline("top");
    ctx.fill_text(
        &label,
        if right { px - GAP } else { px + GAP },
        f.plot.top + 2.0,
    );
}

/// A vertical line across the plot at entry position `x`, `width` pixels wide and dashed as `dash`
/// says (empty: solid); the pixel column it is drawn at, `None` (nothing drawn) when `x` is out of view.
fn entry_line<P: Pen>(
    s: &Surface<P>,
    f: &Scale,
    x: f64,
    color: &str,
    width: f64,
    dash: &[f64],
) -> Option<f64> {
    if x < f.view.x0 || x > f.view.x1 {
        return None;
    }
    let ctx = &s.ctx;
    let px = f.px(x).round() + 0.5;
    ctx.set_stroke_style_str(color);
    ctx.set_line_width(width);
    ctx.set_line_dash(dash);
    ctx.begin_path();
    ctx.move_to(px, f.plot.top);
    ctx.line_to(px, f.plot.top + f.plot.height);
    ctx.stroke();
    ctx.set_line_dash(&[]);
    Some(px)
}

/// A solid line at each out-of-memory entry, labelled below the peak's label (a label only where the
/// last one left room).
fn draw_ooms<P: Pen>(s: &Surface<P>, f: &Scale, ooms: &[OomMark], theme: &Theme) {
    let ctx = &s.ctx;
    let mut labelled_to = f64::NEG_INFINITY;
    for m in ooms {
        let Some(px) = entry_line(s, f, f64::from(m.entry) + 0.5, theme.peak, 2.0, &[]) else {
            continue;
        };
        if px > labelled_to {
            const LABEL: &str = "✕ out of memory";
            const WIDTH: f64 = 96.0;
            let right = px + 6.0 + WIDTH > f.plot.left + f.plot.width;
            ctx.set_fill_style_str(theme.peak);
            ctx.set_font("bold 11px system-ui, sans-serif");
            ctx.set_text_align(if right { "right" } else { "left" });
            ctx.set_text_baseline("top");
            let at = if right { px - 6.0 } else { px + 6.0 };
            ctx.fill_text(LABEL, at, f.plot.top + 18.0);
            labelled_to = px + 6.0 + WIDTH;
        }
    }
}

fn draw_annotations<P: Pen>(s: &Surface<P>, f: &Scale, spans: &[AnnotationSpan], theme: &Theme) {
    let ctx = &s.ctx;
    ctx.set_font("10px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    let right = f.plot.left + f.plot.width;
    // Spans come by start, so the next of a row is the first after it in that row.
    for (k, a) in spans.iter().enumerate() {
        if a.row >= ANNOTATION_ROWS || a.end < f.view.x0 || a.start > f.view.x1 {
            continue;
        }
        let (x0, x1) = (f.px(a.start.max(f.view.x0)), f.px(a.end.min(f.view.x1)));
        let (y, height) = annotation_strip(a.row);
        ctx.set_fill_style_str(theme.annotation);
        ctx.fill_rect(x0, y, (x1 - x0).max(1.0), height);
        ctx.fill_rect(x0, f.plot.top, (x1 - x0).max(1.0), f.plot.height);
        // A span too narrow for its name (a step's `zero_grad` is a line) is named in the room after
        // it, up to the next span of its row.
        let room = if x1 - x0 > 40.0 {
            x1 - x0
        } else {
            let next = spans[k + 1..]
                .iter()
                .find(|b| b.row == a.row)
                .map_or(right, |b| f.px(b.start.max(f.view.x0)));
            next.min(right) - x0
        };
        if room > 40.0 {
            ctx.set_fill_style_str(theme.text);
            ctx.save();
            ctx.begin_path();
            ctx.rect(x0, y, room, ANNOTATION_ROW);
            ctx.clip();
            ctx.fill_text(&a.name, x0 + 3.0, y + height / 2.0);
            ctx.restore();
        }
    }
}

/// A thin dashed line at each of `xs` (where the trace's steps begin, in order), under the marker: one
/// path, and none closer than 4 pixels to the last (thousands of steps are a shade, not thousands of
/// strokes).
pub fn draw_boundaries<P: Pen>(s: &Surface<P>, f: &Scale, xs: &[f64], theme: &Theme) {
    let ctx = &s.ctx;
    ctx.set_stroke_style_str(theme.muted);
    ctx.set_line_width(1.0);
    ctx.set_line_dash(&[3.0, 3.0]);
    ctx.begin_path();
    let mut last = f64::NEG_INFINITY;
    for &x in xs.iter().filter(|&&x| x >= f.view.x0 && x <= f.view.x1) {
        let px = f.px(x).round() + 0.5;
        if px - last >= 4.0 {
            ctx.move_to(px, f.plot.top);
            ctx.line_to(px, f.plot.top + f.plot.height);
            last = px;
        }
    }
    ctx.stroke();
    ctx.set_line_dash(&[]);
}

/// A vertical line at entry `x` across the plot: the entry the analysis panels describe.
pub fn draw_marker<P: Pen>(s: &Surface<P>, f: &Scale, x: f64, theme: &Theme) {
    let Some(px) = entry_line(s, f, x, theme.highlight, 2.0, &[]) else {
        return;
    };
    let ctx = &s.ctx;
    ctx.set_fill_style_str(theme.highlight);
    ctx.begin_path();
    ctx.move_to(px - 5.0, f.plot.top);
    ctx.line_to(px + 5.0, f.plot.top);
    ctx.line_to(px, f.plot.top + 7.0);
    ctx.close_path();
    ctx.fill();
}
