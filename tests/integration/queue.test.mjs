// queue.test.mjs - a full queue: with --workers 1 --max-queue 1, a third
// long job gets 429 with Retry-After, /readyz turns 503, and both recover
// once the queue has room again.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  LONG_JOB,
  PG,
  assertProblem,
  assertValid,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

const server = useServer({ args: ['--workers', '1', '--max-queue', '1'] });

async function readiness(status) {
  const res = await request(server, '/readyz');
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assertValid('readiness', res.body);
  return res.body;
}

test('a full queue answers 429 with Retry-After and makes /readyz 503', async () => {
  assert.equal((await readiness(200)).status, 'ready');

  const running = await submit(server, LONG_JOB(21));
  await waitForJob(server, running.id, { states: ['running'] });
  const waiting = await submit(server, LONG_JOB(22));
  assert.equal(waiting.state, 'queued');

  const full = await request(server, '/v1/jobs', { method: 'POST', json: LONG_JOB(23) });
  const problem = assertProblem(full, 429, 'queue-full');
  assert.equal(problem.title, 'Queue full');
  const retryAfter = full.headers.get('retry-after');
  assert.match(retryAfter, /^[1-9][0-9]*$/);

  const notReady = await readiness(503);
  assert.equal(notReady.status, 'not ready');
  assert.deepEqual(notReady.checks, {
    database: true,
    schema_version: notReady.checks.schema_version,
    migrations_applied: true,
    queued: 1,
    max_queue: 1,
    stopping: false,
    storage: 'ok',
    storage_error: null,
    backend: PG ? 'postgresql' : 'sqlite',
    node: notReady.checks.node,
  });

  // Room again: ready, and the next job is accepted.
  assert.equal((await request(server, `/v1/jobs/${waiting.id}`, { method: 'DELETE' })).status, 200);
  assert.equal((await readiness(200)).checks.queued, 0);
  const next = await submit(server, LONG_JOB(23));
  assert.equal(next.state, 'queued');

  for (const job of [next, running]) {
    const res = await request(server, `/v1/jobs/${job.id}`, { method: 'DELETE' });
    assert.ok([200, 202].includes(res.status), res.text);
    assert.equal((await waitForJob(server, job.id)).state, 'cancelled');
  }
});
