//! The Active Memory Timeline and the Active Cached Segment Timeline: toolbar, canvas, minimap and the
//! pinned allocation's stack. Wires pointer, wheel and keyboard input to the viewport and selection
//! signals; drawing is `render::timeline`'s, and drawing and input share one mapping (`scale`).

use leptos::html::Canvas;
use leptos::prelude::*;
use memograph_snapshot::analysis::summary;
use memograph_snapshot::format::{at_entry, bytes, count, grouped};

use super::stack_panel::StackPanel;
use super::{Highlight, Ui};
use crate::load::build::Part;
use crate::load::{now, store};
use crate::render::{self, colors, Pen, Surface};
use crate::scale::{annotation_row_at, annotation_strip, Plot, Scale, ANNOTATION_ROWS};
use crate::touch::{Gesture, Touches};
use crate::view_model::lit::LitBands;
use crate::view_model::{
    cycled, describe_annotations, describe_ooms, AnnotationSpan, Categories, OomMark, TimelineModel,
};
use crate::viewport::Viewport;

/// What a timeline frame needs besides its model.
pub struct Context<'a> {
    pub times: Option<&'a [i64]>,
    pub annotations: &'a [AnnotationSpan],
    /// Where the allocator ran out of memory.
    pub ooms: &'a [OomMark],
    /// Block categories, when the view is coloured by category.
    pub categories: Option<&'a Categories>,
}

impl Context<'_> {
    /// Annotation rows above the plot: the same for drawing and for hit-testing.
    fn rows(&self) -> usize {
        self.annotations
            .iter()
            .map(|s| s.row + 1)
            .max()
            .unwrap_or(0)
    }
}

/// How many of the largest allocations in view the keyboard steps through (Down, Up).
const KEYED_LARGEST: usize = 1000;

/// Runs `f` on the timeline model this view shows, once it is built. What the view asks for and is
/// not built yet (the segment timeline, the layout at the slider's detail, the categories to colour
/// by) is built in the background meanwhile; until then `f` sees what there is (or, for the segment
/// timeline, is not called).
fn with_timeline<R>(
    ui: Ui,
    segments: bool,
    f: impl FnOnce(&mut TimelineModel, Context) -> R,
) -> Option<R> {
    let (file, device) = ui.current()?;
    let by_category = !segments && ui.by_category.get_untracked();
    let detail = ui.detail.get_untracked();
    let mut wanted = None;
    let mut colours_wanted = false;
    let done = store::with_model(file, device, |m, s| {
        let times = m.times(s);
        let (t, annotations, categories, ooms) = m.timeline_parts(segments, by_category);
        colours_wanted = by_category && categories.is_none();
        let Some(t) = t else {
            wanted = Some(Part::Segments);
            return None;
        };
        if !segments && !t.is_at(detail) {
            wanted = Some(Part::Layout(detail));
        }
        Some(f(
            t,
            Context {
                times,
                annotations,
                ooms,
                categories,
            },
        ))
    })
    .flatten();
    // Asked for outside the store's borrow.
    if let Some(part) = wanted {
        ui.build(file, device, part);
    }
    if colours_wanted {
        ui.build(file, device, Part::Categories);
    }
    done
}

/// Frame times for the benchmark (`window.__memographFrames`), newest last.
fn record_frame(ms: f64) {
    if let Some(w) = web_sys::window() {
        let key = wasm_bindgen::JsValue::from_str("__memographFrames");
        let arr = js_sys::Reflect::get(&w, &key)
            .ok()
            .filter(|v| v.is_object())
            .unwrap_or_else(|| {
                let a = js_sys::Array::new();
                let _ = js_sys::Reflect::set(&w, &key, &a);
                a.into()
            });
        use wasm_bindgen::JsCast;
        arr.unchecked_into::<js_sys::Array>().push(&ms.into());
    }
}

/// Runs `f` with the mapping the frame `drawn` was drawn with (over `view` instead of its own, when
/// given), and what the frame drew besides the model: input maps pixels exactly as drawing did.
fn with_scale<R>(
    ui: Ui,
    segments: bool,
    drawn: Option<Drawn>,
    view: Option<Viewport>,
    f: &dyn Fn(&Scale, &TimelineModel, &Context) -> R,
) -> Option<R> {
    let d = drawn?;
    with_timeline(ui, segments, |t, c| {
        let times = if d.time_axis { c.times } else { None };
        f(&Scale::new(view.unwrap_or(d.view), d.plot, times), t, &c)
    })
}

/// What a frame shows besides the model: read from the signals (tracked inside an effect).
struct Look {
    view: Option<Viewport>,
    hovered: Option<(usize, u32)>,
    pinned: Option<u32>,
    dark: bool,
    time_axis: bool,
    lit: Option<u16>,
    picked: Option<Highlight>,
}

