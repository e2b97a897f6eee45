//! Compare runs: every open or compared file × device as a row of the peak table (config read from the
//! names, a baseline and deltas, Copy as Markdown, CSV), their live curves overlaid, the rank strip when
//! the names carry ranks, and the diff of two runs at their peaks (call-stack tree, components,
//! categories, call paths that grew). Figures are the engine's digests (`analysis::compare`); the
//! chart is `memograph-charts`' (the report's `compare.png` draws the same).
//!
//! Here: the view, its choices ([`CompareUi`]), which rows take part, A and B of the diff, the GPU
//! memory and sweeps. Its panels: `peak_table`, `chart` (the overlaid curves), `ranks`, `diff`.

mod chart;
mod diff;
mod peak_table;
mod ranks;

pub use peak_table::sort_headers;
pub(crate) use ranks::rank_panel;

use std::collections::HashSet;

use leptos::prelude::*;
use memograph_charts::CompareAxis;
use memograph_snapshot::analysis::compare::{common_folder, peak_rows, peak_table, Digest};
use memograph_snapshot::analysis::fit::{parse_memory, sweeps, Limit};
use memograph_snapshot::format::{bytes, count};

use super::{Phase, Ui};
use crate::view_model::compare::{default_b, refs, SharedDigest, SortBy};
use chart::OverlaidChart;
use diff::DiffPanel;
use peak_table::PeakTable;
use ranks::RankStrip;

/// A row of the comparison: a file (name and size) and a device.
pub type RowKey = (String, u64, i64);

fn key_of(d: &Digest) -> RowKey {
    (d.file.clone(), d.file_bytes, d.device)
}

/// The Compare view's choices, kept while other views are shown.
#[derive(Clone, Copy)]
pub struct CompareUi {
    /// Rows whose taking part differs from the default (a file's default device takes part).
    pub toggled: RwSignal<HashSet<RowKey>>,
    pub baseline: RwSignal<Option<RowKey>>,
    /// B of the diff (A is the baseline unless picked).
    pub diff_a: RwSignal<Option<RowKey>>,
    pub diff_b: RwSignal<Option<RowKey>>,
    /// Sort column of the table and whether descending.
    pub sort: RwSignal<SortBy>,
    pub axis: RwSignal<CompareAxis>,
    /// The chart's visible x range (`None`: all).
    pub range: RwSignal<Option<(f64, f64)>>,
    pub hover_x: RwSignal<Option<f64>>,
    pub tree_toggled: RwSignal<HashSet<Vec<usize>>>,
    /// The diff at entries picked on the curves: A and B with their digests at those entries (`None`:
    /// at their peaks), and whether one is being made (or why it could not be).
    pub at: RwSignal<Option<(SharedDigest, SharedDigest)>>,
    pub at_status: RwSignal<Option<String>>,
    /// The GPU memory typed in, in bytes, that the runs are held against (`None`: what an
    /// out-of-memory entry tells, if any).
    pub gpu_memory: RwSignal<Option<u64>>,
}

impl CompareUi {
    pub fn new() -> CompareUi {
        CompareUi {
            toggled: RwSignal::new(HashSet::new()),
            baseline: RwSignal::new(None),
            diff_a: RwSignal::new(None),
            diff_b: RwSignal::new(None),
            sort: RwSignal::new(None),
            axis: RwSignal::new(CompareAxis::Fraction),
            range: RwSignal::new(None),
            hover_x: RwSignal::new(None),
            tree_toggled: RwSignal::new(HashSet::new()),
            at: RwSignal::new(None),
            at_status: RwSignal::new(None),
            gpu_memory: RwSignal::new(None),
        }
    }
}

/// Every row's digest, in the order the runs came (tracks the open and compared files).
fn all_digests(ui: Ui) -> Vec<SharedDigest> {
    ui.runs().into_iter().flat_map(|r| r.digests).collect()
}

/// The folder every row's file lies in, shown once in the toolbar and left out of the rows' names
/// (files opened as a folder all begin with its name).
fn folder_of(rows: &[SharedDigest]) -> String {
    common_folder(rows.iter().map(|d| d.file.as_str())).to_string()
}

fn included(ui: Ui, d: &Digest) -> bool {
    d.default_device != ui.compare.toggled.with(|t| t.contains(&key_of(d)))
}

