//! The report's five charts, drawn with plotters' bitmap backend. Text uses DejaVu Sans compiled into the
//! binary, so a report looks the same on every machine (no system font lookup). Category colours are the
//! engine's, the same as the page's.

use std::error::Error;
use std::path::Path;
use std::sync::Once;

use memograph_snapshot::analysis::categories;
use memograph_snapshot::analysis::efficiency::Bucket;
use memograph_snapshot::analysis::report::{Component, DeviceReport};
use memograph_snapshot::format::bytes;
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The chart files and their titles, in the order the README shows them.
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

const SIZE: (u32, u32) = (1400, 800);
const FONT: &str = "sans-serif";
const INK: RGBColor = RGBColor(0x1d, 0x1f, 0x23);
const MUTED: RGBColor = RGBColor(0x5f, 0x66, 0x70);
const RESERVED: RGBColor = RGBColor(0xb8, 0xbe, 0xc7);
const ALLOCATED: RGBColor = RGBColor(0x2f, 0x6f, 0xde);
const PENDING: RGBColor = RGBColor(0xf2, 0x8e, 0x2b);
const PEAK: RGBColor = RGBColor(0xd1, 0x1a, 0x2a);

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are DejaVu's own TTFs; parsing them cannot fail.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Draws the five charts of `r` into `dir`.
pub fn draw_all(r: &DeviceReport, name: &str, dir: &Path) -> std::result::Result<(), String> {
    register_fonts();
    let title = format!("{name} · cuda:{}", r.device);
    type Draw = fn(&DeviceReport, &str, &DrawingArea<BitMapBackend, Shift>) -> Result<()>;
    let draws: [Draw; 5] = [
        memory_overview,
        top_consumers,
        category_breakdown,
        size_distribution,
        memory_efficiency,
    ];
    for ((file, _), draw) in CHARTS.iter().zip(draws) {
        let path = dir.join(file);
        let result = (|| -> Result<()> {
            let root = BitMapBackend::new(&path, SIZE).into_drawing_area();
            root.fill(&WHITE)?;
            draw(r, &title, &root)?;
            root.present()?;
            Ok(())
        })();
        result.map_err(|e| format!("{}: cannot draw the chart: {e}", path.display()))?;
    }
    Ok(())
}

fn rgb(hex: &str) -> RGBColor {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0x9aa0aa);
    RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

fn category_color(index: usize, count: usize) -> RGBColor {
    rgb(categories::color(index, count))
}

/// A component's colour: that of the category it is named after ("Other" grey).
fn component_color(r: &DeviceReport, c: Component) -> RGBColor {
    let names: Vec<&str> = r.categories.iter().map(|t| t.category.as_str()).collect();
    let named = match c {
        Component::Parameters => "Parameter",
        Component::Gradients => "Gradient",
        Component::OptimizerState => "Optimizer state",
        Component::Activations => "Activation",
        Component::Other => categories::OTHER,
    };
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

fn style(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&INK)
}

fn caption(size: u32) -> TextStyle<'static> {
    (FONT, size, FontStyle::Bold).into_font().color(&INK)
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

/// A line of small text at the bottom left of `area`.
fn footnote(area: &DrawingArea<BitMapBackend, Shift>, text: &str) -> Result<()> {
    let (_, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        text.to_string(),
        (16, h as i32 - 22),
        style(14).color(&MUTED),
    ))?;
    Ok(())
}

