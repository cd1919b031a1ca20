// dashboard_browse.test.mjs - the dashboard as a designer's tool (issue 17),
// in Debian's chromium, headless, driven by the pinned playwright-core as in
// dashboard.test.mjs: the level browser (#/levels) against GET /v1/levels
// for the same filters, page by page; two levels side by side (#/compare);
// the jobs table's seed, params, full dates, older pages and "run again";
// the level view's downloads and the hook for web/play.js; and on every
// view, at 1280 and at 390 px wide, no horizontal overflow, no serious or
// critical axe-core violation (axe-core pinned in package-lock.json), and
// a screenshot kept in build/test-artifacts/dashboard-<view>-<width>.png.
//
// The levels come from tiny jobs submitted before the tests (digger easy
// and medium, a small lattice search of each lattice, a two-generation
// racetrack): a few seconds in all. Like dashboard.test.mjs, this runs once,
// in the SQLite pass.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { chromium } from 'playwright-core';

import { ROOT, SCALE, axeViolations, getJson, sqliteOnly, submit, useServer, waitForJob } from './harness.mjs';

const CHROMIUM = process.env.STARFORGE_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'build/test-artifacts');

const BROWSER = sqliteOnly('the browser tests run once; what the page drives is the HTTP API, tested on both back ends');

// 30 jobs: more than the jobs table's first page of 25.
const JOBS = [
  { kind: 'digger', params: { difficulty: 'easy', count: 4 }, seed: 1 },
  { kind: 'digger', params: { difficulty: 'medium', count: 3 }, seed: 2 },
  { kind: 'lattice', params: { length: 10, generations: 5 }, seed: 1 },
  { kind: 'lattice', params: { length: 8, lattice: 'cubic', generations: 3, population: 10 }, seed: 2 },
  { kind: 'racetrack', params: { population: 6, generations: 2 }, seed: 5 },
  { kind: 'racetrack', params: { population: 4, generations: 1, points: 12 }, seed: 6 },
];
for (let seed = 100; JOBS.length < 30; seed++) JOBS.push({ kind: 'digger', params: { difficulty: seed % 2 ? 'easy' : 'easiest', count: 1 }, seed });

const server = useServer({}, async (srv) => {
  const ids = [];
  for (const job of JOBS) ids.push((await submit(srv, job)).id);
  for (const id of ids) {
    const job = await waitForJob(srv, id, { timeoutMs: 60_000 * SCALE });
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
  }
});

/* ---- the browser ---- */

let browser = null;

async function launch() {
  assert.ok(fs.existsSync(CHROMIUM), `chromium is missing (${CHROMIUM}): install it with \`sh scripts/deps.sh test\` as root (make test does)`);
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  return browser;
}

after(async () => {
  await browser?.close();
});

/**
 * A new page (its own context, in UTC so that dates read the same
 * everywhere) on `hash` of the dashboard, with what should never happen
 * collected in `trouble`: uncaught errors, console errors (a CSP refusal is
 * one) and requests outside the service. The play hook's events are
 * recorded in window.hookEvents from before the page's scripts run.
 */
async function openPage(hash = '#/', { width = 1280, height = 900 } = {}) {
  const context = await (await launch()).newContext({ viewport: { width, height }, timezoneId: 'UTC' });
  const page = await context.newPage();
  const trouble = { pageErrors: [], consoleErrors: [], offsite: [] };
  page.on('pageerror', (err) => trouble.pageErrors.push(String(err.stack || err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error') trouble.consoleErrors.push(`${msg.text()} (${msg.location()?.url || ''})`);
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(`${server.base}/`)) trouble.offsite.push(req.url());
  });
  await page.addInitScript(() => {
    window.hookEvents = [];
    document.addEventListener('starforge:level', (e) =>
      window.hookEvents.push({ type: e.type, level: e.detail.level, rootIsPlay: e.detail.root === document.getElementById('play'), helpers: Object.keys(window.starforge || {}) }),
    );
    document.addEventListener('starforge:leave', (e) => window.hookEvents.push({ type: e.type }));
  });
  page.setDefaultTimeout(15_000 * SCALE);
  await page.goto(`${server.base}/${hash}`);
  await page.waitForSelector('#job-kind[data-ready="true"]', { state: 'attached' });
  return { page, trouble, close: () => context.close() };
}

