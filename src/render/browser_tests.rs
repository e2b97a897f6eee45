//! Renderer tests in a real browser (wasm-bindgen-test in headless Chromium): draw a snapshot on a canvas
//! and read pixels back. The snapshot is `synth`'s (first tier: nothing outside the repository).

use memograph_snapshot::analysis::report::Component;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

use super::colors;
use super::timeline::{draw, Overlay};
use super::Surface;
use crate::scale::{Plot, Scale};
use crate::view_model::{DeviceModel, OomMark, TimelineModel};

fn synth() -> (
    memograph_snapshot::Snapshot,
    memograph_snapshot::synth::Written,
) {
    let written = memograph_snapshot::synth::pickle(120);
    (
        memograph_snapshot::read_bytes(&written.bytes).unwrap(),
        written,
    )
}

/// The whole timeline on `surface`.
fn full<P: super::Pen>(surface: &Surface<P>, t: &TimelineModel) -> Scale<'static> {
    Scale::new(
        t.full_view(),
        Plot::of(surface.width, surface.height, 0),
        None,
    )
}

wasm_bindgen_test_configure!(run_in_browser);

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
fn the_engine_reads_a_snapshot_in_the_browser_with_its_known_figures() {
    let (s, written) = synth();
    let summary = memograph_snapshot::analysis::summary::summarize(&s);
    assert_eq!(summary[0].timeline_peak_bytes, written.peak_bytes);
    let back = memograph_snapshot::codec::decode(&memograph_snapshot::codec::encode(&s)).unwrap();
    assert_eq!(
        memograph_snapshot::analysis::summary::summarize(&back),
        summary
    );
}

#[wasm_bindgen_test]
fn bands_have_their_allocation_colour_at_known_points_and_the_sky_is_empty() {
    let (s, _) = synth();
    let model = DeviceModel::new(&s, 0);
    let t = &model.blocks;
    let el = canvas(600, 400);
    let surface = Surface::of(&el).unwrap();
    let f = full(&surface, t);
    let theme = colors::theme(false);
    let overlay = Overlay::plain(false);
    draw(&surface, &f, t, &overlay, &theme);

    // The middle of every band at least 6 px tall, a few pixels before the end of the trace (well inside
    // the plot), has its colour.
    let x = t.layout.x_len - 60;
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
            "band {:?} at ({px}, {y0}..{y1})",
            b
        );
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} bands were tall enough");
    // Above the peak there is only background.
    assert_eq!(
        pixel(&surface, f.px(1.0), f.plot.top + 2.0),
        rgb(theme.background)
    );
}

#[wasm_bindgen_test]
fn detail_zero_draws_one_summarized_band() {
    let (s, _) = synth();
    let mut model = DeviceModel::new(&s, 0);
    model.blocks.set_detail(0.0);
    let t = &model.blocks;
    assert!(t.layout.bands.is_empty());
    let el = canvas(600, 400);
    let surface = Surface::of(&el).unwrap();
    let f = full(&surface, t);
    let theme = colors::theme(true);
    let overlay = Overlay::plain(true);
    draw(&surface, &f, t, &overlay, &theme);
    let x = t.peak.event as f64 + 0.5;
    assert_eq!(
        pixel(&surface, f.px(x) - 3.0, f.py(t.peak.bytes as f64 / 2.0)),
        rgb(theme.summarized)
    );
}

/// `canvas`'s 2D context.
fn context_2d(canvas: &web_sys::HtmlCanvasElement) -> web_sys::CanvasRenderingContext2d {
    canvas
        .get_context("2d")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap()
}

/// The colour at backing-store pixel `(x, y)` of `canvas`.
fn backing_pixel(canvas: &web_sys::HtmlCanvasElement, x: i32, y: i32) -> [u8; 3] {
    let data = context_2d(canvas)
        .get_image_data(f64::from(x), f64::from(y), 1.0, 1.0)
        .unwrap()
        .data();
    [data[0], data[1], data[2]]
}

