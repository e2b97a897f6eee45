//! Charts of a [`DeviceReport`] for any plotters backend: `memograph report` draws them into PNGs with
//! the bitmap backend, the page onto canvases with plotters-canvas. Category colours are the engine's, so
//! a category looks the same in the report, the page's charts and its timeline.
//!
//! Each chart fills the drawing area it is given. Sizes of text and margins are in CSS pixels times
//! [`Theme::scale`] (the page passes its device pixel ratio). Charts a user can click return where their
//! bars are ([`Bars`]), so the page maps a click to a row without re-deriving the layout.
//!
//! Here: themes, colours, units and [`Bars`]. The charts by what they show: `report` (one device's
//! report), `compare` (several runs' curves and peaks), `steps` (per-step records). What they are
//! built of: `bars` (bars and columns), `line` (line charts' axes and the plot's pixel mapping),
//! `legend` (legends of many runs, measured to fit), `labels` (text cut to fit).

mod bars;
mod compare;
mod labels;
mod legend;
mod line;
mod report;
mod steps;
#[cfg(test)]
mod test_backend;

pub use compare::{
    compare_page, curve_points, full_range, oom_point, overlaid_curves, peak_bars, run_color,
    run_dashed, CompareAxis, RUN_COLORS,
};
pub use line::PlotArea;
pub use report::{
    allocated_vs_reserved, category_donut, component_bars, components_over_trace, memory_overview,
    report_page, segment_bars, size_histogram, top_consumers, CHARTS,
};
pub use steps::{gpu_ceiling, step_chart, step_value, StepChartOptions};

use std::error::Error;

use memograph_snapshot::analysis::categories;
use memograph_snapshot::analysis::report::{Component, DeviceReport};
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::RangedCoordu32;
use plotters::coord::Shift;
use plotters::prelude::*;

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The font family every chart asks for. The CLI registers DejaVu Sans under it
/// (`register_embedded_fonts`, with the `embedded-fonts` feature); browsers map it.
pub const FONT: &str = "sans-serif";

/// Registers DejaVu Sans, compiled in, as [`FONT`] (normal and bold) for plotters' ab_glyph text, once
/// per process: charts then look the same on every machine, with no system font lookup. Not on wasm32,
/// where plotters' text is the canvas' own.
#[cfg(all(not(target_arch = "wasm32"), any(feature = "embedded-fonts", test)))]
pub fn register_embedded_fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // DejaVu's own TTFs: parsing them cannot fail, and text would only be missing if it did.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// The neutrals of a theme, as CSS colours: the one place the page's canvases and the charts take them
/// from (`style/main.css` repeats background, text and muted as CSS variables for the page's chrome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neutrals {
    pub background: &'static str,
    pub text: &'static str,
    pub muted: &'static str,
}

impl Neutrals {
    pub const LIGHT: Neutrals = Neutrals {
        background: "#ffffff",
        text: "#1d1f23",
        muted: "#5f6670",
    };
    pub const DARK: Neutrals = Neutrals {
        background: "#15171c",
        text: "#e6e6e6",
        muted: "#9aa0aa",
    };
}

/// Colours and scale of a chart.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub background: RGBColor,
    pub ink: RGBColor,
    pub muted: RGBColor,
    /// Multiplies font sizes and margins (the device pixel ratio on a canvas).
    pub scale: f64,
}

impl Theme {
    fn of(n: Neutrals) -> Theme {
        Theme {
            background: rgb(n.background),
            ink: rgb(n.text),
            muted: rgb(n.muted),
            scale: 1.0,
        }
    }

    pub fn light() -> Theme {
        Theme::of(Neutrals::LIGHT)
    }

    pub fn dark() -> Theme {
        Theme::of(Neutrals::DARK)
    }

    pub fn scaled(self, scale: f64) -> Theme {
        Theme { scale, ..self }
    }

    fn px(&self, v: u32) -> u32 {
        (f64::from(v) * self.scale).round() as u32
    }

    /// A dash pattern (pixels at scale 1) at this theme's scale, each part at least a pixel.
    fn px_pattern(&self, pattern: &[u32]) -> Vec<u32> {
        pattern.iter().map(|&p| self.px(p).max(1)).collect()
    }

    fn text(&self, size: u32) -> TextStyle<'static> {
        (FONT, f64::from(size) * self.scale)
            .into_font()
            .color(&self.ink)
    }

    fn bold(&self, size: u32) -> TextStyle<'static> {
        (FONT, f64::from(size) * self.scale, FontStyle::Bold)
            .into_font()
            .color(&self.ink)
    }

    fn quiet(&self, size: u32) -> TextStyle<'static> {
        (FONT, f64::from(size) * self.scale)
            .into_font()
            .color(&self.muted)
    }
}

const RESERVED: RGBColor = RGBColor(0xb8, 0xbe, 0xc7);
const ALLOCATED: RGBColor = RGBColor(0x2f, 0x6f, 0xde);
const PENDING: RGBColor = RGBColor(0xf2, 0x8e, 0x2b);
const PEAK: RGBColor = RGBColor(0xd1, 0x1a, 0x2a);

/// Where a clickable chart drew its bars, in the drawing area's pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bars {
    pub x: (i32, i32),
    pub y: (i32, i32),
    pub count: usize,
    /// Rows top to bottom (horizontal bars) or columns left to right.
    pub horizontal: bool,
}

