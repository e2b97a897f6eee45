//! A synthetic snapshot, written as CPython's pickler writes `torch.cuda.memory._dump_snapshot()`:
//! protocol 4 in 64 KiB frames, every string and container memoized, repeated keys, action names and
//! frames referenced by `BINGET`/`LONG_BINGET`, integers in the smallest opcode that holds them.
//!
//! The page parses one when it starts, so the browser has optimised the hot paths before the user's
//! file arrives (the rehearsal: ARCHITECTURE.md, "Performance on wasm"). Tests use it as input of any
//! size whose figures are known.

use std::collections::HashMap;

/// What [`pickle`] wrote, known independently of the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub bytes: Vec<u8>,
    /// Trace entries of the one device (0).
    pub entries: usize,
    /// `alloc` entries.
    pub allocations: usize,
    /// Highest sum of live allocation sizes after any entry.
    pub peak_bytes: u64,
    /// Distinct frames in the stacks written.
    pub frames: usize,
}

/// A training-loop-shaped snapshot of device 0 with about `steps` × 64 trace entries: persistent
/// parameters, then `steps` steps that each allocate activations and free them (`free_requested` then
/// `free_completed`), every entry with a stack of 8–24 frames drawn from a shared pool, and the final
/// segments with their blocks. The same `steps` always gives the same bytes.
pub fn pickle(steps: usize) -> Written {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut p = Pickler::new();
    let pool = frame_pool(&mut rng);
    let stacks: Vec<Vec<usize>> = (0..48)
        .map(|_| {
            let depth = 8 + rng.below(17) as usize;
            (0..depth)
                .map(|_| rng.below(pool.len() as u64) as usize)
                .collect()
        })
        .collect();

    const SEGMENT: u64 = 64 << 20;
    const BASE: u64 = 0x7f3a_0000_0000;
    let segments = 6u64;
    let mut trace: Vec<Entry> = Vec::new();
    let mut time = 1_748_730_219_596_671u64;
    let mut tick = |rng: &mut XorShift| {
        time += 1 + rng.below(400);
        time
    };
    for s in 0..segments {
        trace.push(Entry::new(
            "segment_alloc",
            BASE + s * SEGMENT,
            SEGMENT,
            tick(&mut rng),
            0,
        ));
    }
    // Parameters: live for the whole trace, at the start of segment 0.
    let mut params = Vec::new();
    let mut at = BASE;
    for _ in 0..8 {
        let size = (1 + rng.below(8)) << 20;
        params.push((at, size));
        trace.push(Entry::new(
            "alloc",
            at,
            size,
            tick(&mut rng),
            rng.below(48) as usize,
        ));
        at += size;
    }
    let mut live: u64 = params.iter().map(|p| p.1).sum();
    let mut peak = live;
    for _ in 0..steps {
        // Activations: a bump allocation through segments 1.., freed in reverse order.
        let mut acts = Vec::new();
        let mut at = BASE + SEGMENT;
        for _ in 0..21 {
            let size = match rng.below(4) {
                0 => 512 * (1 + rng.below(64)),
                1 => (1 + rng.below(256)) << 12,
                _ => (1 + rng.below(64)) << 16,
            };
            let stack = rng.below(48) as usize;
            trace.push(Entry::new("alloc", at, size, tick(&mut rng), stack));
            live += size;
            peak = peak.max(live);
            acts.push((at, size, stack));
            at += size;
        }
        while let Some((addr, size, stack)) = acts.pop() {
            trace.push(Entry::new(
                "free_requested",
                addr,
                size,
                tick(&mut rng),
                stack,
            ));
            trace.push(Entry::new(
                "free_completed",
                addr,
                size,
                tick(&mut rng),
                stack,
            ));
            live -= size;
        }
    }
    let allocations = trace.iter().filter(|e| e.action == "alloc").count();

    // {'segments': [...], 'device_traces': [[...]], 'allocator_settings': {...}, 'external_annotations': []}
    p.empty_dict();
    p.mark();
    p.str("segments");
    p.empty_list();
    p.mark();
    for s in 0..segments {
        let address = BASE + s * SEGMENT;
        let used: Vec<(u64, u64)> = if s == 0 { params.clone() } else { Vec::new() };
        let allocated: u64 = used.iter().map(|u| u.1).sum();
        p.empty_dict();
        p.mark();
        p.str("device");
        p.int(0);
        p.str("address");
        p.int(address);
        p.str("total_size");
        p.int(SEGMENT);
        for key in ["allocated_size", "active_size", "requested_size"] {
            p.str(key);
            p.int(allocated);
        }
        p.str("stream");
        p.int(0);
        p.str("segment_type");
        p.str("large");
        p.str("segment_pool_id");
        p.int(0);
        p.int(0);
        p.op(TUPLE2);
        p.memoize();
        p.str("is_expandable");
        p.op(NEWFALSE);
        p.str("frames");
        p.empty_list();
        p.str("blocks");
        p.empty_list();
        p.mark();
        let mut at = address;
        for (i, &(addr, size)) in used.iter().enumerate() {
            block(
                &mut p,
                &pool,
                &stacks[i % stacks.len()],
                addr,
                size,
                "active_allocated",
            );
            at = addr + size;
        }
        if at < address + SEGMENT {
            block(&mut p, &pool, &[], at, address + SEGMENT - at, "inactive");
        }
        p.op(APPENDS);
        p.op(SETITEMS);
    }
    p.op(APPENDS);

    p.str("device_traces");
    p.empty_list();
    p.empty_list();
    for chunk in trace.chunks(1000) {
        p.mark();
        for e in chunk {
            p.empty_dict();
            p.mark();
            p.str("action");
            p.str(e.action);
            p.str("addr");
            p.int(e.addr);
            p.str("size");
            p.int(e.size);
            p.str("stream");
            p.int(0);
            p.str("time_us");
            p.int(e.time_us);
            p.str("frames");
            frames(&mut p, &pool, &stacks[e.stack]);
            p.op(SETITEMS);
        }
        p.op(APPENDS);
    }
    p.op(APPEND);

    p.str("allocator_settings");
    p.empty_dict();
    p.mark();
    p.str("PYTORCH_CUDA_ALLOC_CONF");
    p.str("");
    p.str("max_split_size");
    p.int(u64::MAX >> 1);
    p.str("garbage_collection_threshold");
    p.float(0.0);
    p.str("expandable_segments");
    p.op(NEWFALSE);
    p.op(SETITEMS);
    p.str("external_annotations");
    p.empty_list();
    p.op(SETITEMS);
    let frames = p.frames.len();
    Written {
        bytes: p.finish(),
        frames,
        entries: trace.len(),
        allocations,
        peak_bytes: peak,
    }
}

