// End-to-end: the built page (dist/) in headless Chromium, served from a sub-path, driven as a user would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, open, loadFile, shot, pickled, DIST, FIXTURES, ROOT, TIER2, HAVE_FIXTURES } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

/** The reference figures (`reference/*.json`) of the snapshots in `dir`. */
const referencesIn = dir => fs.readdirSync(path.join(dir, 'reference')).filter(f => f.endsWith('.json')).sort()
  .map(f => JSON.parse(fs.readFileSync(path.join(dir, 'reference', f), 'utf8')));
const references = HAVE_FIXTURES ? referencesIn(FIXTURES) : [];
// Real snapshots recorded for this repository (scripts/gpu_check.sh), with figures from
// scripts/reference_figures.py: first tier, once there are any.
const REPO_FIXTURES = process.env.MEMOGRAPH_REPO_FIXTURES || path.join(ROOT, 'tests', 'fixtures');
const repoReferences = fs.existsSync(path.join(REPO_FIXTURES, 'reference')) ? referencesIn(REPO_FIXTURES) : [];

/** The device a viewer opens first: the longest trace (ties: the lowest). */
function defaultDevice(ref) {
  let best = null;
  for (const [d, v] of Object.entries(ref.devices)) {
    const n = Object.values(v.events).reduce((a, b) => a + b, 0);
    if (best === null || n > best.n) best = { d, n };
  }
  return best.d;
}

async function peakText(page) {
  return page.$eval('[data-testid=peak]', e => `${e.textContent} ${e.title}`);
}

/** Page coordinates of (entry x, bytes y) on the timeline canvas in the full view. */
async function timelinePoint(page, x, bytes, xLen, yMax) {
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  const left = 72, right = 12, top = 8, bottom = 26;
  const w = box.width - left - right, h = box.height - top - bottom;
  return { x: box.x + left + (x + 0.5) / xLen * w, y: box.y + top + h - bytes / (yMax * 1.05) * h };
}

test('every fixture loads and shows its reference peak for the default device', TIER2, async () => {
  await showsReferencePeaks(FIXTURES, references, 'all-fixtures-last');
});

test('every repository fixture loads and shows its reference peak for the default device',
  repoReferences.length ? {} : { skip: `no repository fixtures in ${REPO_FIXTURES} yet` },
  async () => { await showsReferencePeaks(REPO_FIXTURES, repoReferences, 'repository-fixtures-last'); });

/** Opens each of `refs`' files from `dir` in one page: each is ready on its default device, with its
 *  reference peak; then every one is in the open-files list. */
async function showsReferencePeaks(dir, refs, screenshot) {
  const { page, errors } = await open(b, server.url);
  for (const ref of refs) {
    await loadFile(page, path.join(dir, ref.file));
    assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready', ref.file);
    const device = defaultDevice(ref);
    assert.equal(await page.$eval('[data-testid=device-select]', e => e.value), device, ref.file);
    const text = await peakText(page);
    assert.ok(text.includes(String(ref.devices[device].timeline_peak_bytes)), `${ref.file}: ${text}`);
  }
  const files = await page.$$eval('[data-testid=file-select] option', o => o.length);
  assert.equal(files, refs.length);
  await shot(page, screenshot);
  assert.deepEqual(errors, []);
  await page.close();
}