/// 1. Live bytes per category over the trace (stacked), reserved bytes, the peak.
fn memory_overview(
    r: &DeviceReport,
    title: &str,
    root: &DrawingArea<BitMapBackend, Shift>,
) -> Result<()> {
    let s = &r.over_time;
    let n = s.entries.len();
    let top = (0..n).map(|k| s.total_at(k)).max().unwrap_or(0);
    let y_top = top
        .max(s.reserved.iter().copied().max().unwrap_or(0))
        .max(1);
    let (div, unit_name) = unit(y_top);
    let x_end = (r.summary.events.values().sum::<u64>()).max(1) as f64;
    let body = root.margin(0, 30, 0, 0);
    let mut chart = ChartBuilder::on(&body)
        .caption(
            format!("Memory over the trace by category — {title}"),
            caption(24),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(-1f64..x_end, 0f64..y_top as f64 * 1.08 / div)?;
    chart
        .configure_mesh()
        .x_desc("trace entry")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc(unit_name)
        .label_style(style(14))
        .axis_desc_style(style(16))
        .light_line_style(WHITE)
        .draw()?;
    let xs: Vec<f64> = s.entries.iter().map(|&e| e as f64).collect();
    // Stack bottom-up in the rules' order; paint the tallest first so each smaller stack sits on top.
    let k = s.categories.len();
    let mut stacked: Vec<Vec<u64>> = Vec::with_capacity(k);
    let mut running = vec![0u64; n];
    for series in &s.bytes {
        for (acc, b) in running.iter_mut().zip(series) {
            *acc += b;
        }
        stacked.push(running.clone());
    }
    for j in (0..k).rev() {
        if s.bytes[j].iter().all(|&b| b == 0) {
            continue;
        }
        let color = category_color(j, k);
        let points: Vec<(f64, f64)> = xs
            .iter()
            .zip(&stacked[j])
            .map(|(&x, &b)| (x, b as f64 / div))
            .collect();
        let peak_share = r.categories.get(j).map(|c| c.bytes).unwrap_or(0);
        chart
            .draw_series(AreaSeries::new(points, 0.0, color.filled()))?
            .label(format!(
                "{} ({} at the peak)",
                s.categories[j],
                bytes(peak_share)
            ))
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    let reserved: Vec<(f64, f64)> = xs
        .iter()
        .zip(&s.reserved)
        .map(|(&x, &b)| (x, b as f64 / div))
        .collect();
    chart
        .draw_series(LineSeries::new(reserved, INK.stroke_width(2)))?
        .label("reserved by the allocator")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], INK.stroke_width(2)));
    draw_peak_marker(&mut chart, r, div)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(style(14))
        .background_style(WHITE.mix(0.85))
        .border_style(MUTED)
        .draw()?;
    footnote(
        root,
        "Each column shows the moment of highest live memory among the trace entries it stands for.",
    )
}

type LineChart<'a> = ChartContext<
    'a,
    BitMapBackend<'a>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_peak_marker(chart: &mut LineChart, r: &DeviceReport, div: f64) -> Result<()> {
    let x = r.peak.event.max(0) as f64;
    let y = r.peak.bytes as f64 / div;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(x, 0.0), (x, y * 1.04)],
        PEAK.stroke_width(2),
    )))?;
    let right_half = x > chart.x_range().end / 2.0;
    let h = if right_half { HPos::Right } else { HPos::Left };
    chart.draw_series(std::iter::once(Text::new(
        format!("peak {} at entry {} ", bytes(r.peak.bytes), r.peak.event),
        (x, y * 1.06),
        style(15).color(&PEAK).pos(Pos::new(h, VPos::Bottom)),
    )))?;
    Ok(())
}

