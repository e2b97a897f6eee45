//! Steps: per-step memory records (training logs, memograph-capture's step files, Megatron traces, CSV),
//! and the training steps the traces of snapshots open or compared mark, as one line per run × rank:
//! each run's static memory as a dotted baseline and its theoretical memory as a dash-dotted line (on
//! request) in its colour, simulated runs dashed, retries and OOMs marked; the per-run table (Copy as
//! Markdown, CSV; a snapshot's run opens it) and the runs that grow step after step; components against
//! the measured peak; snapshots of the same run marked on the chart (a click opens one). Figures are the
//! engine's (`memograph_snapshot::steps`); the chart is `memograph-charts'` (`memograph steps -o` draws
//! the same).

use leptos::html::Canvas;
use leptos::prelude::*;
use memograph_charts::{step_chart, Bars, PlotArea, StepChartOptions};
use memograph_snapshot::analysis::trace_steps::TRACE_STEPS_FORMAT;
use memograph_snapshot::format::{bytes, count, grouped, signed_bytes};
use memograph_snapshot::steps::{growth_lines, rank_sets, steps_table, StepRanks, StepRun};

use super::{Phase, Ui};
use crate::load::store;
use crate::view_model::steps::{breakdown, mark_label, snapshot_marks, values_at};

/// The Steps view's choices, kept while other views are shown.
#[derive(Clone, Copy)]
pub struct StepsUi {
    /// The baseline run (file, rank) and the table's sort column (and whether descending).
    pub baseline: RwSignal<Option<(String, Option<u32>)>>,
    pub sort: RwSignal<crate::view_model::compare::SortBy>,
    pub reserved: RwSignal<bool>,
    pub theoretical: RwSignal<bool>,
    pub hover: RwSignal<Option<f64>>,
}

impl StepsUi {
    pub fn new() -> StepsUi {
        StepsUi {
            baseline: RwSignal::new(None),
            sort: RwSignal::new(None),
            reserved: RwSignal::new(false),
            theoretical: RwSignal::new(false),
            hover: RwSignal::new(None),
        }
    }
}

