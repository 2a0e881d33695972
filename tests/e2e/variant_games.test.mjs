// Stored games in the variants, over real HTTP on a real redis-server: a
// crazyhouse and a three-check game created, played (drops, checks),
// followed on their event stream and a multi-game stream, exported (GET
// /pgn, POST /v1/games/export as PGN and NDJSON) and imported again to the
// same moves, position and result, chessops (Lichess's rules) replaying the
// PGN chessd writes to the FEN chessd stored; a game in every variant played
// to its own end; takebacks (undo, and one agreed) that give a pocket back;
// a flag falling, a draw agreed and a creation retried under its
// Idempotency-Key in a variant. Records written before variants existed are
// read as standard in legacy.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { parsePgn, startingPosition } from 'chessops/pgn';
import { parseSan } from 'chessops/san';
import { makeFen, parseFen } from 'chessops/fen';
import { setupPosition } from 'chessops/variant';
import { startServer, gameRedis } from './server.mjs';
import { get, post, call, sleep } from './http.mjs';
import { openEvents, openMultiEvents } from './events.mjs';

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

// chessops's rules names, by chessd's variant key.
const CHESSOPS = { crazyhouse: 'crazyhouse', atomic: 'atomic', antichess: 'antichess', kingOfTheHill: 'kingofthehill',
  threeCheck: '3check', horde: 'horde', racingKings: 'racingkings' };


/** POST /v1/games (201 expected): { id, tokens, version, body }. */
async function createGame(body, opts) {
  const res = await post(server, '/v1/games', body, opts);
  assert.equal(res.status, 201, `create ${JSON.stringify(body)}: ${res.text}`);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, body: res.body };
}

/** Plays moves on g, each by the side to move; resolves to the answers (GameChange). */
async function playMoves(g, moves) {
  const answers = [];
  for (const move of moves) {
    const turn = (await get(server, `/v1/games/${g.id}?legal_moves=false`)).body.position.turn;
    const res = await post(server, `/v1/games/${g.id}/moves`, { move, expected_version: g.version }, auth(g.tokens[turn]));
    assert.equal(res.status, 200, `${move} at version ${g.version}: ${res.text}`);
    g.version = res.body.version;
    answers.push(res.body);
  }
  return answers;
}

/** The stateless API's position after moves from the variant's start (or fen). */
async function stateless(variant, moves, fen) {
  const res = await post(server, '/v1/position/moves?legal_moves=false', { variant, moves, ...(fen ? { fen } : {}) });
  assert.equal(res.status, 200, res.text);
  return res.body.position;
}

/** chessops replays a PGN (its Variant and FEN tags read by chessops) and answers the final FEN it reaches. */
function chessopsReplay(pgnText) {
  const [game] = parsePgn(pgnText);
  const pos = startingPosition(game.headers).unwrap();
  for (const node of game.moves.mainline()) {
    const move = parseSan(pos, node.san);
    assert.ok(move, `chessops cannot read ${node.san} in ${makeFen(pos.toSetup())}`);
    pos.play(move);
  }
  return { rules: pos.rules, fen: makeFen(pos.toSetup()) };
}

/** chessd's FEN as chessops writes the same position. */
const chessopsFen = (variant, fen) => makeFen(setupPosition(CHESSOPS[variant], parseFen(fen).unwrap()).unwrap().toSetup());

const STREAMED = [
  { variant: 'crazyhouse', title: 'Crazyhouse',
    moves: ['e4', 'd5', 'exd5', 'Qxd5', 'Nc3', 'Qa5', 'P@b4', 'Qxb4', 'Nf3', 'Qxc3', 'dxc3', 'P@e3', 'Bxe3', 'N@d4', '@e5'],
    sans: ['e4', 'd5', 'exd5', 'Qxd5', 'Nc3', 'Qa5', 'P@b4', 'Qxb4', 'Nf3', 'Qxc3', 'dxc3', 'P@e3', 'Bxe3', 'N@d4', 'P@e5'],
    status: 'active', result: '*', termination: null },
  { variant: 'threeCheck', title: 'Three-check',
    moves: ['e4', 'e5', 'Bc4', 'Nc6', 'Bxf7+', 'Kxf7', 'Qh5+', 'g6', 'Qxe5', 'Qe7', 'Qxe7+'],
    sans: ['e4', 'e5', 'Bc4', 'Nc6', 'Bxf7+', 'Kxf7', 'Qh5+', 'g6', 'Qxe5', 'Qe7', 'Qxe7+'],
    status: 'variant_end', result: '1-0', termination: 'three_checks' },
];