impl Look {
    fn now(ui: Ui) -> Look {
        Look {
            view: ui.viewport.get(),
            hovered: ui.hovered.get(),
            pinned: ui.pinned.get(),
            dark: ui.dark.get(),
            time_axis: ui.time_axis.get(),
            lit: ui.highlight_category.get(),
            picked: ui.highlight.get(),
        }
    }
}

/// Draws the timeline this view shows onto `surface` (the canvas, or an export) as `look` says.
fn paint<P: Pen>(ui: Ui, segments: bool, surface: &Surface<P>, look: &Look) -> Option<Drawn> {
    let wants_lit = std::cell::Cell::new(None);
    let drawn = with_timeline(ui, segments, |t, c| {
        let view = look.view.unwrap_or_else(|| t.full_view());
        let plot = Plot::of(surface.width, surface.height, c.rows());
        let times = if look.time_axis { c.times } else { None };
        let f = Scale::new(view, plot, times);
        let theme = colors::theme(look.dark);
        // Kept between frames, with their bands: a picked highlight, or a category's allocations.
        let set = match (&look.picked, c.categories, look.lit) {
            (Some(h), _, _) if !segments => Some(h.allocations.clone()),
            (_, Some(cat), Some(k)) => Some(t.category_members(cat, k)),
            _ => None,
        };
        let lit = set.as_ref().and_then(|set| match segments {
            true => Some(t.lit_bands(set)),
            false => lit_or_want(t, set, &wants_lit),
        });
        let highlighted = set.as_ref().map_or(&[][..], |set| set.as_slice());
        let overlay = render::timeline::Overlay {
            annotations: c.annotations,
            ooms: c.ooms,
            hovered: look.hovered,
            pinned: look.pinned,
            show_peak: true,
            highlighted,
            lit: lit.as_deref(),
            categories: c.categories.map(|cat| (cat.of.as_slice(), cat.names.len())),
            stacked: None,
        };
        render::timeline::draw(surface, &f, t, &overlay, &theme);
        Drawn {
            plot,
            view,
            time_axis: look.time_axis,
        }
    });
    ask_lit(ui, &wants_lit);
    drawn
}

/// The bands of highlight `set` for a frame of the block timeline `t` (see
/// `TimelineModel::lit_for_frame`); when a highlight of millions is to have them read in the
/// background, `wanted` is set to its key for [`ask_lit`].
pub(super) fn lit_or_want(
    t: &TimelineModel,
    set: &std::sync::Arc<Vec<u32>>,
    wanted: &std::cell::Cell<Option<usize>>,
) -> Option<std::rc::Rc<LitBands>> {
    let lit = t.lit_for_frame(set);
    if lit.is_none() {
        wanted.set(Some(std::sync::Arc::as_ptr(set) as usize));
    }
    lit
}

/// Has the bands [`lit_or_want`] found wanted read in the background, once the store is no longer
/// borrowed; the frame after they are read marks the highlight's slivers.
pub(super) fn ask_lit(ui: Ui, wanted: &std::cell::Cell<Option<usize>>) {
    if let Some(of) = wanted.get() {
        let (file, device) = (ui.file.get_untracked(), ui.device.get_untracked());
        ui.build(file, device, Part::Lit(of));
    }
}

/// The timeline as on screen (the visible range, the pinned and highlighted allocations; no hover) as
/// a PNG or an SVG download.
fn export(ui: Ui, segments: bool, canvas: NodeRef<Canvas>, svg: bool) {
    let Some(el) = canvas.get_untracked() else {
        return;
    };
    let (width, height) = (
        f64::from(el.client_width().max(1)),
        f64::from(el.client_height().max(1)),
    );
    let look = Look {
        hovered: None,
        ..untrack(|| Look::now(ui))
    };
    let name = format!(
        "{}_{}",
        super::export::stem(ui),
        if segments { "segments" } else { "timeline" }
    );
    if svg {
        let surface = Surface::svg(width, height);
        if paint(ui, segments, &surface, &look).is_some() {
            super::export::save_text(&format!("{name}.svg"), "image/svg+xml", &surface.finish());
        }
    } else if let Some((surface, png)) =
        Surface::offscreen(width, height, super::export::png_scale())
    {
        if paint(ui, segments, &surface, &look).is_some() {
            super::export::save_png(&format!("{name}.png"), &png);
        }
    }
}