test('the slider goes to 100 % and clicking inside the band at the peak shows its stack', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  const ref = references.find(r => r.file === 'kk_memory_ctx128_fullstep.pickle');
  await loadFile(page, path.join(FIXTURES, ref.file));
  const slider = page.locator('[data-testid=detail-slider]');
  const drawn = () => page.$eval('.slider .muted', e => e.textContent);
  await slider.fill('0');
  assert.equal(await slider.inputValue(), '0');
  assert.equal(await drawn(), '0 % · 0 of 7 095 allocations');
  await page.waitForTimeout(200);
  await shot(page, 'detail-0');
  await slider.fill('10');
  assert.equal(await drawn(), '10 % · 710 of 7 095 allocations');
  await slider.fill('100');
  assert.equal(await slider.inputValue(), '100');
  assert.equal(await drawn(), '100 % · 7 095 of 7 095 allocations');
  await page.waitForTimeout(200);
  const d = ref.devices['0'];
  const xLen = Object.values(d.events).reduce((a, b) => a + b, 0);
  const at = await timelinePoint(page, d.peak_event_index, d.timeline_peak_bytes * 0.5, xLen, d.timeline_peak_bytes);
  await page.mouse.move(at.x, at.y);
  // Near the plot's right edge the tooltip opens to the left of the pointer: inside the plot, not over
  // the stack panel beside it.
  await page.waitForSelector('.tooltip');
  const tip = await page.locator('.tooltip').boundingBox();
  const plot = await page.locator('[data-testid=timeline]').boundingBox();
  assert.ok(at.x > plot.x + plot.width / 2, 'the peak is in the right half');
  assert.ok(tip.x >= plot.x && tip.x + tip.width <= at.x && tip.y >= plot.y
    && tip.y + tip.height <= plot.y + plot.height, JSON.stringify({ tip, plot, at }));
  await page.mouse.down();
  await page.mouse.up();
  const stack = await page.locator('[data-testid=stack-trace]').textContent({ timeout: 5000 });
  assert.match(stack, /\.py:\d+:\w+/, stack);
  await shot(page, 'pinned-stack');
  // All frames includes the C++ plumbing the default view hides.
  await page.getByLabel('All frames').check();
  const full = await page.locator('[data-testid=stack-trace]').textContent();
  assert.ok(full.split('\n').length > stack.split('\n').length);
  assert.match(full, /CapturedTraceback|unwind/);
  // Memory allocated before recording began has no stack: the panel says why, as a sentence that wraps.
  const early = await timelinePoint(page, 10, d.timeline_peak_bytes * 0.05, xLen, d.timeline_peak_bytes);
  await page.mouse.click(early.x, early.y);
  await page.waitForFunction(() => /^No stack: this memory was allocated before recording began/.test(document.querySelector('[data-testid=stack-trace]')?.textContent));
  assert.equal(await page.locator('[data-testid=stack-trace] .frame.native').count(), 0);
  const why = await page.locator('[data-testid=stack-trace]').boundingBox();
  assert.ok(why.height > 40, `the explanation wraps onto several lines: ${JSON.stringify(why)}`);
  await shot(page, 'no-stack');
  // The keyboard pins too: Down the largest allocation in view (157.0 MiB, the trace's largest
  // alloc, freed five entries later), Down the next largest, Up back to it.
  await page.locator('[data-testid=timeline]').focus();
  await page.keyboard.press('0');
  // (Escape first: from a pinned allocation, Down goes on to the next largest after it.)
  await page.keyboard.press('Escape');
  await page.waitForSelector('.stack-summary', { state: 'detached' });
  const pinnedHead = async () => (await page.textContent('.stack-summary')).match(/^(b[0-9a-f]+_\d+)\s+\S+ \S+ \(([\d ]+) bytes\)/);
  await page.keyboard.press('ArrowDown');
  const first = await pinnedHead();
  assert.equal(first[2], '164 626 432');
  assert.match(await page.textContent('.stack-summary'), /allocated at entry 4 ?660 .*\n?freed at entry 4 ?665/s);
  await page.keyboard.press('ArrowDown');
  const second = await pinnedHead();
  await page.keyboard.press('ArrowDown');
  const third = await pinnedHead();
  const bytes = h => Number(h[2].replace(/ /g, ''));
  assert.ok(bytes(second) <= bytes(first) && bytes(third) <= bytes(second) && new Set([first[1], second[1], third[1]]).size === 3);
  await page.keyboard.press('ArrowUp');
  assert.equal((await pinnedHead())[1], second[1]);
  assert.match(await page.textContent('[data-testid=stack-trace]'), /\S/);
  await page.keyboard.press('Escape');
  await page.waitForSelector('.stack-summary', { state: 'detached' });
  assert.deepEqual(errors, []);
  await page.close();
});

test('hovering shows a tooltip, the wheel zooms and the minimap brush fits a range', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.85);
  await page.waitForSelector('.tooltip');
  assert.match(await page.textContent('.tooltip'), /b[0-9a-f]+_\d+ .*bytes/);
  for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -300);
  await page.waitForTimeout(100);
  await shot(page, 'zoomed');
  const mini = await page.locator('canvas.minimap').boundingBox();
  await page.mouse.move(mini.x + 72 + (mini.width - 84) * 0.1, mini.y + 20);
  await page.mouse.down();
  await page.mouse.move(mini.x + 72 + (mini.width - 84) * 0.3, mini.y + 20);
  await page.mouse.up();
  await page.waitForTimeout(100);
  await shot(page, 'brushed');
  // The keyboard reaches what the brush does: zoomed and panned to the trace's start (far below the
  // peak), f fits the height to what is in view, the range kept (the link carries both).
  await page.locator('[data-testid=timeline]').focus();
  await page.keyboard.press('0');
  for (let k = 0; k < 4; k++) await page.keyboard.press('+');
  await page.keyboard.press('Home');
  const range = () => page.evaluate(() => (new URLSearchParams(location.hash.slice(1)).get('range') || '').split('_').map(Number));
  await page.waitForFunction(() => /range=0\.0_/.test(location.hash));
  const before = await range();
  await page.keyboard.press('f');
  await page.waitForFunction(y => !location.hash.includes(`_${y}`), before[2]);
  const fitted = await range();
  assert.deepEqual(fitted.slice(0, 2), before.slice(0, 2));
  assert.ok(fitted[2] < before[2] * 0.6, `${before} → ${fitted}`);
  await shot(page, 'fitted-by-key');
  await page.getByLabel('Wall clock').check();
  await page.waitForTimeout(100);
  await shot(page, 'wall-clock');
  assert.deepEqual(errors, []);
  await page.close();
});