test('crazyhouse and three-check: created, played with drops and checks as streams follow, exported as PGN and NDJSON, imported back the same', async () => {
  const games = [];
  for (const spec of STREAMED) {
    const g = await createGame({ variant: spec.variant, white: 'Ann', black: 'Bob', takeback: 'free' });
    assert.equal(g.body.variant, spec.variant);
    assert.equal(g.body.position.variant, spec.variant);
    assert.equal(g.body.initial_fen, (await stateless(spec.variant, [])).fen, 'the variant\'s own start');
    games.push({ ...g, spec });
  }
  const streams = await Promise.all(games.map((g) => openEvents(server, g.id, { sse: true })));
  const multi = await openMultiEvents(server, { ids: games.map((g) => g.id) });
  assert.equal(multi.status, 200);

  for (const g of games) {
    const { spec } = g;
    const answers = await playMoves(g, spec.moves);
    assert.deepEqual(answers.map((a) => a.move.san), spec.sans, `${spec.variant}: the SAN the answers give`);
    for (let i = 0; i < answers.length; i++) {
      const want = await stateless(spec.variant, spec.moves.slice(0, i + 1));
      assert.equal(answers[i].position.fen, want.fen, `${spec.variant} ply ${i + 1}`);
      assert.deepEqual(answers[i].position.pockets, want.pockets);
      assert.deepEqual(answers[i].position.checks_given, want.checks_given);
    }
    const last = answers.at(-1);
    assert.deepEqual([last.status, last.result, last.termination], [spec.status, spec.result, spec.termination]);
    const read = await get(server, `/v1/games/${g.id}`);
    assert.equal(read.body.variant, spec.variant);
    assert.deepEqual(read.body.moves.map((m) => m.san), spec.sans);
    assert.equal(read.body.position.fen, last.position.fen);
    g.read = read.body;
  }
  // Every change reached the game's own stream, and the multi-game stream, in order.
  for (const [k, g] of games.entries()) {
    const stream = streams[k];
    await stream.until((s) => s.events.some((e) => e.data.version === g.version), 5000, `${g.spec.variant}'s last change`);
    const snapshot = stream.events[0].data;
    assert.equal(snapshot.type, 'game');
    assert.equal(snapshot.variant, g.spec.variant);
    const changes = stream.events.filter((e) => e.data.type === 'change');
    assert.deepEqual(changes.map((e) => e.data.version), g.spec.moves.map((_, i) => i + 2));
    assert.equal(changes.at(-1).data.position.fen, g.read.position.fen);
    stream.close();
    await multi.until((s) => s.events.some((e) => e.data.id === g.id && e.data.version === g.version), 5000,
      `${g.spec.variant} on the multi-game stream`);
    const about = multi.events.filter((e) => e.data.id === g.id && e.data.type === 'change');
    assert.deepEqual(about.map((e) => e.data.version), g.spec.moves.map((_, i) => i + 2));
    assert.equal(about.at(-1).data.position.fen, g.read.position.fen);
  }
  multi.close();

  // PGN out: Lichess's [Variant] name, no FEN tag from the variant's own start; chessops replays it.
  for (const g of games) {
    const pgn = await get(server, `/v1/games/${g.id}/pgn`);
    assert.equal(pgn.status, 200);
    assert.ok(pgn.text.includes(`[Variant "${g.spec.title}"]\n`), pgn.text);
    assert.ok(!pgn.text.includes('[FEN ') && !pgn.text.includes('[SetUp '), pgn.text);
    assert.ok(pgn.text.includes(`[Result "${g.spec.result}"]\n`));
    const replayed = chessopsReplay(pgn.text);
    assert.equal(replayed.rules, CHESSOPS[g.spec.variant]);
    assert.equal(replayed.fen, chessopsFen(g.spec.variant, g.read.position.fen), `${g.spec.variant}: chessops's final position`);
    g.pgn = pgn.text;
  }
  // The export: NDJSON is GET's games, PGN is GET's PGN.
  const ndjson = await call(server, 'POST', '/v1/games/export', { json: { ids: games.map((g) => g.id) } });
  assert.equal(ndjson.status, 200, ndjson.text);
  const exported = ndjson.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(exported.map((e) => [e.variant, e.position.fen]), games.map((g) => [g.spec.variant, g.read.position.fen]));
  const pgnExport = await call(server, 'POST', '/v1/games/export', { json: { ids: games.map((g) => g.id) }, headers: { accept: 'application/x-chess-pgn' } });
  assert.equal(pgnExport.text, games.map((g) => g.pgn).join('\n'));

  // PGN in: the exported text, read back (POST /v1/pgn) and stored again (POST /v1/games with pgn).
  const read = await post(server, '/v1/pgn', { pgn: pgnExport.text });
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(read.body.games.map((x) => x.variant), games.map((g) => g.spec.variant));
  for (const g of games) {
    const imported = await createGame({ pgn: g.pgn });
    const back = imported.body;
    assert.equal(back.variant, g.spec.variant);
    assert.deepEqual(back.moves, g.read.moves, `${g.spec.variant}: the same moves`);
    assert.equal(back.position.fen, g.read.position.fen, `${g.spec.variant}: the same final FEN`);
    assert.deepEqual([back.status, back.result, back.termination], [g.read.status, g.read.result, g.read.termination]);
    assert.deepEqual([back.white.name, back.black.name], ['Ann', 'Bob']);
    const again = await get(server, `/v1/games/${imported.id}/pgn`);
    assert.equal(again.text.split('\n\n')[1], g.pgn.split('\n\n')[1], 'the same movetext');
  }
  // Lichess's other spellings and python-chess's aliases read too.
  for (const [tag, variant] of [['crazyhouse', 'crazyhouse'], ['Three-Check', 'threeCheck'], ['3check', 'threeCheck'],
    ['zh', 'crazyhouse'], ['King of the Hill', 'kingOfTheHill'], ['Racing Kings', 'racingKings'], ['S-chess', 'seirawan']]) {
    const res = await post(server, '/v1/pgn', { pgn: `[Variant "${tag}"]\n\n*` });
    assert.equal(res.status, 200, `${tag}: ${res.text}`);
    assert.equal(res.body.games[0].variant, variant, tag);
  }
});