struct Entry {
    action: &'static str,
    addr: u64,
    size: u64,
    time_us: u64,
    stack: usize,
}

impl Entry {
    fn new(action: &'static str, addr: u64, size: u64, time_us: u64, stack: usize) -> Entry {
        Entry {
            action,
            addr,
            size,
            time_us,
            stack,
        }
    }
}

/// One frame of the pool: its dict is written once and referenced after.
struct PoolFrame {
    name: String,
    filename: &'static str,
    line: u64,
}

fn frame_pool(rng: &mut XorShift) -> Vec<PoolFrame> {
    const FILES: [&str; 8] = [
        "??",
        "RegisterCUDA.cpp",
        "VariableType_1.cpp",
        "/usr/lib/python3/site-packages/torch/nn/modules/module.py",
        "/usr/lib/python3/site-packages/torch/nn/functional.py",
        "train.py",
        "model.py",
        "/usr/lib/python3/site-packages/torch/autograd/graph.py",
    ];
    (0..160)
        .map(|i| PoolFrame {
            name: format!(
                "at::native::op_{i}(at::Tensor const&, c10::optional<at::Tensor> const&)"
            ),
            filename: FILES[rng.below(FILES.len() as u64) as usize],
            line: rng.below(3000),
        })
        .collect()
}

fn frames(p: &mut Pickler, pool: &[PoolFrame], stack: &[usize]) {
    p.empty_list();
    if stack.is_empty() {
        return;
    }
    p.mark();
    for &f in stack {
        if p.get_frame(f) {
            continue;
        }
        let frame = &pool[f];
        p.frame_dict(f);
        p.mark();
        p.str("name");
        p.str(&frame.name);
        p.str("filename");
        p.str(frame.filename);
        p.str("line");
        p.int(frame.line);
        p.op(SETITEMS);
    }
    p.op(APPENDS);
}

fn block(p: &mut Pickler, pool: &[PoolFrame], stack: &[usize], addr: u64, size: u64, state: &str) {
    p.empty_dict();
    p.mark();
    p.str("address");
    p.int(addr);
    p.str("size");
    p.int(size);
    p.str("requested_size");
    p.int(size);
    p.str("state");
    p.str(state);
    p.str("frames");
    frames(p, pool, stack);
    p.op(SETITEMS);
}

