#!/usr/bin/env node
// Where the machine's CPU goes during a load, thread by thread: loads FILE in headless Chromium (a new
// tab each time, the file chosen as soon as the page is empty, as a cold load in scripts/bench_web.mjs;
// KIND=warm: 1.5 s later) and reads each browser thread's scheduler statistics (/proc/PID/task/TID/
// schedstat, Linux only) at the choice and at the first timeline. For each kind of thread it prints the
// CPU it ran and the time it waited, runnable, for a core: on two cores, the parsing worker's wait is
// what the page's other work costs the parse. A tool for finding what competes, not a benchmark.
//
//   FILE=bench-out/rounds_185mb.pickle N=3 node scripts/cpu_by_thread.mjs
//
// SERIES=100 adds the main threads' run/wait per 100 ms over the load (reading /proc that often costs
// this script's own thread some CPU, which the `node` row shows). DIST (default dist) is the build.
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, ROOT, FIXTURES } from '../tests/e2e/harness.mjs';

const FILE = path.resolve(process.env.FILE || path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
const DIST = path.resolve(ROOT, process.env.DIST || 'dist');
const N = Number(process.env.N || 3);
const WARM = process.env.KIND === 'warm';
const SERIES = Number(process.env.SERIES || 0);

/** Every browser thread (and this script's) now: `pid/tid` → its kind, run and wait in ns. */
function snap() {
  const threads = new Map();
  for (const pid of fs.readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    let cmd;
    try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { continue; }
    let process_;
    if (/chrom/.test(path.basename(cmd.split('\0')[0]))) process_ = (cmd.match(/--type=([a-z-]+)/) || [, 'browser'])[1];
    else if (Number(pid) === process.pid) process_ = 'node';
    else continue;
    let tids = [];
    try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tids) {
      try {
        const comm = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
        const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        // A process's first thread is its main thread (a renderer's runs the page).
        const name = tid === pid ? 'main' : comm.replace(/\d+$/, '#');
        threads.set(`${pid}/${tid}`, { kind: `${process_}: ${name}`, run, wait });
      } catch { /* the thread ended meanwhile */ }
    }
  }
  return threads;
}

/** Run and wait in ms between two snapshots, summed by kind of thread, busiest first. */
function between(a, b) {
  const kinds = new Map();
  for (const [k, t] of b) {
    const o = a.get(k) || { run: 0, wait: 0 };
    const run = (t.run - o.run) / 1e6, wait = (t.wait - o.wait) / 1e6;
    if (run < 0.5 && wait < 0.5) continue;
    const e = kinds.get(t.kind) || { run: 0, wait: 0, threads: 0 };
    e.run += run; e.wait += wait; e.threads++;
    kinds.set(t.kind, e);
  }
  return [...kinds].sort((x, y) => y[1].run - x[1].run);
}

const ms = x => Math.round(x).toString().padStart(5);
const server = await serve(DIST);
const b = await browser();
const ctx = await b.newContext({ viewport: { width: 1400, height: 860 } });
await (await ctx.newPage()).goto('about:blank');
await new Promise(r => setTimeout(r, 1500));
let last;
for (let i = 0; i < N; i++) {
  if (last) { await last.close(); await new Promise(r => setTimeout(r, 1500)); }
  const page = last = await ctx.newPage();
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  if (WARM) await new Promise(r => setTimeout(r, 1500));
  const chosen = await page.evaluate(() => performance.now());
  const start = snap();
  const t0 = performance.now();
  const series = [];
  let previous = start;
  const timer = SERIES ? setInterval(() => {
    const now = snap();
    series.push([performance.now() - t0, new Map(between(previous, now))]);
    previous = now;
  }, SERIES) : null;
  await page.setInputFiles('input[type=file]', FILE);
  await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt, null, { timeout: 600000 });
  if (timer) clearInterval(timer);
  const rows = between(start, snap());
  const window = performance.now() - t0;
  const first = Number(await page.$eval('#app', e => e.dataset.firstDrawAt)) - chosen;
  const t = JSON.parse(await page.$eval('#app', e => e.dataset.loadTimings));
  const cpu = rows.reduce((s, [, e]) => s + e.run, 0);
  console.log(`${path.basename(FILE)} load ${i + 1} (${WARM ? 'warm' : 'cold'}): first timeline ${Math.round(first)} ms, worker parse ${Math.round(t.parse)} (waited for bytes ${Math.round(t.worker_waited)}); all threads ran ${Math.round(cpu)} ms in ${Math.round(window)}: ${(cpu / window).toFixed(2)} cores`);
  console.log('   thread                              ran ms  waited ms  (threads)');
  for (const [kind, e] of rows.slice(0, 14)) console.log(`   ${kind.padEnd(36)}${ms(e.run)}      ${ms(e.wait)}  (${e.threads})`);
  if (series.length) {
    const columns = [['renderer: DedicatedWorker', 'worker'], ['renderer: main', 'page'], ['renderer: ThreadPoolForeg', 'page pool'],
      ['browser: Chrome_IOThread', 'browser IO'], ['browser: ThreadPoolForeg', 'browser pool']]
      .filter(([k]) => series.some(([, d]) => d.has(k)));
    const kinds = columns.map(([k]) => k);
    console.log(`   ms  ${columns.map(([, label]) => label.padStart(14)).join('')}   (ran/waited per ${SERIES} ms; pool: compiles, GC, file reads)`);
    for (const [at, d] of series) {
      console.log(`   ${ms(at)}${kinds.map(k => (d.has(k) ? `${Math.round(d.get(k).run)}/${Math.round(d.get(k).wait)}` : '-').padStart(14)).join('')}`);
    }
  }
}
await b.close();
await server.close();
