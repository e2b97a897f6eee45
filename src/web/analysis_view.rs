//! Where the memory goes: the live set at an entry (the peak unless another is picked) by call stack,
//! category and component, the largest allocations, the allocator's efficiency and recommendations.
//!
//! A compact Active Memory Timeline on top picks the entry (click) and shows what the panels highlight;
//! clicking a call path, a consumer bar, a component bar or a category highlights those allocations on
//! both timelines. Figures are the engine's report (`DeviceModel::report`); the charts are
//! `memograph-charts`, the same that `memograph report` writes as PNGs.

use std::collections::HashSet;

use leptos::html::Canvas;
use leptos::prelude::*;
use memograph_charts::{Bars, Theme};
use memograph_snapshot::analysis::report::{Component, DeviceReport};
use memograph_snapshot::analysis::trace_steps::TraceSteps;
use memograph_snapshot::format::{at_entry, bytes, capitalised, count, grouped, percent};
use memograph_snapshot::Snapshot;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};

use super::timeline_view::HighlightChip;
use super::{Highlight, Ui};
use crate::load::build::Part;
use crate::load::store;
use crate::render::{self, colors, Surface};
use crate::scale::{Plot, Scale};
use crate::view_model::analysis::{short_frame, tree_rows, TreeRow};
use crate::view_model::DeviceModel;

/// Runs `f` on the report the panels show (tracks the file, device, entry and tree filter), once it
/// is made; until then it is made in the background and `f` is not called.
fn with_report<R>(ui: Ui, f: impl FnOnce(&DeviceReport) -> R) -> Option<R> {
    let (file, device) = ui.current()?;
    let key = (ui.analysis_event.get(), ui.hide_framework.get());
    let done = store::with_model(file, device, |m, _| m.built_report(key).map(f)).flatten();
    if done.is_none() {
        ui.build(file, device, Part::Report(key));
    }
    done
}

/// Runs `f` on the current device's model and the report the panels show, when it is made (no
/// tracking: for event handlers).
fn with_model_untracked<R>(
    ui: Ui,
    f: impl FnOnce(&DeviceModel, &DeviceReport, &Snapshot) -> R,
) -> Option<R> {
    let (file, device) = (ui.file.get_untracked(), ui.device.get_untracked());
    let key = (
        ui.analysis_event.get_untracked(),
        ui.hide_framework.get_untracked(),
    );
    store::with_model(file, device, |m, s| m.built_report(key).map(|r| f(m, r, s))).flatten()
}

