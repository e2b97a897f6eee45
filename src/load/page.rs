//! The page's side of loading: files (picker or drop), the bundled example and `?url=` all become a
//! `Blob`, read with the browser's stream and handed piece by piece to a worker (see the module's header
//! for the whole path and why it is shaped so). Nothing is uploaded: the only network requests are the
//! example and a `?url=` the user gave.

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use js_sys::{ArrayBuffer, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, MessageEvent, ReadableStreamByobReader, Worker, WorkerOptions, WorkerType};

use super::js::{after, clock, grow_heap, now, when_idle, when_quiet, write_step, Wakeup};
use super::protocol::{
    Arrivals, Encoded, FromWorker, LoadTimings, ModelInput, ToWorker, WorkerTimings,
};
use super::store::{self, OpenFile};
use crate::view_model::share::HeadHash;
use crate::view_model::DeviceModel;
use memograph_snapshot::analysis::compare::Digest;
use memograph_snapshot::codec::Sizes;

/// Bytes handed to the worker and not parsed yet, at most. The browser reads faster than the worker
/// parses: without a bound, a big file would pile up in the worker's queue.
const IN_FLIGHT: f64 = 64.0 * 1024.0 * 1024.0;
/// The same from a byte stream, which keeps ahead of the worker with fewer pieces in flight (each is a
/// buffer of its own). Twice as many made no difference: the worker waited 45–100 ms of a 177 MB load
/// for pieces either way (25–33 ms of it for the first), and cold A/B loads (2 × 8 each) did not
/// tell the two apart.
const IN_FLIGHT_STREAMED: f64 = 4.0 * PIECE;
/// Bytes handed to the worker at a time. Where the browser reads a file as a byte stream, a piece is
/// filled from it into a buffer the worker hands back once it has copied it: a load then touches
/// [`IN_FLIGHT_STREAMED`] of fresh memory for its pieces, not the file's size (a fresh buffer per
/// piece, read as a `Blob` slice, cost the page's thread 0.3 ms per MiB in page faults on the
/// benchmark's machine).
/// Otherwise each piece is a slice of the file, read whole, the next asked for before the last
/// arrives (each is a round trip to the browser's file reader; 1 MiB at a time held a 177 MB load to
/// 250 MB/s).
const PIECE: f64 = 4.0 * 1024.0 * 1024.0;
/// The first piece from a byte stream goes as soon as it holds this much: the browser's first reads
/// are small and slow (filling a whole piece took 12–20 ms at 185 MB, the worker idle meanwhile).
const FIRST_PIECE: u32 = 256 * 1024;

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
    /// A worker started ahead of time for the next file.
    static SPARE: RefCell<Option<Spare>> = const { RefCell::new(None) };
    /// Whether this page has asked for its rehearsal.
    static REHEARSED: Cell<bool> = const { Cell::new(false) };
    /// The name each file shown by a numbered name came with (see [`came_as`]).
    static CAME_AS: RefCell<std::collections::HashMap<String, String>> = RefCell::default();
}

fn spawn_worker() -> Option<Worker> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = Worker::new_with_options(&worker_url(), &options).ok()?;
    // The worker is handed the page's compiled module: it neither fetches nor compiles it again (80 ms
    // of a load when a file is chosen as the page opens), and a one-file page's worker may fetch nothing.
    let module = embedded_field("wasmModule").unwrap_or_else(wasm_bindgen::module);
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &JsValue::from_str("memographWasm"), &module);
    let _ = worker.post_message(&message);
    Some(worker)
}

/// `worker.js` with the app module's names: Trunk gives them content hashes, and the page learns
/// them from the preload links it wrote into index.html. The query also keeps one deploy's worker
/// script apart from another's in any cache, and says the compiled module comes by message.
fn worker_url() -> String {
    thread_local! {
        static URL: std::cell::OnceCell<String> = const { std::cell::OnceCell::new() };
    }
    URL.with(|u| {
        u.get_or_init(|| {
            if let Some(url) = embedded_field("worker").and_then(|w| w.as_string()) {
                return url;
            }
            let href = |selector: &str| {
                web_sys::window()
                    .and_then(|w| w.document())
                    .and_then(|d| d.query_selector(selector).ok().flatten())
                    .and_then(|e| e.get_attribute("href"))
            };
            let module = href("link[rel=modulepreload][href*='memograph-web']");
            let wasm = href("link[rel=preload][href$='.wasm']");
            match (module, wasm) {
                (Some(m), Some(w)) => format!(
                    "./worker.js?shared=1&module={}&wasm={}",
                    String::from(js_sys::encode_uri_component(&m)),
                    String::from(js_sys::encode_uri_component(&w))
                ),
                _ => "./worker.js?shared=1".to_string(),
            }
        })
        .clone()
    })
}

