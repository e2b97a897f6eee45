//! The fast paths for the hottest shape in snapshots, a trace entry's frame list
//! (`EMPTY_LIST MEMOIZE MARK BINGET… APPENDS`): read ahead in the buffer and interned at once. When the
//! bytes do not fit the shape, what was read is pushed exactly as the opcodes would have pushed it and
//! the opcode loop goes on, so the result never depends on whether a fast path ran.

use std::io::Read;

use super::opcodes::*;
use super::source::Source;
use super::{le_int, stack_limit, LeInt, Machine, Slot, Value, MAX_MARKS, MAX_STACK};
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
        let (id, end) = match self.runs.get(&buf[first..]) {
            Some((id, len)) => (id, first + len),
            None => {
                let run = &buf[first..];
                let len = scan_frame_gets(&self.memo, run, &mut self.scratch);
                if self.scratch.is_empty() || run.get(len) != Some(&APPENDS) {
                    return Ok(false);
                }
                let id = self.interner.intern_stack(&self.scratch);
                self.runs.insert(&run[..len], id);
                (id, first + len)
            }
        };
        src.advance(end + 1);
        let done = Value::Stack(id);
        self.stack.push(done);
        self.put(memo_index, done, at)?;
        Ok(true)
    }

    /// The shape of every trace entry, right after its `EMPTY_DICT`: `MEMOIZE MARK (key value)* SETITEMS`,
    /// each key a `GET` of a string and each value a `GET` of a plain value, an integer, `None`, a bool
    /// or a frame list already known to [`Runs`]. Read from the buffer whole, then run as the opcodes
    /// would have run (the dict's slot and memo entry, the frame list's memo entry, the pairs
    /// specialised or stored, the dict left on the stack), without a trip through the opcode loop per
    /// key and value. Anything else, or a machine near a limit, leaves it to the opcode loop, with
    /// nothing changed but [`Runs`]' guess.
    pub(super) fn whole_dict<R: Read>(
        &mut self,
        src: &mut Source<R>,
        at: u64,
    ) -> Result<bool, ReadError> {
        /// The most pairs read here (a trace entry has 5 to 9).
        const MAX_PAIRS: usize = 16;
        if self.marks.len() >= MAX_MARKS || self.stack.len() + 2 * MAX_PAIRS + 4 >= MAX_STACK {
            return Ok(false);
        }
        let buf = src.buffered();
        if buf.get(..2) != Some(&[MEMOIZE, MARK]) {
            return Ok(false);
        }
        let mut i = 2;
        let mut pairs = [[Value::None; 2]; MAX_PAIRS];
        let mut n = 0;
        // The frame list's stack, when a value is one.
        let mut list = None;
        while buf.get(i) != Some(&SETITEMS) {
            if n == MAX_PAIRS {
                return Ok(false);
            }
            let Some((k, len)) = get_at(buf, i) else {
                return Ok(false);
            };
            let key = match self.memo.get(k) {
                Some(Some(key @ Value::Str(_))) => *key,
                _ => return Ok(false),
            };
            i += len;
            let (value, len) = match buf.get(i) {
                Some(&(BINGET | LONG_BINGET)) => {
                    let Some((k, len)) = get_at(buf, i) else {
                        return Ok(false);
                    };
                    match self.memo.get(k) {
                        Some(Some(
                            v @ (Value::Str(_)
                            | Value::Int(_)
                            | Value::U64(_)
                            | Value::None
                            | Value::Bool(_)),
                        )) => (*v, len),
                        _ => return Ok(false),
                    }
                }
                Some(&BININT1) if i + 2 <= buf.len() => (Value::Int(buf[i + 1] as i64), 2),
                Some(&BININT2) if i + 3 <= buf.len() => (
                    Value::Int(u16::from_le_bytes([buf[i + 1], buf[i + 2]]) as i64),
                    3,
                ),
                Some(&BININT) if i + 5 <= buf.len() => {
                    let v = i32::from_le_bytes([buf[i + 1], buf[i + 2], buf[i + 3], buf[i + 4]]);
                    (Value::Int(v as i64), 5)
                }
                Some(&LONG1) if i + 2 <= buf.len() && i + 2 + buf[i + 1] as usize <= buf.len() => {
                    let end = i + 2 + buf[i + 1] as usize;
                    match le_int(&buf[i + 2..end]) {
                        LeInt::Small(v) => (v, end - i),
                        LeInt::Wide(_) => return Ok(false),
                    }
                }
                Some(&NONE) => (Value::None, 1),
                Some(&NEWTRUE) => (Value::Bool(true), 1),
                Some(&NEWFALSE) => (Value::Bool(false), 1),
                Some(&EMPTY_LIST)
                    if list.is_none() && buf.get(i + 1..i + 3) == Some(&[MEMOIZE, MARK]) =>
                {
                    let Some((id, len)) = self.runs.get(&buf[i + 3..]) else {
                        return Ok(false);
                    };
                    list = Some(id);
                    // EMPTY_LIST MEMOIZE MARK, the GETs, APPENDS.
                    (Value::Stack(id), 3 + len + 1)
                }
                _ => return Ok(false),
            };
            i += len;
            pairs[n] = [key, value];
            n += 1;
        }
        // As the opcodes would have run: EMPTY_DICT's slot, pushed and memoised; MARK; the pairs (a
        // frame list memoised as it is read, after the dict); SETITEMS.
        let dict = self.new_slot(Slot::Dict(Vec::new()), Value::Dict);
        let Value::Dict(s) = dict else {
            unreachable!("new_slot makes what it is asked for")
        };
        self.put(self.memo.len(), dict, at)?;
        if let Some(id) = list {
            self.put(self.memo.len(), Value::Stack(id), at)?;
        }
        match self.specialise_dict(&pairs[..n]) {
            Some(done) => self.mark_done(s as usize, done),
            None => {
                if let Slot::Dict(d) = &mut self.slots[s as usize] {
                    d.extend_from_slice(&pairs[..n]);
                }
            }
        }
        src.advance(i + 1);
        self.push(dict, at)?;
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
        if let Some((id, len)) = self.runs.get(buf) {
            src.advance(len + 1);
            self.mark_done(s as usize, Value::Stack(id));
            self.marks.pop();
            return Ok(());
        }
        let i = scan_frame_gets(&self.memo, buf, &mut self.scratch);
        let n = self.scratch.len();
        if n > 0 && buf.get(i) == Some(&APPENDS) {
            let id = self.interner.intern_stack(&self.scratch);
            self.runs.insert(&buf[..i], id);
            src.advance(i + 1);
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

/// Stacks by the bytes of the `GET`s that listed their frames. A long run re-creates each frame list
/// every time it records it (`MARK BINGET… APPENDS`, the frame dicts memoised once), so the same bytes
/// come back hundreds of thousands of times: a hit costs a hash of those bytes, where reading them costs
/// a memo lookup per frame (scattered over a memo of millions) and a hash of the frames. A run read here
/// means what it meant when it was read as long as no memo entry changes: the machine forgets them all
/// when one does (a pickler never does it). Bounded, as everything a file can make.
///
/// A training loop allocates the same way every step, so its frame lists come back in the same order
/// too: the runs read are kept in order (the last [`HISTORY`] of them), and once a run is found, the
/// one that followed it where it was read before is tried first, with one comparison of bytes (no scan
/// of the GETs, no hash); each hit then predicts the next. On a long run's tiles 88–96 % of the runs
/// read (and 92 % of the kk fixture's) came so, where "the run that followed this one last time"
/// guessed 32–69 %. A guess stands for the same run the scan would find: its bytes are GETs only,
/// fewer than [`MAX_RUN_GETS`], so the same bytes followed by `APPENDS` are that run whole.
#[derive(Default)]
pub(super) struct Runs {
    /// Each run kept, in the order they were first read.
    runs: Vec<Run>,
    /// Indices into `runs`, found by [`hash_of`] the run and compared by [`same`] (a slice's `==` is a
    /// byte-at-a-time `memcmp` on wasm32).
    index: hashbrown::HashTable<u32>,
    seed: foldhash::fast::RandomState,
    bytes: usize,
    /// The runs read, by their index in `runs`: read number `n` at `history[n % HISTORY]`.
    history: Vec<u32>,
    /// How many runs were read.
    read: u64,
    /// Where the last run read was read before (its number), when it was: the next guess follows it.
    follows: Option<u64>,
}

/// One run of [`Runs`]: its bytes (the GETs, without the `APPENDS`), its stack, and the number of its
/// latest read.
struct Run {
    bytes: Box<[u8]>,
    stack: StackId,
    read_as: Option<u64>,
}

/// What [`Runs`] keeps at most, in bytes of runs.
const MAX_RUN_BYTES: usize = 32 << 20;

/// How many of the runs read [`Runs`] remembers in order (4 MiB of them): more than a training step
/// makes in the snapshots seen.
const HISTORY: u64 = 1 << 20;

/// The hash [`Runs`] files `run` under.
fn hash_of(seed: &foldhash::fast::RandomState, run: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    seed.hash_one(run)
}

impl Runs {
    /// The stack of the run at the start of `buf` (`BINGET`/`LONG_BINGET`s of frames, at most 999,
    /// then `APPENDS`) and the bytes before its `APPENDS`, when it was read before.
    pub(super) fn get(&mut self, buf: &[u8]) -> Option<(StackId, usize)> {
        if self.runs.is_empty() {
            return None;
        }
        if let Some(k) = self.guess() {
            let run = &self.runs[k as usize];
            let len = run.bytes.len();
            if buf.get(len) == Some(&APPENDS) && same(&run.bytes, &buf[..len]) {
                let stack = run.stack;
                self.follows = self.follows.map(|n| n + 1);
                self.note(k);
                return Some((stack, len));
            }
        }
        let len = get_run(buf);
        if len == 0 || buf.get(len) != Some(&APPENDS) {
            return None;
        }
        let run = &buf[..len];
        let runs = &self.runs;
        let found = *self.index.find(hash_of(&self.seed, run), |&k| {
            same(&runs[k as usize].bytes, run)
        })?;
        self.follows = self.runs[found as usize].read_as;
        self.note(found);
        Some((self.runs[found as usize].stack, len))
    }

    /// The run read after the one the last run was read as before, if it is still remembered.
    fn guess(&self) -> Option<u32> {
        let n = self.follows? + 1;
        (n < self.read && self.read - n <= HISTORY).then(|| self.history[(n % HISTORY) as usize])
    }

    /// Run `k` was read now.
    fn note(&mut self, k: u32) {
        let n = self.read;
        self.runs[k as usize].read_as = Some(n);
        let at = (n % HISTORY) as usize;
        if at < self.history.len() {
            self.history[at] = k;
        } else {
            self.history.push(k);
        }
        self.read += 1;
    }

    /// Keeps `run` as the frames of stack `id`: [`scan_frame_gets`] read it whole (an `APPENDS` follows
    /// it) after [`Self::get`] found no such run, so it is not kept yet.
    pub(super) fn insert(&mut self, run: &[u8], id: StackId) {
        self.follows = None;
        if self.bytes + run.len() > MAX_RUN_BYTES {
            return;
        }
        debug_assert!(!run.is_empty());
        let seed = &self.seed;
        let hash = hash_of(seed, run);
        let runs = &self.runs;
        debug_assert!(self
            .index
            .find(hash, |&k| same(&runs[k as usize].bytes, run))
            .is_none());
        self.bytes += run.len();
        let k = runs.len() as u32;
        let rehash = |&k: &u32| hash_of(seed, &runs[k as usize].bytes);
        self.index.insert_unique(hash, k, rehash);
        self.runs.push(Run {
            bytes: run.into(),
            stack: id,
            read_as: None,
        });
        self.note(k);
    }

    pub(super) fn forget(&mut self) {
        if !self.runs.is_empty() {
            *self = Runs {
                seed: self.seed.clone(),
                ..Runs::default()
            };
        }
    }
}

/// `a == b`, eight bytes at a time.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (wa, wb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tails = wa
        .remainder()
        .iter()
        .zip(wb.remainder())
        .all(|(x, y)| x == y);
    let word = |c: &[u8]| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    tails && wa.zip(wb).all(|(x, y)| word(x) == word(y))
}

/// The most frame `GET`s a fast path reads: under the pickler's batch of 1000, so a following `APPENDS`
/// holds the list's whole content.
const MAX_RUN_GETS: usize = 999;

/// The memo index a `BINGET`/`LONG_BINGET` at `buf[i]` gets, and the bytes it takes (`None`: no such
/// opcode whole there).
fn get_at(buf: &[u8], i: usize) -> Option<(usize, usize)> {
    match buf.get(i) {
        Some(&BINGET) if i + 2 <= buf.len() => Some((buf[i + 1] as usize, 2)),
        Some(&LONG_BINGET) if i + 5 <= buf.len() => {
            let k = u32::from_le_bytes([buf[i + 1], buf[i + 2], buf[i + 3], buf[i + 4]]);
            Some((k as usize, 5))
        }
        _ => None,
    }
}

/// The bytes the `GET`s at the start of `buf` take (at most [`MAX_RUN_GETS`], as [`scan_frame_gets`]
/// reads), whatever they get.
fn get_run(buf: &[u8]) -> usize {
    let mut i = 0;
    for _ in 0..MAX_RUN_GETS {
        let Some((_, len)) = get_at(buf, i) else {
            break;
        };
        i += len;
    }
    i
}

/// Reads consecutive `BINGET`/`LONG_BINGET`s of frames from the start of `buf` into `frames` (cleared
/// first), at most [`MAX_RUN_GETS`]. Returns the bytes they take; stops at anything else, including a
/// GET of a non-frame.
pub(super) fn scan_frame_gets(
    memo: &[Option<Value>],
    buf: &[u8],
    frames: &mut Vec<FrameId>,
) -> usize {
    frames.clear();
    let mut i = 0;
    while frames.len() < MAX_RUN_GETS {
        let Some((k, len)) = get_at(buf, i) else {
            break;
        };
        let Some(Some(Value::Frame(f))) = memo.get(k) else {
            break;
        };
        frames.push(*f);
        i += len;
    }
    i
}

/// Interns `items` as a stack when they are a non-empty list of frames (`scratch` is reused storage).
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// `Runs` answers as a plain map of bytes to stacks would, whatever order the runs come in: in
    /// repeating steps (its guesses hit), steps that drift (they miss), runs that are prefixes of one
    /// another, GET bytes that look like `APPENDS`, and past [`HISTORY`] reads (guesses forgotten).
    #[test]
    fn runs_find_what_a_plain_map_finds() {
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        // A run is its GETs; some are prefixes of others.
        let mut alphabet: Vec<Vec<u8>> = Vec::new();
        for k in 0..60 {
            let mut run = Vec::new();
            if k % 7 == 6 {
                run.extend_from_slice(&alphabet[k - 1]);
            }
            for _ in 0..1 + next() % 12 {
                if next().is_multiple_of(2) {
                    run.extend_from_slice(&[BINGET, [APPENDS, next() as u8][next() as usize % 2]]);
                } else {
                    run.push(LONG_BINGET);
                    run.extend_from_slice(&(next() as u32).to_le_bytes());
                }
            }
            alphabet.push(run);
        }
        let step: Vec<usize> = (0..500).map(|_| next() as usize % alphabet.len()).collect();
        let mut runs = Runs::default();
        let mut plain: HashMap<Vec<u8>, StackId> = HashMap::new();
        let mut hits = 0;
        let reads = HISTORY as usize + 300_000;
        for n in 0..reads {
            // Mostly the step again; now and then another run, as steps differ.
            let k = if next().is_multiple_of(50) {
                next() as usize % alphabet.len()
            } else {
                step[n % step.len()]
            };
            let mut buf = alphabet[k].clone();
            buf.push(APPENDS);
            buf.extend_from_slice(&[BINGET, 3, APPENDS]);
            let want = plain.get(&alphabet[k]).copied();
            let got = runs.get(&buf);
            assert_eq!(got, want.map(|id| (id, alphabet[k].len())), "read {n}");
            if got.is_some() {
                hits += 1;
            } else {
                let id = StackId(plain.len() as u32 + 1);
                plain.insert(alphabet[k].clone(), id);
                runs.insert(&alphabet[k], id);
            }
        }
        assert!(hits > reads - 100);
        // After a memo change nothing is known, and the runs are learnt again.
        runs.forget();
        let mut buf = alphabet[step[0]].clone();
        buf.push(APPENDS);
        assert_eq!(runs.get(&buf), None);
    }
}
