//! The charts of any input, drawn as the page and the CLI draw them: a snapshot's five report pages on
//! each device, its runs' overlaid curves on every axis (zoomed, with a pointer) and the compare page;
//! step records (under each name that chooses how they are read) as the step chart with each option,
//! a snapshot marked and a pointer, in both themes and at the page's 2× export scale. Nothing panics
//! and nothing hangs (libFuzzer's timeout): a chart's loops are bounded by pixels, not by the data's
//! values (steps near 2^57 once made the dashes of a reference line an endless loop).
#![no_main]

use memograph_charts::{
    compare_page, overlaid_curves, register_embedded_fonts, report_page, run_color, step_chart,
    CompareAxis, StepChartOptions, Theme, CHARTS,
};
use memograph_snapshot::analysis::categories::{categorize, Rules};
use memograph_snapshot::analysis::compare::digests;
use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::report::{report_of, ReportOptions};
use memograph_snapshot::read_bytes;
use memograph_snapshot::steps::{merge, read_steps};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

const NAMES: [&str; 5] = [
    "job/rank0_steps.jsonl",
    "metrics.csv",
    "train.log",
    "memory_traces/memory_trace_rank1_tp2.json",
    "memory_traces_scaling/memory_trace_rank0_tp2_pp4.json",
];

const SIZE: (u32, u32) = (700, 400);

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    register_embedded_fonts();
    let themes = [Theme::light(), Theme::dark().scaled(2.0)];
    if let Ok(s) = read_bytes(data) {
        let rules = Rules::built_in();
        let names = rules.names();
        for d in s.devices() {
            let blocks = Lifetimes::of(&s, d);
            let of = categorize(&s, &blocks, &rules);
            let r = report_of(&s, &blocks, &of, &names, &ReportOptions::default());
            for which in 0..CHARTS.len() {
                draw(|area| report_page(area, which, "run.pickle", &r, &themes[which % 2]));
            }
        }
        let runs = digests(&s, &rules, "job/rank0.pickle", data.len() as u64);
        let refs: Vec<_> = runs.iter().collect();
        draw(|area| compare_page(area, &refs, &themes[0]));
        let colored: Vec<_> = runs
            .iter()
            .enumerate()
            .map(|(k, d)| (d, run_color(k)))
            .collect();
        let mut axes = vec![CompareAxis::Fraction, CompareAxis::Seconds];
        axes.extend(
            runs.iter()
                .flat_map(|d| d.marks.first())
                .map(|(name, _)| CompareAxis::AtMark(name.clone())),
        );
        for axis in &axes {
            for (range, marker) in [(None, None), (Some((0.25, 0.2500001)), Some(0.25))] {
                draw(|area| {
                    overlaid_curves(area, "Live", &colored, axis, range, marker, &themes[1])
                });
            }
        }
    }
    let runs = merge(
        NAMES
            .iter()
            .filter_map(|name| read_steps(name, data).ok())
            .collect(),
    );
    let refs: Vec<_> = runs.iter().collect();
    let marks: Vec<(usize, u64, String)> = runs
        .iter()
        .enumerate()
        .filter_map(|(k, r)| Some((k, r.steps.first()?.step, "snapshot".to_string())))
        .collect();
    for (theme, marks) in themes.iter().zip([&[][..], &marks[..]]) {
        for (reserved, theoretical) in [(false, false), (true, true)] {
            let options = StepChartOptions {
                reserved,
                theoretical,
            };
            let marker = marks.first().map(|m| m.1 as f64 + 0.5);
            draw(|area| {
                step_chart(
                    area,
                    "Memory per step",
                    &refs,
                    options,
                    marks,
                    marker,
                    theme,
                )
            });
        }
    }
});

/// Runs `chart` on a canvas that draws nothing (text is laid out with the registered fonts, as the CLI
/// does; the page's canvas measures its own). A chart that cannot be drawn there is a bug: the page
/// would show it blank.
fn draw<T>(chart: impl FnOnce(&DrawingArea<Nothing, Shift>) -> memograph_charts::Result<T>) {
    if let Err(e) = chart(&Nothing.into_drawing_area()) {
        panic!("a chart failed: {e}");
    }
}

struct Nothing;

type Drawn = Result<(), DrawingErrorKind<std::io::Error>>;

impl DrawingBackend for Nothing {
    type ErrorType = std::io::Error;
    fn get_size(&self) -> (u32, u32) {
        SIZE
    }
    fn ensure_prepared(&mut self) -> Drawn {
        Ok(())
    }
    fn present(&mut self) -> Drawn {
        Ok(())
    }
    fn draw_pixel(&mut self, _: BackendCoord, _: BackendColor) -> Drawn {
        Ok(())
    }
    fn draw_line<S: BackendStyle>(&mut self, _: BackendCoord, _: BackendCoord, _: &S) -> Drawn {
        Ok(())
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        _: BackendCoord,
        _: BackendCoord,
        _: &S,
        _: bool,
    ) -> Drawn {
        Ok(())
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        _: &S,
    ) -> Drawn {
        // Consumed, as a backend walks every point it is given.
        path.into_iter().for_each(drop);
        Ok(())
    }
    fn draw_circle<S: BackendStyle>(&mut self, _: BackendCoord, _: u32, _: &S, _: bool) -> Drawn {
        Ok(())
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        _: &S,
    ) -> Drawn {
        vert.into_iter().for_each(drop);
        Ok(())
    }
    fn draw_text<T: BackendTextStyle>(&mut self, _: &str, _: &T, _: BackendCoord) -> Drawn {
        Ok(())
    }
}
