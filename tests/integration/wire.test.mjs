// wire.test.mjs - what the service writes on the wire, byte for byte where it
// matters, for the cases an adversarial probe found (issue 18; the cases and
// their tests are listed in docs/RELIABILITY.md): one response per request,
// nothing after it, and the connection closed exactly where the response
// promises it (Connection: close), kept open everywhere else.
//
// Every exchange is raw bytes on a fresh loopback connection (node:net),
// read until the server closes it or a deadline passes: a hang shows as
// `closed: false`, never as a test that waits forever.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';

import { LONG_JOB, SCALE, request, submit, useServer, waitFor, waitForJob } from './harness.mjs';

const server = useServer({ args: ['--workers', '1'] });

/**
 * Writes `bytes` (latin1) on a new connection and reads until the server
 * closes it or `ms` pass. Resolves with { text (latin1), closed, elapsed }.
 */
function exchange(bytes, { ms = 1_500 * SCALE } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const sock = net.connect(server.port, '127.0.0.1');
    const chunks = [];
    let done = false;
    const finish = (closed) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, elapsed: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), ms);
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', () => finish(true));
    sock.on('close', () => finish(true));
    sock.on('error', (err) => (done ? null : reject(err)));
    sock.write(Buffer.from(bytes, 'latin1'));
  });
}

/**
 * Splits a run of HTTP/1.1 responses into [{ status, headers (lower-case
 * names), body }], each body delimited as its headers say (Content-Length,
 * or chunked); `head` lists which responses answer HEAD (no body, whatever
 * the headers say). Throws on anything that is not a well-formed response,
 * so stray bytes after a response fail the test that reads them.
 */
function parseResponses(text, head = []) {
  const out = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    assert.ok(end >= 0, `bytes that are not a response at ${at}: ${JSON.stringify(text.slice(at, at + 80))}`);
    const lines = text.slice(at, end).split('\r\n');
    const m = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]);
    assert.ok(m, `not a status line at ${at}: ${JSON.stringify(lines[0])}`);
    const headers = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    at = end + 4;
    let body = '';
    if (!head.includes(out.length)) {
      if (headers['transfer-encoding'] === 'chunked') {
        for (;;) {
          const eol = text.indexOf('\r\n', at);
          assert.ok(eol >= 0, 'a chunk size line is cut off');
          const size = parseInt(text.slice(at, eol), 16);
          assert.ok(Number.isInteger(size), `a bad chunk size: ${JSON.stringify(text.slice(at, eol))}`);
          at = eol + 2;
          if (size === 0) {
            assert.equal(text.slice(at, at + 2), '\r\n', 'the last chunk is not followed by CRLF');
            at += 2;
            break;
          }
          body += text.slice(at, at + size);
          at += size + 2;
        }
      } else {
        const len = Number(headers['content-length'] || 0);
        body = text.slice(at, at + len);
        assert.equal(body.length, len, 'a body shorter than its Content-Length');
        at += len;
      }
    }
    out.push({ status: Number(m[1]), headers, body });
  }
  return out;
}

const get = (path, extra = '') => `GET ${path} HTTP/1.1\r\nHost: t\r\n${extra}\r\n`;
const head = (path) => `HEAD ${path} HTTP/1.1\r\nHost: t\r\n\r\n`;

test('HEAD on the event stream of a running job: the headers, nothing after them, the connection closed', async () => {
  const job = await submit(server, LONG_JOB(11));
  await waitForJob(server, job.id, { states: ['running'] });
  const res = await exchange(head(`/v1/jobs/${job.id}/events`) + get('/healthz'));
  try {
    assert.ok(res.closed, `the connection stayed open after a HEAD that promised to close it (${res.elapsed} ms)`);
    const all = parseResponses(res.text, [0]);
    assert.equal(all.length, 1, `one response, got ${all.length}: ${JSON.stringify(res.text)}`);
    assert.equal(all[0].status, 200);
    assert.equal(all[0].headers['content-type'], 'text/event-stream');
    assert.equal(all[0].headers.connection, 'close');
    assert.equal(all[0].headers['transfer-encoding'], undefined, 'a HEAD answer with a chunked body');
    assert.ok(res.text.endsWith('\r\n\r\n'), `bytes after the headers: ${JSON.stringify(res.text.slice(-20))}`);
  } finally {
    await request(server, `/v1/jobs/${job.id}`, { method: 'DELETE' });
    await waitForJob(server, job.id);
  }
});