#[wasm_bindgen_test]
fn component_bars_are_drawn_in_their_colours_where_the_chart_says_they_are() {
    console_error_panic_hook::set_once();
    let (s, _) = synth();
    let mut model = DeviceModel::new(&s, 0);
    let report = model.report(&s, (None, true)).clone();
    let el = canvas(640, 320);
    let (bars, _) = super::charts::draw(&el, false, |a, t| {
        memograph_charts::component_bars(a, "", &report, t)
    })
    .unwrap();
    assert_eq!(bars.count, Component::ALL.len());
    assert!(!bars.horizontal);
    let max = report.components.iter().map(|c| c.bytes).max().unwrap();
    let width = bars.x.1 - bars.x.0;
    let mut checked = 0;
    for (k, c) in report.components.iter().enumerate() {
        let slots = 2 * Component::ALL.len() as i32;
        let x = bars.x.0 + width * (2 * k as i32 + 1) / slots;
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
    let (s, _) = synth();
    let model = DeviceModel::new(&s, 0);
    let t = &model.blocks;
    // The lowest band live near the end, on a y scale where it is an eighth of a pixel tall.
    let x = t.layout.x_len - 60;
    let band = t
        .layout
        .bands
        .iter()
        .filter(|b| b.start <= x && b.end > x)
        .min_by(|a, b| {
            t.layout
                .offset_at(a, x)
                .total_cmp(&t.layout.offset_at(b, x))
        })
        .unwrap();
    let el = canvas(600, 120);
    let surface = Surface::of(&el).unwrap();
    let plot = Plot::of(surface.width, surface.height, 0);
    let view = crate::viewport::Viewport {
        y_max: band.size as f64 * 8.0 * plot.height,
        ..t.full_view()
    };
    let f = Scale::new(view, plot, None);
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

#[wasm_bindgen_test]
fn a_hovered_band_from_an_older_layout_is_ignored_not_a_crash() {
    let (s, _) = synth();
    let mut model = DeviceModel::new(&s, 0);
    let el = canvas(600, 300);
    let surface = Surface::of(&el).unwrap();
    let theme = colors::theme(false);
    // Hover the last band at full detail, then lower the detail with the pointer still there.
    let last = model.blocks.layout.bands.len() - 1;
    let hovered = Some((last, model.blocks.layout.bands[last].allocation));
    model.blocks.set_detail(0.1);
    let t = &model.blocks;
    assert!(t.layout.bands.len() <= last);
    let f = full(&surface, t);
    let overlay = Overlay {
        hovered,
        ..Overlay::plain(false)
    };
    draw(&surface, &f, t, &overlay, &theme);
    // The same index in a layout where it is another allocation's band: drawn plain, no outline.
    let other = Some((0, u32::MAX));
    draw(
        &surface,
        &f,
        t,
        &Overlay {
            hovered: other,
            ..Overlay::plain(false)
        },
        &theme,
    );
}

#[wasm_bindgen_test]
fn the_svg_pen_writes_what_a_canvas_would_draw() {
    use super::Pen;
    let s = Surface::svg(100.0, 50.0);
    s.ctx.set_fill_style_str("#abcdef");
    s.ctx.fill_rect(10.0, 20.0, -5.0, 4.25);
    s.ctx.save();
    s.ctx.begin_path();
    s.ctx.rect(0.0, 0.0, 50.0, 50.0);
    s.ctx.clip();
    s.ctx.begin_path();
    s.ctx.rect(10.0, 0.0, 50.0, 50.0);
    s.ctx.clip();
    s.ctx.set_global_alpha(0.25);
    s.ctx.begin_path();
    s.ctx.move_to(1.0, 2.0);
    s.ctx.line_to(3.333, 4.0);
    s.ctx.close_path();
    s.ctx.fill();
    s.ctx.restore();
    s.ctx.set_text_align("right");
    s.ctx.set_text_baseline("middle");
    s.ctx.set_font("bold 11px system-ui, sans-serif");
    s.ctx.fill_text("a < b", 5.0, 6.0);
    let svg = s.finish();
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\"")
    );
    // A negative width draws from the other corner, as on a canvas.
    assert!(svg.contains("<rect x=\"5\" y=\"20\" width=\"5\" height=\"4.25\" fill=\"#abcdef\"/>"));
    // The second clip is clipped by the first: they intersect.
    assert!(svg.contains("<clipPath id=\"c1\" clip-path=\"url(#c0)\">"));
    assert!(svg.contains(
        "<path d=\"M1 2L3.33 4Z\" fill=\"#abcdef\" opacity=\"0.25\" clip-path=\"url(#c1)\"/>"
    ));
    // After restore: no clip, full opacity; text escaped and aligned as on the canvas.
    assert!(svg.contains(
        "<text x=\"5\" y=\"6\" fill=\"#abcdef\" style=\"font: bold 11px system-ui, sans-serif\" text-anchor=\"end\" dominant-baseline=\"central\">a &lt; b</text>"
    ));
}

