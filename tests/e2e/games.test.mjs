// The game API (/v1/games...) over real HTTP against a real redis-server:
// creation, reading (ETag, If-None-Match), play with SAN and UCI against a
// version (expected_version or If-Match), every refusal, undo, resignation,
// draw offers and claims, endings applied in the same write as the move,
// Chess960, 32 racing writers, Idempotency-Key replays, Redis stopped,
// restarted and paused, PGN checked with chess.js, and player tokens kept out
// of Redis and the logs. Every answer is checked against openapi.yaml by the
// helpers in http.mjs. A change answers with the change (GameChange: the move
// it played, move_count, the new state); the moves are read with GET, and
// must be the ones the changes answered.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Chess } from 'chess.js';
import { startServer, startRedis, gameRedis } from './server.mjs';
import { call, get, post, nodeRequest, expectProblem, sleep, waitForRedis, START_FEN, NOEVICTION } from './http.mjs';

const TOKEN_SECRET = 'e2e-games-token-secret-0123456789';
const TIMEOUT_MS = 300; // the Redis timeouts of the outage test's chessd

let server;
let wide; // the same store behind 16 server threads, for the racing tests
let redis;
// Every game created in this file on `server` and `wide` (one Redis), with how it was created (for the secrets checks).
const created = [];

before(async () => {
  redis = await gameRedis();
  [server, wide] = await Promise.all([
    startServer(['--redis', redis.url], { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } }),
    startServer(['--redis', redis.url, '--threads', '16'], { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } }),
  ]);
});
after(async () => {
  await server?.stop();
  await wide?.stop();
  await redis?.stop();
});

const auth = (token) => ({ authorization: `Bearer ${token}` });

// A game in Redis (store/store.h): the hash chessd:game:{<id>} (version, state
// text, hlen) beside chessd:moves:{<id>} and chessd:history:{<id>}, under one hash tag.
const GAME_KEY = /^chessd:game:\{[A-Za-z0-9_-]{16}\}$/;
const gameKeys = (id) => ({ game: `chessd:game:{${id}}`, moves: `chessd:moves:{${id}}`, history: `chessd:history:{${id}}` });

/**
 * POST /v1/games expecting 201; resolves to a game handle { id, tokens,
 * version, turn, body, res, played } where body is the last answer (the Game
 * at first, then each GameChange) and played the moves as the answers gave
 * them ({uci, san}, what GET must list).
 */
async function createGame(body = {}, { srv = server, headers = {} } = {}) {
  // Most tests here take moves back with /undo: the free takeback policy, unless a test picks one.
  if (body && typeof body === 'object' && !Array.isArray(body) && !('takeback' in body)) body = { takeback: 'free', ...body };
  const res = await post(srv, '/v1/games', body, { headers });
  assert.equal(res.status, 201, `create ${JSON.stringify(body)}: ${res.text}`);
  const g = { id: res.body.id, tokens: res.body.tokens, srv, res, played: [...res.body.moves] };
  update(g, res.body);
  if (srv === server || srv === wide) created.push({ ...g, idempotencyKey: headers['idempotency-key'] ?? null });
  return g;
}

function update(g, body) {
  g.version = body.version;
  g.turn = body.position.turn;
  g.body = body;
}

/** A change on a game (path: moves, undo, resign, draw) by `color`; resolves to the raw answer. */
function change(g, color, what, body, headers = {}) {
  const h = color ? { ...auth(g.tokens[color]), ...headers } : headers;
  return post(g.srv, `/v1/games/${g.id}/${what}`, body, { headers: h });
}

