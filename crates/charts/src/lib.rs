//! Charts of a [`DeviceReport`] for any plotters backend: `memograph report` draws them into PNGs with
//! the bitmap backend, the page onto canvases with plotters-canvas. Category colours are the engine's, so
//! a category looks the same in the report, the page's charts and its timeline.
//!
//! Each chart fills the drawing area it is given. Sizes of text and margins are in CSS pixels times
//! [`Theme::scale`] (the page passes its device pixel ratio). Charts a user can click return where their
//! bars are ([`Bars`]), so the page maps a click to a row without re-deriving the layout.

use std::error::Error;

use memograph_snapshot::analysis::categories;
use memograph_snapshot::analysis::compare::{common_folder, within, Digest};
use memograph_snapshot::analysis::efficiency::Bucket;
use memograph_snapshot::analysis::report::{CategorySeries, Component, DeviceReport};
use memograph_snapshot::analysis::stats::SegmentStats;
use memograph_snapshot::format::{at_entry, bytes, count, tick_decimals};
use memograph_snapshot::steps::{StepRecord, StepRun};
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordu32};
use plotters::coord::Shift;
use plotters::element::{Drawable, DynElement, IntoDynElement, PointCollection};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendCoord, DrawingErrorKind};

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The font family every chart asks for. The CLI registers DejaVu Sans under it
/// ([`register_embedded_fonts`]); browsers map it.
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

/// The chart files of a report and their titles, in the order a README shows them.
pub const CHARTS: [(&str, &str); 5] = [
    ("memory_overview.png", "Memory over the trace, by category"),
    ("top_consumers.png", "Largest allocations live at the peak"),
    (
        "category_breakdown.png",
        "Categories and components at the peak",
    ),
    ("size_distribution.png", "Size distributions"),
    ("memory_efficiency.png", "Allocator efficiency"),
];

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

/// Cuts `text` to `max` characters, keeping its end (a frame's function and line).
fn tail(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        text.to_string()
    } else {
        let kept: String = text.chars().skip(n - max + 1).collect();
        format!("…{kept}")
    }
}

/// `text` cut in its middle (`…`) to at most `max` characters: a run's label keeps the start of its
/// name and its figures at the end.
fn middle_cut(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let head = max.saturating_sub(1) * 2 / 5;
    let end = max.saturating_sub(1) - head;
    let start: String = text.chars().take(head).collect();
    let last: String = text.chars().skip(n - end).collect();
    format!("{start}…{last}")
}

/// Where each of `names` differs from the others: the characters past the longest beginning it
/// shares with another and before the longest ending it shares with another, widened to whole words
/// (`kk_memory_ctx128_forward.pickle` beside `…_fullstep.pickle`: `forward`), so that a name cut to
/// fit keeps what tells it apart. A name that shares nothing is all its own. Pairwise: for a legend's
/// dozen lines.
fn distinct_parts(names: &[&str]) -> Vec<(usize, usize)> {
    let chars: Vec<Vec<char>> = names.iter().map(|n| n.chars().collect()).collect();
    let shared = |x: &[char], y: &[char], from_end: bool| {
        let n = x.len().min(y.len());
        let at = |c: &[char], k: usize| if from_end { c[c.len() - 1 - k] } else { c[k] };
        (0..n).take_while(|&k| at(x, k) == at(y, k)).count()
    };
    let word = |c: &char| "_-./ ".contains(*c);
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let others = chars.iter().enumerate().filter(|&(j, _)| j != i);
            let begin = others.clone().map(|(_, o)| shared(c, o, false)).max();
            let end = others.map(|(_, o)| shared(c, o, true)).max();
            let begin = begin.unwrap_or(0);
            let end = end.unwrap_or(0).min(c.len() - begin);
            let a = c[..begin].iter().rposition(word).map_or(0, |k| k + 1);
            let b = c.len() - end;
            let b = c[b..].iter().position(word).map_or(c.len(), |k| b + k);
            (a, b)
        })
        .collect()
}

/// `name` cut to at most `max` characters keeping `keep` (a character range: what tells it from
/// the names beside it): first the end of what follows `keep`, then the middle of what precedes it
/// (its first characters stay), and only then `keep`'s own middle.
fn cut_keeping(name: &str, max: usize, (a, b): (usize, usize)) -> String {
    let chars: Vec<char> = name.chars().collect();
    let n = chars.len();
    if n <= max {
        return name.to_string();
    }
    let text = |r: std::ops::Range<usize>| chars[r].iter().collect::<String>();
    let (a, b) = (a.min(n), b.clamp(a.min(n), n));
    if b < max {
        return format!("{}…", text(0..max.saturating_sub(1)));
    }
    let (lead, tail) = (usize::from(a > 0), usize::from(b < n));
    let mark = |on: usize| if on == 1 { "…" } else { "" };
    let rest = max.saturating_sub(b - a + 1 + tail);
    if a > 0 && rest >= 1 {
        return format!("{}…{}{}", text(0..rest), text(a..b), mark(tail));
    }
    let inner = middle_cut(&text(a..b), max.saturating_sub(lead + tail));
    format!("{}{inner}{}", mark(lead), mark(tail))
}

/// `n` equal slots for bars, at least two: plotters' integer ranges include their end (so `0..n`
/// would make `n + 1`), and one slot (`0..0`) maps every bar edge to the same pixel, a bar of no
/// width (a histogram of one bucket, the only allocation live). A lone bar takes the first of two.
fn slots(n: u32) -> SegmentedCoord<RangedCoordu32> {
    (0..n.max(2) - 1).into_segmented()
}

/// Every `k`-th column is labelled, so that neighbouring labels whose centres need `label_px` between
/// them do not run into each other on `n` columns across `width_px` (a size histogram's 25 buckets on
/// half a page); the components' six names all fit.
fn label_every(n: usize, width_px: f64, label_px: f64) -> usize {
    let column = width_px / n.max(1) as f64;
    ((label_px + 6.0) / column.max(1.0)).ceil().max(1.0) as usize
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

/// The trace entries the report spans (its x axis).
fn entries(r: &DeviceReport) -> f64 {
    (r.summary.events.values().sum::<u64>()).max(1) as f64
}

type LineChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A line chart over trace entries with a byte axis reaching `y_top`; returns the unit divisor too.
fn over_trace<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    y_top: u64,
    theme: &Theme,
) -> Result<(LineChart<'a, DB>, f64)>
where
    DB::ErrorType: 'static,
{
    line_chart(
        area,
        heading,
        (-1.0, entries(r)),
        y_top.max(1),
        ("trace entry", "{unit}"),
        &entry_label,
        theme,
    )
}

/// An x tick of a chart over trace entries: entries are whole, so a tick between two (a trace of a
/// few entries gets ticks every 0.2) has no label, rather than its neighbour's ("-1 -1 -1 -0 -0 0").
fn entry_label(x: &f64) -> String {
    let whole = x.round();
    if (x - whole).abs() < 1e-6 {
        format!("{}", whole as i64)
    } else {
        String::new()
    }
}

/// A series of `bytes` at trace `entries` as drawn, in units of `div`: one sample (a trace of one
/// entry) holds across the chart's x range `(x0, x1)`, which a single point would not show at all.
fn over_entries(
    entries: &[i64],
    bytes: impl IntoIterator<Item = u64>,
    div: f64,
    (x0, x1): (f64, f64),
) -> Vec<(f64, f64)> {
    let points: Vec<(f64, f64)> = entries
        .iter()
        .zip(bytes)
        .map(|(&e, b)| (e as f64, b as f64 / div))
        .collect();
    match points.as_slice() {
        [(_, y)] => vec![(x0, *y), (x1, *y)],
        _ => points,
    }
}

fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    // plotters' margins and swatch room, scaled as the text is (on a screen of two pixels to the
    // point they were half the text's measure, the swatches against the labels).
    chart
        .configure_series_labels()
        .position(position)
        .margin(theme.px(LEGEND_MARGIN))
        .legend_area_size(theme.px(LEGEND_SWATCH))
        .label_font(theme.text(12))
        .background_style(theme.background.mix(0.85))
        .border_style(theme.muted)
        .draw()?;
    Ok(())
}

/// plotters' own legend measures, at one pixel to the point: the margin inside its box, the room
/// for a swatch, and how far the box stands from the plot's corner.
const LEGEND_MARGIN: u32 = 10;
const LEGEND_SWATCH: u32 = 30;
const LEGEND_CORNER: u32 = 5;

/// A legend's swatch for a line drawn in `style`: a short stroke of it.
fn line_swatch(style: ShapeStyle, theme: &Theme) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    let len = theme.px(12) as i32;
    move |(x, y)| PathElement::new(vec![(x, y), (x + len, y)], style)
}

fn swatch(color: RGBColor, theme: &Theme) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    let h = theme.px(6) as i32;
    move |(x, y)| Rectangle::new([(x, y - h), (x + 2 * h, y + h)], color.filled())
}

/// Where the legend of a chart over the trace goes: in the upper corner away from the peak, whose
/// label it would hide (a peak before the first entry is at the left edge).
fn away_from_peak(r: &DeviceReport) -> SeriesLabelPosition {
    if (r.peak.event as f64) < entries(r) / 2.0 {
        SeriesLabelPosition::UpperRight
    } else {
        SeriesLabelPosition::UpperLeft
    }
}

fn peak_marker<'a, DB: DrawingBackend + 'a>(
    chart: &mut LineChart<'a, DB>,
    r: &DeviceReport,
    div: f64,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    // The axis begins at -1, before the first entry, where a peak of memory held before recording lies.
    let x = r.peak.event.max(-1) as f64;
    let y = r.peak.bytes as f64 / div;
    let (x_range, y_range) = (chart.x_range(), chart.y_range());
    let right = x > x_range.end / 2.0;
    let h = if right { HPos::Right } else { HPos::Left };
    let text = format!(" peak {} {} ", bytes(r.peak.bytes), at_entry(r.peak.event));
    let style = theme.text(13).color(&PEAK).pos(Pos::new(h, VPos::Bottom));
    // The label stands above what is drawn under it: the reserved bytes, which are over the
    // allocated peak (the reserved curve ran through the label), a few pixels clear of them, and
    // inside the plot.
    let area = chart.plotting_area();
    let (w, th) = area.estimate_text_size(&text, &style)?;
    let (xs, ys) = area.get_pixel_range();
    let per_x = (x_range.end - x_range.start) / f64::from((xs.end - xs.start).max(1));
    let per_y = (y_range.end - y_range.start) / f64::from((ys.end - ys.start).max(1));
    let span = f64::from(w) * per_x;
    let (lo, hi) = if right { (x - span, x) } else { (x, x + span) };
    let under = reserved_over(&r.over_time, lo, hi).max(r.peak.bytes) as f64 / div;
    let top = y_range.end - f64::from(th) * per_y;
    let at = (under + f64::from(theme.px(4)) * per_y)
        .min(top)
        .max(y * 1.05);
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(x, 0.0), (x, at - f64::from(theme.px(1)) * per_y)],
        PEAK.stroke_width(theme.px(2)),
    )))?;
    chart.draw_series(std::iter::once(Text::new(text, (x, at), style)))?;
    Ok(())
}

/// The most bytes `series` reserves from trace entry `lo` to `hi`: its samples there, and the one
/// before (a sample holds until the next).
fn reserved_over(series: &CategorySeries, lo: f64, hi: f64) -> u64 {
    let from = series.entries.partition_point(|&e| (e as f64) <= lo);
    let to = series.entries.partition_point(|&e| (e as f64) <= hi);
    series
        .reserved
        .get(from.saturating_sub(1)..to.max(from))
        .and_then(|r| r.iter().copied().max())
        .unwrap_or(0)
}

/// Live bytes per category over the trace (stacked), reserved bytes and the peak.
pub fn memory_overview<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let k = r.over_time.categories.len();
    let colors: Vec<RGBColor> = (0..k).map(|j| category_color(j, k)).collect();
    let at_event: Vec<u64> = r.categories.iter().map(|c| c.bytes).collect();
    stacked_over_trace(area, heading, r, &r.over_time, &colors, &at_event, theme)
}

/// Live bytes per component (parameters, gradients, optimizer state, activations, other) over the
/// trace, stacked, with reserved bytes and the peak.
pub fn components_over_trace<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let series = r.over_time.by_component();
    let colors: Vec<RGBColor> = Component::ALL
        .iter()
        .map(|&c| component_color(r, c))
        .collect();
    let at_event: Vec<u64> = r.components.iter().map(|c| c.bytes).collect();
    stacked_over_trace(area, heading, r, &series, &colors, &at_event, theme)
}

