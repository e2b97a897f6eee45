//! The open files and their per-device models. Heavy and not reactive: it lives here, outside the
//! reactive graph; components see a generation counter that changes when it does.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use memograph_snapshot::analysis::compare::Digest;
use memograph_snapshot::analysis::trace_steps::{step_runs_of, unrecorded};
use memograph_snapshot::steps::{merge, StepFile, StepRun};
use memograph_snapshot::Snapshot;

use crate::view_model::compare::SharedDigest;
use crate::view_model::DeviceModel;

pub struct OpenFile {
    /// Never reused while the page lives: what a part built in the background finds its file by (an
    /// index moves when an earlier file closes).
    pub id: u64,
    pub name: String,
    pub bytes: u64,
    /// A hash of its first MiB (`view_model::share::HeadHash`), when it could be read.
    pub head: Option<String>,
    /// When the file was last changed (`File.lastModified`), for a file picked from disk.
    pub modified: Option<f64>,
    /// Shared with parts being built in the background (see `load::build`).
    pub snapshot: Rc<Snapshot>,
    pub devices: Vec<i64>,
    pub models: HashMap<i64, DeviceModel>,
    /// Its comparison digests, made in the background when a comparison (or the Steps view) first
    /// asks (see `load::build::digests`).
    pub digests: OnceCell<Vec<SharedDigest>>,
    /// Whether a device's annotations may mark training steps (its digests say whether they do).
    pub marks_steps: bool,
}

/// A file read for a comparison only: its digests, and the file itself to open it whole when asked.
pub struct Compared {
    /// Its place in the order the user gave the files.
    pub order: u64,
    pub name: String,
    pub bytes: u64,
    pub digests: Vec<SharedDigest>,
    pub blob: Option<web_sys::Blob>,
}

/// One run of a comparison: a compared file, or an open one (see [`runs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub name: String,
    pub bytes: u64,
    pub digests: Vec<SharedDigest>,
    /// Its index among the open files, when it is open.
    pub open: Option<usize>,
    /// An open file whose digests are not made yet (none are given until they are).
    pub pending: bool,
}

thread_local! {
    static FILES: RefCell<Vec<OpenFile>> = const { RefCell::new(Vec::new()) };
    static COMPARED: RefCell<Vec<Compared>> = const { RefCell::new(Vec::new()) };
    /// Step-record files (runs and capture manifests), as read, each with its name, and what it is
    /// known by (name, size, time of change) when it was picked from disk.
    static STEP_FILES: RefCell<Vec<(StepFile, String, Option<Picked>)>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

/// A fresh [`OpenFile::id`].
pub fn next_id() -> u64 {
    NEXT_ID.with(|n| {
        n.set(n.get() + 1);
        n.get()
    })
}

/// The index of the open file `id`, while it is open.
pub fn index_of(id: u64) -> Option<usize> {
    FILES.with(|f| f.borrow().iter().position(|o| o.id == id))
}

/// A file picked from disk as the page knows it again: its name, size and time of change.
pub type Picked = (String, u64, f64);

/// Adds step-record file `name`; `picked`: what it is known by, for one picked from disk.
pub fn add_steps(file: StepFile, name: &str, picked: Option<Picked>) {
    STEP_FILES.with(|s| s.borrow_mut().push((file, name.to_string(), picked)));
}

/// The names of the step-record files, in the order they were read.
pub fn step_file_names() -> Vec<String> {
    STEP_FILES.with(|s| s.borrow().iter().map(|(_, n, _)| n.clone()).collect())
}

/// Whether a step-record file of this name, size and time of change is read already (picked
/// again, alone or in its folder): it is not read, nor counted, twice. One changed since is new.
pub fn steps_known(picked: &Picked) -> bool {
    STEP_FILES.with(|s| {
        s.borrow()
            .iter()
            .any(|(_, _, p)| p.as_ref() == Some(picked))
    })
}

/// The name the step-record file `name` (`file`) is shown by, if it is read already (see
/// [`steps_known`]). Its size and time are asked only if a file read came by its name.
pub fn steps_known_as(name: &str, file: &web_sys::Blob) -> Option<String> {
    STEP_FILES.with(|s| {
        s.borrow()
            .iter()
            .find(|(_, _, p)| {
                p.as_ref().is_some_and(|(came, bytes, time)| {
                    super::same_file(name, file, came, || *bytes, || Some(*time))
                })
            })
            .map(|(_, shown, _)| shown.clone())
    })
}

/// Every step run: the step-record files' (manifests merged in: see
/// `memograph_snapshot::steps::merge`), then the training steps the traces of the snapshots of
/// `runs` ([`runs`]) mark, a run per file and device, where no step records of that job are open.
pub fn step_runs(runs: &[Run]) -> Vec<StepRun> {
    let files: Vec<StepFile> =
        STEP_FILES.with(|s| s.borrow().iter().map(|(f, _, _)| f.clone()).collect());
    let mut recorded = merge(files);
    let digests: Vec<&Digest> = runs
        .iter()
        .flat_map(|r| r.digests.iter().map(|d| &**d))
        .collect();
    let traces = merge(vec![StepFile::Runs(step_runs_of(&digests))]);
    recorded.extend(unrecorded(&recorded, traces));
    recorded
}

/// Step-record files, and snapshots whose traces may mark training steps (open, or compared and
/// marking them): what the Steps view can show, counted without making any digest.
pub fn step_sources() -> usize {
    let files = STEP_FILES.with(|s| s.borrow().len());
    let open = FILES.with(|f| f.borrow().iter().filter(|o| o.marks_steps).count());
    let compared = COMPARED.with(|c| {
        c.borrow()
            .iter()
            .filter(|f| f.digests.iter().any(|d| d.steps.is_some()))
            .count()
    });
    files + open + compared
}

pub fn step_file_count() -> usize {
    STEP_FILES.with(|s| s.borrow().len())
}

/// Forgets every step-record file.
pub fn clear_steps() {
    STEP_FILES.with(|s| s.borrow_mut().clear());
}

/// Adds a file read for a comparison, at its place in the order given; its digests are named after it.
pub fn add_compared(
    order: u64,
    name: &str,
    bytes: u64,
    mut digests: Vec<Digest>,
    blob: &web_sys::Blob,
) {
    for d in &mut digests {
        d.name_after(name, bytes);
    }
    COMPARED.with(|c| {
        let mut c = c.borrow_mut();
        let at = c.partition_point(|f| f.order < order);
        c.insert(
            at,
            Compared {
                order,
                name: name.to_string(),
                bytes,
                digests: digests.into_iter().map(SharedDigest::new).collect(),
                blob: Some(blob.clone()),
            },
        )
    });
}

/// Forgets the compared file `name` of `bytes` (an open file of that name stays open).
pub fn remove_compared(name: &str, bytes: u64) {
    COMPARED.with(|c| {
        c.borrow_mut()
            .retain(|f| !(f.name == name && f.bytes == bytes))
    });
}

/// Where a file picked again already is: the same file (name, size and time of its last change)
/// open, or read for a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    Open(usize),
    Compared,
}

