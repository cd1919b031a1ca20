// harness.mjs - what every integration test file shares: start and stop the
// real `starforge serve` binary on a free loopback port with a database in a
// temporary folder, talk to it over real HTTP (the built-in fetch), and
// validate what it answers against the JSON Schemas in schema/ with Ajv.
//
// The binary is $STARFORGE_BIN (the Makefile sets it; under SANITIZE it is
// the sanitizer build), else build/starforge. Nothing here needs a package
// beyond the pinned ajv and ajv-formats (package.json).
//
// The back end: SQLite by default (a database file in a temporary folder per
// server); with STARFORGE_TEST_DB=postgres, PostgreSQL (a fresh schema per
// server in the database STARFORGE_TEST_PG names: tests/pg/cluster.sh starts
// one and sets it; run.sh runs the suite once per back end). Tests that only
// make sense on one back end say so with sqliteOnly(reason).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.resolve(ROOT, process.env.STARFORGE_BIN || 'build/starforge');

// Slow builds (ASan, UBSan) get longer waits; every deadline below scales.
export const SLOW = /sanitize/.test(BIN) || !!process.env.STARFORGE_SLOW;
export const SCALE = SLOW ? 4 : 1;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/* ---- the back end ---- */

/** 'postgres' when STARFORGE_TEST_DB=postgres, else 'sqlite' (unset or sqlite). */
export const BACKEND = process.env.STARFORGE_TEST_DB || 'sqlite';
if (BACKEND !== 'sqlite' && BACKEND !== 'postgres') {
  throw new Error(`STARFORGE_TEST_DB='${BACKEND}' is not sqlite or postgres`);
}
export const PG = BACKEND === 'postgres';

// The PostgreSQL database the schemas go in (a libpq URI).
const PG_BASE = process.env.STARFORGE_TEST_PG || '';
if (PG && !PG_BASE) {
  throw new Error(
    'STARFORGE_TEST_DB=postgres needs STARFORGE_TEST_PG, a libpq URI of a database to make ' +
      'schemas in: run under tests/pg/cluster.sh, which starts a throwaway cluster and sets it',
  );
}

/**
 * The options of a test or suite that runs in the SQLite pass only: one
 * that is about SQLite (its file, its lock, its fault seam), or one that
 * does not depend on the back end and is worth running once (the
 * Dockerfile, the browser, the README). In the PostgreSQL pass it is
 * skipped, with `reason` in the report, never silently.
 * Usage: test('...', sqliteOnly('reads the database file'), async () => ...).
 */
export function sqliteOnly(reason) {
  return { skip: PG ? `SQLite pass only: ${reason}` : false };
}

// The schemas made in this process (one per new database), dropped when it
// exits: every test file is a process of its own, and every server in it
// has been stopped or killed by then. A schema holds no lock between calls,
// so a server left running (a failed test) does not block the drop; the
// lock_timeout bounds it anyway. Kept with STARFORGE_TEST_PG_KEEP=1, to
// look at after a failure (psql; SET search_path TO the schema in the URI).
const schemas = [];
let schemaCounter = 0;
process.on('exit', () => {
  if (!schemas.length || process.env.STARFORGE_TEST_PG_KEEP === '1') return;
  try {
    execFileSync(
      'psql',
      ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', PG_BASE, '-c', "SET lock_timeout = '5s'",
        '-c', `DROP SCHEMA IF EXISTS ${schemas.join(', ')} CASCADE`],
      { stdio: 'ignore', timeout: 15_000 },
    );
  } catch {
    // The cluster of `make test` is thrown away anyway.
  }
});

/**
 * A new, empty database for a server: { db, dir }. On SQLite `db` is a file
 * in a new temporary folder `dir`; on PostgreSQL `db` is STARFORGE_TEST_PG
 * with options=-csearch_path=<a new schema> (the store creates the schema
 * that search_path names on open) and `dir` is null. `db` is what --db
 * takes; passing it again restarts on the same database.
 */
export function newDatabase() {
  if (!PG) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-it-'));
    return { db: path.join(dir, 'starforge.db'), dir };
  }
  const schema = `t_${process.pid}_${++schemaCounter}`;
  schemas.push(schema);
  const sep = PG_BASE.includes('?') ? '&' : '?';
  return { db: `${PG_BASE}${sep}options=-csearch_path%3D${schema}`, dir: null, schema };
}

/**
 * Runs `sql` on a server's database and returns the rows, each an array of
 * column texts: on SQLite with the sqlite3 command-line shell on the file
 * (the server should be stopped; scripts/deps.sh test installs sqlite3), on
 * PostgreSQL with psql in the server's schema. Only for looking; the server
 * owns the data. Write SQL both accept, and mind that PostgreSQL prints a
 * boolean as t/f where SQLite prints 1/0 (use CASE WHEN ... THEN 1 ELSE 0).
 */
