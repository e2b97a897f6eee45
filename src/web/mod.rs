//! The page: its state (signals in [`Ui`]), what `#app` shows, and the wiring of files, builds and views.
//! The shell around the views is `shell.rs`, what opening files does `open.rs`. Components only wire
//! signals; files arrive through `load`, models come from `view_model`, pictures from `render`.

mod analysis_view;
mod compare_view;
mod export;
mod input;
mod open;
mod settings_view;
mod share;
mod shell;
mod shortcuts;
mod stack_panel;
mod state_view;
mod steps_view;
mod timeline_view;

use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::load::build::{self, Part};
use crate::load::{self, store, Listener, LoadProgress};
use crate::view_model::compare::Redrawn;
use crate::viewport::Viewport;
pub use input::{activates, bar_moved, browsers_key, finger, moved_by};
use open::{carries_files, open_dropped, open_list};
use shell::{ErrorPanel, Header, Loading, Welcome};

/// What `#app[data-state]` says.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    Empty,
    Loading,
    Ready,
    Error,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Empty => "empty",
            Phase::Loading => "loading",
            Phase::Ready => "ready",
            Phase::Error => "error",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum View {
    Timeline,
    Analysis,
    Segments,
    State,
    Settings,
    Compare,
    Steps,
}

impl View {
    const ALL: [View; 7] = [
        View::Timeline,
        View::Analysis,
        View::Segments,
        View::State,
        View::Settings,
        View::Compare,
        View::Steps,
    ];
    fn key(self) -> &'static str {
        match self {
            View::Timeline => "timeline",
            View::Analysis => "analysis",
            View::Segments => "segments",
            View::State => "state",
            View::Settings => "settings",
            View::Compare => "compare",
            View::Steps => "steps",
        }
    }
    /// The view a key names.
    fn of_key(key: &str) -> Option<View> {
        View::ALL.into_iter().find(|v| v.key() == key)
    }

    fn label(self) -> &'static str {
        match self {
            View::Timeline => "Active Memory Timeline",
            View::Analysis => "Where the memory goes",
            View::Segments => "Active Cached Segment Timeline",
            View::State => "Allocator State History",
            View::Settings => "Allocator Settings",
            View::Compare => "Compare runs",
            View::Steps => "Steps",
        }
    }
}

/// A set of block allocations to highlight, and what they are.
#[derive(Clone, Debug, PartialEq)]
pub struct Highlight {
    pub label: String,
    /// Indices into the device's block lifetimes, sorted.
    pub allocations: std::sync::Arc<Vec<u32>>,
    /// What made it, when a link can make it again.
    pub made_by: Option<MadeBy>,
}

/// How a highlight can be made again (a share link carries it).
#[derive(Clone, Debug, PartialEq)]
pub enum MadeBy {
    /// A search's text.
    Search(String),
    /// A node of the live-set tree at the analysed entry (its frames, outermost first).
    Path(Vec<String>),
}

impl Highlight {
    pub fn new(label: String, mut allocations: Vec<u32>) -> Highlight {
        allocations.sort_unstable();
        allocations.dedup();
        Highlight::of_found(label, allocations)
    }

    /// A highlight of allocations as a search finds them: in ascending order, each once (not sorted
    /// again: a search of a 2 GB snapshot can find six million, and sorting them took a task 60 ms).
    pub fn of_found(label: String, allocations: Vec<u32>) -> Highlight {
        debug_assert!(allocations.is_sorted_by(|a, b| a < b));
        Highlight {
            label,
            allocations: std::sync::Arc::new(allocations),
            made_by: None,
        }
    }

    pub fn made_by(self, how: MadeBy) -> Highlight {
        Highlight {
            made_by: Some(how),
            ..self
        }
    }
}