/// Whether the file `name` (`blob`) is open or compared already: the same name, size and time of
/// change (never a file without a time of change: one fetched from a link), and the name it is
/// shown by (numbered, for the second of two files of one name: see `load::shown_instead`). Its
/// size and time are asked only of a file whose name is known: the browser asks the disk for them
/// the first time (about 0.35 ms a file; a folder of 300 files picked spent 106 ms there), and a
/// folder of new files needs neither.
pub fn known(name: &str, blob: &web_sys::Blob) -> Option<(Known, String)> {
    let open = FILES.with(|f| {
        f.borrow()
            .iter()
            .enumerate()
            .find(|(_, o)| super::same_file(name, blob, &o.name, || o.bytes, || o.modified))
            .map(|(i, o)| (Known::Open(i), o.name.clone()))
    });
    open.or_else(|| {
        COMPARED.with(|c| {
            c.borrow()
                .iter()
                .find(|f| {
                    super::same_file(
                        name,
                        blob,
                        &f.name,
                        || f.bytes,
                        || f.blob.as_ref().and_then(super::modified),
                    )
                })
                .map(|f| (Known::Compared, f.name.clone()))
        })
    })
}

/// The names the open and compared files are shown by, but that of the compared file `except` (a
/// compared run opened whole keeps its name).
pub fn shown_names(except: Option<&web_sys::Blob>) -> Vec<String> {
    let mut names: Vec<String> =
        FILES.with(|f| f.borrow().iter().map(|o| o.name.clone()).collect());
    COMPARED.with(|c| {
        names.extend(
            c.borrow()
                .iter()
                .filter(|f| except.is_none() || f.blob.as_ref() != except)
                .map(|f| f.name.clone()),
        )
    });
    names
}

/// The file of a compared run, to open it whole.
pub fn compared_blob(name: &str, bytes: u64) -> Option<web_sys::Blob> {
    COMPARED.with(|c| {
        c.borrow()
            .iter()
            .find(|f| f.name == name && f.bytes == bytes)
            .and_then(|f| f.blob.clone())
    })
}

/// How many runs [`runs`] gives (without making any digest).
pub fn run_count() -> usize {
    let open = list();
    COMPARED.with(|c| {
        let c = c.borrow();
        let extra = open
            .iter()
            .filter(|(n, b, _)| !c.iter().any(|f| &f.name == n && f.bytes == *b))
            .count();
        c.len() + extra
    })
}

/// The compared runs' names and sizes, in the order `runs` gives them (no digest is made).
pub fn run_names() -> Vec<(String, u64)> {
    let mut names: Vec<(String, u64)> = COMPARED.with(|c| {
        c.borrow()
            .iter()
            .map(|f| (f.name.clone(), f.bytes))
            .collect()
    });
    for (name, bytes, _) in list() {
        if !names.iter().any(|(n, b)| *n == name && *b == bytes) {
            names.push((name, bytes));
        }
    }
    names
}

