//! A pickle machine that only knows data.
//!
//! It runs the data opcodes of protocols 0–5 and refuses every opcode that imports, calls or builds an
//! object (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ(_EX)`, `PERSID`, `EXT*`,
//! out-of-band buffers), naming it and its offset.
//!
//! Why not serde-pickle: snapshots share frame dicts and frame lists through the pickle memo (~1 M
//! references to ~500 frames in a 2.6 MB file). serde-pickle 1.2 resolves every memo reference by copying
//! the value, fails with `Recursive` on nested sharing (10 of 12 real snapshots), and, patched, needs ~1 KB
//! per frame reference. Here a memo entry is a handle, and containers are *specialised when consumed*:
//! a dict with an `action` key becomes a row of the trace columns, a `{filename, line, name}` dict becomes
//! an interned [`Frame`](crate::model::Frame), a list of frames becomes an interned stack. The file is never held as a generic
//! tree: only the snapshot's skeleton (segments, blocks, settings) stays generic until [`crate::schema`]
//! turns it into the model.
//!
//! Here: the machine and its one `match` over the opcodes (every arm reads all its arguments before it
//! changes anything, which the push reader's rewind relies on). Beside it: `opcodes` (their names),
//! `fast_paths` (frame lists read ahead), `specialise` (trace entries and frames), `text` (protocol 0's
//! literals) and `source` (the buffered input that knows its offset).

mod fast_paths;
pub(crate) mod opcodes;
pub(crate) mod source;
mod specialise;
mod text;

use std::io::Read;

use crate::error::ReadError;
use crate::model::{presized, DeviceTrace, FrameId, Interner, StackId, StrId};
use fast_paths::intern_frames;
use opcodes::*;
use source::Source;
use specialise::Keys;
pub(crate) use specialise::{as_stack, as_str, as_u64, check_bytes};
use text::{parse_text_int, parse_text_usize, python_string_literal, raw_unicode_unescape};

/// Longest string or bytes value accepted (real snapshots hold names and paths).
const MAX_STR: u64 = 64 << 20;
/// Deepest MARK nesting accepted (real snapshots: under 10).
const MAX_MARKS: usize = 4096;
/// Most values on the stack at once (real snapshots: about a thousand).
const MAX_STACK: usize = 1 << 24;
/// Memo indices may skip ahead by at most this much (the pickler numbers them densely).
const MAX_MEMO_GAP: usize = 1 << 16;

/// A value on the pickle stack or in a container. 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer in `[2**63, 2**64)`.
    U64(u64),
    /// An integer beyond 64 bits, exact up to 128 bits: an index into [`Machine::wide`].
    Wide(u32),
    /// An integer beyond 128 bits, kept approximately (snapshots never hold these).
    Big(f64),
    Float(f64),
    Str(StrId),
    Bytes(u32),
    List(u32),
    Dict(u32),
    Tuple(u32),
    Set(u32),
    Frame(FrameId),
    Stack(StackId),
    /// A row of [`Machine::entries`].
    Entry(u32),
}

#[derive(Debug)]
pub(crate) enum Slot {
    Seq(Vec<Value>),
    Dict(Vec<[Value; 2]>),
    /// The container was consumed and specialised into this value.
    Done(Value),
}

/// Opcodes per call of [`Machine::steps`].
const BATCH: u32 = 1 << 14;

/// Where a run of opcodes stopped.
enum Step {
    /// At `STOP`, with the root value.
    Stop(Value),
    /// After a batch.
    Batch,
    /// Push mode: the opcode at the read position needs bytes not pushed yet.
    NeedMore,
}

/// The machine's state after `STOP`: the root value and the tables it refers to.
pub(crate) struct Machine {
    pub interner: Interner,
    pub slots: Vec<Slot>,
    /// For each slot, the memo index that holds it (`u32::MAX`: none), so that specialising a container
    /// also updates the memo and later `BINGET`s push the specialised value without touching the slot.
    slot_memo: Vec<u32>,
    pub bytes: Vec<Box<[u8]>>,
    /// Integers of 65 to 128 bits.
    pub wide: Vec<i128>,
    /// Trace entries, in file order; [`Value::Entry`] indexes them.
    pub entries: DeviceTrace,
    pub protocol: u8,
    keys: Keys,
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: Vec<Option<Value>>,
    scratch: Vec<FrameId>,
    /// Stacks by the bytes of the frame `GET`s that made them (see [`fast_paths::Runs`]).
    runs: fast_paths::Runs,
    /// The first trace entry (row) whose size or address no allocator could have written, and why:
    /// the schema check reports it with its device and index.
    pub(crate) invalid_entry: Option<(u32, String)>,
}

