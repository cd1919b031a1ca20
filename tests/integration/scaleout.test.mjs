// scaleout.test.mjs - the scale-out setup of docker/compose.scale.yaml, run
// for real without a container engine: three `starforge serve` nodes on one
// PostgreSQL database and real nginx in front of them with THE SHIPPED
// docker/nginx.conf. The file is rendered for loopback by changing only
// the lines it marks "[site]" (the user, the upstream's three server
// addresses, the listen port, the /var/cache/nginx/ prefix of what nginx
// writes), each replacement checked to apply exactly where expected, so
// a change to the file's shape fails here instead of testing something
// else. Through nginx:
//
//   - jobs submitted through it run on the nodes and finish, and its
//     requests reach every node; a POST repeated with its Idempotency-Key
//     answers the same job whichever node gets it; the request id is the
//     client's (when a node would take it) or nginx's, in both logs;
//   - a level, its picture and an uploaded PX model are cached: the second
//     GET is a HIT with the byte-identical body and the same ETag, and the
//     nodes saw one request; gzip and identity are kept apart (Vary); a
//     conditional GET is a 304 from the cache; a request with
//     Authorization neither reads nor fills the cache; a 404 is never
//     cached;
//   - job status, job and level lists, evaluations, /readyz and the
//     dashboard are never served from the cache (no X-Cache-Status, every
//     GET reaches a node);
//   - a job's events stream through it as they are written (the first
//     arrives before the job ends) up to the end event;
//   - HTTP framing is normalised: two Content-Lengths, a Content-Length
//     that is not a number, Content-Length with Transfer-Encoding (400) and
//     an unknown Transfer-Encoding (501) are answered by nginx and never
//     reach a node (their X-Request-Id is in no node's log), while a
//     chunked body is accepted and re-framed; a body over the nodes' 64 KiB
//     limit, announced or chunked, gets nginx's 413 problem document, one of
//     exactly 64 KiB reaches a node;
//   - kill -9 of a node: GETs keep answering (nginx's access log shows the
//     retry on the next node), a POST still gets 202, and every accepted
//     job finishes, the dead node's running job rescued by another.
//
// PostgreSQL pass only (SQLite serves one process), and only where nginx is
// installed (scripts/deps.sh test installs it; otherwise skipped, saying
// so). In the SQLite pass one cheap check runs instead: the rendering
// changes only the [site] lines, and `nginx -t` takes the result. Works as root (nginx's workers then run as nobody) and as any other
// user (the user line is dropped). Every wait has a deadline: a request
// through nginx that never ends fails its test, it does not hang the suite.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  PG,
  ROOT,
  SCALE,
  assertProblem,
  assertValid,
  newDatabase,
  sleep,
  startServer,
  stopAndClean,
  stopServer,
} from './harness.mjs';

