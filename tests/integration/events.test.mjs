// events.test.mjs - GET /v1/jobs/{id}/events: Server-Sent Events with one
// event per generation and a final one; many watchers get the same stream;
// a finished job answers its final event at once; Last-Event-ID; a watcher
// waits suspended (no busy loop on the loop thread); SIGTERM with watchers
// connected still stops promptly and cleanly.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import {
  LONG_JOB,
  QUICK_JOB,
  SCALE,
  assertProblem,
  assertValid,
  getJson,
  readEvents,
  removeDir,
  request,
  sleep,
  startServer,
  stopServer,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

// One worker: a job submitted behind a long one waits in the queue, so that
// watchers can be connected before its first generation.
const server = useServer({ args: ['--workers', '1'] });

/** Rejects after `ms` with a message naming `what`. */
function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Opens the job's event stream; resolves once the headers are in. */
async function watch(srv, id, headers = {}) {
  const res = await fetch(`${srv.base}/v1/jobs/${id}/events`, { headers });
  return res;
}

function assertStreamHeaders(res) {
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assert.equal(res.headers.get('cache-control'), 'no-store');
}

/** Checks a whole stream of a job that ran: progress 1, 2, ... then end. */
function assertRun(events, job) {
  for (const ev of events) assertValid('job-event', ev.data);
  const progress = events.slice(0, -1);
  const end = events.at(-1);
  assert.ok(progress.length >= 1, 'no progress event');
  progress.forEach((ev, i) => {
    assert.equal(ev.event, 'progress');
    assert.equal(ev.id, i + 1, 'ids are the generation numbers, from 1, rising by 1');
    assert.equal(ev.data.generation, i + 1);
    assert.equal(ev.data.job_id, job.id);
    assert.equal(ev.data.of, progress[0].data.of);
  });
  assert.equal(end.event, 'end');
  assert.equal(end.id, progress.length + 1, 'the final id follows the last generation');
  assert.equal(end.data.job_id, job.id);
  assert.equal(end.data.state, job.state);
  assert.deepEqual(end.data.level_ids, job.level_ids);
  assert.equal(end.data.error, job.error);
  assert.deepEqual(end.data.progress, job.progress);
  assert.equal(end.data.progress.generation, progress.length);
  assert.equal(end.data.progress.best, progress.at(-1).data.best);
}

test('every watcher gets one event per generation, then the final event, and the stream closes', async () => {
  const blocker = await submit(server, LONG_JOB(71));
  await waitForJob(server, blocker.id, { states: ['running'] });
  const job = await submit(server, {
    kind: 'lattice',
    params: { length: 12, generations: 30 },
    seed: 72,
  });
  assert.equal(job.state, 'queued');

  // Twelve watchers and one that resumes after event 10, all connected
  // while the job waits: every one must see the whole run.
  const watchers = await Promise.all(Array.from({ length: 12 }, () => watch(server, job.id)));
  const resumed = await watch(server, job.id, { 'Last-Event-ID': '10' });
  for (const res of [...watchers, resumed]) assertStreamHeaders(res);
  const reads = [...watchers, resumed].map((res) => readEvents(res));

  const del = await request(server, `/v1/jobs/${blocker.id}`, { method: 'DELETE' });
  assert.equal(del.status, 202, del.text);
  const streams = await within(Promise.all(reads), 60_000 * SCALE, 'the streams to end');

  const done = await getJson(server, `/v1/jobs/${job.id}`);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  assert.ok(done.level_ids.length >= 1);
  const { events, retry } = streams[0];
  assertRun(events, done);
  assert.equal(events.length, 31, 'thirty generations and the end');
  assert.equal(events[0].data.of, 30);
  assert.equal(retry, 3000);
  for (const s of streams.slice(1, 12)) assert.equal(s.text, streams[0].text, 'watchers differ');
  assert.deepEqual(
    streams[12].events,
    events.filter((ev) => ev.id > 10),
    'Last-Event-ID: 10 skips events 1..10',
  );

  // The blocker's own final event says cancelled.
  const late = await within(readEvents(await watch(server, blocker.id)), 5_000 * SCALE, 'blocker');
  assert.equal(late.events.length, 1);
  assert.equal(late.events[0].data.state, 'cancelled');
});

