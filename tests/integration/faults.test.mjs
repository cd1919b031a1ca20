// faults.test.mjs - the storage faults and freed workers of
// docs/RELIABILITY.md ("Faults").
//
// A full disk and a read-only database are simulated through the store's
// test seam: STARFORGE_TEST_STORAGE_FAULT names a file the server reads
// before every write transaction; "full" caps the database at its size
// (SQLite's max_page_count: a write that needs a page fails with
// SQLITE_FULL), "readonly" makes the connection refuse writes (query_only:
// SQLITE_READONLY), anything else lifts the fault. The codes and messages
// are SQLite's own, so everything above the store meets what a real fault
// gives it, and the tests run anywhere, as root too (where chmod would not
// stop a write) and without a loop device or mount rights.
//
// What must hold: a submit the store cannot record answers 507 (full) or
// 503 (read-only) and records nothing; reads keep working; /readyz is 503
// with the reason; a job that finishes meanwhile keeps its outcome and its
// worker and records it once the store takes writes again, without a
// restart; nothing accepted is dropped; a stop while an outcome waits exits
// 0 and the next start runs that job again.
//
// On PostgreSQL (STARFORGE_TEST_DB=postgres) the seam takes "readonly" only
// (store_pg.c: the session's default_transaction_read_only, so writes fail
// with SQLSTATE 25006 as on a standby); a full disk cannot be simulated
// there, so the disk-full test is SQLite's alone. The messages then are
// PostgreSQL's own, and the integrity check is SQLite's PRAGMA.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import {
  LONG_JOB,
  QUICK_JOB,
  PG,
  SCALE,
  assertProblem,
  assertValid,
  dbRows,
  getJson,
  removeDir,
  request,
  sqlite,
  sqliteOnly,
  startServer,
  stopServer,
  submit,
  waitFor,
  waitForJob,
} from './harness.mjs';

/**
 * Starts a server with the fault seam on a file of its own; `fault(text)`
 * writes the file. The server is killed, if still running, and its folder
 * removed when test `t` ends.
 */
async function faultyServer(t, args = ['--workers', '1'], db) {
  const seamDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-fault-'));
  const file = path.join(seamDir, 'fault');
  fs.writeFileSync(file, '');
  process.env.STARFORGE_TEST_STORAGE_FAULT = file;
  let server;
  try {
    server = await startServer({ args, db });
  } finally {
    delete process.env.STARFORGE_TEST_STORAGE_FAULT;
  }
  t.after(() => {
    if (!server.exited) server.proc.kill('SIGKILL');
    removeDir(server);
    fs.rmSync(seamDir, { recursive: true, force: true });
  });
  server.fault = (text) => fs.writeFileSync(file, text);
  return server;
}

async function readiness(server, status) {
  const res = await request(server, '/readyz');
  assert.equal(res.status, status, res.text);
  assertValid('readiness', res.body);
  return res.body.checks;
}

/** Lines of the server's log that start with `prefix` after their timestamp (which is dropped). */
function logLines(server, prefix) {
  return server.log
    .split('\n')
    .map((l) => l.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /, ''))
    .filter((l) => l.startsWith(prefix));
}

/** Every read a client makes still answers 200 while writes fail. */
async function readsWork(server, job) {
  assert.equal((await request(server, '/healthz')).status, 200);
  assert.equal((await getJson(server, `/v1/jobs/${job.id}`)).id, job.id);
  assertValid('job-list', await getJson(server, '/v1/jobs?page_size=100'));
  assertValid('level-list', await getJson(server, '/v1/levels'));
  const level = await request(server, `/v1/levels/${job.level_ids[0]}`);
  assert.equal(level.status, 200, level.text);
  assert.equal((await request(server, `/v1/levels/${job.level_ids[0]}.svg`)).status, 200);
  assert.equal((await request(server, '/metrics')).status, 200);
}

// Digger jobs of five puzzles: quick to run, and their levels (some 15 KB)
// cannot fit in the free space of a page, so storing them needs new pages.
const DIGGER5 = (seed) => ({ kind: 'digger', params: { difficulty: 'hard', count: 5 }, seed });

