//! The page's frame around the views: the header (open buttons, the file, device and view pickers,
//! the link, shortcuts and theme), the loading bar, the error panel and the welcome.

use leptos::prelude::*;

use super::open::{open_example, open_files, open_list, some_of};
use super::{share, store_count, Phase, Ui, View};
use crate::load::{self, store, LoadProgress};

#[component]
pub(super) fn Header(ui: Ui) -> impl IntoView {
    let on_pick = move |ev: web_sys::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            open_files(ui, files);
        }
        input.set_value("");
    };
    // `webkitdirectory` (every browser has it) is no attribute Leptos knows: set on the element.
    let folder = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(input) = folder.get() {
            let _ = input.set_attribute("webkitdirectory", "");
        }
    });
    let on_folder = move |ev: web_sys::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(list) = input.files() {
            let files: Vec<(String, web_sys::File)> = (0..list.length())
                .filter_map(|i| list.item(i))
                .map(|f| {
                    let path = js_sys::Reflect::get(&f, &"webkitRelativePath".into())
                        .ok()
                        .and_then(|p| p.as_string())
                        .filter(|p| !p.is_empty())
                        .unwrap_or_else(|| f.name());
                    (path, f)
                })
                .collect();
            let folder = files.first().map_or(String::new(), |(path, _)| {
                path.split(['/', '\\'])
                    .next()
                    .unwrap_or_default()
                    .to_string()
            });
            open_list(ui, files, Some(folder));
        }
        input.set_value("");
    };
    let files = move || {
        ui.files.get();
        store::list()
    };
    view! {
        <header class="toolbar">
            <span class="brand" title="Memograph: PyTorch CUDA memory snapshots, in your browser">"Memograph"</span>
            <label class="button primary">
                "Open snapshot…"
                <input type="file" multiple accept=".pickle,.pkl,.gz,.json,.jsonl,.csv,.log,.txt,application/octet-stream" on:click=|_| load::expect_file() on:change=on_pick />
            </label>
            <label class="button" title="Open every snapshot in a folder (a sweep, or a job's rank files) to compare them">
                "Open folder…"
                <input type="file" data-testid="open-folder" multiple node_ref=folder on:change=on_folder />
            </label>
            <button class="button" on:click=move |_| open_example(ui)>"Open example"</button>
            <Show when=move || !files().is_empty()>
                // Narrow, so the header stays one row: the whole name is its title.
                <select class="select file-select" data-testid="file-select"
                    title=move || files().get(ui.file.get()).map(|f| format!("{} (open files)", f.0)).unwrap_or_default()
                    on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                        let device = store::with_file(i, |f| f.snapshot.default_device().unwrap_or(0)).unwrap_or(0);
                        ui.select(i, device);
                        ui.phase.set(Phase::Ready);
                    }
                }>
                    {move || files().into_iter().enumerate().map(|(i, (name, bytes, _))| view! {
                        <option value=i.to_string() selected=move || ui.file.get() == i>
                            {format!("{name} ({})", memograph_snapshot::format::bytes(bytes))}
                        </option>
                    }).collect_view()}
                </select>
                <button class="button small" data-testid="close-file" title="Close this file (its memory is reused by the next)"
                    on:click=move |_| ui.close_current()>"Close"</button>
                <select class="select" data-testid="device-select" title="Device" on:change=move |ev| {
                    if let Ok(d) = event_target_value(&ev).parse::<i64>() {
                        ui.select(ui.file.get_untracked(), d);
                    }
                }>
                    {move || {
                        let devices = files().get(ui.file.get()).map(|f| f.2.clone()).unwrap_or_default();
                        devices.into_iter().map(|d| view! {
                            <option value=d.to_string() selected=move || ui.device.get() == d>{format!("cuda:{d}")}</option>
                        }).collect_view()
                    }}
                </select>

            </Show>
            <Show when=move || ui.anything_open()>
                <select class="select" data-testid="view-select" title="View" on:change=move |ev| {
                    let key = event_target_value(&ev);
                    if let Some(v) = View::ALL.into_iter().find(|v| v.key() == key) {
                        // Another view draws other bands: nothing hovered survives it.
                        ui.hovered.set(None);
                        ui.view.set(v);
                    }
                }>
                    {View::ALL.into_iter().map(|v| view! {
                        <option value=v.key() selected=move || ui.shown_view() == v
                            disabled=move || match v {
                                View::Compare => ui.run_count() < 2,
                                View::Steps => ui.step_count() == 0,
                                _ => store_count(ui) == 0,
                            }>{v.label()}</option>
                    }).collect_view()}
                </select>
            </Show>
            <span class="spacer"></span>
            <Show when=move || store_count(ui) != 0>
                <share::CopyLink ui=ui />
            </Show>
            <button class="button icon" data-testid="shortcuts-button" title="Keyboard shortcuts (?)"
                aria-label="Keyboard shortcuts" on:click=move |_| ui.shortcuts.update(|o| *o = !*o)>"?"</button>
            // An icon, so that the header stays one row on a laptop's screen with a file open.
            <button class="button icon" data-testid="theme"
                title=move || if ui.dark.get() { "Light theme" } else { "Dark theme" }
                aria-label=move || if ui.dark.get() { "Light theme" } else { "Dark theme" }
                on:click=move |_| ui.dark.update(|d| *d = !*d)>
                {move || if ui.dark.get() { "☀" } else { "☾" }}
            </button>
        </header>
    }
}

