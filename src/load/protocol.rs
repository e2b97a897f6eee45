//! The page ↔ worker protocol: one enum of messages each way and one timings struct, each with a single
//! conversion to and from the JS objects `postMessage` carries. Nothing else in the code spells a
//! message's type or field names.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{ArrayBuffer, Object, Reflect, Uint8Array};

use super::js::Wakeup;
use wasm_bindgen::{JsCast, JsValue};

/// What the page asks of a worker.
pub enum ToWorker {
    /// A file of `size` bytes (when known) begins; `digest`: answer with its comparison digests
    /// ([`FromWorker::Digests`]) instead of the whole snapshot, every device's at its peak, or with
    /// `at` (device, entry) that device's alone, with its live set at that entry.
    Start {
        size: Option<f64>,
        digest: bool,
        at: Option<(i64, i64)>,
    },
    /// Its next piece (the buffer is transferred); `give_back`: the page reuses its buffers, so the
    /// worker returns it with the piece's [`FromWorker::Progress`] instead of freeing it.
    Piece { bytes: Uint8Array, give_back: bool },
    /// The file ended (or the page stopped reading because the worker wanted no more).
    End,
    /// Load the synthetic snapshot, to warm the code up (see the module's header in `load`).
    Rehearse,
    /// Write about `bytes` of fresh heap ahead of the next file, a step at a time while idle ("Fresh
    /// memory is time" in the module's header in `load`).
    WarmHeap { bytes: f64 },
    /// A buffer of [`Encoded::PIECE`] bytes the page has already written (transferred), for the
    /// worker to write the model's pieces into: memory the worker first writes costs it page faults
    /// while the page waits for the model ("Model pieces written ahead" in the module's header in
    /// `load`).
    ModelBuffer { buffer: ArrayBuffer },
}

/// What a worker answers.
pub enum FromWorker {
    /// Bytes pushed so far, after each piece (the page's flow control counts on it); `complete` once
    /// no more bytes can change the outcome (a plain pickle's `STOP`); `buffer`: the piece's buffer,
    /// when the page asked for it back (transferred).
    Progress {
        done: f64,
        complete: bool,
        buffer: Option<ArrayBuffer>,
    },
    /// The snapshot's encoding begins: its sizes (the engine's `codec::Sizes`), so the page can
    /// decode its pieces as they arrive.
    ModelSizes { total: f64, head: f64 },
    /// The encoding's next piece (transferred), posted as soon as the next one begins.
    ModelPiece { bytes: Uint8Array },
    /// The encoding's last pieces (transferred), and where the worker's time went.
    Done {
        model: Encoded,
        timings: WorkerTimings,
    },
    /// The engine's one-line error.
    Error { message: String },
    /// What a comparison keeps of the file: one `compare::Digest` per device, as JSON.
    Digests { json: String },
    /// The rehearsal's snapshot, encoded.
    Rehearsed { model: Encoded },
}

/// A snapshot encoded by the engine's codec, as it travels from a worker: pieces of at most
/// [`Encoded::PIECE`] bytes, each a view on a buffer of its own. Written as the codec hands its chunks
/// on, it needs no pass to learn its length first, nor one buffer as large as the encoding (650 MB for
/// a 2 GB file).
#[derive(Clone)]
pub struct Encoded(js_sys::Array);

impl Encoded {
    /// The most bytes in one piece.
    pub const PIECE: usize = 8 << 20;

    /// Gathers what `write` hands on (in chunks of any size) into pieces.
    pub fn gather(write: impl FnOnce(&mut dyn FnMut(&[u8]))) -> Encoded {
        Self::stream(write, |_| false, &mut Vec::new())
    }