/// A field of `window.memographEmbedded`, which a one-file page (`memograph html`) sets before the
/// module starts: the worker's data: URL, the compiled wasm module and the snapshots it carries.
pub fn embedded_field(name: &str) -> Option<JsValue> {
    let window = web_sys::window()?;
    let embedded = js_sys::Reflect::get(&window, &JsValue::from_str("memographEmbedded")).ok()?;
    if embedded.is_undefined() || embedded.is_null() {
        return None;
    }
    js_sys::Reflect::get(&embedded, &JsValue::from_str(name))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

/// The files a one-file page carries, in its order.
pub fn embedded_files() -> Vec<(String, web_sys::File)> {
    let Some(files) = embedded_field("files") else {
        return Vec::new();
    };
    js_sys::Array::from(&files)
        .iter()
        .filter_map(|f| f.dyn_into::<web_sys::File>().ok())
        .map(|f| (f.name(), f))
        .collect()
}

fn post(worker: &Worker, message: ToWorker) {
    let (m, transfer) = message.to_js();
    let _ = worker.post_message_with_transfer(&m, &transfer);
}

/// A worker started ahead of time for the next file.
struct Spare {
    worker: Worker,
    /// Set if it failed (its script did not load) before it was used.
    failed: Rc<Cell<bool>>,
    /// Whether it was asked to write its heap ahead ([`expect_file`]).
    warmed: Cell<bool>,
}

/// How much heap a spare worker writes ahead of the next file (see "Fresh memory is time" in the
/// module's header): about what a 185 MB file's parse takes.
const WARM_HEAP_BYTES: f64 = 192.0 * 1024.0 * 1024.0;

/// Starts a spare worker for the next file now; the first one also rehearses (see the module's header)
/// and writes its heap ahead: an empty page is there to load a file.
pub fn warm_up() {
    let first = SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.is_some() {
            return false;
        }
        let Some(worker) = spawn_worker() else {
            return false;
        };
        let failed = Rc::new(Cell::new(false));
        let flag = failed.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| flag.set(true));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        let first = !REHEARSED.replace(true);
        if first {
            let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|ev: MessageEvent| {
                if let Some(FromWorker::Rehearsed { model }) = FromWorker::from_js(&ev.data()) {
                    super::rehearsal::rehearse(&model);
                }
            });
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            on_message.forget();
            rehearse_if_unused(worker.clone());
        }
        *spare = Some(Spare {
            worker,
            failed,
            warmed: Cell::new(false),
        });
        first
    });
    if first {
        expect_file();
    }
}

/// How long a new page waits before its rehearsal (see the module's header), in case a file comes
/// first. A file chosen as the page opens (as `?url=` does) used to find the worker making the
/// rehearsal's synthetic pickle, and the browser then optimised that code (35–80 ms of compiles) on
/// the two cores the file's parse needed. A person takes longer than this to pick a file.
const REHEARSE_AFTER_MS: i32 = 300;

/// Asks `worker` to rehearse [`REHEARSE_AFTER_MS`] from now if it is still the spare and no file is
/// loading: a load that took it meanwhile optimises the code itself.
fn rehearse_if_unused(worker: Worker) {
    after(REHEARSE_AFTER_MS, move || {
        let spare = SPARE.with(|s| s.borrow().as_ref().is_some_and(|s| s.worker == worker));
        if spare && !loading() {
            post(&worker, ToWorker::Rehearse);
        }
    });
}

/// The user reaches for a file (the open buttons, a drag over the page): the spare worker writes its
/// heap ahead, once. Not done for every spare unasked: it would stay with an idle page, beside the
/// open files.
pub fn expect_file() {
    SPARE.with(|spare| {
        if let Some(spare) = spare.borrow().as_ref() {
            if !spare.warmed.replace(true) {
                post(
                    &spare.worker,
                    ToWorker::WarmHeap {
                        bytes: WARM_HEAP_BYTES,
                    },
                );
            }
        }
    });
}

