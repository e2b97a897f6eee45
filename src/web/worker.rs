//! The worker side of loading: runs in a dedicated Web Worker, so parsing a 1 GB file never blocks the
//! page. The page streams the file to it in pieces (see `loader.rs`); each piece is pushed into the
//! engine's [`PushReader`] as it arrives, so reading (on the page's thread) and parsing (here) overlap.
//! At the end it posts back the model encoded by `codec` (a transferred buffer), or the engine's one-line
//! error.
//!
//! Messages in: `{type: "start", size}`, then `{type: "piece", bytes: Uint8Array}`…, then
//! `{type: "end"}`. Messages out: `{type: "progress", done}` after each piece (the page's flow control
//! counts on it), then `{type: "done", model, timings}` or `{type: "error", message}`.
//!
//! Rehearsal: `{type: "rehearse"}` loads a synthetic snapshot ([`memograph_snapshot::synth`]) the same
//! way and answers `{type: "rehearsed", model}`. A browser runs wasm on its baseline compiler until a
//! function has been busy for a while; a spare worker rehearses while the user picks a file, so the
//! real file is parsed by optimised code (a cold load of the 190 MB benchmark file is about a fifth
//! slower).

use std::cell::RefCell;

use js_sys::{Object, Reflect, Uint8Array};
use memograph_snapshot::PushReader;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// One file being read.
struct Job {
    reader: PushReader,
    /// Where each piece is copied into wasm memory before it is pushed (reused).
    scratch: Vec<u8>,
    /// When the first message came, and the milliseconds spent reading pieces (not waiting for them).
    received: f64,
    busy: f64,
}

thread_local! {
    /// `None` before `start` and after an error or the end: later pieces are ignored.
    static JOB: RefCell<Option<Job>> = const { RefCell::new(None) };
}

/// Milliseconds since the page's time origin (comparable across the page and its workers).
pub fn clock() -> f64 {
    let performance: Option<web_sys::Performance> =
        Reflect::get(&js_sys::global(), &"performance".into())
            .ok()
            .and_then(|p| p.dyn_into().ok());
    performance.map_or(0.0, |p| p.time_origin() + p.now())
}

/// A message of the protocol above: `{type: kind}`, fields set by the caller.
pub fn message(kind: &str) -> Object {
    let m = Object::new();
    let _ = Reflect::set(&m, &"type".into(), &kind.into());
    m
}

/// A message's text field (`type`, `message`), if it has one.
pub fn text_field(data: &JsValue, key: &str) -> Option<String> {
    Reflect::get(data, &key.into()).ok()?.as_string()
}

/// A message's number field (`size`, `done`, timings), if it has one.
pub fn number_field(data: &JsValue, key: &str) -> Option<f64> {
    Reflect::get(data, &key.into()).ok()?.as_f64()
}

/// Grows the wasm heap by about `bytes` in one step, for what is about to be built, instead of in
/// thousands of small steps as it is built (each `memory.grow` costs the browser time, and can set off
/// a garbage collection). Reserved and released at once, the space stays with the allocator. Best effort.
pub fn grow_heap(bytes: usize) {
    let mut room: Vec<u8> = Vec::new();
    let _ = room.try_reserve_exact(bytes);
}

fn post(m: &Object) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message(m);
}

fn post_error(reason: &str) {
    let m = message("error");
    let _ = Reflect::set(&m, &"message".into(), &reason.into());
    post(&m);
}

/// Entry point of the worker (called by assets/worker.js).
#[wasm_bindgen]
pub fn worker_main() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let data = ev.data();
        match text_field(&data, "type").unwrap_or_default().as_str() {
            "start" => {
                let size = number_field(&data, "size");
                // Parsing needs about the file's size.
                grow_heap(size.unwrap_or(0.0).min((1u64 << 30) as f64) as usize);
                JOB.with(|job| {
                    *job.borrow_mut() = Some(Job {
                        reader: PushReader::new(size.map(|s| s as u64)),
                        scratch: Vec::new(),
                        received: clock(),
                        busy: 0.0,
                    })
                });
            }
            "piece" => {
                let Some(bytes) = Reflect::get(&data, &"bytes".into())
                    .ok()
                    .and_then(|b| b.dyn_into::<Uint8Array>().ok())
                else {
                    return;
                };
                piece(&bytes);
            }
            "end" => end(),
            "rehearse" => rehearse(),
            _ => {}
        }
    });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
}