fn stacked_over_trace<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    s: &CategorySeries,
    colors: &[RGBColor],
    at_event: &[u64],
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let n = s.entries.len();
    let top = (0..n).map(|k| s.total_at(k)).max().unwrap_or(0);
    let y_top = top.max(s.reserved.iter().copied().max().unwrap_or(0));
    let (mut chart, div) = over_trace(area, heading, r, y_top, theme)?;
    let range = (chart.x_range().start, chart.x_range().end);
    let when = if r.event == r.peak.event {
        "at the peak".to_string()
    } else {
        at_entry(r.event)
    };
    // Stack bottom-up in order; paint the tallest first so each smaller stack sits on top.
    let mut stacked: Vec<Vec<u64>> = Vec::with_capacity(s.bytes.len());
    let mut running = vec![0u64; n];
    for series in &s.bytes {
        for (acc, b) in running.iter_mut().zip(series) {
            *acc += b;
        }
        stacked.push(running.clone());
    }
    for j in (0..s.bytes.len()).rev() {
        if s.bytes[j].iter().all(|&b| b == 0) {
            continue;
        }
        let color = colors.get(j).copied().unwrap_or(RESERVED);
        let points = over_entries(&s.entries, stacked[j].iter().copied(), div, range);
        let here = at_event.get(j).copied().unwrap_or(0);
        chart
            .draw_series(AreaSeries::new(points, 0.0, color.filled()))?
            .label(format!("{} ({} {when})", s.categories[j], bytes(here)))
            .legend(swatch(color, theme));
    }
    let reserved = over_entries(&s.entries, s.reserved.iter().copied(), div, range);
    let ink = theme.ink;
    let width = theme.px(2);
    chart
        .draw_series(LineSeries::new(reserved, ink.stroke_width(width)))?
        .label("reserved by the allocator")
        .legend(line_swatch(ink.stroke_width(width), theme));
    peak_marker(&mut chart, r, div, theme)?;
    legend(&mut chart, away_from_peak(r), theme)
}

/// Horizontal bars with a text label per row, largest on top.
fn labelled_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    rows: &[(String, u64, RGBColor)],
    label_share: f64,
    theme: &Theme,
) -> Result<Bars>
where
    DB::ErrorType: 'static,
{
    let n = rows.len().max(1) as u32;
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let (div, unit_name) = unit(max);
    let (w, _) = area.dim_in_pixel();
    let label_width = (f64::from(w) * label_share) as u32;
    let chars = (f64::from(label_width) / (7.0 * theme.scale)) as usize;
    let labels: Vec<String> = rows.iter().map(|r| tail(&r.0, chars)).collect();
    // Room right of the longest bar for its figure, and a figure on the value axis every 60 px or
    // more (a narrow window's chart had ten of them run into each other).
    let plot = f64::from(w.saturating_sub(label_width + 2 * theme.px(12)).max(1));
    let figure = (bytes(max).chars().count() + 1) as f64 * 7.0 * theme.scale;
    let headroom = (plot / (plot - figure).max(plot * 0.3)).max(1.25);
    let ticks = (plot / (60.0 * theme.scale)).clamp(2.0, 10.0) as usize;
    let mut chart = builder(area, heading, theme)
        .x_label_area_size(theme.px(36))
        .y_label_area_size(label_width)
        .build_cartesian_2d(0f64..max as f64 * headroom / div, slots(n))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(theme.muted.mix(0.25))
        .light_line_style(TRANSPARENT)
        .axis_style(theme.muted)
        .x_desc(unit_name)
        .x_labels(ticks)
        .y_labels(n as usize)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => (n - 1)
                .checked_sub(*i)
                .and_then(|k| labels.get(k as usize))
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        })
        .label_style(theme.text(12))
        .axis_desc_style(theme.text(13))
        .draw()?;
    let gap = theme.px(2);
    chart.draw_series(rows.iter().enumerate().map(|(k, (_, b, color))| {
        let y = n - 1 - k as u32;
        let mut bar = Rectangle::new(
            [
                (0.0, SegmentValue::Exact(y)),
                (*b as f64 / div, SegmentValue::Exact(y + 1)),
            ],
            color.filled(),
        );
        bar.set_margin(gap, gap, 0, 0);
        bar
    }))?;
    chart.draw_series(rows.iter().enumerate().map(|(k, (_, b, _))| {
        let y = n - 1 - k as u32;
        Text::new(
            format!(" {}", bytes(*b)),
            (*b as f64 / div, SegmentValue::CenterOf(y)),
            theme.text(12).pos(Pos::new(HPos::Left, VPos::Center)),
        )
    }))?;
    Ok(bars_of(chart.plotting_area(), rows.len(), true))
}

/// The largest allocations live at the analysed entry, labelled with the code that made them and
/// coloured by category. Returns where the rows are (row k is `r.top_consumers[k]`).
pub fn top_consumers<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    rows: usize,
    theme: &Theme,
) -> Result<Bars>
where
    DB::ErrorType: 'static,
{
    let names: Vec<&str> = r.categories.iter().map(|c| c.category.as_str()).collect();
    let rows: Vec<(String, u64, RGBColor)> = r
        .top_consumers
        .iter()
        .take(rows)
        .map(|c| {
            let k = c
                .category
                .as_deref()
                .and_then(|n| names.iter().position(|m| *m == n))
                .unwrap_or(names.len().saturating_sub(1));
            (c.frame.clone(), c.bytes, category_color(k, names.len()))
        })
        .collect();
    labelled_bars(area, heading, &rows, 0.45, theme)
}

/// A donut of the categories live at the analysed entry, with a legend of bytes and shares.
pub fn category_donut<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    r: &DeviceReport,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let count = r.categories.len();
    let slices: Vec<(usize, u64)> = r
        .categories
        .iter()
        .enumerate()
        .filter(|(_, c)| c.bytes > 0)
        .map(|(k, c)| (k, c.bytes))
        .collect();
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (f64::from(w), f64::from(h));
    if slices.is_empty() {
        area.draw(&Text::new(
            "nothing is live here",
            ((w * 0.5) as i32, (h * 0.5) as i32),
            theme.text(14).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        return Ok(());
    }
    // The legend right of the donut, as wide as its longest line (measured); without the bytes
    // where that would leave the donut under half the width.
    let font = theme.text(12);
    let side = theme.px(12) as i32;
    let share = |b: u64| b as f64 * 100.0 / r.live_bytes.max(1) as f64;
    let lines = |with_bytes: bool| -> Result<(Vec<String>, f64)> {
        let texts: Vec<String> = slices
            .iter()
            .map(|&(k, b)| match with_bytes {
                true => format!(
                    "{}  {}  {:.1} %",
                    r.categories[k].category,
                    bytes(b),
                    share(b)
                ),
                false => format!("{}  {:.1} %", r.categories[k].category, share(b)),
            })
            .collect();
        let mut widest = 0.0f64;
        for t in &texts {
            widest = widest.max(f64::from(area.estimate_text_size(t, &font)?.0));
        }
        Ok((texts, widest + f64::from(side) * 1.5 + theme.px(12) as f64))
    };
    let (mut texts, mut legend) = lines(true)?;
    if legend > w * 0.5 {
        (texts, legend) = lines(false)?;
    }
    let left = (w - legend).max(w * 0.4);
    let radius = (left * 0.45).min(h * 0.42);
    let center = ((left * 0.5) as i32, (h * 0.5) as i32);
    let sizes: Vec<f64> = slices.iter().map(|s| s.1 as f64).collect();
    let colors: Vec<RGBColor> = slices.iter().map(|s| category_color(s.0, count)).collect();
    let labels: Vec<String> = vec![String::new(); slices.len()];
    let mut pie = Pie::new(&center, &radius, &sizes, &colors, &labels);
    pie.start_angle(-90.0);
    pie.donut_hole(radius * 0.55);
    area.draw(&pie)?;
    area.draw(&Text::new(
        bytes(r.live_bytes),
        center,
        theme.bold(16).pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;
    let x = left as i32;
    let line = theme.px(24) as i32;
    let top = (h as i32 - line * slices.len() as i32) / 2;
    for (i, ((k, _), text)) in slices.iter().zip(texts).enumerate() {
        let y = top + i as i32 * line;
        area.draw(&Rectangle::new(
            [(x, y), (x + side, y + side)],
            category_color(*k, count).filled(),
        ))?;
        area.draw(&Text::new(text, (x + side + side / 2, y), font.clone()))?;
    }
    Ok(())
}

/// One column of a column chart: its label under the axis, height, colour and a note above it.
struct Column {
    label: String,
    bytes: u64,
    color: RGBColor,
    note: String,
}

/// Labelled columns of bytes, each with a note above it. Returns where the columns are.
fn columns<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    cols: &[Column],
    (x_desc, y_desc): (&str, &str),
    gap: u32,
    theme: &Theme,
) -> Result<Bars>
where
    DB::ErrorType: 'static,
{
    let n = cols.len() as u32;
    let max = cols.iter().map(|c| c.bytes).max().unwrap_or(1).max(1);
    let (div, unit_name) = unit(max);
    let mut chart = builder(area, heading, theme)
        .x_label_area_size(theme.px(if x_desc.is_empty() { 28 } else { 40 }))
        .y_label_area_size(theme.px(64))
        .build_cartesian_2d(slots(n), 0f64..max as f64 * 1.18 / div)?;
    let (plot_x, _) = chart.plotting_area().get_pixel_range();
    // What two neighbouring labels need between their centres (about 5.8 px a character at 11 px).
    let width = |c: &Column| c.label.chars().count() as f64 * 5.8 * theme.scale;
    let neighbours = cols
        .windows(2)
        .map(|w| (width(&w[0]) + width(&w[1])) / 2.0)
        .fold(0.0, f64::max);
    let every = label_every(cols.len(), f64::from(plot_x.end - plot_x.start), neighbours);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(theme.muted.mix(0.25))
        .light_line_style(TRANSPARENT)
        .axis_style(theme.muted)
        .x_desc(x_desc)
        .y_desc(format!("{unit_name}{y_desc}"))
        .x_labels(n as usize)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if (*i as usize).is_multiple_of(every) => cols
                .get(*i as usize)
                .map(|c| c.label.clone())
                .unwrap_or_default(),
            _ => String::new(),
        })
        .label_style(theme.text(11))
        .axis_desc_style(theme.text(12))
        .draw()?;
    let gap = theme.px(gap);
    chart.draw_series(cols.iter().enumerate().map(|(i, c)| {
        let i = i as u32;
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), c.bytes as f64 / div),
            ],
            c.color.filled(),
        );
        bar.set_margin(0, 0, gap, gap);
        bar
    }))?;
    // A note is drawn where it runs into no other: the tallest columns' first (a narrow chart's
    // counts over its small buckets ran into each other).
    let mut order: Vec<usize> = (0..cols.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cols[i].bytes));
    let style = theme.quiet(11).pos(Pos::new(HPos::Center, VPos::Bottom));
    // (centre, bottom, half width) of each note placed.
    let mut placed: Vec<(f64, f64, f64)> = Vec::new();
    let mut shown = vec![false; cols.len()];
    for i in order {
        let note = &cols[i].note;
        if note.is_empty() {
            continue;
        }
        let at = (SegmentValue::CenterOf(i as u32), cols[i].bytes as f64 / div);
        let (x, y) = chart.backend_coord(&at);
        let (w, h) = chart.plotting_area().estimate_text_size(note, &style)?;
        let (x, y, half) = (f64::from(x), f64::from(y), f64::from(w) / 2.0);
        if placed
            .iter()
            .all(|&(px, py, ph)| (x - px).abs() >= half + ph || (y - py).abs() >= f64::from(h))
        {
            placed.push((x, y, half));
            shown[i] = true;
        }
    }
    chart.draw_series(
        cols.iter()
            .enumerate()
            .filter(|&(i, _)| shown[i])
            .map(|(i, c)| {
                let at = (SegmentValue::CenterOf(i as u32), c.bytes as f64 / div);
                Text::new(c.note.clone(), at, style.clone())
            }),
    )?;
    Ok(bars_of(chart.plotting_area(), cols.len(), false))
}

/// Bars of the five components at the analysed entry. Returns where the columns are (column k is
/// `r.components[k]`).
pub fn component_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    theme: &Theme,
) -> Result<Bars>
where
    DB::ErrorType: 'static,
{
    let cols: Vec<Column> = r
        .components
        .iter()
        .map(|c| Column {
            label: c.component.label().to_string(),
            bytes: c.bytes,
            color: component_color(r, c.component),
            note: bytes(c.bytes),
        })
        .collect();
    columns(area, heading, &cols, ("", ""), 10, theme)
}

/// Bars of bytes per power-of-two size bucket, with the count of each above it.
pub fn size_histogram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    buckets: &[Bucket],
    color: RGBColor,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if buckets.is_empty() {
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            format!("{heading}: none"),
            (w as i32 / 2, h as i32 / 2),
            theme.text(14).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        return Ok(());
    }
    let cols: Vec<Column> = buckets
        .iter()
        .map(|b| Column {
            label: bytes(b.from).replace(".0", ""),
            bytes: b.bytes,
            color,
            // An empty bucket has no bar and no count: "×0" over most of a histogram's buckets crowded
            // the counts that matter into each other.
            note: if b.count == 0 {
                String::new()
            } else {
                format!("×{}", b.count)
            },
        })
        .collect();
    let descs = ("size (at least)", " in the bucket");
    columns(area, heading, &cols, descs, 2, theme).map(|_| ())
}

