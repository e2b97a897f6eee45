//! The visible window of a timeline and the mapping between entries/bytes and pixels. Pure math.

/// Which part of the timeline is on screen: entries `[x0, x1)` and bytes `[0, y_max)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    pub x0: f64,
    pub x1: f64,
    pub y_max: f64,
}

/// Fewest entries a view may span when zoomed in.
const MIN_SPAN: f64 = 4.0;

impl Viewport {
    pub fn full(x_len: f64, y_max: f64) -> Viewport {
        Viewport {
            x0: 0.0,
            x1: x_len.max(1.0),
            y_max: y_max.max(1.0) * 1.05,
        }
    }

    pub fn span(&self) -> f64 {
        self.x1 - self.x0
    }

    /// Zoom by `factor` (< 1 zooms in) around the point at fraction `at` (0–1) of the width.
    pub fn zoom(&self, factor: f64, at: f64, x_len: f64) -> Viewport {
        let span = (self.span() * factor).clamp(MIN_SPAN.min(x_len), x_len.max(1.0));
        let center = self.x0 + self.span() * at.clamp(0.0, 1.0);
        let x0 = center - span * at.clamp(0.0, 1.0);
        Viewport {
            x0,
            x1: x0 + span,
            y_max: self.y_max,
        }
        .clamped(x_len)
    }

    /// The view of `span` entries from `x0`, as near as the closest zoom and the trace's ends allow.
    pub fn spanning(x0: f64, span: f64, y_max: f64, x_len: f64) -> Viewport {
        let span = span.clamp(MIN_SPAN.min(x_len), x_len.max(1.0));
        Viewport {
            x0,
            x1: x0 + span,
            y_max,
        }
        .clamped(x_len)
    }

    /// Pan by a fraction of the width (positive: later entries).
    pub fn pan(&self, fraction: f64, x_len: f64) -> Viewport {
        let d = self.span() * fraction;
        Viewport {
            x0: self.x0 + d,
            x1: self.x1 + d,
            y_max: self.y_max,
        }
        .clamped(x_len)
    }

    /// The view moved, its span kept, so that entry `x` is in it: as it is when `x` already is,
    /// else centred on `x` (as near as the trace's ends allow).
    pub fn showing(&self, x: f64, x_len: f64) -> Viewport {
        if (self.x0..self.x1).contains(&x) {
            return *self;
        }
        let half = self.span() / 2.0;
        Viewport {
            x0: x - half,
            x1: x + half,
            y_max: self.y_max,
        }
        .clamped(x_len)
    }

    /// The view moved, its span kept, so that some of entries `[x0, x1]` are in it: as it is when
    /// they already are, else centred on the range (on its start, when the range is wider than the
    /// view: where it begins is what there is to see).
    pub fn showing_range(&self, x0: f64, x1: f64, x_len: f64) -> Viewport {
        if x0 < self.x1 && x1 >= self.x0 {
            return *self;
        }
        let at = if x1 - x0 < self.span() {
            (x0 + x1) / 2.0
        } else {
            x0
        };
        self.showing(at, x_len)
    }

    /// The view moved into the trace (`0..x_len`), its span kept where it fits.
    pub fn clamped(mut self, x_len: f64) -> Viewport {
        let span = self.span().min(x_len.max(1.0));
        if self.x0 < 0.0 {
            self.x0 = 0.0;
        }
        if self.x0 + span > x_len {
            self.x0 = (x_len - span).max(0.0);
        }
        self.x1 = self.x0 + span;
        self
    }
}

/// "Nice" tick values covering `[lo, hi]`, about `count` of them (1, 2, 5 × 10^k steps).
pub fn nice_ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    if hi <= lo || count == 0 {
        return vec![lo];
    }
    let raw = (hi - lo) / count as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    (0..)
        .map(|i| first + i as f64 * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .collect()
}

/// The decimals that tell `ticks` (as [`nice_ticks`] makes them: evenly spaced) apart, at least
/// `least` and at most 6: a wall-clock axis zoomed in to microseconds read "1.234 s" at every tick.
pub fn tick_decimals(ticks: &[f64], least: usize) -> usize {
    match ticks {
        [a, b, ..] => memograph_snapshot::format::tick_decimals(b - a).max(least),
        _ => least,
    }
}

