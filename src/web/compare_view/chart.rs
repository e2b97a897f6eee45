//! The chosen runs' live curves on one chart (`memograph_charts::overlaid_curves`): the axis, zoom and
//! pan by wheel, drag, pinch and keys, the pointer's readout, a click that diffs A and B at the entries
//! under it, and the chart's export.

use leptos::html::Canvas;
use leptos::prelude::*;
use memograph_charts::{curve_points, full_range, run_color, Bars, CompareAxis, PlotArea};
use memograph_snapshot::analysis::compare::{within, Digest};
use memograph_snapshot::format::{at_entry, bytes};

use super::{diff_pair, folder_of, key_of, RowKey};
use crate::load::{self, store};
use crate::touch::{pinched_range, Gesture, Touches};
use crate::view_model::compare::{
    common_marks, entry_at, readout_picks, refs, values_at, SharedDigest,
};
use crate::web::Ui;

/// Diffs A and B at the entries their curves show at `x`: each side's digest at its entry, made from
/// the open file on the page or by reading the file again in a worker.
fn diff_at(ui: Ui, rows: &[SharedDigest], x: f64) {
    let (Some(ka), Some(kb)) = diff_pair(ui, rows) else {
        return;
    };
    let axis = ui.compare.axis.get_untracked();
    let find = |k: &RowKey| rows.iter().find(|d| &key_of(d) == k);
    let (Some(a), Some(b)) = (find(&ka), find(&kb)) else {
        return;
    };
    let (Some(ea), Some(eb)) = (entry_at(a, &axis, x), entry_at(b, &axis, x)) else {
        ui.compare
            .at_status
            .set(Some("A or B has no point there".into()));
        return;
    };
    ui.compare.at_status.set(Some(format!(
        "reading A {} and B {}…",
        at_entry(ea),
        at_entry(eb)
    )));
    let results: std::rc::Rc<std::cell::RefCell<[Option<Digest>; 2]>> = Default::default();
    for (side, (key, entry)) in [(ka, ea), (kb, eb)].into_iter().enumerate() {
        let results = results.clone();
        let (name, size, device) = key.clone();
        let label = name.clone();
        let deliver = move |made: Result<Digest, String>| match made {
            Ok(d) => {
                let mut r = results.borrow_mut();
                r[side] = Some(d);
                if let [Some(a), Some(b)] = &*r {
                    let (a, b) = (SharedDigest::new(a.clone()), SharedDigest::new(b.clone()));
                    ui.compare.at.set(Some((a, b)));
                    ui.compare.at_status.set(None);
                }
            }
            Err(e) => ui.compare.at_status.set(Some(format!("{label}: {e}"))),
        };
        let open = store::list()
            .iter()
            .position(|(n, s, _)| *n == name && *s == size);
        match open {
            Some(i) => {
                let made = store::with_model(i, device, |m, s| {
                    let rules = memograph_snapshot::analysis::categories::Rules::built_in();
                    let mut d = memograph_snapshot::analysis::compare::digest_at(
                        s,
                        &m.blocks.lifetimes,
                        &rules,
                        Some(entry),
                    );
                    d.name_after(&name, size);
                    d.default_device = s.default_device() == Some(device);
                    d
                });
                deliver(made.ok_or_else(|| "the file is no longer open".to_string()));
            }
            None => match store::compared_blob(&name, size) {
                Some(blob) => {
                    load::digest_at(std::rc::Rc::new(ui), name, blob, device, entry, deliver)
                }
                None => deliver(Err("the file is no longer there".into())),
            },
        }
    }
}