test('HEAD on an ordinary resource keeps the connection: the next request is answered', async () => {
  const res = await exchange(head('/healthz') + get('/healthz', 'Connection: close\r\n'));
  assert.ok(res.closed);
  const [first, second, ...rest] = parseResponses(res.text, [0]);
  assert.deepEqual(rest, []);
  assert.equal(first.status, 200);
  assert.equal(first.body, '');
  assert.equal(second.status, 200);
  assert.deepEqual(JSON.parse(second.body), { status: 'ok' });
  // A finished job's event stream is a plain answer: HEAD gets its headers alone.
  const job = await submit(server, { kind: 'lattice', params: { length: 8, generations: 2 }, seed: 2 });
  await waitForJob(server, job.id);
  const done = await exchange(head(`/v1/jobs/${job.id}/events`) + get('/healthz', 'Connection: close\r\n'));
  const answers = parseResponses(done.text, [0]);
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200],
  );
  assert.equal(answers[0].headers['content-type'], 'text/event-stream');
});

test('a non-finite number in a level filter is a 400 naming the parameter, and the connection goes on', async () => {
  for (const value of ['NaN', 'nan', '-nan', 'NAN(123)', '%20nan', 'inf', '-Infinity', '1e999']) {
    for (const name of ['min_width', 'width', 'min_length']) {
      const path = `/v1/levels?${name}=${value}`;
      const res = await exchange(get(path) + get('/healthz', 'Connection: close\r\n'));
      const [answer, next, ...rest] = parseResponses(res.text);
      assert.deepEqual(rest, [], path);
      assert.equal(answer.status, 400, `${path}: ${answer.body}`);
      assert.equal(answer.headers['content-type'], 'application/problem+json', path);
      const problem = JSON.parse(answer.body);
      assert.equal(problem.type, 'https://starforge.dev/problems/invalid-query', path);
      assert.match(problem.detail, new RegExp(`^filter ${name} '.*' is not a number`), path);
      assert.doesNotMatch(problem.detail, /store|NaN is|internal/i, path);
      assert.equal(next.status, 200, path);
    }
  }
});

test('the JSON depth limit holds whatever the body claims to be; a CSV upload is read as CSV', async () => {
  const deep = '['.repeat(2000) + ']'.repeat(2000);
  for (const [path, type] of [
    ['/v1/jobs', 'text/csv'],
    ['/v1/digger/check', 'text/csv'],
    ['/v1/lattice/check', 'text/csv; charset=utf-8'],
    ['/v1/jobs', 'application/x-www-form-urlencoded'],
    ['/v1/jobs', 'TEXT/CSV'],
  ]) {
    const res = await request(server, path, { method: 'POST', body: deep, headers: { 'content-type': type } });
    assert.equal(res.status, 400, `${path} as ${type}: ${res.text}`);
    assert.equal(res.body.type, 'https://starforge.dev/problems/invalid-json', `${path} as ${type}`);
    assert.match(res.body.detail, /more than 32 deep/, `${path} as ${type}`);
  }
  // The px-model upload takes CSV: the same bytes are a bad CSV there, not deep JSON.
  const csv = await request(server, '/v1/px-models?name=deep', { method: 'POST', body: deep, headers: { 'content-type': 'text/csv' } });
  assert.equal(csv.status, 422, csv.text);
  assert.doesNotMatch(csv.body.detail, /deep/);
  // ...and as JSON, it is deep JSON.
  const json = await request(server, '/v1/px-models?name=deep', { method: 'POST', body: deep, headers: { 'content-type': 'application/json' } });
  assert.equal(json.status, 400, json.text);
  assert.match(json.body.detail, /more than 32 deep/);
});

