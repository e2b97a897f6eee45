// End-to-end: the timeline under fingers, on a phone-sized touch screen. Touches go in as Chromium
// takes them from a touch screen (CDP's Input.dispatchTouchEvent), so the page sees the pointer
// events a phone makes: one finger drags the view, two pinch it (what was under each finger stays
// under it), a tap says what is under it and pins it, a finger brushes the minimap and scrolls the
// allocator state's map; sideways it moves and pinches the Compare chart, up and down it scrolls the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { serve, browser, open, loadFile, built, twoFrames, shot, ROOT, FIXTURES, TIER2 } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

/** The view the address bar carries: [x0, x1, y_max], or null for the whole trace. */
const range = page => page.evaluate(() => {
  const r = new URLSearchParams(location.hash.slice(1)).get('range');
  return r ? r.split('_').map(Number) : null;
});

/** The view the address bar carries once it is no longer `was` and has settled (it follows the
 *  view at most four times a second, so its first change may be a gesture's middle). */
async function changed(page, was) {
  await page.waitForFunction(was => {
    const r = new URLSearchParams(location.hash.slice(1)).get('range');
    return (r ?? null) !== was;
  }, was === null ? null : was.join('_'));
  await page.waitForTimeout(600);
  return range(page);
}

/** Fingers `from` (a list of [x, y]) moved to `to` in steps, then lifted: a gesture on the screen. */
async function gesture(cdp, from, to, steps = 8) {
  const points = t => from.map(([x, y], id) => ({ id, x: x + (to[id][0] - x) * t, y: y + (to[id][1] - y) * t }));
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: points(0) });
  for (let k = 1; k <= steps; k++) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: points(k / steps) });
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

