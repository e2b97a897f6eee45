//! The worker's side of loading: runs in a dedicated Web Worker, so parsing a 1 GB file never blocks the
//! page. Each piece the page streams is pushed into the engine's [`PushReader`] as it arrives; at the
//! end the snapshot goes back encoded by the engine's codec (a transferred buffer), or the engine's
//! one-line error. Messages are [`super::protocol`]'s; the rehearsal is explained in the module's header.

use std::cell::RefCell;

use js_sys::{ArrayBuffer, Uint8Array};
use memograph_snapshot::PushReader;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use super::js::{clock, grow_heap, write_step};
use super::protocol::{Encoded, FromWorker, ToWorker, WorkerTimings};

/// One file being read.
struct Job {
    reader: PushReader,
    /// When the first message came, and the milliseconds spent reading pieces (not waiting for them).
    received: f64,
    busy: f64,
    /// Answer with the comparison digests, not the snapshot (with `at`: one device's, at an entry).
    digest: bool,
    at: Option<(i64, i64)>,
    /// Buffers the page wrote for the model's pieces ([`ToWorker::ModelBuffer`]).
    written_ahead: Vec<ArrayBuffer>,
}

thread_local! {
    /// `None` before `Start` and after an error or the end: later pieces are ignored.
    static JOB: RefCell<Option<Job>> = const { RefCell::new(None) };
    /// Heap being written ahead of a file ([`warm_heap`]): reserved whole, written up to its length.
    static WARMING: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
    /// The rehearsal under way ([`rehearse`]), until it is posted or a file starts.
    static REHEARSAL: RefCell<Option<Rehearsal>> = const { RefCell::new(None) };
}

/// How much heap one task of [`warm_heap`] writes: a few milliseconds, so a `Start` waits no longer.
const WARM_STEP: usize = 8 << 20;

fn post(message: FromWorker) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let (m, transfer) = message.to_js();
    let _ = scope.post_message_with_transfer(&m, &transfer);
}

fn post_error(reason: &str) {
    post(FromWorker::Error {
        message: reason.to_string(),
    });
}

/// Entry point of the worker (called by assets/worker.js). Its message handler dispatches; the large
/// handlers (the rehearsal, the end of a file) stay functions of their own, since a browser compiles
/// the handler to optimised code during a load (it runs once per piece): with every handler in it, it
/// was 21.7 KB of wasm (now 4.1) and that compile took about 100 ms of a cold load's two cores (see
/// "Tier-up" in the module's header).
#[wasm_bindgen]
pub fn worker_main() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        match ToWorker::from_js(&ev.data()) {
            Some(ToWorker::Start { size, digest, at }) => start(size, digest, at),
            Some(ToWorker::Piece { bytes, give_back }) => piece(&bytes, give_back),
            Some(ToWorker::End) => end(),
            Some(ToWorker::Rehearse) => rehearse(),
            Some(ToWorker::WarmHeap { bytes }) => warm_heap(heap_bytes(bytes)),
            Some(ToWorker::ModelBuffer { buffer }) => JOB.with(|job| {
                if let Some(job) = job.borrow_mut().as_mut().filter(|j| !j.digest) {
                    job.written_ahead.push(buffer);
                }
            }),
            None => {}
        }
    });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
}

#[inline(never)]
fn start(size: Option<f64>, digest: bool, at: Option<(i64, i64)>) {
    // A file chosen as the page opens comes before the rehearsal is done: the file's own load
    // optimises the code from here on, and its parse does not wait for the rehearsal's.
    REHEARSAL.with(|r| r.borrow_mut().take());
    // What was written ahead goes back to the allocator, where the parse finds it.
    WARMING.with(|w| w.borrow_mut().take());
    // Parsing needs about the file's size (see "Heap growth" in the module's header).
    grow_heap(heap_bytes(size.unwrap_or(0.0)));
    JOB.with(|job| {
        *job.borrow_mut() = Some(Job {
            reader: PushReader::new(size.map(|s| s as u64)),
            received: clock(),
            busy: 0.0,
            digest,
            at,
            written_ahead: Vec::new(),
        })
    });
}

/// A heap size the page asked for, as bytes: at most 1 GiB at once (more grows as it is used).
fn heap_bytes(asked: f64) -> usize {
    asked.clamp(0.0, (1u64 << 30) as f64) as usize
}