// A full disk is simulated on SQLite only (see the top of the file).
const FULL_DISK = sqliteOnly('the storage-fault seam simulates a full disk on SQLite only (max_page_count); PostgreSQL takes "readonly" only');

test('disk full: submits get 507, reads work, /readyz is 503, and all recovers when space returns', FULL_DISK, async (t) => {
  const server = await faultyServer(t);
  const before = await waitForJob(server, (await submit(server, QUICK_JOB(1))).id);
  assert.equal(before.state, 'succeeded');

  server.fault('full');
  // Submit until the database needs a page it cannot have: each accepted
  // job is recorded, the one after is refused whole.
  const accepted = [];
  let refused;
  for (let i = 0; i < 200 && !refused; i++) {
    const res = await request(server, '/v1/jobs', { method: 'POST', json: DIGGER5(100 + i) });
    if (res.status === 202) accepted.push(res.body);
    else refused = res;
  }
  assert.ok(refused, 'no submit was refused with the database full');
  const problem = assertProblem(refused, 507, 'insufficient-storage');
  assert.equal(problem.title, 'Insufficient storage');
  assert.match(problem.detail, /database or disk is full/);
  assert.match(problem.detail, /nothing was recorded/);
  assert.match(refused.headers.get('retry-after') || '', /^[1-9][0-9]*$/);

  // An upload is a write path too: refused whole with the same 507.
  const header = 'speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking,intensity\n';
  const row = '0.588390,0.043676,0.500000,0.650748,0.000000,0.000000,0.000000,0.000000,0.349667\n';
  const csv = header + row.repeat(Math.floor(60_000 / row.length));
  const upload = await request(server, '/v1/px-models?name=full-disk', { method: 'POST', body: csv, headers: { 'content-type': 'text/csv' } });
  const uploadProblem = assertProblem(upload, 507, 'insufficient-storage');
  assert.match(uploadProblem.detail, /nothing was recorded/);
  assert.equal((await request(server, '/v1/px-models/full-disk')).status, 404);

  await readsWork(server, before);
  const checks = await readiness(server, 503);
  assert.equal(checks.storage, 'full');
  assert.match(checks.storage_error, /full/);

  // The accepted jobs are not lost: the first one ran and its levels wait
  // for a page (or its start did), the rest wait in the queue.
  assert.ok(accepted.length >= 1, 'no job was accepted before the database filled');
  await waitFor(
    () => logLines(server, `job ${accepted[0].id} waiting `).length === 1 || server.log.includes(`job ${accepted[0].id}: store: `),
    { what: 'a job to wait for the store' },
  );
  for (const job of accepted) assert.ok(['queued', 'running'].includes((await getJson(server, `/v1/jobs/${job.id}`)).state));
  // Still full a few probes later.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal((await readiness(server, 503)).storage, 'full');

  // Space returns: ready again within the next probes, every accepted job
  // finishes once, and a new submit is taken.
  server.fault('');
  await waitFor(async () => (await request(server, '/readyz')).status === 200, { what: '/readyz to turn 200' });
  const ready = await readiness(server, 200);
  assert.equal(ready.storage, 'ok');
  assert.equal(ready.storage_error, null);
  for (const job of accepted) {
    const done = await waitForJob(server, job.id, { timeoutMs: 60_000 * SCALE });
    assertValid('job', done);
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    assert.equal(done.level_ids.length, 5);
    for (const id of done.level_ids) assert.equal((await request(server, `/v1/levels/${id}`)).status, 200);
  }
  const after = await waitForJob(server, (await submit(server, DIGGER5(99))).id);
  assert.equal(after.state, 'succeeded');

  const { code } = await stopServer(server);
  assert.equal(code, 0, server.log);
  for (const job of accepted) assert.equal(logLines(server, `job ${job.id} succeeded `).length, 1, job.id);
  assert.deepEqual(sqlite(server.db, 'PRAGMA integrity_check'), [['ok']]);
  const states = sqlite(server.db, 'SELECT state, count(*) FROM jobs GROUP BY state');
  assert.deepEqual(states, [['succeeded', String(accepted.length + 2)]]);
});

