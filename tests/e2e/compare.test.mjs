// End-to-end: comparing runs in the page. Several files picked at once (or a folder) are read for
// comparison only; the Compare view shows the peak table with the reference peaks and the config read
// from the names, copies it as Markdown, overlays the curves in one colour per run, diffs two runs
// exactly, names the rank out of line, and holds 16 files in a few megabytes of wasm memory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, clickWhen, shot, captureFolder, sweepFolder, dropTree, twoFrames, FIXTURES, ROOT, TIER2 } from './harness.mjs';

let server, b, ranks;
before(async () => {
  server = await serve();
  b = await browser();
  ranks = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-ranks-'));
  if (fs.existsSync(path.join(FIXTURES, 'a0kuma_adam.pickle'))) {
    execFileSync('python3', [path.join(ROOT, 'scripts', 'make_rank_set.py'), '--out', ranks,
      '--source', path.join(FIXTURES, 'a0kuma_adam.pickle')], { stdio: 'ignore' });
  }
});
after(async () => { await b?.close(); await server?.close(); fs.rmSync(ranks, { recursive: true, force: true }); });

const reference = name => JSON.parse(fs.readFileSync(path.join(FIXTURES, 'reference', `${name}.json`)));

/** A page (clipboard allowed) that keeps the wasm instance for memory readings. */
async function comparePage() {
  const context = await b.newContext({ viewport: { width: 1500, height: 1000 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/memograph\/.*$/, '') });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  await page.addInitScript(() => addEventListener('TrunkApplicationStarted', e => { window.__wasm = e.detail.wasm; }));
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  return { page, errors, context };
}

/** Runs `body(root, page, errors)` with a scratch folder `root` and a fresh compare page, removes both
 *  after whatever happens, and asks that the page said no error. */
async function withScratch(tag, body) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `memograph-e2e-${tag}-`));
  const { page, errors, context } = await comparePage();
  try {
    await body(root, page, errors);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Picks `files` at once and waits until `count` runs are compared. */
async function pick(page, files, count, selector = 'input[type=file]') {
  await page.setInputFiles(selector, files);
  await page.waitForFunction(n => {
    const s = document.querySelector('[data-testid=compare-status]');
    return s && s.textContent.startsWith(`${n} runs compared`) && !s.textContent.includes('reading')
      && document.querySelector('#app').dataset.state === 'ready';
  }, count, { timeout: 120000 });
}

/** Pixels of the canvas close to each colour (hex). */
async function colourCounts(page, selector, colours) {
  return page.$eval(selector, (c, colours) => {
    const ctx = c.getContext('2d');
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    const rgb = colours.map(h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16)));
    const counts = colours.map(() => 0);
    for (let i = 0; i < data.length; i += 4) {
      rgb.forEach(([r, g, b], k) => {
        if (Math.abs(data[i] - r) < 12 && Math.abs(data[i + 1] - g) < 12 && Math.abs(data[i + 2] - b) < 12) counts[k]++;
      });
    }
    return counts;
  }, colours);
}

