// auth.test.mjs - access control (issue 8, "Access"): bearer tokens from
// --token-file on the writing routes (and on the reading ones with
// --auth-reads), 401 problems with WWW-Authenticate, tokens never in the
// log, bad token files refused at start; CORS from --cors-origin:
// Access-Control-Allow-Origin for allowed origins, preflight OPTIONS from
// the route table. A server without these options answers as before.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import YAML from 'yaml';

import {
  BIN,
  LONG_JOB,
  QUICK_JOB,
  ROOT,
  assertProblem,
  assertValid,
  request,
  sleep,
  startServer,
  stopAndClean,
  useServer,
  waitForJob,
} from './harness.mjs';

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-auth-'));
after(() => fs.rmSync(DIR, { recursive: true, force: true }));

// Two tokens, one of them the longest allowed, with the comments, blank
// lines and stray blanks a hand-kept file has.
const TOKEN = 'sf-test-token-7b1e9c4a2d';
const LONGEST = `${'L'.repeat(200)}0123456789-._~+/=!#$%&*^\`|abcdefghijklmnopqrstuvwxyz`.padEnd(256, 'Z');
assert.equal(LONGEST.length, 256);
const TOKEN_FILE = path.join(DIR, 'tokens');
fs.writeFileSync(TOKEN_FILE, `# starforge tokens\n\n  ${TOKEN}  \r\n# CI\n${LONGEST}\n`);
// Tokens that must not pass, and must not be logged either.
const WRONG = [
  'sf-test-token-7b1e9c4a2e', // the last byte
  'sf-test-token-7b1e9c4a2', // a prefix
  'sf-test-token-7b1e9c4a2dd', // an extension
  LONGEST.slice(0, 255),
];

const bearer = (token) => ({ authorization: `Bearer ${token}` });
const CHALLENGE = 'Bearer realm="starforge"';
const CHALLENGE_INVALID = 'Bearer realm="starforge", error="invalid_token"';

const CSV =
  'speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking,intensity\n' +
  '0.588390,0.043676,0.500000,0.650748,0.000000,0.000000,0.000000,0.000000,0.349667\n' +
  '0.279787,0.144800,0.500000,0.000000,0.000000,0.000000,0.000000,0.000000,0.097450\n';

