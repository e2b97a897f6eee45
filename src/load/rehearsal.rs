//! The page's part of the rehearsal load (see the module's header): decode the synthetic snapshot the
//! spare worker parsed, build its model and the parts other views use, draw its timeline on a canvas
//! that is never shown, then drop it all.

use wasm_bindgen::JsCast;

use super::js::now;
use crate::render::{colors, minimap, timeline, Surface};
use crate::scale::{Plot, Scale};
use crate::view_model::{allocator_state_at, event_rows, DeviceModel};

/// Runs the page's rehearsal on the model the worker sent.
pub fn rehearse(model: &js_sys::ArrayBuffer) {
    let started = now();
    let Ok(snapshot) = super::page::decode(model) else {
        return;
    };
    let device = snapshot.default_device().unwrap_or(0);
    let model = DeviceModel::new(&snapshot, device);
    let end = model.blocks.layout.x_len as i64 - 1;
    let _ = allocator_state_at(&model, &snapshot, end);
    let _ = event_rows(&model, &snapshot, 0..64);
    if let (Some(plot), Some(map)) = (hidden_surface(1400, 560), hidden_surface(1400, 60)) {
        let t = &model.blocks;
        let view = t.full_view();
        let scale = Scale::new(view, Plot::of(plot.width, plot.height, 0), None);
        let theme = colors::theme(false);
        timeline::draw(&plot, &scale, t, &timeline::Overlay::plain(true), &theme);
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
    let canvas = crate::render::detached_canvas()?;
    canvas.set_width(width);
    canvas.set_height(height);
    let ctx = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    Some(Surface {
        ctx,
        width: width as f64,
        height: height as f64,
    })
}
