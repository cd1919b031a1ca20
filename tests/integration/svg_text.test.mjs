// svg_text.test.mjs - every picture's text lies inside its view box, measured
// in a real browser (Debian's chromium, headless, driven by the pinned
// playwright-core, as in dashboard.test.mjs) over many levels of each kind:
//  - digger: every difficulty preset, easiest to expert, seeds 1, 4 and 5
//    (4 and 5 of hardest use all six terrains, whose legend used to pass the
//    right edge; 5 with gold_in_order, whose coins carry numbers), made
//    with `starforge generate` and drawn with `starforge picture`;
//  - lattice: square chains of 8, 24 and 64 residues and cubic ones of 8,
//    20 and 48 (the longest each lattice takes), two seeds each, made by
//    jobs on a test server and drawn at GET /v1/levels/{id}.svg with each
//    star's fold (?star=1, 2, 3) and without (the default);
//  - racetrack: four seeds with a small, fast search, made and drawn with
//    the command line.
// Each picture is placed inline in one page; for every <text>, its
// getBBox() corners are mapped through its getScreenCTM() and the inverse
// of the root <svg>'s into the root's viewBox coordinates, and must lie
// inside the viewBox (a rotated label is measured by its four corners).
// Glyph boxes are chromium's, with its sans-serif font: the check asks for
// the pictures to fit with the fonts a real viewer has, not an estimate.
//
// The browser tests run once, in the SQLite pass (the pictures do not
// depend on the back end; svg.test.mjs fetches them on both).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { promisify } from 'node:util';

import { chromium } from 'playwright-core';

import { BIN, getJson, request, sqliteOnly, submit, useServer, waitForJob } from './harness.mjs';

const run = promisify(execFile);
const CHROMIUM = process.env.STARFORGE_CHROMIUM || '/usr/bin/chromium';
const BROWSER = sqliteOnly('the browser tests run once; the pictures do not depend on the back end');

const server = useServer({ args: ['--workers', '2'] });

let browser = null;

async function launch() {
  assert.ok(
    fs.existsSync(CHROMIUM),
    `chromium is missing (${CHROMIUM}): install it with \`sh scripts/deps.sh test\` as root (make test does)`,
  );
  // We run as root, where chromium's sandbox cannot start.
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  return browser;
}

after(async () => {
  await browser?.close();
});

/** Runs `tasks` (functions returning promises) at most `limit` at a time. */
async function pool(tasks, limit) {
  const out = new Array(tasks.length);
  let next = 0;
  async function worker() {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]();
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return out;
}

/** `starforge generate KIND` then `starforge picture`: { name, svg }. */
async function cliPicture(kind, seed, params, name) {
  const gen = await run(BIN, ['generate', kind, '--seed', String(seed), '--threads', '1', '--params', JSON.stringify(params)], {
    maxBuffer: 64 << 20,
  });
  const file = `${server.dir}/${name.replace(/[^a-z0-9]+/gi, '_')}.json`;
  fs.writeFileSync(file, gen.stdout);
  const pic = await run(BIN, ['picture', file], { maxBuffer: 64 << 20 });
  return { name, svg: pic.stdout };
}

/**
 * Measures every <text> of every picture in one page. Resolves with
 * [{ name, viewBox, texts, outside: [{ text, box }] }].
 */