/// The load's progress. Its nodes stay and only their text and transforms change, a whole percent at a
/// time and at most every 100 ms (`load::page`): rebuilt per update, as they were, their style and
/// layout took ~50 ms of the page's thread in a 185 MB load, while the worker's parse needed the
/// machine's cores, and a frame per percent (with a transition between them) still took ~80 ms. The
/// bars are scaled, not sized, so that they move without a layout.
#[component]
pub(super) fn Loading(ui: Ui) -> impl IntoView {
    let fraction = move |bytes: fn(&LoadProgress) -> f64| {
        move || {
            ui.progress.with(|p| {
                let f = if p.total > 0.0 {
                    (bytes(p) / p.total).min(1.0)
                } else {
                    0.0
                };
                format!("scaleX({f:.3})")
            })
        }
    };
    let label = move || {
        ui.progress.with(|p| {
            let percent = |bytes: f64| (bytes / p.total * 100.0).min(100.0);
            if p.total > 0.0 && p.parsed >= p.total {
                format!("{}: building the model…", p.name)
            } else if p.total > 0.0 {
                format!(
                    "{}: parsing {:.0} %  ({} of {}) · read {:.0} %",
                    p.name,
                    percent(p.parsed),
                    memograph_snapshot::format::bytes(p.parsed as u64),
                    memograph_snapshot::format::bytes(p.total as u64),
                    percent(p.read)
                )
            } else {
                p.name.clone()
            }
        })
    };
    view! {
        <Show when=move || ui.phase.get() == Phase::Loading>
            <div class="loading">
                <div class="progress" role="progressbar">
                    <div class="bar read" style:transform=fraction(|p| p.read)></div>
                    <div class="bar" style:transform=fraction(|p| p.parsed)></div>
                </div>
                <div class="loading-row">
                    <div class="progress-label">{label}</div>
                    <button class="button small" data-testid="cancel-load" title="Stop reading (files already open stay)"
                        on:click=move |_| ui.cancel_reading()>"Cancel"</button>
                </div>
            </div>
        </Show>
    }
}

/// The most failures the error panel lists (the rest it counts).
const ERRORS_SHOWN: usize = 8;

