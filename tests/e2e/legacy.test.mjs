// Games stored by chessd before the current format (one JSON record under
// chessd:game:<id>, tests/data/legacy_game*.json, written by chessd c8df95b)
// are read as they are and converted by their first change, over real HTTP
// and a real redis-server; games stored before records kept a variant
// (tests/data/pre_variant_game*.json, written by chessd ff26ea8) read as
// standard chess and play on with the same text. The fixtures' token HMACs
// are replaced with ones made under this server's secret for tokens the test
// knows, so it can play.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startServer, startRedis, gameRedis } from './server.mjs';
import { get, post } from './http.mjs';

const SECRET = 'e2e-legacy-token-secret-0123456789abcdef';
const TOKENS = { white: 'legacy-white-token-000001', black: 'legacy-black-token-000002' };

let redis;
let server;

before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url], { env: { CHESSD_TOKEN_SECRET: SECRET } });
});
after(async () => {
  await server?.stop();
  await redis?.stop();
});

const hmac = (token) => createHmac('sha256', SECRET).update(token).digest('hex');

/** Stores a fixture under its old key with token HMACs for TOKENS; resolves to [id, fixture]. */
async function storeFixture(name) {
  const fixture = JSON.parse(readFileSync(new URL(`../data/${name}`, import.meta.url), 'utf8'));
  const record = JSON.parse(fixture.hgetall.data);
  record.players.white.token_hash = hmac(TOKENS.white);
  record.players.black.token_hash = hmac(TOKENS.black);
  await redis.command('HSET', fixture.key, 'version', fixture.hgetall.version, 'data', JSON.stringify(record));
  return [record.id, fixture];
}

const keysOf = (id) => [`chessd:game:${id}`, `chessd:game:{${id}}`, `chessd:moves:{${id}}`, `chessd:history:{${id}}`];

test('a game of the first format reads as it was, and its first change converts it; play and undo go on from there', async () => {
  const [id, fixture] = await storeFixture('legacy_game.json');
  const { expected } = fixture;
  const read = await get(server, `/v1/games/${id}`);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.version, expected.version);
  assert.equal(read.body.position.fen, expected.fen);
  assert.deepEqual(read.body.moves, expected.moves);
  assert.equal(read.body.draw_offer, 'white');
  assert.equal((await get(server, `/v1/games/${id}/pgn`)).status, 200);
  assert.deepEqual(await Promise.all(keysOf(id).map((k) => redis.command('EXISTS', k))), [1, 0, 0, 0],
    'reading converts nothing');

  const move = await post(server, `/v1/games/${id}/moves`, { move: 'a3', expected_version: expected.version },
    { headers: { authorization: `Bearer ${TOKENS.white}` } });
  assert.equal(move.status, 200, move.text);
  assert.equal(move.body.version, expected.version + 1);
  assert.equal(move.body.move_count, expected.moves.length + 1);
  assert.equal(move.body.draw_offer, 'white', "white's own offer stands after white's move");
  assert.deepEqual(await Promise.all(keysOf(id).map((k) => redis.command('EXISTS', k))), [0, 1, 1, 1],
    'the first change replaces the old record with the new keys');

  const undo = await post(server, `/v1/games/${id}/undo`, { expected_version: expected.version + 1 },
    { headers: { authorization: `Bearer ${TOKENS.white}` } });
  assert.equal(undo.status, 200, undo.text);
  assert.equal(undo.body.position.fen, expected.fen);
  const back = await get(server, `/v1/games/${id}`);
  assert.equal(back.body.version, expected.version + 2);
  assert.deepEqual(back.body.moves, expected.moves);
});

test('a finished game of the first format reads as it was and refuses a move as game_over, converting nothing', async () => {
  const [id, fixture] = await storeFixture('legacy_game_checkmate.json');
  const read = await get(server, `/v1/games/${id}`);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.status, 'checkmate');
  assert.deepEqual(read.body.moves, fixture.expected.moves);
  const move = await post(server, `/v1/games/${id}/moves`, { move: 'a3', expected_version: fixture.expected.version },
    { headers: { authorization: `Bearer ${TOKENS.white}` } });
  assert.equal(move.status, 409, move.text);
  assert.equal(move.body.code, 'game_over');
  assert.deepEqual(await Promise.all(keysOf(id).map((k) => redis.command('EXISTS', k))), [1, 0, 0, 0]);
});

