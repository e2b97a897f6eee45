//! Loading: files (picker or drop), the bundled example and `?url=` all become a `Blob`. The page reads
//! it with the browser's stream and hands each piece to a Web Worker that parses as the pieces arrive
//! (see `worker.rs`), so reading and parsing overlap; the page then decodes the model the worker sends
//! back. Nothing is uploaded: the only network requests are the example and a `?url=` the user gave.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Promise, Reflect, Uint8Array};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, MessageEvent, ReadableStreamDefaultReader, Worker, WorkerOptions, WorkerType};

use super::store::{self, OpenFile};
use super::worker::{message, number_field, text_field};
use super::{now, Phase, Progress, Ui};
use crate::view_model::DeviceModel;

/// Bytes handed to the worker and not parsed yet, at most. The browser reads faster than the worker
/// parses: without a bound, a big file would pile up in the worker's queue.
const IN_FLIGHT: f64 = 64.0 * 1024.0 * 1024.0;

thread_local! {
    static QUEUE: RefCell<VecDeque<(String, Blob)>> = const { RefCell::new(VecDeque::new()) };
    static BUSY: RefCell<bool> = const { RefCell::new(false) };
    /// A worker started ahead of time, with the module already loaded, for the next file; and whether it
    /// failed (its script did not load) before it was used.
    static SPARE: RefCell<Option<(Worker, Rc<Cell<bool>>)>> = const { RefCell::new(None) };
    /// Whether this page has asked for its rehearsal (see [`warm_up`]).
    static REHEARSED: Cell<bool> = const { Cell::new(false) };
}

fn spawn_worker() -> Option<Worker> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    Worker::new_with_options("./worker.js", &options).ok()
}

/// Starts a worker for the next file now, so that file does not wait for the module to load.
///
/// The first time, the worker also rehearses a load (see `worker.rs` and `rehearsal.rs`): every hot path
/// of a load has run by the time the user has picked a file, so the browser runs the real load on
/// optimised code. The compiled module is shared by the page and its workers, so one rehearsal serves
/// every later worker too.
pub fn warm_up() {
    SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.is_none() {
            *spare = spawn_worker().map(|worker| {
                let failed = Rc::new(Cell::new(false));
                let flag = failed.clone();
                let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| flag.set(true));
                worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
                on_error.forget();
                if !REHEARSED.replace(true) {
                    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|ev: MessageEvent| {
                        let data = ev.data();
                        if text_field(&data, "type").as_deref() == Some("rehearsed") {
                            super::rehearsal::rehearse(&data);
                        }
                    });
                    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
                    on_message.forget();
                    let _ = worker.post_message(&message("rehearse"));
                }
                (worker, failed)
            });
        }
    });
}

/// Decodes the snapshot in a worker's `{model}` message.
pub fn decode(
    data: &JsValue,
) -> Result<memograph_snapshot::Snapshot, memograph_snapshot::codec::DecodeError> {
    let buffer = Reflect::get(data, &"model".into()).unwrap_or(JsValue::NULL);
    let array = Uint8Array::new(&buffer);
    let total = array.length() as usize;
    // The snapshot takes about 1.5 times the encoding's size and the first device's model about as much
    // again; staying under what is needed, this does not raise the page's memory (measured: 152 MB
    // after loading the 193 MB benchmark file either way).
    super::worker::grow_heap(total.saturating_mul(3));
    let input = std::io::BufReader::with_capacity(1 << 20, JsBytes { array, at: 0 });
    memograph_snapshot::codec::decode_from(input, total)
}

/// The spare worker if it is alive, else a new one.
fn take_worker() -> Option<Worker> {
    let spare = SPARE.with(|s| s.borrow_mut().take());
    match spare {
        Some((worker, failed)) if !failed.get() => Some(worker),
        Some((worker, _)) => {
            worker.terminate();
            spawn_worker()
        }
        None => spawn_worker(),
    }
}

/// Queues `blob` for parsing; files load one after another, and open files stay usable meanwhile.
pub fn load(ui: Ui, name: String, blob: Blob) {
    QUEUE.with(|q| q.borrow_mut().push_back((name, blob)));
    next(ui);
}

/// One file on its way from the blob to the store; shared by the reading task and the worker's replies.
struct Load {
    ui: Ui,
    name: String,
    size: f64,
    worker: Worker,
    /// `performance.now()` when the load began.
    started: f64,
    /// Bytes the worker has parsed.
    parsed: Cell<f64>,
    /// Set once the load ended (model, error, or the stream broke): stops the reading task.
    over: Cell<bool>,
    /// Wakes the reading task when it waits for the worker to catch up.
    wake: RefCell<Option<js_sys::Function>>,
    /// Milliseconds from the start until the last piece was handed over.
    read_ms: Cell<f64>,
}

