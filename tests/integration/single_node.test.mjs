// single_node.test.mjs - SQLite serves one process: a second `starforge
// serve` on the database file of a running one stops at start, within
// seconds, with one line that names the file and says what to do, and
// touches none of the first one's jobs (it would otherwise requeue the job
// the first is running and run it again). The lock goes with the process:
// once the first stops, a new server starts on the same file.
//
// SQLite only: PostgreSQL serves several nodes on one database by design,
// so the PostgreSQL pass (STARFORGE_TEST_DB=postgres) skips this test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import {
  BIN,
  LONG_JOB,
  SCALE,
  getJson,
  removeDir,
  sqliteOnly,
  startServer,
  stopServer,
  submit,
  waitFor,
  waitForJob,
} from './harness.mjs';

/** The log's lines without their timestamps. */
function lines(log) {
  return log.split('\n').map((l) => l.replace(/^\S+Z /, ''));
}

/**
 * Runs `starforge serve` on `db` and resolves with { code, signal, log,
 * ms } once it exits; rejects (after killing it) if it is still running
 * after `timeoutMs`.
 */
function serveUntilExit(db, timeoutMs) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const proc = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--db', db, '--workers', '1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      log += chunk;
    });
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the second serve still runs after ${timeoutMs} ms:\n${log}`));
    }, timeoutMs);
    proc.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, log, ms: Date.now() - t0 });
    });
  });
}

const ONE_PROCESS = sqliteOnly("the one-process lock is SQLite's; PostgreSQL takes several nodes on one database");

test('a second serve on the same SQLite file is refused; the first runs its job exactly once', ONE_PROCESS, async (t) => {
  const first = await startServer({ args: ['--workers', '1'] });
  const servers = [first];
  t.after(() => {
    for (const s of servers) if (!s.exited) s.proc.kill('SIGKILL');
    removeDir(first);
  });

  const job = await submit(first, LONG_JOB(51));
  const running = await waitFor(
    async () => {
      const j = await getJson(first, `/v1/jobs/${job.id}`);
      return j.state === 'running' && j.progress.generation >= 1 && j;
    },
    { what: 'the long job to be running' },
  );

  const second = await serveUntilExit(first.db, 10_000 * SCALE);
  assert.equal(second.signal, null, second.log);
  assert.notEqual(second.code, 0, second.log);
  assert.ok(second.ms < 5_000 * SCALE, `the second serve took ${second.ms} ms to stop`);
  // One line says why (after the start-up line that names the version).
  const said = second.log.trim().split('\n').filter((l) => l.startsWith('starforge serve: '));
  assert.equal(said.length, 1, second.log);
  assert.equal(
    said[0],
    `starforge serve: database ${first.db} is in use by another starforge process; SQLite ` +
      'serves one process at a time: stop the other one, or run several nodes on PostgreSQL ' +
      '(--db postgresql://...)',
  );
  assert.ok(!/requeue|reason=restart|running|listening/.test(second.log), second.log);

  // The first server's job was not touched: still running, same start.
  const now = await getJson(first, `/v1/jobs/${job.id}`);
  assert.equal(now.state, 'running', JSON.stringify(now));
  assert.equal(now.started_at, running.started_at);

  const done = await waitForJob(first, job.id, { timeoutMs: 90_000 * SCALE });
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  assert.equal(done.started_at, running.started_at);
  const { code } = await stopServer(first);
  assert.equal(code, 0, first.log);
  const own = lines(first.log);
  assert.equal(own.filter((l) => l.startsWith(`job ${job.id} running `) || l === `job ${job.id} running`).length, 1, first.log);
  assert.equal(own.filter((l) => l.startsWith(`job ${job.id} succeeded`)).length, 1, first.log);
  assert.ok(!first.log.includes('reason=restart'), first.log);

  // The lock went with the first process: a new server starts on the file.
  const third = await startServer({ db: first.db, args: ['--workers', '1'] });
  servers.push(third);
  assert.equal((await getJson(third, `/v1/jobs/${job.id}`)).state, 'succeeded');
  const { code: code3 } = await stopServer(third);
  assert.equal(code3, 0, third.log);
});
