#!/usr/bin/env node
// Compare benchmark in headless Chromium, on the built dist/ (run `trunk build --release` first):
//   - eight ~185 MB tiled snapshots picked together: time until the Compare table is complete, the
//     longest main-thread task meanwhile, and the tab's wasm memory and JS heap after, against opening
//     one of them alone (its timeline ready);
//   - eight ~12 MB rank files: time until the table and the rank strip are complete, in the same run as
//     one of them opened alone.
// Each case cold (picked the moment the page is up) and warm (after a pause); RUNS times each; the
// worst is what to report. Inputs are generated into bench-out/ when missing.
//   RUNS=2 node scripts/bench_compare.mjs
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, FIXTURES, ROOT } from '../tests/e2e/harness.mjs';

const OUT = path.join(ROOT, 'bench-out');
const RUNS = Number(process.env.RUNS || 2);
fs.mkdirSync(OUT, { recursive: true });
const py = (script, args) => execFileSync('python3', [path.join(ROOT, 'scripts', script), ...args], { stdio: 'ignore' });

// Eight names for one 185 MB tiled file (links: the page reads each as a file of its own).
const tiled = path.join(OUT, 'tiled_190mb.pickle');
if (!fs.existsSync(tiled)) py('tile_snapshot.py', ['--size', '188', '--out', tiled]);
const big = path.join(OUT, 'compare8_185mb');
fs.mkdirSync(big, { recursive: true });
const bigFiles = [...Array(8).keys()].map(r => {
  const link = path.join(big, `rank${r}_tiled_185mb.pickle`);
  if (!fs.existsSync(link)) fs.symlinkSync(tiled, link);
  return link;
});
// Eight 12 MB ranks of one tiled source, rank 6 out of line.
const source12 = path.join(OUT, 'tiled_12mb.pickle');
if (!fs.existsSync(source12)) py('tile_snapshot.py', ['--size', '12', '--out', source12]);
const small = path.join(OUT, 'ranks_12mb');
if (!fs.existsSync(path.join(small, 'rank7_memory_snapshot.pickle'))) {
  py('make_rank_set.py', ['--out', small, '--source', source12]);
}
const smallFiles = fs.readdirSync(small).sort().map(f => path.join(small, f));

const server = await serve();
const b = await browser();

async function freshPage(warm) {
  const page = await b.newPage({ viewport: { width: 1500, height: 1000 } });
  await page.addInitScript(() => {
    addEventListener('TrunkApplicationStarted', e => { window.__wasm = e.detail.wasm; });
    window.__longtasks = [];
    new PerformanceObserver(list => {
      for (const t of list.getEntries()) window.__longtasks.push([t.startTime, t.duration]);
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  if (warm) await new Promise(r => setTimeout(r, 1500));
  return page;
}

async function figures(page, chosen) {
  return page.evaluate(chosen => ({
    longest: Math.max(0, ...window.__longtasks.filter(([s]) => s >= chosen).map(([, d]) => d)),
    wasm: window.__wasm.memory.buffer.byteLength,
    heap: performance.memory ? performance.memory.usedJSHeapSize : 0,
  }), chosen);
}

/** Picks `files` together; ms until `n` runs are compared (and, with `strip`, the rank strip drawn). */
async function compareOnce(files, warm, strip) {
  const page = await freshPage(warm);
  const chosen = await page.evaluate(() => performance.now());
  await page.setInputFiles('input[type=file]', files);
  await page.waitForFunction(([n, strip]) => {
    const s = document.querySelector('[data-testid=compare-status]');
    return s && s.textContent.startsWith(`${n} runs compared`) && !s.textContent.includes('reading')
      && (!strip || document.querySelectorAll('[data-testid=rank-strip] .rank').length === n);
  }, [files.length, strip], { timeout: 900000, polling: 50 });
  const ms = await page.evaluate(c => performance.now() - c, chosen);
  const f = await figures(page, chosen);
  await page.close();
  return { ms, ...f };
}

/** Opens `file` alone (whole, its timeline): ms until ready. */
async function openOnce(file, warm) {
  const page = await freshPage(warm);
  const chosen = await page.evaluate(() => performance.now());
  await page.setInputFiles('input[type=file]', file);
  await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawMs
    && document.querySelector('#app').dataset.state === 'ready', null, { timeout: 900000, polling: 50 });
  const ms = await page.evaluate(c => performance.now() - c, chosen);
  const f = await figures(page, chosen);
  await page.close();
  return { ms, ...f };
}

const mib = b => (b / 2 ** 20).toFixed(0);
const line = (label, r) => console.log(`${label.padEnd(44)} ${r.ms.toFixed(0).padStart(7)} ms   longest task ${r.longest.toFixed(0).padStart(5)} ms   wasm ${mib(r.wasm).padStart(5)} MiB   JS heap ${mib(r.heap).padStart(5)} MiB`);
const results = {};
const cases = [
  ['eight 185 MB tiled, compared', () => compareOnce(bigFiles, false, true), () => compareOnce(bigFiles, true, true)],
  ['one 185 MB tiled, opened alone', () => openOnce(bigFiles[0], false), () => openOnce(bigFiles[0], true)],
  ['eight 12 MB ranks, table and strip', () => compareOnce(smallFiles, false, true), () => compareOnce(smallFiles, true, true)],
  ['one 12 MB rank, opened alone', () => openOnce(smallFiles[0], false), () => openOnce(smallFiles[0], true)],
];
for (let run = 0; run < RUNS; run++) {
  for (const [label, cold, warm] of cases) {
    for (const [kind, f] of [['cold', cold], ['warm', warm]]) {
      const r = await f();
      line(`${label} (${kind})`, r);
      (results[label] ||= []).push(r);
    }
  }
}
console.log('\nworst of cold and warm:');
for (const [label, rs] of Object.entries(results)) {
  line(label, {
    ms: Math.max(...rs.map(r => r.ms)),
    longest: Math.max(...rs.map(r => r.longest)),
    wasm: Math.max(...rs.map(r => r.wasm)),
    heap: Math.max(...rs.map(r => r.heap)),
  });
}
console.log(`(the page reads as many files at once as navigator.hardwareConcurrency says, at most 4; this machine: ${(await import("node:os")).cpus().length} cores)`);
fs.writeFileSync(path.join(OUT, 'compare.json'), JSON.stringify(results, null, 1));
await b.close();
await server.close();
