//! What the user opens (picked files, a folder, a drop, the example) and where it goes: step records to
//! the Steps view, one snapshot opened whole, several read for comparison; a file picked again is not
//! read again.

use leptos::prelude::*;
use memograph_snapshot::names;
use wasm_bindgen::JsCast;

use super::{share, store_count, Phase, Ui, View};
use crate::load::{self, store, Listener, LoadProgress};

/// Opens what the user picked: one file is opened whole; several are read for comparison (only what
/// a comparison needs is kept of each) and the Compare view shows them.
pub(super) fn open_files(ui: Ui, files: web_sys::FileList) {
    let files: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.item(i)).collect();
    open_list(ui, files.into_iter().map(|f| (f.name(), f)).collect(), None);
}

/// `files` as (name, file); `folder`: the name of the folder (or folders) they come from, where
/// only snapshot-like and text names count. Step records (recognised by their first bytes) open in
/// the Steps view; of the snapshots, one alone is opened whole, and several are read for comparison.
/// A folder with nothing of either is said, not passed over.
pub(super) fn open_list(ui: Ui, files: Vec<(String, web_sys::File)>, folder: Option<String>) {
    let in_folder = files.len();
    let mut files: Vec<(String, web_sys::File)> = if folder.is_some() {
        files
            .into_iter()
            .filter(|(name, _)| names::snapshot_named(name) || names::text_named(name))
            .collect()
    } else {
        files
    };
    if folder.is_some() {
        // A folder lists its files in no useful order: by name, numbers as numbers (rank2 < rank10).
        files.sort_by(|a, b| names::natural_order(&a.0, &b.0));
    }
    // One file named as a snapshot opens at once: its parse starts before the page draws its loading
    // state (on a page that has just opened, that takes tens of milliseconds), not after it.
    if folder.is_none() && files.len() == 1 && names::pickle_named(&files[0].0) {
        ui.errors.set(Vec::new());
        return open_snapshots(ui, files, false);
    }
    let Some((first, _)) = files.first() else {
        if let Some(folder) = folder {
            nothing_in(ui, &folder, in_folder);
        }
        return;
    };
    // Loading from now on (telling step records from snapshots takes a read of a file's start, unless
    // its name says it is a pickle).
    ui.errors.set(Vec::new());
    ui.progress.set(LoadProgress {
        name: first.clone(),
        ..LoadProgress::default()
    });
    ui.phase.set(Phase::Loading);
    leptos::task::spawn_local(async move {
        // Each file's name as it came (what a step-record file picked again is known by) and as
        // shown.
        let files: Vec<(String, String, web_sys::File)> = if folder.is_some() {
            shown_in_folders(files).await
        } else {
            files.into_iter().map(|(n, f)| (n.clone(), n, f)).collect()
        };
        let mut snapshots = Vec::new();
        let mut steps = 0;
        for (came_as, name, file) in files {
            // A pickle's name says what it is: its start is not read first (on a page that has just
            // opened, that read holds the load up by tens of milliseconds).
            let step_records = !names::pickle_named(&name)
                && memograph_snapshot::steps::looks_like_steps(&load::head_of(&file).await);
            let picked = step_records
                .then(|| load::modified(&file).map(|m| (came_as, load::named_size(&file), m)))
                .flatten();
            if step_records && picked.as_ref().is_some_and(store::steps_known) {
                steps += 1;
            } else if step_records {
                match load::read_steps(&name, &file).await {
                    Ok(f) => {
                        store::add_steps(f, &name, picked);
                        steps += 1;
                    }
                    Err(reason) => ui.listener().failed(&name, &reason),
                }
            } else if folder.is_none() || names::snapshot_named(&name) {
                snapshots.push((name, file));
            }
        }
        if let Some(folder) = &folder {
            let failed = ui.errors.with_untracked(|e| !e.is_empty());
            if steps == 0 && snapshots.is_empty() && !failed {
                nothing_in(ui, folder, in_folder);
            }
        }
        if steps > 0 {
            ui.steps.update(|n| *n += 1);
            if snapshots.is_empty() {
                ui.view.set(View::Steps);
            }
        }
        if snapshots.is_empty() {
            ui.show_what_is_open();
        }
        open_snapshots(ui, snapshots, folder.is_some());
        // After the snapshots' view is set (Compare, as their batch begins): a link of the Steps view
        // shows Steps from the start.
        if steps > 0 {
            share::restore_steps(ui);
        }
    });
}