#[component]
pub fn AnalysisView(ui: Ui) -> impl IntoView {
    // The device's first out-of-memory entry, if it ran out: what was live then is the question.
    let first_oom = move || {
        let (file, device) = ui.current()?;
        store::with_model(file, device, |m, _| {
            m.ooms.first().map(|o| i64::from(o.entry))
        })
        .flatten()
    };
    let headline = move || {
        // Read before the report: the store is borrowed while `with_report` runs.
        let oom = first_oom();
        with_report(ui, |r| {
            let at = if ui.analysis_event.get().is_none() {
                format!("Live at the peak ({})", at_entry(r.event))
            } else if oom == Some(r.event) {
                format!("Live when it ran out of memory ({})", at_entry(r.event))
            } else if r.event < 0 {
                "Live before the first entry".to_string()
            } else {
                format!("Live after entry {}", grouped(r.event as u64))
            };
            format!(
                "{at}{}: {} ({}) in {}",
                r.in_step_text(),
                bytes(r.live_bytes),
                count(r.live_bytes, "byte", "bytes"),
                count(r.live_allocations as u64, "allocation", "allocations")
            )
        })
        .unwrap_or_else(|| "Building the analyses…".to_string())
    };
    // "Copied ✓" until the findings would read otherwise (another file, device, entry or filter).
    let copied = RwSignal::new(false);
    Effect::new(move |_| {
        let _ = (
            ui.current(),
            ui.analysis_event.get(),
            ui.hide_framework.get(),
        );
        copied.set(false);
    });
    view! {
        <div class="analysis-view">
            <div class="view-toolbar">
                <span class="peak" data-testid="analysis-at">{headline}</span>
                <Show when=move || ui.analysis_event.get().is_some()>
                    <button class="button small" data-testid="back-to-peak" on:click=move |_| ui.analysis_event.set(None)>"Back to the peak"</button>
                </Show>
                <Show when=move || first_oom().is_some_and(|e| ui.analysis_event.get() != Some(e))>
                    <button class="button small" data-testid="at-oom" on:click=move |_| ui.analysis_event.set(first_oom())
                        title="What was live when the allocator ran out of memory">"At the out of memory"</button>
                </Show>
                <label class="check" title="Hide torch, Python library and C++ frames so your own code is on top">
                    <input type="checkbox" prop:checked=move || ui.hide_framework.get()
                        on:change=move |ev| ui.hide_framework.set(event_target_checked(&ev)) />
                    "Hide framework frames"
                </label>
                <Show when=move || ui.highlight.get().is_some()>
                    <HighlightChip ui=ui />
                </Show>
                <button class="button small" data-testid="copy-findings" on:click=move |_| copy_findings(ui, copied)
                    title="Copy the findings at this entry as Markdown, to paste into an issue (what memograph report's README.md says)">
                    {move || if copied.get() { "Copied ✓" } else { "Copy findings" }}
                </button>
                <button class="button small" data-testid="export-live-csv" on:click=move |_| export_live_set(ui)
                    title="Download the allocations live at this entry (name, address, bytes, category, where allocated) as CSV">"Live set (CSV)"</button>
                <button class="button small" data-testid="export-consumers-csv" on:click=move |_| export_consumers(ui)
                    title="Download the largest live allocations at this entry (rank, name, bytes, category, where allocated) as CSV">"Top consumers (CSV)"</button>
                <button class="button small" data-testid="export-report-json" on:click=move |_| export_report(ui)
                    title="Download these analyses as JSON (what memograph report --json writes for this device)">"Analyses (JSON)"</button>
                <span class="muted hint">"click the timeline: what is live there · click a path or a bar: highlight it"</span>
            </div>
            <div class="analysis-body">
                <CompactTimeline ui=ui />
                <div class="panels">
                    <TraceStepsPanel ui=ui />
                    <section class="panel">
                        <h3>"Categories"</h3>
                        <Chart ui=ui testid="category-chart" draw=Drawing::Donut />
                        <CategoryLegend ui=ui />
                    </section>
                    <section class="panel">
                        <h3>"Components" <span class="muted">" · click a bar to highlight it"</span></h3>
                        <Chart ui=ui testid="components-chart" draw=Drawing::Components pick=COMPONENT />
                    </section>
                    <section class="panel wide">
                        <h3>"Categories over the trace"</h3>
                        <Chart ui=ui testid="overview-chart" draw=Drawing::Overview />
                    </section>
                    <section class="panel wide">
                        <h3>"Components over the trace"</h3>
                        <Chart ui=ui testid="components-over-time-chart" draw=Drawing::ComponentsOverTime />
                    </section>
                    <section class="panel wide">
                        <h3>"Live set by call stack" <span class="muted">" · outermost frame first; click a path to highlight its allocations"</span></h3>
                        <LiveSetTree ui=ui />
                    </section>
                    <section class="panel wide">
                        <h3>"Largest live allocations" <span class="muted">" · click a bar to highlight and pin it"</span></h3>
                        <Chart ui=ui testid="top-consumers-chart" draw=Drawing::Top pick=CONSUMER />
                    </section>
                    <section class="panel">
                        <h3>"Allocator efficiency"</h3>
                        <EfficiencyFigures ui=ui />
                        <Chart ui=ui testid="efficiency-chart" draw=Drawing::Efficiency />
                    </section>
                    <section class="panel">
                        <h3>"Recommendations"</h3>
                        <Recommendations ui=ui />
                    </section>
                    <section class="panel">
                        <h3>"Sizes of the live allocations"</h3>
                        <Chart ui=ui testid="live-sizes-chart" draw=Drawing::LiveSizes />
                    </section>
                    <section class="panel">
                        <h3>"Sizes of the cached free blocks"</h3>
                        <Chart ui=ui testid="free-sizes-chart" draw=Drawing::FreeSizes />
                    </section>
                </div>
            </div>
        </div>
    }
}

/// Copies the findings at the analysed entry as Markdown: the file and device, then the engine's
/// findings ([`DeviceReport::findings`]), as `memograph report`'s README.md gives them.
fn copy_findings(ui: Ui, copied: RwSignal<bool>) {
    let name = store::with_file(ui.file.get_untracked(), |f| f.name.clone()).unwrap_or_default();
    let text = with_model_untracked(ui, |_, r, _| {
        format!("**`{name}`** · cuda:{}\n\n{}", r.device, r.findings(None))
    });
    if let (Some(text), Some(w)) = (text, web_sys::window()) {
        let _ = w.navigator().clipboard().write_text(&text);
        copied.set(true);
    }
}

