//! The analysis panels' charts: `memograph-charts` (the same charts as `memograph report`) drawn by
//! plotters-canvas onto a canvas whose backing store matches its CSS size times the device pixel ratio.

use memograph_charts::{Bars, Result, Theme};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

/// The area the chart draws on, its theme and the device pixel ratio (chart pixels per CSS pixel).
pub fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    dark: bool,
    chart: impl FnOnce(&DrawingArea<CanvasBackend, Shift>, &Theme) -> Result<Bars>,
) -> Option<(Bars, f64)> {
    use wasm_bindgen::JsCast;
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    let (w, h) = (canvas.client_width().max(1), canvas.client_height().max(1));
    let (bw, bh) = (
        (f64::from(w) * dpr).round() as u32,
        (f64::from(h) * dpr).round() as u32,
    );
    if canvas.width() != bw || canvas.height() != bh {
        canvas.set_width(bw);
        canvas.set_height(bh);
    }
    // plotters-canvas draws in backing-store pixels: undo any transform another renderer left.
    let ctx: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0).ok()?;
    let theme = if dark { Theme::dark() } else { Theme::light() }.scaled(dpr);
    let root = CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    root.fill(&theme.background).ok()?;
    let bars = chart(&root, &theme).ok()?;
    root.present().ok()?;
    Some((bars, dpr))
}
