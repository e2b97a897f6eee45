//! The peak table: a row per run × device (ticked, baseline, B of the diff), deltas against the
//! baseline, sortable headings, and only the rows near its view past a few hundred runs.

use leptos::prelude::*;
use memograph_snapshot::analysis::compare::{peak_rows, peak_table, within, zero_columns};
use memograph_snapshot::analysis::fit::Limit;
use memograph_snapshot::format::{at_entry, grouped};
use wasm_bindgen::JsCast;

use super::{baseline_of, diff_pair, folder_of, included, key_of, open_run, RowKey};
use crate::load::store;
use crate::view_model::compare::{rows_in_view, sorted_order, SharedDigest, SortBy};
use crate::web::Ui;

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
pub(super) fn PeakTable(
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
    let resized = crate::web::window_resizes();
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
            on:keydown=move |ev| if diffable() && crate::web::activates(&ev) { diff_it() }>
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
                    on:keydown=move |ev| if crate::web::activates(&ev) { next_sort(sort, &key) }>{format!("{h}{arrow}")}</th>
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
