// cluster.test.mjs - several `starforge serve` nodes on one PostgreSQL
// database (issue 14): jobs submitted to any node run on some node, once;
// a node killed with SIGKILL while it runs jobs loses them to the others
// once its lease expires, and every accepted job still succeeds exactly
// once, with the levels `starforge generate` makes for the same kind,
// params and seed; a node frozen (SIGSTOP) past its lease has its late
// result refused; a cancel on one node stops the job on another; the
// database restarted under load loses nothing; an evaluation computed on
// one node is a cache hit on another.
//
// PostgreSQL pass only: SQLite serves one process (single_node.test.mjs).
// Leases of 2 s keep the failovers short; heartbeats come every second.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, test } from 'node:test';

import {
  BIN,
  LONG_JOB,
  assertProblem,
  assertValid,
  PG,
  SCALE,
  dbRows,
  getJson,
  newDatabase,
  parseMetrics,
  readEvents,
  request,
  sleep,
  startServer,
  stopAndClean,
  stopServer,
  submit,
  waitFor,
  waitForJob,
} from './harness.mjs';

// A stream that never ends must fail the test, not hang the suite.
const only = {
  skip: PG ? false : 'PostgreSQL pass only: several nodes share one database',
  timeout: 180_000 * SCALE,
};
const LEASE_S = 2;
const servers = [];

after(async () => {
  for (const s of servers) {
    if (s.exited) continue;
    try {
      process.kill(s.proc.pid, 'SIGCONT');
    } catch {
      // gone already
    }
    await stopAndClean(s).catch(() => {});
  }
});

async function node(db, name, workers = 1) {
  const s = await startServer({
    db,
    args: ['--workers', String(workers), '--lease-seconds', String(LEASE_S), '--node', name],
  });
  s.name = name;
  servers.push(s);
  return s;
}

// The exhaustive search of length 16, about 1.5 s on one core: long enough
// to be caught running.
const MEDIUM_JOB = (seed) => ({
  kind: 'lattice',
  params: { algorithm: 'exhaustive', length: 16 },
  seed,
});

