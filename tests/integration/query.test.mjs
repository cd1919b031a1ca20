// query.test.mjs - closed queries (issue 12): every route that takes a query
// answers 400 invalid-query for a parameter it does not know, naming it and
// the allowed ones, rather than ignoring it; a repeated or nameless
// parameter is refused too. Level filters are declared per kind: each
// kind's filters work (the store keeps exactly those tags), another kind's
// filter is a 400 naming the kind's own. And GET /v1/px-models lists the
// uploaded models, newest first, paged like the other listings.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SCALE, assertProblem, assertValid, getJson, request, submit, useServer, waitForJob } from './harness.mjs';

// Each kind's filters (core/kinds.h, sf_level_filter), where its levels
// hold them, and whether they are numbers (which also take min_NAME). The
// docs (openapi.yaml, README.md) list the same table.
const FILTERS = {
  lattice: {
    lattice: ['puzzle', 'text'],
    length: ['puzzle', 'number'],
    sequence: ['puzzle', 'text'],
    conformations: ['stats', 'number'],
    max_score: ['stats', 'number'],
    distinct_scores: ['stats', 'number'],
  },
  racetrack: {
    samples: ['puzzle', 'number'],
    ds: ['puzzle', 'number'],
    width: ['puzzle', 'number'],
    length: ['puzzle', 'number'],
    races: ['stats', 'number'],
    segments: ['stats', 'number'],
    star_skills: ['stats', 'number'],
  },
  digger: {
    difficulty: ['params', 'text'],
    width: ['puzzle', 'number'],
    height: ['puzzle', 'number'],
    turns: ['puzzle', 'number'],
    gold: ['stats', 'number'],
    machines: ['stats', 'number'],
    max_taps: ['stats', 'number'],
    recorded_stars: ['stats', 'number'],
    solver_states: ['stats', 'number'],
    attempts: ['stats', 'number'],
    index: ['stats', 'number'],
  },
};

const JOBS = [
  { kind: 'lattice', params: { length: 10, generations: 5 }, seed: 1 },
  { kind: 'lattice', params: { length: 8, lattice: 'cubic', generations: 5 }, seed: 2 },
  { kind: 'digger', params: { difficulty: 'easiest', count: 2 }, seed: 3 },
  { kind: 'digger', params: { difficulty: 'medium', count: 1 }, seed: 4 },
  { kind: 'racetrack', params: { population: 4, generations: 2 }, seed: 5 },
];

const server = useServer({ args: ['--workers', '3'] }, async () => {
  const accepted = [];
  for (const job of JOBS) accepted.push(await submit(server, job));
  for (const job of accepted) {
    const done = await waitForJob(server, job.id, { timeoutMs: 120_000 * SCALE });
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
  }
});

/** Asserts a 400 invalid-query whose detail names `name` and every one of `allowed`. */
function assertRefused(res, name, allowed, what = /is unknown/) {
  const problem = assertProblem(res, 400, 'invalid-query');
  assert.ok(problem.detail.includes(`'${name}'`), `detail does not quote '${name}': ${problem.detail}`);
  assert.match(problem.detail, what);
  for (const a of allowed) assert.match(problem.detail, new RegExp(`\\b${a}\\b`), `${a} missing: ${problem.detail}`);
  return problem;
}

/** The names a kind's filter list in a detail gives ("digger's filters: a, b, c;"). */
function filtersIn(detail, kind) {
  const m = new RegExp(`${kind}(?:'s filters)?: ([a-z_, ]+)`).exec(detail);
  assert.ok(m, `no filter list of ${kind} in: ${detail}`);
  return m[1].split(', ');
}

const ALL_FILTERS = [...new Set(Object.values(FILTERS).flatMap((f) => Object.keys(f)))];
const LIST = ['page_size', 'page_token', 'kind'];

