// End-to-end: a few hundred random actions (seeded, so a failure replays) over several open files,
// their comparison, step records and every view, at a laptop's width with a mouse and at a phone's with touch. Nothing
// a user can click, type or scroll may end in a page error or a dead page. Hand-written tests check
// what each action does; this one reaches the orders of actions nobody wrote down (a sort on the last
// column, then the GPU memory cleared, took two columns away and killed the page).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, open, twoFrames, FIXTURES, ROOT, TIER2 } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const FILES = ['cs_memory_snapshot.pickle', 'kk_memory_ctx128_forward.pickle', 'yiyi_oom_snapshot.pickle',
  'magma_memory_snapshot.pickle'];

const STEPS = path.join(ROOT, 'crates', 'snapshot', 'fuzz', 'corpus', 'steps');
const STEP_FILES = fs.readdirSync(STEPS);

/** Runs `steps` random actions on a page with FILES open; returns the actions taken and the errors. */
async function monkey(page, errors, seed, steps) {
  let state = seed;
  const random = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648; };
  const one = list => list[Math.floor(random() * list.length)];
  const log = [];
  const ready = () => page.waitForFunction(() => document.querySelector('#app').dataset.state !== 'loading', null, { timeout: 60000 });
  const openFiles = async names => {
    await page.setInputFiles('input[type=file]', names.map(f => path.join(FIXTURES, f)));
    await ready();
    await page.waitForFunction(() => !/reading/.test(document.querySelector('[data-testid=compare-status]')?.textContent ?? ''), null, { timeout: 60000 });
  };
  // An action that cannot be done now (its control is not on screen) is skipped: a short timeout.
  const quick = { timeout: 500 };
  const pickOption = async selector => {
    const values = await page.$$eval(`${selector} option`, os => os.filter(o => !o.disabled).map(o => o.value));
    if (!values.length) return;
    const v = one(values);
    log.push(`  ${selector} = ${v}`);
    await page.selectOption(selector, v, quick);
  };
  const some = async (selector, act) => {
    const all = page.locator(selector);
    const n = await all.count();
    if (!n) return;
    const k = Math.floor(random() * n);
    log.push(`  ${selector} #${k} of ${n}`);
    await act(all.nth(k));
  };
  const onCanvas = async gesture => some('canvas:visible', async c => {
    const box = await c.boundingBox();
    if (!box) return;
    const x = box.x + random() * box.width, y = box.y + random() * box.height;
    await gesture(x, y);
  });
  const mouse = page.mouse;
  const actions = {
    view: () => pickOption('[data-testid=view-select]'),
    device: () => pickOption('[data-testid=device-select]'),
    file: () => pickOption('[data-testid=file-select]'),
    select: () => some('select:visible', async s => {
      const values = await s.evaluate(s => [...s.options].filter(o => !o.disabled).map(o => o.value));
      await s.selectOption(one(values), quick);
    }),
    key: () => page.keyboard.press(one(['End', 'Home', 'ArrowDown', 'ArrowUp', 'ArrowLeft', 'ArrowRight', 'PageDown',
      'PageUp', '+', '-', '0', 'o', 'O', 'a', 'A', 'f', 'Escape', 'Enter', 'Tab', '/'])),
    click: () => onCanvas((x, y) => mouse.click(x, y)),
    hover: () => onCanvas((x, y) => mouse.move(x, y)),
    wheel: () => onCanvas(async (x, y) => { await mouse.move(x, y); await mouse.wheel(0, (random() - 0.5) * 800); }),
    drag: () => onCanvas(async (x, y) => {
      await mouse.move(x, y);
      await mouse.down();
      await mouse.move(x + (random() - 0.5) * 300, y + (random() - 0.5) * 100, { steps: 4 });
      await mouse.up();
    }),
    detail: () => page.locator('[data-testid=detail-slider]').fill(one(['0', '3', '10', '50', '100']), quick),
    search: async () => {
      await page.fill('[data-testid=search]', one(['>1MiB', 'forward', '0x7f', '', 'activations', '<4KiB', 'zzz']), quick);
      await page.press('[data-testid=search]', one(['Enter', 'Shift+Enter', 'Escape']));
    },
    gpu: async () => {
      await page.fill('[data-testid=gpu-memory]', one(['', '80', '1 GiB', '12GiB', 'lots']), quick);
      await page.press('[data-testid=gpu-memory]', 'Enter');
    },
    tick: () => some('input[type=checkbox]:visible', c => c.click(quick)),
    // Not the buttons that download or copy (a download is a file dialog's business).
    button: () => some('.views button:visible, .view-toolbar button:visible', async c => {
      if (/PNG|SVG|CSV|JSON|Download|Copy/.test(await c.textContent())) return;
      await c.click(quick);
    }),
    heading: () => some('th:visible', c => c.click(quick)),
    row: () => some('tr:visible, .event-row:visible, .diff-row:visible, li:visible', c => c.click(quick)),
    compare: async () => {
      if (random() > 0.3) return;
      const names = [...FILES].sort(() => random() - 0.5).slice(0, 2 + Math.floor(random() * 3));
      log.push(`  ${names.join(', ')}`);
      await openFiles(names);
    },
    // Step records of every kind the page reads, a few at a time (the Steps view).
    steps: async () => {
      if (random() > 0.3) return;
      const names = [...STEP_FILES].sort(() => random() - 0.5).slice(0, 1 + Math.floor(random() * 3));
      log.push(`  ${names.join(', ')}`);
      await page.setInputFiles('input[type=file]', names.map(f => path.join(STEPS, f)));
      await ready();
    },
    close: async () => { if (random() < 0.15) await page.click('[data-testid=close-file]', quick); },
  };
  const names = Object.keys(actions);
  for (let i = 0; i < steps && !errors.length; i++) {
    const appState = await page.evaluate(() => document.querySelector('#app').dataset.state);
    if (appState === 'error') break;
    if (appState === 'empty' || random() < 0.01) {
      const f = one(FILES);
      log.push(`open ${f}`);
      await openFiles([f]);
    }
    const name = one(names);
    log.push(name);
    try {
      await actions[name]();
    } catch (e) {
      if (!/Timeout/.test(String(e))) throw e;
      log.push('  (not on screen)');
    }
    await page.waitForTimeout(30);
    if (i % 10 === 9) await twoFrames(page);
  }
  await twoFrames(page);
  // An error panel says why (a file that could not be read names itself and its reason).
  const panel = await page.evaluate(() => document.querySelector('.error-panel')?.innerText ?? '');
  if (panel) log.push(`error panel: ${panel}`);
  return { log, state: await page.evaluate(() => document.querySelector('#app').dataset.state) };
}

