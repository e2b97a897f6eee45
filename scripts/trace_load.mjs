#!/usr/bin/env node
// Where a load's longest main-thread tasks go: traces one load in headless Chromium (the file chosen as
// soon as the page is empty, as a cold load in scripts/bench_web.mjs) with the V8 CPU profiler on, and
// prints the page's longest tasks from the choice to AFTER_MS after the first timeline, each with its wall
// and CPU time and the functions its samples fall in (inclusive and self). A tool for finding what to
// split, not a benchmark: profiling slows the page, so its times run above bench_web's.
//
//   FILE=bench-out/rounds_185mb.pickle DIST=dist-prof TASKS=3 node scripts/trace_load.mjs
//
// AFTER_MS (default 300) widens the window after the first timeline; PRIOR=1 loads the file once in
// another tab first, closed before the traced load, as the benchmark's loads follow one another; WARM=1
// chooses the file 1.5 s after the page is empty (the benchmark's warm load) instead of at once.
// CALLERS=REGEX also prints the call chains of the samples in functions matching REGEX.
// SPAN=FROM,TO (ms from the choice) prints, instead of the longest tasks, where one thread's CPU went
// over that span, all tasks together: THREAD=page (default) or THREAD=worker (the parsing worker);
// FROM=draw counts SPAN's times from the first timeline instead (SPAN=-200,0: the 200 ms before it).
//
// Function names need a build that keeps them: build with `--debuginfo` added to index.html's
// `data-wasm-opt-params` (`trunk build --release --offline --dist dist-prof`, then restore index.html).
// The trace is kept at TRACE (default target/trace-load.json) for chrome://tracing or Perfetto.
//
// SEARCH=QUERY traces a search instead of the load: the file is loaded untraced (at 100 % detail with
// DETAIL=100), then QUERY is typed in the search box and the trace runs from there until the page has
// drawn what it found (AFTER_MS later); times count from the typing ("chosen" below). PAN=1 traces
// instead the benchmark's pan and zoom (after the search, untraced, when SEARCH is given too: a
// highlighted pan); times count from its first input. AGAIN=1 searches SEARCH once untraced first. VIEWS=1 traces opening every view in turn, each
// once built (segments, state history, where the memory goes, timeline), as the benchmark does. Each
// waits SETTLE_MS (default 2000) after the load and after DETAIL for what they set off to settle.
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, panAndZoom, built, twoFrames, openEveryView, ROOT, FIXTURES } from '../tests/e2e/harness.mjs';

const FILE = path.resolve(process.env.FILE || path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
const DIST = path.resolve(process.env.DIST || path.join(ROOT, 'dist'));
const TRACE = path.resolve(process.env.TRACE || path.join(ROOT, 'target', 'trace-load.json'));
const TASKS = Number(process.env.TASKS || 3);
const ROWS = Number(process.env.ROWS || 16);
const AFTER_MS = Number(process.env.AFTER_MS || 300);
const PRIOR = process.env.PRIOR === '1';
const SEARCH = process.env.SEARCH;
const PAN = process.env.PAN === '1';
const VIEWS = process.env.VIEWS === '1';
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 2000);
const WARM = process.env.WARM === '1';
const CALLERS = process.env.CALLERS ? new RegExp(process.env.CALLERS) : null;