// Every listing and the evaluation endpoint, each with an unknown name that
// used to be ignored silently, and what the 400 must list as allowed.
const UNKNOWN = [
  ['GET', '/v1/levels?knd=lattice', 'knd', [...LIST, ...ALL_FILTERS]],
  ['GET', '/v1/levels?limit=10', 'limit', [...LIST, ...ALL_FILTERS]],
  ['GET', '/v1/levels?kind=lattice&colour=red', 'colour', [...LIST, ...Object.keys(FILTERS.lattice)]],
  ['GET', '/v1/jobs?stat=running', 'stat', [...LIST, 'state']],
  ['GET', '/v1/jobs?page_size=5&limit=5', 'limit', [...LIST, 'state']],
  ['GET', '/v1/evaluations/square/HPPH?star=percentile', 'star', ['stars']],
  ['GET', '/v1/evaluations/square/HPPH.svg?star=percentile', 'star', ['stars']],
  ['GET', '/v1/px-models?limit=1', 'limit', ['page_size', 'page_token']],
  ['GET', '/v1/px-models?kind=racetrack', 'kind', ['page_size', 'page_token']],
  ['POST', '/v1/px-models?name=june&nmae=july', 'nmae', ['name']],
];

for (const [method, path, name, allowed] of UNKNOWN) {
  test(`${method} ${path}: 400 naming '${name}' and the allowed parameters`, async () => {
    const res = await request(server, path, { method, body: method === 'POST' ? 'x' : undefined });
    assertRefused(res, name, allowed);
  });
}

test('the unknown parameters of the issue gave wrong answers; the right ones give the right ones', async () => {
  const digger = await getJson(server, '/v1/levels?kind=digger&page_size=100');
  assert.equal(digger.levels.length, 3);
  const easiest = await getJson(server, '/v1/levels?difficulty=easiest&page_size=100');
  assert.deepEqual(
    easiest.levels.map((l) => l.params.difficulty),
    ['easiest', 'easiest'],
  );
  const running = await getJson(server, '/v1/jobs?state=running');
  assert.deepEqual(running.jobs, []);
  const eval1 = await getJson(server, '/v1/evaluations/square/HPHPPHHPHPPHPHHP?stars=percentile');
  assert.equal(eval1.stars.strategy, 'percentile');
});

test('a repeated parameter and a parameter without a name are refused', async () => {
  const cases = [
    ['/v1/jobs?state=running&state=queued', 'state'],
    ['/v1/levels?kind=lattice&kind=digger', 'kind'],
    ['/v1/levels?page_size=2&page_size=3', 'page_size'],
    ['/v1/levels?min_length=3&min_length=4', 'min_length'],
    ['/v1/evaluations/square/HPPH?stars=paper&stars=percentile', 'stars'],
    ['/v1/px-models?page_token=p1&page_token=p2', 'page_token'],
  ];
  for (const [path, name] of cases) assertRefused(await request(server, path), name, [name], /more than once/);
  for (const path of ['/v1/levels?=lattice', '/v1/jobs?&', '/v1/evaluations/square/HPPH?=paper', '/v1/px-models?=1']) {
    const problem = assertProblem(await request(server, path), 400, 'invalid-query');
    assert.match(problem.detail, /has no name/, path);
  }
  // No query at all, or a bare '?', is fine.
  assert.equal((await request(server, '/v1/jobs?')).status, 200);
  assert.equal((await request(server, '/v1/levels')).status, 200);
});

test("each kind's 400 lists exactly its filters; without kind, every kind's", async () => {
  for (const [kind, filters] of Object.entries(FILTERS)) {
    const problem = assertRefused(await request(server, `/v1/levels?kind=${kind}&bogus=1`), 'bogus', LIST);
    assert.deepEqual(filtersIn(problem.detail, kind), Object.keys(filters), kind);
    assert.match(problem.detail, /min_NAME/);
  }
  const problem = assertRefused(await request(server, '/v1/levels?bogus=1'), 'bogus', LIST);
  for (const [kind, filters] of Object.entries(FILTERS)) assert.deepEqual(filtersIn(problem.detail, kind), Object.keys(filters), kind);
});

