//! A compact binary form of a [`Snapshot`], for handing a parsed model from a Web Worker to the page
//! (a transferable `ArrayBuffer`): columns are written as raw little-endian arrays, so encoding and
//! decoding are close to a memory copy. Decoding checks every length and never panics. `writer.rs`
//! encodes, `reader.rs` decodes; the records' layout, which both follow, is here.

use crate::model::*;

mod reader;
mod writer;

pub use crate::batch::Pause;
pub use reader::{decode, decode_from, decode_sliced, Arriving, Whole};
pub use writer::{encode, encode_into, sizes, Sizes};

const MAGIC: &[u8; 8] = b"MGSNAP03";
const MAX_DEPTH: usize = 64;

/// The layout of the fixed-width records, by byte offset: the writer fills and the reader reads them by
/// these names (everything else is a length followed by its items). Integers are little-endian.
mod layout {
    /// A segment: a head, the pool's two `i64` when `HAS_POOL` is set, a tail, then its blocks.
    pub mod segment {
        /// `i64`.
        pub const DEVICE: usize = 0;
        /// Six `u64`: address, total, allocated, active and requested size, stream.
        pub const FIGURES: usize = 8;
        /// `u32` string id of the segment type, or `NONE_ID`.
        pub const TYPE: usize = 56;
        /// `u8`: 1 when a pool record follows.
        pub const HAS_POOL: usize = 60;
        pub const HEAD: usize = 61;
        /// Two `i64`.
        pub const POOL: usize = 16;
        /// In the tail: `u8` is-expandable, then the `u32` stack id.
        pub const EXPANDABLE: usize = 0;
        pub const STACK: usize = 1;
        pub const TAIL: usize = 5;
        /// The least a segment takes: head, tail, its block count and its history count.
        pub const MIN: usize = HEAD + TAIL + 16;
    }
    /// A block of a segment.
    pub mod block {
        /// `u64` each.
        pub const ADDRESS: usize = 0;
        pub const SIZE: usize = 8;
        pub const REQUESTED: usize = 16;
        /// `u8` state code (see `block_state`), then the `u32` name of an unknown state.
        pub const STATE: usize = 24;
        pub const STATE_NAME: usize = 25;
        /// `u32` stack id.
        pub const STACK: usize = 29;
        pub const LEN: usize = 33;
    }
    /// A trace entry's action: `u8` code ([`crate::Action::code`]), then the `u32` name of an unknown one.
    pub const ACTION_LEN: usize = 5;
    /// A legacy history record of a segment's block: `u32` block index, `u64` address, `u64` real
    /// size, `u32` stack id.
    pub const HISTORY_LEN: usize = 24;
}

/// Block states by code, both ways (see [`block_state_of`]); code 3 is an unknown state, named by its
/// string id.
fn block_state_code(state: BlockState) -> (u8, u32) {
    match state {
        BlockState::ActiveAllocated => (0, NONE_ID),
        BlockState::ActivePendingFree => (1, NONE_ID),
        BlockState::Inactive => (2, NONE_ID),
        BlockState::Other(s) => (3, s.0),
    }
}

/// The known state of `code` (`None`: an unknown state, named by its string id).
fn block_state_of(code: u8) -> Option<BlockState> {
    match code {
        0 => Some(BlockState::ActiveAllocated),
        1 => Some(BlockState::ActivePendingFree),
        2 => Some(BlockState::Inactive),
        _ => None,
    }
}

/// Why a buffer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "corrupt model buffer: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}