function assertNoTrouble(trouble) {
  assert.deepEqual(trouble.pageErrors, [], 'uncaught errors in the page');
  assert.deepEqual(trouble.consoleErrors, [], 'errors in the console');
  assert.deepEqual(trouble.offsite, [], 'requests outside the service');
}

/** Every level of the API's answer for `query`, and its next_page_token. */
async function apiLevels(query) {
  const body = await getJson(server, `/v1/levels?${new URLSearchParams(query)}`);
  return { ids: body.levels.map((l) => l.id), next: body.next_page_token, levels: body.levels };
}

async function shownLevelIds(page) {
  return page.$$eval('#browse-list li[data-level-id]', (lis) => lis.map((li) => li.dataset.levelId));
}

/** Waits for the browser view to have drawn the answer to the route now in the address. */
async function browseReady(page) {
  await page.waitForSelector('#browse[data-ready="true"]');
}

/**
 * Fills the browser's form with `filters` (the kind first, which draws its
 * fields; a number filter's min_NAME goes into its "at least" field) and
 * submits it; resolves once the list is drawn.
 */
async function applyFilters(page, filters) {
  await page.selectOption('#browse-kind', filters.kind || '');
  await page.fill('#browse-page-size', filters.page_size ? String(filters.page_size) : '');
  for (const [name, value] of Object.entries(filters)) {
    if (name === 'kind' || name === 'page_size') continue;
    const min = name.startsWith('min_');
    const id = `#browse-f-${min ? name.slice(4) : name}${min ? '-min' : ''}`;
    if ((await page.$eval(id, (n) => n.tagName)) === 'SELECT') await page.selectOption(id, String(value));
    else await page.fill(id, String(value));
  }
  await page.evaluate(() => delete document.querySelector('#browse').dataset.ready);
  await page.click('#browse-apply');
  await browseReady(page);
}

