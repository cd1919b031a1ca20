// docker.test.mjs - the container build, checked without a container engine
// (none runs on these machines): Dockerfile, .dockerignore,
// docker/compose.yaml, docker/compose.scale.yaml, docker/nginx.conf,
// docker/starforge.env, docker/healthcheck.sh and the configuration table
// of docs/operations.md.
//
//   - both stages are debian:12-slim, pinned by tag (a digest may follow);
//   - every COPY source exists in the build context and .dockerignore keeps
//     it in, and .dockerignore keeps build/, node_modules/, data/ and .git out;
//   - the build stage builds the binary from exactly what it copies: the
//     context is assembled in a temporary folder as the COPY lines and
//     .dockerignore say, and the stage's RUN after the copies (`make`) is
//     run there; it installs every package scripts/deps.sh checks for;
//   - the runtime stage installs what that binary links against: `ldd` on it
//     (and on $STARFORGE_BIN unless that is a sanitizer build), each library
//     mapped to its Debian package with `dpkg -S`. A library the binary
//     needs directly (readelf's NEEDED) must come from a package the stage
//     names or from the slim base; one it needs through another library
//     from the Depends closure of those. The slim base is modelled as the
//     Depends closure of the Essential packages and apt (what any Debian
//     image has), from this machine's dpkg database. The stage installs
//     nothing else (no compiler, no -dev, no curl);
//   - a non-root numeric USER that owns /data, VOLUME /data, the database on
//     it, EXPOSE = STARFORGE_LISTEN's port, exec-form ENTRYPOINT
//     ["/usr/local/bin/starforge", "serve"] on the copied binary;
//   - the image's ENTRYPOINT and ENV (with /data and the port swapped for
//     temporary ones) start the real server: it listens where
//     STARFORGE_LISTEN says, creates STARFORGE_DB, and on SIGTERM exits 0;
//   - HEALTHCHECK is exec form, runs docker/healthcheck.sh, which asks for
//     /healthz: run against that live server it passes, against a closed port
//     or a server answering 503 it fails;
//   - compose.yaml agrees with the Dockerfile (context, the named volume on
//     /data, the published container port, the health check command) and
//     has stop_grace_period and restart; starforge.env names every variable
//     `starforge serve` reads, and docs/operations.md every option and
//     variable;
//   - the scale-out set-up, compose.scale.yaml with nginx.conf: PostgreSQL
//     15 with its data on a named volume and a pg_isready health check;
//     exactly three starforge nodes of one image built from this
//     Dockerfile, each with STARFORGE_DB naming the postgres service's
//     database and user (no password in it: PGPASSWORD is the server's),
//     distinct STARFORGE_NODE names, the image's health check, started once
//     the database is healthy and never published; nginx with nginx.conf
//     mounted read-only, the only published port (loopback) being the one
//     nginx.conf listens on, its upstream exactly the node services on
//     their port, and with a read-only root everything it writes under a
//     writable /var/cache/nginx; nginx.conf's body limit is the nodes'
//     (cmd_serve.c), no proxy_next_upstream allows non_idempotent, the
//     event stream's location is unbuffered and uncached, and the cache is
//     on only for levels' locations, bypassed for requests with
//     Authorization. tests/integration/scaleout.test.mjs runs nginx.conf
//     for real;
//
// The compose files are parsed with `yaml` (1.10.3; compose.scale.yaml with
// merge keys on, as Compose reads it), which package-lock.json pins
// as a dependency of @redocly/cli; should an upgrade drop it, add it to
// package.json's devDependencies.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import YAML from 'yaml';

import { BIN, ROOT, SCALE, sqliteOnly } from './harness.mjs';

// The Dockerfile, the image and docker/ do not depend on the store's back
// end (the image's own STARFORGE_DB is a SQLite file): checked once, in the
// SQLite pass.
const ONCE = sqliteOnly('the Dockerfile and docker/ do not depend on the back end; checked once');

const read = (rel) => fs.readFileSync(path.join(ROOT, rel), 'utf8');
const tmpdirs = [];
const tmpdir = (prefix) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tmpdirs.push(d);
  return d;
};
after(() => {
  for (const d of tmpdirs) fs.rmSync(d, { recursive: true, force: true });
});

/* ---- the Dockerfile ---- */

/**
 * The Dockerfile as stages: [{ image, name, instructions: [{ op, args, line }] }].
 * Continuation lines are joined, comment lines dropped (also inside a
 * continuation, as Docker does); `args` is the rest of the instruction.
 */
function parseDockerfile(text) {
  const instructions = [];
  let current = null;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line) || (!current && !line.trim())) return;
    const cont = /\\\s*$/.test(line);
    const body = cont ? line.replace(/\\\s*$/, '') : line;
    if (current) current.text += ' ' + body.trim();
    else current = { text: body.trim(), line: i + 1 };
    if (!cont) {
      const m = /^(\S+)\s*(.*)$/.exec(current.text);
      instructions.push({ op: m[1].toUpperCase(), args: m[2].trim(), line: current.line });
      current = null;
    }
  });
  assert.equal(current, null, 'the Dockerfile ends inside a continued line');
  const stages = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      assert.ok(m, `line ${ins.line}: cannot read FROM ${ins.args}`);
      stages.push({ image: m[1], name: m[2] || null, instructions: [] });
    } else if (ins.op !== 'ARG' || stages.length) {
      assert.ok(stages.length, `line ${ins.line}: ${ins.op} before the first FROM`);
      stages.at(-1).instructions.push(ins);
    }
  }
  return stages;
}

/** The JSON array of an exec-form instruction, else null (shell form). */
function execForm(args) {
  if (!args.startsWith('[')) return null;
  const v = JSON.parse(args);
  assert.ok(Array.isArray(v) && v.every((s) => typeof s === 'string'), `not a string array: ${args}`);
  return v;
}

