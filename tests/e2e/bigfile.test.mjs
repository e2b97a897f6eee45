// End-to-end: a file bigger than the page's in-flight window streams to the parsing worker while the
// page keeps answering, and gives the same peak as the native CLI on the same file, whichever way the
// browser reads it (a byte stream into reused buffers, or slices).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { serve, browser, open, loadFile, clickWhen, shot, cliJson, ROOT, TIER2, HAVE_FIXTURES } from './harness.mjs';

let server, b, big;
before(async () => {
  const dir = path.join(os.tmpdir(), 'memograph-e2e-big');
  fs.mkdirSync(dir, { recursive: true });
  // A real snapshot tiled to 80 MB (tier 2), or the engine's synthetic one of that size (tier 1).
  big = path.join(dir, HAVE_FIXTURES ? 'tiled_80mb.pickle' : 'synth_80mb.pickle');
  if (!fs.existsSync(big)) {
    if (HAVE_FIXTURES) {
      execFileSync('python3', [path.join(ROOT, 'scripts', 'tile_snapshot.py'), '--size', '80', '--out', big], { stdio: 'ignore' });
    } else {
      execFileSync('cargo', ['run', '-q', '--release', '-p', 'memograph-snapshot', '--example', 'synth', '--', '11500', big],
        { cwd: ROOT, stdio: 'ignore' });
    }
  }
  server = await serve();
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

/** The native CLI's peak of the default device (built by `cargo test`; built here when missing). */
function nativePeak(file) {
  const { devices } = cliJson(['summary', '--json', file]);
  // The device the page opens first: the longest trace (ties: the lowest).
  let best = null;
  for (const [d, v] of Object.entries(devices)) {
    const n = Object.values(v.events).reduce((a, c) => a + c, 0);
    if (best === null || n > best.n) best = { n, peak: v.timeline_peak_bytes };
  }
  return best.peak;
}

test('a file over the in-flight window streams to the worker while the page answers, with the CLI peak', async () => {
  const { page, errors } = await open(b, server.url);
  // While it loads: the bar moves through parsing, and the page's thread answers within a frame or two.
  // Both are recorded in the page, at every change of the label and every frame, so that how often this
  // test's round trips get through (fewer, the faster the load and the busier the machine) decides nothing.
  await page.evaluate(() => {
    const watch = globalThis.loadWatch = { percents: [], longestFrame: 0 };
    new MutationObserver(() => {
      const m = document.querySelector('.progress-label')?.textContent.match(/parsing (\d+) %/);
      if (m && watch.percents.at(-1) !== Number(m[1])) watch.percents.push(Number(m[1]));
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
    let last = performance.now();
    const frame = now => {
      watch.longestFrame = Math.max(watch.longestFrame, now - last);
      last = now;
      if (!['ready', 'error'].includes(document.querySelector('#app').dataset.state)) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
  await page.setInputFiles('input[type=file]', big);
  // A screenshot once the bar has moved, if the load is still going by then (a screenshot takes longer
  // than an 80 MB parse now does; taken at the first value it could hide every later one).
  let shotTaken = false;
  while (!['ready', 'error'].includes(await page.$eval('#app', e => e.dataset.state))) {
    if (!shotTaken && await page.evaluate(() => globalThis.loadWatch.percents.length >= 2)) {
      shotTaken = true;
      await shot(page, 'big-file-loading');
    }
    await new Promise(r => setTimeout(r, 10));
  }
  const { percents, longestFrame } = await page.evaluate(() => globalThis.loadWatch);
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready');
  assert.ok(percents.length >= 2, `progress seen: ${percents}`);
  assert.ok(longestFrame < 1000, `the page went ${Math.round(longestFrame)} ms without a frame during the load`);
  const timings = JSON.parse(await page.$eval('#app', e => e.dataset.loadTimings));
  assert.ok(timings.read > 0 && timings.parse > 0, JSON.stringify(timings));
  // The pieces were read from the file's byte stream into a few buffers the worker handed back, not
  // into a fresh buffer per piece (20 of them here).
  assert.ok(timings.buffers >= 1 && timings.buffers <= 5, JSON.stringify(timings));
  const peak = nativePeak(big);
  assert.ok((await page.$eval('[data-testid=peak]', e => e.title)).includes(String(peak)), `CLI peak ${peak}`);
  await shot(page, 'big-file');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Cancel stops a load while it parses or builds its model: nothing opens, and the next load works', async () => {
  const { page, errors } = await open(b, server.url);
  // Cancel is pressed by the page itself at the moment the label first matches `when` (an 80 MB
  // load can end before a round trip from here).
  const cancelWhen = when => clickWhen(page, '.progress-label', when, '[data-testid=cancel-load]');
  const state = () => page.$eval('#app', e => e.dataset.state);
  for (const when of [/parsing [1-9]\d? %/, /building the model/]) {
    await cancelWhen(when);
    await page.setInputFiles('input[type=file]', big);
    await page.waitForFunction(() => globalThis.clickedAt !== null, null, { timeout: 60000 });
    // Back where it was before the file was chosen, and it stays so: the load does not come back.
    assert.equal(await state(), 'empty', `cancelled at "${await page.evaluate(() => globalThis.clickedAt)}"`);
    await page.waitForTimeout(2000);
    assert.equal(await state(), 'empty');
    assert.equal(await page.$('[data-testid=file-select]'), null);
    assert.ok(await page.isVisible('.welcome'));
  }
  // The next load opens whole, with the CLI's peak.
  await loadFile(page, big);
  assert.equal(await state(), 'ready');
  const peak = nativePeak(big);
  assert.ok((await page.$eval('[data-testid=peak]', e => e.title)).includes(String(peak)), `CLI peak ${peak}`);
  // The same file picked again is not read again: the one open is shown.
  await page.setInputFiles('input[type=file]', big);
  assert.equal(await state(), 'ready');
  await page.waitForTimeout(1000);
  assert.equal(await page.$$eval('[data-testid=file-select] option', o => o.length), 1);
  // With a file open, a cancelled second one (another file: a copy under another name) leaves the
  // first shown.
  const copy = big.replace(/\.pickle$/, '_copy.pickle');
  fs.copyFileSync(big, copy);
  await cancelWhen(/parsing [1-9]\d? %/);
  await page.setInputFiles('input[type=file]', copy);
  await page.waitForFunction(() => globalThis.clickedAt !== null, null, { timeout: 60000 });
  await page.waitForTimeout(2000);
  fs.rmSync(copy);
  assert.equal(await state(), 'ready');
  assert.equal(await page.$$eval('[data-testid=file-select] option', o => o.length), 1);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a gzip file streams through the same path and gives the same peak', async () => {
  const gz = big + '.gz';
  if (!fs.existsSync(gz)) fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(big), { level: 1 }));
  const { page, errors } = await open(b, server.url);
  await page.setInputFiles('input[type=file]', gz);
  await page.waitForFunction(() => document.querySelector('#app').dataset.state !== 'loading', null, { timeout: 120000 });
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready');
  const peak = nativePeak(big);
  assert.ok((await page.$eval('[data-testid=peak]', e => e.title)).includes(String(peak)), `CLI peak ${peak}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('where the browser reads no byte stream, the file goes in slices and gives the same peak', async () => {
  // As in a browser without bring-your-own-buffer readers: the page falls back to reading slices.
  const { page, errors } = await open(b, server.url, undefined, () => { delete globalThis.ReadableStreamBYOBReader; });
  await loadFile(page, big);
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready');
  const timings = JSON.parse(await page.$eval('#app', e => e.dataset.loadTimings));
  assert.equal(timings.buffers, Math.ceil(fs.statSync(big).size / (4 << 20)), JSON.stringify(timings));
  const peak = nativePeak(big);
  assert.ok((await page.$eval('[data-testid=peak]', e => e.title)).includes(String(peak)), `CLI peak ${peak}`);
  assert.deepEqual(errors, []);
  await page.close();
});
