//! What the hand-drawn renderers (timeline, minimap, state map) draw with: the subset of the canvas 2D
//! API they use, as a trait, so the same code draws on a canvas (the page, PNG export) and into an
//! SVG document ([`super::svg::SvgPen`], SVG export). Coordinates are CSS pixels.

use web_sys::CanvasRenderingContext2d;

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
}