/** A COPY's { flags, sources, dest }, in shell or JSON form. */
function parseCopy(args) {
  const flags = {};
  let rest = args;
  for (let m; (m = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest)); rest = rest.slice(m[0].length)) {
    flags[m[1]] = m[2] ?? true;
  }
  const words = execForm(rest) || rest.split(/\s+/);
  assert.ok(words.length >= 2, `COPY needs a source and a destination: ${args}`);
  return { flags, sources: words.slice(0, -1), dest: words.at(-1) };
}

/** Packages named by `apt-get install` in a RUN command. */
function aptInstalls(run) {
  const pkgs = [];
  for (const part of run.split(/&&|\|\||;/)) {
    const words = part.trim().split(/\s+/);
    const i = words.indexOf('apt-get');
    if (i < 0 || !words.slice(i + 1).includes('install')) continue;
    const rest = words.slice(words.indexOf('install', i) + 1);
    pkgs.push(...rest.filter((w) => w && !w.startsWith('-')));
  }
  return pkgs;
}

/** ENV instructions as an object (KEY=VALUE pairs, or the old `ENV KEY VALUE`). */
function envOf(stage) {
  const env = {};
  for (const ins of stage.instructions.filter((x) => x.op === 'ENV')) {
    const pairs = [...ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)];
    if (pairs.length) {
      for (const [, k, v] of pairs) env[k] = v.startsWith('"') ? JSON.parse(v) : v;
    } else {
      const [k, ...v] = ins.args.split(/\s+/);
      env[k] = v.join(' ');
    }
  }
  return env;
}

const ops = (stage, op) => stage.instructions.filter((x) => x.op === op);
const last = (stage, op) => ops(stage, op).at(-1);

/* ---- .dockerignore (the rules of moby/patternmatcher) ---- */

