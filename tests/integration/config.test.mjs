// config.test.mjs - starting `starforge serve`: where it listens (IPv4,
// localhost on both loopbacks, IPv6 in brackets), what it refuses and that a
// refused --listen creates no database; configuration errors that name what
// the user wrote (the flag or the STARFORGE_* variable, and the value);
// `starforge --version` and the process facts and build info in /metrics.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { BIN, PG, PROCESS_FAMILIES, SCALE, dbRows, newDatabase, parseMetrics } from './harness.mjs';

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-config-'));
after(() => fs.rmSync(DIR, { recursive: true, force: true }));

/** process.env without any STARFORGE_* variable, plus `extra`. */
function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('STARFORGE_')) env[k] = v;
  return { ...env, ...extra };
}

/** True when this machine can listen on ::1 (some containers have no IPv6 loopback). */
async function haveIpv6Loopback() {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(0, '::1', () => srv.close(() => resolve(true)));
  });
}

/**
 * Starts serve with `args` (and `env`), resolving once it logs where it
 * listens: { proc, urls (the "http://..." of the listening line), port, log, db }.
 * The database is a new one of the pass's back end (a file under DIR, or a
 * PostgreSQL schema: newDatabase()), given with --db, or with STARFORGE_DB
 * when `dbFromEnv`.
 */
async function serve(args, env = {}, { dbFromEnv = false } = {}) {
  const db = PG ? newDatabase().db : path.join(fs.mkdtempSync(path.join(DIR, 'srv-')), 'starforge.db');
  const proc = spawn(BIN, ['serve', ...(dbFromEnv ? [] : ['--db', db]), '--workers', '1', ...args], {
    env: cleanEnv(dbFromEnv ? { ...env, STARFORGE_DB: db } : env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const server = { proc, db, log: '', urls: [], port: 0 };
  proc.stderr.setEncoding('utf8');
  server.exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening within ${10 * SCALE} s:\n${server.log}`)), 10_000 * SCALE);
    proc.stderr.on('data', (chunk) => {
      server.log += chunk;
      const m = /serve: listening on (.*) \(workers/.exec(server.log);
      if (m && !server.port) {
        clearTimeout(timer);
        server.urls = m[1].split(', ');
        server.port = Number(/:(\d+)$/.exec(server.urls[0])[1]);
        resolve();
      }
    });
    server.exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening:\n${server.log}`));
    });
  });
  return server;
}

async function stop(server) {
  server.proc.kill('SIGTERM');
  const { code, signal } = await server.exited;
  assert.equal(signal, null, server.log);
  assert.equal(code, 0, server.log);
}