/// Downloads the live set at the analysed entry as CSV (exact bytes; its rows add up to the live bytes).
fn export_live_set(ui: Ui) {
    let made = with_model_untracked(ui, |m, r, s| {
        let event = r.event;
        let c = m.categories(s);
        let table = memograph_snapshot::analysis::live_set::live_set_table(
            s,
            &m.blocks.lifetimes,
            &c.of,
            &c.names,
            event,
        );
        Some((event, table.csv()))
    })
    .flatten();
    if let Some((event, csv)) = made {
        let name = format!("memograph_live_set_{}.csv", entry_name(event));
        super::export::save_text(&name, "text/csv", &csv);
    }
}

/// An analysed entry in a file name: `start` (before the first entry) or `entryN`.
fn entry_name(event: i64) -> String {
    if event < 0 {
        "start".to_string()
    } else {
        format!("entry{event}")
    }
}

/// Downloads the largest live allocations at the analysed entry (as the chart shows them, and more:
/// the report's list) as CSV.
fn export_consumers(ui: Ui) {
    use memograph_snapshot::analysis::live_set::consumers_table;
    let csv = with_model_untracked(ui, |_, r, _| {
        (r.event, consumers_table(&r.top_consumers).csv())
    });
    if let Some((event, csv)) = csv {
        let name = format!("memograph_top_consumers_{}.csv", entry_name(event));
        super::export::save_text(&name, "text/csv", &csv);
    }
}

/// Downloads the analyses the panels show (the engine's report of this device at this entry) as JSON.
fn export_report(ui: Ui) {
    let json = with_model_untracked(ui, |_, r, _| serde_json::to_string(r).ok()).flatten();
    if let Some(json) = json {
        super::export::save_text("memograph_analyses.json", "application/json", &json);
    }
}

/// Allocations a bar stands for, and the one to pin.
type Picked = (Vec<u32>, Option<u32>);

/// What a chart's bar `k` stands for: its name (the highlight's label, and what the keyboard's focus
/// says, made without a walk over the allocations), and the allocations a click highlights, with the
/// one to pin, if any.
#[derive(Clone, Copy)]
struct Pick {
    name: fn(&DeviceReport, usize) -> Option<String>,
    allocations: fn(&DeviceModel, &DeviceReport, &Snapshot, usize) -> Option<Picked>,
}

/// A bar of the largest-allocations chart: that allocation, pinned.
const CONSUMER: Pick = Pick {
    name: |r, k| {
        let c = r.top_consumers.get(k)?;
        Some(format!("{} {}", c.name, bytes(c.bytes)))
    },
    allocations: |_, r, _, k| {
        let c = r.top_consumers.get(k)?;
        Some((vec![c.allocation], Some(c.allocation)))
    },
};

/// A bar of the components chart: every allocation of the component's categories.
const COMPONENT: Pick = Pick {
    name: |r, k| Some(r.components.get(k)?.component.label().to_string()),
    allocations: |m, r, s, k| {
        let component = r.components.get(k)?.component;
        let c = m.categories(s);
        let wanted: Vec<bool> = c
            .names
            .iter()
            .map(|n| Component::of_category(n) == component)
            .collect();
        let allocations = (0..c.of.len() as u32)
            .filter(|&i| wanted[c.of[i as usize] as usize])
            .collect();
        Some((allocations, None))
    },
};

/// The report's charts this view shows; each draws on any plotters backend (the canvas, and SVG for
/// export).
#[derive(Clone, Copy)]
enum Drawing {
    Donut,
    Components,
    Overview,
    ComponentsOverTime,
    Top,
    Efficiency,
    LiveSizes,
    FreeSizes,
}

impl super::export::Picture for (Drawing, &DeviceReport) {
    fn draw<DB: DrawingBackend>(
        &self,
        a: &DrawingArea<DB, Shift>,
        t: &Theme,
    ) -> memograph_charts::Result<Bars>
    where
        DB::ErrorType: 'static,
    {
        self.0.draw(a, self.1, t)
    }
}

