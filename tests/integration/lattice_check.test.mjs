// lattice_check.test.mjs - POST /v1/lattice/check over real HTTP against the
// exact engine's own folds: every example fold of an evaluation (GET
// /v1/evaluations/...) is valid and scores the score it is the example of,
// with the stars its evaluation's thresholds give; corrupted folds (a
// collision, a truncation, an extra move, a bad letter, a 3-D move on the
// square lattice) answer valid: false naming the first bad move; a lattice
// job's level rates its own band folds one, two and three stars; bodies
// the kind refuses get 422 naming the JSON path. Every request and answer
// is validated against schema/lattice/check-*.schema.json.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SCALE, assertProblem, assertValid, getJson, request, submit, useServer, waitForJob } from './harness.mjs';

const server = useServer({ args: ['--workers', '2'] });

const PATH = '/v1/lattice/check';

/** POSTs a body the schema allows; asserts a 200 answer valid against the schema. */
async function check(body) {
  assertValid('lattice/check-request', body);
  const res = await request(server, PATH, { method: 'POST', json: body });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assertValid('lattice/check-result', res.body);
  return res.body;
}

/** Stars by brute force: how many thresholds the score reaches. */
const starsOf = (score, t) => t.filter((x) => score >= x).length;

const OPPOSITE = { R: 'L', L: 'R', U: 'D', D: 'U', F: 'B', B: 'F' };

// Square lengths 8..14 and cubic 8..10, as the evaluation endpoint answers them.
const SEQUENCES = [
  ['square', 'HHHHHHHH'],
  ['square', 'HPHPPHHPHH'],
  ['square', 'HHPPHPHPHHH'],
  ['square', 'HPPHPHHPPHPH'],
  ['square', 'HPHHPPHHPHPHH'],
  ['square', 'HPHPPHHPHPPHPH'],
  ['cubic', 'HHHHHHHH'],
  ['cubic', 'HPHHPPHHH'],
  ['cubic', 'HPHPPHHPHH'],
  ['cubic', 'PHHPHPHHPP'],
];

test('every example fold of an evaluation is valid, scores what it claims and earns its stars', async () => {
  let checked = 0;
  for (const [lattice, sequence] of SEQUENCES) {
    const ev = await getJson(server, `/v1/evaluations/${lattice}/${sequence}`);
    assertValid('evaluation', ev);
    const t = ev.stars.thresholds;
    assert.ok(Array.isArray(t), `${sequence} has thresholds`);
    const examples = Object.entries(ev.examples);
    assert.equal(examples.length, ev.distinct_scores);
    for (const [key, fold] of examples) {
      const score = Number(key);
      const res = await check({ sequence, lattice, fold, thresholds: t });
      const what = `${lattice} ${sequence} ${fold}`;
      assert.equal(res.valid, true, `${what}: ${res.reason}`);
      assert.equal(res.score, score, what);
      assert.equal(res.stars, starsOf(score, t), what);
      assert.equal(res.next_star_at, res.stars < 3 ? t[res.stars] : null, what);
      assert.deepEqual(
        [res.sequence, res.lattice, res.length, res.thresholds],
        [sequence, lattice, sequence.length, t],
      );
      // Without thresholds: the same score, no stars.
      const bare = await check({ sequence, lattice, fold });
      assert.equal(bare.score, score, what);
      assert.equal(bare.stars, null);
      assert.equal(bare.thresholds, null);
      checked++;
    }
    // Each threshold is reached exactly by its own example: 1, 2, 3 stars.
    for (let i = 0; i < 3; i++) {
      const res = await check({ sequence, lattice, fold: ev.examples[t[i]], thresholds: t });
      assert.equal(res.stars, i + 1, `${sequence} threshold ${t[i]}`);
    }
  }
  assert.ok(checked >= 50, `only ${checked} example folds`);
});

