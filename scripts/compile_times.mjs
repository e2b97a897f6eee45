#!/usr/bin/env node
// Which functions the browser optimises during a load, and how long each took to compile: V8 runs a
// module's functions on its baseline compiler (Liftoff) first and compiles the hot ones again with its
// optimising compiler (TurboFan) on background threads. On two cores those compiles share the CPU with
// the parse, and until one is done its function runs on baseline code: a big hot function costs twice.
// Loads FILE once in headless Chromium started with V8's `--trace-wasm-compilation-times`, the file
// chosen as soon as the page is empty (a cold load, as scripts/bench_web.mjs's; WARM=1: 1.5 s later, as
// its warm load), and prints each optimised compile of WALL_MS or more with when it ended (ms from the
// choice), its time, its body size and its function's name, then the totals before the choice, during
// the load and after the first timeline. A tool for finding what to split, not a benchmark.
//
//   FILE=bench-out/rounds_185mb.pickle DIST=dist-prof node scripts/compile_times.mjs
//
// Names need a build that keeps them (see scripts/trace_load.mjs: `--debuginfo` in index.html's
// `data-wasm-opt-params`, built into dist-prof); without them functions are shown by index.
import fs from 'node:fs';
import path from 'node:path';

// V8 writes to the renderer's output, which Playwright logs under `pw:browser` (to this process's
// stderr): each optimised compile is taken from there, noted with when its line came.
const compiled = [];
process.env.DEBUG = [process.env.DEBUG, 'pw:browser'].filter(Boolean).join(',');
const write = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
  const m = String(chunk).match(/#(\d+) using (TurboFan|Turboshaft), took ([0-9.]+) (\S+) .*bodysize (\d+)/);
  if (m) {
    compiled.push({ at: performance.now(), ms: Number(m[3]) / (m[4] === 'ms' ? 1 : 1000), body: Number(m[5]), index: Number(m[1]) });
    return true;
  }
  return /pw:browser/.test(String(chunk)) ? true : write(chunk, ...rest);
};
const { chromium } = await import('playwright-core');
const { serve, ROOT, FIXTURES } = await import('../tests/e2e/harness.mjs');

const FILE = path.resolve(process.env.FILE || path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
const DIST = path.resolve(process.env.DIST || path.join(ROOT, 'dist-prof'));
const WALL_MS = Number(process.env.WALL_MS || 4);

/** Function names by index from a module's `name` section (imports included in the numbering). */
function functionNames(wasm) {
  const names = new Map();
  let i = 8;
  const leb = () => {
    let value = 0, shift = 0, byte;
    do { byte = wasm[i++]; value += (byte & 0x7f) * 2 ** shift; shift += 7; } while (byte & 0x80);
    return value;
  };
  while (i < wasm.length) {
    const id = wasm[i++];
    const size = leb();
    const end = i + size;
    if (id === 0) {
      const length = leb();
      const section = wasm.subarray(i, i + length).toString();
      i += length;
      while (section === 'name' && i < end) {
        const sub = wasm[i++];
        const subSize = leb();
        const subEnd = i + subSize;
        if (sub === 1) {
          for (let n = leb(); n > 0; n--) {
            const index = leb();
            const l = leb();
            names.set(index, wasm.subarray(i, i + l).toString().replace(/::h[0-9a-f]{16}$/, ''));
            i += l;
          }
        }
        i = subEnd;
      }
    }
    i = end;
  }
  return names;
}

const wasmFile = fs.readdirSync(DIST).find(f => f.endsWith('.wasm'));
const names = functionNames(fs.readFileSync(path.join(DIST, wasmFile)));
const server = await serve(DIST);
const b = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--js-flags=--trace-wasm-compilation-times'],
});
const ctx = await b.newContext({ viewport: { width: 1400, height: 860 } });
const page = await ctx.newPage();
await page.goto(server.url);
await page.waitForSelector('#app[data-state=empty]');
// WARM=1: the file chosen 1.5 s after the page is empty (the benchmark's warm load), the rehearsal over.
if (process.env.WARM === '1') await new Promise(r => setTimeout(r, 1500));
const chosen = performance.now();
await page.setInputFiles('input[type=file]', FILE);
await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt, null, { timeout: 600000, polling: 50 });
const drawn = performance.now();
// Room for the compiles the first frame sets off.
await new Promise(r => setTimeout(r, 500));
await b.close();
await server.close();

const totals = { before: 0, load: 0, after: 0 };
console.log(`${path.basename(FILE)}: first timeline ${Math.round(drawn - chosen)} ms after the choice`);
console.log('  ends at   took    body  function');
for (const c of compiled) {
  totals[c.at < chosen ? 'before' : c.at <= drawn ? 'load' : 'after'] += c.ms;
  if (c.ms < WALL_MS) continue;
  const name = names.get(c.index) ?? `#${c.index}`;
  console.log(`${String(Math.round(c.at - chosen)).padStart(8)} ${c.ms.toFixed(1).padStart(6)} ${String(c.body).padStart(7)}  ${name.slice(0, 110)}`);
}
const ms = v => Math.round(v);
console.log(`optimised compiles: ${compiled.length}; ms in them before the choice ${ms(totals.before)}, during the load ${ms(totals.load)}, after the first timeline ${ms(totals.after)}`);