/// A folder batch's files as (the name each came with, the name it is shown by, the file): the
/// second of two folders of one name (two runs' `memograph_snapshots`) is shown numbered, its
/// snapshots and step records with it; a folder picked again keeps the name its files were shown
/// under (see `view_model::compare::shown_paths`). Which files are seen already is asked in the
/// page's slices (`load::Pauser`): a file whose name one open or compared shows is asked its size and time,
/// which the browser asks the disk for the first time (a folder of 300 picked again, or another
/// run's of the same names: one task of 160–210 ms).
async fn shown_in_folders(
    files: Vec<(String, web_sys::File)>,
) -> Vec<(String, String, web_sys::File)> {
    use memograph_snapshot::batch::Pause;
    let mut seen: Vec<Option<String>> = Vec::with_capacity(files.len());
    let mut pauser = load::Pauser::new();
    for (name, f) in &files {
        pauser.pause().await;
        seen.push(
            store::known(name, f)
                .map(|(_, shown)| shown)
                .or_else(|| load::pending(name, f))
                .or_else(|| store::steps_known_as(name, f)),
        );
    }
    let mut in_use = load::names_in_use(None);
    in_use.extend(store::step_file_names());
    let batch: Vec<(&str, Option<&str>)> = files
        .iter()
        .zip(&seen)
        .map(|((name, _), s)| (name.as_str(), s.as_deref()))
        .collect();
    let shown = crate::view_model::compare::shown_paths(&batch, &in_use);
    files
        .into_iter()
        .zip(shown)
        .map(|((name, f), shown)| match shown {
            Some(shown) => {
                load::shown_instead(&name, &shown);
                (name, shown, f)
            }
            None => (name.clone(), name, f),
        })
        .collect()
}

/// `folder` (a name, or empty where none is known) held `files` files, no snapshot or step records
/// among them: said in the error panel, with what the page looks for.
fn nothing_in(ui: Ui, folder: &str, files: usize) {
    let folder = if folder.is_empty() {
        "The folder"
    } else {
        folder
    };
    let looked_for = format!(
        "snapshots: {}; step records: {}",
        names::SNAPSHOT_NAMES,
        names::STEP_RECORDS
    );
    let reason = match files {
        0 => "no files in it".to_string(),
        1 => format!("its one file is neither a snapshot nor step records ({looked_for})"),
        n => format!(
            "no snapshots or step records among its {} ({looked_for})",
            memograph_snapshot::format::count(n as u64, "file", "files")
        ),
    };
    ui.errors.set(Vec::new());
    ui.failed(folder, &reason);
    ui.folder_held_nothing.set(true);
}

/// The first `shown` of `names`, and how many more there are ("a, b, c and 61 more").
pub(super) fn some_of(names: &[String], shown: usize) -> String {
    let listed = names[..names.len().min(shown)].join(", ");
    match names.len().saturating_sub(shown) {
        0 => listed,
        more => format!("{listed} and {more} more"),
    }
}

/// The bundled example, as a file the user chose: what failed before is no longer said.
pub(super) fn open_example(ui: Ui) {
    ui.errors.set(Vec::new());
    load::load_example(ui.listener());
}

