//! A [`Pen`] that writes an SVG document: what a renderer draws on a canvas, as vector shapes (export).
//! Paths keep their canvas semantics (nonzero fill), clips become nested `<clipPath>`s, text keeps its
//! CSS font and alignment, and the global alpha is each shape's opacity.

use std::cell::RefCell;
use std::fmt::Write;

use super::pen::Pen;

#[derive(Clone)]
struct Style {
    fill: String,
    stroke: String,
    line_width: f64,
    alpha: f64,
    dash: Vec<f64>,
    font: String,
    align: String,
    baseline: String,
    /// The clip in force (a `<clipPath>` id), if any.
    clip: Option<usize>,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            fill: "#000".into(),
            stroke: "#000".into(),
            line_width: 1.0,
            alpha: 1.0,
            dash: Vec::new(),
            font: "10px sans-serif".into(),
            align: "start".into(),
            baseline: "alphabetic".into(),
            clip: None,
        }
    }
}

#[derive(Default)]
struct State {
    body: String,
    defs: String,
    path: String,
    style: Style,
    saved: Vec<Style>,
    clips: usize,
}

#[derive(Default)]
pub struct SvgPen {
    state: RefCell<State>,
}

impl SvgPen {
    pub fn new() -> SvgPen {
        SvgPen::default()
    }

    /// The document, `width` × `height` CSS pixels.
    pub fn finish(self, width: f64, height: f64) -> String {
        let s = self.state.into_inner();
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n\
             <defs>{defs}</defs>\n{body}</svg>\n",
            w = num(width),
            h = num(height),
            defs = s.defs,
            body = s.body
        )
    }

    /// Writes one shape element: `tag` with `attributes`, then the style's opacity and clip.
    fn shape(&self, tag: &str, attributes: &str) {
        let mut s = self.state.borrow_mut();
        let mut extra = String::new();
        if s.style.alpha < 1.0 {
            let _ = write!(extra, " opacity=\"{}\"", num(s.style.alpha));
        }
        if let Some(c) = s.style.clip {
            let _ = write!(extra, " clip-path=\"url(#c{c})\"");
        }
        let _ = writeln!(s.body, "<{tag} {attributes}{extra}/>");
    }

    fn fill_attributes(&self) -> String {
        format!("fill=\"{}\"", escape(&self.state.borrow().style.fill))
    }

    fn stroke_attributes(&self) -> String {
        let s = &self.state.borrow().style;
        let mut a = format!(
            "fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"",
            escape(&s.stroke),
            num(s.line_width)
        );
        if !s.dash.is_empty() {
            let dash: Vec<String> = s.dash.iter().map(|&d| num(d)).collect();
            let _ = write!(a, " stroke-dasharray=\"{}\"", dash.join(" "));
        }
        a
    }
}

