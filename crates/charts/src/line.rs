//! Line charts: axes over an x range with a byte axis, the labels of counts and shares on them, where
//! the plot lies ([`PlotArea`], shared by drawing and the pointer), and dash patterns in pixels.

use memograph_snapshot::format::tick_decimals;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::{builder, unit, Result, Theme};

pub(crate) type LineChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Where the overlaid chart put its plot, to map the pointer back to x: the plot's pixel range and the
/// x range it shows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlotArea {
    pub x: (i32, i32),
    pub y: (i32, i32),
    pub x_range: (f64, f64),
}

impl PlotArea {
    /// The pixel column of x value `x` (the inverse of [`Self::x_at`]), if it is in the range shown:
    /// where a rule drawn apart from the chart (the page's pointer line) goes.
    pub fn px_of(&self, x: f64) -> Option<f64> {
        let (x0, x1) = self.x_range;
        if !(x0..=x1).contains(&x) || x1 <= x0 {
            return None;
        }
        Some(f64::from(self.x.0) + (x - x0) / (x1 - x0) * f64::from(self.x.1 - self.x.0))
    }

    /// The x value at pixel `px`, if it is over the plot.
    pub fn x_at(&self, px: i32) -> Option<f64> {
        if px < self.x.0 || px > self.x.1 || self.x.1 <= self.x.0 {
            return None;
        }
        let t = f64::from(px - self.x.0) / f64::from(self.x.1 - self.x.0);
        Some(self.x_range.0 + t * (self.x_range.1 - self.x_range.0))
    }
}

/// A count on an axis (steps, entries) spanning `span`: whole numbers under a million, then with M, G,
/// T… and a decimal (`1.5M`), so that a long run's labels do not run into each other; whole numbers
/// again where the span is too narrow for a decimal of the unit to tell ticks apart (steps
/// 1 000 000–1 000 200 were all "1M"). Counts are whole, so a tick between two (a range of a few
/// steps has ticks every 0.5) has no label rather than its neighbour's.
pub(crate) fn count_label(x: f64, span: f64) -> String {
    if (x - x.round()).abs() > 1e-6 * x.abs().max(1.0) {
        return String::new();
    }
    let big = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
    ];
    // Ticks are at least a tenth of the span apart (plotters' ten labels at most); a decimal of
    // the unit tells them apart where that is at least a tenth of the unit.
    match big
        .into_iter()
        .find(|(div, _)| x.abs() >= *div && span >= *div)
    {
        Some((div, suffix)) => {
            let v = format!("{:.1}", x / div);
            format!("{}{suffix}", v.strip_suffix(".0").unwrap_or(&v))
        }
        None => format!("{x:.0}"),
    }
}

/// The decimals a tick label needs where ticks are at least a tenth of `span` apart (plotters' ten
/// labels at most; in the label's own unit): none for a span of 10 or more, one for 1, … at most 6.
pub(crate) fn decimals_for(span: f64) -> usize {
    tick_decimals(span / 10.0)
}

/// How much narrower a line chart's plot is than its area: the margins and the byte axis's labels
/// (see [`line_chart`]).
pub(crate) const LINE_CHART_SIDES: u32 = 12 + 64 + 24 + 12;

/// A line chart over `x` with a byte axis reaching `top` (with room above it): `descs` are the x and y
/// axis descriptions (`{unit}` in the y one becomes the byte unit). Returns the unit's divisor too.
pub(crate) fn line_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    heading: &str,
    (x0, x1): (f64, f64),
    top: u64,
    descs: (&str, &str),
    x_label: &dyn Fn(&f64) -> String,
    theme: &Theme,
) -> Result<(LineChart<'a, DB>, f64)>
where
    DB::ErrorType: 'static,
{
    let (div, unit_name) = unit(top);
    // Ten x labels at most (plotters' own count), at least 48 pixels (at scale 1) apart: on a phone
    // ten of "10 %" ran into each other.
    let plot = area
        .dim_in_pixel()
        .0
        .saturating_sub(theme.px(LINE_CHART_SIDES));
    let x_labels = (plot / theme.px(48).max(1)).clamp(2, 10) as usize;
    let mut chart = builder(area, heading, theme)
        // Room for half of the last x label ("100 %"), centred on the plot's right edge.
        .margin_right(theme.px(24))
        .x_label_area_size(theme.px(36))
        .y_label_area_size(theme.px(64))
        .build_cartesian_2d(x0..x1, 0f64..top as f64 * 1.12 / div)?;
    chart
        .configure_mesh()
        .x_desc(descs.0)
        .x_labels(x_labels)
        .x_label_formatter(x_label)
        .y_desc(descs.1.replace("{unit}", unit_name))
        .label_style(theme.text(12))
        .axis_desc_style(theme.text(13))
        .axis_style(theme.muted)
        .bold_line_style(theme.muted.mix(0.25))
        .light_line_style(TRANSPARENT)
        .draw()?;
    Ok((chart, div))
}

/// Draws a vertical rule at `marker` (the pointer) and the legend (`legend` draws it), and says
/// where the plot is.
pub(crate) fn finish_line_chart<'a, DB: DrawingBackend + 'a>(
    mut chart: LineChart<'a, DB>,
    marker: Option<f64>,
    theme: &Theme,
    legend: impl FnOnce(&mut LineChart<'a, DB>) -> Result<()>,
) -> Result<PlotArea>
where
    DB::ErrorType: 'static,
{
    let (xs, ys) = (chart.x_range(), chart.y_range());
    if let Some(x) = marker.filter(|x| xs.contains(x)) {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, ys.start), (x, ys.end)],
            theme.muted.stroke_width(theme.px(1)),
        )))?;
    }
    legend(&mut chart)?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    Ok(PlotArea {
        x: (px.start, px.end),
        y: (py.start, py.end),
        x_range: (xs.start, xs.end),
    })
}

