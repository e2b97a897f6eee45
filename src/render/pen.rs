//! What the hand-drawn renderers (timeline, minimap, state map) draw with: the subset of the canvas 2D
//! API they use, as a trait, so the same code draws on a canvas (the page, PNG export) and into an
//! SVG document ([`super::svg::SvgPen`], SVG export). Coordinates are CSS pixels.

use std::cell::RefCell;

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

use crate::pixels::Pixels;

pub trait Pen {
    fn set_fill_style_str(&self, style: &str);
    fn set_stroke_style_str(&self, style: &str);
    fn set_line_width(&self, width: f64);
    fn set_global_alpha(&self, alpha: f64);
    /// Dash and gap lengths; empty: solid.
    fn set_line_dash(&self, pattern: &[f64]);
    /// A CSS font, `[bold ]SIZEpx FAMILY`.
    fn set_font(&self, font: &str);
    /// `left`, `right` or `center`.
    fn set_text_align(&self, align: &str);
    /// `top`, `middle` or `alphabetic`.
    fn set_text_baseline(&self, baseline: &str);
    fn fill_rect(&self, x: f64, y: f64, w: f64, h: f64);
    fn stroke_rect(&self, x: f64, y: f64, w: f64, h: f64);
    fn fill_text(&self, text: &str, x: f64, y: f64);
    fn begin_path(&self);
    fn move_to(&self, x: f64, y: f64);
    fn line_to(&self, x: f64, y: f64);
    fn rect(&self, x: f64, y: f64, w: f64, h: f64);
    fn close_path(&self);
    fn fill(&self);
    fn stroke(&self);
    /// Intersects the clip with the current path (until `restore`).
    fn clip(&self);
    fn save(&self);
    fn restore(&self);
    /// Composites `pixels` over what is drawn, each on the device pixel it names (not transformed),
    /// within the clip. Asked only of a surface with a `pixel_ratio` (see [`super::Surface`]).
    fn draw_pixels(&self, pixels: &Pixels);
}

impl Pen for CanvasRenderingContext2d {
    fn set_fill_style_str(&self, style: &str) {
        CanvasRenderingContext2d::set_fill_style_str(self, style)
    }
    fn set_stroke_style_str(&self, style: &str) {
        CanvasRenderingContext2d::set_stroke_style_str(self, style)
    }
    fn set_line_width(&self, width: f64) {
        CanvasRenderingContext2d::set_line_width(self, width)
    }
    fn set_global_alpha(&self, alpha: f64) {
        CanvasRenderingContext2d::set_global_alpha(self, alpha)
    }
    fn set_line_dash(&self, pattern: &[f64]) {
        let array: js_sys::Array = pattern
            .iter()
            .map(|&v| wasm_bindgen::JsValue::from(v))
            .collect();
        let _ = CanvasRenderingContext2d::set_line_dash(self, &array);
    }
    fn set_font(&self, font: &str) {
        CanvasRenderingContext2d::set_font(self, font)
    }
    fn set_text_align(&self, align: &str) {
        CanvasRenderingContext2d::set_text_align(self, align)
    }
    fn set_text_baseline(&self, baseline: &str) {
        CanvasRenderingContext2d::set_text_baseline(self, baseline)
    }
    fn fill_rect(&self, x: f64, y: f64, w: f64, h: f64) {
        CanvasRenderingContext2d::fill_rect(self, x, y, w, h)
    }
    fn stroke_rect(&self, x: f64, y: f64, w: f64, h: f64) {
        CanvasRenderingContext2d::stroke_rect(self, x, y, w, h)
    }
    fn fill_text(&self, text: &str, x: f64, y: f64) {
        let _ = CanvasRenderingContext2d::fill_text(self, text, x, y);
    }
    fn begin_path(&self) {
        CanvasRenderingContext2d::begin_path(self)
    }
    fn move_to(&self, x: f64, y: f64) {
        CanvasRenderingContext2d::move_to(self, x, y)
    }
    fn line_to(&self, x: f64, y: f64) {
        CanvasRenderingContext2d::line_to(self, x, y)
    }
    fn rect(&self, x: f64, y: f64, w: f64, h: f64) {
        CanvasRenderingContext2d::rect(self, x, y, w, h)
    }
    fn close_path(&self) {
        CanvasRenderingContext2d::close_path(self)
    }
    fn fill(&self) {
        CanvasRenderingContext2d::fill(self)
    }
    fn stroke(&self) {
        CanvasRenderingContext2d::stroke(self)
    }
    fn clip(&self) {
        CanvasRenderingContext2d::clip(self)
    }
    fn save(&self) {
        CanvasRenderingContext2d::save(self)
    }
    fn restore(&self) {
        CanvasRenderingContext2d::restore(self)
    }
    fn draw_pixels(&self, pixels: &Pixels) {
        if pixels.width == 0 || pixels.height == 0 {
            return;
        }
        // `putImageData` replaces what is under it and ignores the clip: the pixels go onto a canvas
        // of their own, drawn from there.
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            if scratch.is_none() {
                *scratch = scratch_canvas();
            }
            let Some((canvas, ctx)) = scratch.as_ref() else {
                return;
            };
            let (w, h) = (pixels.width as u32, pixels.height as u32);
            if canvas.width() != w || canvas.height() != h {
                canvas.set_width(w);
                canvas.set_height(h);
            }
            // A view of the module's memory, read by `putImageData` before anything else runs.
            let Ok(image) =
                ImageData::new_with_u8_clamped_array_and_sh(Clamped(pixels.bytes()), w, h)
            else {
                return;
            };
            if ctx.put_image_data(&image, 0.0, 0.0).is_err() {
                return;
            }
            self.save();
            let _ = self.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
            let _ = self.draw_image_with_html_canvas_element(
                canvas,
                f64::from(pixels.left),
                f64::from(pixels.top),
            );
            self.restore();
        });
    }
}

thread_local! {
    /// The canvas [`Pen::draw_pixels`] puts pixels on, kept for the next frame.
    static SCRATCH: RefCell<Option<(HtmlCanvasElement, CanvasRenderingContext2d)>> =
        const { RefCell::new(None) };
}

fn scratch_canvas() -> Option<(HtmlCanvasElement, CanvasRenderingContext2d)> {
    let canvas = super::detached_canvas()?;
    let ctx = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    Some((canvas, ctx))
}