async function measure(pictures) {
  const page = await (await launch()).newPage({ viewport: { width: 1280, height: 1000 } });
  try {
    const html = pictures
      .map((p, i) => `<div id="p${i}">${p.svg.replace(/^<\?xml[^>]*>\s*/, '')}</div>`)
      .join('\n');
    await page.setContent(`<!doctype html><html><body style="margin:0">${html}</body></html>`);
    const found = await page.evaluate((n) => {
      const results = [];
      for (let i = 0; i < n; i++) {
        const root = document.querySelector(`#p${i} > svg`);
        const vb = root.viewBox.baseVal;
        const toRoot = root.getScreenCTM().inverse();
        const texts = [...root.querySelectorAll('text')];
        const outside = [];
        for (const t of texts) {
          const b = t.getBBox();
          const m = toRoot.multiply(t.getScreenCTM());
          const corners = [
            [b.x, b.y],
            [b.x + b.width, b.y],
            [b.x, b.y + b.height],
            [b.x + b.width, b.y + b.height],
          ].map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
          const xs = corners.map((c) => c.x);
          const ys = corners.map((c) => c.y);
          const box = { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
          // Half a unit of slack for anti-aliasing and rounding.
          const e = 0.5;
          if (box.x0 < vb.x - e || box.y0 < vb.y - e || box.x1 > vb.x + vb.width + e || box.y1 > vb.y + vb.height + e)
            outside.push({ text: t.textContent, box });
        }
        results.push({ viewBox: [vb.x, vb.y, vb.width, vb.height], texts: texts.length, outside });
      }
      return results;
    }, pictures.length);
    return found.map((r, i) => ({ name: pictures[i].name, ...r }));
  } finally {
    await page.close();
  }
}

/** Asserts that no picture has text outside its view box, listing every offender. */
function assertInside(results) {
  const bad = results.filter((r) => r.outside.length);
  const lines = bad.map(
    (r) =>
      `${r.name} (viewBox ${r.viewBox.join(' ')}): ` +
      r.outside
        .map((o) => `"${o.text}" at ${[o.box.x0, o.box.y0, o.box.x1, o.box.y1].map((v) => v.toFixed(1)).join(',')}`)
        .join('; '),
  );
  assert.equal(bad.length, 0, `text outside the view box:\n${lines.join('\n')}`);
  for (const r of results) assert.ok(r.texts > 5, `${r.name}: only ${r.texts} <text> elements measured`);
}

const DIFFICULTIES = ['easiest', 'easy', 'medium', 'hard', 'hardest', 'expert'];

test('digger pictures: every text inside the view box, every preset', BROWSER, async () => {
  const tasks = [];
  for (const difficulty of DIFFICULTIES)
    for (const seed of [1, 4, 5]) {
      const params = { difficulty, ...(seed === 5 ? { gold_in_order: true } : {}) };
      tasks.push(() => cliPicture('digger', seed, params, `digger ${difficulty} seed ${seed}`));
    }
  const pictures = await pool(tasks, 2);
  assertInside(await measure(pictures));
});

test('racetrack pictures: every text inside the view box', BROWSER, async () => {
  const tasks = [1, 2, 3, 4].map(
    (seed) => () => cliPicture('racetrack', seed, { population: 6, generations: 2 }, `racetrack seed ${seed}`),
  );
  assertInside(await measure(await pool(tasks, 2)));
});

test('lattice pictures: every text inside the view box, each star fold, short and long chains', BROWSER, async () => {
  const jobs = [];
  for (const [lattice, lengths] of [
    ['square', [8, 24, 64]],
    ['cubic', [8, 20, 48]],
  ])
    for (const length of lengths)
      for (const seed of [1, 2])
        jobs.push({ kind: 'lattice', seed, params: { lattice, length, generations: 2, population: 4 } });
  const accepted = await Promise.all(jobs.map((job) => submit(server, job)));
  const pictures = [];
  for (const [i, a] of accepted.entries()) {
    const done = await waitForJob(server, a.id, { timeoutMs: 60_000 });
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    const id = done.level_ids[0];
    const level = await getJson(server, `/v1/levels/${id}`);
    const what = `lattice ${jobs[i].params.lattice} ${jobs[i].params.length} seed ${jobs[i].seed}`;
    const stars = level.stars.thresholds ? ['', '?star=1', '?star=2', '?star=3'] : [''];
    for (const q of stars) {
      const res = await request(server, `/v1/levels/${id}.svg${q}`);
      assert.equal(res.status, 200, `${what}${q}: ${res.text.slice(0, 300)}`);
      pictures.push({ name: `${what}${q}`, svg: res.text });
    }
  }
  assert.ok(pictures.length >= 3 * jobs.length, `only ${pictures.length} pictures`);
  assertInside(await measure(pictures));
});