    /// [`Encoded::gather`], handing each full piece to `send` as soon as the next one begins (the last
    /// is never sent); what `send` does not take (it returns false) is kept and returned. Pieces are
    /// written into the buffers of `written_ahead` ([`ToWorker::ModelBuffer`]) while it has any of
    /// [`Self::PIECE`] bytes, then into fresh ones.
    pub fn stream(
        write: impl FnOnce(&mut dyn FnMut(&[u8])),
        mut send: impl FnMut(&Uint8Array) -> bool,
        written_ahead: &mut Vec<ArrayBuffer>,
    ) -> Encoded {
        let mut kept: Vec<Uint8Array> = Vec::new();
        let mut open: Option<(Uint8Array, usize)> = None;
        let mut buffer = || {
            while let Some(buffer) = written_ahead.pop() {
                if buffer.byte_length() as usize == Self::PIECE {
                    return Uint8Array::new(&buffer);
                }
            }
            Uint8Array::new_with_length(Self::PIECE as u32)
        };
        write(&mut |mut chunk: &[u8]| {
            while !chunk.is_empty() {
                let (piece, at) = open.get_or_insert_with(|| {
                    kept.retain(|full| !send(full));
                    (buffer(), 0)
                });
                let n = chunk.len().min(Self::PIECE - *at);
                piece
                    .subarray(*at as u32, (*at + n) as u32)
                    .copy_from(&chunk[..n]);
                *at += n;
                chunk = &chunk[n..];
                if *at == Self::PIECE {
                    kept.push(piece.clone());
                    open = None;
                }
            }
        });
        let pieces: js_sys::Array = kept.iter().collect();
        if let Some((piece, at)) = open {
            pieces.push(&piece.subarray(0, at as u32));
        }
        Encoded(pieces)
    }

    fn pieces(&self) -> impl Iterator<Item = Uint8Array> + '_ {
        self.0.iter().map(|p| p.unchecked_into())
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.pieces().map(|p| p.length() as usize).sum()
    }

    fn put(&self, m: &Object, transfer: &js_sys::Array) {
        set(m, "model", &self.0);
        for p in self.pieces() {
            transfer.push(&p.buffer());
        }
    }

    fn from_js(data: &JsValue) -> Option<Encoded> {
        let pieces: js_sys::Array = get(data, "model").dyn_into().ok()?;
        pieces
            .iter()
            .all(|p| p.is_instance_of::<Uint8Array>())
            .then_some(Encoded(pieces))
    }
}

/// A worker's encoding as its pieces arrive, read in order by [`ModelInput`]. A piece is let go once
/// it is read.
#[derive(Default)]
pub struct Arrivals {
    pieces: RefCell<VecDeque<Uint8Array>>,
    /// Bytes arrived so far, read or not.
    arrived: Cell<usize>,
    /// No more will arrive: the encoding is whole, or the load ended.
    ended: Cell<bool>,
    /// Wakes a reader waiting for more.
    wake: Wakeup,
}

impl Arrivals {
    /// An encoding that is all there (the rehearsal's).
    pub fn whole(model: &Encoded) -> Rc<Arrivals> {
        let arrivals = Rc::new(Arrivals::default());
        arrivals.add(model);
        arrivals.end();
        arrivals
    }

    pub fn add_piece(&self, piece: Uint8Array) {
        self.arrived
            .set(self.arrived.get() + piece.length() as usize);
        self.pieces.borrow_mut().push_back(piece);
        self.wake.wake();
    }

    pub fn add(&self, model: &Encoded) {
        model.pieces().for_each(|p| self.add_piece(p));
    }

    /// No more will arrive.
    pub fn end(&self) {
        self.ended.set(true);
        self.wake.wake();
    }
}

/// Reads [`Arrivals`] from the start, copying out of its pieces: what has arrived (`std::io::Read`,
/// buffered [`ModelInput::BUFFER`] at a time: the decoder reads many small fields), and waits for
/// the rest (`codec::Arriving`).
pub struct ModelInput {
    buffered: std::io::BufReader<PieceReader>,
    arrivals: Rc<Arrivals>,
}

impl ModelInput {
    /// Bytes buffered for the small fields. Smaller than the decoder's slice of a column (128–256
    /// KiB), so that a column's slice is copied out of the pieces straight into the decoder's buffer,
    /// not through this one as well (a copy less of the whole trace; with a MiB here, a 185 MB file's
    /// decode took a median 64 ms of a cold load, 50 ms without, A/B over 10 loads each).
    const BUFFER: usize = 64 << 10;

