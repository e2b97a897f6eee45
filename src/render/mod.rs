//! Canvas renderers: one per kind of picture. Each takes a view model and a viewport and draws; none
//! holds state or knows about signals.

pub mod charts;
pub mod colors;
pub mod minimap;
pub mod pen;
pub mod state_map;
pub mod svg;
pub mod timeline;

use web_sys::CanvasRenderingContext2d;

pub use pen::Pen;

/// Something to draw on, `width` × `height` CSS pixels: a canvas sized for the device pixel ratio, or
/// an SVG document being written.
pub struct Surface<P: Pen = CanvasRenderingContext2d> {
    pub ctx: P,
    pub width: f64,
    pub height: f64,
    /// Device pixels per CSS pixel where a renderer may draw many small shapes as a raster of them
    /// ([`Pen::draw_pixels`]: a canvas); `None`: shapes only (SVG, and tests that compare the two).
    pub pixel_ratio: Option<f64>,
}

/// A canvas that is not in the document (exports, the rehearsal).
pub fn detached_canvas() -> Option<web_sys::HtmlCanvasElement> {
    use wasm_bindgen::JsCast;
    web_sys::window()?
        .document()?
        .create_element("canvas")
        .ok()?
        .dyn_into()
        .ok()
}

impl Surface<svg::SvgPen> {
    pub fn svg(width: f64, height: f64) -> Surface<svg::SvgPen> {
        Surface {
            ctx: svg::SvgPen::new(),
            width,
            height,
            pixel_ratio: None,
        }
    }

    /// The SVG document of what was drawn.
    pub fn finish(self) -> String {
        self.ctx.finish(self.width, self.height)
    }
}

impl Surface {
    /// A canvas of its own (not in the document), `width` × `height` CSS pixels at `scale` pixels
    /// each: what an export draws on.
    pub fn offscreen(
        width: f64,
        height: f64,
        scale: f64,
    ) -> Option<(Surface, web_sys::HtmlCanvasElement)> {
        use wasm_bindgen::JsCast;
        let canvas = detached_canvas()?;
        canvas.set_width((width * scale).round() as u32);
        canvas.set_height((height * scale).round() as u32);
        let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
        ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0).ok()?;
        Some((
            Surface {
                ctx,
                width,
                height,
                pixel_ratio: Some(scale),
            },
            canvas,
        ))
    }

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
        Some(Surface {
            ctx,
            width,
            height,
            pixel_ratio: Some(dpr),
        })
    }
}

#[cfg(test)]
mod browser_tests;
