// jobs.test.mjs - the life of a job over real HTTP: submit a lattice job,
// poll it to succeeded, fetch its level with HTTP caching (ETag, 304,
// Cache-Control), and Idempotency-Key retries.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  QUICK_JOB,
  assertProblem,
  assertValid,
  getJson,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

const server = useServer({ args: ['--workers', '2'] });

test('a lattice job is accepted, runs to succeeded and lists its level', async () => {
  const body = QUICK_JOB(3);
  const res = await request(server, '/v1/jobs', { method: 'POST', json: body });
  assert.equal(res.status, 202, res.text);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  assertValid('job', res.body);
  const accepted = res.body;
  assert.equal(res.headers.get('location'), `/v1/jobs/${accepted.id}`);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(accepted.kind, 'lattice');
  assert.equal(accepted.seed, 3);
  assert.deepEqual(accepted.params, body.params);
  assert.equal(accepted.state, 'queued');
  assert.equal(accepted.finished_at, null);
  assert.deepEqual(accepted.level_ids, []);

  const job = await waitForJob(server, accepted.id);
  assertValid('job', job);
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  assert.equal(job.error, null);
  assert.equal(job.created_at, accepted.created_at);
  assert.ok(job.started_at && job.finished_at);
  assert.ok(Date.parse(job.created_at) <= Date.parse(job.started_at));
  assert.ok(Date.parse(job.started_at) <= Date.parse(job.finished_at));
  assert.deepEqual(job.progress.generation, 5);
  assert.deepEqual(job.progress.of, 5);
  assert.equal(job.level_ids.length, 1);

  // GET /v1/jobs/{id} is never cached and points at itself.
  const again = await request(server, `/v1/jobs/${job.id}`);
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('cache-control'), 'no-store');
  assert.equal(again.headers.get('location'), `/v1/jobs/${job.id}`);
  assert.deepEqual(again.body, job);

  // The job list has it, and validates.
  const list = await getJson(server, '/v1/jobs');
  assertValid('job-list', list);
  assert.deepEqual(
    list.jobs.find((j) => j.id === job.id),
    job,
  );
});

test('a level has a strong ETag, a year-long Cache-Control and 304 on If-None-Match', async () => {
  const job = await waitForJob(server, (await submit(server, QUICK_JOB(4, { length: 12 }))).id);
  assert.equal(job.state, 'succeeded');
  const id = job.level_ids[0];

  const res = await request(server, `/v1/levels/${id}`);
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  assertValid('level', res.body);
  assertValid('lattice/level', res.body);
  assert.equal(res.body.id, id);
  assert.equal(res.body.kind, 'lattice');
  assert.equal(res.body.seed, 4);
  assert.equal(res.body.puzzle.length, 12);
  assert.equal(res.body.params.generations, 5);
  const etag = res.headers.get('etag');
  assert.match(etag, /^"[0-9a-f]{32}(-gz)?"$/);
  assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');

  // The same bytes and the same validator every time.
  const second = await request(server, `/v1/levels/${id}`);
  assert.equal(second.text, res.text);
  assert.equal(second.headers.get('etag'), etag);

  for (const inm of [etag, `"00000000000000000000000000000000", ${etag}`, `W/${etag}`, '*']) {
    const notModified = await request(server, `/v1/levels/${id}`, { headers: { 'If-None-Match': inm } });
    assert.equal(notModified.status, 304, `If-None-Match: ${inm}`);
    assert.equal(notModified.text, '');
    assert.equal(notModified.headers.get('etag'), etag);
    assert.equal(notModified.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  }
  const stale = await request(server, `/v1/levels/${id}`, {
    headers: { 'If-None-Match': '"00000000000000000000000000000000"' },
  });
  assert.equal(stale.status, 200);
  assert.equal(stale.text, res.text);

  assertProblem(await request(server, '/v1/levels/lat_00000000000000000000000000000000'), 404, 'not-found');
});

test('Idempotency-Key: the same key and body return the same job, another body is refused', async () => {
  const key = `it-jobs-${process.pid}`;
  const first = await submit(server, QUICK_JOB(7), { 'Idempotency-Key': key });
  // The same request, keys in another order: the same job, not a new one.
  const retry = await submit(
    server,
    { seed: 7, params: { generations: 5, length: 10 }, kind: 'lattice' },
    { 'Idempotency-Key': key },
  );
  assert.equal(retry.id, first.id);
  assert.equal(retry.created_at, first.created_at);

  const other = await request(server, '/v1/jobs', {
    method: 'POST',
    json: QUICK_JOB(8),
    headers: { 'Idempotency-Key': key },
  });
  const problem = assertProblem(other, 422, 'idempotency-key-reused');
  assert.equal(problem.instance, '/v1/jobs');

  // Without a key, the same body twice is two jobs.
  const a = await submit(server, QUICK_JOB(9));
  const b = await submit(server, QUICK_JOB(9));
  assert.notEqual(a.id, b.id);

  // An empty key, one over 200 characters or one with a byte outside
  // printable ASCII (here 0xff) is refused, on either database alike.
  for (const bad of ['', 'k'.repeat(201), 'k\u00ff']) {
    const res = await request(server, '/v1/jobs', {
      method: 'POST',
      json: QUICK_JOB(10),
      headers: { 'Idempotency-Key': bad },
    });
    assertProblem(res, 400, 'invalid-request');
  }

  // Exactly one job came of the keyed requests, and it ran once.
  const all = await getJson(server, '/v1/jobs?page_size=100');
  assert.equal(all.jobs.filter((j) => j.id === first.id).length, 1);
  assert.equal(all.jobs.filter((j) => j.seed === 7).length, 1);
  assert.equal(all.jobs.filter((j) => j.seed === 10).length, 0);
  for (const id of [first.id, a.id, b.id]) assert.equal((await waitForJob(server, id)).state, 'succeeded');
  // Asking again once it is done answers the finished job.
  const late = await submit(server, QUICK_JOB(7), { 'Idempotency-Key': key });
  assert.equal(late.id, first.id);
  assert.equal(late.state, 'succeeded');
});