/** The game as GET /v1/games/{id} answers it (200). */
async function readGame(g) {
  const res = await get(g.srv, `/v1/games/${g.id}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/**
 * A successful change: 200, version + 1, ETag the new version, and the
 * change itself: a move answers the move played and one more move_count, an
 * undo one less and no move, a resignation or draw action no move and the
 * same count. The handle follows (played too).
 */
async function changeOk(g, color, what, body, headers = {}) {
  const before = g.version;
  const res = await change(g, color, what, body, headers);
  assert.equal(res.status, 200, `${what} ${JSON.stringify(body)} by ${color} at version ${before}: ${res.text}`);
  assert.equal(res.body.version, before + 1, 'every change adds one to the version');
  assert.equal(res.headers.get('etag'), `"${before + 1}"`);
  assert.equal(res.body.id, g.id);
  assert.ok(!('moves' in res.body), 'a change answers the change, not the move list');
  if (what === 'moves') {
    assert.ok(res.body.move, `a move answers the move played: ${res.text}`);
    g.played.push(res.body.move);
  } else {
    assert.equal(res.body.move, null, `${what} plays no move`);
    if (what === 'undo') g.played.pop();
  }
  assert.equal(res.body.move_count, g.played.length, `move_count after ${what}`);
  update(g, res.body);
  return res;
}

/** Plays one move for `color` (default: the side to move) against the current version. */
const move = (g, text, color = g.turn) => changeOk(g, color, 'moves', { move: text, expected_version: g.version });

/** Plays moves in turn; resolves to the last answer. */
async function play(g, moves) {
  let res;
  for (const m of moves) res = await move(g, m);
  return res;
}

const draw = (g, color, action) => changeOk(g, color, 'draw', { action, expected_version: g.version });

/** Asserts that the game ended in this write and that nothing can change it any more. */
/**
 * A game over: its position's status and result are the game's (a resigned
 * game's position never says "active"), draw_reason is the termination of a
 * draw (else null), and no draw is claimable any more.
 */
function assertPositionAgrees(body) {
  assert.equal(body.position.status, body.status, `position.status of a game that is ${body.status}`);
  assert.equal(body.position.result, body.result);
  assert.equal(body.position.draw_reason, body.status === 'draw' ? body.termination : null);
  assert.deepEqual(body.position.claimable_draws, []);
}

async function assertEnded(g, { status, result, termination }) {
  const b = g.body;
  assert.equal(b.status, status);
  assert.equal(b.result, result);
  assert.equal(b.termination, termination);
  assert.equal(b.draw_offer, null);
  assert.ok(!('legal_moves' in b.position), 'position.legal_moves is absent once the game is over');
  assertPositionAgrees(b);
  // The ending was written with the move: a fresh read shows the same version, not one more.
  const again = await get(g.srv, `/v1/games/${g.id}`);
  assert.equal(again.status, 200);
  assert.equal(again.body.version, g.version);
  assert.equal(again.body.status, status);
  assert.equal(again.body.termination, termination);
  assertPositionAgrees(again.body);
  for (const color of ['white', 'black']) {
    expectProblem(await change(g, color, 'moves', { move: 'e4', expected_version: g.version }), 409, 'game_over');
    expectProblem(await change(g, color, 'resign', { expected_version: g.version }), 409, 'game_over');
    expectProblem(await change(g, color, 'draw', { action: 'offer', expected_version: g.version }), 409, 'game_over');
  }
  expectProblem(await change(g, g.body.position.turn === 'white' ? 'black' : 'white', 'undo', { expected_version: g.version }), 409, 'game_over');
  const unchanged = await get(g.srv, `/v1/games/${g.id}`);
  assert.equal(unchanged.body.version, g.version, 'refused changes leave the version alone');
}

const SCHOLAR = ['e4', 'e7e5', 'Bc4', 'b8c6', 'Qh5', 'g8f6', 'Qxf7#'];

test('create, read with ETag and If-None-Match, play SAN and UCI to a mate that ends the game in the same write', async () => {
  const g = await createGame({ white: 'Ann', black: 'Bob' });
  const c = g.res;
  assert.equal(c.headers.get('location'), `/v1/games/${g.id}`);
  assert.equal(c.headers.get('etag'), '"1"');
  assert.match(g.id, /^[A-Za-z0-9_-]{16}$/);
  assert.equal(c.body.version, 1);
  assert.deepEqual(c.body.white, { name: 'Ann' });
  assert.deepEqual(c.body.black, { name: 'Bob' });
  assert.equal(typeof g.tokens.white, 'string');
  assert.equal(typeof g.tokens.black, 'string');
  assert.ok(g.tokens.white.length >= 16, 'a token long enough not to be guessed');
  assert.notEqual(g.tokens.white, g.tokens.black);
  assert.equal(c.body.chess960, false);
  assert.equal(c.body.initial_fen, START_FEN);
  assert.deepEqual(c.body.moves, []);
  assert.equal(c.body.position.fen, START_FEN);
  assert.equal(c.body.position.legal_moves.length, 20);
  assert.equal(c.body.status, 'active');
  assert.equal(c.body.result, '*');
  assert.equal(c.body.termination, null);
  assert.equal(c.body.draw_offer, null);
  assert.ok(Date.parse(c.body.updated_at) >= Date.parse(c.body.created_at));
  assert.ok(Math.abs(Date.parse(c.body.created_at) - Date.now()) < 60000, 'created_at is now');

  const read = await get(server, `/v1/games/${g.id}`);
  assert.equal(read.status, 200);
  assert.equal(read.headers.get('etag'), '"1"');
  const { tokens, ...withoutTokens } = c.body;
  assert.deepEqual(read.body, withoutTokens, 'GET answers the game as created, without the tokens');
  const notModified = await get(server, `/v1/games/${g.id}`, { headers: { 'if-none-match': '"1"' } });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.headers.get('etag'), '"1"');
  assert.equal(notModified.text, '');
  assert.equal((await get(server, `/v1/games/${g.id}`, { headers: { 'if-none-match': '"7"' } })).status, 200);

  // Unnamed players are null.
  const anonymous = await createGame();
  assert.deepEqual(anonymous.body.white, { name: null });
  assert.deepEqual(anonymous.body.black, { name: null });

  await move(g, 'e4');
  await move(g, 'e7e5');
  // Once with If-Match instead of expected_version.
  const viaIfMatch = await changeOk(g, 'white', 'moves', { move: 'Bc4' }, { 'if-match': '"3"' });
  assert.equal(viaIfMatch.body.version, 4);
  await play(g, SCHOLAR.slice(3, 6));
  const mate = await move(g, 'Qxf7#');
  assert.equal(mate.body.version, 8);
  assert.equal(mate.body.position.status, 'checkmate');
  assert.equal(mate.body.position.result, '1-0');
  assert.equal(mate.body.position.check, true);
  assert.deepEqual(mate.body.move, { uci: 'h5f7', san: 'Qxf7#' });
  assert.equal(mate.body.move_count, 7);
  assert.equal(mate.body.position.fen, 'r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4');
  // The moves are on GET, each as its change answered it.
  const game = await readGame(g);
  assert.deepEqual(game.moves.map((m) => m.san), ['e4', 'e5', 'Bc4', 'Nc6', 'Qh5', 'Nf6', 'Qxf7#']);
  assert.deepEqual(game.moves.map((m) => m.uci), ['e2e4', 'e7e5', 'f1c4', 'b8c6', 'd1h5', 'g8f6', 'h5f7']);
  assert.deepEqual(game.moves, g.played);
  assert.deepEqual(game.position, mate.body.position);
  assert.equal(game.updated_at, mate.body.updated_at);
  await assertEnded(g, { status: 'checkmate', result: '1-0', termination: 'checkmate' });

  // The old ETag no longer matches.
  const changed = await get(server, `/v1/games/${g.id}`, { headers: { 'if-none-match': '"1"' } });
  assert.equal(changed.status, 200);
  assert.equal(changed.headers.get('etag'), '"8"');
});

test('refusals: 401, 403 forbidden and not_your_turn, 404, 409, 412, 428, 422 illegal_move, 400', async () => {
  const g = await createGame();
  const other = await createGame();
  const movePath = `/v1/games/${g.id}/moves`;
  const e4 = { move: 'e4', expected_version: 1 };

  for (const headers of [{}, { authorization: 'Basic YTpi' }, { authorization: 'Bearer ' }]) {
    const res = await post(server, movePath, e4, { headers });
    expectProblem(res, 401, 'unauthorized');
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
  }
  for (const what of ['undo', 'resign', 'draw']) {
    const res = await change(g, null, what, what === 'draw' ? { action: 'offer', expected_version: 1 } : { expected_version: 1 });
    expectProblem(res, 401, 'unauthorized');
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
  }
  expectProblem(await post(server, movePath, e4, { headers: auth(other.tokens.white) }), 403, 'forbidden');
  expectProblem(await post(server, movePath, e4, { headers: auth('not-a-token-of-anyone') }), 403, 'forbidden');
  expectProblem(await post(server, movePath, e4, { headers: auth(g.tokens.white.slice(0, -1)) }), 403, 'forbidden');
  expectProblem(await change(g, 'black', 'moves', { move: 'e5', expected_version: 1 }), 403, 'not_your_turn');

  // 404: an unknown id and ids that cannot be ids, on every game path.
  for (const id of ['AAAAAAAAAAAAAAAA', 'short', `${g.id}x`, 'abc$defghijklmno']) {
    expectProblem(await get(server, `/v1/games/${encodeURIComponent(id)}`), 404, 'game_not_found');
    expectProblem(await get(server, `/v1/games/${encodeURIComponent(id)}/pgn`), 404, 'game_not_found');
    expectProblem(await post(server, `/v1/games/${encodeURIComponent(id)}/moves`, e4, { headers: auth(g.tokens.white) }), 404, 'game_not_found');
    expectProblem(await post(server, `/v1/games/${encodeURIComponent(id)}/resign`, { expected_version: 1 }, { headers: auth(g.tokens.white) }), 404, 'game_not_found');
  }

  // Versions.
  const conflict = expectProblem(await change(g, 'white', 'moves', { move: 'e4', expected_version: 5 }), 409, 'version_conflict');
  assert.equal(conflict.current_version, 1);
  // A stale If-Match is 412 with the same current_version as the 409.
  const staleTag = expectProblem(await change(g, 'white', 'moves', { move: 'e4' }, { 'if-match': '"2"' }), 412, 'precondition_failed');
  assert.equal(staleTag.current_version, 1);
  assert.equal(staleTag.detail, 'If-Match "2" does not match the game\'s version "1"');
  const garbage = expectProblem(await change(g, 'white', 'moves', { move: 'e4' }, { 'if-match': 'garbage' }), 412, 'precondition_failed');
  assert.equal(garbage.current_version, 1);
  assert.match(garbage.detail, /^If-Match must be a quoted ETag such as "1"/);
  expectProblem(await change(g, 'white', 'moves', { move: 'e4' }), 428, 'precondition_required');
  expectProblem(await change(g, 'white', 'resign', {}), 428, 'precondition_required');
  expectProblem(await change(g, 'white', 'draw', { action: 'offer' }), 428, 'precondition_required');
  expectProblem(await change(g, 'white', 'undo', undefined), 428, 'precondition_required');
  for (const v of [0, -1, 1.5, '1', true])
    expectProblem(await change(g, 'white', 'moves', { move: 'e4', expected_version: v }), 400, 'invalid_field');

  // Bodies.
  expectProblem(await change(g, 'white', 'moves', { move: 'e4', expected_version: 1, promote: 'q' }), 400, 'unknown_field');
  expectProblem(await change(g, 'white', 'moves', { move: 42, expected_version: 1 }), 400, 'invalid_field');
  expectProblem(await change(g, 'white', 'draw', { action: 'surrender', expected_version: 1 }), 400, 'invalid_field');
  expectProblem(await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }, { 'idempotency-key': 'k'.repeat(256) }), 400, 'invalid_parameter');
  const text = expectProblem(await change(g, 'white', 'moves', { move: 'zz9', expected_version: 1 }), 400, 'invalid_move_text');
  assert.equal(text.move, 'zz9');
  assert.equal(text.move_index, 0);
  assert.equal(text.reason, 'unparseable');
  assert.equal(text.fen, START_FEN);

  // Nothing to undo, answer or claim yet.
  expectProblem(await change(g, 'white', 'undo', { expected_version: 1 }), 409, 'nothing_to_undo');
  expectProblem(await change(g, 'black', 'undo', { expected_version: 1 }), 409, 'nothing_to_undo');
  expectProblem(await change(g, 'black', 'draw', { action: 'accept', expected_version: 1 }), 409, 'no_draw_offer');
  expectProblem(await change(g, 'black', 'draw', { action: 'decline', expected_version: 1 }), 409, 'no_draw_offer');
  expectProblem(await change(g, 'white', 'draw', { action: 'claim', expected_version: 1 }), 409, 'draw_not_claimable');
  expectProblem(await change(g, 'black', 'draw', { action: 'claim', expected_version: 1 }), 403, 'not_your_turn');
  assert.equal((await get(server, `/v1/games/${g.id}`)).body.version, 1, 'no refusal changed the game');

  // 1. e4 e5 2. f4 Qh4+: white is in check, so a3 leaves the king in check.
  await play(g, ['e4', 'e5', 'f4', 'Qh4+']);
  const inCheck = 'rnb1kbnr/pppp1ppp/8/4p3/4PP1q/8/PPPP2PP/RNBQKBNR w KQkq - 1 3';
  assert.equal(g.body.position.fen, inCheck);
  const illegal = expectProblem(await change(g, 'white', 'moves', { move: 'a3', expected_version: 5 }), 422, 'illegal_move');
  assert.equal(illegal.reason, 'leaves_king_in_check');
  assert.equal(illegal.move, 'a3');
  assert.equal(illegal.move_index, 4, 'move_index: the index the move would have had in the game');
  assert.equal(illegal.fen, inCheck);
  const blocked = expectProblem(await change(g, 'white', 'moves', { move: 'Nf3', expected_version: 5 }), 422, 'illegal_move');
  assert.equal(blocked.reason, 'leaves_king_in_check');
  assert.equal((await get(server, `/v1/games/${g.id}`)).body.version, 5);

  // A stale version is a conflict even for a move that would be legal.
  const stale = expectProblem(await change(g, 'white', 'moves', { move: 'g3', expected_version: 4 }), 409, 'version_conflict');
  assert.equal(stale.current_version, 5);
  await move(g, 'g3');

  // Creation refusals.
  for (const [body, code] of [
    [{ white: 5 }, 'invalid_field'],
    [{ black: 'x'.repeat(65) }, 'invalid_field'],
    [{ black: 'é'.repeat(65) }, 'invalid_field'],
    [{ white: 'Ann\nBob' }, 'invalid_field'],
    [{ fen: 7 }, 'invalid_field'],
    [{ chess960: 'yes' }, 'invalid_field'],
    [{ colour: 'white' }, 'unknown_field'],
    [{ fen: 'not a fen' }, 'invalid_fen'],
    [{ fen: '8/8/8/8/8/8/8/8 w - - 0 1' }, 'invalid_fen'],
  ]) {
    const p = expectProblem(await post(server, '/v1/games', body), 400, code);
    if (code === 'invalid_fen') assert.equal(typeof p.fen_error, 'string');
  }
  const kings = expectProblem(await post(server, '/v1/games', { fen: '8/8/8/8/8/8/8/8 w - - 0 1' }), 400, 'invalid_fen');
  assert.equal(kings.fen_error, 'king_count');
});

// openapi.yaml GameCreateRequest: white/black maxLength 64, which JSON Schema
// counts in characters; the server counts bytes ("at most 64 bytes").
test('names: up to 64 characters, as openapi.yaml GameCreateRequest says (maxLength counts characters, not bytes)', async () => {
  const ascii = await createGame({ white: 'x'.repeat(64), black: null });
  assert.equal(ascii.body.white.name, 'x'.repeat(64));
  assert.equal(ascii.body.black.name, null);
  // 40 characters, 80 bytes in UTF-8: valid by the schema (maxLength: 64).
  const accented = await post(server, '/v1/games', { white: 'é'.repeat(40) });
  assert.equal(accented.status, 201, `a 40-character name must be accepted: ${accented.text}`);
  created.push({ id: accented.body.id, tokens: accented.body.tokens, idempotencyKey: null });
  assert.equal(accented.body.white.name, 'é'.repeat(40));
});

test('undo: only the last mover, only before the reply', async () => {
  const g = await createGame();
  await move(g, 'e4');
  expectProblem(await change(g, 'black', 'undo', { expected_version: 2 }), 409, 'nothing_to_undo');
  const undone = await changeOk(g, 'white', 'undo', { expected_version: 2 });
  assert.equal(undone.body.move, null);
  assert.equal(undone.body.move_count, 0);
  assert.deepEqual((await readGame(g)).moves, []);
  assert.equal(undone.body.position.fen, START_FEN);
  assert.equal(undone.body.position.turn, 'white');
  assert.equal(undone.body.version, 3, 'an undo is a change: the version still grows');

  await play(g, ['d4', 'd5']);
  expectProblem(await change(g, 'white', 'undo', { expected_version: 5 }), 409, 'nothing_to_undo');
  const blackUndo = await changeOk(g, 'black', 'undo', { expected_version: 5 });
  assert.equal(blackUndo.body.move_count, 1);
  assert.deepEqual((await readGame(g)).moves.map((m) => m.san), ['d4']);
  assert.equal(blackUndo.body.position.turn, 'black');
  await play(g, ['Nf6', 'c4']);
  // White replied to Nf6, so black may no longer take it back.
  expectProblem(await change(g, 'black', 'undo', { expected_version: g.version }), 409, 'nothing_to_undo');
  // With If-Match and no body at all.
  const res = await call(server, 'POST', `/v1/games/${g.id}/undo`, { headers: { ...auth(g.tokens.white), 'if-match': `"${g.version}"` } });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.version, 9);
  assert.equal(res.body.move, null);
  assert.equal(res.body.move_count, 2);
  g.played.pop();
  update(g, res.body);
  const afterUndo = await readGame(g);
  assert.deepEqual(afterUndo.moves.map((m) => m.san), ['d4', 'Nf6']);
  assert.deepEqual(afterUndo.moves, g.played);
  assert.deepEqual(afterUndo.position, res.body.position);
  // A stale undo is a conflict.
  expectProblem(await change(g, 'black', 'undo', { expected_version: 8 }), 409, 'version_conflict');
  // An undo withdraws a standing draw offer.
  await move(g, 'c4');
  await draw(g, 'white', 'offer');
  assert.equal(g.body.draw_offer, 'white');
  const withdrawn = await changeOk(g, 'white', 'undo', { expected_version: g.version });
  assert.equal(withdrawn.body.draw_offer, null);
  assert.deepEqual((await readGame(g)).moves, g.played);
});

test('resign: either player, on either turn; the other player wins', async () => {
  const a = await createGame();
  await changeOk(a, 'white', 'resign', { expected_version: 1 });
  await assertEnded(a, { status: 'resigned', result: '0-1', termination: 'resignation' });

  const b = await createGame();
  await changeOk(b, 'black', 'resign', { expected_version: 1 });
  await assertEnded(b, { status: 'resigned', result: '1-0', termination: 'resignation' });

  const c = await createGame();
  await move(c, 'e4');
  await draw(c, 'black', 'offer');
  const res = await changeOk(c, 'white', 'resign', {}, { 'if-match': `"${c.version}"` });
  assert.equal(res.body.status, 'resigned');
  await assertEnded(c, { status: 'resigned', result: '0-1', termination: 'resignation' });
});

test('draws by agreement: accept, decline, an offer lapsing, crossing offers', async () => {
  // Offer then accept.
  const a = await createGame();
  await move(a, 'e4');
  await draw(a, 'white', 'offer');
  assert.equal(a.body.draw_offer, 'white');
  assert.equal(a.body.status, 'active');
  expectProblem(await change(a, 'white', 'draw', { action: 'accept', expected_version: a.version }), 409, 'no_draw_offer');
  await draw(a, 'black', 'accept');
  await assertEnded(a, { status: 'draw', result: '1/2-1/2', termination: 'agreement' });

  // Offer then decline; a declined offer cannot be accepted.
  const b = await createGame();
  await draw(b, 'black', 'offer');
  assert.equal(b.body.draw_offer, 'black');
  await draw(b, 'white', 'decline');
  assert.equal(b.body.draw_offer, null);
  assert.equal(b.body.status, 'active');
  expectProblem(await change(b, 'white', 'draw', { action: 'accept', expected_version: b.version }), 409, 'no_draw_offer');

  // The offer lapses when the player it was made to moves instead.
  const c = await createGame();
  await move(c, 'e4');
  await draw(c, 'white', 'offer');
  await move(c, 'e5');
  assert.equal(c.body.draw_offer, null, 'black moved instead of answering');
  expectProblem(await change(c, 'black', 'draw', { action: 'accept', expected_version: c.version }), 409, 'no_draw_offer');
  // ...but not when the player who made it moves: it stands until the other one answers or moves.
  await draw(c, 'white', 'offer');
  await move(c, 'Nf3');
  assert.equal(c.body.draw_offer, 'white');
  await move(c, 'Nc6');
  assert.equal(c.body.draw_offer, null);

  // Crossing offers agree.
  const d = await createGame();
  await draw(d, 'white', 'offer');
  await draw(d, 'black', 'offer');
  await assertEnded(d, { status: 'draw', result: '1/2-1/2', termination: 'agreement' });
});

test('claims: threefold repetition and the 50-move rule, by the player to move only', async () => {
  const g = await createGame();
  await play(g, ['Nf3', 'Nf6', 'Ng1', 'Ng8', 'Nf3', 'Nf6', 'Ng1']);
  expectProblem(await change(g, 'black', 'draw', { action: 'claim', expected_version: g.version }), 409, 'draw_not_claimable');
  await move(g, 'Ng8');
  assert.deepEqual(g.body.position.claimable_draws, ['threefold_repetition']);
  assert.equal(g.body.position.repetitions, 3);
  assert.equal(g.body.status, 'active', 'a threefold repetition does not end the game by itself');
  expectProblem(await change(g, 'black', 'draw', { action: 'claim', expected_version: g.version }), 403, 'not_your_turn');
  await draw(g, 'white', 'claim');
  await assertEnded(g, { status: 'draw', result: '1/2-1/2', termination: 'threefold_repetition' });

  const f = await createGame({ fen: '8/8/8/4k3/8/8/8/R3K3 w - - 99 80' });
  assert.equal(f.body.position.halfmove_clock, 99);
  expectProblem(await change(f, 'white', 'draw', { action: 'claim', expected_version: 1 }), 409, 'draw_not_claimable');
  await move(f, 'Ra2');
  assert.equal(f.body.position.halfmove_clock, 100);
  assert.deepEqual(f.body.position.claimable_draws, ['fifty_moves']);
  assert.equal(f.body.status, 'active');
  expectProblem(await change(f, 'white', 'draw', { action: 'claim', expected_version: f.version }), 403, 'not_your_turn');
  await draw(f, 'black', 'claim');
  await assertEnded(f, { status: 'draw', result: '1/2-1/2', termination: 'fifty_moves' });
});

test('endings applied in the same write: stalemate, insufficient material, fivefold repetition, 75 moves', async () => {
  const s = await createGame({ fen: 'k7/8/8/2Q5/8/8/8/K7 w - - 0 1' });
  await move(s, 'Qb6');
  assert.equal(s.body.version, 2);
  assert.equal(s.body.position.status, 'stalemate');
  await assertEnded(s, { status: 'stalemate', result: '1/2-1/2', termination: 'stalemate' });

  const k = await createGame({ fen: '4k3/8/8/8/8/8/3r4/3K4 w - - 0 1' });
  await move(k, 'Kxd2');
  assert.equal(k.body.position.fen, '4k3/8/8/8/8/8/3K4/8 b - - 0 1');
  assert.equal(k.body.position.draw_reason, 'insufficient_material');
  await assertEnded(k, { status: 'draw', result: '1/2-1/2', termination: 'insufficient_material' });

  const five = await createGame();
  const cycle = ['Nf3', 'Nf6', 'Ng1', 'Ng8'];
  await play(five, [...cycle, ...cycle, ...cycle]);
  assert.equal(five.body.status, 'active', 'four occurrences: the game goes on unless claimed');
  await play(five, cycle.slice(0, 3));
  assert.equal(five.body.status, 'active');
  await move(five, 'Ng8');
  assert.equal(five.body.version, 17);
  assert.equal(five.body.position.repetitions, 5);
  assert.equal(five.body.position.draw_reason, 'fivefold_repetition');
  await assertEnded(five, { status: 'draw', result: '1/2-1/2', termination: 'fivefold_repetition' });

  const seventyFive = await createGame({ fen: '8/8/8/4k3/8/8/8/R3K3 w - - 149 100' });
  await move(seventyFive, 'Ra2');
  assert.equal(seventyFive.body.position.halfmove_clock, 150);
  assert.equal(seventyFive.body.position.draw_reason, 'seventyfive_moves');
  await assertEnded(seventyFive, { status: 'draw', result: '1/2-1/2', termination: 'seventyfive_moves' });

  // A mate on the 150th halfmove is a mate (FIDE 9.6.2), not a draw.
  const mateFirst = await createGame({ fen: 'k7/8/1K6/8/8/8/8/7R w - - 149 100' });
  await move(mateFirst, 'Rh8#');
  await assertEnded(mateFirst, { status: 'checkmate', result: '1-0', termination: 'checkmate' });

  // A game created in a finished position is finished from the start.
  const mated = await createGame({ fen: 'R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1' });
  assert.equal(mated.body.version, 1);
  await assertEnded(mated, { status: 'checkmate', result: '1-0', termination: 'checkmate' });
});

const C960_START = 'rknbbqrn/pppppppp/8/8/8/8/PPPPPPPP/RKNBBQRN w KQkq - 0 1';
const C960_MOVES = ['Nd3', 'Nd6', 'c3', 'c6', 'Bc2', 'Bc7', 'O-O-O', 'b8a8'];

test('Chess960 from an X-FEN start: castling by SAN and by king-takes-rook UCI', async () => {
  const g = await createGame({ fen: C960_START, chess960: true, white: 'Ann', black: 'Bob' });
  assert.equal(g.body.chess960, true);
  assert.equal(g.body.position.chess960, true);
  await play(g, C960_MOVES);
  assert.deepEqual(g.played.slice(6), [{ uci: 'b1a1', san: 'O-O-O' }, { uci: 'b8a8', san: 'O-O-O' }]);
  assert.deepEqual((await readGame(g)).moves, g.played);
  assert.equal(g.body.position.fen, '2krbqrn/ppbppppp/2pn4/8/8/2PN4/PPBPPPPP/2KRBQRN w - - 4 5');
  assert.equal(g.body.position.castling_rights, '-');
  assert.equal(g.body.version, 9);
  // Read as standard chess, the same castling field is refused.
  const std = expectProblem(await post(server, '/v1/games', { fen: C960_START }), 400, 'invalid_fen');
  assert.equal(std.fen_error, 'castling_needs_chess960');
});

test('32 racing writers with one version: exactly one move is stored', async () => {
  const g = await createGame({}, { srv: wide });
  const body = JSON.stringify({ move: 'e4', expected_version: 1 });
  const answers = await Promise.all(Array.from({ length: 32 }, () => nodeRequest(wide, {
    method: 'POST', path: `/v1/games/${g.id}/moves`, body, agent: false,
    headers: { 'content-type': 'application/json', ...auth(g.tokens.white) },
  })));
  const ok = answers.filter((r) => r.status === 200);
  const conflicts = answers.filter((r) => r.status === 409);
  assert.equal(ok.length, 1, `statuses: ${answers.map((r) => r.status).join(' ')}`);
  assert.equal(conflicts.length, 31, `statuses: ${answers.map((r) => r.status).join(' ')}`);
  for (const c of conflicts) {
    expectProblem(c, 409, 'version_conflict');
    assert.equal(c.body.current_version, 2);
  }
  assert.equal(ok[0].body.version, 2);
  const read = await get(wide, `/v1/games/${g.id}`);
  assert.equal(read.body.version, 2);
  assert.deepEqual(read.body.moves, [{ uci: 'e2e4', san: 'e4' }]);
});

test('32 racing retries with one Idempotency-Key all get the one answer (30 rounds, 16 server threads)', async () => {
  // A retry that reads the key before the first write lands and the game after
  // it must still get the first answer, never 409: openapi.yaml says a retry
  // with the same key and request "gets the first answer again ... instead of a 409".
  for (let round = 0; round < 30; round++) await racingRetries(wide, round);
});

async function racingRetries(srv, round) {
  {
    const g = await createGame({}, { srv });
    const body = JSON.stringify({ move: 'd4', expected_version: 1 });
    const answers = await Promise.all(Array.from({ length: 32 }, () => nodeRequest(srv, {
      method: 'POST', path: `/v1/games/${g.id}/moves`, body, agent: false,
      headers: { 'content-type': 'application/json', 'idempotency-key': `racing-d4-${round}`, ...auth(g.tokens.white) },
    })));
    const read = await get(srv, `/v1/games/${g.id}`);
    assert.equal(read.body.version, 2, 'one move stored');
    assert.deepEqual(read.body.moves, [{ uci: 'd2d4', san: 'd4' }]);
    const odd = answers.filter((r) => r.status !== 200);
    assert.deepEqual(odd.map((r) => `${r.status} ${r.body.code}`), [],
      `round ${round}: ${odd.length} of 32 retries with Idempotency-Key racing-d4-${round} did not get the first answer; ` +
      `first: ${odd[0]?.text}`);
    assert.equal(new Set(answers.map((r) => r.text)).size, 1, 'every retry gets the same answer');
    assert.ok(answers.every((r) => r.headers.etag === '"2"'));
  }
}

test('Idempotency-Key: a retry gets the first answer; another request with the key is 422', async () => {
  const g = await createGame();
  const key = { 'idempotency-key': 'move-1 of game' };
  const first = await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }, key);
  assert.equal(first.status, 200);
  assert.deepEqual(first.body.move, { uci: 'e2e4', san: 'e4' });
  g.played.push(first.body.move);
  update(g, first.body);
  await move(g, 'e5');
  const retry = await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }, key);
  assert.equal(retry.status, 200, `the retry must get the first answer, not a conflict: ${retry.text}`);
  assert.equal(retry.text, first.text);
  assert.equal(retry.headers.get('etag'), '"2"');
  assert.equal(retry.headers.get('content-type'), first.headers.get('content-type'));
  expectProblem(await change(g, 'white', 'moves', { move: 'd4', expected_version: 1 }, key), 422, 'idempotency_key_reused');
  expectProblem(await change(g, 'white', 'resign', { expected_version: 3 }, key), 422, 'idempotency_key_reused');
  const read = await get(server, `/v1/games/${g.id}`);
  assert.equal(read.body.version, 3, 'the retry changed nothing');
  assert.deepEqual(read.body.moves.map((m) => m.san), ['e4', 'e5']);
  assert.deepEqual(read.body.moves, g.played);
  // Keys belong to one game: the same key on another game is a new key.
  const h = await createGame();
  assert.equal((await change(h, 'white', 'moves', { move: 'e4', expected_version: 1 }, key)).status, 200);
  // Draws and undos are replayed too.
  const offer = await change(g, 'white', 'draw', { action: 'offer', expected_version: 3 }, { 'idempotency-key': 'offer' });
  assert.equal(offer.status, 200);
  update(g, offer.body);
  await move(g, 'Nf3');
  const offerAgain = await change(g, 'white', 'draw', { action: 'offer', expected_version: 3 }, { 'idempotency-key': 'offer' });
  assert.equal(offerAgain.status, 200);
  assert.equal(offerAgain.text, offer.text);
  assert.equal(offerAgain.headers.get('etag'), '"4"');

  // Creation: the retry answers the same game (same id, 201, Location); no second game is made.
  const gamesBefore = [...(await redis.dump()).keys()].filter((k) => GAME_KEY.test(k)).length;
  const createKey = { 'idempotency-key': 'create-ann-bob-7Qx2mN9pL4vK' }; // a creation key is 22+ base64url characters
  const one = await post(server, '/v1/games', { white: 'Ann', black: 'Bob' }, { headers: createKey });
  assert.equal(one.status, 201);
  created.push({ id: one.body.id, tokens: one.body.tokens, idempotencyKey: createKey['idempotency-key'] });
  const og = { id: one.body.id, tokens: one.body.tokens, srv: server, played: [] };
  update(og, one.body);
  await move(og, 'e4');
  const two = await post(server, '/v1/games', { white: 'Ann', black: 'Bob' }, { headers: createKey });
  assert.equal(two.status, 201);
  assert.equal(two.body.id, one.body.id);
  assert.equal(two.text, one.text);
  assert.equal(two.headers.get('location'), `/v1/games/${one.body.id}`);
  assert.equal(two.headers.get('etag'), '"1"');
  const gamesAfter = [...(await redis.dump()).keys()].filter((k) => GAME_KEY.test(k)).length;
  assert.equal(gamesAfter, gamesBefore + 1, 'one game for two requests with one key');
  expectProblem(await post(server, '/v1/games', { white: 'Ann', black: 'Carl' }, { headers: createKey }), 422, 'idempotency_key_reused');
});

// The operation needs a player token (security: playerToken), but a kept
// answer is replayed before the token is looked at: a request with the key
// and body and no Authorization (or another game's token) gets 200.
test('Idempotency-Key: a replay still needs the player\'s token (401 without one, 403 with another game\'s)', async () => {
  const g = await createGame();
  const other = await createGame();
  const key = 'replay-needs-token';
  const body = { move: 'e4', expected_version: 1 };
  assert.equal((await change(g, 'white', 'moves', body, { 'idempotency-key': key })).status, 200);
  const anonymous = await post(server, `/v1/games/${g.id}/moves`, body, { headers: { 'idempotency-key': key } });
  expectProblem(anonymous, 401, 'unauthorized');
  const stranger = await post(server, `/v1/games/${g.id}/moves`, body, { headers: { 'idempotency-key': key, ...auth(other.tokens.white) } });
  expectProblem(stranger, 403, 'forbidden');
});

/** Runs fn and resolves to [its result, elapsed ms]. */
async function timed(fn) {
  const started = performance.now();
  const result = await fn();
  return [result, performance.now() - started];
}

/** Asserts 503 store_unavailable with Retry-After, answered within the Redis timeout + 1 s. */
function expectStoreDown([res, ms], what) {
  expectProblem(res, 503, 'store_unavailable');
  const retryAfter = res.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^[1-9][0-9]*$/, `${what}: Retry-After must be a number of seconds`);
  assert.ok(ms < TIMEOUT_MS + 1000, `${what} took ${Math.round(ms)} ms with a ${TIMEOUT_MS} ms Redis timeout`);
}

test('Redis stopped: 503 store_unavailable fast; restarted: play resumes with nothing lost; paused: 503 within the timeout (outcome_unknown for a move sent, store_unavailable for one that could not be)', async () => {
  const store = await startRedis({ persistent: true });
  const srv = await startServer(['--redis', store.url, '--redis-timeout-ms', String(TIMEOUT_MS),
    '--redis-connect-timeout-ms', String(TIMEOUT_MS), '--threads', '4'], { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } });
  try {
    const g = await createGame({ white: 'Ann' }, { srv });
    await play(g, ['e4', 'e5', 'Nf3']);
    assert.equal(g.version, 4);
    const before = (await get(srv, `/v1/games/${g.id}`)).body;

    await store.stop();
    expectStoreDown(await timed(() => get(srv, `/v1/games/${g.id}`)), 'GET game');
    expectStoreDown(await timed(() => get(srv, `/v1/games/${g.id}/pgn`)), 'GET pgn');
    expectStoreDown(await timed(() => change(g, 'black', 'moves', { move: 'Nc6', expected_version: 4 })), 'POST move');
    expectStoreDown(await timed(() => change(g, 'black', 'moves', { move: 'Nc6', expected_version: 4 }, { 'idempotency-key': 'k' })), 'POST move with a key');
    expectStoreDown(await timed(() => change(g, 'white', 'resign', { expected_version: 4 })), 'POST resign');
    expectStoreDown(await timed(() => post(srv, '/v1/games', {})), 'POST create');
    // Ready all the same: the rules API serves (readiness.test.mjs has the rest).
    assert.equal((await get(srv, '/readyz')).body.redis, 'down');
    assert.equal((await get(srv, '/healthz')).status, 200);
    const position = await get(srv, `/v1/position?fen=${encodeURIComponent(START_FEN)}`);
    assert.equal(position.status, 200);
    const line = await post(srv, '/v1/position/moves', { moves: SCHOLAR });
    assert.equal(line.status, 200);
    assert.equal(line.body.position.status, 'checkmate');

    await store.start();
    // Once the readiness watcher has seen Redis back (within its 100 ms
    // probe interval), every request is answered, whichever thread takes it.
    await waitForRedis(srv, 'up');
    for (let i = 0; i < 8; i++) {
      const res = await nodeRequest(srv, { path: `/v1/games/${g.id}`, agent: false });
      assert.equal(res.status, 200, `request ${i} after the restart: ${res.text}`);
      assert.deepEqual(res.body, before, 'the game survived the restart as it was');
    }
    assert.deepEqual((await get(srv, '/readyz')).body, { status: 'ready', redis: 'up', redis_memory: NOEVICTION, engine: { state: 'off' } });
    await move(g, 'Nc6');
    assert.equal(g.version, 5);
    await move(g, 'Bb5');

    let sent = false; // whether the move made while paused went out
    store.pause();
    try {
      expectStoreDown(await timed(() => get(srv, `/v1/games/${g.id}`)), 'GET game (paused)');
      // This replica keeps a copy of the game it wrote last (--game-cache),
      // so the move goes to Redis without a read first. On a server thread
      // whose connection is open, it is sent to the paused Redis and may be
      // made later: the answer says so (outcome_unknown). A thread that must
      // connect first (its connection was dropped) gets no answer to the
      // PING a new connection sends first, so nothing is sent
      // (store_unavailable) and nothing will be made.
      const [res, ms] = await timed(() => change(g, 'black', 'moves', { move: 'a6', expected_version: 6 }));
      assert.equal(res.status, 503, res.text);
      sent = res.body.code === 'outcome_unknown';
      if (!sent) expectProblem(res, 503, 'store_unavailable');
      assert.ok(ms < 3 * TIMEOUT_MS + 1000, `POST move (paused) took ${Math.round(ms)} ms`);
      const [ready, readyMs] = await timed(() => get(srv, '/readyz'));
      assert.equal(ready.body.redis, 'down', `GET /readyz (paused): ${ready.text}`);
      assert.equal(ready.body.redis_fault, 'timeout', `GET /readyz (paused): ${ready.text}`);
      assert.ok(readyMs < TIMEOUT_MS + 1000, `GET /readyz (paused) took ${Math.round(readyMs)} ms`);
      assert.equal((await get(srv, '/healthz')).status, 200);
    } finally {
      store.resume();
    }
    // Redis runs the move it was sent once it goes on; one never sent stays unmade.
    const version = sent ? 7 : 6;
    let after;
    for (let i = 0; i < 50; i++) {
      after = await get(srv, `/v1/games/${g.id}`);
      if (after.status === 200 && after.body.version === version) break;
      await sleep(50);
    }
    if (!sent) await sleep(300); // a move wrongly sent would show by now
    after = await get(srv, `/v1/games/${g.id}`);
    assert.equal(after.body.version, version);
    assert.deepEqual(after.body.moves.map((m) => m.san), ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5', ...(sent ? ['a6'] : [])]);

    // The data on disk (the append-only file, written with appendfsync always) holds no token either.
    const files = filesUnder(store.dir);
    assert.ok(files.some((f) => f.includes('.aof')), `no append-only file in ${store.dir}: ${files}`);
    for (const file of files) {
      const bytes = readFileSync(file, 'latin1');
      for (const token of Object.values(g.tokens)) assert.ok(!bytes.includes(token), `${file} holds a player token`);
    }
  } finally {
    store.resume();
    await srv.stop();
    await store.stop();
  }
});

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

// Each server thread keeps one Redis connection and only drops it after a
// failure, so after a Redis restart every thread that did not fail a request
// during the outage answers one 503 store_unavailable although Redis is up.
test('a Redis restart with no request in between costs no 503: a stale connection is remade at once', async () => {
  const store = await startRedis({ persistent: true });
  const srv = await startServer(['--redis', store.url, '--redis-timeout-ms', String(TIMEOUT_MS),
    '--redis-connect-timeout-ms', String(TIMEOUT_MS), '--threads', '4']);
  try {
    const g = await createGame({}, { srv });
    // Every server thread gets a Redis connection.
    for (let i = 0; i < 16; i++) assert.equal((await nodeRequest(srv, { path: `/v1/games/${g.id}`, agent: false })).status, 200);
    await store.stop();
    await store.start();
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await nodeRequest(srv, { path: `/v1/games/${g.id}`, agent: false })).status);
    assert.deepEqual(statuses, Array(12).fill(200),
      'Redis is up again: GET /v1/games/{id} must not answer 503 store_unavailable because a thread still holds its pre-restart connection');
  } finally {
    await srv.stop();
    await store.stop();
  }
});

// --- PGN ---

/** Splits a PGN into its tag pairs (in order, values unescaped) and movetext; checks the layout. */
function parsePgn(text) {
  assert.ok(text.endsWith('\n'), 'a PGN ends with a newline');
  const split = text.indexOf('\n\n');
  assert.ok(split > 0, 'a blank line separates the tags from the movetext');
  const tags = text.slice(0, split).split('\n').map((line) => {
    const m = /^\[([A-Za-z0-9_]+) "((?:[^"\\]|\\["\\])*)"\]$/.exec(line);
    assert.ok(m, `not a PGN tag pair: ${line}`);
    return [m[1], m[2].replace(/\\(["\\])/g, '$1')];
  });
  const movetext = text.slice(split + 2, -1);
  for (const line of movetext.split('\n')) {
    assert.ok(line.length <= 80, `movetext line over 80 characters: ${line}`);
    assert.equal(line, line.trim());
  }
  return { tags, tag: Object.fromEntries(tags), movetext };
}

/** Checks a game's PGN against the game as the API reports it (and, for standard chess, against chess.js). */
async function checkPgn(g) {
  const res = await get(g.srv, `/v1/games/${g.id}/pgn`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/x-chess-pgn/);
  const game = (await get(g.srv, `/v1/games/${g.id}`)).body;
  assert.equal(res.headers.get('etag'), `"${game.version}"`);
  const { tags, tag, movetext } = parsePgn(res.text);
  assert.deepEqual(tags.slice(0, 7).map(([k]) => k), ['Event', 'Site', 'Date', 'Round', 'White', 'Black', 'Result'],
    'the Seven Tag Roster comes first, in order');
  assert.equal(tag.Result, game.result);
  assert.equal(tag.Date, game.created_at.slice(0, 10).replaceAll('-', '.'));
  assert.equal(tag.White, game.white.name ?? '?');
  assert.equal(tag.Black, game.black.name ?? '?');
  assert.ok(movetext === game.result || movetext.endsWith(` ${game.result}`), `the movetext ends with the result: ${movetext}`);
  assert.equal(tag.Termination, game.status === 'active' ? 'unterminated' : 'normal');
  assert.equal(tag.TimeControl, game.clock ? `${game.clock.initial_ms / 1000}+${game.clock.increment_ms / 1000}` : '-');
  const custom = game.chess960 || game.initial_fen !== START_FEN;
  assert.equal(tag.SetUp, custom ? '1' : undefined);
  assert.equal(tag.FEN, custom ? game.initial_fen : undefined);
  assert.equal(tag.Variant, game.chess960 ? 'Chess960' : undefined);
  // The SAN moves of the movetext are the game's.
  const sans = movetext.split(/\s+/).filter((t) => !/^\d+\.+$/.test(t) && !/^(1-0|0-1|1\/2-1\/2|\*)$/.test(t));
  assert.deepEqual(sans, game.moves.map((m) => m.san));
  if (!game.chess960) {
    const chess = new Chess();
    chess.loadPgn(res.text, { strict: true });
    assert.deepEqual(chess.history(), game.moves.map((m) => m.san), 'chess.js replays the same SAN moves');
    assert.equal(chess.fen(), game.position.fen, 'chess.js reaches the same final position');
    assert.equal(chess.getHeaders().Result, game.result);
  }
  return { text: res.text, movetext, tag, game };
}

test('PGN: a known game\'s movetext exactly, finished and unfinished games, a custom FEN, Chess960', async () => {
  // Morphy - Duke of Brunswick and Count Isouard, Paris 1858.
  const opera = await createGame({ white: 'Paul Morphy', black: 'Duke Karl / Count Isouard' });
  await play(opera, ['e4', 'e5', 'Nf3', 'd6', 'd4', 'Bg4', 'dxe5', 'Bxf3', 'Qxf3', 'dxe5', 'Bc4', 'Nf6', 'Qb3', 'Qe7',
    'Nc3', 'c6', 'Bg5', 'b5', 'Nxb5', 'cxb5', 'Bxb5+', 'Nbd7', 'O-O-O', 'Rd8', 'Rxd7', 'Rxd7', 'Rd1', 'Qe6', 'Bxd7+',
    'Nxd7', 'Qb8+', 'Nxb8', 'Rd8#']);
  assert.equal(opera.body.status, 'checkmate');
  const p = await checkPgn(opera);
  // python-chess's layout: a move number is a token of its own
  assert.equal(p.movetext, [
    '1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 7. Qb3 Qe7 8.',
    'Nc3 c6 9. Bg5 b5 10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8 13. Rxd7 Rxd7 14.',
    'Rd1 Qe6 15. Bxd7+ Nxd7 16. Qb8+ Nxb8 17. Rd8# 1-0',
  ].join('\n'));
  const date = opera.res.body.created_at.slice(0, 10).replaceAll('-', '.');
  assert.equal(p.text.slice(0, p.text.indexOf('\n\n')), [
    '[Event "?"]', '[Site "?"]', `[Date "${date}"]`, '[Round "-"]', '[White "Paul Morphy"]',
    '[Black "Duke Karl / Count Isouard"]', '[Result "1-0"]', '[ECO "C41"]', '[Opening "Philidor Defense"]',
    '[Termination "normal"]', '[TimeControl "-"]',
  ].join('\n'));

  // Unfinished, and with no moves at all.
  const open = await createGame({ white: 'Ann' });
  assert.equal((await checkPgn(open)).movetext, '*');
  await play(open, ['d4', 'Nf6', 'c4', 'e6', 'Nc3', 'Bb4']);
  assert.equal((await checkPgn(open)).movetext, '1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 *');

  // Resigned and agreed games carry their result.
  const resigned = await createGame();
  await move(resigned, 'f3');
  await changeOk(resigned, 'black', 'resign', { expected_version: 2 });
  assert.equal((await checkPgn(resigned)).movetext, '1. f3 1-0');
  const agreed = await createGame();
  await draw(agreed, 'white', 'offer');
  await draw(agreed, 'black', 'accept');
  assert.equal((await checkPgn(agreed)).movetext, '1/2-1/2');

  // A custom FEN with black to move: SetUp and FEN tags, and "N..." for black's first move.
  const fen = 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3';
  const fromFen = await createGame({ fen });
  await play(fromFen, ['Nf6', 'Nc3', 'Bb4']);
  const cf = await checkPgn(fromFen);
  assert.equal(cf.tag.SetUp, '1');
  assert.equal(cf.tag.FEN, fen);
  assert.equal(cf.movetext, '3... Nf6 4. Nc3 Bb4 *');

  // The 75-move ending from a FEN, and a promotion with mate.
  const promo = await createGame({ fen: '7k/1P6/6K1/8/8/8/8/8 w - - 0 60' });
  await move(promo, 'b8=Q#');
  const pp = await checkPgn(promo);
  assert.equal(pp.movetext, '60. b8=Q# 1-0');

  // Chess960: Variant, SetUp and FEN, castling as O-O-O (chess.js does not play Chess960).
  const c960 = await createGame({ fen: C960_START, chess960: true });
  await play(c960, C960_MOVES);
  const cp = await checkPgn(c960);
  assert.equal(cp.tag.Variant, 'Chess960');
  assert.equal(cp.tag.FEN, c960.res.body.initial_fen);
  assert.equal(cp.movetext, '1. Nd3 Nd6 2. c3 c6 3. Bc2 Bc7 4. O-O-O O-O-O *');

  // Tag values are escaped: a quote and a backslash in a name.
  const odd = await createGame({ white: 'Ann "The Rook" \\o/', black: 'Bob' });
  const op = await get(server, `/v1/games/${odd.id}/pgn`);
  assert.ok(op.text.includes('[White "Ann \\"The Rook\\" \\\\o/"]'), op.text);
  assert.equal(parsePgn(op.text).tag.White, 'Ann "The Rook" \\o/');
});

// --- secrets: run last, over every game this file made on `server` ---

function tokenForms(token) {
  return [token, createHash('sha256').update(token).digest('hex'), Buffer.from(token).toString('base64'),
    Buffer.from(token).toString('hex')];
}

test('player tokens are kept only as HMACs: never in Redis (games made without a key) nor in the logs', async () => {
  const dump = await redis.dump();
  const everything = [...dump].map(([key, { values }]) => [key, ...values].join('\n')).join('\n');
  const plain = created.filter((g) => !g.idempotencyKey);
  assert.ok(plain.length >= 20, `only ${plain.length} games to check`);
  for (const g of plain) {
    const keys = gameKeys(g.id);
    const record = dump.get(keys.game);
    assert.ok(record, `game ${g.id} is in Redis under ${keys.game}`);
    assert.equal(record.type, 'hash');
    const fields = Object.fromEntries(record.values.flatMap((v, i, a) => (i % 2 ? [] : [[v, a[i + 1]]])));
    // Besides the game, each player's last sign (a player's change marks it): a time, never a token.
    const signs = Object.keys(fields).filter((k) => k.startsWith('seen:'));
    assert.deepEqual(Object.keys(fields).filter((k) => !signs.includes(k)).sort(), ['hlen', 'state', 'version', 'wid']);
    for (const sign of signs) {
      assert.ok(['seen:white', 'seen:black'].includes(sign), sign);
      assert.match(fields[sign], /^\d{13}$/, `${sign} is a time in ms`);
    }
    assert.match(fields.wid, /^[A-Za-z0-9_-]{16}$/, 'the write id is a random tag, not a token');
    // The state text: one "name value" line a field (store/game_record.c).
    const state = Object.fromEntries(fields.state.split('\n').slice(1).map((l) => [l.slice(0, l.indexOf(' ')), l.slice(l.indexOf(' ') + 1)]));
    for (const key of [keys.moves, keys.history]) {
      const part = dump.get(key);
      if (part) assert.equal(part.type, 'string', `${key} is a string`);
    }
    for (const color of ['white', 'black']) {
      const token = g.tokens[color];
      for (const form of tokenForms(token))
        assert.ok(!everything.includes(form), `Redis holds ${color}'s token of game ${g.id} (as ${form})`);
      const hmac = createHmac('sha256', TOKEN_SECRET).update(token).digest('hex');
      assert.equal(state[`${color}.token`], hmac, 'what is kept is HMAC-SHA256(secret, token)');
    }
  }
  await server.waitForLog((l) => l.path === '/v1/games' && l.status === 201);
  await wide.waitForLog((l) => l.path === '/v1/games' && l.status === 201);
  const logs = server.stdout() + server.stderr() + wide.stdout() + wide.stderr();
  assert.ok(server.logLines().length > 100, 'the access log has the requests of this file');
  assert.ok(wide.logLines().length > 100, 'the access log has the requests of this file');
  for (const g of created)
    for (const token of Object.values(g.tokens))
      for (const form of tokenForms(token)) assert.ok(!logs.includes(form), `chessd's log holds a token of game ${g.id}`);
});

