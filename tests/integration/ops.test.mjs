// ops.test.mjs - the operational endpoints: /healthz, /readyz, /metrics
// (Prometheus text with every family), GET /openapi.yaml and /openapi.json
// (the bundle the build made of openapi.yaml and schema/), HEAD, and that
// openapi.yaml describes every route of the server's route table.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import YAML from 'yaml';

import {
  BIN,
  PROCESS_FAMILIES,
  QUICK_JOB,
  ROOT,
  assertValid,
  metrics,
  parseMetrics,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

const server = useServer({ args: ['--workers', '1', '--max-queue', '7'] });

test('/healthz answers 200 {"status":"ok"}, uncached; HEAD the same without a body', async () => {
  const res = await request(server, '/healthz');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assertValid('health', res.body);
  assert.deepEqual(res.body, { status: 'ok' });

  const head = await request(server, '/healthz', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
  assert.equal(head.headers.get('cache-control'), 'no-store');
});

test('/readyz answers 200 with its checks', async () => {
  const res = await request(server, '/readyz');
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assertValid('readiness', res.body);
  assert.equal(res.body.status, 'ready');
  assert.equal(res.body.checks.database, true);
  assert.equal(res.body.checks.migrations_applied, true);
  assert.ok(res.body.checks.schema_version >= 1);
  assert.equal(res.body.checks.queued, 0);
  assert.equal(res.body.checks.max_queue, 7);
  assert.equal(res.body.checks.stopping, false);
});

const FAMILIES = {
  starforge_http_requests_total: 'counter',
  starforge_http_request_duration_seconds: 'histogram',
  starforge_jobs: 'gauge',
  starforge_job_queue_wait_seconds: 'histogram',
  starforge_job_run_seconds: 'histogram',
  starforge_evaluation_cache_hits_total: 'counter',
  starforge_evaluation_cache_misses_total: 'counter',
  starforge_enumerations_total: 'counter',
  starforge_store_commits_total: 'counter',
  starforge_store_operations_total: 'counter',
  starforge_store_pending: 'gauge',
  starforge_store_fault: 'gauge',
  starforge_evaluation_cache_entries: 'gauge',
  starforge_evaluation_cache_max_entries: 'gauge',
  starforge_evaluation_cache_evictions_total: 'counter',
  ...PROCESS_FAMILIES,
};

test('/metrics is Prometheus text with every family', async () => {
  await request(server, '/healthz');
  const res = await request(server, '/metrics');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.ok(res.text.endsWith('\n'));
  for (const [name, type] of Object.entries(FAMILIES)) {
    assert.match(res.text, new RegExp(`^# HELP ${name} \\S.*$`, 'm'), name);
    assert.match(res.text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), name);
  }
  const samples = parseMetrics(res.text); // every other line is a sample
  assert.ok(samples.get('starforge_http_requests_total{route="healthz",status="200"}') >= 1);
  for (const state of ['queued', 'running', 'succeeded', 'failed', 'cancelled'])
    assert.equal(samples.get(`starforge_jobs{state="${state}"}`), 0, state);
  for (const h of ['starforge_http_request_duration_seconds', 'starforge_job_queue_wait_seconds', 'starforge_job_run_seconds']) {
    assert.ok(samples.has(`${h}_bucket{le="+Inf"}`), h);
    assert.equal(samples.get(`${h}_bucket{le="+Inf"}`), samples.get(`${h}_count`), h);
    assert.ok(samples.has(`${h}_sum`), h);
  }
  for (const c of ['starforge_evaluation_cache_hits_total', 'starforge_evaluation_cache_misses_total', 'starforge_enumerations_total'])
    assert.equal(samples.get(c), 0, c);
  assert.equal(samples.get('starforge_evaluation_cache_entries'), 0);
  assert.equal(samples.get('starforge_evaluation_cache_evictions_total'), 0);
  assert.equal(samples.get('starforge_evaluation_cache_max_entries'), 100000); // the default
});

test('GET /openapi.yaml and /openapi.json return the bundle built from openapi.yaml and schema/', async () => {
  const res = await fetch(`${server.base}/openapi.yaml`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/yaml');
  assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
  const served = Buffer.from(await res.arrayBuffer());
  // The build's bundle (tools/openapi_bundle.c), beside the binary.
  const built = fs.readFileSync(path.join(path.dirname(BIN), 'gen', 'openapi.json'));
  assert.ok(served.equals(built), 'the served document differs from the build\'s gen/openapi.json (rebuild?)');
  const asJson = await fetch(`${server.base}/openapi.json`);
  assert.equal(asJson.headers.get('content-type'), 'application/json');
  assert.ok(Buffer.from(await asJson.arrayBuffer()).equals(served), '/openapi.json serves other bytes');

  // Everything but the schemas is openapi.yaml as written; every schema
  // openapi.yaml names by file is that file (less $schema and $defs, which
  // become components of their own, with its refs made local, and with each
  // "default" moved to "x-default" and a "Default: `JSON`." sentence at the
  // end of the description, which `restore` undoes).
  const doc = JSON.parse(served.toString('utf8'));
  let moved = 0;
  const restore = (node) => {
    if (Array.isArray(node)) return node.map(restore);
    if (!node || typeof node !== 'object') return node;
    const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, restore(v)]));
    if (!('x-default' in out)) return out;
    assert.ok(!('default' in out), 'a schema with both default and x-default');
    const m = /^(.*?) ?Default: `(.*)`\.$/s.exec(out.description || '');
    assert.ok(m, `no "Default: \`...\`." at the end of ${JSON.stringify(out.description)}`);
    assert.deepEqual(JSON.parse(m[2]), out['x-default'], `the description's default: ${out.description}`);
    const { 'x-default': value, description: _, ...rest } = out;
    moved++;
    return { ...(m[1] ? { description: m[1] } : {}), ...rest, default: value };
  };
  const source = YAML.parse(fs.readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8'));
  for (const key of Object.keys(source)) if (key !== 'components') assert.deepEqual(doc[key], source[key], key);
  for (const key of Object.keys(source.components))
    if (key !== 'schemas') assert.deepEqual(doc.components[key], source.components[key], `components.${key}`);
  for (const [name, schema] of Object.entries(source.components.schemas)) {
    const file = /^\.\/(schema\/.*\.json)$/.exec(schema.$ref || '')?.[1];
    if (!file) {
      assert.deepEqual(doc.components.schemas[name], schema, name);
      continue;
    }
    const { $schema, $defs, ...rest } = JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
    const local = (node) =>
      Array.isArray(node)
        ? node.map(local)
        : node && typeof node === 'object'
          ? Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' ? '(ref)' : local(v)]))
          : node;
    assert.deepEqual(local(restore(doc.components.schemas[name])), local(rest), `${name} is not ${file}`);
    for (const def of Object.keys($defs || {}))
      assert.ok(Object.keys(doc.components.schemas).some((n) => n.toLowerCase() === (name + def.replace(/[^A-Za-z0-9]/g, '')).toLowerCase()),
        `${file}#/$defs/${def} is not hoisted`);
  }
  // No "default" is left for a type generator to make a key required by.
  assert.ok(moved >= 3, `only ${moved} defaults were moved to x-default`);
  assert.ok(!/"default":/.test(JSON.stringify(doc.components.schemas)), 'a schema in components/schemas keeps "default"');
});

