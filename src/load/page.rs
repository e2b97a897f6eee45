//! The page's side of loading: files (picker or drop), the bundled example and `?url=` all become a
//! `Blob`, read with the browser's stream and handed piece by piece to a worker (see the module's header
//! for the whole path and why it is shaped so). Nothing is uploaded: the only network requests are the
//! example and a `?url=` the user gave.

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use js_sys::{ArrayBuffer, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, MessageEvent, Worker};

use memograph_snapshot::analysis::trace_steps::may_mark_steps;

use super::files::{check_size, distinct, modified, named_size, same_file};
use super::js::{clock, grow_heap, now, write_step, Wakeup};
use super::pieces::{Pieces, IN_FLIGHT, IN_FLIGHT_STREAMED};
use super::protocol::{Arrivals, Encoded, FromWorker, LoadTimings, ToWorker, WorkerTimings};
use super::slices::{decode_sliced, next_task, Pauser};
use super::store::{self, OpenFile};
use super::workers::{
    end_worker, post, retire_when_idle, spawn_worker, start_spare_when_idle, take_worker,
};
use crate::view_model::share::HeadHash;
use crate::view_model::DeviceModel;
use memograph_snapshot::analysis::compare::Digest;
use memograph_snapshot::codec::Sizes;

/// How far a load is: reading (the page's thread) runs ahead of parsing (the worker).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadProgress {
    /// What is loading.
    pub name: String,
    /// Bytes in all (0: not known yet, as while downloading).
    pub total: f64,
    pub read: f64,
    pub parsed: f64,
}

/// What loading tells the page. The page implements it on its state; loading never sees that state.
pub trait Listener {
    /// A load began or moved on (whole percents only: one redraw each).
    fn progress(&self, progress: LoadProgress);
    /// File `index` of the store is open; `started` is when its load began (`now()`).
    fn opened(&self, index: usize, device: i64, started: f64);
    /// `name` could not be opened.
    fn failed(&self, name: &str, reason: &str);
    /// A file loaded for comparison only is in the store's compared runs (see [`compare`]); `done` of
    /// `total` such files have ended so far (opened or failed).
    fn digested(&self, done: usize, total: usize);
}

type Sink = Rc<dyn Listener>;

