// The parsing worker: loads the same wasm module as the page and runs its worker entry point, which parses
// the pieces of a file the page streams to it and posts the model back (see src/load/worker.rs). The
// module's names carry content hashes; the page passes them in this script's URL (?module=…&wasm=…).

// Messages can arrive while the module is still loading: keep them, and replay them once it is ready.
const early = [];
self.onmessage = (event) => early.push(event);

// The page posts its compiled wasm module as the first message (`shared=1` in this script's URL), so the
// worker neither fetches nor compiles it again. In a one-file page (`memograph html`, opened from
// file://) a worker may fetch nothing: it runs from a data: URL, and the page puts the module's own
// data: URL in `memographEmbedded` ahead of this script.
const embedded = globalThis.memographEmbedded;
const params = new URL(import.meta.url).searchParams;
const at = (name, fallback) => new URL(params.get(name) || fallback, import.meta.url);
const wasm = embedded || params.get('shared') === '1'
  ? await new Promise((resolve) => {
    self.onmessage = (event) => {
      if (event.data && event.data.memographWasm) {
        self.onmessage = (later) => early.push(later);
        resolve(event.data.memographWasm);
      } else {
        early.push(event);
      }
    };
  })
  : at('wasm', './memograph-web_bg.wasm');
const { default: init, worker_main } = await import(embedded ? embedded.module : at('module', './memograph-web.js'));
await init({ module_or_path: wasm });
worker_main();
for (const event of early) self.onmessage(event);
