// The parsing worker: loads the same wasm module as the page and runs its worker entry point, which parses
// the pieces of a file the page streams to it and posts the model back (see src/load/worker.rs). The
// module's names carry content hashes; the page passes them in this script's URL (?module=…&wasm=…).

// Messages can arrive while the module is still loading: keep them, and replay them once it is ready.
const early = [];
self.onmessage = (event) => early.push(event);

const params = new URL(import.meta.url).searchParams;
const at = (name, fallback) => new URL(params.get(name) || fallback, import.meta.url);
const { default: init, worker_main } = await import(at('module', './memograph-web.js'));
await init({ module_or_path: at('wasm', './memograph-web_bg.wasm') });
worker_main();
for (const event of early) self.onmessage(event);