/// The dashes of `pattern` (pixels: dash, gap, …, repeated) from `x0` to `x1`, as (from, to) in the
/// data's x (`x_per_px` of it to a pixel); the last one cut at `x1`. One plain line where there is
/// nothing to repeat, no width, more periods than any plot has pixels, or a period too fine for the
/// x's precision (steps near 2^57 are 16 apart in f64: adding a dash to them adds nothing).
pub(crate) fn dashes(x0: f64, x1: f64, x_per_px: f64, pattern: &[u32]) -> Vec<(f64, f64)> {
    const MAX_PERIODS: f64 = 100_000.0;
    let period = f64::from(pattern.iter().sum::<u32>()) * x_per_px;
    let periods = ((x1 - x0) / period).ceil();
    let resolved = (x0 + period) - x0 > period * 0.5 && (x1 - period) < x1;
    if !(period > 0.0 && (1.0..=MAX_PERIODS).contains(&periods) && resolved) {
        return vec![(x0, x1)];
    }
    let mut out = Vec::new();
    for k in 0..periods as usize {
        let mut at = x0 + k as f64 * period;
        for (n, &len) in pattern.iter().enumerate() {
            if at >= x1 {
                break;
            }
            let end = at + f64::from(len) * x_per_px;
            if n % 2 == 0 {
                out.push((at, end.min(x1)));
            }
            at = end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_on_an_axis_are_whole_under_a_million_and_short_above() {
        let wide = 1e19;
        assert_eq!(count_label(0.0, wide), "0");
        assert_eq!(count_label(999_999.0, wide), "999999");
        assert_eq!(count_label(1_000_000.0, wide), "1M");
        assert_eq!(count_label(1_500_000.0, 2e6), "1.5M");
        assert_eq!(count_label(2e18, wide), "2E");
        // A run resumed at a million steps, 200 of them: ticks 20 apart, each its own label.
        assert_eq!(count_label(1_000_020.0, 200.0), "1000020");
        assert_eq!(count_label(1_000_040.0, 200.0), "1000040");
        // Too narrow for a decimal of G, wide enough for one of M.
        assert_eq!(count_label(3_500_000_000.0, 5e8), "3500M");
    }

    #[test]
    fn a_zoomed_in_axis_has_the_decimals_its_ticks_need() {
        assert_eq!(decimals_for(100.0), 0);
        assert_eq!(decimals_for(10.0), 0);
        assert_eq!(decimals_for(1.0), 1);
        assert_eq!(decimals_for(0.5), 2);
        assert_eq!(decimals_for(0.1), 2);
        assert_eq!(decimals_for(1e-12), 6);
        for nothing in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(decimals_for(nothing), 0);
        }
    }

    #[test]
    fn dashes_follow_their_pattern_and_stop_at_the_end() {
        // Two pixels on, three off, a unit to a pixel: cut at 12.
        assert_eq!(
            dashes(0.0, 12.0, 1.0, &[2, 3]),
            [(0.0, 2.0), (5.0, 7.0), (10.0, 12.0)]
        );
        assert_eq!(
            dashes(10.0, 30.0, 1.0, &[9, 3, 2, 3]),
            [(10.0, 19.0), (22.0, 24.0), (27.0, 30.0)]
        );
        // In the data's units: a step of 0.5 to a pixel.
        assert_eq!(dashes(0.0, 4.0, 0.5, &[2, 2]), [(0.0, 1.0), (2.0, 3.0)]);
        // Nothing to repeat, or no width: a plain line (never a loop without end).
        assert_eq!(dashes(0.0, 5.0, 1.0, &[]), [(0.0, 5.0)]);
        assert_eq!(dashes(0.0, 5.0, 0.0, &[2, 3]), [(0.0, 5.0)]);
        assert_eq!(dashes(0.0, 5.0, f64::NAN, &[2, 3]), [(0.0, 5.0)]);
        assert_eq!(dashes(5.0, 5.0, 1.0, &[2, 3]), [(5.0, 5.0)]);
        assert_eq!(dashes(5.0, 4.0, 1.0, &[2, 3]), [(5.0, 4.0)]);
        // Steps near 2^57 (a file's absurd step numbers): the x's precision has no room for a dash,
        // and accumulating one would never move (a hang): a plain line.
        let far = (1u64 << 57) as f64;
        assert_eq!(
            dashes(far - 1.0, far + 1.0, 0.002, &[2, 3]),
            [(far - 1.0, far + 1.0)]
        );
        // More periods than any plot has pixels: a plain line, not millions of dashes.
        assert_eq!(dashes(0.0, 1e9, 1.0, &[2, 3]), [(0.0, 1e9)]);
    }
}