/** Stores a game of tests/data/pre_variant_game*.json under its keys, token HMACs for TOKENS; resolves to the fixture. */
async function storePreVariant(name) {
  const fixture = JSON.parse(readFileSync(new URL(`../data/${name}`, import.meta.url), 'utf8'));
  const { game, moves, history } = fixture.keys;
  const state = game.hash.state
    .replace(/^white\.token [0-9a-f]{64}$/m, `white.token ${hmac(TOKENS.white)}`)
    .replace(/^black\.token [0-9a-f]{64}$/m, `black.token ${hmac(TOKENS.black)}`);
  assert.ok(!/^variant /m.test(state), 'a text from before the variant line');
  await redis.command('HSET', game.key, 'version', game.hash.version, 'wid', game.hash.wid, 'hlen', game.hash.hlen, 'state', state);
  await redis.command('SET', moves.key, moves.value);
  await redis.command('SET', history.key, history.value);
  return fixture;
}

test('a game stored before records kept a variant reads as standard chess, plays on, and its text gains no variant line', async () => {
  const { id, expected, keys } = await storePreVariant('pre_variant_game.json');
  const read = await get(server, `/v1/games/${id}`);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.variant, 'standard');
  assert.equal(read.body.position.variant, 'standard');
  for (const field of ['version', 'chess960', 'initial_fen', 'moves', 'status', 'result', 'termination'])
    assert.deepEqual(read.body[field], expected[field], field);
  assert.equal(read.body.position.fen, expected.fen);
  const pgn = await get(server, `/v1/games/${id}/pgn`);
  assert.ok(!pgn.text.includes('[Variant ') && !pgn.text.includes('[FEN '), pgn.text);

  const move = await post(server, `/v1/games/${id}/moves`, { move: 'Nc3', expected_version: expected.version },
    { headers: { authorization: `Bearer ${TOKENS.white}` } });
  assert.equal(move.status, 200, move.text);
  const state = await redis.command('HGET', keys.game.key, 'state');
  assert.ok(!/^variant /m.test(state), 'a standard game is written as before variants');
  assert.deepEqual(state.split('\n').map((l) => l.split(' ')[0]), keys.game.hash.state.split('\n').map((l) => l.split(' ')[0]),
    'the same lines in the same order');
  const undo = await post(server, `/v1/games/${id}/undo`, { expected_version: expected.version + 1 },
    { headers: { authorization: `Bearer ${TOKENS.white}` } });
  assert.equal(undo.status, 200, undo.text);
  assert.equal(undo.body.position.fen, expected.fen);
});

test('a Chess960 game stored before records kept a variant is standard chess with chess960 true', async () => {
  const { id, expected } = await storePreVariant('pre_variant_game_chess960.json');
  const read = await get(server, `/v1/games/${id}`);
  assert.equal(read.status, 200, read.text);
  assert.deepEqual([read.body.variant, read.body.chess960, read.body.initial_fen, read.body.position.fen],
    ['standard', true, expected.initial_fen, expected.fen]);
  const pgn = await get(server, `/v1/games/${id}/pgn`);
  assert.ok(pgn.text.includes('[Variant "Chess960"]\n'), pgn.text);
  const move = await post(server, `/v1/games/${id}/moves`, { move: 'Ng3', expected_version: expected.version },
    { headers: { authorization: `Bearer ${TOKENS.white}` } });
  assert.equal(move.status, 200, move.text);
});

test('the first format had no variants: its games answer standard', async () => {
  const [id] = await storeFixture('legacy_game_chess960_resigned.json');
  const read = await get(server, `/v1/games/${id}`);
  assert.equal(read.status, 200, read.text);
  assert.deepEqual([read.body.variant, read.body.chess960], ['standard', true]);
});
