// numbers.test.mjs - numbers echo as written (issue 12, item 8).
//
// jansson alone writes every real with 17 significant digits, so a
// mutation_rate of 0.2 came back as 0.20000000000000001. The service now
// writes each real in its shortest round-trip form. The oracle is
// ECMAScript's Number.prototype.toString, which the language defines as the
// shortest decimal that reads back as the same double: every real in a raw
// response must carry exactly those significant digits. And ids stay
// reproducible: the echoed params, submitted again with the same seed, give
// the same levels.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { request, submit, useServer, waitForJob } from './harness.mjs';

const server = useServer({ args: ['--workers', '2'] });

/** The significant digits of a decimal text: "0.0250" -> "25", "1.5e-07" -> "15". */
function digits(text) {
  const mantissa = text.replace(/^-/, '').split(/[eE]/)[0].replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '') || '0';
}

/** Every number token of a JSON text that is a real (has '.' or an exponent), outside strings. */
function reals(text) {
  const out = [];
  const re = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
  for (const m of text.matchAll(re)) {
    if (m[0][0] !== '"' && /[.eE]/.test(m[0])) out.push(m[0]);
  }
  return out;
}

function assertShortest(text, where) {
  const all = reals(text);
  assert.ok(all.length > 0, `${where}: no reals to check`);
  for (const t of all) {
    assert.equal(digits(t), digits(String(Number(t))), `${where}: ${t} is not the shortest form of ${Number(t)}`);
  }
  return all.length;
}

const JOBS = [
  { kind: 'lattice', seed: 11, params: { length: 10, generations: 3, population: 6, mutation_rate: 0.2, star_two_fraction: 0.1, h_min: 0.3 } },
  { kind: 'racetrack', seed: 12, params: { population: 4, generations: 2, player_skill: 0.7, target: [0.1, 0.3, 0.6, 0.3], mutation_rate: 0.15 } },
];

for (const body of JOBS) {
  test(`${body.kind}: params echo as written and every real is shortest; echoed params give the same levels`, async (t) => {
    const accepted = await request(server, '/v1/jobs', { method: 'POST', json: body });
    assert.equal(accepted.status, 202, accepted.text);
    for (const [key, value] of Object.entries(body.params)) {
      const written = JSON.stringify(value);
      assert.ok(accepted.text.includes(`"${key}":${written}`), `job echo lacks "${key}":${written}: ${accepted.text}`);
    }
    const job = await waitForJob(server, accepted.body.id);
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    const raw = await request(server, `/v1/jobs/${job.id}`);
    let n = assertShortest(raw.text, 'job');
    const level = await request(server, `/v1/levels/${job.level_ids[0]}`);
    assert.equal(level.status, 200);
    for (const [key, value] of Object.entries(body.params)) {
      assert.ok(level.text.includes(`"${key}":${JSON.stringify(value)}`), `level lacks "${key}"`);
    }
    n += assertShortest(level.text, 'level');
    t.diagnostic(`${n} reals checked against Number.prototype.toString`);

    // The echo, sent back as it came, reproduces the levels.
    const again = await submit(server, { kind: body.kind, seed: body.seed, params: level.body.params });
    const rerun = await waitForJob(server, again.id);
    assert.equal(rerun.state, 'succeeded');
    assert.deepEqual(rerun.level_ids, job.level_ids);
  });
}
