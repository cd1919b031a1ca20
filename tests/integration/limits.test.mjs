// limits.test.mjs - the limits that keep one client from taking the
// machine (docs/RELIABILITY.md, "Limits"), each against the real server:
// the body size (413 before a body announced too large is read; a chunked
// body cut off once over), the JSON depth (400 before jansson parses), every
// kind's params ranges (422 naming the field), the per-job wall-clock budget
// (--job-timeout: the job fails timed_out and its worker is free again), and
// the connection limits and timeouts against slow clients
// (--connection-timeout, --max-connections, --max-connections-per-ip).
// The queue bound (429) has its own file, queue.test.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';

import {
  BIN,
  QUICK_JOB,
  SCALE,
  assertProblem,
  assertValid,
  largestDiggerLevel,
  request,
  sleep,
  startServer,
  stopAndClean,
  submit,
  useServer,
  waitFor,
  waitForJob,
} from './harness.mjs';

const LIMIT = 64 * 1024; // the request body limit, bytes
const DEPTH = 32; // the JSON depth limit

const server = useServer({ args: ['--workers', '1'] });

/* ---- raw connections ---- */

/**
 * A TCP connection to `srv` (from `localAddress`, any 127/8 address), with
 * everything it receives in `data` and `closed` resolving, with the time,
 * once the server has closed it (or it failed).
 */
function connect(srv, { localAddress } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: srv.port, localAddress });
    const conn = { socket, data: '', closedAt: null, error: null };
    conn.closed = new Promise((done) => {
      socket.on('close', () => {
        conn.closedAt = Date.now();
        done(conn.closedAt);
      });
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      conn.data += chunk;
    });
    socket.on('error', (err) => {
      conn.error = err; // EPIPE, ECONNRESET: the server closed first
    });
    socket.once('connect', () => resolve(conn));
    socket.once('error', reject);
  });
}

/** Writes `text`, resolving when written or when the connection is gone. */
function write(conn, text) {
  return new Promise((resolve) => {
    if (conn.closedAt || conn.socket.destroyed) return resolve(false);
    conn.socket.write(text, (err) => resolve(!err));
  });
}

/** Resolves with the first `ms` of waiting: 'closed' or 'open'. */
async function closedWithin(conn, ms) {
  return Promise.race([conn.closed.then(() => 'closed'), sleep(ms).then(() => 'open')]);
}

const GET_HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';

async function healthy(srv) {
  const res = await request(srv, '/healthz');
  assert.equal(res.status, 200, res.text);
}

/* ---- request body size ---- */