/// Run the pickle in `src` to its `STOP`; returns the machine and the root value.
pub(crate) fn run<R: Read>(
    src: &mut Source<R>,
    size_hint: Option<u64>,
) -> Result<(Machine, Value), ReadError> {
    let mut m = Machine::new(size_hint);
    if src.at_end()? {
        return Err(ReadError::Empty);
    }
    match m.execute(src) {
        Ok(root) => Ok((m, root)),
        Err(e) => Err(m.explain(src, e)),
    }
}

/// The machine in push mode: bytes are handed to [`Resumable::push`] as they arrive and run as far as
/// they go; an opcode cut by the end of a piece runs again, whole, with the next one. The result, errors
/// and their offsets included, is the same as [`run`] over the same bytes.
pub(crate) struct Resumable {
    machine: Machine,
    src: Source<source::Pushed>,
    root: Option<Value>,
    failed: Option<ReadError>,
}

impl Resumable {
    pub(crate) fn new(total_len: Option<u64>) -> Self {
        Resumable {
            machine: Machine::new(total_len),
            src: Source::pushed(total_len),
            root: None,
            failed: None,
        }
    }

    /// Runs the opcodes `bytes` completes. Bytes after `STOP` are ignored, as `pickle.load` does.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        self.push_from(bytes.len(), &mut |room| room.copy_from_slice(bytes))
    }

    /// [`Self::push`] of `len` bytes that `fill` writes in place (see [`Source::push_from`]).
    pub(crate) fn push_from(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), ReadError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.root.is_some() || len == 0 {
            return Ok(());
        }
        self.src.push_from(len, fill);
        // The first bytes of what may be no pickle (no PROTO) wait for more: what such a file is comes
        // from its first bytes, as in the pull reader.
        let head = self.src.buffered();
        if self.src.offset() == 0 && head.len() < source::FIRST && head.first() != Some(&PROTO) {
            return Ok(());
        }
        self.resume()
    }

    /// Whether the machine has run to `STOP`: later bytes are ignored, so there is no need to send them.
    pub(crate) fn stopped(&self) -> bool {
        self.root.is_some()
    }

    fn resume(&mut self) -> Result<(), ReadError> {
        loop {
            match self.machine.steps(&mut self.src, BATCH) {
                Ok(Step::Stop(root)) => {
                    self.root = Some(root);
                    return Ok(());
                }
                Ok(Step::Batch) => {}
                Ok(Step::NeedMore) => return Ok(()),
                Err(e) => {
                    let e = self.machine.explain(&mut self.src, e);
                    self.failed = Some(e.clone());
                    return Err(e);
                }
            }
        }
    }

    /// The input is complete: runs what is left to `STOP`.
    pub(crate) fn finish(mut self) -> Result<(Machine, Value), ReadError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.root.is_none() {
            if self.src.offset() == 0 && self.src.buffered().is_empty() {
                return Err(ReadError::Empty);
            }
            self.src.close();
            self.resume()?;
        }
        let root = self
            .root
            .expect("resume runs to STOP or fails once the input is closed");
        Ok((self.machine, root))
    }
}

impl Machine {
    /// A fresh machine. `size_hint` (the input's length, when known) pre-sizes the tables so they do not
    /// reallocate as they grow (every doubling copies the table).
    fn new(size_hint: Option<u64>) -> Machine {
        let mut interner = Interner::new();
        let keys = Keys::new(&mut interner);
        // Bounded by what the platform could hold, never wrapped (a size past 4 GiB on wasm32), and only
        // a hint: the tables are reserved when the memory is there and grow as usual when it is not.
        let cap: u64 = if cfg!(target_pointer_width = "32") {
            1 << 32
        } else {
            1 << 40
        };
        let hint = usize::try_from(size_hint.unwrap_or(0).min(cap - 1)).unwrap_or(usize::MAX);
        // Room for as many containers, memo entries and trace entries as real snapshots hold per byte, so
        // the tables do not double as they fill (on wasm32 a doubling copies the table into fresh memory:
        // about 60 MB for a 177 MB file). Per byte, the densest seen: a container per 56 bytes (magma, a
        // small file), per 130 in the kk fixtures and 170 to 195 in the long-run shapes; a memo entry per
        // 84 to 125 bytes; a trace entry per 96 bytes (magma), 167 (kk) and 195 to 207 (long runs).
        // Natively, room never touched costs address space, not memory, and a big table grows without a
        // copy (the system remaps it): the tables get room for the usual. On wasm32 address space is
        // memory (4 GiB): they get room for the big files' shapes, about 0.7 bytes per byte of file in
        // all, and grow past that if needed.
        let (containers, memo, entries) = if cfg!(target_arch = "wasm32") {
            (hint / 120, hint / 75, hint / 160)
        } else {
            (hint / 40, hint / 40, hint / 200)
        };
        Machine {
            interner,
            slots: presized(containers),
            slot_memo: presized(containers),
            bytes: Vec::new(),
            wide: Vec::new(),
            entries: DeviceTrace::with_capacity(entries),
            protocol: 0,
            keys,
            stack: Vec::with_capacity(4096),
            marks: Vec::new(),
            memo: presized(memo),
            scratch: Vec::new(),
            runs: fast_paths::Runs::default(),
            invalid_entry: None,
        }
    }

