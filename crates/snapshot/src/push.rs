//! Reading a snapshot from bytes handed over as they arrive (push), where [`crate::read_snapshot`] pulls
//! them from a reader.
//!
//! The page reads a file with the browser's asynchronous stream on one thread while its worker parses on
//! another: the worker cannot block waiting for bytes, so it pushes each piece it receives and the machine
//! runs as far as that piece goes. Whatever the pieces, the result, errors and their offsets included, is
//! the one `read_snapshot` gives on the same bytes. Gzip is checked to its end here, where the pull reader
//! stops somewhere after `STOP`; its errors are the same kind but may come at another point.

use std::io::{self, BufRead, Read};

use crate::error::ReadError;
use crate::input::{self, is_gzip};
use crate::pickle::source::io_error;
use crate::pickle::{Machine, Resumable};
use crate::{json, schema, Snapshot};

/// Decompressed bytes taken from the gzip decoder at a time (bounds what one step can produce).
const GUNZIP_PIECE: usize = 64 * 1024;

/// A snapshot read from pieces pushed in order: [`PushReader::push`] each piece as it arrives, then
/// [`PushReader::finish`].
///
/// ```
/// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/example.pickle.gz")).unwrap();
/// let mut reader = memograph_snapshot::PushReader::new(Some(bytes.len() as u64));
/// for piece in bytes.chunks(64 * 1024) {
///     reader.push(piece)?;
/// }
/// let snapshot = reader.finish()?;
/// let pulled = memograph_snapshot::read_bytes(&bytes)?;
/// assert_eq!(snapshot.devices(), pulled.devices());
/// # Ok::<(), memograph_snapshot::ReadError>(())
/// ```
pub struct PushReader {
    stage: Stage,
    total_len: Option<u64>,
    /// Bytes pushed so far.
    pushed: u64,
    /// The first error, returned again by every later call.
    failed: Option<ReadError>,
}

enum Stage {
    /// Nothing seen yet, or fewer than two bytes: plain or gzip is not known yet.
    Start(Vec<u8>),
    Plain(Box<Body>),
    Gzip(Box<Gunzip>),
}

/// What the (decompressed) bytes are: a pickle, run as it arrives, or a JSON text, kept whole and read
/// at the end (see `json`), as the pull reader does.
enum Body {
    /// Only whitespace so far: which one is not known yet.
    Undecided(Vec<u8>, Option<u64>),
    Pickle(Box<Resumable>),
    Json(Vec<u8>),
}

impl Body {
    fn new(total_len: Option<u64>) -> Body {
        Body::Undecided(Vec::new(), total_len)
    }

