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
    let overlay = Overlay {
        annotations: &[],
        hovered: None,
        pinned: None,
        show_peak: false,
        highlighted: &[],
        categories: None,
    };
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
    let overlay = Overlay {
        annotations: &[],
        hovered: None,
        pinned: None,
        show_peak: true,
        highlighted: &[],
        categories: None,
    };
    draw(&surface, &f, t, &overlay, &theme);
    let x = t.peak.event as f64 + 0.5;
    assert_eq!(
        pixel(&surface, f.px(x) - 3.0, f.py(t.peak.bytes as f64 / 2.0)),
        rgb(theme.summarized)
    );
}