/// Byte ticks on binary boundaries (powers of 1024 times 1, 2, 5 … of the unit), about `count`; an
/// axis of a few bytes has whole bytes only (it read "0 B" five times).
pub fn byte_ticks(max: f64, count: usize) -> Vec<f64> {
    let unit = [1u64 << 40, 1 << 30, 1 << 20, 1 << 10, 1]
        .into_iter()
        .find(|&u| max / u as f64 >= 1.0)
        .unwrap_or(1) as f64;
    nice_ticks(0.0, max / unit, count)
        .into_iter()
        .map(|v| v * unit)
        .filter(|v| unit > 1.0 || v.fract() == 0.0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_have_the_decimals_their_step_needs() {
        assert_eq!(tick_decimals(&nice_ticks(0.0, 12.0, 8), 3), 3);
        // Zoomed in to a few microseconds: ticks a microsecond apart.
        let fine = nice_ticks(1.234_001, 1.234_008, 8);
        assert_eq!(tick_decimals(&fine, 3), 6);
        let labels: Vec<String> = fine.iter().map(|t| format!("{t:.6}")).collect();
        let mut distinct = labels.clone();
        distinct.dedup();
        assert_eq!(labels, distinct);
        assert_eq!(tick_decimals(&nice_ticks(0.0, 0.05, 8), 3), 3);
        assert_eq!(tick_decimals(&nice_ticks(0.0, 0.002, 8), 3), 4);
        // One tick, or none: the least.
        assert_eq!(tick_decimals(&[5.0], 3), 3);
        assert_eq!(tick_decimals(&[], 2), 2);
        assert_eq!(tick_decimals(&[1.0, f64::NAN], 2), 2);
    }

    #[test]
    fn zooming_keeps_the_point_under_the_cursor() {
        let v = Viewport::full(1000.0, 10.0);
        let z = v.zoom(0.5, 0.25, 1000.0);
        assert_eq!(z.span(), 500.0);
        assert!((z.x0 + 0.25 * z.span() - 250.0).abs() < 1e-9);
        let back = z.zoom(4.0, 0.5, 1000.0);
        assert_eq!((back.x0, back.x1), (0.0, 1000.0));
    }

    #[test]
    fn panning_stops_at_the_edges() {
        let v = Viewport::full(1000.0, 10.0).zoom(0.1, 0.5, 1000.0);
        assert_eq!(v.pan(-100.0, 1000.0).x0, 0.0);
        assert_eq!(v.pan(100.0, 1000.0).x1, 1000.0);
    }

    #[test]
    fn showing_an_entry_moves_the_view_only_when_it_is_out_of_it() {
        let v = Viewport::full(1000.0, 10.0).zoom(0.1, 0.5, 1000.0);
        assert_eq!((v.x0, v.x1), (450.0, 550.0));
        assert_eq!(v.showing(500.5, 1000.0), v);
        let right = v.showing(700.5, 1000.0);
        assert_eq!((right.x0, right.x1, right.y_max), (650.5, 750.5, v.y_max));
        let end = v.showing(999.5, 1000.0);
        assert_eq!((end.x0, end.x1), (900.0, 1000.0));
        let start = v.showing(0.5, 1000.0);
        assert_eq!((start.x0, start.x1), (0.0, 100.0));
    }

    #[test]
    fn showing_a_range_moves_the_view_only_when_none_of_it_is_in_view() {
        let v = Viewport::full(1000.0, 10.0).zoom(0.1, 0.5, 1000.0);
        assert_eq!((v.x0, v.x1), (450.0, 550.0));
        // Partly in view, or covering the whole view: unchanged.
        assert_eq!(v.showing_range(540.0, 600.0, 1000.0), v);
        assert_eq!(v.showing_range(100.0, 900.0, 1000.0), v);
        // A short range out of view: centred on it.
        let short = v.showing_range(700.0, 720.0, 1000.0);
        assert_eq!((short.x0, short.x1, short.y_max), (660.0, 760.0, v.y_max));
        // A range wider than the view: centred on where it begins.
        let wide = v.showing_range(600.0, 900.0, 1000.0);
        assert_eq!((wide.x0, wide.x1), (550.0, 650.0));
        // An instant (a span without allocator events is a point).
        let point = v.showing_range(20.0, 20.0, 1000.0);
        assert_eq!((point.x0, point.x1), (0.0, 100.0));
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let t = byte_ticks(54.8e9, 5);
        assert!(
            t.iter().all(|v| (v / (1u64 << 30) as f64).fract() == 0.0),
            "{t:?}"
        );
        assert_eq!(byte_ticks(1.05, 5), vec![0.0, 1.0]);
        assert_eq!(byte_ticks(1.05 * 1048576.0, 6).len(), 6);
        assert_eq!(byte_ticks(8.4, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
    }
}