    /// An error on the very first opcode of a file that does not start with PROTO means: not a pickle.
    fn explain<R: Read>(&self, src: &mut Source<R>, e: ReadError) -> ReadError {
        // Errors of the input itself (a corrupt gzip stream, a failed read, the bomb guard) say more
        // than any guess at what the bytes are.
        if matches!(
            e,
            ReadError::Gzip { .. } | ReadError::Io { .. } | ReadError::Limit { .. }
        ) {
            return e;
        }
        let at_start =
            self.protocol == 0 && src.first_byte() != Some(PROTO) && self.memo.is_empty();
        if !at_start {
            return e;
        }
        if let Err(e) = src.read_first() {
            return e;
        }
        if let Some(what) = crate::input::recognise(src.first_bytes()) {
            return ReadError::OtherFormat { what };
        }
        if self.stack.is_empty()
            && self.marks.len() <= 1
            && !matches!(e, ReadError::Forbidden { .. })
        {
            ReadError::NotPickle { head: src.head() }
        } else {
            e
        }
    }
}

/// A little-endian two's complement integer (LONG1/LONG4).
enum LeInt {
    Small(Value),
    Wide(i128),
}

/// Inlined where it is read: every address and time in a trace is one (LONG1 of 5–8 bytes), and those
/// take the first branch, with no 128-bit arithmetic (which wasm32 emulates).
#[inline(always)]
fn le_int(bytes: &[u8]) -> LeInt {
    if bytes.is_empty() {
        return LeInt::Small(Value::Int(0));
    }
    if bytes.len() <= 8 {
        let mut v = 0u64;
        for (k, &b) in bytes.iter().enumerate() {
            v |= (b as u64) << (8 * k);
        }
        // Sign-extended from its top byte's top bit.
        let unused = 64 - 8 * bytes.len() as u32;
        return LeInt::Small(Value::Int(((v << unused) as i64) >> unused));
    }
    le_int_wide(bytes)
}

/// [`le_int`] of more than 8 bytes.
#[inline(never)]
fn le_int_wide(bytes: &[u8]) -> LeInt {
    let negative = bytes[bytes.len() - 1] & 0x80 != 0;
    if bytes.len() <= 16 {
        let mut v: i128 = if negative { -1 } else { 0 };
        for &b in bytes.iter().rev() {
            v = (v << 8) | b as i128;
        }
        if let Ok(i) = i64::try_from(v) {
            LeInt::Small(Value::Int(i))
        } else if let Ok(u) = u64::try_from(v) {
            LeInt::Small(Value::U64(u))
        } else {
            LeInt::Wide(v)
        }
    } else {
        let mut v = 0f64;
        for &b in bytes.iter().rev() {
            v = v * 256.0 + b as f64;
        }
        if negative {
            v -= 2f64.powi(8 * bytes.len() as i32);
        }
        LeInt::Small(Value::Big(v))
    }
}

impl Machine {
    /// Runs opcodes to `STOP`, in batches: each batch is a fresh call of [`Self::steps`], so a browser
    /// switches to its optimised code after the first batches (why: [`crate::batch`]).
    fn execute<R: Read>(&mut self, src: &mut Source<R>) -> Result<Value, ReadError> {
        loop {
            match self.steps(src, BATCH)? {
                Step::Stop(root) => return Ok(root),
                Step::Batch => {}
                Step::NeedMore => unreachable!("a pull source never suspends"),
            }
        }
    }

