// svg.test.mjs - the pictures over real HTTP: a level of each kind made by a
// job, fetched at GET /v1/levels/{id}.svg and through `Accept:
// image/svg+xml` on GET /v1/levels/{id} (JSON on a tie, Vary: Accept on
// both), parsed by fast-xml-parser's validator with a root <svg> that has
// width, height and a matching viewBox, the same bytes every time, a strong
// ETag and 304; the evaluation picture at
// GET /v1/evaluations/{lattice}/{sequence}.svg; 404 and 400 problems; a
// lattice level's fold for each star at ?star=1|2|3, and the 400s of star.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { XMLParser, XMLValidator } from 'fast-xml-parser';

import { assertProblem, assertValid, request, submit, useServer, waitForJob } from './harness.mjs';

const server = useServer({ args: ['--workers', '3'] });

const SVG = 'image/svg+xml';
const IMMUTABLE = 'public, max-age=31536000, immutable';

const JOBS = {
  lattice: { kind: 'lattice', seed: 5, params: { length: 12, generations: 4 } },
  racetrack: { kind: 'racetrack', seed: 5, params: { population: 6, generations: 2 } },
  digger: { kind: 'digger', seed: 5, params: { difficulty: 'hard', gold_in_order: true } },
};

/** Runs `job` to success; resolves with its first level (the JSON document). */
const made = new Map();
function firstLevel(job) {
  if (!made.has(job)) made.set(job, makeLevel(job));
  return made.get(job);
}

async function makeLevel(job) {
  const accepted = await submit(server, job);
  const done = await waitForJob(server, accepted.id, { timeoutMs: 60_000 });
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  const res = await request(server, `/v1/levels/${done.level_ids[0]}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/**
 * Asserts a 200 SVG answer: the media type, well-formed XML (the validator
 * reports the line of the first error), one root <svg> with width, height and
 * viewBox "0 0 width height". Returns the parsed root.
 */
function assertSvg(res, what) {
  assert.equal(res.status, 200, `${what}: ${res.text.slice(0, 300)}`);
  assert.equal(res.headers.get('content-type'), SVG, what);
  const valid = XMLValidator.validate(res.text);
  assert.equal(valid, true, `${what}: not well-formed: ${JSON.stringify(valid)}`);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(res.text);
  const roots = Object.keys(doc).filter((k) => k !== '?xml');
  assert.deepEqual(roots, ['svg'], `${what}: the root is not one <svg>`);
  const { width, height, viewBox, xmlns } = doc.svg;
  assert.equal(xmlns, 'http://www.w3.org/2000/svg');
  assert.ok(Number(width) > 0 && Number(height) > 0, `${what}: size ${width} x ${height}`);
  assert.equal(viewBox, `0 0 ${width} ${height}`);
  assert.match(res.headers.get('etag') || '', /^"[0-9a-f]{32}(-gz)?"$/);
  return doc.svg;
}

const count = (text, needle) => text.split(needle).length - 1;

/** What the picture must hold for the level it draws. */
const CONTENTS = {
  lattice(level, text) {
    assert.equal(count(text, 'class="res '), level.puzzle.sequence.length);
    assert.equal(count(text, 'class="bar"'), level.stats.histogram.length);
    assert.equal(count(text, 'class="band"'), level.stars.thresholds ? 3 : 0);
  },
  racetrack(level, text) {
    assert.equal(count(text, 'class="road"'), 1);
    assert.equal(count(text, 'class="seg"'), level.puzzle.segments.length);
    assert.equal(count(text, 'class="checkpoint"'), level.puzzle.checkpoints.length - 1);
  },
  digger(level, text) {
    const p = level.puzzle;
    assert.equal(count(text, 'class="machine"'), p.machines.length);
    assert.equal(count(text, 'class="gold"'), p.gold.length);
    assert.equal(count(text, 'class="cell '), p.width * p.height);
    const shown = p.arrows.filter((a) => a.uses > 0).length;
    assert.equal(count(text, 'class="arrow"'), shown);
    assert.equal(count(text, 'class="arrow hidden"'), 2 * (p.width + p.height) - shown);
  },
};

for (const [kind, job] of Object.entries(JOBS)) {
  test(`${kind}: the level's picture at .svg and through Accept, stable, cached, 304`, async () => {
    const level = await firstLevel(job);
    assertValid('level', level);
    const path = `/v1/levels/${level.id}`;

    const first = await request(server, `${path}.svg`);
    assertSvg(first, `${kind} .svg`);
    assert.equal(first.headers.get('cache-control'), IMMUTABLE);
    CONTENTS[kind](level, first.text);
    const again = await request(server, `${path}.svg`);
    assert.equal(again.text, first.text, 'the same bytes twice');
    assert.equal(again.headers.get('etag'), first.headers.get('etag'));

    // Content negotiation on the level's own URL.
    const negotiated = await request(server, path, { headers: { accept: SVG } });
    assertSvg(negotiated, `${kind} Accept: ${SVG}`);
    assert.equal(negotiated.text, first.text);
    assert.equal(negotiated.headers.get('etag'), first.headers.get('etag'));
    assert.match(negotiated.headers.get('vary') || '', /\baccept\b/i);
    for (const accept of ['image/*', 'application/json;q=0.5, image/svg+xml']) {
      const res = await request(server, path, { headers: { accept } });
      assert.equal(res.headers.get('content-type'), SVG, `Accept: ${accept}`);
    }
    for (const accept of [
      '*/*',
      'application/json',
      'application/json, image/svg+xml',
      'text/html, application/json;q=0.9, image/svg+xml;q=0.5',
      'image/svg+xml;q=0, */*',
    ]) {
      const res = await request(server, path, { headers: { accept } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json', `Accept: ${accept}`);
      assert.match(res.headers.get('vary') || '', /\baccept\b/i);
      assert.deepEqual(res.body, level);
      assert.notEqual(res.headers.get('etag'), first.headers.get('etag'));
    }

    // Conditional requests on both URLs.
    const etag = first.headers.get('etag');
    const notModified = await request(server, `${path}.svg`, { headers: { 'if-none-match': etag } });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.text, '');
    assert.equal(notModified.headers.get('etag'), etag);
    const viaAccept = await request(server, path, { headers: { accept: SVG, 'if-none-match': etag } });
    assert.equal(viaAccept.status, 304);
    assert.match(viaAccept.headers.get('vary') || '', /\baccept\b/i);
    const head = await request(server, `${path}.svg`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), SVG);
    assert.equal(head.text, '');
  });
}

