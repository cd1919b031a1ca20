// types.test.mjs - the served OpenAPI document is self-contained and the
// TypeScript types a client generates from it fit what the service answers
// (issue 12, items 2 and 3).
//
// As a client would: openapi-typescript reads http://127.0.0.1:PORT/openapi.yaml
// (every $ref must resolve inside that one document), then real bodies
// captured from the running service (a level of each kind, a job in each
// state, listing pages, problems, check answers of digger, lattice and racetrack,
// the digger hint's answer,
// evaluation answers, and the job
// submissions themselves) are written into a .ts file, each as
// `const x = <body> satisfies <generated type>;`, and `tsc --strict` compiles
// it: a missing required property, an excess one or a wrong type is an error,
// and the test fails with tsc's message.
//
// The generator runs twice, as a client would run it: with its default flags
// and with --default-non-nullable=false. With the default flags
// openapi-typescript makes every property whose schema has a "default"
// required, so the bundle carries the params' defaults as "x-default" and in
// the descriptions instead (tools/openapi_bundle.c, move_defaults): a request
// may leave any params key out, and a job's params (the request's echo) are
// as partial as the request was; the levels, which spell every key out, say
// so with "required". Every body is checked against both outputs, among them
// submissions that give each kind only one or two params keys and the jobs
// that echo them.
//
// So that the check itself can fail, the same tsc run compiles, for each
// output, a file of deliberately wrong bodies (a string seed, a level without
// its puzzle, an excess key, a level's params missing a key, a wrong enum, a
// wrong params type) and expects an error on each of them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import {
  LONG_JOB,
  QUICK_JOB,
  ROOT,
  SCALE,
  getJson,
  request,
  submit,
  useServer,
  waitForJob,
} from './harness.mjs';

// One worker each. `server` runs the quick jobs of every kind under the
// default budget (on a loaded machine a racetrack job of two generations
// has taken 1.9 s); `strict` has a job budget of one second, so that its
// long job fails (timed_out) soon, and its one worker keeps a second long
// job waiting in the queue.
const server = useServer({ args: ['--workers', '1'] });
const strict = useServer({ args: ['--workers', '1', '--job-timeout', '1'] });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starforge-types-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const BIN = (name) => path.join(ROOT, 'node_modules', '.bin', name);

/** Every "$ref" string under `node`. */
function refs(node, out = []) {
  if (Array.isArray(node)) for (const v of node) refs(v, out);
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  return out;
}

