//! The page's part of the rehearsal load (see `worker.rs` for the worker's part and why): decode the
//! synthetic snapshot the spare worker parsed, build its model whole and draw its timeline on a canvas
//! that is never shown, then drop it all. Each hot path of a real load, on the page's thread, has run
//! once by the time the user has picked a file, and the browser runs the real load on optimised code.

use wasm_bindgen::{JsCast, JsValue};

use crate::render::{colors, minimap, timeline, Surface};
use crate::view_model::DeviceModel;
use crate::viewport::Viewport;

use super::now;

/// Runs the page's rehearsal on the worker's `{type: "rehearsed", model}` message.
pub fn rehearse(data: &JsValue) {
    let started = now();
    let Ok(snapshot) = super::loader::decode(data) else {
        return;
    };
    let device = snapshot.default_device().unwrap_or(0);
    let mut model = DeviceModel::new(&snapshot, device);
    model.complete(&snapshot);
    if let (Some(plot), Some(map)) = (hidden_surface(1400, 560), hidden_surface(1400, 60)) {
        let t = &model.blocks;
        let view = Viewport::full(t.layout.x_len as f64, t.peak.bytes as f64);
        let f = timeline::frame(&plot, view, None, 0);
        let theme = colors::theme(false);
        timeline::draw(&plot, &f, t, &timeline::Overlay::plain(true), &theme);
        minimap::draw(&map, t, view, None, &theme);
    }
    web_sys::console::debug_1(
        &format!(
            "memograph rehearsal: done {:.0} ms after the page started, {:.0} ms of it on the page",
            now(),
            now() - started
        )
        .into(),
    );
}

/// A drawing surface on a canvas that is not in the document.
fn hidden_surface(width: u32, height: u32) -> Option<Surface> {
    let canvas: web_sys::HtmlCanvasElement = web_sys::window()?
        .document()?
        .create_element("canvas")
        .ok()?
        .dyn_into()
        .ok()?;
    canvas.set_width(width);
    canvas.set_height(height);
    let ctx = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    Some(Surface {
        ctx,
        width: width as f64,
        height: height as f64,
    })
}