test('a level that does not exist: 404 problem for its picture', async () => {
  const missing = 'lat_00000000000000000000000000000000';
  assertProblem(await request(server, `/v1/levels/${missing}.svg`), 404, 'not-found');
  assertProblem(await request(server, `/v1/levels/${missing}`, { headers: { accept: SVG } }), 404, 'not-found');
});

test('the evaluation picture: the histogram with its star bands, stable, 304', async () => {
  for (const [lattice, seq] of [
    ['square', 'HPHPPHHPHPPHPHHP'],
    ['cubic', 'HPHHPPHHH'],
  ]) {
    const path = `/v1/evaluations/${lattice}/${seq}`;
    const json = await request(server, path);
    assert.equal(json.status, 200, json.text);
    assertValid('evaluation', json.body);
    const first = await request(server, `${path}.svg`);
    assertSvg(first, `${path}.svg`);
    assert.equal(first.headers.get('cache-control'), 'public, max-age=86400');
    assert.equal(count(first.text, 'class="bar"'), json.body.histogram.length);
    assert.equal(count(first.text, 'class="band"'), json.body.stars.thresholds ? 3 : 0);
    assert.equal(count(first.text, 'class="res '), seq.length);
    const again = await request(server, `${path}.svg`);
    assert.equal(again.text, first.text);
    const etag = first.headers.get('etag');
    const notModified = await request(server, `${path}.svg`, { headers: { 'if-none-match': etag } });
    assert.equal(notModified.status, 304);
    // Another star rule draws other bands: another picture.
    const percentile = await request(server, `${path}.svg?stars=percentile`);
    assertSvg(percentile, `${path}.svg?stars=percentile`);
  }
  // A sequence evaluated for the first time by its picture.
  const fresh = await request(server, '/v1/evaluations/square/HHPPHPHHPH.svg');
  assertSvg(fresh, 'fresh evaluation');
  assertProblem(await request(server, '/v1/evaluations/square/HPXH.svg'), 400, 'invalid-request');
  assertProblem(await request(server, '/v1/evaluations/hexagonal/HPHH.svg'), 400, 'invalid-request');
});