/// Allocated against reserved bytes over the trace.
pub fn allocated_vs_reserved<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let s = &r.over_time;
    let y_top = s
        .reserved
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(r.peak.bytes);
    let (mut chart, div) = over_trace(area, heading, r, y_top, theme)?;
    let range = (chart.x_range().start, chart.x_range().end);
    let reserved = over_entries(&s.entries, s.reserved.iter().copied(), div, range);
    let allocated = over_entries(&s.entries, (0..).map(|k| s.total_at(k)), div, range);
    chart
        .draw_series(AreaSeries::new(reserved, 0.0, RESERVED.filled()))?
        .label("reserved (cached + allocated)")
        .legend(swatch(RESERVED, theme));
    chart
        .draw_series(AreaSeries::new(
            allocated,
            0.0,
            ALLOCATED.mix(0.85).filled(),
        ))?
        .label("allocated (live)")
        .legend(swatch(ALLOCATED, theme));
    peak_marker(&mut chart, r, div, theme)?;
    legend(&mut chart, away_from_peak(r), theme)
}

/// A stacked part of a segment's bar: its name, colour and byte range within the segment.
type SegmentPart = (&'static str, RGBColor, fn(&SegmentStats) -> (u64, u64));

/// The largest segments at the snapshot, each split into allocated, pending-free and cached-free bytes.
pub fn segment_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    r: &DeviceReport,
    most: usize,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut segs: Vec<_> = r.segments.iter().collect();
    segs.sort_by_key(|s| (std::cmp::Reverse(s.total_size), s.address));
    segs.truncate(most);
    let n = segs.len().max(1) as u32;
    let max = segs.iter().map(|s| s.total_size).max().unwrap_or(1).max(1);
    let (div, unit_name) = unit(max);
    let mut chart = builder(area, heading, theme)
        .x_label_area_size(theme.px(12))
        .y_label_area_size(theme.px(64))
        .build_cartesian_2d(slots(n), 0f64..max as f64 * 1.08 / div)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(theme.muted.mix(0.25))
        .light_line_style(TRANSPARENT)
        .axis_style(theme.muted)
        .x_label_formatter(&|_| String::new())
        .y_desc(unit_name)
        .label_style(theme.text(12))
        .axis_desc_style(theme.text(13))
        .draw()?;
    let parts: [SegmentPart; 3] = [
        ("allocated", ALLOCATED, |s| (0, s.allocated)),
        ("pending free", PENDING, |s| {
            (s.allocated, s.allocated + s.pending_free)
        }),
        ("cached free", RESERVED, |s| {
            let lo = s.allocated + s.pending_free;
            (lo, lo + s.free)
        }),
    ];
    let gap = theme.px(1);
    for (what, color, range) in parts {
        chart
            .draw_series(segs.iter().enumerate().map(|(i, s)| {
                let (lo, hi) = range(s);
                let i = i as u32;
                let mut bar = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), lo as f64 / div),
                        (SegmentValue::Exact(i + 1), hi as f64 / div),
                    ],
                    color.filled(),
                );
                bar.set_margin(0, 0, gap, gap);
                bar
            }))?
            .label(what)
            .legend(swatch(color, theme));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight, theme)
}

/// A line of small text at the bottom left of `area`.
fn footnote<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (_, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        text.to_string(),
        (theme.px(14) as i32, h as i32 - theme.px(20) as i32),
        theme.quiet(13),
    ))?;
    Ok(())
}

/// The report's five pages, each filling `root`, `which` indexing [`CHARTS`].
pub fn report_page<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    which: usize,
    name: &str,
    r: &DeviceReport,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&theme.background)?;
    let title = format!("{name} · cuda:{}", r.device);
    let (_, h) = root.dim_in_pixel();
    let titled = |t: &str| root.titled(t, theme.bold(22));
    match which {
        0 => {
            let body = root.margin(0, theme.px(28), 0, 0);
            memory_overview(
                &body,
                &format!("Memory over the trace by category — {title}"),
                r,
                theme,
            )?;
            footnote(
                root,
                "Each column shows the moment of highest live memory among the trace entries it stands for.",
                theme,
            )
        }
        1 => {
            let body = root.margin(0, theme.px(28), 0, 0);
            let shown = r.top_consumers.len().min(25);
            top_consumers(
                &body,
                &format!("The {shown} largest allocations live at the peak — {title}"),
                r,
                25,
                theme,
            )?;
            let held: u64 = r.top_consumers.iter().take(shown).map(|c| c.bytes).sum();
            footnote(
                root,
                &format!(
                    "These hold {} of the {} live at the peak ({}). Colours are categories; labels the code that allocated.",
                    bytes(held),
                    bytes(r.live_bytes),
                    count(r.live_allocations as u64, "allocation", "allocations")
                ),
                theme,
            )
        }
        2 => {
            let area = titled(&format!(
                "Where the peak's {} goes — {title}",
                bytes(r.live_bytes)
            ))?;
            let (w, _) = area.dim_in_pixel();
            let (left, right) = area.split_horizontally(w * 11 / 20);
            category_donut(&left, r, theme)?;
            component_bars(&right, "Components", r, theme).map(|_| ())
        }
        3 => {
            let area = titled(&format!("Size distributions — {title}"))?;
            let (top, bottom) = area.split_vertically(h * 47 / 100);
            size_histogram(
                &top,
                &format!(
                    "{} live at the peak, by size",
                    count(r.live_allocations as u64, "allocation", "allocations")
                ),
                &r.live_sizes,
                ALLOCATED,
                theme,
            )?;
            let free: u64 = r.free_sizes.iter().map(|b| b.count).sum();
            size_histogram(
                &bottom,
                &format!("{free} cached free blocks at the snapshot, by size"),
                &r.free_sizes,
                RESERVED,
                theme,
            )
        }
        _ => {
            let e = &r.efficiency;
            let area = titled(&format!(
                "Allocator efficiency — {title}: {:.0} % of reserved cached at the peak, fragmentation {:.2}",
                e.cache_overhead * 100.0,
                e.fragmentation
            ))?;
            let (top, bottom) = area.split_vertically(h * 52 / 100);
            allocated_vs_reserved(&top, "", r, theme)?;
            let most = 60;
            segment_bars(
                &bottom,
                &format!(
                    "The {} largest of {} segments at the snapshot: allocated, pending free, cached free",
                    r.segments.len().min(most),
                    r.segments.len()
                ),
                r,
                most,
                theme,
            )
        }
    }
}