#[wasm_bindgen_test]
fn a_timeline_drawn_as_svg_has_its_bands_axes_and_peak() {
    let (s, written) = synth();
    let m = DeviceModel::new(&s, 0);
    let t = &m.blocks;
    let surface = Surface::svg(800.0, 400.0);
    let f = full(&surface, t);
    draw(
        &surface,
        &f,
        t,
        &Overlay::plain(true),
        &colors::theme(false),
    );
    let svg = surface.finish();
    let bands = svg.matches("<path d=\"M").count();
    assert!(bands > 20, "{bands} paths");
    assert!(svg.contains(&format!(
        ">peak {}</text>",
        memograph_snapshot::format::bytes(written.peak_bytes)
    )));
    assert!(svg.contains("<clipPath id=\"c0\"><path d=\"M"));
    assert!(
        svg.contains("stroke-dasharray=\"4 3\""),
        "the peak line is dashed"
    );
}

#[wasm_bindgen_test]
fn an_out_of_memory_entry_is_a_labelled_line_while_in_view() {
    let (s, _) = synth();
    let m = DeviceModel::new(&s, 0);
    let t = &m.blocks;
    let mid = t.layout.x_len / 2;
    let ooms = [OomMark {
        entry: mid,
        requested: 1 << 30,
        device_free: Some(1 << 20),
        allocated: 0,
        reserved: 0,
        site: None,
    }];
    let drawn = |x0: f64, x1: f64| {
        let surface = Surface::svg(800.0, 400.0);
        let view = crate::viewport::Viewport {
            x0,
            x1,
            ..t.full_view()
        };
        let f = Scale::new(view, Plot::of(surface.width, surface.height, 0), None);
        let overlay = Overlay {
            ooms: &ooms,
            ..Overlay::plain(false)
        };
        draw(&surface, &f, t, &overlay, &colors::theme(false));
        surface.finish()
    };
    let whole = drawn(0.0, f64::from(t.layout.x_len));
    assert_eq!(whole.matches(">✕ out of memory</text>").count(), 1);
    assert!(whole.contains("stroke-width=\"2\""), "a solid 2 px line");
    // Zoomed to before it: neither line nor label.
    let before = drawn(0.0, f64::from(mid) / 2.0);
    assert!(!before.contains("out of memory"));
}

/// Every pixel of `canvas` (device pixels, RGB), and its width.
fn pixels(s: &Surface) -> (Vec<[u8; 3]>, usize) {
    let canvas = s.ctx.canvas().unwrap();
    let (w, h) = (canvas.width(), canvas.height());
    let data = s
        .ctx
        .get_image_data(0.0, 0.0, f64::from(w), f64::from(h))
        .unwrap()
        .data();
    (
        data.chunks(4).map(|p| [p[0], p[1], p[2]]).collect(),
        w as usize,
    )
}

