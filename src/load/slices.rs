//! Work on the page's thread in slices of about [`SLICE_MS`], the event loop running between them:
//! decoding a model, building layouts (`build.rs`), the rehearsal.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::js::clock;
use super::protocol::{Arrivals, ModelInput};
use memograph_snapshot::codec::Sizes;

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