/** The value at JSON Pointer `ptr` ("/components/schemas/Job") in `doc`, or undefined. */
function pointer(doc, ptr) {
  let cur = doc;
  for (const raw of ptr.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !(key in cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

test('the served document is self-contained: every $ref is local and resolves', async () => {
  const yaml = await request(server, '/openapi.yaml');
  const json = await request(server, '/openapi.json');
  assert.equal(yaml.status, 200);
  assert.equal(json.status, 200);
  assert.equal(yaml.headers.get('content-type'), 'application/yaml');
  assert.equal(json.headers.get('content-type'), 'application/json');
  assert.equal(yaml.text, json.text, '/openapi.yaml and /openapi.json serve the same document');
  const doc = JSON.parse(json.text); // JSON text, which YAML readers read too
  const all = refs(doc);
  assert.ok(all.length > 100, `only ${all.length} refs`);
  for (const ref of all) {
    assert.match(ref, /^#\//, `${ref} is not local`);
    assert.notEqual(pointer(doc, ref.slice(1)), undefined, `${ref} does not resolve`);
  }
  const schemas = doc.components.schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    assert.match(name, /^[A-Z][A-Za-z0-9]*$/, `component name ${name}`);
    assert.ok(!('$defs' in schema), `${name} keeps $defs`);
    assert.ok(!('$schema' in schema), `${name} keeps $schema`);
  }
  for (const name of ['LatticeLevel', 'RacetrackLevel', 'DiggerLevel', 'Job', 'JobRequest', 'Problem', 'DiggerPuzzleTaps'])
    assert.ok(schemas[name], `no component ${name}`);
});

/* ---- capturing real bodies ---- */

const REQUESTS = {
  lattice: QUICK_JOB(3),
  racetrack: { kind: 'racetrack', seed: 4, params: { population: 4, generations: 2, count: 1 } },
  digger: { kind: 'digger', seed: 5, params: { difficulty: 'easiest', count: 1 } },
};

// Submissions with one or two params keys, queued behind a long job and
// cancelled there: the request, the job the service answers (its params the
// same partial object) and the cancelled job are all checked.
const PARTIAL = {
  lattice: { kind: 'lattice', params: { length: 12 } },
  racetrack: { kind: 'racetrack', params: { count: 2, px_model: 'synthetic' } },
  digger: { kind: 'digger', params: { difficulty: 'hardest', count: 3 } },
};

/** What the test compiles: [name, TypeScript type, body], in order. */
async function capture() {
  const out = [];
  const get = (p) => `paths[${JSON.stringify(p)}]["get"]["responses"]`;
  const JOB = `${get('/v1/jobs/{id}')}[200]["content"]["application/json"]`;
  const LEVEL = `${get('/v1/levels/{id}')}[200]["content"]["application/json"]`;
  const SUBMIT = 'NonNullable<paths["/v1/jobs"]["post"]["requestBody"]>["content"]["application/json"]';

  for (const [kind, body] of Object.entries(REQUESTS)) {
    out.push([`${kind}Request`, SUBMIT, body]);
    out.push([`${kind}RequestBare`, 'components["schemas"]["JobRequest"]', { kind }]);
    const accepted = await submit(server, body);
    const job = await waitForJob(server, accepted.id, { timeoutMs: 30_000 * SCALE });
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    out.push([`${kind}Succeeded`, JOB, job]);
    const level = await getJson(server, `/v1/levels/${job.level_ids[0]}`);
    const Kind = kind[0].toUpperCase() + kind.slice(1);
    out.push([`${kind}Level`, `components["schemas"]["${Kind}Level"]`, level]);
    out.push([`${kind}LevelAnswer`, LEVEL, level]);
    if (kind === 'digger') {
      const res = await request(server, '/v1/digger/check', {
        method: 'POST',
        json: { level: level.puzzle, moves: level.solution.optimal.taps },
      });
      assert.equal(res.status, 200, res.text);
      out.push(['diggerCheckRequest', 'components["schemas"]["DiggerCheckRequest"]',
        { level: level.puzzle, moves: level.solution.optimal.taps }]);
      out.push(['diggerCheck', 'components["schemas"]["DiggerCheckResult"]', res.body]);
      const hintBody = { level: level.puzzle, moves: level.solution.optimal.taps.slice(0, 1) };
      const hint = await request(server, '/v1/digger/hint', { method: 'POST', json: hintBody });
      assert.equal(hint.status, 200, hint.text);
      out.push(['diggerHintRequest', 'components["schemas"]["DiggerHintRequest"]', hintBody]);
      out.push(['diggerHint', 'components["schemas"]["DiggerHintResult"]', hint.body]);
    }
    if (kind === 'lattice') {
      const body = { level, fold: level.solution.band_folds.two };
      const res = await request(server, '/v1/lattice/check', { method: 'POST', json: body });
      assert.equal(res.status, 200, res.text);
      out.push(['latticeCheckRequest', 'components["schemas"]["LatticeCheckRequest"]', body]);
      out.push(['latticeCheck', 'components["schemas"]["LatticeCheckResult"]', res.body]);
    }
    if (kind === 'racetrack') {
      const body = { level, lap_time: level.stars.thresholds[1], checkpoints: null };
      const res = await request(server, '/v1/racetrack/check', { method: 'POST', json: body });
      assert.equal(res.status, 200, res.text);
      out.push(['racetrackCheckRequest', 'components["schemas"]["RacetrackCheckRequest"]', body]);
      out.push(['racetrackCheck', 'components["schemas"]["RacetrackCheckResult"]', res.body]);
    }
  }

  // running, queued, cancelled, failed (over the one-second --job-timeout).
  const long = await submit(strict, LONG_JOB(21));
  out.push(['submitted', 'components["schemas"]["Job"]', long]);
  out.push(['running', JOB, await waitForJob(strict, long.id, { states: ['running'] })]);
  const queued = await submit(strict, LONG_JOB(22));
  const queuedNow = await getJson(strict, `/v1/jobs/${queued.id}`);
  assert.equal(queuedNow.state, 'queued');
  out.push(['queued', JOB, queuedNow]);
  // Behind `queued`, so still queued when cancelled whenever `long` ends.
  for (const [kind, body] of Object.entries(PARTIAL)) {
    out.push([`${kind}PartialRequest`, SUBMIT, body]);
    const job = await submit(strict, body);
    assert.deepEqual(job.params, body.params, 'a job echoes its params as given');
    out.push([`${kind}PartialAccepted`, 'paths["/v1/jobs"]["post"]["responses"][202]["content"]["application/json"]', job]);
    const gone = await request(strict, `/v1/jobs/${job.id}`, { method: 'DELETE' });
    assert.equal(gone.status, 200, gone.text);
    out.push([`${kind}PartialCancelled`, JOB, await getJson(strict, `/v1/jobs/${job.id}`)]);
  }
  const del = await request(strict, `/v1/jobs/${queued.id}`, { method: 'DELETE' });
  assert.equal(del.status, 200, del.text);
  out.push(['cancelled', `paths["/v1/jobs/{id}"]["delete"]["responses"][200]["content"]["application/json"]`, del.body]);
  const failed = await waitForJob(strict, long.id, { timeoutMs: 30_000 * SCALE });
  assert.equal(failed.state, 'failed', JSON.stringify(failed));
  out.push(['failed', JOB, failed]);

  out.push(['jobPage', `${get('/v1/jobs')}[200]["content"]["application/json"]`, await getJson(strict, '/v1/jobs?page_size=3')]);
  out.push(['levelPage', `${get('/v1/levels')}[200]["content"]["application/json"]`, await getJson(server, '/v1/levels?page_size=3')]);
  out.push(['evaluation', 'components["schemas"]["Evaluation"]', await getJson(server, '/v1/evaluations/square/HPHPPHHPHP')]);

  const missing = await request(server, '/v1/jobs/job_00000000000000000000000000000000');
  assert.equal(missing.status, 404);
  out.push(['notFound', `${get('/v1/jobs/{id}')}[404]["content"]["application/problem+json"]`, missing.body]);
  const bad = await request(server, '/v1/levels?page_size=0');
  assert.equal(bad.status, 400);
  out.push(['badQuery', 'components["schemas"]["Problem"]', bad.body]);
  return out;
}

const decl = ([name, type, body]) => `export const ${name} = ${JSON.stringify(body, null, 1)} satisfies ${type};\n`;

// The generator's two ways of reading "default": as a client runs it (no
// flags) and with --default-non-nullable=false.
const VARIANTS = [
  ['default', []],
  ['nullable', ['--default-non-nullable=false']],
];

/** Runs `argv` under node in `cwd`; resolves to { status, output }. */
function run(argv, cwd, timeout) {
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { cwd, encoding: 'utf8', timeout, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ status: err ? (err.code ?? 1) : 0, output: `${stdout}${stderr}` }));
  });
}