#[wasm_bindgen_test]
fn a_rasterised_highlight_marks_the_pixels_its_slivers_do_and_hardly_more() {
    use crate::view_model::lit::LitBands;
    use memograph_snapshot::analysis::lifetimes::Lifetimes;
    // Enough entries that a raster column holds several, so that most slivers are in the raster.
    let written = memograph_snapshot::synth::pickle(3200);
    let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
    let t = TimelineModel::new(Lifetimes::of(&s, 0), 1.0);
    let picked: Vec<u32> = (0..t.layout.total as u32).step_by(2).collect();
    let walked = LitBands::of_rasterised_from(&t.layout, &picked, usize::MAX);
    let rastered = LitBands::of_rasterised_from(&t.layout, &picked, 0);
    assert!(walked.raster.is_none());
    assert!(rastered.raster.is_some());
    let theme = colors::theme(false);
    let draw_with = |lit: &LitBands| {
        let surface = Surface::of(&canvas(700, 200)).unwrap();
        let f = full(&surface, &t);
        if let Some(raster) = &lit.raster {
            // Drawn from the raster, most bands held by it.
            let level = super::timeline::raster_level(&f, raster).expect("a level fits");
            let unheld = raster.unheld(level).len();
            assert!(
                unheld < lit.bands.len() / 2,
                "{unheld} of {} unheld",
                lit.bands.len()
            );
        }
        let overlay = Overlay {
            highlighted: &picked,
            lit: Some(lit),
            ..Overlay::plain(false)
        };
        draw(&surface, &f, &t, &overlay, &theme);
        pixels(&surface)
    };
    let ((one, w), (two, _)) = (draw_with(&walked), draw_with(&rastered));
    let mark = rgb(theme.highlight);
    let near = |p: &[[u8; 3]], i: usize| {
        let (x, y) = ((i % w) as isize, (i / w) as isize);
        (-1..=1).any(|dy| {
            (-1..=1).any(|dx| {
                let (x, y) = (x + dx, y + dy);
                x >= 0
                    && (x as usize) < w
                    && y >= 0
                    && p.get(y as usize * w + x as usize) == Some(&mark)
            })
        })
    };
    let marked = one.iter().filter(|&&p| p == mark).count();
    assert!(marked > 500, "{marked} pixels marked");
    let missed = (0..one.len())
        .filter(|&i| one[i] == mark && two[i] != mark)
        .count();
    assert_eq!(
        missed, 0,
        "pixels marked one by one and not from the raster"
    );
    let astray = (0..two.len())
        .filter(|&i| two[i] == mark && !near(&one, i))
        .count();
    assert_eq!(
        astray, 0,
        "pixels marked from the raster over a pixel from any sliver"
    );
}