function dockerignore(text) {
  const rules = [];
  for (let line of text.split('\n')) {
    line = line.trim();
    if (!line || line.startsWith('#')) continue;
    const exclude = !line.startsWith('!');
    let p = path.posix.normalize(exclude ? line : line.slice(1).trim()).replace(/^\/+|\/+$/g, '');
    let re = '';
    for (let i = 0; i < p.length; i++) {
      const c = p[i];
      if (c === '*' && p[i + 1] === '*') {
        i++;
        if (p[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '[^/]';
      else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    rules.push({ exclude, re: new RegExp(`^${re}$`) });
  }
  // A path is ignored when the last rule matching it, or one of its parent
  // folders, excludes it.
  return (rel) => {
    const parts = rel.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const r of rules) if (prefixes.some((p) => r.re.test(p))) ignored = r.exclude;
    return ignored;
  };
}

/** Every file under `rel` (a file or a folder of the context), context-relative. */
function filesUnder(rel) {
  const abs = path.join(ROOT, rel);
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs
    .readdirSync(abs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(ROOT, path.join(e.parentPath ?? e.path, e.name)).split(path.sep).join('/'));
}

/* ---- Debian packages ---- */

/**
 * The packages owning `files`: one `dpkg -S` for all of them, each file
 * tried as ldd names it, as its /usr-merged twin and as its link target.
 * Returns file -> package.
 */
function packagesOf(files) {
  const twins = (p) => [p, p.startsWith('/usr/') ? p.slice(4) : '/usr' + p];
  const candidates = new Map(files.map((f) => [f, [...new Set([...twins(f), ...twins(fs.realpathSync(f))])]]));
  let out;
  try {
    out = execFileSync('dpkg', ['-S', ...[...candidates.values()].flat()], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, LC_ALL: 'C' },
    });
  } catch (e) {
    out = e.stdout || ''; // some candidates are owned by no package: expected
  }
  const owner = new Map();
  for (const line of out.split('\n')) {
    const m = /^([^\s:,]+)(?::[a-z0-9-]+)?(?:, [^:]+(?::[a-z0-9-]+)?)*: (\/.*)$/.exec(line);
    if (m && !line.startsWith('diversion')) owner.set(m[2], m[1]);
  }
  return new Map(
    files.map((f) => {
      const pkg = candidates.get(f).map((c) => owner.get(c)).find(Boolean);
      assert.ok(pkg, `no Debian package owns ${f} (dpkg -S)`);
      return [f, pkg];
    }),
  );
}

/** The installed packages: name -> { essential, deps: [[alternatives]] }, and virtual -> providers. */
function dpkgDatabase() {
  const out = execFileSync(
    'dpkg-query',
    ['-W', '-f', '${db:Status-Abbrev}\t${Package}\t${Essential}\t${Pre-Depends}, ${Depends}\t${Provides}\n'],
    { encoding: 'utf8' },
  );
  const pkgs = new Map();
  const provides = new Map();
  const names = (list) =>
    list
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => d.split('|').map((a) => a.trim().split(/[\s(:]/)[0]));
  for (const line of out.split('\n')) {
    const [status, name, essential, deps, prov] = line.split('\t');
    if (!status || !status.startsWith('ii')) continue;
    pkgs.set(name, { essential: essential === 'yes', deps: names(deps) });
    for (const [v] of names(prov || '')) provides.set(v, [...(provides.get(v) || []), name]);
  }
  return { pkgs, provides };
}

/**
 * The packages `roots` bring in: each Depends and Pre-Depends, following the
 * first alternative installed here (what apt picks), recursively.
 */
function dependsClosure(db, roots) {
  const seen = new Set();
  const resolve = (n) => (db.pkgs.has(n) ? n : (db.provides.get(n) || [])[0]);
  const stack = [...roots];
  while (stack.length) {
    const n = stack.pop();
    if (seen.has(n)) continue;
    seen.add(n);
    for (const alts of db.pkgs.get(n)?.deps || []) {
      const pick = alts.map(resolve).find(Boolean);
      if (pick) stack.push(pick);
    }
  }
  return seen;
}

/** { direct: [{ soname, file, pkg }], all: [{ soname, file, pkg }] } of an executable. */
function linkedPackages(bin) {
  const ldd = execFileSync('ldd', [bin], { encoding: 'utf8' });
  const libs = [];
  for (const line of ldd.split('\n')) {
    let m = /^\s*(\S+)\s+=>\s+(\/\S+)\s+\(/.exec(line);
    if (m) libs.push({ soname: m[1], file: m[2] });
    else if ((m = /^\s*(\/\S+)\s+\(/.exec(line))) libs.push({ soname: path.basename(m[1]), file: m[1] });
    else assert.ok(!/not found/.test(line), `ldd ${bin}: ${line.trim()}`);
  }
  const owners = packagesOf(libs.map((l) => l.file));
  for (const lib of libs) lib.pkg = owners.get(lib.file);
  const needed = [
    ...execFileSync('readelf', ['-d', '--wide', bin], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } }).matchAll(
      /\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g,
    ),
  ].map((m) => m[1]);
  assert.ok(needed.length, `readelf finds no NEEDED library in ${bin}`);
  const direct = needed.map((soname) => {
    const lib = libs.find((l) => l.soname === soname);
    assert.ok(lib, `ldd does not resolve ${soname}, which ${bin} needs`);
    return lib;
  });
  return { direct, all: libs };
}

/* ---- the files ---- */

const DOCKERFILE = read('Dockerfile');
const stages = parseDockerfile(DOCKERFILE);
const buildStage = stages[0];
const runtime = stages.at(-1);
const ignored = dockerignore(read('.dockerignore'));
const runtimePackages = ops(runtime, 'RUN').flatMap((r) => aptInstalls(r.args));
const imageEnv = envOf(runtime);
const SERVE_SRC = read('server/cli/cmd_serve.c');
const SERVE_VARS = [...new Set([...SERVE_SRC.matchAll(/"(STARFORGE_[A-Z_]+)"/g)].map((m) => m[1]))];
const SERVE_OPTIONS = [...new Set([...SERVE_SRC.matchAll(/"(--[a-z][a-z-]*)"/g)].map((m) => m[1]))].filter(
  (o) => o !== '--help',
);
const healthcheckCmd = () => {
  const hc = last(runtime, 'HEALTHCHECK');
  assert.ok(hc, 'the runtime stage has no HEALTHCHECK');
  const m = /^((?:--[a-z-]+=\S+\s+)*)CMD\s+(.*)$/.exec(hc.args);
  assert.ok(m, `HEALTHCHECK is not "[OPTIONS] CMD ...": ${hc.args}`);
  const cmd = execForm(m[2]);
  assert.ok(cmd, 'HEALTHCHECK CMD is exec form (a JSON array): no /bin/sh -c in the way');
  return { cmd, options: m[1] };
};
/** The context file copied to `dest` in the runtime stage. */
const contextSourceOf = (dest) => {
  for (const ins of ops(runtime, 'COPY')) {
    const c = parseCopy(ins.args);
    if (!c.flags.from && c.dest === dest && c.sources.length === 1) return c.sources[0];
  }
  return null;
};

/** The environment without make's flags (a jobserver, SANITIZE=...) from a `make test` around us. */
function cleanEnv() {
  const env = { ...process.env };
  for (const k of ['MAKEFLAGS', 'MFLAGS', 'MAKELEVEL', 'MAKEOVERRIDES', 'SANITIZE', 'BUILD', 'CFLAGS', 'LDFLAGS', 'CC']) {
    delete env[k];
  }
  return env;
}

async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

function runHealthcheck(env) {
  const { cmd } = healthcheckCmd();
  // The command as the image runs it, with the script from the repository.
  const script = contextSourceOf(cmd.at(-1));
  assert.ok(script, `HEALTHCHECK runs ${cmd.at(-1)}, which no COPY brings from the context`);
  return new Promise((resolve) => {
    const p = spawn(cmd[0] === '/bin/bash' ? 'bash' : cmd[0], [...cmd.slice(1, -1), path.join(ROOT, script)], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => resolve({ code, err }));
  });
}

/* ---- the tests ---- */

test('both stages are debian:12-slim, pinned by tag', ONCE, () => {
  assert.equal(stages.length, 2, 'a build stage and a runtime stage');
  assert.ok(buildStage.name, 'the build stage is named (COPY --from=NAME)');
  for (const s of stages) {
    assert.match(s.image, /^debian:12-slim(@sha256:[0-9a-f]{64})?$/, `FROM ${s.image}`);
  }
  assert.equal(ops(runtime, 'ADD').length + ops(buildStage, 'ADD').length, 0, 'COPY, not ADD');
});

test('.dockerignore keeps build output, node_modules, local data and .git out', ONCE, () => {
  for (const p of ['build/starforge', 'build/sanitize/starforge', 'node_modules/yaml/package.json',
    'data/starforge.db', 'data/px/synthetic.csv', '.git/HEAD', 'server/x.db']) {
    assert.ok(ignored(p), `${p} is in the build context`);
  }
});

test('every COPY source exists in the build context and is not ignored', ONCE, () => {
  for (const stage of stages) {
    for (const ins of ops(stage, 'COPY')) {
      const c = parseCopy(ins.args);
      if (c.flags.from) {
        assert.equal(c.flags.from, buildStage.name, `line ${ins.line}: COPY --from a stage of this file`);
        continue;
      }
      for (const src of c.sources) {
        assert.ok(!/[*?[]/.test(src), `line ${ins.line}: ${src}: no wildcards, so that this test can follow`);
        const rel = path.posix.normalize(src).replace(/\/$/, '');
        assert.ok(!rel.startsWith('..'), `line ${ins.line}: ${src} is outside the context`);
        assert.ok(fs.existsSync(path.join(ROOT, rel)), `line ${ins.line}: COPY ${src}: no such file in the repository`);
        assert.ok(!ignored(rel), `line ${ins.line}: COPY ${src}: .dockerignore leaves it out`);
      }
    }
  }
});

test('the build stage installs every package scripts/deps.sh checks for', ONCE, () => {
  const deps = /^PACKAGES="([^"]*)"/m.exec(read('scripts/deps.sh'));
  assert.ok(deps, 'scripts/deps.sh has no PACKAGES="..." line');
  const installed = ops(buildStage, 'RUN').flatMap((r) => aptInstalls(r.args));
  for (const p of deps[1].split(/\s+/).filter(Boolean)) {
    assert.ok(installed.includes(p), `the build stage does not install ${p}, so \`make\` would try to`);
  }
});

