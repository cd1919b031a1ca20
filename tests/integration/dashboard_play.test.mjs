// dashboard_play.test.mjs - playing levels in the dashboard (web/play.js), in
// Debian's chromium, headless, through the pinned playwright-core, against
// the service's own check operations:
//
//   digger     the level's optimal solution tapped through the page's arrow
//              buttons (found by the data-side and data-index the level's
//              JSON names) ends with three stars in the role="status"
//              element; a losing play (found through the API: taps until no
//              arrow can be tapped, gold left) ends with no stars; undo,
//              restart and the hint (the arrow the API's hint names is the
//              one marked) and keyboard play;
//   lattice    the level's three-star fold placed residue by residue through
//              the move buttons ends with the stars POST /v1/lattice/check
//              gives that fold, the live contact count matching the check's
//              score;
//   racetrack  the player's lap drawn segment by segment, its stars those
//              POST /v1/racetrack/check gives its lap time.
//
// Each play, once over, passes axe-core (no serious or critical violation);
// each play view is also loaded at 390 px: no horizontal overflow. A
// screenshot of each is kept in build/test-artifacts/play-<kind>.png.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { ROOT, SCALE, axeViolations, request, sqliteOnly, submit, useServer, waitForJob } from './harness.mjs';

const CHROMIUM = process.env.STARFORGE_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'build/test-artifacts');
const BROWSER = sqliteOnly('the browser tests run once; what the page drives is the HTTP API, tested on both back ends');

const server = useServer({ args: ['--workers', '2'] });

let browser = null;
const levels = {};

/** Runs a job to success and resolves with its first level document. */
async function firstLevel(kind, params, seed) {
  const accepted = await submit(server, { kind, params, seed });
  const job = await waitForJob(server, accepted.id, { timeoutMs: 60_000 * SCALE });
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  const res = await request(server, `/v1/levels/${job.level_ids[0]}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

before(async () => {
  if (BROWSER.skip) return;
  assert.ok(fs.existsSync(CHROMIUM), `chromium is missing (${CHROMIUM}): install it with sh scripts/deps.sh test`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  levels.digger = await firstLevel('digger', { difficulty: 'medium', count: 1 }, 7);
  levels.ordered = await firstLevel('digger', { difficulty: 'easy', count: 1, gold_in_order: true }, 8);
  levels.lattice = await firstLevel('lattice', { length: 12, population: 20, generations: 20 }, 5);
  levels.racetrack = await firstLevel('racetrack', { points: 12, generations: 2, population: 4 }, 3);
});

after(async () => {
  await browser?.close();
});

/**
 * The level view of `level` in a new page, once its play view is drawn;
 * `trouble` collects uncaught errors, console errors and requests outside
 * the service.
 */
async function openLevel(level, { width = 1280, height = 1000 } = {}) {
  const page = await browser.newPage({ viewport: { width, height } });
  const trouble = [];
  page.on('pageerror', (err) => trouble.push(`page error: ${err}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') trouble.push(`console: ${msg.text()}`);
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(`${server.base}/`)) trouble.push(`offsite: ${req.url()}`);
  });
  page.setDefaultTimeout(20_000 * SCALE);
  await page.goto(`${server.base}/#/levels/${level.id}`);
  await page.waitForSelector('#play:not([hidden]) #play-title');
  return { page, trouble };
}

/** Waits until the digger page shows `taps` taps made and is idle again. */
async function diggerTaps(page, taps) {
  await page.waitForFunction(
    (n) => {
      const p = document.querySelector('#play-progress');
      return p && new RegExp(`taps ${n} `).test(p.textContent) && !document.querySelector('#play[data-busy]');
    },
    taps,
  );
}

async function tapArrow(page, tap, made) {
  const selector = `#play button.dg-arrow[data-side="${tap.side}"][data-index="${tap.index}"]`;
  await page.waitForSelector(`${selector}:not([disabled])`);
  await page.click(selector);
  await diggerTaps(page, made);
}

