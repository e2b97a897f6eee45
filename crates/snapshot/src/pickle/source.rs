//! A buffered byte source that knows its offset, so every error can say where it happened.
//!
//! The parser asks for bytes a few at a time; this keeps a window of the input in memory (never the
//! whole file) and refills it from any [`std::io::Read`] (pull), or holds what was pushed into it and
//! suspends when an opcode needs more (push, see [`Source::pushed`]).

use std::io::Read;

use crate::error::ReadError;

const CHUNK: usize = 256 * 1024;

/// Bytes of the input kept from its start: "not a pickle" quotes 16 of them, naming a zip archive
/// needs its first member's name, and a tar archive says what it is at byte 257.
pub(crate) const FIRST: usize = 512;

pub(crate) struct Source<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Input bytes before `buf[0]`.
    base: u64,
    eof: bool,
    /// Total input length when known (plain files), used to reject lengths that point past the end early.
    total: Option<u64>,
    /// The input's first [`FIRST`] bytes, kept to name what a file that is no pickle is.
    first: Vec<u8>,
    /// Push mode: bytes come from [`Self::push_from`], never from `inner`, until [`Self::close`].
    pushed: bool,
    /// Push mode: a read ran past the pushed bytes before the input was closed. The error it returned
    /// is not the input's: the machine rewinds to the opcode's start and waits for more.
    suspended: bool,
}

/// The reader of a [`Source`] in push mode: it never has bytes of its own.
pub(crate) struct Pushed;

impl Read for Pushed {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Ok(0)
    }
}

impl Source<Pushed> {
    /// A source fed with [`Self::push_from`] as bytes arrive. A read past the bytes pushed so far fails and
    /// sets [`Self::take_suspended`] until [`Self::close`] says no more will come.
    pub(crate) fn pushed(total: Option<u64>) -> Self {
        let mut s = Source::new(Pushed, total);
        s.buf = Vec::new();
        s.pushed = true;
        s
    }

    /// Appends `len` bytes that `fill` writes in place (its argument is exactly `len` long): a caller
    /// whose bytes are elsewhere (a browser's buffer) copies them once, not through a buffer of its own.
    /// Bytes before the read position are dropped; the buffer keeps its length from piece to piece, so a
    /// piece costs no zeroing.
    pub(crate) fn push_from(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        let end = self.end + len;
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        fill(&mut self.buf[self.end..end]);
        if self.first.len() < FIRST {
            let take = len.min(FIRST - self.first.len());
            self.first
                .extend_from_slice(&self.buf[self.end..self.end + take]);
        }
        self.end = end;
    }

    /// No more bytes will come: reads past the end are now the input's end.
    pub(crate) fn close(&mut self) {
        self.pushed = false;
        self.eof = true;
    }
}

impl<R: Read> Source<R> {
    pub(crate) fn new(inner: R, total: Option<u64>) -> Self {
        Source {
            inner,
            buf: vec![0; CHUNK],
            pos: 0,
            end: 0,
            base: 0,
            eof: false,
            total,
            first: Vec::new(),
            pushed: false,
            suspended: false,
        }
    }

    /// Offset of the next unread byte.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Whether the last error was a suspension (see [`Self::pushed`]); clears it.
    pub(crate) fn take_suspended(&mut self) -> bool {
        std::mem::take(&mut self.suspended)
    }

    /// Moves the read position back to `offset`, which must not be before the window (push mode never
    /// drops bytes while an opcode runs).
    pub(crate) fn rewind(&mut self, offset: u64) {
        debug_assert!(offset >= self.base && offset <= self.offset());
        self.pos = offset.saturating_sub(self.base) as usize;
    }

    /// Bytes known to remain, if the total is known.
    pub(crate) fn remaining(&self) -> Option<u64> {
        self.total.map(|t| t.saturating_sub(self.offset()))
    }

