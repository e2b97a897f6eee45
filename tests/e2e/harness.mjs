// Shared helpers for the end-to-end tests: a static server for dist/ on loopback, and headless Chromium.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
export const DIST = path.join(ROOT, 'dist');

/** The command line's output of `args` as JSON, from the debug `memograph` (built by `cargo test`; built
 * here when missing). */
export function cliJson(args) {
  const cli = path.join(ROOT, 'target', 'debug', 'memograph');
  if (!fs.existsSync(cli)) execFileSync('cargo', ['build', '-q', '-p', 'memograph'], { cwd: ROOT, stdio: 'inherit' });
  return JSON.parse(execFileSync(cli, args, { maxBuffer: 1 << 28 }).toString());
}
export const FIXTURES = process.env.MEMOGRAPH_FIXTURES || path.join(ROOT, '..', 'shared', 'fixtures');
export const SHOTS = path.join(ROOT, 'target', 'e2e-screenshots');

/** Options for a second-tier test (it reads the real fixtures in ../shared): skipped, with the reason,
 *  when they are absent, unless MEMOGRAPH_REQUIRE_FIXTURES=1 (the test script sets it when they are
 *  there). */
export const HAVE_FIXTURES = fs.existsSync(path.join(FIXTURES, 'reference'));
if (!HAVE_FIXTURES && process.env.MEMOGRAPH_REQUIRE_FIXTURES === '1') {
  throw new Error(`MEMOGRAPH_REQUIRE_FIXTURES=1 but ${FIXTURES} has no fixtures`);
}
export const TIER2 = HAVE_FIXTURES ? {} : { skip: `needs the shared fixtures in ${FIXTURES} (tier 2)` };

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

/** Serves `dir` under `prefix` (a sub-path, like a GitHub Pages project page) on 127.0.0.1. With
 *  `cached`, the module, its glue and styles may be cached (a day), as a static host serves them: a
 *  returning visit fetches them from the HTTP cache (headless Chromium keeps no compiled-code cache
 *  of the module here: see scripts/ab_load.mjs). */
export async function serve(dir = DIST, prefix = '/memograph/', { cached = false } = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (!url.pathname.startsWith(prefix)) { res.writeHead(404); res.end(); return; }
    let file = path.join(dir, decodeURIComponent(url.pathname.slice(prefix.length)) || 'index.html');
    if (file.endsWith(path.sep)) file = path.join(file, 'index.html');
    if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      if (fs.existsSync(path.join(FIXTURES, path.basename(file)))) file = path.join(FIXTURES, path.basename(file));
      else { res.writeHead(404); res.end(); return; }
    }
    // Never cached unless asked: every page a test or the benchmark opens fetches and compiles the
    // module afresh.
    const cache = cached && path.extname(file) !== '.html' ? 'max-age=86400' : 'no-store';
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', 'cache-control': cache });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}${prefix}`, close: () => new Promise(r => server.close(r)) };
}

export async function browser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** A page at `url` that records console errors and requests to other hosts; `init` runs in the page
 *  before its own scripts; `options` go to the page's context (`hasTouch`, `isMobile`). */
