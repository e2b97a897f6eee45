#!/usr/bin/env node
// The engine's load path (read whole, read pushed in pieces, lifetimes, first layout) timed pass after
// pass natively and as WebAssembly in V8 (this Node, the engine Chromium runs), from one source:
// crates/snapshot/examples/load_cost.rs, built for both (the wasm with the page's SIMD, not through
// wasm-opt). The first wasm pass runs on baseline code, as a cold page does; later ones on optimised
// code. A step slow in the page but at par here is slow for the page's reasons (cold code, two busy
// cores, the browser's read), not for wasm's. A tool for finding where time goes, not a benchmark.
//
//   node scripts/wasm_vs_native.mjs FILE [PASSES]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../tests/e2e/harness.mjs';

const [file, passes = '5'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/wasm_vs_native.mjs FILE [PASSES]');
  process.exit(1);
}
const cargo = args => execFileSync('cargo', args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
const example = ['build', '-q', '--release', '-p', 'memograph-snapshot', '--example', 'load_cost'];
cargo(example);
cargo([...example, '--target', 'wasm32-unknown-unknown']);

execFileSync(path.join(ROOT, 'target', 'release', 'examples', 'load_cost'), [file, passes], { stdio: 'inherit' });

const wasm = fs.readFileSync(path.join(ROOT, 'target', 'wasm32-unknown-unknown', 'release', 'examples', 'load_cost.wasm'));
let memory;
const text = new TextDecoder();
const { instance } = await WebAssembly.instantiate(wasm, {
  env: {
    now: () => performance.now(),
    say: (at, len) => console.log(text.decode(new Uint8Array(memory.buffer, at, len))),
  },
});
memory = instance.exports.memory;
const bytes = fs.readFileSync(file);
const at = instance.exports.room(bytes.length);
new Uint8Array(memory.buffer, at, bytes.length).set(bytes);
instance.exports.run(at, bytes.length, Number(passes));