/// Decodes a snapshot the worker encodes, as its pieces arrive, in slices of about [`SLICE_MS`], the
/// page's event loop running between them.
pub(super) async fn decode_sliced(
    arrivals: Rc<Arrivals>,
    sizes: Sizes,
) -> Result<memograph_snapshot::Snapshot, memograph_snapshot::codec::DecodeError> {
    let mut pauser = Pauser::new();
    // In a task of its own: the model's message has had its own work (see `Load::model_begins`).
    pauser.start().await;
    memograph_snapshot::codec::decode_sliced(ModelInput::new(arrivals), sizes, &mut pauser).await
}

/// How long the spare worker for the next file may wait for the page to be idle after a file opens.
const SPARE_WITHIN_MS: u32 = 2000;

/// How long the page must have been idle without a break before a worker whose file is open is
/// ended, and how long that worker may wait for it at most.
const RETIRE_QUIET_MS: f64 = 1000.0;
const RETIRE_WITHIN_MS: f64 = 10_000.0;

/// Ends `worker` once the page has been idle for [`RETIRE_QUIET_MS`] without a break (half a second
/// from now where a browser has no idle callbacks), at most [`RETIRE_WITHIN_MS`] from now. Ending a
/// worker frees the gigabytes of a big file's parse, and while the browser frees them (its thread's
/// `Terminate` task: about 480 ms of CPU for a 2 GB file) whatever the page does that maps memory
/// waits for it (growing its heap, a new thread, fresh pages): ended as its model came, a 1–2 GB
/// file's decode began with a task of 58–155 ms in 7 of 12 cold loads; ended at the first idle
/// callback after the first frame, a 2 GB file's page was held 477 ms by a timer (the address
/// rewrite) 228 ms after its first frame in 1 of 3 warm loads, and 1 GB files' for 70–125 ms in 3 of
/// 14. Once the page has been quiet for a second (the first frames drawn, the categories built),
/// only what the user does next can meet it. Its memory is held a few seconds longer: after the
/// load, not during it.
fn retire_when_idle(worker: &Worker, parsed: f64) {
    let worker = worker.clone();
    when_quiet(RETIRE_QUIET_MS, RETIRE_WITHIN_MS, 500, move || {
        end_worker(&worker, parsed)
    });
}

thread_local! {
    /// Until when (`now()`) an ended worker's memory may still be going back to the system.
    static FREEING_UNTIL: Cell<f64> = const { Cell::new(0.0) };
}

/// How long the browser may take to free the memory of a worker that parsed `parsed` bytes: about
/// 0.15 ms per MB was seen (a 945 MB file's worker took 88–158 ms of its thread to go), with room
/// to spare.
fn freeing_ms(parsed: f64) -> f64 {
    250.0 + parsed / 1.0e6
}

/// Ends `worker`, which parsed `parsed` bytes, and notes how long its memory may take to go (see
/// [`start_spare_when_idle`]).
fn end_worker(worker: &Worker, parsed: f64) {
    worker.terminate();
    let until = now() + freeing_ms(parsed);
    FREEING_UNTIL.with(|f| f.set(f.get().max(until)));
}

/// Starts the spare worker for the next file once the page is idle and no ended worker's memory is
/// still being freed. A new worker starting while the browser frees an old one's memory waited for
/// it, and so did the page's thread: after a 945 MB cold load, one task of 82–150 ms 130–230 ms
/// after the first timeline in 6 of 8 loads (in none of 8 without the spare).
fn start_spare_when_idle() {
    // Where a browser has no `requestIdleCallback`, after a retiring worker's fallback (500 ms).
    when_idle(SPARE_WITHIN_MS, 600, || {
        let wait = FREEING_UNTIL.with(Cell::get) - now();
        if wait > 0.0 {
            after(wait.ceil() as i32, start_spare_when_idle);
        } else if !loading() {
            warm_up();
        }
    });
}

/// The heap that decoding an encoding of `len` bytes and building the first model take, about: the
/// snapshot takes about 1.5 times the encoding's size and the first device's model about as much
/// again; staying under what is needed, growing the heap by it does not raise the page's memory.
fn decoded_size(len: usize) -> usize {
    len.saturating_mul(3)
}

/// How long a slice of work on the page's thread may run before it gives the thread back. A task holds
/// more than its slice (the rest of the batch it was in, the browser's own work): with 40 ms slices
/// the tasks as a 2 GB file opened were 55–96 ms.
const SLICE_MS: f64 = 25.0;

