// Routing over the route table, over real HTTP: every POST-only route
// refuses every other method with 405 method_not_allowed and Allow: POST;
// a literal path that is also a shape of /v1/games/{id} (/export, /events)
// is that literal for every method; every path's Allow is what openapi.yaml
// gives it (GET brings HEAD), OPTIONS included. And HEAD /v1/games/{id}/analysis
// answers GET's checks and head without an engine search (the real Stockfish).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, get, post, expectProblem, rawExchange } from './http.mjs';
import { spec } from './openapi.mjs';
import { engineMetrics, startEngineServer, waitForMetrics } from './analysis_lib.mjs';

const NO_GAME = 'AAAAAAAAAAAAAAAA';
const SEARCH_MS = 6000; // the movetime a GET searches for; a HEAD must answer in a fraction of it
const HEAD_BOUND_MS = 2000; // wide: the sanitizer build on a loaded 2-core machine

let server; // Stockfish, one engine worker, --engine-max-think-ms above SEARCH_MS

before(async () => {
  server = await startEngineServer(['--engine-workers', '1', '--engine-max-think-ms', String(SEARCH_MS + 4000)]);
});
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
    const expected = [...(item.get ? ['GET', 'HEAD'] : []), ...(item.post ? ['POST'] : []),
      ...(item.delete ? ['DELETE'] : [])].sort();
    for (const method of ['PUT', 'OPTIONS']) {
      const res = await call(server, method, path);
      expectProblem(res, 405, 'method_not_allowed');
      assert.deepEqual(allowOf(res, `${method} ${path}`), expected, `${method} ${path}`);
    }
  }
});

// ---------------------------------------------------------------- HEAD of an analysis

async function newGame(body) {
  const res = await post(server, '/v1/games', { white: 'Ann', black: 'Bob', ...body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** HEAD path, timed. */
async function timedHead(path) {
  const started = performance.now();
  const res = await call(server, 'HEAD', path);
  return { res, ms: performance.now() - started };
}

test('HEAD /v1/games/{id}/analysis answers GET\'s head without a search, even while the engine is busy', async () => {
  const game = await newGame({ analysis: true }); // hints allowed while it is played
  const path = `/v1/games/${game.id}/analysis?movetime_ms=${SEARCH_MS}`;
  const before = await engineMetrics(server);
  for (let i = 0; i < 3; i++) {
    const { res, ms } = await timedHead(path);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('content-length'), null, 'a search\'s length is unknown: no Content-Length (0 would lie)');
    assert.equal(res.text, '');
    assert.ok(ms < HEAD_BOUND_MS, `HEAD took ${Math.round(ms)} ms; a search takes ${SEARCH_MS}`);
  }
  // On the wire: the head alone, not chunked (no stray last chunk), the connection closed after it.
  const { raw } = await rawExchange(server, [`HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\n`], { timeoutMs: HEAD_BOUND_MS * 2 });
  assert.match(raw, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(raw, /\r\nConnection: close\r\n/i);
  assert.doesNotMatch(raw, /\r\n(Content-Length|Transfer-Encoding):/i);
  assert.ok(raw.endsWith('\r\n\r\n') && raw.indexOf('\r\n\r\n') === raw.length - 4, `bytes after the head: ${JSON.stringify(raw)}`);
  assert.equal((await engineMetrics(server)).jobs, before.jobs, 'a HEAD ran an engine job');

  // The only engine searching for a GET, the engines' route thread taken: a HEAD does not wait for either.
  const searching = get(server, path);
  await waitForMetrics(server, (m) => m.busy === 1, 'the GET\'s search started');
  const { res, ms } = await timedHead(path);
  assert.equal(res.status, 200);
  assert.ok(ms < HEAD_BOUND_MS, `HEAD behind a busy engine took ${Math.round(ms)} ms`);
  const searched = await searching;
  assert.equal(searched.status, 200, searched.text);
  assert.equal(searched.headers.get('content-type'), res.headers.get('content-type'));
  const after = await engineMetrics(server);
  assert.equal(after.jobs, before.jobs + 1, 'only the GET ran an engine job');
  assert.equal(after.refused, before.refused);
});

test('HEAD /v1/games/{id}/analysis gives GET\'s refusals: unknown game, a game between two people, a bound', async () => {
  const before = await engineMetrics(server);
  const cases = [
    [`/v1/games/${NO_GAME}/analysis`, 404],
    [`/v1/games/${(await newGame({})).id}/analysis`, 403],
    [`/v1/games/${NO_GAME}/analysis?depth=61`, 422],
    [`/v1/games/${NO_GAME}/analysis?think=1`, 400],
  ];
  for (const [path, status] of cases) {
    const [head, got] = [await timedHead(path), await get(server, path)];
    assert.equal(head.res.status, status, `HEAD ${path}`);
    assert.equal(got.status, status, `GET ${path}`);
    assert.equal(head.res.headers.get('content-type'), got.headers.get('content-type'), path);
    assert.ok(head.ms < HEAD_BOUND_MS, `HEAD ${path} took ${Math.round(head.ms)} ms`);
  }
  // A finished game needs no search: HEAD gives the exact length of GET's answer.
  const over = await newGame({});
  const resigned = await post(server, `/v1/games/${over.id}/resign`, { expected_version: over.version },
    { headers: { authorization: `Bearer ${over.tokens.white}` } });
  assert.equal(resigned.status, 200, resigned.text);
  const mated = await newGame({ analysis: true });
  let version = mated.version;
  for (const [i, move] of ['f3', 'e5', 'g4', 'Qh4#'].entries()) {
    const token = i % 2 ? mated.tokens.black : mated.tokens.white;
    const res = await post(server, `/v1/games/${mated.id}/moves`, { move, expected_version: version }, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, res.text);
    version = res.body.version;
  }
  const path = `/v1/games/${mated.id}/analysis`;
  const [head, got] = [await call(server, 'HEAD', path), await get(server, path)];
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(got.text)));
  assert.equal((await engineMetrics(server)).jobs, before.jobs, 'no HEAD (nor a mated game\'s GET) ran an engine job');
});