    /// Runs up to `batch` opcodes.
    #[inline(never)]
    fn steps<R: Read>(&mut self, src: &mut Source<R>, batch: u32) -> Result<Step, ReadError> {
        for _ in 0..batch {
            let at = src.offset();
            match self.op(src, at) {
                Ok(None) => {}
                Ok(Some(root)) => return Ok(Step::Stop(root)),
                // Every opcode reads all its arguments before it changes anything, so one that ran out
                // of pushed bytes simply runs again from its start once more are there.
                Err(_) if src.take_suspended() => {
                    src.rewind(at);
                    return Ok(Step::NeedMore);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Step::Batch)
    }

    /// Runs the opcode at `at`; `Some(root)` at `STOP`. Only the opcodes real snapshots are made of
    /// run here; the rest run in [`Self::rare_op`], which keeps [`Self::steps`] (this, inlined) small: a
    /// browser compiles it to optimised code while the file loads, and the smaller it is, the sooner.
    #[inline(always)]
    fn op<R: Read>(&mut self, src: &mut Source<R>, at: u64) -> Result<Option<Value>, ReadError> {
        let op = src.byte()?;
        match op {
            // ---- memo: the hottest opcodes of real snapshots ----
            BINGET => {
                let i = src.byte()? as usize;
                self.get(i, at)?
            }
            LONG_BINGET => {
                let i = u32::from_le_bytes(src.array()?) as usize;
                self.get(i, at)?
            }
            MEMOIZE => {
                let v = *self
                    .stack
                    .last()
                    .ok_or_else(|| ReadError::malformed("MEMOIZE on an empty stack", at))?;
                let i = self.memo.len();
                self.put(i, v, at)?;
            }
            BINPUT => {
                let i = src.byte()? as usize;
                self.put_top(i, at)?
            }
            LONG_BINPUT => {
                let i = u32::from_le_bytes(src.array()?) as usize;
                self.put_top(i, at)?
            }

            // ---- scalars ----
            BININT1 => {
                let v = src.byte()? as i64;
                self.push(Value::Int(v), at)?
            }
            BININT2 => {
                let v = u16::from_le_bytes(src.array()?) as i64;
                self.push(Value::Int(v), at)?
            }
            BININT => {
                let v = i32::from_le_bytes(src.array()?) as i64;
                self.push(Value::Int(v), at)?
            }
            LONG1 => {
                let n = src.byte()? as usize;
                let v = le_int(src.take(n)?);
                let v = self.int_value(v);
                self.push(v, at)?
            }
            NONE => self.push(Value::None, at)?,
            NEWTRUE => self.push(Value::Bool(true), at)?,
            NEWFALSE => self.push(Value::Bool(false), at)?,
            BINFLOAT => {
                let v = f64::from_be_bytes(src.array()?);
                self.push(Value::Float(v), at)?
            }

            // ---- strings and bytes ----
            SHORT_BINUNICODE => {
                let n = src.byte()? as usize;
                let v = self.unicode(src.take(n)?);
                self.push(v, at)?
            }
            BINUNICODE => {
                let n = u32::from_le_bytes(src.array()?) as u64;
                let n = self.check_len(src, n, at)?;
                let v = self.unicode(src.take(n)?);
                self.push(v, at)?
            }

            // ---- containers ----
            EMPTY_DICT => {
                if !self.whole_dict(src, at)? {
                    let v = self.new_slot(Slot::Dict(Vec::new()), Value::Dict);
                    self.push(v, at)?
                }
            }
            EMPTY_LIST => {
                if !self.whole_frame_list(src, at)? {
                    let v = self.new_slot(Slot::Seq(Vec::new()), Value::List);
                    self.push(v, at)?
                }
            }
            EMPTY_TUPLE => {
                let v = self.new_slot(Slot::Seq(Vec::new()), Value::Tuple);
                self.push(v, at)?
            }
            TUPLE1..=TUPLE3 => {
                let n = (op - TUPLE1 + 1) as usize;
                if self.stack.len() < n + self.floor() {
                    return Err(ReadError::malformed(
                        "TUPLE with too few items on the stack",
                        at,
                    ));
                }
                let items = self.stack.split_off(self.stack.len() - n);
                let v = self.seq_of(items, Value::Tuple);
                self.push(v, at)?
            }
            MARK => {
                if self.marks.len() >= MAX_MARKS {
                    return Err(ReadError::limit(
                        format!("nesting deeper than {MAX_MARKS} levels"),
                        at,
                    ));
                }
                self.marks.push(self.stack.len());
                self.frames_fast_path(src, at)?
            }
            APPEND => {
                let item = self.pop(at)?;
                let target = *self
                    .stack
                    .last()
                    .ok_or_else(|| ReadError::malformed("APPEND with no list", at))?;
                self.append(target, item, at)?
            }
            APPENDS | ADDITEMS => {
                if !self.append_whole_stack() {
                    let items = self.pop_mark(at)?;
                    let target = *self
                        .stack
                        .last()
                        .ok_or_else(|| ReadError::malformed("APPENDS with no list", at))?;
                    self.extend(target, items, at)?
                }
            }
            SETITEM => {
                if self.stack.len() < 3 + self.floor() {
                    return Err(ReadError::malformed(
                        "SETITEM with too few items on the stack",
                        at,
                    ));
                }
                let from = self.stack.len() - 2;
                self.set_items_from(from, from - 1, false, at)?
            }
            SETITEMS => self.set_items_from_mark(at)?,

            // ---- framing ----
            FRAME => {
                src.array::<8>()?;
            }
            _ => return self.rare_op(src, op, at),
        }
        Ok(None)
    }

    /// The opcodes of [`Self::op`] that snapshots hardly use, and those that are refused.
    #[cold]
    #[inline(never)]
    fn rare_op<R: Read>(
        &mut self,
        src: &mut Source<R>,
        op: u8,
        at: u64,
    ) -> Result<Option<Value>, ReadError> {
        match op {
            // ---- memo, by text index ----
            GET => {
                let i = parse_text_usize(&src.line(32)?, at)?;
                self.get(i, at)?
            }
            PUT => {
                let i = parse_text_usize(&src.line(32)?, at)?;
                self.put_top(i, at)?
            }

            // ---- scalars ----
            LONG4 => {
                let n = i32::from_le_bytes(src.array()?);
                if n < 0 {
                    return Err(ReadError::malformed("negative LONG4 length", at));
                }
                let n = self.check_len(src, n as u64, at)?;
                let v = le_int(src.take(n)?);
                let v = self.int_value(v);
                self.push(v, at)?
            }
            INT => {
                let line = src.line(64)?;
                let v = match line.as_slice() {
                    b"01" => LeInt::Small(Value::Bool(true)),
                    b"00" => LeInt::Small(Value::Bool(false)),
                    text => parse_text_int(text, at)?,
                };
                let v = self.int_value(v);
                self.push(v, at)?
            }
            LONG => {
                let mut line = src.line(4096)?;
                if line.last() == Some(&b'L') {
                    line.pop();
                }
                let v = parse_text_int(&line, at)?;
                let v = self.int_value(v);
                self.push(v, at)?
            }
            FLOAT => {
                let line = src.line(64)?;
                let v = std::str::from_utf8(&line)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .ok_or_else(|| ReadError::malformed("bad FLOAT text", at))?;
                self.push(Value::Float(v), at)?
            }

            // ---- strings and bytes ----
            BINUNICODE8 => {
                let n = u64::from_le_bytes(src.array()?);
                let n = self.check_len(src, n, at)?;
                let v = self.unicode(src.take(n)?);
                self.push(v, at)?
            }
            UNICODE => {
                let line = src.line(MAX_STR as usize)?;
                let s = raw_unicode_unescape(&line);
                let v = Value::Str(self.interner.intern_str(&s));
                self.push(v, at)?
            }
            STRING => {
                let line = src.line(MAX_STR as usize)?;
                let s = python_string_literal(&line)
                    .ok_or_else(|| ReadError::malformed("bad STRING literal", at))?;
                let v = self.unicode(&s);
                self.push(v, at)?
            }
            SHORT_BINSTRING => {
                let n = src.byte()? as usize;
                let v = self.unicode(src.take(n)?);
                self.push(v, at)?
            }
            BINSTRING => {
                let n = i32::from_le_bytes(src.array()?);
                if n < 0 {
                    return Err(ReadError::malformed("negative BINSTRING length", at));
                }
                let n = self.check_len(src, n as u64, at)?;
                let v = self.unicode(src.take(n)?);
                self.push(v, at)?
            }
            SHORT_BINBYTES => {
                let n = src.byte()? as usize;
                let v = self.bytes(src.take(n)?);
                self.push(v, at)?
            }
            BINBYTES => {
                let n = u32::from_le_bytes(src.array()?) as u64;
                let n = self.check_len(src, n, at)?;
                let v = self.bytes(src.take(n)?);
                self.push(v, at)?
            }
            BINBYTES8 | BYTEARRAY8 => {
                let n = u64::from_le_bytes(src.array()?);
                let n = self.check_len(src, n, at)?;
                let v = self.bytes(src.take(n)?);
                self.push(v, at)?
            }

            // ---- containers ----
            EMPTY_SET => {
                let v = self.new_slot(Slot::Seq(Vec::new()), Value::Set);
                self.push(v, at)?
            }
            TUPLE => {
                let items = self.pop_mark(at)?;
                let v = self.seq_of(items, Value::Tuple);
                self.push(v, at)?
            }
            LIST => {
                let items = self.pop_mark(at)?;
                let v = self.seq_of(items, Value::List);
                self.push(v, at)?
            }
            FROZENSET => {
                let items = self.pop_mark(at)?;
                let v = self.seq_of(items, Value::Set);
                self.push(v, at)?
            }
            DICT => {
                // `MARK k v ... d` is an empty dict below the mark, then SETITEMS.
                let m = *self
                    .marks
                    .last()
                    .ok_or_else(|| ReadError::malformed("no MARK to pop to", at))?;
                let v = self.new_slot(Slot::Dict(Vec::new()), Value::Dict);
                self.stack.insert(m, v);
                *self.marks.last_mut().expect("checked above") = m + 1;
                self.set_items_from_mark(at)?
            }

            // ---- stack ----
            POP => {
                self.pop(at)?;
            }
            POP_MARK => {
                self.pop_mark(at)?;
            }
            DUP => {
                let v = *self
                    .stack
                    .last()
                    .ok_or_else(|| ReadError::malformed("DUP on an empty stack", at))?;
                self.push(v, at)?
            }

            // ---- framing ----
            PROTO => {
                let p = src.byte()?;
                if p > 5 {
                    return Err(ReadError::malformed(
                        format!("unsupported pickle protocol {p}"),
                        at,
                    ));
                }
                self.protocol = p;
            }
            STOP => {
                if !self.marks.is_empty() {
                    return Err(ReadError::malformed("STOP inside an open MARK", at));
                }
                let v = self.pop(at)?;
                if !self.stack.is_empty() {
                    return Err(ReadError::malformed(
                        "STOP with values left on the stack",
                        at,
                    ));
                }
                return Ok(Some(v));
            }

            // ---- code: never ----
            GLOBAL => return Err(forbidden("GLOBAL", at)),
            STACK_GLOBAL => return Err(forbidden("STACK_GLOBAL", at)),
            REDUCE => return Err(forbidden("REDUCE", at)),
            BUILD => return Err(forbidden("BUILD", at)),
            INST => return Err(forbidden("INST", at)),
            OBJ => return Err(forbidden("OBJ", at)),
            NEWOBJ => return Err(forbidden("NEWOBJ", at)),
            NEWOBJ_EX => return Err(forbidden("NEWOBJ_EX", at)),
            PERSID => return Err(forbidden("PERSID", at)),
            BINPERSID => return Err(forbidden("BINPERSID", at)),
            EXT1 => return Err(forbidden("EXT1", at)),
            EXT2 => return Err(forbidden("EXT2", at)),
            EXT4 => return Err(forbidden("EXT4", at)),
            NEXT_BUFFER => return Err(forbidden("NEXT_BUFFER", at)),
            READONLY_BUFFER => return Err(forbidden("READONLY_BUFFER", at)),
            other => {
                return Err(ReadError::UnknownOpcode {
                    byte: other,
                    offset: at,
                })
            }
        }
        Ok(None)
    }

    /// Stack index below which the current MARK forbids popping.
    #[inline]
    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    #[inline(always)]
    fn push(&mut self, v: Value, at: u64) -> Result<(), ReadError> {
        if self.stack.len() >= MAX_STACK {
            return Err(stack_limit(at));
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self, at: u64) -> Result<Value, ReadError> {
        if self.stack.len() <= self.floor() {
            return Err(ReadError::malformed("pop from an empty stack", at));
        }
        Ok(self.stack.pop().expect("checked above"))
    }

    fn pop_mark(&mut self, at: u64) -> Result<Vec<Value>, ReadError> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| ReadError::malformed("no MARK to pop to", at))?;
        Ok(self.stack.split_off(m))
    }

    fn check_len<R: Read>(&self, src: &Source<R>, n: u64, at: u64) -> Result<usize, ReadError> {
        if let Some(left) = src.remaining() {
            if n > left {
                return Err(ReadError::malformed(
                    format!("length {n} runs past the end of the file ({left} bytes left)"),
                    at,
                ));
            }
        }
        if n > MAX_STR {
            return Err(ReadError::limit(
                format!("a {n}-byte string exceeds the {} MiB limit", MAX_STR >> 20),
                at,
            ));
        }
        Ok(n as usize)
    }

    fn int_value(&mut self, v: LeInt) -> Value {
        match v {
            LeInt::Small(v) => v,
            LeInt::Wide(w) => {
                self.wide.push(w);
                Value::Wide(self.wide.len() as u32 - 1)
            }
        }
    }

    fn unicode(&mut self, raw: &[u8]) -> Value {
        let id = match std::str::from_utf8(raw) {
            Ok(s) => self.interner.intern_str(s),
            Err(_) => self.interner.intern_str(&String::from_utf8_lossy(raw)),
        };
        Value::Str(id)
    }

    fn bytes(&mut self, raw: &[u8]) -> Value {
        self.bytes.push(raw.into());
        Value::Bytes(self.bytes.len() as u32 - 1)
    }

    fn new_slot(&mut self, slot: Slot, kind: fn(u32) -> Value) -> Value {
        self.slots.push(slot);
        self.slot_memo.push(u32::MAX);
        kind(self.slots.len() as u32 - 1)
    }

    fn seq_of(&mut self, mut items: Vec<Value>, kind: fn(u32) -> Value) -> Value {
        for v in items.iter_mut() {
            *v = self.settle(*v);
        }
        self.new_slot(Slot::Seq(items), kind)
    }

    #[inline(always)]
    fn get(&mut self, i: usize, at: u64) -> Result<(), ReadError> {
        match self.memo.get(i) {
            Some(Some(v)) if self.stack.len() < MAX_STACK => {
                let v = *v;
                self.stack.push(v);
                Ok(())
            }
            _ => Err(self.get_error(i, at)),
        }
    }

    #[cold]
    #[inline(never)]
    fn get_error(&self, i: usize, at: u64) -> ReadError {
        if self.stack.len() >= MAX_STACK {
            return ReadError::limit(
                format!("more than {MAX_STACK} values on the pickle stack"),
                at,
            );
        }
        ReadError::malformed(format!("memo index {i} was never stored"), at)
    }

    fn put_top(&mut self, i: usize, at: u64) -> Result<(), ReadError> {
        let v = *self
            .stack
            .last()
            .ok_or_else(|| ReadError::malformed("PUT on an empty stack", at))?;
        self.put(i, v, at)
    }

    fn put(&mut self, i: usize, v: Value, at: u64) -> Result<(), ReadError> {
        if let Value::List(s) | Value::Dict(s) | Value::Tuple(s) | Value::Set(s) = v {
            if self.slot_memo[s as usize] == u32::MAX && i < u32::MAX as usize {
                self.slot_memo[s as usize] = i as u32;
            }
        }
        if i < self.memo.len() {
            if self.memo[i].is_some() {
                // A memo entry that changes can change what a known run of GETs means.
                self.runs.forget();
            }
            self.memo[i] = Some(v);
        } else if i - self.memo.len() <= MAX_MEMO_GAP {
            self.memo.resize(i, None);
            self.memo.push(Some(v));
        } else {
            return Err(ReadError::limit(
                format!(
                    "memo index {i} is far beyond the {} stored",
                    self.memo.len()
                ),
                at,
            ));
        }
        Ok(())
    }

    fn open_slot(&mut self, target: Value, at: u64) -> Result<&mut Slot, ReadError> {
        let s = match target {
            Value::List(s) | Value::Dict(s) | Value::Set(s) => s,
            _ => {
                return Err(ReadError::malformed(
                    "APPEND or SETITEM on a value that is not a container",
                    at,
                ))
            }
        };
        match &mut self.slots[s as usize] {
            Slot::Done(_) => Err(ReadError::malformed(
                "unsupported structure: a container changed after it was used",
                at,
            )),
            slot => Ok(slot),
        }
    }

    /// APPEND: one item, no batch to allocate.
    fn append(&mut self, target: Value, item: Value, at: u64) -> Result<(), ReadError> {
        let item = self.settle(item);
        self.reopen_stack(target);
        match self.open_slot(target, at)? {
            Slot::Seq(seq) => {
                seq.push(item);
                Ok(())
            }
            _ => Err(ReadError::malformed("APPEND on a dict", at)),
        }
    }

    fn extend(&mut self, target: Value, mut items: Vec<Value>, at: u64) -> Result<(), ReadError> {
        for v in items.iter_mut() {
            *v = self.settle(*v);
        }
        self.reopen_stack(target);
        match self.open_slot(target, at)? {
            Slot::Seq(seq) => {
                if seq.is_empty() {
                    *seq = items;
                } else {
                    seq.extend_from_slice(&items);
                }
                Ok(())
            }
            _ => Err(ReadError::malformed("APPENDS on a dict", at)),
        }
    }

    /// SETITEMS: the pairs above the last MARK go into the dict below it.
    fn set_items_from_mark(&mut self, at: u64) -> Result<(), ReadError> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| ReadError::malformed("no MARK to pop to", at))?;
        if m == 0 {
            return Err(ReadError::malformed("SETITEMS with no dict", at));
        }
        self.set_items_from(m, m - 1, true, at)
    }

    /// Stores `stack[from..]` as key/value pairs into the dict at `stack[target]`, then pops them.
    ///
    /// `batch`: this is a SETITEMS. CPython writes a dict of fewer than 1000 items in one SETITEMS batch,
    /// so such a batch into an empty dict is the whole dict and can be specialised at once. Single
    /// SETITEMs (protocol 0, one-item dicts) wait until the dict is consumed.
    fn set_items_from(
        &mut self,
        from: usize,
        target: usize,
        batch: bool,
        at: u64,
    ) -> Result<(), ReadError> {
        if !(self.stack.len() - from).is_multiple_of(2) {
            return Err(ReadError::malformed(
                "SETITEMS with an odd number of items",
                at,
            ));
        }
        for i in from..self.stack.len() {
            let v = self.stack[i];
            self.stack[i] = self.settle(v);
        }
        let target_value = self.stack[target];
        let s = match target_value {
            Value::Dict(s) => s as usize,
            Value::List(_) | Value::Set(_) => {
                return Err(ReadError::malformed("SETITEMS on a list", at))
            }
            _ => {
                return Err(ReadError::malformed(
                    "SETITEMS on a value that is not a dict",
                    at,
                ))
            }
        };
        let was_empty = match &self.slots[s] {
            Slot::Dict(d) => d.is_empty(),
            Slot::Done(_) => {
                return Err(ReadError::malformed(
                    "unsupported structure: a container changed after it was used",
                    at,
                ))
            }
            Slot::Seq(_) => return Err(ReadError::malformed("SETITEMS on a list", at)),
        };
        // The common case: a whole dict set in one go. Trace entries and frames become compact right here,
        // without ever being stored as pairs.
        if was_empty && batch && self.stack.len() - from < 2000 {
            // Borrow the stack out (O(1)) while specialising, which needs the rest of the machine.
            let stack = std::mem::take(&mut self.stack);
            let special = self.specialise_dict(pairs_of(&stack[from..]));
            self.stack = stack;
            if let Some(done) = special {
                self.mark_done(s, done);
                self.stack.truncate(from);
                return Ok(());
            }
        }
        if let Slot::Dict(d) = &mut self.slots[s] {
            // Into an empty dict this allocates exactly once.
            d.extend_from_slice(pairs_of(&self.stack[from..]));
        }
        self.stack.truncate(from);
        Ok(())
    }

    /// A value is being stored into a container: turn snapshot shapes into their compact form.
    /// Inlined tag check: most values (frames, ints, strings) need nothing.
    #[inline(always)]
    fn settle(&mut self, v: Value) -> Value {
        match v {
            Value::Dict(_) | Value::List(_) => self.settle_container(v),
            other => other,
        }
    }

    #[inline(never)]
    fn settle_container(&mut self, v: Value) -> Value {
        let s = match v {
            Value::Dict(s) | Value::List(s) => s as usize,
            other => return other,
        };
        let special = match &mut self.slots[s] {
            Slot::Done(done) => return *done,
            Slot::Dict(pairs) => {
                let pairs = std::mem::take(pairs);
                let special = self.specialise_dict(&pairs);
                if special.is_none() {
                    self.slots[s] = Slot::Dict(pairs);
                }
                special
            }
            Slot::Seq(items) if matches!(v, Value::List(_)) => {
                intern_frames(&mut self.interner, &mut self.scratch, items).map(Value::Stack)
            }
            Slot::Seq(_) => None,
        };
        match special {
            Some(done) => {
                self.mark_done(s, done);
                done
            }
            None => v,
        }
    }

    /// A list interned as a stack gets more items (a pickler that batches differently from CPython's):
    /// turn it back into a plain list of its frames, here and in the memo.
    fn reopen_stack(&mut self, target: Value) {
        let Value::List(s) = target else { return };
        let Slot::Done(Value::Stack(id)) = self.slots[s as usize] else {
            return;
        };
        let frames = self
            .interner
            .stack(id)
            .iter()
            .map(|&f| Value::Frame(f))
            .collect();
        self.slots[s as usize] = Slot::Seq(frames);
        let m = self.slot_memo[s as usize];
        if let Some(entry) = self.memo.get_mut(m as usize) {
            if *entry == Some(Value::Stack(id)) {
                *entry = Some(target);
            }
        }
    }

    fn mark_done(&mut self, s: usize, done: Value) {
        self.slots[s] = Slot::Done(done);
        let m = self.slot_memo[s];
        if m != u32::MAX {
            if let Some(entry) = self.memo.get_mut(m as usize) {
                if matches!(entry, Some(Value::List(x) | Value::Dict(x)) if *x as usize == s) {
                    *entry = Some(done);
                }
            }
        }
    }
}

