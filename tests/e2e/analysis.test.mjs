// End-to-end: "Where the memory goes" — the live set at the peak by category, component and call stack,
// charts drawn on canvas, clicks that highlight allocations and pick another entry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { serve, browser, open, loadFile, shot, showAnalysis, cliJson, ROOT, FIXTURES, TIER2, HAVE_FIXTURES } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const reference = name => JSON.parse(fs.readFileSync(path.join(FIXTURES, 'reference', `${name}.json`), 'utf8'));
const grouped = n => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

/** Distinct colours in a canvas (a blank chart has one or two). */
async function canvasColours(page, testid) {
  return page.$eval(`[data-testid=${testid}]`, c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return seen.size;
  });
}

test('the analysis view shows the peak by category, component and call stack, with drawn charts', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  const ref = reference('kk_memory_ctx128_fullstep.pickle').devices['0'];
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  await showAnalysis(page);
  const at = page.locator('[data-testid=analysis-at]');
  assert.match(await at.textContent(), new RegExp(`peak.*${grouped(ref.timeline_peak_bytes)} bytes`));
  // The tree's top-level paths add up to everything live at the peak.
  const rows = page.locator('[data-testid=live-set-tree] .tree-row');
  await rows.first().waitFor();
  assert.match(await rows.first().textContent(), /benchmark\.py:\d+:<module>/);
  for (const id of ['category-chart', 'components-chart', 'overview-chart', 'components-over-time-chart', 'top-consumers-chart',
    'efficiency-chart', 'live-sizes-chart', 'free-sizes-chart']) {
    assert.ok(await canvasColours(page, id) > 8, `${id} looks blank`);
  }
  const legend = await page.locator('.panel .legend.flat .legend-item').allTextContents();
  assert.ok(legend.some(l => /^Optimizer state 25\.6 GiB/.test(l)), legend.join(' | '));
  assert.match(await page.textContent('[data-testid=recommendations]'), /expandable_segments:True/);
  // Each chart's PNG/SVG buttons stand beside its panel's heading, not over what the chart draws
  // (the peak's label is drawn in its top right corner), and the heading's text keeps clear of them.
  const placed = await page.$$eval('.panel', panels => panels.filter(p => p.querySelector(':scope > .heading-buttons'))
    .map(p => {
      const box = e => e.getBoundingClientRect();
      const [h3, buttons, canvas] = [box(p.querySelector('h3')), box(p.querySelector('.export-buttons')), box(p.querySelector('.chart-box canvas'))];
      const text = document.createRange();
      text.selectNodeContents(p.querySelector('h3'));
      return { heading: p.querySelector('h3').textContent, above: buttons.bottom <= canvas.top + 1,
        inline: buttons.top < h3.bottom && buttons.bottom > h3.top, clear: text.getBoundingClientRect().right <= buttons.left };
    }));
  assert.ok(placed.length >= 6, JSON.stringify(placed));
  for (const p of placed) assert.ok(p.above && p.inline && p.clear, JSON.stringify(p));
  await page.waitForTimeout(200);
  await shot(page, 'analysis-peak');
  await page.locator('[data-testid=overview-chart]').scrollIntoViewIfNeeded();
  await shot(page, 'analysis-panels');
  assert.deepEqual(errors, []);
  await page.close();
});