/// Horizontal bars with a text label per row, largest on top.
fn labelled_bars(
    root: &DrawingArea<BitMapBackend, Shift>,
    heading: String,
    rows: &[(String, u64, RGBColor)],
    label_width: u32,
) -> Result<()> {
    let n = rows.len().max(1) as u32;
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let (div, unit_name) = unit(max);
    let chars = (label_width / 8) as usize;
    let labels: Vec<String> = rows.iter().map(|r| tail(&r.0, chars)).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(heading, caption(22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(label_width)
        .build_cartesian_2d(0f64..max as f64 * 1.22 / div, (0..n).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .x_desc(unit_name)
        .y_labels(n as usize)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => (n - 1)
                .checked_sub(*i)
                .and_then(|k| labels.get(k as usize))
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        })
        .label_style(style(13))
        .axis_desc_style(style(15))
        .draw()?;
    chart.draw_series(rows.iter().enumerate().map(|(k, (_, b, color))| {
        let y = n - 1 - k as u32;
        let mut bar = Rectangle::new(
            [
                (0.0, SegmentValue::Exact(y)),
                (*b as f64 / div, SegmentValue::Exact(y + 1)),
            ],
            color.filled(),
        );
        bar.set_margin(3, 3, 0, 0);
        bar
    }))?;
    chart.draw_series(rows.iter().enumerate().map(|(k, (_, b, _))| {
        let y = n - 1 - k as u32;
        Text::new(
            format!(" {}", bytes(*b)),
            (*b as f64 / div, SegmentValue::CenterOf(y)),
            style(13).pos(Pos::new(HPos::Left, VPos::Center)),
        )
    }))?;
    Ok(())
}

/// 2. The largest allocations live at the peak, with the user code that made them.
fn top_consumers(
    r: &DeviceReport,
    title: &str,
    root: &DrawingArea<BitMapBackend, Shift>,
) -> Result<()> {
    let names: Vec<&str> = r.categories.iter().map(|c| c.category.as_str()).collect();
    let rows: Vec<(String, u64, RGBColor)> = r
        .top_consumers
        .iter()
        .take(25)
        .map(|c| {
            let k = c
                .category
                .as_deref()
                .and_then(|n| names.iter().position(|m| *m == n))
                .unwrap_or(names.len().saturating_sub(1));
            (c.frame.clone(), c.bytes, category_color(k, names.len()))
        })
        .collect();
    let body = root.margin(0, 30, 0, 0);
    labelled_bars(
        &body,
        format!(
            "The {} largest allocations live at the peak — {title}",
            rows.len()
        ),
        &rows,
        620,
    )?;
    let shown: u64 = rows.iter().map(|r| r.1).sum();
    footnote(
        root,
        &format!(
            "These hold {} of the {} live at the peak ({} allocations). Bars are coloured by category; labels are the innermost user frame.",
            bytes(shown),
            bytes(r.live_bytes),
            r.live_allocations
        ),
    )
}

/// 3. A donut of categories at the peak, and bars of the five components.
fn category_breakdown(
    r: &DeviceReport,
    title: &str,
    root: &DrawingArea<BitMapBackend, Shift>,
) -> Result<()> {
    let root = root.titled(
        &format!("Where the peak's {} goes — {title}", bytes(r.live_bytes)),
        caption(24),
    )?;
    let (left, right) = root.split_horizontally(SIZE.0 * 11 / 20);
    let count = r.categories.len();
    let slices: Vec<(usize, u64)> = r
        .categories
        .iter()
        .enumerate()
        .filter(|(_, c)| c.bytes > 0)
        .map(|(k, c)| (k, c.bytes))
        .collect();
    let (w, h) = left.dim_in_pixel();
    let radius = f64::from(w.min(h)) * 0.32;
    let center = ((f64::from(w) * 0.36) as i32, (f64::from(h) * 0.45) as i32);
    if slices.is_empty() {
        left.draw(&Text::new("nothing is live at the peak", center, style(16)))?;
    } else {
        let sizes: Vec<f64> = slices.iter().map(|s| s.1 as f64).collect();
        let colors: Vec<RGBColor> = slices.iter().map(|s| category_color(s.0, count)).collect();
        let labels: Vec<String> = vec![String::new(); slices.len()];
        let mut pie = Pie::new(&center, &radius, &sizes, &colors, &labels);
        pie.start_angle(-90.0);
        pie.donut_hole(radius * 0.55);
        left.draw(&pie)?;
        left.draw(&Text::new(
            bytes(r.live_bytes),
            center,
            caption(22).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
    }
    // Legend: one line per category with its share.
    let legend_x = (f64::from(w) * 0.72) as i32;
    for (line, (k, b)) in slices.iter().enumerate() {
        let y = 40 + line as i32 * 28;
        left.draw(&Rectangle::new(
            [(legend_x, y), (legend_x + 16, y + 16)],
            category_color(*k, count).filled(),
        ))?;
        let share = *b as f64 * 100.0 / r.live_bytes.max(1) as f64;
        left.draw(&Text::new(
            format!("{}  {}  {share:.1} %", r.categories[*k].category, bytes(*b)),
            (legend_x + 24, y + 1),
            style(14),
        ))?;
    }
    // Components as vertical bars.
    let max = r
        .components
        .iter()
        .map(|c| c.bytes)
        .max()
        .unwrap_or(1)
        .max(1);
    let (div, unit_name) = unit(max);
    let m = r.components.len() as u32;
    let labels: Vec<&str> = r.components.iter().map(|c| c.component.label()).collect();
    let mut chart = ChartBuilder::on(&right)
        .caption("Components", caption(20))
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..m).into_segmented(), 0f64..max as f64 * 1.15 / div)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .y_desc(unit_name)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels
                .get(*i as usize)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            _ => String::new(),
        })
        .label_style(style(13))
        .axis_desc_style(style(15))
        .draw()?;
    chart.draw_series(r.components.iter().enumerate().map(|(i, c)| {
        let i = i as u32;
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), c.bytes as f64 / div),
            ],
            component_color(r, c.component).filled(),
        );
        bar.set_margin(0, 0, 12, 12);
        bar
    }))?;
    chart.draw_series(r.components.iter().enumerate().map(|(i, c)| {
        Text::new(
            bytes(c.bytes),
            (
                SegmentValue::CenterOf(i as u32),
                c.bytes as f64 / div + max as f64 * 0.03 / div,
            ),
            style(13).pos(Pos::new(HPos::Center, VPos::Bottom)),
        )
    }))?;
    Ok(())
}