// One game in each variant from a position where a move or two ends it by the variant's rules.
const EVERY_END = [
  { variant: 'atomic', fen: 'kn6/8/8/8/8/8/8/KR6 w - - 0 1', moves: ['Rxb8'], result: '1-0', termination: 'king_exploded' },
  { variant: 'antichess', fen: '8/8/8/8/8/8/p7/R7 w - - 0 1', moves: ['Rxa2'], result: '0-1', termination: 'no_pieces' },
  { variant: 'antichess', fen: '8/8/8/8/p7/8/P7/8 w - - 0 1', moves: ['a3'], result: '0-1', termination: 'stalemate_win' },
  { variant: 'kingOfTheHill', fen: 'k7/8/8/8/8/3K4/8/8 w - - 0 1', moves: ['Kd4'], result: '1-0', termination: 'king_of_the_hill' },
  { variant: 'threeCheck', fen: '4k3/8/8/8/8/8/8/3QK3 w - - 1+3 0 1', moves: ['Qe2+'], result: '1-0', termination: 'three_checks' },
  { variant: 'horde', fen: 'k7/8/8/8/8/8/8/rP6 b - - 0 1', moves: ['Rxb1'], result: '0-1', termination: 'horde_captured' },
  { variant: 'racingKings', fen: '8/1K6/8/8/8/8/k7/8 w - - 0 1', moves: ['Kb8'], result: '1-0', termination: 'race_finished' },
  { variant: 'racingKings', fen: '8/1K5k/8/8/8/8/8/8 w - - 0 1', moves: ['Kb8', 'Kh8'], result: '1/2-1/2', termination: 'race_finished' },
  { variant: 'crazyhouse', fen: 'k7/8/1K6/8/8/8/8/8[Q] w - - 0 1', moves: ['Q@b7#'], result: '1-0', termination: 'checkmate', status: 'checkmate' },
  { variant: 'seirawan', fen: 'k7/8/1K6/8/8/8/8/7E[] w - - 0 1', moves: ['Eh8#'], result: '1-0', termination: 'checkmate', status: 'checkmate' },
];

test('a game in each variant played to its own end: the termination and result, refused afterwards, its PGN imported back', async () => {
  const seen = new Set();
  for (const end of EVERY_END) {
    const g = await createGame({ variant: end.variant, fen: end.fen });
    const answers = await playMoves(g, end.moves);
    const last = answers.at(-1);
    const status = end.status ?? 'variant_end';
    const what = `${end.variant} ${end.termination}`;
    assert.deepEqual([last.status, last.result, last.termination], [status, end.result, end.termination], what);
    assert.equal(last.position.legal_moves?.length ?? 0, 0, `${what}: no legal move once over`);
    const read = (await get(server, `/v1/games/${g.id}`)).body;
    assert.deepEqual([read.variant, read.status, read.result, read.termination], [end.variant, status, end.result, end.termination]);
    const turn = read.position.turn;
    const after = await post(server, `/v1/games/${g.id}/resign`, { expected_version: g.version }, auth(g.tokens[turn]));
    assert.equal(after.status, 409, after.text);
    assert.equal(after.body.code, 'game_over');
    const pgn = (await get(server, `/v1/games/${g.id}/pgn`)).text;
    assert.ok(pgn.includes(`[Result "${end.result}"]\n`), pgn);
    assert.ok(pgn.includes('[SetUp "1"]\n') && pgn.includes(`[FEN "${read.initial_fen}"]\n`), `${what}: not the variant's start`);
    const back = (await createGame({ pgn })).body;
    assert.deepEqual([back.variant, back.position.fen, back.status, back.result, back.termination],
      [end.variant, read.position.fen, status, end.result, end.termination], `${what}: imported back`);
    seen.add(end.variant);
  }
  assert.equal(seen.size, 8, 'every variant');
});