impl Drawing {
    fn draw<DB: DrawingBackend>(
        self,
        a: &DrawingArea<DB, Shift>,
        r: &DeviceReport,
        t: &Theme,
    ) -> memograph_charts::Result<Bars>
    where
        DB::ErrorType: 'static,
    {
        let none = |_| Bars::default();
        match self {
            Drawing::Donut => memograph_charts::category_donut(a, r, t).map(none),
            Drawing::Components => memograph_charts::component_bars(a, "", r, t),
            Drawing::Overview => memograph_charts::memory_overview(a, "", r, t).map(none),
            Drawing::ComponentsOverTime => {
                memograph_charts::components_over_trace(a, "", r, t).map(none)
            }
            Drawing::Top => memograph_charts::top_consumers(a, "", r, TOP_ROWS, t),
            Drawing::Efficiency => memograph_charts::allocated_vs_reserved(a, "", r, t).map(none),
            Drawing::LiveSizes => {
                let color = memograph_charts::ALLOCATED_COLOR;
                memograph_charts::size_histogram(a, "", &r.live_sizes, color, t).map(none)
            }
            Drawing::FreeSizes => {
                let color = memograph_charts::FREE_COLOR;
                memograph_charts::size_histogram(a, "", &r.free_sizes, color, t).map(none)
            }
        }
    }
}

/// Rows of the largest-allocations chart.
const TOP_ROWS: usize = 15;

