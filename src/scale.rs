//! The one mapping between a timeline's pixels and its entries and bytes, shared by drawing and input.
//!
//! A [`Scale`] is made once per drawn frame from the canvas size, the [`Viewport`] and (with the
//! wall-clock axis) the entries' times. The renderer draws with it; the view keeps the last frame's
//! [`Plot`] and viewport, and hit-testing, wheel zoom, drag pan and the minimap brush all go through the
//! same functions, so what is under the cursor is what was drawn there.

use crate::touch::pinched_range;
use crate::viewport::Viewport;

/// Space left of the plot (the byte axis), right of it, and below it (the entry or time axis).
pub const LEFT: f64 = 72.0;
pub const RIGHT: f64 = 12.0;
pub const BOTTOM: f64 = 26.0;
/// Height of one row of annotation spans above the plot (at most four rows are shown).
pub const ANNOTATION_ROW: f64 = 15.0;
/// Annotation rows drawn above the plot, at most.
pub const ANNOTATION_ROWS: usize = 4;

/// Top and height of annotation row `row`'s strip above the plot: the same for drawing and pointing.
pub fn annotation_strip(row: usize) -> (f64, f64) {
    (6.0 + row as f64 * ANNOTATION_ROW, ANNOTATION_ROW - 2.0)
}

/// The annotation row whose strip holds `py`, if any (of the `rows` drawn).
pub fn annotation_row_at(py: f64, rows: usize) -> Option<usize> {
    (0..rows.min(ANNOTATION_ROWS)).find(|&row| {
        let (top, height) = annotation_strip(row);
        py >= top && py < top + height
    })
}

/// Where the plot lies on its canvas, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plot {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

impl Plot {
    /// The plot area of a `width` × `height` canvas with `annotation_rows` rows of spans above it.
    pub fn of(width: f64, height: f64, annotation_rows: usize) -> Plot {
        let top = 8.0 + annotation_rows.min(ANNOTATION_ROWS) as f64 * ANNOTATION_ROW;
        Plot {
            left: LEFT,
            top,
            width: (width - LEFT - RIGHT).max(10.0),
            height: (height - top - BOTTOM).max(10.0),
        }
    }

    /// The strip of a `width`-wide minimap: the same horizontal extent as the plot above it.
    pub fn minimap(width: f64, height: f64) -> Plot {
        Plot {
            left: LEFT,
            top: 0.0,
            width: (width - LEFT - RIGHT).max(1.0),
            height,
        }
    }

    /// Fraction (0–1) of the width at pixel `px`, clamped.
    pub fn fraction_at(&self, px: f64) -> f64 {
        ((px - self.left) / self.width).clamp(0.0, 1.0)
    }

    pub fn contains_x(&self, px: f64) -> bool {
        px >= self.left && px <= self.left + self.width
    }
}

/// Entries and bytes ↔ pixels for one frame. With `times` (each entry's `time_us`) x is wall-clock time:
/// an entry sits where its time falls between the view's first and last times.
#[derive(Debug, Clone, Copy)]
pub struct Scale<'a> {
    pub view: Viewport,
    pub plot: Plot,
    pub times: Option<&'a [i64]>,
    /// The view's ends on the axis (entries or times), worked out once: a frame maps millions of x.
    range: (f64, f64),
    /// Pixels per axis unit and per byte, worked out once too (a division per point cost a frame with
    /// a million highlighted slivers a third of its time).
    per_x: f64,
    per_byte: f64,
}

