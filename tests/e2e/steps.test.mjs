// End-to-end: per-step memory records in the page. Files of each format are written here with known
// maxima; the Steps view shows one row per run × rank with its highest peak in exact bytes, the
// theoretical line only on request and only where the input has it, a malformed file's one-line error,
// and a snapshot of the same run marked on the step chart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, open, shot, FIXTURES, TIER2, ROOT } from './harness.mjs';

const MIB = 2 ** 20;
const GIB = 2 ** 30;
let server, b, dir;
before(async () => {
  server = await serve();
  b = await browser();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-steps-'));
  // memograph-capture: two ranks, peaks (step × 7 mod 11) MiB over 4 GiB, highest at step 3.
  for (const rank of [0, 1]) {
    const lines = [];
    for (let step = 1; step <= 10; step++) {
      const peak = 4 * GIB + ((step * 7) % 11) * MIB + rank * 512 * MIB;
      lines.push(JSON.stringify({ step, time: 1700000000 + step, rank, allocated_bytes: GIB, allocated_peak_bytes: peak,
        active_bytes: GIB, active_peak_bytes: peak, reserved_bytes: 6 * GIB, reserved_peak_bytes: peak + GIB,
        alloc_retries: step > 8 ? 1 : 0, ooms: 0 }));
    }
    fs.writeFileSync(path.join(dir, `rank${rank}_steps.jsonl`), lines.join('\n') + '\n');
  }
  fs.writeFileSync(path.join(dir, 'rank1_run.json'), JSON.stringify({ rank: 1, command: ['train.py'],
    device: { index: 0, name: 'Small GPU', total_memory_bytes: 5 * GIB },
    static_memory_bytes: 3 * GIB, first_step: { parameter_bytes: GIB, gradient_bytes: GIB, optimizer_state_bytes: 2 * GIB } }));
  // A Megatron memory trace with its theoretical and static figures.
  const trace = {};
  for (let it = 1; it <= 5; it++) {
    trace[it] = { samples: [{ timestamp_s: it, allocated_memory_MB: 1000, reserved_memory_MB: 3000 }],
      peak_allocated_MB: 2000 + it * 10, theoretical_memory_MB: 2500, static_memory_MB: 800 };
  }
  fs.writeFileSync(path.join(dir, 'memory_trace_rank0_tp2_pp1.json'), JSON.stringify(trace));
  fs.writeFileSync(path.join(dir, 'broken_steps.json'), JSON.stringify([{ step: 1, device_mem_stats: {} }, { device_mem_stats: {} }]));
});
after(async () => { await b?.close(); await server?.close(); fs.rmSync(dir, { recursive: true, force: true }); });

const rowPeak = (page, run, rank) => page.getAttribute(`[data-testid=steps-table] tr[data-run="${run}"][data-rank="${rank}"]`, 'data-peak');