impl Load {
    /// Ends the load (once; false if it had ended): the worker goes, the reading task stops.
    fn end(&self) -> bool {
        if self.over.replace(true) {
            return false;
        }
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
        self.wake_reader();
        true
    }

    /// The next queued file starts, with a worker already up.
    fn next_file(&self) {
        BUSY.with(|b| *b.borrow_mut() = false);
        warm_up();
        next(self.ui);
    }

    fn fail(&self, reason: &str) {
        if self.end() {
            fail(self.ui, &self.name, reason);
            self.next_file();
        }
    }

    /// Whole percents of the file: the bar moves by them, one redraw each, not one per piece.
    fn percent(&self, bytes: f64) -> f64 {
        (bytes * 100.0 / self.size.max(1.0)).floor()
    }

    fn wake_reader(&self) {
        if let Some(wake) = self.wake.borrow_mut().take() {
            let _ = wake.call0(&JsValue::NULL);
        }
    }

    /// Resolves when the worker acknowledges a piece (or the load ends).
    fn caught_up(&self) -> JsFuture {
        JsFuture::from(Promise::new(&mut |resolve, _| {
            *self.wake.borrow_mut() = Some(resolve);
        }))
    }

    fn on_message(self: &Rc<Self>, data: JsValue) {
        match text_field(&data, "type").unwrap_or_default().as_str() {
            "progress" => {
                let done = number_field(&data, "done").unwrap_or(0.0);
                if self.percent(done) != self.percent(self.parsed.get()) {
                    self.ui.progress.update(|p| p.parsed = done);
                }
                self.parsed.set(done);
                self.wake_reader();
            }
            "done" => self.done(&data),
            "error" => self.fail(&text_field(&data, "message").unwrap_or_default()),
            _ => {}
        }
    }

    /// Decodes the worker's model and opens it.
    fn done(&self, data: &JsValue) {
        let received = super::worker::clock();
        let decoded = decode(data);
        let decode_ms = super::worker::clock() - received;
        let snapshot = match decoded {
            Ok(s) => s,
            Err(e) => return self.fail(&e.to_string()),
        };
        if !self.end() {
            return;
        }
        let device = snapshot.default_device().unwrap_or(0);
        let model = DeviceModel::new(&snapshot, device);
        let model_ms = super::worker::clock() - received - decode_ms;
        opened(
            self.ui,
            self.name.clone(),
            self.size as u64,
            snapshot,
            model,
            self.started,
        );
        self.next_file();
        let worker = Reflect::get(data, &"timings".into()).unwrap_or_default();
        let at = |key: &str| number_field(&worker, key).unwrap_or(0.0);
        let origin = super::worker::clock() - now();
        record_timings(&[
            ("worker_start", at("received") - (origin + self.started)),
            ("read", self.read_ms.get()),
            ("parse", at("parse")),
            ("worker_waited", at("waited")),
            ("encode", at("encode")),
            ("transfer", received - at("posted")),
            ("decode", decode_ms),
            ("model", model_ms),
            ("opened_at", now() - self.started),
        ]);
    }

    /// Reads the blob with the browser's stream and hands each piece to the worker, never more than
    /// [`IN_FLIGHT`] bytes ahead of it.
    async fn stream(self: Rc<Self>, blob: Blob) {
        let reader: ReadableStreamDefaultReader = blob.stream().get_reader().unchecked_into();
        let mut sent = 0.0;
        loop {
            while sent - self.parsed.get() > IN_FLIGHT && !self.over.get() {
                let _ = self.caught_up().await;
            }
            if self.over.get() {
                let _ = reader.cancel();
                return;
            }
            let Ok(chunk) = JsFuture::from(reader.read()).await else {
                return self.fail("the browser could not read the file");
            };
            if self.over.get() {
                let _ = reader.cancel();
                return;
            }
            let finished = Reflect::get(&chunk, &"done".into())
                .ok()
                .and_then(|d| d.as_bool())
                .unwrap_or(true);
            if finished {
                self.read_ms.set(now() - self.started);
                let _ = self.worker.post_message(&message("end"));
                return;
            }
            let Ok(bytes) =
                Reflect::get(&chunk, &"value".into()).and_then(|v| v.dyn_into::<Uint8Array>())
            else {
                return self.fail("the browser could not read the file");
            };
            let before = sent;
            sent += bytes.length() as f64;
            if self.percent(sent) != self.percent(before) {
                self.ui.progress.update(|p| p.read = sent);
            }
            let m = message("piece");
            let _ = Reflect::set(&m, &"bytes".into(), &bytes);
            let _ = self
                .worker
                .post_message_with_transfer(&m, &js_sys::Array::of1(&bytes.buffer()));
        }
    }
}

