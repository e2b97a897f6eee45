#!/usr/bin/env node
// An A/B of loads between builds, interleaved load by load: BUILDS (default dist,dist-b) are served
// side by side and one browser window opens FILE in a new tab on each in turn (ABBA order, each tab
// closed before the next, each load begun on a quiet machine), N rounds. Per load it prints the first
// timeline (from the choice, on the page's clock), the load's timings and its long tasks (start from
// the choice + duration); then each build's median, worst and mean. On this project's 2-core VM the
// machine's drift moves medians by ±10 % within minutes: interleaving cancels it, where
// bench_web.mjs's `DIST=` (one run per build) does not. A means of telling builds apart, not a
// benchmark: its numbers go in notes with N.
//
//   FILE=bench-out/rounds_185mb.pickle N=12 node scripts/ab_load.mjs
//
// KIND=warm chooses the file 1.5 s after the page is empty (bench_web.mjs's warm load) instead of at
// once (its cold load). A build named `DIR@cached` is served with the module cacheable (see
// `serve`): after its first load, the module comes from the HTTP cache. Not its compiled code: this
// headless Chromium wrote no WebAssembly code cache, in these contexts or in a persistent profile,
// even with the module compiled eagerly and V8's caching thresholds lowered (`--js-flags`).
import path from 'node:path';
import { serve, browser, settle, ROOT } from '../tests/e2e/harness.mjs';

const FILE = path.resolve(process.env.FILE || path.join(ROOT, 'bench-out', 'rounds_185mb.pickle'));
const N = Number(process.env.N || 10);
const WARM = process.env.KIND === 'warm';
const BUILDS = (process.env.BUILDS || 'dist,dist-b').split(',');

const servers = await Promise.all(BUILDS.map(b => {
  const [dir, how] = b.split('@');
  return serve(path.resolve(ROOT, dir), '/memograph/', { cached: how === 'cached' });
}));
const b = await browser();
const ctx = await b.newContext({ viewport: { width: 1400, height: 860 } });
await (await ctx.newPage()).goto('about:blank');
const firsts = BUILDS.map(() => []);
let last;
for (let round = 0; round < N; round++) {
  for (let k = 0; k < BUILDS.length; k++) {
    const i = round % 2 ? BUILDS.length - 1 - k : k;
    if (last) await last.close();
    // Each load on a quiet machine: the last tab is still being torn down.
    await settle();
    const page = last = await ctx.newPage();
    await page.goto(servers[i].url);
    await page.waitForSelector('#app[data-state=empty]');
    if (WARM) await new Promise(r => setTimeout(r, 1500));
    const chosen = await page.evaluate(() => {
      window.__chosen = performance.now();
      window.__long = [];
      new PerformanceObserver(list => {
        for (const e of list.getEntries()) window.__long.push(`${Math.round(e.startTime - window.__chosen)}+${Math.round(e.duration)}`);
      }).observe({ type: 'longtask' });
      return window.__chosen;
    });
    await page.setInputFiles('input[type=file]', FILE);
    await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt, null, { timeout: 600000, polling: 50 });
    const first = Number(await page.$eval('#app', e => e.dataset.firstDrawAt)) - chosen;
    const t = JSON.parse(await page.$eval('#app', e => e.dataset.loadTimings));
    // From the model's opening to the first timeline (views built, laid out, first frame drawn), and
    // the first frame's own drawing.
    const [fromStart, frame] = await page.$eval('#app', e => [Number(e.dataset.firstDrawMs), Number(e.dataset.firstFrameMs)]);
    const long = await page.evaluate(() => window.__long.join(','));
    firsts[i].push(first);
    console.log(`${BUILDS[i].padEnd(16)} ${String(Math.round(first)).padStart(5)} ms  worker_start ${t.worker_start} read ${t.read} parse ${t.parse} (waited ${t.worker_waited}) encode ${t.encode} decode ${t.decode} lifetimes ${t.lifetimes} model ${t.model} opened ${t.opened_at} (+${Math.round(fromStart - t.opened_at)}, frame ${frame})  long tasks ${long || '-'}`);
  }
}
const median = a => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (let i = 0; i < BUILDS.length; i++) {
  const a = firsts[i];
  console.log(`${BUILDS[i]}: first timeline median ${Math.round(median(a))} worst ${Math.round(Math.max(...a))} mean ${Math.round(a.reduce((s, x) => s + x, 0) / a.length)} ms (${a.length} ${WARM ? 'warm' : 'cold'} loads of ${path.basename(FILE)})`);
}
await b.close();
for (const s of servers) await s.close();
