// What guards a move, and what a refusal tells the client: expected_ply
// passes offers and conflicts only after a move (with current_ply), guards
// at odds are 400 conflicting_fields, a retry under its key is answered as
// before; moves are trimmed as FENs are; a malformed id's 404 says what an
// id looks like on every route that takes one. Every answer is also
// checked against openapi.yaml.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { call, get, post, expectProblem } from './http.mjs';
import { spec } from './openapi.mjs';

let server;

before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

const auth = (token, more = {}) => ({ headers: { authorization: `Bearer ${token}`, ...more } });

async function createGame() {
  const res = await post(server, '/v1/games', { white: 'Ann', black: 'Bob' });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens };
}

const change = (g, color, what, body, more) => post(server, `/v1/games/${g.id}/${what}`, body, auth(g.tokens[color], more));

async function version(g) {
  const res = await get(server, `/v1/games/${g.id}`);
  assert.equal(res.status, 200, res.text);
  return res.body.version;
}

test('a move guarded by expected_ply passes a draw offer and its decline made since: the version moved, the position did not', async () => {
  const g = await createGame();
  let res = await change(g, 'white', 'moves', { move: 'e4', expected_ply: 0 });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.move_count, 1);
  // Black saw the game here: one ply played, version 2. White offers a draw, then Black's
  // client declines it while Black thinks; the version moves twice.
  assert.equal((await change(g, 'white', 'draw', { action: 'offer', expected_version: 2 })).status, 200);
  assert.equal((await change(g, 'black', 'draw', { action: 'decline', expected_version: 3 })).status, 200);
  // As of version 2, the version is stale; the ply is not.
  const stale = expectProblem(await change(g, 'black', 'moves', { move: 'e5', expected_version: 2 }), 409, 'version_conflict');
  assert.equal(stale.current_version, 4);
  assert.equal(stale.current_ply, 1);
  res = await change(g, 'black', 'moves', { move: 'e5', expected_ply: 1 });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.move, { uci: 'e7e5', san: 'e5' });
  assert.equal(res.body.version, 5);
  assert.equal(res.body.move_count, 2);
  // An offer with the move is one change; the other side's ply-guarded reply passes it too.
  res = await change(g, 'white', 'moves', { move: 'Nf3', offer_draw: true, expected_ply: 2 });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.draw_offer, 'white');
  assert.equal((await change(g, 'black', 'moves', { move: 'Nc6', expected_ply: 3 })).status, 200);
});

test('expected_ply stale after a move: 409 version_conflict with current_ply and current_version, and the move is not made', async () => {
  const g = await createGame();
  assert.equal((await change(g, 'white', 'moves', { move: 'e4', expected_ply: 0 })).status, 200);
  assert.equal((await change(g, 'black', 'moves', { move: 'c5', expected_ply: 1 })).status, 200);
  // White's client still thinks one ply was played.
  const p = expectProblem(await change(g, 'white', 'moves', { move: 'Nf3', expected_ply: 1 }), 409, 'version_conflict');
  assert.equal(p.current_ply, 2);
  assert.equal(p.current_version, 3);
  assert.equal(p.detail, 'the game has 2 plies played, not 1 (it is at version 3)');
  const game = await get(server, `/v1/games/${g.id}`);
  assert.equal(game.body.moves.length, 2);
  assert.equal(game.body.version, 3);
  // Caught up from the refusal alone, the move is made.
  assert.equal((await change(g, 'white', 'moves', { move: 'Nf3', expected_ply: p.current_ply })).status, 200);
  // A ply ahead of the game is stale too.
  const ahead = expectProblem(await change(g, 'black', 'moves', { move: 'd6', expected_ply: 9 }), 409, 'version_conflict');
  assert.equal(ahead.current_ply, 3);
});

test('guards at odds are 400 conflicting_fields whatever the game holds, and change nothing', async () => {
  const g = await createGame();
  const refusals = [
    [{ move: 'e4', expected_ply: 0, expected_version: 1 }, {}, /expected_ply or a version \(expected_version\), not both/],
    [{ move: 'e4', expected_ply: 0 }, { 'if-match': '"1"' }, /expected_ply or a version \(If-Match\), not both/],
    [{ move: 'e4', expected_version: 1 }, { 'if-match': '"2"' }, /expected_version 1 is not a version If-Match "2" names/],
    [{ move: 'e4', expected_version: 5 }, { 'if-match': '"1", "3"' }, /expected_version 5 is not a version/],
  ];
  for (const [body, headers, detail] of refusals) {
    const p = expectProblem(await change(g, 'white', 'moves', body, headers), 400, 'conflicting_fields');
    assert.match(p.detail, detail);
  }
  // On every change, not only moves: two versions that differ.
  for (const [what, body] of [['draw', { action: 'offer' }], ['resign', {}], ['abort', {}]]) {
    expectProblem(await change(g, 'white', what, { ...body, expected_version: 1 }, { 'if-match': '"2"' }), 400, 'conflicting_fields');
  }
  assert.equal(await version(g), 1);
  // Two versions that agree are one guard; "*" agrees with any.
  assert.equal((await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }, { 'if-match': '"1"' })).status, 200);
  assert.equal((await change(g, 'black', 'moves', { move: 'e5', expected_version: 2 }, { 'if-match': '*' })).status, 200);
  // A ply guards moves only.
  expectProblem(await change(g, 'white', 'resign', { expected_ply: 2 }), 400, 'unknown_field');
  // No guard at all is still 428, and says a move may send its ply.
  const required = expectProblem(await change(g, 'white', 'moves', { move: 'Nf3' }), 428, 'precondition_required');
  assert.match(required.detail, /expected_ply/);
});