    /// Reads on until the input's first [`FIRST`] bytes are known or it ends: what a file that is no
    /// pickle is shows in them, and the machine may fail on its first byte. An error of the input
    /// itself on the way (a corrupt gzip stream) is returned: it says more than any guess. A pushed
    /// input has them already (the push reader waits for them).
    pub(crate) fn read_first(&mut self) -> Result<(), ReadError> {
        if self.pushed || self.base != 0 {
            return Ok(());
        }
        match self.fill(FIRST.saturating_sub(self.pos)) {
            Err(ReadError::UnexpectedEof { .. }) => Ok(()),
            other => other,
        }
    }

    /// Make at least `n` bytes available at `pos`, or fail with EOF. `n` is bounded by the caller.
    #[cold]
    fn fill(&mut self, n: usize) -> Result<(), ReadError> {
        if self.pushed {
            self.suspended = true;
            return Err(ReadError::UnexpectedEof {
                offset: self.base + self.end as u64,
            });
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() < n {
            self.buf.resize(n.max(CHUNK), 0);
        }
        while self.end < n {
            if self.eof {
                return Err(ReadError::UnexpectedEof {
                    offset: self.base + self.end as u64,
                });
            }
            let read = loop {
                match self.inner.read(&mut self.buf[self.end..]) {
                    Ok(r) => break r,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(io_error(e)),
                }
            };
            if read == 0 {
                self.eof = true;
            }
            if self.first.len() < FIRST {
                let take = read.min(FIRST - self.first.len());
                self.first
                    .extend_from_slice(&self.buf[self.end..self.end + take]);
            }
            self.end += read;
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn byte(&mut self) -> Result<u8, ReadError> {
        if self.pos >= self.end {
            self.fill(1)?;
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    /// The bytes already buffered after the read position (possibly none): for scanning ahead.
    #[inline]
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    /// Consumes `n` bytes of [`Self::buffered`].
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.pos);
        self.pos += n.min(self.end - self.pos);
    }

    /// The next `n` bytes; `n` must already be checked against the input limits.
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Result<&[u8], ReadError> {
        if self.end - self.pos < n {
            self.fill(n)?;
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Bytes up to and excluding the next `\n` (text-mode opcodes), at most `max` of them.
    pub(crate) fn line(&mut self, max: usize) -> Result<Vec<u8>, ReadError> {
        let start = self.offset();
        let mut out = Vec::new();
        loop {
            let b = self.byte()?;
            if b == b'\n' {
                return Ok(out);
            }
            if out.len() >= max {
                return Err(ReadError::limit(
                    format!("text argument longer than {max} bytes"),
                    start,
                ));
            }
            out.push(b);
        }
    }

    /// The input's first bytes (up to [`FIRST`]).
    pub(crate) fn first_bytes(&self) -> &[u8] {
        &self.first
    }

    pub(crate) fn first_byte(&self) -> Option<u8> {
        self.first.first().copied()
    }

    /// The first bytes of the input, printable, for "not a pickle" messages.
    pub(crate) fn head(&self) -> String {
        let text: String = self.first[..self.first.len().min(16)]
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("\\x{b:02x}")
                }
            })
            .collect();
        format!("\"{text}\"")
    }

    /// Reads and drops the rest of the input.
    pub(crate) fn skip_to_end(&mut self) -> Result<(), ReadError> {
        while !self.at_end()? {
            self.pos = self.end;
        }
        Ok(())
    }

    /// True when no byte is left after the current position.
    pub(crate) fn at_end(&mut self) -> Result<bool, ReadError> {
        if self.pos < self.end {
            return Ok(false);
        }
        match self.fill(1) {
            Ok(()) => Ok(false),
            Err(ReadError::UnexpectedEof { .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }
}

pub(crate) fn io_error(e: std::io::Error) -> ReadError {
    // flate2 reports corrupt gzip data as InvalidInput/InvalidData io errors.
    match e.kind() {
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput => ReadError::Gzip {
            reason: e.to_string(),
        },
        std::io::ErrorKind::UnexpectedEof => ReadError::Gzip {
            reason: "compressed stream ends early".into(),
        },
        _ => {
            if let Some(inner) = e.get_ref() {
                if let Some(limit) = inner.downcast_ref::<crate::input::BombError>() {
                    return limit.clone().into();
                }
            }
            ReadError::Io {
                reason: e.to_string(),
            }
        }
    }
}
