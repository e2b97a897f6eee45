//! Renderer tests in a real browser (wasm-bindgen-test in headless Chromium): draw a real snapshot on a
//! canvas and read pixels back.

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

use super::colors;
use super::timeline::{draw, frame, Overlay};
use super::Surface;
use crate::view_model::DeviceModel;
use crate::viewport::Viewport;

wasm_bindgen_test_configure!(run_in_browser);

const ADAM: &[u8] = include_bytes!("../../../shared/fixtures/a0kuma_adam.pickle");

fn canvas(width: u32, height: u32) -> web_sys::HtmlCanvasElement {
    let document = web_sys::window().unwrap().document().unwrap();
    let c: web_sys::HtmlCanvasElement = document
        .create_element("canvas")
        .unwrap()
        .dyn_into()
        .unwrap();
    c.style()
        .set_property("width", &format!("{width}px"))
        .unwrap();
    c.style()
        .set_property("height", &format!("{height}px"))
        .unwrap();
    document.body().unwrap().append_child(&c).unwrap();
    c
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn pixel(s: &Surface, x: f64, y: f64) -> [u8; 3] {
    let dpr = web_sys::window().unwrap().device_pixel_ratio().max(1.0);
    let data = s
        .ctx
        .get_image_data((x * dpr).round(), (y * dpr).round(), 1.0, 1.0)
        .unwrap()
        .data();
    [data[0], data[1], data[2]]
}

#[wasm_bindgen_test]
fn the_engine_reads_a_real_snapshot_in_the_browser() {
    let s = memograph_snapshot::read_bytes(ADAM).unwrap();
    let summary = memograph_snapshot::analysis::summary::summarize(&s);
    assert_eq!(summary[0].timeline_peak_bytes, 217_763_364);
    let back = memograph_snapshot::codec::decode(&memograph_snapshot::codec::encode(&s)).unwrap();
    assert_eq!(
        memograph_snapshot::analysis::summary::summarize(&back),
        summary
    );
}

#[wasm_bindgen_test]
fn bands_have_their_allocation_colour_at_known_points_and_the_sky_is_empty() {
    let s = memograph_snapshot::read_bytes(ADAM).unwrap();
    let model = DeviceModel::new(&s, 0);
    let t = &model.blocks;
    let el = canvas(600, 400);
    let surface = Surface::of(&el).unwrap();
    let view = Viewport::full(t.layout.x_len as f64, t.peak.bytes as f64);
    let f = frame(&surface, view, None, 0);
    let theme = colors::theme(false);
    let overlay = Overlay::plain(false);
    draw(&surface, &f, t, &overlay, &theme);

    // The middle of every band at least 6 px tall, just before the end of the trace, has its colour.
    let x = t.layout.x_len - 1;
    let mut checked = 0;
    for b in &t.layout.bands {
        if b.start > x || b.end <= x {
            continue;
        }
        let bottom = t.layout.offset_at(b, x) as f64;
        let (y0, y1) = (f.py(bottom), f.py(bottom + b.size as f64));
        if y0 - y1 < 6.0 {
            continue;
        }
        let px = f.px(x as f64 + 0.5);
        assert_eq!(
            pixel(&surface, px, (y0 + y1) / 2.0),
            rgb(colors::allocation(b.allocation)),
            "band {:?}",
            b
        );
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} bands were tall enough");
    // Above the peak there is only background.
    assert_eq!(
        pixel(&surface, f.px(1.0), f.top + 2.0),
        rgb(theme.background)
    );
}

#[wasm_bindgen_test]
fn detail_zero_draws_one_summarized_band() {
    let s = memograph_snapshot::read_bytes(ADAM).unwrap();
    let mut model = DeviceModel::new(&s, 0);
    model.blocks.set_detail(0.0);
    let t = &model.blocks;
    assert!(t.layout.bands.is_empty());
    let el = canvas(600, 400);
    let surface = Surface::of(&el).unwrap();
    let f = frame(
        &surface,
        Viewport::full(t.layout.x_len as f64, t.peak.bytes as f64),
        None,
        0,
    );
    let theme = colors::theme(true);
    let overlay = Overlay::plain(true);
    draw(&surface, &f, t, &overlay, &theme);
    let x = t.peak.event as f64 + 0.5;
    assert_eq!(
        pixel(&surface, f.px(x) - 3.0, f.py(t.peak.bytes as f64 / 2.0)),
        rgb(theme.summarized)
    );
}

/// The colour at backing-store pixel `(x, y)` of `canvas`.
fn backing_pixel(canvas: &web_sys::HtmlCanvasElement, x: i32, y: i32) -> [u8; 3] {
    let ctx: web_sys::CanvasRenderingContext2d = canvas
        .get_context("2d")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap();
    let data = ctx
        .get_image_data(f64::from(x), f64::from(y), 1.0, 1.0)
        .unwrap()
        .data();
    [data[0], data[1], data[2]]
}

#[wasm_bindgen_test]
fn component_bars_are_drawn_in_their_colours_where_the_chart_says_they_are() {
    console_error_panic_hook::set_once();
    let s = memograph_snapshot::read_bytes(ADAM).unwrap();
    let mut model = DeviceModel::new(&s, 0);
    let report = model.report(&s, (None, true)).clone();
    let el = canvas(640, 320);
    let (bars, _) = super::charts::draw(&el, false, |a, t| {
        memograph_charts::component_bars(a, "", &report, t)
    })
    .unwrap();
    assert_eq!(bars.count, 5);
    assert!(!bars.horizontal);
    let max = report.components.iter().map(|c| c.bytes).max().unwrap();
    let width = bars.x.1 - bars.x.0;
    let mut checked = 0;
    for (k, c) in report.components.iter().enumerate() {
        let x = bars.x.0 + width * (2 * k as i32 + 1) / 10;
        let y = bars.y.1 - 3;
        assert_eq!(bars.at(x, y), Some(k));
        if c.bytes < max / 10 {
            continue;
        }
        let expected = memograph_charts::component_color(&report, c.component);
        assert_eq!(
            backing_pixel(&el, x, y),
            [expected.0, expected.1, expected.2],
            "{:?}",
            c.component
        );
        checked += 1;
    }
    assert!(checked >= 1);
    // The chart's background is the light theme's.
    assert_eq!(backing_pixel(&el, 2, 2), [255, 255, 255]);
}

#[wasm_bindgen_test]
fn a_highlighted_allocation_is_drawn_even_when_thinner_than_a_pixel() {
    let s = memograph_snapshot::read_bytes(ADAM).unwrap();
    let model = DeviceModel::new(&s, 0);
    let t = &model.blocks;
    // The smallest allocation live at the end is far thinner than a pixel on a 120 px canvas.
    let x = t.layout.x_len - 1;
    let band = t
        .layout
        .bands
        .iter()
        .filter(|b| b.start <= x && b.end > x)
        .min_by_key(|b| b.size)
        .unwrap();
    let el = canvas(600, 120);
    let surface = Surface::of(&el).unwrap();
    let f = frame(
        &surface,
        Viewport::full(t.layout.x_len as f64, t.peak.bytes as f64),
        None,
        0,
    );
    assert!(f.py(0.0) - f.py(band.size as f64) < 0.25);
    let theme = colors::theme(false);
    let lit = [band.allocation];
    let overlay = Overlay {
        highlighted: &lit,
        ..Overlay::plain(false)
    };
    draw(&surface, &f, t, &overlay, &theme);
    let y = f.py(t.layout.offset_at(band, x) as f64);
    let px = f.px(x as f64 + 0.5);
    let near: Vec<[u8; 3]> = (-1..=1)
        .map(|d| pixel(&surface, px, y + f64::from(d)))
        .collect();
    assert!(
        near.iter().any(|p| p.iter().all(|&c| c < 90)),
        "no outline near y={y}: {near:?}"
    );
}