/** GET url: the status and the text. */
async function get(url) {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

/** Runs serve to a refusal: { status, lines (stderr), db, dir } with a database path that must not appear. */
function refuse(args, env = {}) {
  const dir = fs.mkdtempSync(path.join(DIR, 'refused-'));
  const db = path.join(dir, 'sub', 'starforge.db'); // the folder would be created too
  const r = spawnSync(BIN, ['serve', '--db', db, ...args], { encoding: 'utf8', env: cleanEnv(env), timeout: 10_000 * SCALE });
  return { status: r.status, stderr: r.stderr, lines: r.stderr.split('\n').filter(Boolean), db, dir };
}

function assertRefused(r, status, message) {
  assert.equal(r.status, status, r.stderr);
  assert.equal(r.lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.match(r.lines[0], /^starforge serve: /);
  assert.match(r.lines[0], message);
  assert.deepEqual(fs.readdirSync(r.dir), [], 'a refused start created the database or its folder');
}

/* ---- where it listens ---- */

describe('--listen', () => {
  let v6;
  before(async () => {
    v6 = await haveIpv6Loopback();
    if (!v6) console.log('# note: no IPv6 loopback (::1) on this machine: the [::1] checks are skipped');
  });

  test('localhost:0 listens on 127.0.0.1 and on ::1, one port, and logs both', async () => {
    const s = await serve(['--listen', 'localhost:0']);
    try {
      const want = [`http://127.0.0.1:${s.port}`];
      if (v6) want.push(`http://[::1]:${s.port}`);
      assert.deepEqual(s.urls, want);
      for (const url of want) {
        const res = await get(`${url}/healthz`);
        assert.equal(res.status, 200, url);
      }
      // The way a README curl line reaches it.
      assert.equal((await get(`http://localhost:${s.port}/healthz`)).status, 200);
    } finally {
      await stop(s);
    }
  });

  test('[::1]:0 listens on the IPv6 loopback only', async (t) => {
    if (!v6) return t.skip('no IPv6 loopback (::1) here');
    const s = await serve(['--listen', '[::1]:0']);
    try {
      assert.deepEqual(s.urls, [`http://[::1]:${s.port}`]);
      assert.equal((await get(`http://[::1]:${s.port}/healthz`)).status, 200);
      await assert.rejects(get(`http://127.0.0.1:${s.port}/healthz`));
      // Many requests through the IPv6 socket, each on its own connection.
      const all = await Promise.all(Array.from({ length: 20 }, () => get(`http://[::1]:${s.port}/readyz`)));
      assert.ok(all.every((r) => r.status === 200));
    } finally {
      await stop(s);
    }
  });

  test('[::]:0 is every interface in both families (STARFORGE_LISTEN)', async (t) => {
    if (!v6) return t.skip('no IPv6 here');
    const s = await serve([], { STARFORGE_LISTEN: '[::]:0' });
    try {
      assert.deepEqual(s.urls, [`http://[::]:${s.port}`]);
      assert.equal((await get(`http://[::1]:${s.port}/healthz`)).status, 200);
      assert.equal((await get(`http://127.0.0.1:${s.port}/healthz`)).status, 200);
    } finally {
      await stop(s);
    }
  });

  test('localhost with the extra socket at the connection limit: the next connection waits, then is served', async (t) => {
    if (!v6) return t.skip('localhost is one socket here');
    const s = await serve(['--listen', 'localhost:0', '--max-connections', '1']);
    try {
      // Hold the one connection open through the IPv4 socket (MHD's own).
      const held = net.connect(s.port, '127.0.0.1');
      await new Promise((resolve) => held.once('connect', resolve));
      await new Promise((r) => setTimeout(r, 200));
      // A request on ::1 (the extra socket) waits, unanswered...
      const pending = get(`http://[::1]:${s.port}/healthz`);
      const early = await Promise.race([pending.then(() => 'answered', () => 'failed'), new Promise((r) => setTimeout(() => r('waiting'), 500))]);
      assert.equal(early, 'waiting');
      // ...and is answered once the held connection closes.
      held.destroy();
      assert.equal((await pending).status, 200);
    } finally {
      await stop(s);
    }
  });

  const bad = [
    ['[::1', /--listen '\[::1': a '\[' without its '\]'/],
    ['[::1]', /no :PORT after the '\]'/],
    ['host:', /--listen 'host:': no port/],
    [':8080', /no host/],
    ['8080', /not HOST:PORT/],
    ['::1:8080', /IPv6 address without brackets/],
    ['[localhost]:80', /'\[localhost\]' is not an IPv6 address/],
    ['127.0.0.1:65536', /port '65536' is not an integer in 0\.\.65535/],
    ['127.0.0.1:-1', /port '-1' is not an integer/],
    ['nosuchhost.invalid:80', /--listen 'nosuchhost\.invalid:80': host 'nosuchhost\.invalid' not found/],
    ['192.0.2.1:8080', /cannot listen on 192\.0\.2\.1:8080: not an address of this machine/],
  ];
  for (const [value, message] of bad) {
    test(`refuses ${value}: exit 2, one line, no database`, () => {
      assertRefused(refuse(['--listen', value]), 2, message);
    });
  }

  test('STARFORGE_LISTEN errors name the variable and its value', () => {
    const r = refuse([], { STARFORGE_LISTEN: '[::1' });
    assertRefused(r, 2, /^starforge serve: STARFORGE_LISTEN='\[::1': a '\[' without its '\]'/);
  });

  test('a port in use: exit 1, the address named, no database', async () => {
    const holder = net.createServer();
    await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = holder.address().port;
      const r = refuse(['--listen', `127.0.0.1:${port}`]);
      assertRefused(r, 1, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
    } finally {
      holder.close();
    }
  });
});

/* ---- configuration errors name what the user typed ---- */

describe('configuration errors', () => {
  const cases = [
    ['WORKERS', '--workers', 'abc', /is not an integer in 1\.\.256/],
    ['WORKERS', '--workers', '0', /is not an integer in 1\.\.256/],
    ['MAX_QUEUE', '--max-queue', '1e3', /is not an integer in 1\.\.100000/],
    ['JOB_THREADS', '--job-threads', '65', /is not an integer in 1\.\.64/],
    ['EVAL_BUDGET', '--eval-budget', 'lots', /is not a number in 1\.\.1e12/],
    ['ESTIMATE_STEPS', '--estimate-steps', '1000', /is not a number in 1e4\.\.1e10/],
    ['JOB_TIMEOUT', '--job-timeout', ' 60', /is not an integer in 1\.\.604800/],
    ['MAX_CONNECTIONS', '--max-connections', '', /is not an integer in 1\.\.100000/],
    ['MAX_CONNECTIONS_PER_IP', '--max-connections-per-ip', '-1', /is not an integer in 0\.\.100000/],
    ['CONNECTION_TIMEOUT', '--connection-timeout', '3601', /is not an integer in 1\.\.3600/],
    ['READ_THREADS', '--read-threads', '65', /is not an integer in 0\.\.64/],
    ['EVAL_CACHE_MAX', '--eval-cache-max', '-1', /is not an integer in 0\.\.1000000000/],
    ['LISTEN', '--listen', 'localhost', /: not HOST:PORT/],
  ];
  const quote = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const [suffix, flag, value, message] of cases) {
    const variable = `STARFORGE_${suffix}`;
    test(`${variable}='${value}' names the variable; ${flag} names the flag`, () => {
      const fromEnv = refuse(['--listen', '127.0.0.1:0'].filter(() => suffix !== 'LISTEN'), { [variable]: value });
      assertRefused(fromEnv, 2, new RegExp(`^starforge serve: ${variable}='${quote(value)}'`));
      assert.match(fromEnv.lines[0], message);
      assert.ok(!fromEnv.lines[0].includes(flag + ' '), `the flag named: ${fromEnv.lines[0]}`);

      const fromFlag = refuse(['--listen', '127.0.0.1:0', flag, value]);
      assertRefused(fromFlag, 2, new RegExp(`^starforge serve: ${quote(flag)} '${quote(value)}'`));
      assert.match(fromFlag.lines[0], message);
      assert.ok(!fromFlag.lines[0].includes('STARFORGE_'), `the variable named: ${fromFlag.lines[0]}`);
    });
  }

  test('the flag wins over the variable, which is then not even read', () => {
    // A bad STARFORGE_WORKERS is ignored under --workers; the error is --max-queue's.
    const r = refuse(['--listen', '127.0.0.1:0', '--workers', '2', '--max-queue', 'x'], { STARFORGE_WORKERS: 'abc' });
    assertRefused(r, 2, /^starforge serve: --max-queue 'x' is not an integer/);
  });

  test('STARFORGE_DB names the database when --db is not given', async () => {
    // In the PostgreSQL pass a postgresql:// URI, which selects that back end.
    const s = await serve(['--listen', '127.0.0.1:0'], {}, { dbFromEnv: true });
    try {
      const res = await fetch(`${s.urls[0]}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'lattice', params: { length: 10, generations: 2 }, seed: 1 }),
      });
      const text = await res.text();
      assert.equal(res.status, 202, text);
      const { id } = JSON.parse(text);
      assert.equal((await get(`${s.urls[0]}/readyz`)).status, 200);
      await stop(s);
      // The job is in the database STARFORGE_DB named.
      assert.deepEqual(dbRows(s.db, 'SELECT id FROM jobs'), [[id]]);
    } finally {
      if (s.proc.exitCode === null && s.proc.signalCode === null) await stop(s);
    }
  });

  test('STARFORGE_DB, STARFORGE_TOKEN_FILE, STARFORGE_AUTH_READS and STARFORGE_CORS_ORIGIN are named too', () => {
    assertRefused(refuse(['--listen', '127.0.0.1:0'], { STARFORGE_AUTH_READS: 'yes' }), 2, /STARFORGE_AUTH_READS='yes' is not 0 or 1/);
    assertRefused(refuse(['--listen', '127.0.0.1:0'], { STARFORGE_AUTH_READS: '1' }), 2, /STARFORGE_AUTH_READS=1 needs --token-file/);
    assertRefused(refuse(['--listen', '127.0.0.1:0'], { STARFORGE_TOKEN_FILE: '' }), 2, /STARFORGE_TOKEN_FILE='' is empty/);
    const missing = path.join(DIR, 'no-such-tokens');
    assertRefused(refuse(['--listen', '127.0.0.1:0'], { STARFORGE_TOKEN_FILE: missing }), 2, new RegExp(`STARFORGE_TOKEN_FILE ${quote(missing)}: cannot be read`));
    assertRefused(refuse(['--listen', '127.0.0.1:0'], { STARFORGE_CORS_ORIGIN: 'null' }), 2, /STARFORGE_CORS_ORIGIN: origin 'null' is refused/);
    const r = spawnSync(BIN, ['serve', '--listen', '127.0.0.1:0'], { encoding: 'utf8', env: cleanEnv({ STARFORGE_DB: '' }), timeout: 10_000 * SCALE });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^starforge serve: STARFORGE_DB='' is empty/);
  });
});

/* ---- the version, and what /metrics says of the process ---- */

describe('version and process facts', () => {
  test('starforge --version: one line, the version and the commit; `starforge version` the same', () => {
    const out = execFileSync(BIN, ['--version'], { encoding: 'utf8' });
    assert.match(out, /^starforge \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}|unknown)\)\n$/);
    assert.equal(execFileSync(BIN, ['version'], { encoding: 'utf8' }), out);
  });

  test('/metrics: starforge_build_info matches --version; the process_* families are sane', async () => {
    const [, version, commit] = /^starforge (\S+) \(commit (\S+)\)/.exec(execFileSync(BIN, ['--version'], { encoding: 'utf8' }));
    const startedAt = Date.now() / 1000;
    const s = await serve(['--listen', '127.0.0.1:0']);
    try {
      assert.match(s.log, new RegExp(`serve: starforge ${version.replace(/\./g, '\\.')} \\(commit ${commit}\\)`));
      const res = await get(`${s.urls[0]}/metrics`);
      assert.equal(res.status, 200);
      for (const [name, type] of Object.entries(PROCESS_FAMILIES)) {
        assert.match(res.text, new RegExp(`^# HELP ${name} \\S.*$`, 'm'), name);
        assert.match(res.text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), name);
      }
      const m = parseMetrics(res.text);
      assert.equal(m.get(`starforge_build_info{version="${version}",commit="${commit}"}`), 1, res.text);
      const rss = m.get('process_resident_memory_bytes');
      assert.ok(rss > 1 << 20 && rss <= m.get('process_virtual_memory_bytes'), `rss ${rss}`);
      const start = m.get('process_start_time_seconds');
      assert.ok(start >= startedAt - 2 && start <= Date.now() / 1000 + 1, `start ${start}, test began ${startedAt}`);
      assert.ok(startedAt - start < 60);
      const fds = m.get('process_open_fds');
      assert.ok(Number.isInteger(fds) && fds >= 3 && fds <= m.get('process_max_fds'), `fds ${fds}`);
      // The server's own descriptors are in the count: its pid's fd folder agrees, give or take the reading.
      if (fs.existsSync(`/proc/${s.proc.pid}/fd`)) {
        const seen = fs.readdirSync(`/proc/${s.proc.pid}/fd`).length;
        assert.ok(Math.abs(seen - fds) <= 3, `process_open_fds ${fds}, /proc says ${seen}`);
      }
      const cpu = m.get('process_cpu_seconds_total');
      assert.ok(cpu >= 0 && cpu < 60, `cpu ${cpu}`);
    } finally {
      await stop(s);
    }
  });
});