test('a Content-Length over the limit is answered 413 before the body is read', async () => {
  const conn = await connect(server);
  const started = Date.now();
  // A gigabyte announced, a few bytes sent, and then nothing: a slow body.
  await write(conn, 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Content-Length: 1000000000\r\n\r\n{"kind":');
  await conn.closed;
  const elapsed = conn.closedAt - started;
  assert.ok(elapsed < 2000 * SCALE, `the answer took ${elapsed} ms`);
  assert.match(conn.data, /^HTTP\/1\.1 413 /);
  assert.match(conn.data, /Connection: close/i);
  const body = JSON.parse(conn.data.slice(conn.data.indexOf('\r\n\r\n') + 4));
  assertValid('problem', body);
  assert.equal(body.type, 'https://starforge.dev/problems/body-too-large');
  assert.match(body.detail, new RegExp(`${LIMIT} bytes`));
  await healthy(server);
});

test('a body of exactly the limit is read; one byte more is 413', async () => {
  const json = '{"kind":"maze"}';
  const at = await request(server, '/v1/jobs', { method: 'POST', body: json + ' '.repeat(LIMIT - json.length) });
  assertProblem(at, 422, 'unknown-kind');
  const over = await request(server, '/v1/jobs', { method: 'POST', body: json + ' '.repeat(LIMIT + 1 - json.length) });
  assertProblem(over, 413, 'body-too-large');
});

test('a chunked body is cut off once it passes the limit', async () => {
  const small = await connect(server);
  const body = '{"kind":"maze"}';
  await write(small, 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n' +
    `Connection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
  await small.closed;
  assert.match(small.data, /^HTTP\/1\.1 422 /, 'a chunked body under the limit is served');

  const conn = await connect(server);
  await write(conn, 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
  const chunk = `1000\r\n${'x'.repeat(4096)}\r\n`;
  let sent = 0;
  // Up to 16 MiB, 4 KiB every few milliseconds: the server must stop it long before.
  while (sent < 16 * 1024 * 1024 && !conn.closedAt && (await write(conn, chunk))) {
    sent += 4096;
    await sleep(2);
  }
  assert.equal(await closedWithin(conn, 5000 * SCALE), 'closed');
  assert.ok(sent < 1024 * 1024, `${sent} bytes were taken before the connection closed`);
  assert.equal(conn.data, '', 'no answer: MHD cannot answer in the middle of a body');
  await healthy(server);
  await waitFor(() => /http POST \/v1\/jobs 413 /.test(server.log), { what: 'the 413 log line' });
});

/* ---- malformed HTTP: libmicrohttpd's answers, before any of ours ---- */

// [what, raw request, status]: MHD answers these itself (an HTML body, not
// a problem document) and closes the connection.
const PROTOCOL = [
  ['a Content-Length that is not a number', 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}', 400],
  ['a negative Content-Length', 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}', 400],
  ['a chunk size that is not hex', 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n', 400],
  ['an HTTP/0.9 request line', 'GET /healthz\r\n\r\n', 400],
  ['an unknown HTTP version', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n', 505],
  ['a request line over 32 KiB', `GET /v1/levels/${'a'.repeat(40000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
  ['headers over 32 KiB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40000)}\r\n\r\n`, 431],
];

for (const [what, raw, status] of PROTOCOL) {
  test(`${what}: ${status} from libmicrohttpd, and the connection closes`, async () => {
    const conn = await connect(server);
    await write(conn, raw);
    assert.equal(await closedWithin(conn, 5000 * SCALE), 'closed');
    assert.match(conn.data, new RegExp(`^HTTP/1\\.1 ${status} `));
    await healthy(server);
  });
}

/* ---- JSON depth ---- */

const nested = (depth) => '['.repeat(depth) + ']'.repeat(depth);
// A job request whose params.x nests `depth` levels in all (the body and params are two).
const jobNesting = (depth) => `{"kind":"digger","params":{"x":${nested(depth - 2)}}}`;

test(`100 000 '[' never reach the parser; a body nested deeper than ${DEPTH} is 400`, async () => {
  const huge = await request(server, '/v1/jobs', { method: 'POST', body: '['.repeat(100000) });
  assertProblem(huge, 413, 'body-too-large'); // over the body limit first
  const deep = await request(server, '/v1/jobs', { method: 'POST', body: '['.repeat(LIMIT - 1) });
  const problem = assertProblem(deep, 400, 'invalid-json');
  assert.match(problem.detail, new RegExp(`more than ${DEPTH} deep`));
  await healthy(server);
});

test(`a body nested ${DEPTH} deep is parsed, ${DEPTH + 1} is refused`, async () => {
  const at = await request(server, '/v1/jobs', { method: 'POST', json: JSON.parse(jobNesting(DEPTH)) });
  assert.match(assertProblem(at, 422, 'invalid-params').detail, /params\.x/);
  const over = await request(server, '/v1/jobs', { method: 'POST', body: jobNesting(DEPTH + 1) });
  assert.match(assertProblem(over, 400, 'invalid-json').detail, new RegExp(`${DEPTH}`));
  // Brackets inside strings do not count, escaped quotes included.
  const quoted = JSON.stringify({ kind: 'digger', params: { x: `"${'['.repeat(500)}` } });
  assert.match(assertProblem(await request(server, '/v1/jobs', { method: 'POST', body: quoted }), 422,
    'invalid-params').detail, /params\.x/);
});

test('the depth limit covers every JSON body: checks and uploads too, not CSV', async () => {
  const deep = jobNesting(DEPTH + 1);
  const check = await request(server, '/v1/digger/check', { method: 'POST', body: deep });
  assertProblem(check, 400, 'invalid-json');
  const json = await request(server, '/v1/px-models?name=deep', {
    method: 'POST', body: deep, headers: { 'content-type': 'application/json' },
  });
  assertProblem(json, 400, 'invalid-json');
  // A CSV body is not JSON: its brackets are the CSV parser's business.
  const csv = await request(server, '/v1/px-models?name=deep', {
    method: 'POST', body: '['.repeat(100), headers: { 'content-type': 'text/csv' },
  });
  assertProblem(csv, 422);
});

/* ---- params ---- */

// [kind, params, field, the top of its range]: one over-limit value per
// limited field of every kind (the table in docs/RELIABILITY.md).
const PARAMS = [
  ['lattice', { length: 65 }, 'length', 64],
  ['lattice', { lattice: 'cubic', length: 49 }, 'length', 48],
  ['lattice', { length: 21, method: 'exact' }, 'length', 20],
  ['lattice', { lattice: 'cubic', length: 15, method: 'exact' }, 'length', 14],
  ['lattice', { algorithm: 'exhaustive', length: 19 }, 'length', 18],
  ['lattice', { population: 1001 }, 'population', 1000],
  ['lattice', { generations: 1001 }, 'generations', 1000],
  ['lattice', { count: 1001 }, 'count', 1000],
  ['lattice', { bins: 65 }, 'bins', 64],
  ['racetrack', { points: 201 }, 'points', 200],
  ['racetrack', { population: 1001 }, 'population', 1000],
  ['racetrack', { generations: 1001 }, 'generations', 1000],
  ['racetrack', { count: 101 }, 'count', 100],
  ['racetrack', { star_seeds: 21 }, 'star_seeds', 20],
  ['racetrack', { width: 5001 }, 'width', 5000],
  ['racetrack', { height: 5001 }, 'height', 5000],
  ['racetrack', { track_width: 41 }, 'track_width', 40],
  ['racetrack', { target: Array(65).fill(0.5) }, 'target', 64],
  ['racetrack', { races_per_genome: 65 }, 'races_per_genome', 64],
  ['digger', { width: 11 }, 'width', 10],
  ['digger', { height: 7 }, 'height', 6],
  ['digger', { machines: 7 }, 'machines', 6],
  ['digger', { count: 21 }, 'count', 20],
  ['digger', { max_attempts: 100001 }, 'max_attempts', 100000],
];

for (const [kind, params, field, top] of PARAMS) {
  test(`${kind} params.${field} over ${top}: 422 naming the field and its range`, async () => {
    const res = await request(server, '/v1/jobs', { method: 'POST', json: { kind, params } });
    const problem = assertProblem(res, 422, 'invalid-params');
    assert.match(problem.detail, new RegExp(`params\\.${field}\\b`));
    assert.match(problem.detail, new RegExp(`\\.\\.${top}\\b`), problem.detail);
  });
}

/* ---- checks in flight ---- */

// Checks and hints share the limit; the 429's detail names the operation refused.
for (const op of ['check', 'hint']) {
  test(`${op}s beyond four per worker are 429 with Retry-After, the rest answered`, async () => {
    // The largest level the digger reader takes: its solver runs to its bound
    // (digger.test.mjs), so a dozen sent at once overlap.
    const body = { level: largestDiggerLevel(), moves: [{ side: 'left', index: 0 }] };
    const answers = await Promise.all(Array.from({ length: 12 }, () =>
      request(server, `/v1/digger/${op}`, { method: 'POST', json: body })));
    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 429);
    assert.equal(ok.length + busy.length, answers.length, answers.map((a) => a.status).join(' '));
    assert.ok(ok.length >= 4, `${ok.length} answered`); // --workers 1: four at once
    assert.ok(busy.length >= 1, 'none refused');
    for (const a of busy) {
      const problem = assertProblem(a, 429, 'busy');
      assert.equal(problem.title, 'Too many checks');
      assert.match(problem.detail, new RegExp(`^\\d+ checks and hints are running, the limit; retry the ${op} later$`));
      assert.equal(a.headers.get('retry-after'), '2');
    }
  });
}

/* ---- a job's wall-clock budget ---- */

test('a job over --job-timeout fails timed_out and frees its worker', async () => {
  const srv = await startServer({ args: ['--workers', '1', '--job-timeout', '1'] });
  try {
    // Minutes of work: a thousand generations of a thousand length-18 chains.
    const big = await submit(srv, {
      kind: 'lattice', seed: 5, params: { length: 18, population: 1000, generations: 1000 },
    });
    const quick = await submit(srv, QUICK_JOB(6)); // waits for the one worker
    const done = await waitForJob(srv, big.id, { timeoutMs: 60_000 * SCALE });
    assertValid('job', done);
    assert.equal(done.state, 'failed', JSON.stringify(done));
    assert.match(done.error, /^timed_out: .*budget of 1 s \(--job-timeout\)/);
    assert.deepEqual(done.level_ids, []);
    const ran = Date.parse(done.finished_at) - Date.parse(done.started_at);
    assert.ok(ran >= 1000 && ran < 30_000 * SCALE, `ran ${ran} ms`);
    assert.ok(done.progress.generation < 1000, JSON.stringify(done.progress));
    // The worker is free: the job behind it runs and succeeds.
    assert.equal((await waitForJob(srv, quick.id)).state, 'succeeded');
    const logged = new RegExp(`job ${big.id} failed .*reason=timed_out budget=1s`);
    await waitFor(() => logged.test(srv.log), { what: 'the timed_out log line' });
  } finally {
    await stopAndClean(srv);
  }
});

/* ---- slow clients and connection limits ---- */

test('a slowloris client is dropped after --connection-timeout while others are served', async () => {
  const srv = await startServer({ args: ['--connection-timeout', '2'] });
  try {
    // Headers one byte every 400 ms: never silent for 2 s, so only the
    // request deadline can end it.
    const slow = await connect(srv);
    const slowBody = await connect(srv);
    const started = Date.now();
    const headers = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200);
    const bodyReq = 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n';
    await write(slowBody, bodyReq);
    let served = 0;
    for (let i = 0; i < headers.length && !(slow.closedAt && slowBody.closedAt); i++) {
      await write(slow, headers[i]);
      await write(slowBody, '{');
      await healthy(srv); // everyone else is served meanwhile
      served++;
      await sleep(400);
    }
    assert.ok(slow.closedAt && slowBody.closedAt, 'both slow connections were closed');
    for (const c of [slow, slowBody]) {
      const after = c.closedAt - started;
      assert.ok(after >= 1900 && after < 6000 * SCALE, `closed after ${after} ms`);
      assert.equal(c.data, '', 'closed without an answer');
    }
    assert.ok(served >= 4, `${served} other requests served meanwhile`);
    // Bytes that never make a request line: closed at the same deadline.
    const garbage = await connect(srv);
    const sent = Date.now();
    await write(garbage, '\x00\x01\x02hello\r\n\r\n');
    assert.equal(await closedWithin(garbage, 6000 * SCALE), 'closed');
    assert.ok(garbage.closedAt - sent >= 1000, 'closed at the deadline, not at once');
    assert.equal(garbage.data, '');
    await waitFor(() => /no complete request in 2 s/.test(srv.log), { what: 'the drop log line' });
    await healthy(srv);
  } finally {
    await stopAndClean(srv);
  }
});

test('connections beyond --max-connections wait unserved; the server stays responsive', async () => {
  const srv = await startServer({ args: ['--max-connections', '4'] });
  try {
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await connect(srv));
    await sleep(200);
    // The fifth connects (the kernel's backlog) but is not served...
    const extra = await connect(srv);
    await write(extra, GET_HEALTHZ);
    await sleep(1000);
    assert.equal(extra.data, '', 'a connection beyond the limit was served');
    // ...while the connections in are.
    await write(held[0], GET_HEALTHZ);
    await waitFor(() => /^HTTP\/1\.1 200 /.test(held[0].data), { what: 'a held connection to be served' });
    // One leaves, and the waiting one is served at once.
    held[1].socket.destroy();
    await waitFor(() => /^HTTP\/1\.1 200 /.test(extra.data), {
      timeoutMs: 3000 * SCALE, what: 'the waiting connection to be served',
    });
    for (const c of [...held, extra]) c.socket.destroy();
    await healthy(srv);
  } finally {
    await stopAndClean(srv);
  }
});

test('connections beyond --max-connections-per-ip are closed; other addresses are served', async () => {
  const srv = await startServer({ args: ['--max-connections-per-ip', '2'] });
  try {
    const held = [await connect(srv), await connect(srv)];
    const third = await connect(srv);
    await write(third, GET_HEALTHZ);
    assert.equal(await closedWithin(third, 3000 * SCALE), 'closed');
    assert.equal(third.data, '');
    const other = await connect(srv, { localAddress: '127.0.0.2' });
    await write(other, GET_HEALTHZ);
    await waitFor(() => /^HTTP\/1\.1 200 /.test(other.data), { what: 'another address to be served' });
    for (const c of [...held, other]) c.socket.destroy();
  } finally {
    await stopAndClean(srv);
  }
});

test('limit options out of range stop the server at start', () => {
  for (const [args, env, pattern] of [
    [['--job-timeout', '0'], {}, /--job-timeout '0' .*1\.\.604800/],
    [['--max-connections', '0'], {}, /--max-connections/],
    [['--connection-timeout', '3601'], {}, /--connection-timeout/],
    [[], { STARFORGE_MAX_CONNECTIONS_PER_IP: '-1' }, /STARFORGE_MAX_CONNECTIONS_PER_IP='-1' .*0\.\.100000/],
  ]) {
    const res = spawnSync(BIN, ['serve', '--listen', '127.0.0.1:0', '--db', '/nonexistent/x.db', ...args], {
      env: { ...process.env, ...env }, encoding: 'utf8',
    });
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, pattern);
  }
});