test('colouring by category shows a legend whose totals add up to the peak, and a click highlights one', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  await page.check('[data-testid=color-by-category]');
  const items = page.locator('[data-testid=category-legend] .legend-item');
  await items.first().waitFor();
  const labels = await items.allTextContents();
  assert.ok(labels.some(l => l.startsWith('Optimizer state')), labels.join(' | '));
  await items.filter({ hasText: 'Optimizer state' }).click();
  assert.equal(await page.locator('.legend-item.lit').count(), 1);
  await page.waitForTimeout(200);
  await shot(page, 'categories');
  assert.deepEqual(errors, []);
  await page.close();
});

/** A copy of training.pickle in a scratch folder under a long name, as a job's files have:
 *  `{ dir, file }` (the caller removes `dir`). */
function longNamed(tag) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `memograph-e2e-${tag}-`));
  const file = path.join(dir, 'llama3_8b_fsdp_ctx8192_bs4_bf16_rank0_step1200_memory_snapshot.pickle');
  fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'training.pickle'), file);
  return { dir, file };
}

test('a narrow window leaves the timeline most of its width; below 760 px the side panels go under their views; nothing runs past a phone\'s edges', async () => {
  // The stack panel once kept 420 px whatever the window: at 720 px the plot had 215, at 480 none.
  // The welcome took its code's longest line as its width, and the analysis panels 520 px: on a
  // phone both ran past the window's edge, cut off (their scrolling boxes hid it from scrollWidth),
  // and so did the shortcuts' list and the settings' values.
  const pastTheEdge = (page, selector) => page.$$eval(selector, els => els
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .map(e => `${e.tagName.toLowerCase()}.${e.className} ends at ${Math.round(e.getBoundingClientRect().right)} px`));
  // A name without a space to wrap at.
  const { dir, file } = longNamed('narrow');
  for (const width of [1000, 720, 480, 390]) {
    const { page, errors } = await open(b, server.url, { width, height: 800 });
    assert.deepEqual(await pastTheEdge(page, '.welcome, .welcome h1, .welcome h2, .welcome p'), [], `the welcome at ${width} px`);
    // The shortcuts' list too (its columns were 360 px or more).
    await page.keyboard.press('?');
    await page.waitForSelector('.shortcuts');
    assert.deepEqual(await pastTheEdge(page, '.shortcuts, .shortcuts dd'), [], `the shortcuts at ${width} px`);
    await page.keyboard.press('Escape');
    await loadFile(page, file);
    await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt);
    const plot = (await page.locator('[data-testid=timeline]').boundingBox()).width;
    assert.ok(plot >= width * (width > 760 ? 0.55 : 0.9), `at ${width} px the timeline is ${plot} px wide`);
    for (const view of ['state', 'analysis', 'settings', 'timeline']) {
      await page.selectOption('[data-testid=view-select]', view);
      await page.waitForTimeout(300);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.equal(overflow, 0, `${view} at ${width} px runs ${overflow} px past the window`);
      // Nor down: each view scrolls in its own boxes (the state's map ran 16 px under a phone's window,
      // held up by its canvas's own height).
      const below = await page.evaluate(() => document.documentElement.scrollHeight - document.documentElement.clientHeight);
      assert.equal(below, 0, `${view} at ${width} px runs ${below} px under the window`);
      if (view === 'analysis') {
        await page.waitForSelector('.panel');
        assert.deepEqual(await pastTheEdge(page, '.panel'), [], `the analysis panels at ${width} px`);
      }
      if (view === 'settings') assert.deepEqual(await pastTheEdge(page, 'table.settings td'), [], `the settings at ${width} px`);
      if (width <= 480) await shot(page, `narrow-${width}-${view}`);
    }
    assert.deepEqual(errors, []);
    await page.close();
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the header stays one row at 1366 and 1280 px with a file of a long name open', async () => {
  const { dir, file } = longNamed('header');
  for (const width of [1366, 1280]) {
    const { page, errors } = await open(b, server.url, { width, height: 700 });
    await loadFile(page, file);
    // One row: every item centred on the same line (a wrapped item is a row lower).
    const middles = await page.$$eval('.toolbar > *', els => els.map(e => { const r = e.getBoundingClientRect(); return Math.round(r.top + r.height / 2); }));
    assert.ok(Math.max(...middles) - Math.min(...middles) < 4, `at ${width} px the header's items are centred at ${middles.join(', ')}`);
    assert.deepEqual(errors, []);
    await page.close();
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a snapshot without allocator history says how to record it; one without memory says so; others say nothing', async () => {
  // As `torch.cuda.memory._snapshot()` gives without _record_memory_history(): the segments, no trace.
  const block = (address, state, frames) => ({ address, size: 1048576, requested_size: state === 'inactive' ? 0 : 1000000, state, frames });
  const address = 139000000000000n;
  const segment = { device: 0, address, total_size: 2097152, allocated_size: 1048576, active_size: 1048576,
    requested_size: 1000000, stream: 0, segment_type: 'small', is_expandable: false, frames: [],
    blocks: [block(address, 'active_allocated', [{ filename: 'train.py', line: 10, name: 'forward' }]), block(address + 1048576n, 'inactive', [])] };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-history-'));
  const files = {
    'no_history.pickle': [pickled({ segments: [segment], device_traces: [[]] }), /^No allocator history: only what was allocated when the snapshot was taken.*_record_memory_history\(\) before the steps you care about/],
    'nothing.pickle': [pickled({ segments: [], device_traces: [] }), /^No CUDA memory: no segments and no allocator history/],
    'training.pickle': [fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'training.pickle')), null],
  };
  try {
    for (const [name, [bytes, said]] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, name), bytes);
      const { page, errors } = await open(b, server.url);
      await loadFile(page, path.join(dir, name));
      await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt);
      const note = await page.$('[data-testid=history-note]');
      if (said) assert.match(await note.textContent(), said, name);
      else assert.equal(note, null, name);
      // The segment timeline says it too.
      await page.selectOption('[data-testid=view-select]', 'segments');
      await page.waitForTimeout(500);
      assert.equal(!!await page.$('[data-testid=history-note]'), !!said, name);
      if (name === 'no_history.pickle') await shot(page, 'no-history');
      // So does the state history, whose map is the snapshot's own state, not one after an entry.
      await page.selectOption('[data-testid=view-select]', 'state');
      await page.waitForFunction(() => !/Building/.test(document.querySelector('.state-map').textContent));
      assert.equal(!!await page.$('[data-testid=history-note]'), !!said, name);
      if (name === 'no_history.pickle') {
        assert.match(await page.textContent('.state-map'), /as the snapshot holds it: 1 segment, 2\.0 MiB reserved, 976\.6 KiB in blocks, 1\.0 MiB free/);
      }
      assert.deepEqual(errors, []);
      await page.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('devices and views switch (cs_memory_snapshot has three devices)', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  const ref = references.find(r => r.file === 'cs_memory_snapshot.pickle');
  await loadFile(page, path.join(FIXTURES, ref.file));
  const devices = await page.$$eval('[data-testid=device-select] option', o => o.map(x => x.value));
  assert.deepEqual(devices, ['0', '1', '2']);
  // Device 0 has profiler annotations above the plot; a click at the peak still finds its band.
  const d0 = ref.devices['0'];
  const xLen0 = Object.values(d0.events).reduce((a, b) => a + b, 0);
  const at = await timelinePoint(page, d0.peak_event_index, d0.timeline_peak_bytes * 0.5, xLen0, d0.timeline_peak_bytes);
  await page.mouse.click(at.x, at.y);
  assert.match(await page.locator('[data-testid=stack-trace]').textContent({ timeout: 5000 }), /\.py:\d+:/);
  // The step's `zero_grad` holds no allocator event: a line, named in the room after it, and a pointer
  // on its strip above the plot reads what it is.
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  let tip = '';
  for (let x = box.x + 72; x < box.x + box.width - 12 && !tip; x += 4) {
    await page.mouse.move(x, box.y + 12);
    if (await page.locator('.tooltip').count()) tip = await page.locator('.tooltip').textContent();
  }
  assert.match(tip, /Optimizer\.zero_grad#AdamW\.zero_grad\s*profiler annotation · at entry [\d ]+, no allocator event during it · 31 µs/);
  await shot(page, 'cs-device0-annotations');
  // The keyboard reaches the annotations too: a steps through them in order (round at the end), each
  // described as the pointer reads it, and A goes back (zoomed in far from them first).
  await page.mouse.move(box.x + box.width / 2, box.y + box.height + 40);
  await page.locator('[data-testid=timeline]').focus();
  for (let k = 0; k < 4; k++) await page.keyboard.press('+');
  for (let k = 0; k < 3; k++) await page.keyboard.press('ArrowRight');
  const keyed = [];
  for (let k = 0; k < 12; k++) {
    await page.keyboard.press('a');
    const text = await page.locator('.tooltip').textContent({ timeout: 5000 });
    if (keyed.includes(text)) break;
    keyed.push(text);
  }
  assert.ok(keyed.every(t => /\nprofiler annotation · /.test(t)), keyed.join(' | '));
  assert.ok(keyed.some(t => /^Optimizer\.zero_grad#AdamW\.zero_grad\nprofiler annotation · at entry [\d ]+, no allocator event during it · 31 µs$/.test(t)), keyed.join(' | '));
  await page.keyboard.press('a');
  await page.keyboard.press('A');
  assert.equal(await page.locator('.tooltip').textContent(), keyed[0]);
  await shot(page, 'cs-annotation-keyboard');
  // Keys with Ctrl, Alt or Meta are the browser's (Ctrl and + or 0 zoom the page, Ctrl+A selects all):
  // the timeline leaves them alone.
  await page.evaluate(() => addEventListener('keydown', e => { window.__prevented = e.defaultPrevented; }));
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+a');
  assert.equal(await page.locator('.tooltip').count(), 0);
  assert.equal(await page.evaluate(() => window.__prevented), false);
  await page.keyboard.press('Control+=');
  assert.equal(await page.evaluate(() => window.__prevented), false);
  await page.keyboard.press('0');
  await page.selectOption('[data-testid=device-select]', '1');
  await page.waitForFunction(p => document.querySelector('[data-testid=peak]').title.includes(p),
    String(ref.devices['1'].timeline_peak_bytes));
  // Device 1 ran out of memory: a line and a label mark the entry, and a pointer on the line reads
  // what was asked for and what was free.
  assert.equal(ref.devices['1'].events.oom, 1);
  const area = await page.locator('[data-testid=timeline]').boundingBox();
  let oom = '';
  for (let x = area.x + 72; x < area.x + area.width - 12 && !oom; x += 3) {
    await page.mouse.move(x, area.y + area.height / 2);
    const tip = page.locator('.tooltip');
    if (await tip.count() && /out of memory/.test(await tip.textContent())) oom = await tip.textContent();
  }
  assert.match(oom, /^out of memory at entry [\d ]+\s*a request of [\d.]+ [KMGT]?i?B with [\d.]+ [KMGT]?i?B free on the device\s*PyTorch held [\d.]+ [KMGT]?i?B allocated, [\d.]+ [KMGT]?i?B reserved \([\d.]+ [KMGT]?i?B cached but free\)\s*asked for by \S+\.py:\d+/);
  await shot(page, 'cs-device1-timeline');
  // The keyboard reaches the mark too: o brings it into view and describes it (zoomed in far from it first).
  await page.locator('[data-testid=timeline]').focus();
  for (let k = 0; k < 4; k++) await page.keyboard.press('+');
  await page.keyboard.press('Escape');
  await page.keyboard.press('o');
  await page.waitForSelector('.tooltip');
  assert.equal(await page.textContent('.tooltip'), oom);
  await page.selectOption('[data-testid=view-select]', 'segments');
  await page.waitForTimeout(200);
  await shot(page, 'cs-device1-segments');
  await page.selectOption('[data-testid=view-select]', 'state');
  await page.waitForSelector('.event-row');
  await page.click('.event-row >> nth=3');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.$eval('.event-row.selected .idx', e => e.textContent), '4');
  // The rows fill the list however tall the window is, also once it grows (the list once showed 32
  // rows whatever its height).
  const filled = () => page.waitForFunction(() => {
    const list = document.querySelector('.event-list');
    const rows = [...list.querySelectorAll('.event-row')].map(r => r.getBoundingClientRect().bottom);
    return rows.length > 32 && Math.max(...rows) >= list.getBoundingClientRect().bottom - 1;
  }, null, { timeout: 5000 });
  await page.setViewportSize({ width: 1400, height: 1300 });
  await filled();
  await page.setViewportSize({ width: 1400, height: 860 });
  await page.waitForTimeout(200);
  await shot(page, 'cs-device1-state');
  await page.selectOption('[data-testid=view-select]', 'settings');
  const settings = await page.textContent('.settings');
  assert.match(settings, /expandable_segments:True/);
  assert.match(settings, /segments and device traces \(PyTorch 2\.1 and later\)/);
  // Each device's trace, as long as the reference counts it.
  for (const [d, r] of Object.entries(ref.devices)) {
    const entries = String(Object.values(r.events).reduce((a, b) => a + b, 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
    assert.match(settings, new RegExp(`cuda:${d}${entries} trace entries over [\\d.]+ s`));
  }
  await shot(page, 'cs-settings');
  await page.selectOption('[data-testid=device-select]', '2');
  await page.selectOption('[data-testid=view-select]', 'timeline');
  await page.waitForFunction(p => document.querySelector('[data-testid=peak]').title.includes(p),
    String(ref.devices['2'].timeline_peak_bytes));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a corrupt file shows the engine error and the page keeps working', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-'));
  const bad = path.join(dir, 'truncated.pickle');
  fs.writeFileSync(bad, fs.readFileSync(path.join(FIXTURES, 'a0kuma_adam.pickle')).subarray(0, 18446));
  await loadFile(page, bad);
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'error');
  assert.equal(await page.textContent('[data-testid=error]'),
    'truncated.pickle: unexpected end of file at byte 18446 (file truncated?)');
  await shot(page, 'error');
  const evil = path.join(dir, 'evil.pickle');
  fs.writeFileSync(evil, "cos\nsystem\n(S'echo pwned'\ntR.");
  await loadFile(page, evil);
  assert.match(await page.textContent('[data-testid=error]'), /refusing pickle opcode GLOBAL at byte 0/);
  await loadFile(page, path.join(FIXTURES, 'a0kuma_adam.pickle'));
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the example button and ?url= load snapshots; nothing else goes over the network', async () => {
  const { page, errors, requests } = await open(b, server.url);
  await shot(page, 'empty');
  const welcome = await page.textContent('.welcome');
  assert.match(welcome, /_record_memory_history/);
  // What else the page does is said before a file is opened: the launcher, comparing, step records.
  assert.match(welcome, /memograph-capture -- python train\.py/);
  assert.match(welcome, /Compare runs.*rank\*_steps\.jsonl/s);
  assert.match(await page.title(), /^Memograph — /);
  await page.click('text=Open example');
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  assert.ok((await peakText(page)).includes('54802667524'));
  // The tab names the open file, so that tabs of several runs stay apart.
  const name = (await page.$eval('[data-testid=file-select]', s => s.selectedOptions[0].textContent)).replace(/ \(.*\)$/, '');
  assert.equal(await page.title(), `${name} — Memograph`);
  const other = requests.filter(u => !u.startsWith(server.url) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(other, []);
  const viaUrl = await open(b, `${server.url}?url=${encodeURIComponent(server.url + 'example.pickle.gz')}`);
  await viaUrl.page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  assert.ok((await peakText(viaUrl.page)).includes('54802667524'));
  // Named by its path's last segment, a query after it (as file hosts add) left out.
  const query = await open(b, `${server.url}?url=${encodeURIComponent(server.url + 'example.pickle.gz?download=true')}`);
  await query.page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  assert.equal(await query.page.title(), 'example.pickle.gz — Memograph');
  // An empty ?url= (a link cut short) is no file: the page waits for one, as without it.
  const empty = await open(b, `${server.url}?url=%20`);
  await empty.page.waitForTimeout(500);
  assert.equal(await empty.page.$eval('#app', e => e.dataset.state), 'empty');
  assert.deepEqual([...errors, ...viaUrl.errors, ...query.errors, ...empty.errors], []);
  for (const p of [page, viaUrl.page, query.page, empty.page]) await p.close();
});

test('Cancel stops a download (the example, or ?url=) before anything opens', async () => {
  const { page, errors } = await open(b, server.url);
  // The example's download is held back, as a slow server's would be.
  await page.route('**/example.pickle.gz', route => setTimeout(() => route.continue().catch(() => {}), 1500));
  await page.click('text=Open example');
  await page.waitForSelector('[data-testid=cancel-load]');
  assert.match(await page.textContent('.progress-label'), /downloading example/);
  await page.click('[data-testid=cancel-load]');
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'empty');
  await page.waitForTimeout(2500);
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'empty');
  assert.equal(await page.$('[data-testid=error]'), null);
  // Asked again, it opens.
  await page.unroute('**/example.pickle.gz');
  await page.click('text=Open example');
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  assert.ok((await peakText(page)).includes('54802667524'));
  assert.deepEqual(errors.filter(e => !/net::ERR_ABORTED|aborted/i.test(e)), []);
  await page.close();
});

