#!/usr/bin/env node
// Page benchmark in headless Chromium, on the built dist/ (run `trunk build --release` first):
//   - load-to-first-timeline: from choosing the file to the first drawn timeline (the page's own clock),
//     against the native `memograph summary` wall time on the same file; RUNS (default 3) of each,
//     interleaved, medians compared; where each load's time went (`#app[data-load-timings]`);
//   - pan/zoom at 100 % detail: per-frame draw time over 120 wheel and drag steps (median and 95th);
//   - wasm memory of the page after load, against the file size.
// Files: kk_memory_ctx128_fullstep.pickle and the ~190 MB tiled snapshot (made when missing).
//   node scripts/bench_web.mjs [FILE ...]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, FIXTURES, ROOT } from '../tests/e2e/harness.mjs';

const tiled = path.join(ROOT, 'bench-out', 'tiled_190mb.pickle');
let files = process.argv.slice(2);
if (files.length === 0) {
  if (!fs.existsSync(tiled)) execFileSync('python3', [path.join(ROOT, 'scripts', 'tile_snapshot.py'), '--size', '188', '--out', tiled], { stdio: 'inherit' });
  files = [path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'), tiled];
}
execFileSync('cargo', ['build', '--release', '-q', '-p', 'memograph'], { cwd: ROOT, stdio: 'inherit' });
const cli = path.join(ROOT, 'target', 'release', 'memograph');

function nativeSeconds(file, runs = 3) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(cli, ['summary', '--json', file], { stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`memograph failed on ${file}`);
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}
const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

const server = await serve();
const b = await browser();
const results = [];
/** A fresh page with `file` loaded: the page's own load-to-first-timeline figure and where it went. */
async function loadOnce(file) {
  const page = await b.newPage({ viewport: { width: 1400, height: 860 } });
  await page.addInitScript(() => addEventListener('TrunkApplicationStarted', e => { window.__wasm = e.detail.wasm; }));
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  // As a user would: the file is chosen a moment after the page opens (its parsing worker is up by then).
  await new Promise(r => setTimeout(r, 1000));
  await page.setInputFiles('input[type=file]', file);
  await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawMs, null, { timeout: 600000 });
  const loadMs = Number(await page.$eval('#app', e => e.dataset.firstDrawMs));
  const timings = JSON.parse(await page.$eval('#app', e => e.dataset.loadTimings || '{}'));
  return { page, loadMs, timings };
}

// Loads interleaved with native runs (the machine's speed drifts), RUNS of each; medians reported.
const RUNS = Number(process.env.RUNS || 3);
const median = v => pct(v, 0.5);
for (const file of files) {
  const loads = [], natives = [], parts = [];
  let page, timings;
  for (let k = 0; k < RUNS; k++) {
    let loadMs;
    ({ page, loadMs, timings } = await loadOnce(file));
    loads.push(loadMs);
    parts.push(timings);
    natives.push(nativeSeconds(file, 1));
    if (k < RUNS - 1) await page.close();
  }
  const loadMs = median(loads), native = median(natives);
  const wasmBytes = await page.evaluate(() => window.__wasm.memory.buffer.byteLength);
  const t0 = Date.now();
  await page.locator('[data-testid=detail-slider]').fill('100');
  await page.waitForFunction(() => document.querySelector('[data-testid=detail-slider]').value === '100');
  await page.evaluate(() => new Promise(r => requestAnimationFrame(() => r())));
  const detailMs = Date.now() - t0;
  const drawn = await page.$eval('.slider .muted', e => e.textContent);
  await page.evaluate(() => { window.__memographFrames = []; });
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
  for (let i = 0; i < 40; i++) await page.mouse.wheel(0, -120);
  await page.mouse.down();
  for (let i = 0; i < 40; i++) await page.mouse.move(box.x + box.width * (0.6 - i * 0.01), box.y + box.height * 0.5);
  await page.mouse.up();
  for (let i = 0; i < 40; i++) await page.mouse.wheel(0, 160);
  const frames = await page.evaluate(() => window.__memographFrames);
  const wasmAfter = await page.evaluate(() => window.__wasm.memory.buffer.byteLength);
  const size = fs.statSync(file).size;
  const r = {
    file: path.basename(file), mb: +(size / 1e6).toFixed(1), runs: RUNS,
    load_to_first_timeline_ms: loadMs, native_summary_ms: Math.round(native * 1000),
    load_ratio: +(loadMs / 1000 / native).toFixed(2),
    loads_ms: loads, natives_ms: natives.map(n => Math.round(n * 1000)),
    load_parts_ms: parts,
    detail_100_ms: detailMs, drawn,
    frames: frames.length, frame_median_ms: +pct(frames, 0.5).toFixed(2), frame_p95_ms: +pct(frames, 0.95).toFixed(2),
    wasm_mb_after_load: +(wasmBytes / 1e6).toFixed(1), wasm_mb_after_pan_zoom: +(wasmAfter / 1e6).toFixed(1),
    wasm_to_file_after_load: +(wasmBytes / size).toFixed(2),
    wasm_to_file_at_full_detail: +(wasmAfter / size).toFixed(2),
  };
  results.push(r);
  console.log(JSON.stringify(r));
  await page.close();
}
await b.close();
await server.close();
const big = results.reduce((a, r) => (r.mb > a.mb ? r : a));
console.log(`bars on ${big.file}: load <= 2x native: ${big.load_ratio <= 2 ? 'PASS' : 'FAIL'} (${big.load_ratio}x); ` +
  `median frame < 16 ms: ${big.frame_median_ms < 16 ? 'PASS' : 'FAIL'} (${big.frame_median_ms} ms); ` +
  `wasm memory after load <= 1x file: ${big.wasm_to_file_after_load <= 1 ? 'PASS' : 'FAIL'} (${big.wasm_to_file_after_load}x; ` +
  `${big.wasm_to_file_at_full_detail}x after 100 % detail and pan/zoom)`);
fs.mkdirSync(path.join(ROOT, 'bench-out'), { recursive: true });
fs.writeFileSync(path.join(ROOT, 'bench-out', 'web.json'), JSON.stringify(results, null, 1));