test('read-only: 503 for writes, the queued job stays queued, the finished one waits, all recover', async (t) => {
  const server = await faultyServer(t);
  const done = await waitForJob(server, (await submit(server, QUICK_JOB(2))).id);
  const running = await submit(server, LONG_JOB(3));
  await waitForJob(server, running.id, { states: ['running'] });
  const queued = await submit(server, QUICK_JOB(4));

  server.fault('readonly');
  const refused = await request(server, '/v1/jobs', { method: 'POST', json: QUICK_JOB(5) });
  const problem = assertProblem(refused, 503, 'storage-unavailable');
  // Each back end's own message: SQLite's "attempt to write a readonly
  // database", PostgreSQL's "cannot execute INSERT in a read-only transaction".
  assert.match(problem.detail, PG ? /read-only transaction/ : /readonly database/);
  assert.match(refused.headers.get('retry-after') || '', /^[1-9][0-9]*$/);
  // Not recorded: the job list holds the three jobs of before.
  assert.equal((await getJson(server, '/v1/jobs?page_size=100')).jobs.length, 3);

  // A queued job's cancel cannot be recorded: refused, and it stays queued.
  assertProblem(await request(server, `/v1/jobs/${queued.id}`, { method: 'DELETE' }), 503, 'storage-unavailable');
  assert.equal((await getJson(server, `/v1/jobs/${queued.id}`)).state, 'queued');
  const checks = await readiness(server, 503);
  assert.equal(checks.storage, 'unwritable');
  assert.match(checks.storage_error, PG ? /read-only/ : /readonly/);
  await readsWork(server, done);

  // The running job is cancelled (a flag, no write); its outcome then
  // waits for the store, holding its worker, so the queued job waits too.
  assert.equal((await request(server, `/v1/jobs/${running.id}`, { method: 'DELETE' })).status, 202);
  await waitFor(() => logLines(server, `job ${running.id} waiting `).length === 1, { what: 'the outcome to wait' });
  assert.equal((await getJson(server, `/v1/jobs/${running.id}`)).state, 'running');
  const again = await request(server, `/v1/jobs/${running.id}`, { method: 'DELETE' });
  assert.match(assertProblem(again, 409, 'job-finished').detail, /waits for the database/);
  assert.equal((await getJson(server, `/v1/jobs/${queued.id}`)).state, 'queued');

  server.fault('');
  const cancelled = await waitForJob(server, running.id, { timeoutMs: 10_000 * SCALE });
  assert.equal(cancelled.state, 'cancelled');
  const next = await waitForJob(server, queued.id);
  assert.equal(next.state, 'succeeded');
  // Started only once the cancel was recorded: one worker, freed by it.
  assert.ok(Date.parse(next.started_at) >= Date.parse(cancelled.finished_at));
  assert.equal((await readiness(server, 200)).storage, 'ok');

  const { code } = await stopServer(server);
  assert.equal(code, 0, server.log);
  assert.equal(logLines(server, `job ${running.id} waiting `).length, 1);
  assert.equal(logLines(server, `job ${running.id} cancelled `).length, 1);
  assert.equal(logLines(server, `job ${queued.id} running `).length, 1);
  // SQLite's own check of the file; PostgreSQL has no counterpart to ask.
  if (!PG) assert.deepEqual(sqlite(server.db, 'PRAGMA integrity_check'), [['ok']]);
});

// How the next start finds the job a stop left running: on SQLite it
// requeues it at once (one process per database); on PostgreSQL a new node
// rescues it once the old node's lease expires (restart.test.mjs says why),
// 2 s here.
const LEASE = PG ? ['--lease-seconds', '2'] : [];

