// cluster_bench.mjs - several `starforge serve` nodes on one PostgreSQL
// database (issue 14), measured: throughput with 1, 2 and 4 nodes, failover
// time after SIGKILL, and how long a cancel on one node takes to stop a job
// running on another. Not a test: it prints figures (medians, p99) for the
// README. Run by `make bench` under tests/pg/cluster.sh (a throwaway
// cluster; STARFORGE_TEST_DB=postgres so that the harness gives every run a
// schema of its own), or by hand:
//
//   sh tests/pg/cluster.sh env STARFORGE_TEST_DB=postgres STARFORGE_BIN=$PWD/build/starforge \
//     node bench/cluster_bench.mjs
//
//   CLUSTER_BENCH_JOBS=300     jobs per throughput run
//   CLUSTER_BENCH_ROUNDS=3     throughput runs per node count (the median is printed)
//   CLUSTER_BENCH_KILLS=10     failovers measured
//   CLUSTER_BENCH_CANCELS=10   cross-node cancels measured
//   CLUSTER_BENCH_READ_S=5     seconds per round of the reads case
//   CLUSTER_BENCH_PARTS=throughput,reads,failover,cancel   the parts to run
import { execFile } from 'node:child_process';
import os from 'node:os';

import {
  LONG_JOB,
  PG,
  dbRows,
  getJson,
  newDatabase,
  request,
  sleep,
  startServer,
  stopServer,
  submit,
  waitFor,
} from '../tests/integration/harness.mjs';

if (!PG) {
  console.error('cluster_bench: run under tests/pg/cluster.sh with STARFORGE_TEST_DB=postgres');
  process.exit(2);
}

const JOBS = Number(process.env.CLUSTER_BENCH_JOBS || 300);
const ROUNDS = Number(process.env.CLUSTER_BENCH_ROUNDS || 3);
const KILLS = Number(process.env.CLUSTER_BENCH_KILLS || 10);
const CANCELS = Number(process.env.CLUSTER_BENCH_CANCELS || 10);
const LEASE_S = 2;
const READ_S = Number(process.env.CLUSTER_BENCH_READ_S || 5);
const PARTS = new Set((process.env.CLUSTER_BENCH_PARTS || 'throughput,reads,failover,cancel').split(','));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

async function nodes(db, n, extra = []) {
  const out = [];
  for (let i = 0; i < n; i++)
    out.push(await startServer({ db, args: ['--workers', '1', '--lease-seconds', String(LEASE_S), '--node', `bench-${i}`, '--max-queue', '100000', ...extra] }));
  return out;
}

async function stopAll(servers) {
  for (const s of servers) if (!s.exited) await stopServer(s);
}

// A digger job of milliseconds: the queue, the claims and the commits are
// what is measured, not the generator.
const SHORT_JOB = (seed) => ({ kind: 'digger', params: { difficulty: 'easiest', count: 1 }, seed });

// Jobs per second for `n` nodes: JOBS jobs queued through node 0 while every
// node drains the queue; from the first submission to the last success.
async function throughput(n) {
  const { db } = newDatabase();
  const servers = await nodes(db, n);
  const t0 = Date.now();
  for (let i = 0; i < JOBS; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, JOBS - i) }, (_, k) => submit(servers[(i + k) % n], SHORT_JOB(i + k))));
  await waitFor(() => Number(dbRows(db, "SELECT count(*) FROM jobs WHERE state = 'succeeded'")[0][0]) === JOBS, {
    what: `${JOBS} jobs to succeed on ${n} nodes`,
    timeoutMs: 600_000,
    intervalMs: 100,
  });
  const secs = (Date.now() - t0) / 1000;
  const per = dbRows(db, 'SELECT count(*) FROM jobs GROUP BY attempt');
  await stopAll(servers);
  return { rate: JOBS / secs, attempts: per };
}

// Seconds from SIGKILL of the node running a job to another node running it.
async function failover() {
  const { db } = newDatabase();
  const [a] = await nodes(db, 1);
  const job = await submit(a, LONG_JOB(7));
  await waitFor(async () => (await getJson(a, `/v1/jobs/${job.id}`)).state === 'running', { what: 'the job to run' });
  const [b] = await nodes(db, 1, []);
  const t0 = Date.now();
  a.proc.kill('SIGKILL');
  await waitFor(() => Number(dbRows(db, `SELECT attempt FROM jobs WHERE id = '${job.id}' AND state = 'running'`)[0]?.[0] || 0) >= 2, {
    what: 'another node to run the job',
    timeoutMs: 60_000,
    intervalMs: 20,
  });
  const secs = (Date.now() - t0) / 1000;
  await request(b, `/v1/jobs/${job.id}`, { method: 'DELETE' });
  await stopAll([b]);
  return secs;
}

