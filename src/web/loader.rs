//! Loading: files (picker or drop), the bundled example and `?url=` all become a `Blob` that a fresh Web
//! Worker parses (see `worker.rs`); the page decodes the model it sends back. Nothing is uploaded: the only
//! network requests are the example and a `?url=` the user gave.

use std::cell::RefCell;
use std::collections::VecDeque;

use js_sys::{Reflect, Uint8Array};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, MessageEvent, Worker, WorkerOptions, WorkerType};

use super::store::{self, OpenFile};
use super::{Phase, Ui};

thread_local! {
    static QUEUE: RefCell<VecDeque<(String, Blob)>> = const { RefCell::new(VecDeque::new()) };
    static BUSY: RefCell<bool> = const { RefCell::new(false) };
}

/// Queues `blob` for parsing; files load one after another, and open files stay usable meanwhile.
pub fn load(ui: Ui, name: String, blob: Blob) {
    QUEUE.with(|q| q.borrow_mut().push_back((name, blob)));
    next(ui);
}

fn next(ui: Ui) {
    if BUSY.with(|b| *b.borrow()) {
        return;
    }
    let Some((name, blob)) = QUEUE.with(|q| q.borrow_mut().pop_front()) else {
        return;
    };
    BUSY.with(|b| *b.borrow_mut() = true);
    let started = now();
    ui.progress.set((0.0, blob.size(), name.clone()));
    ui.phase.set(Phase::Loading);
    let finish = move |ui: Ui| {
        BUSY.with(|b| *b.borrow_mut() = false);
        next(ui);
    };
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = match Worker::new_with_options("./worker.js", &options) {
        Ok(w) => w,
        Err(_) => {
            fail(ui, &name, "this browser cannot start the parsing worker");
            finish(ui);
            return;
        }
    };
    let size = blob.size() as u64;
    let w = worker.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let data = ev.data();
        let kind = Reflect::get(&data, &"type".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        match kind.as_str() {
            "progress" => {
                let done = Reflect::get(&data, &"done".into())
                    .ok()
                    .and_then(|v| v.as_f64())
                    .unwrap_or(0.0);
                ui.progress.update(|p| p.0 = done);
            }
            "done" => {
                w.terminate();
                let buffer = Reflect::get(&data, &"model".into()).unwrap_or(JsValue::NULL);
                let array = Uint8Array::new(&buffer);
                let total = array.length() as usize;
                let input = std::io::BufReader::with_capacity(1 << 20, JsBytes { array, at: 0 });
                let decoded = memograph_snapshot::codec::decode_from(input, total);
                match decoded {
                    Ok(snapshot) => opened(ui, name.clone(), size, snapshot, started),
                    Err(e) => fail(ui, &name, &e.to_string()),
                }
                finish(ui);
            }
            "error" => {
                w.terminate();
                let message = Reflect::get(&data, &"message".into())
                    .ok()
                    .and_then(|v| v.as_string())
                    .unwrap_or_default();
                fail(ui, &name, &message);
                finish(ui);
            }
            _ => {}
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let message = js_sys::Object::new();
    let _ = Reflect::set(&message, &"blob".into(), &blob);
    let _ = worker.post_message(&message);
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

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

fn opened(ui: Ui, name: String, bytes: u64, snapshot: memograph_snapshot::Snapshot, started: f64) {
    let devices = snapshot.devices();
    let device = snapshot.default_device().unwrap_or(0);
    let index = store::add(OpenFile {
        name,
        bytes,
        snapshot,
        devices,
        models: Default::default(),
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
    ui.progress.set((0.0, 0.0, format!("downloading {name}")));
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