const server = await serve(DIST);
const b = await browser();
const ctx = await b.newContext({ viewport: { width: 1400, height: 860 } });
/** Opens the page in `page`, chooses FILE as soon as it is empty and waits for its first timeline. */
async function load(page) {
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  // A warm load (as the benchmark's): the file chosen after a pause, the rehearsal over.
  if (WARM) await new Promise(r => setTimeout(r, 1500));
  await page.setInputFiles('input[type=file]', FILE);
  await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt, null, { timeout: 600000, polling: 100 });
}
if (PRIOR) {
  const prior = await ctx.newPage();
  await load(prior);
  await prior.close();
  await new Promise(r => setTimeout(r, 1500));
}
const page = await ctx.newPage();
fs.mkdirSync(path.dirname(TRACE), { recursive: true });
const trace = () => b.startTracing(page, {
  path: TRACE,
  screenshots: false,
  categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'v8', 'v8.execute',
    'blink.user_timing', 'disabled-by-default-v8.cpu_profiler'],
});
if (!SEARCH && !PAN && !VIEWS) await trace();
await page.addInitScript(() => {
  // Marks on the page's clock, found again in the trace.
  addEventListener('change', () => performance.mark('memograph-chosen'), true);
  new MutationObserver((changes, observer) => {
    if (!changes.some(c => c.attributeName === 'data-first-draw-at')) return;
    observer.disconnect();
    performance.mark('memograph-first-draw');
  }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-first-draw-at'] });
});
await load(page);
const timings = await page.$eval('#app', e => e.dataset.loadTimings);
if (SEARCH || PAN || VIEWS) {
  // Whatever the load set off has settled before the trace begins.
  await new Promise(r => setTimeout(r, SETTLE_MS));
  if (process.env.DETAIL) {
    await page.locator('[data-testid=detail-slider]').fill(process.env.DETAIL);
    await built(page);
    await new Promise(r => setTimeout(r, SETTLE_MS));
  }
  if (PAN && SEARCH || process.env.AGAIN === '1') {
    await page.fill('[data-testid=search]', SEARCH);
    await built(page);
    await new Promise(r => setTimeout(r, SETTLE_MS));
  }
  await trace();
  await page.evaluate(() => performance.mark('memograph-chosen'));
  if (VIEWS) {
    await openEveryView(page);
  } else if (PAN) {
    await panAndZoom(page, await page.locator('[data-testid=timeline]').boundingBox());
  } else {
    // As scripts/bench_search.mjs types it: the box cleared, then the query, in one task.
    await page.evaluate((q) => {
      const el = document.querySelector('[data-testid=search]');
      el.value = '';
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.value = q;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, SEARCH);
    await built(page);
  }
  await twoFrames(page);
  await page.evaluate(() => performance.mark('memograph-first-draw'));
}
// Room for the tasks the first frame sets off.
await new Promise(r => setTimeout(r, AFTER_MS + 200));
await b.stopTracing();
await b.close();
await server.close();

const events = JSON.parse(fs.readFileSync(TRACE, 'utf8')).traceEvents;
const threads = {};
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') threads[`${e.pid}:${e.tid}`] = e.args.name;
const mark = name => events.find(e => e.name === name && (e.ph === 'I' || e.ph === 'R' || e.ph === 'n'));
const chosen = mark('memograph-chosen');
const drawn = mark('memograph-first-draw');
if (!chosen || !drawn) throw new Error('the trace lacks the choice or the first draw');
// The page's thread: the one its marks were made on.
const pageThread = `${drawn.pid}:${drawn.tid}`;
if (threads[pageThread] !== 'CrRendererMain') throw new Error(`the first draw was marked on ${threads[pageThread]}`);
const main = events.filter(e => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask'
  && `${e.pid}:${e.tid}` === pageThread && e.ts + e.dur >= chosen.ts && e.ts <= drawn.ts + AFTER_MS * 1e3);
const longest = [...main].sort((x, y) => y.dur - x.dur).slice(0, TASKS);

// The CPU profiles' samples, each with its time and its stack (leaf first).
const profiles = {};
for (const e of events) {
  if (e.name === 'Profile') profiles[`${e.pid}:${e.id}`] = { thread: `${e.pid}:${e.tid}`, t: e.args.data.startTime, nodes: {}, samples: [], deltas: [] };
  if (e.name === 'ProfileChunk') {
    const p = profiles[`${e.pid}:${e.id}`];
    if (!p) continue;
    const data = e.args.data;
    for (const n of data.cpuProfile?.nodes || []) p.nodes[n.id] = n;
    p.samples.push(...(data.cpuProfile?.samples || []));
    p.deltas.push(...(data.timeDeltas || []));
  }
}
const SPAN = process.env.SPAN?.split(',').map(Number);
const WORKER = process.env.THREAD === 'worker';
// The parsing worker: of the page's process's dedicated workers, the one with the most samples.
const workerThread = Object.values(profiles)
  .filter(p => p.thread.startsWith(`${drawn.pid}:`) && threads[p.thread] === 'DedicatedWorker thread')
  .sort((x, y) => y.samples.length - x.samples.length)[0]?.thread;
const profiled = WORKER ? workerThread : pageThread;
const samples = [];
for (const p of Object.values(profiles)) {
  // One thread only: the workers' profiles share the page's process and clock.
  if (p.thread !== profiled) continue;
  let t = p.t;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.deltas[i];
    const stack = [];
    for (let node = p.nodes[p.samples[i]]; node; node = p.nodes[node.parent]) stack.push(node.callFrame.functionName || '(anonymous)');
    samples.push({ t, stack });
  }
}

const ms = us => Math.round(us / 1000);
const short = name => name.replace(/::h[0-9a-f]{16}/g, '').slice(0, 120);
const top = counts => Object.entries(counts).sort((x, y) => y[1] - x[1]).slice(0, ROWS);
// Frames every task of the page's Rust runs under: left out of the inclusive list.
const PLUMBING = /^\((root|program)\)$|^js-to-wasm$|^real$|^wasm_bindgen|^js_sys::futures|^<core::pin::Pin<P> as core::future::future::Future>::poll$/;
console.log(VIEWS ? `${path.basename(FILE)}: every view opened in ${ms(drawn.ts - chosen.ts)} ms (traced)`
  : PAN ? `${path.basename(FILE)}: pan and zoom${SEARCH ? ` highlighting ${SEARCH}` : ''} in ${ms(drawn.ts - chosen.ts)} ms (traced)`
  : SEARCH ? `${path.basename(FILE)}: search ${SEARCH} drawn ${ms(drawn.ts - chosen.ts)} ms after it was typed (traced)`
  : `${path.basename(FILE)}: first timeline ${ms(drawn.ts - chosen.ts)} ms after the choice (traced)`);
console.log(`load timings ${timings}`);
// SPAN's times count from the choice, or from the first timeline with FROM=draw.
const spanOrigin = process.env.FROM === 'draw' ? drawn.ts : chosen.ts;
const spans = SPAN
  ? [{ ts: spanOrigin + SPAN[0] * 1e3, dur: (SPAN[1] - SPAN[0]) * 1e3, span: true }]
  : longest;
for (const task of spans) {
  const inTask = samples.filter(s => s.t >= task.ts && s.t <= task.ts + task.dur && s.stack[0] !== '(idle)');
  const total = {};
  const self = {};
  for (const s of inTask) {
    self[short(s.stack[0])] = (self[short(s.stack[0])] || 0) + 1;
    for (const name of new Set(s.stack.map(short))) if (!PLUMBING.test(name)) total[name] = (total[name] || 0) + 1;
  }
  const share = n => `${String(Math.round(100 * n / Math.max(1, inTask.length))).padStart(3)} %`;
  if (task.span) {
    // CPU of the thread's tasks within the span (the profiler samples about every 0.1 ms).
    const tasks = events.filter(e => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask'
      && `${e.pid}:${e.tid}` === profiled && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur);
    const cpu = tasks.reduce((sum, e) => sum + (e.tdur || 0), 0);
    console.log(`\n${WORKER ? 'worker' : 'page'} from ${SPAN[0]} to ${SPAN[1]} ms: ${ms(cpu)} ms CPU in its tasks, ${inTask.length} samples`);
    // Its tasks of 2 ms or more, as start+wall/CPU (ms from the span's origin): where the gaps are.
    console.log(' tasks: ' + tasks.filter(e => e.dur >= 2000)
      .map(e => `${ms(e.ts - spanOrigin)}+${ms(e.dur)}/${ms(e.tdur || 0)}`).join(' '));
  } else {
    console.log(`\ntask at ${ms(task.ts - chosen.ts)} ms: ${ms(task.dur)} ms wall, ${ms(task.tdur || 0)} ms CPU, ${inTask.length} samples`);
  }
  if (CALLERS) {
    // The callers (up to 8 frames, innermost first) of the samples in CALLERS's functions.
    const chains = {};
    for (const s of inTask) {
      const at = s.stack.findIndex(f => CALLERS.test(f));
      if (at < 0) continue;
      const chain = s.stack.slice(at, at + 8).map(short).filter(f => !PLUMBING.test(f)).join(' < ');
      chains[chain] = (chains[chain] || 0) + 1;
    }
    console.log(` callers of ${CALLERS}:`);
    for (const [chain, n] of top(chains)) console.log(`  ${share(n)} ${chain}`);
  }
  console.log(' inclusive:');
  for (const [name, n] of top(total)) console.log(`  ${share(n)} ${name}`);
  console.log(' self:');
  for (const [name, n] of top(self)) console.log(`  ${share(n)} ${name}`);
}
