// kill_loop.mjs - the crash soak (see kill_loop.sh for how to run it).
//
// Each round starts `starforge serve` on 127.0.0.1 (a free port) on one
// temporary database, sends it a mix of jobs (lattice GA and exhaustive,
// racetrack, digger; about a third with an Idempotency-Key; replays of keys
// already answered; a few cancels) while it runs them, and kills it with
// SIGKILL after a seeded random delay: some rounds within the first 40 ms
// (start-up: migrations, the requeue of pending jobs), the rest while jobs
// run and commit. After every kill the database must pass PRAGMA
// integrity_check. In some rounds the disk also fills up before the kill
// (the store's test seam, STARFORGE_TEST_STORAGE_FAULT: submits then get
// 507 and finished jobs wait to record their outcome), so that kills land
// on a service in that state too. A last run, with room again, finishes
// everything and stops with SIGTERM.
//
// What must hold (every breach is an "anomaly" and fails the run):
//   - every job the client saw accepted (202) is in the database and final:
//     succeeded, or cancelled only when the client cancelled it, or failed
//     for a reason that is not the store or a lost run; no job at all is
//     left queued or running;
//   - each ran to its end once: in the logs of all the runs no job has two
//     final transitions, nor runs again after one; a job seen final over
//     HTTP never changes afterwards;
//   - an Idempotency-Key names one job for ever, across kills: a key resent
//     after a kill cut its answer off gets the same job as any other answer;
//   - every level a succeeded job names exists (once: ids are unique), and
//     every stored level is named by a succeeded job (no orphan); identical
//     jobs (same kind, params and seed) found identical levels, interrupted
//     or not;
//   - PRAGMA integrity_check is ok after every kill and at the end, and
//     PRAGMA foreign_key_check finds nothing.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.resolve(ROOT, process.env.STARFORGE_BIN || 'build/starforge');
const KILLS = Number(process.env.KILLS || 30);
const SEED = Number(process.env.KILL_SEED || Date.now() % 1_000_000_000);
const WORKERS = Number(process.env.KILL_WORKERS || 2);
const SLOW = /sanitize/.test(BIN) || !!process.env.STARFORGE_SLOW;
const SCALE = SLOW ? 4 : 1;
const OUT = path.join(ROOT, 'build/soak/kill_loop.txt');

/* ---- seeded randomness: one stream for the schedule, one for the jobs ---- */

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const schedule = mulberry32(SEED);
const choose = mulberry32(SEED ^ 0x9e3779b9);
const uniform = (r, lo, hi) => lo + (hi - lo) * r();
const pick = (r, arr) => arr[Math.floor(r() * arr.length)];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/* ---- what the client saw ---- */

const anomalies = [];
const anomaly = (text) => {
  anomalies.push(text);
  console.log(`ANOMALY: ${text}`);
};
const accepted = new Map(); // job id -> { body, key }
const keyToId = new Map(); // Idempotency-Key -> job id, from its first 202
const keyBody = new Map(); // Idempotency-Key -> the body it was sent with
const pendingKeys = new Set(); // keys whose answer a kill cut off: resent later
const cancelAsked = new Set();
const finalSeen = new Map(); // job id -> "state levels" once seen final over HTTP
const fig = {
  early: 0, late: 0, bursts: 0, fullRounds: 0, submitted: 0, rejected: {}, cut: 0, cutKeyed: 0, replays: 0,
  cancels: 0, runningAtKill: 0, queuedAtKill: 0, polls: 0,
};
let keySeq = 0;

/**
 * One job body from the jobs stream. Seeds come from a small pool, so that
 * identical jobs recur and their levels can be compared.
 */
