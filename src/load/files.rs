//! What the page knows of a file beside its bytes: the name it is shown by and the one it came with,
//! its size and time of change (a file picked again is known), whether a tab can hold it, its first
//! bytes, step records read whole, and the files a one-file page (`memograph html`) carries.

use std::cell::RefCell;
use std::collections::HashSet;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::Blob;

thread_local! {
    /// The name each file shown by a numbered name came with (see [`came_as`]).
    static CAME_AS: RefCell<std::collections::HashMap<String, String>> = RefCell::default();
}

/// A field of `window.memographEmbedded`, which a one-file page (`memograph html`) sets before the
/// module starts: the worker's data: URL, the compiled wasm module and the snapshots it carries.
pub fn embedded_field(name: &str) -> Option<JsValue> {
    let window = web_sys::window()?;
    let embedded = js_sys::Reflect::get(&window, &JsValue::from_str("memographEmbedded")).ok()?;
    if embedded.is_undefined() || embedded.is_null() {
        return None;
    }
    js_sys::Reflect::get(&embedded, &JsValue::from_str(name))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

/// The files a one-file page carries, in its order.
pub fn embedded_files() -> Vec<(String, web_sys::File)> {
    let Some(files) = embedded_field("files") else {
        return Vec::new();
    };
    js_sys::Array::from(&files)
        .iter()
        .filter_map(|f| f.dyn_into::<web_sys::File>().ok())
        .map(|f| (f.name(), f))
        .collect()
}

/// `name`, or where another file is shown by it already (`used`: open, compared, being read; see
/// [`names_in_use`](super::page::names_in_use)), `name` numbered (`run (2).pickle`: see
/// `memograph_snapshot::names::numbered`): two folders of one name hold files of one name, and the
/// browser gives a picked file no path. The name it came with is kept (see [`came_as`]), so that the
/// file picked again is known. The name is in `used` from then on.
pub(super) fn distinct(name: String, used: &mut HashSet<String>) -> String {
    let shown = memograph_snapshot::names::free_name(&name, |n| used.contains(n));
    if shown != name {
        shown_instead(&name, &shown);
    }
    used.insert(shown.clone());
    shown
}

/// Notes that a file that came named `name` is shown as `shown`.
pub fn shown_instead(name: &str, shown: &str) {
    let came = came_as(name);
    CAME_AS.with(|c| c.borrow_mut().insert(shown.to_string(), came));
}

/// The name a file shown as `shown` came with: `shown` itself unless it was numbered.
fn came_as(shown: &str) -> String {
    CAME_AS
        .with(|c| c.borrow().get(shown).cloned())
        .unwrap_or_else(|| shown.to_string())
}

/// When a file picked from disk was last changed (a blob fetched from a link has no such time). The
/// browser may ask the disk each time a file of a picked folder is asked (about 0.1 ms each; a folder
/// of 300 files asked three times each took 109 ms of the task that picked it): the time is kept on
/// the file the first time.
pub fn modified(blob: &Blob) -> Option<f64> {
    const KEPT: &str = "memographModified";
    let file = blob.dyn_ref::<web_sys::File>()?;
    if let Some(kept) = js_sys::Reflect::get(file, &JsValue::from_str(KEPT))
        .ok()
        .and_then(|v| v.as_f64())
    {
        return Some(kept);
    }
    let time = file.last_modified();
    let _ = js_sys::Reflect::set(file, &JsValue::from_str(KEPT), &JsValue::from_f64(time));
    Some(time)
}

/// Whether the file `name` (`blob`) is another one seen before (`other_name`, its size and time of
/// change): the same name (as it came: see [`came_as`]), size and time, never a file without a time
/// (one fetched from a link). The size and time are asked in that order, and only as far as the
/// answer needs: the browser asks the disk for a picked file's the first time (see [`modified`]),
/// and most names differ.
pub fn same_file(
    name: &str,
    blob: &Blob,
    other_name: &str,
    other_bytes: impl FnOnce() -> u64,
    other_time: impl FnOnce() -> Option<f64>,
) -> bool {
    let same_name = other_name == name
        || CAME_AS.with(|c| {
            let c = c.borrow();
            let came = |n| c.get(n).map_or(n, String::as_str);
            !c.is_empty() && came(other_name) == came(name)
        });
    same_name && other_bytes() == named_size(blob) && {
        let time = other_time();
        time.is_some() && time == modified(blob)
    }
}

/// The size a file is named by: its own, or for one a one-file page carries compressed
/// (`memograph html`), the size it had (the page's bootstrap sets `memographSize`).
pub fn named_size(blob: &Blob) -> u64 {
    js_sys::Reflect::get(blob, &JsValue::from_str("memographSize"))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or_else(|| blob.size()) as u64
}

/// Why a blob is too big for a tab, if it is.
pub(super) fn check_size(blob: &Blob) -> Result<(), String> {
    if blob.size() <= super::MAX_FILE_BYTES {
        return Ok(());
    }
    Err(format!(
        "{} is more than a browser tab can hold (its memory ends at 4 GiB); \
         `memograph summary` and `memograph report` read it on the command line, or record \
         fewer entries (a smaller max_entries)",
        memograph_snapshot::format::bytes(blob.size() as u64)
    ))
}

/// The first 64 KiB of `blob` (empty when it cannot be read), to tell step records from snapshots.
pub async fn head_of(blob: &Blob) -> Vec<u8> {
    first_bytes(blob, 65536.0).await
}

async fn first_bytes(blob: &Blob, n: f64) -> Vec<u8> {
    let Ok(head) = blob.slice_with_f64_and_f64(0.0, n) else {
        return Vec::new();
    };
    match JsFuture::from(head.array_buffer()).await {
        Ok(buffer) => Uint8Array::new(&buffer).to_vec(),
        Err(_) => Vec::new(),
    }
}

/// Step records are small next to snapshots; past this a file is refused rather than read whole.
const MAX_STEP_FILE_BYTES: f64 = 512.0 * 1024.0 * 1024.0;

/// Reads a step-record file whole and parses it (see `memograph_snapshot::steps`).
pub async fn read_steps(
    name: &str,
    blob: &Blob,
) -> Result<memograph_snapshot::steps::StepFile, String> {
    if blob.size() > MAX_STEP_FILE_BYTES {
        return Err(format!(
            "{} of step records is more than the page reads at once; `memograph steps` reads it",
            memograph_snapshot::format::bytes(blob.size() as u64)
        ));
    }
    let buffer = JsFuture::from(blob.array_buffer())
        .await
        .map_err(|_| "the browser could not read the file".to_string())?;
    memograph_snapshot::steps::read_steps(name, &Uint8Array::new(&buffer).to_vec())
}