test("every declared filter of every kind finds the levels that have its value", async () => {
  for (const [kind, filters] of Object.entries(FILTERS)) {
    const all = (await getJson(server, `/v1/levels?kind=${kind}&page_size=100`)).levels;
    assert.ok(all.length > 0, kind);
    for (const [name, [section, type]] of Object.entries(filters)) {
      const value = all[0][section][name];
      assert.equal(typeof value, type === 'text' ? 'string' : 'number', `${kind}.${section}.${name}`);
      const want = all.filter((l) => l[section][name] === value).map((l) => l.id);
      const got = await getJson(server, `/v1/levels?kind=${kind}&${name}=${encodeURIComponent(value)}&page_size=100`);
      assertValid('level-list', got);
      assert.deepEqual(got.levels.map((l) => l.id), want, `${kind} ${name}=${value}`);
      if (type === 'number') {
        const atLeast = all.filter((l) => l[section][name] >= value).map((l) => l.id);
        const min = await getJson(server, `/v1/levels?kind=${kind}&min_${name}=${value}&page_size=100`);
        assert.deepEqual(min.levels.map((l) => l.id), atLeast, `${kind} min_${name}=${value}`);
      }
    }
  }
});

test("another kind's filter is a 400 naming the kind's filters, not an empty list", async () => {
  const cases = [
    ['digger', 'length', 10],
    ['digger', 'distinct_scores', 3],
    ['lattice', 'difficulty', 'hardest'],
    ['lattice', 'min_width', 3],
    ['racetrack', 'difficulty', 'easy'],
    ['racetrack', 'sequence', 'HPPH'],
  ];
  for (const [kind, name, value] of cases) {
    const problem = assertRefused(await request(server, `/v1/levels?kind=${kind}&${name}=${value}`), name, LIST);
    assert.deepEqual(filtersIn(problem.detail, kind), Object.keys(FILTERS[kind]));
  }
});

test('difficulty filters digger levels, with or without kind, and only takes a preset name', async () => {
  const medium = await getJson(server, '/v1/levels?kind=digger&difficulty=medium');
  assert.deepEqual(
    medium.levels.map((l) => [l.kind, l.params.difficulty]),
    [['digger', 'medium']],
  );
  const easiest = await getJson(server, '/v1/levels?difficulty=easiest&page_size=1');
  assert.equal(easiest.levels.length, 1);
  assert.equal(typeof easiest.next_page_token, 'string');
  const rest = await getJson(server, `/v1/levels?difficulty=easiest&page_size=1&page_token=${easiest.next_page_token}`);
  assert.equal(rest.levels.length, 1);
  assert.equal(rest.next_page_token, null);
  assert.notEqual(rest.levels[0].id, easiest.levels[0].id);
  // A preset with no level yet is an empty page, not an error.
  assert.deepEqual(await getJson(server, '/v1/levels?difficulty=hardest'), { levels: [], next_page_token: null });
  const problem = assertProblem(await request(server, '/v1/levels?difficulty=impossible'), 400, 'invalid-query');
  assert.match(problem.detail, /difficulty 'impossible'.*easiest, easy, medium, hard, hardest, expert/);
});

test('filter values: numbers compare as numbers, texts must be non-empty, min_ only for numbers', async () => {
  const ten = await getJson(server, '/v1/levels?length=10&page_size=100');
  assert.ok(ten.levels.length > 0);
  assert.ok(ten.levels.every((l) => l.kind === 'lattice' && l.puzzle.length === 10));
  const tenPoint = await getJson(server, '/v1/levels?length=10.0&page_size=100');
  assert.deepEqual(tenPoint.levels.map((l) => l.id), ten.levels.map((l) => l.id));
  const cubic = await getJson(server, '/v1/levels?lattice=cubic');
  assert.ok(cubic.levels.length > 0 && cubic.levels.every((l) => l.puzzle.lattice === 'cubic'));
  for (const [path, re] of [
    ['/v1/levels?length=ten', /length 'ten' is not a number/],
    ['/v1/levels?min_length=', /min_length '' is not a number/],
    ['/v1/levels?lattice=hexagonal', /lattice 'hexagonal'.*square, cubic/],
    ['/v1/levels?sequence=', /sequence '' is empty/],
  ]) {
    assert.match(assertProblem(await request(server, path), 400, 'invalid-query').detail, re, path);
  }
  assertRefused(await request(server, '/v1/levels?min_sequence=4'), 'min_sequence', LIST);
  assertRefused(await request(server, '/v1/levels?kind=lattice&min_lattice=1'), 'min_lattice', ['lattice', 'length']);
});