/// The colour of allocated bytes, for pages that draw next to these charts.
pub const ALLOCATED_COLOR: RGBColor = ALLOCATED;
/// The colour of cached free bytes.
pub const FREE_COLOR: RGBColor = RESERVED;

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
    fn axis_units_follow_the_largest_value() {
        assert_eq!(unit(3 << 30), ((1u64 << 30) as f64, "GiB"));
        assert_eq!(unit(5 << 20), ((1u64 << 20) as f64, "MiB"));
        assert_eq!(unit(100), (1.0, "B"));
    }

    #[test]
    fn long_labels_keep_their_end() {
        assert_eq!(tail("abcdef", 4), "…def");
        assert_eq!(tail("abc", 4), "abc");
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

    use plotters_backend::{
        BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
    };

    /// What a chart drew: its filled rectangles and its texts (a backend that only records).
    #[derive(Default)]
    struct Drawn {
        rects: Vec<((i32, i32), (i32, i32))>,
        /// Straight lines, with their colour.
        lines: Vec<(BackendCoord, BackendCoord, (u8, u8, u8))>,
        texts: Vec<(String, (i32, i32))>,
        dots: Vec<Dot>,
        /// Paths of any width (a one-pixel one is in `lines` too), with their colour.
        paths: Vec<(Vec<BackendCoord>, (u8, u8, u8))>,
    }

    /// A filled circle drawn: its centre and colour.
    type Dot = ((i32, i32), (u8, u8, u8));

    /// Records what is drawn on a canvas of the given size.
    struct Recorder(std::rc::Rc<std::cell::RefCell<Drawn>>, (u32, u32));

    impl DrawingBackend for Recorder {
        type ErrorType = std::io::Error;
        fn get_size(&self) -> (u32, u32) {
            self.1
        }
        fn ensure_prepared(&mut self) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            Ok(())
        }
        fn present(&mut self) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            Ok(())
        }
        fn draw_pixel(
            &mut self,
            _: BackendCoord,
            _: BackendColor,
        ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            Ok(())
        }
        fn draw_line<S: BackendStyle>(
            &mut self,
            from: BackendCoord,
            to: BackendCoord,
            style: &S,
        ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            self.0
                .borrow_mut()
                .lines
                .push((from, to, style.color().rgb));
            Ok(())
        }
        fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
            &mut self,
            path: I,
            style: &S,
        ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            // As the trait's own: lines, or a wide path's polygon in scan lines.
            let path: Vec<BackendCoord> = path.into_iter().collect();
            if style.stroke_width() == 1 {
                for pair in path.windows(2) {
                    self.draw_line(pair[0], pair[1], style)?;
                }
            } else {
                let outline = plotters_backend::rasterizer::polygonize(&path, style.stroke_width());
                self.fill_polygon(outline, &style.color())?;
            }
            self.0.borrow_mut().paths.push((path, style.color().rgb));
            Ok(())
        }
        fn draw_rect<S: BackendStyle>(
            &mut self,
            upper_left: BackendCoord,
            bottom_right: BackendCoord,
            _: &S,
            fill: bool,
        ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            if fill {
                self.0.borrow_mut().rects.push((upper_left, bottom_right));
            }
            Ok(())
        }
        fn draw_circle<S: BackendStyle>(
            &mut self,
            center: BackendCoord,
            _: u32,
            style: &S,
            fill: bool,
        ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            if fill {
                self.0.borrow_mut().dots.push((center, style.color().rgb));
            }
            Ok(())
        }
        fn draw_text<T: BackendTextStyle>(
            &mut self,
            text: &str,
            _: &T,
            at: BackendCoord,
        ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
            self.0.borrow_mut().texts.push((text.to_string(), at));
            Ok(())
        }
        fn estimate_text_size<T: BackendTextStyle>(
            &self,
            text: &str,
            _: &T,
        ) -> std::result::Result<(u32, u32), DrawingErrorKind<std::io::Error>> {
            Ok((text.chars().count() as u32 * 6, 11))
        }
    }

    /// What `draw` draws on a canvas of `size` (with the CLI's fonts: legends are laid out with them).
    fn drawn_by(size: (u32, u32), draw: impl FnOnce(&DrawingArea<Recorder, Shift>)) -> Drawn {
        register_embedded_fonts();
        let drawn = std::rc::Rc::new(std::cell::RefCell::new(Drawn::default()));
        draw(&Recorder(drawn.clone(), size).into_drawing_area());
        std::rc::Rc::try_unwrap(drawn).ok().unwrap().into_inner()
    }

    fn histogram_drawn(buckets: &[Bucket]) -> Drawn {
        drawn_by((640, 320), |area| {
            size_histogram(area, "Sizes", buckets, ALLOCATED, &Theme::light()).unwrap()
        })
    }

    #[test]
    fn a_histogram_of_one_bucket_draws_a_bar_with_width() {
        // yiyi_oom_snapshot's cached free blocks: three of 1–2 MiB. One slot made a bar of no width
        // at the left edge, its count floating in the middle.
        let drawn = histogram_drawn(&[Bucket {
            from: 1 << 20,
            count: 3,
            bytes: 4_500_000,
        }]);
        let [((x0, _), (x1, _))] = drawn.rects[..] else {
            panic!("one bar: {:?}", drawn.rects)
        };
        assert!(x1 - x0 > 100, "{x0}..{x1}");
        let (_, (count_x, _)) = drawn.texts.iter().find(|(t, _)| t == "×3").unwrap();
        assert!((x0..x1).contains(count_x), "the count over its bar");
    }

    #[test]
    fn a_crowded_histogram_labels_every_other_bucket_and_none_touch() {
        // 8 KiB to 128 MiB, as a snapshot's live allocations make: on 640 px each label needs two.
        let buckets: Vec<Bucket> = (13..28)
            .map(|k| Bucket {
                from: 1 << k,
                count: if k == 20 { 0 } else { k },
                bytes: if k == 20 { 0 } else { 1 << k },
            })
            .collect();
        let drawn = histogram_drawn(&buckets);
        let labels: Vec<&(String, (i32, i32))> = drawn
            .texts
            .iter()
            .filter(|(t, _)| t.ends_with("iB"))
            .collect();
        assert!(
            labels.len() < buckets.len() && labels.len() >= buckets.len() / 3,
            "{labels:?}"
        );
        assert_eq!(labels[0].0, "8 KiB");
        for pair in labels.windows(2) {
            let room = pair[1].1 .0 - pair[0].1 .0;
            assert!(room > pair[0].0.len() as i32 * 6, "{pair:?}");
        }
        // Every bucket still has its bar and its count, but an empty one ("×0" over most buckets of a
        // real histogram crowded the counts that matter).
        assert_eq!(drawn.rects.len(), buckets.len());
        let counts: Vec<&str> = drawn
            .texts
            .iter()
            .map(|(t, _)| t.as_str())
            .filter(|t| t.starts_with('×'))
            .collect();
        assert_eq!(counts.len(), buckets.len() - 1);
        assert!(!counts.contains(&"×0"));
    }

    #[test]
    fn a_narrow_histogram_draws_the_counts_that_fit_the_tallest_first() {
        // cs_memory_snapshot's live allocations at the peak (16 B to 512 MiB), on a phone's panel:
        // every count drawn ran into its neighbours.
        let counts = [
            1, 0, 4, 0, 1, 61, 0, 7, 73, 29, 3, 28, 14, 1, 0, 0, 0, 0, 5, 74, 143, 14, 36, 0, 26,
            0, 1,
        ];
        let buckets: Vec<Bucket> = counts
            .iter()
            .enumerate()
            .map(|(k, &count)| Bucket {
                from: 16 << k,
                count,
                bytes: count * (16 << k),
            })
            .collect();
        let drawn = drawn_by((340, 280), |area| {
            size_histogram(area, "Sizes", &buckets, ALLOCATED, &Theme::light()).unwrap()
        });
        // As the recorder measures them: 6 px a character, 11 high, anchored at their centre's foot.
        let notes: Vec<&(String, (i32, i32))> = drawn
            .texts
            .iter()
            .filter(|(t, _)| t.starts_with('×'))
            .collect();
        assert!(notes.len() >= 6 && notes.len() < 20, "{notes:?}");
        for (k, (a, (ax, ay))) in notes.iter().enumerate() {
            for (b, (bx, by)) in &notes[k + 1..] {
                let apart =
                    (ax - bx).abs() * 2 >= (a.chars().count() + b.chars().count()) as i32 * 6;
                assert!(
                    apart || (ay - by).abs() >= 11,
                    "{a} at {ax},{ay} touches {b} at {bx},{by}"
                );
            }
        }
        // The tallest columns keep theirs (×143's, just lower than ×36's and beside it, goes).
        for tall in ["×26", "×36", "×74"] {
            assert!(notes.iter().any(|(t, _)| t == tall), "{tall} in {notes:?}");
        }
    }

    #[test]
    fn a_narrow_donut_keeps_its_legend_inside_its_chart() {
        use memograph_snapshot::analysis::categories::Rules;
        use memograph_snapshot::analysis::report::{device_report, ReportOptions};
        let written = memograph_snapshot::synth::pickle(40);
        let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
        let r = device_report(&s, 0, &Rules::built_in(), &ReportOptions::default());
        let legend = |width: u32| {
            let drawn = drawn_by((width, 280), |area| {
                category_donut(area, &r, &Theme::light()).unwrap()
            });
            drawn
                .texts
                .into_iter()
                .filter(|(t, _)| t.ends_with('%'))
                .collect::<Vec<_>>()
        };
        // A phone's panel: the bytes go (the page lists them under the chart), the shares stay.
        let narrow = legend(340);
        assert!(narrow.len() >= 2, "{narrow:?}");
        for (text, (x, _)) in &narrow {
            assert!(x + text.chars().count() as i32 * 6 <= 340, "{text} at {x}");
            assert!(!text.contains("iB"), "{text}");
        }
        // Half a desktop page: each line has both.
        assert!(legend(620).iter().all(|(t, _)| t.contains("iB")));
    }

    #[test]
    fn a_cut_name_keeps_what_tells_it_from_the_others() {
        let names = [
            "kk_memory_ctx128_forward.pickle",
            "kk_memory_ctx128_fullstep.pickle",
        ];
        let keep = distinct_parts(&names);
        assert_eq!(keep, [(17, 24), (17, 25)]);
        // The shared ending goes first, then the shared beginning's middle.
        assert_eq!(
            cut_keeping(names[0], 26, keep[0]),
            "kk_memory_ctx128_forward.…"
        );
        assert_eq!(cut_keeping(names[0], 16, keep[0]), "kk_memo…forward…");
        assert_eq!(cut_keeping(names[1], 16, keep[1]), "kk_mem…fullstep…");
        // Words: "enable" and "disable" share "able", which stays with each.
        let names = ["cache_enable.pickle", "cache_disable.pickle"];
        let keep = distinct_parts(&names);
        assert_eq!(cut_keeping(names[1], 12, keep[1]), "cac…disable…");
        // Ranks: the number is in the first word.
        let names = ["rank0_snapshot.pickle", "rank12_snapshot.pickle"];
        let keep = distinct_parts(&names);
        assert_eq!(keep, [(0, 5), (0, 6)]);
        assert_eq!(cut_keeping(names[1], 9, keep[1]), "rank12_s…");
        // Alone, or where the part to keep is longer than the room: its middle goes.
        assert_eq!(distinct_parts(&["magma.pickle"]), [(0, 12)]);
        assert_eq!(cut_keeping("short", 8, (0, 5)), "short");
        assert_eq!(
            cut_keeping("kk_memory_ctx128_fullstep.pickle", 12, (0, 32)),
            "kk_m….pickle"
        );
        assert_eq!(
            cut_keeping("x_a_very_long_distinct_part_y", 12, (2, 27)),
            "…a_v…t_part…"
        );
        // Names the same but for their case or an ending of their own.
        assert_eq!(distinct_parts(&["run", "run"]), [(0, 3), (0, 3)]);
        assert_eq!(distinct_parts(&["run", "run.1"]), [(0, 3), (0, 5)]);
        // Each against the name it is most like.
        let names = ["kk_ctx128_forward", "kk_ctx128_fullstep", "magma"];
        assert_eq!(distinct_parts(&names), [(10, 17), (10, 18), (0, 5)]);
    }

    #[test]
    fn a_legend_wider_than_its_chart_keeps_each_runs_own_words_and_figures() {
        let line = |name: &str, keep, peak: &str| LegendLine {
            name: name.to_string(),
            keep,
            figures: format!(" (peak {peak})"),
            key: Key::None,
        };
        let names = [
            "kk_memory_ctx128_forward.pickle",
            "kk_memory_ctx128_fullstep.pickle",
            "magma",
        ];
        let keep = distinct_parts(&names);
        let lines = vec![
            line(names[0], keep[0], "16.4 GiB"),
            line(names[1], keep[1], "51.0 GiB"),
            line(names[2], keep[2], "13.0 GiB"),
            LegendLine::plain("… and 3 more (colours as in the table)".into(), Key::None),
        ];
        // A phone's chart, 300 px: the two long names are cut to fit, the short one stays whole.
        let drawn = drawn_by((300, 200), |area| {
            let legend = Legend::new(area, lines, &Theme::light()).unwrap();
            (legend.draw(area, SeriesLabelPosition::UpperLeft, &Theme::light())).unwrap()
        });
        assert_eq!(drawn.texts.len(), 4);
        for (text, (x, _)) in &drawn.texts {
            assert!(x + text.chars().count() as i32 * 6 <= 300, "{text} at {x}");
        }
        let texts: Vec<&str> = drawn.texts.iter().map(|t| t.0.as_str()).collect();
        assert!(texts[0].contains("…forward") && texts[0].ends_with("(peak 16.4 GiB)"));
        assert!(
            texts[1].contains("…fullstep") && texts[1].ends_with("(peak 51.0 GiB)"),
            "{texts:?}"
        );
        assert_eq!(texts[2], "magma (peak 13.0 GiB)");
        assert_eq!(texts[3], "… and 3 more (colours as in the table)");
    }

    #[test]
    fn the_six_components_are_each_labelled() {
        let cols: Vec<Column> = [
            "Parameters",
            "Gradients",
            "Optimizer state",
            "Activations",
            "Before recording",
            "Other",
        ]
        .iter()
        .map(|l| Column {
            label: l.to_string(),
            bytes: 1 << 30,
            color: ALLOCATED,
            note: String::new(),
        })
        .collect();
        // Half of a 1400 px page, as the page shows them (they were, until every other one went).
        let drawn = drawn_by((660, 320), |area| {
            columns(area, "Components", &cols, ("", ""), 10, &Theme::light()).unwrap();
        });
        let texts: Vec<String> = drawn.texts.iter().map(|t| t.0.clone()).collect();
        for c in &cols {
            assert!(texts.contains(&c.label), "{} in {texts:?}", c.label);
        }
    }

    #[test]
    fn few_buckets_are_each_labelled() {
        assert_eq!(label_every(6, 560.0, 60.0), 1);
        assert_eq!(label_every(15, 560.0, 45.0), 2);
        assert_eq!(label_every(0, 560.0, 45.0), 1);
    }

    #[test]
    fn a_one_entry_trace_is_a_level_over_its_whole_share() {
        assert_eq!(from_the_start(vec![(1.0, 7)]), vec![(0.0, 7), (1.0, 7)]);
        let more = vec![(0.5, 7), (1.0, 9)];
        assert_eq!(from_the_start(more.clone()), more);
        assert!(from_the_start(Vec::new()).is_empty());
    }

    #[test]
    fn the_step_axis_starts_at_zero_for_a_run_from_its_start_and_at_the_first_step_for_a_resumed_one(
    ) {
        let run = |steps: &[u64]| vec![steps.iter().map(|&s| (s as f64, 1)).collect::<Vec<_>>()];
        assert_eq!(step_range(&run(&[1, 2, 1000])), (0.0, 1000.0));
        assert_eq!(step_range(&run(&[500, 1000])), (0.0, 1000.0));
        assert_eq!(step_range(&run(&[50_000, 50_100])), (50_000.0, 50_100.0));
        assert_eq!(step_range(&run(&[5])), (4.0, 6.0));
        assert_eq!(step_range(&run(&[0])), (0.0, 2.0));
        // Past 2^53 steps are not one apart in f64: the span still has a width.
        let far = (1u64 << 57) as f64;
        let (a, b) = step_range(&run(&[1 << 57]));
        assert!(a < far && far < b, "{a}..{b}");
        assert_eq!(step_range(&[]), (0.0, 1.0));
        // Ticks between whole steps have no label (they read "0 0 1 2 2 2 3").
        assert_eq!(count_label(0.5, 2.0), "");
        assert_eq!(count_label(2.0, 2.0), "2");
        assert_eq!(count_label(1e15 + 0.5, 1e16), "1P");
    }

    /// A run named `name` at `peak` allocated bytes over `steps`.
    fn flat_run(name: &str, steps: std::ops::Range<u64>, peak: u64) -> StepRun {
        StepRun {
            name: name.into(),
            steps: steps
                .map(|step| StepRecord {
                    step,
                    peak_allocated_bytes: Some(peak),
                    ..StepRecord::default()
                })
                .collect(),
            ..StepRun::default()
        }
    }

    #[test]
    fn snapshots_at_one_point_are_labelled_once() {
        // Four ranks' exit snapshots at the last step: three at one peak, one higher.
        let run = |peak: u64| flat_run("", 1..21, peak);
        let runs = [run(40 << 30), run(40 << 30), run(46 << 30), run(40 << 30)];
        let refs: Vec<&StepRun> = runs.iter().collect();
        let mut marks: Vec<(usize, u64, String)> = (0..4).map(|k| (k, 20, "exit".into())).collect();
        // Another kind of snapshot at the same point keeps its label.
        marks.push((0, 20, "oom".into()));
        let options = StepChartOptions {
            reserved: false,
            theoretical: false,
        };
        let drawn = drawn_by((800, 400), |area| {
            step_chart(area, "", &refs, options, &marks, None, &Theme::light()).unwrap();
        });
        let count = |label: &str| drawn.texts.iter().filter(|t| t.0 == label).count();
        assert_eq!((count("exit"), count("oom")), (2, 1));
    }

    #[test]
    fn a_short_run_beside_a_long_one_is_drawn_as_dots() {
        let run = |name: &str, steps: std::ops::Range<u64>| flat_run(name, steps, 1 << 30);
        let (long, short) = (run("long", 0..20_000), run("short", 5..8));
        let options = StepChartOptions {
            reserved: false,
            theoretical: false,
        };
        let drawn = drawn_by((800, 400), |area| {
            step_chart(
                area,
                "",
                &[&long, &short],
                options,
                &[],
                None,
                &Theme::light(),
            )
            .unwrap();
        });
        // Three dots in the short run's colour (the second), none in the long run's.
        let colour = |k: usize| {
            let c = rgb(RUN_COLORS[k]);
            (c.0, c.1, c.2)
        };
        let dots = |k: usize| drawn.dots.iter().filter(|d| d.1 == colour(k)).count();
        assert_eq!((dots(0), dots(1)), (0, 3));
        // A run of one step alone: a dot in the middle of the plot, between whole-step labels.
        let one = run("one", 5..6);
        let drawn = drawn_by((800, 400), |area| {
            step_chart(area, "", &[&one], options, &[], None, &Theme::light()).unwrap();
        });
        let [((x, _), _)] = drawn.dots[..] else {
            panic!("one dot: {:?}", drawn.dots)
        };
        assert!((350..450).contains(&x), "{x}");
        let labels: Vec<&str> = drawn
            .texts
            .iter()
            .map(|t| t.0.as_str())
            .filter(|t| ["4", "5", "6"].contains(t))
            .collect();
        assert_eq!(labels, ["4", "5", "6"]);
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

    #[test]
    fn each_run_s_static_and_theoretical_lines_are_in_its_colour() {
        // Two runs with their static and theoretical memory: one colour for every static line (and
        // another for every theoretical one) left nobody able to tell whose line was whose.
        let run = |name: &str, peak: u64, fixed: u64, theory: u64| StepRun {
            static_bytes: Some(fixed),
            theoretical_bytes: Some(theory),
            ..flat_run(name, 1..11, peak)
        };
        let (a, b) = (
            run("a", 8 << 30, 3 << 30, 5 << 30),
            run("b", 4 << 30, 1 << 30, 2 << 30),
        );
        let options = StepChartOptions {
            reserved: false,
            theoretical: true,
        };
        let drawn = drawn_by((800, 400), |area| {
            step_chart(area, "", &[&a, &b], options, &[], None, &Theme::light()).unwrap();
        });
        let colour = |k: usize| {
            let c = run_color(k);
            (c.0, c.1, c.2)
        };
        // The heights at which a run's colour has many short horizontal dashes (its legend swatch,
        // a short line too, is one).
        let dashed_at = |k: usize| {
            let mut by_height = std::collections::BTreeMap::<i32, usize>::new();
            for (p, c) in &drawn.paths {
                if *c == colour(k) && p.len() == 2 && p[0].1 == p[1].1 && p[1].0 - p[0].0 < 40 {
                    *by_height.entry(p[0].1).or_default() += 1;
                }
            }
            by_height
                .into_iter()
                .filter(|&(_, n)| n > 50)
                .map(|(y, _)| y)
                .collect::<Vec<_>>()
        };
        // Each run: two reference lines (theoretical above static), each of many dashes.
        for k in 0..2 {
            assert_eq!(dashed_at(k).len(), 2, "run {k}: {:?}", dashed_at(k));
        }
        // Run a's lines stand above run b's (3 and 5 GiB against 1 and 2).
        assert!(dashed_at(0)[1] < dashed_at(1)[0]);
        let legend: Vec<&str> = drawn.texts.iter().map(|t| t.0.as_str()).collect();
        for entry in ["static memory", "theoretical memory"] {
            assert_eq!(
                legend.iter().filter(|t| **t == entry).count(),
                1,
                "{legend:?}"
            );
        }
    }

    #[test]
    fn a_legend_of_many_runs_names_eleven_and_counts_the_rest() {
        let runs: Vec<StepRun> = (0..32)
            .map(|k| StepRun {
                name: format!("rank{k}"),
                steps: vec![StepRecord {
                    step: 1,
                    peak_allocated_bytes: Some(1 << 30),
                    ..StepRecord::default()
                }],
                ..StepRun::default()
            })
            .collect();
        let refs: Vec<&StepRun> = runs.iter().collect();
        let options = StepChartOptions {
            reserved: false,
            theoretical: false,
        };
        let legend = |refs: &[&StepRun]| {
            let drawn = drawn_by((800, 400), |area| {
                step_chart(area, "", refs, options, &[], None, &Theme::light()).unwrap();
            });
            drawn
                .texts
                .iter()
                .map(|t| t.0.clone())
                .filter(|t| t.starts_with("rank") || t.starts_with('…'))
                .collect::<Vec<_>>()
        };
        let named = legend(&refs);
        assert_eq!(named.len(), LEGEND_RUNS, "{named:?}");
        assert_eq!(named[0], "rank0");
        assert_eq!(
            named[LEGEND_RUNS - 1],
            "… and 21 more (colours as in the table)"
        );
        // Twelve runs: each named.
        assert_eq!(legend(&refs[..12]).len(), 12);
    }

    #[test]
    fn a_narrow_charts_legend_stands_under_its_plot() {
        let run = |name: &str, peak: u64| StepRun {
            name: name.to_string(),
            steps: (1..40)
                .map(|step| StepRecord {
                    step,
                    peak_allocated_bytes: Some(peak + step * (1 << 20)),
                    ..StepRecord::default()
                })
                .collect(),
            static_bytes: Some(peak / 2),
            ..StepRun::default()
        };
        let runs = [
            run("llama_ctx4096_bs8", 40 << 30),
            run("llama_ctx8192_bs8", 60 << 30),
        ];
        let refs: Vec<&StepRun> = runs.iter().collect();
        let options = StepChartOptions {
            reserved: false,
            theoretical: false,
        };
        let legend_at = |size: (u32, u32)| {
            let mut plot = None;
            let drawn = drawn_by(size, |area| {
                plot =
                    Some(step_chart(area, "", &refs, options, &[], None, &Theme::light()).unwrap());
            });
            let plot = plot.unwrap();
            let lines: Vec<(String, (i32, i32))> = (drawn.texts.into_iter())
                .filter(|t| t.0.starts_with("llama") || t.0 == "static memory")
                .collect();
            (plot, lines)
        };
        // On a phone the legend (three lines, over half the plot's width) goes under the chart, whole.
        let (plot, lines) = legend_at((360, 440));
        assert_eq!(lines.len(), 3, "{lines:?}");
        for (text, (_, y)) in &lines {
            assert!(
                *y > plot.y.1 + 30,
                "{text} at {y}, the plot ends at {}",
                plot.y.1
            );
        }
        assert!(plot.y.1 - plot.y.0 > 200, "{plot:?}");
        // On a wide chart it stays in the plot's lower right corner.
        let (plot, lines) = legend_at((1000, 340));
        for (text, (x, y)) in &lines {
            assert!(
                *y < plot.y.1 && *x > (plot.x.0 + plot.x.1) / 2,
                "{text} at {x},{y}"
            );
        }
        // Sixteen runs on a phone: it names fewer of them (twelve lines covered the plot), all under it.
        let runs: Vec<StepRun> = (0..16)
            .map(|k| run(&format!("rank{k}"), (40 + k) << 30))
            .collect();
        let refs: Vec<&StepRun> = runs.iter().collect();
        let mut plot = None;
        let drawn = drawn_by((360, 440), |area| {
            plot = Some(step_chart(area, "", &refs, options, &[], None, &Theme::light()).unwrap());
        });
        let plot = plot.unwrap();
        let legend: Vec<&(String, (i32, i32))> = (drawn.texts.iter())
            .filter(|t| {
                t.0.starts_with("rank") || t.0.starts_with("… and") || t.0 == "static memory"
            })
            .collect();
        let named = legend.iter().filter(|t| t.0.starts_with("rank")).count();
        assert!((2..LEGEND_RUNS - 1).contains(&named), "{legend:?}");
        let more = format!("… and {} more (colours as in the table)", 16 - named);
        assert!(legend.iter().any(|t| t.0 == more), "{legend:?}");
        assert!(
            legend.iter().all(|t| t.1 .1 > plot.y.1 + 30),
            "{legend:?} {plot:?}"
        );
        assert!(plot.y.1 - plot.y.0 > 150, "{plot:?}");
    }

    #[test]
    fn entries_label_whole_ticks_only_and_a_lone_sample_spans_the_chart() {
        assert_eq!(entry_label(&-1.0), "-1");
        assert_eq!(entry_label(&(5.0 * 0.2 - 1.0)), "0");
        assert_eq!(entry_label(&(5.0 * 0.2)), "1");
        assert_eq!(entry_label(&-0.2), "");
        assert_eq!(entry_label(&1_234_000.0), "1234000");
        assert_eq!(
            over_entries(&[0], [10], 2.0, (-1.0, 1.0)),
            vec![(-1.0, 5.0), (1.0, 5.0)]
        );
        let two = vec![(0.0, 5.0), (3.0, 1.0)];
        assert_eq!(over_entries(&[0, 3], [10, 2], 2.0, (-1.0, 9.0)), two);
        assert!(over_entries(&[], [], 2.0, (-1.0, 9.0)).is_empty());
    }

    #[test]
    fn a_rule_drawn_apart_goes_where_the_chart_draws_its_marker() {
        use memograph_snapshot::analysis::categories::Rules;
        use memograph_snapshot::analysis::compare::digests;
        let written = memograph_snapshot::synth::pickle(40);
        let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
        let d = digests(&s, &Rules::built_in(), "run.pickle", 0).remove(0);
        let theme = Theme::light();
        let muted = (theme.muted.0, theme.muted.1, theme.muted.2);
        let draw = |marker: Option<f64>| {
            let mut plot = None;
            let drawn = drawn_by((900, 340), |area| {
                plot = Some(
                    overlaid_curves(
                        area,
                        "",
                        &[(&d, run_color(0))],
                        &CompareAxis::Fraction,
                        Some((0.0, 1.0)),
                        marker,
                        &theme,
                    )
                    .unwrap(),
                );
            });
            (drawn.lines, plot.unwrap())
        };
        let (plain, _) = draw(None);
        // (Not at a grid line: the same line there.)
        for at in [0.03, 0.37, 0.55, 0.93] {
            let (lines, plot) = draw(Some(at));
            // The marker: the line the chart without it does not have (the grid is muted too).
            let mut rule = lines.clone();
            for line in &plain {
                if let Some(k) = rule.iter().position(|l| l == line) {
                    rule.remove(k);
                }
            }
            assert_eq!(rule.len(), 1, "at {at}: {rule:?}");
            let (a, b, colour) = rule[0];
            assert!(
                colour == muted && a.0 == b.0 && (a.1 - b.1).abs() > 200,
                "{rule:?}"
            );
            let px = plot.px_of(at).unwrap();
            assert!(
                (px - f64::from(rule[0].0 .0)).abs() <= 1.0,
                "at {at}: {px} vs {rule:?}"
            );
            // And back.
            let back = plot.x_at(px.round() as i32).unwrap();
            assert!((back - at).abs() < 2.0 / 800.0, "{back} vs {at}");
        }
        let plot = PlotArea {
            x: (10, 110),
            y: (0, 50),
            x_range: (2.0, 4.0),
        };
        assert_eq!(plot.px_of(3.0), Some(60.0));
        assert_eq!(plot.px_of(1.9), None);
        assert_eq!(plot.px_of(f64::NAN), None);
    }

    #[test]
    fn a_curve_zoomed_to_a_millionth_is_drawn_within_reach_of_its_view() {
        use memograph_snapshot::analysis::categories::Rules;
        use memograph_snapshot::analysis::compare::digests;
        let written = memograph_snapshot::synth::pickle(40);
        let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
        let d = digests(&s, &Rules::built_in(), "run.pickle", 0).remove(0);
        // The page's deepest zoom (a millionth of the traces) exported at 2×: the trace's end lies
        // 0.95 M views to the right, past 2^31 px (plotters' i32 overflowed there).
        let width = 2800;
        let colour = run_color(0);
        for dashed in [false, true] {
            let runs: Vec<(&Digest, RGBColor)> = if dashed {
                // The palette's second round is dashed.
                (0..=RUN_COLORS.len()).map(|_| (&d, colour)).collect()
            } else {
                vec![(&d, colour)]
            };
            let drawn = drawn_by((width, 700), |area| {
                overlaid_curves(
                    area,
                    "",
                    &runs,
                    &CompareAxis::Fraction,
                    Some((0.05, 0.05 + 1e-6)),
                    None,
                    &Theme::light().scaled(2.0),
                )
                .unwrap();
            });
            let rgb = (colour.0, colour.1, colour.2);
            let curve: Vec<_> = drawn.lines.iter().filter(|l| l.2 == rgb).collect();
            assert!(!curve.is_empty());
            let reach = 3 * width as i32;
            let far = curve
                .iter()
                .find(|(a, b, _)| a.0.abs().max(b.0.abs()) > reach);
            assert!(far.is_none(), "{far:?}");
        }
    }

    #[test]
    fn a_step_path_keeps_what_shows_of_it() {
        // Out of sight to the left, a vertical run there, in view, out of sight to the right.
        let path = vec![
            (-50.0, 1.0),
            (-40.0, 1.0),
            (-40.0, 3.0),
            (-40.0, 2.0),
            (0.5, 2.0),
            (0.5, 4.0),
            (1.0, 4.0),
            (70.0, 4.0),
            (70.0, 0.0),
        ];
        assert_eq!(
            within_view(path, 0.0, 1.0),
            vec![
                (-1.0, 1.0),
                (-1.0, 2.0),
                (0.5, 2.0),
                (0.5, 4.0),
                (1.0, 4.0),
                (2.0, 4.0),
                (2.0, 0.0),
            ]
        );
        // At the view's edge a vertical run shows whole.
        let edge = vec![(0.0, 1.0), (0.0, 5.0), (0.0, 2.0)];
        assert_eq!(within_view(edge.clone(), 0.0, 1.0), edge);
    }

    #[test]
    fn the_peak_label_stands_clear_of_the_reserved_bytes_under_it() {
        use memograph_snapshot::analysis::categories::Rules;
        use memograph_snapshot::analysis::report::{device_report, ReportOptions};
        let written = memograph_snapshot::synth::pickle(40);
        let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
        let r = device_report(&s, 0, &Rules::built_in(), &ReportOptions::default());
        let peak = r.peak.event as usize;
        let at_peak = |v: &[u64]| {
            let k = r.over_time.entries.partition_point(|&e| e <= peak as i64);
            v[k.saturating_sub(1)]
        };
        assert!(
            at_peak(&r.over_time.reserved) > r.peak.bytes,
            "the case: reserved over the peak"
        );
        let theme = Theme::light();
        let ink = (theme.ink.0, theme.ink.1, theme.ink.2);
        type Chart = fn(&DrawingArea<Recorder, Shift>, &DeviceReport, &Theme);
        let charts: [(&str, Chart, (u8, u8, u8)); 2] = [
            (
                "memory_overview",
                |a, r, t| memory_overview(a, "", r, t).unwrap(),
                ink,
            ),
            (
                "allocated_vs_reserved",
                |a, r, t| allocated_vs_reserved(a, "", r, t).unwrap(),
                (RESERVED.0, RESERVED.1, RESERVED.2),
            ),
        ];
        for (name, chart, reserved_colour) in charts {
            for size in [(900, 340), (640, 200)] {
                let drawn = drawn_by(size, |area| chart(area, &r, &theme));
                let (text, (x, bottom)) = drawn
                    .texts
                    .iter()
                    .find(|(t, _)| t.starts_with(" peak "))
                    .unwrap()
                    .clone();
                // Right-aligned past the middle (the Recorder's text is 6 pixels a character).
                let width = text.chars().count() as i32 * 6;
                let (left, right) = if x > size.0 as i32 / 2 {
                    (x - width, x)
                } else {
                    (x, x + width)
                };
                // The reserved bytes as drawn: the ink line, or the outline of the reserved area.
                let under: Vec<_> = drawn
                    .lines
                    .iter()
                    .filter(|(a, b, c)| {
                        *c == reserved_colour && a.0.max(b.0) >= left && a.0.min(b.0) <= right
                    })
                    .collect();
                assert!(
                    !under.is_empty(),
                    "{name} {size:?}: no reserved line under the label"
                );
                for (a, b, _) in under {
                    assert!(
                        a.1.min(b.1) >= bottom,
                        "{name} {size:?}: the label (bottom {bottom}) over the line {a:?}–{b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_out_of_memory_is_placed_where_its_entry_is_on_every_axis() {
        use memograph_snapshot::analysis::categories::Rules;
        use memograph_snapshot::analysis::compare::{digests, OomPoint};
        let written = memograph_snapshot::synth::pickle(40);
        let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
        let mut d = digests(&s, &Rules::built_in(), "run.pickle", 0).remove(0);
        assert_eq!(oom_point(&d, &CompareAxis::Fraction), None);
        let entry = d.entries as i64 / 2;
        d.oom_at = Some(OomPoint {
            entry,
            time_us: Some(1_500_000),
            bytes: 7,
            requested: 0,
            device_free: None,
            reserved: 0,
        });
        d.marks = vec![("step".into(), 10)];
        let share = (entry as f64 + 1.0) / d.entries as f64;
        assert_eq!(oom_point(&d, &CompareAxis::Fraction), Some((share, 7)));
        assert_eq!(oom_point(&d, &CompareAxis::Seconds), Some((1.5, 7)));
        let from_mark = CompareAxis::AtMark("step".into());
        assert_eq!(oom_point(&d, &from_mark), Some(((entry - 10) as f64, 7)));
        assert_eq!(oom_point(&d, &CompareAxis::AtMark("other".into())), None);
        // The curve's points go through the same placing: the first one's share is its entry's.
        let first = curve_points(&d, &CompareAxis::Fraction)[0];
        let e0 = d.curve.entries[0];
        assert_eq!(first.0, (e0.max(0) as f64 + 1.0) / d.entries as f64);
        d.oom_at.as_mut().unwrap().time_us = None;
        assert_eq!(oom_point(&d, &CompareAxis::Seconds), None);
    }
}

/// One colour per compared run, in the order the runs are listed (the page's overlaid chart and the
/// report's `compare.png` use the same).
pub const RUN_COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#7f7f7f",
];

/// The colour of compared run `k`.
pub fn run_color(k: usize) -> RGBColor {
    rgb(RUN_COLORS[k % RUN_COLORS.len()])
}

/// Whether compared run `k` is drawn dashed: past the palette's length colours come round again, and
/// every other time round the runs are dashed, so sixteen runs stay told apart.
pub fn run_dashed(k: usize) -> bool {
    (k / RUN_COLORS.len()) % 2 == 1
}

/// The x axis of overlaid live curves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompareAxis {
    /// Each trace from 0 to 1 (runs of different lengths side by side).
    Fraction,
    /// Seconds from each trace's first entry (traces with times; the others are left out).
    Seconds,
    /// Entries from the first `external_annotations` mark of this name (runs without it are left
    /// out), so the same phase of each run lines up.
    AtMark(String),
}

/// Where entry `entry` of digest `d` (at `time_us` from its trace's start, when known) lies on `axis`;
/// `None` when it cannot be placed there (no such mark, no time).
fn place(d: &Digest, axis: &CompareAxis, entry: i64, time_us: Option<i64>) -> Option<f64> {
    match axis {
        CompareAxis::AtMark(name) => {
            let &(_, at) = d.marks.iter().find(|(n, _)| n == name)?;
            Some((entry - at) as f64)
        }
        CompareAxis::Fraction => Some((entry.max(0) as f64 + 1.0) / d.entries.max(1) as f64),
        CompareAxis::Seconds => time_us.map(|t| t as f64 / 1e6),
    }
}

/// A curve's points on `axis`: (x, bytes). Empty when the digest cannot be placed on it.
pub fn curve_points(d: &Digest, axis: &CompareAxis) -> Vec<(f64, u64)> {
    let c = &d.curve;
    let placed: Option<Vec<(f64, u64)>> = c
        .entries
        .iter()
        .zip(&c.bytes)
        .enumerate()
        .map(|(k, (&e, &b))| Some((place(d, axis, e, c.time_us.get(k).copied())?, b)))
        .collect();
    placed.unwrap_or_default()
}

/// Where the run first ran out of memory on `axis`: (x, bytes live then); `None` when it never did or
/// that cannot be placed there.
pub fn oom_point(d: &Digest, axis: &CompareAxis) -> Option<(f64, u64)> {
    let o = d.oom_at?;
    Some((place(d, axis, o.entry, o.time_us)?, o.bytes))
}

/// A curve over shares of its trace as drawn: a trace of one entry is one level over the whole of it,
/// from 0, not a lone point at 100 % (which drew as the peak's dot and no line). Drawn only: a point
/// of [`curve_points`] stands for an entry of the curve.
fn from_the_start(points: Vec<(f64, u64)>) -> Vec<(f64, u64)> {
    match points[..] {
        [(x, b)] if x > 0.0 => vec![(0.0, b), (x, b)],
        _ => points,
    }
}

/// A path of horizontal and vertical segments (a curve drawn as steps) as it shows between `x0` and
/// `x1`: each point's x held to a view's width either side, and of points held to one side only the
/// first and last kept. What shows is the same, but no point lies where its pixel overflows an `i32`
/// (a curve zoomed in to a millionth of its trace reached 2^31 px at the export's 2× scale: plotters'
/// mapping wrapped it, in release, to a line across the chart), and a dashed curve is not dashed over
/// millions of pixels out of sight.
fn within_view(path: Vec<(f64, f64)>, x0: f64, x1: f64) -> Vec<(f64, f64)> {
    let span = x1 - x0;
    let (lo, hi) = (x0 - span, x1 + span);
    let held: Vec<(f64, f64)> = path
        .into_iter()
        .map(|(x, y)| (x.clamp(lo, hi), y))
        .collect();
    let mut out = Vec::with_capacity(held.len());
    for (k, &p) in held.iter().enumerate() {
        // Out of sight (not merely at the view's edge, where a vertical run's every point shows).
        let inner = !(x0..=x1).contains(&p.0)
            && k > 0
            && held[k - 1].0 == p.0
            && held.get(k + 1).is_some_and(|n| n.0 == p.0);
        if !inner {
            out.push(p);
        }
    }
    out
}

/// The x range that holds every point of `curves`.
pub fn full_range(curves: &[Vec<(f64, u64)>]) -> (f64, f64) {
    let xs = curves.iter().flatten().map(|p| p.0);
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let lo = lo.min(0.0);
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

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
fn count_label(x: f64, span: f64) -> String {
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
fn decimals_for(span: f64) -> usize {
    tick_decimals(span / 10.0)
}

/// How much narrower a line chart's plot is than its area: the margins and the byte axis's labels
/// (see [`line_chart`]).
const LINE_CHART_SIDES: u32 = 12 + 64 + 24 + 12;

/// A line chart over `x` with a byte axis reaching `top` (with room above it): `descs` are the x and y
/// axis descriptions (`{unit}` in the y one becomes the byte unit). Returns the unit's divisor too.
fn line_chart<'a, DB: DrawingBackend>(
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
fn finish_line_chart<'a, DB: DrawingBackend + 'a>(
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

/// The live-bytes curves of several runs on one chart, each in its run colour, peaks marked, over
/// `x_range` of `axis` (`None`: all of it). `marker`: an x to draw a vertical rule at (the pointer).
pub fn overlaid_curves<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    runs: &[(&Digest, RGBColor)],
    axis: &CompareAxis,
    x_range: Option<(f64, f64)>,
    marker: Option<f64>,
    theme: &Theme,
) -> Result<PlotArea>
where
    DB::ErrorType: 'static,
{
    let curves: Vec<Vec<(f64, u64)>> = runs.iter().map(|(d, _)| curve_points(d, axis)).collect();
    let folder = common_folder(runs.iter().map(|(d, _)| d.file.as_str()));
    let (x0, x1) = x_range.unwrap_or_else(|| full_range(&curves));
    let x1 = if x1 > x0 { x1 } else { x0 + 1e-9 };
    let top = runs
        .iter()
        .map(|(d, _)| d.timeline_peak_bytes)
        .max()
        .unwrap_or(1)
        .max(1);
    let x_desc = match axis {
        CompareAxis::Fraction => "share of each trace".to_string(),
        CompareAxis::Seconds => "seconds from each trace's start".to_string(),
        CompareAxis::AtMark(name) => format!("entries from '{name}'"),
    };
    // As many decimals as a zoomed-in axis needs to tell its ticks apart.
    let span = x1 - x0;
    let x_label = |x: &f64| match axis {
        CompareAxis::Fraction => format!("{:.*} %", decimals_for(span * 100.0), x * 100.0),
        CompareAxis::Seconds => format!("{x:.*}", decimals_for(span).max(2)),
        CompareAxis::AtMark(_) => count_label(*x, span),
    };
    // Past a few dozen runs, each curve one device pixel wide: a canvas strokes such a line with a
    // rasteriser of its own many times faster than a wider one (600 runs' curves two pixels wide
    // held the page's frames ~70 ms each), and hundreds of curves are a band either way.
    let width = if runs.len() > THIN_PAST_RUNS {
        1
    } else {
        theme.px(2)
    };
    // Dashed, legend too, on the palette's second time round (callers colour run `n` with
    // `run_color(n)`).
    let style = |n: usize| (runs[n].1.stroke_width(width), run_dashed(n));
    let lines = |named: usize| {
        let legend_runs: Vec<usize> = (0..runs.len())
            .filter(|&n| in_legend(n, runs.len(), named) && !curves[n].is_empty())
            .collect();
        let names: Vec<&str> = (legend_runs.iter())
            .map(|&n| within(&runs[n].0.file, folder))
            .collect();
        let mut lines: Vec<LegendLine> = (legend_runs.iter().zip(&names))
            .zip(distinct_parts(&names))
            .map(|((&n, name), keep)| LegendLine {
                name: name.to_string(),
                keep,
                figures: format!(" (peak {})", bytes(runs[n].0.timeline_peak_bytes)),
                key: match style(n) {
                    (style, true) => Key::Pattern(style, &DASHED_KEY),
                    (style, false) => Key::Line(style),
                },
            })
            .collect();
        lines.extend(more_runs(runs.len(), named));
        lines
    };
    let (legend, area, below) = Legend::fitted(area, runs.len(), lines, theme)?;
    let (mut chart, div) = line_chart(
        &area,
        heading,
        (x0, x1),
        top,
        (&x_desc, "{unit}"),
        &x_label,
        theme,
    )?;
    for (n, points) in curves.iter().enumerate() {
        if points.is_empty() {
            continue;
        }
        let drawn = match axis {
            CompareAxis::Fraction => from_the_start(points.clone()),
            _ => points.clone(),
        };
        // Each point holds until the next (live bytes change at entries), clipped to the view.
        let mut steps: Vec<(f64, f64)> = Vec::with_capacity(drawn.len() * 2);
        for (k, &(x, b)) in drawn.iter().enumerate() {
            let y = b as f64 / div;
            if k > 0 {
                steps.push((x, steps.last().map_or(y, |p| p.1)));
            }
            steps.push((x, y));
        }
        let steps = within_view(steps, x0, x1);
        match style(n) {
            (style, true) => {
                let (dash, gap) = (theme.px(6), theme.px(4));
                chart.draw_series(DashedLineSeries::new(steps, dash, gap, style))?;
            }
            (style, false) => {
                chart.draw_series(LineSeries::new(steps, style))?;
            }
        }
    }
    // Each run's peak (a dot) and where it ran out of memory (a cross), over every curve: drawn after
    // them all, no run's curve hides another's marks (and on a canvas each curve is stroked whole,
    // not cut at its marks).
    for (points, (d, color)) in curves.iter().zip(runs) {
        if let Some(&(px, pb)) = points
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.total_cmp(&a.0)))
        {
            if (x0..=x1).contains(&px) {
                chart.draw_series(std::iter::once(Circle::new(
                    (px, pb as f64 / div),
                    theme.px(4),
                    color.filled(),
                )))?;
            }
        }
        if let Some((ox, ob)) = oom_point(d, axis).filter(|p| (x0..=x1).contains(&p.0)) {
            chart.draw_series(std::iter::once(Cross::new(
                (ox, ob as f64 / div),
                theme.px(6),
                color.stroke_width(theme.px(2)),
            )))?;
        }
    }
    finish_line_chart(chart, marker, theme, |chart| {
        legend.draw_on(chart, below, SeriesLabelPosition::UpperLeft, theme)
    })
}

/// How many overlaid curves are drawn [`theme`](Theme)-wide; past them, one device pixel wide.
const THIN_PAST_RUNS: usize = 48;

/// Runs a chart's legend names one by one; past them it names the first `LEGEND_RUNS - 1` and says how
/// many more there are (32 ranks' names ran off the chart, over its axes). Under a phone's chart,
/// fewer: as many as leave the plot most of the chart's height (see [`Legend::fitted`]).
const LEGEND_RUNS: usize = 12;

/// Whether run `k` of `runs` has its own line in a legend that names at most `named`.
fn in_legend(k: usize, runs: usize, named: usize) -> bool {
    runs <= named || k + 1 < named
}

/// The legend's line for the runs it does not name.
fn more_runs(runs: usize, named: usize) -> Option<LegendLine> {
    (runs > named).then(|| {
        let more = runs - named.saturating_sub(1);
        LegendLine::plain(
            format!("… and {more} more (colours as in the table)"),
            Key::None,
        )
    })
}

/// What a legend's line draws before its text: nothing, a stroke of a curve's style, the same in a
/// pattern of dashes (pixels at scale 1), or a mark of the chart's.
#[derive(Clone, Copy)]
enum Key {
    None,
    Line(ShapeStyle),
    Pattern(ShapeStyle, &'static [u32]),
    Cross(ShapeStyle, u32),
    Triangle(RGBColor, u32),
}

/// A dashed curve's key: its dashes as they come out over a swatch's length.
const DASHED_KEY: [u32; 2] = [5, 3];

/// A legend's line: a name that may be cut to fit, keeping its part `keep` (see [`cut_keeping`]),
/// then `figures` whole, after its `key`.
struct LegendLine {
    name: String,
    keep: (usize, usize),
    figures: String,
    key: Key,
}

impl LegendLine {
    /// A line of `text` after `key`, cut in its middle if need be.
    fn plain(text: String, key: Key) -> LegendLine {
        let keep = (0, text.chars().count());
        LegendLine {
            name: text,
            keep,
            figures: String::new(),
            key,
        }
    }
}

/// The fewest characters of a name a legend's line keeps, however narrow its chart.
const LEGEND_NAME_MIN: usize = 6;

/// A legend laid out as plotters lays out its own (the same margins, swatch room and line height,
/// see `legend`), its text measured by the backend (`estimate_text_size`) rather than by plotters'
/// fonts: in a browser those put each text in the page to measure it, and the Compare chart, drawn
/// again as each of hundreds of files came, spent more time there than on its curves.
struct Legend {
    lines: Vec<LegendLine>,
    /// Each line's text as drawn, and its size.
    texts: Vec<(String, (u32, u32))>,
    /// The box's size, its margins included.
    size: (i32, i32),
}

impl Legend {
    /// `lines` laid out for a chart as wide as `area`. A line wider than that has its name cut to fit
    /// (a narrow window's run names ran past its edge), keeping what tells it from the others and
    /// its figures whole, measured again after each cut.
    fn new<DB: DrawingBackend>(
        area: &DrawingArea<DB, Shift>,
        lines: Vec<LegendLine>,
        theme: &Theme,
    ) -> Result<Legend>
    where
        DB::ErrorType: 'static,
    {
        let (margin, swatch, corner) = Legend::measures(theme);
        let font = theme.text(12);
        let room = area.dim_in_pixel().0 as i32 - 2 * corner - swatch - 2 * margin;
        let mut texts = Vec::with_capacity(lines.len());
        for line in &lines {
            let mut max = line.name.chars().count();
            let mut text = format!("{}{}", line.name, line.figures);
            let mut size = area.estimate_text_size(&text, &font)?;
            while size.0 as i32 > room && max > LEGEND_NAME_MIN {
                let per_char = f64::from(size.0) / text.chars().count().max(1) as f64;
                let over = (f64::from(size.0 as i32 - room) / per_char).ceil() as usize;
                max = max.saturating_sub(over).clamp(LEGEND_NAME_MIN, max - 1);
                text = format!(
                    "{}{}",
                    cut_keeping(&line.name, max, line.keep),
                    line.figures
                );
                size = area.estimate_text_size(&text, &font)?;
            }
            texts.push((text, size));
        }
        let width = texts.iter().map(|t| t.1 .0 as i32).max().unwrap_or(0);
        let last = texts.last().map_or(0, |t| t.1 .1 as i32);
        let height = (Legend::step(theme) * lines.len().saturating_sub(1) as f64).round() as i32;
        Ok(Legend {
            lines,
            texts,
            size: (width + swatch + 2 * margin, height + last + 2 * margin),
        })
    }

    /// The legend of a line chart of `runs` runs on `area` (`lines(named)`: its lines, naming at
    /// most `named` runs), with the chart's area and the strip under it where the legend goes there
    /// (see [`Legend::room`]). Where, under the chart, it would take over two fifths of the chart's
    /// height (a phone's chart of 16 ranks), it names fewer runs.
    #[allow(clippy::type_complexity)]
    fn fitted<DB: DrawingBackend>(
        area: &DrawingArea<DB, Shift>,
        runs: usize,
        lines: impl Fn(usize) -> Vec<LegendLine>,
        theme: &Theme,
    ) -> Result<(
        Legend,
        DrawingArea<DB, Shift>,
        Option<DrawingArea<DB, Shift>>,
    )>
    where
        DB::ErrorType: 'static,
    {
        let mut named = LEGEND_RUNS;
        loop {
            let legend = Legend::new(area, lines(named), theme)?;
            match legend.room(area, theme) {
                Room::Over => return Ok((legend, area.clone(), None)),
                Room::Under(chart, strip) => return Ok((legend, chart, Some(strip))),
                Room::TooTall(_) if named.min(runs) <= 2 => {
                    return Ok((legend, area.clone(), None));
                }
                Room::TooTall(excess) => {
                    let lines = (f64::from(excess) / Legend::step(theme)).ceil() as usize;
                    named = named.min(runs).saturating_sub(lines.max(1)).max(2);
                }
            }
        }
    }

    /// The margin inside the box, the room for a key and the box's distance from its corner, in
    /// backend pixels.
    fn measures(theme: &Theme) -> (i32, i32, i32) {
        (
            theme.px(LEGEND_MARGIN) as i32,
            theme.px(LEGEND_SWATCH) as i32,
            theme.px(LEGEND_CORNER) as i32,
        )
    }

    /// Lines 1.25 font sizes apart, as plotters lays out its series labels.
    fn step(theme: &Theme) -> f64 {
        theme.text(12).font.get_size() * 1.25
    }

    /// Draws the legend of `chart` in the strip under it (`below`, see [`Legend::fitted`]), else in
    /// `corner` of its plot.
    fn draw_on<DB: DrawingBackend>(
        &self,
        chart: &LineChart<'_, DB>,
        below: Option<DrawingArea<DB, Shift>>,
        corner: SeriesLabelPosition,
        theme: &Theme,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        match below {
            Some(strip) => self.draw(&strip, SeriesLabelPosition::UpperLeft, theme),
            None => self.draw(&chart.plotting_area().strip_coord_spec(), corner, theme),
        }
    }

    /// Draws the legend in `corner` of `area`.
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        corner: SeriesLabelPosition,
        theme: &Theme,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        if self.lines.is_empty() {
            return Ok(());
        }
        let (margin, swatch, gap) = Legend::measures(theme);
        let (w, h) = self.size;
        let (aw, ah) = area.dim_in_pixel();
        let (x, y) = match corner {
            SeriesLabelPosition::LowerRight => (aw as i32 - gap - w, ah as i32 - gap - h),
            _ => (gap, gap),
        };
        area.draw(&Rectangle::new(
            [(x, y), (x + w, y + h)],
            theme.background.mix(0.85).filled(),
        ))?;
        area.draw(&Rectangle::new([(x, y), (x + w, y + h)], theme.muted))?;
        let font = theme.text(12);
        for (k, (line, (text, (_, th)))) in self.lines.iter().zip(&self.texts).enumerate() {
            let top = y + margin + (Legend::step(theme) * k as f64).round() as i32;
            area.draw(&Text::new(text.as_str(), (x + margin + swatch, top), &font))?;
            let at = (x + margin, top + *th as i32 / 2);
            match line.key {
                Key::Line(style) => area.draw(&line_swatch(style, theme)(at))?,
                Key::Pattern(style, pattern) => {
                    area.draw(&pattern_swatch::<DB>(style, pattern, theme)(at))?
                }
                Key::Cross(style, size) => {
                    area.draw(&Cross::new((at.0 + size as i32, at.1), size, style))?
                }
                Key::Triangle(color, size) => area.draw(&TriangleMarker::new(
                    (at.0 + size as i32, at.1),
                    size,
                    color.filled(),
                ))?,
                Key::None => {}
            }
        }
        Ok(())
    }

    /// Where a line chart on `area` has its legend: over its plot, or, where there it would cover over
    /// half the plot's width (a phone's chart: the Steps legend hid the curves under it), in a strip of
    /// its own under the chart, if that takes at most two fifths of the chart's height.
    fn room<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, theme: &Theme) -> Room<DB> {
        let (w, h) = area.dim_in_pixel();
        let plot = w as i32 - theme.px(LINE_CHART_SIDES) as i32;
        let strip = self.size.1 + 2 * Legend::measures(theme).2;
        if self.lines.is_empty() || 2 * self.size.0 <= plot {
            return Room::Over;
        }
        let most = h as i32 * 2 / 5;
        if strip > most {
            return Room::TooTall((strip - most) as u32);
        }
        let (chart, below) = area.split_vertically(h as i32 - strip);
        Room::Under(chart, below)
    }
}

/// Where a line chart's legend goes (see [`Legend::room`]).
enum Room<DB: DrawingBackend> {
    Over,
    /// The chart's area, and the strip under it for the legend.
    Under(DrawingArea<DB, Shift>, DrawingArea<DB, Shift>),
    /// Under the chart, too tall by this many pixels.
    TooTall(u32),
}

/// The peaks of several runs as labelled bars in their run colours.
pub fn peak_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    runs: &[(&Digest, RGBColor)],
    theme: &Theme,
) -> Result<Bars>
where
    DB::ErrorType: 'static,
{
    let folder = common_folder(runs.iter().map(|(d, _)| d.file.as_str()));
    let rows: Vec<(String, u64, RGBColor)> = runs
        .iter()
        .map(|(d, c)| {
            (
                within(&d.file, folder).to_string(),
                d.timeline_peak_bytes,
                *c,
            )
        })
        .collect();
    labelled_bars(area, heading, &rows, 0.45, theme)
}