/// The rows taking part, in table order.
fn chosen(ui: Ui, all: &[SharedDigest]) -> Vec<SharedDigest> {
    all.iter().filter(|d| included(ui, d)).cloned().collect()
}

/// Index of the baseline among `rows` (the first unless one was picked).
fn baseline_of(ui: Ui, rows: &[SharedDigest]) -> usize {
    ui.compare
        .baseline
        .get()
        .and_then(|k| rows.iter().position(|d| key_of(d) == k))
        .unwrap_or(0)
}

#[component]
pub fn CompareView(ui: Ui) -> impl IntoView {
    let digests = Memo::new(move |_| all_digests(ui));
    let rows = Memo::new(move |_| digests.with(|all| chosen(ui, all)));
    let limit = Memo::new(move |_| {
        let stated = ui.compare.gpu_memory.get();
        rows.with(|r| Limit::of(stated, &refs(r)))
    });
    let status = move || {
        let (done, total) = ui.comparing.get();
        let runs = rows.with(|r| r.len());
        let mut reading = if total > 0 {
            format!(" · reading files: {done} of {total} done")
        } else {
            String::new()
        };
        // Open files whose digests are being made, in the background.
        let pending = ui.runs().iter().filter(|r| r.pending).count();
        if pending > 0 {
            reading += &format!(
                " · summarising {}…",
                count(pending as u64, "open file", "open files")
            );
        }
        let folder = digests.with(|d| folder_of(d));
        let folder = if folder.is_empty() {
            String::new()
        } else {
            format!(" · in {folder}")
        };
        format!(
            "{} compared{folder}{reading}",
            count(runs as u64, "run", "runs")
        )
    };
    view! {
        <div class="compare-view">
            <div class="view-toolbar">
                <span class="peak" data-testid="compare-status">{status}</span>
                <Show when=move || { ui.comparing.get().1 > 0 }>
                    <button class="button small" data-testid="cancel-compare" title="Stop reading the files not read yet (the runs read stay)"
                        on:click=move |_| ui.cancel_reading()>"Cancel"</button>
                </Show>
                <CopyButtons ui=ui rows=rows limit=limit />
                <span class="muted hint">"tick the rows to compare · ★ sets the baseline · click a row to diff it against the baseline · click a heading to sort"</span>
            </div>
            <div class="compare-body">
                <section class="panel wide">
                    <h3>"Peaks"</h3>
                    <GpuMemory ui=ui limit=limit />
                    <PeakTable ui=ui digests=digests rows=rows limit=limit />
                </section>
                <Sweeps rows=rows limit=limit />
                <section class="panel wide">
                    <h3>"Live memory over each trace" <span class="muted">" · ● peak · ✕ out of memory"</span>
                        <span class="muted hint-mouse">" · wheel: zoom · drag: pan · double-click: all"</span>
                        <span class="muted hint-touch">" · pinch: zoom · drag sideways: pan · tap: read"</span></h3>
                    <OverlaidChart ui=ui rows=rows />
                </section>
                <RankStrip ui=ui rows=rows />
                <DiffPanel ui=ui rows=rows />
            </div>
        </div>
    }
}

/// "Copy as Markdown" and "Download CSV" of the chosen rows.
#[component]
fn CopyButtons(ui: Ui, rows: Memo<Vec<SharedDigest>>, limit: Memo<Option<Limit>>) -> impl IntoView {
    let copied = RwSignal::new(false);
    let table = move |exact: bool| {
        let rows = rows.get_untracked();
        let base = ui.compare.baseline.get_untracked();
        let b = base
            .and_then(|k| rows.iter().position(|d| key_of(d) == k))
            .unwrap_or(0);
        let limit = limit.get_untracked().map(|l| l.bytes);
        peak_table(&peak_rows(&rows, b), exact, limit)
    };
    let copy = move |_| {
        let text = table(false).markdown();
        if let Some(w) = web_sys::window() {
            let _ = w.navigator().clipboard().write_text(&text);
        }
        copied.set(true);
    };
    let download =
        move |_| super::export::save_text("memograph_compare.csv", "text/csv", &table(true).csv());
    view! {
        <button class="button small" data-testid="compare-copy" on:click=copy
            title="Copy the table of the ticked rows as Markdown">
            {move || if copied.get() { "Copied ✓" } else { "Copy as Markdown" }}
        </button>
        <button class="button small" data-testid="compare-csv" on:click=download
            title="Download the table of the ticked rows as CSV (exact bytes)">"Download CSV"</button>
    }
}

