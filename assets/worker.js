// The parsing worker: loads the same wasm module as the page and runs its worker entry point, which reads
// files in chunks with FileReaderSync, parses them with the engine and posts the compact model back.
import init, { worker_main } from './memograph-web.js';

// Messages can arrive while the module is still loading: keep them, and replay them once it is ready.
const early = [];
self.onmessage = (event) => early.push(event);

await init({ module_or_path: new URL('./memograph-web_bg.wasm', import.meta.url) });
worker_main();
for (const event of early) self.onmessage(event);