/// `[k0, v0, k1, v1, ...]` as `[key, value]` pairs; the length is even (checked by the caller).
fn pairs_of(items: &[Value]) -> &[[Value; 2]] {
    items.as_chunks::<2>().0
}

#[cold]
#[inline(never)]
fn stack_limit(at: u64) -> ReadError {
    ReadError::limit(
        format!("more than {MAX_STACK} values on the pickle stack"),
        at,
    )
}

fn forbidden(opcode: &'static str, offset: u64) -> ReadError {
    ReadError::Forbidden { opcode, offset }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of little-endian two's complement `bytes`, the slow way.
    fn reference(bytes: &[u8]) -> i128 {
        let mut v: i128 = if bytes.last().is_some_and(|b| b & 0x80 != 0) {
            -1
        } else {
            0
        };
        for &b in bytes.iter().rev() {
            v = (v << 8) | b as i128;
        }
        v
    }

    #[test]
    fn short_longs_read_as_their_two_s_complement_value() {
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        for round in 0..20_000u32 {
            let x = next();
            let len = 1 + (round % 8) as usize;
            let bytes = &x.to_le_bytes()[..len];
            match le_int(bytes) {
                LeInt::Small(Value::Int(v)) => assert_eq!(v as i128, reference(bytes), "{bytes:?}"),
                _ => panic!("{bytes:?} did not read as an i64"),
            }
        }
        for bytes in [
            &[0x80u8][..],
            &[0x7f],
            &[0xff; 8],
            &[0, 0, 0, 0, 0, 0, 0, 0x80],
        ] {
            let LeInt::Small(Value::Int(v)) = le_int(bytes) else {
                panic!("{bytes:?}")
            };
            assert_eq!(v as i128, reference(bytes));
        }
    }
}
