// End-to-end: links with the view in them. The address bar follows the view; the link, opened in a
// fresh page with ?url=, restores the same view (slider, colour by category, zoom, pinned allocation and
// its stack); for a local file the page says which file to open, and restores the view when it is.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, open, loadFile, shot, showAnalysis, FIXTURES, TIER2, ROOT, search } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const NAME = 'kk_memory_ctx128_fullstep.pickle';
const ready = page => page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
/** Waits until the address bar holds `hash` (it follows the view at most four times a second). */
const settled = (page, hash) => page.waitForFunction(h => location.hash === h, hash, { timeout: 10000 });
const screen = page => page.evaluate(() => ({
  view: document.querySelector('[data-testid=view-select]').value,
  detail: document.querySelector('[data-testid=detail-slider]')?.value,
  stack: document.querySelector('[data-testid=stack-trace]')?.textContent ?? null,
  head: document.querySelector('.stack-summary')?.textContent ?? null,
  highlight: document.querySelector('[data-testid=highlight]')?.textContent ?? null,
  hash: location.hash,
}));

/** Changes everything a link carries: slider, colour by category, zoom, a pinned allocation. */
async function arrange(page) {
  await page.$eval('[data-testid=detail-slider]', el => { el.value = '40'; el.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.getByText('Colour by category').click();
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.5);
  await page.mouse.wheel(0, -400);
  await search(page, 'optimizers.py:84');
  await page.press('[data-testid=search]', 'Enter');
  await page.waitForSelector('[data-testid=stack-trace]');
  // The address bar follows the view at most four times a second: the pin is the last change.
  await page.waitForFunction(() => location.hash.includes('pin=b'));
  await page.waitForTimeout(300);
}

test('a link restores the view on the same file, opened with ?url= in a fresh page', TIER2, async () => {
  const { page, errors } = await open(b, `${server.url}?url=${encodeURIComponent(server.url + NAME)}`);
  await ready(page);
  await arrange(page);
  const before = await screen(page);
  for (const part of ['view=timeline', 'detail=40', 'bycat=1', 'pin=b', 'range=', `file=${NAME}`, 'head=', 'find=optimizers.py:84']) {
    assert.ok(before.hash.includes(part), `${part} in ${before.hash}`);
  }
  await page.click('[data-testid=copy-link]');
  const link = await page.evaluate(() => location.href);
  const fresh = await open(b, link);
  await ready(fresh.page);
  await fresh.page.waitForSelector('[data-testid=stack-trace]');
  await settled(fresh.page, before.hash);
  const after = await screen(fresh.page);
  assert.deepEqual(after, before);
  await shot(fresh.page, 'share-restored');
  assert.deepEqual([...errors, ...fresh.errors], []);
  await page.close();
  await fresh.page.close();
});

test('a hand-edited or garbled link opens the file and leaves out what no view can be', TIER2, async () => {
  // Each once stopped the page (a view ending before it starts, or NaN, panicked in the timeline's
  // scale); a range beyond the trace is brought into it.
  const size = fs.statSync(path.join(FIXTURES, NAME)).size;
  for (const [hash, range] of [
    ['range=NaN_inf_-5&detail=NaN', null],
    ['range=500_10_0&view=segments', null],
    ['range=-1e308_1e308_1e308&detail=1e400&entry=-5', /^0\.0_\d+\.0_/],
    ['range=3_3.0000001_1e-300&entry=-9223372036854775808&view=state&pin=bzzz_9&cat=%FF&find=%00%FF', /^3\.0_3\.0_0$/],
  ]) {
    const { page, errors } = await open(b, `${server.url}?url=${encodeURIComponent(server.url + NAME)}#file=${NAME}&size=${size}&${hash}`);
    await ready(page);
    await page.waitForTimeout(400);
    const shown = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('range'));
    if (range) assert.match(shown ?? '', range, `${hash}: ${shown}`);
    for (const view of ['segments', 'state', 'analysis', 'timeline']) {
      await page.selectOption('[data-testid=view-select]', view);
      await page.waitForTimeout(300);
    }
    await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt);
    const box = await page.locator('[data-testid=timeline]').boundingBox();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    await page.mouse.wheel(0, -300);
    await page.waitForFunction(() => location.hash.includes('view=timeline'));
    await page.waitForTimeout(300);
    assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready', hash);
    assert.deepEqual(errors, [], hash);
    await page.close();
  }
});