// The level ids `starforge generate` finds for a job: what any node must store.
function expectedLevels(job) {
  const out = execFileSync(BIN, ['generate', job.kind, '--seed', String(job.seed), '--params', JSON.stringify(job.params), '--threads', '1'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out).levels.map((l) => l.id);
}

// Lines of a node's log about job `id` with transition `what`.
function lines(server, id, what) {
  return server.log.split('\n').filter((l) => l.includes(`job ${id} ${what}`));
}

test('three nodes, one killed mid-run: every job succeeds once, with the levels generate makes', only, async () => {
  const { db } = newDatabase();
  const [a, b, c] = [await node(db, 'node-a'), await node(db, 'node-b'), await node(db, 'node-c')];
  const jobs = [];
  for (let i = 0; i < 6; i++) {
    const spec = MEDIUM_JOB(100 + i);
    const job = await submit(i % 2 ? b : a, spec);
    jobs.push({ spec, id: job.id });
  }
  // Kill whichever of a and b first runs one of them (c is never killed).
  const victim = await waitFor(
    () => [a, b].find((s) => jobs.some((j) => lines(s, j.id, 'running').length)),
    { what: 'a node running a job', timeoutMs: 30_000 * SCALE },
  );
  const runningThere = jobs.filter((j) => lines(victim, j.id, 'running').length);
  victim.proc.kill('SIGKILL');
  await waitFor(() => victim.exited, { what: 'the killed node to exit' });
  const alive = [a, b, c].filter((s) => s !== victim);

  for (const j of jobs) {
    const done = await waitForJob(alive[0], j.id, { timeoutMs: 90_000 * SCALE });
    assert.equal(done.state, 'succeeded', `${j.id}: ${JSON.stringify(done)}`);
    j.levels = done.level_ids;
  }
  // Any node answers for any job and level.
  const level = jobs[0].levels[0];
  for (const s of alive) assert.equal((await request(s, `/v1/levels/${level}`)).status, 200);
  // Stopped, the survivors have flushed their logs (the killed node's last
  // lines died with it: its buffer is flushed four times a second).
  for (const s of alive) assert.equal((await stopServer(s)).code, 0, s.log);
  for (const j of jobs) {
    // Exactly once: one success recorded (the store refuses a second, the
    // fence a late one), never two in the logs, the levels of a single run.
    const successes = [a, b, c].flatMap((s) => lines(s, j.id, 'succeeded'));
    assert.ok(successes.length <= 1, `${j.id} succeeded ${successes.length} times`);
    if (!runningThere.includes(j)) assert.equal(successes.length, 1, `${j.id} never logged its success`);
    assert.deepEqual(j.levels, expectedLevels(j.spec), `${j.id}: the levels of a single run`);
  }
  const rows = dbRows(db, `SELECT id, state, attempt FROM jobs ORDER BY seq`);
  assert.equal(rows.length, jobs.length);
  for (const [, state] of rows) assert.equal(state, 'succeeded');
  // The killed node's running job was rescued by a surviving node, once its
  // lease had expired, and run there.
  const rescued = runningThere.filter((j) =>
    alive.some((s) => lines(s, j.id, 'requeued').some((l) => l.includes('reason=lease_expired'))),
  );
  assert.ok(rescued.length >= 1, `no job of the killed node was rescued:\n${alive.map((s) => s.log).join('\n')}`);
  for (const j of rescued) assert.ok(alive.some((s) => lines(s, j.id, 'running').length), j.id);
});

test('a node frozen past its lease has its late result refused', only, async () => {
  const { db } = newDatabase();
  const a = await node(db, 'frozen-a');
  const spec = MEDIUM_JOB(31);
  const job = await submit(a, spec);
  await waitFor(() => lines(a, job.id, 'running').length, { what: 'a to run the job' });
  const b = await node(db, 'rescuer-b'); // started after the claim: a holds the job
  process.kill(a.proc.pid, 'SIGSTOP');
  try {
    // b rescues the job once a's lease has expired, and runs it to the end.
    await waitFor(() => lines(b, job.id, 'running').length, {
      what: 'b to run the rescued job',
      timeoutMs: (LEASE_S + 10) * 1000 * SCALE,
    });
  } finally {
    process.kill(a.proc.pid, 'SIGCONT');
  }
  const done = await waitForJob(b, job.id, { timeoutMs: 120_000 * SCALE });
  assert.equal(done.state, 'succeeded');
  // a, thawed, finds its lease lost (heartbeat) or its outcome fenced off.
  await waitFor(() => lines(a, job.id, 'lost').length || lines(a, job.id, 'dropped').length, {
    what: "a to drop the job it no longer holds",
    timeoutMs: 30_000 * SCALE,
  });
  await waitFor(() => lines(b, job.id, 'succeeded').length === 1, { what: "b's log of the success" });
  await sleep(1500); // a late success of a's would have been logged by now
  assert.equal(lines(a, job.id, 'succeeded').length, 0, a.log);
  assert.deepEqual(done.level_ids, expectedLevels(spec));
  assert.equal((await getJson(a, `/v1/jobs/${job.id}`)).state, 'succeeded');
});

test('DELETE on one node stops the job running on another within about a second', only, async () => {
  const { db } = newDatabase();
  const a = await node(db, 'runner-a');
  const job = await submit(a, LONG_JOB(41));
  await waitFor(() => lines(a, job.id, 'running').length, { what: 'a to run the job' });
  const b = await node(db, 'canceller-b'); // after a's claim: the job is a's
  const t0 = Date.now();
  const res = await request(b, `/v1/jobs/${job.id}`, { method: 'DELETE' });
  assert.equal(res.status, 202, res.text);
  const done = await waitForJob(b, job.id, { timeoutMs: 10_000 * SCALE });
  const ms = Date.now() - t0;
  assert.equal(done.state, 'cancelled');
  assert.ok(ms < 5000 * SCALE, `cancelled after ${ms} ms`);
  await waitFor(() => lines(a, job.id, 'cancelled').length === 1, { what: "a's log of the cancel" });
});

/** The events of an SSE body, read to its end (harness.mjs, readEvents). */
const readStream = async (res) => (await readEvents(res)).events;

test('the events of a job running on another node stream from any node, with Last-Event-ID', only, async () => {
  const { db } = newDatabase();
  const a = await node(db, 'owner-a');
  const spec = { kind: 'lattice', params: { length: 16, generations: 120, population: 40 }, seed: 51 };
  const job = await submit(a, spec);
  await waitFor(() => lines(a, job.id, 'running').length, { what: 'a to run the job' });
  const b = await node(db, 'watcher-b'); // after a's claim: the job is a's
  const [onA, onB] = await Promise.all([a, b].map((s) => fetch(`${s.base}/v1/jobs/${job.id}/events`)));
  assert.equal(onB.status, 200);
  const [evA, evB] = await Promise.all([readStream(onA), readStream(onB)]);
  const done = await getJson(b, `/v1/jobs/${job.id}`);
  assert.equal(done.state, 'succeeded');
  // b streams what a streams, byte for byte: each generation, then the end.
  const endB = evB.at(-1);
  assert.equal(endB.event, 'end');
  assert.equal(endB.data.state, 'succeeded');
  assert.equal(endB.id, spec.params.generations + 1);
  const progressB = evB.slice(0, -1);
  assert.ok(progressB.length >= 1, 'no progress event on b');
  const byId = new Map(evA.map((e) => [e.id, e]));
  for (const e of evB) assert.equal(e.raw, byId.get(e.id)?.raw, `event ${e.id} differs between the nodes`);
  // From the generation b connected at, every one: ids rise by 1.
  progressB.forEach((e, i) => i && assert.equal(e.id, progressB[i - 1].id + 1));
  assert.equal(progressB.at(-1).id, spec.params.generations);
  // How late b is, from a's own stream to b's (the renewal and the read).
  const lags = progressB.map((e) => e.at - byId.get(e.id).at);
  console.log(`# cross-node progress lag: median ${lags.sort((x, y) => x - y)[lags.length >> 1]} ms, max ${Math.max(...lags)} ms`);
  // Last-Event-ID on b: the events after it, then the end (the job is done).
  const again = await readStream(await fetch(`${b.base}/v1/jobs/${job.id}/events`, { headers: { 'Last-Event-ID': '5' } }));
  assert.deepEqual(again.map((e) => e.event), ['end']);
});

test('a job queued on one node and watched on another streams its whole run', only, async () => {
  const { db } = newDatabase();
  const a = await node(db, 'busy-a');
  const b = await node(db, 'idle-b');
  // b watches a job before any node has claimed it; whichever node runs it,
  // the stream holds every generation from 1 and the end.
  const spec = { kind: 'lattice', params: { length: 14, generations: 100, population: 30 }, seed: 61 };
  const job = await submit(a, spec);
  const events = await readStream(await fetch(`${b.base}/v1/jobs/${job.id}/events`));
  const progress = events.slice(0, -1);
  assert.equal(events.at(-1).event, 'end');
  assert.equal(events.at(-1).data.state, 'succeeded');
  assert.ok(progress.length >= 1);
  progress.forEach((e, i) => i && assert.equal(e.id, progress[i - 1].id + 1, 'no gap, no repeat'));
});

// The database restarted under load. tests/pg/cluster.sh exports
// STARFORGE_TEST_PG_CTL, the script that stops (fast: sessions ended, a
// checkpoint) and starts its server; a server of the caller's has none.
const CTL = process.env.STARFORGE_TEST_PG_CTL;
const withCtl = {
  ...only,
  skip: only.skip || (CTL ? false : 'needs STARFORGE_TEST_PG_CTL (the cluster tests/pg/cluster.sh starts)'),
};

function pgctl(what) {
  execFileSync('sh', [CTL, what], { stdio: 'pipe' });
}

test('the database restarted under load: nodes say so on /readyz, reconnect, and lose nothing accepted', withCtl, async () => {
  const { db } = newDatabase();
  const nodes = [await node(db, 'steady-a', 2), await node(db, 'steady-b', 2)];
  // Submitters: quick digger jobs to both nodes, one at a time each, all
  // the while. Every answer is a 202 (accepted: it must finish) or a 503
  // problem that says the storage is unavailable; nothing else.
  const accepted = [];
  const refused = [];
  const wrong = [];
  let load = true;
  let seed = 1000;
  const submitter = async (s) => {
    while (load) {
      const spec = { kind: 'digger', params: { difficulty: 'easiest', count: 1 }, seed: seed++ };
      let res;
      try {
        res = await request(s, '/v1/jobs', { method: 'POST', json: spec });
      } catch (e) {
        wrong.push(`POST to ${s.name}: ${e.message}`);
        continue;
      }
      if (res.status === 202) accepted.push({ id: res.body.id, spec });
      else if (res.status === 503 && res.body?.type === 'https://starforge.dev/problems/storage-unavailable') refused.push(res.body.detail);
      else wrong.push(`POST to ${s.name}: ${res.status} ${res.text}`);
      await sleep(20);
    }
  };
  const load_ = nodes.map(submitter);
  await waitFor(() => accepted.length >= 10, { what: 'jobs accepted before the restart', timeoutMs: 30_000 * SCALE });

  pgctl('stop');
  let restarted = false;
  try {
    // Both nodes notice within a few seconds: not ready, storage unavailable,
    // and a read answers 503 (not 500) with Retry-After.
    for (const s of nodes) {
      const r = await waitFor(
        async () => {
          const res = await request(s, '/readyz');
          return res.status === 503 && res.body.checks.storage === 'unavailable' ? res : null;
        },
        { what: `${s.name} to say the database is unavailable`, timeoutMs: 10_000 * SCALE },
      );
      assertValid('readiness', r.body);
      assert.equal(r.body.status, 'not ready');
      assert.ok(r.body.checks.storage_error, 'storage_error names the failure');
      const list = await request(s, '/v1/jobs');
      assertProblem(list, 503, 'storage-unavailable');
      assert.equal(list.headers.get('retry-after'), '5');
    }
    await sleep(1000);
  } finally {
    pgctl('start');
    restarted = true;
  }
  assert.ok(restarted);
  // Back within a few seconds: each node reconnects and is ready again.
  for (const s of nodes)
    await waitFor(async () => (await request(s, '/readyz')).status === 200, {
      what: `${s.name} to be ready again`,
      timeoutMs: 15_000 * SCALE,
    });
  const before = accepted.length;
  await waitFor(() => accepted.length >= before + 10, { what: 'jobs accepted after the restart', timeoutMs: 30_000 * SCALE });
  load = false;
  await Promise.all(load_);
  assert.deepEqual(wrong, [], 'every answer was a 202 or a 503 storage-unavailable');
  assert.ok(refused.length >= 1, 'no submission reached the nodes while the database was down');
  // Nothing accepted is lost: every job finishes, and succeeds.
  for (const j of accepted) {
    const done = await waitForJob(nodes[j.spec.seed % 2], j.id, { timeoutMs: 120_000 * SCALE });
    assert.equal(done.state, 'succeeded', `${j.id}: ${JSON.stringify(done)}`);
  }
  const rows = dbRows(db, `SELECT count(*) FROM jobs WHERE state <> 'succeeded'`);
  assert.equal(Number(rows[0][0]), 0, 'a job the database holds did not succeed');
  console.log(`# database restart: ${accepted.length} jobs accepted, ${refused.length} refused with 503 while it was down`);
});

test('the evaluation cache is shared: an evaluation computed on one node is a hit on another', only, async () => {
  const { db } = newDatabase();
  const [a, b] = [await node(db, 'eval-a'), await node(db, 'eval-b')];
  const path = '/v1/evaluations/square/HPPHHPHPPHHP';
  const count = async (s) => {
    const m = parseMetrics((await request(s, '/metrics')).text);
    return { hits: m.get('starforge_evaluation_cache_hits_total'), enums: m.get('starforge_enumerations_total') };
  };
  const a0 = await count(a);
  const first = await request(a, path);
  assert.equal(first.status, 200, first.text);
  const a1 = await count(a);
  assert.equal(a1.enums - a0.enums, 1, 'a enumerated it');
  const b0 = await count(b);
  const second = await request(b, path);
  assert.equal(second.status, 200, second.text);
  assert.equal(second.text, first.text, 'byte for byte the same evaluation');
  const b1 = await count(b);
  assert.deepEqual({ hits: b1.hits - b0.hits, enums: b1.enums - b0.enums }, { hits: 1, enums: 0 }, 'b read it from the database');
});
