//! # memograph-snapshot
//!
//! The engine of Memograph: reads the pickle that `torch.cuda.memory._dump_snapshot()` writes into a
//! compact [`Snapshot`], and computes the analyses every view needs as pure functions of it.
//!
//! ```no_run
//! let bytes = std::fs::read("snapshot.pickle").unwrap();
//! let snapshot = memograph_snapshot::read_bytes(&bytes).unwrap();
//! for summary in memograph_snapshot::analysis::summary::summarize(&snapshot) {
//!     println!("device {}: peak {} bytes", summary.device, summary.timeline_peak_bytes);
//! }
//! ```
//!
//! ## Invariants
//! - **It never executes pickle code.** Opcodes that import or call (`GLOBAL`, `REDUCE`, `BUILD`, …) are an
//!   error naming the opcode and its offset; nothing is ever looked up or called.
//! - **It never panics on input.** Every length is checked against the bytes left, nesting, stack, memo and
//!   string sizes are bounded, gzip output is bounded relative to its input. Bad input is a [`ReadError`].
//! - **It does no I/O** beyond reading the [`std::io::Read`] it is handed, and builds for `wasm32`.
//! - **Analyses are pure functions** of a [`Snapshot`] (see [`analysis`]).
//!
//! ## Why not serde-pickle
//! Snapshots share frame dicts and frame lists through the pickle memo: 2.6 MB of pickle holds ~1 M frame
//! references to ~500 distinct frames. serde-pickle 1.2 copies memoised values on every reference, fails
//! with `Syntax(Recursive)` on nested sharing (10 of 12 real snapshots; minimal repro
//! `L=['abc']; pickle.dumps([L, L])`) and, patched, needs ~1 KB per frame reference. Our machine keeps memo
//! entries as handles and interns frames and stacks as it goes (see `src/pickle/`).

pub mod analysis;
pub mod batch;
pub mod codec;
mod error;
pub mod format;
mod input;
mod json;
pub mod model;
pub mod names;
mod pickle;
mod push;
mod schema;
pub mod steps;
pub mod synth;
#[doc(hidden)]
pub mod testing;

use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

pub use error::ReadError;
pub use input::{is_gzip, MAX_GZIP_RATIO};
pub use model::*;
pub use push::{Leftovers, PushReader};

/// Reads a snapshot from a byte slice (plain or gzip).
pub fn read_bytes(bytes: &[u8]) -> Result<Snapshot, ReadError> {
    read_snapshot(bytes, Some(bytes.len() as u64), None)
}

/// Reads a snapshot from any reader, in chunks.
///
/// `total_len` is the input's length when known (lets the reader reject lengths that point past the end
/// before reading them); `progress` is called with the count of input bytes consumed so far.
pub fn read_snapshot<R: Read>(
    reader: R,
    total_len: Option<u64>,
    progress: Option<Box<dyn FnMut(u64)>>,
) -> Result<Snapshot, ReadError> {
    let count = Rc::new(Cell::new(0u64));
    let mut counting = input::Counting {
        inner: reader,
        count: count.clone(),
        progress,
    };
    // The first bytes tell gzip from plain, and name what a file that is no pickle is.
    let mut head = [0u8; json::DECIDING];
    let got = read_up_to(&mut counting, &mut head)?;
    let prefixed = (&head[..got]).chain(counting);
    if input::is_gzip(&head[..got]) {
        let decoder = flate2::read::MultiGzDecoder::new(prefixed);
        let mut guard = input::BombGuard {
            inner: decoder,
            compressed: count,
            produced: 0,
        };
        // What the stream holds (a pickle or JSON) shows in its first decompressed bytes.
        let mut first = [0u8; json::DECIDING];
        let got = read_up_to(&mut guard, &mut first)?;
        let body = (&first[..got]).chain(guard);
        if json::looks_like_json(&first[..got]) {
            return read_json(body, None);
        }
        read_pickle(body, None, true)
    } else if json::looks_like_json(&head[..got]) {
        read_json(prefixed, total_len)
    } else {
        read_pickle(prefixed, total_len, false)
    }
}

/// Reads until `buf` is full or the input ends; returns how many bytes it holds.
fn read_up_to<R: Read>(reader: &mut R, buf: &mut [u8]) -> Result<usize, ReadError> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(pickle::source::io_error(e)),
        }
    }
    Ok(got)
}

/// A snapshot saved as JSON: read whole, translated into the pickle CPython would write (see `json`).
fn read_json<R: Read>(mut reader: R, total_len: Option<u64>) -> Result<Snapshot, ReadError> {
    let mut text = model::presized(usize::try_from(total_len.unwrap_or(0)).unwrap_or(0));
    reader
        .read_to_end(&mut text)
        .map_err(pickle::source::io_error)?;
    snapshot_of_json(&text)
}

/// The snapshot in a complete JSON text.
pub(crate) fn snapshot_of_json(text: &[u8]) -> Result<Snapshot, ReadError> {
    let pickle = json::to_pickle(text)?;
    let mut snapshot = read_pickle(pickle.as_slice(), Some(pickle.len() as u64), false)?;
    snapshot.protocol = model::FROM_JSON;
    Ok(snapshot)
}

/// `to_the_end`: read the input to its end after `STOP` or a pickle error (gzip, so that a corrupt or cut
/// stream is an error wherever it is); otherwise bytes after `STOP` are never read, as `pickle.load` does.
fn read_pickle<R: Read>(
    reader: R,
    total_len: Option<u64>,
    to_the_end: bool,
) -> Result<Snapshot, ReadError> {
    let mut src = pickle::source::Source::new(reader, total_len);
    let ran = pickle::run(&mut src, total_len);
    if to_the_end {
        let checked = src.skip_to_end();
        match (&ran, checked) {
            (_, Ok(())) => {}
            (Ok(_), Err(e)) => return Err(e),
            // A damaged gzip stream explains whatever the machine made of its output: a corrupt stream
            // wins over the machine's error, wherever the damage lies; the bomb guard still ends the
            // check (the push reader follows the same rules).
            (Err(_), Err(e @ ReadError::Gzip { .. })) => return Err(e),
            (Err(_), Err(_)) => {}
        }
    }
    let (mut machine, root) = ran?;
    schema::build(&mut machine, root)
}