export async function open(b, url, viewport = { width: 1400, height: 860 }, init = null, options = {}) {
  const page = await b.newPage({ viewport, ...options });
  if (init) await page.addInitScript(init);
  const errors = [];
  const requests = [];
  page.on('pageerror', e => errors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('request', r => requests.push(r.url()));
  await page.goto(url);
  await page.waitForSelector('#app[data-state]');
  return { page, errors, requests };
}

/** Has the page itself click `button` the moment the text of `watched` first matches `when` (and the
 *  button is there): a round trip from the test could come after that moment has passed. The text
 *  it matched is then in `globalThis.clickedAt` (null until then). */
export async function clickWhen(page, watched, when, button) {
  await page.evaluate(([watched, source, button]) => {
    const when = new RegExp(source);
    globalThis.clickedAt = null;
    const observer = new MutationObserver(() => {
      const text = document.querySelector(watched)?.textContent ?? '';
      const target = document.querySelector(button);
      if (when.test(text) && target) {
        observer.disconnect();
        globalThis.clickedAt = text;
        target.click();
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  }, [watched, when.source, button]);
}

export async function loadFile(page, file) {
  await page.setInputFiles('input[type=file]', file);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('#app').dataset.state)
    && document.querySelector('#app').dataset.state !== 'loading', null, { timeout: 120000 });
}

/** Switches to the analysis view and waits for its report, which is built in the background (in tasks
 *  of its own) after the view asks for it. */
export async function showAnalysis(page) {
  await page.selectOption('[data-testid=view-select]', 'analysis');
  await page.waitForFunction(() => {
    const at = document.querySelector('[data-testid=analysis-at]');
    return at && !/^Building/.test(at.textContent);
  }, null, { timeout: 60000 });
}

/** `value` (objects, arrays, strings, integers as numbers or BigInts, booleans, null) as a protocol-2
 *  pickle, as CPython writes plain data: for hand-made snapshots of shapes no fixture has. */
export function pickled(value) {
  const out = [Buffer.from([0x80, 2])];
  const put = v => {
    if (v === null) out.push(Buffer.from('N'));
    else if (v === true || v === false) out.push(Buffer.from([v ? 0x88 : 0x89]));
    else if (typeof v === 'string') {
      const s = Buffer.from(v, 'utf8'), n = Buffer.alloc(4);
      n.writeUInt32LE(s.length);
      out.push(Buffer.from('X'), n, s);
    } else if (typeof v === 'number' || typeof v === 'bigint') {
      // LONG1: little-endian two's complement, as long as it needs.
      let x = BigInt(v);
      const bytes = [];
      do { bytes.push(Number(x & 0xffn)); x >>= 8n; } while (!((x === 0n && !(bytes.at(-1) & 0x80)) || (x === -1n && bytes.at(-1) & 0x80)));
      out.push(Buffer.from([0x8a, bytes.length, ...bytes]));
    } else if (Array.isArray(v)) {
      out.push(Buffer.from(']('));
      v.forEach(put);
      out.push(Buffer.from('e'));
    } else {
      out.push(Buffer.from('}('));
      for (const [k, x] of Object.entries(v)) { put(k); put(x); }
      out.push(Buffer.from('u'));
    }
  };
  put(value);
  out.push(Buffer.from('.'));
  return Buffer.concat(out);
}

/** The repository's fixtures laid out as memograph-capture leaves its folder: `dir`/memograph_snapshots
 *  with two ranks' exit snapshots (rank 1's peak higher), rank 0's step records and a README beside
 *  them. Returns the folder. Tier 1. */
export function captureFolder(dir) {
  const run = path.join(dir, 'memograph_snapshots');
  fs.mkdirSync(run, { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'training.pickle'), path.join(run, 'rank0_exit_0.pickle'));
  fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'compiled.pickle'), path.join(run, 'rank1_exit_0.pickle'));
  fs.copyFileSync(path.join(ROOT, 'crates', 'snapshot', 'fuzz', 'corpus', 'steps', 'capture_steps.jsonl'), path.join(run, 'rank0_steps.jsonl'));
  fs.writeFileSync(path.join(run, 'README.md'), '# what this run was\n');
  return run;
}

/** Two runs' folders side by side, `dir`/sweep/run_a and run_b, each with rank0 and rank1 exit
 *  snapshots of the same names (run_a's ranks alike, run_b's rank 0 peaking higher). Returns sweep/. */
