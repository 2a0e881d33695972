// Chess960 games by number over real HTTP against a real redis-server:
// `chess960_position` picks a start (checked against kokopu, the oracle of
// tests/oracle), `chess960: true` alone draws one at random, the number is in
// the game (after a move and a fresh read from Redis too) and its PGN carries
// Variant, SetUp and FEN, and the refusals: a number out of range, a number
// with a `fen` or with `chess960: false`. The stateless POST /v1/position
// and /v1/position/moves take the number too. Answers are checked against
// openapi.yaml by http.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { startServer, gameRedis, REPO_ROOT } from './server.mjs';
import { get, post, expectProblem, START_FEN } from './http.mjs';

// kokopu lives with the other oracles (npm ci --prefix tests/oracle).
const kokopu = createRequire(path.join(REPO_ROOT, 'tests/oracle/package.json'))('kokopu');
const kokopuStart = (n) => new kokopu.Position('chess960', n).fen();
const placement = (fen) => fen.split(' ')[0];

let server;
let redis;

before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url], { env: { CHESSD_TOKEN_SECRET: 'e2e-chess960-token-secret-0123456' } });
});
after(async () => {
  await server?.stop();
  await redis?.stop();
});

async function create(body) {
  const res = await post(server, '/v1/games', body);
  assert.equal(res.status, 201, `create ${JSON.stringify(body)}: ${res.text}`);
  return res.body;
}

test('chess960_position starts the numbered start, as kokopu builds it', async () => {
  for (const n of [0, 1, 105, 518, 959, 317, 734]) {
    const game = await create({ chess960_position: n });
    assert.equal(game.chess960, true);
    assert.equal(game.chess960_position, n);
    assert.equal(placement(game.initial_fen), placement(kokopuStart(n)), `start ${n}`);
    assert.match(game.initial_fen, / w [A-HKQa-hkq]{4} - 0 1$/);
  }
  const standard = await create({ chess960_position: 518, chess960: true });
  assert.equal(standard.initial_fen, START_FEN);
});

test('chess960: true without a fen draws a random start, and the number is its own', async () => {
  const kokopuNumber = new Map();
  for (let n = 0; n < 960; n++) kokopuNumber.set(placement(kokopuStart(n)), n);
  const seen = new Set();
  for (let i = 0; i < 24; i++) {
    const game = await create({ chess960: true });
    assert.equal(game.chess960, true);
    assert.ok(Number.isInteger(game.chess960_position) && game.chess960_position >= 0 && game.chess960_position < 960);
    assert.equal(kokopuNumber.get(placement(game.initial_fen)), game.chess960_position);
    seen.add(game.chess960_position);
  }
  // 24 draws from 960 repeat one number 12 or more times with odds far below 1e-20.
  assert.ok(seen.size > 12, `only ${seen.size} different starts in 24 draws`);
});

test('the number survives a move and a read from Redis, and the PGN names the variant', async () => {
  const game = await create({ chess960_position: 0 }); // bbqnnrkr
  const moved = await post(server, `/v1/games/${game.id}/moves`, { move: 'g2g3', expected_version: game.version },
    { headers: { authorization: `Bearer ${game.tokens.white}` } });
  assert.equal(moved.status, 200, moved.text);
  // A second server has never seen the game: it reads it from Redis.
  const fresh = await startServer(['--redis', redis.url], { env: { CHESSD_TOKEN_SECRET: 'e2e-chess960-token-secret-0123456' } });
  let read;
  try {
    read = await get(fresh, `/v1/games/${game.id}`);
  } finally {
    await fresh.stop();
  }
  assert.equal(read.status, 200);
  assert.equal(read.body.chess960_position, 0);
  assert.equal(read.body.initial_fen, game.initial_fen);
  const pgn = await get(server, `/v1/games/${game.id}/pgn`);
  assert.equal(pgn.status, 200);
  const text = pgn.text;
  assert.match(text, /^\[Variant "Chess960"\]$/m);
  assert.match(text, /^\[SetUp "1"\]$/m);
  assert.ok(text.includes(`[FEN "${game.initial_fen}"]`), text);
  assert.match(text, /^1\. g3 \*$/m);
});

