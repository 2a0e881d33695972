// Routing over the route table, over real HTTP: every POST-only route
// refuses every other method with 405 method_not_allowed and Allow: POST;
// a literal path that is also a shape of /v1/games/{id} (/export, /events)
// is that literal for every method; every path's Allow is what openapi.yaml
// gives it (GET brings HEAD), OPTIONS included.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, get, expectProblem } from './http.mjs';
import { spec } from './openapi.mjs';
import { startServer } from './server.mjs';

const NO_GAME = 'AAAAAAAAAAAAAAAA';
let server;

before(async () => { server = await startServer([]); });
after(async () => { await server?.stop(); });

const POST_ONLY = ['/v1/position/moves', '/v1/pgn', '/v1/position/analysis', '/v1/games', '/v1/games/export',
  '/v1/games/events', `/v1/games/events/${NO_GAME}/ids`, ...['moves', 'undo', 'resign', 'draw', 'takeback', 'abort']
    .map((action) => `/v1/games/${NO_GAME}/${action}`)];

/** The Allow header's methods, asserted to name each once. */
function allowOf(res, label) {
  const allow = res.headers.get('allow');
  assert.ok(allow, `${label}: no Allow header`);
  const methods = allow.split(', ');
  assert.equal(new Set(methods).size, methods.length, `${label}: Allow ${allow} names a method twice`);
  return methods.sort();
}

test('every POST-only route answers GET, PUT, DELETE, PATCH, OPTIONS and HEAD with 405 and Allow: POST', async () => {
  for (const path of POST_ONLY) {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
      const label = `${method} ${path}`;
      const res = await call(server, method, path);
      if (method === 'HEAD') {
        assert.equal(res.status, 405, label);
        assert.match(res.headers.get('content-type'), /^application\/problem\+json/, label);
      } else {
        expectProblem(res, 405, 'method_not_allowed');
      }
      assert.equal(res.headers.get('allow'), 'POST', label);
    }
  }
});

test('GET /v1/games/export and /v1/games/events are 405, not a game id (404 game_not_found)', async () => {
  for (const path of ['/v1/games/export', '/v1/games/events']) {
    const res = await get(server, path);
    expectProblem(res, 405, 'method_not_allowed');
    assert.equal(res.headers.get('allow'), 'POST', path);
  }
  // an id that merely starts like them is still an id
  expectProblem(await get(server, '/v1/games/exports'), 404, 'game_not_found');
  expectProblem(await get(server, '/v1/games/export/pgn'), 404, 'game_not_found');
});

test('every path\'s Allow is the methods openapi.yaml gives it, GET bringing HEAD; OPTIONS is 405 too', async () => {
  const { doc } = spec();
  const paths = Object.entries(doc.paths);
  assert.ok(paths.length >= 20, `only ${paths.length} paths in openapi.yaml`);
  for (const [template, item] of paths) {
    const path = template.replace(/\{[^}]+\}/g, NO_GAME);
    const expected = [...(item.get ? ['GET', 'HEAD'] : []), ...(item.post ? ['POST'] : [])].sort();
    for (const method of ['PUT', 'OPTIONS']) {
      const res = await call(server, method, path);
      expectProblem(res, 405, 'method_not_allowed');
      assert.deepEqual(allowOf(res, `${method} ${path}`), expected, `${method} ${path}`);
    }
  }
});
