// evaluations_long.test.mjs - long chains on GET /v1/evaluations (issue 15):
// method=estimate answers a flatPERM histogram with relative errors and the
// best fold found ("optimum": score, proven); auto estimates past the exact
// budget; the answer depends on the seed only (not on the thread count); every
// example fold is checked by the service's own fold check (POST
// /v1/lattice/check) and must score what it claims; a proven optimum agrees
// with exact enumeration. The servers run with a small --estimate-steps so
// that a request takes well under a second.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { assertProblem, assertValid, request, startServer, stopAndClean } from './harness.mjs';

// A 30-mer and a cubic 40-mer: far past exact enumeration (about 4e11 and
// 1e25 conformations).
const LONG = 'HPHPPHHPHPPHPHHPPHPPHHPHPHHPHP';
const CUBIC = 'HHPHPPHHPHHPPHPHHPHHPPHPHHPPHHPHPHHPPHHP';
// A 16-mer whose exact evaluation is known (tests/test_cli.c: 802075
// conformations, best fold 6 contacts).
const SHORT = 'HPHPPHHPHPPHPHHP';
const STEPS = ['--estimate-steps', '2e5'];

let one; // one evaluation thread per request
let two; // two, and an exact budget of 1000 conformations

before(async () => {
  one = await startServer({ args: ['--workers', '1', ...STEPS] });
  two = await startServer({
    args: ['--workers', '1', '--job-threads', '2', '--eval-budget', '1000', ...STEPS],
  });
});

after(async () => {
  for (const s of [one, two]) if (s && !s.exited) await stopAndClean(s);
});

/** Asks the service's fold check for the score of every example fold. */
async function checkExamples(server, body) {
  for (const [score, fold] of Object.entries(body.examples)) {
    const res = await request(server, '/v1/lattice/check', {
      method: 'POST',
      json: { sequence: body.sequence, lattice: body.lattice, fold },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.valid, true, `example ${score} (${fold}): ${res.body.reason}`);
    assert.equal(res.body.score, Number(score), `example ${score} scores ${res.body.score}`);
  }
}

test('an estimate of a 30-mer: histogram, relative errors, the best fold, stars', async () => {
  const res = await request(one, `/v1/evaluations/square/${LONG}?method=estimate&seed=7`);
  assert.equal(res.status, 200, res.text);
  assertValid('evaluation', res.body);
  const ev = res.body;
  assert.equal(ev.method, 'estimate');
  assert.equal(ev.seed, 7);
  assert.equal(ev.length, 30);
  assert.equal(ev.histogram.length, ev.max_score + 1);
  assert.equal(ev.histogram_error.length, ev.histogram.length);
  assert.equal(ev.optimum.score, ev.max_score);
  assert.equal(ev.examples[String(ev.max_score)], ev.optimum.fold);
  // The straight chain and its neighbours are sampled often: small errors.
  assert.ok(ev.histogram[0] > 0 && ev.histogram_error[0] < 0.2, JSON.stringify(ev.histogram_error));
  // The total is the histogram's sum (the mean of the runs' totals).
  const sum = ev.histogram.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - ev.conformations) / ev.conformations < 1e-9, `${sum} vs ${ev.conformations}`);
  assert.equal(ev.stars.thresholds[2], ev.max_score);
  await checkExamples(one, ev);

  // The same request is the same bytes; another server with two threads
  // per request computes the same bytes too.
  const again = await request(one, `/v1/evaluations/square/${LONG}?method=estimate&seed=7`);
  assert.equal(again.text, res.text);
  const other = await request(two, `/v1/evaluations/square/${LONG}?method=estimate&seed=7`);
  assert.equal(other.status, 200, other.text);
  assert.equal(other.text, res.text);
});

test('auto estimates past the exact budget; a proven optimum is the exact one', async () => {
  const exact = await request(one, `/v1/evaluations/square/${SHORT}`);
  assert.equal(exact.status, 200, exact.text);
  assert.equal(exact.body.method, 'exact');
  assert.deepEqual(
    { score: exact.body.optimum.score, proven: exact.body.optimum.proven },
    { score: 6, proven: true },
  );
  assert.equal(exact.body.conformations, 802075);
  await checkExamples(one, exact.body);

  // On `two` the exact budget is 1000 conformations: auto estimates.
  const est = await request(two, `/v1/evaluations/square/${SHORT}`);
  assert.equal(est.status, 200, est.text);
  assertValid('evaluation', est.body);
  assert.equal(est.body.method, 'estimate');
  assert.ok(est.body.optimum.score <= 6, `optimum ${est.body.optimum.score} above the exact 6`);
  if (est.body.optimum.proven) assert.equal(est.body.optimum.score, 6);
  // Within 10 % of the exact total, and every exact score above 1e-6 of
  // the total within 5 standard errors.
  assert.ok(Math.abs(est.body.conformations / 802075 - 1) < 0.1, String(est.body.conformations));
  for (let s = 0; s < exact.body.histogram.length; s++) {
    const truth = exact.body.histogram[s];
    if (truth / 802075 < 1e-3) continue;
    const rel = Math.abs(est.body.histogram[s] / truth - 1);
    assert.ok(rel < 5 * est.body.histogram_error[s] + 0.02, `score ${s}: ${est.body.histogram[s]} vs ${truth}`);
  }
  await checkExamples(two, est.body);
  // method=exact on the same server is refused before any work.
  assertProblem(await request(two, `/v1/evaluations/square/${SHORT}?method=exact`), 422, 'over-budget');
});

test('a cubic 40-mer is estimated; its picture draws', async () => {
  const res = await request(one, `/v1/evaluations/cubic/${CUBIC}`);
  assert.equal(res.status, 200, res.text);
  assertValid('evaluation', res.body);
  assert.equal(res.body.method, 'estimate');
  assert.equal(res.body.seed, 1);
  assert.match(res.body.optimum.fold, /^[RLUDFB]{39}$/);
  await checkExamples(one, res.body);
  const svg = await request(one, `/v1/evaluations/square/${LONG}.svg?seed=3`);
  assert.equal(svg.status, 200, svg.text);
  assert.match(svg.headers.get('content-type'), /^image\/svg\+xml/);
  assert.match(svg.text, /<svg[^>]*viewBox/);
});