/// Bars of bytes per power-of-two size bucket, with the count of each above it.
fn bucket_bars(
    area: &DrawingArea<BitMapBackend, Shift>,
    heading: String,
    buckets: &[Bucket],
    color: RGBColor,
) -> Result<()> {
    if buckets.is_empty() {
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            format!("{heading}: none"),
            (w as i32 / 3, h as i32 / 2),
            style(16),
        ))?;
        return Ok(());
    }
    let n = buckets.len() as u32;
    let max = buckets.iter().map(|b| b.bytes).max().unwrap_or(1).max(1);
    let (div, unit_name) = unit(max);
    let labels: Vec<String> = buckets
        .iter()
        .map(|b| bytes(b.from).replace(".0", ""))
        .collect();
    let mut chart = ChartBuilder::on(area)
        .caption(heading, caption(20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d((0..n).into_segmented(), 0f64..max as f64 * 1.18 / div)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_desc("allocation size (at least)")
        .y_desc(format!("{unit_name} in the bucket"))
        .x_labels(n as usize)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .label_style(style(12))
        .axis_desc_style(style(14))
        .draw()?;
    chart.draw_series(buckets.iter().enumerate().map(|(i, b)| {
        let i = i as u32;
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), b.bytes as f64 / div),
            ],
            color.filled(),
        );
        bar.set_margin(0, 0, 3, 3);
        bar
    }))?;
    chart.draw_series(buckets.iter().enumerate().map(|(i, b)| {
        Text::new(
            format!("×{}", b.count),
            (
                SegmentValue::CenterOf(i as u32),
                b.bytes as f64 / div + max as f64 * 0.02 / div,
            ),
            style(11).pos(Pos::new(HPos::Center, VPos::Bottom)),
        )
    }))?;
    Ok(())
}

/// 4. Sizes of the live allocations at the peak and of the cached free blocks.
fn size_distribution(
    r: &DeviceReport,
    title: &str,
    root: &DrawingArea<BitMapBackend, Shift>,
) -> Result<()> {
    let root = root.titled(&format!("Size distributions — {title}"), caption(24))?;
    let (top, bottom) = root.split_vertically(SIZE.1 * 47 / 100);
    bucket_bars(
        &top,
        format!(
            "{} allocations live at the peak, by size",
            r.live_allocations
        ),
        &r.live_sizes,
        ALLOCATED,
    )?;
    let free: u64 = r.free_sizes.iter().map(|b| b.count).sum();
    bucket_bars(
        &bottom,
        format!("{free} cached free blocks at the snapshot, by size"),
        &r.free_sizes,
        RESERVED,
    )
}

