//! The page's part of the rehearsal load (see the module's header): decode the synthetic snapshot the
//! spare worker parsed, build its model and the parts other views use, draw its timeline on a canvas
//! that is never shown, then drop it all.

use wasm_bindgen::JsCast;

use memograph_snapshot::analysis::lifetimes::Lifetimes;

use super::js::now;
use super::page::loading;
use super::protocol::{Arrivals, Encoded};
use super::slices::{decode_sliced, next_task, Pauser};
use crate::render::{colors, minimap, timeline, Surface};
use crate::scale::{Plot, Scale};
use crate::view_model::{allocator_state_at, event_rows, DeviceModel, TimelineModel};

/// A canvas's first 2D context and first text, on a small canvas that is never shown: what the first
/// drawing of a page pays for once, apart from the drawing.
fn first_text() {
    if let Some(s) = hidden_surface(64, 16) {
        s.ctx.set_font("11px system-ui, sans-serif");
        let _ = s.ctx.fill_text("0 B", 0.0, 12.0);
    }
}

/// Draws `t` on a canvas of a timeline's size that is never shown.
fn draw_timeline_unseen(t: &TimelineModel) {
    if let Some(plot) = hidden_surface(1400, 560) {
        let scale = Scale::new(t.full_view(), Plot::of(plot.width, plot.height, 0), None);
        let theme = colors::theme(false);
        timeline::draw(&plot, &scale, t, &timeline::Overlay::plain(true), &theme);
    }
}

/// Draws `t`'s minimap on a canvas that is never shown.
fn draw_minimap_unseen(t: &TimelineModel) {
    if let Some(map) = hidden_surface(1400, 60) {
        minimap::draw(&map, t, &[], t.full_view(), None, &colors::theme(false));
    }
}

/// Runs the page's rehearsal on the model the worker sent, [`REHEARSAL_ROUNDS`] times, each stage in
/// tasks of its own (sliced as a load's are): on the benchmark's machine the first round took the
/// page's thread 28 ms, all twelve 175 ms, done about 640 ms after the page started. A file chosen
/// meanwhile stops the rehearsal at its next stage ([`loading`]), and before each drawing.
pub fn rehearse(model: &Encoded) {
    let model = model.clone();
    leptos::task::spawn_local(async move {
        let started = now();
        for round in 0..REHEARSAL_ROUNDS {
            if !rehearse_once(&model, round == 0).await {
                return;
            }
        }
        web_sys::console::debug_1(
            &format!(
                "memograph rehearsal: done {:.0} ms after the page started, {:.0} ms after it began",
                now(),
                now() - started
            )
            .into(),
        );
    });
}

/// How many times the page rehearses a load. The browser optimises a function once it has run
/// enough, and one pass over the rehearsal's model is not enough for the decoder, which then ran
/// on baseline code through a real file's decode, its optimising compile (25–35 ms) ending after
/// it; after 12 passes it is optimised before the file comes (8 were not enough; traced with
/// scripts/compile_times.mjs). Warm 177 MB load, A/B of 8 each: decode median 25 → 15 ms, first
/// timeline 446 → 378 ms (one run), 439 → 422 (another).
const REHEARSAL_ROUNDS: usize = 12;

/// The detail the rehearsal lays its timeline out at. Under 1, so that what a big file's first layout
/// runs and a small file's skips is optimised too: choosing the largest allocations to draw, the
/// outline of the summarized band (a point per trace entry then), its drawing. At the default (all
/// of the rehearsal's 8 400 allocations drawn) a warm 177 MB load ran them on baseline code: the
/// choice took 9–12 ms where optimised it takes 3, the parts after the layout 6–9 ms where they take
/// 3. Warm A/B, 8 loads each: the page's model 90–92 → 69–78 ms, first timeline median 715 → 682.
const REHEARSAL_DETAIL: f64 = 0.25;

/// One round of [`rehearse`] (the `first` draws the page's first text too): false once a file is
/// loading.
async fn rehearse_once(model: &Encoded, first: bool) -> bool {
    let mut pause = Pauser::new();
    // The same (sliced) functions a load runs, so that those are what the browser optimises.
    let sizes = memograph_snapshot::codec::Sizes::whole(model.len());
    let Ok(snapshot) = decode_sliced(Arrivals::whole(model), sizes).await else {
        return false;
    };
    if !next_stage().await {
        return false;
    }
    let device = snapshot.default_device().unwrap_or(0);
    let lifetimes = Lifetimes::of_sliced(&snapshot, device, &mut pause).await;
    if !next_stage().await {
        return false;
    }
    let model =
        DeviceModel::at_detail_sliced(&snapshot, device, lifetimes, REHEARSAL_DETAIL, &mut pause)
            .await;
    if !next_stage().await {
        return false;
    }
    let end = model.blocks.layout.x_len as i64 - 1;
    let _ = allocator_state_at(&model, &snapshot, end);
    let _ = event_rows(&model, &snapshot, 0..64);
    // Each drawing is one task that cannot give the thread back (on code not yet optimised, the
    // timeline's took 40 ms of CPU and, sharing two cores with a load that had just begun, 90 ms
    // of the page's thread): neither starts once a file is loading.
    if first {
        if !next_stage().await {
            return false;
        }
        first_text();
    }
    if !next_stage().await {
        return false;
    }
    draw_timeline_unseen(&model.blocks);
    if !next_stage().await {
        return false;
    }
    draw_minimap_unseen(&model.blocks);
    next_stage().await
}

/// Waits for a task of its own; false if a file is loading by then (the rehearsal stops).
async fn next_stage() -> bool {
    next_task().await;
    !loading()
}

/// A drawing surface on a canvas that is not in the document.
fn hidden_surface(width: u32, height: u32) -> Option<Surface> {
    let canvas = crate::render::detached_canvas()?;
    canvas.set_width(width);
    canvas.set_height(height);
    let ctx = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    Some(Surface {
        ctx,
        width: width as f64,
        height: height as f64,
        pixel_ratio: Some(1.0),
    })
}