#[component]
pub fn StepsView(ui: Ui) -> impl IntoView {
    let runs = Memo::new(move |_| {
        ui.steps.get();
        store::step_runs(&ui.runs())
    });
    let s = ui.steps_ui;
    let any_theoretical = move || runs.with(|r| r.iter().any(|r| r.theoretical_bytes.is_some()));
    let device_used = move || runs.with(|r| r.iter().any(|r| r.reserved_is_device_used));
    let copied = RwSignal::new(false);
    let copy = move |_| {
        let runs = runs.get_untracked();
        let text = steps_table(&runs, baseline_of(s, &runs), false).markdown();
        if let Some(w) = web_sys::window() {
            let _ = w.navigator().clipboard().write_text(&text);
        }
        copied.set(true);
    };
    let csv = move |_| {
        super::export::save_text("memograph_steps.csv", "text/csv", &{
            let runs = runs.get_untracked();
            steps_table(&runs, baseline_of(s, &runs), true).csv()
        })
    };
    let clear = move |_| {
        store::clear_steps();
        ui.steps.update(|n| *n += 1);
        if !ui.anything_open() {
            ui.phase.set(Phase::Empty);
        }
    };
    view! {
        <div class="compare-view">
            <div class="view-toolbar">
                <span class="peak" data-testid="steps-status">{move || count(runs.with(|r| r.len()) as u64, "run", "runs")}</span>
                <label class="check" title="Peak reserved per step instead of peak allocated">
                    <input type="checkbox" data-testid="show-reserved" prop:checked=move || s.reserved.get()
                        on:change=move |ev| s.reserved.set(event_target_checked(&ev)) />
                    "Reserved"
                </label>
                <label class="check" title="Each run's theoretical memory (from its memory model) as a red line">
                    <input type="checkbox" data-testid="show-theoretical" prop:checked=move || s.theoretical.get()
                        prop:disabled=move || !any_theoretical()
                        on:change=move |ev| s.theoretical.set(event_target_checked(&ev)) />
                    "Theoretical"
                </label>
                <button class="button small" data-testid="steps-copy" on:click=copy>
                    {move || if copied.get() { "Copied ✓" } else { "Copy as Markdown" }}
                </button>
                <button class="button small" on:click=csv>"Download CSV"</button>
                <button class="button small" title="Close every step-record file" on:click=clear
                    prop:disabled=move || { ui.steps.get(); store::step_file_count() == 0 }>"Close step files"</button>
                <span class="muted hint">
                    "MB in these files is 2^20 bytes and GB/GiB 2^30"
                    {move || if device_used() { " · Megatron traces' “reserved” is the device's used memory" } else { "" }}
                </span>
            </div>
            <div class="compare-body">
                <section class="panel wide">
                    <h3>"Runs"</h3>
                    <StepsTable ui=ui runs=runs />
                    {move || {
                        let lines = runs.with(|r| growth_lines(r));
                        (!lines.is_empty()).then(|| view! {
                            <div class="growth" data-testid="steps-growth">
                                <strong>"Growing step after step"</strong>
                                <ul>{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
                            </div>
                        })
                    }}
                </section>
                <StepRankSets ui=ui runs=runs />
                <section class="panel wide">
                    <h3>"Memory per step" <span class="muted">" · each run's static memory dotted and theoretical dash-dotted in its colour, the GPU's memory a dashed ceiling, simulated runs dashed; ▲ allocation retries, ✕ out of memory; ○ a snapshot of the run (click to open it)"</span></h3>
                    <StepsChart ui=ui runs=runs />
                </section>
                <Breakdowns runs=runs />
            </div>
        </div>
    }
}

/// Index of the baseline run (the first unless one was picked).
fn baseline_of(s: StepsUi, runs: &[StepRun]) -> usize {
    s.baseline
        .get_untracked()
        .and_then(|k| runs.iter().position(|r| (r.file.clone(), r.rank) == k))
        .unwrap_or(0)
}

#[component]
fn StepsTable(ui: Ui, runs: Memo<Vec<StepRun>>) -> impl IntoView {
    let s = ui.steps_ui;
    move || {
        let runs = runs.get();
        s.baseline.track();
        let base = baseline_of(s, &runs);
        let table = steps_table(&runs, base, false);
        let exact = steps_table(&runs, base, true);
        let order = s
            .sort
            .with(|by| crate::view_model::compare::sorted_order(&exact, by));
        let head = super::compare_view::sort_headers(&table, s.sort);
        let rows = order
            .into_iter()
            .map(|i| {
                let r = &runs[i];
                let cells = &table.rows[i];
                let title = match (r.peak_allocated_bytes(), r.peak_step()) {
                    (Some(p), Some(step)) => format!("{}: highest peak allocated {} bytes at step {step}", r.file, grouped(p)),
                    _ => format!("{}: no allocated figure in this input", r.file),
                };
                let cells = cells
                    .iter()
                    .zip(&table.numeric)
                    .map(|(c, &n)| view! { <td class:num=n>{c.clone()}</td> })
                    .collect_view();
                let key = (r.file.clone(), r.rank);
                let is_base = i == base;
                // A snapshot's own steps: it opens from here (at its Analysis, its steps listed there).
                let open = (r.format == TRACE_STEPS_FORMAT).then(|| {
                    let name = r.file.clone();
                    let device = r.config.get("device").and_then(|d| d.parse().ok());
                    view! {
                        <button class="star" data-testid="steps-open-snapshot"
                            title=format!("Open {name} at its Analysis: its steps are listed there, and a click on one shows what was live at its peak")
                            on:click=move |_| open_steps_of(ui, name.clone(), device)>"↗"</button>
                    }
                });
                view! {
                    <tr data-run=r.name.clone() data-rank=r.rank.map(|x| x.to_string()).unwrap_or_default()
                        data-peak=r.peak_allocated_bytes().map(|x| x.to_string()).unwrap_or_default()
                        class:simulated=r.simulated class:baseline=is_base title=title>
                        <td><button class="star" class:on=is_base title="Make this the baseline"
                            on:click=move |_| s.baseline.set(Some(key.clone()))>{if is_base { "★" } else { "☆" }}</button>{open}</td>
                        {cells}
                    </tr>
                }
            })
            .collect_view();
        view! {
            <div class="table-scroll">
                <table class="compare-table" data-testid="steps-table">
                    <thead><tr><th></th>{head}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        }
    }
}

/// Opens the snapshot `name` (open, or compared and read again whole) at its Analysis, on `device`
/// (else its default device).
fn open_steps_of(ui: Ui, name: String, device: Option<i64>) {
    let Some((_, size)) = store::run_names().into_iter().find(|(n, _)| *n == name) else {
        return;
    };
    ui.show_run(name, size, device);
    ui.view.set(super::View::Analysis);
}

/// Per job of two ranks or more: each rank's highest peak (allocated, or reserved when the chart shows
/// reserved), the rank out of line marked; a click makes that rank's run the baseline.
#[component]
fn StepRankSets(ui: Ui, runs: Memo<Vec<StepRun>>) -> impl IntoView {
    let s = ui.steps_ui;
    move || {
        let runs = runs.get();
        let reserved = s.reserved.get();
        let sets = rank_sets(&runs, reserved);
        let keys: Vec<(String, Option<u32>)> =
            runs.iter().map(|r| (r.file.clone(), r.rank)).collect();
        sets.into_iter()
            .map(|StepRanks { label, strip, .. }| {
                let keys = keys.clone();
                super::compare_view::rank_panel(
                    label,
                    strip,
                    if reserved {
                        "by peak reserved · click a rank to make it the baseline"
                    } else {
                        "click a rank to make it the baseline"
                    },
                    "click to make it the baseline",
                    move |run| s.baseline.set(keys.get(run).cloned()),
                )
            })
            .collect_view()
    }
}

/// The step chart's marks as it draws them: (run, step, what the snapshot is called).
fn mark_labels(marks: &[(usize, u64, String, u64)]) -> Vec<(usize, u64, String)> {
    marks
        .iter()
        .map(|(r, st, file, _)| (*r, *st, mark_label(file)))
        .collect()
}

#[component]
fn StepsChart(ui: Ui, runs: Memo<Vec<StepRun>>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let plot = StoredValue::new(None::<(PlotArea, f64)>);
    let s = ui.steps_ui;
    let resized = super::window_resizes();
    // Snapshots of the same runs (open or compared), by rank and step in their names.
    let marks = Memo::new(move |_| {
        let digests: Vec<_> = ui.runs().into_iter().flat_map(|r| r.digests).collect();
        let runs = runs.get();
        let refs: Vec<&StepRun> = runs.iter().collect();
        snapshot_marks(&refs, &digests)
            .into_iter()
            .map(|(run, step, k)| (run, step, digests[k].file.clone(), digests[k].file_bytes))
            .collect::<Vec<_>>()
    });
    // The pointer's rule is drawn on a canvas of its own over the chart (as the Compare chart's):
    // moving the pointer draws a line, not every run's curve.
    let rule = NodeRef::<Canvas>::new();
    let redrawn = RwSignal::new(0u32);
    Effect::new(move |_| {
        resized.track();
        let (dark, reserved, theoretical) = (ui.dark.get(), s.reserved.get(), s.theoretical.get());
        let runs = runs.get();
        let marks = marks.get();
        let Some(el) = canvas.get() else { return };
        let refs: Vec<&StepRun> = runs.iter().collect();
        let labels = mark_labels(&marks);
        let mut area = None;
        let drawn = crate::render::charts::draw(&el, dark, |a, t| {
            let options = StepChartOptions {
                reserved,
                theoretical,
            };
            area = Some(step_chart(a, "", &refs, options, &labels, None, t)?);
            Ok(Bars::default())
        });
        plot.set_value(drawn.and_then(|(_, dpr)| Some((area?, dpr))));
        redrawn.update(|n| *n = n.wrapping_add(1));
    });
    super::pointer_rule(ui, canvas, rule, plot, redrawn, move || s.hover.get());
    let step_at = move |ev: &web_sys::MouseEvent| {
        let (p, dpr) = plot.get_value()?;
        p.x_at((f64::from(ev.offset_x()) * dpr) as i32)
            .map(|x| (x, p))
    };
    let on_move = move |ev: web_sys::MouseEvent| s.hover.set(step_at(&ev).map(|(x, _)| x.round()));
    // Opens the snapshot marked at step `x` (within a pixel or so of the chart), if any.
    let open_mark = move |x: f64, p: memograph_charts::PlotArea| {
        let near = (p.x_range.1 - p.x_range.0) * 0.015;
        let hit = marks
            .get_untracked()
            .into_iter()
            .find(|(_, step, _, _)| (*step as f64 - x).abs() <= near.max(0.5));
        if let Some((_, _, name, size)) = hit {
            ui.show_run(name, size, None);
        }
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some((x, p)) = step_at(&ev) {
            open_mark(x, p);
        }
    };
    // The keyboard's pointer: the arrows move the readout a step (Shift: ten), Home and End to the
    // ends, Page Down and Up to the next or previous snapshot marked; Enter opens the one there.
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        let Some((p, _)) = plot.get_value() else {
            return;
        };
        let (x0, x1) = (
            p.x_range.0.ceil(),
            p.x_range.1.floor().max(p.x_range.0.ceil()),
        );
        let at = s.hover.get_untracked().unwrap_or(x0).clamp(x0, x1);
        let to = match ev.key().as_str() {
            // The next or the previous step a snapshot is marked at.
            "PageDown" | "PageUp" => {
                let steps = marks.with_untracked(|m| {
                    m.iter().map(|(_, st, _, _)| *st as f64).collect::<Vec<_>>()
                });
                let next = if ev.key() == "PageDown" {
                    steps.into_iter().filter(|&st| st > at).reduce(f64::min)
                } else {
                    steps.into_iter().filter(|&st| st < at).reduce(f64::max)
                };
                Some(next.unwrap_or(at))
            }
            _ if super::activates(&ev) => {
                open_mark(at, p);
                return;
            }
            _ => match super::moved_by(&ev, at, (x0, x1), 1.0) {
                Some(to) => to,
                None => return,
            },
        };
        ev.prevent_default();
        s.hover.set(to);
    };
    let readout = move || {
        let step = s.hover.get()?;
        let runs = runs.get();
        let refs: Vec<&StepRun> = runs.iter().collect();
        let values = values_at(&refs, step, s.reserved.get());
        let items = runs
            .iter()
            .zip(values)
            .enumerate()
            .map(|(k, (r, v))| {
                let color = memograph_charts::RUN_COLORS[k % memograph_charts::RUN_COLORS.len()];
                let rank = r.rank.map_or(String::new(), |x| format!(" rank {x}"));
                view! {
                    <span class="readout-item">
                        <span class="swatch" style=format!("background:{color}")></span>
                        {format!("{}{rank}: {}", r.name, v.map_or("—".to_string(), |(_, b)| bytes(b)))}
                    </span>
                }
            })
            .collect_view();
        Some(
            view! { <div class="readout" data-testid="steps-readout"><span class="muted">{format!("step {step:.0}")}</span>{items}</div> },
        )
    };
    let export = move |svg: bool| {
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let runs = runs.get_untracked();
        let picture = Steps {
            runs: runs.iter().collect(),
            options: StepChartOptions {
                reserved: s.reserved.get_untracked(),
                theoretical: s.theoretical.get_untracked(),
            },
            labels: mark_labels(&marks.get_untracked()),
        };
        super::export::save_picture(
            "memograph_steps",
            &el,
            ui.dark.get_untracked(),
            svg,
            &picture,
        );
    };
    view! {
        <super::export::ExportButtons testid="export-steps" png=move || export(false) svg=move || export(true) />
        <div class="chart-with-rule">
            <canvas class="compare-chart" data-testid="steps-chart" node_ref=canvas tabindex="0"
                aria-label="Memory per step: the arrow keys move the readout, Page Down and Up go to the snapshots marked, Enter opens one"
                on:keydown=on_key data-marks=move || marks.with(|m| m.len().to_string())
                on:mousemove=on_move on:mouseleave=move |_| s.hover.set(None) on:click=on_click></canvas>
            <canvas class="rule" data-testid="steps-chart-rule" node_ref=rule aria-hidden="true"></canvas>
        </div>
        {readout}
    }
}

