//! Canvas renderers: one per kind of picture. Each takes a view model and a viewport and draws; none
//! holds state or knows about signals.

pub mod charts;
pub mod colors;
pub mod minimap;
pub mod state_map;
pub mod timeline;

use web_sys::CanvasRenderingContext2d;

/// A canvas sized for the device pixel ratio; draw in CSS pixels.
pub struct Surface {
    pub ctx: CanvasRenderingContext2d,
    pub width: f64,
    pub height: f64,
}

impl Surface {
    /// Matches the canvas backing store to its CSS size and the device pixel ratio.
    pub fn of(canvas: &web_sys::HtmlCanvasElement) -> Option<Surface> {
        use wasm_bindgen::JsCast;
        let dpr = web_sys::window()
            .map(|w| w.device_pixel_ratio())
            .unwrap_or(1.0)
            .max(1.0);
        let width = canvas.client_width().max(1) as f64;
        let height = canvas.client_height().max(1) as f64;
        let (bw, bh) = ((width * dpr).round() as u32, (height * dpr).round() as u32);
        if canvas.width() != bw || canvas.height() != bh {
            canvas.set_width(bw);
            canvas.set_height(bh);
        }
        let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
        ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0).ok()?;
        Some(Surface { ctx, width, height })
    }
}

#[cfg(test)]
mod browser_tests;