/// Writes about `bytes` of the heap while the worker waits for a file, [`WARM_STEP`] a task, until a
/// file starts (see "Fresh memory is time" in the module's header: the first write to a page of memory
/// is a page fault, and a parse writes about its file's size of fresh memory).
#[inline(never)]
fn warm_heap(bytes: usize) {
    let mut heap = Vec::new();
    if heap.try_reserve_exact(bytes).is_ok() {
        WARMING.with(|w| *w.borrow_mut() = Some(heap));
        warm_step();
    }
}

fn warm_step() {
    let more = WARMING.with(|w| {
        let mut w = w.borrow_mut();
        let Some(heap) = w.as_mut() else {
            return false;
        };
        if write_step(heap, WARM_STEP) {
            return true;
        }
        *w = None;
        false
    });
    if more {
        later(warm_step);
    }
}

/// Runs `step` in a task of its own (not a microtask), so that a `Start` message can come first.
fn later(step: fn()) {
    wasm_bindgen_futures::spawn_local(async move {
        super::slices::next_task().await;
        step();
    });
}

/// Pushes one piece and acknowledges it, with its buffer when the page reuses it (else the buffer is
/// freed).
#[inline(never)]
fn piece(bytes: &Uint8Array, give_back: bool) {
    let outcome = JOB.with(|job| {
        let mut job = job.borrow_mut();
        let j = job.as_mut()?;
        let started = clock();
        let result = j
            .reader
            .push_from(bytes.length() as usize, &mut |room| bytes.copy_to(room));
        if !give_back {
            free(bytes);
        }
        j.busy += clock() - started;
        let done = j.reader.pushed();
        let complete = !j.reader.wants_more();
        if result.is_err() {
            *job = None;
        }
        Some(result.map(|()| (done, complete)))
    });
    match outcome {
        Some(Ok((done, complete))) => post(FromWorker::Progress {
            done: done as f64,
            complete,
            buffer: give_back.then(|| bytes.buffer()),
        }),
        Some(Err(e)) => post_error(&e.to_string()),
        None => {}
    }
}

/// Frees the piece's memory now (`ArrayBuffer.prototype.transfer(0)` detaches it), instead of leaving
/// hundreds of megabytes of pieces to the worker's garbage collector. Best effort: older browsers lack it.
fn free(bytes: &Uint8Array) {
    let buffer = bytes.buffer();
    if let Ok(transfer) = js_sys::Reflect::get(&buffer, &"transfer".into()) {
        if let Some(transfer) = transfer.dyn_ref::<js_sys::Function>() {
            let _ = transfer.call1(&buffer, &0.into());
        }
    }
}

/// Finishes the snapshot and posts the encoded model with where the time went.
#[inline(never)]
fn end() {
    let Some(mut job) = JOB.with(|job| job.borrow_mut().take()) else {
        return;
    };
    let started = clock();
    let (snapshot, leftovers) = match job.reader.finish_leaving() {
        Ok(s) => s,
        Err(e) => return post_error(&e.to_string()),
    };
    if job.digest {
        drop(leftovers);
        // The page keeps only this of the file (named and sized there): many files fit in one tab.
        use memograph_snapshot::analysis::compare::{digest_at, digests};
        let rules = memograph_snapshot::analysis::categories::Rules::built_in();
        let digests = match job.at {
            None => digests(&snapshot, &rules, "", 0),
            Some((device, entry)) => {
                let lifetimes =
                    memograph_snapshot::analysis::lifetimes::Lifetimes::of(&snapshot, device);
                let mut d = digest_at(&snapshot, &lifetimes, &rules, Some(entry));
                d.default_device = snapshot.default_device() == Some(device);
                vec![d]
            }
        };
        drop(snapshot);
        return match serde_json::to_string(&digests) {
            Ok(json) => post(FromWorker::Digests { json }),
            Err(e) => post_error(&format!("the comparison could not be written ({e})")),
        };
    }
    // The page decodes the pieces as they are posted: their sizes first, then each piece as the next
    // begins, the last with the timings.
    let encode_started = clock();
    let sizes = memograph_snapshot::codec::sizes(&snapshot);
    post(FromWorker::ModelSizes {
        total: sizes.total as f64,
        head: sizes.head as f64,
    });
    let mut written = 0;
    let ahead = job.written_ahead.len();
    let model = Encoded::stream(
        |sink| written = memograph_snapshot::codec::encode_into(&snapshot, sink),
        |piece| {
            post(FromWorker::ModelPiece {
                bytes: piece.clone(),
            });
            true
        },
        &mut job.written_ahead,
    );
    let pieces_ahead = (ahead - job.written_ahead.len()) as f64;
    job.written_ahead = Vec::new();
    if written != sizes.total {
        return post_error(&format!(
            "the model's encoding took {written} bytes, not the {} announced",
            sizes.total
        ));
    }
    post(FromWorker::Done {
        model,
        timings: WorkerTimings {
            received: job.received,
            parse: job.busy + encode_started - started,
            finish: encode_started - started,
            waited: started - job.received - job.busy,
            encode: clock() - encode_started,
            pieces_ahead,
            posted: clock(),
        },
    });
    // Not freed: a worker reads one file and is ended once the page is quiet (`workers::retire_when_idle`),
    // which gives its whole memory back at once, and wasm memory freed here would go to nobody (it
    // never shrinks). Dropped, its millions of small allocations took 20–50 ms of CPU at 190 MB just
    // as the page builds the model and draws the first frame: warm 177 MB loads, `ab_load` A/B, 8
    // each, twice: first timeline median 390 → 376 ms both times (cold: unchanged).
    std::mem::forget(snapshot);
    std::mem::forget(leftovers);
}

