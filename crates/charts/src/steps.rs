//! The step chart: each run's peak per step, its static and theoretical memory, the GPU's memory,
//! and the steps where it ran out of memory or retried allocations.

use memograph_snapshot::format::bytes;
use memograph_snapshot::steps::{StepRecord, StepRun};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::compare::run_color;
use crate::labels::distinct_parts;
use crate::legend::{in_legend, more_runs, Key, Legend, LegendLine};
use crate::line::{count_label, dashes, finish_line_chart, line_chart, PlotArea};
use crate::{Result, Theme, PEAK, PENDING};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::legend::LEGEND_RUNS;
    use crate::test_backend::drawn_by;
    use crate::{rgb, RUN_COLORS};

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
}
