//! Allocator State History: the event list (virtualised: only visible rows exist in the DOM) and the
//! segments and blocks laid out by address right after the selected event. Arrow keys step through events.

use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use memograph_snapshot::format::{bytes, count};

use super::Ui;
use crate::load::build::{self, Part};
use crate::load::store;
use crate::render::{self, colors, Surface};
use crate::touch::{Gesture, Touches};
use crate::view_model::{allocator_state_at, describe_block, rows_of, EventRow};

const ROW: f64 = 20.0;

#[component]
pub fn StateView(ui: Ui) -> impl IntoView {
    let list = NodeRef::<Div>::new();
    let canvas = NodeRef::<Canvas>::new();
    let scroll = RwSignal::new(0.0f64);
    let map_scroll = RwSignal::new(0.0f64);
    // The list's height, measured as it mounts, as the window is resized and as it scrolls: the rows
    // it shows are those that fit (a fixed guess left a tall window's list blank below 32 rows).
    let height = RwSignal::new(600.0f64);
    let resized = super::window_resizes();
    Effect::new(move |_| {
        resized.track();
        if let Some(el) = list.get() {
            height.set(el.client_height() as f64);
        }
    });
    let hover = RwSignal::new(None::<(f64, f64, String)>);
    // While allocations are highlighted (a search, a picked call path or category), the list shows
    // only their events, unless the user asks for all.
    let only_matching = RwSignal::new(true);
    // The current file and device once what the view reads is built (in the background: asked for
    // here until it is).
    let built = move || {
        let (file, device) = ui.current()?;
        if build::is_built(file, device, Part::History) {
            return Some((file, device));
        }
        ui.build(file, device, Part::History);
        None
    };
    let matching = Memo::new(move |_| {
        let h = ui.highlight.get()?;
        let (file, device) = ui.current()?;
        store::with_model(file, device, |m, _| {
            (
                h.label.clone(),
                // Only these are listed while allocations are highlighted.
                std::sync::Arc::new(m.blocks.lifetimes.events_of(&h.allocations)),
            )
        })
    });
    let filter = move || matching.get().filter(|_| only_matching.get()).map(|m| m.1);
    // The list's length, and the trace entry at a position in it.
    let len = move || match filter() {
        Some(entries) => Some(entries.len()),
        None => {
            let (file, device) = ui.current()?;
            store::with_file(file, |f| f.snapshot.trace(device).len())
        }
    };
    let entry_at = move |position: usize| match filter() {
        Some(entries) => entries.get(position).map(|&e| e as i64),
        None => Some(position as i64),
    };
    // The position of entry `i` in the list (of the first listed entry at or after it).
    let position_of = move |i: i64| match filter() {
        Some(entries) => entries.partition_point(|&e| i64::from(e) < i),
        None => i.max(0) as usize,
    };
    let rows = move || {
        let (file, device) = built()?;
        let first = (scroll.get() / ROW).floor().max(0.0) as usize;
        let count = (height.get() / ROW).ceil() as usize + 2;
        let entries: Vec<usize> = match filter() {
            Some(entries) => entries
                .iter()
                .skip(first)
                .take(count)
                .map(|&e| e as usize)
                .collect(),
            None => (first..first + count).collect(),
        };
        store::with_model(file, device, |m, s| {
            let rows = rows_of(m, s, entries.into_iter());
            (first..).zip(rows).collect::<Vec<_>>()
        })
    };
    // Selects the entry at list position `p` (clamped) and keeps it in view.
    let select = move |p: i64| {
        let n = len().unwrap_or(0) as i64;
        if n == 0 {
            return;
        }
        let p = p.clamp(0, n - 1);
        let Some(i) = entry_at(p as usize) else {
            return;
        };
        ui.selected_event.set(i);
        if let Some(el) = list.get() {
            let scroll = el.scroll_top() as f64;
            let to = scrolled_to_show(p as f64 * ROW, ROW, scroll, el.client_height() as f64);
            if to != scroll {
                el.set_scroll_top(to as i32);
            }
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        let cur = position_of(ui.selected_event.get_untracked()) as i64;
        let page = (height.get_untracked() / ROW) as i64;
        let next = match ev.key().as_str() {
            "ArrowDown" | "ArrowRight" => cur + 1,
            "ArrowUp" | "ArrowLeft" => cur - 1,
            "PageDown" => cur + page,
            "PageUp" => cur - page,
            "Home" => 0,
            "End" => i64::MAX / 2,
            _ => return,
        };
        ev.prevent_default();
        select(next);
    };
    let filter_bar = move || {
        let (label, entries) = matching.get()?;
        let n = entries.len();
        Some(view! {
            <div class="event-filter" data-testid="history-filter" data-count=n.to_string()>
                <label class="check" title="List only the events of the highlighted allocations">
                    <input type="checkbox" prop:checked=move || only_matching.get()
                        on:change=move |ev| only_matching.set(event_target_checked(&ev)) />
                    {format!("only the {} of {label}", count(n as u64, "event", "events"))}
                </label>
            </div>
        })
    };

    let state = Memo::new(move |_| {
        let event = ui.selected_event.get();
        let (file, device) = built()?;
        // Shared, not copied, by each draw and pointer move (tens of thousands of rows in a big file).
        store::with_model(file, device, |m, s| {
            std::sync::Arc::new(render::state_map::MapRows::new(allocator_state_at(
                m, s, event,
            )))
        })
    });
    Effect::new(move |_| {
        let rows = state.get().unwrap_or_default();
        let (dark, scroll, pinned) = (ui.dark.get(), map_scroll.get(), ui.pinned.get());
        let Some(el) = canvas.get() else { return };
        let Some(s) = Surface::of(&el) else { return };
        let g = render::state_map::geometry(s.width, &rows, scroll);
        render::state_map::draw(&s, &rows.rows, &g, pinned, &colors::theme(dark));
    });
    // The rows on screen and the (row, block) under the pointer.
    let hit_at = move |ev: &web_sys::MouseEvent| {
        let rows = state.get_untracked().unwrap_or_default();
        let el = canvas.get()?;
        let g = render::state_map::geometry(
            el.client_width() as f64,
            &rows,
            map_scroll.get_untracked(),
        );
        let hit =
            render::state_map::hit(&rows.rows, &g, ev.offset_x() as f64, ev.offset_y() as f64);
        Some((rows, hit))
    };
    let on_map_move = move |ev: web_sys::MouseEvent| {
        let Some((rows, hit)) = hit_at(&ev) else {
            return;
        };
        let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
        let text = hit.and_then(|(r, b)| {
            let row = rows.rows.get(r)?;
            let block = b.and_then(|b| row.blocks.get(b));
            let (file, device) = ui.current()?;
            store::with_model(file, device, |m, s| describe_block(m, s, row, block))
        });
        hover.set(text.map(|t| (x, y, t)));
    };
    let on_map_click = move |ev: web_sys::MouseEvent| {
        let Some((rows, hit)) = hit_at(&ev) else {
            return;
        };
        ui.pinned
            .set(hit.and_then(|(r, b)| Some(rows.rows.get(r)?.blocks.get(b?)?.allocation)));
    };
    // The map scrolled to `to`, within its rows (the wheel went on past the last into blank).
    let scroll_map = move |to: f64| {
        let rows = state.get_untracked().unwrap_or_default();
        let height = canvas
            .get_untracked()
            .map_or(0.0, |el| f64::from(el.client_height()));
        map_scroll.set(to.clamp(0.0, render::state_map::max_scroll(&rows, height)));
    };
    // A finger drags the map up and down as the wheel scrolls it (on a canvas the page would scroll
    // instead, or nothing); a tap is the browser's click, as the mouse's.
    let touches = StoredValue::new(Touches::<f64>::default());
    let on_finger_down = move |ev: web_sys::PointerEvent| {
        if let Some((id, at)) = super::finger(&ev) {
            touches.update_value(|t| t.down(id, at, map_scroll.get_untracked()));
        }
    };
    let on_finger_move = move |ev: web_sys::PointerEvent| {
        let Some((id, at)) = super::finger(&ev) else {
            return;
        };
        if let Some(Some((from, Gesture::Pan { dy, .. }))) =
            touches.try_update_value(|t| t.moved(id, at))
        {
            hover.set(None);
            scroll_map(from - dy);
        }
    };
    // The keyboard on the map: the arrows step from block to block (Left, Right by address; Up, Down
    // to the segment above or below), Home and End; each pinned, described as the pointer would
    // describe it, and scrolled into view. Escape unpins.
    let on_map_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        use render::state_map::Step;
        let to = match ev.key().as_str() {
            "ArrowRight" => Step::Next,
            "ArrowLeft" => Step::Previous,
            "ArrowDown" => Step::Down,
            "ArrowUp" => Step::Up,
            "Home" => Step::First,
            "End" => Step::Last,
            "Escape" => {
                ui.pinned.set(None);
                hover.set(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        let (Some(rows), Some(el)) = (state.get_untracked(), canvas.get_untracked()) else {
            return;
        };
        let pinned = ui.pinned.get_untracked();
        let at = pinned.and_then(|p| {
            rows.rows
                .iter()
                .enumerate()
                .find_map(|(r, row)| Some((r, row.blocks.iter().position(|b| b.allocation == p)?)))
        });
        let Some((r, b)) = render::state_map::step(&rows.rows, at, to) else {
            return;
        };
        let row_height = render::state_map::ROW;
        let scroll = map_scroll.get_untracked();
        let to = scrolled_to_show(
            r as f64 * row_height,
            row_height,
            scroll,
            el.client_height() as f64,
        );
        if to != scroll {
            map_scroll.set(to);
        }
        let g = render::state_map::geometry(
            el.client_width() as f64,
            &rows,
            map_scroll.get_untracked(),
        );
        let Some((x, y, w, h)) = render::state_map::block_rect(&rows.rows, &g, r, b) else {
            return;
        };
        let row = &rows.rows[r];
        let block = &row.blocks[b];
        ui.pinned.set(Some(block.allocation));
        let text = ui.current().and_then(|(file, device)| {
            store::with_model(file, device, |m, s| describe_block(m, s, row, Some(block)))
        });
        hover.set(text.map(|t| (x + w / 2.0, y + h, t)));
    };
    let summary = move || {
        let Some(rows) = state.get() else {
            return "Building the state history…".to_string();
        };
        let reserved = rows.rows.iter().fold(0u64, |t, r| t.saturating_add(r.size));
        let used = rows
            .rows
            .iter()
            .flat_map(|r| &r.blocks)
            .fold(0u64, |t, b| t.saturating_add(b.size));
        // Without a trace there is no entry to be after: what is shown is the snapshot's own state.
        let when = match len() {
            Some(0) if filter().is_none() => "as the snapshot holds it".to_string(),
            _ => format!("after entry {}", ui.selected_event.get()),
        };
        format!(
            "{when}: {}, {} reserved, {} in blocks, {} free",
            count(rows.rows.len() as u64, "segment", "segments"),
            bytes(reserved),
            bytes(used),
            bytes(reserved.saturating_sub(used))
        )
    };

    view! {
        <div class="state-view">
            <div class="event-column">
            {filter_bar}
            <super::timeline_view::HistoryNote ui=ui />
            <div class="event-list" tabindex="0" node_ref=list on:keydown=on_key
                on:scroll=move |_| if let Some(el) = list.get() {
                    scroll.set(el.scroll_top() as f64);
                    height.set(el.client_height() as f64);
                }>
                <div class="event-spacer" style=move || format!("height:{}px", len().unwrap_or(0) as f64 * ROW)>
                    {move || rows().unwrap_or_default().into_iter().map(|(p, EventRow { index: i, action, name, size, time })| {
                        let selected = move || ui.selected_event.get() == i as i64;
                        view! {
                            <div class="event-row" class:selected=selected style=format!("top:{}px", p as f64 * ROW)
                                on:click=move |_| select(p as i64)>
                                <span class="idx">{i}</span>
                                <span class=format!("action {action}")>{action.clone()}</span>
                                <span class="addr">{name}</span>
                                <span class="size">{size}</span>
                                <span class="time">{time}</span>
                            </div>
                        }
                    }).collect_view()}
                </div>
            </div>
            </div>
            <div class="state-map">
                <div class="view-toolbar">
                    <span>{summary}</span>
                    <span class="muted hint">"hatched: freed, waiting for its stream · red strip: rounding waste (known for blocks the snapshot still holds)"</span>
                </div>
                <div class="plot">
                    <canvas class="state-canvas" node_ref=canvas tabindex="0" on:keydown=on_map_key
                        aria-label="Segments and blocks: the arrow keys step from block to block (Up, Down: the segment above or below), Escape unpins"
                        on:mousemove=on_map_move
                        on:mouseleave=move |_| hover.set(None) on:click=on_map_click
                        on:wheel=move |ev: web_sys::WheelEvent| {
                            ev.prevent_default();
                            scroll_map(map_scroll.get_untracked() + ev.delta_y());
                        }
                        on:pointerdown=on_finger_down on:pointermove=on_finger_move
                        on:pointerup=move |ev| if let Some((id, _)) = super::finger(&ev) {
                            touches.update_value(|t| { t.up(id, map_scroll.get_untracked()); });
                        }
                        on:pointercancel=move |_| touches.update_value(|t| t.cancel())></canvas>
                    {move || hover.get().map(|(x, y, t)| view! {
                        <div class="tooltip" style=super::tooltip_style(x, y, canvas)>{t}</div>
                    })}
                </div>
            </div>
        </div>
    }
}

/// Where a list scrolled to `scroll` (showing `height` pixels) scrolls for the row from `top` to
/// `top + row` to be in view: no further than needed, not at all when it is.
fn scrolled_to_show(top: f64, row: f64, scroll: f64, height: f64) -> f64 {
    if top < scroll {
        top
    } else if top + row > scroll + height {
        top + row - height
    } else {
        scroll
    }
}