/// Finds what `text` finds on device `device` of file `file` in the background (see `load::build::find`;
/// `asker` names who asks: a later find of the same asker replaces this one) and calls `then` with it as
/// a highlight and its bytes, if the file and device are still the ones shown. False when `text` is no
/// query (a find of `asker` still running is then abandoned: a cleared box highlights nothing).
pub fn find(
    ui: Ui,
    (file, device): (usize, i64),
    asker: &'static str,
    text: &str,
    then: impl FnOnce(Highlight, u64) + 'static,
) -> bool {
    let Some(query) = memograph_snapshot::analysis::search::parse(text) else {
        crate::load::build::stop_finding(asker);
        return false;
    };
    let text = text.to_string();
    let prepare = move |hits: Vec<u32>, bytes: u64| {
        let h = Highlight::of_found(format!("search: {text}"), hits)
            .made_by(super::MadeBy::Search(text.clone()));
        // Its bands, read before it is shown when too many to read in its frame.
        store::with_model(file, device, |m, _| m.blocks.want_lit(&h.allocations));
        (h, bytes)
    };
    crate::load::build::find(file, device, asker, query, prepare, move |(h, total)| {
        if (ui.file.get_untracked(), ui.device.get_untracked()) == (file, device) {
            then(h, total);
        }
    });
    true
}

/// What the last frame was drawn with: input maps pixels through the same [`Scale`].
#[derive(Clone, Copy)]
struct Drawn {
    plot: Plot,
    view: Viewport,
    time_axis: bool,
}