describe('the image binary', ONCE, () => {
  let ctx; // the assembled build context, as the build stage's filesystem root
  let imageBin; // the binary the runtime stage copies, built there

  before(() => {
    ctx = tmpdir('starforge-docker-');
    let workdir = '/';
    const runs = [];
    let copied = false;
    for (const ins of buildStage.instructions) {
      if (ins.op === 'WORKDIR') workdir = path.posix.resolve(workdir, ins.args);
      if (ins.op === 'RUN' && copied) runs.push({ cmd: ins.args, cwd: workdir });
      if (ins.op !== 'COPY') continue;
      copied = true;
      const c = parseCopy(ins.args);
      const dest = path.posix.resolve(workdir, c.dest);
      for (const src of c.sources) {
        const rel = path.posix.normalize(src).replace(/\/$/, '');
        const isDir = fs.statSync(path.join(ROOT, rel)).isDirectory();
        for (const f of filesUnder(rel).filter((f) => !ignored(f))) {
          // COPY dir/ d/ puts dir's contents in d/; COPY file d/ puts file in d/.
          const to = isDir
            ? path.join(ctx, dest, path.relative(rel, f))
            : c.dest.endsWith('/') || c.sources.length > 1
              ? path.join(ctx, dest, path.basename(f))
              : path.join(ctx, dest);
          fs.mkdirSync(path.dirname(to), { recursive: true });
          fs.copyFileSync(path.join(ROOT, f), to);
          fs.chmodSync(to, fs.statSync(path.join(ROOT, f)).mode);
        }
      }
    }
    assert.ok(runs.length, 'the build stage runs nothing after its COPY lines');
    const env = cleanEnv(); // the image's build, not this session's
    for (const r of runs) {
      try {
        execFileSync('sh', ['-c', r.cmd], { cwd: path.join(ctx, r.cwd), env, stdio: 'pipe', timeout: 300_000 * SCALE });
      } catch (e) {
        assert.fail(`RUN ${r.cmd} in the assembled context failed:\n${e.stderr || ''}${e.stdout || ''}`);
      }
    }
    const from = ops(runtime, 'COPY')
      .map((i) => parseCopy(i.args))
      .find((c) => c.flags.from === buildStage.name);
    assert.ok(from, 'the runtime stage copies nothing from the build stage');
    imageBin = path.join(ctx, from.sources[0]);
  });

  test('builds from exactly what the build stage copies', () => {
    assert.ok(fs.existsSync(imageBin), `the build stage produces no ${path.relative(ctx, imageBin)}`);
    const help = execFileSync(imageBin, ['serve', '--help'], { encoding: 'utf8' });
    assert.match(help, /usage: starforge serve/);
    // The files compiled into the binary (the Makefile's MIGRATIONS,
    // ASSETS...: migrations, openapi.yaml, schemas, the dashboard) are the
    // ones the Makefile names in the repository: a missing COPY or a
    // .dockerignore pattern would drop some silently, since it globs them.
    const gen = path.join(path.dirname(imageBin), 'gen');
    const lists = fs.readdirSync(gen).filter((f) => f.endsWith('.list'));
    assert.ok(lists.length >= 2, `no embedded file lists in ${gen}`);
    for (const f of lists) {
      const name = path.basename(f, '.list').toUpperCase();
      const expected = execFileSync('make', ['-s', '--no-print-directory', '-f', 'Makefile', '-f', '-', 'sf-print'], {
        cwd: ROOT,
        env: cleanEnv(),
        input: `sf-print:\n\t@echo '$(${name})'\n`,
        encoding: 'utf8',
      });
      assert.equal(fs.readFileSync(path.join(gen, f), 'utf8').trim(), expected.trim(), `the image embeds other files (${name})`);
    }
  });

  test('the runtime stage installs what the binary links against, and only that', (t) => {
    assert.ok(runtimePackages.length, 'the runtime stage installs no package');
    const db = dpkgDatabase();
    const essential = [...db.pkgs].filter(([, p]) => p.essential).map(([n]) => n);
    const base = dependsClosure(db, [...essential, 'apt']);
    for (const p of runtimePackages) assert.ok(db.pkgs.has(p), `${p} is not a Debian package installed here`);
    const covered = dependsClosure(db, [...runtimePackages, ...base]);

    const bins = [imageBin];
    if (/sanitize/.test(BIN)) t.diagnostic(`${BIN} is a sanitizer build: checking the image's binary only`);
    else bins.push(BIN);
    const linked = new Set();
    for (const bin of bins) {
      const { direct, all } = linkedPackages(bin);
      for (const lib of direct) {
        linked.add(lib.pkg);
        assert.ok(
          runtimePackages.includes(lib.pkg) || base.has(lib.pkg),
          `${bin} links ${lib.soname} (${lib.file}, package ${lib.pkg}): the runtime stage must install ${lib.pkg}`,
        );
      }
      for (const lib of all) {
        linked.add(lib.pkg);
        assert.ok(
          covered.has(lib.pkg),
          `${bin} loads ${lib.soname} (package ${lib.pkg}), which neither the slim base nor the runtime packages bring`,
        );
      }
    }
    for (const p of runtimePackages) {
      assert.ok(linked.has(p), `the runtime stage installs ${p}, which the binary does not link against`);
    }
  });
});