#[component]
pub(super) fn ErrorPanel(ui: Ui) -> impl IntoView {
    let heading = move || match ui.errors.with(Vec::len) {
        1 if ui.folder_held_nothing.get() => "Nothing to open in the folder.".to_string(),
        1 => "Could not open the file.".to_string(),
        n => format!("Could not open {n} files."),
    };
    view! {
        <Show when=move || ui.errors.with(|e| !e.is_empty())>
            <div class="error-panel" role="alert">
                <strong>{heading}</strong>
                <div class="error-lines">
                    {move || {
                        let lines = ui.errors.get();
                        // A folder of files that are no snapshots says a few and counts the rest.
                        let more = lines.len().saturating_sub(ERRORS_SHOWN);
                        let shown = lines.into_iter().take(ERRORS_SHOWN);
                        let shown = shown.map(|line| view! { <div data-testid="error">{line}</div> });
                        let more = (more > 0).then(|| view! { <div class="muted">{format!("and {more} more")}</div> });
                        (shown.collect_view(), more)
                    }}
                </div>
                <button class="button small" on:click=move |_| {
                    ui.errors.set(Vec::new());
                    // A file still loading keeps its progress shown.
                    if ui.phase.get_untracked() != Phase::Loading {
                        ui.show_what_is_open();
                    }
                }>"Dismiss"</button>
            </div>
        </Show>
    }
}

#[component]
pub(super) fn Welcome(ui: Ui) -> impl IntoView {
    view! {
        <section class="welcome">
            <h1>"See where your GPU memory goes"</h1>
            <p>
                "Memograph reads PyTorch CUDA memory snapshots entirely in your browser: nothing is uploaded, "
                "no pickle code is ever run, and files of any size open. Drop a snapshot anywhere on this page, "
                "pick one with the button above, or "
                <a href="#" on:click=move |ev| { ev.prevent_default(); open_example(ui); }>"open the example"</a>"."
            </p>
            {move || ui.pending.get().and_then(|p| p.file).map(|(name, size)| view! {
                <p class="notice" data-testid="link-notice">
                    {format!("This link shows a view of {name} ({}). Open that file (nothing is uploaded) and the view is restored.",
                        memograph_snapshot::format::bytes(size))}
                </p>
            })}
            {move || ui.pending.get().filter(|p| p.file.is_none() && !p.runs.is_empty()).map(|p| view! {
                <p class="notice" data-testid="link-notice">
                    {format!("This link compares {}: {}. Open those files together, or their folder (nothing is uploaded), and the comparison is restored.",
                        memograph_snapshot::format::count(p.runs.len() as u64, "run", "runs"),
                        some_of(&p.runs.iter().map(|(n, s)| format!("{n} ({})", memograph_snapshot::format::bytes(*s))).collect::<Vec<_>>(), 6))}
                </p>
            })}
            {move || ui.pending_steps.get().and_then(|p| p.steps).map(|st| view! {
                <p class="notice" data-testid="link-notice-steps">
                    {format!("This link shows the Steps view of {}: {}. Open {} (nothing is uploaded), and the view is restored.",
                        memograph_snapshot::format::count(st.files.len() as u64, "step-record file", "step-record files"),
                        some_of(&st.files, 6),
                        if st.files.len() == 1 { "it" } else { "them together, or their folder" })}
                </p>
            })}
            <h2>"Make a snapshot"</h2>
            <pre class="code">"import torch\n\n"
    "torch.cuda.memory._record_memory_history(max_entries=100_000)\n"
    "# ... run the training steps you want to see ...\n"
    "torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")"</pre>
            <p class="muted">"Plain or gzip-compressed pickles (protocols 0 to 5), or the same snapshot saved as JSON. "
                "Link one with "<code>"?url=https://…/snapshot.pickle"</code>"."</p>
            <p>"Or record one without changing your program (a snapshot at exit, and at any CUDA out-of-memory):"</p>
            <pre class="code">"memograph-capture -- python train.py"</pre>
            <h2>"Compare runs"</h2>
            <p>
                "Open several snapshots at once, or a whole folder (a sweep, or a job's "<code>"rank*_…pickle"</code>
                " files): their peaks side by side with the config their names tell, what grew and where, "
                "which rank is out of line, and which runs fit a GPU of the size you type. Per-step records open "
                "too (memograph-capture's "<code>"rank*_steps.jsonl"</code>", torchtitan and Megatron-LM logs, CSV): "
                "memory step by step, beside the snapshots of the same run."
            </p>
            <p class="muted">"The "<code>"memograph"</code>" command reads the same files on your machine: "
                <code>"memograph summary"</code>", "<code>"report"</code>", "<code>"compare"</code>", "<code>"diff"</code>"."</p>
        </section>
    }
}