// The operations openapi.yaml says need the bearer token: exactly the
// writing ones. The route table in server/api/service.c marks the same routes
// (service_writing_routes, and every resource upload); the requests below
// show that the server enforces it on each of them.
const OPENAPI = YAML.parse(fs.readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8'));
const SECURED = Object.entries(OPENAPI.paths).flatMap(([p, ops]) =>
  Object.entries(ops)
    .filter(([, op]) => op.security?.some((s) => 'bearerAuth' in s))
    .map(([method]) => `${method.toUpperCase()} ${p}`),
);

test('openapi.yaml: the writing operations, and only they, name the optional bearer token', () => {
  assert.deepEqual(SECURED.sort(), ['DELETE /v1/jobs/{id}', 'POST /v1/jobs', 'POST /v1/px-models']);
  assert.deepEqual(OPENAPI.components.securitySchemes.bearerAuth, {
    ...OPENAPI.components.securitySchemes.bearerAuth,
    type: 'http',
    scheme: 'bearer',
  });
  for (const [p, ops] of Object.entries(OPENAPI.paths))
    for (const [method, op] of Object.entries(ops)) {
      if (typeof op !== 'object' || !op.responses) continue;
      const secured = SECURED.includes(`${method.toUpperCase()} ${p}`);
      assert.equal('401' in op.responses, secured, `${method} ${p}: a 401 response iff secured`);
      // Optional: anonymous access ({}) is listed beside the token.
      if (secured) assert.ok(op.security.some((s) => Object.keys(s).length === 0));
    }
});

/** Asserts a 401 problem with the challenge, and that nothing in it echoes a token. */
function assertUnauthorized(res, challenge, what) {
  const problem = assertProblem(res, 401, 'unauthorized');
  assert.equal(res.headers.get('www-authenticate'), challenge, what);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  for (const t of [TOKEN, LONGEST, ...WRONG]) assert.ok(!res.text.includes(t), `${what}: the answer quotes a token`);
  return problem;
}

describe('with --token-file', () => {
  const server = useServer({ args: ['--workers', '1', '--token-file', TOKEN_FILE] });

  /** The three writing routes, each refused without a right token and then done with one. */
  test('every writing route answers 401 without a token or with a wrong one, and works with a right one', async () => {
    // POST /v1/jobs
    const before = (await request(server, '/v1/jobs')).body.jobs.length;
    const job = { json: QUICK_JOB(5), method: 'POST' };
    assertUnauthorized(await request(server, '/v1/jobs', job), CHALLENGE, 'POST /v1/jobs, no token');
    for (const w of WRONG)
      assertUnauthorized(
        await request(server, '/v1/jobs', { ...job, headers: bearer(w) }),
        CHALLENGE_INVALID,
        `POST /v1/jobs, wrong token ${w.length}`,
      );
    for (const header of ['Basic c2Y6c2Y=', TOKEN, `Bearer${TOKEN}`])
      assertUnauthorized(
        await request(server, '/v1/jobs', { ...job, headers: { authorization: header } }),
        CHALLENGE,
        `POST /v1/jobs, Authorization: ${header.slice(0, 6)}...`,
      );
    assert.equal((await request(server, '/v1/jobs')).body.jobs.length, before, 'a refused job was stored');
    const long = await request(server, '/v1/jobs', { method: 'POST', json: LONG_JOB(7), headers: bearer(TOKEN) });
    assert.equal(long.status, 202, long.text);
    assertValid('job', long.body);
    const queued = await request(server, '/v1/jobs', {
      method: 'POST',
      json: QUICK_JOB(8),
      headers: { authorization: `bearer   ${LONGEST}` }, // the scheme in any case
    });
    assert.equal(queued.status, 202, queued.text);

    // DELETE /v1/jobs/{id}: the queued job stays queued until a right token comes.
    const target = `/v1/jobs/${queued.body.id}`;
    assertUnauthorized(await request(server, target, { method: 'DELETE' }), CHALLENGE, 'DELETE, no token');
    for (const w of WRONG)
      assertUnauthorized(
        await request(server, target, { method: 'DELETE', headers: bearer(w) }),
        CHALLENGE_INVALID,
        'DELETE, wrong token',
      );
    assert.equal((await request(server, target)).body.state, 'queued');
    const cancelled = await request(server, target, { method: 'DELETE', headers: bearer(TOKEN) });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.state, 'cancelled');
    const stop = await request(server, `/v1/jobs/${long.body.id}`, { method: 'DELETE', headers: bearer(LONGEST) });
    assert.equal(stop.status, 202, stop.text);
    await waitForJob(server, long.body.id);

    // POST /v1/px-models (a resource upload route, added from the kind's resource type)
    const upload = { method: 'POST', body: CSV, headers: { 'content-type': 'text/csv' } };
    assertUnauthorized(await request(server, '/v1/px-models?name=auth', upload), CHALLENGE, 'upload, no token');
    for (const w of WRONG)
      assertUnauthorized(
        await request(server, '/v1/px-models?name=auth', { ...upload, headers: { ...upload.headers, ...bearer(w) } }),
        CHALLENGE_INVALID,
        'upload, wrong token',
      );
    assertProblem(await request(server, '/v1/px-models/auth'), 404, 'not-found');
    const stored = await request(server, '/v1/px-models?name=auth', {
      ...upload,
      headers: { ...upload.headers, ...bearer(TOKEN) },
    });
    assert.equal(stored.status, 201, stored.text);
    assertValid('px-model', stored.body);
  });

  test('the token is checked before the request: a bad body still gets 401 first', async () => {
    assertUnauthorized(await request(server, '/v1/jobs', { method: 'POST', body: '{"kind":' }), CHALLENGE, 'bad JSON');
    assertProblem(await request(server, '/v1/jobs', { method: 'POST', body: '{"kind":', headers: bearer(TOKEN) }), 400);
    // Routing comes first: 404 and 405 are the same with or without a token.
    assertProblem(await request(server, '/v1/nothing', { method: 'POST' }), 404, 'not-found');
    assertProblem(await request(server, '/v1/levels', { method: 'DELETE' }), 405, 'method-not-allowed');
  });

  test('reading routes, and the check (which writes nothing), stay open', async () => {
    const job = await request(server, '/v1/jobs', { method: 'POST', json: QUICK_JOB(9), headers: bearer(TOKEN) });
    for (const p of [
      '/v1/jobs',
      `/v1/jobs/${job.body.id}`,
      '/v1/levels',
      '/v1/evaluations/square/HPHPPHHPHP',
      '/v1/px-models/auth',
      '/v1/px-models',
      '/healthz',
      '/metrics',
      '/openapi.yaml',
      '/',
    ]) {
      const res = await request(server, p);
      assert.equal(res.status, 200, `GET ${p}: ${res.text.slice(0, 200)}`);
      assert.equal(res.headers.get('www-authenticate'), null);
    }
    const check = await request(server, '/v1/digger/check', { method: 'POST', json: {} });
    assert.notEqual(check.status, 401, check.text);
    assertProblem(check, 422, 'invalid-check');
    await waitForJob(server, job.body.id);
  });

  test('no token, right or wrong, appears in the log; the 401s do', async () => {
    await sleep(600); // stderr is flushed four times a second
    assert.match(server.log, /serve: access: 2 bearer tokens; writes need one, reads are open/);
    assert.match(server.log, /http POST \/v1\/jobs 401 [0-9.]+ms route=jobs\.submit/);
    assert.match(server.log, /http DELETE \/v1\/jobs\/job_[0-9a-f]+ 401 /);
    assert.match(server.log, /http POST \/v1\/px-models 401 [0-9.]+ms route=px_model\.upload/);
    for (const t of [TOKEN, LONGEST, ...WRONG]) assert.ok(!server.log.includes(t), `a token in the log:\n${server.log}`);
    assert.ok(!/bearer/i.test(server.log.replace('bearer tokens', '')), `"Bearer" in the log:\n${server.log}`);
  });
});