test('the runtime stage: non-root numeric USER owning /data, VOLUME, ENV, EXPOSE, ENTRYPOINT', ONCE, () => {
  const user = last(runtime, 'USER')?.args;
  assert.ok(user, 'no USER: the server would run as root');
  const [uid, gid] = user.split(':');
  assert.match(uid, /^\d+$/, `USER ${user}: numeric, so that runAsNonRoot can verify it`);
  assert.notEqual(Number(uid), 0, 'USER is root');
  const runs = ops(runtime, 'RUN').map((r) => r.args).join('\n');
  assert.match(runs, new RegExp(`useradd\\b[^\\n]*--uid ${uid}\\b`), `no user with uid ${uid} is created`);
  assert.match(runs, new RegExp(`chown ${uid}(:${gid ?? '\\d+'})? /data\\b`), `/data does not belong to ${user}`);

  const volumes = ops(runtime, 'VOLUME').flatMap((v) => execForm(v.args) || v.args.split(/\s+/));
  assert.deepEqual(volumes, ['/data']);
  assert.ok(imageEnv.STARFORGE_DB?.startsWith('/data/'), `STARFORGE_DB=${imageEnv.STARFORGE_DB} is not on the volume`);
  const listen = /^0\.0\.0\.0:(\d+)$/.exec(imageEnv.STARFORGE_LISTEN || '');
  assert.ok(listen, `STARFORGE_LISTEN=${imageEnv.STARFORGE_LISTEN}: every interface of the container, a fixed port`);
  assert.deepEqual(ops(runtime, 'EXPOSE').map((e) => e.args), [listen[1]]);

  const entry = execForm(last(runtime, 'ENTRYPOINT')?.args || '');
  assert.deepEqual(entry, ['/usr/local/bin/starforge', 'serve'], 'exec-form ENTRYPOINT: starforge serve is PID 1');
  const bin = ops(runtime, 'COPY').map((i) => parseCopy(i.args)).find((c) => c.flags.from);
  assert.equal(bin.dest, entry[0], 'the ENTRYPOINT is the binary the build stage made');
  const cmd = last(runtime, 'CMD');
  assert.ok(!cmd || execForm(cmd.args), 'CMD, if any, is exec form');
  const stop = last(runtime, 'STOPSIGNAL');
  assert.ok(!stop || stop.args === 'SIGTERM', 'the server stops gracefully on SIGTERM');
});

describe("the image's command line and environment", ONCE, () => {
  const server = { log: '' };
  let data;

  before(async () => {
    data = tmpdir('starforge-data-');
    server.port = await freePort();
    // ENTRYPOINT and ENV as the image has them, /data and the port swapped
    // for a temporary folder and a free loopback port.
    const env = { PATH: process.env.PATH };
    for (const [k, v] of Object.entries(imageEnv)) env[k] = v.replace(/^\/data\//, data + '/');
    env.STARFORGE_LISTEN = `127.0.0.1:${server.port}`;
    server.env = env;
    const entry = execForm(last(runtime, 'ENTRYPOINT').args);
    const cwd = path.posix.resolve('/', last(runtime, 'WORKDIR')?.args || '/') === '/data' ? data : ROOT;
    server.proc = spawn(BIN, entry.slice(1), { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    server.exit = new Promise((resolve) => server.proc.on('exit', (code, signal) => resolve({ code, signal })));
    server.proc.stderr.setEncoding('utf8');
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening within ${10 * SCALE} s:\n${server.log}`)), 10_000 * SCALE);
      server.proc.stderr.on('data', (chunk) => {
        server.log += chunk;
        if (server.log.includes(`serve: listening on http://127.0.0.1:${server.port}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      server.proc.on('exit', () => reject(new Error(`exited before listening:\n${server.log}`)));
      server.proc.on('error', reject);
    });
  });

  after(() => {
    if (server.proc && server.proc.exitCode === null && !server.proc.signalCode) server.proc.kill('SIGKILL');
  });

  test('start the server on STARFORGE_LISTEN with its database at STARFORGE_DB', async () => {
    assert.ok(fs.existsSync(server.env.STARFORGE_DB), `${server.env.STARFORGE_DB} was not created`);
    const res = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    assert.equal(res.status, 200);
  });

  test('HEALTHCHECK runs the health check script, which asks for /healthz', () => {
    const { cmd, options } = healthcheckCmd();
    assert.match(options, /--interval=\d+s/);
    assert.match(options, /--timeout=\d+s/);
    const script = contextSourceOf(cmd.at(-1));
    assert.ok(script, `HEALTHCHECK runs ${cmd.at(-1)}, which no COPY brings from the context`);
    assert.match(read(script), /GET \/healthz HTTP\/1\.1/);
    assert.equal(cmd[0], '/bin/bash', 'the script needs bash (/dev/tcp), which the slim base has');
  });

  test('the health check passes against the running server (0.0.0.0 meaning loopback)', async () => {
    const r = await runHealthcheck({ STARFORGE_LISTEN: `0.0.0.0:${server.port}` });
    assert.equal(r.code, 0, r.err);
    await new Promise((resolve) => setTimeout(resolve, 400)); // stderr is flushed four times a second
    assert.match(server.log, /http GET \/healthz 200 /, 'the request reached the server');
  });

  test('the health check fails on a closed port and on a 503', async () => {
    const closed = await runHealthcheck({ STARFORGE_LISTEN: `0.0.0.0:${await freePort()}` });
    assert.equal(closed.code, 1);
    assert.match(closed.err, /cannot connect/);

    const sick = http.createServer((req, res) => {
      res.statusCode = req.url === '/healthz' ? 503 : 404;
      res.end('{}');
    });
    await new Promise((resolve) => sick.listen(0, '127.0.0.1', resolve));
    try {
      const r = await runHealthcheck({ STARFORGE_LISTEN: `127.0.0.1:${sick.address().port}` });
      assert.equal(r.code, 1);
      assert.match(r.err, /503/);
    } finally {
      sick.close();
    }
  });

  test('SIGTERM (docker stop) stops it cleanly: exit 0', async () => {
    server.proc.kill('SIGTERM');
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 10_000 * SCALE));
    const exit = await Promise.race([server.exit, timeout]);
    assert.deepEqual(exit, { code: 0, signal: null }, server.log);
    assert.match(server.log, /serve: stopped/);
  });
});

