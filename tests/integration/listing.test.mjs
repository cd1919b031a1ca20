// listing.test.mjs - GET /v1/jobs and GET /v1/levels: newest first, stable
// opaque paging (page_size, page_token), the state and kind filters of jobs
// and the level filters (lattice, length, min_distinct_scores, ...).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  QUICK_JOB,
  assertValid,
  getJson,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

const jobs = []; // { id, params }, in submission order

// Seven quick jobs over three kinds of puzzle: square 10, square 12, cubic 8.
const PLAN = [
  [101, { length: 10 }],
  [102, { length: 10 }],
  [103, { length: 10 }],
  [104, { length: 12 }],
  [105, { length: 12 }],
  [106, { length: 8, lattice: 'cubic' }],
  [107, { length: 8, lattice: 'cubic' }],
];

const server = useServer({ args: ['--workers', '2'] }, async () => {
  for (const [seed, params] of PLAN) {
    const job = await submit(server, QUICK_JOB(seed, params));
    jobs.push({ id: job.id, params });
  }
  for (const j of jobs) {
    const done = await waitForJob(server, j.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    j.level_ids = done.level_ids;
  }
});

/** Every page of `path` (with page_size `size`), as the list of pages. */
async function pages(path, size, between) {
  const sep = path.includes('?') ? '&' : '?';
  const out = [];
  let token = null;
  do {
    const url = `${path}${sep}page_size=${size}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`;
    const page = await getJson(server, url);
    out.push(page);
    token = page.next_page_token;
    if (between) await between(out.length);
  } while (token);
  return out;
}

test('jobs are listed newest first, and paging is stable when jobs arrive meanwhile', async () => {
  const all = await getJson(server, '/v1/jobs?page_size=100');
  assertValid('job-list', all);
  assert.equal(all.next_page_token, null);
  assert.deepEqual(
    all.jobs.map((j) => j.id),
    jobs.map((j) => j.id).reverse(),
  );

  // Pages of 3: 3 + 3 + 1, with a job submitted after the first page; it
  // must not shift the later pages.
  let late;
  const paged = await pages('/v1/jobs', 3, async (n) => {
    if (n === 1) late = await submit(server, QUICK_JOB(108));
  });
  for (const page of paged) assertValid('job-list', page);
  assert.deepEqual(
    paged.map((p) => p.jobs.length),
    [3, 3, 1],
  );
  assert.equal(typeof paged[0].next_page_token, 'string');
  assert.equal(paged[2].next_page_token, null);
  const ids = paged.flatMap((p) => p.jobs.map((j) => j.id));
  assert.equal(new Set(ids).size, ids.length, 'a job appeared twice');
  assert.deepEqual(ids, all.jobs.map((j) => j.id));

  // A fresh first page starts with the newcomer.
  const first = await getJson(server, '/v1/jobs?page_size=3');
  assert.equal(first.jobs[0].id, late.id);
  const done = await waitForJob(server, late.id);
  assert.equal(done.state, 'succeeded');
  jobs.push({ id: late.id, params: {}, level_ids: done.level_ids });
});

test('jobs filter by state and kind, and page within the filter', async () => {
  const succeeded = await getJson(server, '/v1/jobs?state=succeeded&page_size=100');
  assertValid('job-list', succeeded);
  assert.equal(succeeded.jobs.length, jobs.length);
  assert.ok(succeeded.jobs.every((j) => j.state === 'succeeded'));

  for (const state of ['queued', 'running', 'failed', 'cancelled']) {
    const none = await getJson(server, `/v1/jobs?state=${state}`);
    assertValid('job-list', none);
    assert.deepEqual(none, { jobs: [], next_page_token: null }, state);
  }

  const lattice = await getJson(server, '/v1/jobs?kind=lattice&page_size=100');
  assert.equal(lattice.jobs.length, jobs.length);

  const paged = await pages('/v1/jobs?state=succeeded&kind=lattice', 5);
  assert.deepEqual(
    paged.map((p) => p.jobs.length),
    [5, 3],
  );
  assert.deepEqual(
    paged.flatMap((p) => p.jobs.map((j) => j.id)),
    succeeded.jobs.map((j) => j.id),
  );
});

test('levels are listed newest first and filter by lattice, length and min_distinct_scores', async () => {
  const all = await getJson(server, '/v1/levels?page_size=100');
  assertValid('level-list', all);
  assert.equal(all.next_page_token, null);
  const expected = new Set(jobs.flatMap((j) => j.level_ids || []));
  const ids = all.levels.map((l) => l.id);
  assert.equal(new Set(ids).size, ids.length, 'a level is listed twice');
  assert.deepEqual(new Set(ids), expected);
  for (const level of all.levels) assertValid('lattice/level', level);

  const idsOf = (list) => list.levels.map((l) => l.id).sort();
  const expectIds = (pred) => all.levels.filter(pred).map((l) => l.id).sort();

  const cubic = await getJson(server, '/v1/levels?lattice=cubic&page_size=100');
  assertValid('level-list', cubic);
  assert.ok(cubic.levels.length > 0);
  assert.deepEqual(idsOf(cubic), expectIds((l) => l.puzzle.lattice === 'cubic'));

  const twelve = await getJson(server, '/v1/levels?kind=lattice&length=12&page_size=100');
  assert.ok(twelve.levels.length > 0);
  assert.deepEqual(idsOf(twelve), expectIds((l) => l.puzzle.length === 12));

  const squareTen = await getJson(server, '/v1/levels?lattice=square&length=10&page_size=100');
  assert.ok(squareTen.levels.length > 0);
  assert.deepEqual(idsOf(squareTen), expectIds((l) => l.puzzle.lattice === 'square' && l.puzzle.length === 10));

  const scores = all.levels.map((l) => l.stats.distinct_scores).sort((a, b) => a - b);
  const threshold = scores[Math.floor(scores.length / 2)];
  const rich = await getJson(server, `/v1/levels?min_distinct_scores=${threshold}&page_size=100`);
  assertValid('level-list', rich);
  assert.ok(rich.levels.length > 0 && rich.levels.length <= all.levels.length);
  assert.deepEqual(idsOf(rich), expectIds((l) => l.stats.distinct_scores >= threshold));

  const longish = await getJson(server, '/v1/levels?min_length=11&page_size=100');
  assert.deepEqual(idsOf(longish), expectIds((l) => l.puzzle.length >= 11));

  // A value no level has matches nothing; a name no kind filters on is a
  // 400 (query.test.mjs has the whole table), not an empty list.
  assert.deepEqual(await getJson(server, '/v1/levels?length=99'), { levels: [], next_page_token: null });
  assert.equal((await request(server, '/v1/levels?colour=red')).status, 400);

  // Paging levels in twos gives the same list.
  const paged = await pages('/v1/levels', 2);
  for (const page of paged) assertValid('level-list', page);
  assert.deepEqual(
    paged.flatMap((p) => p.levels.map((l) => l.id)),
    ids,
  );
});