    pub fn new(arrivals: Rc<Arrivals>) -> ModelInput {
        ModelInput {
            buffered: std::io::BufReader::with_capacity(
                Self::BUFFER,
                PieceReader {
                    arrivals: arrivals.clone(),
                    at: 0,
                },
            ),
            arrivals,
        }
    }
}

impl std::io::Read for ModelInput {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.buffered.read(out)
    }
}

impl memograph_snapshot::codec::Arriving for ModelInput {
    async fn until(&mut self, upto: usize) -> bool {
        loop {
            if self.arrivals.arrived.get() >= upto {
                return true;
            }
            if self.arrivals.ended.get() {
                return false;
            }
            let _ = self.arrivals.wake.wait().await;
        }
    }
}

/// The pieces of [`Arrivals`] that have arrived, read in order; `at` is into the first.
struct PieceReader {
    arrivals: Rc<Arrivals>,
    at: u32,
}

impl std::io::Read for PieceReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let mut pieces = self.arrivals.pieces.borrow_mut();
        while let Some(piece) = pieces.front() {
            let n = (out.len() as u32).min(piece.length() - self.at);
            if n == 0 && !out.is_empty() {
                pieces.pop_front();
                self.at = 0;
                continue;
            }
            piece
                .subarray(self.at, self.at + n)
                .copy_to(&mut out[..n as usize]);
            self.at += n;
            return Ok(n as usize);
        }
        Ok(0)
    }
}

/// Where a worker's time went, in milliseconds; `received` and `posted` are on the shared clock
/// ([`super::js::clock`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerTimings {
    /// When the `Start` message came.
    pub received: f64,
    /// Pushing pieces and finishing the snapshot.
    pub parse: f64,
    /// Of `parse`: finishing (the snapshot's skeleton checked and built into the model).
    pub finish: f64,
    /// Waiting for pieces.
    pub waited: f64,
    pub encode: f64,
    /// Of the model's pieces, those written into buffers the page wrote ahead (a count).
    pub pieces_ahead: f64,
    /// When the answer was posted.
    pub posted: f64,
}

fn set(m: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(m, &key.into(), value);
}

