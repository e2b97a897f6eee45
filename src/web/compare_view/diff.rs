//! The diff of A and B (at their peaks, or at entries picked on the curves): the call-stack tree,
//! components, categories and the call paths that grew.

use leptos::prelude::*;
use memograph_snapshot::analysis::compare::{
    diff, diff_text, grown_sites, within, Digest, Presence, GROWN_LISTED,
};
use memograph_snapshot::format::{bytes, grouped, ratio, signed_bytes};
use wasm_bindgen::JsCast;

use super::{diff_pair, folder_of, key_of, open_run, RowKey};
use crate::view_model::analysis::short_frame;
use crate::view_model::compare::{
    category_deltas, changed_span, component_deltas, diff_rows, Delta, SharedDigest,
};
use crate::web::Ui;

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

/// The diff of two runs at their peaks: totals, components, categories, call paths that grew, and the
/// call-stack tree.
#[component]
pub(super) fn DiffPanel(ui: Ui, rows: Memo<Vec<SharedDigest>>) -> impl IntoView {
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
            .take(GROWN_LISTED)
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
                        on:keydown=move |ev| if crate::web::activates(&ev) { toggle(ui, &path) }>
                        <span class="num">{bytes(r.a_bytes)}</span>
                        <span class="num">{bytes(r.b_bytes)}</span>
                        <span class="num" class:grew={r.delta_bytes > 0} class:shrank={r.delta_bytes < 0}
                            class:moved=r.moved_beneath.is_some()
                            title=r.moved_beneath.map(|m| format!("±0 here, but {} moved between the calls beneath", bytes(m)))>
                            {signed_bytes(r.delta_bytes)}{r.moved_beneath.map(|_| " ⇅")}
                        </span>
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
                {t.unchanged_line().map(|line| view! {
                    <div class="muted diff-same" data-testid="compare-diff-same">{line}</div>
                })}
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
    // The diff as `memograph diff --markdown` writes it, to paste into an issue or a pull request.
    let copied = RwSignal::new(false);
    Effect::new(move |_| {
        tree.track();
        copied.set(false);
    });
    let copy = move |_| {
        let (Some((a, b)), Some(t)) = (pair.get_untracked(), tree.get_untracked()) else {
            return;
        };
        if let Some(w) = web_sys::window() {
            let _ = w
                .navigator()
                .clipboard()
                .write_text(&diff_text(&a, &b, &t, true));
        }
        copied.set(true);
    };
    let copy_button = move || {
        view! {
            <button class="button small" data-testid="compare-diff-copy" on:click=copy
                title="Copy this diff as Markdown (as memograph diff --markdown writes it): the runs, the call-stack tree, the call paths that grew">
                {move || if copied.get() { "Copied ✓" } else { "Copy diff as Markdown" }}
            </button>
        }
    };
    // Built again only when it comes or goes, not at every change of the runs (a batch of 600
    // files read made it anew, its pickers' options and its tables, as each file came).
    let two = Memo::new(move |_| rows.with(|r| r.len() >= 2));
    move || {
        two.get().then(|| {
            view! {
                <section class="panel wide">
                    <h3>"Diff of two runs"</h3>
                    <div class="chart-tools">
                        <label>"A " {picker(ui.compare.diff_a, "diff-a", true)}</label>
                        <label>"B " {picker(ui.compare.diff_b, "diff-b", false)}</label>
                        {copy_button}
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
