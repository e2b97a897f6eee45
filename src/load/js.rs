//! The few browser helpers the loading code uses, on the page and in its workers.

use js_sys::Reflect;
use wasm_bindgen::JsCast;

/// Milliseconds since this thread's time origin (`performance.now()`): for durations on one thread.
pub fn now() -> f64 {
    performance().map_or(0.0, |p| p.now())
}

/// Milliseconds on a clock the page and its workers share (`timeOrigin + now()`): for times compared
/// across threads.
pub fn clock() -> f64 {
    performance().map_or(0.0, |p| p.time_origin() + p.now())
}

fn performance() -> Option<web_sys::Performance> {
    Reflect::get(&js_sys::global(), &"performance".into())
        .ok()?
        .dyn_into()
        .ok()
}

/// Grows the wasm heap by about `bytes` in one step, for what is about to be built (see "Heap growth"
/// in the module's header). Reserved and released at once, the space stays with the allocator. Best
/// effort: a failed reservation changes nothing.
pub fn grow_heap(bytes: usize) {
    let mut room: Vec<u8> = Vec::new();
    let _ = room.try_reserve_exact(bytes);
}

/// Calls `f` once the page is idle (`requestIdleCallback`; at most `within` milliseconds on, when
/// given), or in 200 ms where the browser has no idle callbacks.
pub fn when_idle(f: impl FnOnce() + 'static, within: Option<u32>) {
    let Some(window) = web_sys::window() else {
        return f();
    };
    let f = wasm_bindgen::closure::Closure::once_into_js(f);
    let options = js_sys::Object::new();
    if let Some(within) = within {
        let _ = Reflect::set(&options, &"timeout".into(), &within.into());
    }
    let asked = Reflect::get(&window, &"requestIdleCallback".into())
        .ok()
        .and_then(|r| r.dyn_into::<js_sys::Function>().ok())
        .is_some_and(|idle| idle.call2(&window, &f, &options).is_ok());
    if !asked {
        let _ =
            window.set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), 200);
    }
}