test('games that are no numbered Chess960 start have a null chess960_position', async () => {
  assert.equal((await create({})).chess960_position, null);
  assert.equal((await create({ fen: START_FEN })).chess960_position, null);
  // A Chess960 game from a FEN: the number when it is a start, null otherwise.
  const start = await create({ chess960: true, fen: kokopuStart(42) });
  assert.equal(start.chess960_position, 42);
  const later = await create({ chess960: true, fen: 'bbqnnrkr/pppppppp/8/8/8/6P1/PPPPPP1P/BBQNNRKR b FHfh - 0 1' });
  assert.equal(later.chess960_position, null);
});

test('a number out of range or contradicting fen or chess960 is refused', async () => {
  for (const bad of [-1, 960, 1e9, 5.5, '518', true, [1]]) {
    const res = await post(server, '/v1/games', { chess960_position: bad });
    const problem = expectProblem(res, 400, 'invalid_chess960_position');
    assert.match(problem.detail, /0 to 959/);
  }
  expectProblem(await post(server, '/v1/games', { chess960_position: 3, fen: START_FEN }), 400, 'conflicting_fields');
  expectProblem(await post(server, '/v1/games', { chess960_position: 3, chess960: false }), 400, 'conflicting_fields');
  // null means "not given".
  assert.equal((await create({ chess960_position: null })).chess960_position, null);
});

test('GET /v1/position?chess960_position=N describes start N, as kokopu builds it', async () => {
  for (const n of [0, 518, 959, 77, 600]) {
    const res = await get(server, `/v1/position?chess960_position=${n}&legal_moves=false`);
    assert.equal(res.status, 200, res.text);
    assert.equal(placement(res.body.fen), placement(kokopuStart(n)));
    assert.equal(res.body.chess960, true);
    assert.equal(res.body.status, 'active');
  }
  const withMoves = await get(server, '/v1/position?chess960_position=0&chess960=true');
  assert.equal(withMoves.body.legal_moves.length, 20);
  for (const bad of ['960', '-1', '1.5', 'x', '', '99999999999999999999'])
    expectProblem(await get(server, `/v1/position?chess960_position=${encodeURIComponent(bad)}`), 400, 'invalid_chess960_position');
  expectProblem(await get(server, `/v1/position?chess960_position=3&fen=${encodeURIComponent(START_FEN)}`), 400, 'conflicting_fields');
  expectProblem(await get(server, '/v1/position?chess960_position=3&chess960=false'), 400, 'conflicting_fields');
});

test('POST /v1/position and /v1/position/moves take chess960_position too, and play on from that start as kokopu does', async () => {
  for (const n of [0, 518, 959, 77, 600]) {
    const res = await post(server, '/v1/position?legal_moves=false', { chess960_position: n });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.fen, (await get(server, `/v1/position?chess960_position=${n}&legal_moves=false`)).body.fen);
    assert.equal(placement(res.body.fen), placement(kokopuStart(n)));
    assert.equal(res.body.chess960, true);
    // 24 plies chosen from kokopu's legal moves (castling whenever it is legal), sent as SAN.
    const oracle = new kokopu.Position('chess960', n);
    const sans = [];
    for (let ply = 0; ply < 24; ply++) {
      const moves = oracle.moves();
      if (moves.length === 0) break;
      const castle = moves.find((m) => m.isCastling());
      const move = castle ?? moves[(ply * 7 + n) % moves.length];
      sans.push(oracle.notation(move));
      oracle.play(move);
    }
    const played = await post(server, '/v1/position/moves?legal_moves=false', { chess960_position: n, moves: sans });
    assert.equal(played.status, 200, `${n}: ${sans.join(' ')}: ${played.text}`);
    assert.equal(placement(played.body.position.fen), placement(oracle.fen()), `${n}: ${sans.join(' ')}`);
    assert.equal(played.body.position.turn, oracle.turn() === 'w' ? 'white' : 'black');
  }
  for (const bad of [-1, 960, 5.5, '518', true])
    expectProblem(await post(server, '/v1/position', { chess960_position: bad }), 400, 'invalid_chess960_position');
  expectProblem(await post(server, '/v1/position', { chess960_position: 3, fen: START_FEN }), 400, 'conflicting_fields');
  expectProblem(await post(server, '/v1/position/moves', { chess960_position: 3, chess960: false, moves: [] }), 400,
    'conflicting_fields');
  // null means "not given": the standard start.
  assert.equal((await post(server, '/v1/position', { chess960_position: null })).body.fen, START_FEN);
});
