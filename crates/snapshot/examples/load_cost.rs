//! What a page's load runs, timed pass after pass, natively or as WebAssembly in V8 (Node): tells
//! whether a step is slower in wasm itself or only in the page (cold code, two busy cores, the
//! browser's read). `node scripts/wasm_vs_native.mjs FILE [PASSES]` builds and runs both; natively
//! alone: `cargo run --release --example load_cost -- FILE [PASSES]`.
//!
//! Each pass reads the file whole and pushed in 4 MiB pieces (as the worker is), then lays the
//! default device's timeline out at the page's default detail. The first pass in V8 runs on baseline
//! code, as a cold page does; later ones on optimised code, as a rehearsed page does.

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::timeline::{default_detail, timeline_layout};

fn passes(bytes: &[u8], passes: u32, now: impl Fn() -> f64, say: impl Fn(&str)) {
    for pass in 1..=passes {
        let t = now();
        let whole = memograph_snapshot::read_bytes(bytes);
        let read = now() - t;
        let t = now();
        let mut reader = memograph_snapshot::PushReader::new(Some(bytes.len() as u64));
        let mut pushed = Ok(());
        for piece in bytes.chunks(4 << 20) {
            pushed = reader.push(piece);
            if pushed.is_err() || !reader.wants_more() {
                break;
            }
        }
        let push = now() - t;
        let t = now();
        let snapshot = pushed.and_then(|()| reader.finish());
        let finish = now() - t;
        let (whole, snapshot) = match (whole, snapshot) {
            (Ok(w), Ok(s)) => (w, s),
            (Err(e), _) | (_, Err(e)) => return say(&format!("not a snapshot: {e}")),
        };
        drop(whole);
        let device = snapshot.default_device().unwrap_or(0);
        let t = now();
        let lifetimes = Lifetimes::of(&snapshot, device);
        let lifetimes_ms = now() - t;
        let detail = default_detail(lifetimes.allocations.len());
        let t = now();
        let layout = timeline_layout(&lifetimes, detail);
        let layout_ms = now() - t;
        say(&format!(
            "pass {pass}: read {read:.0} ms, pushed {push:.0} + finish {finish:.0}, lifetimes \
             {lifetimes_ms:.1}, layout {layout_ms:.1} ({} of {} allocations drawn, {} points)",
            layout.bands.len(),
            lifetimes.allocations.len(),
            layout.points.len()
        ));
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: load_cost FILE [PASSES]");
    let n = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let bytes = std::fs::read(&path).expect("a readable file");
    let started = std::time::Instant::now();
    let now = || started.elapsed().as_secs_f64() * 1e3;
    passes(&bytes, n, now, |s| println!("native {s}"));
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod host {
    extern "C" {
        pub fn now() -> f64;
        pub fn say(text: *const u8, len: usize);
    }
}

/// Room for `len` bytes in the module's memory, where the host writes the file.
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub extern "C" fn room(len: usize) -> *mut u8 {
    let mut v = std::mem::ManuallyDrop::new(Vec::<u8>::with_capacity(len));
    v.as_mut_ptr()
}

/// Runs `n` passes over the `len` bytes at `at`.
///
/// # Safety
/// `at` is where [`room`]`(len)` made room, and the host has written `len` bytes there.
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub unsafe extern "C" fn run(at: *const u8, len: usize, n: u32) {
    // SAFETY: the caller's promise (above).
    let bytes = unsafe { std::slice::from_raw_parts(at, len) };
    // SAFETY: both are the host's functions, called with a valid string.
    let now = || unsafe { host::now() };
    let say = |s: &str| unsafe { host::say(s.as_ptr(), s.len()) };
    passes(bytes, n, now, |s| say(&format!("wasm   {s}")));
}