/// The chosen rows' live curves on one chart, in their run colours.
#[component]
pub(super) fn OverlaidChart(ui: Ui, rows: Memo<Vec<SharedDigest>>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    // The pointer's rule is drawn on a canvas of its own over the chart: moving the pointer redraws a
    // line, not every curve (300 runs' curves took ~50 ms a redraw).
    let rule = NodeRef::<Canvas>::new();
    let plot = StoredValue::new(None::<(PlotArea, f64)>);
    // Counts the chart's redraws (the rule follows its plot area).
    let redrawn = RwSignal::new(0u32);
    let drag = StoredValue::new(None::<(f64, (f64, f64))>);
    let size = crate::web::observed_size(canvas);
    // Drawn in a task of its own, once for every change made in one task: with 300 runs the curves
    // take ~35 ms, and the table's own update as many in the task that changed the runs. Nor more
    // often than leaves the page four times a drawing's time between two: as a batch of hundreds of
    // files is read, each file that comes changes the runs, and the chart of 600 runs redrawn for
    // every one held the page most of the time.
    let due = StoredValue::new(false);
    // When the last drawing ended, and how long it took.
    let last = StoredValue::new((f64::NEG_INFINITY, 0.0f64));
    // The curves as the last drawing made them, stroked again where unchanged.
    let paths = StoredValue::new_local(crate::render::charts::PathCache::default());
    let draw = move || {
        let started = crate::load::now();
        let (Some(dark), Some(axis), Some(range), Some(Some(size)), Some(Some(el))) = (
            ui.dark.try_get_untracked(),
            ui.compare.axis.try_get_untracked(),
            ui.compare.range.try_get_untracked(),
            size.try_get_untracked(),
            canvas.try_get_untracked(),
        ) else {
            return;
        };
        rows.try_with_untracked(|rows| {
            let colored: Vec<(&Digest, _)> = rows
                .iter()
                .enumerate()
                .map(|(k, d)| (&**d, run_color(k)))
                .collect();
            let mut area = None;
            let drawn = paths.try_with_value(|paths| {
                crate::render::charts::draw_sized(&el, size, dark, Some(paths), |a, t| {
                    area = Some(memograph_charts::overlaid_curves(
                        a, "", &colored, &axis, range, None, t,
                    )?);
                    Ok(Bars::default())
                })
            });
            let drawn = drawn.flatten();
            plot.set_value(drawn.and_then(|(_, dpr)| Some((area?, dpr))));
        });
        redrawn.try_update(|n| *n = n.wrapping_add(1));
        let ended = crate::load::now();
        last.try_set_value((ended, ended - started));
    };
    Effect::new(move |_| {
        ui.dark.track();
        ui.compare.axis.track();
        ui.compare.range.track();
        size.track();
        canvas.track();
        rows.track();
        if !due.get_value() {
            due.set_value(true);
            let (ended, took) = last.get_value();
            let wait = ended + 4.0 * took - crate::load::now();
            // In the task after the page's next frame: what changed the runs (the table's rows) is
            // laid out by then, and the chart's text, measured in the page (plotters), does not lay
            // it out again and again (at 600 runs, half of a drawing's time).
            let go = move || {
                request_animation_frame(move || {
                    leptos::task::spawn_local(async move {
                        crate::load::next_task().await;
                        if due.try_set_value(false).is_none() {
                            draw();
                        }
                    })
                })
            };
            if wait > 1.0 {
                crate::load::after(wait as i32, go);
            } else {
                go();
            }
        }
    });
    crate::web::pointer_rule(ui, canvas, rule, plot, redrawn, move || {
        ui.compare.hover_x.get()
    });
    let x_at = move |ev: &web_sys::MouseEvent| {
        let (p, dpr) = plot.get_value()?;
        p.x_at((f64::from(ev.offset_x()) * dpr) as i32)
            .map(|x| (x, p))
    };
    let full = move || {
        let axis = ui.compare.axis.get_untracked();
        let curves: Vec<Vec<(f64, u64)>> = rows
            .get_untracked()
            .iter()
            .map(|d| curve_points(d, &axis))
            .collect();
        full_range(&curves)
    };
    let moved = StoredValue::new(false);
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((x, p)) = x_at(&ev) else {
            ui.compare.hover_x.set(None);
            return;
        };
        if let Some((from, (x0, x1))) = drag.get_value() {
            let dx = from - x;
            if dx.abs() > (x1 - x0) * 0.002 {
                moved.set_value(true);
            }
            let _ = p;
            ui.compare.range.set(Some((x0 + dx, x1 + dx)));
            return;
        }
        ui.compare.hover_x.set(Some(x));
    };
    let on_down = move |ev: web_sys::MouseEvent| {
        if let Some((x, p)) = x_at(&ev) {
            drag.set_value(Some((x, p.x_range)));
        }
    };
    // A click (a press and release without moving) diffs A and B at the entries under the pointer.
    let on_up = move |ev: web_sys::MouseEvent| {
        let was_drag = moved.get_value();
        drag.set_value(None);
        moved.set_value(false);
        if !was_drag {
            if let Some((x, _)) = x_at(&ev) {
                diff_at(ui, &rows.get_untracked(), x);
            }
        }
    };
    // The range shown `factor` times as wide, `x` staying where it is.
    let zoom = move |x: f64, (x0, x1): (f64, f64), factor: f64| {
        let (f0, f1) = full();
        let span = ((x1 - x0) * factor).min(f1 - f0).max((f1 - f0) * 1e-6);
        let t = (x - x0) / (x1 - x0).max(f64::MIN_POSITIVE);
        let lo = x - t * span;
        ui.compare.range.set(Some((lo, lo + span)));
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        let Some((x, p)) = x_at(&ev) else { return };
        ev.prevent_default();
        zoom(x, p.x_range, if ev.delta_y() > 0.0 { 1.25 } else { 0.8 });
    };
    // Fingers: a sideways drag moves the range as the mouse's drag does, two pinch it (what was under
    // each finger stays under it). The page keeps the vertical drags (`touch-action: pan-y`: the chart
    // is in a page that scrolls), and a tap is the browser's click: the readout, and A and B diffed.
    let touches = StoredValue::new(Touches::<(f64, f64)>::default());
    // The range asked for last (the chart draws it a task later), or all of it that is drawn.
    let shown = move |p: &PlotArea| ui.compare.range.get_untracked().unwrap_or(p.x_range);
    let on_finger_down = move |ev: web_sys::PointerEvent| {
        if let (Some((id, at)), Some((p, _))) = (crate::web::finger(&ev), plot.get_value()) {
            touches.update_value(|t| t.down(id, at, shown(&p)));
        }
    };
    let on_finger_move = move |ev: web_sys::PointerEvent| {
        let (Some((id, at)), Some((p, dpr))) = (crate::web::finger(&ev), plot.get_value()) else {
            return;
        };
        let Some(Some(((x0, x1), gesture))) = touches.try_update_value(|t| t.moved(id, at)) else {
            return;
        };
        let (left, width) = (f64::from(p.x.0) / dpr, f64::from(p.x.1 - p.x.0) / dpr);
        let (start, span) = match gesture {
            Gesture::Pan { dx, .. } => (x0 - dx / width.max(1.0) * (x1 - x0), x1 - x0),
            Gesture::Pinch { from, to } => pinched_range((x0, x1), (left, width), from, to),
        };
        // No narrower than the wheel zooms, no wider than all of it.
        let (f0, f1) = full();
        let span = span.min(f1 - f0).max((f1 - f0) * 1e-6);
        ui.compare.hover_x.set(None);
        ui.compare.range.set(Some((start, start + span)));
    };
    let on_finger_up = move |ev: web_sys::PointerEvent| {
        if let (Some((id, _)), Some((p, _))) = (crate::web::finger(&ev), plot.get_value()) {
            touches.update_value(|t| {
                t.up(id, shown(&p));
            });
        }
    };
    // The keyboard's pointer: the arrows move the readout a hundredth of the range shown (Shift: a
    // tenth), Home and End to its ends; Enter diffs A and B there, + and - zoom round it, 0 shows all.
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if crate::web::browsers_key(&ev) {
            return;
        }
        let Some((p, _)) = plot.get_value() else {
            return;
        };
        let (x0, x1) = p.x_range;
        let at = ui
            .compare
            .hover_x
            .get_untracked()
            .filter(|x| (x0..=x1).contains(x))
            .unwrap_or((x0 + x1) / 2.0);
        let to = match ev.key().as_str() {
            "+" | "=" => {
                zoom(at, p.x_range, 0.5);
                Some(at)
            }
            "-" | "_" => {
                zoom(at, p.x_range, 2.0);
                Some(at)
            }
            "0" => {
                ui.compare.range.set(None);
                Some(at)
            }
            _ if crate::web::activates(&ev) => {
                diff_at(ui, &rows.get_untracked(), at);
                return;
            }
            _ => match crate::web::moved_by(&ev, at, (x0, x1), (x1 - x0) / 100.0) {
                Some(to) => to,
                None => return,
            },
        };
        ev.prevent_default();
        ui.compare.hover_x.set(to);
    };
    let readout = move || {
        let x = ui.compare.hover_x.get()?;
        let axis = ui.compare.axis.get();
        let rows = rows.get();
        let refs = refs(&rows);
        let values = values_at(&refs, &axis, x);
        let folder = folder_of(&rows);
        let at = match &axis {
            CompareAxis::Fraction => format!("at {:.1} % of each trace", x * 100.0),
            CompareAxis::Seconds => format!("at {x:.3} s"),
            CompareAxis::AtMark(name) => format!("{x:+.0} entries from '{name}'"),
        };
        let (picked, more) = readout_picks(&values);
        let more = more.map(|(runs, median)| {
            let median = median.map_or(String::new(), |m| format!(" (median of all {})", bytes(m)));
            view! { <span class="readout-item muted">{format!("… and {runs} more{median}")}</span> }
        });
        let items = picked
            .into_iter()
            .map(|k| (k, &rows[k], values[k]))
            .map(|(k, d, v)| {
                let palette = &memograph_charts::RUN_COLORS;
                let color = palette[k % palette.len()];
                // Striped where the curve is dashed.
                let fill = if memograph_charts::run_dashed(k) {
                    format!("background:repeating-linear-gradient(90deg,{color} 0 3px,transparent 3px 5px)")
                } else {
                    format!("background:{color}")
                };
                view! {
                    <span class="readout-item">
                        <span class="swatch" style=fill></span>
                        {format!("{}: {}", within(&d.file, &folder), v.map_or("—".to_string(), bytes))}
                    </span>
                }
            })
            .collect_view();
        Some(
            view! { <div class="readout" data-testid="compare-readout"><span class="muted">{at}</span>{items}{more}</div> },
        )
    };
    let axes = move || {
        rows.with(|rows| {
            let refs = refs(rows);
            let timed = !rows.is_empty() && rows.iter().all(|d| !d.curve.time_us.is_empty());
            (timed, common_marks(&refs))
        })
    };
    let axis_key = move || match ui.compare.axis.get() {
        CompareAxis::Fraction => "fraction".to_string(),
        CompareAxis::Seconds => "seconds".to_string(),
        CompareAxis::AtMark(name) => format!("mark:{name}"),
    };
    view! {
        <div class="chart-tools">
            <label>"x axis "
                <select class="select" data-testid="compare-axis" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    let axis = match v.as_str() {
                        "seconds" => CompareAxis::Seconds,
                        v => v.strip_prefix("mark:").map_or(CompareAxis::Fraction, |m| CompareAxis::AtMark(m.to_string())),
                    };
                    ui.compare.range.set(None);
                    ui.compare.axis.set(axis);
                }>
                    <option value="fraction" selected=move || axis_key() == "fraction">"share of each trace"</option>
                    <option value="seconds" disabled=move || !axes().0 selected=move || axis_key() == "seconds">"seconds from each start"</option>
                    {move || axes().1.into_iter().map(|m| {
                        let value = format!("mark:{m}");
                        let v2 = value.clone();
                        view! { <option value=value selected=move || axis_key() == v2>{format!("aligned at '{m}'")}</option> }
                    }).collect_view()}
                </select>
            </label>
            // Back to all of each trace: what double-click and 0 do, for a finger too.
            <Show when=move || ui.compare.range.get().is_some()>
                <button class="button small" data-testid="compare-reset-zoom" title="Show all of each trace (0)"
                    on:click=move |_| ui.compare.range.set(None)>"Reset zoom"</button>
            </Show>
        </div>
        <crate::web::export::ExportButtons testid="export-compare"
            png=move || export_curves(ui, rows, canvas, false)
            svg=move || export_curves(ui, rows, canvas, true) />
        <div class="chart-with-rule">
            <canvas class="compare-chart zoomable" data-testid="compare-chart" node_ref=canvas tabindex="0"
                data-range=move || ui.compare.range.get().map(|(a, b)| format!("{a}_{b}"))
                aria-label="Live memory of each run: the arrow keys move the readout, Enter diffs A and B there, + and - zoom, 0 shows all"
                on:keydown=on_key on:mousemove=on_move on:mousedown=on_down on:mouseup=on_up
                on:mouseleave=move |_| { drag.set_value(None); ui.compare.hover_x.set(None); }
                on:wheel=on_wheel on:dblclick=move |_| ui.compare.range.set(None)
                on:pointerdown=on_finger_down on:pointermove=on_finger_move on:pointerup=on_finger_up
                on:pointercancel=move |_| touches.update_value(|t| t.cancel())></canvas>
            <canvas class="rule" data-testid="compare-chart-rule" node_ref=rule aria-hidden="true"></canvas>
        </div>
        {readout}
    }
}

