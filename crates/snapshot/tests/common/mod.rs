//! Test helpers: the shared real fixtures (tier 2, through `memograph_snapshot::testing`), small
//! synthetic inputs (tier 1), a fixed-seed generator and gzip.
#![allow(dead_code, unused_imports)]

pub use memograph_snapshot::testing::{fixture, fixture_names, fixtures_dir};

/// A fixture's bytes (only for names [`fixture_names`] listed: they exist).
pub fn fixture_bytes(name: &str) -> Vec<u8> {
    fixture(name).unwrap_or_else(|| panic!("fixture {name} is listed but absent"))
}

/// The repository's own fixture `name` (tier 1: in `tests/fixtures`, recorded on an H200 with
/// PyTorch 2.11 by `scripts/record_fixtures.py`), read.
pub fn repository_fixture(name: &str) -> memograph_snapshot::Snapshot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    memograph_snapshot::read_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn reference(name: &str) -> serde_json::Value {
    serde_json::from_str(&memograph_snapshot::testing::reference_text(name)).unwrap()
}

/// The bytes of a real fixture, or an early return from the test (tier 2: the shared fixtures may be
/// absent, and `fixture` says so).
#[macro_export]
macro_rules! fixture_or_skip {
    ($name:expr) => {
        match common::fixture($name) {
            Some(bytes) => bytes,
            None => return,
        }
    };
}

/// A small snapshot to damage: the real `a0kuma_adam.pickle` (48 KB) when the shared fixtures are
/// there, else a synthetic one of about the same size, so these tests run in both tiers.
pub fn small_input() -> Vec<u8> {
    fixture("a0kuma_adam.pickle").unwrap_or_else(|| memograph_snapshot::synth::pickle(4).bytes)
}

pub use memograph_snapshot::testing::xorshift;

/// `data` gzip-compressed.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// A gzip bomb of valid opcodes: a list, then 256 members of `N` `a` (append None) that expand 1000×.
pub fn gzip_bomb() -> Vec<u8> {
    let chunk: Vec<u8> = b"Na".iter().copied().cycle().take(1 << 20).collect();
    let member = gzip(&chunk);
    let mut bomb = gzip(b"\x80\x04]");
    for _ in 0..256 {
        bomb.extend_from_slice(&member);
    }
    bomb
}

/// A pause that really suspends: pending at its first poll, ready at the next.
pub struct Yield(pub usize);

impl memograph_snapshot::batch::Pause for Yield {
    fn pause(&mut self) -> impl std::future::Future<Output = ()> {
        self.0 += 1;
        let mut first = true;
        std::future::poll_fn(move |_| {
            if std::mem::take(&mut first) {
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(())
            }
        })
    }
}

/// Polls `future` until it ends: its output and how many polls it took.
pub fn poll_to_end<T>(future: impl std::future::Future<Output = T>) -> (T, usize) {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let mut polls = 0;
    loop {
        polls += 1;
        if let std::task::Poll::Ready(v) = std::future::Future::poll(future.as_mut(), &mut context)
        {
            return (v, polls);
        }
    }
}

/// A protocol-4 pickle written by hand, opcode by opcode. `memoize` and `get` keep the memo's count, as
/// `pickle.dump` writes a snapshot (each string memoised once, read again with a GET).
pub struct Pickle {
    bytes: Vec<u8>,
    memo: u32,
}

/// What [`Pickle::new`] begins: the protocol header, an empty memo.
impl Default for Pickle {
    fn default() -> Pickle {
        Pickle::new()
    }
}

impl Pickle {
    pub fn new() -> Pickle {
        Pickle {
            bytes: vec![0x80, 4],
            memo: 0,
        }
    }
    pub fn op(&mut self, op: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(op);
        self
    }
    /// SHORT_BINUNICODE.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes.push(0x8c);
        self.bytes.push(s.len() as u8);
        self.bytes.extend_from_slice(s.as_bytes());
        self
    }
    /// BININT.
    pub fn int(&mut self, v: i32) -> &mut Self {
        self.bytes.push(b'J');
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// LONG1 of an unsigned 64-bit value (with a sign byte when the top bit is set).
    pub fn u64(&mut self, v: u64) -> &mut Self {
        let mut bytes = v.to_le_bytes().to_vec();
        if v >> 63 == 1 {
            bytes.push(0);
        }
        self.bytes.extend_from_slice(&[0x8a, bytes.len() as u8]);
        self.bytes.extend_from_slice(&bytes);
        self
    }
    /// LONG1 of `v`'s lowest `len` bytes.
    pub fn long1(&mut self, v: i128, len: usize) -> &mut Self {
        self.op(&[0x8a, len as u8]);
        self.op(&v.to_le_bytes()[..len])
    }
    /// MEMOIZE the value on top; its memo index.
    pub fn memoize(&mut self) -> u32 {
        self.bytes.push(0x94);
        self.memo += 1;
        self.memo - 1
    }
    /// BINGET or LONG_BINGET of memo index `k`.
    pub fn get(&mut self, k: u32) -> &mut Self {
        if k < 256 {
            self.op(&[b'h', k as u8])
        } else {
            self.bytes.push(b'j');
            self.op(&k.to_le_bytes())
        }
    }
    /// STOP; the pickle's bytes.
    pub fn stop(&mut self) -> Vec<u8> {
        self.bytes.push(b'.');
        std::mem::take(&mut self.bytes)
    }
}