test('three fixtures: the peak table holds the reference peaks and config, copies as Markdown, overlays three curves and diffs exactly', TIER2, async () => {
  const { page, errors, context } = await comparePage();
  const names = ['kk_memory_ctx128_forward.pickle', 'kk_memory_ctx128_fullstep.pickle', 'cs_memory_snapshot.pickle'];
  await pick(page, names.map(n => path.join(FIXTURES, n)), 3);
  assert.equal(await page.$eval('[data-testid=view-select]', e => e.value), 'compare');
  // One row per file × device (cs has three devices; its default one takes part), the exact peak in
  // each row's title.
  for (const name of names) {
    const ref = reference(name).devices;
    for (const [device, figures] of Object.entries(ref)) {
      if (figures.allocations === 0 && figures.timeline_peak_bytes === 0) continue;
      const row = page.locator(`[data-testid=compare-table] tr[data-file="${name}"][data-device="${device}"]`);
      assert.equal(await row.count(), 1, `${name} cuda:${device}`);
      const title = await row.getAttribute('title');
      const exact = figures.timeline_peak_bytes.toLocaleString('en-US').replace(/,/g, ' ');
      assert.ok(title.includes(`peak ${exact} bytes`), `${title} vs ${figures.timeline_peak_bytes}`);
    }
  }
  const headers = await page.$$eval('[data-testid=compare-table] th', ths => ths.map(t => t.textContent));
  assert.ok(headers.includes('ctx') && headers.includes('phase'), headers.join('|'));
  // The peak column says what it counts, next to what torch.cuda.max_memory_allocated() reads.
  const peakTitle = await page.$$eval('[data-testid=compare-table] th',
    ths => ths.find(t => t.textContent.startsWith('peak allocated'))?.title || '');
  assert.match(peakTitle, /max_memory_allocated/, peakTitle);
  const forward = page.locator('tr[data-file="kk_memory_ctx128_forward.pickle"]');
  assert.match(await forward.textContent(), /128.*forward/);

  // Copy as Markdown: a header, a rule and one line per run taking part.
  await page.click('[data-testid=compare-copy]');
  const markdown = await page.evaluate(() => navigator.clipboard.readText());
  const lines = markdown.trim().split('\n');
  assert.equal(lines.length, 5, markdown);
  assert.ok(lines[0].startsWith('| file | device | ctx | phase | peak allocated |'), lines[0]);
  assert.ok(lines[1].startsWith('|---|---|'), lines[1]);
  assert.ok(lines.slice(2).every(l => l.startsWith('| ')), markdown);

  // The keyboard does what clicks do. A heading: Enter sorts largest first, then smallest first.
  const heading = page.locator('[data-testid=compare-table] th', { hasText: 'peak allocated' }).first();
  const peaks = () => page.$$eval('[data-testid=compare-table] tbody tr', rows => rows.map(r => Number(r.dataset.peak)));
  await heading.focus();
  await page.keyboard.press('Enter');
  assert.equal(await heading.getAttribute('aria-sort'), 'descending');
  const down = await peaks();
  assert.deepEqual(down, [...down].sort((x, y) => y - x));
  await page.keyboard.press('Enter');
  assert.equal(await heading.getAttribute('aria-sort'), 'ascending');
  assert.deepEqual(await peaks(), [...down].reverse());
  await page.keyboard.press('Enter');
  assert.equal(await heading.getAttribute('aria-sort'), 'none');
  // A row: Enter diffs it against the baseline (B), as a click does.
  await page.locator('tr[data-file="kk_memory_ctx128_fullstep.pickle"]').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /fullstep/.test(document.querySelector('[data-testid=diff-b]').selectedOptions[0]?.textContent));

  // The overlaid chart: each run in its colour.
  const counts = await colourCounts(page, '[data-testid=compare-chart]', ['#1f77b4', '#d62728', '#2ca02c']);
  assert.ok(counts.every(c => c > 50), `pixels per run colour: ${counts}`);
  // Hovering reads every curve.
  const box = await page.locator('[data-testid=compare-chart]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
  await page.waitForSelector('[data-testid=compare-readout]');
  assert.equal(await page.locator('[data-testid=compare-readout] .readout-item').count(), 3);
  // The pointer's rule: a line on a canvas of its own over the chart, under the pointer; gone when
  // the pointer leaves.
  const ruleColumns = () => page.$eval('[data-testid=compare-chart-rule]', c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const columns = new Set();
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) columns.add(((i - 3) / 4) % c.width);
    return [...columns];
  });
  const columns = await ruleColumns();
  const scale = await page.$eval('[data-testid=compare-chart]', c => c.width / c.clientWidth);
  assert.ok(columns.length >= 1 && columns.length <= 2 * scale, `rule columns ${columns}`);
  assert.ok(Math.abs(columns[0] - box.width * 0.6 * scale) <= 2 * scale, `rule at ${columns}, pointer at ${box.width * 0.6}`);
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height + 40);
  await page.waitForFunction(() => !document.querySelector('[data-testid=compare-readout]'));
  assert.deepEqual(await ruleColumns(), []);

  // Diff forward → fullstep: the root's delta is the difference of the reference peaks, exactly.
  await page.selectOption('[data-testid=diff-a]', { index: 0 });
  await page.selectOption('[data-testid=diff-b]', { index: 1 });
  const peak = n => reference(n).devices['0'].timeline_peak_bytes;
  const delta = peak(names[1]) - peak(names[0]);
  await page.waitForFunction(d => document.querySelector('[data-testid=compare-diff]')?.dataset.rootDelta === String(d), delta);
  assert.match(await page.textContent('[data-testid=compare-grown]'), /optimizers\.py:8[24]/);
  // Copied as Markdown, the diff reads as `memograph diff --markdown` writes it (the CLI's tests hold
  // the same figures): the runs, the tree in a fenced block, the call paths that grew as a table.
  await page.click('[data-testid=compare-diff-copy]');
  const diffMarkdown = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(diffMarkdown.startsWith('- A `kk_memory_ctx128_forward.pickle` (cuda:0, its peak at entry 8 226)\n' +
    '- B `kk_memory_ctx128_fullstep.pickle` (cuda:0, its peak at entry 19 335)\n' +
    '- live: 16.4 GiB → 51.0 GiB  (+34.6 GiB)\n\n```text\n'), diffMarkdown);
  assert.ok(diffMarkdown.includes('\n   16.4 GiB    51.0 GiB    +34.6 GiB  <all live memory>\n'), diffMarkdown);
  assert.ok(diffMarkdown.includes('| 0 B | 12.7 GiB | +12.7 GiB | new | `/home/c-kaitwang/assignment1/cs336_basics/optimizers.py:82:step` |'), diffMarkdown);
  assert.equal(await page.textContent('[data-testid=compare-diff-copy]'), 'Copied ✓');
  await shot(page, 'compare-three');
  await page.locator('[data-testid=compare-diff]').scrollIntoViewIfNeeded();
  await shot(page, 'compare-diff');
  // Enter on a call path of the diff tree opens or closes it.
  const diffRows = () => page.locator('[data-testid=compare-diff] .diff-row:not(.head)').count();
  const before = await diffRows();
  await page.locator('[data-testid=compare-diff] .diff-row[tabindex="0"]').first().focus();
  await page.keyboard.press('Enter');
  assert.notEqual(await diffRows(), before);
  await page.keyboard.press('Enter');
  assert.equal(await diffRows(), before);

  // A click on the curves diffs A and B at the entries there (the files are read again in workers);
  // the command line's diff at the same entries gives the same delta.
  const chart = await page.locator('[data-testid=compare-chart]').boundingBox();
  await page.mouse.click(chart.x + chart.width * 0.55, chart.y + chart.height * 0.5);
  await page.waitForFunction(() => document.querySelector('[data-testid=compare-diff-total]')?.textContent.startsWith('At entry'), null, { timeout: 60000 });
  const total = page.locator('[data-testid=compare-diff-total]');
  const [ea, eb, picked] = [await total.getAttribute('data-entry-a'), await total.getAttribute('data-entry-b'), Number(await total.getAttribute('data-delta'))];
  assert.equal(await page.getAttribute('[data-testid=compare-diff]', 'data-root-delta'), String(picked));
  const cli = ['release', 'debug'].map(p => path.join(ROOT, 'target', p, 'memograph')).find(f => fs.existsSync(f));
  if (cli) {
    const out = JSON.parse(execFileSync(cli, ['diff', path.join(FIXTURES, names[0]), path.join(FIXTURES, names[1]), '--at', `${ea}:${eb}`, '--json']));
    assert.equal(out.delta_bytes, picked, `entries ${ea}:${eb}`);
  }
  await page.click('[data-testid=back-to-peaks]');
  await page.waitForFunction(d => document.querySelector('[data-testid=compare-diff]')?.dataset.rootDelta === String(d), delta);
  // The keyboard does the same: End, four tenths back, Enter.
  await page.locator('[data-testid=compare-chart]').focus();
  await page.keyboard.press('End');
  for (let k = 0; k < 4; k++) await page.keyboard.press('Shift+ArrowLeft');
  assert.match(await page.textContent('[data-testid=compare-readout]'), /^at 60\.0 % of each trace/);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=compare-diff-total]')?.textContent.startsWith('At entry'), null, { timeout: 60000 });
  assert.notEqual(await total.getAttribute('data-entry-b'), null);
  await page.click('[data-testid=back-to-peaks]');
  await page.waitForFunction(d => document.querySelector('[data-testid=compare-diff]')?.dataset.rootDelta === String(d), delta);

  // A diff node's call path, picked, is highlighted on a run's own timeline when it opens.
  await page.locator('[data-testid=compare-diff] .diff-row:not(.head) .mark').first().click({ force: true });
  await page.waitForSelector('[data-testid=compare-path]');
  await page.click('[data-testid=compare-path] button:has-text("Open B")');
  await page.waitForSelector('[data-testid=highlight]', { timeout: 60000 });
  const chip = await page.textContent('[data-testid=highlight]');
  assert.match(chip, /Highlighted: .*\(([1-9][\d ]*) allocations\)/);
  await shot(page, 'compare-path-on-timeline');
  await page.selectOption('[data-testid=view-select]', 'compare');
  await page.waitForSelector('[data-testid=compare-table]');

  // Another baseline: deltas follow it.
  await page.click('tr[data-file="kk_memory_ctx128_fullstep.pickle"][data-device="0"] .star');
  assert.match(await forward.textContent(), /-34\.6 GiB/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a rank set: the strip names the rank out of line and the imbalance', TIER2, async () => {
  const { page, errors, context } = await comparePage();
  const files = fs.readdirSync(ranks).sort().map(f => path.join(ranks, f));
  assert.equal(files.length, 8);
  await pick(page, ranks, 8, '[data-testid=open-folder]');
  const summary = page.locator('[data-testid=rank-summary]');
  assert.equal(await summary.getAttribute('data-outlier'), '6');
  const peaks = await page.$$eval('[data-testid=rank-strip] .rank', bars => bars.map(b => Number(b.dataset.peak)));
  assert.equal(peaks.length, 8);
  const mean = peaks.reduce((a, b) => a + b, 0) / peaks.length;
  const imbalance = Math.max(...peaks) / mean;
  assert.ok(Math.abs(Number(await summary.getAttribute('data-imbalance')) - imbalance) < 1e-3);
  assert.equal(Math.max(...peaks), peaks[6]);
  assert.match(await summary.textContent(), /rank 6 is out of line/);
  // The diff is of the baseline (rank 0) against the rank out of line, until another is picked.
  assert.match(await page.$eval('[data-testid=diff-b]', s => s.selectedOptions[0].textContent), /rank6/);
  // The folder all eight share is named once, in the toolbar; the rows show the files in it.
  const folder = `${path.basename(ranks)}/`;
  assert.match(await page.textContent('[data-testid=compare-status]'), new RegExp(`^8 runs compared · in ${folder}$`));
  assert.equal(await page.title(), 'Compare runs (8) — Memograph');
  const shown = await page.$$eval('tr[data-file] td:nth-child(3)', cells => cells.map(c => c.textContent));
  assert.deepEqual(shown, files.map(f => path.basename(f)));
  // The same folder opened again reads nothing again: the same eight rows.
  await page.setInputFiles('[data-testid=open-folder]', ranks);
  await page.waitForTimeout(1500);
  assert.match(await page.textContent('[data-testid=compare-status]'), /^8 runs compared/);
  assert.equal(await page.$$eval('tr[data-file]', rows => rows.length), 8);
  await page.locator('[data-testid=rank-strip]').scrollIntoViewIfNeeded();
  await shot(page, 'compare-ranks');
  // A click on a rank opens its timeline.
  await page.click('[data-testid=rank-strip] .rank[data-rank="6"]');
  await page.waitForSelector('[data-testid=timeline]');
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready');
  assert.deepEqual(errors, []);
  await context.close();
});

