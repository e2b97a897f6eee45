//! Downloads: text (CSV, JSON, Markdown) and pictures. A picture is drawn again for the file, by the
//! same renderer as on screen: PNG on a canvas of its own at twice the device pixel ratio, SVG through
//! [`crate::render::svg`] (or plotters' SVG backend for the report charts).

use leptos::prelude::*;
use memograph_charts::{Bars, Theme};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Pixels per CSS pixel in a PNG export: twice the screen's.
pub fn png_scale() -> f64 {
    2.0 * web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0)
}

/// Offers `blob` as a download named `name`.
fn save_blob(name: &str, blob: &web_sys::Blob) {
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
        return;
    };
    let link = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok());
    if let Some(a) = link {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    // The browser reads the blob after this returns: revoking the URL now can cancel the download.
    crate::load::after(60_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
}

/// Offers `text` as a download named `name`.
pub fn save_text(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&text.into());
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    if let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) {
        save_blob(name, &blob);
    }
}

/// Offers what `canvas` holds as a PNG download named `name`.
pub fn save_png(name: &str, canvas: &web_sys::HtmlCanvasElement) {
    let name = name.to_string();
    let done = Closure::once_into_js(move |blob: JsValue| {
        if let Ok(blob) = blob.dyn_into::<web_sys::Blob>() {
            save_blob(&name, &blob);
        }
    });
    let _ = canvas.to_blob(done.unchecked_ref());
}

/// A file name's stem for exports: the open file's name without `.gz` and `.pickle`, and the device.
pub fn stem(ui: super::Ui) -> String {
    let Some((file, device)) = ui.current() else {
        return "memograph".into();
    };
    let name = crate::load::store::list()
        .get(file)
        .map(|f| f.0.clone())
        .unwrap_or_default();
    let stem = memograph_snapshot::names::stem(&name);
    // A name any file system takes: the example is called "example: NAME".
    let stem: String = stem
        .rsplit(": ")
        .next()
        .unwrap_or(stem)
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{stem}_cuda{device}")
}

/// "PNG" and "SVG" buttons for a picture: `testid-png` and `testid-svg`.
#[component]
pub fn ExportButtons(
    testid: &'static str,
    png: impl Fn() + 'static,
    svg: impl Fn() + 'static,
) -> impl IntoView {
    view! {
        <span class="export-buttons">
            <button class="button small" data-testid=format!("{testid}-png") on:click=move |_| png()
                title="Download this picture as PNG (twice the screen's resolution)">"PNG"</button>
            <button class="button small" data-testid=format!("{testid}-svg") on:click=move |_| svg()
                title="Download this picture as SVG">"SVG"</button>
        </span>
    }
}

/// A report chart that draws on any plotters backend: the canvas, and SVG for export.
pub trait Picture {
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        theme: &Theme,
    ) -> memograph_charts::Result<Bars>
    where
        DB::ErrorType: 'static;
}

/// `picture` as on screen in `canvas` (its CSS size, the theme), as `NAME.png` at twice the device
/// pixel ratio or as `NAME.svg`.
pub fn save_picture(
    name: &str,
    canvas: &web_sys::HtmlCanvasElement,
    dark: bool,
    svg: bool,
    picture: &impl Picture,
) {
    let (w, h) = (
        f64::from(canvas.client_width().max(1)),
        f64::from(canvas.client_height().max(1)),
    );
    if svg {
        if let Some(text) = crate::render::charts::svg(w, h, dark, |a, t| picture.draw(a, t)) {
            save_text(&format!("{name}.svg"), "image/svg+xml", &text);
        }
    } else {
        let scale = png_scale();
        if let Some(png) =
            crate::render::charts::offscreen(w, h, scale, dark, |a, t| picture.draw(a, t))
        {
            save_png(&format!("{name}.png"), &png);
        }
    }
}