test('? lists the keyboard shortcuts, over any view; Escape closes the list; typed in a text field it is text; / goes to Find', async () => {
  const { page, errors } = await open(b, server.url);
  await page.keyboard.press('?');
  const dialog = page.locator('[data-testid=shortcuts]');
  await dialog.waitFor();
  assert.equal(await dialog.getAttribute('role'), 'dialog');
  assert.match(await dialog.textContent(), /Timeline and segments.*pin the largest allocation in view/s);
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Close');
  await shot(page, 'shortcuts');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  // The header's button opens it too, and its Close button closes it.
  await page.click('[data-testid=shortcuts-button]');
  await dialog.waitFor();
  // Tab stays in the dialog; closed, the focus goes back where it was.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Close');
  await page.keyboard.press('Enter');
  await dialog.waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'shortcuts-button');
  // In the search box, `?` is a character.
  await loadFile(page, path.join(ROOT, 'tests', 'fixtures', 'training.pickle'));
  await page.fill('[data-testid=search]', '');
  await page.focus('[data-testid=search]');
  await page.keyboard.press('?');
  assert.equal(await page.inputValue('[data-testid=search]'), '?');
  assert.equal(await dialog.count(), 0);
  // `/` goes to the Find box from anywhere else (its text selected, to type over), and is a character in it.
  await page.focus('[data-testid=timeline]');
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'search');
  await page.keyboard.type('>1MB');
  assert.equal(await page.inputValue('[data-testid=search]'), '>1MB');
  await page.keyboard.press('/');
  assert.equal(await page.inputValue('[data-testid=search]'), '>1MB/');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a file can be opened from the keyboard: Tab reaches "Open snapshot…", Enter opens the picker', async () => {
  const { page, errors } = await open(b, server.url);
  await page.keyboard.press('Tab');
  assert.deepEqual(await page.evaluate(() => [document.activeElement.type, document.activeElement.closest('label')?.textContent.trim()]),
    ['file', 'Open snapshot…']);
  // The button shows the focus its hidden input has.
  assert.notEqual(await page.$eval('label.button.primary', e => getComputedStyle(e).outlineStyle), 'none');
  const chosen = page.waitForEvent('filechooser');
  // Playwright turns the page's file-chooser interception on as the wait begins: one round trip
  // first, or on a busy machine the key can beat it and the chooser goes unseen.
  await page.evaluate(() => 0);
  await page.keyboard.press('Enter');
  const chooser = await chosen;
  await chooser.setFiles(path.join(DIST, 'example.pickle.gz'));
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  // Tab goes on to "Open folder…".
  await page.evaluate(() => document.querySelector('label.button.primary input').focus());
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'open-folder');
  assert.deepEqual(errors, []);
  await page.close();
});