test('step records of each format: the table holds each run\'s highest peak, theoretical only on request', async () => {
  const { page, errors } = await open(b, server.url, { width: 1500, height: 1000 });
  await page.setInputFiles('input[type=file]', ['rank0_steps.jsonl', 'rank1_steps.jsonl', 'rank1_run.json',
    'memory_trace_rank0_tp2_pp1.json'].map(f => path.join(dir, f)));
  await page.waitForSelector('[data-testid=steps-table] tr[data-run]');
  assert.equal(await page.$eval('[data-testid=view-select]', e => e.value), 'steps');
  assert.equal(await page.locator('[data-testid=steps-table] tbody tr').count(), 3);
  assert.equal(Number(await rowPeak(page, 'steps', '0')), 4 * GIB + 10 * MIB);
  assert.equal(Number(await rowPeak(page, 'steps', '1')), 4 * GIB + 522 * MIB);
  assert.equal(Number(await rowPeak(page, 'memory_trace_tp2_pp1', '0')), 2050 * MIB);
  const title = await page.getAttribute('tr[data-run="steps"][data-rank="1"]', 'title');
  assert.match(title, /highest peak allocated 4 842 323 968 bytes at step 3/);
  // A baseline: the other runs' deltas are against it.
  await page.click('tr[data-run="steps"][data-rank="1"] .star');
  assert.match(await page.textContent('tr[data-run="steps"][data-rank="0"]'), /-512\.0 MiB/);
  // Static memory from the manifest; components against the measured peak.
  assert.match(await page.textContent('[data-testid=steps-table] tr[data-rank="1"]'), /3\.0 GiB/);
  assert.match(await page.textContent('[data-testid=steps-gap]'), /components 4\.0 GiB .* measured peak 4\.5 GiB/);
  // The GPU the manifest names: its memory, and the headroom rank 1's highest peak reserved (5 GiB +
  // 522 MiB) left of it.
  const cells = await page.$$eval('[data-testid=steps-table] tr[data-rank="1"] td', tds => tds.map(t => t.textContent));
  assert.ok(cells.includes('5.0 GiB') && cells.includes('-522.0 MiB'), cells.join(' | '));
  // Theoretical: off by default; asked for, the chart changes (the trace's red line).
  const pixels = () => page.$eval('[data-testid=steps-chart]', c => c.toDataURL());
  assert.equal(await page.isChecked('[data-testid=show-theoretical]'), false);
  const before = await pixels();
  await page.check('[data-testid=show-theoretical]');
  await page.waitForTimeout(200);
  assert.notEqual(await pixels(), before);
  await shot(page, 'steps-theoretical');
  // Hover reads every line.
  const box = await page.locator('[data-testid=steps-chart]').boundingBox();
  const unhovered = await pixels();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await page.waitForSelector('[data-testid=steps-readout]');
  assert.equal(await page.locator('[data-testid=steps-readout] .readout-item').count(), 3);
  // The pointer's rule: a line on a canvas of its own over the chart, under the pointer (the chart
  // itself is not drawn again); gone when the pointer leaves.
  const ruleColumns = () => page.$eval('[data-testid=steps-chart-rule]', c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const columns = new Set();
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) columns.add(((i - 3) / 4) % c.width);
    return [...columns];
  });
  await page.waitForFunction(() => {
    const c = document.querySelector('[data-testid=steps-chart-rule]');
    return c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v, i) => i % 4 === 3 && v > 0);
  });
  const columns = await ruleColumns();
  const scale = await page.$eval('[data-testid=steps-chart]', c => c.width / c.clientWidth);
  assert.ok(columns.length >= 1 && columns.length <= 2 * scale, `rule columns ${columns}`);
  // On the step nearest the pointer: near it.
  assert.ok(Math.abs(columns[0] / scale - box.width * 0.5) <= box.width / 8, `rule at ${columns}, pointer at ${box.width * 0.5}`);
  assert.equal(await pixels(), unhovered, 'the chart is not redrawn as the pointer moves');
  await shot(page, 'steps');
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height + 40);
  await page.waitForFunction(() => !document.querySelector('[data-testid=steps-readout]'));
  assert.deepEqual(await ruleColumns(), []);
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await page.waitForSelector('[data-testid=steps-readout]');
  // Copy as Markdown and the JSON figures in one table.
  assert.deepEqual(errors, []);
  await page.close();
});

test('a malformed step file gives its one-line error; the others still open', async () => {
  const { page } = await open(b, server.url);
  await page.setInputFiles('input[type=file]', [path.join(dir, 'broken_steps.json'), path.join(dir, 'rank0_steps.jsonl')]);
  await page.waitForSelector('[data-testid=error]');
  assert.equal(await page.textContent('[data-testid=error]'), 'broken_steps.json: entry 1 has no step');
  await page.waitForSelector('[data-testid=steps-table] tr[data-run]');
  // No input here has a theoretical figure: the toggle cannot be turned on.
  assert.equal(await page.isDisabled('[data-testid=show-theoretical]'), true);
  await page.close();
});

test('a step file that fails beside a snapshot that opens stays said until the next choice', async () => {
  const { page, errors } = await open(b, server.url);
  await page.setInputFiles('input[type=file]', [path.join(dir, 'broken_steps.json'), path.join(ROOT, 'tests', 'fixtures', 'training.pickle')]);
  await page.waitForFunction(() => document.querySelector('#app').dataset.firstDrawAt, null, { timeout: 60000 });
  // The snapshot's opening does not wipe what failed before it in the same choice.
  assert.equal(await page.textContent('.error-panel strong'), 'Could not open the file.');
  assert.equal(await page.textContent('[data-testid=error]'), 'broken_steps.json: entry 1 has no step');
  await page.click('text=Open example');
  await page.waitForSelector('.error-panel', { state: 'detached' });
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a snapshot of the same run is marked on the step chart', TIER2, async () => {
  const { page, errors } = await open(b, server.url, { width: 1500, height: 1000 });
  // memograph-capture names its snapshots rank{R}_{reason}_{step}.pickle.
  const snap = path.join(dir, 'rank0_peak_3.pickle');
  fs.copyFileSync(path.join(FIXTURES, 'a0kuma_adam.pickle'), snap);
  await page.setInputFiles('input[type=file]', [path.join(dir, 'rank0_steps.jsonl'), snap]);
  await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready');
  await page.selectOption('[data-testid=view-select]', 'steps');
  await page.waitForFunction(() => document.querySelector('[data-testid=steps-chart]')?.dataset.marks === '1');
  await shot(page, 'steps-with-snapshot');
  // The keyboard: Home, Page Down to the step the snapshot is marked at (3), Enter opens it.
  await page.locator('[data-testid=steps-chart]').focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('PageDown');
  assert.match(await page.textContent('[data-testid=steps-readout]'), /^step 3/);
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=timeline]');
  assert.equal(await page.$eval('[data-testid=view-select]', e => e.value), 'timeline');
  assert.deepEqual(errors, []);
  await page.close();
});

