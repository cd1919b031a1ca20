// pxmodels.test.mjs - uploaded experience models (issue 5): POST
// /v1/px-models in CSV and JSON, GET back byte for byte with a strong ETag,
// 409 for a taken name, 422 naming the problem in a bad trace set, 415 for
// another content type, 400 for a bad name; a racetrack job naming an
// uploaded model succeeds, and one naming a missing model is refused at
// submit.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SCALE, assertProblem, assertValid, request, submit, useServer, waitForJob } from './harness.mjs';

const server = useServer({ args: ['--workers', '1'] });

const FEATURES = ['speed', 'speed_sd', 'rel_speed', 'proximity', 'gained', 'lost', 'standing', 'braking'];

// The first rows of data/px/synthetic.csv, with a comment and CRLF on one
// line: what a designer's spreadsheet export might look like.
const CSV =
  '# playtest, June\n' +
  'speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking,intensity\r\n' +
  '0.588390,0.043676,0.500000,0.650748,0.000000,0.000000,0.000000,0.000000,0.349667\n' +
  '0.279787,0.144800,0.500000,0.000000,0.000000,0.000000,0.000000,0.000000,0.097450\n' +
  '0.445766,0.240148,0.496382,0.987500,0.000000,0.000000,0.666667,0.600000,0.541503\n' +
  '0.739715,0.233187,0.487081,0.527175,0.000000,0.000000,0.000000,0.600000,0.342193\n' +
  '0.757109,0.111547,0.486786,0.387948,0.333333,0.000000,0.520000,0.000000,0.466778\n' +
  '0.857664,0.096177,0.492537,0.818316,0.000000,0.333333,0.446667,0.000000,0.773836\n';

// The same kind of set as JSON, features in another order than canonical.
const JSON_SET = {
  comment: 'hand-made',
  features: ['braking', ...FEATURES.slice(0, 7)],
  traces: [
    { window: [0, 0.5, 0.1, 0.5, 0.2, 0, 0, 0.3], intensity: 0.2 },
    { window: [0.6, 0.9, 0.05, 0.5, 0.9, 0.33, 0, 0.1], intensity: 0.9 },
    { window: [0, 0.3, 0.2, 0.5, 0, 0, 0.33, 1], intensity: 0.05 },
  ],
};
const JSON_TEXT = JSON.stringify(JSON_SET, null, 1);

function upload(name, body, type) {
  const q = name === undefined ? '' : `?name=${encodeURIComponent(name)}`;
  const headers = type ? { 'content-type': type } : {};
  return request(server, `/v1/px-models${q}`, { method: 'POST', body, headers });
}

