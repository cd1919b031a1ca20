// cancel.test.mjs - DELETE /v1/jobs/{id}: a queued job is cancelled at once,
// a running one within a generation (well under two seconds), a finished
// one cannot be (409), an unknown one is 404.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  LONG_JOB,
  QUICK_JOB,
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

// One worker: a second long job has to wait in the queue.
const server = useServer({ args: ['--workers', '1'] });

test('DELETE cancels a queued job at once and a running one within a generation', async () => {
  const running = await submit(server, LONG_JOB(11));
  await waitForJob(server, running.id, { states: ['running'] });
  const queued = await submit(server, LONG_JOB(12));
  assert.equal((await getJson(server, `/v1/jobs/${queued.id}`)).state, 'queued');

  // Queued: cancelled by the DELETE itself.
  const res = await request(server, `/v1/jobs/${queued.id}`, { method: 'DELETE' });
  assert.equal(res.status, 200, res.text);
  assertValid('job', res.body);
  assert.equal(res.body.state, 'cancelled');
  assert.equal(res.body.started_at, null);
  assert.ok(res.body.finished_at);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.deepEqual(await getJson(server, `/v1/jobs/${queued.id}`), res.body);

  // Running: asked to stop (202, still running), then cancelled shortly.
  const progress = await waitForJob(server, running.id, { states: ['running'] });
  assert.equal(progress.state, 'running');
  const asked = Date.now();
  const del = await request(server, `/v1/jobs/${running.id}`, { method: 'DELETE' });
  assert.equal(del.status, 202, del.text);
  assertValid('job', del.body);
  assert.equal(del.body.state, 'running');
  assert.equal(del.headers.get('location'), `/v1/jobs/${running.id}`);
  const done = await waitForJob(server, running.id, { timeoutMs: 2_000 * SCALE });
  const took = Date.now() - asked;
  assertValid('job', done);
  assert.equal(done.state, 'cancelled', JSON.stringify(done));
  assert.ok(took < 2_000 * SCALE, `cancelling a running job took ${took} ms`);
  assert.ok(done.progress.generation < done.progress.of, 'the job ran to its end');
  assert.deepEqual(done.level_ids, []);
  assert.equal(done.error, null);

  // Cancelled jobs are final.
  for (const id of [queued.id, running.id]) {
    const again = await request(server, `/v1/jobs/${id}`, { method: 'DELETE' });
    assert.match(assertProblem(again, 409, 'job-finished').detail, /cancelled/);
  }
  const cancelled = await getJson(server, '/v1/jobs?state=cancelled');
  assertValid('job-list', cancelled);
  assert.deepEqual(new Set(cancelled.jobs.map((j) => j.id)), new Set([queued.id, running.id]));
  assert.equal((await metrics(server)).get('starforge_jobs{state="cancelled"}'), 2);
});

test('DELETE of a finished job is a 409 problem, of an unknown job a 404', async () => {
  const job = await waitForJob(server, (await submit(server, QUICK_JOB(13))).id);
  assert.equal(job.state, 'succeeded');
  const res = await request(server, `/v1/jobs/${job.id}`, { method: 'DELETE' });
  const problem = assertProblem(res, 409, 'job-finished');
  assert.match(problem.detail, /succeeded/);
  assert.equal(problem.instance, `/v1/jobs/${job.id}`);
  // The job is untouched.
  assert.deepEqual(await getJson(server, `/v1/jobs/${job.id}`), job);

  const unknown = `/v1/jobs/job_${'0'.repeat(32)}`;
  assertProblem(await request(server, unknown, { method: 'DELETE' }), 404, 'not-found');
  assertProblem(await request(server, unknown), 404, 'not-found');
});
