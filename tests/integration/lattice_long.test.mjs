// lattice_long.test.mjs - lattice jobs past the contact-map database (issue
// 15, "Long chains"): a length-26 job is evaluated by estimate, its level
// says so in its stats (method, histogram_error, optimum), validates
// against the schemas and draws; the evaluation cache is neither read nor
// fed; method exact past the database is refused with the allowed range.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  SCALE,
  assertProblem,
  assertValid,
  getJson,
  metrics,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

const server = useServer({ args: ['--workers', '1', '--job-threads', '2'] });

const HITS = 'starforge_evaluation_cache_hits_total';
const MISSES = 'starforge_evaluation_cache_misses_total';
const ENUMERATIONS = 'starforge_enumerations_total';

// Small budgets: a few seconds on two cores.
const LONG = {
  kind: 'lattice',
  seed: 5,
  params: { length: 26, population: 6, generations: 3, count: 2, steps: 100000, moves: 100000, nodes: 10000 },
};

test('a length-26 lattice job is estimated, and its level says so', async () => {
  const m0 = await metrics(server);
  const job = await waitForJob(server, (await submit(server, LONG)).id, { timeoutMs: 120_000 * SCALE });
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  assert.ok(job.level_ids.length >= 1 && job.level_ids.length <= 2);

  for (const id of job.level_ids) {
    const level = await getJson(server, `/v1/levels/${id}`);
    assertValid('level', level);
    assertValid('lattice/level', level);
    assert.equal(level.puzzle.length, 26);
    assert.equal(level.params.method, 'auto');
    assert.equal(level.params.steps, 100000);
    const { stats, solution, stars } = level;
    assert.equal(stats.method, 'estimate');
    assert.equal(stats.histogram.length, stats.max_score + 1);
    assert.equal(stats.histogram_error.length, stats.histogram.length);
    assert.ok(stats.histogram_error.every((e) => e === null || (typeof e === 'number' && e >= 0)));
    assert.ok(stats.histogram_error[0] < 0.5, `error at score 0: ${stats.histogram_error[0]}`);
    assert.ok(stats.conformations > 1e9, `estimated total ${stats.conformations}`);
    assert.equal(typeof stats.optimum.proven, 'boolean');
    assert.equal(stats.optimum.score, stats.max_score);
    assert.equal(solution.best_score, stats.max_score);
    assert.equal(solution.best_fold.length, 25);
    assert.equal(stars.thresholds[2], stats.max_score);

    // The game client's check agrees with the level about its best fold.
    const check = await request(server, '/v1/lattice/check', {
      method: 'POST',
      json: { sequence: level.puzzle.sequence, lattice: 'square', fold: solution.best_fold },
    });
    assert.equal(check.status, 200, check.text);
    assert.equal(check.body.valid, true);
    assert.equal(check.body.score, stats.max_score);
    // And about the other stars' folds.
    for (const [k, fold] of ['one', 'two', 'three'].map((name, k) => [k, solution.band_folds[name]])) {
      const band = await request(server, '/v1/lattice/check', {
        method: 'POST',
        json: { sequence: level.puzzle.sequence, lattice: 'square', fold },
      });
      assert.equal(band.status, 200, band.text);
      assert.ok(band.body.score >= stars.thresholds[k], `band ${k}: ${band.text}`);
    }

    const svg = await request(server, `/v1/levels/${id}.svg`);
    assert.equal(svg.status, 200, svg.text);
    assert.match(svg.headers.get('content-type'), /^image\/svg\+xml/);
    assert.match(svg.text, /26 residues/);
  }

  // No exact evaluation was looked up, stored or computed for it.
  const m1 = await metrics(server);
  for (const name of [HITS, MISSES, ENUMERATIONS]) assert.equal(m1.get(name), m0.get(name), name);
});

test('method exact past the database is refused with the allowed range', async () => {
  const res = await request(server, '/v1/jobs', {
    method: 'POST',
    json: { kind: 'lattice', seed: 1, params: { length: 24, method: 'exact' } },
  });
  const problem = assertProblem(res, res.status);
  assert.ok(res.status === 400 || res.status === 422, `status ${res.status}`);
  assert.match(JSON.stringify(problem), /params\.length 24 is out of range for method exact \(allowed: 8\.\.20/);

  const cubic = await request(server, '/v1/jobs', {
    method: 'POST',
    json: { kind: 'lattice', seed: 1, params: { length: 49, lattice: 'cubic' } },
  });
  assertProblem(cubic, cubic.status);
  assert.match(JSON.stringify(cubic.body), /params\.length 49 is out of range.*8\.\.48/);
});