test('corrupted folds answer valid: false with the first bad move', async () => {
  for (const [lattice, sequence] of SEQUENCES) {
    const ev = await getJson(server, `/v1/evaluations/${lattice}/${sequence}`);
    const fold = ev.examples[ev.max_score];
    const n = fold.length;
    const k = Math.floor(n / 2);
    const cases = [
      // Back onto residue k - 1.
      [fold.slice(0, k) + OPPOSITE[fold[k - 1]] + fold.slice(k + 1), 'collision', k, k - 1],
      [fold.slice(0, k), 'missing_move', k],
      ['', 'missing_move', 0],
      [`${fold}R`, 'extra_move', n],
      [`${fold}${fold}`, 'extra_move', n],
      [fold.slice(0, k) + 'X' + fold.slice(k + 1), 'bad_move', k],
      [fold.slice(0, k) + fold[k].toLowerCase() + fold.slice(k + 1), 'bad_move', k],
      // A bad letter comes before the moves missing after it.
      [fold.slice(0, k) + '?', 'bad_move', k],
    ];
    if (lattice === 'square') cases.push([fold.slice(0, k) + 'F' + fold.slice(k + 1), 'bad_move', k]);
    for (const [bad, fault, step, other] of cases) {
      const what = `${lattice} ${sequence} "${bad}"`;
      const res = await check({ sequence, lattice, fold: bad, thresholds: ev.stars.thresholds });
      assert.equal(res.valid, false, what);
      assert.equal(res.fault, fault, `${what}: ${res.reason}`);
      assert.equal(res.step, step, `${what}: ${res.reason}`);
      assert.ok(res.reason.startsWith(`fold[${step}]: `), `${what}: ${res.reason}`);
      assert.equal(res.score, null);
      assert.equal(res.stars, null);
      assert.equal(res.next_star_at, null);
      if (fault === 'collision') {
        assert.equal(res.collides_with, other, what);
        assert.match(res.reason, new RegExp(`on the site of residue ${other} `));
      } else {
        assert.equal(res.collides_with, undefined, what);
      }
      if (lattice === 'square' && bad.includes('F'))
        assert.match(res.reason, /'F' is not a move on the square lattice \(allowed: R, L, U, D\)/);
    }
  }
  // An all-P chain scores 0 on the all-H chain's best fold.
  const ev = await getJson(server, '/v1/evaluations/square/HHHHHHHHHHHH');
  const res = await check({ sequence: 'PPPPPPPPPPPP', lattice: 'square', fold: ev.examples[ev.max_score] });
  assert.equal(res.valid, true);
  assert.equal(res.score, 0);
});

test("a lattice level rates its own band folds one, two and three stars", async () => {
  const accepted = await submit(server, {
    kind: 'lattice',
    seed: 7,
    params: { length: 12, population: 8, generations: 3, count: 2 },
  });
  const job = await waitForJob(server, accepted.id, { timeoutMs: 60_000 * SCALE });
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  assert.ok(job.level_ids.length >= 1);
  for (const id of job.level_ids) {
    const level = await getJson(server, `/v1/levels/${id}`);
    assertValid('lattice/level', level);
    const t = level.stars.thresholds;
    const { band_folds: bands, best_fold: best, best_score: bestScore } = level.solution;
    for (const [i, name] of ['one', 'two', 'three'].entries()) {
      const res = await check({ level, fold: bands[name] });
      assert.equal(res.valid, true, res.reason);
      assert.equal(res.score, t[i], name);
      assert.equal(res.stars, i + 1, name);
      assert.deepEqual(res.thresholds, t);
    }
    const top = await check({ level, fold: best });
    assert.equal(top.score, bestScore);
    assert.equal(top.stars, 3);
    // With the level's own sequence and lattice too: the same answer.
    const { sequence, lattice } = level.puzzle;
    assert.deepEqual(await check({ level, fold: best, sequence, lattice }), top);
    // The same as sending the chain and the thresholds.
    assert.deepEqual(await check({ sequence, lattice, fold: best, thresholds: t }), top);
    // The straight chain: no contact, no star.
    const straight = await check({ level, fold: 'R'.repeat(sequence.length - 1) });
    assert.deepEqual([straight.score, straight.stars, straight.next_star_at], [0, 0, t[0]]);
  }
});