/// Every run a comparison can take: the compared files in the order they came, then the open files
/// that are not among them; an open file's without digests until they are made (`pending`).
pub fn runs() -> Vec<Run> {
    let open: Vec<(String, u64)> = list().into_iter().map(|(n, b, _)| (n, b)).collect();
    let index_of = |name: &str, bytes: u64| open.iter().position(|o| o.0 == name && o.1 == bytes);
    let mut runs: Vec<Run> = COMPARED.with(|c| {
        c.borrow()
            .iter()
            .map(|f| Run {
                name: f.name.clone(),
                bytes: f.bytes,
                digests: f.digests.clone(),
                open: index_of(&f.name, f.bytes),
                pending: false,
            })
            .collect()
    });
    for (i, (name, bytes)) in open.iter().enumerate() {
        if runs.iter().any(|r| r.open == Some(i)) {
            continue;
        }
        let digests = FILES.with(|files| files.borrow()[i].digests.get().cloned());
        runs.push(Run {
            name: name.clone(),
            bytes: *bytes,
            pending: digests.is_none(),
            digests: digests.unwrap_or_default(),
            open: Some(i),
        });
    }
    runs
}

/// Takes the digests of the open file `id`, made apart (dropped if it closed meanwhile).
pub fn set_digests(id: u64, digests: Vec<Digest>) {
    FILES.with(|files| {
        if let Some(f) = files.borrow().iter().find(|f| f.id == id) {
            let _ = f
                .digests
                .set(digests.into_iter().map(SharedDigest::new).collect());
        }
    });
}

pub fn add(file: OpenFile) -> usize {
    FILES.with(|f| {
        let mut f = f.borrow_mut();
        f.push(file);
        f.len() - 1
    })
}

/// Closes file `index`: its snapshot and models are freed, and the memory goes back to the allocator for
/// the next file (wasm memory never shrinks, but it is reused). Later files move down by one.
pub fn close(index: usize) {
    let closed = FILES.with(|f| {
        let mut f = f.borrow_mut();
        (index < f.len()).then(|| f.remove(index))
    });
    // Dropped outside the borrow: dropping a big snapshot takes a moment and touches nothing else.
    drop(closed);
}

pub fn count() -> usize {
    FILES.with(|f| f.borrow().len())
}

/// Name, size and devices of each open file.
pub fn list() -> Vec<(String, u64, Vec<i64>)> {
    FILES.with(|f| {
        f.borrow()
            .iter()
            .map(|o| (o.name.clone(), o.bytes, o.devices.clone()))
            .collect()
    })
}

/// The snapshot of the open file `id` and device `device`'s block lifetimes, shared, when its model is
/// made: what a part built in the background reads across its pauses.
pub fn shared(
    id: u64,
    device: i64,
) -> Option<(
    Rc<Snapshot>,
    Rc<memograph_snapshot::analysis::lifetimes::Lifetimes>,
)> {
    with_built_model(id, device, |m, s| (s.clone(), m.blocks.lifetimes.clone()))
}

/// Runs `f` on device `device`'s model of the open file `id`, when it is open and the model is made.
pub fn with_built_model<R>(
    id: u64,
    device: i64,
    f: impl FnOnce(&mut DeviceModel, &Rc<Snapshot>) -> R,
) -> Option<R> {
    FILES.with(|files| {
        let mut files = files.borrow_mut();
        let open = files.iter_mut().find(|o| o.id == id)?;
        let model = open.models.get_mut(&device)?;
        Some(f(model, &open.snapshot))
    })
}

pub fn with_file<R>(file: usize, f: impl FnOnce(&OpenFile) -> R) -> Option<R> {
    FILES.with(|files| files.borrow().get(file).map(f))
}

/// Runs `f` on a device's model, when it is built (the first device's at load; another's in the
/// background when it is first shown: see `load::build`).
pub fn with_model<R>(
    file: usize,
    device: i64,
    f: impl FnOnce(&mut DeviceModel, &Snapshot) -> R,
) -> Option<R> {
    FILES.with(|files| {
        let mut files = files.borrow_mut();
        let open = files.get_mut(file)?;
        let model = open.models.get_mut(&device)?;
        Some(f(model, &open.snapshot))
    })
}

/// The snapshot of the open file `id`, shared, if it has device `device`.
pub fn snapshot_of(id: u64, device: i64) -> Option<Rc<Snapshot>> {
    FILES.with(|files| {
        let files = files.borrow();
        let open = files.iter().find(|o| o.id == id)?;
        open.devices
            .contains(&device)
            .then(|| open.snapshot.clone())
    })
}

/// Takes device `device`'s model of the open file `id`, built apart (kept if one is there already).
pub fn add_model(id: u64, device: i64, model: DeviceModel) -> Option<()> {
    FILES.with(|files| {
        let mut files = files.borrow_mut();
        let open = files.iter_mut().find(|o| o.id == id)?;
        open.models.entry(device).or_insert(model);
        Some(())
    })
}