thread_local! {
    static QUEUE: RefCell<VecDeque<(String, Blob)>> = const { RefCell::new(VecDeque::new()) };
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// The files being opened or read for a comparison (the user may cancel them), and the
    /// downloads under way (`?url=`, the example) with what stops them.
    static READING: RefCell<Vec<Rc<Load>>> = const { RefCell::new(Vec::new()) };
    static DOWNLOADS: RefCell<Vec<web_sys::AbortController>> = const { RefCell::new(Vec::new()) };
    /// Files waiting to be digested for a comparison, those being digested now, and the count of
    /// this batch's files that have ended and that were asked for (reset when the batch is over).
    static DIGEST_QUEUE: RefCell<VecDeque<(u64, String, Blob)>> = const { RefCell::new(VecDeque::new()) };
    /// The next compared file's place in the order the user gave (workers end in any order).
    static DIGEST_ORDER: Cell<u64> = const { Cell::new(0) };
    static DIGESTING: Cell<usize> = const { Cell::new(0) };
    static DIGEST_BATCH: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The heap that decoding an encoding of `len` bytes and building the first model take, about: the
/// snapshot takes about 1.5 times the encoding's size and the first device's model about as much
/// again; staying under what is needed, growing the heap by it does not raise the page's memory.
fn decoded_size(len: usize) -> usize {
    len.saturating_mul(3)
}

/// Whether a file is being read (opened or digested). The page's part of the rehearsal stops then: the
/// worker's parse is what the user waits for, and on two cores the rehearsal and the compiles it sets
/// off slowed it by more than the rehearsal saves later (the load's own stages get optimised as they
/// run, in batches).
pub(super) fn loading() -> bool {
    BUSY.with(Cell::get) || DIGESTING.with(Cell::get) > 0
}

/// Queues `blob` for parsing; files load one after another, and open files stay usable meanwhile.
/// It is shown by `name`, numbered where another file is shown by that name (see [`distinct`]).
pub fn load(sink: Sink, name: String, blob: Blob) {
    let name = distinct(name, &mut names_in_use(Some(&blob)).into_iter().collect());
    QUEUE.with(|q| q.borrow_mut().push_back((name, blob)));
    next(sink);
}

/// Whether the file `name` (`blob`) is being read or waits to be (opened, or for a comparison): the
/// same name, size and time of change, picked again, is not read twice. Never for a file without a
/// time of change (one fetched from a link). Its size and time are asked only if the name matches
/// (see `store::known`). The name it is shown by, if so.
pub fn pending(name: &str, blob: &Blob) -> Option<String> {
    let same = |n: &str, other: &Blob| {
        same_file(
            name,
            blob,
            n,
            || named_size(other),
            || self::modified(other),
        )
    };
    QUEUE
        .with(|q| {
            q.borrow()
                .iter()
                .find(|(n, b)| same(n, b))
                .map(|(n, _)| n.clone())
        })
        .or_else(|| {
            DIGEST_QUEUE.with(|q| {
                q.borrow()
                    .iter()
                    .find(|(_, n, b)| same(n, b))
                    .map(|(_, n, _)| n.clone())
            })
        })
        .or_else(|| {
            READING.with(|r| {
                r.borrow()
                    .iter()
                    .find(|l| !l.cancelled.get() && same(&l.name, &l.blob))
                    .map(|l| l.name.clone())
            })
        })
}

/// The names every file open, compared, being read or queued is shown by, but those of `except`
/// (a compared run opened whole keeps its name).
pub fn names_in_use(except: Option<&Blob>) -> Vec<String> {
    let mut names = store::shown_names(except);
    QUEUE.with(|q| {
        names.extend(
            q.borrow()
                .iter()
                .filter(|(_, b)| Some(b) != except)
                .map(|(n, _)| n.clone()),
        )
    });
    DIGEST_QUEUE.with(|q| {
        names.extend(
            q.borrow()
                .iter()
                .filter(|(_, _, b)| Some(b) != except)
                .map(|(_, n, _)| n.clone()),
        )
    });
    READING.with(|r| {
        names.extend(
            r.borrow()
                .iter()
                .filter(|l| !l.cancelled.get() && Some(&l.blob) != except)
                .map(|l| l.name.clone()),
        )
    });
    names
}

/// Cancels what is being read: the file being opened and those queued after it, the files being
/// read for a comparison, the downloads under way. Their workers end and nothing of them opens or is
/// said; files already open and runs already compared stay.
pub fn cancel_reading() {
    QUEUE.with(|q| q.borrow_mut().clear());
    DIGEST_QUEUE.with(|q| q.borrow_mut().clear());
    for download in DOWNLOADS.with(|d| d.take()) {
        download.abort();
    }
    for load in READING.with(|r| r.take()) {
        load.cancelled.set(true);
        // Over already when its model came: its worker waits to be retired, and goes now.
        if !load.end() {
            end_worker(&load.worker, load.parsed.get());
        }
        match load.purpose {
            Purpose::Open => BUSY.with(|b| b.set(false)),
            _ => DIGESTING.with(|d| d.set(d.get().saturating_sub(1))),
        }
    }
    DIGEST_BATCH.with(|b| b.set((0, 0)));
    end_idle_digesters();
    start_spare_when_idle();
}

/// Queues files to be read for a comparison only: they are parsed in workers, as many at once as
/// the machine has cores (at most [`MAX_DIGESTING`]), and only each file's digests come back (see
/// `memograph_snapshot::analysis::compare`), so a tab holds dozens of runs in the memory of a few
/// megabytes each. Open files stay usable meanwhile.
pub fn compare(sink: Sink, files: Vec<(String, Blob)>) {
    DIGEST_BATCH.with(|b| {
        let (done, total) = b.get();
        b.set((done, total + files.len()));
    });
    // One set for the batch: at 300 files, one each was 90 000 names gathered.
    let mut used: HashSet<String> = names_in_use(None).into_iter().collect();
    for (name, blob) in files {
        let name = distinct(name, &mut used);
        let order = DIGEST_ORDER.with(|o| o.replace(o.get() + 1));
        DIGEST_QUEUE.with(|q| q.borrow_mut().push_back((order, name, blob)));
    }
    next_digest(sink);
}

/// Workers digesting at once, at most (each holds its file's snapshot while it works).
const MAX_DIGESTING: usize = 4;

thread_local! {
    /// Workers that digested a file of the comparison and wait for the next one queued, with the
    /// bytes they parsed: a lane's worker serves file after file (starting one costs about 27 ms of
    /// CPU, more than a small snapshot's parse: 300 files of 39 KB took 8.5 s with a worker each).
    /// Ended once nothing is queued; a worker holds its largest file's heap until then.
    static IDLE_DIGESTERS: RefCell<Vec<(Worker, f64)>> = const { RefCell::new(Vec::new()) };
}

/// Ends the workers waiting for another file of the comparison.
fn end_idle_digesters() {
    for (worker, parsed) in IDLE_DIGESTERS.with(|i| i.take()) {
        end_worker(&worker, parsed);
    }
}

fn digest_lanes() -> usize {
    let cores = web_sys::window()
        .map(|w| w.navigator().hardware_concurrency())
        .unwrap_or(2.0) as usize;
    cores.clamp(1, MAX_DIGESTING)
}

fn next_digest(sink: Sink) {
    while DIGESTING.with(|d| d.get()) < digest_lanes() {
        let Some((order, name, blob)) = DIGEST_QUEUE.with(|q| q.borrow_mut().pop_front()) else {
            end_idle_digesters();
            return;
        };
        if let Err(reason) = check_size(&blob) {
            sink.failed(&name, &reason);
            digest_ended(&sink);
            continue;
        }
        DIGESTING.with(|d| d.set(d.get() + 1));
        let idle = IDLE_DIGESTERS
            .with(|i| i.borrow_mut().pop())
            .map(|(w, _)| w);
        let Some(worker) = idle.or_else(spawn_worker) else {
            sink.failed(&name, "this browser cannot start the parsing worker");
            DIGESTING.with(|d| d.set(d.get() - 1));
            digest_ended(&sink);
            continue;
        };
        start(sink.clone(), name, blob, worker, Purpose::Compare(order));
    }
}

/// One more file of the comparison batch has ended: tells the listener, and starts the next.
fn digest_ended(sink: &Sink) {
    let (done, total) = DIGEST_BATCH.with(|b| {
        let (done, total) = b.get();
        let now = (done + 1, total);
        b.set(if now.0 >= now.1 { (0, 0) } else { now });
        now
    });
    sink.digested(done, total);
}

/// What a load is for.
enum Purpose {
    /// To open the file whole (the worker answers with the snapshot).
    Open,
    /// To compare it, at its place in the order given (the worker answers with its digests).
    Compare(u64),
    /// One device's digest at one entry, handed to a callback (a diff at entries picked on the curves).
    At {
        device: i64,
        entry: i64,
        done: RefCell<Option<DigestCallback>>,
    },
}

type DigestCallback = Box<dyn FnOnce(Result<Digest, String>)>;

/// Reads `blob` again in a worker of its own for `device`'s digest at `entry`, and hands it to `done`
/// (or the reason it could not be made).
pub fn digest_at(
    sink: Sink,
    name: String,
    blob: Blob,
    device: i64,
    entry: i64,
    done: impl FnOnce(Result<Digest, String>) + 'static,
) {
    let Some(worker) = spawn_worker() else {
        return done(Err("this browser cannot start the parsing worker".into()));
    };
    let purpose = Purpose::At {
        device,
        entry,
        done: RefCell::new(Some(Box::new(done))),
    };
    start(sink, name, blob, worker, purpose);
}

/// One file on its way from the blob to the store; shared by the reading task and the worker's replies.
struct Load {
    sink: Sink,
    purpose: Purpose,
    blob: Blob,
    name: String,
    size: f64,
    worker: Worker,
    /// `now()` when the load began.
    started: f64,
    /// Bytes the worker has parsed.
    parsed: Cell<f64>,
    /// Bytes read and handed over.
    read: Cell<f64>,
    /// The worker needs no more bytes (a plain pickle's `STOP`).
    complete: Cell<bool>,
    /// Set once the load ended (model, error, or the stream broke): stops the reading task.
    over: Cell<bool>,
    /// Wakes the reading task when it waits for the worker to catch up: at each piece the worker
    /// acknowledges, and when the load ends.
    wake: Wakeup,
    /// Milliseconds from the start until the last piece was handed over.
    read_ms: Cell<f64>,
    /// Piece buffers the worker handed back, to be filled again, and how many were made in all.
    spare: RefCell<Vec<ArrayBuffer>>,
    buffers: Cell<u32>,
    /// The file's identity beside its name and size (`view_model::share::HeadHash`), from its first
    /// pieces as they are read: asking the browser for the first bytes again (`Blob.slice`) once took
    /// 140 ms of the page's thread at the end of a 1 GB load.
    head: RefCell<HeadHash>,
    /// The heap being written ahead of the model, freed for it when it comes.
    ahead: RefCell<Option<Vec<u8>>>,
    /// The last piece was handed over ([`ToWorker::End`] posted): the worker's encode may begin.
    handed_over: Cell<bool>,
    /// The model's encoding as it arrives, once it has begun.
    arrivals: RefCell<Option<Rc<Arrivals>>>,
    /// The worker's timings and when they came (its last message).
    worker_done: Cell<Option<(WorkerTimings, f64)>>,
    /// When the progress view was last updated (`now()`).
    reported_at: Cell<f64>,
    /// The user cancelled it: nothing more is said or opened.
    cancelled: Cell<bool>,
}

/// The most heap a load writes ahead, and how much per task.
const AHEAD_SHARE: f64 = 0.4;
const AHEAD_MAX: f64 = 512.0 * 1024.0 * 1024.0;
const AHEAD_STEP: usize = 4 << 20;
/// The most the page writes ahead of the worker's model pieces (buffers of [`Encoded::PIECE`], each
/// in two tasks): a model's encoding is 0.17–0.31× its file (a long run's rounds, tiles of the
/// fixtures, `synth`), so most of it at most sizes; more would hold memory the encode may never use.
const MODEL_AHEAD_SHARE: f64 = 0.25;
const MODEL_AHEAD_MAX: f64 = 256.0 * 1024.0 * 1024.0;
// A piece is written in two steps (see `write_ahead`).
const _: () = assert!(Encoded::PIECE == 2 * AHEAD_STEP);
/// The progress view is updated at most this often (each update is a frame of style, layout and paint).
const REPORT_EVERY_MS: f64 = 100.0;

impl Load {
    /// Ends the load (once; false if it had ended): the worker goes, the reading task stops.
    fn end(&self) -> bool {
        self.end_with(true)
    }

    /// [`Load::end`], the worker left running when `terminate` is false (the caller retires it).
    fn end_with(&self, terminate: bool) -> bool {
        if self.over.replace(true) {
            return false;
        }
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        if terminate {
            end_worker(&self.worker, self.parsed.get());
        }
        // A decode waiting for more of the model fails instead of waiting for ever.
        if let Some(arrivals) = self.arrivals.borrow().as_ref() {
            arrivals.end();
        }
        self.wake.wake();
        // The reply handlers keep this struct alive: the piece buffers it holds go now.
        self.spare.borrow_mut().clear();
        drop(self.ahead.borrow_mut().take());
        true
    }

    /// The next queued file starts (for a full load, with a worker already up).
    fn next_file(&self) {
        READING.with(|r| r.borrow_mut().retain(|l| !std::ptr::eq(&**l, self)));
        match self.purpose {
            Purpose::Compare(_) => {
                DIGESTING.with(|d| d.set(d.get().saturating_sub(1)));
                digest_ended(&self.sink);
                next_digest(self.sink.clone());
            }
            Purpose::Open => {
                BUSY.with(|b| b.set(false));
                // The next file's worker starts once the page is idle: started with the views' build,
                // its thread and the module's instantiation took the second of two cores from the
                // page's first frames. A file chosen before then starts a worker of its own (and the
                // spare waits for that file's end).
                start_spare_when_idle();
                next(self.sink.clone());
            }
            Purpose::At { .. } => {}
        }
    }

    /// The worker's digests go to the store's compared runs (or to the callback that asked for one).
    fn digested(&self, json: &str) {
        // A worker that digested a file of the comparison waits for the next one (see
        // `IDLE_DIGESTERS`); others end.
        let serves_on = matches!(self.purpose, Purpose::Compare(_));
        if !self.end_with(!serves_on) {
            return;
        }
        if serves_on {
            IDLE_DIGESTERS.with(|i| {
                i.borrow_mut()
                    .push((self.worker.clone(), self.parsed.get()))
            });
        }
        let digests = serde_json::from_str::<Vec<Digest>>(json)
            .map_err(|e| format!("the comparison could not be read ({e})"));
        match (&self.purpose, digests) {
            (Purpose::At { done, .. }, digests) => {
                if let Some(done) = done.borrow_mut().take() {
                    let one = digests.and_then(|d| {
                        d.into_iter()
                            .next()
                            .ok_or_else(|| "no such device".to_string())
                    });
                    done(one.map(|mut d| {
                        d.name_after(&self.name, named_size(&self.blob));
                        d
                    }));
                }
            }
            (Purpose::Compare(order), Ok(digests)) => store::add_compared(
                *order,
                &self.name,
                named_size(&self.blob),
                digests,
                &self.blob,
            ),
            (_, Err(e)) => self.sink.failed(&self.name, &e),
            (Purpose::Open, Ok(_)) => {}
        }
        self.next_file();
    }

    fn fail(&self, reason: &str) {
        if self.end() {
            if let Purpose::At { done, .. } = &self.purpose {
                if let Some(done) = done.borrow_mut().take() {
                    done(Err(reason.to_string()));
                }
                return;
            }
            if !self.cancelled.get() {
                self.sink.failed(&self.name, reason);
                self.next_file();
            }
        }
    }

    /// Whole percents of the file: the bar moves by them, one redraw each, not one per piece.
    fn percent(&self, bytes: f64) -> f64 {
        (bytes * 100.0 / self.size.max(1.0)).floor()
    }

    fn report(&self) {
        if !matches!(self.purpose, Purpose::Open) {
            return;
        }
        let at = now();
        if at - self.reported_at.get() < REPORT_EVERY_MS && !self.complete.get() {
            return;
        }
        self.reported_at.set(at);
        self.sink.progress(LoadProgress {
            name: self.name.clone(),
            total: self.size,
            read: self.read.get(),
            parsed: self.parsed.get(),
        });
    }

    fn on_message(self: &Rc<Self>, data: JsValue) {
        match FromWorker::from_js(&data) {
            Some(FromWorker::Progress {
                done,
                complete,
                buffer,
            }) => {
                if let Some(buffer) = buffer {
                    self.spare.borrow_mut().push(buffer);
                }
                let moved = self.percent(done) != self.percent(self.parsed.get());
                self.parsed.set(done);
                self.complete.set(complete);
                if moved {
                    self.report();
                }
                self.wake.wake();
            }
            Some(FromWorker::ModelSizes { total, head }) => self.model_begins(Sizes {
                total: total as usize,
                head: head as usize,
            }),
            Some(FromWorker::ModelPiece { bytes }) => {
                if let Some(arrivals) = self.arrivals.borrow().as_ref() {
                    arrivals.add_piece(bytes);
                }
            }
            Some(FromWorker::Done { model, timings }) => {
                self.worker_done.set(Some((timings, clock())));
                if let Some(arrivals) = self.arrivals.borrow().as_ref() {
                    arrivals.add(&model);
                    arrivals.end();
                }
            }
            Some(FromWorker::Error { message }) => self.fail(&message),
            Some(FromWorker::Digests { json }) => self.digested(&json),
            // A file chosen as the page opened came to the worker while it rehearsed: the page's part
            // is left out (see `loading`).
            Some(FromWorker::Rehearsed { .. }) | None => {}
        }
    }

    /// Decodes the worker's model as it arrives and opens it, each stage in a task of its own
    /// (decoding, the first device's lifetimes, its timeline, opening and the first frame), so the page
    /// answers between them. The worker encodes while the page decodes ("Streaming both ways" in the
    /// module's header).
    fn model_begins(self: &Rc<Self>, sizes: Sizes) {
        let received = clock();
        let arrivals = Rc::new(Arrivals::default());
        *self.arrivals.borrow_mut() = Some(arrivals.clone());
        // The heap the decoding needs is grown first: the heap written ahead, and the rest in one
        // step. The rest is reserved while the written heap is held, so that it is added to it, not
        // carved out of it (which left the page 0.4× the file larger).
        let ahead = self.ahead.borrow_mut().take();
        let written = ahead.as_ref().map_or(0, Vec::capacity);
        grow_heap(decoded_size(sizes.total).saturating_sub(written));
        drop(ahead);
        let this = self.clone();
        leptos::task::spawn_local(async move {
            // Decoded in slices, the page answering between them (a 1 GB file's decode is seconds).
            let decoded = decode_sliced(arrivals, sizes).await;
            let decode_ms = clock() - received;
            let snapshot = match decoded {
                Ok(s) => s,
                Err(e) => return this.fail(&e.to_string()),
            };
            // The worker stays until the file is open (see `retire_when_idle`).
            if !this.end_with(false) {
                return;
            }
            next_task().await;
            let started = clock();
            let device = snapshot.default_device().unwrap_or(0);
            let mut pauser = Pauser::new();
            let lifetimes = memograph_snapshot::analysis::lifetimes::Lifetimes::of_sliced(
                &snapshot,
                device,
                &mut pauser,
            )
            .await;
            let lifetimes_ms = clock() - started;
            next_task().await;
            let started = clock();
            let mut pauser = Pauser::new();
            let model =
                DeviceModel::of_lifetimes_sliced(&snapshot, device, lifetimes, &mut pauser).await;
            let model_ms = lifetimes_ms + clock() - started;
            next_task().await;
            // Cancelled while the page built the model: its worker went with the cancel.
            if this.cancelled.get() {
                return;
            }
            let index = store::add(OpenFile {
                id: store::next_id(),
                name: this.name.clone(),
                bytes: named_size(&this.blob),
                head: matches!(this.purpose, Purpose::Open).then(|| this.head.borrow().finish()),
                modified: modified(&this.blob),
                devices: snapshot.devices(),
                marks_steps: snapshot
                    .devices()
                    .into_iter()
                    .any(|d| may_mark_steps(&snapshot, d)),
                snapshot: std::rc::Rc::new(snapshot),
                models: [(device, model)].into(),
                digests: Default::default(),
            });
            this.sink.opened(index, device, this.started);
            retire_when_idle(&this.worker, this.parsed.get());
            this.next_file();
            let origin = clock() - now();
            // The decode needed the last piece, which came with the worker's timings.
            let (worker, done_at) = this.worker_done.get().unwrap_or_default();
            record_timings(&LoadTimings {
                worker_start: worker.received - (origin + this.started),
                read: this.read_ms.get(),
                parse: worker.parse,
                finish: worker.finish,
                worker_waited: worker.waited,
                encode: worker.encode,
                transfer: done_at - worker.posted,
                decode: decode_ms,
                lifetimes: lifetimes_ms,
                model: model_ms,
                opened_at: now() - this.started,
                buffers: this.buffers.get() as f64,
                pieces_ahead: worker.pieces_ahead,
                pieces: sizes.total.div_ceil(Encoded::PIECE) as f64,
            });
        });
    }

    /// Writes the page's heap ahead of the model while the worker parses, and buffers for the
    /// worker's model pieces (see "Heap written ahead" and "Model pieces written ahead" in the
    /// module's header): a step per task, taking turns, until both are written, the model comes or
    /// the load ends (buffers only until the last piece is handed over: the encode begins then).
    async fn write_ahead(self: Rc<Self>) {
        // Not in the task that chose the file (see `stream`).
        next_task().await;
        let bytes = (self.size * AHEAD_SHARE).min(AHEAD_MAX) as usize;
        let mut heap = Vec::<u8>::new();
        let mut heap_left = heap.try_reserve_exact(bytes).is_ok();
        if heap_left {
            *self.ahead.borrow_mut() = Some(heap);
        }
        let piece = Encoded::PIECE as u32;
        let mut buffers_left = ((self.size * MODEL_AHEAD_SHARE).min(MODEL_AHEAD_MAX)
            / Encoded::PIECE as f64)
            .floor() as usize;
        // A buffer of which the first step is written.
        let mut half: Option<Uint8Array> = None;
        let mut buffer_next = false;
        while heap_left || buffers_left > 0 {
            next_task().await;
            if self.over.get() {
                return;
            }
            if self.handed_over.get() {
                buffers_left = 0;
            }
            if (buffer_next || !heap_left) && buffers_left > 0 {
                // Its pages written now, the worker's first writes to it cost no page faults (a
                // piece is two steps: fresh memory took up to 60 ms per piece).
                match half.take() {
                    None => {
                        let buffer = Uint8Array::new_with_length(piece);
                        buffer.fill(0, 0, AHEAD_STEP as u32);
                        half = Some(buffer);
                    }
                    Some(buffer) => {
                        buffer.fill(0, AHEAD_STEP as u32, piece);
                        buffers_left -= 1;
                        let buffer = buffer.buffer();
                        post(&self.worker, ToWorker::ModelBuffer { buffer });
                    }
                }
            } else if heap_left {
                // Once written whole it stays held until the model comes (see `done`).
                let mut ahead = self.ahead.borrow_mut();
                heap_left = ahead
                    .as_mut()
                    .is_some_and(|heap| write_step(heap, AHEAD_STEP));
            }
            buffer_next = !buffer_next;
        }
    }

    /// Reads the blob and hands it to the worker a [`PIECE`](super::pieces::PIECE) at a time, never
    /// more than [`IN_FLIGHT`] ([`IN_FLIGHT_STREAMED`] from a byte stream) bytes ahead of it, until
    /// the blob ends or the worker wants no more.
    async fn stream(self: Rc<Self>, blob: Blob) {
        // The task that chose the file has the page's own answer to draw (the loading view), and on
        // a page that has just opened, two busy cores stretch it (129 ms for 32 ms of work as a 2 GB
        // file's load began, with the reading in it): the reading begins in a task of its own.
        next_task().await;
        let mut pieces = Pieces::of(&blob);
        let give_back = pieces.reuses();
        let in_flight = if give_back {
            IN_FLIGHT_STREAMED
        } else {
            IN_FLIGHT
        };
        loop {
            while self.read.get() - self.parsed.get() > in_flight
                && !self.over.get()
                && !self.complete.get()
            {
                let _ = self.wake.wait().await;
            }
            if self.over.get() {
                return pieces.stop();
            }
            if self.complete.get() {
                // What follows the pickle's STOP is never read (as pickle.load).
                pieces.stop();
                return self.finish_reading();
            }
            let piece = pieces.next(&self.spare, &self.buffers).await;
            if self.over.get() {
                return pieces.stop();
            }
            let bytes = match piece {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return self.finish_reading(),
                Err(()) => return self.fail("the browser could not read the file"),
            };
            let before = self.read.get();
            let wants = self.head.borrow().wants() as u32;
            if wants > 0 && matches!(self.purpose, Purpose::Open) {
                let head = bytes.subarray(0, wants.min(bytes.length())).to_vec();
                self.head.borrow_mut().add(&head);
            }
            self.read.set(before + bytes.length() as f64);
            if self.percent(self.read.get()) != self.percent(before) {
                self.report();
            }
            post(&self.worker, ToWorker::Piece { bytes, give_back });
            // A piece per task: the browser's reads resolve as microtasks of the task that asked,
            // so with the file's bytes ready one task went on reading piece after piece.
            next_task().await;
        }
    }

    fn finish_reading(&self) {
        self.read_ms.set(now() - self.started);
        self.handed_over.set(true);
        post(&self.worker, ToWorker::End);
    }
}

fn next(sink: Sink) {
    if BUSY.with(|b| b.get()) {
        return;
    }
    let Some((name, blob)) = QUEUE.with(|q| q.borrow_mut().pop_front()) else {
        return;
    };
    if let Err(reason) = check_size(&blob) {
        sink.failed(&name, &reason);
        return next(sink);
    }
    sink.progress(LoadProgress {
        name: name.clone(),
        total: blob.size(),
        ..LoadProgress::default()
    });
    let Some(worker) = take_worker() else {
        sink.failed(&name, "this browser cannot start the parsing worker");
        return next(sink);
    };
    BUSY.with(|b| b.set(true));
    start(sink, name, blob, worker, Purpose::Open);
}

/// Starts reading `blob` into `worker`, wiring its replies.
fn start(sink: Sink, name: String, blob: Blob, worker: Worker, purpose: Purpose) {
    let start = match &purpose {
        Purpose::Open => ToWorker::Start {
            size: Some(blob.size()),
            digest: false,
            at: None,
        },
        Purpose::Compare(_) => ToWorker::Start {
            size: Some(blob.size()),
            digest: true,
            at: None,
        },
        Purpose::At { device, entry, .. } => ToWorker::Start {
            size: Some(blob.size()),
            digest: true,
            at: Some((*device, *entry)),
        },
    };
    let load = Rc::new(Load {
        sink,
        purpose,
        blob: blob.clone(),
        name,
        size: blob.size(),
        worker: worker.clone(),
        started: now(),
        parsed: Cell::new(0.0),
        read: Cell::new(0.0),
        complete: Cell::new(false),
        over: Cell::new(false),
        wake: Wakeup::default(),
        read_ms: Cell::new(0.0),
        spare: RefCell::new(Vec::new()),
        buffers: Cell::new(0),
        head: RefCell::default(),
        ahead: RefCell::new(None),
        handed_over: Cell::new(false),
        arrivals: RefCell::new(None),
        worker_done: Cell::new(None),
        reported_at: Cell::new(f64::NEG_INFINITY),
        cancelled: Cell::new(false),
    });
    if !matches!(load.purpose, Purpose::At { .. }) {
        READING.with(|r| r.borrow_mut().push(load.clone()));
    }
    let replies = load.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        replies.on_message(ev.data())
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // A worker that dies (out of memory, or a bug) ends the load with an error instead of leaving the
    // page waiting for replies that never come.
    let died = load.clone();
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
        ev.prevent_default();
        let detail = Reflect::get(&ev, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "no reason given".into());
        died.fail(&format!("the parsing worker stopped ({detail})"));
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    post(&worker, start);
    if matches!(load.purpose, Purpose::Open) {
        leptos::task::spawn_local(load.clone().write_ahead());
    }
    leptos::task::spawn_local(load.stream(blob));
}

/// Puts where a load's time went on `#app` as `data-load-timings`, and in the console.
fn record_timings(timings: &LoadTimings) {
    let json = timings.to_json();
    web_sys::console::debug_1(&format!("memograph load timings (ms): {json}").into());
    if let Some(app) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("app"))
    {
        let _ = app.set_attribute("data-load-timings", &json);
    }
}