function jobBody(burst) {
  const seed = Math.floor(choose() * 24);
  const r = choose();
  if (burst)
    return r < 0.5
      ? { kind: 'lattice', params: { length: pick(choose, [10, 12]), generations: 3, population: 10 }, seed }
      : { kind: 'digger', params: { difficulty: 'easiest' }, seed };
  if (r < 0.4)
    return {
      kind: 'lattice',
      params: {
        length: pick(choose, [12, 14, 16, 18]),
        generations: pick(choose, [10, 30, 60]),
        population: pick(choose, [30, 60]),
      },
      seed,
    };
  if (r < 0.5)
    return { kind: 'lattice', params: { algorithm: 'exhaustive', length: pick(choose, [12, 14, 15]) }, seed };
  if (r < 0.75)
    return {
      kind: 'racetrack',
      params: { points: pick(choose, [20, 30]), population: pick(choose, [10, 20]), generations: pick(choose, [10, 20]) },
      seed,
    };
  return {
    kind: 'digger',
    params: { difficulty: pick(choose, ['easiest', 'medium', 'hard', 'hardest']), count: pick(choose, [1, 2, 3]) },
    seed,
  };
}

/* ---- the server ---- */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-kill-'));
const db = path.join(dir, 'starforge.db');
const faultFile = path.join(dir, 'fault');
const logs = [];

/** Spawns `serve` with stderr to a file (which survives the SIGKILL). */
function spawnServer(run) {
  const log = path.join(dir, `run-${String(run).padStart(2, '0')}.log`);
  logs.push(log);
  const fd = fs.openSync(log, 'w');
  const proc = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--db', db, '--workers', String(WORKERS)], {
    stdio: ['ignore', 'ignore', fd],
    env: { ...process.env, STARFORGE_TEST_STORAGE_FAULT: faultFile },
  });
  fs.closeSync(fd);
  const server = { proc, log, base: '', exited: null };
  server.exit = new Promise((resolve) => proc.on('exit', (code, signal) => resolve((server.exited = { code, signal }))));
  return server;
}

/** Resolves once the log says "listening" (the port is in that line). */
async function listening(server) {
  const deadline = Date.now() + 15_000 * SCALE;
  for (;;) {
    const m = /serve: listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(fs.readFileSync(server.log, 'utf8'));
    if (m) {
      server.base = `http://127.0.0.1:${m[1]}`;
      return;
    }
    if (server.exited) throw new Error(`serve exited (${JSON.stringify(server.exited)}) before listening:\n${fs.readFileSync(server.log, 'utf8')}`);
    if (Date.now() > deadline) throw new Error(`serve did not listen within 15 s:\n${fs.readFileSync(server.log, 'utf8')}`);
    await sleep(5);
  }
}

