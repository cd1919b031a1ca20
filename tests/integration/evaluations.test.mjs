// evaluations.test.mjs - GET /v1/evaluations/{lattice}/{sequence}: the
// enumeration runs once and is cached in the database (a second request is a
// cache hit in /metrics and no new enumeration, also after a restart), 400
// for a bad lattice, sequence or star rule, 422 over the work budget; the
// cache is bounded by --eval-cache-max and evicts the least recently used.
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
  waitFor,
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

test('the cache keeps at most --eval-cache-max entries, the least recently used go first', async () => {
  // Six sequences; only the store's cache counts here, so every step that
  // must read the store runs on a restarted server (the response cache in
  // memory starts empty). A put is written after the answer: wait for it.
  const seqs = ['HPHPPHHP', 'HHPPHPHP', 'PHHPPHHP', 'HPPHHPPH', 'HHHPPPHH', 'PPHHPHHP'];
  const at = (s) => `/v1/evaluations/square/${s}`;
  const cache = async (srv) => {
    const m = await metrics(srv);
    return {
      entries: m.get('starforge_evaluation_cache_entries'),
      evictions: m.get('starforge_evaluation_cache_evictions_total'),
      max: m.get('starforge_evaluation_cache_max_entries'),
    };
  };
  const settle = (srv, want) =>
    waitFor(async () => JSON.stringify(await cache(srv)) === JSON.stringify(want), {
      what: `cache ${JSON.stringify(want)}`,
    });
  /** One request; whether the store's cache answered it (a hit) or not. */
  const hit = async (srv, s) => {
    const m0 = await metrics(srv);
    const res = await request(srv, at(s));
    assert.equal(res.status, 200, res.text);
    return delta(m0, await metrics(srv)).hits === 1;
  };
  const args = (max) => ['--workers', '1', '--eval-cache-max', String(max)];

  let srv = await startServer({ args: args(4) });
  const { dir, db } = srv;
  try {
    for (const s of seqs.slice(0, 4)) assert.equal(await hit(srv, s), false, s);
    await settle(srv, { entries: 4, evictions: 0, max: 4 });

    // seqs[0] read from the store becomes the most recently used, so two
    // new entries push out seqs[1] and seqs[2], not seqs[0].
    await stopServer(srv);
    srv = await startServer({ db, args: args(4) });
    assert.equal(await hit(srv, seqs[0]), true);
    assert.equal(await hit(srv, seqs[4]), false);
    await settle(srv, { entries: 4, evictions: 1, max: 4 }); // seqs[4]'s put, written
    assert.equal(await hit(srv, seqs[5]), false);
    await settle(srv, { entries: 4, evictions: 2, max: 4 });

    await stopServer(srv);
    srv = await startServer({ db, args: args(4) });
    const kept = [];
    for (const s of [seqs[0], seqs[3], seqs[4], seqs[5]]) kept.push(await hit(srv, s));
    assert.deepEqual(kept, [true, true, true, true]);
    assert.equal(await hit(srv, seqs[1]), false); // evicted: computed again, and back in

    // A lower bound at start evicts down to it, and says so. The order of
    // use is now seqs 0, 3, 4, 5, 1: the last two stay.
    await settle(srv, { entries: 4, evictions: 3, max: 4 });
    await stopServer(srv);
    srv = await startServer({ db, args: args(2) });
    assert.match(srv.log, /evaluation cache: 2 least recently used entries evicted to the bound of 2/);
    assert.deepEqual(await cache(srv), { entries: 2, evictions: 5, max: 2 });
    await stopServer(srv);
    srv = await startServer({ db, args: args(2) });
    assert.equal(await hit(srv, seqs[5]), true);
    assert.equal(await hit(srv, seqs[1]), true);
    assert.equal(await hit(srv, seqs[4]), false);
  } finally {
    srv.dir = dir;
    await stopAndClean(srv);
  }
});

test('a flood of new sequences from anonymous reads leaves the cache at its bound', async () => {
  // Issue 18's probe: one client asking for a new sequence each time, about
  // 1 000 rows a second. 200 distinct length-10 sequences, 4 at a time (the
  // limit of evaluations running at once with one worker).
  const srv = await startServer({ args: ['--workers', '1', '--eval-cache-max', '20'] });
  try {
    const seqs = [];
    for (let i = 0; seqs.length < 200; i += 5) seqs.push(i.toString(2).padStart(10, '0').replace(/0/g, 'P').replace(/1/g, 'H'));
    for (let i = 0; i < seqs.length; i += 4) {
      const answers = await Promise.all(seqs.slice(i, i + 4).map((s) => request(srv, `/v1/evaluations/square/${s}`)));
      for (const res of answers) assert.equal(res.status, 200, res.text);
    }
    await waitFor(async () => (await metrics(srv)).get('starforge_evaluation_cache_evictions_total') === 180, {
      what: '180 evictions',
    });
    const m = await metrics(srv);
    assert.equal(m.get('starforge_evaluation_cache_entries'), 20);
    assert.equal(m.get(MISSES), 200);
  } finally {
    await stopAndClean(srv);
  }
});