async function noOverflow(page) {
  return page.evaluate(() => {
    const doc = document.documentElement;
    const wide = [...document.querySelectorAll('#play *')]
      .filter((e) => e.getBoundingClientRect().right > doc.clientWidth + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className?.baseVal ?? e.className}`);
    return { scroll: doc.scrollWidth, client: doc.clientWidth, wide };
  });
}

async function assertNarrow(level, name) {
  const { page, trouble } = await openLevel(level, { width: 390, height: 844 });
  await page.waitForTimeout(300);
  const o = await noOverflow(page);
  await page.screenshot({ path: path.join(ARTIFACTS, `play-${name}-390.png`), fullPage: true });
  assert.ok(o.scroll <= o.client, `${name} play view at 390 px: page ${o.scroll} px wide in ${o.client}`);
  assert.deepEqual(o.wide, [], `${name} play view at 390 px: elements past the right edge`);
  assert.deepEqual(trouble, []);
  await page.close();
}

/**
 * A losing play of `level` found through the API: from the start, tap the
 * first tappable arrow (by the check's own state) that does not win, until
 * none is tappable. Returns the taps, or null when every such walk wins.
 */
async function losingPlay(level) {
  for (let skip = 0; skip < 6; skip++) {
    const moves = [];
    for (;;) {
      const res = await request(server, '/v1/digger/check', { method: 'POST', json: { level: level.puzzle, moves } });
      assert.equal(res.status, 200, res.text);
      if (res.body.solved) break;
      const open = res.body.state.arrows.filter((a) => a.tappable);
      if (open.length === 0) return moves;
      const pick = open[(moves.length + skip) % open.length];
      moves.push({ side: pick.side, index: pick.index });
    }
  }
  return null;
}

test('digger: the optimal solution tapped in the page earns three stars', BROWSER, async () => {
  const level = levels.digger;
  const { page, trouble } = await openLevel(level);
  await diggerTaps(page, 0);
  // Every arrow of the level is a button carrying the JSON's side and index.
  const buttons = await page.$$eval('#play button.dg-arrow', (bs) => bs.map((b) => `${b.dataset.side}:${b.dataset.index}`));
  assert.deepEqual(buttons.sort(), level.puzzle.arrows.map((a) => `${a.side}:${a.index}`).sort());
  for (const name of await page.$$eval('#play button', (bs) => bs.map((b) => b.getAttribute('aria-label') || b.textContent))) {
    assert.ok(name && name.trim().length > 0, 'a play button without an accessible name');
  }
  const taps = level.solution.optimal.taps;
  for (let i = 0; i < taps.length; i++) await tapArrow(page, taps[i], i + 1);
  const status = page.locator('[role="status"]#play-stars');
  await status.waitFor();
  await page.waitForFunction(() => /3 stars/.test(document.querySelector('#play-stars').textContent));
  assert.match(await status.textContent(), new RegExp(`Solved in ${taps.length} taps: .*3 stars`));
  assert.match(await page.textContent('#play-progress'), new RegExp(`Gold (\\d+) of \\1 `));
  // Solved: nothing is tappable any more.
  assert.equal(await page.locator('#play button.dg-arrow:not([disabled])').count(), 0);
  await page.screenshot({ path: path.join(ARTIFACTS, 'play-digger.png'), fullPage: true });
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the solved digger play');
  assert.deepEqual(trouble, []);
  await page.close();
});

test('digger: a play that runs out of taps ends with no stars', BROWSER, async () => {
  const level = levels.digger;
  const losing = await losingPlay(level);
  assert.ok(losing, 'no losing play found through the API');
  const { page, trouble } = await openLevel(level);
  await diggerTaps(page, 0);
  for (let i = 0; i < losing.length; i++) await tapArrow(page, losing[i], i + 1);
  await page.waitForFunction(() => /0 stars/.test(document.querySelector('#play-stars').textContent));
  assert.match(await page.textContent('[role="status"]#play-stars'), /No tap can be played: .*0 stars/);
  assert.equal(await page.locator('#play button.dg-arrow:not([disabled])').count(), 0);
  // The hint says how far to go back, as the API does.
  const hint = await request(server, '/v1/digger/hint', { method: 'POST', json: { level: level.puzzle, moves: losing } });
  assert.equal(hint.status, 200, hint.text);
  assert.equal(hint.body.winnable, false);
  await page.click('#play-hint');
  await page.waitForFunction(() => /cannot win/.test(document.querySelector('#play-message').textContent));
  assert.match(await page.textContent('#play-message'), new RegExp(`undo ${hint.body.undo} tap`));
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the lost digger play');
  assert.deepEqual(trouble, []);
  await page.close();
});

test('digger: undo, restart, the hint and the keyboard', BROWSER, async () => {
  const level = levels.digger;
  const taps = level.solution.optimal.taps;
  const { page, trouble } = await openLevel(level);
  await diggerTaps(page, 0);
  await tapArrow(page, taps[0], 1);
  await tapArrow(page, taps[1], 2);
  await page.click('#play-undo');
  await diggerTaps(page, 1);
  // The hint marks the arrow the API names for this position.
  const hint = await request(server, '/v1/digger/hint', { method: 'POST', json: { level: level.puzzle, moves: taps.slice(0, 1) } });
  assert.equal(hint.status, 200, hint.text);
  await page.click('#play-hint');
  await page.waitForSelector('#play .dg-arrow.dg-hinted');
  const marked = await page.$eval('#play .dg-arrow.dg-hinted', (b) => ({ side: b.dataset.side, index: Number(b.dataset.index) }));
  assert.deepEqual(marked, hint.body.hint);
  assert.match(await page.textContent('#play-message'), new RegExp(`${hint.body.taps_needed} taps? to win`));
  // Keyboard: the hinted arrow takes Enter; U undoes it, R restarts.
  await page.focus('#play .dg-arrow.dg-hinted');
  await page.keyboard.press('Enter');
  await diggerTaps(page, 2);
  await page.keyboard.press('u');
  await diggerTaps(page, 1);
  await page.keyboard.press('r');
  await diggerTaps(page, 0);
  assert.match(await page.textContent('#play-stars'), /^$/);
  assert.deepEqual(trouble, []);
  await page.close();
  await assertNarrow(level, 'digger');
});

test('digger with gold_in_order: each gold shows its number, and the optimal play still earns three stars', BROWSER, async () => {
  const level = levels.ordered;
  assert.equal(level.puzzle.rules.gold_in_order, true);
  const { page, trouble } = await openLevel(level);
  await diggerTaps(page, 0);
  const numbers = await page.$$eval('#play .dg-gold.dg-ordered', (gs) => gs.map((g) => Number(g.textContent)).sort((a, b) => a - b));
  assert.deepEqual(numbers, level.puzzle.gold.map((g) => g.order).sort((a, b) => a - b));
  const taps = level.solution.optimal.taps;
  for (let i = 0; i < taps.length; i++) await tapArrow(page, taps[i], i + 1);
  await page.waitForFunction(() => /3 stars/.test(document.querySelector('#play-stars').textContent));
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the ordered digger play');
  assert.deepEqual(trouble, []);
  await page.close();
});

test('lattice: the three-star fold placed in the page earns what the check gives it', BROWSER, async () => {
  const level = levels.lattice;
  const fold = level.solution.band_folds.three;
  const oracle = await request(server, '/v1/lattice/check', { method: 'POST', json: { level, fold } });
  assert.equal(oracle.status, 200, oracle.text);
  assert.equal(oracle.body.valid, true);
  assert.equal(oracle.body.stars, 3);
  const { page, trouble } = await openLevel(level);
  for (let k = 0; k < fold.length; k++) {
    await page.click(`#play button.lat-move[data-move="${fold[k]}"]`);
    await page.waitForFunction((n) => new RegExp(`^Residue ${n} of`).test(document.querySelector('#play-progress').textContent), k + 2);
  }
  await page.waitForFunction(() => /stars?$/.test(document.querySelector('#play-stars').textContent));
  const stars = await page.textContent('[role="status"]#play-stars');
  assert.match(stars, new RegExp(`Folded with ${oracle.body.score} contacts?: .*3 stars`));
  // The live count agrees with the service's score.
  assert.match(await page.textContent('#play-progress'), new RegExp(` ${oracle.body.score} contacts?`));
  await page.screenshot({ path: path.join(ARTIFACTS, 'play-lattice.png'), fullPage: true });
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the folded lattice');
  // Undo reopens the fold; the arrow keys place residues too.
  await page.click('#play-undo');
  await page.waitForFunction((n) => new RegExp(`^Residue ${n} of`).test(document.querySelector('#play-progress').textContent), fold.length);
  assert.equal(await page.textContent('#play-stars'), '');
  const key = { R: 'ArrowRight', L: 'ArrowLeft', U: 'ArrowUp', D: 'ArrowDown' }[fold.at(-1)];
  await page.focus('#play-undo');
  await page.keyboard.press(key);
  await page.waitForFunction(() => /3 stars/.test(document.querySelector('#play-stars').textContent));
  assert.deepEqual(trouble, []);
  await page.close();
  await assertNarrow(level, 'lattice');
});