/// All of the page's signals. Copy, so any closure can hold it.
#[derive(Clone, Copy)]
pub struct Ui {
    pub phase: RwSignal<Phase>,
    /// Why each file that could not be opened failed (`name: reason`), since the user last chose.
    pub errors: RwSignal<Vec<String>>,
    /// The one error said is of a folder that held nothing to open, not of a file.
    pub folder_held_nothing: RwSignal<bool>,
    /// How far the current load is.
    pub progress: RwSignal<LoadProgress>,
    /// Bumped whenever a file is opened.
    pub files: RwSignal<u32>,
    pub file: RwSignal<usize>,
    pub device: RwSignal<i64>,
    pub view: RwSignal<View>,
    /// Share of allocations drawn as their own band (0.0–1.0, as `TimelineModel::detail`).
    pub detail: RwSignal<f64>,
    pub viewport: RwSignal<Option<Viewport>>,
    pub time_axis: RwSignal<bool>,
    /// The band under the pointer and its allocation (see `render::timeline::Overlay::hovered`).
    pub hovered: RwSignal<Option<(usize, u32)>>,
    pub pinned: RwSignal<Option<u32>>,
    pub full_stack: RwSignal<bool>,
    pub selected_event: RwSignal<i64>,
    /// Colour the block timeline by category, and the category whose allocations are highlighted.
    pub by_category: RwSignal<bool>,
    pub highlight_category: RwSignal<Option<u16>>,
    /// Allocations picked in the analysis panels (a call path, a consumer, a component), highlighted on
    /// the timelines.
    pub highlight: RwSignal<Option<Highlight>>,
    /// The entry the analysis panels describe; `None`: the peak.
    pub analysis_event: RwSignal<Option<i64>>,
    /// Hide torch, library and C++ frames in the live-set tree.
    pub hide_framework: RwSignal<bool>,
    pub dark: RwSignal<bool>,
    /// When the current file's load began (performance.now()), for the load-to-first-timeline figure.
    pub load_started: RwSignal<f64>,
    /// Bumped whenever the compared runs change; how far the current batch of compared files is
    /// (ended, asked for; (0, 0) when none is being read).
    pub compared: RwSignal<u32>,
    pub comparing: RwSignal<(usize, usize)>,
    /// The Compare view's choices.
    pub compare: compare_view::CompareUi,
    /// A call path picked in the Compare view's diff (frames, outermost first): highlighted on each
    /// run's timeline when it is shown.
    pub compare_path: RwSignal<Option<Vec<String>>>,
    /// A link's view state (the URL's hash at start), waiting for its file to open.
    pub pending: RwSignal<Option<crate::view_model::share::ViewState>>,
    /// A link's Steps part (its view and `steps`), waiting for its step files.
    pub pending_steps: RwSignal<Option<crate::view_model::share::ViewState>>,
    /// Bumped whenever step-record files are added or removed.
    pub steps: RwSignal<u32>,
    pub steps_ui: steps_view::StepsUi,
    /// Bumped whenever a part of a model built in the background is in place (`load::build`).
    pub built: RwSignal<u32>,
    /// The list of keyboard shortcuts is shown.
    pub shortcuts: RwSignal<bool>,
}

impl Ui {
    fn new() -> Ui {
        let dark = web_sys::window()
            .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
            .map(|m| m.matches())
            .unwrap_or(false);
        Ui {
            phase: RwSignal::new(Phase::Empty),
            errors: RwSignal::new(Vec::new()),
            folder_held_nothing: RwSignal::new(false),
            progress: RwSignal::new(LoadProgress::default()),
            files: RwSignal::new(0),
            built: RwSignal::new(0),
            file: RwSignal::new(0),
            device: RwSignal::new(0),
            view: RwSignal::new(View::Timeline),
            detail: RwSignal::new(1.0),
            viewport: RwSignal::new(None),
            time_axis: RwSignal::new(false),
            hovered: RwSignal::new(None),
            pinned: RwSignal::new(None),
            full_stack: RwSignal::new(false),
            selected_event: RwSignal::new(0),
            by_category: RwSignal::new(false),
            highlight_category: RwSignal::new(None),
            highlight: RwSignal::new(None),
            analysis_event: RwSignal::new(None),
            hide_framework: RwSignal::new(true),
            dark: RwSignal::new(dark),
            load_started: RwSignal::new(0.0),
            compared: RwSignal::new(0),
            comparing: RwSignal::new((0, 0)),
            compare: compare_view::CompareUi::new(),
            compare_path: RwSignal::new(None),
            pending: RwSignal::new(None),
            pending_steps: RwSignal::new(None),
            steps: RwSignal::new(0),
            steps_ui: steps_view::StepsUi::new(),
            shortcuts: RwSignal::new(false),
        }
    }