/// A memograph-charts chart on a canvas, redrawn when the report, theme or window size changes; with
/// `pick`, a click on a bar highlights what it stands for, and so does the keyboard: the chart is in
/// the tab order, the arrow keys (Home, End) move a focus drawn round a bar, Enter or Space picks it.
#[component]
fn Chart(
    ui: Ui,
    testid: &'static str,
    draw: Drawing,
    #[prop(optional)] pick: Option<Pick>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let bars = RwSignal::new(None::<(Bars, f64)>);
    // The bar the keyboard is on (checked against the bars drawn last: never one they lack).
    let focused = RwSignal::new(None::<usize>);
    let resized = super::window_resizes();
    Effect::new(move |_| {
        resized.track();
        let dark = ui.dark.get();
        let Some(el) = canvas.get() else { return };
        if with_report(ui, |_| ()).is_none() {
            return;
        }
        // Drawn in a task of its own: a view opening draws eight charts, which in one task held the
        // page's thread for 100 ms on a 177 MB file.
        leptos::task::spawn_local(async move {
            crate::load::next_task().await;
            let drawn = with_model_untracked(ui, |_, r, _| {
                render::charts::draw(&el, dark, |a, t| draw.draw(a, r, t))
            });
            bars.set(drawn.flatten());
        });
    });
    let choose = move |k: usize| {
        let Some(pick) = pick else { return };
        let made = with_model_untracked(ui, |m, r, s| {
            Some(((pick.name)(r, k)?, (pick.allocations)(m, r, s, k)?))
        });
        if let Some((name, (allocations, pin))) = made.flatten() {
            ui.highlight.set(Some(Highlight::new(name, allocations)));
            if pin.is_some() {
                ui.pinned.set(pin);
            }
        }
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        let Some((b, dpr)) = bars.get_untracked() else {
            return;
        };
        let (x, y) = (
            f64::from(ev.offset_x()) * dpr,
            f64::from(ev.offset_y()) * dpr,
        );
        if let Some(k) = b.at(x as i32, y as i32) {
            focused.set(Some(k));
            choose(k);
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        let Some(count) = bars
            .get_untracked()
            .map(|(b, _)| b.count)
            .filter(|&n| n > 0)
        else {
            return;
        };
        let at = focused.get_untracked().filter(|&k| k < count);
        let to = match super::bar_moved(&ev.key(), at, count) {
            Some(to) => to,
            None if super::activates(&ev) => {
                let k = at.unwrap_or(0);
                focused.set(Some(k));
                choose(k);
                return;
            }
            None => return,
        };
        ev.prevent_default();
        focused.set(Some(to));
    };
    // The focused bar's band, in the canvas's CSS pixels.
    let ring = move || {
        let (b, dpr) = bars.get()?;
        let (x0, y0, x1, y1) = b.band(focused.get()?)?;
        let px = |v: i32| f64::from(v) / dpr;
        Some(format!(
            "left:{:.1}px;top:{:.1}px;width:{:.1}px;height:{:.1}px",
            px(x0),
            px(y0),
            px(x1 - x0 + 1),
            px(y1 - y0 + 1)
        ))
    };
    // What the focused bar stands for, for a screen reader.
    let label = move || {
        let k = focused.get()?;
        bars.track();
        let name = with_model_untracked(ui, |_, r, _| (pick?.name)(r, k)).flatten()?;
        Some(format!("{name}: Enter highlights it"))
    };
    // The chart as on screen, drawn again for the file.
    let export = move |svg: bool| {
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let name = format!(
            "{}_{}",
            super::export::stem(ui),
            testid.trim_end_matches("-chart")
        );
        let dark = ui.dark.get_untracked();
        with_report(ui, |r| {
            super::export::save_picture(&name, &el, dark, svg, &(draw, r));
        });
    };
    // The buttons beside the panel's heading (style/main.css), not over the chart.
    view! {
        <div class="heading-buttons">
            <super::export::ExportButtons testid=testid png=move || export(false) svg=move || export(true) />
        </div>
        <div class="chart-box">
            <canvas class="chart" class:clickable=pick.is_some() data-testid=testid node_ref=canvas
                tabindex=pick.map(|_| "0")
                aria-label=move || pick.map(|_| label().unwrap_or_else(|| "Chart: the arrow keys choose a bar, Enter highlights it".into()))
                on:click=on_click on:keydown=on_key></canvas>
            <Show when=move || pick.is_some() && ring().is_some()>
                <div class="bar-focus" data-testid=format!("{testid}-focus") style=ring></div>
            </Show>
        </div>
    }
}

/// The compact timeline: every allocation coloured by category, highlighted ones at full strength, a
/// marker at the analysed entry. A click analyses the entry under the pointer.
#[component]
fn CompactTimeline(ui: Ui) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let resized = super::window_resizes();
    Effect::new(move |_| {
        resized.track();
        let (dark, picked) = (ui.dark.get(), ui.highlight.get());
        let event = with_report(ui, |r| r.event);
        let (Some(el), Some(event)) = (canvas.get(), event) else {
            return;
        };
        let Some(surface) = Surface::of(&el) else {
            return;
        };
        let Some((file, device)) = ui.current() else {
            return;
        };
        let key = (
            ui.analysis_event.get_untracked(),
            ui.hide_framework.get_untracked(),
        );
        let wants_lit = std::cell::Cell::new(None);
        store::with_model(file, device, |m, _| {
            let (Some(report), Some(cats)) = (m.built_report(key), m.built_categories()) else {
                return;
            };
            let t = &m.blocks;
            let f = Scale::new(
                t.full_view(),
                Plot::of(surface.width, surface.height, 0),
                None,
            );
            let theme = colors::theme(dark);
            let highlighted = picked
                .as_ref()
                .map_or(&[][..], |h| h.allocations.as_slice());
            let lit = picked
                .as_ref()
                .and_then(|h| super::timeline_view::lit_or_want(t, &h.allocations, &wants_lit));
            let overlay = render::timeline::Overlay {
                annotations: &[],
                ooms: &m.ooms,
                hovered: None,
                pinned: None,
                show_peak: true,
                highlighted,
                lit: lit.as_deref(),
                categories: Some((cats.of.as_slice(), cats.names.len())),
                stacked: Some(&report.over_time),
            };
            render::timeline::draw(&surface, &f, t, &overlay, &theme);
            if let Some(steps) = &report.steps {
                let starts: Vec<f64> = steps.steps[1..]
                    .iter()
                    .map(|s| f64::from(s.first_entry))
                    .collect();
                render::timeline::draw_boundaries(&surface, &f, &starts, &theme);
            }
            render::timeline::draw_marker(&surface, &f, event as f64 + 0.5, &theme);
        });
        super::timeline_view::ask_lit(ui, &wants_lit);
    });
    let on_click = move |ev: web_sys::MouseEvent| {
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let Some(surface) = Surface::of(&el) else {
            return;
        };
        let (file, device) = (ui.file.get_untracked(), ui.device.get_untracked());
        let entry = store::with_model(file, device, |m, _| {
            let t = &m.blocks;
            let f = Scale::new(
                t.full_view(),
                Plot::of(surface.width, surface.height, 0),
                None,
            );
            f.entry_at(f64::from(ev.offset_x()), t.layout.x_len) as i64
        });
        if let Some(x) = entry {
            ui.analysis_event.set(Some(x));
        }
    };
    // The keyboard moves the analysed entry a pixel's worth of entries (Shift: ten), to either end
    // (Home, End), or back to the peak (Escape).
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let Some((event, x_len)) =
            with_model_untracked(ui, |m, r, _| (r.event, m.blocks.layout.x_len as i64))
        else {
            return;
        };
        let last = (x_len - 1).max(0) as f64;
        let step = (x_len / i64::from(el.client_width().max(1))).max(1) as f64;
        let Some(to) = super::moved_by(&ev, event as f64, (0.0, last), step) else {
            return;
        };
        ev.prevent_default();
        ui.analysis_event.set(to.map(|x| x as i64));
    };
    view! {
        <canvas class="compact-timeline" data-testid="analysis-timeline" node_ref=canvas on:click=on_click
            on:keydown=on_key tabindex="0"
            aria-label=move || with_report(ui, |r| format!("Analysed {}: the arrow keys move it, Escape goes back to the peak", at_entry(r.event)))
            title="Click to see what is live after that entry (or the arrow keys, Home, End; Escape: the peak)"></canvas>
    }
}