describe('without --token-file', () => {
  const server = useServer({ args: ['--workers', '1'] });

  test('writing routes need no token, and an Authorization header is ignored', async () => {
    const res = await request(server, '/v1/jobs', { method: 'POST', json: QUICK_JOB(11) });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.headers.get('www-authenticate'), null);
    const withAny = await request(server, '/v1/jobs', { method: 'POST', json: QUICK_JOB(12), headers: bearer('whatever') });
    assert.equal(withAny.status, 202, withAny.text);
    const upload = await request(server, '/v1/px-models?name=open', {
      method: 'POST',
      body: CSV,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(upload.status, 201, upload.text);
    await waitForJob(server, res.body.id);
    const cancel = await request(server, `/v1/jobs/${res.body.id}`, { method: 'DELETE' });
    assertProblem(cancel, 409, 'job-finished');
  });

  test('no CORS headers, and OPTIONS is a 405 as before', async () => {
    const origin = { origin: 'https://play.example' };
    const res = await request(server, '/v1/levels', { headers: origin });
    assert.equal(res.status, 200);
    for (const [name] of res.headers) assert.ok(!name.startsWith('access-control-'), name);
    assert.doesNotMatch(res.headers.get('vary') || '', /origin/i); // Accept-Encoding: a big enough list may vary on it
    const pre = await request(server, '/v1/jobs', {
      method: 'OPTIONS',
      headers: { ...origin, 'access-control-request-method': 'POST' },
    });
    assertProblem(pre, 405, 'method-not-allowed');
    assert.equal(pre.headers.get('allow'), 'POST, GET, HEAD');
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    await sleep(600);
    assert.ok(!/serve: access:|serve: CORS:/.test(server.log), server.log);
  });
});

const PLAY = 'https://play.example';
const LOCAL = 'http://localhost:5173';

describe('with --token-file, --auth-reads and --cors-origin', () => {
  const server = useServer({
    args: ['--token-file', TOKEN_FILE, '--auth-reads', '--cors-origin', `${PLAY}, ${LOCAL}`, '--cors-origin', 'https://b.example'],
  });

  test('reads need a token too, but for the probes, the API document and the dashboard', async () => {
    const reads = [
      ['/v1/jobs', 200],
      ['/v1/levels', 200],
      ['/v1/px-models/none', 404],
      ['/metrics', 200],
      ['/v1/evaluations/square/HPHP', 200],
      ['/v1/jobs/job_0123/events', 404],
    ];
    for (const [p, status] of reads) {
      assertUnauthorized(await request(server, p), CHALLENGE, `GET ${p}`);
      assertUnauthorized(await request(server, p, { headers: bearer(WRONG[0]) }), CHALLENGE_INVALID, `GET ${p}`);
      const ok = await request(server, p, { headers: bearer(TOKEN) });
      assert.equal(ok.status, status, `GET ${p} with the token: ${ok.text.slice(0, 200)}`);
    }
    assertUnauthorized(await request(server, '/v1/digger/check', { method: 'POST', json: {} }), CHALLENGE, 'check');
    for (const p of ['/healthz', '/readyz', '/openapi.yaml', '/', '/web/app.js']) {
      const res = await request(server, p);
      assert.notEqual(res.status, 401, `GET ${p}: ${res.text.slice(0, 200)}`);
    }
    assert.equal((await request(server, '/healthz')).status, 200);
    await sleep(600);
    assert.match(server.log, /serve: access: 2 bearer tokens; writes need one, reads too/);
    assert.match(server.log, /serve: CORS: origins https:\/\/play\.example,http:\/\/localhost:5173,https:\/\/b\.example/);
  });

  test('an allowed Origin gets Access-Control-Allow-Origin on every answer, 401 included', async () => {
    for (const origin of [PLAY, LOCAL, 'https://b.example']) {
      const res = await request(server, '/v1/levels', { headers: { origin, ...bearer(TOKEN) } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), origin);
      assert.match(res.headers.get('vary'), /\bOrigin\b/);
      assert.equal(res.headers.get('access-control-expose-headers'), 'ETag, Location, Retry-After, WWW-Authenticate, X-Request-Id');
    }
    const denied = await request(server, '/v1/jobs', { method: 'POST', json: QUICK_JOB(1), headers: { origin: PLAY } });
    assertUnauthorized(denied, CHALLENGE, 'POST from a page');
    assert.equal(denied.headers.get('access-control-allow-origin'), PLAY);
    assert.match(denied.headers.get('access-control-expose-headers'), /WWW-Authenticate/);
    const missing = await request(server, '/nowhere', { headers: { origin: PLAY } });
    assertProblem(missing, 404, 'not-found');
    assert.equal(missing.headers.get('access-control-allow-origin'), PLAY);
  });

  test('another Origin, or none, gets no Access-Control headers but still Vary: Origin', async () => {
    for (const headers of [{ origin: 'https://evil.example' }, { origin: 'http://play.example' }, { origin: 'null' }, {}]) {
      const res = await request(server, '/healthz', { headers });
      assert.equal(res.status, 200);
      for (const [name] of res.headers) assert.ok(!name.startsWith('access-control-'), `${name} for ${JSON.stringify(headers)}`);
      assert.equal(res.headers.get('vary'), 'Origin');
    }
  });

  test('a preflight to any route answers 204 with its methods, without a token', async () => {
    const cases = [
      ['/v1/jobs', 'POST, GET, HEAD'],
      ['/v1/jobs/job_0123', 'GET, HEAD, DELETE'],
      ['/v1/px-models', 'POST, GET, HEAD'],
      ['/v1/levels/lat_1.svg', 'GET, HEAD'],
      ['/v1/digger/check', 'POST'],
      ['/healthz', 'GET, HEAD'],
    ];
    for (const [p, methods] of cases) {
      const res = await request(server, p, {
        method: 'OPTIONS',
        headers: { origin: LOCAL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
      assert.equal(res.status, 204, `OPTIONS ${p}: ${res.text}`);
      assert.equal(res.text, '');
      assert.equal(res.headers.get('access-control-allow-origin'), LOCAL);
      assert.equal(res.headers.get('access-control-allow-methods'), methods, p);
      assert.equal(res.headers.get('allow'), methods, p);
      assert.equal(
        res.headers.get('access-control-allow-headers'),
        'Authorization, Content-Type, Idempotency-Key, If-None-Match, Last-Event-ID, X-Request-Id',
      );
      assert.equal(res.headers.get('access-control-max-age'), '600');
      assert.match(res.headers.get('vary'), /\bOrigin\b/);
      assert.match(res.headers.get('x-request-id') || '', /^[0-9a-f]{32}$/, 'a preflight carries a request id');
    }
    // From an origin that is not allowed: the methods, but nothing a browser would accept.
    const other = await request(server, '/v1/jobs', { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    assert.equal(other.status, 204);
    assert.equal(other.headers.get('allow'), 'POST, GET, HEAD');
    for (const [name] of other.headers) assert.ok(!name.startsWith('access-control-'), name);
    // A path no route has is a 404, preflight or not.
    const none = await request(server, '/v1/nothing', { method: 'OPTIONS', headers: { origin: PLAY } });
    assertProblem(none, 404, 'not-found');
    await sleep(600);
    assert.match(server.log, /http OPTIONS \/v1\/jobs 204 [0-9.]+ms route=preflight/);
  });
});

describe('from the environment: STARFORGE_TOKEN_FILE and STARFORGE_CORS_ORIGIN=*', () => {
  test('any origin gets *, without Vary; the token file is read', async () => {
    // startServer's child inherits this process's environment.
    process.env.STARFORGE_TOKEN_FILE = TOKEN_FILE;
    process.env.STARFORGE_CORS_ORIGIN = '*';
    let server;
    try {
      server = await startServer();
    } finally {
      delete process.env.STARFORGE_TOKEN_FILE;
      delete process.env.STARFORGE_CORS_ORIGIN;
    }
    try {
      const res = await request(server, '/v1/levels', { headers: { origin: 'https://anyone.example' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.doesNotMatch(res.headers.get('vary') || '', /origin/i);
      const denied = await request(server, '/v1/jobs', { method: 'POST', json: QUICK_JOB(3), headers: { origin: 'https://x.example' } });
      assertUnauthorized(denied, CHALLENGE, 'env token file');
      assert.equal(denied.headers.get('access-control-allow-origin'), '*');
      const pre = await request(server, '/v1/jobs/abc', { method: 'OPTIONS', headers: { origin: 'https://x.example' } });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), '*');
      assert.equal(pre.headers.get('access-control-allow-methods'), 'GET, HEAD, DELETE');
    } finally {
      await stopAndClean(server);
    }
  });
});

describe('bad access options stop the server at start with one line and exit status 2', () => {
  const write = (name, text) => {
    const file = path.join(DIR, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const cases = [
    [['--token-file', path.join(DIR, 'missing')], /--token-file .*missing: cannot be read/],
    [['--token-file', write('short', '# x\nshort-secret\n')], /--token-file .*short: line 2: a token is 12 characters \(allowed: 16\.\.256\)/],
    [['--token-file', write('spaced', 'a-secret with-a-space\n')], /line 1, column 9: a token holds a space/],
    [['--token-file', write('empty', '# nothing yet\n\n')], /holds no token/],
    [['--token-file', write('long', `${'x'.repeat(257)}\n`)], /line 1: a token is 257 characters/],
    [['--token-file', ''], /--token-file is empty/],
    [['--auth-reads'], /--auth-reads needs --token-file/],
    [['--cors-origin', 'https://play.example/'], /--cors-origin: 'https:\/\/play\.example\/' is not an origin/],
    [['--cors-origin', 'null'], /origin 'null' is refused/],
    [['--cors-origin', ' , '], /the list of origins is empty/],
  ];
  for (const [args, message] of cases) {
    test(args.join(' ').replace(DIR, '$DIR') || '(empty)', () => {
      const r = spawnSync(BIN, ['serve', '--listen', '127.0.0.1:0', '--db', path.join(DIR, 'never.db'), ...args], {
        encoding: 'utf8',
        timeout: 10_000,
      });
      assert.equal(r.status, 2, r.stderr);
      const lines = r.stderr.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], /^starforge serve: /);
      assert.match(lines[0], message);
      assert.ok(!/short-secret|a-secret|xxxxxxxxxxxxxxxx/.test(lines[0]), `a token in: ${lines[0]}`);
      assert.ok(!fs.existsSync(path.join(DIR, 'never.db')), 'the database was created');
    });
  }
  test('STARFORGE_AUTH_READS takes 0 or 1', () => {
    const r = spawnSync(BIN, ['serve', '--listen', '127.0.0.1:0', '--db', path.join(DIR, 'never.db')], {
      encoding: 'utf8',
      env: { ...process.env, STARFORGE_AUTH_READS: 'yes' },
      timeout: 10_000,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /STARFORGE_AUTH_READS='yes' is not 0 or 1/);
  });
});