test('sixteen files open at once and the tab keeps only their digests', TIER2, async (t) => {
  const { page, errors, context } = await comparePage();
  const fixtures = ['a0kuma_adam.pickle', 'a0kuma_adam.proto5.pickle', 'cs_memory_snapshot.pickle',
    'ftcourse_memory_snapshot.pickle', 'kk_memory_ctx128_forward.pickle', 'kk_memory_ctx128_fullstep.pickle',
    'magma_memory_snapshot.pickle.gz', 'yiyi_oom_snapshot.pickle'].map(n => path.join(FIXTURES, n));
  const files = [...fixtures, ...fs.readdirSync(ranks).sort().map(f => path.join(ranks, f))];
  assert.equal(files.length, 16);
  const total = files.reduce((s, f) => s + fs.statSync(f).size, 0);
  const started = Date.now();
  await pick(page, files, 16);
  const ms = Date.now() - started;
  const memory = await page.evaluate(() => window.__wasm.memory.buffer.byteLength);
  t.diagnostic(`16 files (${(total / 2 ** 20).toFixed(1)} MiB) compared in ${ms} ms; wasm memory ${(memory / 2 ** 20).toFixed(1)} MiB`);
  // The bound: the page's memory after its rehearsal (about 40 MiB) plus well under the files' size.
  assert.ok(memory < 64 * 2 ** 20, `wasm memory ${memory}`);
  // A and B are the first two: one run written with pickle protocols 4 and 5, the same at every path.
  await page.locator('[data-testid=compare-diff-same]').waitFor();
  assert.equal(await page.getAttribute('[data-testid=compare-diff]', 'data-root-delta'), '0');
  // The OOM snapshot is kept and marked.
  assert.equal(await page.locator('tr.oom[data-file="yiyi_oom_snapshot.pickle"]').count() +
    await page.locator('tr.oom[data-file="cs_memory_snapshot.pickle"]').count() > 0, true);
  await shot(page, 'compare-sixteen');
  assert.deepEqual(errors, []);
  await context.close();
});