test('control bytes from the request target reach the log escaped, never raw', async () => {
  const marker = `m${Date.now().toString(36)}`;
  const targets = [
    `/v1/levels/${marker}-a\x1b[31mred\x1b[0m`,
    `/v1/levels/${marker}-b\rFORGED 2026-01-01T00:00:00.000Z http GET / 200`,
    `/v1/levels/${marker}-c\x07\x7f\x01`,
    `/${marker}-d\x1b]0;title\x07`,
  ];
  for (const target of targets) {
    const res = await exchange(get(target, 'Connection: close\r\n'));
    const [answer] = parseResponses(res.text);
    assert.ok([400, 404].includes(answer.status), `${JSON.stringify(target)}: ${answer.status}`);
  }
  // The log is flushed four times a second.
  const lines = await waitFor(
    () => {
      const found = server.log.split('\n').filter((l) => l.includes(marker));
      return found.length >= targets.length ? found : null;
    },
    { what: 'the requests in the log', timeoutMs: 5_000 * SCALE },
  );
  for (const line of lines) {
    assert.doesNotMatch(line, /[\x00-\x08\x0b-\x1f\x7f]/, `a raw control byte in the log: ${JSON.stringify(line)}`);
  }
  assert.ok(lines.some((l) => l.includes('\\x1b[31mred')), lines.join('\n'));
  assert.ok(lines.some((l) => l.includes('\\x0dFORGED')), lines.join('\n'));
  // No line of the log starts with the forged text.
  assert.ok(!server.log.split('\n').some((l) => l.startsWith('FORGED')));
});

test('a request libmicrohttpd gives up on (hundreds of query arguments) is closed within a second', async () => {
  for (const n of [600, 700, 1_000, 2_000, 5_000]) {
    const query = Array.from({ length: n }, (_, i) => `a${i}=1`).join('&');
    const res = await exchange(get(`/v1/levels?${query}`), { ms: 5_000 * SCALE });
    assert.ok(res.closed, `${n} arguments: the connection was still open after ${res.elapsed} ms`);
    assert.ok(res.elapsed < 1_000 * SCALE, `${n} arguments: closed only after ${res.elapsed} ms: ${JSON.stringify(res.text.slice(0, 300))}\n${server.log.slice(-1500)}`);
    // Nothing, or exactly one well-formed refusal (libmicrohttpd's own 414 or 431).
    const answers = parseResponses(res.text);
    assert.ok(answers.length <= 1, `${n} arguments: ${answers.length} responses`);
    if (answers.length) assert.ok([400, 414, 431].includes(answers[0].status), `${n} arguments: ${answers[0].status}`);
  }
  // The server goes on serving.
  const ok = await exchange(get('/healthz', 'Connection: close\r\n'));
  assert.equal(parseResponses(ok.text)[0].status, 200);
});

test('a body that cannot be delimited for certain is one 400 before it is read, and the connection closes', async () => {
  const post = (headers, body = '{}') =>
    `POST /v1/jobs HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n${headers}\r\n\r\n${body}` + get('/healthz');
  for (const [headers, problem] of [
    ['Content-Length: 2\r\nContent-Length: 5', /more than one Content-Length/],
    ['Content-Length: 2\r\nContent-Length: 2', /more than one Content-Length/],
    ['Transfer-Encoding: gzip', /Transfer-Encoding other than chunked/],
    ['Transfer-Encoding: xchunked', /Transfer-Encoding other than chunked/],
    ['Transfer-Encoding: chunked, identity', /Transfer-Encoding other than chunked/],
    ['Transfer-Encoding: chunked\r\nContent-Length: 2', /both Content-Length and Transfer-Encoding/],
  ]) {
    const res = await exchange(post(headers));
    assert.ok(res.closed, `${JSON.stringify(headers)}: the connection stayed open (${res.elapsed} ms)`);
    const answers = parseResponses(res.text);
    assert.equal(answers.length, 1, `${JSON.stringify(headers)}: ${answers.length} responses: ${JSON.stringify(res.text)}`);
    assert.equal(answers[0].status, 400, JSON.stringify(headers));
    assert.equal(answers[0].headers.connection, 'close', JSON.stringify(headers));
    const body = JSON.parse(answers[0].body);
    assert.equal(body.type, 'https://starforge.dev/problems/invalid-framing', JSON.stringify(headers));
    assert.match(body.detail, problem, JSON.stringify(headers));
  }
  // Well framed, the same request is answered and the connection goes on.
  const ok = await exchange(post('Content-Length: 2'));
  const [first, second] = parseResponses(ok.text);
  assert.equal(first.status, 400); // "{}" is not a job, but it was read
  assert.equal(JSON.parse(first.body).type, 'https://starforge.dev/problems/invalid-request');
  assert.equal(second.status, 200);
  // A chunked body is read as before.
  const body = JSON.stringify({ kind: 'chess' });
  const chunked = await exchange(
    `POST /v1/jobs HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
  );
  const [unknown] = parseResponses(chunked.text);
  assert.equal(unknown.status, 422, chunked.text);
  assert.equal(JSON.parse(unknown.body).type, 'https://starforge.dev/problems/unknown-kind');
});
