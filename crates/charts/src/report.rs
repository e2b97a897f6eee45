//! The report's charts of one device ([`DeviceReport`]): memory over the trace, the largest
//! allocations, categories and components, size histograms, allocator efficiency, and the five pages
//! of `memograph report` ([`report_page`]).

use memograph_snapshot::analysis::efficiency::Bucket;
use memograph_snapshot::analysis::report::{CategorySeries, Component, DeviceReport};
use memograph_snapshot::analysis::stats::SegmentStats;
use memograph_snapshot::format::{at_entry, bytes, count};
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::bars::{columns, labelled_bars, Column};
use crate::legend::{line_swatch, series_legend, swatch};
use crate::line::{line_chart, LineChart};
use crate::{
    builder, category_color, component_color, slots, unit, Bars, Result, Theme, ALLOCATED, PEAK,
    PENDING, RESERVED,
};

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

/// The trace entries the report spans (its x axis).
fn entries(r: &DeviceReport) -> f64 {
    (r.summary.events.values().sum::<u64>()).max(1) as f64
}

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
    series_legend(&mut chart, away_from_peak(r), theme)
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
    series_legend(&mut chart, away_from_peak(r), theme)
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
    series_legend(&mut chart, SeriesLabelPosition::UpperRight, theme)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_backend::{drawn_by, Drawn, Recorder};

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
}