test('a stop while an outcome waits for the store exits 0, and the next start runs the job again', async (t) => {
  const first = await faultyServer(t, ['--workers', '1', ...LEASE]);
  const job = await submit(first, LONG_JOB(6));
  await waitForJob(first, job.id, { states: ['running'] });
  first.fault('readonly');
  assert.equal((await request(first, `/v1/jobs/${job.id}`, { method: 'DELETE' })).status, 202);
  await waitFor(() => logLines(first, `job ${job.id} waiting `).length === 1, { what: 'the outcome to wait' });
  const t0 = Date.now();
  const { code, signal } = await stopServer(first);
  assert.equal(signal, null);
  assert.equal(code, 0, first.log);
  assert.ok(Date.now() - t0 < 5_000 * SCALE, `the stop took ${Date.now() - t0} ms`);
  assert.equal(logLines(first, `job ${job.id} unrecorded `).length, 1, first.log);
  // The store still has it running: the next start requeues it.
  assert.deepEqual(dbRows(first.db, `SELECT state FROM jobs WHERE id = '${job.id}'`), [['running']]);

  const second = await faultyServer(t, ['--workers', '1', ...LEASE], first.db);
  if (!PG) {
    assert.match(second.log, new RegExp(`^\\S+Z job ${job.id} queued kind=lattice seed=6 reason=restart$`, 'm'));
    await waitForJob(second, job.id, { states: ['running'] });
  } else {
    // The store says running all along (the dead node's claim): wait for
    // this node's own run, after the rescue.
    await waitFor(() => logLines(second, `job ${job.id} running `).length === 1, { what: 'the rescued job to run' });
    assert.equal(logLines(second, `job ${job.id} requeued `).filter((l) => / reason=lease_expired /.test(l)).length, 1, second.log);
  }
  assert.equal((await request(second, `/v1/jobs/${job.id}`, { method: 'DELETE' })).status, 202);
  assert.equal((await waitForJob(second, job.id)).state, 'cancelled');
  const { code: code2 } = await stopServer(second);
  assert.equal(code2, 0, second.log);
});

test('a cancelled job frees its worker at once: the next queued job starts when it ends', async (t) => {
  const server = await faultyServer(t);
  const long = await submit(server, LONG_JOB(7));
  await waitFor(async () => (await getJson(server, `/v1/jobs/${long.id}`)).progress.generation >= 1, {
    what: 'the long job to be running',
  });
  const next = await submit(server, QUICK_JOB(8));
  assert.equal(next.state, 'queued');
  const asked = Date.now();
  assert.equal((await request(server, `/v1/jobs/${long.id}`, { method: 'DELETE' })).status, 202);
  const cancelled = await waitForJob(server, long.id);
  const started = await waitForJob(server, next.id);
  assert.equal(cancelled.state, 'cancelled');
  assert.equal(started.state, 'succeeded');
  // In order: the cancel took effect within a generation, the worker went
  // to the queued job in the same turn of the loop that recorded it.
  const finishedAt = Date.parse(cancelled.finished_at);
  const startedAt = Date.parse(started.started_at);
  assert.ok(finishedAt - asked < 2_000 * SCALE, `the cancel took ${finishedAt - asked} ms`);
  assert.ok(startedAt >= finishedAt, `${started.started_at} before ${cancelled.finished_at}`);
  assert.ok(startedAt - finishedAt < 500 * SCALE, `the worker was idle ${startedAt - finishedAt} ms`);
  const { code } = await stopServer(server);
  assert.equal(code, 0, server.log);
});

test('a job past its budget frees its worker at once', async (t) => {
  const server = await faultyServer(t, ['--workers', '1', '--job-timeout', '1']);
  const long = await submit(server, LONG_JOB(9));
  const next = await submit(server, QUICK_JOB(10));
  const timedOut = await waitForJob(server, long.id, { timeoutMs: 10_000 * SCALE });
  const started = await waitForJob(server, next.id);
  assert.equal(timedOut.state, 'failed');
  assert.match(timedOut.error, /timed_out/);
  assert.equal(started.state, 'succeeded');
  const ranFor = Date.parse(timedOut.finished_at) - Date.parse(timedOut.started_at);
  assert.ok(ranFor >= 1_000 && ranFor < 1_000 + 2_000 * SCALE, `the job ran ${ranFor} ms on a 1 s budget`);
  const startedAt = Date.parse(started.started_at);
  const finishedAt = Date.parse(timedOut.finished_at);
  assert.ok(startedAt >= finishedAt && startedAt - finishedAt < 500 * SCALE, `idle ${startedAt - finishedAt} ms`);
  const { code } = await stopServer(server);
  assert.equal(code, 0, server.log);
});