fn next(ui: Ui) {
    if BUSY.with(|b| *b.borrow()) {
        return;
    }
    let Some((name, blob)) = QUEUE.with(|q| q.borrow_mut().pop_front()) else {
        return;
    };
    let started = now();
    ui.progress.set(Progress {
        name: name.clone(),
        total: blob.size(),
        ..Progress::default()
    });
    ui.phase.set(Phase::Loading);
    let Some(worker) = take_worker() else {
        fail(ui, &name, "this browser cannot start the parsing worker");
        return next(ui);
    };
    BUSY.with(|b| *b.borrow_mut() = true);
    let load = Rc::new(Load {
        ui,
        name,
        size: blob.size(),
        worker: worker.clone(),
        started,
        parsed: Cell::new(0.0),
        over: Cell::new(false),
        wake: RefCell::new(None),
        read_ms: Cell::new(0.0),
    });
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
    let start = message("start");
    let _ = Reflect::set(&start, &"size".into(), &blob.size().into());
    let _ = worker.post_message(&start);
    leptos::task::spawn_local(load.stream(blob));
}

/// Reads a JS byte array into wasm memory a piece at a time (never a copy of the whole buffer).
struct JsBytes {
    array: Uint8Array,
    at: u32,
}

impl std::io::Read for JsBytes {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = (out.len() as u32).min(self.array.length() - self.at);
        self.array
            .subarray(self.at, self.at + n)
            .copy_to(&mut out[..n as usize]);
        self.at += n;
        Ok(n as usize)
    }
}

/// Puts where a load's time went on `#app` as `data-load-timings` (JSON, milliseconds), for the page
/// benchmark and for anyone curious in the console.
fn record_timings(parts: &[(&str, f64)]) {
    let json = parts
        .iter()
        .map(|(k, v)| format!("\"{k}\":{v:.0}"))
        .collect::<Vec<_>>()
        .join(",");
    web_sys::console::debug_1(&format!("memograph load timings (ms): {{{json}}}").into());
    if let Some(app) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("app"))
    {
        let _ = app.set_attribute("data-load-timings", &format!("{{{json}}}"));
    }
}

fn opened(
    ui: Ui,
    name: String,
    bytes: u64,
    snapshot: memograph_snapshot::Snapshot,
    model: DeviceModel,
    started: f64,
) {
    let devices = snapshot.devices();
    let device = snapshot.default_device().unwrap_or(0);
    let index = store::add(OpenFile {
        name,
        bytes,
        snapshot,
        devices,
        models: [(device, model)].into(),
    });
    ui.error.set(None);
    ui.load_started.set(started);
    ui.select(index, device);
    ui.files.update(|n| *n += 1);
    ui.phase.set(Phase::Ready);
}

/// Shows `reason` for `name` in the error panel.
pub fn fail(ui: Ui, name: &str, reason: &str) {
    ui.error.set(Some(format!("{name}: {reason}")));
    ui.phase.set(Phase::Error);
}

/// Loads the example bundled in `assets/` (a real snapshot).
pub fn load_example(ui: Ui) {
    fetch(
        ui,
        "./example.pickle.gz".to_string(),
        "example: kk_memory_ctx128_fullstep.pickle.gz".to_string(),
    );
}

/// Fetches `url` (from `?url=` or the example button) and loads it.
pub fn fetch(ui: Ui, url: String, name: String) {
    ui.progress.set(Progress {
        name: format!("downloading {name}"),
        ..Progress::default()
    });
    ui.phase.set(Phase::Loading);
    leptos::task::spawn_local(async move {
        let result: Result<Blob, String> = async {
            let window = web_sys::window().ok_or("no window")?;
            let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(&url))
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
            let blob =
                wasm_bindgen_futures::JsFuture::from(response.blob().map_err(|_| "no body")?)
                    .await
                    .map_err(|_| "the download broke off".to_string())?;
            blob.dyn_into::<Blob>().map_err(|_| "bad body".to_string())
        }
        .await;
        match result {
            Ok(blob) => load(ui, name, blob),
            Err(e) => fail(ui, &name, &e),
        }
    });
}
