// evaluations.test.mjs - GET /v1/evaluations/{lattice}/{sequence}: the
// enumeration runs once and is cached in the database (a second request is a
// cache hit in /metrics and no new enumeration, also after a restart), 400
// for a bad lattice, sequence or star rule, 422 over the work budget.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import {
  assertProblem,
  assertValid,
  metrics,
  request,
  startServer,
  stopAndClean,
  stopServer,
} from './harness.mjs';

const SEQ = 'HPHPPHHPHH';
const PATH = `/v1/evaluations/square/${SEQ}`;
const HITS = 'starforge_evaluation_cache_hits_total';
const MISSES = 'starforge_evaluation_cache_misses_total';
const ENUMS = 'starforge_enumerations_total';

let server;
let first; // the first answer's text

before(async () => {
  server = await startServer({ args: ['--workers', '1'] });
});

after(async () => {
  if (server && !server.exited) await stopAndClean(server);
});

/** How much the evaluation counters went up between two /metrics samples. */
function delta(was, now) {
  return {
    hits: now.get(HITS) - was.get(HITS),
    misses: now.get(MISSES) - was.get(MISSES),
    enums: now.get(ENUMS) - was.get(ENUMS),
  };
}

test('an evaluation is computed once; the second request is a cache hit', async () => {
  const m0 = await metrics(server);
  const res = await request(server, PATH);
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  assert.equal(res.headers.get('cache-control'), 'public, max-age=86400');
  assertValid('evaluation', res.body);
  assert.equal(res.body.sequence, SEQ);
  assert.equal(res.body.lattice, 'square');
  assert.equal(res.body.length, SEQ.length);
  assert.equal(res.body.stars.strategy, 'paper');
  first = res.text;
  const m1 = await metrics(server);
  assert.deepEqual(delta(m0, m1), { hits: 0, misses: 1, enums: 1 });

  const again = await request(server, PATH);
  assert.equal(again.status, 200);
  assert.equal(again.text, first);
  const m2 = await metrics(server);
  assert.deepEqual(delta(m1, m2), { hits: 1, misses: 0, enums: 0 });

  // Another star rule reuses the enumeration.
  const pct = await request(server, `${PATH}?stars=percentile`);
  assert.equal(pct.status, 200, pct.text);
  assertValid('evaluation', pct.body);
  assert.equal(pct.body.stars.strategy, 'percentile');
  assert.equal(pct.body.stars.fractions.length, 2);
  assert.deepEqual(pct.body.histogram, again.body.histogram);
  assert.equal(delta(m2, await metrics(server)).enums, 0);

  // The cubic lattice too.
  const cubic = await request(server, '/v1/evaluations/cubic/HPPHPH');
  assert.equal(cubic.status, 200, cubic.text);
  assertValid('evaluation', cubic.body);
  assert.equal(cubic.body.lattice, 'cubic');
});

test('an evaluation carries a strong ETag and answers 304 to If-None-Match', async () => {
  const res = await request(server, PATH);
  const etag = res.headers.get('etag');
  assert.match(etag, /^"[0-9a-f]{32}(-gz)?"$/);
  const notModified = await request(server, PATH, { headers: { 'If-None-Match': etag } });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.text, '');
  assert.equal(notModified.headers.get('etag'), etag);
});

test('a bad lattice, sequence or star rule is a 400 problem', async () => {
  const m0 = await metrics(server);
  for (const path of [
    '/v1/evaluations/hexagonal/HPHP',
    '/v1/evaluations/Square/HPHP',
    '/v1/evaluations/square/HPXP',
    '/v1/evaluations/square/hphp',
    `/v1/evaluations/square/${'HP'.repeat(33)}`, // 66 residues, over 64
    `/v1/evaluations/cubic/${'HP'.repeat(25)}`, // 50 residues, over 48 on the cubic lattice
    '/v1/evaluations/square/HPHP?stars=gold',
    '/v1/evaluations/square/HPHP?method=guess',
    '/v1/evaluations/square/HPHP?seed=-1',
    '/v1/evaluations/square/HPHP?seed=1.5',
  ]) {
    const problem = assertProblem(await request(server, path), 400, 'invalid-request');
    assert.equal(problem.instance, path.split('?')[0]);
  }
  assert.equal(delta(m0, await metrics(server)).enums, 0);
});

test('the cache is in the database: after a restart the same request is still a hit', async () => {
  const { code } = await stopServer(server);
  assert.equal(code, 0);
  const { dir, db } = server;
  server = await startServer({ db, args: ['--workers', '1'] });
  server.dir = dir; // removed with the restarted server
  const m0 = await metrics(server);
  const res = await request(server, PATH);
  assert.equal(res.status, 200);
  assert.equal(res.text, first);
  assert.deepEqual(delta(m0, await metrics(server)), { hits: 1, misses: 0, enums: 0 });
});

test('an exact evaluation over the work budget is a 422 problem, and costs nothing', async () => {
  const small = await startServer({ args: ['--workers', '1', '--eval-budget', '1000'] });
  try {
    const m0 = await metrics(small);
    const problem = assertProblem(await request(small, `${PATH}?method=exact`), 422, 'over-budget');
    assert.match(problem.detail, /budget/);
    assert.equal(problem.instance, PATH);
    assert.deepEqual(delta(m0, await metrics(small)), { hits: 0, misses: 0, enums: 0 });
    // Within the budget it answers.
    const ok = await request(small, '/v1/evaluations/square/HPPH');
    assert.equal(ok.status, 200, ok.text);
    assertValid('evaluation', ok.body);
  } finally {
    await stopAndClean(small);
  }
});