fn get(data: &JsValue, key: &str) -> JsValue {
    Reflect::get(data, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn number(data: &JsValue, key: &str) -> Option<f64> {
    get(data, key).as_f64()
}

fn message(kind: &str) -> Object {
    let m = Object::new();
    set(&m, "type", &kind.into());
    m
}

impl ToWorker {
    /// The message and the buffers to transfer with it.
    pub fn to_js(&self) -> (Object, js_sys::Array) {
        let transfer = js_sys::Array::new();
        let m = match self {
            ToWorker::Start { size, digest, at } => {
                let m = message("start");
                if let Some(size) = size {
                    set(&m, "size", &(*size).into());
                }
                set(&m, "digest", &(*digest).into());
                if let Some((device, entry)) = at {
                    set(&m, "at_device", &(*device as f64).into());
                    set(&m, "at_entry", &(*entry as f64).into());
                }
                m
            }
            ToWorker::Piece { bytes, give_back } => {
                let m = message("piece");
                set(&m, "bytes", bytes);
                set(&m, "give_back", &(*give_back).into());
                transfer.push(&bytes.buffer());
                m
            }
            ToWorker::End => message("end"),
            ToWorker::Rehearse => message("rehearse"),
            ToWorker::WarmHeap { bytes } => {
                let m = message("warm_heap");
                set(&m, "bytes", &(*bytes).into());
                m
            }
            ToWorker::ModelBuffer { buffer } => {
                let m = message("model_buffer");
                set(&m, "buffer", buffer);
                transfer.push(buffer);
                m
            }
        };
        (m, transfer)
    }

    pub fn from_js(data: &JsValue) -> Option<ToWorker> {
        Some(match get(data, "type").as_string()?.as_str() {
            "start" => ToWorker::Start {
                size: number(data, "size"),
                digest: get(data, "digest").as_bool().unwrap_or(false),
                at: number(data, "at_device")
                    .zip(number(data, "at_entry"))
                    .map(|(d, e)| (d as i64, e as i64)),
            },
            "piece" => ToWorker::Piece {
                bytes: get(data, "bytes").dyn_into().ok()?,
                give_back: get(data, "give_back").as_bool().unwrap_or(false),
            },
            "end" => ToWorker::End,
            "rehearse" => ToWorker::Rehearse,
            "warm_heap" => ToWorker::WarmHeap {
                bytes: number(data, "bytes")?,
            },
            "model_buffer" => ToWorker::ModelBuffer {
                buffer: get(data, "buffer").dyn_into().ok()?,
            },
            _ => return None,
        })
    }
}

impl FromWorker {
    /// The message and the buffers to transfer with it.
    pub fn to_js(&self) -> (Object, js_sys::Array) {
        let transfer = js_sys::Array::new();
        let m = match self {
            FromWorker::Progress {
                done,
                complete,
                buffer,
            } => {
                let m = message("progress");
                set(&m, "done", &(*done).into());
                set(&m, "complete", &(*complete).into());
                if let Some(buffer) = buffer {
                    set(&m, "buffer", buffer);
                    transfer.push(buffer);
                }
                m
            }
            FromWorker::ModelSizes { total, head } => {
                let m = message("model_sizes");
                set(&m, "total", &(*total).into());
                set(&m, "head", &(*head).into());
                m
            }
            FromWorker::ModelPiece { bytes } => {
                let m = message("model_piece");
                set(&m, "bytes", bytes);
                transfer.push(&bytes.buffer());
                m
            }
            FromWorker::Done { model, timings } => {
                let m = message("done");
                model.put(&m, &transfer);
                set(&m, "timings", &timings.to_js());
                m
            }
            FromWorker::Error { message: text } => {
                let m = message("error");
                set(&m, "message", &text.into());
                m
            }
            FromWorker::Digests { json } => {
                let m = message("digests");
                set(&m, "json", &json.into());
                m
            }
            FromWorker::Rehearsed { model } => {
                let m = message("rehearsed");
                model.put(&m, &transfer);
                m
            }
        };
        (m, transfer)
    }

    pub fn from_js(data: &JsValue) -> Option<FromWorker> {
        Some(match get(data, "type").as_string()?.as_str() {
            "progress" => FromWorker::Progress {
                done: number(data, "done")?,
                complete: get(data, "complete").as_bool().unwrap_or(false),
                buffer: get(data, "buffer").dyn_into().ok(),
            },
            "model_sizes" => FromWorker::ModelSizes {
                total: number(data, "total")?,
                head: number(data, "head")?,
            },
            "model_piece" => FromWorker::ModelPiece {
                bytes: get(data, "bytes").dyn_into().ok()?,
            },
            "done" => FromWorker::Done {
                model: Encoded::from_js(data)?,
                timings: WorkerTimings::from_js(&get(data, "timings")),
            },
            "error" => FromWorker::Error {
                message: get(data, "message").as_string().unwrap_or_default(),
            },
            "digests" => FromWorker::Digests {
                json: get(data, "json").as_string()?,
            },
            "rehearsed" => FromWorker::Rehearsed {
                model: Encoded::from_js(data)?,
            },
            _ => return None,
        })
    }
}

impl WorkerTimings {
    const FIELDS: [&'static str; 7] = [
        "received",
        "parse",
        "finish",
        "waited",
        "encode",
        "pieces_ahead",
        "posted",
    ];

    fn values(&self) -> [f64; 7] {
        [
            self.received,
            self.parse,
            self.finish,
            self.waited,
            self.encode,
            self.pieces_ahead,
            self.posted,
        ]
    }

    fn to_js(self) -> Object {
        let t = Object::new();
        for (key, value) in Self::FIELDS.iter().zip(self.values()) {
            set(&t, key, &value.into());
        }
        t
    }

    fn from_js(t: &JsValue) -> WorkerTimings {
        let at = |key: &str| number(t, key).unwrap_or(0.0);
        WorkerTimings {
            received: at("received"),
            parse: at("parse"),
            finish: at("finish"),
            waited: at("waited"),
            encode: at("encode"),
            pieces_ahead: at("pieces_ahead"),
            posted: at("posted"),
        }
    }
}

/// Where one load's time went, in milliseconds: what `#app[data-load-timings]` says (JSON) and the
/// console logs, for the page benchmark and anyone curious.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadTimings {
    /// From the load's start to the worker's receiving the `Start` message.
    pub worker_start: f64,
    /// Until the last piece was handed over.
    pub read: f64,
    pub parse: f64,
    /// Of `parse`: the worker's finishing the snapshot.
    pub finish: f64,
    pub worker_waited: f64,
    pub encode: f64,
    /// From the worker's posting its last piece to the page's receiving it.
    pub transfer: f64,
    /// From the encoding's sizes coming to its decode's end (it overlaps the worker's encode).
    pub decode: f64,
    /// The first device's lifetimes; `model` is its whole model, lifetimes included.
    pub lifetimes: f64,
    pub model: f64,
    /// From the load's start until the file was open.
    pub opened_at: f64,
    /// Buffers the page made for the file's pieces (not a time): a few where pieces are read into
    /// buffers the worker hands back, one per piece otherwise.
    pub buffers: f64,
    /// The model's pieces the worker wrote into buffers the page wrote ahead, and all its pieces
    /// (counts).
    pub pieces_ahead: f64,
    pub pieces: f64,
}

impl LoadTimings {
    pub fn to_json(self) -> String {
        let parts = [
            ("worker_start", self.worker_start),
            ("read", self.read),
            ("parse", self.parse),
            ("finish", self.finish),
            ("worker_waited", self.worker_waited),
            ("encode", self.encode),
            ("transfer", self.transfer),
            ("decode", self.decode),
            ("lifetimes", self.lifetimes),
            ("model", self.model),
            ("opened_at", self.opened_at),
            ("buffers", self.buffers),
            ("pieces_ahead", self.pieces_ahead),
            ("pieces", self.pieces),
        ];
        let body = parts
            .iter()
            .map(|(k, v)| format!("\"{k}\":{v:.0}"))
            .collect::<Vec<_>>()
            .join(",");
        format!("{{{body}}}")
    }
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;

    use std::rc::Rc;

    use js_sys::Uint8Array;

    use super::{Arrivals, Encoded, FromWorker, ModelInput, ToWorker, WorkerTimings};

    wasm_bindgen_test_configure!(run_in_browser);

    fn round_trip(message: ToWorker) -> ToWorker {
        ToWorker::from_js(&message.to_js().0).expect("a message the worker reads")
    }

    #[wasm_bindgen_test]
    fn the_worker_reads_what_the_page_asks() {
        match round_trip(ToWorker::WarmHeap { bytes: 3.0e8 }) {
            ToWorker::WarmHeap { bytes } => assert_eq!(bytes, 3.0e8),
            _ => panic!("not a WarmHeap"),
        }
        match round_trip(ToWorker::Start {
            size: Some(5.0e9),
            digest: true,
            at: Some((1, 42)),
        }) {
            ToWorker::Start { size, digest, at } => {
                assert_eq!((size, digest, at), (Some(5.0e9), true, Some((1, 42))))
            }
            _ => panic!("not a Start"),
        }
        assert!(matches!(round_trip(ToWorker::Rehearse), ToWorker::Rehearse));
        let buffer = ToWorker::ModelBuffer {
            buffer: js_sys::ArrayBuffer::new(16),
        };
        assert_eq!(buffer.to_js().1.length(), 1, "the buffer is transferred");
        match round_trip(buffer) {
            ToWorker::ModelBuffer { buffer } => assert_eq!(buffer.byte_length(), 16),
            _ => panic!("not a ModelBuffer"),
        }
        assert!(matches!(round_trip(ToWorker::End), ToWorker::End));
    }

    /// Everything `model` reads, in steps of `step` bytes.
    fn read_all(model: Rc<Arrivals>, step: usize) -> Vec<u8> {
        let (mut input, mut buf, mut out) = (ModelInput::new(model), vec![0u8; step], Vec::new());
        loop {
            match std::io::Read::read(&mut input, &mut buf).unwrap() {
                0 => break out,
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    }

    #[wasm_bindgen_test]
    fn an_encoding_travels_in_pieces_and_reads_back_whole() {
        for len in [2 * Encoded::PIECE + 12345, 2 * Encoded::PIECE] {
            let bytes: Vec<u8> = (0..len).map(|k| (k * 31 % 251) as u8).collect();
            // Chunks that do not divide a piece: some are split between two. A piece is sent once
            // the next begins, so the last is never sent: it goes with `Done`.
            let mut sent = Vec::new();
            // One piece goes into a buffer written ahead, the rest into fresh ones; a buffer of
            // another size is passed over.
            let mut ahead = vec![
                js_sys::ArrayBuffer::new(Encoded::PIECE as u32),
                js_sys::ArrayBuffer::new(7),
            ];
            let rest = Encoded::stream(
                |sink| bytes.chunks(1_000_003).for_each(sink),
                |piece| {
                    sent.push(piece.clone());
                    true
                },
                &mut ahead,
            );
            assert!(ahead.is_empty());
            let pieces = len.div_ceil(Encoded::PIECE) as u32;
            assert_eq!(
                (sent.len() as u32, rest.0.length()),
                (pieces - 1, 1),
                "{len}"
            );
            assert_eq!(Encoded::gather(|sink| sink(&bytes)).0.length(), pieces);
            let done = FromWorker::Done {
                model: rest,
                timings: WorkerTimings::default(),
            };
            let (m, transfer) = done.to_js();
            assert_eq!(transfer.length(), 1);
            let Some(FromWorker::Done { model, .. }) = FromWorker::from_js(&m) else {
                panic!("not a Done");
            };
            let sent: Vec<Uint8Array> = sent
                .into_iter()
                .map(|piece| {
                    let (m, _) = FromWorker::ModelPiece { bytes: piece }.to_js();
                    match FromWorker::from_js(&m) {
                        Some(FromWorker::ModelPiece { bytes }) => bytes,
                        _ => panic!("not a ModelPiece"),
                    }
                })
                .collect();
            // Read whole, and in small steps across the pieces' ends.
            for step in [4 << 20, 7] {
                let arrivals = Rc::new(Arrivals::default());
                sent.iter()
                    .for_each(|piece| arrivals.add_piece(piece.clone()));
                arrivals.add(&model);
                arrivals.end();
                assert!(read_all(arrivals, step) == bytes, "{len}, steps of {step}");
            }
        }
        let empty = Encoded::gather(|_| {});
        assert_eq!(empty.len(), 0);
        assert!(read_all(Arrivals::whole(&empty), 7).is_empty());
    }

    #[wasm_bindgen_test]
    async fn a_model_decodes_as_its_pieces_arrive() {
        use memograph_snapshot::codec;
        let s =
            memograph_snapshot::read_bytes(&memograph_snapshot::synth::pickle(60).bytes).unwrap();
        let bytes = codec::encode(&s);
        let sizes = codec::sizes(&s);
        // Small pieces, one a task, the decode started before the first.
        let arrivals = Rc::new(Arrivals::default());
        let feeder = arrivals.clone();
        let pieces: Vec<Uint8Array> = bytes.chunks(4099).map(Uint8Array::from).collect();
        let count = pieces.len();
        wasm_bindgen_futures::spawn_local(async move {
            for piece in pieces {
                crate::load::next_task().await;
                feeder.add_piece(piece);
            }
            feeder.end();
        });
        let mut pause = memograph_snapshot::batch::NoPause;
        let decoded = codec::decode_sliced(ModelInput::new(arrivals), sizes, &mut pause)
            .await
            .unwrap();
        assert!(count > 10, "{count} pieces");
        assert_eq!(codec::encode(&decoded), bytes);
        // Pieces that stop coming end in an error, not a wait for ever.
        let arrivals = Rc::new(Arrivals::default());
        arrivals.add_piece(Uint8Array::from(&bytes[..bytes.len() / 2]));
        let feeder = arrivals.clone();
        wasm_bindgen_futures::spawn_local(async move {
            crate::load::next_task().await;
            feeder.end();
        });
        let cut = codec::decode_sliced(ModelInput::new(arrivals), sizes, &mut pause).await;
        assert!(cut.unwrap_err().to_string().contains("ends early"));
    }
}
