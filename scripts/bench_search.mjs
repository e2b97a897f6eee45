#!/usr/bin/env node
// Search benchmark in headless Chromium, on the built dist/: the time from typing a query to its
// matches being highlighted (the search runs in the input event's task on the page's thread; the
// measure is that task, redraw included), per kind of query, on each file, twice each (the second
// warm). Files: the arguments, or bench-out/'s 185 MB long-run shape and 1 GB synthetic file (made by
// scripts/bench_web.mjs with BIG=1).
//   node scripts/bench_search.mjs [FILE ...]
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, ROOT } from '../tests/e2e/harness.mjs';

let files = process.argv.slice(2);
if (files.length === 0) {
  files = ['rounds_185mb.pickle', 'synth_1gb.pickle'].map(f => path.join(ROOT, 'bench-out', f)).filter(f => fs.existsSync(f));
}
const QUERIES = ['optimizers.py', 'forward', '>100MB', '<4KiB', '1.0 GiB', 'b7f', '0x7f', 'Activation'];

const server = await serve();
const b = await browser();
for (const file of files) {
  const page = await b.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  await page.setInputFiles('input[type=file]', file);
  await page.waitForSelector('#app[data-state=ready]', { timeout: 300000 });
  const allocations = await page.$eval('.slider .muted', e => e.textContent.replace(/.* of /, ''));
  console.log(`${path.basename(file)} (${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MiB, ${allocations})`);
  let worst = 0;
  for (const q of QUERIES) {
    const times = [];
    for (let k = 0; k < 2; k++) {
      times.push(await page.evaluate((q) => {
        const el = document.querySelector('[data-testid=search]');
        el.value = '';
        el.dispatchEvent(new Event('input', { bubbles: true }));
        const t0 = performance.now();
        el.value = q;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        return performance.now() - t0;
      }, q));
    }
    const count = await page.textContent('[data-testid=search-count]');
    worst = Math.max(worst, ...times);
    console.log(`  ${q.padEnd(14)} ${times.map(t => `${t.toFixed(0).padStart(5)} ms`).join(' ')}   ${count}`);
  }
  console.log(`  worst: ${worst.toFixed(0)} ms`);
  await page.close();
}
await b.close();
await server.close();