/// `compare.png`: the runs' overlaid live curves beside their peaks.
pub fn compare_page<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    runs: &[&Digest],
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.fill(&theme.background)?;
    let colored: Vec<(&Digest, RGBColor)> = runs
        .iter()
        .enumerate()
        .map(|(k, d)| (*d, run_color(k)))
        .collect();
    let (w, _) = area.dim_in_pixel();
    let (left, right) = area.split_horizontally(w * 3 / 5);
    overlaid_curves(
        &left,
        "Live memory over each trace",
        &colored,
        &CompareAxis::Fraction,
        None,
        None,
        theme,
    )?;
    peak_bars(&right, "Peak allocated", &colored, theme)?;
    Ok(())
}

/// The least GPU memory among `runs` (name and bytes), when it is at most half again the chart's `top`.
pub fn gpu_ceiling(runs: &[&StepRun], top: u64) -> Option<(String, u64)> {
    runs.iter()
        .filter_map(|r| r.device.clone())
        .min_by_key(|d| d.1)
        .filter(|d| d.1 as f64 <= top as f64 * 1.5)
}

/// Runs of at most this many steps are drawn with a dot at each step.
const FEW_STEPS: usize = 64;

/// The steps the step chart spans: from 0 when the first step is within the steps' own span of it (a
/// run from its start), else from the first step (a run resumed at step 50 000 is not squeezed against
/// the right edge); a single step sits in the middle.
fn step_range(points: &[Vec<(f64, u64)>]) -> (f64, f64) {
    let xs = points.iter().flatten().map(|p| p.0);
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi > lo {
        (if lo <= hi - lo { 0.0 } else { lo }, hi)
    } else {
        // A step either side, or as many as the x's precision needs to tell the ends apart (past
        // 2^53 a step is not one apart in f64: a span of no width drew no reference lines).
        let half = (lo * f64::EPSILON * 2.0).max(1.0);
        ((lo - half).max(0.0), (lo - half).max(0.0) + 2.0 * half)
    }
}