/// The step chart as on screen (no hover line), for export.
struct Steps<'a> {
    runs: Vec<&'a StepRun>,
    options: StepChartOptions,
    labels: Vec<(usize, u64, String)>,
}

impl super::export::Picture for Steps<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(
        &self,
        a: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
        t: &memograph_charts::Theme,
    ) -> memograph_charts::Result<Bars>
    where
        DB::ErrorType: 'static,
    {
        step_chart(a, "", &self.runs, self.options, &self.labels, None, t)?;
        Ok(Bars::default())
    }
}

/// Components against the measured peak, per run that has them (capture manifests, Megatron's
/// theoretical footprint): both figures side by side and the gap in bytes.
#[component]
fn Breakdowns(runs: Memo<Vec<StepRun>>) -> impl IntoView {
    move || {
        let runs = runs.get();
        let rows: Vec<_> = runs
            .iter()
            .filter_map(|r| Some((r, breakdown(r)?)))
            .collect();
        if rows.is_empty() {
            return None;
        }
        let body = rows
            .into_iter()
            .map(|(r, b)| {
                let max = b.parts.iter().map(|p| p.1).chain(b.peak).max().unwrap_or(1).max(1) as f64;
                let parts = b
                    .parts
                    .iter()
                    .map(|(name, v)| view! {
                        <div class="part"><span class="part-name">{name.clone()}</span>
                            <span class="part-bar" style=format!("width:{:.1}%", *v as f64 / max * 100.0)></span>
                            <span class="num">{bytes(*v)}</span></div>
                    })
                    .collect_view();
                let rank = r.rank.map_or(String::new(), |x| format!(" rank {x}"));
                let gap = match (b.peak, b.gap) {
                    (Some(p), Some(g)) => format!(
                        "components {} ({} bytes) · measured peak {} ({} bytes) · the peak is {} {} the components",
                        bytes(b.sum), grouped(b.sum), bytes(p), grouped(p), signed_bytes(g),
                        if g >= 0 { "above" } else { "from" }
                    ),
                    _ => format!("components {} ({} bytes) · no measured peak in this input", bytes(b.sum), grouped(b.sum)),
                };
                view! {
                    <div class="breakdown" data-run=r.name.clone()>
                        <h4>{format!("{}{rank}", r.name)}</h4>
                        {parts}
                        <p class="gap" data-testid="steps-gap">{gap}</p>
                    </div>
                }
            })
            .collect_view();
        Some(view! {
            <section class="panel wide">
                <h3>"Components and the measured peak"</h3>
                <div class="breakdowns">{body}</div>
            </section>
        })
    }
}
