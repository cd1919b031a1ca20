// restart.test.mjs - no accepted job is lost or run twice: kill -9 in the
// middle of running jobs, restart on the same database, and every job ends
// succeeded exactly once with its levels; SIGTERM while a job runs exits 0
// within seconds, leaves the job queued in the database, and a restart
// finishes it.
//
// On both back ends, with one difference by design in how a job caught
// running by a crash comes back. SQLite serves one process, so a server
// that starts requeues every job still marked running ("queued ...
// reason=restart"). On PostgreSQL several nodes share the database and a
// starting node cannot tell a dead node's job from a live one's: it runs
// the queued jobs at once and rescues a running job only once its lease
// has expired ("requeued ... reason=lease_expired"). A 2 s lease
// (--lease-seconds) keeps that quick here.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  LONG_JOB,
  PG,
  QUICK_JOB,
  SCALE,
  assertValid,
  dbRows,
  getJson,
  metrics,
  removeDir,
  request,
  sleep,
  startServer,
  stopServer,
  submit,
  waitFor,
  waitForJob,
} from './harness.mjs';

// Every server's options: a short lease on PostgreSQL (see the top).
const LEASE = PG ? ['--lease-seconds', '2'] : [];

/** How many times `line` (a whole log line, after its timestamp) appears in `log`. */
function count(log, line) {
  return log.split('\n').filter((l) => l.replace(/^\S+Z /, '') === line).length;
}

/**
 * Returns keep(server): servers kept are, when test `t` ends, pass or fail,
 * killed if still running and their temporary folders removed.
 */
function tracker(t) {
  const servers = [];
  t.after(() => {
    for (const s of servers) if (!s.exited) s.proc.kill('SIGKILL');
    for (const s of servers) removeDir(s);
  });
  return (server) => {
    servers.push(server);
    return server;
  };
}

/** The states of the jobs in a stopped server's database (either back end), by id. */
function dbStates(db) {
  return Object.fromEntries(dbRows(db, 'SELECT id, state FROM jobs'));
}

test('kill -9 while jobs run: after a restart every accepted job succeeds exactly once', async (t) => {
  const keep = tracker(t);
  const first = keep(await startServer({ args: ['--workers', '2', ...LEASE] }));
  const accepted = [];
  let quick; // the job that finished before the crash
  try {
    // A quick job that finishes before the crash, four long ones (two run,
    // two wait) and a quick one queued behind them.
    const plan = [QUICK_JOB(30, { length: 14, generations: 20 })];
    for (const seed of [31, 32, 33, 34]) plan.push(LONG_JOB(seed));
    plan.push(QUICK_JOB(35, { length: 14, generations: 20 }));
    for (const body of plan) accepted.push(await submit(first, body));
    quick = await waitForJob(first, accepted[0].id);
    assert.equal(quick.state, 'succeeded');
    // Both workers well into their long jobs.
    await waitFor(
      async () => {
        const running = await getJson(first, '/v1/jobs?state=running');
        return running.jobs.length === 2 && running.jobs.every((j) => j.progress.generation >= 1);
      },
      { what: 'two long jobs to be running' },
    );
    await sleep(300);
  } finally {
    const { signal } = await stopServer(first, { signal: 'SIGKILL' });
    assert.equal(signal, 'SIGKILL');
  }

  // What the crash left in the database: one job done, two caught running,
  // three never started.
  const ids = accepted.map((j) => j.id);
  const states = dbStates(first.db);
  assert.deepEqual(Object.keys(states).sort(), [...ids].sort());
  assert.equal(states[ids[0]], 'succeeded');
  assert.deepEqual(
    Object.values(states).sort(),
    ['queued', 'queued', 'queued', 'running', 'running', 'succeeded'],
  );

  const second = keep(await startServer({ db: first.db, args: ['--workers', '2', ...LEASE] }));
  try {
    const finished = [];
    for (const id of ids) {
      const job = await waitForJob(second, id, { timeoutMs: 90_000 * SCALE });
      assertValid('job', job);
      assert.equal(job.state, 'succeeded', JSON.stringify(job));
      assert.ok(job.level_ids.length >= 1);
      finished.push(job);
    }
    // The job done before the crash was not touched.
    assert.deepEqual(finished[0], quick);
    // Nothing else appeared, nothing twice.
    const list = await getJson(second, '/v1/jobs?page_size=100');
    assert.deepEqual(list.jobs.map((j) => j.id).sort(), [...ids].sort());
    assert.equal((await metrics(second)).get('starforge_jobs{state="succeeded"}'), ids.length);
    // Every level is there. Levels are content-addressed and the first
    // document stored under an id stays: the exhaustive search ignores the
    // seed, so the four long jobs found the same levels, stored by
    // whichever finished first.
    const levelIds = new Set();
    for (const job of finished) {
      for (const id of job.level_ids) {
        const level = await request(second, `/v1/levels/${id}`);
        assert.equal(level.status, 200, level.text);
        assertValid('lattice/level', level.body);
        assert.equal(level.body.params.algorithm, job.params.algorithm || 'ga');
        assert.equal(level.body.params.length, job.params.length);
        assert.ok(finished.some((j) => j.seed === level.body.seed && j.params.algorithm === job.params.algorithm));
        levelIds.add(id);
      }
    }
    const exhaustive = finished.filter((j) => j.params.algorithm === 'exhaustive');
    assert.equal(exhaustive.length, 4);
    for (const job of exhaustive) assert.deepEqual(job.level_ids, exhaustive[0].level_ids);
    const [[levelRows]] = dbRows(second.db, 'SELECT count(*) FROM levels');
    assert.equal(Number(levelRows), levelIds.size);
  } finally {
    const { code } = await stopServer(second);
    assert.equal(code, 0, second.log);
  }
  // The restarted server ran each unfinished job once, and the finished one not at all.
  for (const id of ids.slice(1)) {
    if (!PG) {
      assert.equal(count(second.log, `job ${id} queued kind=lattice seed=${seedOf(accepted, id)} reason=restart`), 1, id);
    } else {
      // Rescued once its lease expired when the crash caught it running;
      // run as it was when it was still queued.
      const rescued = second.log.split('\n').filter((l) => l.replace(/^\S+Z /, '').startsWith(`job ${id} requeued `));
      assert.equal(rescued.length, states[id] === 'running' ? 1 : 0, `${id}:\n${second.log}`);
      for (const l of rescued) assert.match(l, / reason=lease_expired /);
    }
    assert.equal(second.log.split('\n').filter((l) => l.replace(/^\S+Z /, '').startsWith(`job ${id} succeeded `)).length, 1, id);
    assert.equal(second.log.split('\n').filter((l) => l.replace(/^\S+Z /, '').startsWith(`job ${id} running `)).length, 1, id);
  }
  assert.ok(!second.log.includes(`job ${ids[0]} `), 'the job finished before the crash ran again');
  const after = dbStates(first.db);
  assert.ok(Object.values(after).every((s) => s === 'succeeded'));
});