test("a job's ranks: the one out of line named and marked, by peak allocated or reserved; a click makes it the baseline", async () => {
  // Tier 1: six ranks' capture step records in one folder; rank 4 peaks 1 GiB higher, rank 2 reserves 2 GiB more.
  const job = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-step-ranks-'));
  for (let rank = 0; rank < 6; rank++) {
    const lines = [];
    for (let step = 1; step <= 5; step++) {
      const peak = 4 * GIB + step * MIB + (rank === 4 ? GIB : 0);
      lines.push(JSON.stringify({ step, rank, allocated_bytes: GIB, allocated_peak_bytes: peak,
        reserved_bytes: 6 * GIB, reserved_peak_bytes: 6 * GIB + (rank === 2 ? 2 * GIB : 0) }));
    }
    fs.writeFileSync(path.join(job, `rank${rank}_steps.jsonl`), lines.join('\n') + '\n');
  }
  const { page, errors } = await open(b, server.url, { width: 1500, height: 1000 });
  try {
    await page.setInputFiles('[data-testid=open-folder]', job);
    await page.waitForFunction(() => document.querySelector('[data-testid=steps-status]')?.textContent === '6 runs', null, { timeout: 30000 });
    const summary = () => page.textContent('[data-testid=rank-set] [data-testid=rank-summary]');
    assert.match(await summary(), /^6 ranks · mean 4\.2 GiB · max 5\.0 GiB · imbalance ×1\.\d\d · rank 4 is out of line$/);
    assert.deepEqual(await page.$$eval('[data-testid=rank-set] .rank.outlier', e => e.map(x => x.dataset.rank)), ['4']);
    await page.locator('[data-testid=rank-set]').scrollIntoViewIfNeeded();
    await shot(page, 'steps-ranks');
    await page.click('[data-testid=rank-set] .rank[data-rank="4"]');
    assert.equal(await page.getAttribute('[data-testid=steps-table] tr.baseline', 'data-rank'), '4');
    // The strip is one Tab stop, the rank out of line; the arrows, Home and End move along it, and
    // Enter does what a click does.
    assert.deepEqual(await page.$$eval('[data-testid=rank-set] .rank[tabindex="0"]', b => b.map(x => x.dataset.rank)), ['4']);
    await page.focus('[data-testid=rank-set] .rank[data-rank="4"]');
    const focused = () => page.evaluate(() => document.activeElement?.dataset.rank);
    await page.keyboard.press('ArrowRight');
    assert.equal(await focused(), '5');
    await page.keyboard.press('ArrowRight');
    assert.equal(await focused(), '5');
    await page.keyboard.press('Home');
    assert.equal(await focused(), '0');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await focused(), '0');
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await focused(), '4');
    await page.keyboard.press('Home');
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('[data-testid=steps-table] tr.baseline', 'data-rank'), '0');
    await page.click('[data-testid=rank-set] .rank[data-rank="4"]');
    assert.match(await page.textContent('tr[data-rank="0"]'), /-1\.0 GiB/);
    await page.check('[data-testid=show-reserved]');
    await page.waitForFunction(() => /rank 2 is out of line$/.test(document.querySelector('[data-testid=rank-summary]')?.textContent ?? ''));
    assert.match(await page.textContent('[data-testid=rank-set] h3'), /by peak reserved/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    fs.rmSync(job, { recursive: true, force: true });
  }
});

