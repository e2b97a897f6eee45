#!/usr/bin/env node
// Search benchmark in headless Chromium, on the built dist/: per kind of query, on each file, twice each
// (the second warm), the time from typing it to its matches counted and drawn highlighted (the search
// runs in the background, in slices: the measure is on the page's clock, from the input event to two
// frames after the count shows), and the longest main-thread task meanwhile (PerformanceObserver
// 'longtask'; none is 0). Files: the arguments, or bench-out/'s 185 MB long-run shape and 1 GB
// synthetic file (made by scripts/bench_web.mjs with BIG=1). DETAIL=100 searches at 100 % detail.
//   node scripts/bench_search.mjs [FILE ...]
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, built, ROOT } from '../tests/e2e/harness.mjs';

let files = process.argv.slice(2);
if (files.length === 0) {
  files = ['rounds_185mb.pickle', 'synth_1gb.pickle'].map(f => path.join(ROOT, 'bench-out', f)).filter(f => fs.existsSync(f));
}
const QUERIES = process.env.QUERIES ? process.env.QUERIES.split(',') : ['optimizers.py', 'forward', '>100MB', '<4KiB', '1.0 GiB', 'b7f', '0x7f', 'Activation'];

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
  if (process.env.DETAIL) {
    await page.locator('[data-testid=detail-slider]').fill(process.env.DETAIL);
    await built(page);
  }
  let worst = 0, longestTask = 0;
  for (const q of QUERIES) {
    const runs = [];
    for (let k = 0; k < 2; k++) {
      runs.push(await page.evaluate((q) => new Promise((resolve) => {
        const el = document.querySelector('[data-testid=search]');
        const count = document.querySelector('[data-testid=search-count]');
        el.value = '';
        el.dispatchEvent(new Event('input', { bubbles: true }));
        const tasks = [];
        const observer = new PerformanceObserver(list => { for (const t of list.getEntries()) tasks.push(t.duration); });
        observer.observe({ type: 'longtask' });
        const t0 = performance.now();
        el.value = q;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        const poll = () => {
          const text = count.textContent;
          if (!text || text === 'searching…') return requestAnimationFrame(poll);
          requestAnimationFrame(() => requestAnimationFrame(() => {
            const ms = performance.now() - t0;
            // Long tasks are reported after they end: one more task for the last to come in.
            setTimeout(() => {
              observer.disconnect();
              resolve({ ms, longest: Math.max(0, ...tasks), count: text });
            }, 0);
          }));
        };
        requestAnimationFrame(poll);
      }), q));
    }
    worst = Math.max(worst, ...runs.map(r => r.ms));
    longestTask = Math.max(longestTask, ...runs.map(r => r.longest));
    console.log(`  ${q.padEnd(14)} ${runs.map(r => `${r.ms.toFixed(0).padStart(5)} ms`).join(" ")}   longest task ${runs.map(r => Math.round(r.longest)).join(" / ")} ms   ${runs[1].count}`);
  }
  console.log(`  worst: ${worst.toFixed(0)} ms, longest task ${Math.round(longestTask)} ms`);
  await page.close();
}
await b.close();
await server.close();
