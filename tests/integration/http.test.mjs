// http.test.mjs - what every answer shares, over raw HTTP (node:http and
// node:net, which neither add Accept-Encoding nor decompress): gzip content
// coding (a round trip equal byte for byte to the plain body for a level,
// its picture, an evaluation, a problem and the dashboard; an ETag per
// coding, each answering 304 only to itself; Vary: Accept-Encoding; no gzip
// without Accept-Encoding, with gzip;q=0, for tiny bodies or for a stream;
// HEAD); X-Request-Id (a sane one echoed, others replaced, on errors, 304,
// streams and the early 413, and on the request's log line); the log's
// timestamps, its escaping of control bytes from the client, and
// --log-format json.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { describe, test } from 'node:test';
import zlib from 'node:zlib';

import { BIN, SCALE, assertValid, startServer, stopAndClean, submit, useServer, waitFor, waitForJob } from './harness.mjs';

const TS = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;
const GENERATED_ID = /^[0-9a-f]{32}$/;

/** One request with exactly `headers`; resolves with { status, headers, body: Buffer }. */
function raw(server, path, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.base}${path}`, { method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Bytes written as they are on a new connection; resolves with the whole answer as latin1 text. */
function rawBytes(server, bytes) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(server.port, '127.0.0.1');
    const chunks = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    sock.on('error', reject);
    sock.write(Buffer.from(bytes, 'latin1'));
  });
}

const GZIP = { 'accept-encoding': 'gzip' };
const varies = (res, name) => (res.headers.vary || '').split(',').map((v) => v.trim().toLowerCase()).includes(name.toLowerCase());

/** Log lines (as written: the log is flushed four times a second) that match `re`. */
async function logLine(server, re, what) {
  return waitFor(() => server.log.split('\n').find((l) => re.test(l)), { what: what || String(re), timeoutMs: 5_000 * SCALE });
}

describe('text log', () => {
  const server = useServer({ args: ['--workers', '2'] }, async (s) => {
    const job = await submit(s, { kind: 'lattice', seed: 3, params: { length: 12, generations: 3 } });
    const done = await waitForJob(s, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    s.jobId = done.id;
    s.levelId = done.level_ids[0];
  });

  test('gzip round trip: each body decompresses to the plain bytes, with Vary and a coding of its own', async () => {
    const paths = [
      `/v1/levels/${server.levelId}`,
      `/v1/levels/${server.levelId}.svg`,
      '/v1/evaluations/square/HPHPPHHPHPPHPHHP',
      '/v1/evaluations/square/HPHPPHHPHPPHPHHP.svg',
      `/v1/levels/${'x'.repeat(200)}`, // a 404 problem longer than the threshold
      '/web/app.js',
      '/openapi.yaml',
      `/v1/jobs/${server.jobId}`,
    ];
    for (const p of paths) {
      const plain = await raw(server, p);
      const gz = await raw(server, p, { headers: GZIP });
      assert.equal(gz.status, plain.status, p);
      assert.ok(plain.body.length >= 256, `${p}: ${plain.body.length} bytes is under the threshold`);
      assert.equal(plain.headers['content-encoding'], undefined, p);
      assert.equal(gz.headers['content-encoding'], 'gzip', p);
      assert.equal(gz.headers['content-type'], plain.headers['content-type'], p);
      assert.equal(Number(gz.headers['content-length']), gz.body.length, p);
      assert.ok(gz.body.length < plain.body.length, `${p}: ${gz.body.length} >= ${plain.body.length}`);
      assert.deepEqual(zlib.gunzipSync(gz.body), plain.body, `${p}: gunzip differs from the plain body`);
      assert.ok(varies(plain, 'Accept-Encoding') && varies(gz, 'Accept-Encoding'), `${p}: Vary ${plain.headers.vary} / ${gz.headers.vary}`);
      // Deterministic: no mtime, OS byte 3, and the same bytes again (cached or not).
      assert.equal(gz.body.readUInt32LE(4), 0, `${p}: a gzip mtime`);
      assert.equal(gz.body[9], 3, p);
      assert.deepEqual((await raw(server, p, { headers: GZIP })).body, gz.body, `${p}: other gzip bytes the second time`);
    }
    const problem = await raw(server, `/v1/levels/${'x'.repeat(200)}`, { headers: GZIP });
    assert.equal(problem.headers['content-type'], 'application/problem+json');
    assertValid('problem', JSON.parse(zlib.gunzipSync(problem.body)));
  });

  test('levels combine Vary: Accept with Accept-Encoding', async () => {
    for (const headers of [{}, GZIP]) {
      const res = await raw(server, `/v1/levels/${server.levelId}`, { headers });
      assert.equal(res.headers.vary, 'Accept, Accept-Encoding');
    }
  });

  test('each coding has its own strong ETag and 304s only to it', async () => {
    const p = `/v1/levels/${server.levelId}`;
    const plain = await raw(server, p);
    const gz = await raw(server, p, { headers: GZIP });
    const etag = plain.headers.etag;
    assert.match(etag, /^"[0-9a-f]{32}"$/);
    assert.equal(gz.headers.etag, etag.replace(/"$/, '-gz"'));
    // The gzip ETag revalidates the gzip representation only.
    const gz304 = await raw(server, p, { headers: { ...GZIP, 'if-none-match': gz.headers.etag } });
    assert.equal(gz304.status, 304);
    assert.equal(gz304.headers.etag, gz.headers.etag);
    assert.equal(gz304.headers.vary, 'Accept, Accept-Encoding');
    assert.equal(gz304.body.length, 0);
    const gzStale = await raw(server, p, { headers: { ...GZIP, 'if-none-match': etag } });
    assert.equal(gzStale.status, 200);
    assert.equal(gzStale.headers['content-encoding'], 'gzip');
    // And the plain ETag the plain one.
    const plain304 = await raw(server, p, { headers: { 'if-none-match': etag } });
    assert.equal(plain304.status, 304);
    assert.equal(plain304.headers.etag, etag);
    assert.equal(plain304.headers.vary, 'Accept, Accept-Encoding');
    const plainStale = await raw(server, p, { headers: { 'if-none-match': gz.headers.etag } });
    assert.equal(plainStale.status, 200);
    assert.equal(plainStale.headers['content-encoding'], undefined);
    assert.deepEqual(plainStale.body, plain.body);
    // The picture and the dashboard the same way.
    for (const q of [`/v1/levels/${server.levelId}.svg`, '/web/app.js']) {
      const a = await raw(server, q, { headers: GZIP });
      assert.match(a.headers.etag, /-gz"$/, q);
      assert.equal((await raw(server, q, { headers: { ...GZIP, 'if-none-match': a.headers.etag } })).status, 304, q);
      assert.equal((await raw(server, q, { headers: { 'if-none-match': a.headers.etag } })).status, 200, q);
    }
  });

  test('HEAD carries the headers of GET, gzip included, without a body', async () => {
    const p = `/v1/levels/${server.levelId}`;
    for (const headers of [{}, GZIP]) {
      const get = await raw(server, p, { headers });
      const head = await raw(server, p, { method: 'HEAD', headers });
      assert.equal(head.status, 200);
      assert.equal(head.body.length, 0);
      for (const h of ['content-encoding', 'content-length', 'etag', 'vary', 'content-type'])
        assert.equal(head.headers[h], get.headers[h], `${h} with ${JSON.stringify(headers)}`);
    }
  });

  test('no gzip without Accept-Encoding, when refused or not preferred, for tiny bodies or streams', async () => {
    const p = `/v1/levels/${server.levelId}`;
    for (const ae of [undefined, 'gzip;q=0', 'gzip; q=0.0, deflate', 'identity', 'br', '*;q=0', 'gzip;q=0.5, identity', 'gzip;q=0, *']) {
      const headers = ae === undefined ? {} : { 'accept-encoding': ae };
      const res = await raw(server, p, { headers });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-encoding'], undefined, `Accept-Encoding: ${ae}`);
      assert.doesNotThrow(() => JSON.parse(res.body.toString('utf8')), `Accept-Encoding: ${ae}`);
    }
    for (const ae of ['*', 'GZIP', 'deflate, gzip;q=0.5', 'x-gzip', 'br;q=1, gzip;q=0.8, *;q=0.1']) {
      const res = await raw(server, p, { headers: { 'accept-encoding': ae } });
      assert.equal(res.headers['content-encoding'], 'gzip', `Accept-Encoding: ${ae}`);
    }
    const tiny = await raw(server, '/healthz', { headers: GZIP });
    assert.equal(tiny.headers['content-encoding'], undefined);
    assert.ok(!varies(tiny, 'Accept-Encoding'), `Vary ${tiny.headers.vary} on a tiny body`);
    const stream = await raw(server, `/v1/jobs/${server.jobId}/events`, { headers: GZIP });
    assert.equal(stream.status, 200);
    assert.match(stream.headers['content-type'], /^text\/event-stream/);
    assert.equal(stream.headers['content-encoding'], undefined);
    assert.match(stream.body.toString('utf8'), /^event: /m);
  });

  test('X-Request-Id: a sane one is echoed, any other replaced, on every kind of answer', async () => {
    for (const id of ['abc-123', 'A.b_c:d-e', 'x'.repeat(128)]) {
      const res = await raw(server, '/healthz', { headers: { 'x-request-id': id } });
      assert.equal(res.headers['x-request-id'], id);
    }
    const seen = new Set();
    for (const id of [undefined, '', 'x'.repeat(129), 'a b', 'a/b', 'caf\u00e9']) {
      const headers = id === undefined ? {} : { 'x-request-id': id };
      const res = await raw(server, '/healthz', { headers });
      assert.match(res.headers['x-request-id'], GENERATED_ID, `for ${JSON.stringify(id)}`);
      seen.add(res.headers['x-request-id']);
    }
    assert.equal(seen.size, 6, 'generated ids repeat');
    // Control bytes (node:http refuses to send them): raw bytes on a socket.
    const ctl = await rawBytes(server, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: evil\x1b[2J\r\nConnection: close\r\n\r\n');
    assert.match(ctl, /^HTTP\/1\.1 200 /);
    assert.match(ctl, /\r\nX-Request-Id: [0-9a-f]{32}\r\n/i);
    // Errors, 304s, streams.
    const id = { 'x-request-id': 'on-every-answer' };
    const level = await raw(server, `/v1/levels/${server.levelId}`);
    const answers = [
      await raw(server, '/v1/levels/lat_nope', { headers: id }),
      await raw(server, '/nowhere', { headers: id }),
      await raw(server, '/healthz', { method: 'DELETE', headers: id }),
      await raw(server, `/v1/levels/${server.levelId}`, { headers: { ...id, 'if-none-match': level.headers.etag } }),
      await raw(server, `/v1/jobs/${server.jobId}/events`, { headers: id }),
      await raw(server, '/v1/jobs/job_0123/events', { headers: id }),
    ];
    assert.deepEqual(answers.map((a) => a.status), [404, 404, 405, 304, 200, 404]);
    for (const a of answers) assert.equal(a.headers['x-request-id'], 'on-every-answer', `on a ${a.status}`);
    // The early 413: answered from the headers, before any body.
    const big = await rawBytes(
      server,
      'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nX-Request-Id: too-big-1\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n',
    );
    assert.match(big, /^HTTP\/1\.1 413 /);
    assert.match(big, /\r\nX-Request-Id: too-big-1\r\n/i);
  });

  test('the log: a UTC timestamp on every line, the request id on the request line', async () => {
    await raw(server, '/healthz', { headers: { 'x-request-id': 'log-me-1' } });
    const line = await logLine(server, /request_id=log-me-1\b/);
    assert.match(line, new RegExp(`^${TS} http GET /healthz 200 [0-9.]+ms route=healthz request_id=log-me-1$`));
    const gen = await raw(server, '/v1/levels/lat_nope');
    await logLine(server, new RegExp(`^${TS} http GET /v1/levels/lat_nope 404 [0-9.]+ms route=levels\\.get request_id=${gen.headers['x-request-id']}$`));
    await logLine(server, new RegExp(`^${TS} job ${server.jobId} succeeded kind=lattice seed=3`), 'the job line');
    const lines = server.log.split('\n').filter((l) => l);
    for (const l of lines) assert.match(l, new RegExp(`^${TS} `), `a line without a timestamp: ${JSON.stringify(l)}`);
    // The timestamp is now, in UTC.
    const ts = Date.parse(line.slice(0, 24));
    assert.ok(Math.abs(Date.now() - ts) < 60_000, `timestamp ${line.slice(0, 24)}`);
  });

  test('control bytes from the client are escaped in the log', async () => {
    const res = await rawBytes(
      server,
      'GET /v1/levels/\x1b[2Jlat_\x7fx\x01 HTTP/1.1\r\nHost: x\r\nX-Request-Id: esc-1\r\nConnection: close\r\n\r\n',
    );
    assert.match(res, /^HTTP\/1\.1 404 /);
    const line = await logLine(server, /request_id=esc-1\b/);
    assert.match(line, new RegExp(`^${TS} http GET /v1/levels/\\\\x1b\\[2Jlat_\\\\x7fx\\\\x01 404 `));
    const meth = await rawBytes(server, 'GE\x1bT /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: esc-2\r\nConnection: close\r\n\r\n');
    assert.match(meth, /^HTTP\/1\.1 /);
    assert.match(await logLine(server, /request_id=esc-2\b/), /http GE\\x1bT \/healthz /);
    assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(server.log), 'a raw control byte in the log');
  });
});

describe('--log-format json', () => {
  const server = useServer({ args: ['--log-format', 'json'] });

  test('every line is a JSON object; the request line has its fields, escaped bytes decoded', async () => {
    await raw(server, '/healthz', { headers: { 'x-request-id': 'json-1' } });
    await rawBytes(server, 'GET /v1/levels/\x1b]0;pwned\x07 HTTP/1.1\r\nHost: x\r\nX-Request-Id: json-2\r\nConnection: close\r\n\r\n');
    await logLine(server, /"request_id":"json-2"/);
    // libmicrohttpd's own message for a malformed request line comes through the same log.
    await rawBytes(server, 'GARBAGE\x1b[31m LINE\r\n\r\n');
    await logLine(server, /libmicrohttpd: Error processing request/);
    const lines = server.log.split('\n').filter((l) => l);
    const docs = lines.map((l) => {
      try {
        return JSON.parse(l);
      } catch (e) {
        assert.fail(`not JSON: ${JSON.stringify(l)} (${e.message})`);
      }
    });
    for (const d of docs) {
      assert.match(d.ts, new RegExp(`^${TS}$`));
      assert.ok(['info', 'error'].includes(d.level), d.level);
      assert.equal(typeof d.msg, 'string');
    }
    assert.ok(docs.some((d) => /^serve: listening on http:\/\/127\.0\.0\.1:\d+/.test(d.msg)));
    const h = docs.find((d) => d.request_id === 'json-1');
    assert.deepEqual(
      { event: h.event, method: h.method, path: h.path, status: h.status, route: h.route },
      { event: 'http', method: 'GET', path: '/healthz', status: 200, route: 'healthz' },
    );
    assert.equal(typeof h.ms, 'number');
    const esc = docs.find((d) => d.request_id === 'json-2');
    assert.equal(esc.path, '/v1/levels/\x1b]0;pwned\x07');
    assert.equal(esc.status, 404);
    assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(server.log), 'a raw control byte in the log');
    const mhd = docs.find((d) => /^http: libmicrohttpd: /.test(d.msg));
    assert.equal(mhd.level, 'error');
  });
});

test('STARFORGE_LOG_FORMAT=json; a bad value exits 2 naming the flag or the variable as given', async () => {
  process.env.STARFORGE_LOG_FORMAT = 'json';
  let server;
  try {
    server = await startServer();
  } finally {
    delete process.env.STARFORGE_LOG_FORMAT;
  }
  try {
    assert.doesNotThrow(() => JSON.parse(server.log.split('\n')[0]), server.log);
  } finally {
    await stopAndClean(server);
  }
  const env = { ...process.env };
  delete env.STARFORGE_LOG_FORMAT;
  const flag = spawnSync(BIN, ['serve', '--log-format', 'xml'], { env, encoding: 'utf8' });
  assert.equal(flag.status, 2);
  assert.equal(flag.stderr, "starforge serve: --log-format 'xml' is not text or json\n");
  const variable = spawnSync(BIN, ['serve'], { env: { ...env, STARFORGE_LOG_FORMAT: 'JSON' }, encoding: 'utf8' });
  assert.equal(variable.status, 2);
  assert.equal(variable.stderr, "starforge serve: STARFORGE_LOG_FORMAT='JSON' is not text or json\n");
});
