//! The analysis panels' charts: `memograph-charts` (the same charts as `memograph report`) drawn by
//! plotters-canvas onto a canvas whose backing store matches its CSS size times the device pixel ratio.

use memograph_charts::{Bars, Result, Theme};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::svg::SvgBackend;

/// Draws `chart` on `canvas` (its backing store matched to its CSS size times the device pixel ratio);
/// what its bars are, and the device pixel ratio (chart pixels per CSS pixel).
pub fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    dark: bool,
    chart: impl FnOnce(&DrawingArea<CanvasBackend, Shift>, &Theme) -> Result<Bars>,
) -> Option<(Bars, f64)> {
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    let (w, h) = (canvas.client_width().max(1), canvas.client_height().max(1));
    let bars = draw_scaled(canvas, f64::from(w), f64::from(h), dpr, dark, chart)?;
    Some((bars, dpr))
}

/// Draws `chart` on `canvas` as `width` × `height` CSS pixels at `scale` pixels each.
fn draw_scaled(
    canvas: &web_sys::HtmlCanvasElement,
    width: f64,
    height: f64,
    scale: f64,
    dark: bool,
    chart: impl FnOnce(&DrawingArea<CanvasBackend, Shift>, &Theme) -> Result<Bars>,
) -> Option<Bars> {
    use wasm_bindgen::JsCast;
    let (bw, bh) = (
        (width * scale).round() as u32,
        (height * scale).round() as u32,
    );
    if canvas.width() != bw || canvas.height() != bh {
        canvas.set_width(bw);
        canvas.set_height(bh);
    }
    // plotters-canvas draws in backing-store pixels: undo any transform another renderer left.
    let ctx: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0).ok()?;
    let theme = if dark { Theme::dark() } else { Theme::light() }.scaled(scale);
    let root = CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    root.fill(&theme.background).ok()?;
    let bars = chart(&root, &theme).ok()?;
    root.present().ok()?;
    Some(bars)
}

/// `chart` on a canvas of its own (not in the document): `width` × `height` CSS pixels at `scale`
/// pixels each (an export).
pub fn offscreen(
    width: f64,
    height: f64,
    scale: f64,
    dark: bool,
    chart: impl FnOnce(&DrawingArea<CanvasBackend, Shift>, &Theme) -> Result<Bars>,
) -> Option<web_sys::HtmlCanvasElement> {
    let canvas = super::detached_canvas()?;
    draw_scaled(&canvas, width, height, scale, dark, chart)?;
    Some(canvas)
}

/// `chart` as an SVG document of `width` × `height` CSS pixels.
pub fn svg(
    width: f64,
    height: f64,
    dark: bool,
    chart: impl FnOnce(&DrawingArea<SvgBackend, Shift>, &Theme) -> Result<Bars>,
) -> Option<String> {
    let theme = if dark { Theme::dark() } else { Theme::light() };
    let (w, h) = (
        width.round().max(1.0) as u32,
        height.round().max(1.0) as u32,
    );
    let body = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
    let root = SvgBackend::new(w, h, body.clone()).into_drawing_area();
    root.fill(&theme.background).ok()?;
    if let Err(e) = chart(&root, &theme) {
        web_sys::console::error_1(&format!("svg chart: {e}").into());
        return None;
    }
    root.present().ok()?;
    drop(root);
    let body = body.borrow();
    Some(SvgBackend::document(w, h, &body))
}