test('bodies the kind refuses get 422 naming the JSON path', async () => {
  const level = {
    kind: 'lattice',
    puzzle: { lattice: 'square', length: 4, sequence: 'HPPH' },
    stars: { strategy: 'paper', metric: 'contacts', better: 'higher', thresholds: [1, 2, 3] },
  };
  const chain = { sequence: 'HPPH', lattice: 'square', fold: 'RUL' };
  const cases = [
    [[], /^body: must be an object with fold, sequence and lattice/],
    [{ ...chain, score: 1 }, /^body: unknown key "score"/],
    [{ lattice: 'square', fold: 'RUL' }, /^sequence: must be a string of 1\.\.64 letters H or P, not missing/],
    [{ ...chain, sequence: 'HPXH' }, /^sequence\[2\]: 'X' is not a residue \(allowed: H, P\)/],
    [{ ...chain, sequence: '' }, /^sequence: 0 residues is out of range \(allowed: 1\.\.64\)/],
    [{ ...chain, sequence: 'H'.repeat(65) }, /^sequence: 65 residues is out of range/],
    [{ ...chain, sequence: ['H'] }, /^sequence: must be a string .* not an array/],
    [{ ...chain, lattice: 'hexagonal' }, /^lattice: unknown lattice "hexagonal" \(allowed: square, cubic\)/],
    [{ ...chain, lattice: undefined }, /^lattice: must be "square" or "cubic", not missing/],
    [{ ...chain, fold: undefined }, /^fold: must be a string of moves/],
    [{ ...chain, fold: 12 }, /^fold: must be a string of moves.* not an integer/],
    [{ ...chain, thresholds: [1, 2] }, /^thresholds: must be \[one, two, three\]/],
    [{ ...chain, thresholds: [1, 2, 2] }, /^thresholds\[2\]: 2 must be above thresholds\[1\]/],
    [{ ...chain, thresholds: [0, 2, 3] }, /^thresholds\[0\]: must be an integer 1\.\.129/],
    [{ ...chain, thresholds: [1, '2', 3] }, /^thresholds\[1\]: must be an integer/],
    [{ level: [], fold: 'RUL' }, /^level: must be an object/],
    [{ level: { ...level, kind: 'digger' }, fold: 'RUL' }, /^level\.kind: must be "lattice", not "digger"/],
    [{ level: level.puzzle, fold: 'RUL' }, /^level\.puzzle: must be the level's puzzle object, not missing/],
    [{ level: { puzzle: level.puzzle }, fold: 'RUL' }, /^level\.stars: missing/],
    [{ level: { ...level, puzzle: { lattice: 'cubic' } }, fold: 'RUL' }, /^level\.puzzle\.sequence: must be a string/],
    [{ level: { ...level, stars: { thresholds: [3, 2, 1] } }, fold: 'RUL' }, /^level\.stars\.thresholds\[1\]/],
    [{ level: { ...level, stars: { better: 'lower', thresholds: [1, 2, 3] } }, fold: 'RUL' }, /^level\.stars\.better: must be "higher"/],
    [{ level, fold: 'RUL', sequence: 'HPPP' }, /^sequence: HPPP is not the level's puzzle\.sequence HPPH/],
    [{ level, fold: 'RUL', lattice: 'cubic' }, /^lattice: cubic is not the level's puzzle\.lattice square/],
    [{ level, fold: 'RUL', thresholds: [1, 2, 3] }, /^thresholds: send thresholds or level, not both/],
  ];
  for (const [body, detail] of cases) {
    const res = await request(server, PATH, { method: 'POST', json: body });
    const problem = assertProblem(res, 422, 'invalid-check');
    assert.match(problem.detail, detail, JSON.stringify(body));
    assert.equal(problem.instance, PATH);
  }
  assertProblem(await request(server, PATH, { method: 'POST', body: '{"fold": ' }), 400, 'invalid-json');
  // The well-formed level is answered.
  const ok = await check({ level, fold: 'RUL' });
  assert.deepEqual([ok.valid, ok.score, ok.stars, ok.next_star_at], [true, 1, 1, 2]);
});

test('a pure function: the same body, the same bytes', async () => {
  const body = { sequence: 'HPHPPHHPHPPHPH', lattice: 'square', fold: 'RRRULLULDLDDRR' };
  const first = await request(server, PATH, { method: 'POST', json: body });
  assert.equal(first.status, 200, first.text);
  for (let i = 0; i < 5; i++) {
    const again = await request(server, PATH, { method: 'POST', json: body });
    assert.equal(again.text, first.text);
  }
});