    /// Step-record files open, and snapshots whose traces may mark training steps (tracks them).
    pub fn step_count(&self) -> usize {
        self.steps.get();
        self.files.get();
        self.compared.get();
        store::step_sources()
    }

    /// Whether anything is open: a snapshot, a compared run or step records.
    pub fn anything_open(&self) -> bool {
        self.run_count() != 0 || self.step_count() != 0
    }

    /// Every run a comparison can take, as [`store::runs`] gives them (tracks the open and compared
    /// files). An open file's digests are asked for here: made in the background, its run has them
    /// once they are in place.
    pub fn runs(&self) -> Vec<store::Run> {
        self.files.get();
        self.compared.get();
        let runs = store::runs();
        let ui = *self;
        for i in runs.iter().filter(|r| r.pending).filter_map(|r| r.open) {
            build::digests(i, Rc::new(move || ui.compared.update(|n| *n += 1)));
        }
        runs
    }

    /// Runs a comparison can take (open files and files read for comparing; tracks both).
    pub fn run_count(&self) -> usize {
        self.files.get();
        self.compared.get();
        store::run_count()
    }

    /// The view to show: the one picked, or what can be shown while no snapshot is open whole
    /// (Compare, or Steps).
    pub fn shown_view(&self) -> View {
        let view = self.view.get();
        let steps = self.step_count() > 0;
        let runs = self.run_count() > 0;
        match view {
            View::Steps if steps => View::Steps,
            View::Compare if runs => View::Compare,
            _ if store_count(*self) > 0 => view,
            _ if runs => View::Compare,
            _ => View::Steps,
        }
    }

    /// Shows `device` of `file`: builds its model (if new) and resets the view to it, with the slider at the
    /// model's detail, before anything draws.
    pub fn select(&self, file: usize, device: i64) {
        let detail = store::with_model(file, device, |m, _| m.blocks.detail);
        self.pinned.set(None);
        self.hovered.set(None);
        self.viewport.set(None);
        self.selected_event.set(0);
        self.highlight_category.set(None);
        self.highlight.set(None);
        self.analysis_event.set(None);
        self.detail.set(detail.unwrap_or(1.0));
        self.file.set(file);
        self.device.set(device);
        // Another device's model is built in the background the first time it is shown.
        let ui = *self;
        self.when_built(file, device, Part::Model, move || {
            if (ui.file.get_untracked(), ui.device.get_untracked()) != (file, device) {
                return;
            }
            if detail.is_none() {
                if let Some(d) = store::with_model(file, device, |m, _| m.blocks.detail) {
                    ui.detail.set(d);
                }
            }
            ui.highlight_compare_path(file, device);
        });
    }

    /// A call path picked in the Compare view's diff: its allocations in this run.
    fn highlight_compare_path(&self, file: usize, device: i64) {
        if let Some(path) = self.compare_path.get_untracked() {
            use memograph_snapshot::analysis::live_set::allocations_under;
            let under = store::with_model(file, device, |m, s| {
                allocations_under(s, &m.blocks.lifetimes, &path, true)
            });
            if let Some(under) = under.filter(|u| !u.is_empty()) {
                let label = path.last().map_or("call path", |f| f.as_str());
                let label = crate::view_model::analysis::short_frame(label);
                self.highlight.set(Some(Highlight::new(label, under)));
            }
        }
    }

    /// The current file and device, when a file is open (tracks `files`, `file`, `device`, and `built`:
    /// what reads the model is read again when a part of it is built).
    pub fn current(&self) -> Option<(usize, i64)> {
        self.files.get();
        self.built.get();
        let (file, device) = (self.file.get(), self.device.get());
        (file < store::count()).then_some((file, device))
    }