const MARK: u8 = b'(';
const STOP: u8 = b'.';
const EMPTY_DICT: u8 = b'}';
const EMPTY_LIST: u8 = b']';
const SETITEMS: u8 = b'u';
const APPENDS: u8 = b'e';
const APPEND: u8 = b'a';
const TUPLE2: u8 = 0x86;
const NEWFALSE: u8 = 0x89;
const MEMOIZE: u8 = 0x94;
const FRAME: u8 = 0x95;
const FRAME_SIZE: usize = 64 << 10;

/// A protocol 4 pickler for plain data, framed as CPython frames.
struct Pickler {
    out: Vec<u8>,
    frame: Vec<u8>,
    /// Memo ids of strings and of the pool's frame dicts. CPython memoizes by identity and torch shares
    /// strings and frame dicts, so content stands in for identity here.
    strings: HashMap<String, u32>,
    frames: HashMap<usize, u32>,
    next: u32,
}

impl Pickler {
    fn new() -> Pickler {
        Pickler {
            out: vec![0x80, 4],
            frame: Vec::with_capacity(FRAME_SIZE + 1024),
            strings: HashMap::new(),
            frames: HashMap::new(),
            next: 0,
        }
    }

    fn op(&mut self, op: u8) {
        self.frame.push(op);
        if self.frame.len() >= FRAME_SIZE {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.frame.is_empty() {
            self.out.push(FRAME);
            self.out
                .extend_from_slice(&(self.frame.len() as u64).to_le_bytes());
            self.out.append(&mut self.frame);
        }
    }

    fn mark(&mut self) {
        self.op(MARK);
    }

    fn memoize(&mut self) -> u32 {
        self.op(MEMOIZE);
        self.next += 1;
        self.next - 1
    }

    fn empty_dict(&mut self) {
        self.op(EMPTY_DICT);
        self.memoize();
    }

    /// The dict of the pool's frame `f`, to be referenced by [`Self::get_frame`] after.
    fn frame_dict(&mut self, f: usize) {
        self.op(EMPTY_DICT);
        let id = self.memoize();
        self.frames.insert(f, id);
    }

    fn empty_list(&mut self) {
        self.op(EMPTY_LIST);
        self.memoize();
    }

    fn get_frame(&mut self, f: usize) -> bool {
        match self.frames.get(&f) {
            Some(&id) => {
                self.get(id);
                true
            }
            None => false,
        }
    }

    /// `BINGET` or `LONG_BINGET` of memo entry `id`.
    fn get(&mut self, id: u32) {
        match u8::try_from(id) {
            Ok(id) => self.frame.extend_from_slice(&[b'h', id]),
            Err(_) => {
                self.frame.push(b'j');
                self.frame.extend_from_slice(&id.to_le_bytes());
            }
        }
        self.op_done();
    }

    fn str(&mut self, s: &str) {
        if let Some(&id) = self.strings.get(s) {
            self.get(id);
            return;
        }
        match u8::try_from(s.len()) {
            Ok(n) => self.frame.extend_from_slice(&[0x8c, n]),
            Err(_) => {
                self.frame.push(b'X');
                self.frame
                    .extend_from_slice(&(s.len() as u32).to_le_bytes());
            }
        }
        self.frame.extend_from_slice(s.as_bytes());
        let id = self.memoize();
        self.strings.insert(s.to_owned(), id);
    }

    /// CPython's `save_long`: `BININT1`, `BININT2`, `BININT`, else `LONG1` in the fewest bytes.
    fn int(&mut self, v: u64) {
        if v < 0x100 {
            self.frame.extend_from_slice(&[b'K', v as u8]);
        } else if v < 0x1_0000 {
            self.frame.push(b'M');
            self.frame.extend_from_slice(&(v as u16).to_le_bytes());
        } else if v < 0x8000_0000 {
            self.frame.push(b'J');
            self.frame.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            let bytes = v.to_le_bytes();
            let mut n = 8 - (v.leading_zeros() as usize / 8);
            if bytes[n - 1] & 0x80 != 0 {
                n += 1; // a sign byte keeps it positive
            }
            self.frame.extend_from_slice(&[0x8a, n as u8]);
            self.frame.extend_from_slice(&bytes[..n.min(8)]);
            self.frame
                .extend(std::iter::repeat_n(0, n.saturating_sub(8)));
        }
        self.op_done();
    }

    fn float(&mut self, v: f64) {
        self.frame.push(b'G');
        self.frame.extend_from_slice(&v.to_be_bytes());
        self.op_done();
    }

    /// Ends a frame after an opcode written without [`Self::op`].
    fn op_done(&mut self) {
        if self.frame.len() >= FRAME_SIZE {
            self.flush();
        }
    }

    fn finish(mut self) -> Vec<u8> {
        self.op(STOP);
        self.flush();
        self.out
    }
}

/// Deterministic numbers for the generator (no dependency, same bytes on every platform).
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