/// `snapshot` encoded by the engine's codec into pieces (see [`Encoded`]): the encoding is never whole
/// in wasm memory (a 2 GB file's is 650 MB, and fresh memory is time: see the module's header).
fn encoded(snapshot: &memograph_snapshot::Snapshot) -> Encoded {
    Encoded::gather(|sink| {
        memograph_snapshot::codec::encode_into(snapshot, sink);
    })
}

/// Steps of [`memograph_snapshot::synth::pickle`] a rehearsal loads: 2.7 MB, 25 000 entries, about as
/// much as it takes the browser to optimise the hot functions (a real 3 MB snapshot does it).
const REHEARSAL_STEPS: usize = 400;

/// How much of the rehearsal's pickle one task pushes: a few milliseconds on code not yet optimised,
/// the longest a file chosen as the page opens waits for its `Start`.
const REHEARSAL_PIECE: usize = 256 << 10;

/// A rehearsal's load: its reader and the pickle it is pushed, up to `pushed`.
struct Rehearsal {
    reader: PushReader,
    bytes: Vec<u8>,
    pushed: usize,
}

/// Loads a synthetic snapshot as a file is loaded (pushed in pieces, finished, encoded) and posts it,
/// a piece per task: a file that starts meanwhile ends it ([`start`]).
#[inline(never)]
fn rehearse() {
    let bytes = memograph_snapshot::synth::pickle(REHEARSAL_STEPS).bytes;
    REHEARSAL.with(|r| {
        *r.borrow_mut() = Some(Rehearsal {
            reader: PushReader::new(Some(bytes.len() as u64)),
            bytes,
            pushed: 0,
        })
    });
    later(rehearse_step);
}

/// Pushes the rehearsal's next piece; after the last, finishes, encodes and posts it.
fn rehearse_step() {
    let pushed_all = REHEARSAL.with(|r| {
        let mut r = r.borrow_mut();
        let rehearsal = r.as_mut()?;
        let end = (rehearsal.pushed + REHEARSAL_PIECE).min(rehearsal.bytes.len());
        if rehearsal
            .reader
            .push(&rehearsal.bytes[rehearsal.pushed..end])
            .is_err()
        {
            *r = None;
            return None;
        }
        rehearsal.pushed = end;
        Some(end == rehearsal.bytes.len())
    });
    match pushed_all {
        Some(false) => later(rehearse_step),
        Some(true) => {
            let Some(rehearsal) = REHEARSAL.with(|r| r.borrow_mut().take()) else {
                return;
            };
            if let Ok(snapshot) = rehearsal.reader.finish() {
                post(FromWorker::Rehearsed {
                    model: encoded(&snapshot),
                });
            }
        }
        None => {}
    }
}