impl<'a> Scale<'a> {
    pub fn new(view: Viewport, plot: Plot, times: Option<&'a [i64]>) -> Scale<'a> {
        // No times, or too few to span anything: the entry axis.
        let times = times.filter(|t| t.len() >= 2);
        let range = match times {
            Some(t) => (Self::time_at(t, view.x0), Self::time_at(t, view.x1)),
            None => (view.x0, view.x1),
        };
        let (a, b) = range;
        Scale {
            view,
            plot,
            times,
            range,
            per_x: if b > a { plot.width / (b - a) } else { 0.0 },
            per_byte: plot.height / view.y_max,
        }
    }

    /// The time at (fractional) entry `x`, interpolated between entries.
    fn time_at(t: &[i64], x: f64) -> f64 {
        let n = t.len();
        let i = x.floor().clamp(0.0, (n - 1) as f64) as usize;
        let j = (i + 1).min(n - 1);
        let f = (x - i as f64).clamp(0.0, 1.0);
        t[i] as f64 + (t[j] - t[i]) as f64 * f
    }

    /// The (fractional) entry at time `time`: the inverse of [`Self::time_at`] (times never decrease;
    /// where several entries share a time, the last of them).
    fn entry_at_time(t: &[i64], time: f64) -> f64 {
        let n = t.len();
        let k = t.partition_point(|&v| (v as f64) <= time);
        if k == 0 {
            return 0.0;
        }
        if k >= n {
            return (n - 1) as f64;
        }
        let (a, b) = (t[k - 1] as f64, t[k] as f64);
        let f = if b > a { (time - a) / (b - a) } else { 0.0 };
        (k - 1) as f64 + f.clamp(0.0, 1.0)
    }

    /// The view's extent on the x axis: entries, or times with the wall-clock axis.
    fn axis_range(&self) -> (f64, f64) {
        self.range
    }

    /// Entry `x` on the axis (entry or time).
    fn axis_of(&self, x: f64) -> f64 {
        match self.times {
            Some(t) => Self::time_at(t, x),
            None => x,
        }
    }

    /// The entry at axis value `v`.
    fn entry_of(&self, v: f64) -> f64 {
        match self.times {
            Some(t) => Self::entry_at_time(t, v),
            None => v,
        }
    }

    /// With the wall-clock axis: the trace's first time and the view's first and last, in µs.
    pub fn time_range(&self) -> Option<(f64, f64, f64)> {
        let t = self.times?;
        let (a, b) = self.axis_range();
        Some((t[0] as f64, a, b))
    }

    /// Pixel column of time `time` (µs) on the wall-clock axis.
    pub fn px_at_time(&self, time: f64) -> f64 {
        let (a, b) = self.axis_range();
        let frac = if b > a { (time - a) / (b - a) } else { 0.0 };
        self.plot.left + frac * self.plot.width
    }

    /// Pixel column of (fractional) entry `x`.
    pub fn px(&self, x: f64) -> f64 {
        self.plot.left + (self.axis_of(x) - self.range.0) * self.per_x
    }

    /// The (fractional) entry at pixel column `px`, within the view.
    pub fn x_at(&self, px: f64) -> f64 {
        let (a, b) = self.axis_range();
        let v = a + (b - a) * self.plot.fraction_at(px);
        self.entry_of(v).clamp(self.view.x0, self.view.x1)
    }

    /// The entry a click at `px` lands on (the right edge maps to the last entry), given `x_len` entries.
    pub fn entry_at(&self, px: f64, x_len: u32) -> u32 {
        (self.x_at(px).floor().max(0.0) as u32).min(x_len.saturating_sub(1))
    }

    pub fn py(&self, bytes: f64) -> f64 {
        self.plot.top + self.plot.height - bytes * self.per_byte
    }

    pub fn bytes_at(&self, py: f64) -> f64 {
        (self.plot.top + self.plot.height - py) / self.plot.height * self.view.y_max
    }

    /// The view zoomed by `factor` (< 1 zooms in) around pixel `px`: what is under the cursor stays
    /// under it, on the entry axis and on the wall-clock axis alike.
    pub fn zoom_at(&self, px: f64, factor: f64, x_len: f64) -> Viewport {
        if self.times.is_none() {
            return self.view.zoom(factor, self.plot.fraction_at(px), x_len);
        }
        let (a, b) = self.axis_range();
        let at = a + (b - a) * self.plot.fraction_at(px);
        let (na, nb) = (at - (at - a) * factor, at + (b - at) * factor);
        self.with_axis_range(na, nb, x_len)
    }

    /// The view two fingers pinched to, from pixels `from` to pixels `to` (their x; see
    /// [`pinched_range`]), as near as the trace's ends and the closest zoom allow.
    pub fn pinched(&self, from: (f64, f64), to: (f64, f64), x_len: f64) -> Viewport {
        let plot = (self.plot.left, self.plot.width);
        let (start, span) = pinched_range(self.axis_range(), plot, from, to);
        if self.times.is_none() {
            return Viewport::spanning(start, span, self.view.y_max, x_len);
        }
        // Within the trace, the span kept where it fits (as a drag keeps it).
        let (first, last) = (self.axis_of(0.0), self.axis_of(x_len));
        let span = span.min(last - first);
        let start = start.clamp(first, last - span);
        self.with_axis_range(start, start + span, x_len)
    }

    /// The view moved by `dx` pixels of the plot (positive: later), as a drag moves it.
    pub fn pan_by_px(&self, dx: f64, x_len: f64) -> Viewport {
        if self.times.is_none() {
            return self.view.pan(dx / self.plot.width, x_len);
        }
        let (a, b) = self.axis_range();
        let d = (b - a) * dx / self.plot.width;
        // Keep the span: shift as far as the trace allows.
        let (first, last) = (self.axis_of(0.0), self.axis_of(x_len));
        let d = d.clamp(first - a, last - b);
        self.with_axis_range(a + d, b + d, x_len)
    }

    /// The viewport whose wall-clock range is `[a, b]`, within the trace. A view narrower than a
    /// thousandth of an entry is refused (the view stays), so what is under the cursor never moves.
    fn with_axis_range(&self, a: f64, b: f64, x_len: f64) -> Viewport {
        let (x0, x1) = (self.entry_of(a).max(0.0), self.entry_of(b).min(x_len));
        if x1 - x0 < 1e-3 {
            return self.view;
        }
        Viewport {
            x0,
            x1,
            y_max: self.view.y_max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plot() -> Plot {
        Plot::of(1000.0 + LEFT + RIGHT, 400.0, 0)
    }

    #[test]
    fn pixels_and_entries_round_trip_on_the_entry_axis() {
        let s = Scale::new(Viewport::full(500.0, 100.0), plot(), None);
        for x in [0.0, 1.5, 250.0, 499.0] {
            assert!((s.x_at(s.px(x)) - x).abs() < 1e-9);
        }
        assert_eq!(s.entry_at(s.plot.left + s.plot.width, 500), 499);
        assert!((s.bytes_at(s.py(40.0)) - 40.0).abs() < 1e-9);
    }

    #[test]
    fn annotation_strips_lie_above_the_plot_and_the_pointer_finds_them() {
        let rows = 2;
        let plot = Plot::of(800.0, 400.0, rows);
        let (top, height) = annotation_strip(rows - 1);
        assert!(top + height <= plot.top);
        assert_eq!(annotation_row_at(annotation_strip(0).0, rows), Some(0));
        assert_eq!(annotation_row_at(top + height - 0.5, rows), Some(1));
        // Between strips, below them, and rows that are not drawn.
        assert_eq!(annotation_row_at(annotation_strip(1).0 - 1.0, rows), None);
        assert_eq!(annotation_row_at(plot.top + 1.0, rows), None);
        assert_eq!(annotation_row_at(annotation_strip(2).0, rows), None);
        assert_eq!(annotation_row_at(annotation_strip(4).0, 9), None);
    }

    /// Times that bunch up: most entries in the first tenth of the time, then a long gap.
    fn bunched(n: usize) -> Vec<i64> {
        (0..n)
            .map(|i| {
                if i < n - 10 {
                    i as i64
                } else {
                    100_000 + i as i64 * 1000
                }
            })
            .collect()
    }

    #[test]
    fn pixels_and_entries_round_trip_on_the_wall_clock_axis() {
        let times = bunched(400);
        let s = Scale::new(Viewport::full(399.0, 100.0), plot(), Some(&times));
        for x in [0.0, 10.0, 389.5, 392.25, 398.0] {
            assert!(
                (s.x_at(s.px(x)) - x).abs() < 1e-6,
                "{x}: {}",
                s.x_at(s.px(x))
            );
        }
    }

    #[test]
    fn a_pinch_keeps_what_was_under_each_finger_under_it_with_either_axis() {
        let times = bunched(400);
        for times in [None, Some(times.as_slice())] {
            let s = Scale::new(Viewport::full(399.0, 100.0), plot(), times);
            let px = |x: f64| s.plot.left + x;
            let from = (px(300.0), px(500.0));
            // Apart, then together again; and a pinch that moves.
            let spread = (px(100.0), px(850.0));
            let next = Scale::new(s.pinched(from, spread, 399.0), s.plot, times);
            for (f, t) in [(from.0, spread.0), (from.1, spread.1)] {
                assert!((next.x_at(t) - s.x_at(f)).abs() < 1e-6, "{times:?}");
            }
            assert!(next.view.span() < s.view.span() / 2.0);
            let back = next.pinched(spread, from, 399.0);
            assert!((back.x0 - s.view.x0).abs() < 1e-6 && (back.x1 - s.view.x1).abs() < 1e-6);
            let moved = (px(60.0), px(790.0));
            let after = Scale::new(next.pinched(spread, moved, 399.0), s.plot, times);
            let mid = |(a, b): (f64, f64)| (a + b) / 2.0;
            assert!((after.x_at(mid(moved)) - next.x_at(mid(spread))).abs() < 1e-6);
            // One finger over the other: no zoom, however their x moves.
            let stacked = s.pinched((500.0, 510.0), (300.0, 600.0), 399.0);
            assert!((stacked.span() - s.view.span()).abs() < 1e-9);
            assert_eq!(stacked.y_max, s.view.y_max);
        }
    }

    #[test]
    fn wheel_zoom_keeps_the_entry_under_the_cursor_with_either_axis() {
        let times = bunched(400);
        for times in [None, Some(times.as_slice())] {
            let mut s = Scale::new(Viewport::full(399.0, 100.0), plot(), times);
            let px = s.px(393.5);
            for factor in [0.5, 0.5, 0.8, 1.25, 0.3] {
                let before = s.x_at(px);
                s = Scale::new(s.zoom_at(px, factor, 399.0), s.plot, times);
                let after = s.x_at(px);
                assert!(
                    (after - before).abs() < 0.01,
                    "{}: {before} → {after}",
                    if times.is_some() { "time" } else { "entries" }
                );
            }
        }
    }

    #[test]
    fn dragging_moves_what_was_under_the_cursor_with_it() {
        let times = bunched(400);
        for times in [None, Some(times.as_slice())] {
            let full = Viewport::full(399.0, 100.0);
            let first = Scale::new(full, plot(), times);
            let zoomed = first.zoom_at(first.px(200.0), 0.25, 399.0);
            assert_ne!(zoomed, full);
            let s = Scale::new(zoomed, plot(), times);
            let (from, dx) = (s.plot.left + 600.0, -80.0);
            let grabbed = s.x_at(from);
            let moved = Scale::new(s.pan_by_px(-dx, 399.0), s.plot, times);
            assert!(
                (moved.x_at(from + dx) - grabbed).abs() < 0.01,
                "{:?} {:?} {grabbed} {}",
                s.view,
                moved.view,
                moved.x_at(from + dx)
            );
        }
    }
}
