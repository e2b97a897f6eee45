//! The minimap: live bytes over the whole trace, and the brush of the visible range.

use super::colors::Theme;
use super::{Pen, Surface};
use crate::scale::Plot;
use crate::view_model::{OomMark, TimelineModel};
use crate::viewport::Viewport;

/// Draws the live bytes of `model` over its whole trace, a tick at each of `ooms` (found however far
/// the view is zoomed in), and the brush (`brush` while dragged, else `view`).
pub fn draw<P: Pen>(
    s: &Surface<P>,
    model: &TimelineModel,
    ooms: &[OomMark],
    view: Viewport,
    brush: Option<(f64, f64)>,
    theme: &Theme,
) {
    let ctx = &s.ctx;
    let plot = Plot::minimap(s.width, s.height);
    let (left, width) = (plot.left, plot.width);
    ctx.set_fill_style_str(theme.background);
    ctx.fill_rect(0.0, 0.0, s.width, s.height);
    let n = model.layout.x_len as f64;
    let max = model.peak.bytes.max(1) as f64;
    let h = s.height - 2.0;
    ctx.begin_path();
    ctx.move_to(left, s.height);
    let cols = width.max(1.0) as usize;
    for c in 0..=cols {
        let (a, b) = (c as f64 / cols as f64 * n, (c + 1) as f64 / cols as f64 * n);
        let v = model.max_in(a, b) as f64;
        ctx.line_to(left + c as f64, s.height - v / max * h);
    }
    ctx.line_to(left + width, s.height);
    ctx.close_path();
    ctx.set_fill_style_str(theme.summarized);
    ctx.fill();
    let px = |x: f64| left + x / n * width;
    ctx.set_fill_style_str(theme.peak);
    for m in ooms {
        ctx.fill_rect(
            px(f64::from(m.entry) + 0.5).round() - 1.0,
            0.0,
            2.0,
            s.height,
        );
    }
    let (a, b) = brush.unwrap_or((view.x0, view.x1));
    ctx.set_fill_style_str(theme.annotation);
    ctx.fill_rect(
        px(a.min(b)),
        0.0,
        (px(a.max(b)) - px(a.min(b))).max(2.0),
        s.height,
    );
    ctx.set_stroke_style_str(theme.text);
    ctx.set_line_width(1.0);
    ctx.stroke_rect(
        px(a.min(b)) + 0.5,
        0.5,
        (px(a.max(b)) - px(a.min(b))).max(2.0) - 1.0,
        s.height - 1.0,
    );
}

/// The entry under pixel `px` of a minimap `width` wide showing `x_len` entries.
pub fn x_at(width: f64, px: f64, x_len: f64) -> f64 {
    Plot::minimap(width, 0.0).fraction_at(px) * x_len
}