fn open_snapshots(ui: Ui, files: Vec<(String, web_sys::File)>, folder: bool) {
    // A file picked again (the same name, size and time of change) is not read again: one open is
    // shown, one being read is waited for, and one already compared keeps its row (a second would
    // share its name and size, by which a row's Open and ✕ find it).
    let reading = |(name, f): &(String, web_sys::File)| load::pending(name, f);
    let known = |(name, f): &(String, web_sys::File)| store::known(name, f);
    if let ([one], false) = (&files[..], folder) {
        if let Some((store::Known::Open(i), _)) = known(one) {
            let device =
                store::with_file(i, |f| f.snapshot.default_device().unwrap_or(0)).unwrap_or(0);
            ui.select(i, device);
            ui.phase.set(Phase::Ready);
            if ui.view.get_untracked() == View::Compare {
                ui.view.set(View::Timeline);
            }
            return;
        }
        if reading(one).is_some() {
            return;
        }
    }
    let picked = files.len();
    let files: Vec<(String, web_sys::File)> = if picked > 1 || folder {
        files
            .into_iter()
            .filter(|f| known(f).is_none() && reading(f).is_none())
            .collect()
    } else {
        files
    };
    if files.is_empty() && picked > 0 {
        ui.view.set(View::Compare);
        ui.show_what_is_open();
        return;
    }
    match files.len() {
        0 => {}
        1 if !folder && picked == 1 => {
            let (name, f) = files.into_iter().next().expect("one file");
            load::load(ui.listener(), name, f.unchecked_into());
        }
        n => {
            if store_count(ui) == 0 {
                ui.phase.set(Phase::Loading);
                ui.progress.set(LoadProgress {
                    name: format!(
                        "reading {} to compare",
                        memograph_snapshot::format::count(n as u64, "file", "files")
                    ),
                    ..LoadProgress::default()
                });
            }
            ui.comparing
                .update(|(done, total)| *total = (*total).max(*done) + n);
            ui.view.set(View::Compare);
            let blobs = files
                .into_iter()
                .map(|(name, f)| (name, f.unchecked_into()))
                .collect();
            load::compare(ui.listener(), blobs);
        }
    }
}

/// A drop: folders are walked whole (index.html's `memographDroppedFiles`); plain files as picked.
pub(super) fn open_dropped(ui: Ui, transfer: web_sys::DataTransfer) {
    use wasm_bindgen::JsValue;
    let walker = web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &JsValue::from_str("memographDroppedFiles")).ok())
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    let walked = walker
        .and_then(|f| f.call1(&JsValue::NULL, &transfer).ok())
        .and_then(|p| p.dyn_into::<js_sys::Promise>().ok());
    let Some(walked) = walked else {
        if let Some(files) = transfer.files() {
            open_files(ui, files);
        }
        return;
    };
    leptos::task::spawn_local(async move {
        let Ok(result) = wasm_bindgen_futures::JsFuture::from(walked).await else {
            return;
        };
        let get = |v: &JsValue, k: &str| {
            js_sys::Reflect::get(v, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
        };
        let folder = get(&result, "folder").as_bool().unwrap_or(false);
        let folders: js_sys::Array = get(&result, "folders").dyn_into().unwrap_or_default();
        let folders: Vec<String> = folders.iter().filter_map(|f| f.as_string()).collect();
        let list: js_sys::Array = get(&result, "files").unchecked_into();
        let files = list
            .iter()
            .filter_map(|pair| {
                let pair: js_sys::Array = pair.dyn_into().ok()?;
                let file: web_sys::File = pair.get(0).dyn_into().ok()?;
                let path = pair.get(1).as_string().unwrap_or_else(|| file.name());
                Some((path.trim_start_matches('/').to_string(), file))
            })
            .collect();
        open_list(ui, files, folder.then(|| folders.join(", ")));
    });
}

/// Whether a drag brings files (not text or a link dragged within the page).
pub(super) fn carries_files(ev: &web_sys::DragEvent) -> bool {
    ev.data_transfer().is_some_and(|t| {
        t.types()
            .iter()
            .any(|k| k.as_string().as_deref() == Some("Files"))
    })
}