/** The nginx binary, or null: on PATH, or where Debian puts it (/usr/sbin may be off a user's PATH). */
function findNginx() {
  for (const dir of [...(process.env.PATH || '').split(':').filter(Boolean), '/usr/sbin', '/usr/local/sbin']) {
    const p = path.join(dir, 'nginx');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

const NGINX = findNginx();
const SKIP = !PG
  ? 'PostgreSQL pass only: several nodes share one database'
  : !NGINX
    ? 'nginx is not installed (sh scripts/deps.sh test installs it)'
    : false;
// A test that never ends must fail, not hang the suite.
const OPTS = { timeout: 180_000 * SCALE };
const LEASE_S = 2;
const REQUEST_MS = 30_000 * SCALE; // one request through nginx, at most
const IS_ROOT = process.getuid?.() === 0;

/* ---- rendering the shipped file ---- */

/**
 * docker/nginx.conf for loopback: `ports` for the three upstream servers,
 * `listen` for nginx, `dir` for every file it writes. Each replacement must
 * apply exactly as often as the file has the line.
 */
function renderNginxConf(text, { ports, listen, dir }) {
  let out = text;
  const replace = (re, by, count, what) => {
    const hits = out.match(new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g')) || [];
    assert.equal(hits.length, count, `docker/nginx.conf: expected ${count} ${what}, found ${hits.length}`);
    out = out.replace(new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g'), by);
  };
  // As root nginx switches its workers to `user`: nobody (the image's
  // `nginx` user does not exist here). As another user it cannot switch,
  // so the line goes.
  const group = /^nogroup:/m.test(fs.readFileSync('/etc/group', 'utf8')) ? 'nogroup' : 'nobody';
  replace(/^user nginx;.*$/m, IS_ROOT ? `user nobody ${group};` : '', 1, '"user nginx;" line');
  let i = 0;
  replace(/^(\s*server )starforge-[123]:8080( .*)$/m, (_, head, tail) => `${head}127.0.0.1:${ports[i++]}${tail}`, 3, 'upstream servers');
  replace(/^(\s*)listen 8080;(.*)$/m, (_, indent, tail) => `${indent}listen 127.0.0.1:${listen};${tail}`, 1, 'listen line');
  // The paths, in the directives only (the comments mention them too).
  let writes = 0;
  out = out
    .split('\n')
    .map((line) => {
      const hash = line.indexOf('#');
      const code = hash < 0 ? line : line.slice(0, hash);
      writes += (code.match(/\/var\/cache\/nginx\//g) || []).length;
      return code.replaceAll('/var/cache/nginx/', `${dir}/`) + (hash < 0 ? '' : line.slice(hash));
    })
    .join('\n');
  assert.ok(writes >= 7, `docker/nginx.conf: nginx writes ${writes} paths under /var/cache/nginx/, expected the pid, cache and 5 temporary folders`);
  // No other file outside the folder: the logs go to the process's own
  // stdout and stderr.
  const code = out.replace(/#.*$/gm, '');
  for (const m of code.matchAll(/(?:^|\s)(\/(?:var|etc|run|usr|tmp|srv|home|opt|dev)\/[^\s;'"]*)/gm)) {
    assert.ok(m[1].startsWith(dir + '/') || m[1] === '/dev/stdout', `docker/nginx.conf names ${m[1]}, which the test does not render`);
  }
  return out;
}

async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/* ---- HTTP with deadlines ---- */

/**
 * One request with node:http (no decompression: the bytes as sent), at most
 * `timeoutMs`. Resolves with { status, headers, body: Buffer, text, json }.
 */
function get(port, pathname, { method = 'GET', headers = {}, body, timeoutMs = REQUEST_MS } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const buf = Buffer.concat(chunks);
        const type = res.headers['content-type'] || '';
        const text = buf.toString('utf8');
        let json = null;
        if (/json/.test(type) && !res.headers['content-encoding'] && text) json = JSON.parse(text);
        resolve({ status: res.statusCode, headers: res.headers, body: buf, text, json });
      });
      res.on('error', reject);
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${method} ${pathname}: no whole answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(body);
  });
}

/**
 * Sends `text` as it is on a new connection and reads until nginx closes it
 * (every request here says Connection: close, and nginx closes after
 * refusing one). Resolves with { status, headers (lower-case names), raw }.
 */
function raw(port, text, { timeoutMs = REQUEST_MS } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${JSON.stringify(text.slice(0, 120))}`));
    }, timeoutMs);
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const rawText = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(rawText);
      if (!m) return reject(new Error(`not an HTTP answer: ${JSON.stringify(rawText.slice(0, 200))}`));
      const head = rawText.slice(0, rawText.indexOf('\r\n\r\n'));
      const headers = {};
      for (const line of head.split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(m[1]), headers, raw: rawText });
    };
    sock.on('connect', () => sock.write(text, 'latin1'));
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', done);
    sock.on('close', done);
    sock.on('error', (e) => {
      if (chunks.length) return done(); // a reset after the answer
      finished = true;
      clearTimeout(timer);
      reject(e);
    });
  });
}

/* ---- the setup: three nodes, nginx ---- */

const nodes = [];
const proxy = { port: 0, proc: null, exited: null, dir: null };

function nodeLog() {
  return nodes.map((n) => n.log).join('\n');
}

/** Node log lines (all nodes) of requests `what` ("GET /v1/levels/X 200"). */
function nodeRequests(what) {
  return nodeLog()
    .split('\n')
    .filter((l) => l.includes(` http ${what}`));
}

/** Waits for every node's log buffer to reach its .log (flushed four times a second). */
const flushed = () => sleep(700);
// nginx marks a cache entry usable only after it has sent the node's answer
// on to the client, so a request that comes at once (to another worker) can
// still MISS; a CI run saw it once. Give the entry a moment before a HIT is
// asked for.
const settled = () => sleep(200);

async function startNginx() {
  proxy.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-nginx-'));
  if (IS_ROOT) fs.chmodSync(proxy.dir, 0o755); // nobody's workers write the cache in it
  proxy.port = await freePort();
  const conf = renderNginxConf(fs.readFileSync(path.join(ROOT, 'docker/nginx.conf'), 'utf8'), {
    ports: nodes.map((n) => n.port),
    listen: proxy.port,
    dir: proxy.dir,
  });
  const confPath = path.join(proxy.dir, 'nginx.conf');
  fs.writeFileSync(confPath, conf);
  // Its own process group, so that the workers go with the master whatever
  // happens (see the exit handler).
  // Its stdout and stderr are files, as under a container engine (a
  // pipe): nginx opens /dev/stdout for its access log, which fails on the
  // socket node's 'pipe' would give it.
  const outFile = path.join(proxy.dir, 'stdout.log');
  const errFile = path.join(proxy.dir, 'stderr.log');
  const outFd = fs.openSync(outFile, 'a');
  const errFd = fs.openSync(errFile, 'a');
  proxy.proc = spawn(NGINX, ['-c', confPath, '-p', proxy.dir, '-g', 'daemon off;'], {
    stdio: ['ignore', outFd, errFd],
    detached: true,
  });
  fs.closeSync(outFd);
  fs.closeSync(errFd);
  Object.defineProperty(proxy, 'log', { get: () => fs.readFileSync(outFile, 'utf8') });
  Object.defineProperty(proxy, 'err', { get: () => fs.readFileSync(errFile, 'utf8') });
  proxy.exit = new Promise((resolve) =>
    proxy.proc.on('exit', (code, signal) => resolve((proxy.exited = { code, signal }))),
  );
  // Listening once /healthz answers through it.
  const deadline = Date.now() + 15_000 * SCALE;
  for (;;) {
    if (proxy.exited) assert.fail(`nginx exited (${JSON.stringify(proxy.exited)}):\n${proxy.err}`);
    try {
      const res = await get(proxy.port, '/healthz', { timeoutMs: 2000 * SCALE });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) assert.fail(`nginx did not answer /healthz within ${15 * SCALE} s:\n${proxy.err}`);
    await sleep(100);
  }
}

process.on('exit', () => {
  // A failed run must not leave nginx behind (its group: master and workers).
  if (proxy.proc && !proxy.exited) {
    try {
      process.kill(-proxy.proc.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

/** Resolves with the JSON of GET `pathname` through nginx, asserting 200. */
async function getJson(pathname) {
  const res = await get(proxy.port, pathname, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(res.status, 200, `GET ${pathname}: ${res.text}`);
  return res.json;
}

const submit = (spec) => submitWith(spec, {});

async function submitWith(spec, headers) {
  const res = await get(proxy.port, '/v1/jobs', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'accept-encoding': 'identity', ...headers },
    body: JSON.stringify(spec),
  });
  assert.equal(res.status, 202, `POST /v1/jobs ${JSON.stringify(spec)}: ${res.text}`);
  assertValid('job', res.json);
  return res.json;
}

async function waitForJob(id, timeoutMs = 60_000 * SCALE) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJson(`/v1/jobs/${id}`);
    if (['succeeded', 'failed', 'cancelled'].includes(job.state)) return job;
    if (Date.now() > deadline) assert.fail(`job ${id} still ${job.state} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

const QUICK = (seed) => ({ kind: 'lattice', params: { length: 10, generations: 5 }, seed });

describe('three nodes behind nginx with docker/nginx.conf', { skip: SKIP }, () => {
  before(async () => {
    if (SKIP) return; // (a skipped suite's hooks do not run on Node 20; be sure elsewhere)
    const { db } = newDatabase();
    for (const name of ['edge-a', 'edge-b', 'edge-c']) {
      const s = await startServer({ db, args: ['--workers', '1', '--lease-seconds', String(LEASE_S), '--node', name] });
      s.name = name;
      nodes.push(s);
    }
    await startNginx();
  });

  after(async () => {
    if (proxy.proc && !proxy.exited) {
      proxy.proc.kill('SIGTERM'); // fast shutdown: the master ends its workers
      const t = setTimeout(() => process.kill(-proxy.proc.pid, 'SIGKILL'), 10_000 * SCALE);
      await proxy.exit;
      clearTimeout(t);
    }
    if (proxy.dir) fs.rmSync(proxy.dir, { recursive: true, force: true });
    for (const n of nodes) {
      if (!n.exited) await stopAndClean(n);
    }
  });

  let levelJobs = [];

  test('jobs submitted through nginx run on the nodes and finish; requests reach every node', OPTS, async () => {
    const accepted = [];
    for (let i = 0; i < 4; i++) accepted.push(await submit(QUICK(200 + i)));
    accepted.push(await submit({ kind: 'digger', params: { difficulty: 'easiest' }, seed: 7 }));
    for (const a of accepted) {
      const job = await waitForJob(a.id);
      assert.equal(job.state, 'succeeded', JSON.stringify(job));
      assert.ok(job.level_ids.length >= 1);
    }
    levelJobs = accepted;
    await flushed();
    for (const n of nodes) {
      assert.ok(/ http (GET|POST) \/v1\/jobs/.test(n.log), `${n.name} got none of the requests:\n${proxy.log}`);
    }
    // A POST retried with its Idempotency-Key (what a client does after a
    // 502, since nginx never retries a POST) answers the same job, whichever
    // node gets it: the key is in the database.
    const key = `scaleout-${process.pid}`;
    const firstTry = await submitWith(QUICK(290), { 'idempotency-key': key });
    for (let i = 0; i < 3; i++) {
      assert.equal((await submitWith(QUICK(290), { 'idempotency-key': key })).id, firstTry.id, 'a retry made another job');
    }
    // The request id nginx sends is the one it answers with, and the node logs it.
    const res = await get(proxy.port, '/healthz', { headers: { 'x-request-id': 'scaleout-probe-1' } });
    assert.equal(res.headers['x-request-id'], 'scaleout-probe-1');
    const made = await get(proxy.port, '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(made.headers['x-request-id'], /^[0-9a-f]{32}$/, 'an id the node would refuse is replaced by nginx');
    await flushed();
    assert.equal(nodeRequests('GET /healthz 200').filter((l) => l.includes('request_id=scaleout-probe-1')).length, 1);
    assert.equal(nodeRequests('GET /healthz 200').filter((l) => l.includes(`request_id=${made.headers['x-request-id']}`)).length, 1);
  });

  test('a level and its picture: the second GET is a HIT with the same bytes and ETag, and one request reached a node', OPTS, async () => {
    const job = await waitForJob(levelJobs[0].id);
    const id = job.level_ids[0];
    for (const [pathname, type] of [
      [`/v1/levels/${id}`, /^application\/json/],
      [`/v1/levels/${id}.svg`, /^image\/svg\+xml/],
    ]) {
      for (const encoding of ['gzip', 'identity']) {
        const headers = { 'accept-encoding': encoding };
        const first = await get(proxy.port, pathname, { headers });
        assert.equal(first.status, 200, first.text);
        assert.match(first.headers['content-type'], type);
        assert.match(first.headers['cache-control'], /immutable/);
        assert.equal(first.headers['x-cache-status'], 'MISS', `${pathname} (${encoding}) first`);
        await settled();
        const second = await get(proxy.port, pathname, { headers });
        assert.equal(second.status, 200);
        assert.equal(second.headers['x-cache-status'], 'HIT', `${pathname} (${encoding}) second`);
        assert.ok(second.body.equals(first.body), `${pathname} (${encoding}): the cached bytes differ`);
        assert.equal(second.headers.etag, first.headers.etag);
        assert.equal(second.headers['content-type'], first.headers['content-type']);
        // One variant per coding: gzip to whoever asked for it, never to others.
        if (encoding === 'gzip') assert.equal(second.headers['content-encoding'], 'gzip', `${pathname} is not compressed`);
        else assert.equal(second.headers['content-encoding'], undefined, `${pathname}: a compressed body for identity`);
        // A revalidation is answered from the cache: 304, no body.
        const cond = await get(proxy.port, pathname, { headers: { ...headers, 'if-none-match': first.headers.etag } });
        assert.equal(cond.status, 304);
        assert.equal(cond.headers['x-cache-status'], 'HIT');
        assert.equal(cond.body.length, 0);
      }
      if (pathname.endsWith('.svg')) assert.match((await get(proxy.port, pathname, { headers: { 'accept-encoding': 'identity' } })).text, /<svg[\s>]/);
    }
    // The picture through the level path with Accept: a variant of its own.
    const svgAccept = { accept: 'image/svg+xml', 'accept-encoding': 'identity' };
    const pic1 = await get(proxy.port, `/v1/levels/${id}`, { headers: svgAccept });
    const pic2 = await get(proxy.port, `/v1/levels/${id}`, { headers: svgAccept });
    assert.match(pic1.headers['content-type'], /^image\/svg\+xml/);
    assert.equal(pic2.headers['x-cache-status'], 'HIT');
    assert.ok(pic2.body.equals(pic1.body));
    const plain = await get(proxy.port, `/v1/levels/${id}`, { headers: { 'accept-encoding': 'identity' } });
    assert.match(plain.headers['content-type'], /^application\/json/, 'the JSON variant is kept apart from the picture');
    assert.equal(plain.headers['x-cache-status'], 'HIT');
    assertValid('level', JSON.parse(plain.text));

    await flushed();
    // Each variant reached a node once: the JSON in two codings and the
    // picture by Accept on the level's path, two codings on the .svg path.
    const reached = nodeRequests(`GET /v1/levels/${id} 200 `);
    assert.equal(reached.length, 3, reached.join('\n'));
    const reachedSvg = nodeRequests(`GET /v1/levels/${id}.svg 200 `);
    assert.equal(reachedSvg.length, 2, reachedSvg.join('\n'));

    // With credentials: never from the cache, never into it.
    const authed = await get(proxy.port, `/v1/levels/${id}`, {
      headers: { authorization: 'Bearer scaleout-test-token-0001', 'accept-encoding': 'identity' },
    });
    assert.equal(authed.status, 200);
    assert.equal(authed.headers['x-cache-status'], 'BYPASS');
    // A level first fetched with credentials was not stored: the next
    // request without them is a MISS, not a HIT of the credentialed answer.
    const other = (await waitForJob(levelJobs[1].id)).level_ids[0];
    const credentialed = await get(proxy.port, `/v1/levels/${other}`, {
      headers: { authorization: 'Bearer scaleout-test-token-0001', 'accept-encoding': 'identity' },
    });
    assert.equal(credentialed.headers['x-cache-status'], 'BYPASS');
    const anonymous = await get(proxy.port, `/v1/levels/${other}`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(anonymous.status, 200);
    assert.equal(anonymous.headers['x-cache-status'], 'MISS', 'an answer to a request with Authorization was cached');
    // A level that does not exist: a 404 each time, from a node, never cached.
    for (let i = 0; i < 2; i++) {
      const missing = await get(proxy.port, '/v1/levels/lvl_0000000000000000', { headers: { 'accept-encoding': 'identity' } });
      assert.equal(missing.status, 404);
      assert.notEqual(missing.headers['x-cache-status'], 'HIT');
    }
  });

  test('job status, lists, evaluations and the dashboard are never served from the cache', OPTS, async () => {
    const id = levelJobs[0].id;
    const paths = [`/v1/jobs/${id}`, '/v1/jobs', '/v1/levels', '/v1/levels?kind=lattice', '/v1/evaluations/square/HPPHPH', '/', '/readyz'];
    await flushed();
    const before = new Map(paths.map((p) => [p, nodeRequests(`GET ${p.split('?')[0]} `).length]));
    for (const p of paths) {
      for (let i = 0; i < 2; i++) {
        const res = await get(proxy.port, p, { headers: { 'accept-encoding': 'identity' } });
        assert.equal(res.status, 200, `${p}: ${res.text.slice(0, 200)}`);
        assert.equal(res.headers['x-cache-status'], undefined, `${p} went through the cache`);
      }
    }
    await flushed();
    for (const p of paths) {
      const n = nodeRequests(`GET ${p.split('?')[0]} `).length - before.get(p);
      assert.ok(n >= 2, `${p}: ${n} of 2 GETs reached a node`);
    }
  });

  test('an uploaded PX model is cached like a level', OPTS, async () => {
    // A small trace set (pxmodels.test.mjs has the format).
    const name = `scaleout-${process.pid}`;
    const features = ['speed', 'speed_sd', 'rel_speed', 'proximity', 'gained', 'lost', 'standing', 'braking'];
    const body = JSON.stringify({
      features,
      traces: [
        { window: [0, 0.5, 0.1, 0.5, 0.2, 0, 0, 0.3], intensity: 0.2 },
        { window: [0.6, 0.9, 0.05, 0.5, 0.9, 0.33, 0, 0.1], intensity: 0.9 },
      ],
    });
    const up = await get(proxy.port, `/v1/px-models?name=${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body,
    });
    assert.equal(up.status, 201, `POST /v1/px-models: ${up.text}`);
    const a = await get(proxy.port, `/v1/px-models/${name}`, { headers: { 'accept-encoding': 'identity' } });
    await settled();
    const b = await get(proxy.port, `/v1/px-models/${name}`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(a.status, 200);
    assert.equal(a.headers['x-cache-status'], 'MISS');
    assert.equal(b.headers['x-cache-status'], 'HIT');
    assert.ok(b.body.equals(a.body));
    assert.equal(b.headers.etag, a.headers.etag);
  });

  test('a job\'s events stream through nginx as they are written, to the end event', OPTS, async () => {
    // About a second of generations on one core.
    const spec = { kind: 'lattice', params: { length: 17, generations: 150, population: 50 }, seed: 301 };
    const job = await submit(spec);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 90_000 * SCALE);
    const events = [];
    try {
      const res = await fetch(`http://127.0.0.1:${proxy.port}/v1/jobs/${job.id}/events`, { signal: ac.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/event-stream/);
      assert.equal(res.headers.get('x-cache-status'), null);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read(); // bounded by the abort timer
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const fields = {};
          for (const line of buf.slice(0, end).split('\n')) {
            const m = /^(id|event|data): (.*)$/.exec(line);
            if (m) fields[m[1]] = m[2];
          }
          buf = buf.slice(end + 2);
          if ('data' in fields) events.push({ id: Number(fields.id), event: fields.event, data: fields.data, at: Date.now() });
        }
      }
    } catch (e) {
      if (ac.signal.aborted) assert.fail(`the event stream did not end within ${90 * SCALE} s; ${events.length} events`);
      throw e;
    } finally {
      clearTimeout(timer);
    }
    const last = events.at(-1);
    assert.equal(last?.event, 'end', `no end event: ${JSON.stringify(events.slice(-3))}`);
    assert.equal(JSON.parse(last.data).state, 'succeeded');
    const progress = events.slice(0, -1);
    assert.ok(progress.length >= 1, 'no progress event');
    progress.forEach((e, i) => i && assert.equal(e.id, progress[i - 1].id + 1, 'no gap, no repeat'));
    assert.equal(progress.at(-1).id, spec.params.generations);
    // Not buffered: the first event was in hand while the job still ran.
    const done = await getJson(`/v1/jobs/${job.id}`);
    const finished = Date.parse(done.finished_at);
    assert.ok(events[0].at < finished - 100, `the first event arrived ${events[0].at - finished} ms after the job finished: buffered`);
  });

  test('HTTP framing is normalised: ambiguous requests are answered by nginx and never reach a node', OPTS, async () => {
    const body = JSON.stringify(QUICK(401));
    const head = (rid, lines) =>
      `POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Request-Id: ${rid}\r\nConnection: close\r\n${lines.join('\r\n')}\r\n\r\n`;
    const rid = (what) => `framing-${what}-${process.pid}`;
    const cases = [
      ['two-lengths', 400, head(rid('two-lengths'), [`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`]) + body + ' '],
      ['same-two-lengths', 400, head(rid('same-two-lengths'), [`Content-Length: ${body.length}`, `Content-Length: ${body.length}`]) + body],
      ['length-list', 400, head(rid('length-list'), [`Content-Length: ${body.length}, ${body.length}`]) + body],
      ['length-and-chunked', 400, head(rid('length-and-chunked'), [`Content-Length: ${body.length}`, 'Transfer-Encoding: chunked']) +
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
      // RFC 9112: a transfer coding the server does not understand is a 501.
      ['unknown-coding', 501, head(rid('unknown-coding'), ['Transfer-Encoding: gzip, chunked']) + `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
      ['bogus-coding', 501, head(rid('bogus-coding'), ['Transfer-Encoding: xchunked']) + `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
    ];
    for (const [what, status, text] of cases) {
      const res = await raw(proxy.port, text);
      assert.equal(res.status, status, `${what}: ${res.raw.slice(0, 300)}`);
      assert.equal(res.headers.server, 'nginx', `${what}: answered by nginx`);
    }
    // A chunked body is accepted: nginx reads it whole and sends it on with
    // a Content-Length.
    const chunked = head(rid('chunked'), ['Transfer-Encoding: chunked']) +
      `5\r\n${body.slice(0, 5)}\r\n${(body.length - 5).toString(16)}\r\n${body.slice(5)}\r\n0\r\n\r\n`;
    const ok = await raw(proxy.port, chunked);
    assert.equal(ok.status, 202, ok.raw.slice(0, 400));
    await flushed();
    const log = nodeLog();
    assert.ok(log.includes(`request_id=${rid('chunked')}`), 'the accepted request is in a node\'s log (the check below can see)');
    for (const [what] of cases) assert.ok(!log.includes(rid(what)), `${what} reached a node:\n${log}`);
  });

  test('bodies: over 64 KiB is refused by nginx with the 413 problem document, exactly 64 KiB reaches a node', OPTS, async () => {
    const spec = JSON.stringify(QUICK(402));
    const exact = spec + ' '.repeat(65536 - spec.length);
    assert.equal(Buffer.byteLength(exact), 65536);
    const over = exact + ' ';
    const big = await get(proxy.port, '/v1/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': `too-large-${process.pid}` },
      body: over,
    });
    assert.equal(big.status, 413);
    assertProblem({ status: big.status, headers: new Headers(big.headers), text: big.text, body: JSON.parse(big.text) }, 413, 'body-too-large');
    // Chunked, the size known only as it comes: a node would have to cut
    // the connection (it cannot answer in the middle of a body); nginx
    // counts it as it reads and answers the same 413.
    const chunkedOver =
      `POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `X-Request-Id: too-large-chunked-${process.pid}\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n` +
      `${(40000).toString(16)}\r\n${over.slice(0, 40000)}\r\n${(over.length - 40000).toString(16)}\r\n${over.slice(40000)}\r\n0\r\n\r\n`;
    const rawBig = await raw(proxy.port, chunkedOver);
    assert.equal(rawBig.status, 413, rawBig.raw.slice(0, 300));
    assert.equal(rawBig.headers['content-type'], 'application/problem+json');
    const fits = await get(proxy.port, '/v1/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body: exact,
    });
    assert.equal(fits.status, 202, fits.text);
    await flushed();
    assert.ok(!nodeLog().includes(`too-large-${process.pid}`), 'the oversized body reached a node');
    assert.ok(!nodeLog().includes(`too-large-chunked-${process.pid}`), 'the oversized chunked body reached a node');
    await waitForJob(fits.json.id);
  });

  test('kill -9 of a node: GETs still answer, POSTs are accepted, every accepted job finishes', OPTS, async () => {
    // Three exhaustive searches of length 17 (about 6 s on one core; 16,
    // 0.7 s, on a sanitizer build), one for each node's worker, sure to be
    // caught running; and three quick jobs queued behind them.
    const long = (seed) => ({ kind: 'lattice', params: { algorithm: 'exhaustive', length: SCALE > 1 ? 16 : 17 }, seed });
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await submit(long(500 + i)));
    for (let i = 0; i < 3; i++) jobs.push(await submit(QUICK(510 + i)));
    const deadline = Date.now() + 30_000 * SCALE;
    let victim;
    while (!(victim = nodes.find((n) => jobs.slice(0, 3).some((j) => n.log.includes(`job ${j.id} running`))))) {
      if (Date.now() > deadline) assert.fail(`no node ran one of the long jobs within ${30 * SCALE} s`);
      await sleep(20);
    }
    victim.proc.kill('SIGKILL');
    const exitDeadline = Date.now() + 10_000 * SCALE;
    while (!victim.exited) {
      if (Date.now() > exitDeadline) assert.fail('the killed node did not exit');
      await sleep(20);
    }
    const logBefore = proxy.log.length;
    // Right away, many GETs: some go to the dead node first, and nginx
    // answers them from the next one.
    for (let i = 0; i < 12; i++) {
      for (const p of ['/healthz', `/v1/jobs/${jobs[i % jobs.length].id}`]) {
        const res = await get(proxy.port, p, { headers: { 'accept-encoding': 'identity' } });
        assert.equal(res.status, 200, `GET ${p} after the kill: ${res.status} ${res.text.slice(0, 200)}`);
      }
    }
    // A POST finds the dead node's port closed: never sent there, so it goes on.
    const late = [];
    for (let i = 0; i < 3; i++) late.push(await submit(QUICK(600 + i)));
    for (const j of [...jobs, ...late]) {
      const done = await waitForJob(j.id, 90_000 * SCALE);
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
    }
    // nginx's access log: requests that tried the dead node first (a 502 for
    // that attempt) and got their answer from another.
    const retried = proxy.log
      .slice(logBefore)
      .split('\n')
      .filter((l) => new RegExp(`upstream=127\\.0\\.0\\.1:${victim.port}, `).test(l) && / upstream_status=502, 20[02] /.test(l));
    assert.ok(retried.length >= 1, `no request was retried past the dead node:\n${proxy.log.slice(logBefore)}`);
    // The dead node's running job was rescued by a live node once its lease expired.
    const alive = nodes.filter((n) => n !== victim);
    await flushed();
    const rescued = jobs.filter((j) => alive.some((n) => n.log.includes(`job ${j.id} requeued`) && /reason=lease_expired/.test(n.log)));
    assert.ok(rescued.length >= 1, `no job of the killed node was rescued:\n${alive.map((n) => n.log).join('\n')}`);
    for (const n of alive) assert.equal((await stopServer(n)).code, 0, n.log);
    nodes.splice(nodes.indexOf(victim), 1);
  });
});

// The setup's own check, cheap and back-end-free: the rendering touches only
// the marked lines (the rest of the file is byte for byte what ships).
const ONCE = PG
  ? 'SQLite pass only: the file does not depend on the back end; checked once'
  : !NGINX
    ? 'nginx is not installed (sh scripts/deps.sh test installs it)'
    : false;
test('docker/nginx.conf renders for loopback by changing only its [site] lines, and nginx -t takes it', { skip: ONCE }, async () => {
  const text = fs.readFileSync(path.join(ROOT, 'docker/nginx.conf'), 'utf8');
  const out = renderNginxConf(text, { ports: [1, 2, 3], listen: 4, dir: '/tmp/x' });
  const a = text.split('\n');
  const b = out.split('\n');
  assert.equal(a.length, b.length);
  a.forEach((line, i) => {
    if (line !== b[i]) assert.match(line, /\[site\]|^user /, `line ${i + 1} changed but is not marked [site]: ${line}`);
  });
  // And nginx takes it (as it is rendered for this user).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-nginx-t-'));
  try {
    if (IS_ROOT) fs.chmodSync(dir, 0o755);
    const conf = path.join(dir, 'nginx.conf');
    // nginx -t binds the listen address: a free port.
    fs.writeFileSync(conf, renderNginxConf(text, { ports: [1, 2, 3], listen: await freePort(), dir }));
    // stdout not a socket (node's 'pipe'): nginx opens /dev/stdout.
    execFileSync(NGINX, ['-t', '-q', '-c', conf, '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