test('in chromium: the level browser lists what GET /v1/levels lists for the same filters, page by page', BROWSER, async (t) => {
  const { page, trouble, close } = await openPage('#/levels');
  try {
    await browseReady(page);
    // No filter: the newest page, as the API has it.
    const all = await apiLevels({});
    assert.ok(all.ids.length >= 20, `enough levels to page through (${all.ids.length})`);
    assert.deepEqual(await shownLevelIds(page), all.ids, 'no filters');

    // Values taken from the levels themselves, so that each filter matches some.
    const every = [];
    for (let q = { page_size: 100 }; ; ) {
      const p = await apiLevels(q);
      every.push(...p.levels);
      if (!p.next) break;
      q = { page_size: 100, page_token: p.next };
    }
    const digger = every.find((l) => l.kind === 'digger' && l.params.difficulty === 'medium');
    const track = every.find((l) => l.kind === 'racetrack');
    assert.ok(digger && track, 'the set-up made digger medium and racetrack levels');
    const combos = [
      { kind: 'digger' },
      { kind: 'digger', difficulty: 'easy', page_size: 4 },
      { kind: 'digger', difficulty: 'medium', width: digger.puzzle.width },
      { kind: 'digger', min_gold: digger.stats.gold, min_machines: 1 },
      { kind: 'lattice', lattice: 'cubic' },
      { kind: 'lattice', length: 10, min_distinct_scores: 2 },
      { kind: 'racetrack', min_length: Math.floor(track.puzzle.length) },
      { kind: 'racetrack', races: track.stats.races },
    ];
    let matched = 0;
    for (const filters of combos) {
      await applyFilters(page, filters);
      const want = await apiLevels(filters);
      const shown = await shownLevelIds(page);
      assert.deepEqual(shown, want.ids, `filters ${JSON.stringify(filters)}`);
      // The kind filter really filtered (the API agrees, and the page says so too).
      const kinds = await page.$$eval('#browse-list li', (lis) => lis.map((li) => li.dataset.kind));
      assert.ok(kinds.every((k) => k === filters.kind), `only ${filters.kind}: ${kinds}`);
      const hash = new URLSearchParams(new URL(page.url()).hash.replace(/^#\/levels\??/, ''));
      for (const [k, v] of Object.entries(filters)) assert.equal(hash.get(k), String(v), `the address holds ${k}`);
      if (shown.length) matched++;
      t.diagnostic(`${JSON.stringify(filters)}: ${shown.length} levels`);
    }
    assert.equal(matched, combos.length, 'every filter combination matched some levels');

    // Paging: digger easy levels 4 at a time; the next page is the API's
    // page for its next_page_token, and Previous comes back.
    const easy = { kind: 'digger', difficulty: 'easy', page_size: 4 };
    await applyFilters(page, easy);
    const first = await apiLevels(easy);
    assert.ok(first.next, 'more than one page of digger easy levels');
    assert.ok(await page.isVisible('#browse-next'));
    assert.ok(await page.isHidden('#browse-prev'), 'no previous page on the first');
    await page.click('#browse-next');
    await page.waitForFunction((token) => location.hash.includes(`page_token=${token}`), first.next);
    await browseReady(page);
    const second = await apiLevels({ ...easy, page_token: first.next });
    assert.ok(second.ids.length > 0);
    assert.deepEqual(await shownLevelIds(page), second.ids, 'the second page');
    assert.ok(second.ids.every((id) => !first.ids.includes(id)), 'the second page has other levels');
    if (second.next) {
      await page.click('#browse-next');
      await page.waitForFunction((token) => location.hash.includes(`page_token=${token}`), second.next);
      await browseReady(page);
      assert.deepEqual(await shownLevelIds(page), (await apiLevels({ ...easy, page_token: second.next })).ids, 'the third page');
      await page.click('#browse-prev');
      await page.waitForFunction((token) => location.hash.includes(`page_token=${token}`), first.next);
      await browseReady(page);
    }
    await page.click('#browse-prev');
    await page.waitForFunction(() => !location.hash.includes('page_token'));
    await browseReady(page);
    assert.deepEqual(await shownLevelIds(page), first.ids, 'back to the first page');

    // A filter the API refuses shows its problem.
    await page.goto(`${server.base}/#/levels?kind=digger&min_difficulty=easy`);
    await browseReady(page);
    assert.match(await page.textContent('#browse-error'), /400.*Invalid query/s);
    trouble.consoleErrors = trouble.consoleErrors.filter((e) => !/400/.test(e)); // the browser logs the refused request
    assertNoTrouble(trouble);
  } finally {
    await close();
  }
});

test('in chromium: two levels chosen in the browser open side by side', BROWSER, async () => {
  const { page, trouble, close } = await openPage('#/levels?kind=digger&page_size=6');
  try {
    await browseReady(page);
    const { ids, levels } = await apiLevels({ kind: 'digger', page_size: 6 });
    assert.ok(await page.isDisabled('#browse-compare'), 'nothing to compare yet');
    // Three chosen: the oldest choice gives way.
    for (const id of [ids[0], ids[3], ids[1]]) await page.check(`#browse-list li[data-level-id="${id}"] input.choose`);
    assert.deepEqual(
      await page.$$eval('#browse-list input.choose:checked', (bs) => bs.map((b) => b.value)),
      ids.filter((id) => id === ids[1] || id === ids[3]),
    );
    await page.click('#browse-compare');
    await page.waitForSelector('#compare[data-ready="true"]');
    assert.equal(new URL(page.url()).hash, `#/compare/${ids[3]}/${ids[1]}`);
    const sides = await page.$$eval('#compare .compare-side', (as) => as.map((a) => a.dataset.levelId));
    assert.deepEqual(sides, [ids[3], ids[1]]);
    await page.waitForFunction(() => [...document.querySelectorAll('#compare img')].every((img) => img.complete && img.naturalWidth > 0));
    for (const [i, id] of [ids[3], ids[1]].entries()) {
      const level = levels.find((l) => l.id === id);
      const side = `#compare .compare-side[data-level-id="${id}"]`;
      assert.equal(await page.getAttribute(`${side} img`, 'src'), `/v1/levels/${id}.svg`);
      const stars = await page.$$eval(`${side} .stars-list li`, (lis) => lis.map((li) => li.textContent));
      const sign = level.stars.better === 'lower' ? '≤' : '≥';
      assert.deepEqual(stars, level.stars.thresholds.map((x, k) => `${'★'.repeat(k + 1)} ${sign} ${x}${level.stars.unit ? ` ${level.stars.unit}` : ''}`));
      for (const stat of ['gold', 'machines', 'max_taps']) {
        const cell = await page.textContent(`#compare-stats tr[data-stat="${stat}"] td:nth-of-type(${i + 1})`);
        assert.equal(cell, String(level.stats[stat]), `${stat} of ${id}`);
      }
      assert.equal(await page.textContent(`#compare-stats tr[data-stat="difficulty"] td:nth-of-type(${i + 1})`), level.params.difficulty);
    }
    assertNoTrouble(trouble);
  } finally {
    await close();
  }
});

/** "2026-12-02 09:48:53": how the page writes an RFC 3339 time in UTC. */
const utcText = (iso) => iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');

test('in chromium: jobs show seed, params and full dates, page past the newest 25, and run again', BROWSER, async (t) => {
  const { page, trouble, close } = await openPage('#/');
  try {
    const page1 = await getJson(server, '/v1/jobs?page_size=25');
    assert.ok(page1.next_page_token, 'more than 25 jobs');
    const page2 = await getJson(server, `/v1/jobs?page_size=25&page_token=${page1.next_page_token}`);
    await page.waitForFunction((n) => document.querySelectorAll('#jobs-body tr[data-job-id]').length === n, page1.jobs.length);
    const rowIds = () => page.$$eval('#jobs-body tr[data-job-id]', (trs) => trs.map((tr) => tr.dataset.jobId));
    assert.deepEqual(await rowIds(), page1.jobs.map((j) => j.id), 'the newest 25, newest first');
    await page.click('#jobs-more');
    const all = [...page1.jobs, ...page2.jobs];
    await page.waitForFunction((n) => document.querySelectorAll('#jobs-body tr[data-job-id]').length === n, all.length);
    assert.deepEqual(await rowIds(), all.map((j) => j.id), 'the older jobs below, in order');
    if (!page2.next_page_token) assert.ok(await page.isHidden('#jobs-more'), 'no more pages: the button goes');
    // The refresh (every 5 s) keeps the order.
    await page.waitForTimeout(5500);
    assert.deepEqual(await rowIds(), all.map((j) => j.id), 'the order after a refresh');

    for (const job of all) {
      const row = `#jobs-body tr[data-job-id="${job.id}"]`;
      assert.equal(await page.textContent(`${row} code.seed`), String(job.seed));
      assert.deepEqual(JSON.parse(await page.textContent(`${row} code.params`)), job.params);
      const created = await page.$eval(`${row} time.created`, (n) => ({ datetime: n.dateTime, text: n.textContent }));
      assert.equal(created.datetime, job.created_at);
      assert.equal(created.text, utcText(job.created_at), 'the full date and time');
      const finished = await page.$$eval(`${row} time`, (ns) => ns.map((n) => n.textContent));
      assert.ok(finished.includes(`finished ${utcText(job.finished_at)}`), finished.join(' / '));
    }

    // Run again: the form holds the job's kind, params and seed.
    const old = all.find((j) => j.kind === 'racetrack');
    await page.click(`#jobs-body tr[data-job-id="${old.id}"] button.run-again`);
    assert.equal(await page.inputValue('#job-kind'), 'racetrack');
    assert.deepEqual(JSON.parse(await page.inputValue('#job-params')), old.params);
    assert.equal(await page.inputValue('#job-seed'), String(old.seed));
    assert.match(await page.textContent('#kind-summary'), /race/, 'the kind summary follows');
    // Edited and submitted: a new job with the edit.
    const edited = { ...old.params, generations: 3 };
    await page.fill('#job-params', JSON.stringify(edited));
    await page.click('#job-submit');
    const node = await page.waitForSelector('#submit-result [data-job-id]');
    const id = await node.getAttribute('data-job-id');
    const job = await waitForJob(server, id);
    assert.equal(job.kind, 'racetrack');
    assert.equal(job.seed, old.seed);
    assert.deepEqual(job.params, edited);
    t.diagnostic(`run again: ${old.id} → ${id} (${job.state})`);
    assertNoTrouble(trouble);
  } finally {
    await close();
  }
});

test('in chromium: the level view downloads the JSON and the picture, and hands each level to the play hook', BROWSER, async () => {
  const { levels } = await apiLevels({ page_size: 100 });
  const lattice = levels.find((l) => l.kind === 'lattice');
  const digger = levels.find((l) => l.kind === 'digger');
  const { page, trouble, close } = await openPage(`#/levels/${lattice.id}`);
  try {
    await page.waitForSelector(`#level[data-level-id="${lattice.id}"][data-ready="true"]`);
    await page.waitForFunction(() => document.querySelector('#level-picture').dataset.state === 'loaded');
    for (const [level, i] of [
      [lattice, 0],
      [digger, 1],
    ]) {
      if (i) {
        await page.evaluate((id) => (location.hash = `#/levels/${id}`), level.id);
        await page.waitForSelector(`#level[data-level-id="${level.id}"][data-ready="true"]`);
      }
      const links = await page.$$eval('#level-json, #level-svg, #level-open-svg, #level-picture-full', (as) =>
        as.map((a) => ({ id: a.id, href: a.getAttribute('href'), download: a.getAttribute('download') })),
      );
      assert.deepEqual(links, [
        { id: 'level-picture-full', href: `/v1/levels/${level.id}.svg`, download: null },
        { id: 'level-json', href: `/v1/levels/${level.id}`, download: `${level.id}.json` },
        { id: 'level-svg', href: `/v1/levels/${level.id}.svg`, download: `${level.id}.svg` },
        { id: 'level-open-svg', href: `/v1/levels/${level.id}.svg`, download: null },
      ]);
      // What each link gets, fetched as the browser fetches it.
      const got = await page.evaluate(async () => {
        const json = await fetch(document.querySelector('#level-json').href);
        const svg = await fetch(document.querySelector('#level-svg').href);
        return { json: await json.json(), jsonType: json.headers.get('content-type'), svg: await svg.text(), svgType: svg.headers.get('content-type') };
      });
      assert.deepEqual(got.json, level);
      assert.match(got.jsonType, /^application\/json/);
      assert.equal(got.svgType, 'image/svg+xml');
      assert.equal(got.svg, (await fetch(`${server.base}/v1/levels/${level.id}.svg`).then((r) => r.text())));
      assert.match(got.svg, /^(<\?xml[^>]*>\s*)?<svg[\s>]/);
      // The key stats are the level's.
      const stats = await page.$$eval('#level-stats [data-stat]', (ds) => Object.fromEntries(ds.map((d) => [d.dataset.stat, d.querySelector('dd').textContent])));
      if (level.kind === 'digger') assert.equal(stats.gold, String(level.stats.gold));
      else assert.equal(stats.sequence, level.puzzle.sequence);
    }

    // The hook: section#play after the picture and stars, empty and hidden
    // until web/play.js uses it; one starforge:level per level shown, with
    // the level's document; starforge:leave when the view is left.
    const play = await page.$eval('#play', (p) => ({
      parent: p.parentElement.id,
      after: p.previousElementSibling?.className,
      labelledby: p.getAttribute('aria-labelledby'),
    }));
    assert.deepEqual(play, { parent: 'level', after: 'level-body', labelledby: 'play-title' });
    await page.evaluate(() => (location.hash = '#/levels'));
    await browseReady(page);
    // Level to level and back within one page: leave, then the next level.
    await page.evaluate((id) => (location.hash = `#/levels/${id}`), lattice.id);
    await page.waitForSelector(`#level[data-level-id="${lattice.id}"][data-ready="true"]`);
    await page.evaluate((id) => (location.hash = `#/levels/${id}`), digger.id);
    await page.waitForSelector(`#level[data-level-id="${digger.id}"][data-ready="true"]`);
    await page.evaluate(() => (location.hash = '#/'));
    await page.waitForFunction(() => window.hookEvents.length >= 8);
    const events = await page.evaluate(() => window.hookEvents);
    assert.deepEqual(
      events.map((e) => e.type),
      Array.from({ length: 8 }, (_, k) => (k % 2 ? 'starforge:leave' : 'starforge:level')),
    );
    for (const [k, level] of [lattice, digger, lattice, digger].entries()) {
      assert.deepEqual(events[2 * k].level, level, `event ${2 * k}`);
      assert.equal(events[2 * k].rootIsPlay, true);
      assert.deepEqual(events[2 * k].helpers.sort(), ['$', 'api', 'el']);
    }
    assertNoTrouble(trouble);
  } finally {
    await close();
  }
});

/**
 * What overflows the viewport horizontally: the document's scroll width
 * beyond its client width, and every visible element whose box reaches past
 * either edge (named by tag, id and class).
 */
async function overflow(page) {
  return page.evaluate(() => {
    const root = document.documentElement;
    const width = root.clientWidth;
    const wide = [];
    for (const node of document.querySelectorAll('body *')) {
      const r = node.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.right > width + 0.5 || r.left < -0.5)
        wide.push(`${node.tagName.toLowerCase()}${node.id ? `#${node.id}` : ''}${node.className && typeof node.className === 'string' ? `.${node.className.split(' ').join('.')}` : ''} [${Math.round(r.left)}, ${Math.round(r.right)}]`);
    }
    return { scrollWidth: root.scrollWidth, clientWidth: width, wide };
  });
}

test('in chromium: every view fits 390 px without horizontal overflow, passes axe-core, and is kept as screenshots', BROWSER, async (t) => {
  const { levels } = await apiLevels({ page_size: 100 });
  const byKind = (kind) => levels.find((l) => l.kind === kind);
  const [a, b] = levels.filter((l) => l.kind === 'digger');
  const views = [
    ['jobs', '#/', '#jobs-body tr[data-job-id]'],
    ['levels', '#/levels?kind=digger', '#browse[data-ready="true"]'],
    ['compare', `#/compare/${a.id}/${byKind('lattice').id}`, '#compare[data-ready="true"]'],
    ['compare-digger', `#/compare/${a.id}/${b.id}`, '#compare[data-ready="true"]'],
    ...['digger', 'lattice', 'racetrack'].map((kind) => [`level-${kind}`, `#/levels/${byKind(kind).id}`, '#level[data-ready="true"]']),
  ];
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const problems = [];
  for (const width of [1280, 390]) {
    const { page, trouble, close } = await openPage('#/', { width, height: width === 390 ? 844 : 900 });
    try {
      for (const [name, hash, ready] of views) {
        await page.evaluate((h) => (location.hash = h), hash);
        await page.waitForSelector(ready);
        // Every picture loaded (the browser's are lazy: make them come).
        await page.$$eval('img[loading=lazy]', (imgs) => imgs.forEach((img) => (img.loading = 'eager')));
        await page.waitForFunction(() => [...document.querySelectorAll('main section:not([hidden]) img[src]')].every((img) => img.complete));
        const o = await overflow(page);
        if (o.scrollWidth > o.clientWidth) problems.push(`${name} at ${width}: the page is ${o.scrollWidth} px wide in ${o.clientWidth}`);
        if (o.wide.length) problems.push(`${name} at ${width}: wider than the viewport: ${o.wide.slice(0, 8).join('; ')}`);
        const violations = await axeViolations(page);
        if (violations.length) problems.push(`${name} at ${width}: axe: ${violations.join(' | ')}`);
        // Pictures stay legible on a phone: each opens full size.
        if (name.startsWith('level-')) assert.equal(await page.getAttribute('#level-picture-full', 'href'), await page.getAttribute('#level-picture', 'src'));
        const file = path.join(ARTIFACTS, `dashboard-${name}-${width}.png`);
        await page.screenshot({ path: file, fullPage: true });
        t.diagnostic(`${name} at ${width}: ${o.scrollWidth} px wide; ${path.relative(ROOT, file)}`);
      }
      for (const [what, list] of Object.entries(trouble)) if (list.length) problems.push(`at ${width}: ${what}: ${list.join(' | ')}`);
    } finally {
      await close();
    }
  }
  assert.deepEqual(problems, []);
});