test('a lattice level at ?star=1|2|3: the fold of each star, its own cached picture; star 3 is the default', async () => {
  const level = await firstLevel(JOBS.lattice);
  const t = level.stars.thresholds;
  assert.ok(Array.isArray(t), 'the lattice job gives a level with star bands');
  const path = `/v1/levels/${level.id}.svg`;
  const dflt = await request(server, path);
  assertSvg(dflt, 'default');
  const words = ['One', 'Two', 'Three'];
  const pics = [];
  for (const star of [1, 2, 3]) {
    const res = await request(server, `${path}?star=${star}`);
    assertSvg(res, `star ${star}`);
    assert.equal(res.headers.get('cache-control'), IMMUTABLE);
    CONTENTS.lattice(level, res.text);
    // The fold of `star` stars scores its threshold: one dotted HH contact each.
    assert.equal(count(res.text, 'class="contact"'), t[star - 1], `star ${star}`);
    assert.ok(res.text.includes(`>${words[star - 1]}-star fold: ${t[star - 1]} HH contacts<`), `star ${star} caption`);
    const again = await request(server, `${path}?star=${star}`);
    assert.equal(again.text, res.text);
    const etag = res.headers.get('etag');
    assert.equal(again.headers.get('etag'), etag);
    const notModified = await request(server, `${path}?star=${star}`, { headers: { 'if-none-match': etag } });
    assert.equal(notModified.status, 304);
    pics.push(res);
  }
  // The thresholds rise, so the three folds differ, and so do their pictures.
  assert.notEqual(level.solution.band_folds.one, level.solution.band_folds.two);
  assert.notEqual(pics[0].text, pics[1].text);
  assert.notEqual(pics[1].text, pics[2].text);
  assert.notEqual(pics[0].headers.get('etag'), pics[2].headers.get('etag'));
  assert.equal(pics[2].text, dflt.text, 'star 3 is the default picture');
  assert.ok(dflt.text.includes(`>Three-star fold: ${t[2]} HH contacts<`));
});

test('?star: 400 invalid-query naming star for a bad value, a repeat, another name or a kind without the choice', async () => {
  const lattice = await firstLevel(JOBS.lattice);
  const path = `/v1/levels/${lattice.id}.svg`;
  for (const bad of ['0', '4', 'two', '1.5', '', ' 1', '01', '3x', '-1']) {
    const problem = assertProblem(await request(server, `${path}?star=${encodeURIComponent(bad)}`), 400, 'invalid-query');
    assert.ok(problem.detail.includes(`star '${bad}'`), problem.detail);
    assert.match(problem.detail, /allowed: 1, 2, 3/);
  }
  // Checked before the level is read: a missing level with a bad star is a 400 too.
  assertProblem(await request(server, '/v1/levels/lat_00000000000000000000000000000000.svg?star=9'), 400, 'invalid-query');
  assertProblem(await request(server, '/v1/levels/lat_00000000000000000000000000000000.svg?star=2'), 404, 'not-found');
  const repeated = assertProblem(await request(server, `${path}?star=1&star=2`), 400, 'invalid-query');
  assert.match(repeated.detail, /'star' is given more than once/);
  const unknown = assertProblem(await request(server, `${path}?stars=1`), 400, 'invalid-query');
  assert.match(unknown.detail, /'stars' is unknown \(allowed: star\)/);
  for (const kind of ['digger', 'racetrack']) {
    const level = await firstLevel(JOBS[kind]);
    const problem = assertProblem(await request(server, `/v1/levels/${level.id}.svg?star=2`), 400, 'invalid-query');
    assert.match(problem.detail, new RegExp(`star '2': the picture of a ${kind} level has no choice of star`));
    // Without star the picture is there.
    assertSvg(await request(server, `/v1/levels/${level.id}.svg`), kind);
  }
});