impl Bars {
    /// The bar at pixel `(x, y)`, if any.
    pub fn at(&self, x: i32, y: i32) -> Option<usize> {
        let inside = (self.x.0..=self.x.1).contains(&x) && (self.y.0..=self.y.1).contains(&y);
        if !inside || self.count == 0 {
            return None;
        }
        let (from, to, at) = if self.horizontal {
            (self.y.0, self.y.1, y)
        } else {
            (self.x.0, self.x.1, x)
        };
        let k = (i64::from(at - from) * self.count as i64 / i64::from((to - from).max(1))) as usize;
        Some(k.min(self.count - 1))
    }

    /// The pixels bar `k` answers to (those [`Bars::at`] maps to it), as `(x0, y0, x1, y1)`: for a
    /// keyboard's focus to be drawn where a click would have picked it.
    pub fn band(&self, k: usize) -> Option<(i32, i32, i32, i32)> {
        if k >= self.count {
            return None;
        }
        let (from, to) = if self.horizontal { self.y } else { self.x };
        let span = i64::from(to - from);
        let count = self.count as i64;
        // The first pixel `at` maps to k and to k + 1: ceil(k * span / count).
        let edge = |k: i64| from + ((k * span + count - 1) / count) as i32;
        let (a, b) = (edge(k as i64), edge(k as i64 + 1) - 1);
        let b = if k + 1 == self.count { to } else { b.max(a) };
        Some(if self.horizontal {
            (self.x.0, a, self.x.1, b)
        } else {
            (a, self.y.0, b, self.y.1)
        })
    }
}

fn bars_of<DB: DrawingBackend, X, Y>(
    area: &DrawingArea<DB, Cartesian2d<X, Y>>,
    count: usize,
    horizontal: bool,
) -> Bars
where
    X: Ranged,
    Y: Ranged,
{
    let (x, y) = area.get_pixel_range();
    Bars {
        x: (x.start, x.end),
        y: (y.start, y.end),
        count,
        horizontal,
    }
}

pub fn rgb(hex: &str) -> RGBColor {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0x9aa0aa);
    RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

fn category_color(index: usize, count: usize) -> RGBColor {
    rgb(categories::color(index, count))
}

/// A component's colour: that of the category it is named after ("Other" grey).
pub fn component_color(r: &DeviceReport, c: Component) -> RGBColor {
    let names: Vec<&str> = r.categories.iter().map(|t| t.category.as_str()).collect();
    let named = c.category();
    let k = names
        .iter()
        .position(|n| *n == named)
        .unwrap_or(names.len());
    category_color(k, names.len().max(k + 1))
}

/// A binary unit for an axis whose values reach `max` bytes: (bytes per unit, name).
fn unit(max: u64) -> (f64, &'static str) {
    const UNITS: [(u32, &str); 5] = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB"), (0, "B")];
    let (shift, name) = UNITS
        .iter()
        .copied()
        .find(|&(s, _)| max >= 1u64 << s)
        .unwrap_or((0, "B"));
    ((1u64 << shift) as f64, name)
}

/// `n` equal slots for bars, at least two: plotters' integer ranges include their end (so `0..n`
/// would make `n + 1`), and one slot (`0..0`) maps every bar edge to the same pixel, a bar of no
/// width (a histogram of one bucket, the only allocation live). A lone bar takes the first of two.
fn slots(n: u32) -> SegmentedCoord<RangedCoordu32> {
    (0..n.max(2) - 1).into_segmented()
}

/// A chart builder on `area`, with a caption when `heading` is not empty.
fn builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    heading: &str,
    theme: &Theme,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.margin(theme.px(12));
    if !heading.is_empty() {
        b.caption(heading, theme.bold(18));
    }
    b
}

/// The colour of allocated bytes, for pages that draw next to these charts.
pub const ALLOCATED_COLOR: RGBColor = ALLOCATED;
/// The colour of cached free bytes.
pub const FREE_COLOR: RGBColor = RESERVED;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_units_follow_the_largest_value() {
        assert_eq!(unit(3 << 30), ((1u64 << 30) as f64, "GiB"));
        assert_eq!(unit(5 << 20), ((1u64 << 20) as f64, "MiB"));
        assert_eq!(unit(100), (1.0, "B"));
    }

    #[test]
    fn a_click_maps_to_the_bar_under_it() {
        let rows = Bars {
            x: (100, 500),
            y: (10, 110),
            count: 10,
            horizontal: true,
        };
        assert_eq!(rows.at(200, 10), Some(0));
        assert_eq!(rows.at(200, 59), Some(4));
        assert_eq!(rows.at(200, 110), Some(9));
        assert_eq!(rows.at(50, 50), None);
        let columns = Bars {
            horizontal: false,
            count: 5,
            ..rows
        };
        assert_eq!(columns.at(499, 50), Some(4));
    }

    #[test]
    fn a_bar_band_holds_the_pixels_that_pick_it() {
        for (count, horizontal) in [(10, true), (5, false), (3, true), (7, false), (1, true)] {
            let bars = Bars {
                x: (100, 501),
                y: (10, 113),
                count,
                horizontal,
            };
            let (start, end) = if horizontal { bars.y } else { bars.x };
            let mut seen = 0;
            for k in 0..count {
                let (x0, y0, x1, y1) = bars.band(k).unwrap();
                for (x, y) in [(x0, y0), (x1, y1), ((x0 + x1) / 2, (y0 + y1) / 2)] {
                    assert_eq!(
                        bars.at(x, y),
                        Some(k),
                        "{count} {horizontal} bar {k} at {x},{y}"
                    );
                }
                // Bands tile the area: each starts where the last ended.
                let (a, b) = if horizontal { (y0, y1) } else { (x0, x1) };
                assert_eq!(a, if k == 0 { start } else { seen + 1 });
                seen = b;
            }
            assert_eq!(seen, end);
            assert_eq!(bars.band(count), None);
        }
    }
}