function seedOf(accepted, id) {
  return accepted.find((j) => j.id === id).seed;
}

test('SIGTERM while a job runs: exit 0 within seconds, the job queued again, finished after a restart', async (t) => {
  const keep = tracker(t);
  const first = keep(await startServer({ args: ['--workers', '1', ...LEASE] }));
  const running = await submit(first, LONG_JOB(41));
  const waiting = await submit(first, {
    kind: 'lattice',
    params: { algorithm: 'exhaustive', length: 16 },
    seed: 42,
  });
  await waitFor(
    async () => {
      const job = await getJson(first, `/v1/jobs/${running.id}`);
      return job.state === 'running' && job.progress.generation >= 1;
    },
    { what: 'the long job to be running' },
  );
  const t0 = Date.now();
  const { code, signal } = await stopServer(first, { signal: 'SIGTERM', timeoutMs: 10_000 * SCALE });
  const took = Date.now() - t0;
  assert.equal(signal, null);
  assert.equal(code, 0, first.log);
  assert.ok(took < 5_000 * SCALE, `SIGTERM took ${took} ms`);
  assert.match(first.log, new RegExp(`^\\S+Z job ${running.id} requeued kind=lattice seed=41 reason=shutdown$`, 'm'));

  // In the database: both queued, the interrupted one with no start time.
  // (CASE, not a bare IS NULL: PostgreSQL prints a boolean as t or f.)
  const rows = dbRows(
    first.db,
    'SELECT id, state, CASE WHEN started_ms IS NULL THEN 1 ELSE 0 END, ' +
      'CASE WHEN finished_ms IS NULL THEN 1 ELSE 0 END FROM jobs ORDER BY seq',
  );
  assert.deepEqual(rows, [
    [running.id, 'queued', '1', '1'],
    [waiting.id, 'queued', '1', '1'],
  ]);

  const second = keep(await startServer({ db: first.db, args: ['--workers', '2', ...LEASE] }));
  try {
    for (const job of [running, waiting]) {
      const done = await waitForJob(second, job.id, { timeoutMs: 60_000 * SCALE });
      assertValid('job', done);
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
      assert.equal(done.progress.generation, done.progress.of);
      assert.equal((await request(second, `/v1/levels/${done.level_ids[0]}`)).status, 200);
    }
  } finally {
    const { code: code2 } = await stopServer(second);
    assert.equal(code2, 0, second.log);
  }
  if (!PG) {
    assert.match(second.log, new RegExp(`^\\S+Z job ${running.id} queued kind=lattice seed=41 reason=restart$`, 'm'));
  } else {
    // Queued by the shutdown, so no lease to wait for: the new node claims it.
    assert.match(second.log, new RegExp(`^\\S+Z job ${running.id} running kind=lattice seed=41 `, 'm'));
    assert.ok(!second.log.includes(`job ${running.id} requeued `), second.log);
  }
});