test('the address bar follows a long pan at most four times a second, and ends on the view', TIER2, async () => {
  // Browsers ignore (Chromium) or refuse (Safari, Firefox) more than 100-200 rewrites in 10 s, after
  // which the address and "Copy link" would stay on an old view: count them.
  const counting = () => {
    const replace = history.replaceState.bind(history);
    window.__rewrites = 0;
    history.replaceState = (...args) => { window.__rewrites++; return replace(...args); };
  };
  const { page, errors } = await open(b, `${server.url}?url=${encodeURIComponent(server.url + NAME)}`, undefined, counting);
  await ready(page);
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await page.mouse.wheel(0, -600);
  await page.waitForTimeout(300);
  const range = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('range'));
  const from = await page.evaluate(() => [performance.now(), window.__rewrites]);
  // 300 view changes: a drag back and forth, a frame each.
  await page.mouse.down();
  for (let i = 0; i < 300; i++) {
    const t = (i % 100) / 100;
    await page.mouse.move(box.x + box.width * (i % 200 < 100 ? 0.3 + 0.4 * t : 0.7 - 0.4 * t), box.y + box.height * 0.5);
  }
  await page.mouse.up();
  await page.$eval('[data-testid=detail-slider]', el => { el.value = '37'; el.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.waitForFunction(() => location.hash.includes('detail=37'));
  const [at, rewrites] = await page.evaluate(() => [performance.now(), window.__rewrites]);
  const allowed = Math.ceil((at - from[0]) / 250) + 2;
  assert.ok(rewrites - from[1] <= allowed, `${rewrites - from[1]} rewrites in ${Math.round(at - from[0])} ms (at most ${allowed})`);
  const ended = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('range'));
  assert.ok(ended && ended !== range, `the range moved: ${range} → ${ended}`);
  await page.click('[data-testid=copy-link]');
  assert.ok((await page.evaluate(() => location.href)).includes('detail=37'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a link to a local file says which file to open, and restores the view when it is opened', TIER2, async () => {
  const { page } = await open(b, `${server.url}?url=${encodeURIComponent(server.url + NAME)}`);
  await ready(page);
  await arrange(page);
  const before = await screen(page);
  const fresh = await open(b, server.url + before.hash);
  assert.match(await fresh.page.textContent('[data-testid=link-notice]'), new RegExp(`view of ${NAME.replace(/\./g, '\\.')}`));
  await loadFile(fresh.page, path.join(FIXTURES, NAME));
  await fresh.page.waitForSelector('[data-testid=stack-trace]');
  await settled(fresh.page, before.hash);
  assert.deepEqual(await screen(fresh.page), before);
  await page.close();
  await fresh.page.close();
});

test('a renamed copy of the file still restores the view (matched by size and its first MiB)', TIER2, async () => {
  const { page } = await open(b, `${server.url}?url=${encodeURIComponent(server.url + NAME)}`);
  await ready(page);
  await arrange(page);
  const before = await screen(page);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-share-'));
  const copy = path.join(dir, 'renamed.pickle');
  fs.copyFileSync(path.join(FIXTURES, NAME), copy);
  const fresh = await open(b, server.url + before.hash);
  await loadFile(fresh.page, copy);
  await fresh.page.waitForSelector('[data-testid=stack-trace]');
  await settled(fresh.page, before.hash.replace(`file=${NAME}`, 'file=renamed.pickle'));
  const after = await screen(fresh.page);
  assert.deepEqual({ ...after, hash: '' }, { ...before, hash: '' });
  assert.ok(after.hash.includes('file=renamed.pickle'), after.hash);
  fs.rmSync(dir, { recursive: true, force: true });
  await page.close();
  await fresh.page.close();
});

test('a call path picked in the live-set tree comes back with the link', TIER2, async () => {
  const { page, errors } = await open(b, `${server.url}?url=${encodeURIComponent(server.url + NAME)}`);
  await ready(page);
  await showAnalysis(page);
  await page.locator('[data-testid=live-set-tree] .tree-frame', { hasText: 'optimizers.py' }).first().click();
  const chip = await page.textContent('[data-testid=highlight]');
  assert.match(chip, /Highlighted: optimizers\.py:\d+:step \(\d+ allocations\)/);
  await page.waitForFunction(() => location.hash.includes('path='));
  const link = await page.evaluate(() => location.href);
  const fresh = await open(b, link);
  await ready(fresh.page);
  await fresh.page.waitForSelector('[data-testid=highlight]');
  assert.equal(await fresh.page.textContent('[data-testid=highlight]'), chip);
  assert.equal(await fresh.page.$eval('[data-testid=view-select]', e => e.value), 'analysis');
  // On the timeline the same allocations stand out.
  await fresh.page.selectOption('[data-testid=view-select]', 'timeline');
  assert.equal(await fresh.page.textContent('[data-testid=highlight]'), chip);
  assert.deepEqual([...errors, ...fresh.errors], []);
  await page.close();
  await fresh.page.close();
});

test('a link to a comparison names its runs, and restores the view and baseline when they are opened', TIER2, async () => {
  const names = ['kk_memory_ctx128_forward.pickle', 'kk_memory_ctx128_fullstep.pickle'];
  const compared = page => page.waitForFunction(() => (document.querySelector('[data-testid=compare-status]')?.textContent ?? '').startsWith('2 runs compared'), null, { timeout: 60000 });
  const { page, errors } = await open(b, server.url);
  await page.setInputFiles('input[type=file]', names.map(n => path.join(FIXTURES, n)));
  await compared(page);
  await page.click(`tr[data-file="${names[1]}"][data-device="0"] .star`);
  await page.fill('[data-testid=gpu-memory]', '40');
  await page.press('[data-testid=gpu-memory]', 'Enter');
  await page.waitForFunction(n => location.hash.includes('runs=') && location.hash.includes(`base=${n}`)
    && location.hash.includes(`gpu=${40 * 2 ** 30}`), names[1]);
  const hash = await page.evaluate(() => location.hash);
  const fresh = await open(b, server.url + hash);
  const notice = await fresh.page.textContent('[data-testid=link-notice]');
  assert.match(notice, /compares 2 runs: kk_memory_ctx128_forward\.pickle \(.*\), kk_memory_ctx128_fullstep\.pickle/);
  await fresh.page.setInputFiles('input[type=file]', names.map(n => path.join(FIXTURES, n)));
  await compared(fresh.page);
  assert.equal(await fresh.page.$eval('[data-testid=view-select]', e => e.value), 'compare');
  const star = row => fresh.page.$eval(`tr[data-file="${row}"][data-device="0"] .star`, e => e.textContent);
  assert.equal(await star(names[1]), '★');
  assert.notEqual(await star(names[0]), '★');
  // The GPU memory comes back: 16.7 GiB reserved fits 40 GiB, 56.9 GiB does not.
  assert.equal(await fresh.page.$eval('[data-testid=gpu-memory]', e => e.value), '40.0 GiB');
  const fits = await fresh.page.$$eval('[data-testid=compare-table] tbody tr', rows => rows.map(r => r.querySelector('td.fit-yes, td.fit-no, td.fit-maybe')?.textContent));
  assert.deepEqual(fits, ['yes', 'no']);
  assert.deepEqual([...errors, ...fresh.errors], []);
  await page.close();
  await fresh.page.close();
});

test("a link to the Steps view names its step files, and restores the baseline and choices when they are opened", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-share-steps-'));
  try {
    // A job's folder as memograph-capture leaves it: two ranks' step records and exit snapshots.
    const job = path.join(dir, 'job');
    fs.mkdirSync(job);
    for (const rank of [0, 1]) {
      const lines = [1, 2, 3].map(step => JSON.stringify({ step, time: 1700000000 + step, rank,
        allocated_bytes: 2 ** 30, allocated_peak_bytes: (4 + rank) * 2 ** 30 + step * 2 ** 20,
        reserved_bytes: 6 * 2 ** 30, reserved_peak_bytes: (7 + rank) * 2 ** 30, alloc_retries: 0, ooms: 0 }));
      fs.writeFileSync(path.join(job, `rank${rank}_steps.jsonl`), lines.join('\n') + '\n');
    }
    fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'training.pickle'), path.join(job, 'rank0_exit_3.pickle'));
    fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'compiled.pickle'), path.join(job, 'rank1_exit_3.pickle'));
    const star = (page, rank) => page.$eval(`[data-testid=steps-table] tr[data-rank="${rank}"] .star`, e => e.textContent);
    const steps = page => page.waitForSelector('[data-testid=steps-table] tr[data-rank="1"]', { timeout: 60000 });
    const arranged = async (page) => {
      await page.selectOption('[data-testid=view-select]', 'steps');
      await steps(page);
      await page.click('[data-testid=steps-table] tr[data-rank="1"] .star');
      await page.check('[data-testid=show-reserved]');
      await page.waitForFunction(() => /view=steps/.test(location.hash) && /sbase=job\/rank1_steps\.jsonl/.test(location.hash)
        && /srank=1/.test(location.hash) && /sres=1/.test(location.hash));
      return page.evaluate(() => location.hash);
    };

    // The folder: snapshots compared, step records in Steps.
    const { page, errors } = await open(b, server.url);
    await page.setInputFiles('[data-testid=open-folder]', job);
    await page.waitForFunction(() => (document.querySelector('[data-testid=compare-status]')?.textContent ?? '').startsWith('2 runs compared'), null, { timeout: 60000 });
    const hash = await arranged(page);
    assert.match(hash, /steps=job\/rank0_steps\.jsonl%0Ajob\/rank1_steps\.jsonl/);
    const fresh = await open(b, server.url + hash);
    assert.match(await fresh.page.textContent('[data-testid=link-notice-steps]'),
      /Steps view of 2 step-record files: job\/rank0_steps\.jsonl, job\/rank1_steps\.jsonl\. Open them together, or their folder/);
    await fresh.page.setInputFiles('[data-testid=open-folder]', job);
    await steps(fresh.page);
    // Steps from the start, while the snapshots are compared and once they are.
    assert.equal(await fresh.page.$eval('[data-testid=view-select]', e => e.value), 'steps');
    await fresh.page.waitForFunction(() => (document.querySelector('[data-testid=compare-status]')?.textContent ?? '').startsWith('2 runs compared')
      || (document.querySelector('[data-testid=steps-status]') && !/reading/.test(document.body.innerText) && document.querySelector('#app').dataset.state === 'ready'), null, { timeout: 60000 });
    await fresh.page.waitForFunction(() => document.querySelector('[data-testid=view-select]').value === 'steps');
    assert.equal(await star(fresh.page, 1), '★');
    assert.equal(await star(fresh.page, 0), '☆');
    assert.equal(await fresh.page.isChecked('[data-testid=show-reserved]'), true);
    await shot(fresh.page, 'share-steps-restored');

    // Step records alone, picked as files: the link waits for both, however they come.
    const alone = await open(b, server.url);
    const files = [0, 1].map(r => path.join(job, `rank${r}_steps.jsonl`));
    await alone.page.setInputFiles('input[type=file]', files);
    await steps(alone.page);
    await alone.page.click('[data-testid=steps-table] tr[data-rank="1"] .star');
    await alone.page.waitForFunction(() => /^#view=steps&steps=rank0_steps\.jsonl%0Arank1_steps\.jsonl&sbase=rank1_steps\.jsonl&srank=1$/.test(location.hash));
    const link = await open(b, server.url + await alone.page.evaluate(() => location.hash));
    await link.page.setInputFiles('input[type=file]', files[0]);
    await link.page.waitForSelector('[data-testid=steps-table] tr[data-rank="0"]');
    // One of the two: the view is Steps (all that is open) and the baseline waits.
    assert.equal(await star(link.page, 0), '★');
    await link.page.setInputFiles('input[type=file]', files[1]);
    await steps(link.page);
    await link.page.waitForFunction(() => document.querySelector('[data-testid=steps-table] tr[data-rank="1"] .star').textContent === '★');
    assert.equal(await link.page.isChecked('[data-testid=show-reserved]'), false);
    assert.deepEqual([...errors, ...fresh.errors, ...alone.errors, ...link.errors], []);
    for (const p of [page, fresh.page, alone.page, link.page]) await p.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