test('openapi.yaml describes exactly the routes of the route table', () => {
  // The table in server/api/service.c: { "GET", "/v1/jobs", "jobs.list", H(jobs_list) },
  const source = fs.readFileSync(path.join(ROOT, 'server/api/service.c'), 'utf8');
  const table = [...source.matchAll(/\{\s*"([A-Z]+)",\s*"(\/[^"]*)",\s*"[^"]+",\s*H\(/g)].map(
    ([, method, route]) => `${method.toLowerCase()} ${route}`,
  );
  assert.ok(table.length >= 9, `found ${table.length} routes in server/api/service.c`);
  // ...and three for every uploaded-resource type a kind declares (upload, get, list)
  // (core/<kind>/kind.c: `.collection = "px-models"`, served by server/api/resources.c).
  // The generic POST /v1/{kind}/check is described once per kind with a
  // check operation (core/<kind>/kind.c: `.check = ...`), POST
  // /v1/{kind}/hint once per kind with a hint operation (`.hint = ...`).
  const core = path.join(ROOT, 'core');
  const checking = [];
  const hinting = [];
  for (const dir of fs.readdirSync(core)) {
    const kind = path.join(core, dir, 'kind.c');
    if (!fs.existsSync(kind)) continue;
    const text = fs.readFileSync(kind, 'utf8');
    for (const [, c] of text.matchAll(/\.collection = "([^"]+)"/g))
      table.push(`post /v1/${c}`, `get /v1/${c}/{name}`, `get /v1/${c}`);
    if (/\.check = /.test(text)) checking.push(/\.name = "([^"]+)"/.exec(text)[1]);
    if (/\.hint = /.test(text)) hinting.push(/\.name = "([^"]+)"/.exec(text)[1]);
  }
  for (const route of table.filter((r) => r.includes('{kind}'))) {
    table.splice(table.indexOf(route), 1);
    const kinds = route.endsWith('/hint') ? hinting : checking;
    for (const kind of kinds) table.push(route.replace('{kind}', kind));
  }
  assert.ok(table.includes('post /v1/digger/check'), 'the digger kind has a check operation');
  assert.ok(table.includes('post /v1/digger/hint'), 'the digger kind has a hint operation');
  assert.ok(table.includes('post /v1/px-models'), 'the racetrack kind declares px-models');
  // The paths of openapi.yaml: "  /path:" then "    method:" lines.
  const yaml = fs.readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8');
  const paths = yaml.slice(yaml.indexOf('\npaths:\n'), yaml.indexOf('\ncomponents:\n'));
  const described = [];
  let current = null;
  for (const line of paths.split('\n')) {
    let m;
    if ((m = /^ {2}(\/\S*):\s*$/.exec(line))) current = m[1];
    else if ((m = /^ {4}(get|put|post|delete|patch|head|options):\s*$/.exec(line))) described.push(`${m[1]} ${current}`);
  }
  assert.deepEqual([...described].sort(), [...table].sort());
});