thread_local! {
    /// When sliced work last got the thread back. Shared by every [`Pauser`]: two jobs running in one
    /// task (a build started as another ends) share its slice instead of taking one each.
    static RESUMED: Cell<f64> = const { Cell::new(0.0) };
}

/// Gives the page's thread back once the work in this task has run [`SLICE_MS`].
pub struct Pauser;

impl Pauser {
    pub fn new() -> Pauser {
        Pauser
    }

    /// Gives the page's thread back now, and starts a fresh slice: for work that must not run in the
    /// task that asked for it (a build asked for while a view opens: on a 2 GB file the view's opening
    /// and a build's first stretch made one task of 100–130 ms).
    pub(super) async fn start(&mut self) {
        next_task().await;
        RESUMED.with(|r| r.set(clock()));
    }
}

impl memograph_snapshot::batch::Pause for Pauser {
    async fn pause(&mut self) {
        // A stale time (the page sat idle since) only makes the first pause give the thread back early.
        if clock() - RESUMED.with(Cell::get) > SLICE_MS {
            self.start().await;
        }
    }
}

/// Whether a file is being read (opened or digested). The page's part of the rehearsal stops then: the
/// worker's parse is what the user waits for, and on two cores the rehearsal and the compiles it sets
/// off slowed it by more than the rehearsal saves later (the load's own stages get optimised as they
/// run, in batches).
pub(super) fn loading() -> bool {
    BUSY.with(Cell::get) || DIGESTING.with(Cell::get) > 0
}

