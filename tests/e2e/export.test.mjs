// End-to-end: pictures leave the page as files. Every picture's PNG (twice the device pixel ratio)
// decodes to an image of that size that is not blank, and its SVG parses, holds shapes and text; the
// timeline's SVG holds the pinned allocation's outline and the peak label, as on screen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, ROOT, search, showAnalysis } from './harness.mjs';

let server, b, dir;
before(async () => {
  server = await serve();
  b = await browser();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-export-'));
  for (const name of ['run_a.pickle.gz', 'run_b.pickle.gz']) fs.copyFileSync(path.join(ROOT, 'assets', 'example.pickle.gz'), path.join(dir, name));
  const lines = [1, 2, 3, 4].map(step => JSON.stringify({ step, rank: 0, allocated_bytes: 2 ** 30, allocated_peak_bytes: (2 + step) * 2 ** 30,
    active_bytes: 2 ** 30, active_peak_bytes: (2 + step) * 2 ** 30, reserved_bytes: 8 * 2 ** 30, reserved_peak_bytes: 8 * 2 ** 30, alloc_retries: 0, ooms: 0 }));
  fs.writeFileSync(path.join(dir, 'rank0_steps.jsonl'), lines.join('\n') + '\n');
});
after(async () => { await b?.close(); await server?.close(); fs.rmSync(dir, { recursive: true, force: true }); });

async function page() {
  const context = await b.newContext({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1, acceptDownloads: true });
  const p = await context.newPage();
  const errors = [];
  p.on('pageerror', e => errors.push(String(e)));
  p.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  await p.goto(server.url);
  await p.waitForSelector('#app[data-state=empty]');
  return { p, errors, context };
}

/** Clicks `button` and returns the download's name and bytes. */
async function download(p, button) {
  const [d] = await Promise.all([p.waitForEvent('download'), p.click(button)]);
  return { name: d.suggestedFilename(), bytes: fs.readFileSync(await d.path()) };
}

/** The PNG's size, and how many distinct colours it has (decoded by the browser). */
async function png(p, bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'a PNG signature');
  return p.evaluate(async (b64) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4 * 7) colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return { width: img.width, height: img.height, colours: colours.size };
  }, bytes.toString('base64'));
}

/** The SVG parsed by the browser: a parse error, its size and how many of each element. */
async function svg(p, bytes) {
  return p.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const count = sel => doc.querySelectorAll(sel).length;
    return {
      error: doc.querySelector('parsererror')?.textContent ?? null,
      width: Number(doc.documentElement.getAttribute('width')),
      shapes: count('path') + count('rect') + count('polygon') + count('polyline') + count('circle'),
      texts: [...doc.querySelectorAll('text')].map(t => t.textContent),
    };
  }, bytes.toString('utf8'));
}

/** Both exports of the picture in `canvas` (by `testid`): a PNG at 2× and an SVG of its CSS size. */
async function exportBoth(p, testid, canvas, minShapes = 3) {
  const box = await p.locator(canvas).boundingBox();
  const a = await download(p, `[data-testid=${testid}-png]`);
  assert.match(a.name, /\.png$/);
  const image = await png(p, a.bytes);
  assert.equal(image.width, Math.round(box.width * 2), `${testid}: PNG width`);
  assert.equal(image.height, Math.round(box.height * 2), `${testid}: PNG height`);
  assert.ok(image.colours >= 3, `${testid}: PNG is not blank (${image.colours} colours)`);
  const v = await download(p, `[data-testid=${testid}-svg]`);
  assert.match(v.name, /\.svg$/);
  const doc = await svg(p, v.bytes);
  assert.equal(doc.error, null, `${testid}: SVG parses`);
  assert.equal(doc.width, Math.round(box.width), `${testid}: SVG width`);
  assert.ok(doc.shapes >= minShapes, `${testid}: ${doc.shapes} shapes`);
  return { image, doc, names: [a.name, v.name] };
}

test('the timeline, the segment timeline and every analysis chart export as PNG and SVG', async () => {
  const { p, errors, context } = await page();
  await p.click('text=Open example');
  await p.waitForSelector('#app[data-state=ready]');
  // Pin the largest allocation through the search, so the export shows its outline.
  await search(p, 'optimizers.py:84');
  await p.press('[data-testid=search]', 'Enter');
  await p.waitForSelector('.stack-summary');
  const t = await exportBoth(p, 'export-timeline', '[data-testid=timeline]', 50);
  assert.equal(t.names[0], "kk_memory_ctx128_fullstep_cuda0_timeline.png");
  assert.ok(t.doc.texts.some(s => s.startsWith('peak ')), 'the peak label');
  assert.ok(t.doc.texts.some(s => /GiB$/.test(s)), 'the byte axis');
  fs.writeFileSync(path.join(ROOT, 'target', 'e2e-screenshots', 'export-timeline.svg'), (await download(p, '[data-testid=export-timeline-svg]')).bytes);

  await p.selectOption('[data-testid=view-select]', 'segments');
  // The segment timeline is built in tasks of its own once the view asks for it; the buttons come first.
  await p.waitForFunction(() => /^Reserved peak/.test(document.querySelector('[data-testid=peak]')?.textContent));
  await exportBoth(p, 'export-segments', '[data-testid=timeline]', 10);

  assert.deepEqual(errors, []);
  await context.close();

  // Chromium stops taking downloads from one page after a score of them: a page per chart.
  const charts = await (async () => {
    const { p, context } = await page();
    await p.click('text=Open example');
    await showAnalysis(p);
    await p.waitForSelector('[data-testid=category-chart]');
    const all = await p.$$eval('canvas.chart', cs => cs.map(c => c.dataset.testid));
    await context.close();
    return all;
  })();
  assert.equal(charts.length, 8, charts.join(' '));
  for (const chart of charts) {
    const { p, errors, context } = await page();
    await p.click('text=Open example');
    await showAnalysis(p);
    await p.waitForSelector(`[data-testid=${chart}]`);
    const r = await exportBoth(p, chart, `[data-testid=${chart}]`, 1);
    assert.ok(r.doc.texts.length > 0, `${chart}: SVG has text`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('the compare curves and the step chart export as PNG and SVG', async () => {
  const { p, errors, context } = await page();
  await p.setInputFiles('input[type=file]', [path.join(dir, 'run_a.pickle.gz'), path.join(dir, 'run_b.pickle.gz')]);
  await p.waitForFunction(() => (document.querySelector('[data-testid=compare-status]')?.textContent ?? '').startsWith('2 runs compared'), null, { timeout: 60000 });
  const c = await exportBoth(p, 'export-compare', '[data-testid=compare-chart]');
  // The legend (laid out by the chart crate, not plotters) names each run with its peak.
  for (const run of ['run_a', 'run_b']) {
    assert.ok(c.doc.texts.some(t => t.includes(run) && t.includes('(peak ')), `${run} in the legend: ${c.doc.texts}`);
  }
  await p.setInputFiles('input[type=file]', [path.join(dir, 'rank0_steps.jsonl')]);
  await p.waitForSelector('[data-testid=steps-chart]');
  const s = await exportBoth(p, 'export-steps', '[data-testid=steps-chart]');
  assert.ok(s.doc.texts.length > 0);
  assert.deepEqual(errors, []);
  await context.close();
});
