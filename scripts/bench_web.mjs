#!/usr/bin/env node
// Page benchmark in headless Chromium, on the built dist/ (run `trunk build --release` first). Per file:
//   - chosen → first timeline and chosen → ready (the page's own clock, from the moment the file is
//     handed to the file input), against the native
//     `memograph summary --json` wall time in the same run; RUNS loads of each kind, interleaved with
//     native runs, medians and worst reported; the ratio both against the median native run and
//     load by load against the native run that follows it (`ratio_paired`: the machine's drift cancels);
//     every load and every native run begins once the machine is quiet (`settle`: none shares the
//     cores with what the last one left running);
//   - cold (the file chosen the moment the page opens, as `?url=` does: nothing rehearsed yet) and warm
//     (chosen after a pause, as a user would). Each load is a new tab of one browser window, as a
//     link opens in a running browser: a new renderer process that fetches (never from a cache, the
//     server says `no-store`) and compiles the module afresh. NEW_WINDOW=1 opens each in a window of
//     its own instead: on two cores that adds the window's own start (headless Chromium's UI renderer
//     alone uses ~350 ms of CPU then) to every load;
//   - from the end of the worker's parse to the first timeline (`after_parse_ms`): the page's own
//     part of a load, which the parse's swings (the same Rust natively) do not blur;
//   - the browser's read of the file alone (`read_alone_ms`: its byte stream into 4 MiB buffers, on
//     an empty page, once per round): a floor under every load that the native run, reading from the
//     page cache, does not have;
//   - the longest main-thread task (PerformanceObserver 'longtask') from the choice until ready (each
//     load's tasks, with when they began, are in its `parts_ms`: `long_tasks`, `opened_from_choice`), while
//     every view opens afterwards (segments, state history, where the memory goes; each waited for
//     until built), and from 100 % detail through pan/zoom, a search (`>1MB`) and pan/zoom again with
//     its allocations highlighted;
//   - wasm memory after load, and after 100 % detail with pan/zoom; frame times while panning, plain
//     and highlighted;
//   - Chromium's CPU time during each load, by process (Linux): on two cores a cold load shares them
//     with the browser's own start (a spare renderer, the browser process); all of it against the
//     native run's CPU time, and the share of the machine's cores it kept busy (a load takes at
//     least its CPU ÷ the cores: what no spreading of its work over threads can beat).
// Files: the arguments, or the default set (generated into bench-out/ when missing): the kk fixture,
// a 185 MB long-run shape (`tile_snapshot.py --rounds`), a 193 MB tiled one (`tile_snapshot.py`), and
// with BIG=1 a 1 GB synthetic one, a 1 GB long-run shape and a 2 GB synthetic one.
//   RUNS=3 node scripts/bench_web.mjs [FILE ...]
// DIST=dist-b measures another build (one run per build, alternated, for an A/B on one machine).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, panAndZoom, built, twoFrames, openEveryView, settle, FIXTURES, ROOT } from '../tests/e2e/harness.mjs';

const OUT = path.join(ROOT, 'bench-out');
fs.mkdirSync(OUT, { recursive: true });
const made = (name, make) => {
  const file = path.join(OUT, name);
  if (!fs.existsSync(file)) make(file);
  return file;
};
const tile = (args) => (file) => execFileSync('python3', [path.join(ROOT, 'scripts', 'tile_snapshot.py'), ...args, '--out', file], { stdio: 'inherit' });
const synth = (steps) => (file) => execFileSync('cargo', ['run', '-q', '--release', '-p', 'memograph-snapshot', '--example', 'synth', '--', String(steps), file], { cwd: ROOT, stdio: 'inherit' });

let files = process.argv.slice(2);
if (files.length === 0) {
  files = [
    path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'),
    made('rounds_185mb.pickle', tile(['--rounds', '--size', '185'])),
    made('tiled_190mb.pickle', tile(['--size', '188'])),
  ];
  if (process.env.BIG === '1') {
    files.push(made('synth_1gb.pickle', synth(140000)));
    files.push(made('rounds_1gb.pickle', tile(['--rounds', '--size', '1000'])));
    files.push(made('synth_2gb.pickle', synth(280000)));
  }
}
execFileSync('cargo', ['build', '--release', '-q', '-p', 'memograph'], { cwd: ROOT, stdio: 'inherit' });
const cli = path.join(ROOT, 'target', 'release', 'memograph');