test('/metrics counts the store: writes through the store thread, reads through the read pool', async () => {
  const before = await metrics(server);
  assert.equal(before.get('starforge_store_fault{state="ok"}'), 1);
  for (const state of ['full', 'unwritable', 'unavailable']) assert.equal(before.get(`starforge_store_fault{state="${state}"}`), 0, state);
  // Three submissions at once: three inserts, one commit or more, never more commits than writes.
  const jobs = await Promise.all([1, 2, 3].map((seed) => submit(server, QUICK_JOB(seed))));
  for (const j of jobs) await waitForJob(server, j.id);
  const mid = await metrics(server);
  const writes = mid.get('starforge_store_operations_total{pool="writer"}') - before.get('starforge_store_operations_total{pool="writer"}');
  const commits = mid.get('starforge_store_commits_total') - before.get('starforge_store_commits_total');
  assert.ok(writes >= 3 * 3, `${writes} store-thread operations for 3 jobs (insert, claim, outcome each)`);
  assert.ok(commits >= 1 && commits <= writes, `${commits} commits for ${writes} operations`);
  // Ten job reads: ten read-pool operations (and the /metrics read itself).
  const r0 = mid.get('starforge_store_operations_total{pool="reads"}');
  for (let i = 0; i < 10; i++) assert.equal((await request(server, `/v1/jobs/${jobs[0].id}`)).status, 200);
  const after = await metrics(server);
  assert.ok(after.get('starforge_store_operations_total{pool="reads"}') - r0 >= 10);
  assert.equal(after.get('starforge_store_pending{pool="reads"}'), 0, 'only the /metrics read, answered before its text');
});