export function dbRows(db, sql) {
  if (!PG) return sqlite(db, sql);
  const out = execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql], {
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
}

/* ---- the server ---- */

/**
 * Starts `starforge serve` on 127.0.0.1, port 0 (a free one), and resolves
 * once it logs "serve: listening on http://127.0.0.1:PORT". `db` defaults to
 * a new database (newDatabase(): a file in a new temporary folder, or a new
 * PostgreSQL schema); pass a server's `db` to restart on the same database.
 * `args` are extra options (--workers 1, ...). `into`, when given, is the
 * object filled in and resolved with (see useServer).
 */
export async function startServer({ args = [], db, into = {} } = {}) {
  let dir = null;
  if (!db) ({ db, dir } = newDatabase());
  const proc = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--db', db, ...args], {
    // Under ASan a leak or an error makes the exit code non-zero, which
    // stopAndClean() reports along with the log (the sanitizer's report).
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const server = Object.assign(into, {
    proc,
    db,
    dir,
    port: 0,
    base: '',
    log: '',
    exited: null, // { code, signal } once the process is gone
  });
  const exited = new Promise((resolve) => {
    proc.on('exit', (code, signal) => {
      server.exited = { code, signal };
      resolve(server.exited);
    });
  });
  server.exitPromise = exited;
  proc.stderr.setEncoding('utf8');
  const listening = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "listening" line within ${10 * SCALE} s:\n${server.log}`)),
      10_000 * SCALE,
    );
    proc.stderr.on('data', (chunk) => {
      server.log += chunk;
      const m = /serve: listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(server.log);
      if (m && !server.port) {
        clearTimeout(timer);
        server.port = Number(m[1]);
        server.base = `http://127.0.0.1:${server.port}`;
        resolve();
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`starforge serve exited (${code ?? signal}) before listening:\n${server.log}`));
    });
    proc.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  await listening;
  return server;
}

/**
 * Sends `signal` (SIGTERM: a graceful stop) and resolves with the exit
 * { code, signal } once the process is gone; rejects when it takes longer
 * than `timeoutMs` (the process is then killed).
 */