/** The native `summary` of `file`, timed once the machine is quiet (see `settle`): taken right after a
 *  load, it shared two cores with the page's own work after its first frame, and ran up to 3× its
 *  quiet time (171–500 ms where a quiet run takes 160–170). Its wall time in seconds, and its CPU time
 *  in milliseconds (what this process's waited-for children used, Linux; null elsewhere). */
async function nativeRun(file) {
  await settle();
  const cpu = childrenCpuMs();
  const t = process.hrtime.bigint();
  const r = spawnSync(cli, ['summary', '--json', file], { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`memograph failed on ${file}`);
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  const after = childrenCpuMs();
  return { seconds, cpuMs: cpu === null || after === null ? null : after - cpu };
}
/** CPU milliseconds from a process's `/proc/PID/stat` (Linux): the two fields at `first` counted after
 *  its name (11: utime + stime, its own; 13: cutime + cstime, its waited-for children's), in clock
 *  ticks of 10 ms. Throws where there is no such file. */
function statCpuMs(pid, first) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(stat[first]) + Number(stat[first + 1])) * 10;
}
/** The CPU milliseconds this process's finished and waited-for children have used; null where there
 *  is no /proc. */
function childrenCpuMs() {
  try {
    return statCpuMs('self', 13);
  } catch {
    return null;
  }
}
/** CPU milliseconds each Chromium process has used so far, by pid and process type (Linux's /proc;
 *  empty elsewhere). */
function chromiumCpu() {
  const used = {};
  let pids = [];
  try { pids = fs.readdirSync('/proc').filter(d => /^\d+$/.test(d)); } catch { return used; }
  for (const pid of pids) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!/chrom/i.test(cmd)) continue;
      const type = (cmd.match(/--type=([a-z-]+)/) || [, 'browser'])[1];
      used[`${pid}:${type}`] = statCpuMs(pid, 11);
    } catch { /* the process ended */ }
  }
  return used;
}

/** What each kind of Chromium process used between two `chromiumCpu` readings: on a machine of few
 *  cores, a cold load shares them with the browser's own start (a spare renderer, the browser
 *  process), which the page cannot change. */
function cpuBetween(before, after) {
  const by = { renderers: [], browser: 0, other: 0 };
  for (const [key, ms] of Object.entries(after)) {
    const spent = ms - (before[key] || 0);
    if (spent <= 0) continue;
    const type = key.split(':')[1];
    if (type === 'renderer') by.renderers.push(spent);
    else if (type === 'browser') by.browser += spent;
    else by.other += spent;
  }
  by.renderers.sort((a, b) => b - a);
  return by;
}

const CORES = os.cpus().length;
/** All the CPU milliseconds of a `cpuBetween` reading. */
const cpuTotal = c => c.renderers.reduce((a, b) => a + b, 0) + c.browser + c.other;

const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const median = v => pct(v, 0.5);
/** The median and the worst (largest) of `v`. */
const spread = v => ({ median: median(v), worst: Math.max(...v) });

const server = await serve(process.env.DIST ? path.resolve(process.env.DIST) : undefined);
const b = await browser();
// One window for every tab (see the header); its own start is over before the first load.
const NEW_WINDOW = process.env.NEW_WINDOW === '1';
const LOADS_IN = NEW_WINDOW ? 'new windows' : 'new tabs of one window';
const VIEWPORT = { width: 1400, height: 860 };
const windowOf = NEW_WINDOW ? null : await b.newContext({ viewport: VIEWPORT });
if (windowOf) {
  await (await windowOf.newPage()).goto('about:blank');
  await new Promise(r => setTimeout(r, 2000));
}