// ---- GET /v1/px-models ----

const CSV =
  'speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking,intensity\n' +
  '0.588390,0.043676,0.500000,0.650748,0.000000,0.000000,0.000000,0.000000,0.349667\n' +
  '0.279787,0.144800,0.500000,0.000000,0.000000,0.000000,0.000000,0.000000,0.097450\n' +
  '0.445766,0.240148,0.496382,0.987500,0.000000,0.000000,0.666667,0.600000,0.541503\n';

test('GET /v1/px-models lists the uploads newest first, one page at a time, each as its upload answered', async () => {
  const empty = await getJson(server, '/v1/px-models');
  assertValid('px-model-list', empty);
  assert.deepEqual(empty, { px_models: [], next_page_token: null });

  const uploaded = [];
  for (const [name, rows] of [['first', 1], ['second', 2], ['third', 3]]) {
    const body = CSV.split('\n').slice(0, rows + 1).join('\n') + '\n';
    const res = await request(server, `/v1/px-models?name=${name}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(res.status, 201, res.text);
    uploaded.push(res.body);
  }
  const newestFirst = [...uploaded].reverse();

  const all = await getJson(server, '/v1/px-models?page_size=100');
  assertValid('px-model-list', all);
  assert.deepEqual(all, { px_models: newestFirst, next_page_token: null });
  assert.deepEqual(
    all.px_models.map((m) => [m.name, m.traces]),
    [['third', 3], ['second', 2], ['first', 1]],
  );

  const pages = [];
  let token = null;
  do {
    const page = await getJson(server, `/v1/px-models?page_size=1${token ? `&page_token=${token}` : ''}`);
    assertValid('px-model-list', page);
    assert.equal(page.px_models.length, 1);
    pages.push(page);
    token = page.next_page_token;
  } while (token && pages.length < 10);
  assert.deepEqual(pages.map((p) => p.px_models[0]), newestFirst);
  assert.deepEqual(pages.map((p) => typeof p.next_page_token), ['string', 'string', 'object']);
  assert.equal(pages[2].next_page_token, null);

  // A page token of the listing continues after that model, whatever came since.
  const res = await request(server, '/v1/px-models?name=fourth', { method: 'POST', body: CSV, headers: { 'content-type': 'text/csv' } });
  assert.equal(res.status, 201);
  const after = await getJson(server, `/v1/px-models?page_size=5&page_token=${pages[0].next_page_token}`);
  assert.deepEqual(after.px_models.map((m) => m.name), ['second', 'first']);
  const fresh = await getJson(server, '/v1/px-models?page_size=1');
  assert.equal(fresh.px_models[0].name, 'fourth');
  // The built-in set is not an upload and is not listed.
  assert.ok(!(await getJson(server, '/v1/px-models?page_size=100')).px_models.some((m) => m.name === 'synthetic'));

  assert.match(assertProblem(await request(server, '/v1/px-models?page_size=0'), 400, 'invalid-query').detail, /page_size/);
  assert.match(assertProblem(await request(server, '/v1/px-models?page_token=zz'), 400, 'invalid-query').detail, /page_token/);
  const head = await request(server, '/v1/px-models', { method: 'HEAD' });
  assert.equal(head.status, 200);
});