export function sweepFolder(dir) {
  const sweep = path.join(dir, 'sweep');
  for (const [run, r0] of [['run_a', 'training.pickle'], ['run_b', 'compiled.pickle']]) {
    fs.mkdirSync(path.join(sweep, run), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', r0), path.join(sweep, run, 'rank0_exit_0.pickle'));
    fs.copyFileSync(path.join(ROOT, 'tests', 'fixtures', 'training.pickle'), path.join(sweep, run, 'rank1_exit_0.pickle'));
  }
  return sweep;
}

/** Drops `tree` on the page as a drop of folders and files from the desktop would: `tree` maps each
 *  dropped name to a file's path here or to a folder (an object of the same kind, `{}` empty). Chromium
 *  has no way to drop a real folder on a page, so the entries `webkitGetAsEntry` gives are made here,
 *  shaped as the browser's (a folder's reader hands out its entries in batches, then an empty one),
 *  and the page's own walker (index.html's `memographDroppedFiles`) walks them. */
export async function dropTree(page, tree) {
  const bytes = {};
  const shape = (t, at) => Object.fromEntries(Object.entries(t).map(([name, v]) => {
    if (typeof v !== 'string') return [name, shape(v, `${at}/${name}`)];
    bytes[`${at}/${name}`] = [fs.readFileSync(v).toString('base64'), fs.statSync(v).mtimeMs];
    return [name, 0];
  }));
  const top = shape(tree, '');
  await page.evaluate(([top, bytes]) => {
    const file = (at) => new File([Uint8Array.from(atob(bytes[at][0]), c => c.charCodeAt(0))], at.split('/').pop(),
      { lastModified: bytes[at][1] });
    const entry = (name, v, at) => typeof v === 'number'
      ? { isFile: true, isDirectory: false, name, fullPath: at, file: (ok) => setTimeout(() => ok(file(at))) }
      : {
        isFile: false, isDirectory: true, name, fullPath: at, createReader() {
          const all = Object.entries(v).map(([n, x]) => entry(n, x, `${at}/${n}`));
          let next = 0;
          return { readEntries(ok) { setTimeout(() => { ok(all.slice(next, next + 2)); next += 2; }); } };
        },
      };
    const entries = new Map(Object.entries(top).map(([n, v]) => [n, entry(n, v, `/${n}`)]));
    DataTransferItem.prototype.webkitGetAsEntry = function () { return entries.get(this.getAsFile()?.name) ?? null; };
    const transfer = new DataTransfer();
    for (const name of entries.keys()) transfer.items.add(new File([''], name));
    document.querySelector('#app').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: transfer }));
  }, [top, bytes]);
}

export async function shot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** Types `query` into the timeline's search box and waits for its matches to be counted (the search
 *  runs in the background, in slices). */
export async function search(page, query) {
  await page.fill('[data-testid=search]', query);
  await page.waitForFunction(q => {
    const box = document.querySelector('[data-testid=search]');
    const count = document.querySelector('[data-testid=search-count]').textContent;
    return box.value === q && !/searching/.test(count) && (q.trim() === '' || /match/.test(count));
  }, query);
}

/** Zooms into the timeline in `box`, drags it and zooms back out: 120 input events, a frame each. */
export async function panAndZoom(page, box) {
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
  for (let i = 0; i < 40; i++) await page.mouse.wheel(0, -120);
  await page.mouse.down();
  for (let i = 0; i < 40; i++) await page.mouse.move(box.x + box.width * (0.6 - i * 0.01), box.y + box.height * 0.5);
  await page.mouse.up();
  for (let i = 0; i < 40; i++) await page.mouse.wheel(0, 160);
}

/** Waits until no view says it is still building a part (they are built in the background) or
 *  searching. */
export const built = page => page.waitForFunction(() => !/Building |laying out|searching…/.test(document.body.innerText),
  null, { timeout: 900000, polling: 100 });

/** Resolves once the page has run two more frames. */
export const twoFrames = page => page.evaluate(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))));

/** Opens every view in turn (segments, state history, where the memory goes, timeline), each once
 *  what it shows is built and drawn. */
export async function openEveryView(page) {
  for (const view of ['segments', 'state', 'analysis', 'timeline']) {
    await page.selectOption('[data-testid=view-select]', view);
    await built(page);
    await twoFrames(page);
  }
}

/** The machine's busy and total CPU time so far (Linux's /proc/stat, in clock ticks); null elsewhere. */
function cpuTicks() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    // idle and iowait are the 4th and 5th fields.
    return { busy: total - fields[3] - (fields[4] || 0), total };
  } catch {
    return null;
  }
}

/** Waits until the whole machine has been quiet (under `share` of its cores busy in every `stepMs`)
 *  for `quietMs` without a break, or `maxMs` have passed; returns how long it waited. The benchmarks
 *  call it before each timed run: on two cores a page that has just opened a file goes on working for
 *  a second or two (its views' parts built in the background, then, after a second of quiet, its
 *  worker ended and freed and a spare one started), and a run timed meanwhile (the native `summary`,
 *  or the next load) shares the cores with that work. */
export async function settle({ quietMs = 1500, stepMs = 250, share = 0.1, maxMs = 10000 } = {}) {
  const started = Date.now();
  let before = cpuTicks();
  if (!before) return 0;
  let quietSince = Date.now();
  for (;;) {
    await new Promise(r => setTimeout(r, stepMs));
    const after = cpuTicks();
    if ((after.busy - before.busy) > share * (after.total - before.total)) quietSince = Date.now();
    before = after;
    if (Date.now() - quietSince >= quietMs || Date.now() - started >= maxMs) return Date.now() - started;
  }
}