/// 5. Allocated vs reserved over the trace, and each segment's allocated / pending / free bytes.
fn memory_efficiency(
    r: &DeviceReport,
    title: &str,
    root: &DrawingArea<BitMapBackend, Shift>,
) -> Result<()> {
    let e = &r.efficiency;
    let root = root.titled(
        &format!(
            "Allocator efficiency — {title}: {:.0} % of reserved cached at the peak, fragmentation {:.2}",
            e.cache_overhead * 100.0,
            e.fragmentation
        ),
        caption(22),
    )?;
    let (top, bottom) = root.split_vertically(SIZE.1 * 52 / 100);
    let s = &r.over_time;
    let y_top = s
        .reserved
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(r.peak.bytes)
        .max(1);
    let (div, unit_name) = unit(y_top);
    let x_end = (r.summary.events.values().sum::<u64>()).max(1) as f64;
    let mut chart = ChartBuilder::on(&top)
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(-1f64..x_end, 0f64..y_top as f64 * 1.12 / div)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .x_desc("trace entry")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc(unit_name)
        .label_style(style(13))
        .axis_desc_style(style(14))
        .draw()?;
    let xs: Vec<f64> = s.entries.iter().map(|&x| x as f64).collect();
    let reserved: Vec<(f64, f64)> = xs
        .iter()
        .zip(&s.reserved)
        .map(|(&x, &b)| (x, b as f64 / div))
        .collect();
    let allocated: Vec<(f64, f64)> = (0..xs.len())
        .map(|k| (xs[k], s.total_at(k) as f64 / div))
        .collect();
    chart
        .draw_series(AreaSeries::new(reserved, 0.0, RESERVED.filled()))?
        .label("reserved (cached + allocated)")
        .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], RESERVED.filled()));
    chart
        .draw_series(AreaSeries::new(
            allocated,
            0.0,
            ALLOCATED.mix(0.85).filled(),
        ))?
        .label("allocated (live)")
        .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], ALLOCATED.filled()));
    draw_peak_marker(&mut chart, r, div)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(style(13))
        .background_style(WHITE.mix(0.85))
        .border_style(MUTED)
        .draw()?;

    // Segments at the snapshot, largest first (up to 60).
    let mut segs: Vec<_> = r.segments.iter().collect();
    segs.sort_by_key(|s| (std::cmp::Reverse(s.total_size), s.address));
    segs.truncate(60);
    let n = segs.len().max(1) as u32;
    let max = segs.iter().map(|s| s.total_size).max().unwrap_or(1).max(1);
    let (div, unit_name) = unit(max);
    let mut chart = ChartBuilder::on(&bottom)
        .caption(
            format!(
                "The {} largest of {} segments at the snapshot: allocated, pending free, cached free",
                segs.len(),
                r.segments.len()
            ),
            caption(17),
        )
        .margin(14)
        .x_label_area_size(30)
        .y_label_area_size(80)
        .build_cartesian_2d((0..n).into_segmented(), 0f64..max as f64 * 1.08 / div)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_label_formatter(&|_| String::new())
        .y_desc(unit_name)
        .label_style(style(13))
        .axis_desc_style(style(14))
        .draw()?;
    for (what, color) in [
        ("allocated", ALLOCATED),
        ("pending free", PENDING),
        ("cached free", RESERVED),
    ] {
        chart
            .draw_series(segs.iter().enumerate().map(|(i, s)| {
                let (lo, hi) = match what {
                    "allocated" => (0, s.allocated),
                    "pending free" => (s.allocated, s.allocated + s.pending_free),
                    _ => (
                        s.allocated + s.pending_free,
                        s.allocated + s.pending_free + s.free,
                    ),
                };
                let i = i as u32;
                let mut bar = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), lo as f64 / div),
                        (SegmentValue::Exact(i + 1), hi as f64 / div),
                    ],
                    color.filled(),
                );
                bar.set_margin(0, 0, 1, 1);
                bar
            }))?
            .label(what)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(style(13))
        .background_style(WHITE.mix(0.85))
        .border_style(MUTED)
        .draw()?;
    Ok(())
}

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
    fn long_labels_keep_their_end() {
        assert_eq!(tail("abcdef", 4), "…def");
        assert_eq!(tail("abc", 4), "abc");
    }
}
