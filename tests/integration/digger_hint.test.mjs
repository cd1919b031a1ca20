// digger_hint.test.mjs - POST /v1/digger/hint over real HTTP: a level made
// by a digger job, its optimal play walked tap by tap with hints (every
// answer schema-valid, the hint one of an optimal play, the announced taps
// falling by one, a win in exactly the optimum), a dead position answering
// winnable: false with its undo count, a solved play, and the bodies the
// kind refuses (422 naming the JSON path, 400 for bad JSON, 404 for a kind
// without hints).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  assertProblem,
  assertValid,
  CHECK_SOLVER_STATES,
  largestDiggerLevel,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

const server = useServer({ args: ['--workers', '2'] });

async function hint(body, kind = 'digger') {
  const res = await request(server, `/v1/${kind}/hint`, { method: 'POST', json: body });
  return res;
}

/** A hard digger level from a job: its level document. */
async function hardLevel(seed) {
  const accepted = await submit(server, { kind: 'digger', params: { difficulty: 'hard' }, seed });
  const job = await waitForJob(server, accepted.id, { timeoutMs: 60_000 });
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  const res = await request(server, `/v1/levels/${job.level_ids[0]}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

let level;

test('hints walk a generated level to a win in exactly its optimum', async () => {
  level = await hardLevel(17);
  const optimum = level.solution.optimal.turns;
  const moves = [];
  for (let left = optimum; left > 0; left--) {
    const res = await hint({ level: level.puzzle, moves });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assertValid('digger/hint-result', res.body);
    const h = res.body;
    assert.equal(h.solved, false);
    assert.equal(h.winnable, true);
    assert.equal(h.undo, 0);
    assert.equal(h.turns, moves.length);
    assert.equal(h.taps_needed, left, res.text);
    assert.equal(h.reason, undefined);
    moves.push(h.hint);
  }
  const done = await hint({ level: level.puzzle, moves });
  assert.equal(done.status, 200, done.text);
  assertValid('digger/hint-result', done.body);
  assert.equal(done.body.solved, true);
  assert.equal(done.body.winnable, true);
  assert.equal(done.body.taps_needed, 0);
  assert.equal(done.body.hint, null);
  // The check agrees: the hinted play is optimal.
  const check = await request(server, '/v1/digger/check', { method: 'POST', json: { level: level.puzzle, moves } });
  assert.equal(check.status, 200, check.text);
  assert.equal(check.body.solved, true);
  assert.equal(check.body.turns, optimum);
  assert.equal(check.body.stars, 3);
  // The level's own optimal play is hinted at along its way too.
  const taps = level.solution.optimal.taps;
  for (let i = 0; i < taps.length; i++) {
    const res = await hint({ level: level.puzzle, moves: taps.slice(0, i) });
    assert.equal(res.status, 200, res.text);
    assertValid('digger/hint-result', res.body);
    assert.equal(res.body.taps_needed, optimum - i);
  }
});

test('a dead position answers winnable: false and how many taps to undo', async () => {
  level ??= await hardLevel(17);
  // The first one- or two-tap play (in slot order, refused taps skipped)
  // that the hint calls dead.
  const arrows = level.puzzle.arrows.map(({ side, index }) => ({ side, index }));
  let found = null;
  for (const first of arrows) {
    const res = await hint({ level: level.puzzle, moves: [first] });
    if (res.status === 422) continue; // not a tap the rules allow at the start
    assert.equal(res.status, 200, res.text);
    assertValid('digger/hint-result', res.body);
    if (res.body.winnable === false) {
      found = { moves: [first], answer: res.body };
      break;
    }
    for (const second of arrows) {
      const two = await hint({ level: level.puzzle, moves: [first, second] });
      if (two.status === 422) continue;
      assert.equal(two.status, 200, two.text);
      assertValid('digger/hint-result', two.body);
      if (two.body.winnable === false) {
        found = { moves: [first, second], answer: two.body };
        break;
      }
    }
    if (found) break;
  }
  assert.ok(found, 'no dead position within two taps');
  const { moves, answer } = found;
  assert.equal(answer.solved, false);
  assert.equal(answer.solver.status, 'unsolvable');
  assert.ok(answer.undo >= 1 && answer.undo <= moves.length, JSON.stringify(answer));
  assert.equal(answer.reason, undefined);
  assert.ok(answer.taps_needed >= 1);
  // The position after the undo is winnable with that many taps, and its
  // hint is the one the dead position gave.
  const back = await hint({ level: level.puzzle, moves: moves.slice(0, moves.length - answer.undo) });
  assert.equal(back.status, 200, back.text);
  assert.equal(back.body.winnable, true);
  assert.equal(back.body.taps_needed, answer.taps_needed);
  assert.deepEqual(back.body.hint, answer.hint);
  // Undoing one tap fewer would still be dead.
  if (answer.undo > 1) {
    const less = await hint({ level: level.puzzle, moves: moves.slice(0, moves.length - answer.undo + 1) });
    assert.equal(less.body.winnable, false);
  }
});

test('hint: bodies the kind refuses get 422 naming the JSON path, bad JSON 400, other kinds 404', async () => {
  level ??= await hardLevel(17);
  const cases = [
    [{ level: level.puzzle, moves: [{ side: 'up', index: 0 }] }, /^moves\[0\]\.side: /],
    [{ level: level.puzzle }, /^moves: /],
    [{ level: { ...level.puzzle, turns: -1 }, moves: [] }, /^level\.turns: /],
    [{ level: level.puzzle, moves: [], extra: 1 }, /^body: unknown key/],
    [[], /^body: /],
  ];
  for (const [body, detail] of cases) {
    const res = await hint(body);
    const problem = assertProblem(res, 422, 'invalid-hint');
    assert.match(problem.detail, detail);
    // The check refuses the same body with the same detail.
    const check = await request(server, '/v1/digger/check', { method: 'POST', json: body });
    assert.equal(assertProblem(check, 422, 'invalid-check').detail, problem.detail);
  }
  // A move after the win is refused as the check refuses it.
  const taps = level.solution.optimal.taps;
  const after = await hint({ level: level.puzzle, moves: [...taps, taps[0]] });
  assert.match(assertProblem(after, 422, 'invalid-hint').detail, new RegExp(`^moves\\[${taps.length}\\]: `));
  const bad = await request(server, '/v1/digger/hint', {
    method: 'POST',
    body: '{"level": ',
    headers: { 'content-type': 'application/json' },
  });
  assertProblem(bad, 400, 'invalid-json');
  assertProblem(await hint({ level: level.puzzle, moves: [] }, 'lattice'), 404, 'not-found');
  assertProblem(await hint({}, 'chess'), 404, 'not-found');
});

test('hint: the largest hand-made level the reader takes is answered, the solver stopped at its work bound', async () => {
  // As the check's test (digger.test.mjs): 10 x 6, six machines, every
  // arrow at 255 uses, webs over gold needing 2 visits. The solver must
  // stop at its bound and say so. (No wall-clock limit: this machine's
  // load decides the time; the bound on the work is what holds.)
  const big = largestDiggerLevel();
  const res = await hint({ level: big, moves: [{ side: 'left', index: 0 }] });
  assert.equal(res.status, 200, res.text);
  assertValid('digger/hint-result', res.body);
  assert.equal(res.body.turns, 1);
  assert.equal(res.body.winnable, null);
  assert.equal(res.body.undo, null);
  assert.equal(res.body.hint, null);
  assert.equal(res.body.solver.status, 'unknown');
  assert.match(res.body.reason, /work bound/);
  assert.ok(res.body.solver.states > 0 && res.body.solver.states <= CHECK_SOLVER_STATES, res.body.solver.states);
});

test('hint: webs needing more visits than there are turns are proved dead, nothing to undo', async () => {
  // The same level with 255 visits per web: 255 entries into one cell
  // take at least 255 taps, and the budget is 96 turns with nothing
  // giving turns back, so no play wins, from the start or after any tap.
  const res = await hint({ level: largestDiggerLevel(255), moves: [{ side: 'left', index: 0 }] });
  assert.equal(res.status, 200, res.text);
  assertValid('digger/hint-result', res.body);
  assert.equal(res.body.winnable, false);
  assert.equal(res.body.hint, null);
  assert.equal(res.body.undo, null);
  assert.equal(res.body.solver.status, 'unsolvable');
});