/// The overlaid curves as on screen (range and axis; no hover line) as a PNG or SVG download.
fn export_curves(
    ui: Ui,
    rows: Memo<Vec<SharedDigest>>,
    canvas: NodeRef<leptos::html::Canvas>,
    svg: bool,
) {
    struct Curves<'a> {
        colored: Vec<(&'a Digest, plotters::style::RGBColor)>,
        axis: CompareAxis,
        range: Option<(f64, f64)>,
    }
    impl crate::web::export::Picture for Curves<'_> {
        fn draw<DB: plotters::prelude::DrawingBackend>(
            &self,
            a: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
            t: &memograph_charts::Theme,
        ) -> memograph_charts::Result<Bars>
        where
            DB::ErrorType: 'static,
        {
            memograph_charts::overlaid_curves(
                a,
                "",
                &self.colored,
                &self.axis,
                self.range,
                None,
                t,
            )?;
            Ok(Bars::default())
        }
    }
    let Some(el) = canvas.get_untracked() else {
        return;
    };
    let rows = rows.get_untracked();
    let curves = Curves {
        colored: rows
            .iter()
            .enumerate()
            .map(|(k, d)| (&**d, run_color(k)))
            .collect(),
        axis: ui.compare.axis.get_untracked(),
        range: ui.compare.range.get_untracked(),
    };
    crate::web::export::save_picture(
        "memograph_compare",
        &el,
        ui.dark.get_untracked(),
        svg,
        &curves,
    );
}