#[component]
pub fn TimelineView(ui: Ui, segments: bool) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let minimap = NodeRef::<Canvas>::new();
    let resized = super::window_resizes();
    let tooltip = RwSignal::new(None::<(f64, f64, String)>);
    // Where a drag began: pixel, the view then, and whether it has moved yet.
    let drag = StoredValue::new(None::<(f64, Viewport, bool)>);
    let brush = RwSignal::new(None::<(f64, f64)>);
    // The file (its open count, index and device) whose first frame was recorded last.
    let first_drawn = StoredValue::new(None::<(u32, usize, i64)>);
    // The file whose first frame was put off to the next animation frame.
    let deferred = StoredValue::new(None::<(u32, usize, i64)>);
    let drawn = StoredValue::new(None::<Drawn>);

    let has_times = move || with_timeline(ui, segments, |_, c| c.times.is_some()).unwrap_or(false);

    // Redraw whenever anything drawn changes.
    Effect::new(move |_| {
        // These only trigger the redraw: `with_timeline` reads them itself.
        resized.track();
        ui.detail.track();
        ui.by_category.track();
        let look = Look::now(ui);
        let brush_now = brush.get();
        let Some(el) = canvas.get() else { return };
        let shown = (
            ui.files.get_untracked(),
            ui.file.get_untracked(),
            ui.device.get_untracked(),
        );
        if first_drawn.get_value() != Some(shown) && deferred.get_value() != Some(shown) {
            // A file's first frame is drawn in a task of its own: its views were built in this one,
            // and on a page whose code is not optimised yet (a file chosen as it opens) the two made
            // one task of over 100 ms. Not at the next animation frame but in a task after it, so
            // that the browser styles and lays out the new views in its frame, not when the canvas
            // is measured (with the views' build, 95 ms on a cold page).
            deferred.set_value(Some(shown));
            leptos::prelude::request_animation_frame(move || {
                leptos::task::spawn_local(async move {
                    crate::load::next_task().await;
                    resized.update(|r| *r += 1);
                })
            });
            return;
        }
        let Some(surface) = Surface::of(&el) else {
            return;
        };
        let start = now();
        let done = paint(ui, segments, &surface, &look).map(|d| {
            drawn.set_value(Some(d));
            if let Some(m) = minimap.get().and_then(|m| Surface::of(&m)) {
                with_timeline(ui, segments, |t, c| {
                    let theme = colors::theme(look.dark);
                    render::minimap::draw(&m, t, c.ooms, d.view, brush_now, &theme)
                });
            }
        });
        if done.is_some() {
            let ms = now() - start;
            record_frame(ms);
            // A new file or device draws its first frame again.
            if first_drawn.get_value() != Some(shown) {
                first_drawn.set_value(Some(shown));
                let total = now() - ui.load_started.get_untracked();
                if let Some(app) = web_sys::window()
                    .and_then(|w| w.document())
                    .and_then(|d| d.get_element_by_id("app"))
                {
                    let _ = app.set_attribute("data-first-draw-ms", &format!("{total:.0}"));
                    // On the page's clock, for a benchmark that times from the user's choice.
                    let _ = app.set_attribute("data-first-draw-at", &format!("{:.0}", now()));
                    let _ = app.set_attribute("data-first-frame-ms", &format!("{ms:.0}"));
                }
            }
        }
    });

    // The view input moves from: the one asked for last, which the frame showing it may not have
    // drawn yet (wheel steps or key presses quicker than frames each count, not only the last).
    let current = move || {
        let full = || with_timeline(ui, segments, |t, _| t.full_view());
        ui.viewport.get_untracked().or_else(full)
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        ev.prevent_default();
        let px = ev.offset_x() as f64;
        let sideways = ev.shift_key() || ev.delta_x().abs() > ev.delta_y().abs();
        let next = with_scale(ui, segments, drawn.get_value(), current(), &|f, t, _| {
            let x_len = t.layout.x_len as f64;
            if sideways {
                let d = if ev.delta_x().abs() > ev.delta_y().abs() {
                    ev.delta_x()
                } else {
                    ev.delta_y()
                };
                f.pan_by_px(d / 1000.0 * f.plot.width, x_len)
            } else {
                f.zoom_at(px, (ev.delta_y() / 300.0).exp(), x_len)
            }
        });
        if next.is_some() {
            ui.viewport.set(next);
        }
    };

    // The band under the pointer: (band, allocation, px, py).
    let hit = move |ev: &web_sys::MouseEvent| -> Option<(usize, u32, f64, f64)> {
        let (px, py) = (ev.offset_x() as f64, ev.offset_y() as f64);
        with_scale(ui, segments, drawn.get_value(), None, &|f, t, _| {
            if !f.plot.contains_x(px) {
                return None;
            }
            let x = f.entry_at(px, t.layout.x_len);
            let b = t.layout.band_at(x, f.bytes_at(py))?;
            Some((b, t.layout.bands[b].allocation, px, py))
        })
        .flatten()
    };

    // The profiler annotations under the pointer in the strips above the plot (a few pixels either
    // side: a span without allocator events is a line), described.
    let annotation_hit = move |ev: &web_sys::MouseEvent| -> Option<String> {
        let (px, py) = (ev.offset_x() as f64, ev.offset_y() as f64);
        with_scale(ui, segments, drawn.get_value(), None, &|f, _, c| {
            let row = annotation_row_at(py, c.rows())?;
            describe_annotations(c.annotations, row, f.x_at(px - 3.0), f.x_at(px + 3.0))
        })
        .flatten()
    };

    // The out-of-memory marks within a few pixels of the pointer, described.
    let oom_hit = move |ev: &web_sys::MouseEvent| -> Option<String> {
        let px = ev.offset_x() as f64;
        with_scale(ui, segments, drawn.get_value(), None, &|f, _, c| {
            if c.ooms.is_empty() || !f.plot.contains_x(px) {
                return None;
            }
            describe_ooms(c.ooms, f.x_at(px - 3.0), f.x_at(px + 3.0))
        })
        .flatten()
    };

    let on_move = move |ev: web_sys::MouseEvent| {
        if let Some((x0, view, moved)) = drag.get_value() {
            if ev.buttons() & 1 == 1 {
                let dx = ev.offset_x() as f64 - x0;
                if moved || dx.abs() > 3.0 {
                    let next =
                        with_scale(ui, segments, drawn.get_value(), Some(view), &|f, t, _| {
                            f.pan_by_px(-dx, t.layout.x_len as f64)
                        });
                    if next.is_some() {
                        ui.viewport.set(next);
                        drag.set_value(Some((x0, view, true)));
                    }
                    return;
                }
            }
        }
        // A mark is a line over the bands: on it, the pointer reads the mark.
        if let Some(text) = oom_hit(&ev) {
            ui.hovered.set(None);
            tooltip.set(Some((ev.offset_x() as f64, ev.offset_y() as f64, text)));
            return;
        }
        match hit(&ev) {
            Some((band, allocation, px, py)) => {
                ui.hovered.set(Some((band, allocation)));
                let text = with_timeline(ui, segments, |t, c| t.describe(allocation, c.times))
                    .unwrap_or_default();
                tooltip.set(Some((px, py, text)));
            }
            None => {
                ui.hovered.set(None);
                let note = annotation_hit(&ev);
                tooltip.set(note.map(|text| (ev.offset_x() as f64, ev.offset_y() as f64, text)));
            }
        }
    };
    let on_down = move |ev: web_sys::MouseEvent| {
        if let Some(d) = drawn.get_value() {
            drag.set_value(Some((ev.offset_x() as f64, d.view, false)));
        }
    };
    let on_up = move |ev: web_sys::MouseEvent| {
        let was_drag = drag.get_value().is_some_and(|d| d.2);
        drag.set_value(None);
        if !was_drag {
            ui.pinned.set(hit(&ev).map(|h| h.1));
        }
    };
    let on_leave = move |_| {
        ui.hovered.set(None);
        tooltip.set(None);
        drag.set_value(None);
    };
    // Touch (a phone, a tablet): one finger pans, two pinch (what was under each finger stays under
    // it), a tap says what is under it and pins it, as hovering and clicking do. The mouse keeps the
    // handlers above: these take touch pointers only, and the canvas takes no browser gesture
    // (`touch-action: none`), nor the mouse events a browser makes of a tap (pointerdown's default).
    let touches = StoredValue::new(Touches::<Viewport>::default());
    let on_touch_down = move |ev: web_sys::PointerEvent| {
        let (Some((id, at)), Some(d)) = (super::finger(&ev), drawn.get_value()) else {
            return;
        };
        ev.prevent_default();
        if let Some(el) = canvas.get_untracked() {
            let _ = el.set_pointer_capture(id);
        }
        let view = current().unwrap_or(d.view);
        touches.update_value(|t| t.down(id, at, view));
    };
    let on_touch_move = move |ev: web_sys::PointerEvent| {
        let Some((id, at)) = super::finger(&ev) else {
            return;
        };
        let Some((start, gesture)) = touches.try_update_value(|t| t.moved(id, at)).flatten() else {
            return;
        };
        // What a tap said stood over what the fingers now move.
        if tooltip.with_untracked(Option::is_some) {
            tooltip.set(None);
            ui.hovered.set(None);
        }
        let next = with_scale(ui, segments, drawn.get_value(), Some(start), &|f, t, _| {
            let x_len = t.layout.x_len as f64;
            match gesture {
                Gesture::Pan { dx, .. } => f.pan_by_px(-dx, x_len),
                Gesture::Pinch { from, to } => f.pinched(from, to, x_len),
            }
        });
        if next.is_some() {
            ui.viewport.set(next);
        }
    };
    let on_touch_up = move |ev: web_sys::PointerEvent| {
        let Some((id, _)) = super::finger(&ev) else {
            return;
        };
        let view = current();
        let tap = touches
            .try_update_value(|t| view.and_then(|v| t.up(id, v)))
            .flatten();
        if tap.is_some() {
            let ev: &web_sys::MouseEvent = ev.as_ref();
            on_move(ev.clone());
            ui.pinned.set(hit(ev).map(|h| h.1));
        }
    };
    let on_touch_cancel = move |_| touches.update_value(|t| t.cancel());
    // The out-of-memory mark and the profiler annotation the keyboard went to last (o, O; a, A).
    let oom_at = StoredValue::new(None::<usize>);
    let annotation_at = StoredValue::new(None::<usize>);
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if super::browsers_key(&ev) {
            return;
        }
        let Some(d) = drawn.get_value() else { return };
        let Some(x_len) = with_timeline(ui, segments, |t, _| t.layout.x_len as f64) else {
            return;
        };
        let view = current().unwrap_or(d.view);
        let next = match ev.key().as_str() {
            "+" | "=" => Some(view.zoom(0.5, 0.5, x_len)),
            "-" | "_" => Some(view.zoom(2.0, 0.5, x_len)),
            "ArrowLeft" => Some(view.pan(-0.2, x_len)),
            "ArrowRight" => Some(view.pan(0.2, x_len)),
            // The trace's start or end, the span kept.
            "Home" => Some(view.showing(0.0, x_len)),
            "End" => Some(view.showing(x_len, x_len)),
            "0" => None,
            // y fitted to the highest point in view, as the minimap's brush fits it.
            "f" => with_timeline(ui, segments, |t, _| t.fitted(view.x0, view.x1)),
            "Escape" => {
                ui.pinned.set(None);
                tooltip.set(None);
                return;
            }
            // The next (o) or previous (O) out-of-memory mark: in view, and described where it is.
            "o" | "O" => {
                ev.prevent_default();
                let Some(entries) = with_timeline(ui, segments, |_, c| {
                    c.ooms.iter().map(|m| m.entry).collect::<Vec<_>>()
                }) else {
                    return;
                };
                let Some(k) = cycled(oom_at.get_value(), entries.len(), ev.key() == "o") else {
                    return;
                };
                oom_at.set_value(Some(k));
                let x = f64::from(entries[k]) + 0.5;
                let next = view.showing(x, x_len);
                ui.viewport.set(Some(next));
                let tip = with_scale(ui, segments, Some(d), Some(next), &|f, _, c| {
                    Some((f.px(x), f.plot.top + 12.0, describe_ooms(c.ooms, x, x)?))
                });
                tooltip.set(tip.flatten());
                return;
            }
            // The next (a) or previous (A) profiler annotation of the strips above the plot: in view,
            // and described under its strip, as the pointer on it reads it.
            "a" | "A" => {
                ev.prevent_default();
                // Those drawn (the strips hold a few rows), in order of start.
                let Some(drawn_spans) = with_timeline(ui, segments, |_, c| {
                    (c.annotations.iter().enumerate())
                        .filter(|(_, s)| s.row < ANNOTATION_ROWS)
                        .map(|(i, _)| i)
                        .collect::<Vec<_>>()
                }) else {
                    return;
                };
                let forward = ev.key() == "a";
                let Some(k) = cycled(annotation_at.get_value(), drawn_spans.len(), forward) else {
                    return;
                };
                annotation_at.set_value(Some(k));
                let Some((start, end, row, text)) = with_timeline(ui, segments, |_, c| {
                    let s = &c.annotations[drawn_spans[k]];
                    (s.start, s.end, s.row, s.describe())
                }) else {
                    return;
                };
                let next = view.showing_range(start, end, x_len);
                ui.viewport.set(Some(next));
                let tip = with_scale(ui, segments, Some(d), Some(next), &|f, _, _| {
                    let (top, height) = annotation_strip(row);
                    let x = f.px(start.max(next.x0)).max(f.plot.left);
                    (x, top + height, text.clone())
                });
                tooltip.set(tip);
                return;
            }
            // Down pins the largest allocation in view, then the next largest; Up goes back.
            "ArrowDown" | "ArrowUp" => {
                ev.prevent_default();
                let down = ev.key() == "ArrowDown";
                let pinned = ui.pinned.get_untracked();
                let (x0, x1) = (view.x0.max(0.0) as u32, view.x1.max(0.0).ceil() as u32);
                let next = with_timeline(ui, segments, |t, _| {
                    let largest = t.layout.largest_in(x0, x1, KEYED_LARGEST);
                    let allocation = |i: usize| t.layout.bands[i].allocation;
                    let at = pinned.and_then(|p| largest.iter().position(|&i| allocation(i) == p));
                    let k = match at {
                        Some(k) if down => (k + 1).min(largest.len().saturating_sub(1)),
                        Some(k) => k.saturating_sub(1),
                        None => 0,
                    };
                    largest.get(k).map(|&i| allocation(i))
                });
                if let Some(Some(allocation)) = next {
                    ui.pinned.set(Some(allocation));
                }
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        ui.viewport.set(next);
    };

    // Minimap brush: drag to choose a range; y fits the range's maximum.
    let brush_start = StoredValue::new(None::<f64>);
    let minimap_x = move |ev: &web_sys::MouseEvent| -> Option<f64> {
        let el = minimap.get()?;
        let x_len = with_timeline(ui, segments, |t, _| t.layout.x_len as f64)?;
        Some(render::minimap::x_at(
            el.client_width() as f64,
            ev.offset_x() as f64,
            x_len,
        ))
    };
    // Pointer events: a finger brushes as the mouse does, and the brush held (captured) ends where
    // it is let go, on the minimap or off it.
    let on_brush_down = move |ev: web_sys::PointerEvent| {
        if let Some(x) = minimap_x(&ev) {
            ev.prevent_default();
            if let Some(el) = minimap.get_untracked() {
                let _ = el.set_pointer_capture(ev.pointer_id());
            }
            brush_start.set_value(Some(x));
            brush.set(Some((x, x)));
        }
    };
    let on_brush_move = move |ev: web_sys::PointerEvent| {
        if let (Some(a), Some(x)) = (brush_start.get_value(), minimap_x(&ev)) {
            brush.set(Some((a, x)));
        }
    };
    let on_brush_up = move |ev: web_sys::PointerEvent| {
        let Some(a) = brush_start.get_value() else {
            return;
        };
        brush_start.set_value(None);
        brush.set(None);
        let Some(b) = minimap_x(&ev) else { return };
        let span = ui.viewport.get_untracked().map(|v| v.span());
        if let Some(v) = with_timeline(ui, segments, |t, _| t.brushed(a, b, span)) {
            ui.viewport.set(Some(v));
        }
    };

    // Drawn and total allocations, the peak, whether the layout is the slider's; `None` while the
    // timeline is being built.
    let stats = move || {
        let detail = ui.detail.get();
        with_timeline(ui, segments, |t, _| {
            (t.layout.drawn, t.layout.total, t.peak, t.is_at(detail))
        })
    };
    view! {
        <div class="timeline-view">
            <div class="view-toolbar">
                <span class="peak" data-testid="peak" title=move || {
                    stats().map(|(_, _, p, _)| format!("{} bytes {}", p.bytes, at_entry(p.event)))
                }>
                    {move || match stats() {
                        Some((_, _, p, _)) => {
                            let what = if segments { "Reserved peak" } else { "Peak" };
                            format!("{what} {} ({} bytes)", bytes(p.bytes), grouped(p.bytes))
                        }
                        None if segments => "Building the segment timeline…".to_string(),
                        None => format!("Building device {}'s timeline…", ui.device.get()),
                    }}
                </span>
                <Show when=move || !segments>
                    <label class="slider" title="Share of allocations drawn as their own band (largest first); the rest are summarized">
                        "Detail"
                        <input type="range" min="0" max="100" step="1" data-testid="detail-slider"
                            prop:value=move || (ui.detail.get() * 100.0).round().to_string()
                            on:input=move |ev| {
                                if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                                    // The bands change: nothing hovered survives them.
                                    ui.hovered.set(None);
                                    tooltip.set(None);
                                    ui.detail.set(v.clamp(0.0, 100.0) / 100.0);
                                }
                            } />
                        <span class="muted" data-testid="detail-drawn">{move || {
                            let percent = (ui.detail.get() * 100.0).round();
                            match stats() {
                                Some((drawn, total, _, true)) => format!("{percent} % · {} of {}", grouped(drawn as u64), count(total as u64, "allocation", "allocations")),
                                Some((_, total, _, false)) => format!("{percent} % · laying out {}…", count(total as u64, "allocation", "allocations")),
                                None => String::new(),
                            }
                        }}</span>
                    </label>
                </Show>
                <Show when=move || !segments>
                    <SearchBox ui=ui />
                </Show>
                <Show when=has_times>
                    <label class="check" title="x axis: wall-clock time instead of event index">
                        <input type="checkbox" prop:checked=move || ui.time_axis.get()
                            on:change=move |ev| ui.time_axis.set(event_target_checked(&ev)) />
                        "Wall clock"
                    </label>
                </Show>
                <button class="button small" title="Show everything (0)" on:click=move |_| ui.viewport.set(None)>"Reset zoom"</button>
                <super::export::ExportButtons testid=if segments { "export-segments" } else { "export-timeline" }
                    png=move || export(ui, segments, canvas, false)
                    svg=move || export(ui, segments, canvas, true) />
                <Show when=move || !segments>
                    <label class="check" title="Colour allocations by what they are (parameters, gradients, optimizer state, activations…)">
                        <input type="checkbox" data-testid="color-by-category" prop:checked=move || ui.by_category.get()
                            on:change=move |ev| {
                                ui.highlight_category.set(None);
                                ui.by_category.set(event_target_checked(&ev));
                            } />
                        "Colour by category"
                    </label>
                </Show>
                <Show when=move || !segments && ui.highlight.get().is_some()>
                    <HighlightChip ui=ui />
                </Show>
                <span class="muted hint hint-mouse">"wheel: zoom · drag: pan · click: stack · ↓ ↑: the largest in view · Esc: unpin · ?: keys"</span>
                <span class="muted hint hint-touch">"pinch: zoom · drag: pan · tap: stack"</span>
            </div>
            <HistoryNote ui=ui />
            <Show when=move || !segments && ui.by_category.get()>
                <div class="legend" data-testid="category-legend">
                    {move || {
                        ui.files.get();
                        let (file, device) = ui.current()?;
                        let rows = store::with_model(file, device, |m, s| {
                            m.category_totals(s, m.blocks.peak.event)
                        })?;
                        let n = rows.len();
                        Some(rows.into_iter().enumerate().filter(|(_, (_, b))| *b > 0).map(|(k, (name, b))| {
                            let k = k as u16;
                            view! {
                                <button class="legend-item" class:lit=move || ui.highlight_category.get() == Some(k)
                                    title="Highlight these allocations on the timeline"
                                    on:click=move |_| ui.highlight_category.update(|h| *h = if *h == Some(k) { None } else { Some(k) })>
                                    <span class="swatch" style=format!("background:{}", colors::category(k, n))></span>
                                    {format!("{name} {}", bytes(b))}
                                </button>
                            }
                        }).collect_view())
                    }}
                    <span class="muted">"at the peak"</span>
                </div>
            </Show>
            <div class="timeline-body">
                <div class="plot">
                    <canvas class="timeline-canvas" data-testid="timeline" tabindex="0" node_ref=canvas
                        aria-label="Timeline: + and - zoom, Left and Right pan, Home and End go to the start and the end, Down and Up pin the largest allocations in view one by one (their stack beside), O goes to the next out-of-memory mark, A to the next profiler annotation, F fits the height to what is in view, Escape unpins, 0 shows all"
                        on:wheel=on_wheel on:mousemove=on_move on:mousedown=on_down on:mouseup=on_up
                        on:mouseleave=on_leave on:keydown=on_key on:pointerdown=on_touch_down
                        on:pointermove=on_touch_move on:pointerup=on_touch_up
                        on:pointercancel=on_touch_cancel></canvas>
                    {move || tooltip.get().map(|(x, y, text)| view! {
                        <div class="tooltip" style=super::tooltip_style(x, y, canvas)>{text}</div>
                    })}
                    <canvas class="minimap" node_ref=minimap title="Drag to zoom to a range"
                        on:pointerdown=on_brush_down on:pointermove=on_brush_move on:pointerup=on_brush_up
                        on:pointercancel=move |_| { brush_start.set_value(None); brush.set(None); }></canvas>
                </div>
                <StackPanel ui=ui segments=segments />
            </div>
        </div>
    }
}

