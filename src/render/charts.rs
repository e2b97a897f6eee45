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
    draw_sized(
        canvas,
        (f64::from(size.0), f64::from(size.1)),
        dark,
        None,
        chart,
    )
}

/// [`draw`] on a canvas whose CSS size is known already (`width` × `height`, as a `ResizeObserver`
/// told it): the browser is not asked for its layout, which after the page changed it lays out
/// then and there.
pub fn draw_sized(
    canvas: &web_sys::HtmlCanvasElement,
    (width, height): (f64, f64),
    dark: bool,
    paths: Option<&PathCache>,
    chart: impl FnOnce(&DrawingArea<Batched, Shift>, &Theme) -> Result<Bars>,
) -> Option<(Bars, f64)> {
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    let bars = draw_scaled(
        canvas,
        (width.max(1.0), height.max(1.0), dpr),
        dark,
        paths,
        chart,
    )?;
    Some((bars, dpr))
}

/// Draws `chart` on `canvas` as `width` × `height` CSS pixels at `scale` pixels each, its lines
/// stroked from `paths` where it drew them before.
fn draw_scaled(
    canvas: &web_sys::HtmlCanvasElement,
    (width, height, scale): (f64, f64, f64),
    dark: bool,
    paths: Option<&PathCache>,
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
    let root = Batched::new(canvas.clone(), ctx, paths.cloned())?.into_drawing_area();
    root.fill(&theme.background).ok()?;
    let bars = chart(&root, &theme);
    root.present().ok()?;
    drop(root);
    if let Some(paths) = paths {
        paths.sweep();
    }
    bars.ok()
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
    draw_scaled(&canvas, (width, height, scale), dark, None, chart)?;
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
/// curves of 300 runs were 600 000 points, a call from wasm each. With a [`PathCache`], a path drawn
/// at the last drawing is stroked as it was made then.
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
    paths: Option<PathCache>,
}

impl Batched {
    fn new(
        canvas: web_sys::HtmlCanvasElement,
        ctx: CanvasRenderingContext2d,
        paths: Option<PathCache>,
    ) -> Option<Batched> {
        Some(Batched {
            inner: CanvasBackend::with_canvas_object(canvas)?,
            ctx,
            open: None,
            points: Vec::new(),
            pieces: Vec::new(),
            drawn: Vec::new(),
            paths,
        })
    }

    /// Strokes the path gathered, if any.
    fn stroke(&mut self) {
        let Some((rgb, width)) = self.open.take() else {
            return;
        };
        let Some(paths) = self.paths.clone() else {
            let ctx = self.ctx.clone();
            ctx.begin_path();
            self.trace(|x, y, first| {
                if first {
                    ctx.move_to(x, y)
                } else {
                    ctx.line_to(x, y)
                }
            });
            ctx.stroke();
            self.points.clear();
            self.pieces.clear();
            return;
        };
        let key = PathKey {
            rgb,
            width,
            pieces: std::mem::take(&mut self.pieces),
            points: std::mem::take(&mut self.points),
        };
        let mut cache = paths.0.borrow_mut();
        let drawing = cache.drawing;
        if let Some((path, used)) = cache.paths.get_mut(&key) {
            *used = drawing;
            self.ctx.stroke_with_path(path);
            // The gathered points' room, for the next path.
            (self.pieces, self.points) = (key.pieces, key.points);
            self.points.clear();
            self.pieces.clear();
            return;
        }
        let Ok(path) = web_sys::Path2d::new() else {
            return;
        };
        (self.pieces, self.points) = (key.pieces, key.points);
        self.trace(|x, y, first| {
            if first {
                path.move_to(x, y)
            } else {
                path.line_to(x, y)
            }
        });
        self.ctx.stroke_with_path(&path);
        let key = PathKey {
            rgb,
            width,
            pieces: std::mem::take(&mut self.pieces),
            points: std::mem::take(&mut self.points),
        };
        cache.paths.insert(key, (path, drawing));
    }

    /// Hands `to` the points of the path gathered that its pixels need, piece by piece, each with
    /// whether it begins its piece.
    fn trace(&mut self, mut to: impl FnMut(f64, f64, bool)) {
        for (k, &start) in self.pieces.iter().enumerate() {
            let end = self.pieces.get(k + 1).copied().unwrap_or(self.points.len());
            crate::polyline::simplify(&self.points[start..end], &mut self.drawn);
            for (n, &(x, y)) in self.drawn.iter().enumerate() {
                to(f64::from(x), f64::from(y), n == 0);
            }
        }
    }
}

/// The paths a chart stroked, kept from one drawing to the next, each under the points it was made of
/// (in backing-store pixels) and its colour and width: a chart drawn again strokes those that are
/// unchanged as they were made. The Compare chart's 600 runs are over a million points, gathered,
/// simplified and handed to the canvas a call each; when a run is unticked or a file comes, the
/// others' curves are where they were. What a drawing did not stroke goes after it.
#[derive(Clone, Default)]
pub struct PathCache(std::rc::Rc<std::cell::RefCell<Paths>>);

#[derive(Default)]
struct Paths {
    paths: std::collections::HashMap<PathKey, (web_sys::Path2d, u32), PointsHash>,
    /// The drawing under way (which one last stroked a path is kept with it).
    drawing: u32,
}

impl PathCache {
    /// Ends a drawing: the paths it did not stroke go.
    fn sweep(&self) {
        let mut cache = self.0.borrow_mut();
        let drawing = cache.drawing;
        cache.paths.retain(|_, (_, used)| *used == drawing);
        cache.drawing = drawing.wrapping_add(1);
    }
}

/// A gathered path: its colour and width, its points and where each of its pieces begins.
#[derive(PartialEq, Eq, Hash)]
struct PathKey {
    rgb: (u8, u8, u8),
    width: u32,
    pieces: Vec<usize>,
    points: Vec<BackendCoord>,
}

/// A hash of a path's million numbers that costs a multiply each (the map's own hashes a path in
/// several times the time its drawing saves); a match is still the same points, compared in full.
type PointsHash = std::hash::BuildHasherDefault<Multiplied>;

#[derive(Default)]
struct Multiplied(u64);

impl std::hash::Hasher for Multiplied {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
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

    /// Measured by the canvas (`measureText`, in the font `draw_text` sets), where plotters-canvas
    /// puts the text in the page and reads its size back: a style and layout of the page per text.
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> std::result::Result<(u32, u32), DrawingErrorKind<CanvasError>> {
        self.ctx.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str(),
        ));
        let Ok(metrics) = self.ctx.measure_text(text) else {
            return self.inner.estimate_text_size(text, style);
        };
        // The font's own height (its line box), as the page's text measured; the text's own where a
        // browser does not tell the font's.
        let font = metrics.font_bounding_box_ascent() + metrics.font_bounding_box_descent();
        let height = if font > 0.0 {
            font
        } else {
            metrics.actual_bounding_box_ascent() + metrics.actual_bounding_box_descent()
        };
        Ok((metrics.width().ceil() as u32, height.ceil() as u32))
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
