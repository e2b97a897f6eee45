//! Compare runs: every open or compared file × device as a row of the peak table (config read from the
//! names, a baseline and deltas, Copy as Markdown, CSV), their live curves overlaid, the rank strip when
//! the names carry ranks, and the diff of two runs at their peaks (call-stack tree, components,
//! categories, call paths that grew). Figures are the engine's digests (`analysis::compare`); the
//! chart is `memograph-charts`' (the report's `compare.png` draws the same).

use std::collections::HashSet;

use leptos::html::Canvas;
use leptos::prelude::*;
use memograph_charts::{curve_points, full_range, run_color, Bars, CompareAxis, PlotArea};
use memograph_snapshot::analysis::compare::{
    common_folder, diff, grown_sites, peak_rows, peak_table, rank_sets, within, zero_columns,
    Digest, Presence, RankSet,
};
use memograph_snapshot::analysis::fit::{parse_memory, sweeps, Limit};
use memograph_snapshot::format::{at_entry, bytes, count, grouped, ratio, signed_bytes};
use wasm_bindgen::JsCast;

use super::{Phase, Ui};
use crate::load::{self, store};
use crate::touch::{pinched_range, Gesture, Touches};
use crate::view_model::analysis::short_frame;
use crate::view_model::compare::{
    category_deltas, changed_span, common_marks, component_deltas, default_b, diff_rows, entry_at,
    readout_picks, refs, rows_in_view, sorted_order, values_at, Delta, SharedDigest, SortBy,
};

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
    ui.files.get();
    ui.compared.get();
    store::runs().into_iter().flat_map(|r| r.digests).collect()
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
        let reading = if total > 0 {
            format!(" · reading files: {done} of {total} done")
        } else {
            String::new()
        };
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