/// What the shown device's snapshot cannot tell (no allocator history, or no memory at all), above
/// the views that would otherwise look empty or flat; nothing when it has a trace.
#[component]
pub fn HistoryNote(ui: Ui) -> impl IntoView {
    move || {
        let (file, device) = ui.current()?;
        let said = store::with_file(file, |f| summary::missing_history(&f.snapshot, device));
        said.flatten()
            .map(|note| view! { <div class="view-note" data-testid="history-note">{note}</div> })
    }
}

/// What is highlighted (from the analysis panels), with a button that clears it.
#[component]
pub fn HighlightChip(ui: Ui) -> impl IntoView {
    view! {
        <span class="chip" data-testid="highlight" title="Highlighted on the timelines">
            {move || ui.highlight.get().map(|h| format!("Highlighted: {} ({})", h.label, count(h.allocations.len() as u64, "allocation", "allocations"))).unwrap_or_default()}
            <button class="chip-close" title="Clear the highlight" on:click=move |_| {
                ui.highlight.set(None);
                ui.compare_path.set(None);
            }>"×"</button>
        </span>
    }
}

/// Find: a query (address, size, frame text, category, compile_context, user_metadata: see
/// `analysis::search`) highlights its matches on the timeline; Enter and Shift+Enter step through them,
/// pinning each so its stack shows.
#[component]
fn SearchBox(ui: Ui) -> impl IntoView {
    let found = RwSignal::new(None::<(String, std::sync::Arc<Vec<u32>>, u64)>);
    let cursor = RwSignal::new(None::<usize>);
    // A query being run (in the background: a million allocations take a while).
    let searching = RwSignal::new(false);
    let run = move |text: String| {
        cursor.set(None);
        let at = (ui.file.get_untracked(), ui.device.get_untracked());
        let query = text.clone();
        let started = find(ui, at, "search", &query, move |h, total| {
            let _ = searching.try_set(false);
            let _ = found.try_set(Some((text, h.allocations.clone(), total)));
            ui.highlight.set(Some(h));
        });
        searching.set(started);
        if !started {
            found.set(None);
            if ui
                .highlight
                .get_untracked()
                .is_some_and(|h| h.label.starts_with("search: "))
            {
                ui.highlight.set(None);
            }
        }
    };
    // A search of another file or device never reports back to this box.
    Effect::new(move |shown: Option<(usize, i64)>| {
        let now = (ui.file.get(), ui.device.get());
        if shown.is_some_and(|s| s != now) {
            searching.set(false);
        }
        now
    });
    let step = move |back: bool| {
        let Some((_, hits, _)) = found.get_untracked() else {
            return;
        };
        if hits.is_empty() {
            return;
        }
        let n = hits.len();
        let k = match (cursor.get_untracked(), back) {
            (None, false) => 0,
            (None, true) => n - 1,
            (Some(k), false) => (k + 1) % n,
            (Some(k), true) => (k + n - 1) % n,
        };
        cursor.set(Some(k));
        ui.pinned.set(Some(hits[k]));
    };
    let count = move || match found.get() {
        _ if searching.get() => "searching…".to_string(),
        None => String::new(),
        Some((_, hits, total)) => {
            let at = cursor
                .get()
                .map(|k| format!("{} of ", grouped(k as u64 + 1)))
                .unwrap_or_default();
            format!(
                "{at}{} match{} · {}",
                grouped(hits.len() as u64),
                if hits.len() == 1 { "" } else { "es" },
                bytes(total)
            )
        }
    };
    // Back from another view: the search still highlights, so the box shows it and counts again.
    let initial = ui
        .highlight
        .get_untracked()
        .and_then(|h| h.label.strip_prefix("search: ").map(str::to_string));
    if let Some(text) = initial.clone() {
        run(text);
    }
    view! {
        <label class="search" title="Find allocations: an address (b7f4…_3, 0x7f4…), a size (>100MB, <4KiB, 1.0 GiB), text in a frame (models.py:174, forward), a category, compile_context or user_metadata. Enter / Shift+Enter step through the matches.">
            <input type="search" class="select" placeholder="Find…" data-testid="search"
                prop:value=initial.unwrap_or_default()
                on:input=move |ev| run(event_target_value(&ev))
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Enter" {
                        ev.prevent_default();
                        step(ev.shift_key());
                    }
                } />
            <span class="muted" data-testid="search-count">{count}</span>
        </label>
    }
}