test('a run whose memory grows step after step is said with its rate and when it would fill the GPU', async () => {
  // Tier 1: two ranks of 100 steps on a 40 GiB GPU; rank 1 keeps 32 MiB more after each step.
  const job = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-step-growth-'));
  for (let rank = 0; rank < 2; rank++) {
    const lines = [];
    for (let step = 1; step <= 100; step++) {
      const atEnd = 20 * GIB + rank * step * 32 * MIB;
      lines.push(JSON.stringify({ step, rank, allocated_bytes: atEnd, allocated_peak_bytes: atEnd + GIB,
        reserved_bytes: atEnd + 2 * GIB, reserved_peak_bytes: atEnd + 3 * GIB }));
    }
    fs.writeFileSync(path.join(job, `rank${rank}_steps.jsonl`), lines.join('\n') + '\n');
    fs.writeFileSync(path.join(job, `rank${rank}_run.json`), JSON.stringify({ rank, command: ['train.py'],
      device: { index: 0, name: 'A40', total_memory_bytes: 40 * GIB } }));
  }
  const { page, errors } = await open(b, server.url, { width: 1500, height: 1000 });
  try {
    await page.setInputFiles('[data-testid=open-folder]', job);
    await page.waitForSelector('[data-testid=steps-growth]', { timeout: 30000 });
    const job_ = path.basename(job);
    assert.deepEqual(await page.$$eval('[data-testid=steps-growth] li', l => l.map(x => x.textContent)),
      [`${job_}/steps rank 1 grows 32.0 MiB a step (allocated at step end, steps 11 to 100); at that rate it reaches the GPU's 40.0 GiB near step 640`]);
    const growth = await page.$$eval('[data-testid=steps-table] tbody tr', rows => rows.map(r => {
      const k = [...r.closest('table').querySelectorAll('thead th')].findIndex(h => h.textContent.startsWith('growth a step'));
      return r.children[k].textContent;
    }));
    assert.deepEqual(growth, ['', '+32.0 MiB']);
    await shot(page, 'steps-growth');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    fs.rmSync(job, { recursive: true, force: true });
  }
});

test('snapshots whose traces mark training steps are runs of their own, each opening at its Analysis', async () => {
  // Tier 1: the repository's real recordings: three AdamW steps, two compiled steps, and a run that
  // ran out of memory and marks none.
  const repo = name => path.join(ROOT, 'tests', 'fixtures', name);
  const { page, errors } = await open(b, server.url, { width: 1400, height: 900 });
  try {
    await page.setInputFiles('input[type=file]', ['training.pickle', 'compiled.pickle', 'oom.pickle'].map(repo));
    await page.waitForFunction(() => /^3 runs compared/.test(document.querySelector('[data-testid=compare-status]')?.textContent ?? ''), null, { timeout: 60000 });
    assert.equal(await page.$eval('[data-testid=view-select] option[value=steps]', o => o.disabled), false);
    await page.selectOption('[data-testid=view-select]', 'steps');
    await page.waitForSelector('[data-testid=steps-table] tr[data-run]');
    assert.equal(await page.textContent('[data-testid=steps-status]'), '2 runs');
    // Each run's highest step peak, as computed apart (crates/snapshot/tests/trace_steps.rs), and the
    // most reserved in a step.
    const rows = await page.$$eval('[data-testid=steps-table] tr[data-run]', r => r.map(e => [e.dataset.run, Number(e.dataset.peak)]));
    assert.deepEqual(rows, [['training', 89159680], ['compiled', 137900040]]);
    assert.match(await page.textContent('tr[data-run="compiled"]'), /174\.0 MiB/);
    assert.equal(await page.isDisabled('button:has-text("Close step files")'), true);
    await shot(page, 'steps-of-snapshots');
    // A run opens its snapshot at the Analysis, where its steps are listed.
    await page.click('tr[data-run="compiled"] [data-testid=steps-open-snapshot]');
    await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready'
      && document.querySelectorAll('[data-testid=trace-steps] tr[data-step]').length === 2, null, { timeout: 60000 });
    assert.equal(await page.$eval('[data-testid=view-select]', e => e.value), 'analysis');
    assert.match(await page.textContent('[data-testid=analysis-at]'), /^Live at the peak \(at entry 208\), in step 1 of 2: 131\.5 MiB/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
  // One snapshot opened whole: its steps are the Steps view's run.
  const one = await open(b, server.url, { width: 1400, height: 900 });
  try {
    await one.page.setInputFiles('input[type=file]', repo('training.pickle'));
    await one.page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready');
    await one.page.selectOption('[data-testid=view-select]', 'steps');
    await one.page.waitForSelector('[data-testid=steps-table] tr[data-run]');
    assert.deepEqual(await one.page.$$eval('[data-testid=steps-table] tr[data-run]', r => r.map(e => e.dataset.run)), ['training']);
    assert.deepEqual(one.errors, []);
  } finally {
    await one.page.close();
  }
});