describe('docker/compose.yaml and docker/starforge.env', ONCE, () => {
  const compose = YAML.parse(read('docker/compose.yaml'));
  const services = Object.values(compose.services || {});
  const svc = services[0];
  const envFile = Object.fromEntries(
    read('docker/starforge.env')
      .split('\n')
      .filter((l) => l.trim() && !l.trim().startsWith('#'))
      .map((l) => {
        const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(l.trim());
        assert.ok(m, `starforge.env: not KEY=VALUE: ${l}`);
        return [m[1], m[2]];
      }),
  );
  const containerPort = /:(\d+)$/.exec(envFile.STARFORGE_LISTEN || imageEnv.STARFORGE_LISTEN)[1];

  test('one service built from this Dockerfile, its settings from starforge.env', () => {
    assert.equal(services.length, 1);
    const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build;
    assert.equal(path.resolve(ROOT, 'docker', build.context), ROOT, 'the build context is the repository');
    assert.ok(fs.existsSync(path.join(ROOT, 'docker', build.context, build.dockerfile || 'Dockerfile')));
    const files = [svc.env_file].flat().map((f) => (typeof f === 'string' ? f : f.path));
    assert.deepEqual(files, ['starforge.env']);
  });

  test('the database on a named volume mounted at /data', () => {
    const mounts = (svc.volumes || []).map((v) => (typeof v === 'string' ? { source: v.split(':')[0], target: v.split(':')[1] } : v));
    const data = mounts.find((m) => m.target === '/data');
    assert.ok(data, 'nothing is mounted at /data');
    assert.ok(compose.volumes && data.source in compose.volumes, `${data.source} is not a named volume of the file`);
    assert.ok((envFile.STARFORGE_DB ?? imageEnv.STARFORGE_DB).startsWith('/data/'), 'STARFORGE_DB is not on the volume');
  });

  test('the published port is the one the server listens on, and the image exposes', () => {
    const ports = (svc.ports || []).map((p) => (typeof p === 'string' ? p : `${p.published}:${p.target}`));
    assert.equal(ports.length, 1);
    assert.equal(ports[0].split(':').at(-1), containerPort);
    assert.deepEqual(ops(runtime, 'EXPOSE').map((e) => e.args), [containerPort]);
  });

  test("the health check is the image's, a graceful stop and a restart policy", () => {
    assert.deepEqual(svc.healthcheck?.test, ['CMD', ...healthcheckCmd().cmd]);
    for (const k of ['interval', 'timeout', 'retries']) assert.ok(svc.healthcheck[k], `healthcheck.${k}`);
    const grace = /^(\d+)s$/.exec(svc.stop_grace_period || '');
    assert.ok(grace && Number(grace[1]) >= 10, `stop_grace_period ${svc.stop_grace_period}: at least 10s`);
    assert.ok(!svc.stop_signal || svc.stop_signal === 'SIGTERM');
    assert.ok(['always', 'unless-stopped', 'on-failure'].some((p) => String(svc.restart).startsWith(p)));
    assert.ok(!svc.init, 'starforge is PID 1 itself (no init in between)');
  });

  test('starforge.env names every variable `starforge serve` reads; set ones agree with the image', () => {
    assert.ok(SERVE_VARS.length >= 6, `cmd_serve.c reads ${SERVE_VARS}`);
    const text = read('docker/starforge.env');
    for (const v of SERVE_VARS) assert.match(text, new RegExp(`^#?${v}=\\S`, 'm'), `${v} is missing`);
    for (const [k, v] of Object.entries(envFile)) {
      assert.ok(SERVE_VARS.includes(k), `${k} is not read by starforge serve`);
      if (k in imageEnv) assert.equal(v, imageEnv[k], `${k} differs from the Dockerfile's ENV`);
    }
  });

  test('docs/operations.md describes every option and variable', () => {
    const doc = read('docs/operations.md');
    assert.ok(SERVE_OPTIONS.length >= 6, `cmd_serve.c has options ${SERVE_OPTIONS}`);
    for (const x of [...SERVE_OPTIONS, ...SERVE_VARS]) assert.ok(doc.includes(`\`${x}`), `${x} is not in the table`);
  });
});

