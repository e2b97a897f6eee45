//! Opening a snapshot file, with a progress bar on stderr for big files when stderr is a terminal.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::time::Instant;

use memograph_snapshot::{read_snapshot, Snapshot};

use crate::Failure;

/// Files at least this big get a progress bar.
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

pub fn open(path: &str) -> Result<Snapshot, Failure> {
    let fail = |reason: String| Failure(format!("{path}: {reason}"));
    let file = File::open(path).map_err(|e| fail(io_reason(&e)))?;
    let meta = file.metadata().map_err(|e| fail(io_reason(&e)))?;
    if meta.is_dir() {
        return Err(fail("is a directory".into()));
    }
    let len = meta.len();
    let progress: Option<Box<dyn FnMut(u64)>> =
        if len >= PROGRESS_MIN_BYTES && std::io::stderr().is_terminal() {
            let start = Instant::now();
            let mut last = 0u64;
            Some(Box::new(move |done: u64| {
                let pct = done * 100 / len.max(1);
                if pct != last || done == len {
                    last = pct;
                    let secs = start.elapsed().as_secs_f64().max(1e-3);
                    let bar: String = (0..30)
                        .map(|i| if i * 100 / 30 < pct { '█' } else { '░' })
                        .collect();
                    eprint!("\r{bar} {pct:>3}%  {:.0} MB/s ", done as f64 / secs / 1e6);
                    let _ = std::io::stderr().flush();
                }
            }))
        } else {
            None
        };
    let showing = progress.is_some();
    let result = read_snapshot(file, Some(len), progress);
    if showing {
        eprint!("\r{:60}\r", "");
    }
    result.map_err(|e| fail(e.to_string()))
}

pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}