/** How often a load is polled for its end. Not every frame (Playwright's default): a poll each frame
 *  makes the page run a frame (style, layout, paint) each frame, which on two cores took ~50 ms of CPU
 *  from a 185 MB load. The figures are the page's own clock, so the polling's grain does not enter them. */
const POLL_MS = 100;

/** A fresh page; `file` chosen at once (cold) or after a pause (warm). Returns the figures of the load. */
async function loadOnce(file, warm) {
  const page = windowOf ? await windowOf.newPage() : await b.newPage({ viewport: VIEWPORT });
  await page.addInitScript(() => {
    addEventListener('TrunkApplicationStarted', e => { window.__wasm = e.detail.wasm; });
    window.__longtasks = [];
    // When the choice reached the page (the input's `change` event, seen before the page's handler).
    addEventListener('change', () => { window.__handed ??= performance.now(); }, true);
    new PerformanceObserver(list => {
      for (const t of list.getEntries()) window.__longtasks.push([t.startTime, t.duration]);
    }).observe({ type: 'longtask', buffered: true });
    // Ready: the first frame is on screen and the page has run two more frames; timed in the page, as
    // the round trips of this script would add to it.
    new MutationObserver((changes, observer) => {
      if (!changes.some(c => c.target.id === 'app' && c.attributeName === 'data-first-draw-at')) return;
      observer.disconnect();
      requestAnimationFrame(() => requestAnimationFrame(() => { window.__ready = performance.now(); }));
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-first-draw-at'] });
  });
  // Each load begins on a quiet machine too, as the native run does: the tab closed before it (and
  // the one before that) are still being torn down.
  await settle();
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  if (warm) await new Promise(r => setTimeout(r, 1500));
  const cpuBefore = chromiumCpu();
  const cpuFrom = Date.now();
  const chosen = await page.evaluate(() => performance.now());
  await page.setInputFiles('input[type=file]', file);
  await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawMs
    || document.querySelector('#app').dataset.state === 'error', null, { timeout: 900000, polling: POLL_MS });
  const cpu = { ...cpuBetween(cpuBefore, chromiumCpu()), wall: Date.now() - cpuFrom };
  if (await page.$eval('#app', e => e.dataset.state) === 'error') {
    throw new Error(`${file}: ${await page.$eval('body', e => e.textContent.slice(0, 400))}`);
  }
  // From the choice, as the user sees it (the page's own `data-first-draw-ms` starts later, once the
  // file has been told from step records and the load has begun).
  const first = Math.round(Number(await page.$eval('#app', e => e.dataset.firstDrawAt)) - chosen);
  const fromLoadStart = Number(await page.$eval('#app', e => e.dataset.firstDrawMs));
  await page.waitForFunction(() => window.__ready, null, { timeout: 900000, polling: POLL_MS });
  const ready = await page.evaluate(() => window.__ready);
  const longest = async (from, to) => page.evaluate(([a, z]) => Math.max(0, ...window.__longtasks
    .filter(([s, d]) => s + d >= a && s <= z).map(([, d]) => d)), [from, to]);
  // The long tasks from `from` to `to` as `start+duration` (ms from `from`).
  const tasks = async (from, to) => page.evaluate(([a, z]) => window.__longtasks
    .filter(([s, d]) => s + d >= a && s <= z).map(([s, d]) => `${Math.round(s - a)}+${Math.round(d)}`)
    .join(','), [from, to]);
  const loadLongest = await longest(chosen, ready);
  // Cold means a first visit: the module came over the network, not from a cache.
  if (!await page.evaluate(() => performance.getEntriesByType('resource')
    .some(e => e.name.endsWith('.wasm') && e.transferSize > 0))) throw new Error('the module came from a cache');
  const timings = { ...JSON.parse(await page.$eval('#app', e => e.dataset.loadTimings || '{}')), first_from_load_start: fromLoadStart,
    // From the automation's call to the `change` event: its own cost (~15 ms on an idle page) and
    // whatever held the page's thread as the file came (counted in the figures above).
    handed_ms: Math.round((await page.evaluate(() => window.__handed)) - chosen) };
  // Where each task of 50 ms or more fell ("start+duration", ms from the choice), beside when the
  // model came (the page opened it): before it, the page was reading while the worker parsed.
  timings.opened_from_choice = Math.round(timings.opened_at + first - fromLoadStart);
  timings.long_tasks = (await page.evaluate(([a, z]) => window.__longtasks.filter(([s, d]) => s + d >= a && s <= z)
    .map(([s, d]) => `${Math.round(s - a)}+${Math.round(d)}`), [chosen, ready])).join(',');
  return { page, first, ready: ready - chosen, loadLongest, longest, tasks, timings, cpu };
}

/** How long the browser takes to hand a page `file`'s bytes and nothing else: its byte stream read
 *  into 4 MiB buffers, as a load reads it, in a tab of its own on an empty page. A floor under any
 *  load (no parse, no worker), beside the native run, which reads from the page cache at memory speed. */
async function readAlone(file) {
  const page = windowOf ? await windowOf.newPage() : await b.newPage({ viewport: VIEWPORT });
  await page.setContent('<input type=file>');
  await page.setInputFiles('input[type=file]', file);
  const ms = await page.evaluate(async () => {
    const piece = 4 << 20;
    const started = performance.now();
    const reader = document.querySelector('input').files[0].stream().getReader({ mode: 'byob' });
    let buffer = new ArrayBuffer(piece), done = false;
    while (!done) {
      let filled = 0;
      while (filled < piece) {
        const r = await reader.read(new Uint8Array(buffer, filled, piece - filled));
        buffer = r.value.buffer;
        filled += r.value.length;
        if (r.done) { done = true; break; }
      }
    }
    return performance.now() - started;
  });
  await page.close();
  return Math.round(ms);
}

/** Opens every view in turn, each once what it shows is built; the longest main-thread task while
 *  doing so. */
async function everyView(page, longest) {
  const from = await page.evaluate(() => performance.now());
  await openEveryView(page);
  const to = await page.evaluate(() => performance.now());
  return { viewsMs: Math.round(to - from), viewsLongest: await longest(from, to) };
}

const RUNS = Number(process.env.RUNS || 3);
const results = [];
for (const file of files) {
  const size = fs.statSync(file).size;
  const rows = { cold: [], warm: [] }, natives = [], nativeCpus = [], reads = [];
  let last;
  for (let k = 0; k < RUNS; k++) {
    reads.push(await readAlone(file));
    for (const kind of ['cold', 'warm']) {
      const run = await loadOnce(file, kind === 'warm');
      const native = await nativeRun(file);
      run.native = native.seconds;
      rows[kind].push(run);
      natives.push(run.native);
      if (native.cpuMs !== null) nativeCpus.push(native.cpuMs);
      if (last) await last.page.close();
      last = run;
    }
  }
  const page = last.page;
  const wasmAfterLoad = await page.evaluate(() => window.__wasm.memory.buffer.byteLength);
  const views = await everyView(page, last.longest);
  // 100 % detail, then pan and zoom.
  const detailFrom = await page.evaluate(() => performance.now());
  const t0 = Date.now();
  await page.locator('[data-testid=detail-slider]').fill('100');
  await built(page);
  await page.evaluate(() => new Promise(r => requestAnimationFrame(() => r())));
  const detailMs = Date.now() - t0;
  // When each stage began (ms after `detailFrom`), to tell which stage a long task fell in.
  const now = () => page.evaluate(() => performance.now());
  const stages = { detail: 0, pan: Math.round(await now() - detailFrom) };
  const drawn = await page.$eval('.slider .muted', e => e.textContent);
  await page.evaluate(() => { window.__memographFrames = []; });
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  await panAndZoom(page, box);
  const frames = await page.evaluate(() => window.__memographFrames);
  // A search that matches about a third of the allocations, at 100 % detail.
  stages.search = Math.round(await now() - detailFrom);
  await page.fill('[data-testid=search]', '>1MB');
  await built(page);
  await twoFrames(page);
  // The same pan and zoom with the search's allocations highlighted (their slivers marked each frame).
  stages.highlighted_pan = Math.round(await now() - detailFrom);
  await page.evaluate(() => { window.__memographFrames = []; });
  await panAndZoom(page, box);
  await twoFrames(page);
  const litFrames = await page.evaluate(() => window.__memographFrames);
  const detailTo = await now();
  const detailLongest = await last.longest(detailFrom, detailTo);
  const detailTasks = await last.tasks(detailFrom, detailTo);
  const wasmAfterDetail = await page.evaluate(() => window.__wasm.memory.buffer.byteLength);
  await page.close();
  const native = median(natives);
  const nativeCpu = nativeCpus.length ? median(nativeCpus) : null;
  const summary = kind => {
    const r = rows[kind];
    const first = r.map(x => x.first), ready = r.map(x => Math.round(x.ready));
    return {
      first_timeline_ms: spread(first),
      ready_ms: spread(ready),
      ratio_to_native: spread(first.map(x => +(x / 1000 / native).toFixed(2))),
      // Each load against the native run right after it: on this VM the machine's speed drifts over a
      // run (one file's native runs took 443 to 724 ms), and a pair shares the drift where medians
      // taken apart do not.
      ratio_paired: spread(r.map(x => +(x.first / 1000 / x.native).toFixed(2))),
      // From the end of the worker's parse (its snapshot finished) to the first timeline: the page's
      // own part of a load (the parse, the same Rust natively, swings with the machine by up to 1.7×
      // on two cores). The worker's parse ends `worker_start + worker_waited + parse` after the load's
      // start (`parse` counts its pushing and finishing, not its waiting for pieces).
      after_parse_ms: spread(r.map(({ timings: t }) =>
        Math.round(t.first_from_load_start - t.worker_start - t.worker_waited - t.parse))),
      longest_task_ms: Math.round(Math.max(...r.map(x => x.loadLongest))),
      handed_ms: median(r.map(x => x.timings.handed_ms)),
      parts_ms: r.map(x => x.timings),
      // Chromium's CPU time from the choice to the first timeline, by process (renderers busiest first),
      // and the wall time it was read over (to the first poll that saw the timeline).
      cpu_ms: r.map(x => x.cpu),
      // That CPU, all processes together, ÷ the native summary's (median): the work a load does per
      // unit of the native run's. A load's wall time is at least its CPU ÷ CORES, however its work is
      // spread over threads (the reading here runs to the first poll that saw the timeline, up to
      // POLL_MS after it, so it is a little high).
      cpu_to_native_cpu: nativeCpu ? spread(r.map(x => +(cpuTotal(x.cpu) / nativeCpu).toFixed(2))) : null,
      // The share of the machine's cores Chromium kept busy meanwhile.
      cores_busy: spread(r.map(x => +(cpuTotal(x.cpu) / (x.cpu.wall * CORES)).toFixed(2))),
    };
  };
  const r = {
    file: path.basename(file), mb: +(size / 1e6).toFixed(1), runs: RUNS, loads_in: LOADS_IN,
    native_summary_ms: { median: Math.round(native * 1000), all: natives.map(n => Math.round(n * 1000)) },
    native_summary_cpu_ms: nativeCpu === null ? null : { median: nativeCpu, all: nativeCpus },
    read_alone_ms: { ...spread(reads), all: reads, ratio_to_native: +(median(reads) / 1000 / native).toFixed(2) },
    cold: summary('cold'), warm: summary('warm'),
    views_ms: views.viewsMs, views_longest_task_ms: Math.round(views.viewsLongest),
    detail_100_ms: detailMs, drawn, detail_pan_search_longest_task_ms: Math.round(detailLongest),
    detail_pan_search_stages_ms: stages, detail_pan_search_long_tasks: detailTasks,
    frame_median_ms: +pct(frames, 0.5).toFixed(2), frame_p95_ms: +pct(frames, 0.95).toFixed(2),
    highlighted_frame_median_ms: +pct(litFrames, 0.5).toFixed(2), highlighted_frame_max_ms: +Math.max(0, ...litFrames).toFixed(2),
    wasm_to_file_after_load: +(wasmAfterLoad / size).toFixed(2),
    wasm_to_file_after_detail: +(wasmAfterDetail / size).toFixed(2),
  };
  results.push(r);
  console.log(JSON.stringify(r));
}
await b.close();
await server.close();
console.log(`\nloads in ${LOADS_IN}`);
console.log('file | first timeline cold/warm (worst) | ready cold/warm (worst) | × native (worst) | longest task load / views / detail+pan+search | wasm ÷ file load / detail');
for (const r of results) {
  console.log(`${r.file} (${r.mb} MB) | ${r.cold.first_timeline_ms.worst} / ${r.warm.first_timeline_ms.worst} ms | ` +
    `${r.cold.ready_ms.worst} / ${r.warm.ready_ms.worst} ms | ${Math.max(r.cold.ratio_to_native.worst, r.warm.ratio_to_native.worst)}× ` +
    `(native ${r.native_summary_ms.median} ms) | ${Math.max(r.cold.longest_task_ms, r.warm.longest_task_ms)} / ${r.views_longest_task_ms} / ${r.detail_pan_search_longest_task_ms} ms | ` +
    `${r.wasm_to_file_after_load} / ${r.wasm_to_file_after_detail}`);
}
console.log('\n× native, median (worst), cold / warm: first timeline ÷ median native; each load ÷ the native run after it');
for (const r of results) {
  const a = (k, m) => `${r[k][m].median} (${r[k][m].worst})`;
  console.log(`${r.file}: ${a('cold', 'ratio_to_native')} / ${a('warm', 'ratio_to_native')}; paired ${a('cold', 'ratio_paired')} / ${a('warm', 'ratio_paired')}`);
}
console.log('\nfrom the parse\'s end to the first timeline, median (worst), cold / warm: the page\'s own part');
for (const r of results) {
  const a = k => `${r[k].after_parse_ms.median} (${r[k].after_parse_ms.worst})`;
  console.log(`${r.file}: ${a('cold')} / ${a('warm')} ms`);
}
console.log('\nthe browser\'s read of the file alone (its byte stream, nothing parsed), median (worst): under any load');
for (const r of results) {
  const a = r.read_alone_ms;
  console.log(`${r.file}: ${a.median} (${a.worst}) ms = ${a.ratio_to_native}× the native summary`);
}
console.log('\nChromium CPU from the choice to the first timeline, medians (ms): busiest renderer / other renderers / browser process / other processes');
const cpuLine = runs => {
  const m = f => median(runs.map(f));
  return `${m(c => c.renderers[0] || 0)} / ${m(c => c.renderers.slice(1).reduce((a, b) => a + b, 0))} / ${m(c => c.browser)} / ${m(c => c.other)}`;
};
for (const r of results) console.log(`${r.file}: cold ${cpuLine(r.cold.cpu_ms)}; warm ${cpuLine(r.warm.cpu_ms)}`);
console.log(`\nthat CPU (all Chromium's processes, to the first poll that saw the timeline: up to ${POLL_MS} ms after it) ÷ the native summary's CPU,`);
console.log(`and the share of the ${CORES} cores it kept busy, median (worst), cold / warm: a load's wall time is at least its CPU ÷ ${CORES}, however it spreads its work over threads`);
for (const r of results) {
  if (!r.cold.cpu_to_native_cpu) continue;
  const a = (k, m) => `${r[k][m].median} (${r[k][m].worst})`;
  console.log(`${r.file}: ${a('cold', 'cpu_to_native_cpu')} / ${a('warm', 'cpu_to_native_cpu')}× the native CPU (${r.native_summary_cpu_ms.median} ms); ` +
    `cores busy ${a('cold', 'cores_busy')} / ${a('warm', 'cores_busy')}`);
}
fs.writeFileSync(path.join(OUT, 'web.json'), JSON.stringify(results, null, 1));