/// What the step chart draws of each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepChartOptions {
    /// Peak reserved per step instead of peak allocated.
    pub reserved: bool,
    /// Each run's theoretical memory, dash-dotted in its colour (where the input has it).
    pub theoretical: bool,
}

/// The bytes a run's step chart shows at a step.
pub fn step_value(s: &StepRecord, reserved: bool) -> Option<u64> {
    if reserved {
        s.peak_reserved_bytes.or(s.reserved_bytes)
    } else {
        s.peak_allocated_bytes.or(s.allocated_bytes)
    }
}

/// The step chart's reference lines, in pixels at scale 1: dash, gap, dash, gap… (repeated).
const STATIC_PATTERN: [u32; 2] = [2, 3];
const THEORETICAL_PATTERN: [u32; 4] = [9, 3, 2, 3];

/// The dashes of `pattern` (pixels: dash, gap, …, repeated) from `x0` to `x1`, as (from, to) in the
/// data's x (`x_per_px` of it to a pixel); the last one cut at `x1`. One plain line where there is
/// nothing to repeat, no width, more periods than any plot has pixels, or a period too fine for the
/// x's precision (steps near 2^57 are 16 apart in f64: adding a dash to them adds nothing).
fn dashes(x0: f64, x1: f64, x_per_px: f64, pattern: &[u32]) -> Vec<(f64, f64)> {
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

/// A legend swatch drawn in `pattern` (pixels at scale 1) over the swatch's length.
fn pattern_swatch<DB: DrawingBackend>(
    style: ShapeStyle,
    pattern: &'static [u32],
    theme: &Theme,
) -> impl Fn((i32, i32)) -> DynElement<'static, DB, (i32, i32)> {
    let len = theme.px(14) as i32;
    let pattern = theme.px_pattern(pattern);
    move |(x, y)| {
        let pieces: Vec<PathElement<(i32, i32)>> = dashes(0.0, f64::from(len), 1.0, &pattern)
            .into_iter()
            .map(|(a, b)| PathElement::new(vec![(x + a as i32, y), (x + b as i32, y)], style))
            .collect();
        Swatch(pieces).into_dyn()
    }
}

