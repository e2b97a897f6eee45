//! Loading: how a file gets from the disk (a picked or dropped file, the bundled example, a `?url=`) to
//! an open snapshot with its first model, and the performance work that makes that fast in a browser.
//!
//! ```text
//! page.rs (page thread)                      worker.rs (a Web Worker per file)
//!   Blob.stream() ── Piece ─────────────────►  PushReader.push(piece)
//!      ▲  at most IN_FLIGHT ahead             │
//!      └──────────────────────── Progress ────┤  (complete: the pickle reached STOP)
//!   End ──────────────────────────────────────►  finish → codec::sizes, then codec::encode_into
//!   codec::decode_sliced ◄──── ModelSizes ─────┤  into transferred pieces (8 MiB), each posted
//!     (waits for each piece) ◄─ ModelPiece ×n ─┤  as the next begins; or Error
//!                            ◄─ Done ──────────┘  (the last piece, the timings)
//!   lifetimes, first layout (sliced) → store → Listener::opened; later parts: build.rs
//! ```
//!
//! `page.rs` keeps the queue of files and runs each load; around it, `workers.rs` starts and ends the
//! workers (the spare one ahead of the next file), `pieces.rs` reads a file's pieces, `slices.rs` cuts
//! the page's own work into short tasks, and `files.rs` knows a file by its name, size and time.
//! The messages are [`protocol`]'s enums; `store` keeps the open files outside the reactive graph. This
//! module knows nothing of the page's signals: it reports through a [`Listener`], which the page wires
//! to its state (the arrow runs one way, `web` → `load`).
//!
//! ## Performance on wasm (explained here once; comments elsewhere point here)
//! - **Tier-up.** Browsers run a wasm function on a baseline compiler and switch to optimised code only
//!   when it is next *called* after it has been busy a while: a loop that runs once over a whole file
//!   stays on baseline code throughout. Long loops in the engine therefore run as batches of calls
//!   (`memograph_snapshot::batch`: the pickle machine's opcodes, the codec's columns, lifetimes).
//!   The optimising compile is itself work on a cold load's two cores, and it grows faster than the
//!   function: `wasm-opt` would inline every function with one caller whatever its size (and whatever
//!   Rust's `#[inline(never)]` said), so index.html bounds that to 1000 expressions. The pickle
//!   machine's loop went from 23.6 to 11.9 KB of wasm (its rare opcodes stay apart), the worker's
//!   message handler from 21.7 to 4.1 KB and the snapshot's builder from 20.1 to 9.9 KB; at 185 MB,
//!   cold first timeline medians 842 → 794 ms (long run, 10 loads each) and 956 → 868 ms (tiled, 6
//!   each), warm unchanged (568 / 574 ms).
//! - **SIMD.** The module is built with WebAssembly SIMD: LLVM vectorises the engine's loops over
//!   columns with it (the figures are in `.cargo/config.toml`). index.html checks for it before the
//!   module loads and says what a browser without it needs.
//! - **Rehearsal.** While the user picks a file, the spare worker loads `synth`'s snapshot and the page
//!   decodes it, builds its model (at 25 % detail: what only a big file's first layout runs is
//!   rehearsed too) and draws it on a hidden canvas, twelve times over
//!   (`rehearsal.rs`: one pass left the decoder on baseline code), so the real load runs on
//!   optimised code (a cold load is markedly slower: `scripts/bench_web.mjs` measures both). The
//!   compiled module is shared by the page and every worker, so one rehearsal serves them all. The
//!   page's part calls the very functions a load calls (sliced, with the same pauser): the browser
//!   optimises functions, and a generic one instantiated otherwise is another function. Both parts run
//!   in tasks of their own (the worker's pushes a piece per task) and stop once a file loads (one
//!   chosen as the page opens): on two cores they slowed that file's parse by more than they saved
//!   later, and a file's `Start` waited for the worker's rehearsal to finish. Nor does one begin
//!   before the page has been 300 ms without a file (`workers::REHEARSE_AFTER_MS`): a file chosen as
//!   the page opened found the worker making the rehearsal's pickle, and the browser optimising that
//!   code on the cores its parse needed.
//! - **No late warm-up.** A file chosen before the page rehearsed (as `?url=` does) once had the
//!   page draw a synthetic snapshot of a few kilobytes unseen when the file had been read whole, so
//!   that its first frame did not pay for the browser's first text and drawing code (at 185 MB, cold:
//!   718 → 693 ms then). With the load's other costs gone it cost more than it saved: cold A/B, 8
//!   each, 177 MB median 468 → 448 and 488 → 474 ms (worst 537 → 478, 516 → 487), kk 167 → 151,
//!   193 MB tiled 561 → 562 (worst 647 → 601). Removed.
//! - **No primer.** Nor does the first worker parse anything before its file. Tried: as soon as it was
//!   up, it parsed `synth`'s 3-step pickle (37 KB) 32 times, 4 to a task, a `Start` cutting it short,
//!   so that a file chosen as the page opened would find the parse's code compiled and its optimising
//!   compiles under way. A file chosen so comes 25–120 ms after the worker is up; the primer's first
//!   task took 16–23 ms (the browser compiles each function at its first call), the next ones 2 ms.
//!   Cold A/B on the 177 MB long-run file, 10 and 16 loads each, first timeline (without → with it):
//!   medians 900 → 959 and 965 → 972 ms, means 853 → 870 and 972 → 942: no difference the
//!   benchmark's machine could show.
//! - **Spare worker.** A worker is started ahead of time with the module loaded, so a file never waits
//!   for one to load.
//! - **Heap growth.** Before building something of known size (the worker's snapshot, the page's
//!   decoded model), the heap is grown in one step ([`js::grow_heap`]): thousands of small
//!   `memory.grow` calls cost time and can set off garbage collections.
//! - **Streaming both ways.** The worker posts the model's pieces as it encodes them, and the page
//!   decodes each as it arrives (`codec::Arriving`): encoding and decoding overlap. At 1 GB the model
//!   was decoded 330–370 ms after the worker began to encode it, where the encode and the decode had
//!   taken 500–530 ms one after the other; at 185 MB it made no difference (a cold load's two cores
//!   are busy then: the encode slowed by what the overlap saved).
//! - **Streaming.** Reading (the page's thread, asynchronous) overlaps parsing (the worker); the bytes
//!   in flight are bounded, and reading stops at a plain pickle's `STOP`. Pieces are read from the
//!   file's byte stream into a few buffers that the worker hands back once it has copied them (where a
//!   browser has no such reader, or the page no `memographFill`: slices, each freed as soon as it is
//!   copied). A piece's reads run in JavaScript (index.html's `memographFill`): the browser hands a
//!   file over in reads of 64 KiB, 2 300 for 177 MB, and a future awaited in wasm for each cost the
//!   page's thread more than the read did (warm 177 MB load, A/B of 8 each: first timeline median
//!   384 → 360 ms). Read alone (177 MB, 3 rounds, 8 MiB pieces), the page's byte stream took
//!   186–402 ms; slices' `arrayBuffer()` (345–459), `FileReader` (428–466) and `FileReaderSync` in a
//!   worker (326–439) are slower. The byte stream in a worker was as quick alone (187–204) but is not
//!   tried in a load: there its reads would share a thread with the parse, or need a third one on
//!   the benchmark's two cores.
//! - **Fresh memory is time.** The first write to each page of memory is a page fault (0.3 ms per MiB
//!   on the benchmark's machine): a fresh buffer per piece cost the page's thread about 60 ms of a
//!   177 MB load, and tables that double copy themselves into fresh memory (the engine sizes them from
//!   the file's length instead).
//! - **Heap written ahead.** A parse writes about its file's size of fresh memory in the worker. A
//!   spare worker that waits for a file writes 192 MiB of its heap a step per task
//!   ([`protocol::ToWorker::WarmHeap`]), stopping when a file starts, and the parse's tables land
//!   there: at 185 MB the parse's wait went from about 310 to 255 ms. The first spare does it unasked
//!   (an empty page is there to load a file); later spares when the user reaches for one (the open
//!   button, a drag over the page), so an idle page with files open does not hold it. The page does
//!   the same for its own side while the worker parses: up to 0.4× the file (at most 512 MiB; the
//!   loaded model takes more), freed for the decoding when the model comes (at 185 MB its decode went
//!   from about 50 to 35 ms). Its steps share the page's thread with the reading, and it still pays:
//!   without it (and the model's buffers below), cold A/B on the 177 MB long run, 8 loads each,
//!   twice: the parse and the read no faster, the decode 55 → 86–93 ms, first timeline medians
//!   786 → 791 and 764 → 785 ms.
//! - **Model pieces written ahead.** The worker writes the model's encoding into buffers of its
//!   pieces, which travel to the page (transferred, so never reused). Fresh buffers cost the worker
//!   page faults while the page waits for the model: in a browser test, 24 MB of pieces took 25 ms
//!   into fresh buffers and 9 into written ones. So while the worker parses, the page also writes
//!   buffers of a piece each (up to a quarter of the file, at most 256 MiB) and hands them to the
//!   worker ([`protocol::ToWorker::ModelBuffer`]), which fills those first.
//! - **Pieces copied once.** The worker writes each piece from the browser's buffer straight into the
//!   reader's own (`PushReader::push_from`), not through a buffer of its own first.
//! - **A worker goes once the page is quiet.** Ending a worker frees its file's parse, and while the
//!   browser frees gigabytes whatever the page does that maps memory waits (its heap growing, fresh
//!   pages, a new thread): the worker of a file that opens is ended once the page has been idle for a
//!   second without a break (`workers::retire_when_idle`), its first frames drawn and its categories
//!   built, not while its model is decoded nor at the first idle moment after the first frame (a
//!   timer then waited 477 ms after a 2 GB load).
//!   The next file's spare worker starts after that, not with the views' build: on two cores its
//!   thread and module took CPU from the first frames (on the kk fixture, cold, a task of 70–113 ms
//!   became one under 70). Nor while the old worker's memory is being freed
//!   (`workers::start_spare_when_idle`): a worker starting then waited for it, and the page's thread
//!   with it (after a 945 MB load, a task of 82–150 ms in 6 of 8 loads).
//! - **Memory the machine never used.** On the benchmark's VM, memory no process has used since boot
//!   (or handed back to the host) costs about 2.5 ms per MiB at first touch instead of 0.4: loads of
//!   1–2 GB files reach it, and their figures (a 2 GB file's encode: 0.2–1.7 s) swing with it.

pub mod build;
mod files;
mod js;
mod page;
mod pieces;
pub mod protocol;
mod rehearsal;
mod slices;
pub mod store;
pub mod worker;
mod workers;

pub use files::{
    embedded_field, embedded_files, head_of, modified, named_size, read_steps, same_file,
    shown_instead,
};
pub use js::{after, now, when_idle};
pub use page::{
    cancel_reading, compare, digest_at, fetch, load, load_example, names_in_use, pending, Listener,
    LoadProgress,
};
pub use slices::{next_task, Pauser};
pub use workers::{expect_file, warm_up};

/// Where the largest file a tab can hold ends: the page's wasm memory tops out at 4 GiB and a loaded
/// file takes about 0.8× its size there (the worker needs about 1× in its own).
pub const MAX_FILE_BYTES: f64 = 3.0 * 1024.0 * 1024.0 * 1024.0;
