// End-to-end: finding allocations on the timeline by frame text, size and address; Enter steps
// through the matches and pins each, so its stack shows; the state history lists the matches' events.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, open, loadFile, shot, search, showAnalysis, FIXTURES, TIER2 } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const matches = async page => {
  const text = await page.textContent('[data-testid=search-count]');
  const m = text.replace(/\s/g, '').match(/(?:\d+of)?(\d+)match/);
  return m ? Number(m[1]) : 0;
};

test('a search highlights its matches; Enter pins them one by one', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  // By frame text: Adam's moment buffers.
  await search(page, 'optimizers.py:82');
  await page.waitForFunction(() => /match/.test(document.querySelector('[data-testid=search-count]').textContent));
  const n = await matches(page);
  assert.ok(n > 0, await page.textContent('[data-testid=search-count]'));
  assert.match(await page.textContent('[data-testid=highlight]'), new RegExp(`search: optimizers\\.py:82 \\(${n} allocations\\)`));
  await page.press('[data-testid=search]', 'Enter');
  await page.waitForSelector('[data-testid=stack-trace]');
  assert.match(await page.textContent('[data-testid=stack-trace]'), /optimizers\.py:82/);
  // The stack marks the frame the search found, and only it.
  assert.deepEqual(await page.$$eval('[data-testid=stack-trace] .frame.hit', fs => fs.map(f => f.textContent.trim())),
    [await page.$eval('[data-testid=stack-trace]', e => e.textContent.split('\n').find(l => l.includes('optimizers.py:82')).trim())]);
  assert.match(await page.textContent('[data-testid=search-count]'), /^1 of /);
  await page.press('[data-testid=search]', 'Enter');
  assert.match(await page.textContent('[data-testid=search-count]'), n > 1 ? /^2 of / : /^1 of /);
  await shot(page, 'find-frame');
  // By size: everything over 10 GiB is a subset of everything over 100 MiB.
  await search(page, '>10GiB');
  const big = await matches(page);
  await search(page, '>100MB');
  const over = await matches(page);
  assert.ok(over >= big && over > 0, `${over} ${big}`);
  // By address: the pinned allocation's name (from its stack panel head) finds exactly it.
  await page.press('[data-testid=search]', 'Enter');
  const head = await page.textContent('.stack-summary');
  const name = head.match(/b[0-9a-f]+_\d+/)[0];
  await search(page, name);
  assert.equal(await matches(page), 1);
  // The state history lists only that allocation's events: its alloc (and free, if it was freed).
  await page.selectOption('[data-testid=view-select]', 'state');
  await page.waitForSelector('[data-testid=history-filter]');
  await page.waitForSelector('.event-row');
  const listed = await page.$$eval('.event-row', rows => rows.map(r => ({
    action: r.querySelector('.action').textContent, name: r.querySelector('.addr').textContent })));
  assert.equal(Number(await page.getAttribute('[data-testid=history-filter]', 'data-count')), listed.length);
  assert.ok(listed.length >= 1 && listed.length <= 3, JSON.stringify(listed));
  assert.ok(listed.every(r => r.name === name), JSON.stringify(listed));
  assert.equal(listed[0].action, 'alloc');
  await shot(page, 'find-history');
  // Unticked: every event again.
  await page.click('[data-testid=history-filter] input');
  assert.ok(await page.locator('.event-row').count() > listed.length);
  await page.selectOption('[data-testid=view-select]', 'timeline');
  // Cleared: nothing highlighted by the search.
  await search(page, '');
  assert.equal(await page.locator('[data-testid=highlight]').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the live set at the peak downloads as CSV whose rows add up to the reference peak; the analyses as JSON', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  await showAnalysis(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-live-csv]')]);
  const csv = fs.readFileSync(await download.path(), 'utf8').trim().split('\n');
  assert.equal(csv[0], 'name,address,bytes,category,allocated at,alloc entry');
  const sum = csv.slice(1).reduce((s, line) => s + BigInt(line.split(',')[2]), 0n);
  const reference = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'reference', 'kk_memory_ctx128_fullstep.pickle.json')));
  assert.equal(sum, BigInt(reference.devices['0'].timeline_peak_bytes));
  // The top consumers are the live set's largest rows, in its order.
  const [top] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-consumers-csv]')]);
  const consumers = fs.readFileSync(await top.path(), 'utf8').trim().split('\n');
  assert.equal(consumers[0], 'rank,name,bytes,category,allocated at,alloc entry');
  assert.ok(consumers.length > 5);
  const bytesOf = (line, k) => line.split(',')[k];
  for (let r = 1; r < consumers.length; r++) assert.ok(BigInt(bytesOf(consumers[r], 2)) <= BigInt(bytesOf(consumers[r - 1], 2) === 'bytes' ? bytesOf(consumers[r], 2) : bytesOf(consumers[r - 1], 2)));
  assert.equal(bytesOf(consumers[1], 2), bytesOf(csv[1], 2));
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-report-json]')]);
  const report = JSON.parse(fs.readFileSync(await json.path(), 'utf8'));
  assert.equal(report.live_bytes, reference.devices['0'].timeline_peak_bytes);
  assert.deepEqual(errors, []);
  await page.close();
});