/// Several paths drawn as one legend swatch.
struct Swatch(Vec<PathElement<(i32, i32)>>);

impl<'a> PointCollection<'a, (i32, i32)> for &'a Swatch {
    type Point = &'a (i32, i32);
    type IntoIter = Box<dyn Iterator<Item = &'a (i32, i32)> + 'a>;
    fn point_iter(self) -> Self::IntoIter {
        Box::new(self.0.iter().flat_map(|p| p.point_iter()))
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Swatch {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        size: (u32, u32),
    ) -> std::result::Result<(), DrawingErrorKind<DB::ErrorType>> {
        for path in &self.0 {
            let n = path.point_iter().len();
            path.draw((&mut points).take(n), backend, size)?;
        }
        Ok(())
    }
}

/// One line per run × rank over its steps, in run colours (simulated runs dashed); each run's static
/// memory as a dotted horizontal line and, when asked, its theoretical memory as a dash-dotted one, in
/// the run's colour (each only where the input has it: one colour for all made three runs' static
/// lines nobody's); steps with new allocation retries or OOMs marked. `marks`: (run, step, label) points to
/// circle (a snapshot of the same run). `marker`: a step to draw a vertical rule at (the pointer).
pub fn step_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: &str,
    runs: &[&StepRun],
    options: StepChartOptions,
    marks: &[(usize, u64, String)],
    marker: Option<f64>,
    theme: &Theme,
) -> Result<PlotArea>
where
    DB::ErrorType: 'static,
{
    let points: Vec<Vec<(f64, u64)>> = runs
        .iter()
        .map(|r| {
            r.steps
                .iter()
                .filter_map(|s| Some((s.step as f64, step_value(s, options.reserved)?)))
                .collect()
        })
        .collect();
    let (x0, x1) = step_range(&points);
    let mut top = points.iter().flatten().map(|p| p.1).max().unwrap_or(1);
    for r in runs {
        top = top.max(r.static_bytes.unwrap_or(0));
        if options.theoretical {
            top = top.max(r.theoretical_bytes.unwrap_or(0));
        }
    }
    // The GPU's memory (the least of the runs' GPUs) as a dashed ceiling, where it is near enough
    // the lines that showing it does not flatten them.
    let ceiling = gpu_ceiling(runs, top);
    let top = top.max(ceiling.as_ref().map_or(0, |c| c.1)).max(1);
    let y_desc = if options.reserved {
        "peak reserved per step ({unit})"
    } else {
        "peak allocated per step ({unit})"
    };
    let width = theme.px(2);
    let thin = theme.px(2).max(1);
    let (cross, triangle) = (theme.px(6), theme.px(5));
    let failures: Vec<Vec<Failure>> = runs
        .iter()
        .map(|r| new_failures(r, options.reserved))
        .collect();
    // The legend: the GPU's memory, the runs, then each kind of line or mark once, in ink (the
    // pattern tells the kind, the colour the run).
    let ink = theme.ink.stroke_width(thin);
    let kinds = [
        (
            runs.iter().any(|r| r.static_bytes.is_some()),
            "static memory",
            Key::Pattern(ink, &STATIC_PATTERN),
        ),
        (
            options.theoretical && runs.iter().any(|r| r.theoretical_bytes.is_some()),
            "theoretical memory",
            Key::Pattern(ink, &THEORETICAL_PATTERN),
        ),
        (
            failures.iter().flatten().any(|f| f.oom),
            "out of memory",
            Key::Cross(PEAK.stroke_width(width), cross),
        ),
        (
            failures.iter().flatten().any(|f| !f.oom),
            "allocation retries",
            Key::Triangle(PENDING, triangle),
        ),
    ];
    let lines = |named: usize| {
        let mut lines = Vec::new();
        if let Some((name, total)) = &ceiling {
            lines.push(LegendLine::plain(
                format!("GPU memory ({name}, {})", bytes(*total)),
                Key::Pattern(ink, &[5, 3]),
            ));
        }
        let legend_runs: Vec<usize> = (0..runs.len())
            .filter(|&k| in_legend(k, runs.len(), named))
            .collect();
        let names: Vec<String> = legend_runs.iter().map(|&k| run_label(runs[k])).collect();
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        for ((&k, name), keep) in legend_runs
            .iter()
            .zip(&names)
            .zip(distinct_parts(&name_refs))
        {
            let style = run_color(k).stroke_width(width);
            lines.push(LegendLine {
                name: name.clone(),
                keep,
                figures: String::new(),
                key: if runs[k].simulated {
                    Key::Pattern(style, &[4, 3])
                } else {
                    Key::Line(style)
                },
            });
        }
        lines.extend(more_runs(runs.len(), named));
        for (shown, text, key) in kinds {
            if shown {
                lines.push(LegendLine::plain(text.to_string(), key));
            }
        }
        lines
    };
    let (legend, area, below) = Legend::fitted(area, runs.len(), lines, theme)?;
    let (mut chart, div) = line_chart(
        &area,
        heading,
        (x0, x1),
        top,
        ("step", y_desc),
        &|x| count_label(*x, x1 - x0),
        theme,
    )?;
    // The data's x per pixel, for the reference lines' patterns (drawn in pixels).
    let x_per_px = {
        let (px, _) = chart.plotting_area().get_pixel_range();
        (x1 - x0) / f64::from((px.end - px.start).max(1))
    };
    if let Some((_, total)) = ceiling {
        let y = total as f64 / div;
        chart.draw_series(DashedLineSeries::new(
            [(x0, y), (x1, y)],
            theme.px(8),
            theme.px(5),
            ink,
        ))?;
    }
    for (k, ((r, pts), failures)) in runs.iter().zip(&points).zip(&failures).enumerate() {
        let color = run_color(k);
        let line: Vec<(f64, f64)> = pts.iter().map(|&(x, b)| (x, b as f64 / div)).collect();
        // A run of few steps has a dot at each: a line of one point draws nothing, and a short run
        // beside a long one is a line narrower than a pixel.
        if line.len() <= FEW_STEPS {
            chart.draw_series(
                line.iter()
                    .map(|&p| Circle::new(p, theme.px(3), color.filled())),
            )?;
        }
        if r.simulated {
            chart.draw_series(DashedLineSeries::new(
                line,
                theme.px(6),
                theme.px(4),
                color.stroke_width(width),
            ))?;
        } else {
            chart.draw_series(LineSeries::new(line, color.stroke_width(width)))?;
        }
        let reference = |bytes: u64, pattern: &[u32]| {
            let y = bytes as f64 / div;
            dashes(x0, x1, x_per_px, &theme.px_pattern(pattern))
                .into_iter()
                .map(move |(a, b)| PathElement::new(vec![(a, y), (b, y)], color.stroke_width(thin)))
        };
        if let Some(b) = r.static_bytes {
            chart.draw_series(reference(b, &STATIC_PATTERN))?;
        }
        if let Some(b) = r.theoretical_bytes.filter(|_| options.theoretical) {
            chart.draw_series(reference(b, &THEORETICAL_PATTERN))?;
        }
        for f in failures {
            let at = (f.step, f.bytes as f64 / div);
            if f.oom {
                chart.draw_series(std::iter::once(Cross::new(
                    at,
                    cross,
                    PEAK.stroke_width(width),
                )))?;
            } else {
                chart.draw_series(std::iter::once(TriangleMarker::new(
                    at,
                    triangle,
                    PENDING.filled(),
                )))?;
            }
        }
    }
    // Where labels went (backend pixels): a label where the same one stands already is left out
    // (ranks at one peak, each with its exit snapshot, wrote "exit" over itself into a smear).
    let mut labelled: Vec<((i32, i32), &str)> = Vec::new();
    let near = theme.px(14) as i32;
    for (run, step, label) in marks {
        let Some(pts) = points.get(*run) else {
            continue;
        };
        if let Some(&(x, b)) = pts.iter().find(|p| p.0 as u64 == *step) {
            chart.draw_series(std::iter::once(Circle::new(
                (x, b as f64 / div),
                theme.px(7),
                theme.ink.stroke_width(width),
            )))?;
            let at = chart.backend_coord(&(x, b as f64 / div));
            let taken = labelled.iter().any(|&((px, py), l)| {
                l == label.as_str() && (px - at.0).abs() < near && (py - at.1).abs() < near
            });
            if taken {
                continue;
            }
            labelled.push((at, label));
            // In the last fifth of the steps the label goes left of its circle, inside the plot,
            // clear of the circle (a space beside it left the circle over the label's last letter).
            let clear = theme.px(9) as i32;
            let (dx, side) = if x > x0 + (x1 - x0) * 0.8 {
                (-clear, HPos::Right)
            } else {
                (clear, HPos::Left)
            };
            chart.draw_series(std::iter::once(
                EmptyElement::at((x, b as f64 / div))
                    + Text::new(
                        label.clone(),
                        (dx, 0),
                        theme.text(12).pos(Pos::new(side, VPos::Bottom)),
                    ),
            ))?;
        }
    }
    finish_line_chart(chart, marker, theme, |chart| {
        legend.draw_on(chart, below, SeriesLabelPosition::LowerRight, theme)
    })
}

/// A run's name in the Steps chart's legend.
fn run_label(r: &StepRun) -> String {
    format!(
        "{}{}{}",
        r.name,
        r.rank.map_or(String::new(), |x| format!(" rank {x}")),
        if r.simulated { " (simulated)" } else { "" }
    )
}

/// A step at which a run ran out of memory, or retried allocations, anew.
struct Failure {
    step: f64,
    /// The step's value on the chart.
    bytes: u64,
    /// Out of memory (else allocation retries).
    oom: bool,
}

/// The steps of `r` with more OOMs than the step before or, failing those, more allocation retries.
fn new_failures(r: &StepRun, reserved: bool) -> Vec<Failure> {
    let mut last = (0u64, 0u64);
    let mut out = Vec::new();
    for s in &r.steps {
        let now = (s.alloc_retries.unwrap_or(last.0), s.ooms.unwrap_or(last.1));
        if now.1 > last.1 || now.0 > last.0 {
            out.push(Failure {
                step: s.step as f64,
                bytes: step_value(s, reserved).unwrap_or(0),
                oom: now.1 > last.1,
            });
        }
        last = now;
    }
    out
}