/// The spare worker if it is alive, else a new one.
fn take_worker() -> Option<Worker> {
    let spare = SPARE.with(|s| s.borrow_mut().take());
    match spare {
        Some(spare) if !spare.failed.get() => Some(spare.worker),
        Some(spare) => {
            spare.worker.terminate();
            spawn_worker()
        }
        None => spawn_worker(),
    }
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

/// `name`, or where another file is shown by it already (`used`: open, compared, being read; see
/// [`names_in_use`]), `name` numbered (`run (2).pickle`: see `memograph_snapshot::names::numbered`):
/// two folders of one name hold files of one name, and the browser gives a picked file no path. The
/// name it came with is kept (see [`came_as`]), so that the file picked again is known. The name
/// is in `used` from then on.
fn distinct(name: String, used: &mut HashSet<String>) -> String {
    let shown = memograph_snapshot::names::free_name(&name, |n| used.contains(n));
    if shown != name {
        shown_instead(&name, &shown);
    }
    used.insert(shown.clone());
    shown
}

/// Notes that a file that came named `name` is shown as `shown`.
pub fn shown_instead(name: &str, shown: &str) {
    let came = came_as(name);
    CAME_AS.with(|c| c.borrow_mut().insert(shown.to_string(), came));
}

/// The name a file shown as `shown` came with: `shown` itself unless it was numbered.
fn came_as(shown: &str) -> String {
    CAME_AS
        .with(|c| c.borrow().get(shown).cloned())
        .unwrap_or_else(|| shown.to_string())
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

    /// Reads the blob and hands it to the worker a [`PIECE`] at a time, never more than [`IN_FLIGHT`]
    /// ([`IN_FLIGHT_STREAMED`] from a byte stream) bytes ahead of it, until the blob ends or the worker
    /// wants no more.
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

/// Where a load's pieces come from (see [`PIECE`]).
enum Pieces {
    /// The blob's byte stream, read into reused buffers by index.html's `memographFill` (see
    /// [`fill`]); whether a piece was read yet.
    Stream(ReadableStreamByobReader, js_sys::Function, bool),
    /// Slices of the blob, read whole: where the next starts, and the one asked for ahead.
    Slices {
        blob: Blob,
        next: f64,
        ahead: Option<JsFuture>,
    },
}

impl Pieces {
    /// The byte stream where the browser has a reader for it and the page has `memographFill`
    /// (both shipped pages do: `dist/` and `memograph html`'s); otherwise slices.
    fn of(blob: &Blob) -> Pieces {
        let fill_js = Reflect::get(&js_sys::global(), &"memographFill".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        if let Some(fill_js) = fill_js {
            if let Ok(reader) = ReadableStreamByobReader::new(&blob.stream()) {
                return Pieces::Stream(reader, fill_js, false);
            }
        }
        Pieces::Slices {
            blob: blob.clone(),
            next: 0.0,
            ahead: None,
        }
    }

    /// Whether the worker should hand the pieces' buffers back.
    fn reuses(&self) -> bool {
        matches!(self, Pieces::Stream(..))
    }

    /// The next piece (`None` at the end), filled into a buffer of `spare` when there is one; `made`
    /// counts the buffers made.
    async fn next(
        &mut self,
        spare: &RefCell<Vec<ArrayBuffer>>,
        made: &Cell<u32>,
    ) -> Result<Option<Uint8Array>, ()> {
        match self {
            Pieces::Stream(reader, fill_js, started) => {
                let buffer = spare.borrow_mut().pop();
                let buffer = buffer.unwrap_or_else(|| {
                    made.set(made.get() + 1);
                    ArrayBuffer::new(PIECE as u32)
                });
                let least = if std::mem::replace(started, true) {
                    PIECE as u32
                } else {
                    FIRST_PIECE
                };
                fill(reader, fill_js, buffer, least, spare).await
            }
            Pieces::Slices { blob, next, ahead } => {
                let size = blob.size();
                let read = |at: f64| {
                    let end = (at + PIECE).min(size);
                    made.set(made.get() + 1);
                    let piece = blob.slice_with_f64_and_f64(at, end).map_err(|_| ())?;
                    Ok::<_, ()>(JsFuture::from(piece.array_buffer()))
                };
                let piece = match ahead.take() {
                    Some(piece) => piece,
                    None if *next < size => read(*next)?,
                    None => return Ok(None),
                };
                *next = (*next + PIECE).min(size);
                if *next < size {
                    *ahead = Some(read(*next)?);
                }
                let buffer = piece.await.map_err(|_| ())?;
                Ok(Some(Uint8Array::new(&buffer)))
            }
        }
    }

    /// No more pieces are wanted: the browser may stop reading the file.
    fn stop(&self) {
        if let Pieces::Stream(reader, ..) = self {
            let _ = reader.cancel();
        }
    }
}

/// Fills `buffer` from the byte stream with index.html's `memographFill` (`fill_js`), at least `least`
/// bytes of it: each read brings what the browser has ready, usually 64 KiB, and the reads of a piece
/// run in JavaScript, where the page awaits one future a piece, not one a read. Returns a view of the
/// bytes read, `None` at the stream's end (the buffer goes back to `spare`).
async fn fill(
    reader: &ReadableStreamByobReader,
    fill_js: &js_sys::Function,
    buffer: ArrayBuffer,
    least: u32,
    spare: &RefCell<Vec<ArrayBuffer>>,
) -> Result<Option<Uint8Array>, ()> {
    let promise = fill_js
        .call3(&JsValue::UNDEFINED, reader, &buffer, &least.into())
        .map_err(|_| ())?;
    let view: Uint8Array = JsFuture::from(Promise::from(promise))
        .await
        .map_err(|_| ())?
        .dyn_into()
        .map_err(|_| ())?;
    if view.length() == 0 {
        spare.borrow_mut().push(view.buffer());
        return Ok(None);
    }
    Ok(Some(view))
}

/// When a file picked from disk was last changed (a blob fetched from a link has no such time). The
/// browser may ask the disk each time a file of a picked folder is asked (about 0.1 ms each; a folder
/// of 300 files asked three times each took 109 ms of the task that picked it): the time is kept on
/// the file the first time.
pub fn modified(blob: &Blob) -> Option<f64> {
    const KEPT: &str = "memographModified";
    let file = blob.dyn_ref::<web_sys::File>()?;
    if let Some(kept) = js_sys::Reflect::get(file, &JsValue::from_str(KEPT))
        .ok()
        .and_then(|v| v.as_f64())
    {
        return Some(kept);
    }
    let time = file.last_modified();
    let _ = js_sys::Reflect::set(file, &JsValue::from_str(KEPT), &JsValue::from_f64(time));
    Some(time)
}

/// Whether the file `name` (`blob`) is another one seen before (`other_name`, its size and time of
/// change): the same name (as it came: see [`came_as`]), size and time, never a file without a time
/// (one fetched from a link). The size and time are asked in that order, and only as far as the
/// answer needs: the browser asks the disk for a picked file's the first time (see [`modified`]),
/// and most names differ.
pub fn same_file(
    name: &str,
    blob: &Blob,
    other_name: &str,
    other_bytes: impl FnOnce() -> u64,
    other_time: impl FnOnce() -> Option<f64>,
) -> bool {
    let same_name = other_name == name
        || CAME_AS.with(|c| {
            let c = c.borrow();
            let came = |n| c.get(n).map_or(n, String::as_str);
            !c.is_empty() && came(other_name) == came(name)
        });
    same_name && other_bytes() == named_size(blob) && {
        let time = other_time();
        time.is_some() && time == modified(blob)
    }
}

/// The size a file is named by: its own, or for one a one-file page carries compressed
/// (`memograph html`), the size it had (the page's bootstrap sets `memographSize`).
pub fn named_size(blob: &Blob) -> u64 {
    js_sys::Reflect::get(blob, &JsValue::from_str("memographSize"))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or_else(|| blob.size()) as u64
}

/// Why a blob is too big for a tab, if it is.
fn check_size(blob: &Blob) -> Result<(), String> {
    if blob.size() <= super::MAX_FILE_BYTES {
        return Ok(());
    }
    Err(format!(
        "{} is more than a browser tab can hold (its memory ends at 4 GiB); \
         `memograph summary` and `memograph report` read it on the command line, or record \
         fewer entries (a smaller max_entries)",
        memograph_snapshot::format::bytes(blob.size() as u64)
    ))
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

/// Resolves in a task of its own, after whatever the browser has waiting (input, a frame). A message
/// to itself, not `setTimeout(0)`: nested timeouts wait 4 ms or more each (and a second or more in a
/// hidden tab), and a load pauses dozens of times.
pub async fn next_task() {
    thread_local! {
        /// The channel and the resolvers of the tasks asked for, in order (one message each).
        static CHANNEL: Option<(web_sys::MessagePort, Rc<RefCell<VecDeque<js_sys::Function>>>)> = {
            let channel = web_sys::MessageChannel::new().ok()?;
            let waiting: Rc<RefCell<VecDeque<js_sys::Function>>> = Rc::default();
            let queue = waiting.clone();
            let on_message = Closure::<dyn FnMut()>::new(move || {
                let next = queue.borrow_mut().pop_front();
                if let Some(resolve) = next {
                    let _ = resolve.call0(&JsValue::NULL);
                }
            });
            channel.port1().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            on_message.forget();
            Some((channel.port2(), waiting))
        };
    }
    let later = Promise::new(&mut |resolve, _| {
        let asked = CHANNEL.with(|c| match c {
            Some((port, waiting)) => {
                let posted = port.post_message(&JsValue::NULL).is_ok();
                if posted {
                    waiting.borrow_mut().push_back(resolve.clone());
                }
                posted
            }
            None => false,
        });
        if !asked {
            match web_sys::window() {
                Some(w) => {
                    let _ = w.set_timeout_with_callback(&resolve);
                }
                None => {
                    let _ = resolve.call0(&JsValue::NULL);
                }
            }
        }
    });
    let _ = JsFuture::from(later).await;
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

/// The first 64 KiB of `blob` (empty when it cannot be read), to tell step records from snapshots.
pub async fn head_of(blob: &Blob) -> Vec<u8> {
    first_bytes(blob, 65536.0).await
}

async fn first_bytes(blob: &Blob, n: f64) -> Vec<u8> {
    let Ok(head) = blob.slice_with_f64_and_f64(0.0, n) else {
        return Vec::new();
    };
    match JsFuture::from(head.array_buffer()).await {
        Ok(buffer) => Uint8Array::new(&buffer).to_vec(),
        Err(_) => Vec::new(),
    }
}

/// Step records are small next to snapshots; past this a file is refused rather than read whole.
const MAX_STEP_FILE_BYTES: f64 = 512.0 * 1024.0 * 1024.0;

/// Reads a step-record file whole and parses it (see `memograph_snapshot::steps`).
pub async fn read_steps(
    name: &str,
    blob: &Blob,
) -> Result<memograph_snapshot::steps::StepFile, String> {
    if blob.size() > MAX_STEP_FILE_BYTES {
        return Err(format!(
            "{} of step records is more than the page reads at once; `memograph steps` reads it",
            memograph_snapshot::format::bytes(blob.size() as u64)
        ));
    }
    let buffer = JsFuture::from(blob.array_buffer())
        .await
        .map_err(|_| "the browser could not read the file".to_string())?;
    memograph_snapshot::steps::read_steps(name, &Uint8Array::new(&buffer).to_vec())
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
