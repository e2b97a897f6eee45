//! Links with the view in them: the address bar's hash follows the view on screen (replaceState, no
//! history entries, at most four times a second), "Copy link" copies it, and a link's view is restored when its file opens (with
//! `?url=`, or when the user opens the same file: same name and size), its comparison when its runs
//! are compared, and its Steps part when its step files are read. See `view_model::share`.

use leptos::prelude::*;

use super::{Highlight, MadeBy, Ui, View};
use crate::load::build::Part;
use crate::load::store;
use crate::view_model::analysis::short_frame;
use crate::view_model::share::{StepsState, ViewState};
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
        // The Steps part waits for its step files, whatever else the link waits for; a link of step
        // files alone waits for nothing else.
        let mut steps_alone = false;
        if let Some(steps) = state.steps.take() {
            steps_alone = state.file.is_none() && state.runs.is_empty();
            ui.pending_steps.set(Some(ViewState {
                view: state.view.clone(),
                steps: Some(steps),
                ..ViewState::default()
            }));
        }
        if !steps_alone {
            ui.pending.set(Some(state));
        }
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
        follow(format!(
            "{}{}{}",
            location.pathname().unwrap_or_default(),
            location.search().unwrap_or_default(),
            state.to_hash()
        ));
    });
}

/// The least time between two rewrites of the address bar. The view changes every frame of a pan or a
/// drag, and browsers ignore (Chromium) or refuse (Safari, Firefox) more than 100–200 rewrites in 10 s:
/// after a few seconds of panning the address, and so "Copy link", would stay on an old view. A rewrite
/// also cost the page's thread 1.4 ms a frame.
const REWRITE_EVERY_MS: f64 = 250.0;

thread_local! {
    /// The view's address, when the address bar does not hold it yet.
    static UNWRITTEN: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// When the address bar was last rewritten (`load::now`), and whether a rewrite is due.
    static REWRITTEN_AT: std::cell::Cell<f64> = const { std::cell::Cell::new(f64::NEG_INFINITY) };
    static DUE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Puts `url` in the address bar in a task of its own: the next, or once [`REWRITE_EVERY_MS`] has
/// passed since the last rewrite (the view's address then, whatever it changed to meanwhile). Never in
/// the caller's task: as a file opens that is the one that builds its views, and on a page not yet warm
/// `replaceState` added about a sixth to it.
fn follow(url: String) {
    UNWRITTEN.with(|u| *u.borrow_mut() = Some(url));
    if DUE.with(|d| d.replace(true)) {
        return;
    }
    let since = crate::load::now() - REWRITTEN_AT.with(|r| r.get());
    let wait = (REWRITE_EVERY_MS - since).clamp(0.0, REWRITE_EVERY_MS);
    crate::load::after(wait.ceil() as i32, || {
        DUE.with(|d| d.set(false));
        write_address();
    });
}

/// Writes the view's address into the address bar now, if it is not there yet.
fn write_address() {
    let Some(url) = UNWRITTEN.with(|u| u.borrow_mut().take()) else {
        return;
    };
    REWRITTEN_AT.with(|r| r.set(crate::load::now()));
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}

/// The view on screen (tracks everything a link carries), when a file is open or runs are compared.
fn current(ui: Ui) -> Option<ViewState> {
    let view = ui.view.get();
    ui.compared.track();
    let runs = if store::run_count() >= 2 {
        store::run_names()
    } else {
        Vec::new()
    };
    let baseline = ui
        .compare
        .baseline
        .get()
        .map(|(name, _, device)| (name, device));
    let gpu_memory = ui.compare.gpu_memory.get();
    ui.steps.track();
    let steps = Some(store::step_file_names())
        .filter(|files| !files.is_empty())
        .map(|files| StepsState {
            files,
            baseline: ui.steps_ui.baseline.get(),
            reserved: ui.steps_ui.reserved.get(),
            theoretical: ui.steps_ui.theoretical.get(),
        });
    let Some((file, device)) = ui.current() else {
        return (!runs.is_empty() || steps.is_some()).then(|| ViewState {
            view: Some(view.key().to_string()),
            baseline,
            runs,
            gpu_memory,
            steps,
            ..ViewState::default()
        });
    };
    let (name, size) = store::list().get(file).map(|f| (f.0.clone(), f.1))?;
    let head = store::with_file(file, |f| f.head.clone()).flatten();
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
    let made_by = ui.highlight.get().and_then(|h| h.made_by);
    let (search, path) = match made_by {
        Some(MadeBy::Search(text)) => (Some(text), None),
        Some(MadeBy::Path(frames)) => (None, Some(frames)),
        None => (None, None),
    };
    let hide_framework = ui.hide_framework.get();
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
        head,
        search,
        // Tree paths depend on whether framework frames are hidden: say so when they are not.
        hide_framework: (path.is_some() && !hide_framework).then_some(false),
        path,
        runs,
        gpu_memory,
        steps,
    })
}

/// The view a link names, if the page can show it now (Steps only once step records are open: the
/// link's Steps part comes back when its files are, see [`restore_steps`]).
fn shown(state: &ViewState) -> Option<View> {
    let view = state.view.as_deref().and_then(View::of_key)?;
    (view != View::Steps || store::step_file_count() > 0).then_some(view)
}