#[wasm_bindgen_test]
fn a_mask_marks_every_pixel_a_rectangle_touches_and_no_other() {
    // A plot 1000 pixels wide (16 words a row) and 40 tall, 60 pixels in and 8 down.
    let plot = Plot {
        left: 60.0,
        top: 8.0,
        width: 1000.0,
        height: 40.0,
    };
    let (w, h) = (plot.width as usize + 1, plot.height as usize + 1);
    // Rectangles that start and end on and beside word edges, span one word or many, lie partly or
    // wholly outside, are thinner than a pixel, or are given right to left.
    let mut rects = Vec::new();
    for (a, b) in [
        (0.0, 1.0),
        (63.0, 64.0),
        (63.5, 64.5),
        (64.0, 128.0),
        (10.0, 990.0),
        (-50.0, 5.0),
    ] {
        rects.push((plot.left + a, plot.left + b, plot.top + 3.0, plot.top + 3.2));
    }
    rects.push((
        plot.left + 700.0,
        plot.left + 2000.0,
        plot.top - 5.0,
        plot.top + 60.0,
    ));
    rects.push((
        plot.left + 130.7,
        plot.left + 129.1,
        plot.top + 20.5,
        plot.top + 17.0,
    ));
    rects.push((
        plot.left - 30.0,
        plot.left - 10.0,
        plot.top + 1.0,
        plot.top + 2.0,
    ));
    let mut random = memograph_snapshot::testing::xorshift(0x2545_F491_4F6C_DD1D);
    for _ in 0..200 {
        let next = random();
        let x = (next % 1100) as f64 - 50.0;
        let len = (next >> 20) % 300;
        let y = ((next >> 40) % 50) as f64 - 5.0;
        rects.push((
            plot.left + x,
            plot.left + x + len as f64 * 0.7,
            plot.top + y,
            plot.top + y + 0.4,
        ));
    }
    let mut want = std::collections::BTreeSet::new();
    let span = |a: f64, b: f64, n: usize| {
        let lo = (a.floor().max(0.0) as usize).min(n);
        lo..(b.ceil().max(0.0) as usize).min(n).max(lo + 1).min(n)
    };
    for &(x0, x1, y0, y1) in &rects {
        let cols = span(x0.min(x1) - plot.left, x0.max(x1) - plot.left, w);
        for row in span(y0.min(y1) - plot.top, y0.max(y1) - plot.top, h) {
            want.extend(cols.clone().map(|c| (c, row)));
        }
    }
    let got = super::timeline::masked(&plot, &rects);
    assert!(want.len() > 1000, "{} pixels", want.len());
    assert_eq!(
        got.into_iter().collect::<std::collections::BTreeSet<_>>(),
        want
    );
}

/// The mask fills exactly its marked pixels, each once, and a sliver (a pixel wide, many rows tall) as
/// one rectangle, not a rectangle a row.
#[wasm_bindgen_test]
fn a_mask_fills_its_pixels_once_with_a_rectangle_per_sliver() {
    let plot = crate::scale::Plot {
        left: 10.0,
        top: 20.0,
        width: 400.0,
        height: 120.0,
    };
    let (w, h) = (401, 121);
    let sliver = (
        plot.left + 50.2,
        plot.left + 50.4,
        plot.top + 10.0,
        plot.top + 60.0,
    );
    assert_eq!(
        super::timeline::mask_rectangles(&plot, &[sliver]),
        vec![(50, 10, 1, 50)]
    );
    // Slivers of several widths and heights, overlapping, touching and nested, and random ones.
    let mut rects = vec![
        sliver,
        (
            plot.left + 50.0,
            plot.left + 53.0,
            plot.top + 30.0,
            plot.top + 40.0,
        ),
        (
            plot.left + 60.0,
            plot.left + 61.0,
            plot.top - 5.0,
            plot.top + 200.0,
        ),
        (
            plot.left + 61.0,
            plot.left + 62.5,
            plot.top + 5.0,
            plot.top + 100.0,
        ),
        (
            plot.left + 380.0,
            plot.left + 900.0,
            plot.top + 100.0,
            plot.top + 130.0,
        ),
    ];
    let mut random = memograph_snapshot::testing::xorshift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..300 {
        let next = random();
        let x = (next % 420) as f64 - 10.0;
        let y = ((next >> 20) % 130) as f64 - 5.0;
        let (dx, dy) = (((next >> 40) % 4) as f64 * 0.7, ((next >> 50) % 40) as f64);
        rects.push((
            plot.left + x,
            plot.left + x + dx,
            plot.top + y,
            plot.top + y + dy,
        ));
    }
    let want: std::collections::BTreeSet<_> =
        super::timeline::masked(&plot, &rects).into_iter().collect();
    let filled = super::timeline::mask_rectangles(&plot, &rects);
    let mut got = std::collections::BTreeSet::new();
    let mut area = 0;
    for &(c, r, rw, rh) in &filled {
        assert!(
            rw > 0 && rh > 0 && c + rw <= w && r + rh <= h,
            "{:?}",
            (c, r, rw, rh)
        );
        area += rw * rh;
        got.extend((c..c + rw).flat_map(|x| (r..r + rh).map(move |y| (x, y))));
    }
    assert_eq!(got, want);
    assert_eq!(area, want.len(), "a pixel filled twice");
    // A row at a time would take a rectangle per row of each run.
    let row_runs: usize = (0..h)
        .map(|y| {
            (0..w)
                .filter(|&x| want.contains(&(x, y)) && (x == 0 || !want.contains(&(x - 1, y))))
                .count()
        })
        .sum();
    assert!(
        filled.len() * 3 < row_runs,
        "{} rectangles for {row_runs} runs",
        filled.len()
    );
}

