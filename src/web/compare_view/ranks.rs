//! The rank strip: per job, each rank's peak, the mean, the max and the imbalance, the rank out of
//! line marked.

use leptos::prelude::*;
use memograph_snapshot::analysis::compare::{rank_sets, RankSet};
use memograph_snapshot::format::{bytes, grouped};
use wasm_bindgen::JsCast;

use super::{key_of, open_run, RowKey};
use crate::view_model::compare::{refs, SharedDigest};
use crate::web::Ui;

/// Per job compared (its folder, or the knobs its names differ in): peaks per rank, mean, max and
/// imbalance, the rank out of line marked; a click opens the run of that rank's peak.
#[component]
pub(super) fn RankStrip(ui: Ui, rows: Memo<Vec<SharedDigest>>) -> impl IntoView {
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
        if crate::web::browsers_key(&ev) {
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
        let Some(to) = crate::web::bar_moved(&ev.key(), Some(at), bars.len()) else {
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