test('files dragged over the page show where to drop them until the drag leaves or drops', async () => {
  const { page, errors } = await open(b, server.url);
  const drag = (selector, type, files = true) => page.evaluate(([selector, type, files]) => {
    const transfer = new DataTransfer();
    if (files) transfer.items.add(new File(['x'], 'run.pickle'));
    else transfer.setData('text/plain', 'some text');
    document.querySelector(selector).dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer }));
  }, [selector, type, files]);
  const hint = () => page.$eval('[data-testid=drop-hint]', e => e.textContent).catch(() => null);
  // Text dragged within the page is no file: no hint.
  await drag('.welcome', 'dragenter', false);
  assert.equal(await hint(), null);
  // Into the page, then into one of its elements: the page's leave comes after the child's enter.
  await drag('.welcome', 'dragenter');
  assert.match(await hint(), /Drop snapshots, step records or a folder.*nothing is uploaded/);
  await drag('.welcome h1', 'dragenter');
  await drag('.welcome', 'dragleave');
  assert.notEqual(await hint(), null);
  await shot(page, 'drop-hint');
  await drag('.welcome h1', 'dragleave');
  assert.equal(await hint(), null);
  // A drop ends it too, whatever it brought.
  await drag('.welcome', 'dragenter');
  await drag('.welcome', 'drop');
  assert.equal(await hint(), null);
  assert.deepEqual(errors, []);
  await page.close();
});