impl Pen for SvgPen {
    fn set_fill_style_str(&self, style: &str) {
        self.state.borrow_mut().style.fill = style.to_string();
    }
    fn set_stroke_style_str(&self, style: &str) {
        self.state.borrow_mut().style.stroke = style.to_string();
    }
    fn set_line_width(&self, width: f64) {
        self.state.borrow_mut().style.line_width = width;
    }
    fn set_global_alpha(&self, alpha: f64) {
        self.state.borrow_mut().style.alpha = alpha;
    }
    fn set_line_dash(&self, pattern: &[f64]) {
        self.state.borrow_mut().style.dash = pattern.to_vec();
    }
    fn set_font(&self, font: &str) {
        self.state.borrow_mut().style.font = font.to_string();
    }
    fn set_text_align(&self, align: &str) {
        self.state.borrow_mut().style.align = match align {
            "right" | "end" => "end",
            "center" => "middle",
            _ => "start",
        }
        .into();
    }
    fn set_text_baseline(&self, baseline: &str) {
        self.state.borrow_mut().style.baseline = match baseline {
            "top" | "hanging" => "hanging",
            "middle" => "central",
            "bottom" => "text-after-edge",
            _ => "alphabetic",
        }
        .into();
    }
    fn fill_rect(&self, x: f64, y: f64, w: f64, h: f64) {
        let rect = rect_attributes(x, y, w, h);
        self.shape("rect", &format!("{rect} {}", self.fill_attributes()));
    }
    fn stroke_rect(&self, x: f64, y: f64, w: f64, h: f64) {
        let rect = rect_attributes(x, y, w, h);
        self.shape("rect", &format!("{rect} {}", self.stroke_attributes()));
    }
    fn fill_text(&self, text: &str, x: f64, y: f64) {
        let mut s = self.state.borrow_mut();
        let st = &s.style;
        let mut element = format!(
            "<text x=\"{}\" y=\"{}\" fill=\"{}\" style=\"font: {}\" text-anchor=\"{}\" dominant-baseline=\"{}\"",
            num(x),
            num(y),
            escape(&st.fill),
            escape(&st.font),
            st.align,
            st.baseline
        );
        if st.alpha < 1.0 {
            let _ = write!(element, " opacity=\"{}\"", num(st.alpha));
        }
        if let Some(c) = st.clip {
            let _ = write!(element, " clip-path=\"url(#c{c})\"");
        }
        let _ = writeln!(element, ">{}</text>", escape(text));
        s.body.push_str(&element);
    }
    fn begin_path(&self) {
        self.state.borrow_mut().path.clear();
    }
    fn move_to(&self, x: f64, y: f64) {
        let _ = write!(self.state.borrow_mut().path, "M{} {}", num(x), num(y));
    }
    fn line_to(&self, x: f64, y: f64) {
        let mut s = self.state.borrow_mut();
        // A line with no point before it starts one, as on a canvas.
        let op = if s.path.is_empty() { 'M' } else { 'L' };
        let _ = write!(s.path, "{op}{} {}", num(x), num(y));
    }
    fn rect(&self, x: f64, y: f64, w: f64, h: f64) {
        let _ = write!(
            self.state.borrow_mut().path,
            "M{} {}h{}v{}h{}Z",
            num(x),
            num(y),
            num(w),
            num(h),
            num(-w)
        );
    }
    fn close_path(&self) {
        self.state.borrow_mut().path.push('Z');
    }
    fn fill(&self) {
        let d = self.state.borrow().path.clone();
        if !d.is_empty() {
            self.shape("path", &format!("d=\"{d}\" {}", self.fill_attributes()));
        }
    }
    fn stroke(&self) {
        let d = self.state.borrow().path.clone();
        if !d.is_empty() {
            self.shape("path", &format!("d=\"{d}\" {}", self.stroke_attributes()));
        }
    }
    fn clip(&self) {
        let mut s = self.state.borrow_mut();
        let id = s.clips;
        s.clips += 1;
        // Nested clips intersect: the new clip path is itself clipped by the one in force.
        let outer = s
            .style
            .clip
            .map(|c| format!(" clip-path=\"url(#c{c})\""))
            .unwrap_or_default();
        let d = s.path.clone();
        let _ = write!(
            s.defs,
            "<clipPath id=\"c{id}\"{outer}><path d=\"{d}\"/></clipPath>"
        );
        s.style.clip = Some(id);
    }
    fn save(&self) {
        let mut s = self.state.borrow_mut();
        let style = s.style.clone();
        s.saved.push(style);
    }
    fn restore(&self) {
        let mut s = self.state.borrow_mut();
        if let Some(style) = s.saved.pop() {
            s.style = style;
        }
    }
    /// Never asked: an SVG surface has no `pixel_ratio`, and its shapes stay shapes.
    fn draw_pixels(&self, _: &crate::pixels::Pixels) {}
}

fn rect_attributes(x: f64, y: f64, w: f64, h: f64) -> String {
    // Negative sizes draw from the other corner, as on a canvas.
    let (x, w) = if w < 0.0 { (x + w, -w) } else { (x, w) };
    let (y, h) = if h < 0.0 { (y + h, -h) } else { (y, h) };
    format!(
        "x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"",
        num(x),
        num(y),
        num(w),
        num(h)
    )
}

/// A coordinate with at most two decimals (a hundredth of a CSS pixel), without trailing zeros.
fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let text = format!("{:.2}", v);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.to_string()
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A plotters backend that writes SVG: the report charts (`memograph-charts`) exported as vectors.
/// Text is laid out by plotters (measured by the browser), anchored and rotated as drawn.
/// Opaque lines of one colour and width drawn in a row are written as one `<path>` (plotters draws a
/// dashed curve as a line per dash: a chart of 300 runs was ~300 000 elements), as the page's canvas
/// strokes them as one path (`charts::Batched`).
pub struct SvgBackend {
    size: (u32, u32),
    /// Shared with the caller: plotters keeps the backend inside the drawing area.
    body: std::rc::Rc<RefCell<String>>,
    /// The colour and width of the lines gathered in `path` (its `d`), if any.
    open: Option<((u8, u8, u8), u32)>,
    path: String,
}

impl SvgBackend {
    pub fn new(width: u32, height: u32, body: std::rc::Rc<RefCell<String>>) -> SvgBackend {
        SvgBackend {
            size: (width, height),
            body,
            open: None,
            path: String::new(),
        }
    }

    /// Writes the lines gathered, if any, as one path.
    fn lines(&mut self) {
        if let Some(((r, g, b), width)) = self.open.take() {
            let d = std::mem::take(&mut self.path);
            self.put(format_args!(
                "<path d=\"{}\" fill=\"none\" stroke-width=\"{width}\" stroke=\"#{r:02x}{g:02x}{b:02x}\"/>",
                d.trim_end()
            ));
        }
    }

    /// The document around what an `SvgBackend` of this size wrote into `body`.
    pub fn document(width: u32, height: u32, body: &str) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n{body}</svg>\n"
        )
    }

    fn put(&self, element: std::fmt::Arguments) {
        let mut body = self.body.borrow_mut();
        let _ = body.write_fmt(element);
        body.push('\n');
    }
}