/// Loads the example bundled in `assets/` (a real snapshot).
pub fn load_example(sink: Sink) {
    fetch(
        sink,
        "./example.pickle.gz".to_string(),
        "example: kk_memory_ctx128_fullstep.pickle.gz".to_string(),
    );
}

/// Fetches `url` (from `?url=` or the example button) and loads it.
pub fn fetch(sink: Sink, url: String, name: String) {
    sink.progress(LoadProgress {
        name: format!("downloading {name}"),
        ..LoadProgress::default()
    });
    let download = web_sys::AbortController::new().ok();
    if let Some(d) = &download {
        DOWNLOADS.with(|all| all.borrow_mut().push(d.clone()));
    }
    let signal = download.as_ref().map(|d| d.signal());
    leptos::task::spawn_local(async move {
        let aborted = || signal.as_ref().is_some_and(|s| s.aborted());
        let result: Result<Blob, String> = async {
            let window = web_sys::window().ok_or("no window")?;
            let init = web_sys::RequestInit::new();
            init.set_signal(signal.as_ref());
            let response = JsFuture::from(window.fetch_with_str_and_init(&url, &init))
                .await
                .map_err(|_| {
                    "the download failed (network error or blocked by CORS)".to_string()
                })?;
            let response: web_sys::Response = response.dyn_into().map_err(|_| "bad response")?;
            if !response.ok() {
                return Err(format!(
                    "the server answered {} {}",
                    response.status(),
                    response.status_text()
                ));
            }
            let blob = JsFuture::from(response.blob().map_err(|_| "no body")?)
                .await
                .map_err(|_| "the download broke off".to_string())?;
            blob.dyn_into::<Blob>().map_err(|_| "bad body".to_string())
        }
        .await;
        if let Some(d) = &download {
            DOWNLOADS.with(|all| all.borrow_mut().retain(|other| other != d));
        }
        match result {
            _ if aborted() => {}
            Ok(blob) => load(sink, name, blob),
            Err(e) => sink.failed(&name, &e),
        }
    });
}