test('a finished job answers its final event at once; a client that has it gets 204', async () => {
  const job = await waitForJob(server, (await submit(server, QUICK_JOB(73))).id);
  assert.equal(job.state, 'succeeded');
  const started = Date.now();
  const res = await watch(server, job.id);
  assertStreamHeaders(res);
  const { events } = await within(readEvents(res), 2_000 * SCALE, 'the final event');
  assert.ok(Date.now() - started < 2_000 * SCALE);
  assert.equal(events.length, 1);
  const [end] = events;
  assertValid('job-event', end.data);
  assert.equal(end.event, 'end');
  assert.equal(end.id, job.progress.generation + 1);
  assert.equal(end.data.state, 'succeeded');
  assert.deepEqual(end.data.level_ids, job.level_ids);
  assert.deepEqual(end.data.progress, job.progress);

  // An EventSource reconnecting after the final event is told to stop.
  const again = await watch(server, job.id, { 'Last-Event-ID': String(end.id) });
  assert.equal(again.status, 204);
  assert.equal(await again.text(), '');
  // An earlier id (or a malformed one) still gets the final event.
  for (const last of ['1', 'x7']) {
    const r = await watch(server, job.id, { 'Last-Event-ID': last });
    assert.deepEqual((await readEvents(r)).events, events);
  }
  const head = await fetch(`${server.base}/v1/jobs/${job.id}/events`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-type'), 'text/event-stream');
});

test('an unknown job is a 404 problem', async () => {
  const res = await request(server, `/v1/jobs/job_${'0'.repeat(32)}/events`);
  const problem = assertProblem(res, 404, 'not-found');
  assert.match(problem.detail, /no job with id/);
  assertProblem(await request(server, '/v1/jobs/nope/events'), 404, 'not-found');
  assertProblem(await request(server, '/v1/jobs/x/events', { method: 'DELETE' }), 405);
});

/** The CPU seconds the process's main (loop) thread has used, from /proc. */
function loopThreadCpu(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in ticks of 1/100 s
}

test('a cancelled job ends its streams with state cancelled; waiting watchers cost no CPU', async () => {
  const running = await submit(server, LONG_JOB(74));
  await waitForJob(server, running.id, { states: ['running'] });
  const queued = await submit(server, QUICK_JOB(75));
  assert.equal(queued.state, 'queued');

  let sawProgress;
  const progressed = new Promise((resolve) => {
    sawProgress = resolve;
  });
  const resRunning = await watch(server, running.id);
  const resQueued = await watch(server, queued.id);
  assertStreamHeaders(resRunning);
  assertStreamHeaders(resQueued);
  const readRunning = readEvents(resRunning, {
    onEvent: (ev) => ev.event === 'progress' && sawProgress(),
  });
  const readQueued = readEvents(resQueued);
  await within(progressed, 10_000 * SCALE, 'a progress event');

  // Both watchers wait suspended: the loop thread stays (nearly) idle. A
  // stream polled for data would keep it near 100%.
  const pid = server.proc.pid;
  const cpu0 = loopThreadCpu(pid);
  await sleep(1_500);
  const used = loopThreadCpu(pid) - cpu0;
  assert.ok(used < 0.3, `the loop thread used ${used} s of CPU in 1.5 s with watchers waiting`);

  // Cancelled while queued: the final event alone, id 1.
  const delQueued = await request(server, `/v1/jobs/${queued.id}`, { method: 'DELETE' });
  assert.equal(delQueued.status, 200, delQueued.text);
  const q = await within(readQueued, 5_000 * SCALE, 'the queued job stream');
  assert.equal(q.events.length, 1);
  assertValid('job-event', q.events[0].data);
  assert.equal(q.events[0].id, 1);
  assert.equal(q.events[0].data.state, 'cancelled');
  assert.deepEqual(q.events[0].data.level_ids, []);

  // Cancelled while running: its progress so far, then the end.
  const delRunning = await request(server, `/v1/jobs/${running.id}`, { method: 'DELETE' });
  assert.equal(delRunning.status, 202, delRunning.text);
  const r = await within(readRunning, 10_000 * SCALE, 'the running job stream');
  const done = await getJson(server, `/v1/jobs/${running.id}`);
  assert.equal(done.state, 'cancelled');
  assertRun(r.events, done);
  assert.ok(done.progress.generation < done.progress.of, 'the job ran to its end');
});

test('SIGTERM with watchers connected: the streams end and the process exits 0 promptly', async () => {
  const srv = await startServer({ args: ['--workers', '1'] });
  try {
    const running = await submit(srv, LONG_JOB(76));
    await waitForJob(srv, running.id, { states: ['running'] });
    const queued = await submit(srv, QUICK_JOB(77));
    let sawProgress;
    const progressed = new Promise((resolve) => {
      sawProgress = resolve;
    });
    const reads = [];
    for (let i = 0; i < 3; i++) {
      reads.push(
        readEvents(await watch(srv, running.id), {
          onEvent: (ev) => ev.event === 'progress' && sawProgress(),
        }),
      );
      reads.push(readEvents(await watch(srv, queued.id)));
    }
    await within(progressed, 10_000 * SCALE, 'a progress event');

    const asked = Date.now();
    const { code, signal } = await stopServer(srv, { timeoutMs: 10_000 * SCALE });
    const took = Date.now() - asked;
    assert.equal(signal, null, srv.log);
    assert.equal(code, 0, srv.log);
    assert.ok(took < 5_000 * SCALE, `SIGTERM took ${took} ms with watchers connected`);
    // Every stream ended cleanly, without a final event: the running job went
    // back to the queue, the queued one stays there.
    const streams = await within(Promise.all(reads), 2_000 * SCALE, 'the streams to end');
    for (const s of streams) assert.ok(s.events.every((ev) => ev.event === 'progress'));
    assert.ok(streams[0].events.length >= 1);
    assert.deepEqual(streams[1].events, []);
    assert.match(srv.log, /requeued .*reason=shutdown/);
  } finally {
    if (!srv.exited) srv.proc.kill('SIGKILL');
    removeDir(srv);
  }
});