/// A colour for after an opening `attr="`: the value, its closing quote, then its opacity if any.
fn color(c: plotters_backend::BackendColor) -> String {
    let (r, g, b) = c.rgb;
    let mut s = format!("#{r:02x}{g:02x}{b:02x}\"");
    if c.alpha < 1.0 {
        s.push_str(&format!(" opacity=\"{}\"", num(c.alpha)));
    }
    s
}

/// A shape's fill (`fill`) or outline attributes, its colour's opacity included.
fn paint<S: plotters_backend::BackendStyle>(style: &S, fill: bool) -> String {
    if fill {
        format!("fill=\"{}", color(style.color()))
    } else {
        format!(
            "fill=\"none\" stroke-width=\"{}\" stroke=\"{}",
            style.stroke_width(),
            color(style.color())
        )
    }
}

fn points(path: impl IntoIterator<Item = (i32, i32)>) -> String {
    let mut s = String::new();
    for (x, y) in path {
        let _ = write!(s, "{x},{y} ");
    }
    s
}

impl Drop for SvgBackend {
    fn drop(&mut self) {
        self.lines();
    }
}

impl plotters_backend::DrawingBackend for SvgBackend {
    type ErrorType = std::fmt::Error;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }
    fn ensure_prepared(
        &mut self,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        Ok(())
    }
    fn present(&mut self) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        self.lines();
        Ok(())
    }
    fn draw_pixel(
        &mut self,
        (x, y): (i32, i32),
        c: plotters_backend::BackendColor,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        self.lines();
        if c.alpha > 0.0 {
            self.put(format_args!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"1\" height=\"1\" fill=\"{}/>",
                color(c)
            ));
        }
        Ok(())
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        style: &S,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        self.draw_path([from, to], style)
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        (x0, y0): (i32, i32),
        (x1, y1): (i32, i32),
        style: &S,
        fill: bool,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        self.lines();
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (x, y, w, h) = (x0.min(x1), y0.min(y1), (x1 - x0).abs(), (y1 - y0).abs());
        let paint = paint(style, fill);
        self.put(format_args!(
            "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" {paint}/>"
        ));
        Ok(())
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = (i32, i32)>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        let c = style.color();
        if c.alpha == 0.0 {
            return Ok(());
        }
        if c.alpha < 1.0 {
            self.lines();
            self.put(format_args!(
                "<polyline points=\"{}\" fill=\"none\" stroke-width=\"{}\" stroke=\"{}/>",
                points(path),
                style.stroke_width(),
                color(c)
            ));
            return Ok(());
        }
        let mut points = path.into_iter();
        let Some((x, y)) = points.next() else {
            return Ok(());
        };
        let key = (c.rgb, style.stroke_width());
        if self.open != Some(key) {
            self.lines();
            self.open = Some(key);
        }
        let _ = write!(self.path, "M{x} {y} ");
        for (x, y) in points {
            let _ = write!(self.path, "L{x} {y} ");
        }
        Ok(())
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = (i32, i32)>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        self.lines();
        if style.color().alpha > 0.0 {
            self.put(format_args!(
                "<polygon points=\"{}\" fill=\"{}/>",
                points(path),
                color(style.color())
            ));
        }
        Ok(())
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        (x, y): (i32, i32),
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        self.lines();
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let paint = paint(style, fill);
        self.put(format_args!(
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"{radius}\" {paint}/>"
        ));
        Ok(())
    }
    fn draw_text<S: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        (x, y): (i32, i32),
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::fmt::Error>> {
        self.lines();
        use plotters_backend::text_anchor::{HPos, VPos};
        use plotters_backend::FontTransform;
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let anchor = match style.anchor().h_pos {
            HPos::Left => "start",
            HPos::Right => "end",
            HPos::Center => "middle",
        };
        let baseline = match style.anchor().v_pos {
            VPos::Top => "hanging",
            VPos::Center => "central",
            VPos::Bottom => "text-after-edge",
        };
        let rotate = match style.transform() {
            FontTransform::None => 0,
            FontTransform::Rotate90 => 90,
            FontTransform::Rotate180 => 180,
            FontTransform::Rotate270 => 270,
        };
        let transform = if rotate == 0 {
            String::new()
        } else {
            format!(" transform=\"rotate({rotate} {x} {y})\"")
        };
        let weight = match style.style() {
            plotters_backend::FontStyle::Bold => " font-weight=\"bold\"",
            _ => "",
        };
        self.put(format_args!("<text x=\"{x}\" y=\"{y}\" font-family=\"{}\" font-size=\"{}\"{weight} text-anchor=\"{anchor}\" dominant-baseline=\"{baseline}\"{transform} fill=\"{}>{}</text>",
            escape(style.family().as_str()),
            num(style.size()),
            color(style.color()),
            escape(text)
        ));
        Ok(())
    }
}