async function http(server, pathname, { method = 'GET', body, key } = {}) {
  const headers = {};
  if (body) headers['content-type'] = 'application/json';
  if (key) headers['idempotency-key'] = key;
  const res = await fetch(server.base + pathname, { method, headers, body: body && JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text && /json/.test(res.headers.get('content-type') || '') ? JSON.parse(text) : null, text };
}

/** sqlite3 on the database, read-only (it must not checkpoint what the next run recovers). */
function sql(query, { readonly = true } = {}) {
  const args = ['-batch', '-bail', '-noheader', '-separator', '\t'];
  if (readonly) args.push('-readonly');
  const out = execFileSync('sqlite3', [...args, db, query], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
}

/* ---- the client ---- */

/** Records a 202 answer to `body` sent with `key`. */
function recordAccepted(job, body, key) {
  if (key) {
    const first = keyToId.get(key);
    if (first && first !== job.id) anomaly(`Idempotency-Key ${key} answered ${job.id}, earlier ${first}`);
    if (!first) keyToId.set(key, job.id);
    pendingKeys.delete(key);
  }
  if (!accepted.has(job.id)) accepted.set(job.id, { body, key });
}

async function submitOnce(server, body, key) {
  fig.submitted++;
  let res;
  try {
    res = await http(server, '/v1/jobs', { method: 'POST', body, key });
  } catch {
    fig.cut++; // the kill cut the answer off: accepted or not, nobody knows
    if (key) {
      fig.cutKeyed++;
      pendingKeys.add(key); // ...but a key can ask again after the restart
    }
    return;
  }
  if (res.status === 202) recordAccepted(res.body, body, key);
  else if ([429, 503, 507].includes(res.status)) fig.rejected[res.status] = (fig.rejected[res.status] || 0) + 1;
  else anomaly(`POST /v1/jobs ${JSON.stringify(body)} answered ${res.status}: ${res.text}`);
}

/** Resends the keys whose answers were cut off, until each has one. */
async function resendPending(server) {
  for (const key of [...pendingKeys]) {
    try {
      const res = await http(server, '/v1/jobs', { method: 'POST', body: keyBody.get(key), key });
      if (res.status === 202) recordAccepted(res.body, keyBody.get(key), key);
      else if (![429, 503, 507].includes(res.status)) anomaly(`resending key ${key} answered ${res.status}: ${res.text}`);
    } catch {
      return; // killed again: next round
    }
  }
}

async function submitter(server, round) {
  while (!round.stop) {
    const r = choose();
    try {
      const ready = await http(server, '/readyz');
      if (ready.body && ready.body.checks.queued > (round.burst ? 60 : 12)) {
        await sleep(100);
        continue;
      }
    } catch {
      return;
    }
    if (r < 0.1 && keyToId.size) {
      // A replay: an answered key with its body must name the same job.
      fig.replays++;
      const key = pick(choose, [...keyToId.keys()]);
      await submitOnce(server, keyBody.get(key), key);
    } else if (r < 0.15 && accepted.size) {
      const id = pick(choose, [...accepted.keys()]);
      try {
        const res = await http(server, `/v1/jobs/${id}`, { method: 'DELETE' });
        if (res.status === 200 || res.status === 202) {
          cancelAsked.add(id);
          fig.cancels++;
        } else if (![409, 503, 507].includes(res.status)) anomaly(`DELETE ${id} answered ${res.status}: ${res.text}`);
      } catch {
        cancelAsked.add(id); // it may have been recorded before the kill
      }
    } else {
      const body = jobBody(round.burst);
      let key = null;
      if (choose() < 0.35) {
        key = `kill-${SEED}-${keySeq++}`;
        keyBody.set(key, body);
      }
      await submitOnce(server, body, key);
    }
    await sleep(round.burst ? uniform(choose, 0, 5) : uniform(choose, 20, 200));
  }
}

/** Polls jobs: a job seen final must stay exactly as it was. */
async function poller(server, round) {
  while (!round.stop) {
    if (accepted.size) {
      const id = pick(choose, [...accepted.keys()]);
      try {
        const res = await http(server, `/v1/jobs/${id}`);
        fig.polls++;
        if (res.status !== 200) anomaly(`GET /v1/jobs/${id} answered ${res.status}: ${res.text}`);
        else observe(res.body);
      } catch {
        return;
      }
    }
    await sleep(50);
  }
}

function observe(job) {
  if (!['succeeded', 'failed', 'cancelled'].includes(job.state)) return;
  const seen = `${job.state} ${JSON.stringify(job.level_ids)} ${job.finished_at}`;
  const before = finalSeen.get(job.id);
  if (before && before !== seen) anomaly(`job ${job.id} was "${before}" and is now "${seen}"`);
  finalSeen.set(job.id, seen);
}

/* ---- the rounds ---- */

const t0 = Date.now();
const perKill = [];
console.log(`kill loop: seed ${SEED}, ${KILLS} kills, ${WORKERS} workers, ${BIN}, database ${db}`);
try {
  for (let k = 1; k <= KILLS; k++) {
    // Three kinds of round: a kill during start-up; a burst of tiny jobs,
    // so that commits follow each other and the kill likely lands in one;
    // ordinary jobs that run for a while, killed at any moment.
    const early = schedule() < 0.15;
    const burst = !early && schedule() < 0.35;
    const delay = early
      ? uniform(schedule, 0, 40)
      : burst
        ? uniform(schedule, 20, 400)
        : schedule() < 0.5
          ? uniform(schedule, 50, 500)
          : uniform(schedule, 500, 2500);
    const full = !early && schedule() < 0.2;
    const fullAt = uniform(schedule, 0, delay);
    fs.writeFileSync(faultFile, '');
    const server = spawnServer(k);
    const round = { stop: false, burst };
    const clients = [];
    if (early) {
      fig.early++;
      await sleep(delay);
    } else {
      fig.late++;
      if (burst) fig.bursts++;
      await listening(server);
      clients.push(resendPending(server), submitter(server, round), submitter(server, round), poller(server, round));
      if (burst) clients.push(submitter(server, round), submitter(server, round));
      if (full) {
        fig.fullRounds++;
        await sleep(fullAt);
        fs.writeFileSync(faultFile, 'full');
        await sleep(delay - fullAt);
      } else {
        await sleep(delay);
      }
    }
    server.proc.kill('SIGKILL');
    const { signal, code } = await server.exit;
    round.stop = true;
    await Promise.allSettled(clients);
    if (signal !== 'SIGKILL') anomaly(`run ${k} ended with ${signal ?? code} before its kill:\n${fs.readFileSync(server.log, 'utf8').slice(-2000)}`);
    let state = 'no database yet';
    if (fs.existsSync(db)) {
      const check = sql('PRAGMA integrity_check').map((r) => r[0]).join(' ');
      if (check !== 'ok') anomaly(`integrity_check after kill ${k}: ${check}`);
      // A kill in the first start can land after SQLite made the file and
      // before the first migration committed: no table yet, nothing lost.
      if (sql("SELECT count(*) FROM sqlite_master WHERE name = 'jobs'")[0][0] === '0') {
        state = `integrity ${check}, no schema yet`;
      } else {
        const counts = Object.fromEntries(sql('SELECT state, count(*) FROM jobs GROUP BY state').map(([s, n]) => [s, Number(n)]));
        fig.runningAtKill += counts.running || 0;
        fig.queuedAtKill += counts.queued || 0;
        state = `integrity ${check}, running ${counts.running || 0}, queued ${counts.queued || 0}`;
      }
    }
    perKill.push(`kill ${String(k).padStart(2)} at ${delay.toFixed(0).padStart(4)} ms${early ? ' after spawn' : ' after listening'}${burst ? ' (burst)' : ''}${full ? ` (disk full from ${fullAt.toFixed(0)} ms)` : ''}: ${state}`);
    console.log(perKill.at(-1));
  }

  // The last run: resend what is pending, let everything finish, stop cleanly.
  fs.writeFileSync(faultFile, '');
  const server = spawnServer(KILLS + 1);
  await listening(server);
  for (let i = 0; pendingKeys.size && i < 50; i++) {
    await resendPending(server);
    if (pendingKeys.size) await sleep(200);
  }
  if (pendingKeys.size) anomaly(`keys never answered: ${[...pendingKeys].join(' ')}`);
  const drainStart = Date.now();
  for (;;) {
    const left = [];
    for (const st of ['queued', 'running']) left.push(...(await http(server, `/v1/jobs?state=${st}&page_size=100`)).body.jobs);
    if (!left.length) break;
    if (Date.now() - drainStart > 600_000 * SCALE) {
      anomaly(`jobs still unfinished after 10 minutes: ${left.map((j) => j.id).join(' ')}`);
      break;
    }
    await sleep(250);
  }
  fig.drainS = (Date.now() - drainStart) / 1000;
  for (const id of accepted.keys()) observe((await http(server, `/v1/jobs/${id}`)).body);
  server.proc.kill('SIGTERM');
  const { code, signal } = await server.exit;
  if (code !== 0) anomaly(`the last run exited ${code ?? signal} after SIGTERM`);
} catch (err) {
  anomaly(`the loop itself failed: ${err.stack || err}`);
}
const elapsed = (Date.now() - t0) / 1000;

/* ---- the checks ---- */

const dbFig = {};
try {
  const integrity = sql('PRAGMA integrity_check', { readonly: false }).map((r) => r[0]).join(' ');
  if (integrity !== 'ok') anomaly(`final integrity_check: ${integrity}`);
  const fk = sql('PRAGMA foreign_key_check', { readonly: false });
  if (fk.length) anomaly(`foreign_key_check: ${JSON.stringify(fk.slice(0, 5))}`);
  dbFig.integrity = integrity;

  const jobs = new Map(
    sql("SELECT id, state, kind, params, seed, coalesce(error, ''), coalesce(level_ids, '[]'), started_ms IS NOT NULL, finished_ms IS NOT NULL FROM jobs").map(
      ([id, state, kind, params, seed, error, levelIds, started, finished]) => [
        id,
        { state, kind, params, seed, error, levelIds: JSON.parse(levelIds), started: started === '1', finished: finished === '1' },
      ],
    ),
  );
  dbFig.jobs = jobs.size;
  dbFig.states = {};
  for (const j of jobs.values()) dbFig.states[j.state] = (dbFig.states[j.state] || 0) + 1;
  for (const [id, j] of jobs) {
    if (!['succeeded', 'failed', 'cancelled'].includes(j.state)) anomaly(`job ${id} ended ${j.state}`);
    if (!j.finished) anomaly(`job ${id} is ${j.state} without finished_at`);
    if (j.state === 'cancelled' && accepted.has(id) && !cancelAsked.has(id)) anomaly(`job ${id} cancelled, but nobody asked`);
    if (j.state === 'failed') {
      const bad = /lost|store|database|disk|interrupted|stopped before/i.test(j.error);
      if (bad) anomaly(`job ${id} failed: ${j.error}`);
      else console.log(`note: job ${id} failed: ${j.error}`);
    }
  }
  for (const id of accepted.keys()) if (!jobs.has(id)) anomaly(`accepted job ${id} is not in the database`);
  dbFig.unknown = [...jobs.keys()].filter((id) => !accepted.has(id)).length;

  // Levels: none lost, none twice, none orphaned.
  const levelRows = sql('SELECT id, count(*) FROM levels GROUP BY id');
  const levels = new Map(levelRows.map(([id, n]) => [id, Number(n)]));
  const named = new Set();
  let zero = 0;
  for (const [id, j] of jobs) {
    if (j.state !== 'succeeded') continue;
    if (!j.levelIds.length) zero++;
    for (const lv of j.levelIds) {
      named.add(lv);
      if (!levels.has(lv)) anomaly(`job ${id} names level ${lv}, which is not stored`);
    }
  }
  for (const [lv, n] of levels) {
    if (n !== 1) anomaly(`level ${lv} stored ${n} times`);
    if (!named.has(lv)) anomaly(`level ${lv} is named by no succeeded job (orphan)`);
  }
  const [[orphanTags]] = sql('SELECT count(*) FROM level_tags WHERE level_id NOT IN (SELECT id FROM levels)');
  if (orphanTags !== '0') anomaly(`${orphanTags} level tags without their level`);
  dbFig.levels = levels.size;
  dbFig.succeededWithoutLevels = zero;

  // Identical jobs found identical levels, interrupted or not.
  const byInput = new Map();
  for (const j of jobs.values()) {
    if (j.state !== 'succeeded') continue;
    const input = `${j.kind} ${j.params} ${j.seed}`;
    const ids = JSON.stringify(j.levelIds);
    if (byInput.has(input) && byInput.get(input) !== ids) anomaly(`identical jobs (${input}) found different levels`);
    byInput.set(input, ids);
  }
  dbFig.identicalGroups = [...jobs.values()].filter((j) => j.state === 'succeeded').length - byInput.size;

  // Idempotency keys: one row per key, naming the job its answers named.
  const keys = new Map(sql('SELECT key, job_id FROM idempotency_keys'));
  for (const [key, id] of keyToId) if (keys.get(key) !== id) anomaly(`key ${key}: the client saw ${id}, the database has ${keys.get(key)}`);
  dbFig.keys = keys.size;

  // The logs of every run: at most one final transition per job, and no run after it.
  const history = new Map();
  for (const log of logs) {
    if (!fs.existsSync(log)) continue;
    for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
      // A text log line: the UTC timestamp, then "job ID TRANSITION ...".
      const m = /^\d{4}-\d\d-\d\dT[\d:.]+Z job (job_[0-9a-f]{32}) (queued|running|succeeded|failed|cancelled|requeued|waiting) /.exec(line);
      if (!m) continue;
      dbFig.transitions = (dbFig.transitions || 0) + 1;
      if (!history.has(m[1])) history.set(m[1], []);
      history.get(m[1]).push(m[2]);
    }
  }
  let reruns = 0;
  dbFig.waited = 0;
  for (const [id, h] of history) {
    if (h.includes('waiting')) dbFig.waited++;
    const finals = h.filter((t) => ['succeeded', 'failed', 'cancelled'].includes(t)).length;
    const runs = h.filter((t) => t === 'running').length;
    if (finals > 1) anomaly(`job ${id} ended ${finals} times: ${h.join(' ')}`);
    const firstFinal = h.findIndex((t) => ['succeeded', 'failed', 'cancelled'].includes(t));
    if (firstFinal >= 0 && h.slice(firstFinal + 1).includes('running')) anomaly(`job ${id} ran again after it ended: ${h.join(' ')}`);
    if (runs > 1) reruns++;
  }
  dbFig.reruns = reruns;
  // No transition read would leave every check above silently passing.
  if (!dbFig.transitions && jobs.size) anomaly('no job transition found in the logs: has the log line format changed?');
} catch (err) {
  anomaly(`the checks failed: ${err.stack || err}`);
}

/* ---- the figures ---- */

const byKind = {};
for (const { body } of accepted.values()) byKind[body.kind] = (byKind[body.kind] || 0) + 1;
const lines = [
  `kill loop (tests/soak/kill_loop.sh), ${new Date().toISOString()}`,
  `binary ${path.relative(ROOT, BIN)}, seed ${SEED} (KILL_SEED=${SEED} replays the schedule), ${WORKERS} workers`,
  `kills: ${KILLS} (${fig.early} within 40 ms of spawn, ${fig.late} while serving, ${fig.bursts} of them in a burst of tiny jobs, ${fig.fullRounds} with the disk full before the kill), then one clean run; ${elapsed.toFixed(1)} s in all, ${(fig.drainS ?? 0).toFixed(1)} s to drain`,
  `requests: ${fig.submitted} submits (${accepted.size} accepted: ${Object.entries(byKind).map(([k, n]) => `${k} ${n}`).join(', ')}; ` +
    `${keyToId.size} with an Idempotency-Key; ${fig.replays} key replays; ${Object.entries(fig.rejected).map(([s, n]) => `${n} x ${s}`).join(', ') || 'none refused'}), ` +
    `${fig.cut} answers cut off by a kill (${fig.cutKeyed} keyed, resent after the restart), ${fig.cancels} cancels, ${fig.polls} polls`,
  `at the kills: ${fig.runningAtKill} jobs caught running, ${fig.queuedAtKill} queued (summed over kills)`,
  `database: ${dbFig.jobs} jobs (${dbFig.unknown} whose answer was cut off and never resent), states ${JSON.stringify(dbFig.states)}; ` +
    `${dbFig.reruns} jobs ran more than once (interrupted, then rerun), ${dbFig.waited} waited for the full disk to record an outcome; ${dbFig.levels} levels, ${dbFig.identicalGroups} repeats of an identical job agreeing; ` +
    `${dbFig.succeededWithoutLevels} succeeded without a level; ${dbFig.keys} keys; integrity ${dbFig.integrity}`,
  `anomalies: ${anomalies.length}`,
  ...anomalies.map((a) => `  - ${a}`),
  '',
  ...perKill,
];
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, lines.join('\n') + '\n');
console.log(lines.slice(0, 7 + anomalies.length).join('\n'));
console.log(`figures written to ${path.relative(ROOT, OUT)}`);
if (anomalies.length || process.env.KILL_KEEP) {
  console.log(`logs and database kept in ${dir}`);
  if (anomalies.length) process.exit(1);
} else {
  fs.rmSync(dir, { recursive: true, force: true });
}
