//! Memograph's web page: Leptos CSR compiled to WebAssembly and bundled by Trunk.
//!
//! `view_model`, `scale`, `viewport`, `touch` and `pixels` are plain Rust (tested natively); `load` (the loading
//! pipeline and the parsing worker), `web` (the shell and its views) and `render` (canvas renderers)
//! exist only on wasm32.

// Used by the wasm page; natively only their tests run.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod pixels;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod polyline;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod scale;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod touch;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]
mod view_model;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod viewport;

#[cfg(target_arch = "wasm32")]
mod load;
#[cfg(target_arch = "wasm32")]
mod render;
#[cfg(target_arch = "wasm32")]
mod web;

#[cfg(target_arch = "wasm32")]
fn main() {
    web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("memograph-web runs in the browser: serve it with `scripts/serve.sh` (trunk serve).");
}
