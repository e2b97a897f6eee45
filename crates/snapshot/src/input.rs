//! From raw bytes to a pickle stream: gzip is recognised by its magic bytes (not the file name), and a
//! decompression guard keeps a gzip bomb from exhausting memory or time.

use std::fmt;
use std::io::{self, Read};

/// Decompressed bytes allowed per compressed byte. Real snapshots compress 10–20×.
pub const MAX_GZIP_RATIO: u64 = 100;
/// Decompressed bytes always allowed, whatever the ratio (small files compress better).
const GZIP_SLACK: u64 = 16 << 20;

/// The guard's verdict, carried through `io::Error` to the reader.
#[derive(Debug, Clone)]
pub(crate) struct BombError {
    pub offset: u64,
    compressed: u64,
}

impl fmt::Display for BombError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gzip data expands more than {MAX_GZIP_RATIO}× ({} compressed bytes give over {} bytes; a gzip bomb?)",
            self.compressed, self.offset
        )
    }
}

impl std::error::Error for BombError {}

/// Counts bytes read from the raw input and reports them.
pub(crate) struct Counting<R> {
    pub inner: R,
    pub count: std::rc::Rc<std::cell::Cell<u64>>,
    pub progress: Option<Box<dyn FnMut(u64)>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        if let Some(p) = self.progress.as_mut() {
            p(self.count.get());
        }
        Ok(n)
    }
}

/// Refuses to produce more than [`MAX_GZIP_RATIO`] times the compressed bytes consumed so far.
pub(crate) struct BombGuard<R> {
    pub inner: R,
    pub compressed: std::rc::Rc<std::cell::Cell<u64>>,
    pub produced: u64,
}

impl<R: Read> Read for BombGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.produced += n as u64;
        check_bomb(self.produced, self.compressed.get()).map_err(io::Error::other)?;
        Ok(n)
    }
}

/// The guard's rule: `produced` decompressed bytes from `compressed` input bytes are refused beyond
/// [`MAX_GZIP_RATIO`] (plus a slack for small files).
pub(crate) fn check_bomb(produced: u64, compressed: u64) -> Result<(), BombError> {
    if produced
        > compressed
            .saturating_mul(MAX_GZIP_RATIO)
            .saturating_add(GZIP_SLACK)
    {
        return Err(BombError {
            offset: produced,
            compressed,
        });
    }
    Ok(())
}

impl From<BombError> for crate::ReadError {
    fn from(e: BombError) -> Self {
        crate::ReadError::Limit {
            reason: e.to_string(),
            offset: e.offset,
        }
    }
}

/// True when `head` starts with the gzip magic bytes.
pub fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&[0x1f, 0x8b])
}

/// Names the format of a file that is no pickle, from its first bytes, with what to do instead: the
/// files people drop by mistake next to a snapshot (checkpoints, saved pages, exports).
pub(crate) fn recognise(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let lower = trimmed.to_ascii_lowercase();
    let what = if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        // The first member's name follows the 30-byte local header.
        let name_len = head
            .get(26..28)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize);
        let name = head.get(30..30 + name_len).unwrap_or(&[]);
        if name.ends_with(b".npy") {
            "a NumPy .npz archive"
        } else if name.ends_with(b".pkl")
            || name.ends_with(b"/version")
            || name.ends_with(b"byteorder")
        {
            "a zip archive as torch.save writes (a checkpoint or tensor file); open the pickle that \
             torch.cuda.memory._dump_snapshot() wrote"
        } else {
            "a zip archive; open the pickle that torch.cuda.memory._dump_snapshot() wrote"
        }
    } else if head.starts_with(b"\x93NUMPY") {
        "a NumPy .npy array"
    } else if head.starts_with(b"\x28\xb5\x2f\xfd") {
        "zstd-compressed data; decompress it first (zstd -d), or compress the pickle with gzip, \
         which is read as it is"
    } else if head.starts_with(b"\xfd7zXZ\x00") {
        "xz-compressed data; decompress it first (xz -d), or compress the pickle with gzip, which \
         is read as it is"
    } else if head.starts_with(b"BZh") && head.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)) {
        "bzip2-compressed data; decompress it first (bunzip2), or compress the pickle with gzip, \
         which is read as it is"
    } else if head.starts_with(b"\x04\x22\x4d\x18") {
        "LZ4-compressed data; decompress it first (lz4 -d), or compress the pickle with gzip, \
         which is read as it is"
    } else if head.starts_with(b"7z\xbc\xaf\x27\x1c") {
        "a 7-Zip archive; extract the pickle from it first"
    } else if head.get(257..262) == Some(b"ustar") {
        "a tar archive; extract the pickle from it first"
    } else if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        "an HTML page (a saved web page or a server's error page, not the file itself)"
    } else if lower.starts_with("<?xml") || lower.starts_with("<svg") {
        "an XML or SVG document"
    } else if head.starts_with(b"\x89PNG") {
        "a PNG image"
    } else if head.starts_with(b"%PDF") {
        "a PDF document"
    } else if head.starts_with(b"\x7fELF")
        || [
            b"\xfe\xed\xfa\xce",
            b"\xfe\xed\xfa\xcf",
            b"\xce\xfa\xed\xfe",
            b"\xcf\xfa\xed\xfe",
        ]
        .iter()
        .any(|m| head.starts_with(*m))
    {
        "a program or library (an executable file)"
    } else if head.starts_with(b"\x89HDF\r\n\x1a\n") {
        "an HDF5 file"
    } else if head.starts_with(b"SQLite format 3\x00") {
        "an SQLite database"
    } else {
        return None;
    };
    Some(what.to_string())
}