    fn push(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        match self {
            Body::Undecided(head, total_len) => {
                head.extend_from_slice(bytes);
                if json::undecided(head) {
                    return Ok(());
                }
                let head = std::mem::take(head);
                *self = if json::looks_like_json(&head) {
                    Body::Json(head)
                } else {
                    let mut pickle = Box::new(Resumable::new(*total_len));
                    let pushed = pickle.push(&head);
                    *self = Body::Pickle(pickle);
                    return pushed;
                };
                Ok(())
            }
            Body::Pickle(pickle) => pickle.push(bytes),
            Body::Json(text) => {
                text.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    fn wants_more(&self) -> bool {
        match self {
            Body::Pickle(pickle) => !pickle.stopped(),
            Body::Undecided(..) | Body::Json(_) => true,
        }
    }

    fn finish(self) -> Result<(Snapshot, Leftovers), ReadError> {
        match self {
            Body::Undecided(head, total_len) => {
                if head.is_empty() {
                    return Err(ReadError::Empty);
                }
                let mut pickle = Box::new(Resumable::new(total_len));
                pickle.push(&head)?;
                Body::Pickle(pickle).finish()
            }
            Body::Pickle(pickle) => {
                let (mut machine, root) = pickle.finish()?;
                let snapshot = schema::build(&mut machine, root)?;
                Ok((snapshot, Leftovers(Some(Box::new(machine)))))
            }
            Body::Json(text) => Ok((crate::snapshot_of_json(&text)?, Leftovers(None))),
        }
    }
}

/// What a finished reader worked with and the snapshot does not keep: the pickle's memo and containers,
/// about the file's size in many small allocations. Freeing them is a pause of its own (20–50 ms in a
/// browser at 190 MB), which a caller can put after its answer, or skip where its whole memory goes
/// next (the page's worker, ended after one file).
pub struct Leftovers(#[allow(dead_code)] Option<Box<Machine>>);

impl PushReader {
    /// `total_len`: the input's length when known (lets the reader reject lengths that point past the end
    /// before their bytes arrive).
    pub fn new(total_len: Option<u64>) -> Self {
        PushReader {
            stage: Stage::Start(Vec::new()),
            total_len,
            pushed: 0,
            failed: None,
        }
    }

    /// Bytes pushed so far.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Whether more bytes can change the outcome. A plain pickle is complete at its `STOP` (what follows
    /// is ignored, as `pickle.load` does), so a caller may stop reading there; gzip is read to its end,
    /// and after an error nothing more matters.
    pub fn wants_more(&self) -> bool {
        match &self.stage {
            _ if self.failed.is_some() => false,
            Stage::Plain(body) => body.wants_more(),
            Stage::Start(_) | Stage::Gzip(_) => true,
        }
    }

    /// Reads what `bytes` (the next piece of the input) completes.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.pushed += bytes.len() as u64;
        let result = self.step(bytes);
        self.kept(result)
    }

    /// [`Self::push`] of the next `len` bytes, which `fill` writes into the slice it is given (exactly
    /// `len` long). A plain pickle's bytes are written straight into the reader's buffer: a caller whose
    /// piece is outside Rust's memory (a browser's buffer, in the page's worker) copies it once.
    pub fn push_from(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), ReadError> {
        if let (None, Stage::Plain(body)) = (&self.failed, &mut self.stage) {
            if let Body::Pickle(pickle) = &mut **body {
                self.pushed += len as u64;
                let result = pickle.push_from(len, fill);
                return self.kept(result);
            }
        }
        let mut bytes = vec![0; len];
        fill(&mut bytes);
        self.push(&bytes)
    }

    /// `result`, its error kept for every later call.
    fn kept(&mut self, result: Result<(), ReadError>) -> Result<(), ReadError> {
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    fn step(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        match &mut self.stage {
            Stage::Start(head) => {
                head.extend_from_slice(bytes);
                if head.len() < 2 {
                    return Ok(());
                }
                let head = std::mem::take(head);
                self.begin(&head);
                self.step(&head)
            }
            Stage::Plain(body) => body.push(bytes),
            Stage::Gzip(gunzip) => gunzip.push(bytes),
        }
    }

    /// Chooses plain or gzip from the first bytes.
    fn begin(&mut self, head: &[u8]) {
        self.stage = if is_gzip(head) {
            Stage::Gzip(Box::new(Gunzip {
                decoder: flate2::bufread::MultiGzDecoder::new(Pending::default()),
                compressed: 0,
                produced: 0,
                out: vec![0; GUNZIP_PIECE],
                body: Body::new(None),
                pickle_failed: None,
                gave_up: false,
            }))
        } else {
            Stage::Plain(Box::new(Body::new(self.total_len)))
        };
    }

    /// The input is complete: reads what is left and builds the snapshot.
    pub fn finish(self) -> Result<Snapshot, ReadError> {
        self.finish_leaving().map(|(snapshot, _)| snapshot)
    }

    /// [`Self::finish`], handing back what the reader worked with for the caller to drop when it has the
    /// time (see [`Leftovers`]).
    pub fn finish_leaving(mut self) -> Result<(Snapshot, Leftovers), ReadError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if let Stage::Start(head) = &mut self.stage {
            let head = std::mem::take(head);
            self.begin(&head);
            self.step(&head)?;
        }
        match self.stage {
            Stage::Start(_) => unreachable!("begun above"),
            Stage::Plain(body) => body.finish(),
            Stage::Gzip(mut gunzip) => {
                gunzip.decoder.get_mut().closed = true;
                gunzip.pump()?;
                if let Some(e) = gunzip.pickle_failed {
                    return Err(e);
                }
                gunzip.body.finish()
            }
        }
    }
}

/// A gzip stream decompressed as its pieces arrive, feeding the pickle machine.
struct Gunzip {
    decoder: flate2::bufread::MultiGzDecoder<Pending>,
    /// Compressed bytes pushed and decompressed bytes produced, for the bomb guard.
    compressed: u64,
    produced: u64,
    out: Vec<u8>,
    body: Body,
    /// The machine's error, held back until the stream's end: a damaged gzip stream explains it, and
    /// then the gzip error is the one reported (as the pull reader does).
    pickle_failed: Option<ReadError>,
    /// The bomb guard ended the check of the rest of the stream after the machine's error.
    gave_up: bool,
}

impl Gunzip {
    fn push(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        self.compressed += bytes.len() as u64;
        self.decoder.get_mut().append(bytes);
        self.pump()
    }

    /// Decompresses what the pushed bytes allow, a bounded piece at a time, into the pickle machine.
    /// After `STOP` or the machine's error the rest is still decompressed (and dropped), so a corrupt or
    /// cut stream is an error however the pieces fall.
    fn pump(&mut self) -> Result<(), ReadError> {
        loop {
            if self.gave_up {
                return Ok(());
            }
            let n = match self.decoder.read(&mut self.out) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(io_error(e)),
            };
            self.produced += n as u64;
            if let Err(bomb) = input::check_bomb(self.produced, self.compressed) {
                if self.pickle_failed.is_some() {
                    // Checking the rest of a stream whose pickle already failed: the guard ends the
                    // check and the machine's error stands.
                    self.gave_up = true;
                    return Ok(());
                }
                return Err(bomb.into());
            }
            if self.pickle_failed.is_none() {
                if let Err(e) = self.body.push(&self.out[..n]) {
                    self.pickle_failed = Some(e);
                }
            }
        }
    }
}

/// Compressed bytes pushed and not yet decompressed. Empty and not closed, it answers "would block",
/// which flate2's decoders take as "try again later" with their state kept.
#[derive(Default)]
struct Pending {
    buf: Vec<u8>,
    pos: usize,
    closed: bool,
}

impl Pending {
    fn append(&mut self, bytes: &[u8]) {
        self.buf.drain(..self.pos);
        self.pos = 0;
        self.buf.extend_from_slice(bytes);
    }
}

impl Read for Pending {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(out.len());
            out[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Pending {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.buf.len() && !self.closed {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}