export async function stopServer(server, { signal = 'SIGTERM', timeoutMs = 10_000 * SCALE } = {}) {
  if (!server.exited) server.proc.kill(signal);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      server.proc.kill('SIGKILL');
      reject(new Error(`starforge serve did not exit within ${timeoutMs} ms of ${signal}:\n${server.log}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([server.exitPromise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM, assert a clean exit (code 0), then remove the temporary folder. */
export async function stopAndClean(server) {
  try {
    const { code, signal } = await stopServer(server);
    assert.equal(signal, null, `killed by ${signal}:\n${server.log}`);
    assert.equal(code, 0, `exit code ${code}:\n${server.log}`);
  } finally {
    removeDir(server);
  }
}

/**
 * Removes the server's temporary folder (the database with it). A
 * PostgreSQL schema has no folder: it goes when the test file's process
 * exits (newDatabase).
 */
export function removeDir(server) {
  if (server.dir) fs.rmSync(server.dir, { recursive: true, force: true });
}

/**
 * One server for a whole test file: registers node:test hooks that start it
 * (startServer with `options`) before the file's tests and stop it with
 * stopAndClean (asserting a clean exit) after them. Returns the server object
 * at once, empty until the `before` hook has filled it in. `setup(server)`,
 * when given, runs in that same hook once the server is listening: a file's
 * own top-level `before` hooks are not awaited one after another, so work
 * that needs the server belongs there.
 */
export function useServer(options = {}, setup) {
  const server = {};
  before(async () => {
    await startServer({ ...options, into: server });
    if (setup) await setup(server);
  });
  after(async () => {
    await stopAndClean(server);
  });
  return server;
}

/* ---- HTTP ---- */

/**
 * fetch() on the server: `path` is "/v1/jobs"..., `json` (when given) is
 * sent as the JSON body. Resolves with { status, headers, text, body },
 * body being the parsed JSON when the response is JSON, else null.
 */
export async function request(server, pathname, { method = 'GET', json, body, headers = {} } = {}) {
  const init = { method, headers: { ...headers } };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers['content-type'] = 'application/json';
  } else if (body !== undefined) {
    init.body = body;
  }
  const res = await fetch(server.base + pathname, init);
  const text = await res.text();
  const type = res.headers.get('content-type') || '';
  let parsed = null;
  if (/json/.test(type) && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** GET, asserting the status and a JSON body; resolves with the body. */
export async function getJson(server, pathname, status = 200) {
  const res = await request(server, pathname);
  assert.equal(res.status, status, `GET ${pathname}: ${res.text}`);
  assert.match(res.headers.get('content-type') || '', /^application\/json/);
  return res.body;
}

/**
 * Asserts that `res` is a problem document: the status, the media type
 * application/problem+json, the schema, `status` repeated in the body and,
 * when given, the type's slug.
 */
export function assertProblem(res, status, slug) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assertValid('problem', res.body);
  assert.equal(res.body.status, status);
  if (slug) assert.equal(res.body.type, `https://starforge.dev/problems/${slug}`);
  return res.body;
}

/** Polls `fn` every `intervalMs` until it returns a truthy value; rejects after `timeoutMs`. */
export async function waitFor(fn, { timeoutMs = 10_000 * SCALE, intervalMs = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export const FINAL_STATES = ['succeeded', 'failed', 'cancelled'];

/** Polls GET /v1/jobs/{id} until the job is in one of `states`; resolves with the job. */
export async function waitForJob(server, id, { states = FINAL_STATES, timeoutMs } = {}) {
  return waitFor(
    async () => {
      const job = await getJson(server, `/v1/jobs/${id}`);
      return states.includes(job.state) ? job : null;
    },
    { timeoutMs, what: `job ${id} to be ${states.join(' or ')}` },
  );
}

/** POST /v1/jobs with `json`, asserting 202; resolves with the job. */
export async function submit(server, json, headers = {}) {
  const res = await request(server, '/v1/jobs', { method: 'POST', json, headers });
  assert.equal(res.status, 202, `POST /v1/jobs ${JSON.stringify(json)}: ${res.text}`);
  assertValid('job', res.body);
  return res.body;
}

/**
 * A job long enough to cancel or interrupt: the exhaustive search of length
 * 18, 5-10 s on two cores. Sanitizer builds are about four times slower, so
 * there length 17 (2.5 times less work) keeps the suite's time in bounds
 * while each job still runs for seconds.
 */
export const LONG_JOB = (seed = 1) => ({
  kind: 'lattice',
  params: { algorithm: 'exhaustive', length: SLOW ? 17 : 18 },
  seed,
});

/** A job that takes milliseconds. */
export const QUICK_JOB = (seed = 1, params = {}) => ({
  kind: 'lattice',
  params: { length: 10, generations: 5, ...params },
  seed,
});

/* ---- the database ---- */

/**
 * Runs `sql` on a stopped server's SQLite database with the sqlite3
 * command-line shell (scripts/deps.sh test installs it) and returns the
 * rows, each an array of column texts. Only for looking; the server owns
 * the file. For what both back ends hold, dbRows().
 */
export function sqlite(db, sql) {
  const out = execFileSync('sqlite3', ['-batch', '-bail', '-noheader', '-separator', '\t', db, sql], {
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
}

/* ---- event streams ---- */

/**
 * Reads an SSE body (a fetch Response's) to its end and parses it: resolves
 * with { events, comments, retry, text }, each event { id, event, data }
 * with data parsed as JSON, and two properties that deepEqual skips (not
 * enumerable): raw, the data's text as sent, and at, when it arrived
 * (Date.now()). `onEvent` sees each event as it arrives. Asserts
 * that every line is one this service writes. Callers put a timeout on it
 * (a stream that never ends must fail a test, not hang the suite).
 */
export async function readEvents(res, { onEvent } = {}) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let text = '';
  const events = [];
  const comments = [];
  let retry = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const chunk = decoder.decode(value, { stream: true });
    text += chunk;
    buf += chunk;
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const fields = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          comments.push(line);
          continue;
        }
        const m = /^(id|event|data|retry): (.*)$/.exec(line);
        assert.ok(m, `not an SSE line this service writes: ${JSON.stringify(line)}`);
        assert.ok(!(m[1] in fields), `field ${m[1]} twice in one event: ${JSON.stringify(block)}`);
        fields[m[1]] = m[2];
      }
      if ('retry' in fields) retry = Number(fields.retry);
      if ('data' in fields) {
        const ev = { id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data) };
        // Not enumerable: deepEqual of events compares what was sent, not when.
        Object.defineProperty(ev, 'raw', { value: fields.data });
        Object.defineProperty(ev, 'at', { value: Date.now() });
        events.push(ev);
        if (onEvent) onEvent(ev);
      }
    }
  }
  assert.equal(buf, '', 'the stream ended inside an event');
  return { events, comments, retry, text };
}

/* ---- metrics ---- */

/**
 * The families /metrics carries about the binary and its process, with
 * their types: the build's version and commit, and the process metrics
 * under the names Prometheus client libraries give them.
 */