/// The GPU memory the runs are held against: typed in (`80`, `80 GiB`, `81559 MiB`), or else what an
/// out-of-memory entry among them tells.
#[component]
fn GpuMemory(ui: Ui, limit: Memo<Option<Limit>>) -> impl IntoView {
    // What was typed, while it reads as no size; else the size in force.
    let typed = RwSignal::new(String::new());
    let bad = RwSignal::new(false);
    let set = move |value: String| {
        let parsed = parse_memory(&value);
        let empty = value.trim().is_empty();
        bad.set(!empty && parsed.is_none());
        if empty || parsed.is_some() {
            ui.compare.gpu_memory.set(parsed);
        }
        typed.set(value);
    };
    let shown = move || {
        if bad.get() {
            typed.get()
        } else {
            ui.compare.gpu_memory.get().map(bytes).unwrap_or_default()
        }
    };
    let note = move || match limit.get() {
        _ if bad.get() => "not a size: say 80, 80 GiB or 81559 MiB".to_string(),
        Some(l) if l.from_oom.is_some() => {
            format!("from the out-of-memory entry: {}", l.describe())
        }
        Some(_) => "headroom: the GPU memory less the most each run reserved (the CUDA context, \
                    about 0.3–1 GiB, and other processes take their share of a GPU too)"
            .to_string(),
        None => {
            "type your GPU's memory to see which runs fit it and how far a sweep can go".to_string()
        }
    };
    view! {
        <div class="gpu-memory">
            <label>"GPU memory "
                <input type="text" data-testid="gpu-memory" placeholder="e.g. 80 GiB" size="10"
                    class:bad=move || bad.get()
                    prop:value=shown
                    on:change=move |ev| set(event_target_value(&ev)) />
            </label>
            <span class="muted" data-testid="gpu-memory-note">{note}</span>
        </div>
    }
}

/// Runs that differ in one knob of their names (`ctx`, `seq`, a batch size): how the most they
/// reserved grows with it and, against the GPU memory, how far it can go.
#[component]
fn Sweeps(rows: Memo<Vec<SharedDigest>>, limit: Memo<Option<Limit>>) -> impl IntoView {
    let lines = Memo::new(move |_| {
        let limit = limit.get().map(|l| l.bytes);
        rows.with(|r| {
            sweeps(&refs(r))
                .iter()
                .map(|s| s.describe(limit))
                .collect::<Vec<String>>()
        })
    });
    view! {
        <Show when=move || lines.with(|l| !l.is_empty())>
            <section class="panel wide" data-testid="sweeps">
                <h3>"Sweeps" <span class="muted">" · runs whose names differ in one knob: the most each reserved, its growth, and how far it fits (a least-squares curve through them)"</span></h3>
                <ul class="sweeps">
                    {move || lines.get().into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
                </ul>
            </section>
        </Show>
    }
}

/// Shows a run's timeline: selects it when it is open, else opens its file whole.
fn open_run(ui: Ui, key: &RowKey) {
    let (name, size, device) = key.clone();
    ui.hovered.set(None);
    if ui.show_run(name, size, Some(device)) {
        ui.phase.set(Phase::Ready);
    }
}

/// A and B of the diff among the chosen rows: A the picked one or the baseline, B the picked one or
/// else [`default_b`]'s (for a rank, the rank out of line or the farthest; else the first other row).
fn diff_pair(ui: Ui, rows: &[SharedDigest]) -> (Option<RowKey>, Option<RowKey>) {
    let find = |k: Option<RowKey>| k.filter(|k| rows.iter().any(|d| &key_of(d) == k));
    let a = find(ui.compare.diff_a.get())
        .or_else(|| rows.get(baseline_of(ui, rows)).map(|d| key_of(d)));
    let b = find(ui.compare.diff_b.get())
        .filter(|b| Some(b) != a.as_ref())
        .or_else(|| {
            let at = rows.iter().position(|d| Some(key_of(d)) == a)?;
            default_b(rows, at).map(|k| key_of(&rows[k]))
        });
    (a, b)
}