test('Cancel while files are read for a comparison keeps the runs read and reads no more', TIER2, async () => {
  const { page, errors, context } = await comparePage();
  const files = ['a0kuma_adam.pickle', 'a0kuma_adam.proto5.pickle', 'cs_memory_snapshot.pickle',
    'ftcourse_memory_snapshot.pickle', 'kk_memory_ctx128_forward.pickle', 'kk_memory_ctx128_fullstep.pickle',
    'magma_memory_snapshot.pickle.gz', 'yiyi_oom_snapshot.pickle'].map(n => path.join(FIXTURES, n));
  // Pressed by the page itself once the first file is in (a round trip from here could come too late).
  await clickWhen(page, '[data-testid=compare-status]', /reading files: [1-9]\d* of 8/, '[data-testid=cancel-compare]');
  await page.setInputFiles('input[type=file]', files);
  await page.waitForFunction(() => globalThis.clickedAt !== null, null, { timeout: 60000 });
  await page.waitForTimeout(3000);
  const status = await page.textContent('[data-testid=compare-status]');
  const runs = Number(status.match(/^(\d+) runs? compared/)?.[1]);
  assert.ok(runs >= 1 && runs < 8, `${status} (cancelled at "${await page.evaluate(() => globalThis.clickedAt)}")`);
  assert.doesNotMatch(status, /reading/);
  assert.equal(await page.$('[data-testid=cancel-compare]'), null);
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready');
  assert.equal(await page.locator('[data-testid=compare-table] tbody tr').count() >= runs, true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('GPU memory: which runs of a sweep fit, how far the sweep goes, and the link keeps it', async () => {
  // Tier 1: the repository's real fixtures, named as a batch-size sweep would be; bs8 ran out of memory.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-sweep-'));
  const names = { 'lm_bs2.pickle': 'training.pickle', 'lm_bs4.pickle': 'compiled.pickle', 'lm_bs8.pickle': 'oom.pickle' };
  for (const [to, from] of Object.entries(names)) fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', from), path.join(dir, to));
  const { page, errors, context } = await comparePage();
  try {
    await pick(page, Object.keys(names).map(n => path.join(dir, n)), 3);
    const note = () => page.$eval('[data-testid=gpu-memory-note]', e => e.textContent);
    // Each row's file, and the text and class of its cell under `heading` (nulls where no such column).
    const column = heading => page.$$eval('[data-testid=compare-table] tbody tr', (rows, heading) => rows.map(r => {
      const heads = [...r.closest('table').querySelectorAll('thead th')].map(h => h.textContent.replace(/[▲▼]/g, '').trim());
      const k = heads.indexOf(heading);
      return [r.dataset.file, k < 0 ? null : r.children[k].textContent, k < 0 ? null : r.children[k].className];
    }), heading);
    const fits = () => column('fits');
    // Nothing typed: the run that ran out says what its device gave (20 MiB reserved + 139.3 GiB free).
    assert.match(await note(), /from the out-of-memory entry: 139\.3 GiB \(what lm_bs8\.pickle cuda:0 had when it ran out of memory: reserved \+ free\)/);
    assert.deepEqual((await fits()).map(r => r[1]), ['yes', 'yes', 'no']);
    // 150 MiB: 86 MiB reserved fits; 174 MiB reserved (131.5 MiB allocated) only unfragmented.
    await page.fill('[data-testid=gpu-memory]', '150 MiB');
    await page.press('[data-testid=gpu-memory]', 'Enter');
    await page.waitForFunction(() => /headroom/.test(document.querySelector('[data-testid=gpu-memory-note]').textContent));
    assert.deepEqual(await fits(), [
      ['lm_bs2.pickle', 'yes', 'fit-yes'],
      ['lm_bs4.pickle', 'if unfragmented', 'fit-maybe'],
      ['lm_bs8.pickle', 'no', 'fit-no'],
    ]);
    // Headroom: the size less the most reserved; for the run that ran out, less what it needed at
    // least (4 MiB held and 1 PiB asked for).
    const headroom = (await column('headroom')).map(c => c[1]);
    assert.deepEqual(headroom, ['+64.0 MiB', '-24.0 MiB', '-1.0 PiB']);
    const sweep = await page.$eval('[data-testid=sweeps] li', e => e.textContent);
    assert.equal(sweep, 'bs (cuda:0): 2 → 86.0 MiB · 4 → 174.0 MiB reserved at most; ×2.02 per doubling; in 150.0 MiB up to bs 2 (linear through 2 runs); bs 8 ran out of memory (lm_bs8.pickle)');
    await page.waitForFunction(() => location.hash.includes(`gpu=${150 * 2 ** 20}`));
    await shot(page, 'compare-gpu-memory');
    // What reads as no size is said so, and the size in force stays.
    await page.fill('[data-testid=gpu-memory]', 'lots');
    await page.press('[data-testid=gpu-memory]', 'Enter');
    await page.waitForFunction(() => /not a size/.test(document.querySelector('[data-testid=gpu-memory-note]').textContent));
    assert.equal((await fits())[1][1], 'if unfragmented');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('components no run holds are named under the table, not given a column of 0 B; the copies keep every column', async () => {
  const { page, errors, context } = await comparePage();
  try {
    // Neither of the repository's two recorded runs allocated before recording began.
    await pick(page, ['training.pickle', 'compiled.pickle'].map(f => path.join(ROOT, 'tests', 'fixtures', f)), 2);
    const heads = await page.$$eval('[data-testid=compare-table] thead th', ts => ts.map(t => t.textContent.trim()));
    assert.ok(heads.includes('parameters') && !heads.includes('before recording'), heads.join('|'));
    assert.equal(await page.$eval('[data-testid=compare-none-hold]', e => e.textContent), '0 B in every run: before recording');
    await page.click('[data-testid=compare-copy]');
    const markdown = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(markdown.split('\n')[0], /\| before recording \|/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('a sort stays on its column while columns come and go with the GPU memory typed in', async () => {
  // The sort was kept by the column's place: typed in, the GPU memory put two columns before the
  // components and the sort moved to another column; cleared, it took them away and a sort on the
  // last column read past the end of every row (a panic, and the page dead).
  const { page, errors, context } = await comparePage();
  try {
    await pick(page, ['training.pickle', 'compiled.pickle'].map(f => path.join(ROOT, 'tests', 'fixtures', f)), 2);
    const heads = () => page.$$eval('[data-testid=compare-table] thead th', ts => ts.map(t => [t.textContent.replace(/[▲▼]/g, '').trim(), t.getAttribute('aria-sort')]));
    const sortedBy = async () => (await heads()).filter(([, s]) => s && s !== 'none');
    const gpu = async (text, has) => {
      await page.fill('[data-testid=gpu-memory]', text);
      await page.press('[data-testid=gpu-memory]', 'Enter');
      await page.waitForFunction(has => [...document.querySelectorAll('[data-testid=compare-table] thead th')]
        .some(t => /headroom/.test(t.textContent)) === has, has);
    };
    const files = () => page.$$eval('[data-testid=compare-table] tbody tr', rs => rs.map(r => r.dataset.file));
    await gpu('1 GiB', true);
    // The last column of figures.
    await page.locator('[data-testid=compare-table] thead th', { hasText: /^OOM$/ }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=compare-table] thead th')].some(t => /^OOM ▼/.test(t.textContent)));
    await gpu('', false);
    await twoFrames(page);
    assert.deepEqual(await sortedBy(), [['OOM', 'descending']]);
    assert.equal(await page.$eval('#app', a => a.dataset.state), 'ready');
    // By peak, largest first (compiled.pickle's 131.5 MiB over training.pickle's): it stays so with the
    // columns back.
    await page.locator('[data-testid=compare-table] thead th', { hasText: /^peak allocated/ }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=compare-table] thead th')].some(t => /peak allocated ▼/.test(t.textContent)));
    assert.deepEqual(await files(), ['compiled.pickle', 'training.pickle']);
    await gpu('1 GiB', true);
    assert.deepEqual(await sortedBy(), [['peak allocated', 'descending']]);
    assert.deepEqual(await files(), ['compiled.pickle', 'training.pickle']);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('GPU memory: a tensor-parallel sweep says from which degree on its runs fit', async () => {
  // Tier 1: the repository's real fixtures named as tp 2 (174 MiB reserved) and tp 4 (86 MiB).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-tp-'));
  const names = { 'lm_tp2.pickle': 'compiled.pickle', 'lm_tp4.pickle': 'training.pickle' };
  for (const [to, from] of Object.entries(names)) fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', from), path.join(dir, to));
  const { page, errors, context } = await comparePage();
  try {
    await pick(page, Object.keys(names).map(n => path.join(dir, n)), 2);
    await page.fill('[data-testid=gpu-memory]', '50 MiB');
    await page.press('[data-testid=gpu-memory]', 'Enter');
    await page.waitForFunction(() => /from tp/.test(document.querySelector('[data-testid=sweeps] li')?.textContent), null, { polling: 100 });
    // a + d/tp through both runs: 50 MiB needs tp 6.8, so 8 (the runs' degrees are powers of two).
    const sweep = await page.$eval('[data-testid=sweeps] li', e => e.textContent);
    assert.equal(sweep, 'tp (cuda:0): 2 → 174.0 MiB · 4 → 86.0 MiB reserved at most; ×0.49 per doubling; in 50.0 MiB from tp 8 on (extrapolated, as 1/tp through 2 runs)');
    await shot(page, 'compare-tp-sweep');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('files that fail among those compared: each is named with its reason, dismissed at once, and the comparison stays, ready', async () => {
  // Tier 1: two of the repository's fixtures and two files that are no snapshots, picked at once.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-bad-'));
  for (const name of ['training.pickle', 'compiled.pickle']) fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', name), path.join(dir, name));
  fs.writeFileSync(path.join(dir, 'notes.pickle'), 'not a pickle at all');
  fs.writeFileSync(path.join(dir, 'page.pickle'), '<!DOCTYPE html><html><body>404</body></html>');
  const { page, errors, context } = await comparePage();
  try {
    await page.setInputFiles('input[type=file]', ['training.pickle', 'notes.pickle', 'compiled.pickle', 'page.pickle'].map(n => path.join(dir, n)));
    await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'error'
      && /^2 runs compared/.test(document.querySelector('[data-testid=compare-status]')?.textContent)
      && !/reading/.test(document.querySelector('[data-testid=compare-status]').textContent), null, { timeout: 60000 });
    // Each failure is said, not only the last one.
    assert.equal(await page.textContent('.error-panel strong'), 'Could not open 2 files.');
    const said = (await page.$$eval('[data-testid=error]', es => es.map(e => e.textContent))).sort();
    assert.equal(said.length, 2);
    assert.match(said[0], /^notes\.pickle: not a pickle file/);
    assert.match(said[1], /^page\.pickle: not a memory snapshot: an HTML page/);
    await page.click('.error-panel button');
    await page.waitForSelector('.error-panel', { state: 'detached' });
    // What is shown is the comparison, and the page says it is ready (it said `empty` with no snapshot open whole).
    assert.equal(await page.$eval('#app', e => e.dataset.state), 'ready');
    assert.equal(await page.locator('[data-testid=compare-table] tbody tr').count(), 2);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("capture's folder: its snapshots are compared and its steps read; a README, a chart and a config in it are left alone", () => withScratch('capture', async (root, page, errors) => {
  // Tier 1: memograph-capture writes into memograph_snapshots/; people keep notes and charts beside.
  // A file's own name says whether it is a snapshot, not the folder's ("snapshot" is in that).
  const dir = captureFolder(root);
  fs.writeFileSync(path.join(dir, 'chart.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  fs.writeFileSync(path.join(dir, 'config.json'), '{"lr": 0.001}\n');
  await pick(page, dir, 2, '[data-testid=open-folder]');
  await page.waitForTimeout(500);
  assert.equal(await page.locator('.error-panel').count(), 0, await page.locator('.error-panel').textContent().catch(() => ''));
  assert.deepEqual(await page.$$eval('tr[data-file] td:nth-child(3)', cells => cells.map(c => c.textContent)),
    ['rank0_exit_0.pickle', 'rank1_exit_0.pickle']);
  await page.selectOption('[data-testid=view-select]', 'steps');
  await page.waitForFunction(() => document.querySelector('[data-testid=steps-status]')?.textContent === '1 run', null, { timeout: 30000 });
}));

test('folders dropped together are walked whole and compared, a rank strip each; a loose file beside them joins; dropped again, nothing doubles', () => withScratch('drop', async (root, page, errors) => {
  // Tier 1: two runs' folders dropped from the desktop at once, with a snapshot that lies beside them.
  const sweep = sweepFolder(root);
  const run = (name) => Object.fromEntries(fs.readdirSync(path.join(sweep, name)).map(f => [f, path.join(sweep, name, f)]));
  await dropTree(page, { run_a: run('run_a'), run_b: { ...run('run_b'), 'notes.md': path.join(ROOT, 'README.md') },
    'extra.pickle': path.join(ROOT, 'tests', 'fixtures', 'training.pickle') });
  await page.waitForFunction(() => /^5 runs compared/.test(document.querySelector('[data-testid=compare-status]')?.textContent ?? '')
    && document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  assert.deepEqual(await page.$$eval('tr[data-file] td:nth-child(3)', cells => cells.map(c => c.textContent)),
    ['extra.pickle', 'run_a/rank0_exit_0.pickle', 'run_a/rank1_exit_0.pickle', 'run_b/rank0_exit_0.pickle', 'run_b/rank1_exit_0.pickle']);
  assert.deepEqual(await page.$$eval('[data-testid=rank-set]', s => s.map(e => e.dataset.label)), ['run_a', 'run_b']);
  // A folder dropped again (its step records in it now) adds only what is new: its snapshots are
  // known, its step records read once however often it comes.
  const steps = path.join(ROOT, 'crates', 'snapshot', 'fuzz', 'corpus', 'steps', 'capture_steps.jsonl');
  for (let again = 0; again < 2; again++) {
    await dropTree(page, { run_a: { ...run('run_a'), 'rank0_steps.jsonl': steps } });
    await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  }
  await page.waitForTimeout(500);
  assert.match(await page.textContent('[data-testid=compare-status]'), /^5 runs compared/);
  // In Steps, run_a's step records once, and the steps the traces of the snapshots of no job with
  // step records mark (run_b's ranks, the loose file): run_a's snapshots are its records' marks.
  await page.selectOption('[data-testid=view-select]', 'steps');
  await page.waitForFunction(() => document.querySelector('[data-testid=steps-status]')?.textContent === '4 runs', null, { timeout: 30000 });
  assert.deepEqual(await page.$$eval('[data-testid=steps-table] tr[data-run]', r => r.map(e => `${e.dataset.run} ${e.dataset.rank}`)),
    ['run_a/steps 3', 'extra ', 'run_b/exit_0 0', 'run_b/exit_0 1']);
}));

test('a folder with nothing to open says so, by name, whether picked or dropped; an empty one too', () => withScratch('nothing', async (root, page, errors) => {
  // Tier 1: a folder of notes and a config (no snapshot, no step records) used to leave the page as it was.
  const notes = path.join(root, 'notes');
  fs.mkdirSync(notes);
  fs.writeFileSync(path.join(notes, 'README.md'), '# runs\n');
  fs.writeFileSync(path.join(notes, 'config.json'), '{"lr": 0.001}\n');
  const said = () => page.waitForSelector('.error-panel').then(p => p.textContent());
  await page.setInputFiles('[data-testid=open-folder]', notes);
  assert.match(await said(), /notes: no snapshots or step records among its 2 files \(snapshots: files named \*\.pickle, \*\.pkl or \*\.pk, maybe \.gz, or with "snapshot" in their name; step records: capture's/);
  assert.equal(await page.$eval('#app', e => e.dataset.state), 'error');
  assert.equal(await page.textContent('.error-panel strong'), 'Nothing to open in the folder.');
  await shot(page, 'folder-with-nothing');
  await page.click('.error-panel button');
  await dropTree(page, { empty: {} });
  await page.waitForFunction(() => /empty: no files in it/.test(document.querySelector('.error-panel')?.textContent ?? ''));
  await page.click('.error-panel button');
  await dropTree(page, { notes: { 'README.md': path.join(notes, 'README.md') }, more: {} });
  await page.waitForFunction(() => /notes, more: its one file is neither a snapshot nor step records \(/.test(document.querySelector('.error-panel')?.textContent ?? ''));
}));

test('two jobs in one folder: a rank strip each, named by its folder; a bar opens the run of its rank', () => withScratch('jobs', async (root, page, errors) => {
  // Tier 1: two runs' folders of two ranks each, opened as one folder (a sweep kept side by side).
  const sweep = sweepFolder(root);
  await pick(page, sweep, 4, '[data-testid=open-folder]');
  const sets = await page.$$eval('[data-testid=rank-set]', s => s.map(e => [e.dataset.label, e.querySelector('h3').textContent,
    e.querySelector('[data-testid=rank-summary]').textContent]));
  assert.deepEqual(sets.map(s => s[0]), ['run_a', 'run_b']);
  assert.match(sets[1][1], /^Ranks of run_b/);
  // run_a's ranks are alike; run_b's differ (compiled.pickle peaks higher): neither is "out of line" of two.
  assert.match(sets[0][2], /^2 ranks · .* imbalance ×1\.00$/);
  assert.match(sets[1][2], /^2 ranks · .* imbalance ×1\.21$/);
  // The diff of run_a's two alike ranks (A and B by default) says that nothing grew.
  await page.waitForFunction(() => /nothing grew at any call path/.test(document.querySelector('[data-testid=compare-grown]')?.textContent ?? ''));
  await page.locator('[data-testid=rank-set][data-label=run_b] .rank[data-rank="0"]').scrollIntoViewIfNeeded();
  await shot(page, 'compare-two-jobs');
  await page.click('[data-testid=rank-set][data-label=run_b] .rank[data-rank="0"]');
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready'
    && /run_b\/rank0_exit_0\.pickle/.test(document.querySelector('[data-testid=file-select]')?.selectedOptions[0]?.textContent ?? ''), null, { timeout: 60000 });
}));

test('two folders of one name (two runs\' memograph_snapshots): the second is shown numbered, a rank strip each; picked again nothing doubles; files of one name picked alone are numbered too', () => withScratch('same-name', async (root, page, errors) => {
  // Tier 1: each run writes its snapshots into a folder of the same name; the browser gives a picked
  // folder's files their path from that folder down, and a picked file no path at all.
  const folderOf = (run, rank0) => {
    const dir = path.join(root, run, 'memograph_snapshots');
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', rank0), path.join(dir, 'rank0_exit_0.pickle'));
    fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'training.pickle'), path.join(dir, 'rank1_exit_0.pickle'));
    fs.copyFileSync(path.join(ROOT, 'crates', 'snapshot', 'fuzz', 'corpus', 'steps', 'capture_steps.jsonl'), path.join(dir, 'rank0_steps.jsonl'));
    // Copies of one file made in the same millisecond would be one file to the page (name, size, time).
    const when = new Date(Date.UTC(2026, 0, run === 'a' ? 1 : 2));
    for (const f of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, f), when, when);
    return dir;
  };
  const a = folderOf('a', 'training.pickle');
  const b = folderOf('b', 'compiled.pickle');
  const rows = () => page.$$eval('tr[data-file] td:nth-child(3)', cells => cells.map(c => c.textContent));
  await pick(page, a, 2, '[data-testid=open-folder]');
  await pick(page, b, 4, '[data-testid=open-folder]');
  const four = ['memograph_snapshots/rank0_exit_0.pickle', 'memograph_snapshots/rank1_exit_0.pickle',
    'memograph_snapshots (2)/rank0_exit_0.pickle', 'memograph_snapshots (2)/rank1_exit_0.pickle'];
  assert.deepEqual(await rows(), four);
  assert.deepEqual(await page.$$eval('[data-testid=rank-set]', s => s.map(e => e.dataset.label)),
    ['memograph_snapshots', 'memograph_snapshots (2)']);
  // Either folder picked again adds nothing; a new file in the second joins it under its number.
  for (const again of [b, a]) {
    await page.setInputFiles('[data-testid=open-folder]', again);
    await page.waitForTimeout(500);
    await pick(page, again, 4, '[data-testid=open-folder]');
  }
  assert.deepEqual(await rows(), four);
  fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'compiled.pickle'), path.join(b, 'rank2_exit_0.pickle'));
  await pick(page, b, 5, '[data-testid=open-folder]');
  assert.deepEqual(await rows(), [...four, 'memograph_snapshots (2)/rank2_exit_0.pickle']);
  // Their step records: a run each, the second's numbered with its folder, each read once.
  await page.selectOption('[data-testid=view-select]', 'steps');
  await page.waitForFunction(() => document.querySelector('[data-testid=steps-status]')?.textContent === '2 runs', null, { timeout: 30000 });
  assert.deepEqual(await page.$$eval('[data-testid=steps-table] tr[data-run]', r => r.map(e => e.dataset.run)),
    ['memograph_snapshots/steps', 'memograph_snapshots (2)/steps']);
  await page.selectOption('[data-testid=view-select]', 'compare');
  // A compared run opened whole keeps its name, and its row: still five runs.
  await page.click('tr[data-file="memograph_snapshots (2)/rank0_exit_0.pickle"] button:has-text("Open")');
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready'
    && document.querySelector('[data-testid=file-select]')?.selectedOptions[0]?.textContent.startsWith('memograph_snapshots (2)/rank0_exit_0.pickle ('),
  null, { timeout: 60000 });
  await page.selectOption('[data-testid=view-select]', 'compare');
  await page.waitForFunction(() => /^5 runs compared/.test(document.querySelector('[data-testid=compare-status]')?.textContent ?? ''));
  // Files of one name picked alone, one after the other: the second opens numbered before its
  // endings; picked again, it is shown, not read again.
  const options = () => page.$$eval('[data-testid=file-select] option', o => o.map(e => e.textContent.replace(/ \([^)]*B\)$/, '')));
  await page.setInputFiles('input[type=file]', path.join(a, 'rank1_exit_0.pickle'));
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready'
    && document.querySelectorAll('[data-testid=file-select] option').length === 2, null, { timeout: 60000 });
  await page.setInputFiles('input[type=file]', path.join(b, 'rank0_exit_0.pickle'));
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready'
    && document.querySelectorAll('[data-testid=file-select] option').length === 3, null, { timeout: 60000 });
  assert.deepEqual(await options(), ['memograph_snapshots (2)/rank0_exit_0.pickle', 'rank1_exit_0.pickle', 'rank0_exit_0.pickle']);
  const other = path.join(root, 'other');
  fs.mkdirSync(other);
  fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'compiled.pickle'), path.join(other, 'rank1_exit_0.pickle'));
  await page.setInputFiles('input[type=file]', path.join(other, 'rank1_exit_0.pickle'));
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready'
    && document.querySelectorAll('[data-testid=file-select] option').length === 4, null, { timeout: 60000 });
  await page.setInputFiles('input[type=file]', path.join(other, 'rank1_exit_0.pickle'));
  await page.waitForTimeout(500);
  assert.deepEqual(await options(), ['memograph_snapshots (2)/rank0_exit_0.pickle', 'rank1_exit_0.pickle', 'rank0_exit_0.pickle',
    'rank1_exit_0 (2).pickle']);
  assert.equal(await page.$eval('[data-testid=file-select]', s => s.selectedOptions[0].textContent.replace(/ \([^)]*B\)$/, '')),
    'rank1_exit_0 (2).pickle');
}));

test('hundreds of runs: the table draws the rows near its view, and scrolling, sorting and Tab reach every run', () => withScratch('hundreds', async (root, page, errors) => {
  // Tier 1: 140 runs (a job's ranks). A table past 100 rows draws only the rows in view and some
  // beyond (a new baseline at 300 runs was a task of ~100 ms, most of it the rows' cells, layout and
  // paint); what is not drawn keeps its place, so the scroll bar and the columns stay as they were.
  const dir = path.join(root, 'ranks');
  fs.mkdirSync(dir);
  const runs = 140;
  for (let i = 0; i < runs; i++) {
    fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', i % 7 === 3 ? 'compiled.pickle' : 'training.pickle'), path.join(dir, `rank${i}.pickle`));
  }
  await pick(page, dir, runs, '[data-testid=open-folder]');
  const state = () => page.$eval('.compare-view .table-scroll', s => {
    const rows = [...s.querySelectorAll('tr[data-file]')];
    return {
      files: rows.map(r => r.dataset.file.replace('ranks/', '')),
      rowHeight: rows[0].offsetHeight, scrollHeight: s.scrollHeight, clientHeight: s.clientHeight,
      headHeight: s.querySelector('thead').offsetHeight,
      widths: [...s.querySelectorAll('thead th')].map(th => Math.round(th.getBoundingClientRect().width)),
    };
  });
  const top = await state();
  assert.ok(top.files.length < 80, `${top.files.length} of ${runs} rows drawn`);
  assert.equal(top.files[0], 'rank0.pickle');
  // Every run has its height in the scroller, drawn or not.
  assert.ok(Math.abs(top.scrollHeight - (top.headHeight + runs * top.rowHeight)) <= 2, JSON.stringify(top));
  const scrollTo = y => page.$eval('.compare-view .table-scroll', (s, y) => { s.scrollTop = y; s.dispatchEvent(new Event('scroll')); }, y);
  const drawnAt = async (y, file) => {
    await scrollTo(y);
    await page.waitForFunction(f => !!document.querySelector(`tr[data-file="ranks/${f}"]`), file);
    return state();
  };
  // The bottom: the last runs drawn, the first not; the columns as wide as at the top.
  const bottom = await drawnAt(1e6, `rank${runs - 1}.pickle`);
  assert.equal(bottom.files.at(-1), `rank${runs - 1}.pickle`);
  assert.ok(!bottom.files.includes('rank0.pickle'));
  assert.deepEqual(bottom.widths, top.widths);
  // Sorted by peak allocated, largest first, while scrolled to the bottom: the rows drawn are the
  // smallest peaks, in order.
  await page.click('.compare-table th:text-is("peak allocated")');
  await page.waitForFunction(() => /▼/.test(document.querySelector('.compare-table thead').textContent));
  const peaks = await page.$$eval('tr[data-file]', rows => rows.map(r => Number(r.dataset.peak)));
  assert.deepEqual(peaks, [...peaks].sort((a, b) => b - a));
  assert.ok((await state()).files.every(f => Number(f.match(/\d+/)[0]) % 7 !== 3), 'a larger peak drawn at the bottom');
  // Back to the top: the largest peaks first (compiled.pickle's runs: rank3, rank10, …).
  const back = await drawnAt(0, 'rank3.pickle');
  assert.ok(back.files.slice(0, runs / 7).every(f => Number(f.match(/\d+/)[0]) % 7 === 3), back.files.slice(0, 25).join(' '));
  // Tab from the first row walks on past the rows drawn at first: each row focused is scrolled into
  // view, and the rows beyond it drawn.
  await page.focus('.compare-view tr[data-file]');
  const drawnFirst = back.files.length;
  let focused;
  for (let i = 0; i < 5 * (drawnFirst + 10); i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement.closest('tr[data-file]')?.dataset.file);
    if (!focused) break;
    if (back.files.indexOf(focused.replace('ranks/', '')) < 0) break;
  }
  assert.ok(focused && !back.files.includes(focused.replace('ranks/', '')), `Tab stopped at ${focused}`);
  // The chart's readout names the six highest and the three lowest at the pointer, and counts the
  // rest (140 values wrapped into lines that came and went as the pointer crossed the chart).
  const chart = page.locator('[data-testid=compare-chart]');
  await chart.scrollIntoViewIfNeeded();
  const box = await chart.boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await page.waitForSelector('[data-testid=compare-readout]');
  const items = await page.$$eval('[data-testid=compare-readout] .readout-item', s => s.map(x => x.textContent));
  assert.equal(items.length, 10, items.join(' | '));
  assert.match(items[9], /^… and 131 more \(median of all \d/);
  await shot(page, 'compare-hundreds');
  assert.deepEqual(errors, []);
}));

test('a folder of many runs: rows are kept as more come, and change in place with the baseline, the sort and a untick; the table scrolls, the chart stays in reach', () => withScratch('many', async (root, page, errors) => {
  // Tier 1: 48 runs in a folder (a job's ranks, a sweep of dozens). Each redraw of the table while they
  // were read built every row anew, and the whole view with it; rows are now built once per run.
  const dir = path.join(root, 'runs');
  fs.mkdirSync(dir);
  const fixture = i => path.join(ROOT, 'tests', 'fixtures', i % 3 === 0 ? 'compiled.pickle' : 'training.pickle');
  for (let i = 0; i < 44; i++) fs.copyFileSync(fixture(i), path.join(dir, `exp${i}.pickle`));
  await pick(page, dir, 44, '[data-testid=open-folder]');
  const row = name => `tr[data-file="runs/${name}"]`;
  // Marks a row's element, to tell later whether it is the same element.
  const mark = name => page.$eval(row(name), r => { r.__kept = true; });
  const kept = name => page.$eval(row(name), r => r.__kept === true);
  await mark('exp4.pickle');
  const cells = name => page.$$eval(`${row(name)} td`, tds => tds.map(td => td.textContent));
  const before = await cells('exp4.pickle');
  // Four more files in the folder, opened again: the four are read, the rows there stay.
  for (let i = 44; i < 48; i++) fs.copyFileSync(fixture(i), path.join(dir, `exp${i}.pickle`));
  await page.setInputFiles('[data-testid=open-folder]', dir);
  await page.waitForFunction(() => /^48 runs compared/.test(document.querySelector('[data-testid=compare-status]').textContent)
    && !/reading/.test(document.querySelector('[data-testid=compare-status]').textContent));
  assert.ok(await kept('exp4.pickle'), 'the row was built again as more runs came');
  assert.deepEqual(await cells('exp4.pickle'), before);
  // Another baseline (exp0, the first, was): the same row element, its deltas now against exp1, a
  // run of the same file, so none.
  await page.click(`${row('exp1.pickle')} .star`);
  await page.waitForFunction(r => document.querySelector(r).classList.contains('baseline'), row('exp1.pickle'));
  assert.ok(await kept('exp4.pickle'));
  const after = await cells('exp4.pickle');
  assert.notDeepEqual(after, before);
  assert.equal(after[5], '±0');
  assert.equal(await page.textContent(`${row('exp1.pickle')} .star`), '★');
  assert.equal(await page.textContent(`${row('exp0.pickle')} .star`), '☆');
  assert.equal(await page.textContent(`${row('exp4.pickle')} .star`), '☆');
  // Unticked: greyed in place; sorted: moved, not made again.
  await page.click(`${row('exp4.pickle')} input[type=checkbox]`);
  await page.waitForFunction(r => document.querySelector(r).classList.contains('excluded'), row('exp4.pickle'));
  assert.ok(await kept('exp4.pickle'));
  assert.match(await page.textContent('[data-testid=compare-status]'), /^47 runs compared/);
  const order = () => page.$$eval('tr[data-file]', rows => rows.map(r => r.dataset.file));
  const unsorted = await order();
  // By peak allocated (largest first).
  await page.click('.compare-table th:nth-child(5)');
  await page.waitForFunction(o => JSON.stringify([...document.querySelectorAll('tr[data-file]')].map(r => r.dataset.file)) !== o, JSON.stringify(unsorted));
  assert.deepEqual([...await order()].sort(), [...unsorted].sort());
  assert.ok(await kept('exp4.pickle'));
  // 48 rows scroll inside the table, under its headings: the chart is on screen without scrolling.
  const { scroll, height, chartTop, viewport } = await page.evaluate(() => {
    const s = document.querySelector('.compare-view .table-scroll');
    return { scroll: s.scrollHeight, height: s.clientHeight, chartTop: document.querySelector('.compare-view canvas').getBoundingClientRect().top, viewport: innerHeight };
  });
  assert.ok(scroll > height, `the table does not scroll (${scroll} px in ${height} px)`);
  assert.ok(chartTop < viewport, `the chart begins at ${chartTop} px, below the ${viewport} px window`);
  await shot(page, 'compare-many-runs');
  assert.deepEqual(errors, []);
}));

test('a phone-wide window: the diff\'s pickers keep to it and each call path has a line of its own over its figures', async () => {
  // At 390 px the pickers ran past the window's edge and the call path's column was left ~20 px.
  const context = await b.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  await page.goto(server.url);
  await page.waitForSelector('#app[data-state=empty]');
  await pick(page, ['training.pickle', 'compiled.pickle'].map(f => path.join(ROOT, 'tests', 'fixtures', f)), 2);
  await page.waitForSelector('[data-testid=compare-diff] .diff-row:not(.head)');
  const width = await page.evaluate(() => document.documentElement.clientWidth);
  for (const picker of ['diff-a', 'diff-b']) {
    const box = await page.locator(`[data-testid=${picker}]`).boundingBox();
    assert.ok(box.x + box.width <= width, `${picker} ends at ${box.x + box.width} px of ${width}`);
  }
  const rows = await page.$$eval('[data-testid=compare-diff] .diff-row', rows => rows.map(r => {
    const frame = r.querySelector('.frame').getBoundingClientRect();
    const num = r.querySelector('.num').getBoundingClientRect();
    return { frame: frame.width, over: frame.bottom <= num.top + 1 };
  }));
  assert.ok(rows.length >= 2 && rows.every(r => r.frame > 200 && r.over), JSON.stringify(rows));
  await page.locator('[data-testid=compare-diff]').scrollIntoViewIfNeeded();
  await shot(page, 'compare-diff-phone');
  assert.deepEqual(errors, []);
  await context.close();
});