#[wasm_bindgen_test]
fn bands_drawn_as_a_raster_look_as_they_do_as_paths() {
    let (s, _) = synth();
    let model = DeviceModel::new(&s, 0);
    let t = &model.blocks;
    let theme = colors::theme(false);
    let half: Vec<u32> = (0..t.layout.total as u32).step_by(2).collect();
    let full_view = t.full_view();
    // The whole trace, and a tenth of it near the end, zoomed in on the lower half of the bytes.
    let zoomed = crate::viewport::Viewport {
        x0: full_view.x1 * 0.85,
        x1: full_view.x1 * 0.95,
        y_max: full_view.y_max / 2.0,
    };
    for (view, highlighted) in [(full_view, &[][..]), (zoomed, &[][..]), (zoomed, &half[..])] {
        let draw_as = |raster: bool| {
            let mut surface = Surface::of(&canvas(600, 300)).unwrap();
            if !raster {
                surface.pixel_ratio = None;
            }
            let f = Scale::new(view, Plot::of(surface.width, surface.height, 0), None);
            let overlay = Overlay {
                highlighted,
                ..Overlay::plain(false)
            };
            draw(&surface, &f, t, &overlay, &theme);
            pixels(&surface)
        };
        let ((raster, _), (paths, _)) = (draw_as(true), draw_as(false));
        let sky = rgb(theme.background);
        // Where a path covers a pixel wholly, the pixel has the band's colour (dimmed ones aside):
        // the raster's is the same there but at a band's edge (a path's edges are blended, the
        // raster's snapped).
        let solid: Vec<usize> = (0..paths.len())
            .filter(|&i| colors::PALETTE.iter().any(|&c| paths[i] == rgb(c)))
            .collect();
        let same = solid.iter().filter(|&&i| raster[i] == paths[i]).count();
        assert!(
            solid.len() > raster.len() / 20 && same * 100 >= solid.len() * 95,
            "{same} of {} solid pixels alike ({view:?}, {} highlighted)",
            solid.len(),
            highlighted.len()
        );
        // And the two cover the same pixels, but at the edges of what is drawn.
        let painted = paths.iter().filter(|&&p| p != sky).count();
        let astray = (0..paths.len())
            .filter(|&i| (paths[i] == sky) != (raster[i] == sky))
            .count();
        assert!(
            astray * 50 < painted,
            "{astray} of {painted} pixels painted in one only ({view:?})"
        );
    }
}

/// A dashed line and a translucent one under it, as a chart draws them, on any backend.
fn dashes<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
) -> memograph_charts::Result<memograph_charts::Bars>
where
    DB::ErrorType: 'static,
{
    use plotters::prelude::*;
    let mut chart = ChartBuilder::on(area).build_cartesian_2d(0.0..100.0, 0.0..100.0)?;
    chart.draw_series(DashedLineSeries::new(
        [(0.0, 80.0), (100.0, 80.0)],
        6,
        4,
        RED.stroke_width(2),
    ))?;
    chart.draw_series(LineSeries::new(
        [(0.0, 50.0), (100.0, 50.0)],
        BLUE.mix(0.5).stroke_width(3),
    ))?;
    Ok(memograph_charts::Bars::default())
}

