// End-to-end: `memograph html` writes one self-contained file that opens from file:// in headless
// Chromium, offline (nothing fetched but the file itself), reaches `ready` with the snapshot's peak,
// and starts at the view of `--view`; several files open compared.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { browser, open, shot, captureFolder, sweepFolder, ROOT, DIST, FIXTURES, TIER2 } from './harness.mjs';

let b, dir;
before(async () => { b = await browser(); dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memograph-e2e-html-')); });
after(async () => { await b?.close(); fs.rmSync(dir, { recursive: true, force: true }); });

/** The newest memograph binary built (`cargo test` builds the debug one). */
function cli() {
  const built = ['release', 'debug'].map(p => path.join(ROOT, 'target', p, 'memograph')).filter(f => fs.existsSync(f));
  assert.ok(built.length, 'memograph is built (cargo build -p memograph)');
  return built.sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs)[0];
}

function html(files, out, ...more) {
  const said = execFileSync(cli(), ['html', ...files, '-o', out, '--page', DIST, ...more], { encoding: 'utf8' });
  assert.ok(fs.statSync(out).size > 0);
  return said;
}

const state = page => page.$eval('#app', e => e.dataset.state);
const settled = page => page.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('#app').dataset.state), null, { timeout: 120000 });
/** Requests other than the file itself and what it made in memory. */
const outside = (requests, file) => requests.filter(u => u !== `file://${file}` && !u.startsWith('blob:') && !u.startsWith('data:'));

test('the one-file page opens the bundled example from file://, offline', async () => {
  const out = path.join(dir, 'example.html');
  const said = html([path.join(ROOT, 'assets', 'example.pickle.gz')], out);
  assert.match(said, /example\.html: .* of snapshot as .* compressed, .* of page/);
  const { page, errors, requests } = await open(b, `file://${out}`);
  await settled(page);
  assert.equal(await state(page), 'ready', await page.textContent('body'));
  assert.match(await page.textContent('[data-testid=peak]'), /GiB/);
  assert.deepEqual(outside(requests, out), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a fixture\'s one-file page shows its reference peak, at the view given by --view', TIER2, async () => {
  const name = 'kk_memory_ctx128_fullstep.pickle';
  const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'reference', name + '.json'), 'utf8'));
  const device = Object.keys(ref.devices)[0];
  const out = path.join(dir, 'kk.html');
  const said = html([path.join(FIXTURES, name)], out, '--view', 'http://elsewhere/?url=x#view=analysis&detail=40');
  const input = fs.statSync(path.join(FIXTURES, name)).size;
  const size = fs.statSync(out).size;
  console.log(`# ${name}: ${input} bytes in, ${size} bytes of HTML (${said.trim()})`);
  const { page, errors, requests } = await open(b, `file://${out}`);
  await settled(page);
  assert.equal(await state(page), 'ready', await page.textContent('body'));
  assert.equal(await page.$eval('[data-testid=view-select]', e => e.value), 'analysis');
  await page.waitForSelector('[data-testid=export-live-csv]');
  // Every view works from file:// (the worker runs from a data: URL).
  for (const view of ['segments', 'state', 'timeline']) {
    await page.selectOption('[data-testid=view-select]', view);
    await page.waitForTimeout(300);
  }
  const peak = await page.$eval('[data-testid=peak]', e => `${e.textContent} ${e.title}`);
  assert.ok(peak.includes(String(ref.devices[device].timeline_peak_bytes)), peak);
  // The page holds the file as it was (carried compressed, inflated back): named with its own size.
  assert.equal(await page.$eval('[data-testid=file-select]', s => s.selectedOptions[0].textContent), `${name} (3.1 MiB)`);
  assert.equal(input, 3226220);
  assert.equal(await page.$eval('[data-testid=detail-slider]', e => e.value), '40');
  await shot(page, 'html-one-file');
  assert.deepEqual(outside(requests, out), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('several files in one page open compared', TIER2, async () => {
  const names = ['kk_memory_ctx128_forward.pickle', 'kk_memory_ctx128_fullstep.pickle'];
  const out = path.join(dir, 'two.html');
  html(names.map(n => path.join(FIXTURES, n)), out);
  const { page, errors, requests } = await open(b, `file://${out}`);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-table] tr[data-file]').length === 2, null, { timeout: 120000 });
  assert.deepEqual(outside(requests, out), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a file that is no snapshot is refused with one line and exit status 1', () => {
  const bad = path.join(dir, 'bad.pickle');
  fs.writeFileSync(bad, 'not a pickle');
  let failure;
  try { execFileSync(cli(), ['html', bad, '-o', path.join(dir, 'bad.html'), '--page', DIST], { stdio: 'pipe' }); } catch (e) { failure = e; }
  assert.equal(failure?.status, 1);
  assert.match(String(failure.stderr), /^error: .*bad\.pickle: /);
  assert.equal(fs.existsSync(path.join(dir, 'bad.html')), false);
});

test("capture's folder in one page: its snapshots compared and its step records in Steps; named after the folder", async () => {
  // Tier 1: the repository's fixtures, laid out as memograph-capture leaves them, with a README beside.
  const run = captureFolder(dir);
  const said = execFileSync(cli(), ['html', run, '--page', DIST], { encoding: 'utf8', cwd: dir });
  assert.match(said, /^memograph_snapshots\.html: .* of snapshots and step records as .* compressed/);
  const out = path.join(dir, 'memograph_snapshots.html');
  // Made inside the folder (`memograph html .`), the page is named after it and is no snapshot to a
  // second run there, for all the "snapshot" in its name.
  for (let i = 0; i < 2; i++) {
    const inside = execFileSync(cli(), ['html', '.', '--page', DIST], { encoding: 'utf8', cwd: run });
    assert.equal(inside.split(':')[0], 'memograph_snapshots.html');
  }
  fs.rmSync(path.join(run, 'memograph_snapshots.html'));
  const { page, errors, requests } = await open(b, `file://${out}`);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-table] tr[data-file]').length === 2
    && document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  await page.selectOption('[data-testid=view-select]', 'steps');
  await page.waitForFunction(() => document.querySelector('[data-testid=steps-status]')?.textContent === '1 run', null, { timeout: 30000 });
  assert.equal(await page.locator('.error-panel').count(), 0);
  assert.deepEqual(outside(requests, out), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('two runs\' folders in one page keep their paths: rows apart, a rank strip each', async () => {
  // Tier 1: sweep/run_a and sweep/run_b, each with its rank0 and rank1 (the same names in both).
  const sweep = sweepFolder(dir);
  const out = path.join(dir, 'sweep.html');
  html([sweep], out);
  const { page, errors } = await open(b, `file://${out}`);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-table] tr[data-file]').length === 4
    && document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
  assert.deepEqual(await page.$$eval('tr[data-file]', rs => rs.map(r => r.dataset.file)),
    ['sweep/run_a/rank0_exit_0.pickle', 'sweep/run_a/rank1_exit_0.pickle', 'sweep/run_b/rank0_exit_0.pickle', 'sweep/run_b/rank1_exit_0.pickle']);
  assert.deepEqual(await page.$$eval('[data-testid=rank-set]', s => s.map(e => e.dataset.label)), ['run_a', 'run_b']);
  assert.deepEqual(errors, []);
  await page.close();
});
