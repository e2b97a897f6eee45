//! The few browser helpers both the page and its workers use.

use js_sys::Reflect;
use wasm_bindgen::JsCast;

thread_local! {
    /// This thread's `performance` (the page's or a worker's) and its time origin, looked up once: a
    /// sliced build reads the clock at every pause, thousands of times a load, and looking it up by
    /// name each time (a string made, a property read, a type check) took a sixth of the samples in
    /// profiles of the page's decode (under the profiler, which makes such calls dearer).
    static PERFORMANCE: Option<(web_sys::Performance, f64)> = performance().map(|p| {
        let origin = p.time_origin();
        (p, origin)
    });
}

/// Milliseconds since this thread's time origin (`performance.now()`): for durations on one thread.
pub fn now() -> f64 {
    PERFORMANCE.with(|p| p.as_ref().map_or(0.0, |(p, _)| p.now()))
}

/// Milliseconds on a clock the page and its workers share (`timeOrigin + now()`): for times compared
/// across threads.
pub fn clock() -> f64 {
    PERFORMANCE.with(|p| p.as_ref().map_or(0.0, |(p, origin)| origin + p.now()))
}

fn performance() -> Option<web_sys::Performance> {
    Reflect::get(&js_sys::global(), &"performance".into())
        .ok()?
        .dyn_into()
        .ok()
}

/// Calls `f` once the page is idle (`requestIdleCallback`), at most `within_ms` from now; where the
/// browser has no idle callbacks (Safari), `fallback_ms` from now.
pub fn when_idle(within_ms: u32, fallback_ms: i32, f: impl FnOnce() + 'static) {
    when_idle_with(within_ms, fallback_ms, move |_| f());
}

/// Calls `f` once the page has been idle without a break for `quiet_ms` (idle callbacks, one after
/// another, each with most of an idle period to spare: nothing ran between them), at most `within_ms`
/// from now; where the browser has no idle callbacks (Safari), `fallback_ms` from now.
pub fn when_quiet(quiet_ms: f64, within_ms: f64, fallback_ms: i32, f: impl FnOnce() + 'static) {
    /// An idle period is 50 ms at most; one with this much left had nothing else to run.
    const SPARE_MS: f64 = 40.0;
    struct Wait {
        f: Option<Box<dyn FnOnce()>>,
        until: f64,
        quiet_since: Option<f64>,
    }
    fn ask(wait: std::rc::Rc<std::cell::RefCell<Wait>>, quiet_ms: f64) {
        let until = wait.borrow().until;
        let within = (until - now()).max(1.0);
        let again = wait.clone();
        when_idle_with(within as u32, within as i32, move |spare| {
            let at = now();
            let mut w = again.borrow_mut();
            let quiet_since = match spare {
                Some(ms) if ms >= SPARE_MS => *w.quiet_since.get_or_insert(at),
                _ => {
                    w.quiet_since = None;
                    at
                }
            };
            if at - quiet_since >= quiet_ms || at >= w.until {
                let f = w.f.take();
                drop(w);
                if let Some(f) = f {
                    f();
                }
            } else {
                drop(w);
                ask(again, quiet_ms);
            }
        });
    }
    if idle_callback().is_none() {
        return after(fallback_ms, f);
    }
    let wait = Wait {
        f: Some(Box::new(f)),
        until: now() + within_ms,
        quiet_since: None,
    };
    ask(std::rc::Rc::new(std::cell::RefCell::new(wait)), quiet_ms);
}

/// The page's `requestIdleCallback`, if it has one.
fn idle_callback() -> Option<js_sys::Function> {
    let window = web_sys::window()?;
    Reflect::get(&window, &"requestIdleCallback".into())
        .ok()?
        .dyn_into::<js_sys::Function>()
        .ok()
}

/// Calls `f` once the page is idle, at most `within_ms` from now (where the browser has no idle
/// callbacks, `fallback_ms` from now; with no page, at once), handed the time its idle period had left
/// (`None` when it came because the time ran out, or from a timeout).
fn when_idle_with(within_ms: u32, fallback_ms: i32, f: impl FnOnce(Option<f64>) + 'static) {
    let Some(window) = web_sys::window() else {
        return f(None);
    };
    // A timeout calls it with no argument: `deadline` is undefined then, and has no fields.
    let f = wasm_bindgen::closure::Closure::once_into_js(move |deadline: wasm_bindgen::JsValue| {
        let field = |name: &str| Reflect::get(&deadline, &name.into()).ok();
        let timed_out = field("didTimeout").is_some_and(|v| v.is_truthy());
        let spare = field("timeRemaining")
            .and_then(|t| t.dyn_into::<js_sys::Function>().ok())
            .and_then(|t| t.call0(&deadline).ok())
            .and_then(|v| v.as_f64());
        f(if timed_out { None } else { spare });
    });
    let asked = idle_callback().is_some_and(|idle| {
        let options = js_sys::Object::new();
        let _ = Reflect::set(&options, &"timeout".into(), &within_ms.into());
        idle.call2(&window, &f, &options).is_ok()
    });
    if !asked {
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), fallback_ms);
    }
}

/// Calls `f` once, `ms` milliseconds from now (`setTimeout`; on the page: a worker has no window).
pub fn after(ms: i32, f: impl FnOnce() + 'static) {
    if let Some(window) = web_sys::window() {
        let f = wasm_bindgen::closure::Closure::once_into_js(f);
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), ms);
    }
}

/// Grows the wasm heap by about `bytes` in one step, for what is about to be built (see "Heap growth"
/// in the module's header). Reserved and released at once, the space stays with the allocator. Best
/// effort: a failed reservation changes nothing.
pub fn grow_heap(bytes: usize) {
    let mut room: Vec<u8> = Vec::new();
    let _ = room.try_reserve_exact(bytes);
}

/// Writes `step` more bytes of `heap`'s reserved room (fewer at its end), so that its pages are faulted
/// in now rather than when what is built next lands there; whether room is left.
pub fn write_step(heap: &mut Vec<u8>, step: usize) -> bool {
    let step = step.min(heap.capacity() - heap.len());
    heap.resize(heap.len() + step, 0);
    heap.len() < heap.capacity()
}

/// A promise one task awaits and another resolves: `wait` hands out the future (one waiter at a time),
/// `wake` resolves it, if any task waits.
#[derive(Default)]
pub struct Wakeup(std::cell::RefCell<Option<js_sys::Function>>);

impl Wakeup {
    /// Resolves at the next [`Wakeup::wake`].
    pub fn wait(&self) -> wasm_bindgen_futures::JsFuture {
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::new(&mut |resolve, _| {
            *self.0.borrow_mut() = Some(resolve);
        }))
    }

    pub fn wake(&self) {
        if let Some(resolve) = self.0.borrow_mut().take() {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    }
}
