// End-to-end: links with the view in them. The address bar follows the view; the link, opened in a
// fresh page with ?url=, restores the same view (slider, colour by category, zoom, pinned allocation and
// its stack); for a local file the page says which file to open, and restores the view when it is.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { serve, browser, open, loadFile, shot, FIXTURES, TIER2 } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const NAME = 'kk_memory_ctx128_fullstep.pickle';
const ready = page => page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
const screen = page => page.evaluate(() => ({
  view: document.querySelector('[data-testid=view-select]').value,
  detail: document.querySelector('[data-testid=detail-slider]')?.value,
  stack: document.querySelector('[data-testid=stack-trace]')?.textContent ?? null,
  head: document.querySelector('.stack-summary')?.textContent ?? null,
  hash: location.hash,
}));

/** Changes everything a link carries: slider, colour by category, zoom, a pinned allocation. */
async function arrange(page) {
  await page.$eval('[data-testid=detail-slider]', el => { el.value = '40'; el.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.getByText('Colour by category').click();
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.5);
  await page.mouse.wheel(0, -400);
  await page.fill('[data-testid=search]', 'optimizers.py:84');
  await page.press('[data-testid=search]', 'Enter');
  await page.waitForSelector('[data-testid=stack-trace]');
  await page.waitForTimeout(300);
}

test('a link restores the view on the same file, opened with ?url= in a fresh page', TIER2, async () => {
  const { page, errors } = await open(b, `${server.url}?url=${encodeURIComponent(server.url + NAME)}`);
  await ready(page);
  await arrange(page);
  const before = await screen(page);
  for (const part of ['view=timeline', 'detail=40', 'bycat=1', 'pin=b', 'range=', `file=${NAME}`]) {
    assert.ok(before.hash.includes(part), `${part} in ${before.hash}`);
  }
  await page.click('[data-testid=copy-link]');
  const link = await page.evaluate(() => location.href);
  const fresh = await open(b, link);
  await ready(fresh.page);
  await fresh.page.waitForSelector('[data-testid=stack-trace]');
  const after = await screen(fresh.page);
  assert.deepEqual(after, before);
  await shot(fresh.page, 'share-restored');
  assert.deepEqual([...errors, ...fresh.errors], []);
  await page.close();
  await fresh.page.close();
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
  assert.deepEqual(await screen(fresh.page), before);
  await page.close();
  await fresh.page.close();
});