    /// Builds `part` of device `device` of file `file` in the background (see `load::build`); what
    /// reads the model is read again once it is in place. Views ask on every read while a part is
    /// missing: a part already being built is not asked for again (one bump of `built` per part).
    pub fn build(&self, file: usize, device: i64, part: Part) {
        if build::is_building(file, device, part) {
            return;
        }
        let ui = *self;
        build::request(
            file,
            device,
            part,
            Rc::new(move || ui.built.update(|n| *n += 1)),
        );
    }

    /// Calls `then` once `part` of device `device` of file `file` is in place: now if it is, else once
    /// built in the background (as [`Self::build`]).
    pub fn when_built(&self, file: usize, device: i64, part: Part, then: impl Fn() + 'static) {
        if build::is_built(file, device, part) {
            return then();
        }
        let ui = *self;
        let done = move || {
            ui.built.update(|n| *n += 1);
            then();
        };
        build::request(file, device, part, Rc::new(done));
    }

    /// The loading pipeline's view of this state.
    fn listener(&self) -> Rc<dyn Listener> {
        Rc::new(*self)
    }

    /// Closes the current file; the next one (or the previous, when it was the last) is shown.
    fn close_current(&self) {
        let file = self.file.get_untracked();
        store::close(file);
        self.files.update(|n| *n += 1);
        match store::count() {
            0 => {
                self.pinned.set(None);
                self.hovered.set(None);
                self.phase.set(Phase::Empty);
            }
            n => {
                let next = file.min(n - 1);
                let device = store::with_file(next, |f| f.snapshot.default_device().unwrap_or(0))
                    .unwrap_or(0);
                self.select(next, device);
            }
        }
    }

    /// Shows the timeline of run `name` (`size` bytes): selected when its file is open (on `device`,
    /// else its default device), else its file opened whole, kept from the comparison or the step
    /// records' folder; opening is a new choice, so what failed before is no longer said. Whether it
    /// was open.
    fn show_run(&self, name: String, size: u64, device: Option<i64>) -> bool {
        let open = store::list()
            .iter()
            .position(|(n, b, _)| *n == name && *b == size);
        self.view.set(View::Timeline);
        match open {
            Some(i) => {
                let device = device.unwrap_or_else(|| {
                    store::with_file(i, |f| f.snapshot.default_device().unwrap_or(0)).unwrap_or(0)
                });
                self.select(i, device);
            }
            None => {
                if let Some(blob) = store::compared_blob(&name, size) {
                    self.errors.set(Vec::new());
                    load::load(self.listener(), name, blob);
                }
            }
        }
        open.is_some()
    }

    /// Stops whatever is being read (see `load::cancel_reading`); the page shows what it has.
    pub fn cancel_reading(&self) {
        load::cancel_reading();
        self.comparing.set((0, 0));
        self.show_what_is_open();
    }

    /// Nothing more loads: the page shows its error, else what is open, else its welcome.
    fn show_what_is_open(&self) {
        self.phase
            .set(if self.errors.with_untracked(|e| !e.is_empty()) {
                Phase::Error
            } else if self.anything_open() {
                Phase::Ready
            } else {
                Phase::Empty
            });
    }
}

impl Listener for Ui {
    fn progress(&self, progress: LoadProgress) {
        self.progress.set(progress);
        self.phase.set(Phase::Loading);
    }

    fn opened(&self, index: usize, device: i64, started: f64) {
        self.load_started.set(started);
        self.select(index, device);
        self.files.update(|n| *n += 1);
        self.phase.set(Phase::Ready);
        share::restore(*self, index);
        // Colours, search and the analyses need them: built while the user looks at the timeline,
        // once the page is idle after its first frames (their slices, 25 ms each, would hold them up).
        // Whatever needs them first builds them at once instead.
        let ui = *self;
        load::when_idle(1000, 200, move || ui.build(index, device, Part::Categories));
    }

    fn failed(&self, name: &str, reason: &str) {
        // Each file that failed of those chosen together is said, not only the last.
        self.errors.update(|e| e.push(format!("{name}: {reason}")));
        self.folder_held_nothing.set(false);
        self.phase.set(Phase::Error);
    }

