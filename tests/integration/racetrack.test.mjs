// racetrack.test.mjs - a racetrack level from a real job, checked over real
// HTTP and raced again on the command line: POST /v1/racetrack/check with
// laps at, just over and just under the level's own thresholds (stars in
// tenths of a second), the player's simulated lap (the stars the search
// recorded), splits, a lap faster than the top speed allows (valid: false),
// bodies the kind refuses (422 naming the JSON path); then `starforge race`
// on the level the service serves reproduces its per-segment PX, also for a
// level of an uploaded experience model given with --px-model.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  BIN,
  ROOT,
  SCALE,
  assertProblem,
  assertValid,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

const server = useServer({ args: ['--workers', '2'] });

const PARAMS = { population: 6, generations: 2, races_per_genome: 4, star_seeds: 2 };

/** Runs a racetrack job to success; resolves with its first level document. */
async function racetrackLevel(params, seed) {
  const accepted = await submit(server, { kind: 'racetrack', params, seed });
  const job = await waitForJob(server, accepted.id, { timeoutMs: 120_000 * SCALE });
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  const res = await request(server, `/v1/levels/${job.level_ids[0]}`);
  assert.equal(res.status, 200, res.text);
  assertValid('racetrack/level', res.body);
  return res.body;
}

async function check(body) {
  assertValid('racetrack/check-request', body);
  const res = await request(server, '/v1/racetrack/check', { method: 'POST', json: body });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assertValid('racetrack/check-result', res.body);
  return res.body;
}

let level;

test('check: stars at, over and under each threshold, in tenths of a second', async () => {
  level = await racetrackLevel(PARAMS, 31);
  const t = level.stars.thresholds;
  assert.ok(t[0] > t[1] && t[1] > t[2], JSON.stringify(t));
  for (let i = 0; i < 3; i++) {
    // At the threshold and 0.04 s over: the same tenth, i + 1 stars; 0.06 s
    // over rounds to the next tenth: i stars; just under: i + 1.
    for (const [lap, stars] of [
      [t[i], i + 1],
      [t[i] + 0.04, i + 1],
      [t[i] + 0.06, i],
      [t[i] - 0.01, i + 1],
    ]) {
      const res = await check({ level, lap_time: lap });
      assert.equal(res.valid, true);
      assert.equal(res.stars, stars, `lap ${lap} under ${JSON.stringify(t)}`);
      assert.deepEqual(res.thresholds, t);
      assert.equal(res.lap_time, lap);
      assert.equal(res.next_star_at, stars < 3 ? t[stars] : null);
      assert.equal(res.length, level.puzzle.length);
    }
  }
  // The player's simulated lap earns what the search recorded for it.
  const lap = level.solution.player_lap;
  if (lap.finished) assert.equal((await check({ level, lap_time: lap.time })).stars, lap.stars);
});

test('check: without the spline, with splits, and an impossible lap', async () => {
  const t = level.stars.thresholds;
  // A client may leave the spline out: the same answer.
  const slim = structuredClone(level);
  delete slim.puzzle.spline;
  delete slim.puzzle.checkpoints;
  assert.deepEqual(await check({ level: slim, lap_time: t[1] }), await check({ level, lap_time: t[1] }));

  // Splits at each segment's share of the lap.
  const segs = level.puzzle.segments;
  const splits = segs.slice(1).map((s) => (t[1] * s.start) / level.puzzle.length);
  const res = await check({ level: slim, lap_time: t[1], checkpoints: splits });
  assert.equal(res.valid, true);
  assert.equal(res.stars, 2);
  assert.equal(res.segments.length, segs.length);
  res.segments.forEach((s, i) => {
    assert.equal(s.index, i);
    assert.equal(s.start, segs[i].start);
    assert.equal(s.at, i ? splits[i - 1] : 0);
  });

  // Faster than the whole track at 60 m/s.
  const fast = await check({ level: slim, lap_time: (level.puzzle.length / 60) * 0.9 });
  assert.equal(fast.valid, false);
  assert.equal(fast.stars, null);
  assert.equal(fast.next_star_at, null);
  assert.match(fast.reason, /^lap_time .* is faster than any lap can be/);
  // A plausible lap with one impossible split (the second segment in 0.01 s).
  const bad = [...splits];
  bad[1] = bad[0] + 0.01;
  const split = await check({ level: slim, lap_time: t[1], checkpoints: bad });
  assert.equal(split.valid, false);
  assert.match(split.reason, /^segment 1, from checkpoints\[0\] to checkpoints\[1\]/);
});

