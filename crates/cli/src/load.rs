//! Opening a snapshot file, with a progress bar (indicatif) on stderr for big files when stderr is a
//! terminal and `--quiet` was not given; the files a folder stands for; the devices a command left out.

use std::fs::File;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use memograph_snapshot::steps::looks_like_steps;
use memograph_snapshot::{names, read_snapshot, Snapshot};

use crate::Failure;

/// Files at least this big get a progress bar.
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

static QUIET: AtomicBool = AtomicBool::new(false);

/// No progress bars (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Why a folder given where one file is read cannot be.
const FOLDER_REASON: &str =
    "is a folder: name one snapshot in it (summary, compare, report and html take folders)";

/// What a command takes from a folder named among its files.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Files named as snapshots are ([`names::snapshot_named`]).
    Snapshots,
    /// Files named as text whose first bytes are step records ([`looks_like_steps`]).
    Steps,
    /// Both (what a page made by `memograph html` opens).
    Runs,
}

/// `paths` with each folder replaced by the files in it (and in its folders) that a command `holds`,
/// in natural order (rank2 before rank10), as the page's Open folder takes them; files stay as given,
/// each once. A folder with none of them is an error naming it.
pub fn expand(paths: Vec<String>, holds: Holds) -> Result<Vec<String>, Failure> {
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        if !Path::new(&path).is_dir() {
            out.push(path);
            continue;
        }
        let mut found = Vec::new();
        walk(Path::new(&path), &mut found)?;
        let mut kept: Vec<String> = found
            .into_iter()
            // `memograph compare .` names `a/rank0.pickle`, not `./a/rank0.pickle`.
            .map(|f| f.strip_prefix(".").unwrap_or(&f).display().to_string())
            .filter(|f| {
                let steps =
                    || names::text_named(f) && head(f).is_some_and(|h| looks_like_steps(&h));
                match holds {
                    Holds::Snapshots => names::snapshot_named(f),
                    Holds::Steps => steps(),
                    Holds::Runs => names::snapshot_named(f) || steps(),
                }
            })
            .collect();
        if kept.is_empty() {
            let what = match holds {
                Holds::Snapshots | Holds::Runs => {
                    format!("no snapshots in this folder ({})", names::SNAPSHOT_NAMES)
                }
                Holds::Steps => format!("no step records in this folder ({})", names::STEP_RECORDS),
            };
            return Err(Failure(format!("{path}: {what}")));
        }
        kept.sort_by(|a, b| names::natural_order(a, b));
        out.extend(kept);
    }
    // A file named twice (itself and its folder, or by two spellings) is read once, where it first
    // stands.
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p))));
    Ok(out)
}

/// Whether `a` and `b` name the same file (the same path once resolved, or the same text).
pub fn same_file(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Every file below `dir`, hidden ones (`.name`) left out; folders linked to are not followed. A
/// folder that cannot be read is an error naming it.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure(format!("{}: {}", dir.display(), io_reason(&e)));
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type().map_err(fail)?.is_dir() {
            walk(&path, out)?;
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// The first 64 KiB of a file (what tells step records from other text), if it can be read.
fn head(path: &str) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    File::open(path)
        .ok()?
        .take(1 << 16)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

pub fn open(path: &str) -> Result<Snapshot, Failure> {
    let fail = |reason: String| Failure(format!("{path}: {reason}"));
    let file = File::open(path).map_err(|e| fail(io_reason(&e)))?;
    let meta = file.metadata().map_err(|e| fail(io_reason(&e)))?;
    if meta.is_dir() {
        return Err(fail(FOLDER_REASON.into()));
    }
    let len = meta.len();
    // A bar (bytes, MB/s, ETA) on stderr for big files, unless stderr is no terminal or --quiet.
    let bar = (len >= PROGRESS_MIN_BYTES
        && std::io::stderr().is_terminal()
        && !QUIET.load(Ordering::Relaxed))
    .then(|| {
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} {wide_bar} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
            )
            .expect("a valid template"),
        );
        bar.set_message(path.to_string());
        bar
    });
    let progress: Option<Box<dyn FnMut(u64)>> = bar
        .clone()
        .map(|bar| Box::new(move |done: u64| bar.set_position(done)) as Box<dyn FnMut(u64)>);
    let result = read_snapshot(file, Some(len), progress);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result.map_err(|e| fail(e.to_string()))
}

/// The device of `snapshot` a command looks at: `wanted` when given (an error naming the devices the
/// file has if it lacks it), else the default one (the longest trace).
pub fn device_of(
    path: &str,
    snapshot: &memograph_snapshot::Snapshot,
    wanted: Option<i64>,
) -> Result<i64, Failure> {
    let devices = snapshot.devices();
    match wanted {
        Some(d) if devices.contains(&d) => Ok(d),
        Some(d) => Err(Failure(format!(
            "{path}: no device {d} (devices: {})",
            devices
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        None => snapshot
            .default_device()
            .ok_or_else(|| Failure(format!("{path}: no device has segments or trace entries"))),
    }
}

/// [`device_of`], and the devices its default choice left out (none when `wanted` names one).
pub fn device_left_out(
    path: &str,
    snapshot: &memograph_snapshot::Snapshot,
    wanted: Option<i64>,
) -> Result<(i64, Vec<i64>), Failure> {
    let device = device_of(path, snapshot, wanted)?;
    let left_out = match wanted {
        Some(_) => Vec::new(),
        None => snapshot
            .devices()
            .into_iter()
            .filter(|&d| d != device)
            .collect(),
    };
    Ok((device, left_out))
}

/// On stderr (so that JSON stays what it is): the devices of `path` a command did not look at, having
/// taken its default one, and how to ask for them (`ask`); nothing when it left none out.
pub fn note_left_out(path: &str, others: &[i64], verb: &str, ask: &str) {
    if others.is_empty() {
        return;
    }
    let named: Vec<String> = others.iter().map(|d| format!("cuda:{d}")).collect();
    eprintln!(
        "note: {path} also has {} ({verb}: its device with the longest trace; {ask} for the others)",
        named.join(", ")
    );
}

/// Why `path` could not be written or made: "cannot write PATH: no such folder".
pub fn write_failure(path: &std::path::Path, e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    let reason = match e.kind() {
        ErrorKind::NotFound => "no such folder".into(),
        ErrorKind::PermissionDenied => "permission denied".into(),
        ErrorKind::IsADirectory => "a folder is in the way".into(),
        ErrorKind::AlreadyExists | ErrorKind::NotADirectory => "a file is in the way".into(),
        ErrorKind::ReadOnlyFilesystem => "read-only file system".into(),
        ErrorKind::StorageFull => "no space left".into(),
        _ => e.to_string(),
    };
    format!("cannot write {}: {reason}", path.display())
}

pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "is a folder".into(),
        _ => e.to_string(),
    }
}