// The kept answer of a creation with an Idempotency-Key is the whole 201 body,
// tokens included, stored as is under chessd:idem:new:<sha256(key)> for the
// idempotency TTL (a day by default); anyone who sends the same key and body
// in that time also gets both tokens back.
test('player tokens are not kept in plain text in Redis for a creation with an Idempotency-Key either', async () => {
  const g = await createGame({ white: 'Keyed' }, { headers: { 'idempotency-key': 'create-keyed-Hc3JbW8sTz1R' } });
  const dump = await redis.dump();
  for (const [key, { values }] of dump) {
    for (const color of ['white', 'black']) {
      assert.ok(!values.some((v) => v.includes(g.tokens[color])),
        `Redis key ${key} holds ${color}'s player token of game ${g.id} in plain text ` +
        '(openapi.yaml: "the server keeps only their HMAC")');
    }
  }
});

test('If-Match compares strongly (RFC 9110): a weak tag never fits, "*" and a list with the tag do, and it must agree with expected_version', async () => {
  const g = await createGame();
  const weak = expectProblem(await change(g, 'white', 'moves', { move: 'e4' }, { 'if-match': 'W/"1"' }), 412, 'precondition_failed');
  assert.equal(weak.current_version, 1);
  assert.match(weak.detail, /weak ETag \(W\/\) never matches.*"1"$/);
  const seven = expectProblem(await change(g, 'white', 'moves', { move: 'e4' }, { 'if-match': '"7"' }), 412, 'precondition_failed');
  assert.equal(seven.current_version, 1);
  // An unquoted version is no ETag: 412 too, saying how to write one.
  for (const unquoted of ['1', '1, "7"', '"1', 'W/1']) {
    const p = expectProblem(await change(g, 'white', 'moves', { move: 'e4' }, { 'if-match': unquoted }), 412, 'precondition_failed');
    assert.equal(p.current_version, 1);
    assert.equal(p.detail, `If-Match must be a quoted ETag such as "1" (the game's version), not ${unquoted}`);
  }
  // Both given, they must name the same version: two that differ are the request's fault, whatever the game's.
  expectProblem(await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }, { 'if-match': '"2"' }),
    400, 'conflicting_fields');
  await changeOk(g, 'white', 'moves', { move: 'e4' }, { 'if-match': '*' });
  await changeOk(g, 'black', 'moves', { move: 'e5' }, { 'if-match': '"1", "2"' });
  await changeOk(g, 'white', 'moves', { move: 'Nf3', expected_version: 3 }, { 'if-match': '"3"' });
  // A list holding the current tag fits even beside a malformed entry.
  await changeOk(g, 'black', 'moves', { move: 'Nc6' }, { 'if-match': '4, "4"' });
  assert.equal(g.version, 5);
});