test('crazyhouse: a takeback agreed and an undo give the captured piece back to its pocket and the dropped one to its owner', async () => {
  const g = await createGame({ variant: 'crazyhouse', takeback: 'agreement' });
  await playMoves(g, ['e4', 'd5', 'exd5', 'Qxd5']);
  let now = (await get(server, `/v1/games/${g.id}`)).body.position;
  assert.equal(now.pockets.white.pawn, 1);
  assert.equal(now.pockets.black.pawn, 1);
  const offer = await post(server, `/v1/games/${g.id}/takeback`, { action: 'offer', expected_version: g.version }, auth(g.tokens.black));
  assert.equal(offer.status, 200, offer.text);
  const accept = await post(server, `/v1/games/${g.id}/takeback`, { action: 'accept', expected_version: offer.body.version }, auth(g.tokens.white));
  assert.equal(accept.status, 200, accept.text);
  assert.equal(accept.body.move_count, 3);
  assert.equal(accept.body.position.fen, (await stateless('crazyhouse', ['e4', 'd5', 'exd5'])).fen);
  assert.deepEqual(accept.body.position.pockets.black, { pawn: 0, knight: 0, bishop: 0, rook: 0, queen: 0 }, 'the pawn Qxd5 took is back on d5');

  const free = await createGame({ variant: 'crazyhouse', takeback: 'free' });
  await playMoves(free, ['e4', 'd5', 'exd5', 'Qxd5', 'P@e6']);
  now = (await get(server, `/v1/games/${free.id}`)).body.position;
  assert.equal(now.pockets.white.pawn, 0, 'dropped');
  const undo = await post(server, `/v1/games/${free.id}/undo`, { expected_version: free.version }, auth(free.tokens.white));
  assert.equal(undo.status, 200, undo.text);
  assert.equal(undo.body.position.pockets.white.pawn, 1, 'back in the pocket');
  assert.equal(undo.body.position.fen, 'rnb1kbnr/ppp1pppp/8/3q4/8/8/PPPP1PPP/RNBQKBNR[Pp] w KQkq - 0 3');
  free.version = undo.body.version;
  const redo = await playMoves(free, ['P@e6']);
  assert.equal(redo[0].position.pockets.white.pawn, 0);
});

test('in a variant: a flag falls (time_forfeit), a draw is agreed, a creation retried under its Idempotency-Key is the same game', async () => {
  const timed = await createGame({ variant: 'crazyhouse', clock: { initial_ms: 1000 } });
  await playMoves(timed, ['e4', 'd5', 'exd5']);
  await sleep(1300);
  const fallen = (await get(server, `/v1/games/${timed.id}`)).body;
  // Crazyhouse has no insufficient material: the side with time wins.
  assert.deepEqual([fallen.status, fallen.result, fallen.termination], ['timeout', '1-0', 'time_forfeit']);
  assert.equal(fallen.variant, 'crazyhouse');

  const drawn = await createGame({ variant: 'kingOfTheHill' });
  await playMoves(drawn, ['e4', 'e5']);
  const offer = await post(server, `/v1/games/${drawn.id}/draw`, { action: 'offer', expected_version: drawn.version }, auth(drawn.tokens.white));
  assert.equal(offer.status, 200, offer.text);
  const accept = await post(server, `/v1/games/${drawn.id}/draw`, { action: 'accept', expected_version: offer.body.version }, auth(drawn.tokens.black));
  assert.equal(accept.status, 200, accept.text);
  assert.deepEqual([accept.body.status, accept.body.result, accept.body.termination], ['draw', '1/2-1/2', 'agreement']);

  const key = { headers: { 'idempotency-key': randomBytes(18).toString('base64url') } };
  const first = await createGame({ variant: 'horde', white: 'Hordes' }, key);
  const retry = await createGame({ variant: 'horde', white: 'Hordes' }, key);
  assert.equal(retry.id, first.id);
  assert.deepEqual(retry.tokens, first.tokens);
  assert.equal(retry.body.variant, 'horde');
  assert.equal(retry.body.initial_fen, first.body.initial_fen);
  const other = await post(server, '/v1/games', { variant: 'atomic', white: 'Hordes' }, key);
  assert.equal(other.status, 422, 'the same key for another variant is another request');
  assert.equal(other.body.code, 'idempotency_key_reused');
});