describe('docker/compose.scale.yaml and docker/nginx.conf (the scale-out set-up)', ONCE, () => {
  // Compose merges YAML anchors (`<<: *node`); so does this parse.
  const scale = YAML.parse(read('docker/compose.scale.yaml'), { merge: true });
  const single = YAML.parse(read('docker/compose.yaml'));
  const services = scale.services || {};
  const image = Object.values(single.services)[0].image;
  const nodeNames = Object.keys(services).filter((n) => services[n].image === image);
  const nodes = nodeNames.map((n) => services[n]);
  const nginxName = Object.keys(services).find((n) => /^nginx(:|$)/.test(services[n].image || ''));
  const pgName = Object.keys(services).find((n) => /^postgres(:|$)/.test(services[n].image || ''));
  const nginx = services[nginxName];
  const pg = services[pgName];
  /** A service's environment as an object, from the map or the KEY=VALUE list form. */
  const envOfService = (svc) =>
    Array.isArray(svc.environment)
      ? Object.fromEntries(svc.environment.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]))
      : { ...(svc.environment || {}) };
  const mountsOf = (svc) =>
    (svc.volumes || []).map((v) => {
      if (typeof v !== 'string') return { source: v.source, target: v.target, type: v.type, ro: !!v.read_only };
      const [source, target, mode = ''] = v.split(':');
      return { source, target, ro: mode.split(',').includes('ro') };
    });
  const conf = read('docker/nginx.conf').replace(/#.*$/gm, '');
  const listenPort = (env) => /:(\d+)$/.exec(env.STARFORGE_LISTEN || imageEnv.STARFORGE_LISTEN)[1];

  test('PostgreSQL (15, Debian-based), three starforge nodes of one image, nginx; nothing else', () => {
    assert.ok(pg, 'no postgres service');
    assert.match(pg.image, /^postgres:15(\.\d+)?(-bookworm|-bullseye)?$/, `${pg.image}: the Debian-based PostgreSQL 15 image`);
    assert.ok(nginx, 'no nginx service');
    assert.equal(nodes.length, 3, `services of image ${image}: ${nodeNames}`);
    assert.deepEqual(Object.keys(services).sort(), [pgName, nginxName, ...nodeNames].sort());
    for (const [name, svc] of Object.entries(services)) {
      assert.ok(['always', 'unless-stopped', 'on-failure'].some((p) => String(svc.restart).startsWith(p)), `${name}: a restart policy`);
    }
  });

  test('the nodes: built from this Dockerfile, one database on the postgres service, distinct names', () => {
    const names = [];
    for (const [i, svc] of nodes.entries()) {
      const name = nodeNames[i];
      const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build;
      assert.ok(build, `${name} has no build: \`up --build\` would not build the image`);
      assert.equal(path.resolve(ROOT, 'docker', build.context), ROOT, `${name}: the build context is the repository`);
      assert.equal(build.dockerfile || 'Dockerfile', 'Dockerfile');
      const env = envOfService(svc);
      const uri = new URL(env.STARFORGE_DB || '');
      assert.match(uri.protocol, /^postgres(ql)?:$/, `${name}: STARFORGE_DB=${env.STARFORGE_DB} is not a PostgreSQL URI`);
      assert.equal(uri.hostname, pgName, `${name}: STARFORGE_DB names ${uri.hostname}, not the ${pgName} service`);
      assert.equal(uri.password, '', `${name}: a password in STARFORGE_DB ends up in the node's log; use PGPASSWORD`);
      const pgEnv = envOfService(pg);
      assert.equal(decodeURIComponent(uri.username), pgEnv.POSTGRES_USER, `${name}: the database user`);
      assert.equal(uri.pathname.slice(1), pgEnv.POSTGRES_DB, `${name}: the database`);
      assert.equal(env.PGPASSWORD, pgEnv.POSTGRES_PASSWORD, `${name}: the password libpq sends (PGPASSWORD) is the server's`);
      assert.equal(env.STARFORGE_DB, envOfService(nodes[0]).STARFORGE_DB, 'every node shares one database');
      assert.ok(env.STARFORGE_NODE, `${name}: no STARFORGE_NODE`);
      names.push(env.STARFORGE_NODE);
      for (const k of Object.keys(env).filter((k) => k.startsWith('STARFORGE_'))) {
        assert.ok(SERVE_VARS.includes(k), `${name}: ${k} is not read by starforge serve`);
      }
      assert.equal(svc.depends_on?.[pgName]?.condition, 'service_healthy', `${name} starts before the database is ready`);
      assert.deepEqual(svc.healthcheck?.test, ['CMD', ...healthcheckCmd().cmd], `${name}: the image's health check`);
      assert.ok(!svc.ports, `${name} publishes ${JSON.stringify(svc.ports)}: only nginx is published`);
      assert.ok(!svc.network_mode, `${name}: on the project's network`);
      assert.ok(/^(\d+)s$/.test(svc.stop_grace_period || '') && svc.stop_grace_period !== '0s', `${name}: a stop grace period`);
      const [files] = [[svc.env_file].flat().map((f) => (typeof f === 'string' ? f : f.path))];
      assert.deepEqual(files, ['starforge.env'], `${name}: the settings of starforge.env`);
    }
    assert.equal(new Set(names).size, 3, `node names ${names} are not distinct`);
    for (const n of names) assert.match(n, /^[A-Za-z0-9._:-]{1,40}$/, `--node ${n}: 1..40 of A-Z a-z 0-9 . _ : -`);
  });

  test('postgres: the data on a named volume, a pg_isready health check, not published', () => {
    const data = mountsOf(pg).find((m) => m.target === '/var/lib/postgresql/data');
    assert.ok(data, 'nothing is mounted at /var/lib/postgresql/data: the database would go with the container');
    assert.ok(scale.volumes && data.source in scale.volumes, `${data.source} is not a named volume of the file`);
    const hc = [pg.healthcheck?.test].flat().join(' ');
    assert.match(hc, /\bpg_isready\b/, 'the health check is pg_isready');
    for (const k of ['interval', 'timeout', 'retries']) assert.ok(pg.healthcheck[k], `healthcheck.${k}`);
    assert.ok(!pg.ports, 'the database is published');
    const env = envOfService(pg);
    for (const k of ['POSTGRES_USER', 'POSTGRES_DB', 'POSTGRES_PASSWORD']) assert.ok(env[k], `postgres: ${k}`);
  });

  test('nginx: docker/nginx.conf mounted read-only, the only published port, its upstream the three nodes', () => {
    const mount = mountsOf(nginx).find((m) => m.target === '/etc/nginx/nginx.conf');
    assert.ok(mount, 'nginx.conf is not mounted at /etc/nginx/nginx.conf');
    assert.equal(path.resolve(ROOT, 'docker', mount.source), path.join(ROOT, 'docker/nginx.conf'));
    assert.ok(mount.ro, 'nginx.conf is mounted writable');
    const ports = (nginx.ports || []).map((p) => (typeof p === 'string' ? p : `${p.host_ip ? p.host_ip + ':' : ''}${p.published}:${p.target}`));
    assert.equal(ports.length, 1);
    assert.match(ports[0], /^127\.0\.0\.1:\d+:\d+$/, `${ports[0]}: the host's loopback only`);
    const listen = [...conf.matchAll(/^\s*listen\s+(?:[\d.]+:)?(\d+)\s*;/gm)].map((m) => m[1]);
    assert.deepEqual(listen, [ports[0].split(':').at(-1)], 'the published container port is what nginx.conf listens on');
    // The upstream: exactly the node services, on the port they listen on.
    const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(conf);
    assert.ok(upstream, 'nginx.conf has no upstream block');
    const servers = [...upstream[2].matchAll(/^\s*server\s+([^\s;]+)/gm)].map((m) => m[1]).sort();
    const expected = nodes.map((svc, i) => `${nodeNames[i]}:${listenPort({ ...envFileOf(svc), ...envOfService(svc) })}`).sort();
    assert.deepEqual(servers, expected);
    const passes = [...conf.matchAll(/proxy_pass\s+http:\/\/(\w+)\s*;/g)].map((m) => m[1]);
    assert.ok(passes.length >= 1 && passes.every((p) => p === upstream[1]), `proxy_pass goes to ${passes}, not to the upstream ${upstream[1]}`);
    // It starts after the nodes are up, so that their names resolve.
    for (const n of nodeNames) assert.ok(nginx.depends_on && n in (Array.isArray(nginx.depends_on) ? Object.fromEntries(nginx.depends_on.map((d) => [d, 1])) : nginx.depends_on), `nginx does not depend on ${n}`);
    // Everything nginx writes is under /var/cache/nginx, which is mounted
    // writable, so the read-only root file system holds.
    if (nginx.read_only) {
      const writable = [...(nginx.tmpfs ? [nginx.tmpfs].flat() : []), ...mountsOf(nginx).filter((m) => !m.ro && m.target !== '/etc/nginx/nginx.conf').map((m) => m.target)];
      assert.ok(writable.some((t) => String(t).split(':')[0] === '/var/cache/nginx'), 'read_only without a writable /var/cache/nginx');
      const paths = [...conf.matchAll(/^\s*(?:pid|\w+_temp_path|proxy_cache_path)\s+(\S+)/gm)].map((m) => m[1]);
      assert.ok(paths.length >= 7);
      for (const p of paths) assert.ok(p.startsWith('/var/cache/nginx/'), `nginx writes ${p}, outside /var/cache/nginx`);
    }
  });

  test("nginx.conf: the nodes' body limit, POST never retried, the event stream unbuffered, only immutable answers cached", () => {
    // 64 KiB: cmd_serve.c's max_body.
    const maxBody = /cfg\.max_body\s*=\s*([\d\s*]+);/.exec(SERVE_SRC);
    assert.ok(maxBody, 'cmd_serve.c sets no cfg.max_body');
    const bytes = maxBody[1].split('*').reduce((a, b) => a * Number(b.trim()), 1);
    const cmbs = /client_max_body_size\s+(\d+)([km]?)\s*;/i.exec(conf);
    assert.ok(cmbs, 'no client_max_body_size');
    assert.equal(Number(cmbs[1]) * { '': 1, k: 1024, m: 1048576 }[cmbs[2].toLowerCase()], bytes, 'client_max_body_size is not the nodes\' body limit');
    const nextUpstream = [...conf.matchAll(/proxy_next_upstream\s+([^;]+);/g)].map((m) => m[1]);
    assert.ok(nextUpstream.length, 'no proxy_next_upstream');
    for (const v of nextUpstream) assert.ok(!/non_idempotent/.test(v), 'a POST already sent would be sent again to another node');
    assert.match(conf, /proxy_http_version\s+1\.1\s*;/);
    assert.match(conf, /proxy_set_header\s+Connection\s+""\s*;/);
    assert.match(conf, /^\s*keepalive\s+\d+\s*;/m, 'no keep-alive to the nodes');
    const events = /location\s+~\s+\^\/v1\/jobs\/\[\^\/\]\+\/events\$\s*\{([^}]*)\}/.exec(conf);
    assert.ok(events, 'no location for the event streams');
    assert.match(events[1], /proxy_buffering\s+off\s*;/);
    assert.match(events[1], /proxy_cache\s+off\s*;/);
    // The cache is on for the immutable routes only.
    const cached = [...conf.matchAll(/location\s+([^{]+)\{([^}]*)\}/g)].filter((m) => /proxy_cache\s+(?!off)\w+\s*;/.test(m[2]));
    assert.ok(cached.length >= 1, 'nothing is cached');
    for (const [, where, body] of cached) {
      assert.match(where.trim(), /levels/, `the cache is on for ${where.trim()}`);
      assert.match(body, /proxy_cache_bypass[^;]*\$http_authorization/, 'a request with credentials may be served from the cache');
      assert.match(body, /proxy_no_cache[^;]*\$http_authorization/, 'an answer to a request with credentials may be stored');
    }
    assert.match(conf, /add_header\s+X-Cache-Status\s+\$upstream_cache_status/);
  });
});

/** The env_file variables of a compose service (paths relative to docker/). */
function envFileOf(svc) {
  const env = {};
  for (const f of [svc.env_file || []].flat().map((x) => (typeof x === 'string' ? x : x.path))) {
    for (const l of read(path.join('docker', f)).split('\n')) {
      const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(l.trim());
      if (m) env[m[1]] = m[2];
    }
  }
  return env;
}