test('on a touch screen fingers pan, pinch and tap the timeline, and brush its minimap', async () => {
  const { page, errors } = await open(b, server.url, { width: 390, height: 844 }, null, { hasTouch: true, isMobile: true });
  await loadFile(page, path.join(ROOT, 'tests', 'fixtures', 'training.pickle'));
  await built(page);
  await twoFrames(page);
  // The toolbar names the gestures, not the wheel.
  assert.equal(await page.isVisible('.view-toolbar .hint-touch'), true);
  assert.equal(await page.isVisible('.view-toolbar .hint-mouse'), false);
  assert.match(await page.textContent('p.hint-touch'), /^Tap a band/);
  assert.equal(await page.isVisible('p.hint-mouse'), false);
  const cdp = await page.context().newCDPSession(page);
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  const y = box.y + box.height * 0.6;
  const x = f => box.x + box.width * f;
  assert.equal(await range(page), null);

  // Two fingers spread from 100 to 250 px apart: the view spans 2.5 times fewer entries, and what
  // was under the fingers' midpoint is under it still.
  await gesture(cdp, [[x(0.5) - 50, y], [x(0.5) + 50, y]], [[x(0.5) - 125, y], [x(0.5) + 125, y]]);
  const pinched = await changed(page, null);
  const span = pinched[1] - pinched[0];
  // Again, from the same places: 2.5 times fewer again (nowhere near the trace's ends).
  await gesture(cdp, [[x(0.5) - 50, y], [x(0.5) + 50, y]], [[x(0.5) - 125, y], [x(0.5) + 125, y]]);
  const twice = await changed(page, pinched);
  const ratio = span / (twice[1] - twice[0]);
  assert.ok(Math.abs(ratio - 2.5) < 0.1, `${pinched} → ${twice}: ${ratio}`);
  // The entry under the fingers' midpoint, at fraction f of the view's width, stays: x0 + f·span is
  // the same before and after. The plot starts right of its byte axis, so f is a little under a half.
  const f = (twice[0] - pinched[0]) / (span - (twice[1] - twice[0]));
  assert.ok(f > 0.3 && f < 0.5, `${pinched} → ${twice}: the fingers at ${f} of the plot`);
  await shot(page, 'touch-pinched');

  // One finger dragged right by 100 px: earlier entries, the span kept.
  await gesture(cdp, [[x(0.4), y]], [[x(0.4) + 100, y]]);
  const dragged = await changed(page, twice);
  // (The address bar rounds to a tenth of an entry.)
  assert.ok(Math.abs((dragged[1] - dragged[0]) - (twice[1] - twice[0])) < 0.25, `${twice} → ${dragged}`);
  assert.ok(dragged[0] < twice[0], `${twice} → ${dragged}`);

  // A tap on an allocation says what it is and pins it (its stack beside); the view stays.
  await page.locator('[data-testid=timeline]').focus();
  await page.keyboard.press('0');
  await changed(page, dragged);
  await page.touchscreen.tap(x(0.5), box.y + box.height * 0.85);
  await page.waitForSelector('[data-testid=stack-trace]');
  assert.match(await page.textContent('.tooltip'), /bytes/);
  assert.equal(await range(page), null);
  await shot(page, 'touch-tapped');
  // A drag after it takes the tap's words away (they stood over what moves); the pin stays.
  await gesture(cdp, [[x(0.5), y]], [[x(0.5) - 80, y]]);
  await page.waitForSelector('.tooltip', { state: 'detached' });
  assert.equal(await page.isVisible('[data-testid=stack-trace]'), true);
  await page.locator('[data-testid=timeline]').focus();
  await page.keyboard.press('0');
  await page.waitForFunction(() => !new URLSearchParams(location.hash.slice(1)).get('range'));

  // A finger brushes the minimap: the view is the range brushed.
  const mini = await page.locator('canvas.minimap').boundingBox();
  const my = mini.y + mini.height / 2;
  await gesture(cdp, [[mini.x + mini.width * 0.3, my]], [[mini.x + mini.width * 0.6, my]]);
  const brushed = await changed(page, null);
  assert.ok(brushed[1] > brushed[0], `${brushed}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('on a touch screen a finger scrolls the allocator state\'s map, as far as its last segment', TIER2, async () => {
  const { page, errors } = await open(b, server.url, { width: 390, height: 844 }, null, { hasTouch: true, isMobile: true });
  await loadFile(page, path.join(FIXTURES, 'cs_memory_snapshot.pickle'));
  await built(page);
  await page.selectOption('[data-testid=view-select]', 'state');
  // The last entry: 175 segments, far more than the map's height shows.
  await page.focus('.event-list');
  await page.keyboard.press('End');
  await page.waitForFunction(() => /175 segments/.test(document.body.innerText));
  await twoFrames(page);
  const cdp = await page.context().newCDPSession(page);
  const map = await page.locator('.state-canvas').boundingBox();
  const pixels = () => page.$eval('.state-canvas', c => c.toDataURL());
  // (The map runs on past the window's bottom: the finger stays on what is on screen.)
  const bottom = Math.min(map.y + map.height, 844) - 15;
  const up = () => gesture(cdp, [[map.x + 200, bottom]], [[map.x + 200, map.y + 10]]);
  const top = await pixels();
  await up();
  await twoFrames(page);
  assert.notEqual(await pixels(), top, 'a finger dragged up scrolls the map');
  // Dragged on, it stops at the last segment (the wheel went on into blank rows).
  for (let k = 0; k < 30; k++) await up();
  await twoFrames(page);
  const end = await pixels();
  await up();
  await page.mouse.wheel(0, 2000);
  await twoFrames(page);
  assert.equal(await pixels(), end);
  await shot(page, 'touch-state-map-end');
  assert.deepEqual(errors, []);
  await page.close();
});

test('on a touch screen fingers move and pinch the Compare chart sideways and scroll the page up and down', async () => {
  const { page, errors } = await open(b, server.url, { width: 390, height: 844 }, null, { hasTouch: true, isMobile: true });
  await page.setInputFiles('input[type=file]', ['training.pickle', 'compiled.pickle'].map(f => path.join(ROOT, 'tests', 'fixtures', f)));
  await page.waitForFunction(() => /^2 runs compared/.test(document.querySelector('[data-testid=compare-status]')?.textContent ?? '')
    && document.querySelector('#app').dataset.state === 'ready');
  const chart = page.locator('[data-testid=compare-chart]');
  await chart.scrollIntoViewIfNeeded();
  await twoFrames(page);
  const cdp = await page.context().newCDPSession(page);
  const shown = () => chart.getAttribute('data-range').then(r => r && r.split('_').map(Number));
  const box = await chart.boundingBox();
  const y = box.y + box.height * 0.3;
  const x = f => box.x + box.width * f;
  assert.equal(await shown(), null);
  // Two fingers spread twice as far apart: half of each trace (the x axis is the share of it).
  await gesture(cdp, [[x(0.45) - 40, y], [x(0.45) + 40, y]], [[x(0.45) - 80, y], [x(0.45) + 80, y]]);
  await page.waitForFunction(() => document.querySelector('[data-testid=compare-chart]').dataset.range);
  const pinched = await shown();
  assert.ok(Math.abs(pinched[1] - pinched[0] - 0.5) < 1e-9, `${pinched}`);
  // One finger sideways, 60 px left: later in the traces, the span kept.
  await gesture(cdp, [[x(0.6), y]], [[x(0.6) - 60, y]]);
  await page.waitForFunction(was => document.querySelector('[data-testid=compare-chart]').dataset.range !== was, pinched.join('_'));
  const moved = await shown();
  assert.ok(moved[0] > pinched[0] && Math.abs((moved[1] - moved[0]) - 0.5) < 1e-9, `${pinched} → ${moved}`);
  assert.equal(await page.isVisible('h3 .hint-touch'), true);
  assert.equal(await page.isVisible('h3 .hint-mouse'), false);
  await shot(page, 'touch-compare');
  // Up and down, the page scrolls (the view's box under the app's header) and the chart stays.
  const scrollTop = () => page.$eval('[data-testid=compare-chart]', c => {
    let box = c.parentElement;
    while (box && !(box.scrollHeight > box.clientHeight && /auto|scroll/.test(getComputedStyle(box).overflowY))) box = box.parentElement;
    return (box ?? document.scrollingElement).scrollTop;
  });
  const scrolled = await scrollTop();
  await gesture(cdp, [[x(0.5), y + 150]], [[x(0.5), y - 100]]);
  await page.waitForTimeout(300);
  assert.ok(await scrollTop() > scrolled + 50, `${scrolled} → ${await scrollTop()}`);
  assert.deepEqual(await shown(), moved);
  // Back to all of each trace with a tap (double-click and 0 are a mouse's and a keyboard's).
  await page.tap('[data-testid=compare-reset-zoom]');
  await page.waitForFunction(() => !document.querySelector('[data-testid=compare-chart]').dataset.range);
  assert.equal(await page.isVisible('[data-testid=compare-reset-zoom]'), false);
  assert.deepEqual(errors, []);
  await page.close();
});
