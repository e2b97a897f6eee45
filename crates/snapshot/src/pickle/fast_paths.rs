//! The fast paths for the hottest shape in snapshots, a trace entry's frame list
//! (`EMPTY_LIST MEMOIZE MARK BINGET… APPENDS`): read ahead in the buffer and interned at once. When the
//! bytes do not fit the shape, what was read is pushed exactly as the opcodes would have pushed it and
//! the opcode loop goes on, so the result never depends on whether a fast path ran.

use std::io::Read;

use super::opcodes::*;
use super::source::Source;
use super::{stack_limit, Machine, Slot, Value, MAX_MARKS, MAX_STACK};
use crate::error::ReadError;
use crate::model::{FrameId, Interner, StackId};

impl Machine {
    /// The slot of `v` when it is a list that has nothing in it yet.
    pub(super) fn fresh_list(&self, v: Value) -> Option<u32> {
        match v {
            Value::List(s) if matches!(&self.slots[s as usize], Slot::Seq(items) if items.is_empty()) => {
                Some(s)
            }
            _ => None,
        }
    }

    /// EMPTY_LIST followed by the whole shape of a stack, `MEMOIZE|BINPUT MARK (BINGET frame)* APPENDS`:
    /// the list is interned and memoised as a stack right here, so it never takes a container slot (it
    /// would have ended in the same state: the memo and the stack holding the interned stack).
    pub(super) fn whole_frame_list<R: Read>(
        &mut self,
        src: &mut Source<R>,
        at: u64,
    ) -> Result<bool, ReadError> {
        if self.marks.len() >= MAX_MARKS || self.stack.len() >= MAX_STACK {
            return Ok(false);
        }
        let buf = src.buffered();
        let (memo_index, put_len) = match buf {
            [MEMOIZE, ..] => (self.memo.len(), 1),
            [BINPUT, k, ..] => (*k as usize, 2),
            [LONG_BINPUT, a, b, c, d, ..] => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, 5),
            _ => return Ok(false),
        };
        if buf.get(put_len) != Some(&MARK) {
            return Ok(false);
        }
        let first = put_len + 1;
        let end = first + scan_frame_gets(&self.memo, &buf[first..], &mut self.scratch);
        if self.scratch.is_empty() || buf.get(end) != Some(&APPENDS) {
            return Ok(false);
        }
        src.advance(end + 1);
        let done = Value::Stack(self.interner.intern_stack(&self.scratch));
        self.stack.push(done);
        self.put(memo_index, done, at)?;
        Ok(true)
    }

    /// The hottest shape in snapshots, right after a MARK: `(BINGET frame)* APPENDS` filling a fresh empty
    /// list. The GETs are read straight from the buffer into `scratch` and the stack is interned, without
    /// pushing each frame. Anything else ends the scan: the frames read so far are pushed exactly as their
    /// GETs would have pushed them, and the opcode loop goes on from there.
    pub(super) fn frames_fast_path<R: Read>(
        &mut self,
        src: &mut Source<R>,
        at: u64,
    ) -> Result<(), ReadError> {
        let Some(s) = self.stack.last().and_then(|&v| self.fresh_list(v)) else {
            return Ok(());
        };
        let buf = src.buffered();
        let i = scan_frame_gets(&self.memo, buf, &mut self.scratch);
        let n = self.scratch.len();
        if n > 0 && buf.get(i) == Some(&APPENDS) {
            src.advance(i + 1);
            let id = self.interner.intern_stack(&self.scratch);
            self.mark_done(s as usize, Value::Stack(id));
            self.marks.pop();
            return Ok(());
        }
        src.advance(i);
        if self.stack.len() + n > MAX_STACK {
            return Err(stack_limit(at));
        }
        let frames = std::mem::take(&mut self.scratch);
        self.stack.extend(frames.iter().map(|&f| Value::Frame(f)));
        self.scratch = frames;
        Ok(())
    }

    /// The fast path for stacks: an APPENDS of frames into an empty list, in a batch smaller than the
    /// pickler's 1000 (so it is the list's last and only batch), is interned straight from the pickle stack.
    /// Returns false when the general path must run.
    pub(super) fn append_whole_stack(&mut self) -> bool {
        let Some(&m) = self.marks.last() else {
            return false;
        };
        let n = self.stack.len() - m;
        if m == 0 || n >= 1000 {
            return false;
        }
        let Some(s) = self.fresh_list(self.stack[m - 1]) else {
            return false;
        };
        let Some(id) = intern_frames(&mut self.interner, &mut self.scratch, &self.stack[m..])
        else {
            return false;
        };
        self.mark_done(s as usize, Value::Stack(id));
        self.marks.pop();
        self.stack.truncate(m);
        true
    }
}

/// Interns `items` as a stack when they are a non-empty list of frames (`scratch` is reused storage).
/// Reads consecutive `BINGET`/`LONG_BINGET`s of frames from the start of `buf` into `frames` (cleared
/// first), at most 999 (under the pickler's batch of 1000, so a following APPENDS holds the list's whole
/// content). Returns the bytes they take; stops at anything else, including a GET of a non-frame.
pub(super) fn scan_frame_gets(
    memo: &[Option<Value>],
    buf: &[u8],
    frames: &mut Vec<FrameId>,
) -> usize {
    let frame = |k: usize| match memo.get(k) {
        Some(Some(Value::Frame(f))) => Some(*f),
        _ => None,
    };
    frames.clear();
    let mut i = 0;
    while frames.len() < 999 {
        let (f, len) = match buf.get(i) {
            Some(&BINGET) if i + 2 <= buf.len() => (frame(buf[i + 1] as usize), 2),
            Some(&LONG_BINGET) if i + 5 <= buf.len() => {
                let k = u32::from_le_bytes([buf[i + 1], buf[i + 2], buf[i + 3], buf[i + 4]]);
                (frame(k as usize), 5)
            }
            _ => (None, 0),
        };
        let Some(f) = f else { break };
        frames.push(f);
        i += len;
    }
    i
}

pub(super) fn intern_frames(
    interner: &mut Interner,
    scratch: &mut Vec<FrameId>,
    items: &[Value],
) -> Option<StackId> {
    if items.is_empty() {
        return None;
    }
    scratch.clear();
    for v in items {
        match v {
            Value::Frame(f) => scratch.push(*f),
            _ => return None,
        }
    }
    Some(interner.intern_stack(scratch))
}