test("racetrack: the player's lap drawn by PX, its lap time rated by the check", BROWSER, async () => {
  const level = levels.racetrack;
  const lap = level.solution.player_lap;
  const { page, trouble } = await openLevel(level);
  const segments = await page.$$eval('#play polyline.trk-seg', (ls) => ls.map((l) => Number(l.dataset.segment)));
  assert.deepEqual(
    segments,
    level.puzzle.segments.map((_, i) => i),
  );
  if (lap.finished) {
    const { spline, ...small } = level.puzzle;
    assert.ok(spline.length > 0);
    const oracle = await request(server, '/v1/racetrack/check', {
      method: 'POST',
      json: { level: { ...level, puzzle: small }, lap_time: lap.time },
    });
    assert.equal(oracle.status, 200, oracle.text);
    await page.waitForFunction(() => /stars?$/.test(document.querySelector('#play-stars').textContent));
    assert.match(await page.textContent('[role="status"]#play-stars'), new RegExp(`Lap ${lap.time.toFixed(1)} s .*${oracle.body.stars} stars?$`));
  } else {
    await page.waitForFunction(() => /did not finish/.test(document.querySelector('#play-stars').textContent));
  }
  // The car moves: its position changes while the lap plays (again, from the button).
  const at = () => page.$eval('#play circle.trk-car', (c) => `${c.getAttribute('cx')},${c.getAttribute('cy')}`);
  await page.click('#play-lap');
  await page.waitForTimeout(300);
  const first = await at();
  await page.waitForTimeout(300);
  assert.notEqual(await at(), first);
  await page.screenshot({ path: path.join(ARTIFACTS, 'play-racetrack.png'), fullPage: true });
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the racetrack lap');
  assert.deepEqual(trouble, []);
  await page.close();
  await assertNarrow(level, 'racetrack');
});