    fn digested(&self, done: usize, total: usize) {
        let over = done >= total;
        let redraw = redraw_comparison(done, over);
        if redraw {
            self.compared.update(|n| *n += 1);
            share::restore_runs(*self);
        }
        // The count read so far repaints the page: said at most every 100 ms, and with each redraw.
        if redraw || status_due() {
            self.comparing
                .set(if over { (0, 0) } else { (done, total) });
        }
        if over && self.errors.with_untracked(Vec::is_empty) {
            self.phase.set(Phase::Ready);
        }
    }
}

thread_local! {
    /// When the comparison was last redrawn while a batch was read (see [`Redrawn::due`]).
    static REDRAWN: std::cell::Cell<Redrawn> = const { std::cell::Cell::new(Redrawn::NONE) };
}

/// Whether 100 ms have passed since the reading count was last said (and it is said now).
fn status_due() -> bool {
    thread_local! {
        static SAID_AT: std::cell::Cell<f64> = const { std::cell::Cell::new(f64::NEG_INFINITY) };
    }
    let now = js_sys::Date::now();
    SAID_AT.with(|at| {
        let due = now - at.get() >= 100.0;
        if due {
            at.set(now);
        }
        due
    })
}

/// Whether the comparison is redrawn now that `done` files of a batch have ended (`over`: all).
fn redraw_comparison(done: usize, over: bool) -> bool {
    REDRAWN.with(|r| {
        let next = r.get().due(js_sys::Date::now(), done, over);
        if let Some(next) = next {
            r.set(next);
        }
        next.is_some()
    })
}

/// A count that changes whenever the window is resized, for the effects that measure their elements
/// (canvases, the state history's list) to track; the listener goes with the component.
pub(crate) fn window_resizes() -> RwSignal<u32> {
    let resized = RwSignal::new(0u32);
    let listener = window_event_listener(leptos::ev::resize, move |_| resized.update(|r| *r += 1));
    on_cleanup(move || listener.remove());
    resized
}

/// Draws a chart's pointer rule on `rule`, a canvas of its own over `chart` (the pointer moves a
/// line, not every curve), at `at()` on the chart's x axis, whenever that or the chart changes
/// (`redrawn` counts the chart's draws; `plot` is where its last one put the plot), in the colour
/// of the chart's own muted lines.
pub(crate) fn pointer_rule(
    ui: Ui,
    chart: NodeRef<leptos::html::Canvas>,
    rule: NodeRef<leptos::html::Canvas>,
    plot: StoredValue<Option<(memograph_charts::PlotArea, f64)>>,
    redrawn: RwSignal<u32>,
    at: impl Fn() -> Option<f64> + 'static,
) {
    Effect::new(move |_| {
        redrawn.track();
        let hover = at();
        let (Some(chart), Some(el)) = (chart.get_untracked(), rule.get()) else {
            return;
        };
        let color = if ui.dark.get_untracked() {
            memograph_charts::Neutrals::DARK.muted
        } else {
            memograph_charts::Neutrals::LIGHT.muted
        };
        let at = plot
            .get_value()
            .and_then(|(p, dpr)| Some((p.px_of(hover?)?, p.y, dpr)));
        crate::render::charts::draw_rule(&el, &chart, at, color);
    });
}

/// The CSS size (width, height) of `canvas` as a `ResizeObserver` reports it: `None` until it is laid
/// out. A draw that reads it asks the browser for no layout (reading a canvas's `clientWidth` after the
/// page changed lays the page out then and there: 28 ms of a click's task in a comparison of 300 runs,
/// whose table had just changed). The observer runs after the browser's own layout, where reading
/// the size costs nothing.
pub(crate) fn observed_size(canvas: NodeRef<leptos::html::Canvas>) -> RwSignal<Option<(f64, f64)>> {
    use wasm_bindgen::closure::Closure;
    let size = RwSignal::new(None::<(f64, f64)>);
    let seen = Closure::<dyn FnMut(js_sys::Array)>::new(move |_entries: js_sys::Array| {
        if let Some(Some(el)) = canvas.try_get_untracked() {
            let now = Some((f64::from(el.client_width()), f64::from(el.client_height())));
            if size.try_get_untracked() != Some(now) {
                size.try_set(now);
            }
        }
    });
    let observer = web_sys::ResizeObserver::new(seen.as_ref().unchecked_ref()).ok();
    let kept = StoredValue::new_local((observer, seen));
    Effect::new(move |_| {
        if let Some(el) = canvas.get() {
            kept.with_value(|(observer, _)| {
                if let Some(o) = observer {
                    o.disconnect();
                    o.observe(&el);
                }
            });
        }
    });
    on_cleanup(move || {
        let _ = kept.try_with_value(|(observer, _)| observer.as_ref().map(|o| o.disconnect()));
    });
    size
}