/// Restores a waiting link's view on file `index` if it is the link's file (or the link names none).
pub fn restore(ui: Ui, index: usize) {
    let Some(state) = ui.pending.get_untracked() else {
        return;
    };
    let Some((name, size, devices)) = store::list().get(index).cloned() else {
        return;
    };
    let head = store::with_file(index, |f| f.head.clone()).flatten();
    if !state.is_for(&name, size, head.as_deref()) {
        return;
    }
    ui.pending.set(None);
    if let Some(d) = state.device.filter(|d| devices.contains(d)) {
        ui.select(index, d);
    }
    let device = ui.device.get_untracked();
    if let Some(view) = shown(&state) {
        ui.view.set(view);
    }
    if let Some(d) = state.detail {
        ui.detail.set(d);
    }
    ui.by_category.set(state.by_category);
    if let Some((x0, x1, y_max)) = state.range {
        // Within this file's trace, whatever the link says.
        let x_len = store::with_model(index, device, |m, _| m.blocks.layout.x_len as f64);
        ui.viewport
            .set(x_len.map(|x_len| Viewport { x0, x1, y_max }.clamped(x_len)));
    }
    ui.analysis_event.set(state.entry);
    let hide_framework = state.hide_framework.unwrap_or(true);
    ui.hide_framework.set(hide_framework);
    // What needs a part of the model waits for it, built in the background.
    let at = (index, device);
    if let Some(want) = state.pinned.clone() {
        super::timeline_view::find(ui, at, "pin", &want.clone(), move |h, _| {
            let pin = store::with_model(index, device, |m, _| {
                let all = &m.blocks.lifetimes.allocations;
                let named = |&i: &u32| all.get(i as usize).is_some_and(|a| a.name() == want);
                h.allocations.iter().copied().find(named)
            });
            ui.pinned.set(pin.flatten());
        });
    }
    if let Some(want) = state.category.clone() {
        ui.when_built(index, device, Part::Categories, move || {
            let cat = store::with_model(index, device, |m, _| {
                let names = &m.built_categories()?.names;
                names.iter().position(|n| *n == want).map(|i| i as u16)
            });
            ui.highlight_category.set(cat.flatten());
        });
    }
    // The live-set tree's node at the analysed entry, as when it was picked.
    if let Some(frames) = state.path.clone() {
        let key = (state.entry, hide_framework);
        ui.when_built(index, device, Part::Report(key), move || {
            let found = store::with_model(index, device, |m, _| {
                m.built_report(key)?
                    .live_set
                    .find(&frames)
                    .map(|n| n.all_allocations())
            });
            if let Some(under) = found.flatten() {
                let label = frames.last().map_or("call path", |f| f.as_str());
                let h = Highlight::new(short_frame(label), under);
                ui.highlight
                    .set(Some(h.made_by(MadeBy::Path(frames.clone()))));
            }
        });
    }
    if let Some(text) = &state.search {
        let then = move |h, _| ui.highlight.set(Some(h));
        super::timeline_view::find(ui, at, "search", text, then);
    }
}

/// Restores a waiting link's Compare view once every run it names is compared (by name and size):
/// the view and the baseline.
pub fn restore_runs(ui: Ui) {
    let Some(state) = ui.pending.get_untracked() else {
        return;
    };
    if state.runs.is_empty() || state.file.is_some() {
        return;
    }
    let have = store::run_names();
    if !state.runs.iter().all(|r| have.contains(r)) {
        return;
    }
    ui.pending.set(None);
    ui.compare.gpu_memory.set(state.gpu_memory);
    ui.view.set(
        shown(&state)
            .filter(|v| *v == View::Steps)
            .unwrap_or(View::Compare),
    );
    if let Some((name, device)) = state.baseline {
        if let Some((_, bytes)) = have.iter().find(|(n, _)| *n == name) {
            ui.compare.baseline.set(Some((name, *bytes, device)));
        }
    }
}

/// Restores a waiting link's Steps part once every step file it names is open: the baseline run, the
/// choices, and the Steps view if the link was of it.
pub fn restore_steps(ui: Ui) {
    let Some(state) = ui.pending_steps.get_untracked() else {
        return;
    };
    let Some(steps) = state.steps.as_ref() else {
        return;
    };
    if !steps.is_among(&store::step_file_names()) {
        return;
    }
    ui.pending_steps.set(None);
    let s = ui.steps_ui;
    s.baseline.set(steps.baseline.clone());
    s.reserved.set(steps.reserved);
    s.theoretical.set(steps.theoretical);
    if shown(&state) == Some(View::Steps) {
        ui.view.set(View::Steps);
    }
}

/// "Copy link": the address of this view (the hash follows the view).
#[component]
pub fn CopyLink(ui: Ui) -> impl IntoView {
    let copied = RwSignal::new(false);
    let copy = move |_| {
        let _ = ui;
        // The address bar may be a moment behind the view (see `REWRITE_EVERY_MS`).
        write_address();
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