test('while no file is chosen the page rehearses a load unseen: nothing opens and nothing is fetched', async () => {
  const page = await b.newPage({ viewport: { width: 1400, height: 860 } });
  const errors = [], requests = [];
  page.on('pageerror', e => errors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('request', r => requests.push(r.url()));
  const rehearsed = page.waitForEvent('console', { predicate: m => m.text().startsWith('memograph rehearsal: done'), timeout: 60000 });
  await page.goto(server.url);
  await rehearsed;
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'empty');
  assert.equal(await page.locator('[data-testid=timeline]').count(), 0);
  // The page, its module (for the page and for the worker) and nothing else: the rehearsal's snapshot is
  // made in code, not downloaded.
  // Asset names carry content hashes (memograph-web-<hash>.js; Trunk drops leading zeros, so one build
  // in sixteen has a shorter one); the worker is told them.
  const names = [...new Set(requests.map(u => new URL(u).pathname.split('/').pop()
    .replace(/-[0-9a-f]{1,16}(?=[._])/, '-HASH')))].sort();
  assert.deepEqual(names, ['', 'main-HASH.css', 'memograph-web-HASH.js', 'memograph-web-HASH_bg.wasm', 'worker.js']);
  assert.deepEqual(errors, []);
  await page.close();
});

/** Opens the state history and goes to its last entry, `last` (End in the event list). */
async function stateAtEnd(page, last) {
  await page.selectOption('[data-testid=view-select]', 'state');
  await page.waitForSelector('.event-row');
  await page.click('.event-row >> nth=0');
  await page.keyboard.press('End');
  await page.waitForFunction(n => new RegExp(`after entry ${n}:`).test(document.querySelector('.state-map .view-toolbar').textContent), last);
}

