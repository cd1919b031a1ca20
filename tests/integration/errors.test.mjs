// errors.test.mjs - bad requests, one table: each gets the right status and
// an RFC 9457 problem document (application/problem+json, valid against
// schema/problem.schema.json, with a stable type and title), and the service
// stays healthy (/healthz 200) after every one of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { assertProblem, getJson, request, useServer } from './harness.mjs';

const server = useServer({ args: ['--workers', '1'] });

const post = (body) => ({ method: 'POST', body, headers: { 'content-type': 'application/json' } });
const job = (fields) => post(JSON.stringify({ kind: 'lattice', ...fields }));

// [name, path, init, status, type slug, title, detail pattern]
const CASES = [
  ['malformed JSON', '/v1/jobs', post('{"kind": "lattice",'), 400, 'invalid-json', 'Malformed JSON', /not valid JSON/],
  ['an empty body', '/v1/jobs', post(''), 400, 'invalid-json', 'Malformed JSON'],
  ['a duplicate key', '/v1/jobs', post('{"kind":"lattice","kind":"lattice"}'), 400, 'invalid-json', 'Malformed JSON', /duplicate/],
  ['a JSON array body', '/v1/jobs', post('[{"kind":"lattice"}]'), 400, 'invalid-request', 'Invalid job request', /object/],
  ['a JSON string body', '/v1/jobs', post('"lattice"'), 400, 'invalid-request', 'Invalid job request'],
  ['kind: 5', '/v1/jobs', post('{"kind":5}'), 400, 'invalid-request', 'Invalid job request', /kind/],
  ['no kind', '/v1/jobs', post('{"params":{}}'), 400, 'invalid-request', 'Invalid job request', /kind/],
  ['params: []', '/v1/jobs', job({ params: [] }), 400, 'invalid-request', 'Invalid job request', /params/],
  ['seed: "x"', '/v1/jobs', job({ seed: 'x' }), 400, 'invalid-request', 'Invalid job request', /seed/],
  ['seed: -1', '/v1/jobs', job({ seed: -1 }), 400, 'invalid-request', 'Invalid job request', /seed/],
  ['seed: 1.5', '/v1/jobs', job({ seed: 1.5 }), 400, 'invalid-request', 'Invalid job request', /seed/],
  ['seed: 2^53', '/v1/jobs', post('{"kind":"lattice","seed":9007199254740992}'), 400, 'invalid-request', 'Invalid job request', /seed/],
  ['an unknown field', '/v1/jobs', job({ priority: 1 }), 400, 'invalid-request', 'Invalid job request', /priority/],
  ['an unknown kind', '/v1/jobs', post('{"kind":"maze"}'), 422, 'unknown-kind', 'Unknown level kind', /maze/],
  ['population 0', '/v1/jobs', job({ params: { population: 0 } }), 422, 'invalid-params', 'Invalid parameters', /params\.population/],
  ['length 65', '/v1/jobs', job({ params: { length: 65 } }), 422, 'invalid-params', 'Invalid parameters', /params\.length 65 .*8\.\.64/],
  ['length 30 exact', '/v1/jobs', job({ params: { length: 30, method: 'exact' } }), 422, 'invalid-params', 'Invalid parameters', /params\.length 30 .*exact.*8\.\.20/],
  ['an unknown param', '/v1/jobs', job({ params: { colour: 'red' } }), 422, 'invalid-params', 'Invalid parameters', /colour/],
  ['generations: "many"', '/v1/jobs', job({ params: { generations: 'many' } }), 422, 'invalid-params', 'Invalid parameters', /params\.generations/],
  ['elites >= population', '/v1/jobs', job({ params: { population: 4, elites: 4 } }), 422, 'invalid-params', 'Invalid parameters', /elites/],
  ['a body over 64 KiB', '/v1/jobs', post(JSON.stringify({ kind: 'lattice', pad: 'x'.repeat(70 * 1024) })), 413, 'body-too-large', 'Request body too large'],
  ['a body over 64 KiB on any route, before routing', '/healthz', post('x'.repeat(65 * 1024 + 1)), 413, 'body-too-large', 'Request body too large'],
  ['an unknown route', '/v2/jobs', {}, 404, 'not-found', 'Not found', /no route/],
  ['a trailing slash', '/v1/jobs/', {}, 404, 'not-found', 'Not found'],
  ['an unknown job', `/v1/jobs/job_${'f'.repeat(32)}`, {}, 404, 'not-found', 'No such job'],
  ['a path segment that is not UTF-8', '/v1/jobs/%FF%FE', {}, 404, 'not-found', 'No such job'],
  // PostgreSQL refuses such bytes in a query (SQLSTATE 22021): the store
  // must answer "none" itself, not a 500 (the same for the cases below).
  ['a cancel of a job id that is not UTF-8', '/v1/jobs/%FF%FE', { method: 'DELETE' }, 404, 'not-found', 'No such job'],
  ['the events of a job id that is not UTF-8', '/v1/jobs/%FF%FE/events', {}, 404, 'not-found', 'No such job'],
  ['a level id that is not UTF-8', '/v1/levels/%FF%FE', {}, 404, 'not-found', 'No such level'],
  ['the picture of a level id that is not UTF-8', '/v1/levels/%FF%FE.svg', {}, 404, 'not-found', 'No such level'],
  ['an unknown level', '/v1/levels/lat_nope', {}, 404, 'not-found', 'No such level'],
  ['page_size=0', '/v1/jobs?page_size=0', {}, 400, 'invalid-query', 'Invalid query', /page_size/],
  ['page_size=101', '/v1/levels?page_size=101', {}, 400, 'invalid-query', 'Invalid query', /page_size/],
  ['page_size=ten', '/v1/jobs?page_size=ten', {}, 400, 'invalid-query', 'Invalid query', /page_size/],
  ['an empty page_size', '/v1/jobs?page_size=', {}, 400, 'invalid-query', 'Invalid query', /page_size/],
  ['page_token=bogus', '/v1/jobs?page_token=bogus', {}, 400, 'invalid-query', 'Invalid query', /page_token/],
  ['page_token=p0', '/v1/levels?page_token=p0', {}, 400, 'invalid-query', 'Invalid query', /page_token/],
  ['page_token=pzz', '/v1/jobs?page_token=pzz', {}, 400, 'invalid-query', 'Invalid query', /page_token/],
  ['an unknown state', '/v1/jobs?state=done', {}, 400, 'invalid-query', 'Invalid query', /state/],
  ['an unknown kind in a job list', '/v1/jobs?kind=maze', {}, 400, 'invalid-query', 'Invalid query', /kind/],
  ['an unknown kind in a level list', '/v1/levels?kind=maze', {}, 400, 'invalid-query', 'Invalid query', /kind/],
  ['a min_ filter that is not a number', '/v1/levels?min_length=long', {}, 400, 'invalid-query', 'Invalid query', /min_length/],
  ['nine filters', '/v1/levels?kind=digger&difficulty=easy&width=1&height=1&turns=1&gold=1&machines=1&max_taps=1&recorded_stars=1&min_solver_states=1', {}, 400, 'invalid-query', 'Invalid query', /min_solver_states is one too many \(at most 8/],
  ['an unknown query parameter', '/v1/jobs?stat=running', {}, 400, 'invalid-query', 'Invalid query', /'stat' is unknown \(allowed: page_size, page_token, kind, state\)/],
];

for (const [name, path, init, status, slug, title, detail] of CASES) {
  test(`${name}: ${status} ${slug}`, async () => {
    const res = await request(server, path, init);
    const problem = assertProblem(res, status, slug);
    assert.equal(problem.title, title);
    if (detail) assert.match(problem.detail, detail);
    if (status !== 413) assert.equal(problem.instance, path.split('?')[0]);
    const health = await request(server, '/healthz');
    assert.equal(health.status, 200, `after ${name}`);
  });
}

// [method, path, Allow]
const WRONG_METHODS = [
  ['DELETE', '/v1/levels', 'GET, HEAD'],
  ['PUT', '/v1/jobs', 'POST, GET, HEAD'],
  ['PATCH', `/v1/jobs/job_${'0'.repeat(32)}`, 'GET, HEAD, DELETE'],
  ['POST', '/v1/levels/lat_x', 'GET, HEAD'],
  ['DELETE', '/v1/evaluations/square/HPHP', 'GET, HEAD'],
  ['POST', '/healthz', 'GET, HEAD'],
  ['POST', '/metrics', 'GET, HEAD'],
  ['PUT', '/openapi.yaml', 'GET, HEAD'],
];

for (const [method, path, allow] of WRONG_METHODS) {
  test(`${method} ${path}: 405 with Allow: ${allow}`, async () => {
    const res = await request(server, path, { method });
    const problem = assertProblem(res, 405, 'method-not-allowed');
    assert.equal(problem.title, 'Method not allowed');
    assert.equal(res.headers.get('allow'), allow);
    assert.match(problem.detail, new RegExp(`^${method} is not allowed`));
    assert.equal((await request(server, '/healthz')).status, 200);
  });
}

test('a level filter whose text is not UTF-8 matches nothing: 200 and an empty page', async () => {
  // Not a 500 on PostgreSQL, which refuses such bytes in a query.
  for (const path of ['/v1/levels?sequence=%FF', '/v1/levels?kind=lattice&sequence=%FF%FE']) {
    assert.deepEqual(await getJson(server, path), { levels: [], next_page_token: null }, path);
  }
});

test('none of the bad requests created a job', async () => {
  assert.deepEqual(await getJson(server, '/v1/jobs'), { jobs: [], next_page_token: null });
});