#[wasm_bindgen_test]
fn a_dashed_line_is_one_path_in_svg_and_a_translucent_line_its_own() {
    let svg = super::charts::svg(400.0, 300.0, false, |a, _| dashes(a)).unwrap();
    // The dashes (plotters draws each as a line of its own) are one path of many pieces.
    assert_eq!(svg.matches("stroke=\"#ff0000\"").count(), 1, "{svg}");
    let dashed = svg
        .lines()
        .find(|l| l.contains("stroke=\"#ff0000\""))
        .unwrap();
    assert!(dashed.starts_with("<path d=\"M"), "{dashed}");
    assert!(dashed.matches('M').count() > 30, "{dashed}");
    assert!(
        svg.contains("stroke=\"#0000ff\" opacity=\"0.5\""),
        "the translucent line: {svg}"
    );
}

#[wasm_bindgen_test]
fn a_dashed_line_is_stroked_on_a_canvas_with_its_gaps() {
    let canvas = super::charts::offscreen(400.0, 300.0, 1.0, false, |a, _| dashes(a)).unwrap();
    let data = context_2d(&canvas)
        .get_image_data(0.0, 0.0, 400.0, 300.0)
        .unwrap()
        .data();
    let red = |p: &[u8]| p[0] > 200 && p[1] < 80 && p[2] < 80;
    let blue = |p: &[u8]| p[2] > 200 && (90..170).contains(&p[0]) && (90..170).contains(&p[1]);
    assert!(
        data.chunks(4).filter(|p| blue(p)).count() > 300,
        "the translucent line"
    );
    // The dashed line's row: dashes of 6 pixels and gaps of 4, not a solid line.
    let row = |y: usize| {
        (0..400)
            .filter(|&x| red(&data[(y * 400 + x) * 4..][..3]))
            .count()
    };
    let (at, drawn) = (0..300)
        .map(|y| (y, row(y)))
        .max_by_key(|&(_, n)| n)
        .unwrap();
    assert!(
        (160..320).contains(&drawn),
        "{drawn} of 400 pixels red at y {at}"
    );
}

#[wasm_bindgen_test]
fn a_line_gathered_and_simplified_goes_through_its_points() {
    use plotters::prelude::*;
    // A corner, a point given twice, and a stretch off the canvas's left (negative pixels).
    let line = [
        (-20.0, 50.0),
        (0.0, 10.0),
        (50.0, 90.0),
        (50.0, 90.0),
        (100.0, 10.0),
    ];
    let mut at = Vec::new();
    let canvas = super::charts::offscreen(400.0, 300.0, 1.0, false, |a, _| {
        let mut chart = ChartBuilder::on(a).build_cartesian_2d(0.0..100.0, 0.0..100.0)?;
        chart.draw_series(LineSeries::new(line, GREEN.stroke_width(3)))?;
        at = line.iter().map(|&p| chart.backend_coord(&p)).collect();
        Ok(memograph_charts::Bars::default())
    })
    .unwrap();
    let green = |(x, y): (i32, i32)| {
        let p = backing_pixel(&canvas, x, y);
        p[1] > 100 && p[0] < 60 && p[2] < 60
    };
    // Halfway along each piece drawn on the canvas, and at the corner: green.
    for w in at.windows(2).skip(1) {
        let mid = ((w[0].0 + w[1].0) / 2, (w[0].1 + w[1].1) / 2);
        assert!(green(mid), "not drawn at {mid:?} (points {at:?})");
    }
    assert!(green(at[2]), "the corner {:?}", at[2]);
    // Away from the line: the background.
    assert!(!green((200, at[2].1 + 40)));
    assert!(!green((300, 10)));
}
