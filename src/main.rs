//! Memograph's web page: Leptos CSR compiled to WebAssembly and bundled by Trunk.
//!
//! `view_model` and `viewport` are plain Rust (tested natively); `web` (components, loading, the parsing
//! worker) and `render` (canvas renderers) exist only on wasm32.

// Used by the wasm page; natively only their tests run.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod view_model;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod viewport;

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