/// What a row of the peak table shows. The table's rows are kept by their run and only what they show
/// changes (see [`PeakTable`]).
#[derive(Clone, PartialEq)]
struct PeakRow {
    key: RowKey,
    /// Each cell's text, whether it is a number and its class in the fits column.
    cells: Vec<(String, bool, Option<&'static str>)>,
    title: String,
    /// The timeline peak in bytes (`data-peak`).
    peak: u64,
    is_in: bool,
    is_base: bool,
    is_b: bool,
    oom: bool,
    removable: bool,
}

/// The peak table as shown: its table (for the headings), its rows in the order shown, and the columns
/// left out because every run reads 0 B there (components no run holds: named under the table).
#[derive(Clone, PartialEq)]
struct PeakTableView {
    shown: memograph_snapshot::analysis::compare::Table,
    rows: Vec<PeakRow>,
    none_hold: Option<String>,
}

fn peak_table_rows(
    ui: Ui,
    all: &[SharedDigest],
    chosen: &[SharedDigest],
    limit: Option<u64>,
) -> PeakTableView {
    let base_key = chosen.get(baseline_of(ui, chosen)).map(|d| key_of(d));
    let base = base_key
        .as_ref()
        .and_then(|k| all.iter().position(|d| &key_of(d) == k))
        .unwrap_or(0);
    let peaks = peak_rows(all, base);
    let full = peak_table(&peaks, false, limit);
    // (The copies and the CSV keep every column.)
    let (zero, none_hold) = zero_columns(&full);
    let shown = full.columns(|k| !zero.contains(&k));
    let exact = peak_table(&peaks, true, limit).columns(|k| !zero.contains(&k));
    let fits_column = shown.header.iter().position(|h| h == "fits");
    let order = ui.compare.sort.with(|by| sorted_order(&exact, by));
    let folder = folder_of(all);
    let (_, b_key) = diff_pair(ui, chosen);
    let rows = order
        .into_iter()
        .map(|i| {
            let d = &all[i];
            let key = key_of(d);
            let cells = shown.rows[i]
                .iter()
                .zip(&shown.numeric)
                .enumerate()
                .map(|(k, (c, &n))| {
                    // The file, without the folder every row shares (the toolbar names it).
                    let c = if k == 0 { within(c, &folder) } else { c };
                    let fit = (Some(k) == fits_column).then_some(match c {
                        "yes" => "fit-yes",
                        "no" => "fit-no",
                        "if unfragmented" => "fit-maybe",
                        _ => "fit-unknown",
                    });
                    (c.to_string(), n, fit)
                })
                .collect();
            PeakRow {
                cells,
                title: format!(
                    "{}, cuda:{}: peak {} bytes {}",
                    d.file,
                    d.device,
                    grouped(d.timeline_peak_bytes),
                    at_entry(d.peak_event_index)
                ),
                peak: d.timeline_peak_bytes,
                is_in: included(ui, d),
                is_base: base_key.as_ref() == Some(&key),
                is_b: b_key.as_ref() == Some(&key),
                oom: d.oom(),
                removable: store::compared_blob(&key.0, key.1).is_some(),
                key,
            }
        })
        .collect();
    PeakTableView {
        shown,
        rows,
        none_hold,
    }
}

/// The peak table over every row (unticked ones greyed), deltas against the baseline. A row is built
/// once per run (and again only when the columns change) and updates what it shows in place: as a
/// batch of hundreds of files is read the table is redrawn as it grows, and a new baseline changes
/// every row's deltas; rows built anew each time (cells, buttons, handlers, then their style and
/// layout) made each of those a task of hundreds of milliseconds at 300 runs. Past
/// [`DRAWN_ALL_UP_TO`](crate::view_model::compare::DRAWN_ALL_UP_TO) rows, only those near the view
/// are drawn.
#[component]
fn PeakTable(
    ui: Ui,
    digests: Memo<Vec<SharedDigest>>,
    rows: Memo<Vec<SharedDigest>>,
    limit: Memo<Option<Limit>>,
) -> impl IntoView {
    let table = Memo::new(move |_| {
        let limit = limit.get().map(|l| l.bytes);
        digests.with(|all| rows.with(|chosen| peak_table_rows(ui, all, chosen, limit)))
    });
    let by_key = Memo::new(move |_| {
        table.with(|t| {
            t.rows
                .iter()
                .map(|r| (r.key.clone(), r.clone()))
                .collect::<std::collections::HashMap<RowKey, PeakRow>>()
        })
    });
    // The sort too: a click that leaves the rows' order as it was (a column of like cells) still shows
    // its arrow.
    let head = move || {
        ui.compare.sort.track();
        table.with(|t| sort_headers(&t.shown, ui.compare.sort))
    };
    // A long table draws only the rows near its view (`rows_in_view`): where its scroller is, how
    // high it is and how high a row is, measured as it mounts, scrolls and the window is resized.
    let scroller = NodeRef::<leptos::html::Div>::new();
    let scroll = RwSignal::new(0.0f64);
    // Until measured, guesses on the side of drawing more: the window's height and a short row (the
    // view opened on 300 runs once built every row, then dropped most of them at the first measure).
    let view_height = RwSignal::new(
        web_sys::window()
            .and_then(|w| w.inner_height().ok())
            .and_then(|h| h.as_f64())
            .unwrap_or(1000.0),
    );
    let row_height = RwSignal::new(ROW_GUESS);
    // (Also called in an animation frame, by which the view may be gone: nothing then.)
    let measure = move || {
        let Some(el) = scroller.try_get_untracked().flatten() else {
            return;
        };
        let set = |signal: RwSignal<f64>, v: f64| {
            if signal.try_get_untracked().is_some_and(|was| was != v) {
                signal.try_set(v);
            }
        };
        set(scroll, el.scroll_top() as f64);
        set(view_height, el.client_height() as f64);
        if let Some(row) = el
            .query_selector("tbody tr[data-file]")
            .ok()
            .flatten()
            .and_then(|r| r.dyn_into::<web_sys::HtmlElement>().ok())
        {
            set(row_height, row.offset_height() as f64);
        }
    };
    let resized = super::window_resizes();
    Effect::new(move |_| {
        resized.track();
        // Rows come and go with the batch being read: measured again as they do, in the next frame,
        // whose layout that reads (read at once, each redraw of a batch's table laid the page out
        // twice, once for this and again for the chart).
        table.track();
        request_animation_frame(measure);
    });
    let drawn = Memo::new(move |_| {
        let rows = table.with(|t| t.rows.len());
        (
            rows,
            rows_in_view(rows, row_height.get(), scroll.get(), view_height.get()),
        )
    });
    // The rows drawn, in the order shown, with the count of columns (a row is built again when it
    // changes).
    let order = move || {
        let (_, range) = drawn.get();
        table.with(|t| {
            let columns = t.shown.header.len();
            t.rows
                .get(range)
                .unwrap_or_default()
                .iter()
                .map(|r| (r.key.clone(), columns))
                .collect::<Vec<_>>()
        })
    };
    // What the rows not drawn would take, above and below those drawn (none while all are).
    let spacer = move |above: bool| {
        move || {
            let (rows, range) = drawn.get();
            let count = if above { range.start } else { rows - range.end };
            (rows > range.len()).then(|| {
                let height = format!("height:{}px", count as f64 * row_height.get());
                view! { <tr class="not-drawn" aria-hidden="true" style=height></tr> }
            })
        }
    };
    // While some rows are not drawn, a row no one sees (`visibility: collapse`) holds each column's
    // longest text of any row, in bold as the baseline's: the columns keep their widths as rows
    // come into view.
    let some_not_drawn = Memo::new(move |_| drawn.with(|(rows, range)| *rows > range.len()));
    let longest = Memo::new(move |_| {
        some_not_drawn.get().then(|| {
            table.with(|t| {
                (0..t.shown.header.len())
                    .map(|k| {
                        t.rows
                            .iter()
                            .filter_map(|r| r.cells.get(k).map(|c| c.0.as_str()))
                            .max_by_key(|c| c.chars().count())
                            .unwrap_or_default()
                            .to_string()
                    })
                    .collect::<Vec<_>>()
            })
        })
    });
    let widths = move || {
        longest.get().map(|texts| {
            let cells = texts
                .into_iter()
                .map(|t| view! { <td>{t}</td> })
                .collect_view();
            view! { <tr class="widths" aria-hidden="true"><td></td><td></td>{cells}
            {run_actions(ui, None, || true)}</tr> }
        })
    };
    // Components no run holds: a line, not a column of 0 B each.
    let none_hold = move || {
        table.with(|t| {
            t.none_hold.clone().map(|line| {
                view! { <p class="muted hint none-hold" data-testid="compare-none-hold">{line}</p> }
            })
        })
    };
    view! {
        <div class="table-scroll" node_ref=scroller on:scroll=move |_| measure()>
            <table class="compare-table" data-testid="compare-table">
                <thead><tr><th></th><th></th>{head}<th></th></tr>{widths}</thead>
                <tbody>
                    {spacer(true)}
                    <For each=order key=|k| k.clone()
                        children=move |(key, columns)| peak_row(ui, key, columns, by_key) />
                    {spacer(false)}
                </tbody>
            </table>
        </div>
        {none_hold}
    }
}

/// A peak table row's height in CSS pixels before one is measured (27 in the shipped styles).
const ROW_GUESS: f64 = 22.0;

/// The row of run `key` in a peak table of `columns` columns of figures, showing what `rows` holds of
/// it.
fn peak_row(
    ui: Ui,
    key: RowKey,
    columns: usize,
    rows: Memo<std::collections::HashMap<RowKey, PeakRow>>,
) -> impl IntoView {
    let row = Memo::new({
        let key = key.clone();
        move |_| rows.with(|m| m.get(&key).cloned())
    });
    let shows = move |f: fn(&PeakRow) -> bool| move || row.with(|r| r.as_ref().is_some_and(f));
    let is_in = shows(|r| r.is_in);
    let is_base = shows(|r| r.is_base);
    // A click (or Enter) on a row that takes part, other than the baseline, diffs it.
    let diffable = shows(|r| r.is_in && !r.is_base);
    let cells = (0..columns)
        .map(|k| {
            let cell = move || row.with(|r| r.as_ref().and_then(|r| r.cells.get(k).cloned()));
            view! {
                <td class:num=move || cell().is_some_and(|c| c.1) class=move || cell().and_then(|c| c.2)>
                    {move || cell().map(|c| c.0).unwrap_or_default()}
                </td>
            }
        })
        .collect_view();
    let diff_it = {
        let key = key.clone();
        move || ui.compare.diff_b.set(Some(key.clone()))
    };
    let (k1, k2, open_key) = (key.clone(), key.clone(), key.clone());
    let (file, _, device) = key;
    view! {
        <tr data-file=file data-device=device.to_string()
            data-peak=move || row.with(|r| r.as_ref().map(|r| r.peak.to_string()))
            class:excluded=move || !is_in() class:baseline=is_base class:picked=shows(|r| r.is_b)
            class:oom=shows(|r| r.oom)
            title=move || row.with(|r| r.as_ref().map(|r| r.title.clone()))
            tabindex=move || if diffable() { "0" } else { "-1" }
            on:click={
                let diff_it = diff_it.clone();
                move |_| if diffable() { diff_it() }
            }
            on:keydown=move |ev| if diffable() && super::activates(&ev) { diff_it() }>
            <td on:click=|ev| ev.stop_propagation()>
                <input type="checkbox" prop:checked=is_in title="Take part in the comparison"
                    on:change=move |_| ui.compare.toggled.update(|t| {
                        if !t.remove(&k1) {
                            t.insert(k1.clone());
                        }
                    }) />
            </td>
            <td on:click=|ev| ev.stop_propagation()>
                <button class="star" class:on=is_base title="Make this the baseline"
                    on:click=move |_| ui.compare.baseline.set(Some(k2.clone()))>
                    {move || if is_base() { "★" } else { "☆" }}
                </button>
            </td>
            {cells}
            {run_actions(ui, Some(open_key), shows(|r| r.removable))}
        </tr>
    }
}

/// A peak table row's last cell: its Open button and, for a file that can be removed, ✕. Without a
/// run, the hidden widths row's: both buttons, never focused, so that the column keeps the width of
/// a row that has both.
fn run_actions(
    ui: Ui,
    run: Option<RowKey>,
    removable: impl Fn() -> bool + Send + Sync + 'static,
) -> impl IntoView {
    let tabindex = run.is_none().then_some("-1");
    let file = run.as_ref().map(|(name, size, _)| (name.clone(), *size));
    let remove = move |_| {
        if let Some((name, size)) = &file {
            store::remove_compared(name, *size);
            ui.compared.update(|n| *n += 1);
        }
    };
    view! {
        <td on:click=|ev| ev.stop_propagation()>
            <button class="button small" title="Open this run's timeline" tabindex=tabindex
                on:click=move |_| if let Some(key) = &run { open_run(ui, key) }>"Open"</button>
            <Show when=removable>
                <button class="button small" title="Remove this file from the comparison"
                    tabindex=tabindex on:click=remove.clone()>"✕"</button>
            </Show>
        </td>
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

/// A table's column headings; a click sorts by a column (descending, ascending, then as it came).
pub fn sort_headers(
    table: &memograph_snapshot::analysis::compare::Table,
    sort: RwSignal<SortBy>,
) -> impl IntoView {
    let now = sort.get_untracked();
    table
        .header
        .iter()
        .zip(&table.numeric)
        .map(|(h, &numeric)| {
            let by = match &now {
                Some((c, descending)) if c == h => Some(*descending),
                _ => None,
            };
            let arrow = match by {
                Some(true) => " ▼",
                Some(false) => " ▲",
                None => "",
            };
            let (click, key) = (h.clone(), h.clone());
            view! {
                <th class:num=numeric title=column_title(h) tabindex="0"
                    aria-sort=match by {
                        Some(true) => "descending",
                        Some(false) => "ascending",
                        None => "none",
                    }
                    on:click=move |_| next_sort(sort, &click)
                    on:keydown=move |ev| if super::activates(&ev) { next_sort(sort, &key) }>{format!("{h}{arrow}")}</th>
            }
        })
        .collect_view()
}

/// A click on the heading of column `column`: sorts by it, largest first, then smallest first, then as
/// read.
fn next_sort(sort: RwSignal<SortBy>, column: &str) {
    sort.update(|s| {
        *s = match s.take() {
            Some((c, true)) if c == column => Some((c, false)),
            Some((c, false)) if c == column => None,
            _ => Some((column.to_string(), true)),
        }
    });
}

/// A column header's tooltip: how to sort, and what the peak counts where it may surprise.
fn column_title(header: &str) -> String {
    const SORT: &str = "Sort by this column";
    match header {
        "peak allocated" => format!(
            "{SORT}\nThe snapshot's timeline peak: the sizes the program asked for, as the trace \
             records them. torch.cuda.max_memory_allocated() counts the allocator's blocks (rounded up \
             to 512 bytes, some not split), so it can read a little higher."
        ),
        _ => SORT.into(),
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

/// Opens or closes the diff tree's row at `path`.
fn toggle(ui: Ui, path: &[usize]) {
    ui.compare.tree_toggled.update(|t| {
        if !t.remove(path) {
            t.insert(path.to_vec());
        }
    });
}

/// The entry a digest's live set was taken at (its peak unless it was made at a picked entry).
fn live_entry(d: &Digest) -> i64 {
    d.live_entry.unwrap_or(d.peak_event_index)
}

/// Diffs A and B at the entries their curves show at `x`: each side's digest at its entry, made from
/// the open file on the page or by reading the file again in a worker.
fn diff_at(ui: Ui, rows: &[SharedDigest], x: f64) {
    let (Some(ka), Some(kb)) = diff_pair(ui, rows) else {
        return;
    };
    let axis = ui.compare.axis.get_untracked();
    let find = |k: &RowKey| rows.iter().find(|d| &key_of(d) == k);
    let (Some(a), Some(b)) = (find(&ka), find(&kb)) else {
        return;
    };
    let (Some(ea), Some(eb)) = (entry_at(a, &axis, x), entry_at(b, &axis, x)) else {
        ui.compare
            .at_status
            .set(Some("A or B has no point there".into()));
        return;
    };
    ui.compare.at_status.set(Some(format!(
        "reading A {} and B {}…",
        at_entry(ea),
        at_entry(eb)
    )));
    let results: std::rc::Rc<std::cell::RefCell<[Option<Digest>; 2]>> = Default::default();
    for (side, (key, entry)) in [(ka, ea), (kb, eb)].into_iter().enumerate() {
        let results = results.clone();
        let (name, size, device) = key.clone();
        let label = name.clone();
        let deliver = move |made: Result<Digest, String>| match made {
            Ok(d) => {
                let mut r = results.borrow_mut();
                r[side] = Some(d);
                if let [Some(a), Some(b)] = &*r {
                    let (a, b) = (SharedDigest::new(a.clone()), SharedDigest::new(b.clone()));
                    ui.compare.at.set(Some((a, b)));
                    ui.compare.at_status.set(None);
                }
            }
            Err(e) => ui.compare.at_status.set(Some(format!("{label}: {e}"))),
        };
        let open = store::list()
            .iter()
            .position(|(n, s, _)| *n == name && *s == size);
        match open {
            Some(i) => {
                let made = store::with_model(i, device, |m, s| {
                    let rules = memograph_snapshot::analysis::categories::Rules::built_in();
                    let mut d = memograph_snapshot::analysis::compare::digest_at(
                        s,
                        &m.blocks.lifetimes,
                        &rules,
                        Some(entry),
                    );
                    d.name_after(&name, size);
                    d.default_device = s.default_device() == Some(device);
                    d
                });
                deliver(made.ok_or_else(|| "the file is no longer open".to_string()));
            }
            None => match store::compared_blob(&name, size) {
                Some(blob) => {
                    load::digest_at(std::rc::Rc::new(ui), name, blob, device, entry, deliver)
                }
                None => deliver(Err("the file is no longer there".into())),
            },
        }
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

/// The chosen rows' live curves on one chart, in their run colours.
#[component]
fn OverlaidChart(ui: Ui, rows: Memo<Vec<SharedDigest>>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    // The pointer's rule is drawn on a canvas of its own over the chart: moving the pointer redraws a
    // line, not every curve (300 runs' curves took ~50 ms a redraw).
    let rule = NodeRef::<Canvas>::new();
    let plot = StoredValue::new(None::<(PlotArea, f64)>);
    // Counts the chart's redraws (the rule follows its plot area).
    let redrawn = RwSignal::new(0u32);
    let drag = StoredValue::new(None::<(f64, (f64, f64))>);
    let size = super::observed_size(canvas);
    // Drawn in a task of its own, once for every change made in one task: with 300 runs the curves
    // take ~35 ms, and the table's own update as many in the task that changed the runs. Nor more
    // often than leaves the page four times a drawing's time between two: as a batch of hundreds of
    // files is read, each file that comes changes the runs, and the chart of 600 runs redrawn for
    // every one held the page most of the time.
    let due = StoredValue::new(false);
    // When the last drawing ended, and how long it took.
    let last = StoredValue::new((f64::NEG_INFINITY, 0.0f64));
    // The curves as the last drawing made them, stroked again where unchanged.
    let paths = StoredValue::new_local(crate::render::charts::PathCache::default());
    let draw = move || {
        let started = crate::load::now();
        let (Some(dark), Some(axis), Some(range), Some(Some(size)), Some(Some(el))) = (
            ui.dark.try_get_untracked(),
            ui.compare.axis.try_get_untracked(),
            ui.compare.range.try_get_untracked(),
            size.try_get_untracked(),
            canvas.try_get_untracked(),
        ) else {
            return;
        };
        rows.try_with_untracked(|rows| {
            let colored: Vec<(&Digest, _)> = rows
                .iter()
                .enumerate()
                .map(|(k, d)| (&**d, run_color(k)))
                .collect();
            let mut area = None;
            let drawn = paths.try_with_value(|paths| {
                crate::render::charts::draw_sized(&el, size, dark, Some(paths), |a, t| {
                    area = Some(memograph_charts::overlaid_curves(
                        a, "", &colored, &axis, range, None, t,
                    )?);
                    Ok(Bars::default())
                })
            });
            let drawn = drawn.flatten();
            plot.set_value(drawn.and_then(|(_, dpr)| Some((area?, dpr))));
        });
        redrawn.try_update(|n| *n = n.wrapping_add(1));
        let ended = crate::load::now();
        last.try_set_value((ended, ended - started));
    };
    Effect::new(move |_| {
        ui.dark.track();
        ui.compare.axis.track();
        ui.compare.range.track();
        size.track();
        canvas.track();
        rows.track();
        if !due.get_value() {
            due.set_value(true);
            let (ended, took) = last.get_value();
            let wait = ended + 4.0 * took - crate::load::now();
            // In the task after the page's next frame: what changed the runs (the table's rows) is
            // laid out by then, and the chart's text, measured in the page (plotters), does not lay
            // it out again and again (at 600 runs, half of a drawing's time).
            let go = move || {
                request_animation_frame(move || {
                    leptos::task::spawn_local(async move {
                        crate::load::next_task().await;
                        if due.try_set_value(false).is_none() {
                            draw();
                        }
                    })
                })
            };
            if wait > 1.0 {
                crate::load::after(wait as i32, go);
            } else {
                go();
            }
        }
    });
    super::pointer_rule(ui, canvas, rule, plot, redrawn, move || {
        ui.compare.hover_x.get()
    });
    let x_at = move |ev: &web_sys::MouseEvent| {
        let (p, dpr) = plot.get_value()?;
        p.x_at((f64::from(ev.offset_x()) * dpr) as i32)
            .map(|x| (x, p))
    };
    let full = move || {
        let axis = ui.compare.axis.get_untracked();
        let curves: Vec<Vec<(f64, u64)>> = rows
            .get_untracked()
            .iter()
            .map(|d| curve_points(d, &axis))
            .collect();
        full_range(&curves)
    };
    let moved = StoredValue::new(false);
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((x, p)) = x_at(&ev) else {
            ui.compare.hover_x.set(None);
            return;
        };
        if let Some((from, (x0, x1))) = drag.get_value() {
            let dx = from - x;
            if dx.abs() > (x1 - x0) * 0.002 {
                moved.set_value(true);
            }
            let _ = p;
            ui.compare.range.set(Some((x0 + dx, x1 + dx)));
            return;
        }
        ui.compare.hover_x.set(Some(x));
    };
    let on_down = move |ev: web_sys::MouseEvent| {
        if let Some((x, p)) = x_at(&ev) {
            drag.set_value(Some((x, p.x_range)));
        }
    };
    // A click (a press and release without moving) diffs A and B at the entries under the pointer.
    let on_up = move |ev: web_sys::MouseEvent| {
        let was_drag = moved.get_value();
        drag.set_value(None);
        moved.set_value(false);
        if !was_drag {
            if let Some((x, _)) = x_at(&ev) {
                diff_at(ui, &rows.get_untracked(), x);
            }
        }
    };
    // The range shown `factor` times as wide, `x` staying where it is.
    let zoom = move |x: f64, (x0, x1): (f64, f64), factor: f64| {
        let (f0, f1) = full();
        let span = ((x1 - x0) * factor).min(f1 - f0).max((f1 - f0) * 1e-6);
        let t = (x - x0) / (x1 - x0).max(f64::MIN_POSITIVE);
        let lo = x - t * span;
        ui.compare.range.set(Some((lo, lo + span)));
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        let Some((x, p)) = x_at(&ev) else { return };
        ev.prevent_default();
        zoom(x, p.x_range, if ev.delta_y() > 0.0 { 1.25 } else { 0.8 });
    };
    // Fingers: a sideways drag moves the range as the mouse's drag does, two pinch it (what was under
    // each finger stays under it). The page keeps the vertical drags (`touch-action: pan-y`: the chart
    // is in a page that scrolls), and a tap is the browser's click: the readout, and A and B diffed.
    let touches = StoredValue::new(Touches::<(f64, f64)>::default());
    // The range asked for last (the chart draws it a task later), or all of it that is drawn.
    let shown = move |p: &PlotArea| ui.compare.range.get_untracked().unwrap_or(p.x_range);
    let on_finger_down = move |ev: web_sys::PointerEvent| {
        if let (Some((id, at)), Some((p, _))) = (super::finger(&ev), plot.get_value()) {
            touches.update_value(|t| t.down(id, at, shown(&p)));
        }
    };
    let on_finger_move = move |ev: web_sys::PointerEvent| {
        let (Some((id, at)), Some((p, dpr))) = (super::finger(&ev), plot.get_value()) else {
            return;
        };
        let Some(Some(((x0, x1), gesture))) = touches.try_update_value(|t| t.moved(id, at)) else {
            return;
        };
        let (left, width) = (f64::from(p.x.0) / dpr, f64::from(p.x.1 - p.x.0) / dpr);
        let (start, span) = match gesture {
            Gesture::Pan { dx, .. } => (x0 - dx / width.max(1.0) * (x1 - x0), x1 - x0),
            Gesture::Pinch { from, to } => pinched_range((x0, x1), (left, width), from, to),
        };
        // No narrower than the wheel zooms, no wider than all of it.
        let (f0, f1) = full();
        let span = span.min(f1 - f0).max((f1 - f0) * 1e-6);
        ui.compare.hover_x.set(None);
        ui.compare.range.set(Some((start, start + span)));
    };
    let on_finger_up = move |ev: web_sys::PointerEvent| {
        if let (Some((id, _)), Some((p, _))) = (super::finger(&ev), plot.get_value()) {
            touches.update_value(|t| {
                t.up(id, shown(&p));
            });
        }
    };
    // The keyboard's pointer: the arrows move the readout a hundredth of the range shown (Shift: a
    // tenth), Home and End to its ends; Enter diffs A and B there, + and - zoom round it, 0 shows all.
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        let Some((p, _)) = plot.get_value() else {
            return;
        };
        let (x0, x1) = p.x_range;
        let at = ui
            .compare
            .hover_x
            .get_untracked()
            .filter(|x| (x0..=x1).contains(x))
            .unwrap_or((x0 + x1) / 2.0);
        let to = match ev.key().as_str() {
            "+" | "=" => {
                zoom(at, p.x_range, 0.5);
                Some(at)
            }
            "-" | "_" => {
                zoom(at, p.x_range, 2.0);
                Some(at)
            }
            "0" => {
                ui.compare.range.set(None);
                Some(at)
            }
            _ if super::activates(&ev) => {
                diff_at(ui, &rows.get_untracked(), at);
                return;
            }
            _ => match super::moved_by(&ev, at, (x0, x1), (x1 - x0) / 100.0) {
                Some(to) => to,
                None => return,
            },
        };
        ev.prevent_default();
        ui.compare.hover_x.set(to);
    };
    let readout = move || {
        let x = ui.compare.hover_x.get()?;
        let axis = ui.compare.axis.get();
        let rows = rows.get();
        let refs = refs(&rows);
        let values = values_at(&refs, &axis, x);
        let folder = folder_of(&rows);
        let at = match &axis {
            CompareAxis::Fraction => format!("at {:.1} % of each trace", x * 100.0),
            CompareAxis::Seconds => format!("at {x:.3} s"),
            CompareAxis::AtMark(name) => format!("{x:+.0} entries from '{name}'"),
        };
        let (picked, more) = readout_picks(&values);
        let more = more.map(|(runs, median)| {
            let median = median.map_or(String::new(), |m| format!(" (median of all {})", bytes(m)));
            view! { <span class="readout-item muted">{format!("… and {runs} more{median}")}</span> }
        });
        let items = picked
            .into_iter()
            .map(|k| (k, &rows[k], values[k]))
            .map(|(k, d, v)| {
                let palette = &memograph_charts::RUN_COLORS;
                let color = palette[k % palette.len()];
                // Striped where the curve is dashed.
                let fill = if memograph_charts::run_dashed(k) {
                    format!("background:repeating-linear-gradient(90deg,{color} 0 3px,transparent 3px 5px)")
                } else {
                    format!("background:{color}")
                };
                view! {
                    <span class="readout-item">
                        <span class="swatch" style=fill></span>
                        {format!("{}: {}", within(&d.file, &folder), v.map_or("—".to_string(), bytes))}
                    </span>
                }
            })
            .collect_view();
        Some(
            view! { <div class="readout" data-testid="compare-readout"><span class="muted">{at}</span>{items}{more}</div> },
        )
    };
    let axes = move || {
        rows.with(|rows| {
            let refs = refs(rows);
            let timed = !rows.is_empty() && rows.iter().all(|d| !d.curve.time_us.is_empty());
            (timed, common_marks(&refs))
        })
    };
    let axis_key = move || match ui.compare.axis.get() {
        CompareAxis::Fraction => "fraction".to_string(),
        CompareAxis::Seconds => "seconds".to_string(),
        CompareAxis::AtMark(name) => format!("mark:{name}"),
    };
    view! {
        <div class="chart-tools">
            <label>"x axis "
                <select class="select" data-testid="compare-axis" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    let axis = match v.as_str() {
                        "seconds" => CompareAxis::Seconds,
                        v => v.strip_prefix("mark:").map_or(CompareAxis::Fraction, |m| CompareAxis::AtMark(m.to_string())),
                    };
                    ui.compare.range.set(None);
                    ui.compare.axis.set(axis);
                }>
                    <option value="fraction" selected=move || axis_key() == "fraction">"share of each trace"</option>
                    <option value="seconds" disabled=move || !axes().0 selected=move || axis_key() == "seconds">"seconds from each start"</option>
                    {move || axes().1.into_iter().map(|m| {
                        let value = format!("mark:{m}");
                        let v2 = value.clone();
                        view! { <option value=value selected=move || axis_key() == v2>{format!("aligned at '{m}'")}</option> }
                    }).collect_view()}
                </select>
            </label>
            // Back to all of each trace: what double-click and 0 do, for a finger too.
            <Show when=move || ui.compare.range.get().is_some()>
                <button class="button small" data-testid="compare-reset-zoom" title="Show all of each trace (0)"
                    on:click=move |_| ui.compare.range.set(None)>"Reset zoom"</button>
            </Show>
        </div>
        <super::export::ExportButtons testid="export-compare"
            png=move || export_curves(ui, rows, canvas, false)
            svg=move || export_curves(ui, rows, canvas, true) />
        <div class="chart-with-rule">
            <canvas class="compare-chart zoomable" data-testid="compare-chart" node_ref=canvas tabindex="0"
                data-range=move || ui.compare.range.get().map(|(a, b)| format!("{a}_{b}"))
                aria-label="Live memory of each run: the arrow keys move the readout, Enter diffs A and B there, + and - zoom, 0 shows all"
                on:keydown=on_key on:mousemove=on_move on:mousedown=on_down on:mouseup=on_up
                on:mouseleave=move |_| { drag.set_value(None); ui.compare.hover_x.set(None); }
                on:wheel=on_wheel on:dblclick=move |_| ui.compare.range.set(None)
                on:pointerdown=on_finger_down on:pointermove=on_finger_move on:pointerup=on_finger_up
                on:pointercancel=move |_| touches.update_value(|t| t.cancel())></canvas>
            <canvas class="rule" data-testid="compare-chart-rule" node_ref=rule aria-hidden="true"></canvas>
        </div>
        {readout}
    }
}

/// The overlaid curves as on screen (range and axis; no hover line) as a PNG or SVG download.
fn export_curves(
    ui: Ui,
    rows: Memo<Vec<SharedDigest>>,
    canvas: NodeRef<leptos::html::Canvas>,
    svg: bool,
) {
    struct Curves<'a> {
        colored: Vec<(&'a Digest, plotters::style::RGBColor)>,
        axis: CompareAxis,
        range: Option<(f64, f64)>,
    }
    impl super::export::Picture for Curves<'_> {
        fn draw<DB: plotters::prelude::DrawingBackend>(
            &self,
            a: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
            t: &memograph_charts::Theme,
        ) -> memograph_charts::Result<Bars>
        where
            DB::ErrorType: 'static,
        {
            memograph_charts::overlaid_curves(
                a,
                "",
                &self.colored,
                &self.axis,
                self.range,
                None,
                t,
            )?;
            Ok(Bars::default())
        }
    }
    let Some(el) = canvas.get_untracked() else {
        return;
    };
    let rows = rows.get_untracked();
    let curves = Curves {
        colored: rows
            .iter()
            .enumerate()
            .map(|(k, d)| (&**d, run_color(k)))
            .collect(),
        axis: ui.compare.axis.get_untracked(),
        range: ui.compare.range.get_untracked(),
    };
    super::export::save_picture(
        "memograph_compare",
        &el,
        ui.dark.get_untracked(),
        svg,
        &curves,
    );
}

/// Per job compared (its folder, or the knobs its names differ in): peaks per rank, mean, max and
/// imbalance, the rank out of line marked; a click opens the run of that rank's peak.
#[component]
fn RankStrip(ui: Ui, rows: Memo<Vec<SharedDigest>>) -> impl IntoView {
    move || {
        rows.with(|rows| {
            let refs = refs(rows);
            let keys: Vec<RowKey> = rows.iter().map(|d| key_of(d)).collect();
            rank_sets(&refs)
                .into_iter()
                .map(|RankSet { label, strip, .. }| {
                    let keys = keys.clone();
                    rank_panel(
                        label,
                        strip,
                        "click a rank to open it",
                        "click to open",
                        move |run| {
                            if let Some(k) = keys.get(run) {
                                open_run(ui, k);
                            }
                        },
                    )
                })
                .collect_view()
        })
    }
}

/// One job's ranks as a panel: `label` names the job among others (empty: the only one), the
/// summary line, and a bar per rank, the one out of line marked; a click on a bar calls `pick` with
/// the index of that rank's run (its highest peak). Compare and Steps show their jobs' ranks so.
pub(crate) fn rank_panel(
    label: String,
    strip: memograph_snapshot::analysis::compare::RankStrip,
    hint: &'static str,
    click: &'static str,
    pick: impl Fn(usize) + Clone + 'static,
) -> impl IntoView {
    let max = strip.max_bytes.max(1) as f64;
    let every = crate::view_model::compare::rank_label_every(strip.peaks.len());
    let crowded = strip.peaks.len() > 64;
    let bars = strip
        .peaks
        .iter()
        .zip(&strip.runs)
        .enumerate()
        .map(|(k, (&(rank, peak), &run))| {
            let out = strip.outlier == Some(rank);
            // The strip's one Tab stop: the rank out of line, else the first.
            let first = strip.outlier.map_or(k == 0, |o| o == rank);
            let pick = pick.clone();
            view! {
                <button class="rank" class:outlier=out data-rank=rank.to_string()
                    tabindex=if first { "0" } else { "-1" }
                    data-peak=peak.to_string()
                    aria-label=format!("rank {rank}: peak {}{}", bytes(peak), if out { ", out of line" } else { "" })
                    title=format!("rank {rank}: peak {} bytes{} · {click}", grouped(peak), if out { " · out of line" } else { "" })
                    on:click=move |_| pick(run)>
                    <span class="rank-bar" style=format!("height:{:.1}%", peak as f64 / max * 100.0)></span>
                    <span class="rank-label">{(rank % every == 0 || out).then(|| rank.to_string())}</span>
                </button>
            }
        })
        .collect_view();
    let mean_at = strip.mean_bytes / max * 100.0;
    let mean_title = format!("mean {}", bytes(strip.mean_bytes as u64));
    // One Tab stop for the strip (of 64 ranks, not 64): the arrows, Home and End move between bars.
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        let Some(strip) = ev
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        else {
            return;
        };
        let children = strip.children();
        let bars: Vec<web_sys::HtmlElement> = (0..children.length())
            .filter_map(|i| children.item(i))
            .filter(|e| e.class_list().contains("rank"))
            .filter_map(|e| e.dyn_into().ok())
            .collect();
        let focused = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.active_element());
        let Some(at) = bars
            .iter()
            .position(|b| Some(b.unchecked_ref::<web_sys::Element>()) == focused.as_ref())
        else {
            return;
        };
        let Some(to) = super::bar_moved(&ev.key(), Some(at), bars.len()) else {
            return;
        };
        ev.prevent_default();
        for (k, b) in bars.iter().enumerate() {
            b.set_tab_index(if k == to { 0 } else { -1 });
        }
        let _ = bars[to].focus();
    };
    let heading = if label.is_empty() {
        "Ranks".to_string()
    } else {
        format!("Ranks of {label}")
    };
    view! {
        <section class="panel wide" data-testid="rank-set" data-label=label>
            <h3>{heading} <span class="muted">{format!(" · {hint}")}</span></h3>
            <div class="rank-summary" data-testid="rank-summary" data-outlier=strip.outlier.map(|r| r.to_string()).unwrap_or_default()
                data-imbalance=format!("{:.4}", strip.imbalance)>{strip.describe()}</div>
            <div class="rank-strip" class:crowded=crowded data-testid="rank-strip" on:keydown=on_key>
                <span class="rank-mean" style=format!("bottom:{mean_at:.1}%") title=mean_title></span>
                {bars}
            </div>
        </section>
    }
}

/// The diff of two runs at their peaks: totals, components, categories, call paths that grew, and the
/// call-stack tree.
#[component]
fn DiffPanel(ui: Ui, rows: Memo<Vec<SharedDigest>>) -> impl IntoView {
    let pair = Memo::new(move |_| {
        rows.with(|rows| {
            let (a, b) = diff_pair(ui, rows);
            let find = |k: &Option<RowKey>| {
                k.as_ref()
                    .and_then(|k| rows.iter().find(|d| &key_of(d) == k).cloned())
            };
            let (a, b) = (find(&a)?, find(&b)?);
            // Digests at picked entries replace the peaks' while A and B stay the same runs.
            match ui.compare.at.get() {
                Some((pa, pb)) if key_of(&pa) == key_of(&a) && key_of(&pb) == key_of(&b) => {
                    Some((pa, pb))
                }
                _ => Some((a, b)),
            }
        })
    });
    let tree = Memo::new(move |_| pair.get().map(|(a, b)| diff(&a.live_set, &b.live_set)));
    // Each run's label, in the runs' order.
    let options = Memo::new(move |_| {
        rows.with(|rows| {
            let folder = folder_of(rows);
            rows.iter()
                .map(|d| {
                    let label = format!("{} · cuda:{}", within(&d.file, &folder), d.device);
                    (key_of(d), label)
                })
                .collect::<Vec<_>>()
        })
    });
    let picker = move |which: RwSignal<Option<RowKey>>, testid: &'static str, is_a: bool| {
        let select = NodeRef::<leptos::html::Select>::new();
        // The options as they are in the page, kept as runs come and go: only what changed is
        // changed (made anew at every change, the two pickers' 1 200 options of 600 runs were the
        // page's style and layout of them in every task that changed the runs).
        let shown = StoredValue::new(Vec::<String>::new());
        Effect::new(move |_| {
            let Some(el) = select.get() else {
                return;
            };
            let current = pair.with(|p| p.as_ref().map(|(a, b)| key_of(if is_a { a } else { b })));
            options.with(|options| {
                let now: Vec<String> = options.iter().map(|(_, label)| label.clone()).collect();
                shown.update_value(|was| {
                    show_options(&el, was, &now);
                    *was = now;
                });
                let at = options
                    .iter()
                    .position(|(k, _)| Some(k) == current.as_ref());
                el.set_selected_index(at.map_or(-1, |k| i32::try_from(k).unwrap_or(-1)));
            });
        });
        view! {
            // The options are the runs in order: the one picked is the run at its place.
            <select class="select" data-testid=testid node_ref=select on:change=move |ev| {
                let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()) else {
                    return;
                };
                let k = usize::try_from(el.selected_index()).unwrap_or(0);
                if let Some(d) = rows.get_untracked().get(k) {
                    which.set(Some(key_of(d)));
                }
            }></select>
        }
    };
    let totals = move || {
        let (a, b) = pair.get()?;
        let t = tree.get()?;
        let at_peaks = a.peak_event_index == live_entry(&a) && b.peak_event_index == live_entry(&b);
        let when = if ui.compare.at.with(|x| x.is_none()) || at_peaks {
            "At their peaks".to_string()
        } else {
            // "At entry 1 200 of A and the start of B" (before its first entry).
            let of = |e: i64, run: &str| match e {
                e if e < 0 => format!("the start of {run}"),
                e => format!("entry {} of {run}", grouped(e as u64)),
            };
            let (a, b) = (of(live_entry(&a), "A"), of(live_entry(&b), "B"));
            format!("At {a} and {b}")
        };
        Some(view! {
            <div class="diff-total" data-testid="compare-diff-total" data-delta=t.delta_bytes.to_string()
                data-entry-a=live_entry(&a).to_string() data-entry-b=live_entry(&b).to_string()
                title=format!("{} − {} = {} bytes", grouped(t.b_bytes), grouped(t.a_bytes), t.delta_bytes)>
                {format!("{when}: {} → {} ({}, {})", bytes(t.a_bytes), bytes(t.b_bytes),
                    signed_bytes(t.delta_bytes), ratio(t.b_bytes as f64 / t.a_bytes.max(1) as f64))}
                <Show when=move || ui.compare.at.with(|x| x.is_some())>
                    <button class="button small" data-testid="back-to-peaks" on:click=move |_| ui.compare.at.set(None)>"Back to the peaks"</button>
                </Show>
                <span class="muted hint">{move || ui.compare.at_status.get().unwrap_or_else(|| "click the curves to diff at other entries".into())}</span>
            </div>
        })
    };
    let deltas = move |rows: Vec<Delta>| {
        rows.into_iter()
            .map(|d| view! {
                <tr><td>{d.label}</td><td class="num">{bytes(d.a_bytes)}</td><td class="num">{bytes(d.b_bytes)}</td>
                    <td class="num" class:grew={d.delta_bytes > 0} class:shrank={d.delta_bytes < 0}>{signed_bytes(d.delta_bytes)}</td></tr>
            })
            .collect_view()
    };
    let breakdowns = move || {
        let (a, b) = pair.get()?;
        let grown = grown_sites(&a.sites, &b.sites);
        // Nothing grew: said in the table, not left as a heading over nothing.
        let nothing_grew = grown.is_empty().then(|| {
            view! { <tr class="muted"><td colspan="4">"nothing grew at any call path"</td></tr> }
        });
        let grown_rows = grown
            .into_iter()
            .take(15)
            .map(|s| {
                let ratio = s.ratio.map_or("new".to_string(), ratio);
                view! {
                    <tr title=s.site.clone()><td class="frame">{short_frame(&s.site)}</td><td class="num">{bytes(s.a_bytes)}</td>
                        <td class="num">{bytes(s.b_bytes)}</td><td class="num grew">{ratio}</td></tr>
                }
            })
            .collect_view();
        Some(view! {
            <div class="diff-tables">
                <table class="delta-table" data-testid="compare-components">
                    <thead><tr><th>"Component"</th><th class="num">"A"</th><th class="num">"B"</th><th class="num">"Δ"</th></tr></thead>
                    <tbody>{deltas(component_deltas(&a, &b))}</tbody>
                </table>
                <table class="delta-table">
                    <thead><tr><th>"Category"</th><th class="num">"A"</th><th class="num">"B"</th><th class="num">"Δ"</th></tr></thead>
                    <tbody>{deltas(category_deltas(&a, &b))}</tbody>
                </table>
                <table class="delta-table" data-testid="compare-grown">
                    <thead><tr><th>"Grew at the same call path"</th><th class="num">"A"</th><th class="num">"B"</th><th class="num">"×"</th></tr></thead>
                    <tbody>{grown_rows}{nothing_grew}</tbody>
                </table>
            </div>
        })
    };
    let tree_view = move || {
        let t = tree.get()?;
        let toggled = ui.compare.tree_toggled.get();
        let rows = diff_rows(&t, &toggled)
            .into_iter()
            .map(|r| {
                let path = r.path.clone();
                let frames = t.frames_to(&r.path);
                let mark = match r.presence {
                    Presence::New => "+ ",
                    Presence::Vanished => "− ",
                    Presence::Both => "",
                };
                let twisty = if r.leaf { "  " } else if r.open { "▾ " } else { "▸ " };
                view! {
                    <div class="diff-row" class:new={r.presence == Presence::New} class:vanished={r.presence == Presence::Vanished}
                        title=r.frame.clone() tabindex=if r.leaf { "-1" } else { "0" }
                        on:click={
                            let path = path.clone();
                            move |_| toggle(ui, &path)
                        }
                        on:keydown=move |ev| if super::activates(&ev) { toggle(ui, &path) }>
                        <span class="num">{bytes(r.a_bytes)}</span>
                        <span class="num">{bytes(r.b_bytes)}</span>
                        <span class="num" class:grew={r.delta_bytes > 0} class:shrank={r.delta_bytes < 0}>{signed_bytes(r.delta_bytes)}</span>
                        <span class="frame" style=format!("padding-left:{}px", (r.path.len() - 1) * 14)>
                            {format!("{twisty}{mark}{}", short_frame(&r.frame))}
                        </span>
                        <button class="mark" title="Highlight this call path's allocations on each run's timeline"
                            on:click={
                                let frames = frames.clone();
                                move |ev: web_sys::MouseEvent| {
                                    ev.stop_propagation();
                                    ui.compare_path.set(frames.clone());
                                }
                            }>"◎"</button>
                    </div>
                }
            })
            .collect_view();
        Some(view! {
            <div class="diff-tree" data-testid="compare-diff" data-root-delta=t.delta_bytes.to_string()>
                <div class="diff-row head"><span class="num">"A"</span><span class="num">"B"</span><span class="num">"Δ"</span>
                    <span class="frame muted">"call path, outermost first (framework frames hidden; + new, − vanished)"</span></div>
                {rows}
            </div>
        })
    };
    let picked_path = move || {
        let path = ui.compare_path.get()?;
        let (a, b) = pair.get()?;
        let (ka, kb) = (key_of(&a), key_of(&b));
        let last = path.last().cloned().unwrap_or_default();
        Some(view! {
            <div class="chip" data-testid="compare-path" title=path.join("\n")>
                {format!("Call path {} picked: open a run to see its allocations highlighted", short_frame(&last))}
                <button class="button small" on:click=move |_| open_run(ui, &ka)>"Open A"</button>
                <button class="button small" on:click=move |_| open_run(ui, &kb)>"Open B"</button>
                <button class="chip-close" title="Forget the call path" on:click=move |_| ui.compare_path.set(None)>"×"</button>
            </div>
        })
    };
    // Built again only when it comes or goes, not at every change of the runs (a batch of 600
    // files read made it anew, its pickers' options and its tables, as each file came).
    let two = Memo::new(move |_| rows.with(|r| r.len() >= 2));
    move || {
        two.get().then(|| {
            view! {
                <section class="panel wide">
                    <h3>"Diff of two runs at their peaks"</h3>
                    <div class="chart-tools">
                        <label>"A " {picker(ui.compare.diff_a, "diff-a", true)}</label>
                        <label>"B " {picker(ui.compare.diff_b, "diff-b", false)}</label>
                    </div>
                    {totals}
                    {breakdowns}
                    {picked_path}
                    {tree_view}
                </section>
            }
        })
    }
}

/// Makes `select`'s options read `now` where they read `was`, changing only the span that differs
/// ([`changed_span`]).
fn show_options(select: &web_sys::HtmlSelectElement, was: &[String], now: &[String]) {
    let (start, removed, added) = changed_span(was, now);
    let options = select.children();
    for _ in 0..removed {
        if let Some(option) = options.item(start as u32) {
            option.remove();
        }
    }
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    // (`children` is live: what follows the span is at its start now.)
    let before = options.item(start as u32);
    for label in &now[start..start + added] {
        if let Ok(option) = document.create_element("option") {
            option.set_text_content(Some(label));
            let _ = select.insert_before(&option, before.as_ref().map(|b| b.as_ref()));
        }
    }
}