// Milliseconds from DELETE on node b to the job, running on node a, being cancelled.
async function crossCancel() {
  const { db } = newDatabase();
  const [a] = await nodes(db, 1);
  const job = await submit(a, LONG_JOB(9));
  await waitFor(async () => (await getJson(a, `/v1/jobs/${job.id}`)).state === 'running', { what: 'the job to run' });
  const [b] = await nodes(db, 1);
  const t0 = Date.now();
  const res = await request(b, `/v1/jobs/${job.id}`, { method: 'DELETE' });
  if (res.status !== 202) throw new Error(`DELETE: ${res.status} ${res.text}`);
  await waitFor(async () => (await getJson(b, `/v1/jobs/${job.id}`)).state === 'cancelled', {
    what: 'the cancel',
    intervalMs: 10,
  });
  const ms = Date.now() - t0;
  await stopAll([a, b]);
  return ms;
}

/*
 * Reads on PostgreSQL, one node: wrk (64 connections, two threads) GETs
 * /v1/jobs/{id} (a store read each, never cached) for READ_S seconds while
 * this process times GET /healthz (answered on the loop, no store) every
 * 5 ms: with the read pool (default, 4 threads) the loop hands every read
 * over and stays free; with --read-threads 0 it waits for each round trip
 * itself. wrk, not fetch: Node's client would be the bottleneck.
 */
async function reads(threads) {
  const { db } = newDatabase();
  const [a] = await nodes(db, 1, ['--read-threads', String(threads)]);
  const job = await submit(a, { kind: 'digger', params: { difficulty: 'easiest', count: 1 }, seed: 5 });
  await waitFor(async () => (await getJson(a, `/v1/jobs/${job.id}`)).state === 'succeeded', { what: 'the job' });
  const health = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const t0 = performance.now();
      await (await fetch(`${a.base}/healthz`)).arrayBuffer();
      health.push(performance.now() - t0);
      await sleep(5);
    }
  })();
  const out = await new Promise((resolve, reject) =>
    execFile('wrk', ['-t2', '-c64', `-d${READ_S}s`, '--latency', `${a.base}/v1/jobs/${job.id}`], (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    ),
  );
  probing = false;
  await prober;
  await stopAll([a]);
  const rate = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(out)?.[1]);
  const p99 = /^\s+99%\s+([\d.]+)(us|ms|s)$/m.exec(out);
  const ms = p99 ? Number(p99[1]) * { us: 0.001, ms: 1, s: 1000 }[p99[2]] : NaN;
  if (/Non-2xx/.test(out)) throw new Error(`reads: answers other than 200:\n${out}`);
  return { rate, p99: ms, health: pct(health, 99) };
}

console.log(`cluster_bench: ${os.cpus().length} CPUs (${os.cpus()[0]?.model || 'unknown'}), PostgreSQL over a Unix socket, lease ${LEASE_S} s, one worker per node`);
const base = [];
const rows = [];
for (const n of PARTS.has('throughput') ? [1, 2, 4] : []) {
  const rates = [];
  for (let r = 0; r < ROUNDS; r++) rates.push((await throughput(n)).rate);
  const m = median(rates);
  if (n === 1) base.push(m);
  rows.push([n, m, m / base[0]]);
}
if (rows.length) console.log(`\nThroughput: ${JOBS} short digger jobs, medians of ${ROUNDS} runs`);
if (rows.length) console.log('nodes  jobs/s   x one node');
for (const [n, m, x] of rows) console.log(`${String(n).padStart(5)}  ${m.toFixed(0).padStart(6)}   ${x.toFixed(2)}`);

const readRuns = { pool: [], loop: [] };
for (let r = 0; r < (PARTS.has('reads') ? ROUNDS : 0); r++) {
  readRuns.pool.push(await reads(4));
  readRuns.loop.push(await reads(0));
}
if (readRuns.pool.length) {
  console.log(`\nReads on PostgreSQL: GET /v1/jobs/{id}, wrk 64 connections, ${READ_S} s per run, medians of ${ROUNDS} runs taken in turns`);
  console.log('case                                   reads/s   p99 ms   /healthz p99 ms');
}
for (const [name, label] of readRuns.pool.length ? [['pool', 'read pool, 4 threads (default)'], ['loop', 'on the loop thread (--read-threads 0)']] : [])
  console.log(
    `${label.padEnd(38)}${median(readRuns[name].map((x) => x.rate)).toFixed(0).padStart(8)}` +
      `${median(readRuns[name].map((x) => x.p99)).toFixed(1).padStart(9)}${median(readRuns[name].map((x) => x.health)).toFixed(1).padStart(12)}`,
  );

const fo = [];
for (let i = 0; i < (PARTS.has('failover') ? KILLS : 0); i++) fo.push(await failover());
if (fo.length) console.log(`\nFailover after SIGKILL (lease ${LEASE_S} s), ${KILLS} kills: p50 ${median(fo).toFixed(2)} s, p99 ${pct(fo, 99).toFixed(2)} s, max ${Math.max(...fo).toFixed(2)} s`);

const cc = [];
for (let i = 0; i < (PARTS.has('cancel') ? CANCELS : 0); i++) cc.push(await crossCancel());
if (cc.length) console.log(`Cancel on another node, ${CANCELS} cancels: p50 ${median(cc).toFixed(0)} ms, p99 ${pct(cc, 99).toFixed(0)} ms`);
await sleep(10);
