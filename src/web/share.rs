//! Links with the view in them: the address bar's hash follows the view on screen (replaceState, no
//! history entries), "Copy link" copies it, and a link's view is restored when its file opens (with
//! `?url=`, or when the user opens the same file: same name and size). See `view_model::share`.

use leptos::prelude::*;

use super::{Ui, View};
use crate::load::store;
use crate::view_model::share::ViewState;
use crate::viewport::Viewport;

/// Reads the link's view from the hash, and from then on keeps the hash in step with the view.
pub fn start(ui: Ui) {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    if hash.len() > 1 {
        let mut state = ViewState::from_hash(&hash);
        // A one-file page carries its file (compressed, so of another size): the view is for it.
        if crate::load::embedded_field("files").is_some() {
            state.file = None;
        }
        ui.pending.set(Some(state));
    }
    Effect::new(move |_| {
        let state = current(ui);
        // While a link's view waits for its file, the hash stays the link's.
        if ui.pending.with(|p| p.is_some()) {
            return;
        }
        let Some(state) = state else { return };
        let Some(window) = web_sys::window() else {
            return;
        };
        let location = window.location();
        let url = format!(
            "{}{}{}",
            location.pathname().unwrap_or_default(),
            location.search().unwrap_or_default(),
            state.to_hash()
        );
        if let Ok(history) = window.history() {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    });
}

/// The view on screen (tracks everything a link carries), when a file is open.
fn current(ui: Ui) -> Option<ViewState> {
    let (file, device) = ui.current()?;
    let view = ui.view.get();
    let (name, size) = store::list().get(file).map(|f| (f.0.clone(), f.1))?;
    let pinned = ui.pinned.get();
    let category = ui.highlight_category.get();
    let extra = store::with_model(file, device, |m, s| {
        let pin = pinned
            .and_then(|p| m.blocks.lifetimes.allocations.get(p as usize))
            .map(|a| a.name());
        let cat = category.and_then(|c| m.categories(s).names.get(c as usize).cloned());
        (pin, cat)
    })
    .unwrap_or_default();
    let baseline = ui
        .compare
        .baseline
        .get()
        .map(|(name, _, device)| (name, device));
    Some(ViewState {
        file: Some((name, size)),
        device: Some(device),
        view: Some(view.key().to_string()),
        range: ui.viewport.get().map(|v| (v.x0, v.x1, v.y_max)),
        detail: Some(ui.detail.get()),
        by_category: ui.by_category.get(),
        pinned: extra.0,
        category: extra.1,
        entry: ui.analysis_event.get(),
        baseline,
    })
}

/// Restores a waiting link's view on file `index` if it is the link's file (or the link names none).
pub fn restore(ui: Ui, index: usize) {
    let Some(state) = ui.pending.get_untracked() else {
        return;
    };
    let Some((name, size, devices)) = store::list().get(index).cloned() else {
        return;
    };
    if let Some((want, want_size)) = &state.file {
        if *want != name || (*want_size != 0 && *want_size != size) {
            return;
        }
    }
    ui.pending.set(None);
    if let Some(d) = state.device.filter(|d| devices.contains(d)) {
        ui.select(index, d);
    }
    let device = ui.device.get_untracked();
    if let Some(view) = state.view.as_deref().and_then(View::of_key) {
        ui.view.set(view);
    }
    if let Some(d) = state.detail {
        ui.detail.set(d);
    }
    ui.by_category.set(state.by_category);
    if let Some((x0, x1, y_max)) = state.range {
        ui.viewport.set(Some(Viewport { x0, x1, y_max }));
    }
    ui.analysis_event.set(state.entry);
    let found = store::with_model(index, device, |m, s| {
        let pin = state.pinned.as_ref().and_then(|want| {
            m.blocks
                .lifetimes
                .allocations
                .iter()
                .position(|a| a.name() == *want)
                .map(|i| i as u32)
        });
        let cat = state.category.as_ref().and_then(|want| {
            m.categories(s)
                .names
                .iter()
                .position(|n| n == want)
                .map(|i| i as u16)
        });
        (pin, cat)
    });
    if let Some((pin, cat)) = found {
        ui.pinned.set(pin);
        ui.highlight_category.set(cat);
    }
}

/// "Copy link": the address of this view (the hash follows the view).
#[component]
pub fn CopyLink(ui: Ui) -> impl IntoView {
    let copied = RwSignal::new(false);
    let copy = move |_| {
        let _ = ui;
        if let Some(w) = web_sys::window() {
            if let Ok(href) = w.location().href() {
                let _ = w.navigator().clipboard().write_text(&href);
                copied.set(true);
            }
        }
    };
    view! {
        <button class="button" data-testid="copy-link" on:click=copy
            title="Copy a link to this view: with ?url= it opens the same file at the same view; for a local file, the view comes back when the same file is opened">
            {move || if copied.get() { "Link copied ✓" } else { "Copy link" }}
        </button>
    }
}
