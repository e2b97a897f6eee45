//! The worker side of loading: runs in a dedicated Web Worker, so parsing a 1 GB file never blocks the
//! page. Reads the `Blob` in 4 MiB slices with `FileReaderSync` (never the whole file at once), parses it
//! with the engine, and posts back progress, then the model encoded by `codec` (a transferred buffer), or
//! the engine's one-line error.

use std::io::Read;

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, DedicatedWorkerGlobalScope, FileReaderSync, MessageEvent};

const SLICE: f64 = 4.0 * 1024.0 * 1024.0;

/// A `Read` over a `Blob`, one slice at a time, copied from the slice's buffer straight into the
/// caller's (no intermediate copy in wasm memory).
struct BlobReader {
    blob: Blob,
    reader: FileReaderSync,
    at: f64,
    size: f64,
    slice: Option<Uint8Array>,
    pos: u32,
}

impl Read for BlobReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.slice.as_ref().is_none_or(|s| self.pos >= s.length()) {
            if self.at >= self.size {
                return Ok(0);
            }
            let end = (self.at + SLICE).min(self.size);
            let slice = self
                .blob
                .slice_with_f64_and_f64(self.at, end)
                .map_err(js_io)?;
            let array = self.reader.read_as_array_buffer(&slice).map_err(js_io)?;
            self.slice = Some(Uint8Array::new(&array));
            self.pos = 0;
            self.at = end;
        }
        let slice = self.slice.as_ref().expect("loaded above");
        let n = (out.len() as u32).min(slice.length() - self.pos);
        slice
            .subarray(self.pos, self.pos + n)
            .copy_to(&mut out[..n as usize]);
        self.pos += n;
        Ok(n as usize)
    }
}

fn js_io(e: JsValue) -> std::io::Error {
    std::io::Error::other(
        e.as_string()
            .unwrap_or_else(|| "the browser could not read the file".into()),
    )
}

fn message(kind: &str) -> Object {
    let m = Object::new();
    let _ = Reflect::set(&m, &"type".into(), &kind.into());
    m
}

/// Entry point of the worker (called by assets/worker.js).
#[wasm_bindgen]
pub fn worker_main() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let data = ev.data();
        let id = Reflect::get(&data, &"id".into()).unwrap_or(JsValue::NULL);
        let blob: Blob = match Reflect::get(&data, &"blob".into())
            .ok()
            .and_then(|b| b.dyn_into().ok())
        {
            Some(b) => b,
            None => return,
        };
        let post = |m: &Object| {
            let _ = Reflect::set(m, &"id".into(), &id);
            let _ = scope.post_message(m);
        };
        let reader = match FileReaderSync::new() {
            Ok(r) => r,
            Err(_) => {
                let m = message("error");
                let _ = Reflect::set(
                    &m,
                    &"message".into(),
                    &"this browser cannot read files in a worker".into(),
                );
                post(&m);
                return;
            }
        };
        let size = blob.size();
        let source = BlobReader {
            blob,
            reader,
            at: 0.0,
            size,
            slice: None,
            pos: 0,
        };
        let mut last_pct = -1i64;
        let progress_scope = scope.clone();
        let progress_id = id.clone();
        let progress = Box::new(move |done: u64| {
            let pct = (done as f64 * 100.0 / size.max(1.0)) as i64;
            if pct != last_pct {
                last_pct = pct;
                let m = message("progress");
                let _ = Reflect::set(&m, &"done".into(), &(done as f64).into());
                let _ = Reflect::set(&m, &"total".into(), &size.into());
                let _ = Reflect::set(&m, &"id".into(), &progress_id);
                let _ = progress_scope.post_message(&m);
            }
        });
        match memograph_snapshot::read_snapshot(source, Some(size as u64), Some(progress)) {
            Ok(snapshot) => {
                let bytes = memograph_snapshot::codec::encode(&snapshot);
                drop(snapshot);
                let array = Uint8Array::new_with_length(bytes.len() as u32);
                array.copy_from(&bytes);
                drop(bytes);
                let m = message("done");
                let _ = Reflect::set(&m, &"model".into(), &array.buffer());
                let _ = Reflect::set(&m, &"id".into(), &id);
                let transfer = js_sys::Array::of1(&array.buffer());
                let _ = scope.post_message_with_transfer(&m, &transfer);
            }
            Err(e) => {
                let m = message("error");
                let _ = Reflect::set(&m, &"message".into(), &e.to_string().into());
                post(&m);
            }
        }
    });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
}