export const PROCESS_FAMILIES = {
  starforge_build_info: 'gauge',
  process_cpu_seconds_total: 'counter',
  process_open_fds: 'gauge',
  process_max_fds: 'gauge',
  process_virtual_memory_bytes: 'gauge',
  process_resident_memory_bytes: 'gauge',
  process_start_time_seconds: 'gauge',
};

/**
 * Parses the Prometheus text format into a Map from "name{labels}" (labels
 * as written) or "name" to the numeric value.
 */
export function parseMetrics(text) {
  const samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/.exec(line);
    assert.ok(m, `not a Prometheus sample line: ${JSON.stringify(line)}`);
    samples.set(m[1], Number(m[2]));
  }
  return samples;
}

export async function metrics(server) {
  const res = await request(server, '/metrics');
  assert.equal(res.status, 200);
  return parseMetrics(res.text);
}

/* ---- schemas ---- */

// Every schema under schema/ is registered under this base plus its path, so
// that the relative $refs between them ("stars.schema.json",
// "../level.schema.json") resolve as they do on disk.
const SCHEMA_BASE = 'https://starforge.dev/schema/';

function loadSchemas() {
  // Strict about the schemas themselves (an unknown keyword or format is an
  // error), but not about Ajv's style rules, which valid JSON Schema 2020-12
  // here breaks on purpose: if/then subschemas without a "type", a one-item
  // prefixItems before "items" and a required key ("0") that only
  // additionalProperties describes (evaluation's histogram and examples).
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allErrors: true,
  });
  addFormats(ajv);
  const dir = path.join(ROOT, 'schema');
  const files = fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.json'));
  for (const rel of files.sort()) {
    const schema = JSON.parse(fs.readFileSync(path.join(dir, rel), 'utf8'));
    const key = SCHEMA_BASE + rel.split(path.sep).join('/');
    if (schema.$id) ajv.addSchema(schema);
    else ajv.addSchema(schema, key);
  }
  // Compile them all now: a schema that Ajv refuses fails every test file.
  for (const rel of files) ajv.getSchema(SCHEMA_BASE + rel.split(path.sep).join('/'));
  return { ajv, files };
}

export const { ajv, files: schemaFiles } = loadSchemas();

/**
 * Asserts that `doc` is valid against schema `name`: a path under schema/,
 * with or without ".schema.json" ("job", "lattice/level", "problem.schema.json").
 */
export function assertValid(name, doc) {
  const file = name.endsWith('.json') ? name : `${name}.schema.json`;
  const validate = ajv.getSchema(SCHEMA_BASE + file);
  assert.ok(validate, `no schema ${file} under schema/`);
  if (!validate(doc)) {
    const errors = ajv.errorsText(validate.errors, { separator: '\n  ' });
    assert.fail(`not valid against schema/${file}:\n  ${errors}\ndocument: ${JSON.stringify(doc).slice(0, 2000)}`);
  }
}

// The check's and the hint's solver budget per search: the largest
// solver_states of any digger preset (dig_check_solver_states, hardest's and
// expert's 500 000 in core/digger/generate.c).
export const CHECK_SOLVER_STATES = 500_000;

/**
 * The largest digger level the reader takes, built by hand: 10 x 6, six
 * machines on the diagonal, every arrow at 255 uses, webs over gold on the
 * right four columns needing `visits` visits each: with 2 (the default), a
 * search space no solver budget covers (the check's and the hint's
 * bounded-solver tests); with 255, more visits than the 96 turns allow, so
 * no play wins and the solver's bound says so at once (since issue 16).
 */
export function largestDiggerLevel(visits = 2) {
  const arrows = [];
  for (const side of ['left', 'right']) for (let index = 0; index < 6; index++) arrows.push({ side, index, uses: 255 });
  for (const side of ['top', 'bottom']) for (let index = 0; index < 10; index++) arrows.push({ side, index, uses: 255 });
  const machines = [0, 1, 2, 3, 4, 5].map((i) => ({ x: i, y: i }));
  const cells = [];
  const gold = [];
  for (let x = 6; x < 10; x++)
    for (let y = 0; y < 6; y++) {
      cells.push({ x, y, terrain: 'web', param: visits });
      gold.push({ x, y });
    }
  return { width: 10, height: 6, turns: 96, rules: { no_backtrack: false }, machines, cells, gold, arrows };
}

/* ---- the browser ---- */

let axeSource = null;

/**
 * axe-core's serious and critical violations on `page` (a playwright page)
 * as it stands, each as one line naming the rule and its first elements.
 * axe-core is the pinned one of package-lock.json, injected into the page.
 */
export async function axeViolations(page) {
  axeSource ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}; ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`);
}
