//! The two bar layouts the charts share: horizontal bars with a label per row (the largest
//! allocations, the compared runs' peaks) and labelled columns with a note over each (components,
//! size histograms). Both say where their bars are ([`Bars`]).

use memograph_snapshot::format::bytes;
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::labels::tail;
use crate::{bars_of, builder, slots, unit, Bars, Result, Theme};

/// Horizontal bars with a text label per row, largest on top.
pub(crate) fn labelled_bars<DB: DrawingBackend>(
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

/// One column of a column chart: its label under the axis, height, colour and a note above it.
pub(crate) struct Column {
    pub(crate) label: String,
    pub(crate) bytes: u64,
    pub(crate) color: RGBColor,
    pub(crate) note: String,
}

/// Labelled columns of bytes, each with a note above it. Returns where the columns are.
pub(crate) fn columns<DB: DrawingBackend>(
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

/// Every `k`-th column is labelled, so that neighbouring labels whose centres need `label_px` between
/// them do not run into each other on `n` columns across `width_px` (a size histogram's 25 buckets on
/// half a page); the components' six names all fit.
fn label_every(n: usize, width_px: f64, label_px: f64) -> usize {
    let column = width_px / n.max(1) as f64;
    ((label_px + 6.0) / column.max(1.0)).ceil().max(1.0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_backend::drawn_by;
    use crate::ALLOCATED;

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
}