test('the state history at the end of a training step names the segment or block under the pointer, with its stack', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  await stateAtEnd(page, 19341);
  // The bars start after the longest label (22 characters here: 164 px).
  // The first row: a segment whose only block was freed at this last entry (cached, no blocks).
  const box = await page.locator('.state-canvas').boundingBox();
  await page.mouse.move(box.x + 166, box.y + 12);
  await page.waitForSelector('.state-map .tooltip');
  assert.match(await page.textContent('.state-map .tooltip'), /^segment 7f1fca000000: 98\.0 MiB .*, 0 blocks/);
  // The second: a block allocated before the trace ends and still held at the snapshot, with its stack.
  await page.mouse.move(box.x + 174, box.y + 34);
  await page.waitForFunction(() => /b7f1fd2000000_1/.test(document.querySelector('.state-map .tooltip')?.textContent));
  assert.match(await page.textContent('.state-map .tooltip'),
    /^b7f1fd2000000_1 +97\.7 MiB \(102 400 000 bytes\)\nsegment 7f1fd2000000: 100\.0 MiB .*, 1 block, stream 0\n.*empty_strided/s);
  await page.mouse.move(box.x + 166, box.y + 12);
  await shot(page, 'kk-state-end');
  // The keyboard: the first block (the first row has none) is that one; Right the next by address, Left back.
  await page.mouse.move(box.x + box.width / 2, box.y + box.height + 40);
  await page.locator('.state-canvas').focus();
  const tip = () => page.textContent('.state-map .tooltip');
  await page.keyboard.press('Home');
  assert.match(await tip(), /^b7f1fd2000000_1 +97\.7 MiB/);
  await page.keyboard.press('ArrowRight');
  const next = await tip();
  assert.doesNotMatch(next, /^b7f1fd2000000_1/);
  assert.match(next, /^b[0-9a-f]+_\d+ /);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowLeft');
  assert.match(await tip(), /^b7f1fd2000000_1 /);
  await page.keyboard.press('End');
  await shot(page, 'kk-state-keyboard');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.state-map .tooltip', { state: 'detached' });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the state history names a segment of a private pool (a CUDA graph\'s and a MemPool\'s, PyTorch 2.11)', async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(ROOT, 'tests', 'fixtures', 'pools.pickle'));
  await stateAtEnd(page, 42);
  // Every row of the segment map, top to bottom: what its tooltip says of the segment.
  const box = await page.locator('.state-canvas').boundingBox();
  const seen = new Set();
  let pinned = null;
  for (let y = 2; y < box.height; y += 4) {
    await page.mouse.move(box.x + 40, box.y + y);
    const tip = await page.$('.state-map .tooltip');
    const text = tip ? (await tip.textContent()).match(/segment [0-9a-f]+:.*? blocks?(, stream \d+)?(, expandable)?(, private pool \(\d+, \d+\): a CUDA graph's or a MemPool's)?/)?.[0] : null;
    if (text) seen.add(text);
    if (!pinned && text?.includes('private pool (1, 0)')) pinned = y;
  }
  const segments = [...seen];
  assert.equal(segments.length, 8, segments.join('\n'));
  assert.equal(segments.filter(t => t.includes('private pool (1, 0): a CUDA graph\'s or a MemPool\'s')).length, 2, segments.join('\n'));
  assert.equal(segments.filter(t => t.includes('private pool (0, 1)')).length, 1, segments.join('\n'));
  await page.mouse.move(box.x + 40, box.y + pinned);
  await page.waitForSelector('.state-map .tooltip');
  await shot(page, 'state-private-pool');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a browser without WebAssembly SIMD is told what it needs, not shown a blank page', async () => {
  // As such a browser would do: the check's one-instruction module does not validate, and compiling
  // the app's module fails.
  const page = await b.newPage();
  await page.addInitScript(() => {
    const refuse = () => Promise.reject(new WebAssembly.CompileError('WebAssembly.instantiate(): invalid opcode 0xfd'));
    WebAssembly.validate = () => false;
    WebAssembly.instantiate = refuse;
    WebAssembly.instantiateStreaming = refuse;
  });
  await page.goto(server.url);
  const text = await page.textContent('#fatal');
  assert.match(text, /^Memograph stopped: this browser cannot run it \(no WebAssembly SIMD\)\. It needs WebAssembly with SIMD: Chrome or Edge 91, Firefox 89, Safari 16\.4 or later/);
  await page.waitForTimeout(300);
  assert.equal(await page.locator('#fatal').count(), 1);
  await shot(page, 'no-simd');
  await page.close();
});

test('a parsing worker that cannot start ends the load with an error, not a wait', TIER2, async () => {
  const page = await b.newPage();
  await page.route('**/worker.js*', route => route.fulfill({ status: 404, body: 'gone' }));
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  await loadFile(page, path.join(FIXTURES, 'a0kuma_adam.pickle'));
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'error');
  assert.match(await page.textContent('[data-testid=error]'), /^a0kuma_adam\.pickle: the parsing worker stopped/);
  await page.close();
});