/// The categories live at the analysed entry; a click highlights that category's allocations.
#[component]
fn CategoryLegend(ui: Ui) -> impl IntoView {
    let rows = move || {
        with_report(ui, |r| {
            let n = r.categories.len();
            r.categories
                .iter()
                .enumerate()
                .filter(|(_, c)| c.count > 0)
                .map(|(k, c)| {
                    (
                        k,
                        n,
                        c.category.clone(),
                        c.bytes,
                        percent(c.bytes, r.live_bytes),
                    )
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
    };
    view! {
        <div class="legend flat">
            {move || rows().into_iter().map(|(k, n, name, b, share)| {
                let label = name.clone();
                let pick = move |_| {
                    let h = with_model_untracked(ui, |m, _, s| {
                        let c = m.categories(s);
                        let all = (0..c.of.len() as u32).filter(|&i| c.of[i as usize] as usize == k).collect();
                        Some(Highlight::new(label.clone(), all))
                    }).flatten();
                    ui.highlight.set(h);
                };
                view! {
                    <button class="legend-item" title="Highlight these allocations on the timelines" on:click=pick>
                        <span class="swatch" style=format!("background:{}", colors::category(k as u16, n))></span>
                        {format!("{name} {} · {share:.1} %", bytes(b))}
                    </button>
                }
            }).collect_view()}
        </div>
    }
}

#[component]
fn LiveSetTree(ui: Ui) -> impl IntoView {
    let toggled = RwSignal::new(HashSet::<Vec<usize>>::new());
    // Another entry, filter, file or device is another tree: start from the default again.
    Effect::new(move |_| {
        ui.analysis_event.track();
        ui.hide_framework.track();
        // Not `current()`: a part built in the background keeps what was opened.
        ui.files.track();
        ui.file.track();
        ui.device.track();
        toggled.set(HashSet::new());
    });
    let rows = move || {
        let t = toggled.get();
        with_report(ui, |r| tree_rows(&r.live_set, &t)).unwrap_or_default()
    };
    view! {
        <div class="tree" data-testid="live-set-tree">
            {move || rows().into_iter().map(|row| {
                let TreeRow { path, frame, bytes: b, count, share, open, leaf } = row;
                let depth = path.len() - 1;
                let toggle_path = path.clone();
                let toggle = move |_| toggled.update(|t| {
                    if !t.remove(&toggle_path) {
                        t.insert(toggle_path.clone());
                    }
                });
                let (label, title) = (frame.clone(), frame.clone());
                let pick = move || {
                    let h = with_model_untracked(ui, |_, r, _| {
                        let tree = &r.live_set;
                        let node = tree.at(&path)?;
                        let frames = tree.frames_of(&path)?;
                        Some(Highlight::new(short_frame(&label), node.all_allocations())
                            .made_by(super::MadeBy::Path(frames)))
                    }).flatten();
                    ui.highlight.set(h);
                };
                view! {
                    <div class="tree-row" style=format!("padding-left:{}px", 6 + depth * 14)>
                        <button class="twisty" disabled=leaf on:click=toggle>{if leaf { "·" } else if open { "▾" } else { "▸" }}</button>
                        <span class="tree-bar"><span style=format!("width:{share:.1}%")></span></span>
                        <span class="tree-bytes">{bytes(b)}</span>
                        <span class="tree-share muted">{format!("{share:.1} % · {}", grouped(count))}</span>
                        <span class="tree-frame" title=title tabindex="0"
                            on:click={
                                let pick = pick.clone();
                                move |_| pick()
                            }
                            on:keydown=move |ev| if super::activates(&ev) { pick() }>{frame}</span>
                    </div>
                }
            }).collect_view()}
        </div>
    }
}

#[component]
fn EfficiencyFigures(ui: Ui) -> impl IntoView {
    let rows = move || {
        with_report(ui, |r| {
            let e = &r.efficiency;
            vec![
                ("Allocated at the peak", bytes(e.peak_allocated)),
                ("Reserved at the peak", bytes(e.reserved_at_peak)),
                ("Reserved at most", bytes(e.max_reserved)),
                (
                    "Cache overhead at the peak",
                    format!("{:.1} % of reserved", e.cache_overhead * 100.0),
                ),
                (
                    "Cached free at the snapshot",
                    format!(
                        "{} (largest block {})",
                        bytes(e.free_bytes),
                        bytes(e.largest_free_block)
                    ),
                ),
                ("Fragmentation", format!("{:.2}", e.fragmentation)),
                ("Rounding waste", bytes(e.rounding_waste)),
            ]
        })
        .unwrap_or_default()
    };
    view! {
        <dl class="figures" data-testid="efficiency">
            {move || rows().into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
        </dl>
    }
}

#[component]
fn Recommendations(ui: Ui) -> impl IntoView {
    let items = move || with_report(ui, |r| r.recommendations.clone()).unwrap_or_default();
    view! {
        <div data-testid="recommendations">
            <Show when=move || items().is_empty()>
                <p class="muted">"Nothing to recommend: no threshold was crossed."</p>
            </Show>
            <ul class="recommendations">
                {move || items().into_iter().map(|r| view! {
                    <li class=format!("rec {}", r.kind)>
                        <strong>{r.message}</strong>
                        <div class="muted evidence">{r.evidence}</div>
                    </li>
                }).collect_view()}
            </ul>
        </div>
    }
}

/// The training steps the profiler's annotations mark in the trace (when two or more): a row a step,
/// the one holding the analysed entry marked; a click (or Enter) analyses that step's peak. Of a long
/// run (thousands of steps) only the rows near the table's view are drawn (`rows_in_view`): building
/// 3 000 rows took half a second of the page's thread.
#[component]
fn TraceStepsPanel(ui: Ui) -> impl IntoView {
    // The same steps for every analysed entry: the table is made again only for another trace, and
    // stays while the report of another entry is being made.
    let of_trace = Memo::new(move |was: Option<&StepsOf>| {
        let trace = ui.current();
        match with_report(ui, |r| r.steps.clone()) {
            Some(steps) => (trace, steps),
            None => (
                trace,
                was.filter(|w| w.0 == trace).and_then(|w| w.1.clone()),
            ),
        }
    });
    let steps = Memo::new(move |_| of_trace.with(|t| t.1.clone()));
    let table = Memo::new(move |_| steps.with(|s| s.as_ref().map(|s| s.table())));
    // The step holding the analysed entry (one comparison a row when it moves).
    let picked = Memo::new(move |_| {
        with_report(ui, |r| {
            let steps = r.steps.as_ref()?;
            Some(steps.step_of(r.event)?.step)
        })
        .flatten()
    });
    let scroller = NodeRef::<leptos::html::Div>::new();
    // Until measured, the most the table's scroller can be (40 % of the window's height).
    let most = web_sys::window()
        .and_then(|w| w.inner_height().ok())
        .and_then(|h| h.as_f64())
        .map_or(400.0, |h| h * 0.4);
    let (scroll, view_height) = (RwSignal::new(0.0f64), RwSignal::new(most));
    let measure = move || {
        if let Some(el) = scroller.try_get_untracked().flatten() {
            let (top, height) = (f64::from(el.scroll_top()), f64::from(el.client_height()));
            if scroll.get_untracked() != top {
                scroll.set(top);
            }
            if height > 0.0 && view_height.get_untracked() != height {
                view_height.set(height);
            }
        }
    };
    let resized = super::window_resizes();
    Effect::new(move |_| {
        resized.track();
        table.track();
        request_animation_frame(measure);
    });
    let drawn = Memo::new(move |_| {
        let rows = steps.with(|s| s.as_ref().map_or(0, |s| s.steps.len()));
        let range = crate::view_model::compare::rows_in_view(
            rows,
            STEP_ROW_PX,
            scroll.get(),
            view_height.get(),
        );
        (rows, range)
    });
    let spacer = move |above: bool| {
        move || {
            let (rows, range) = drawn.get();
            let count = if above { range.start } else { rows - range.end };
            (count > 0).then(|| {
                let height = format!("height:{}px", count as f64 * STEP_ROW_PX);
                view! { <tr class="not-drawn" aria-hidden="true" style=height></tr> }
            })
        }
    };
    // While rows are left undrawn, a row no one sees holds each column's longest text, so that the
    // columns keep their widths as rows come into view.
    let widths = move || {
        let (rows, range) = drawn.get();
        (rows > range.len()).then(|| {
            table.with(|t| {
                let t = t.as_ref()?;
                let cells = (0..t.header.len())
                    .map(|k| {
                        let longest = t
                            .rows
                            .iter()
                            .filter_map(|r| r.get(k))
                            .max_by_key(|c| c.chars().count())
                            .cloned()
                            .unwrap_or_default();
                        view! { <td>{longest}</td> }
                    })
                    .collect_view();
                Some(view! { <tr class="widths" aria-hidden="true">{cells}</tr> })
            })
        })
    };
    let row = move |k: usize| {
        let (step, cells) = steps.with_untracked(|s| {
            let step = s.as_ref()?.steps.get(k)?.clone();
            let cells = table.with_untracked(|t| {
                let t = t.as_ref()?;
                Some((t.rows.get(k)?.clone(), t.numeric.clone()))
            })?;
            Some((step, cells))
        })?;
        let (number, peak) = (step.step, step.peak_entry);
        let cells = cells
            .0
            .into_iter()
            .zip(cells.1)
            .map(|(c, n)| view! { <td class:num=n>{c}</td> })
            .collect_view();
        let on_key = move |ev: web_sys::KeyboardEvent| {
            if ev.key() == "Enter" {
                ui.analysis_event.set(Some(peak));
            }
        };
        Some(view! {
            <tr class:picked=move || picked.get() == Some(number) tabindex="0"
                data-step=number.to_string() data-peak=step.peak_bytes.to_string()
                title=format!("Analyse step {number}'s peak, {} ({})", bytes(step.peak_bytes), at_entry(peak))
                on:click=move |_| ui.analysis_event.set(Some(peak)) on:keydown=on_key>
                {cells}
            </tr>
        })
    };
    let panel = move || {
        let (count, marker, summary, growth, kept_at) = steps.with(|s| {
            let s = s.as_ref()?;
            let kept_at = s.kept_at.iter().take(5).cloned().collect::<Vec<_>>();
            Some((
                s.steps.len(),
                s.marker.clone(),
                s.summary(),
                s.growth.is_some(),
                kept_at,
            ))
        })?;
        let kept = (!kept_at.is_empty()).then(|| {
            let items = kept_at
                .into_iter()
                .map(|k| {
                    let title = format!("{} at step 1's end, {} at the last step's", bytes(k.a_bytes), bytes(k.b_bytes));
                    view! { <li title=title><span class="num">{memograph_snapshot::format::signed_bytes(k.delta_bytes)}</span>" "<code>{k.site}</code></li> }
                })
                .collect_view();
            view! {
                <details class="steps-kept" data-testid="trace-steps-kept">
                    <summary>"Left live since step 1's end, by where it was allocated"</summary>
                    <ul>{items}</ul>
                </details>
            }
        });
        let head = table.with(|t| {
            let t = t.as_ref()?;
            Some(
                t.header
                    .iter()
                    .zip(&t.numeric)
                    .map(|(h, &n)| view! { <th class:num=n>{h.clone()}</th> })
                    .collect_view(),
            )
        })?;
        Some(view! {
            <section class="panel wide" data-testid="trace-steps">
                <h3>{format!("{} steps in the trace", grouped(count as u64))}
                    <span class="muted">{format!(" · marked by {marker} · click a step to analyse its peak")}</span></h3>
                <p class="steps-finding" class:warn=growth>{capitalised(&summary.replace('`', ""))}</p>
                {kept}
                <div class="table-scroll trace-steps" node_ref=scroller on:scroll=move |_| measure()>
                    <table class="compare-table">
                        <thead><tr>{head}</tr>{widths}</thead>
                        <tbody>
                            {spacer(true)}
                            <For each=move || drawn.get().1 key=|k| *k children=move |k| row(k) />
                            {spacer(false)}
                        </tbody>
                    </table>
                </div>
            </section>
        })
    };
    view! { {panel} }
}

/// A trace (file, device) and its steps.
type StepsOf = (Option<(usize, i64)>, Option<TraceSteps>);

/// The height of a row of the steps table (style/main.css: `.trace-steps tbody tr`).
const STEP_ROW_PX: f64 = 23.0;