test('a CSV trace set uploads and comes back byte for byte', async () => {
  const res = await upload('june-csv', CSV, 'text/csv');
  assert.equal(res.status, 201, res.text);
  assert.equal(res.headers.get('location'), '/v1/px-models/june-csv');
  assertValid('px-model', res.body);
  assert.deepEqual(res.body, { name: 'june-csv', format: 'csv', traces: 6, features: FEATURES });

  const got = await request(server, '/v1/px-models/june-csv');
  assert.equal(got.status, 200);
  assert.match(got.headers.get('content-type'), /^text\/csv/);
  assert.equal(got.text, CSV);
  const etag = got.headers.get('etag');
  assert.match(etag, /^"[0-9a-f]{32}(-gz)?"$/);
  assert.equal(got.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const again = await request(server, '/v1/px-models/june-csv', { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
});

test('a JSON trace set uploads (charset parameter allowed) and comes back byte for byte', async () => {
  const res = await upload('hand_made', JSON_TEXT, 'application/json; charset=utf-8');
  assert.equal(res.status, 201, res.text);
  assertValid('px-model', res.body);
  assert.equal(res.body.format, 'json');
  assert.equal(res.body.traces, 3);
  const got = await request(server, '/v1/px-models/hand_made');
  assert.equal(got.status, 200);
  assert.match(got.headers.get('content-type'), /^application\/json/);
  assert.equal(got.text, JSON_TEXT);
});

test('a taken name is 409, the first upload stays', async () => {
  assertProblem(await upload('june-csv', JSON_TEXT, 'application/json'), 409, 'px-model-exists');
  assertProblem(await upload('synthetic', CSV, 'text/csv'), 409, 'px-model-exists');
  const got = await request(server, '/v1/px-models/june-csv');
  assert.equal(got.text, CSV);
});

test('bad trace sets are 422 with a detail naming the problem', async () => {
  const header = 'speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking,intensity\n';
  const cases = [
    ['non-numeric', header + '0.5,0.1,0.5,0.5,0,0,0,abc,0.4\n', 'text/csv', /line 2.*braking.*abc.*not a number/],
    ['label outside 0..1', header + '0.5,0.1,0.5,0.5,0,0,0,0,1.5\n', 'text/csv', /line 2.*intensity.*1\.5.*0\.\.1/],
    ['missing column', 'speed,speed_sd,rel_speed,proximity,gained,lost,standing,intensity\n0.5,0.1,0.5,0.5,0,0,0,0.4\n',
      'text/csv', /missing column "braking"/],
    ['empty', '', 'text/csv', /no header row/],
    ['header only', header, 'text/csv', /empty/],
    ['JSON label outside 0..1', JSON.stringify({ ...JSON_SET, traces: [{ window: JSON_SET.traces[0].window, intensity: 2 }] }),
      'application/json', /traces\[0\]\.intensity/],
    ['JSON non-numeric', JSON.stringify({ ...JSON_SET, traces: [{ window: [0, 0, 0, 'x', 0, 0, 0, 0], intensity: 0.1 }] }),
      'application/json', /traces\[0\]\.window\[3\]/],
    ['JSON missing feature', JSON.stringify({ features: FEATURES.slice(1), traces: [] }), 'application/json', /speed/],
    ['JSON empty', '', 'application/json', /./],
  ];
  for (const [what, body, type, detail] of cases) {
    const res = await upload(`bad-${what.replace(/[^a-z]+/gi, '-').toLowerCase()}`, body, type);
    const p = assertProblem(res, 422, 'invalid-px-model');
    assert.match(p.detail, detail, `${what}: ${p.detail}`);
  }
  // Nothing was stored.
  assertProblem(await request(server, '/v1/px-models/bad-non-numeric'), 404, 'not-found');
});

test('a body that is not UTF-8 text is 422 on either database, and nothing is stored', async () => {
  const csv = Buffer.concat([Buffer.from(`# playtest `), Buffer.from([0xff, 0xfe]), Buffer.from(`\n${CSV}`)]);
  const p = assertProblem(await upload('not-utf8', csv, 'text/csv'), 422, 'invalid-px-model');
  assert.match(p.detail, /UTF-8/);
  assertProblem(await request(server, '/v1/px-models/not-utf8'), 404, 'not-found');
});

test('another content type is 415, a bad name 400', async () => {
  assertProblem(await upload('x1', CSV, 'text/plain'), 415, 'unsupported-media-type');
  assertProblem(await upload('x2', CSV), 415, 'unsupported-media-type');
  for (const name of [undefined, '', 'Upper', 'has space', 'a'.repeat(65), 'dot.ted']) {
    const p = assertProblem(await upload(name, CSV, 'text/csv'), 400, 'invalid-query');
    assert.match(p.detail, /name/);
  }
  assert.equal((await upload('a'.repeat(64), CSV, 'text/csv')).status, 201);
  assertProblem(await request(server, '/v1/px-models/nobody'), 404, 'not-found');
});

test('a racetrack job naming an uploaded model succeeds; a missing model is 422 at submit', async () => {
  const params = { population: 6, generations: 2, px_model: 'june-csv' };
  const job = await submit(server, { kind: 'racetrack', params, seed: 7 });
  assert.equal(job.params.px_model, 'june-csv');
  const done = await waitForJob(server, job.id, { timeoutMs: 120_000 * SCALE });
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  assert.ok(done.level_ids.length >= 1);
  const level = await request(server, `/v1/levels/${done.level_ids[0]}`);
  assert.equal(level.status, 200);
  // The whole level against its kind's schema (the common envelope and the
  // racetrack shapes), then a few values the schema cannot pin down.
  assertValid('racetrack/level', level.body);
  assert.equal(level.body.kind, 'racetrack');
  assert.match(level.body.id, /^trk_[0-9a-f]{32}$/);
  assert.equal(level.body.id, done.level_ids[0]);
  assert.equal(level.body.params.px_model, 'june-csv');
  assert.equal(level.body.stars.thresholds.length, 3);
  assert.equal(level.body.stars.better, 'lower');
  assert.equal(level.body.stars.unit, 's');
  const list = await request(server, '/v1/levels?kind=racetrack');
  assert.equal(list.status, 200);
  assertValid('level-list', list.body);
  assert.ok(list.body.levels.some((l) => l.id === level.body.id));

  const res = await request(server, '/v1/jobs', {
    method: 'POST',
    json: { kind: 'racetrack', params: { ...params, px_model: 'nobody' }, seed: 7 },
  });
  const p = assertProblem(res, 422, 'invalid-params');
  assert.match(p.detail, /params\.px_model 'nobody' is not an uploaded model/);
});