test('openapi-typescript over the served document, with and without --default-non-nullable=false, gives types that real bodies satisfy under tsc --strict', async () => {
  // The generators run while the bodies are captured (mostly waiting on jobs).
  const generating = Promise.all(VARIANTS.map(([name, flags]) =>
    run([BIN('openapi-typescript'), `${server.base}/openapi.yaml`, ...flags, '-o', path.join(dir, `api-${name}.ts`)],
      ROOT, 60_000 * SCALE)));
  const bodies = await capture();
  const gens = await generating;
  for (const [i, [name]] of VARIANTS.entries()) {
    assert.equal(gens[i].status, 0, `openapi-typescript (${name}) failed:\n${gens[i].output}`);
    const api = fs.readFileSync(path.join(dir, `api-${name}.ts`), 'utf8');
    // Known defects of earlier documents: renamed schemas, $defs as a property.
    assert.ok(!/schema-\d|\.schema"/.test(api), `${name}: a schema was renamed (name.schema-2)`);
    assert.ok(!/^\s*"?\$defs"?\??:/m.test(api), `${name}: a type has a $defs property`);
  }

  // The negative control: each of these must be an error.
  const byName = Object.fromEntries(bodies.map(([n, , b]) => [n, b]));
  const { puzzle: _, ...noPuzzle } = byName.diggerLevel;
  const { count: __, ...partialParams } = byName.latticeLevel.params;
  const wrong = [
    ['stringSeed', 'components["schemas"]["DiggerLevel"]', { ...byName.diggerLevel, seed: String(byName.diggerLevel.seed) }],
    ['noPuzzle', 'components["schemas"]["DiggerLevel"]', noPuzzle],
    ['excessKey', 'components["schemas"]["Job"]', { ...byName.failed, extra: 1 }],
    ['partialLevelParams', 'components["schemas"]["LatticeLevel"]', { ...byName.latticeLevel, params: partialParams }],
    ['wrongState', 'components["schemas"]["Job"]', { ...byName.queued, state: 'paused' }],
    ['wrongParam', 'components["schemas"]["JobRequest"]', { kind: 'digger', params: { difficulty: 'hardest', count: '3' } }],
    ['unknownParam', 'components["schemas"]["JobRequest"]', { kind: 'lattice', params: { lenght: 6 } }],
  ];
  // bodies-<variant>.ts and wrong-<variant>.ts for each variant, one tsc run.
  const files = [];
  for (const [name] of VARIANTS) {
    const header = `import type { components, paths } from "./api-${name}";\n\n`;
    fs.writeFileSync(path.join(dir, `bodies-${name}.ts`), header + bodies.map(decl).join('\n'));
    fs.writeFileSync(path.join(dir, `wrong-${name}.ts`), header + wrong.map(decl).join('\n'));
    files.push(`bodies-${name}.ts`, `wrong-${name}.ts`);
  }
  // --skipLibCheck skips only TypeScript's own lib .d.ts files (a third of
  // the time); the generated api-*.ts and the bodies are .ts, checked in full.
  const tsc = await run(
    [BIN('tsc'), '--strict', '--noEmit', '--skipLibCheck', '--target', 'es2020', '--module', 'es2020', '--moduleResolution', 'node',
      '--pretty', 'false', ...files],
    dir, 120_000 * SCALE);
  const errors = tsc.output.split('\n').filter((l) => /error TS\d+/.test(l));
  // The generated modules themselves compile (and tsc ran at all).
  const elsewhere = errors.filter((l) => !/^(bodies|wrong)-[a-z]+\.ts\(/.test(l));
  assert.deepEqual(elsewhere, [], `tsc --strict fails outside the bodies:\n${tsc.output}`);
  /** The errors tsc reported in `file`, with their line numbers. */
  const errorsIn = (file) => errors.filter((l) => l.startsWith(`${file}(`))
    .map((l) => ({ line: Number(/^[^(]*\((\d+),/.exec(l)[1]), text: l }));
  for (const [name] of VARIANTS) {
    const inBodies = errorsIn(`bodies-${name}.ts`);
    if (inBodies.length) {
      // Name the offending declarations, with tsc's own message.
      const lines = fs.readFileSync(path.join(dir, `bodies-${name}.ts`), 'utf8').split('\n');
      const where = inBodies.map(({ line, text }) => {
        const owner = lines.slice(0, line).reverse().find((x) => x.startsWith('export const')) || '';
        return `${owner.slice(0, 60)}\n  ${text}`;
      });
      assert.fail(`real bodies do not fit the types generated (${name}):\n${where.join('\n')}`);
    }
    const inWrong = errorsIn(`wrong-${name}.ts`);
    const wrongLines = fs.readFileSync(path.join(dir, `wrong-${name}.ts`), 'utf8').split('\n');
    for (const [body] of wrong) {
      const first = wrongLines.findIndex((l) => l.startsWith(`export const ${body} =`)) + 1;
      const end = wrongLines.findIndex((l, i) => i >= first && l.startsWith('export const'));
      const last = end < 0 ? wrongLines.length : end;
      assert.ok(inWrong.some(({ line }) => line >= first && line <= last),
        `tsc accepted the wrong body ${body} (${name}):\n${tsc.output}`);
    }
  }
  assert.notEqual(tsc.status, 0, 'tsc accepted every wrong body');
});