/// Where a tooltip goes for the pointer at (`x`, `y`) on `plot`'s canvas (the tooltip's container is
/// the plot): beside the pointer, on the side with more room, so that near the plot's right edge it does
/// not cover the stack panel beside it, nor run off the bottom.
pub(crate) fn tooltip_style(x: f64, y: f64, plot: NodeRef<leptos::html::Canvas>) -> String {
    const GAP: f64 = 14.0;
    let (width, height) = plot.get_untracked().map_or((0.0, 0.0), |c| {
        (c.client_width() as f64, c.client_height() as f64)
    });
    // Along one axis: past the middle, the tooltip ends short of the pointer; else it starts beyond.
    let side = |at: f64, extent: f64| {
        if at > extent / 2.0 {
            (at - GAP, "-100%")
        } else {
            (at + GAP, "0")
        }
    };
    let ((left, shift_x), (top, shift_y)) = (side(x, width), side(y, height));
    // As wide as the room on its side allows (it wraps): a long line beside a pointer near the middle
    // ran off the plot's left edge.
    let room = if shift_x == "0" { width - left } else { left };
    let max_width = (room - 4.0).clamp(160.0, 640.0);
    format!(
        "left:{left}px;top:{top}px;transform:translate({shift_x},{shift_y});max-width:{max_width}px"
    )
}

pub fn start() {
    // The worker loads this same module: there is no document there, and nothing to mount.
    if web_sys::window().is_none() {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_fatal(&info.to_string());
    }));
    leptos::mount::mount_to_body(App);
    // The parsing worker loads its module while the user picks a file.
    load::warm_up();
}

/// A panic is a bug, and the page's state may be half-changed: say so in plain DOM (not through the
/// reactive graph, which may be what broke) and mark `#app` as failed, with index.html's
/// `memographFatal`, which also reports traps without a panic (running out of memory).
fn show_fatal(message: &str) {
    use wasm_bindgen::JsValue;
    let Some(window) = web_sys::window() else {
        return;
    };
    let fatal = js_sys::Reflect::get(&window, &JsValue::from_str("memographFatal")).ok();
    if let Some(fatal) = fatal.and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
        let text = format!("an internal error ({message})");
        let _ = fatal.call1(&JsValue::NULL, &JsValue::from_str(&text));
    }
}

