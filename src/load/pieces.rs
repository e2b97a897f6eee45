//! Where a load's pieces come from: the file's byte stream read into reused buffers, or slices of
//! it where a browser has no byte stream; and how far reading may run ahead of the worker.

use std::cell::{Cell, RefCell};

use js_sys::{ArrayBuffer, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, ReadableStreamByobReader};

/// Bytes handed to the worker and not parsed yet, at most. The browser reads faster than the worker
/// parses: without a bound, a big file would pile up in the worker's queue.
pub(super) const IN_FLIGHT: f64 = 64.0 * 1024.0 * 1024.0;

/// The same from a byte stream, which keeps ahead of the worker with fewer pieces in flight (each is a
/// buffer of its own). Twice as many made no difference: the worker waited 45–100 ms of a 177 MB load
/// for pieces either way (25–33 ms of it for the first), and cold A/B loads (2 × 8 each) did not
/// tell the two apart.
pub(super) const IN_FLIGHT_STREAMED: f64 = 4.0 * PIECE;

/// Bytes handed to the worker at a time. Where the browser reads a file as a byte stream, a piece is
/// filled from it into a buffer the worker hands back once it has copied it: a load then touches
/// [`IN_FLIGHT_STREAMED`] of fresh memory for its pieces, not the file's size (a fresh buffer per
/// piece, read as a `Blob` slice, cost the page's thread 0.3 ms per MiB in page faults on the
/// benchmark's machine).
/// Otherwise each piece is a slice of the file, read whole, the next asked for before the last
/// arrives (each is a round trip to the browser's file reader; 1 MiB at a time held a 177 MB load to
/// 250 MB/s).
pub(super) const PIECE: f64 = 4.0 * 1024.0 * 1024.0;

/// The first piece from a byte stream goes as soon as it holds this much: the browser's first reads
/// are small and slow (filling a whole piece took 12–20 ms at 185 MB, the worker idle meanwhile).
const FIRST_PIECE: u32 = 256 * 1024;

/// Where a load's pieces come from (see [`PIECE`]).
pub(super) enum Pieces {
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
    pub(super) fn of(blob: &Blob) -> Pieces {
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
    pub(super) fn reuses(&self) -> bool {
        matches!(self, Pieces::Stream(..))
    }

    /// The next piece (`None` at the end), filled into a buffer of `spare` when there is one; `made`
    /// counts the buffers made.
    pub(super) async fn next(
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
    pub(super) fn stop(&self) {
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
