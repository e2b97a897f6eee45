//! The keyboard's shortcuts, listed: `?` (outside a text field) or the header's `?` button opens the
//! list, Escape or the button in it closes it.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// What each view's keys do, view by view: (where, [(keys, what)]).
const SHORTCUTS: &[(&str, &[(&str, &str)])] = &[
    (
        "Anywhere",
        &[
            (
                "Tab, Shift+Tab",
                "move between the controls, tables and charts",
            ),
            (
                "Enter, Space",
                "what a click does on the focused row, heading or bar",
            ),
            ("?", "this list"),
        ],
    ),
    (
        "Timeline and segments",
        &[
            ("+  -", "zoom in, out"),
            ("←  →", "pan"),
            ("Home  End", "the start, the end of the trace"),
            (
                "↓  ↑",
                "pin the largest allocation in view, the next largest, back",
            ),
            (
                "o  O",
                "the next, the previous out-of-memory mark, described",
            ),
            (
                "a  A",
                "the next, the previous profiler annotation, described",
            ),
            (
                "f",
                "fit the height to what is in view, as the minimap's brush does",
            ),
            ("Esc", "unpin"),
            ("0", "show everything"),
            ("/", "to the Find box"),
        ],
    ),
    (
        "State history",
        &[
            (
                "↑ ↓  PgUp PgDn  Home End",
                "the entry, in the list of events",
            ),
            (
                "← → ↑ ↓  Home End",
                "from block to block on the map (each described and pinned)",
            ),
            ("Esc", "unpin, on the map"),
        ],
    ),
    (
        "Where the memory goes",
        &[
            (
                "← →  Shift  Home End",
                "the analysed entry, on the compact timeline",
            ),
            ("Esc", "back to the peak, on the compact timeline"),
            (
                "← → ↑ ↓  Enter",
                "a bar of the components and top consumers, and highlight it",
            ),
        ],
    ),
    (
        "Compare",
        &[
            ("← →  Shift  Home End", "the readout on the curves"),
            ("Enter", "diff A and B there"),
            ("+  -  0", "zoom the curves in, out, all"),
            (
                "← →  Home End",
                "from rank to rank on a rank strip (Enter opens it)",
            ),
        ],
    ),
    (
        "Steps",
        &[
            ("← →  Shift  Home End", "the readout on the step chart"),
            ("PgDn  PgUp", "the next, the previous snapshot marked"),
            ("Enter", "open the snapshot marked there"),
            (
                "← →  Home End",
                "from rank to rank on a rank strip (Enter: the baseline)",
            ),
        ],
    ),
];

/// Whether a key pressed in `target` is the user typing (a text field, a select, an editable element).
fn typing(target: Option<web_sys::EventTarget>) -> bool {
    let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else {
        return false;
    };
    let tag = el.tag_name();
    el.is_content_editable() || matches!(tag.as_str(), "INPUT" | "TEXTAREA" | "SELECT")
}

/// The list, shown while `open`; `?` anywhere (but in a text field) opens or closes it, Escape closes it.
#[component]
pub fn Shortcuts(open: RwSignal<bool>) -> impl IntoView {
    let close = NodeRef::<leptos::html::Button>::new();
    let listener = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "?" && !typing(ev.target()) {
            ev.prevent_default();
            open.update(|o| *o = !*o);
        } else if ev.key() == "/" && !typing(ev.target()) && !open.get_untracked() {
            // As on GitHub and in many a viewer: "/" goes to the search box, where there is one.
            let find = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.query_selector("[data-testid=search]").ok().flatten())
                .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok());
            if let Some(find) = find {
                ev.prevent_default();
                let _ = find.focus();
                find.select();
            }
        } else if ev.key() == "Escape" && open.get_untracked() {
            open.set(false);
        }
    });
    on_cleanup(move || listener.remove());
    // The dialog takes the focus as it opens (its close button: the one thing in it to focus, so Tab
    // stays there) and gives it back where it was as it closes.
    let before = StoredValue::new_local(None::<web_sys::HtmlElement>);
    Effect::new(move |last: Option<(bool, bool)>| {
        let now = open.get();
        let (was, focused) = last.unwrap_or((false, false));
        if now && !was {
            let active = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element())
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
            before.set_value(active);
        }
        if !now && was {
            if let Some(el) = before.get_value().filter(|el| el.is_connected()) {
                let _ = el.focus();
            }
        }
        // (The button comes a moment after the signal: tracked, it runs this again.)
        let mut focused = now && was && focused;
        if now && !focused {
            if let Some(b) = close.get() {
                focused = b.focus().is_ok();
            }
        }
        (now, focused)
    });
    let keep_focus = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Tab" {
            ev.prevent_default();
            if let Some(b) = close.get_untracked() {
                let _ = b.focus();
            }
        }
    };
    view! {
        <Show when=move || open.get()>
            <div class="shortcuts-backdrop" on:click=move |_| open.set(false)></div>
            <div class="shortcuts" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" data-testid="shortcuts"
                on:keydown=keep_focus>
                <div class="shortcuts-head">
                    <h2>"Keyboard shortcuts"</h2>
                    <button class="button small" node_ref=close on:click=move |_| open.set(false)>"Close"</button>
                </div>
                <div class="shortcuts-body">
                    {SHORTCUTS.iter().map(|(place, keys)| view! {
                        <section>
                            <h3>{*place}</h3>
                            <dl>
                                {keys.iter().map(|(k, what)| view! { <dt><kbd>{*k}</kbd></dt><dd>{*what}</dd> }).collect_view()}
                            </dl>
                        </section>
                    }).collect_view()}
                </div>
            </div>
        </Show>
    }
}
