//! The parsing workers' lives: the spare one started ahead of the next file (which rehearses and
//! writes its heap ahead on a fresh page), and when a worker whose file is open is ended and its
//! memory given back (see the module's header for the measurements behind each wait).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

use super::files::embedded_field;
use super::js::{after, now, when_idle, when_quiet};
use super::page::loading;
use super::protocol::{FromWorker, ToWorker};

thread_local! {
    /// A worker started ahead of time for the next file.
    static SPARE: RefCell<Option<Spare>> = const { RefCell::new(None) };
    /// Whether this page has asked for its rehearsal.
    static REHEARSED: Cell<bool> = const { Cell::new(false) };
}

pub(super) fn spawn_worker() -> Option<Worker> {
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

pub(super) fn post(worker: &Worker, message: ToWorker) {
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
pub(super) fn retire_when_idle(worker: &Worker, parsed: f64) {
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
pub(super) fn end_worker(worker: &Worker, parsed: f64) {
    worker.terminate();
    let until = now() + freeing_ms(parsed);
    FREEING_UNTIL.with(|f| f.set(f.get().max(until)));
}

/// Starts the spare worker for the next file once the page is idle and no ended worker's memory is
/// still being freed. A new worker starting while the browser frees an old one's memory waited for
/// it, and so did the page's thread: after a 945 MB cold load, one task of 82–150 ms 130–230 ms
/// after the first timeline in 6 of 8 loads (in none of 8 without the spare).
pub(super) fn start_spare_when_idle() {
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

/// The spare worker if it is alive, else a new one.
pub(super) fn take_worker() -> Option<Worker> {
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
