// The parsing worker: loads the same wasm module as the page and runs its worker entry point, which parses
// the pieces of a file the page streams to it and posts the model back (see src/load/worker.rs).
import init, { worker_main } from './memograph-web.js';

// Messages can arrive while the module is still loading: keep them, and replay them once it is ready.
const early = [];
self.onmessage = (event) => early.push(event);

await init({ module_or_path: new URL('./memograph-web_bg.wasm', import.meta.url) });
worker_main();
for (const event of early) self.onmessage(event);
