// readme.test.mjs - the README's curl examples run as written (issue 12, item 12).
//
// The three example blocks of README.md's "The service" section (a level
// designer, a game client, a dashboard) are taken from the README itself,
// not copied here, and run in order by bash from the project's root against
// a fresh server, with only the port changed (localhost:8080 becomes
// localhost:PORT). curl is made to fail on any HTTP error status
// (--fail-with-body) and bash stops at the first failing command, so an
// example that answers 404, 409 or 422 fails the test. The answers are then
// checked for what the README's comments promise.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { PG, ROOT, SCALE, sqliteOnly, useServer } from './harness.mjs';

// Once, in the SQLite pass: the README's examples are one walk through the
// API, which the other files test on both back ends. No server in the
// PostgreSQL pass, where the test is skipped.
const server = PG ? null : useServer({ args: ['--workers', '2'] });
const ONCE = sqliteOnly("the README's examples run once; the API they use is tested on both back ends");

/** The ```sh blocks that follow each "**A ...**" lead-in of README's service section. */
function readmeExamples() {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The service'), readme.indexOf('### Configuration'));
  const blocks = [];
  for (const m of section.matchAll(/\*\*(A [^*]+)\*\*[^\n]*\n\n```sh\n([\s\S]*?)```/g)) {
    blocks.push({ who: m[1], code: m[2] });
  }
  return blocks;
}

test('the README examples run in order against a fresh service, each answering as its comment says', ONCE, (t) => {
  const blocks = readmeExamples();
  assert.deepEqual(
    blocks.map((b) => b.who),
    ['A level designer', 'A game client', 'A dashboard'],
  );
  execFileSync('jq', ['--version']); // scripts/deps.sh test installs it
  const port = server.port;
  const script = [
    'set -euo pipefail',
    // Each answer on a line of its own, so the last line is the check's.
    `curl() { command curl --fail-with-body --show-error -w '\\n' "$@"; }`,
    ...blocks.map((b) => `echo "=== ${b.who}"\n${b.code.replaceAll('localhost:8080', `localhost:${port}`)}`),
  ].join('\n');
  assert.ok(!/localhost:8080/.test(script));
  const run = spawnSync('bash', ['-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 * SCALE });
  assert.equal(run.status, 0, `README examples failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
  const out = run.stdout;
  t.diagnostic(`${out.length} bytes of answers`);

  // Designer: the job, its live events ending with the end event, the upload, the evaluation.
  const designer = out.slice(out.indexOf('=== A level designer'), out.indexOf('=== A game client'));
  assert.match(designer, /"kind":"digger"/);
  assert.match(designer, /^event: end$/m);
  assert.match(designer, /"state":"succeeded"/);
  assert.match(designer, /"name":"june"/);
  assert.match(designer, /"sequence":"HPHPPHHPHPPHPHHP"/);

  // Game client: the level, its picture, a listing page, a hint and the check of the optimal play.
  const client = out.slice(out.indexOf('=== A game client'), out.indexOf('=== A dashboard'));
  assert.match(client, /"id":"dig_[0-9a-f]{32}"/);
  assert.match(client, /<svg[\s>]/);
  assert.match(client, /"levels":\[\{"id":"dig_/);
  // The hint after the optimal play's first tap: winnable, a tap to make.
  assert.match(client, /"winnable":true,.*"hint":\{"side":"[a-z]+","index":\d+\}/);
  const check = JSON.parse(client.trim().split('\n').pop());
  assert.equal(check.solved, true, JSON.stringify(check));
  assert.equal(check.stars, 3, JSON.stringify(check));

  // Dashboard: a jobs page, health, metrics.
  const dashboard = out.slice(out.indexOf('=== A dashboard'));
  assert.match(dashboard, /"jobs":\[/);
  assert.match(dashboard, /^starforge_http_requests_total\{route="jobs.submit",status="202"\} 2$/m);
});