// MONKEY_SEEDS=100-140 (odd seeds on the phone) and MONKEY_STEPS=N run a longer campaign.
const [from, to = from] = (process.env.MONKEY_SEEDS || '7-7').split('-').map(Number);
const SEEDS = process.env.MONKEY_SEEDS
  ? Array.from({ length: to - from + 1 }, (_, k) => [from + k, (from + k) % 2 === 1])
  : [[7, false], [31, true]];
const ACTIONS = Number(process.env.MONKEY_STEPS) || 250;

for (const [seed, narrow] of SEEDS) {
  const where = narrow ? 'a phone-wide touch screen' : 'a laptop-wide window';
  test(`random actions on ${where} (seed ${seed}) never end in a page error`, TIER2, async () => {
    const { page, errors } = await open(b, server.url, narrow ? { width: 390, height: 844 } : { width: 1280, height: 800 },
      null, narrow ? { hasTouch: true, isMobile: true } : {});
    // Each file open on its own (a timeline each); comparisons come among the actions.
    for (const f of FILES) {
      await page.setInputFiles('input[type=file]', [path.join(FIXTURES, f)]);
      await page.waitForFunction(() => document.querySelector('#app').dataset.state === 'ready', null, { timeout: 60000 });
    }
    const { log, state } = await monkey(page, errors, seed, ACTIONS);
    const last = log.slice(-30).join('\n');
    assert.deepEqual(errors, [], `after:\n${last}`);
    assert.notEqual(state, 'error', `after:\n${last}`);
    await page.close();
  });
}