test('clicking a call path, a bar or a category highlights its allocations on the timelines', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  await showAnalysis(page);
  const chip = page.locator('[data-testid=highlight]');
  // A call path.
  const frame = page.locator('[data-testid=live-set-tree] .tree-frame', { hasText: 'optimizers.py' }).first();
  await frame.click();
  assert.match(await chip.textContent(), /Highlighted: optimizers\.py:\d+:step \(\d+ allocations\)/);
  // The keyboard does what the click does: Enter on another call path.
  const other = page.locator('[data-testid=live-set-tree] .tree-frame', { hasText: 'benchmark.py' }).first();
  await other.focus();
  await page.keyboard.press('Enter');
  assert.match(await chip.textContent(), /Highlighted: benchmark\.py:\d+:\S+ \(\d+ allocations\)/);
  // A component bar (columns: parameters, gradients, optimizer state, activations, other).
  await page.locator('[data-testid=components-chart]').scrollIntoViewIfNeeded();
  const comp = await page.locator('[data-testid=components-chart]').boundingBox();
  await page.mouse.click(comp.x + 60 + (comp.width - 72) * 0.5, comp.y + comp.height - 60);
  assert.match(await chip.textContent(), /Highlighted: Optimizer state/);
  // The largest consumer: highlighted and pinned, so the timeline shows its stack.
  await page.locator('[data-testid=top-consumers-chart]').scrollIntoViewIfNeeded();
  const top = await page.locator('[data-testid=top-consumers-chart]').boundingBox();
  await page.mouse.click(top.x + top.width * 0.6, top.y + 22);
  assert.match(await chip.textContent(), /Highlighted: b[0-9a-f]+_\d+ 100\.0 MiB \(1 allocation\)/);
  // The keyboard picks bars too: Tab reaches the chart, the arrows move a ring round a bar, Enter picks it.
  // (The chart's PNG/SVG buttons, beside its heading, come before it.)
  await page.locator('[data-testid=components-chart-svg]').focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'components-chart');
  for (const key of ['Home', 'ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowLeft']) await page.keyboard.press(key);
  assert.match(await page.getAttribute('[data-testid=components-chart]', 'aria-label'), /^Optimizer state: Enter highlights it$/);
  const ring = await page.locator('[data-testid=components-chart-focus]').boundingBox();
  const canvas = await page.locator('[data-testid=components-chart]').boundingBox();
  // The third column (optimizer state), inside the canvas.
  assert.ok(ring.x > canvas.x + canvas.width * 0.3 && ring.x + ring.width < canvas.x + canvas.width * 0.8, JSON.stringify({ ring, canvas }));
  await page.keyboard.press('Enter');
  assert.match(await chip.textContent(), /Highlighted: Optimizer state/);
  await shot(page, 'analysis-bar-focus');
  await page.locator('[data-testid=top-consumers-chart]').focus();
  await page.keyboard.press('End');
  await page.keyboard.press('Home');
  await page.keyboard.press(' ');
  assert.match(await chip.textContent(), /Highlighted: b[0-9a-f]+_\d+ 100\.0 MiB \(1 allocation\)/);
  await page.waitForTimeout(200);
  await shot(page, 'analysis-highlight');
  await page.selectOption('[data-testid=view-select]', 'timeline');
  assert.match(await page.locator('[data-testid=highlight]').textContent(), /b[0-9a-f]+_\d+/);
  assert.match(await page.locator('[data-testid=stack-trace]').textContent(), /BmmBackward0|bmm|autograd/);
  await page.waitForTimeout(200);
  await shot(page, 'timeline-highlight');
  await page.click('[data-testid=highlight] .chip-close');
  assert.equal(await page.locator('[data-testid=highlight]').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('clicking the compact timeline recomputes the live set at that entry', TIER2, async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  await showAnalysis(page);
  const at = page.locator('[data-testid=analysis-at]');
  const box = await page.locator('[data-testid=analysis-timeline]').boundingBox();
  // A quarter of the way in: before backward and the optimizer step, so less is live than at the peak.
  await page.mouse.click(box.x + 72 + (box.width - 84) * 0.25, box.y + box.height / 2);
  await page.waitForFunction(() => /after entry/.test(document.querySelector('[data-testid=analysis-at]').textContent));
  const text = await at.textContent();
  const m = text.match(/after entry ([\d ]+): .* \(([\d ]+) bytes\) in ([\d ]+) allocations/);
  assert.ok(m, text);
  const entry = Number(m[1].replace(/ /g, ''));
  assert.ok(entry > 3000 && entry < 6500, text);
  const live = Number(m[2].replace(/ /g, ''));
  assert.ok(live > 0 && live < 54802667524, text);
  const legend = await page.locator('.panel .legend.flat .legend-item').allTextContents();
  assert.ok(!legend.some(l => l.startsWith('Optimizer state')), legend.join(' | '));
  await page.waitForTimeout(200);
  await shot(page, 'analysis-entry');
  await page.click('[data-testid=back-to-peak]');
  // The peak's report is kept: back at once (still, it is applied in a later task).
  await page.waitForFunction(() => /peak/.test(document.querySelector('[data-testid=analysis-at]').textContent), null, { timeout: 2000 });
  // The keyboard moves the analysed entry: a pixel's worth left of the peak (entry 19 335), the last
  // entry, and Escape back to the peak.
  const after = async () => {
    await page.waitForFunction(() => /after entry/.test(document.querySelector('[data-testid=analysis-at]').textContent));
    return Number((await at.textContent()).match(/after entry ([\d ]+):/)[1].replace(/ /g, ''));
  };
  await page.locator('[data-testid=analysis-timeline]').focus();
  await page.keyboard.press('ArrowLeft');
  const left = await after();
  assert.ok(left < 19335 && left > 19335 - 100, String(left));
  assert.match(await page.getAttribute('[data-testid=analysis-timeline]', 'aria-label'), new RegExp(`^Analysed at entry ${left.toLocaleString('en').replace(/,/g, ' ')}:`));
  await page.keyboard.press('End');
  await page.waitForFunction(l => !document.querySelector('[data-testid=analysis-at]').textContent.includes(`after entry ${l}`), left.toLocaleString('en').replace(/,/g, ' '));
  assert.ok(await after() > 19335);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => /peak/.test(document.querySelector('[data-testid=analysis-at]').textContent), null, { timeout: 2000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('an OOM snapshot leads with its OOM recommendation (cs_memory_snapshot, device 1); its findings copy as Markdown, at the peak and where it ran out', TIER2, async () => {
  const { page, errors } = await open(b, server.url, undefined, null, { permissions: ['clipboard-read', 'clipboard-write'] });
  const findings = async () => {
    await page.click('[data-testid=copy-findings]');
    await page.waitForFunction(() => document.querySelector('[data-testid=copy-findings]').textContent === 'Copied ✓');
    return page.evaluate(() => navigator.clipboard.readText());
  };
  await loadFile(page, path.join(FIXTURES, 'cs_memory_snapshot.pickle'));
  await page.selectOption('[data-testid=device-select]', '1');
  await showAnalysis(page);
  const recs = page.locator('[data-testid=recommendations]');
  await recs.waitFor();
  assert.match(await recs.textContent(), /ran out of memory.*entry \d+: a request of/s);
  // One click analyses the entry where it ran out, and back.
  await page.click('[data-testid=at-oom]');
  await page.waitForFunction(() => /^Live when it ran out of memory \(at entry 421\): /.test(document.querySelector('[data-testid=analysis-at]').textContent));
  assert.equal(await page.locator('[data-testid=at-oom]').count(), 0);
  // The findings there: the entry, what is live, where the peak is; then the lines of the report's
  // README.md, the out-of-memory recommendation among them.
  const atOom = await findings();
  assert.match(atOom, /^\*\*`cs_memory_snapshot\.pickle`\*\* · cuda:1\n\n- \*\*At entry 421 of [\d ]+: [\d.]+ [KMG]iB live\*\*, in [\d ]+ allocations; the peak is [\d.]+ [KMG]iB at entry [\d ]+\.\n- Live then: /, atOom);
  assert.match(atOom, /\n- Allocator: \d+ % of reserved is cached/, atOom);
  assert.match(atOom, /\n- \*\*[^*]+\*\* .*ran out of memory/, atOom);
  await page.click('[data-testid=back-to-peak]');
  await page.waitForFunction(() => /^Live at the peak/.test(document.querySelector('[data-testid=analysis-at]').textContent));
  // Elsewhere, the button reads as before until clicked again.
  assert.equal(await page.textContent('[data-testid=copy-findings]'), 'Copy findings');
  assert.match(await findings(), /^\*\*`cs_memory_snapshot\.pickle`\*\* · cuda:1\n\n- \*\*Peak: [\d.]+ [KMG]iB\*\* at entry [\d ]+ of [\d ]+, with [\d ]+ allocations live; /);
  await page.locator('[data-testid=recommendations]').scrollIntoViewIfNeeded();
  await shot(page, 'analysis-oom');
  await page.click('[data-testid=theme]');
  await page.waitForTimeout(300);
  await page.evaluate(() => document.querySelector('.analysis-body').scrollTo(0, 0));
  await shot(page, 'analysis-dark');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the steps the optimizer marks in a trace: a row each, figures as the command line\'s, a click analyses a step\'s peak', TIER2, async () => {
  const { page, errors } = await open(b, server.url, undefined, null, { permissions: ['clipboard-read', 'clipboard-write'] });
  // One real training step (kk fullstep: one Optimizer.step) is no steps; four copies of it, each at
  // addresses and times of its own with its annotations, are four.
  await loadFile(page, path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle'));
  await showAnalysis(page);
  await page.locator('[data-testid=live-set-tree] .tree-row').first().waitFor();
  assert.equal(await page.locator('[data-testid=trace-steps]').count(), 0);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-steps-')), 'kk_four_steps.pickle');
  execFileSync('python3', [path.join(ROOT, 'scripts', 'tile_snapshot.py'), '--size', '13', '--out', file,
    path.join(FIXTURES, 'kk_memory_ctx128_fullstep.pickle')], { stdio: 'ignore' });
  const { steps } = cliJson(['report', '--json', file]).devices[0];
  assert.equal(steps.steps.length, 4);

  await loadFile(page, file);
  await showAnalysis(page);
  const panel = page.locator('[data-testid=trace-steps]');
  await panel.waitFor();
  assert.match(await panel.locator('h3').textContent(), /^4 steps in the trace · marked by Optimizer\.step#AdamW\.step/);
  const rows = panel.locator('tbody tr');
  assert.deepEqual(await rows.evaluateAll(rs => rs.map(r => Number(r.dataset.peak))), steps.steps.map(s => s.peak_bytes));
  // Where what steps 2 to 4 left live was allocated, the most first, as the command line says.
  await page.click('[data-testid=trace-steps-kept] summary');
  const kept = await page.locator('[data-testid=trace-steps-kept] li code').allTextContents();
  assert.deepEqual(kept, steps.kept_at.slice(0, 5).map(k => k.site));
  // At the peak, the last step holds it; a click on step 2 analyses step 2's peak.
  assert.match(await page.textContent('[data-testid=analysis-at]'), /^Live at the peak \(at entry [\d ]+\), in step 4 of 4: /);
  assert.equal(await rows.nth(3).getAttribute('class'), 'picked');
  await rows.nth(1).click();
  const two = steps.steps[1];
  await page.waitForFunction(at => document.querySelector('[data-testid=analysis-at]').textContent.startsWith(at),
    `Live after entry ${grouped(two.peak_entry)}, in step 2 of 4: `);
  assert.match(await page.textContent('[data-testid=analysis-at]'), new RegExp(`\\(${grouped(two.peak_bytes)} bytes\\)`));
  assert.equal(await rows.nth(1).getAttribute('class'), 'picked');
  // Enter on a row does what a click does.
  await rows.nth(0).focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /, in step 1 of 4: /.test(document.querySelector('[data-testid=analysis-at]').textContent));
  // The findings say the steps, and the step of the entry analysed.
  await page.click('[data-testid=copy-findings]');
  await page.waitForFunction(() => document.querySelector('[data-testid=copy-findings]').textContent === 'Copied ✓');
  const findings = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(findings, /\n- \*\*At entry [\d ]+ of [\d ]+, in step 1 of 4: /, findings);
  assert.match(findings, /\n- \*\*4 steps in the trace\*\* \(marked by `Optimizer\.step#AdamW\.step`\): the highest peak, [\d.]+ GiB, in step 4 /, findings);
  await panel.scrollIntoViewIfNeeded();
  await shot(page, 'analysis-trace-steps');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a real training loop recorded for this repository shows its three optimizer steps, the first allocating what lasts', async () => {
  const { page, errors } = await open(b, server.url);
  await loadFile(page, path.join(ROOT, 'tests', 'fixtures', 'training.pickle'));
  await showAnalysis(page);
  const panel = page.locator('[data-testid=trace-steps]');
  await panel.waitFor();
  assert.match(await panel.locator('h3').textContent(), /^3 steps in the trace · marked by Optimizer\.step#AdamW\.step/);
  // Figures computed apart from the engine (crates/snapshot/tests/trace_steps.rs says how).
  assert.deepEqual(await panel.locator('tbody tr').evaluateAll(rs => rs.map(r => Number(r.dataset.peak))), [89159680, 89159680, 89159680]);
  assert.equal(await panel.locator('.steps-finding').textContent(), 'Every step peaks at 85.0 MiB. Steps 2 to 3 leave nothing more live.');
  assert.equal(await page.locator('[data-testid=trace-steps-kept]').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});
