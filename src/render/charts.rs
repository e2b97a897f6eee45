//! The analysis panels' charts: `memograph-charts` (the same charts as `memograph report`) drawn by
//! plotters-canvas onto a canvas whose backing store matches its CSS size times the device pixel ratio.

use memograph_charts::{Bars, Result, Theme};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use web_sys::CanvasRenderingContext2d;

use super::svg::SvgBackend;

/// Draws `chart` on `canvas` (its backing store matched to its CSS size times the device pixel ratio);
/// what its bars are, and the device pixel ratio (chart pixels per CSS pixel).
pub fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    dark: bool,
    chart: impl FnOnce(&DrawingArea<Batched, Shift>, &Theme) -> Result<Bars>,
) -> Option<(Bars, f64)> {
    let size = (canvas.client_width(), canvas.client_height());
    draw_sized(canvas, (f64::from(size.0), f64::from(size.1)), dark, chart)
}

/// [`draw`] on a canvas whose CSS size is known already (`width` × `height`, as a `ResizeObserver`
/// told it): the browser is not asked for its layout, which after the page changed it lays out
/// then and there.
pub fn draw_sized(
    canvas: &web_sys::HtmlCanvasElement,
    (width, height): (f64, f64),
    dark: bool,
    chart: impl FnOnce(&DrawingArea<Batched, Shift>, &Theme) -> Result<Bars>,
) -> Option<(Bars, f64)> {
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    let bars = draw_scaled(canvas, width.max(1.0), height.max(1.0), dpr, dark, chart)?;
    Some((bars, dpr))
}

/// Draws `chart` on `canvas` as `width` × `height` CSS pixels at `scale` pixels each.
fn draw_scaled(
    canvas: &web_sys::HtmlCanvasElement,
    width: f64,
    height: f64,
    scale: f64,
    dark: bool,
    chart: impl FnOnce(&DrawingArea<Batched, Shift>, &Theme) -> Result<Bars>,
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
    let root = Batched::new(canvas.clone(), ctx)?.into_drawing_area();
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
    chart: impl FnOnce(&DrawingArea<Batched, Shift>, &Theme) -> Result<Bars>,
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

/// plotters-canvas's backend, with the lines of one colour and width drawn in a row stroked as one
/// path. plotters draws a dashed line as a path per dash, and plotters-canvas strokes each path on its
/// own (its colour made into a string anew): the Compare chart of 300 runs, every other ten of them
/// dashed, was about 300 000 strokes per redraw, 1.5 s of the strokes of a 300-file batch. Only opaque
/// lines are run together (where pieces of one path cross, a translucent colour is laid once, not
/// twice); anything else drawn first strokes what was gathered, as does the end of the drawing.
/// Each path's points that add nothing to its pixels are left out ([`crate::polyline`]): the step
/// curves of 300 runs were 600 000 points, a call from wasm each.
pub struct Batched {
    inner: CanvasBackend,
    ctx: CanvasRenderingContext2d,
    /// The colour and width of the path being gathered, if one is.
    open: Option<((u8, u8, u8), u32)>,
    /// The points gathered, and where each of its pieces (a line or a dash) begins among them.
    points: Vec<BackendCoord>,
    pieces: Vec<usize>,
    /// A piece's points as they are drawn.
    drawn: Vec<BackendCoord>,
}

impl Batched {
    fn new(canvas: web_sys::HtmlCanvasElement, ctx: CanvasRenderingContext2d) -> Option<Batched> {
        Some(Batched {
            inner: CanvasBackend::with_canvas_object(canvas)?,
            ctx,
            open: None,
            points: Vec::new(),
            pieces: Vec::new(),
            drawn: Vec::new(),
        })
    }

    /// Strokes the path gathered, if any.
    fn stroke(&mut self) {
        if self.open.take().is_none() {
            return;
        }
        self.ctx.begin_path();
        for (k, &start) in self.pieces.iter().enumerate() {
            let end = self.pieces.get(k + 1).copied().unwrap_or(self.points.len());
            crate::polyline::simplify(&self.points[start..end], &mut self.drawn);
            let mut drawn = self.drawn.iter();
            if let Some(&(x, y)) = drawn.next() {
                self.ctx.move_to(f64::from(x), f64::from(y));
            }
            for &(x, y) in drawn {
                self.ctx.line_to(f64::from(x), f64::from(y));
            }
        }
        self.ctx.stroke();
        self.points.clear();
        self.pieces.clear();
    }
}

impl Drop for Batched {
    fn drop(&mut self) {
        self.stroke();
    }
}

type CanvasError = <CanvasBackend as DrawingBackend>::ErrorType;
type Drawn = std::result::Result<(), DrawingErrorKind<CanvasError>>;

impl DrawingBackend for Batched {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Drawn {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Drawn {
        self.stroke();
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        self.stroke();
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        self.stroke();
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.stroke();
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        let color = style.color();
        if color.alpha < 1.0 {
            self.stroke();
            return self.inner.draw_path(path, style);
        }
        let mut points = path.into_iter();
        // An empty path draws nothing (plotters-canvas strokes it, empty).
        let Some((x, y)) = points.next() else {
            return Ok(());
        };
        let key = (color.rgb, style.stroke_width());
        if self.open != Some(key) {
            self.stroke();
            let (r, g, b) = color.rgb;
            self.ctx.set_stroke_style_str(&format!("rgb({r},{g},{b})"));
            self.ctx.set_line_width(f64::from(style.stroke_width()));
            self.open = Some(key);
        }
        self.pieces.push(self.points.len());
        self.points.push((x, y));
        self.points.extend(points);
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.stroke();
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn {
        self.stroke();
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Drawn {
        self.stroke();
        self.inner.draw_text(text, style, pos)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> std::result::Result<(u32, u32), DrawingErrorKind<CanvasError>> {
        self.inner.estimate_text_size(text, style)
    }

    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Drawn {
        self.stroke();
        self.inner.blit_bitmap(pos, size, src)
    }
}

/// Draws on `rule`, a canvas laid over `chart`, only a vertical line at backing-store pixel column
/// `at.0` from row `at.1 .0` to `at.1 .1`, `at.2` pixels wide (none: clears it), in colour `css`.
pub fn draw_rule(
    rule: &web_sys::HtmlCanvasElement,
    chart: &web_sys::HtmlCanvasElement,
    at: Option<(f64, (i32, i32), f64)>,
    css: &str,
) {
    use wasm_bindgen::JsCast;
    // The same backing store as the chart's, so its pixels are the chart's.
    if rule.width() != chart.width() || rule.height() != chart.height() {
        rule.set_width(chart.width());
        rule.set_height(chart.height());
    }
    let Some(ctx) = rule
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    ctx.clear_rect(0.0, 0.0, f64::from(rule.width()), f64::from(rule.height()));
    let Some((x, (top, bottom), width)) = at else {
        return;
    };
    let width = width.round().max(1.0);
    // Centred on a pixel (or between two, for an even width): a crisp line.
    let x = x.round() + if width as i64 % 2 == 1 { 0.5 } else { 0.0 };
    ctx.set_stroke_style_str(css);
    ctx.set_line_width(width);
    ctx.begin_path();
    ctx.move_to(x, f64::from(top));
    ctx.line_to(x, f64::from(bottom));
    ctx.stroke();
}