test('check: bodies the kind refuses get 422 naming the JSON path', async () => {
  const n = level.puzzle.segments.length;
  const cases = [
    [[], /^body: must be an object/],
    [{ level, lap_time: 30, score: 3 }, /^body: unknown key "score"/],
    [{ lap_time: 30 }, /^level: must be an object/],
    // A puzzle alone has no thresholds.
    [{ level: level.puzzle, lap_time: 30 }, /^level\.stars: missing/],
    [{ level: { ...level, kind: 'digger' }, lap_time: 30 }, /^level\.kind: must be "racetrack"/],
    [{ level: { ...level, stars: { thresholds: [1, 2, 3] } }, lap_time: 30 }, /^level\.stars\.thresholds\[1\]/],
    [{ level: { ...level, puzzle: { length: 500 } }, lap_time: 30 }, /^level\.puzzle\.segments:/],
    [{ level }, /^lap_time: must be a positive finite number/],
    [{ level, lap_time: -1 }, /^lap_time: must be a positive finite number of seconds, got -1/],
    [{ level, lap_time: '30' }, /^lap_time: .*not a string/],
    [{ level, lap_time: 30, checkpoints: [1] }, new RegExp(`^checkpoints: must be an array of ${n - 1} split times`)],
    [{ level, lap_time: 30, checkpoints: Array.from({ length: n - 1 }, (_, i) => 20 - i) }, /^checkpoints\[1\]: /],
  ];
  for (const [body, detail] of cases) {
    const res = await request(server, '/v1/racetrack/check', { method: 'POST', json: body });
    const problem = assertProblem(res, 422, 'invalid-check');
    assert.match(problem.detail, detail, JSON.stringify(body).slice(0, 200));
    assert.equal(problem.instance, '/v1/racetrack/check');
  }
  assertProblem(await request(server, '/v1/racetrack/check', { method: 'POST', body: '{"level": ' }), 400, 'invalid-json');
});

/** `starforge race ARGS` with `input` on stdin: its exit status, stdout and stderr. */
function race(args, input) {
  const r = spawnSync(BIN, ['race', ...args], { input, encoding: 'utf8', cwd: ROOT, timeout: 60_000 * SCALE });
  assert.equal(r.error, undefined, String(r.error));
  return r;
}

/** The race output reproduces `lv`'s own PX, segment by segment, exactly. */
function assertOwnPx(out, lv) {
  assert.equal(out.level_id, lv.id);
  assert.deepEqual(out.race_seeds, lv.stats.race_seeds);
  assert.equal(out.races, lv.stats.race_seeds.length);
  assert.deepEqual(
    out.segments.map((s) => [s.target, s.simulated_px, s.simulated_px_sd]),
    lv.puzzle.segments.map((s) => [s.target_px, s.simulated_px, s.simulated_px_sd]),
  );
  assert.equal(out.error, -lv.stats.fitness.value);
  assert.equal(out.ratio, 1);
}

test('starforge race reproduces the served level\'s PX on its own seeds', async () => {
  const own = race([], JSON.stringify(level));
  assert.equal(own.status, 0, own.stderr);
  assert.equal(own.stderr, '');
  assertOwnPx(JSON.parse(own.stdout), level);
  const held = race(['--race-seed', '3', '--races', '6'], JSON.stringify(level));
  assert.equal(held.status, 0, held.stderr);
  const out = JSON.parse(held.stdout);
  assert.equal(out.races, 6);
  assert.notDeepEqual(out.race_seeds, level.stats.race_seeds.slice(0, 6));
  assert.equal(out.segments.length, level.puzzle.segments.length);
  const bad = race(['--races', '65', '--race-seed', '1'], JSON.stringify(level));
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^starforge race: --races '65' is not an integer in 1\.\.64\n$/);
});

test('starforge race --px-model: a level of an uploaded model', async () => {
  const csv = path.join(ROOT, 'data/px/synthetic.csv');
  const up = await request(server, '/v1/px-models?name=shipped', {
    method: 'POST',
    body: fs.readFileSync(csv, 'utf8'),
    headers: { 'content-type': 'text/csv' },
  });
  assert.equal(up.status, 201, up.text);
  const lv = await racetrackLevel({ ...PARAMS, px_model: 'shipped' }, 32);
  const refused = race([], JSON.stringify(lv));
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /px_model 'shipped' is an uploaded model.*--px-model FILE/);
  const own = race(['--px-model', csv], JSON.stringify(lv));
  assert.equal(own.status, 0, own.stderr);
  assertOwnPx(JSON.parse(own.stdout), lv);
});