#[component]
fn App() -> impl IntoView {
    let ui = Ui::new();
    // A link's view (the hash) waits for its file; the address bar follows the view from then on.
    share::start(ui);
    // `?url=` loads a snapshot the user linked to.
    if let Some(url) = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|q| web_sys::UrlSearchParams::new_with_str(&q).ok())
        .and_then(|p| p.get("url"))
        .map(|url| url.trim().to_string())
        .filter(|url| !url.is_empty())
    {
        let name = crate::view_model::share::name_from_url(&url);
        load::fetch(ui.listener(), url, name);
    }
    // A one-file page (`memograph html`) carries its snapshots.
    let embedded = load::embedded_files();
    if !embedded.is_empty() {
        open_list(ui, embedded, None);
    }
    Effect::new(move |_| {
        if let Some(body) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.body())
        {
            let _ = body.set_attribute("data-theme", if ui.dark.get() { "dark" } else { "light" });
        }
    });
    // The tab names what it shows, so that tabs of several runs stay apart; index.html's title while
    // nothing is open.
    let document = web_sys::window().and_then(|w| w.document());
    let first_title = document.as_ref().map(|d| d.title()).unwrap_or_default();
    Effect::new(move |_| {
        let title = match ui.anything_open().then(|| ui.shown_view()) {
            None => first_title.clone(),
            Some(View::Compare) => format!("Compare runs ({}) — Memograph", ui.run_count()),
            Some(View::Steps) => "Steps — Memograph".to_string(),
            Some(_) => {
                ui.files.get();
                let name = store::list().into_iter().nth(ui.file.get()).map(|f| f.0);
                name.map_or_else(|| first_title.clone(), |n| format!("{n} — Memograph"))
            }
        };
        if let Some(d) = &document {
            d.set_title(&title);
        }
    });
    // The view shown is built again only when it changes: `shown_view` reads the count of runs,
    // and each file read for a comparison (hundreds, for a job's folder) rebuilt the whole view.
    let view = Memo::new(move |_| ui.shown_view());
    // Files dragged over the page: how many of its elements the drag is in (each child's enter comes
    // before its parent's leave), so that the drop hint shows until the drag leaves the page.
    let dragged_in = RwSignal::new(0i32);
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragged_in.set(0);
        if let Some(transfer) = ev.data_transfer() {
            open_dropped(ui, transfer);
        }
    };
    let on_enter = move |ev: web_sys::DragEvent| {
        if carries_files(&ev) {
            load::expect_file();
            dragged_in.update(|n| *n += 1);
        }
    };
    let on_leave = move |ev: web_sys::DragEvent| {
        if carries_files(&ev) {
            dragged_in.update(|n| *n = (*n - 1).max(0));
        }
    };
    view! {
        <div
            id="app"
            data-state=move || ui.phase.get().name()
            on:dragenter=on_enter
            on:dragleave=on_leave
            on:dragover=|ev: web_sys::DragEvent| ev.prevent_default()
            on:drop=on_drop
        >
            <Show when=move || dragged_in.get() != 0>
                <div class="drop-hint" data-testid="drop-hint">
                    <span>"Drop snapshots, step records or a folder to open them · nothing is uploaded"</span>
                </div>
            </Show>
            <Header ui=ui />
            <shortcuts::Shortcuts open=ui.shortcuts />
            <Loading ui=ui />
            <ErrorPanel ui=ui />
            <Show when=move || !ui.anything_open() && ui.phase.get() != Phase::Loading>
                <Welcome ui=ui />
            </Show>
            <Show when=move || ui.anything_open()>
                <main class="views">
                    {move || shown(ui, view.get())}
                </main>
            </Show>
        </div>
    }
}

/// The view `view`, each built by a function of its own: inlined into one, the seven made a function
/// the browser compiles whole the first time any view is shown, in the task that builds the page's
/// views as a file opens (on a page not yet warm, tens of milliseconds of it).
fn shown(ui: Ui, view: View) -> AnyView {
    #[inline(never)]
    fn timeline(ui: Ui, segments: bool) -> AnyView {
        view! { <timeline_view::TimelineView ui=ui segments=segments /> }.into_any()
    }
    #[inline(never)]
    fn analysis(ui: Ui) -> AnyView {
        view! { <analysis_view::AnalysisView ui=ui /> }.into_any()
    }
    #[inline(never)]
    fn state(ui: Ui) -> AnyView {
        view! { <state_view::StateView ui=ui /> }.into_any()
    }
    #[inline(never)]
    fn settings(ui: Ui) -> AnyView {
        view! { <settings_view::SettingsView ui=ui /> }.into_any()
    }
    #[inline(never)]
    fn compare(ui: Ui) -> AnyView {
        view! { <compare_view::CompareView ui=ui /> }.into_any()
    }
    #[inline(never)]
    fn steps(ui: Ui) -> AnyView {
        view! { <steps_view::StepsView ui=ui /> }.into_any()
    }
    match view {
        View::Timeline => timeline(ui, false),
        View::Analysis => analysis(ui),
        View::Segments => timeline(ui, true),
        View::State => state(ui),
        View::Settings => settings(ui),
        View::Compare => compare(ui),
        View::Steps => steps(ui),
    }
}

fn store_count(ui: Ui) -> usize {
    ui.files.get();
    store::count()
}