/// Pushes one piece and acknowledges it.
fn piece(bytes: &Uint8Array) {
    let outcome = JOB.with(|job| {
        let mut job = job.borrow_mut();
        let j = job.as_mut()?;
        let started = clock();
        j.scratch.resize(bytes.length() as usize, 0);
        bytes.copy_to(&mut j.scratch);
        free(bytes);
        let result = j.reader.push(&j.scratch);
        j.busy += clock() - started;
        let done = j.reader.pushed();
        if result.is_err() {
            *job = None;
        }
        Some(result.map(|()| done))
    });
    match outcome {
        Some(Ok(done)) => {
            let m = message("progress");
            let _ = Reflect::set(&m, &"done".into(), &(done as f64).into());
            post(&m);
        }
        Some(Err(e)) => post_error(&e.to_string()),
        None => {}
    }
}

/// Frees the piece's memory now (`ArrayBuffer.prototype.transfer(0)` detaches it), instead of leaving
/// hundreds of megabytes of pieces to the worker's garbage collector. Best effort: older browsers lack it.
fn free(bytes: &Uint8Array) {
    let buffer = bytes.buffer();
    if let Ok(transfer) = Reflect::get(&buffer, &"transfer".into()) {
        if let Some(transfer) = transfer.dyn_ref::<js_sys::Function>() {
            let _ = transfer.call1(&buffer, &0.into());
        }
    }
}

/// Finishes the snapshot and posts the encoded model with where the time went.
fn end() {
    let Some(job) = JOB.with(|job| job.borrow_mut().take()) else {
        return;
    };
    let started = clock();
    let snapshot = match job.reader.finish() {
        Ok(s) => s,
        Err(e) => return post_error(&e.to_string()),
    };
    let encode_started = clock();
    let bytes = memograph_snapshot::codec::encode(&snapshot);
    // Freed before the copy for the page is made: the worker holds at most two of the three.
    drop(snapshot);
    let m = message("done");
    let model = set_buffer(&m, "model", &bytes);
    drop(bytes);
    set_timings(
        &m,
        &[
            ("received", job.received),
            ("parse", job.busy + encode_started - started),
            ("waited", started - job.received - job.busy),
            ("encode", clock() - encode_started),
            ("posted", clock()),
        ],
    );
    post_with(&m, &[model]);
}

/// Sets `m[key]` to a new `ArrayBuffer` holding `bytes`; returns the buffer, to be transferred.
fn set_buffer(m: &Object, key: &str, bytes: &[u8]) -> JsValue {
    let array = Uint8Array::new_with_length(bytes.len() as u32);
    array.copy_from(bytes);
    let buffer: JsValue = array.buffer().into();
    let _ = Reflect::set(m, &key.into(), &buffer);
    buffer
}

/// Sets `m.timings` (all in ms; `received` and `posted` on the shared clock).
fn set_timings(m: &Object, timings: &[(&str, f64)]) {
    let t = Object::new();
    for &(key, value) in timings {
        let _ = Reflect::set(&t, &key.into(), &value.into());
    }
    let _ = Reflect::set(m, &"timings".into(), &t);
}

/// Posts `m`, transferring `buffers`.
fn post_with(m: &Object, buffers: &[JsValue]) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let transfer: js_sys::Array = buffers.iter().collect();
    let _ = scope.post_message_with_transfer(m, &transfer);
}

/// Steps of [`memograph_snapshot::synth::pickle`] a rehearsal loads: 2.7 MB, 25 000 entries, about as
/// much as it takes the browser to optimise the hot functions (a real 3 MB snapshot does it).
const REHEARSAL_STEPS: usize = 400;

/// Loads a synthetic snapshot as a file is loaded (pushed in pieces, finished, encoded) and posts it.
fn rehearse() {
    let written = memograph_snapshot::synth::pickle(REHEARSAL_STEPS);
    let mut reader = PushReader::new(Some(written.bytes.len() as u64));
    for piece in written.bytes.chunks(1 << 20) {
        if reader.push(piece).is_err() {
            return;
        }
    }
    let Ok(snapshot) = reader.finish() else {
        return;
    };
    let m = message("rehearsed");
    let model = set_buffer(&m, "model", &memograph_snapshot::codec::encode(&snapshot));
    post_with(&m, &[model]);
}
