//! Charts of several runs ([`Digest`]s): their live curves overlaid on one axis (a share of each
//! trace, seconds, or entries from a mark), their peaks as bars, and `compare.png`.

use memograph_snapshot::analysis::compare::{common_folder, within, Digest};
use memograph_snapshot::format::bytes;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::bars::labelled_bars;
use crate::labels::distinct_parts;
use crate::legend::{in_legend, more_runs, Key, Legend, LegendLine, DASHED_KEY};
use crate::line::{count_label, decimals_for, finish_line_chart, line_chart, PlotArea};
use crate::{rgb, Bars, Result, Theme};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_backend::drawn_by;

    #[test]
    fn a_one_entry_trace_is_a_level_over_its_whole_share() {
        assert_eq!(from_the_start(vec![(1.0, 7)]), vec![(0.0, 7), (1.0, 7)]);
        let more = vec![(0.5, 7), (1.0, 9)];
        assert_eq!(from_the_start(more.clone()), more);
        assert!(from_the_start(Vec::new()).is_empty());
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