test('a retry with its Idempotency-Key and expected_ply gets the first answer, after the game moved on; another request under the key is refused', async () => {
  const g = await createGame();
  const first = await change(g, 'white', 'moves', { move: 'd4', expected_ply: 0 }, { 'idempotency-key': 'ply-0' });
  assert.equal(first.status, 200, first.text);
  assert.equal((await change(g, 'black', 'draw', { action: 'offer', expected_version: 2 })).status, 200);
  assert.equal((await change(g, 'black', 'moves', { move: 'd5', expected_ply: 1 })).status, 200);
  const again = await change(g, 'white', 'moves', { move: 'd4', expected_ply: 0 }, { 'idempotency-key': 'ply-0' });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.text, first.text);
  // The ply is part of the request: the same key with another is another request.
  expectProblem(await change(g, 'white', 'moves', { move: 'd4', expected_ply: 2 }, { 'idempotency-key': 'ply-0' }), 422,
    'idempotency_key_reused');
  // Without a key, the move sent again is stale, never made twice.
  expectProblem(await change(g, 'white', 'moves', { move: 'd4', expected_ply: 0 }), 409, 'version_conflict');
  const game = await get(server, `/v1/games/${g.id}`);
  assert.deepEqual(game.body.moves.map((m) => m.san), ['d4', 'd5']);
});

test('moves are trimmed as FENs are: blanks around a move are skipped, in a game and in a line; blanks inside still refuse it', async () => {
  const g = await createGame();
  let res = await change(g, 'white', 'moves', { move: 'e2e4 ', expected_ply: 0 });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.move, { uci: 'e2e4', san: 'e4' });
  res = await change(g, 'black', 'moves', { move: '\tNf6\r\n', expected_ply: 1 });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.move, { uci: 'g8f6', san: 'Nf6' });
  const inside = expectProblem(await change(g, 'white', 'moves', { move: 'N c3', expected_ply: 2 }), 400, 'invalid_move_text');
  assert.equal(inside.move, 'N c3');
  res = await post(server, '/v1/position/moves?legal_moves=false', { moves: [' e4', 'e7e5 ', '  Nf3\n'] });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.moves.map((m) => m.san), ['e4', 'e5', 'Nf3']);
  // The problem names the move as it was sent.
  const p = expectProblem(await post(server, '/v1/position/moves', { moves: ['e4 ', 'e2 e4'] }), 400, 'invalid_move_text');
  assert.equal(p.move_index, 1);
  assert.equal(p.move, 'e2 e4');
});

test("a malformed id's 404 says what an id looks like, on every route of openapi.yaml that takes a game id, and for a stream", async () => {
  const idForm = "an id is 16 characters of A-Z, a-z, 0-9, '-' and '_'";
  const routes = Object.entries(spec().doc.paths).filter(([route]) => route.includes('{id}'));
  assert.ok(routes.length >= 12, `only ${routes.length} routes with a game id`);
  let tried = 0;
  for (const [route, item] of routes) {
    for (const method of ['get', 'post']) {
      if (!item[method]) continue;
      for (const id of ['short', 'A'.repeat(17), 'AAAAAAAAAAAAAAA.']) {
        const res = await call(server, method.toUpperCase(), route.replace('{id}', id),
          method === 'post' ? { json: {}, headers: { authorization: 'Bearer x' } } : {});
        const p = expectProblem(res, 404, 'game_not_found');
        assert.ok(p.detail.includes(idForm), `${method} ${route} with ${id}: ${p.detail}`);
        tried++;
      }
    }
  }
  assert.ok(tried >= 36);
  // A bulk's id has the same form, and its own 404.
  const bulkRoutes = Object.entries(spec().doc.paths).filter(([route]) => route.includes('{bulk}'));
  assert.ok(bulkRoutes.length >= 2, `only ${bulkRoutes.length} routes with a bulk id`);
  for (const [route, item] of bulkRoutes) {
    for (const method of ['get', 'post', 'delete']) {
      if (!item[method]) continue;
      const res = await call(server, method.toUpperCase(), route.replace('{bulk}', 'short'),
        method === 'post' ? { json: {}, headers: { authorization: 'Bearer x' } } : {});
      const p = expectProblem(res, 404, 'bulk_not_found');
      assert.ok(p.detail.includes(idForm), `${method} ${route}: ${p.detail}`);
    }
  }
  // An id that could be one is not told what an id looks like: there is nothing wrong with it.
  const unknown = expectProblem(await get(server, '/v1/games/AAAAAAAAAAAAAAAA/pgn'), 404, 'game_not_found');
  assert.equal(unknown.detail, 'no game has this id');
  const stream = expectProblem(await post(server, '/v1/games/events/not.an.id/ids', { ids: ['AAAAAAAAAAAAAAAA'] }), 404,
    'stream_not_found');
  assert.ok(stream.detail.includes(idForm), stream.detail);
  const open = expectProblem(await post(server, '/v1/games/events/AAAAAAAAAAAAAAAA/ids', { ids: ['AAAAAAAAAAAAAAAA'] }), 404,
    'stream_not_found');
  assert.ok(!open.detail.includes(idForm), open.detail);
});
