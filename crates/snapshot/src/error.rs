//! Errors the reader returns. Each one reads as the tail of a sentence that starts with the file name:
//! `error: big.pickle: unexpected end of file at byte 18446 (file truncated?)`.

use std::fmt;

/// Why a file could not be read as a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The input ended in the middle of an opcode or before `STOP`.
    UnexpectedEof { offset: u64 },
    /// An opcode that would import, call or build an object: the reader never does that.
    Forbidden { opcode: &'static str, offset: u64 },
    /// A byte that is no pickle opcode.
    UnknownOpcode { byte: u8, offset: u64 },
    /// The bytes are a pickle (or claim to be) but break its rules: a bad length, a memo miss, an odd stack.
    Malformed { reason: String, offset: u64 },
    /// A limit that protects memory and time was hit.
    Limit { reason: String, offset: u64 },
    /// A valid pickle that is not a PyTorch memory snapshot.
    NotSnapshot { reason: String },
    /// The gzip stream is corrupt.
    Gzip { reason: String },
    /// Reading the underlying file failed.
    Io { reason: String },
    /// The input is empty.
    Empty,
    /// The first bytes are no pickle at all.
    NotPickle { head: String },
    /// The first bytes are a known format that is not a snapshot: `what` names it and says what to do.
    OtherFormat { what: String },
    /// A snapshot saved as JSON whose text is not valid JSON.
    Json { reason: String, offset: u64 },
}

impl ReadError {
    pub(crate) fn malformed(reason: impl Into<String>, offset: u64) -> Self {
        ReadError::Malformed {
            reason: reason.into(),
            offset,
        }
    }
    pub(crate) fn limit(reason: impl Into<String>, offset: u64) -> Self {
        ReadError::Limit {
            reason: reason.into(),
            offset,
        }
    }
    pub(crate) fn not_snapshot(reason: impl Into<String>) -> Self {
        ReadError::NotSnapshot {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::UnexpectedEof { offset } => {
                write!(
                    f,
                    "unexpected end of file at byte {offset} (file truncated?)"
                )
            }
            ReadError::Forbidden { opcode, offset } => write!(
                f,
                "refusing pickle opcode {opcode} at byte {offset}: it would import or call code, \
                 and a memory snapshot holds only plain data"
            ),
            ReadError::UnknownOpcode { byte, offset } => {
                write!(
                    f,
                    "not a pickle: unknown opcode 0x{byte:02x} at byte {offset}"
                )
            }
            ReadError::Malformed { reason, offset } => {
                write!(f, "corrupt pickle: {reason} at byte {offset}")
            }
            ReadError::Limit { reason, offset } => write!(f, "{reason} at byte {offset}"),
            ReadError::NotSnapshot { reason } => {
                write!(f, "not a PyTorch memory snapshot ({reason})")
            }
            ReadError::Gzip { reason } => write!(f, "corrupt gzip data: {reason}"),
            ReadError::Io { reason } => write!(f, "read failed: {reason}"),
            ReadError::Empty => write!(f, "empty file"),
            ReadError::NotPickle { head } => write!(f, "not a pickle file (it starts with {head})"),
            ReadError::OtherFormat { what } => write!(f, "not a memory snapshot: {what}"),
            ReadError::Json { reason, offset } => {
                write!(f, "corrupt JSON: {reason} at byte {offset}")
            }
        }
    }
}

impl std::error::Error for ReadError {}
