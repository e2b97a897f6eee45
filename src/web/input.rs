//! How the views read the keyboard and fingers alike: Enter and Space on what a click acts on, the
//! browser's own keys left alone, arrows moving a readout or the focus among bars, a finger's pointer.

/// Whether `ev` is Enter or Space on the element that listens (not on a checkbox or button inside
/// it): what a click on a table row, a column heading or a call path does, the keyboard does too.
pub fn activates(ev: &web_sys::KeyboardEvent) -> bool {
    let on_itself = ev.target().is_some() && ev.target() == ev.current_target();
    let key = ev.key();
    let yes = on_itself && (key == "Enter" || key == " ");
    if yes {
        ev.prevent_default();
    }
    yes
}

/// A finger's pointer event: its pointer's id and where it is on its target (CSS pixels); `None` for
/// a mouse's or a pen's, which the views' mouse handlers take.
pub fn finger(ev: &web_sys::PointerEvent) -> Option<(i32, (f64, f64))> {
    (ev.pointer_type() == "touch").then(|| {
        (
            ev.pointer_id(),
            (f64::from(ev.offset_x()), f64::from(ev.offset_y())),
        )
    })
}

/// Whether a key press carries Ctrl, Alt or Meta: those are the browser's (Ctrl and + or 0 zoom the
/// page, Ctrl+F finds, Ctrl+A selects all), which the views' own keys leave alone.
pub fn browsers_key(ev: &web_sys::KeyboardEvent) -> bool {
    ev.ctrl_key() || ev.meta_key() || ev.alt_key()
}

/// Where a key moves a keyboard's pointer at `at` on an axis from `lo` to `hi`: the arrows `step`
/// (Shift: ten steps), Home and End to the ends, Escape away (`Some(None)`); `None` for other keys.
/// The readouts on the compared curves and the step chart, and the analysed entry, move so (their
/// handlers have left the browser's keys alone first: [`browsers_key`]).
pub fn moved_by(
    ev: &web_sys::KeyboardEvent,
    at: f64,
    (lo, hi): (f64, f64),
    step: f64,
) -> Option<Option<f64>> {
    let step = if ev.shift_key() { step * 10.0 } else { step };
    Some(match ev.key().as_str() {
        "ArrowRight" => Some((at + step).min(hi)),
        "ArrowLeft" => Some((at - step).max(lo)),
        "Home" => Some(lo),
        "End" => Some(hi),
        "Escape" => None,
        _ => return None,
    })
}

/// Where a key moves the focus among `count` bars from bar `at` (none yet: to the first): the
/// arrows one bar (→ ↓ on, ← ↑ back), Home and End to the ends; `None` for other keys. The analysis
/// charts' ring and the rank strips move so.
pub fn bar_moved(key: &str, at: Option<usize>, count: usize) -> Option<usize> {
    let last = count.checked_sub(1)?;
    Some(match key {
        "ArrowRight" | "ArrowDown" => at.map_or(0, |k| (k + 1).min(last)),
        "ArrowLeft" | "ArrowUp" => at.map_or(0, |k| k.saturating_sub(1)),
        "Home" => 0,
        "End" => last,
        _ => return None,
    })
}
