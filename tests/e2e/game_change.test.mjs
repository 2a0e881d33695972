// The answer of a game change (POST /v1/games/{id}/moves, /undo, /resign,
// /draw): a GameChange (openapi.yaml) with exactly its fields, the move
// played (uci and san, as chess.js has them) or null, move_count and the new
// state, never the move list. Its size does not grow with the game (a
// 200-ply game of pawn moves and knight shuffles, whose repetition counts are
// checked at every ply); an undo gives back the repetition counts from before
// the move; GET /v1/games/{id} lists every move as the changes answered it.
// And ?legal_moves on every game route: false leaves legal_moves out of the
// position, anything but true/false/1/0 is 400 invalid_parameter and changes
// nothing. Every answer is also checked against openapi.yaml by http.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Chess } from 'chess.js';
import { startServer, startRedis, gameRedis } from './server.mjs';
import { get, post, expectProblem } from './http.mjs';
import { spec, validatorFor } from './openapi.mjs';

let redis;
let server;

before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url]);
});
after(async () => {
  await server?.stop();
  await redis?.stop();
});

const auth = (token) => ({ authorization: `Bearer ${token}` });
const CHANGES = ['moves', 'undo', 'resign', 'draw'];

async function createGame(body = {}, query = '') {
  // Changes here include /undo: the free takeback policy.
  const res = await post(server, `/v1/games${query}`, { takeback: 'free', ...body });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, turn: res.body.position.turn, created: res.body };
}

async function readGame(g, query = '') {
  const res = await get(server, `/v1/games/${g.id}${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** A change by `color` against the game's version; expects 200 and follows the handle. */
async function changeOk(g, color, what, body = {}, query = '') {
  const res = await post(server, `/v1/games/${g.id}/${what}${query}`, { ...body, expected_version: g.version },
    { headers: auth(g.tokens[color]) });
  assert.equal(res.status, 200, `${what} ${JSON.stringify(body)} by ${color} at version ${g.version}: ${res.text}`);
  assert.equal(res.body.version, g.version + 1);
  assert.equal(res.headers.get('etag'), `"${g.version + 1}"`);
  g.version = res.body.version;
  g.turn = res.body.position.turn;
  return res;
}

/** The move chess.js makes of `text` in `chess`, as the API writes it: { uci, san }. */
function played(chess, text) {
  const m = chess.move(text);
  return { uci: m.from + m.to + (m.promotion ?? ''), san: m.san };
}

/** The FEN without its en passant field (chess.js and chessd may differ on when to write one). */
const fenFields = (fen) => fen.split(' ').filter((_, i) => i !== 3).join(' ');

test('openapi.yaml: each of the four changes answers 200 with GameChange, a closed object without the move list', () => {
  const doc = spec().doc;
  for (const what of CHANGES) {
    const ok = doc.paths[`/v1/games/{id}/${what}`].post.responses['200'];
    assert.equal(ok.$ref, '#/components/responses/GameChange', `POST /v1/games/{id}/${what}`);
  }
  // GameChange is GameChangeFields closed (the change events add their type and event to the same fields).
  const schema = doc.components.schemas.GameChange;
  assert.equal(schema.unevaluatedProperties, false);
  assert.deepEqual(schema.allOf, [{ $ref: '#/components/schemas/GameChangeFields' }]);
  const fields = doc.components.schemas.GameChangeFields;
  assert.deepEqual([...fields.required].sort(), Object.keys(fields.properties).sort());
  assert.ok(!('moves' in fields.properties));
});

test('every change answers exactly the GameChange fields: the move played (as chess.js has it) or null, move_count, the new state; GET lists the moves as answered', async () => {
  const schema = spec().doc.components.schemas.GameChange;
  const fields = [...spec().doc.components.schemas.GameChangeFields.required].sort();
  const validate = validatorFor(schema, 'components.schemas.GameChange');
  const g = await createGame({ white: 'Ann', black: 'Bob' });
  const chess = new Chess();
  const answered = [];
  let updatedAt = Date.parse(g.created.updated_at);

  /** Checks one change's answer: exactly the fields, valid, the count, and time moving forward. */
  function check(res, what) {
    assert.deepEqual(Object.keys(res.body).sort(), fields, `${what}: the GameChange fields, no others: ${res.text}`);
    assert.ok(validate(res.body), `${what}: ${JSON.stringify(validate.errors)}`);
    assert.equal(res.body.id, g.id);
    assert.equal(res.body.move_count, answered.length, `${what}: move_count`);
    assert.ok(Date.parse(res.body.updated_at) >= updatedAt, `${what}: updated_at does not go back`);
    updatedAt = Date.parse(res.body.updated_at);
    assert.equal(fenFields(res.body.position.fen), fenFields(chess.fen()), `${what}: the position`);
  }

  // Moves in SAN and in UCI, a capture, a check, castling; each answer names its move both ways.
  for (const text of ['e4', 'e7e5', 'Nf3', 'b8c6', 'Bb5', 'a7a6', 'Bxc6', 'd7c6', 'd4', 'f8b4', 'c3', 'Bd6', 'e1g1']) {
    const expected = played(chess, text);
    const res = await changeOk(g, g.turn, 'moves', { move: text });
    answered.push(expected);
    assert.deepEqual(res.body.move, expected, `the answer to ${text}`);
    assert.equal(res.body.position.check, expected.san.endsWith('+'), `${text}: check`);
    check(res, `move ${text}`);
  }
  assert.deepEqual(answered[6], { uci: 'b5c6', san: 'Bxc6' });
  assert.deepEqual(answered[9], { uci: 'f8b4', san: 'Bb4+' });
  assert.deepEqual(answered[12], { uci: 'e1g1', san: 'O-O' });

  // Undo by the last mover: no move, one less in the count; the move played again.
  const undone = await changeOk(g, 'white', 'undo');
  chess.undo();
  answered.pop();
  assert.equal(undone.body.move, null);
  check(undone, 'undo');
  const again = await changeOk(g, 'white', 'moves', { move: 'O-O' });
  answered.push(played(chess, 'O-O'));
  assert.deepEqual(again.body.move, { uci: 'e1g1', san: 'O-O' });
  check(again, 'move O-O');

  // Draw actions: no move, the same count, the offer in draw_offer.
  const offer = await changeOk(g, 'white', 'draw', { action: 'offer' });
  assert.equal(offer.body.move, null);
  assert.equal(offer.body.draw_offer, 'white');
  check(offer, 'draw offer');
  const decline = await changeOk(g, 'black', 'draw', { action: 'decline' });
  assert.equal(decline.body.move, null);
  assert.equal(decline.body.draw_offer, null);
  check(decline, 'draw decline');
  const block = await changeOk(g, 'black', 'moves', { move: 'Bg4' });
  answered.push(played(chess, 'Bg4'));
  assert.deepEqual(block.body.move, { uci: 'c8g4', san: 'Bg4' });
  check(block, 'move Bg4');

  // GET: every move, each as its change answered it; the state as the last change left it.
  const mid = await readGame(g);
  assert.deepEqual(mid.moves, answered);
  assert.equal(mid.version, g.version);
  assert.deepEqual(mid.position, block.body.position);
  assert.equal(mid.position.legal_moves.length, chess.moves().length);
  assert.equal(mid.updated_at, block.body.updated_at);

  // Resignation: no move, the game over, no legal moves in the position.
  const resigned = await changeOk(g, 'black', 'resign');
  assert.equal(resigned.body.move, null);
  assert.equal(resigned.body.status, 'resigned');
  assert.equal(resigned.body.result, '1-0');
  assert.equal(resigned.body.termination, 'resignation');
  assert.ok(!('legal_moves' in resigned.body.position));
  check(resigned, 'resign');
  const end = await readGame(g);
  assert.deepEqual(end.moves, answered);
  for (const key of ['version', 'status', 'result', 'termination', 'draw_offer', 'updated_at', 'position'])
    assert.deepEqual(end[key], resigned.body[key], `GET ${key} after the resignation`);

  // A promotion with mate answers the promotion piece in UCI and =Q# in SAN.
  const promo = await createGame({ fen: '7k/1P6/6K1/8/8/8/8/8 w - - 0 60' });
  const mate = await changeOk(promo, 'white', 'moves', { move: 'b7b8q' });
  assert.deepEqual(mate.body.move, { uci: 'b7b8q', san: 'b8=Q#' });
  assert.equal(mate.body.move_count, 1);
  assert.equal(mate.body.status, 'checkmate');
  assert.deepEqual((await readGame(promo)).moves, [mate.body.move]);
});

// A line of 200 legal plies: eleven pawn pairs, each followed by the knight
// shuffle Nf3 Nf6 Nc3 Nc6 Ng1 Ng8 Nb1 Nb8 twice (18 plies a segment), then
// g4 g5. Within a segment the position after the pawn pair comes back after
// each shuffle and no other position does (a threefold repetition at the
// segment's end, claimable, never the automatic fivefold), the halfmove clock
// stays under 17, and nothing is captured.
const WHITE_PAWNS = ['a3', 'a4', 'b3', 'b4', 'c4', 'd3', 'd4', 'e3', 'e4', 'f4', 'g3', 'g4'];
const BLACK_PAWNS = ['a6', 'a5', 'b6', 'b5', 'c5', 'd6', 'd5', 'e6', 'e5', 'f5', 'g6', 'g5'];
const SHUFFLE = ['Nf3', 'Nf6', 'Nc3', 'Nc6', 'Ng1', 'Ng8', 'Nb1', 'Nb8'];
const SEGMENT = 2 + 2 * SHUFFLE.length;
const SEGMENTS = 11;
const LONG_LINE = [
  ...WHITE_PAWNS.slice(0, SEGMENTS).flatMap((w, i) => [w, BLACK_PAWNS[i], ...SHUFFLE, ...SHUFFLE]),
  WHITE_PAWNS[SEGMENTS], BLACK_PAWNS[SEGMENTS],
];
const SIZE_SLACK = 12; // bytes: version, move_count and the move number have more digits later; the pawns differ

test('a change\'s answer does not grow with the game: 200 plies, each answer the size of the one at the same point 180 plies earlier', async (t) => {
  assert.equal(LONG_LINE.length, 200);
  const g = await createGame({}, '?legal_moves=false');
  const chess = new Chess();
  const sizes = [];
  const answered = [];
  const gets = {};
  for (const [i, san] of LONG_LINE.entries()) {
    const expected = played(chess, san);
    // Half the moves as UCI; every one with ?legal_moves=false, so the size is the change's own.
    const text = i % 2 ? expected.uci : san;
    const res = await changeOk(g, g.turn, 'moves', { move: text }, '?legal_moves=false');
    assert.deepEqual(res.body.move, expected, `ply ${i + 1}: ${text}`);
    assert.equal(res.body.move_count, i + 1);
    assert.ok(!('legal_moves' in res.body.position), `ply ${i + 1}: legal_moves=false`);
    assert.equal(fenFields(res.body.position.fen), fenFields(chess.fen()), `ply ${i + 1}: the position`);
    // The repetition history at every length: the segment's start comes back at offsets 9 and 17.
    const offset = i % SEGMENT;
    const inShuffle = i < SEGMENTS * SEGMENT;
    const repetitions = !inShuffle || offset < 9 ? 1 : offset < 17 ? 2 : 3;
    assert.equal(res.body.position.repetitions, repetitions, `ply ${i + 1} (${san}): repetitions`);
    assert.deepEqual(res.body.position.claimable_draws, repetitions === 3 ? ['threefold_repetition'] : [], `ply ${i + 1}`);
    assert.equal(res.body.position.halfmove_clock, inShuffle && offset >= 2 ? offset - 1 : 0, `ply ${i + 1}: halfmove clock`);
    assert.equal(res.body.status, 'active');
    answered.push(res.body.move);
    // The opening's name is the data set's (bounded, and it changes along the line): it is not counted.
    sizes.push(Buffer.byteLength(res.text) - Buffer.byteLength(JSON.stringify(res.body.position.opening)));
    if (i + 1 === 18 || i + 1 === 198) gets[i + 1] = Buffer.byteLength((await get(server, `/v1/games/${g.id}?legal_moves=false`)).text);
  }

  // Each ply of the last shuffle segment against the same ply of the first (ply 10 against 190, 18 against 198),
  // and the closing pawn moves against the opening ones.
  const pairs = [...Array.from({ length: SEGMENT }, (_, k) => [k, (SEGMENTS - 1) * SEGMENT + k]), [0, 198], [1, 199]];
  const diffs = pairs.map(([a, b]) => sizes[b] - sizes[a]);
  const worst = Math.max(...diffs.map(Math.abs));
  t.diagnostic(`answer bytes at plies 1..18: ${sizes.slice(0, SEGMENT).join(' ')}; at 181..198: ${sizes.slice(180, 198).join(' ')}; ` +
    `199, 200: ${sizes[198]} ${sizes[199]}; largest difference ${worst}; GET at ply 18 ${gets[18]} bytes, at 198 ${gets[198]}`);
  assert.ok(worst <= SIZE_SLACK, `answers grew with the game: differences ${diffs.join(' ')} bytes (plies ${pairs.map(([a, b]) => `${a + 1}/${b + 1}`).join(' ')})`);
  assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 3 * SIZE_SLACK, `answer sizes from ${Math.min(...sizes)} to ${Math.max(...sizes)} bytes`);
  // The measure would see a move list: GET, which has it, grew by 180 moves of ~28 bytes.
  assert.ok(gets[198] - gets[18] > 180 * 20, `GET grew only from ${gets[18]} to ${gets[198]} bytes`);

  // GET has every move, with the uci and san each change answered.
  const game = await readGame(g, '?legal_moves=false');
  assert.equal(game.moves.length, 200);
  assert.deepEqual(game.moves, answered);
  assert.equal(game.version, 201);
  assert.equal(fenFields(game.position.fen), fenFields(chess.fen()));
  assert.deepEqual(chess.history(), game.moves.map((m) => m.san), 'chess.js played the same SAN');
});

// An undo cuts the stored move list and history; the repetition counts must
// come back as they were before the undone move, also when that move was a
// pawn move (after which a change loads no history older than it).
test('undo restores the repetition history: after an undone pawn move the earlier repetitions still count, up to the fivefold draw', async () => {
  const g = await createGame({}, '?legal_moves=false');
  const reps = [];
  const move = async (san) => {
    const res = await changeOk(g, g.turn, 'moves', { move: san }, '?legal_moves=false');
    reps.push(`${san}:${res.body.position.repetitions}`);
    return res;
  };
  const undo = async () => {
    const res = await changeOk(g, g.turn === 'white' ? 'black' : 'white', 'undo', {}, '?legal_moves=false');
    reps.push(`undo:${res.body.position.repetitions}`);
    return res;
  };
  for (const san of ['Nf3', 'Nf6', 'Ng1', 'Ng8', 'e4']) await move(san);
  const back = await undo();
  assert.equal(back.body.move_count, 4);
  assert.equal(back.body.position.halfmove_clock, 4);
  for (const san of ['Nf3', 'Nf6', 'Ng1']) await move(san);
  const threefold = await move('Ng8');
  assert.deepEqual(threefold.body.position.claimable_draws, ['threefold_repetition']);
  await move('Nf3');
  const again = await undo();
  assert.deepEqual(again.body.position.claimable_draws, ['threefold_repetition'], 'the undo keeps the threefold repetition');
  for (const san of ['Nf3', 'Nf6', 'Ng1', 'Ng8', 'Nf3', 'Nf6', 'Ng1']) await move(san);
  const fivefold = await move('Ng8');
  assert.deepEqual(reps, ['Nf3:1', 'Nf6:1', 'Ng1:1', 'Ng8:2', 'e4:1', 'undo:2', 'Nf3:2', 'Nf6:2', 'Ng1:2', 'Ng8:3', 'Nf3:3',
    'undo:3', 'Nf3:3', 'Nf6:3', 'Ng1:3', 'Ng8:4', 'Nf3:4', 'Nf6:4', 'Ng1:4', 'Ng8:5']);
  assert.equal(fivefold.body.status, 'draw');
  assert.equal(fivefold.body.termination, 'fivefold_repetition');
  assert.equal(fivefold.body.move_count, 16);
  assert.deepEqual((await readGame(g)).moves.map((m) => m.san), Array(4).fill(['Nf3', 'Nf6', 'Ng1', 'Ng8']).flat());
});

test('?legal_moves on every game route: false (or 0) leaves legal_moves out of the position and nothing else; maybe is 400 invalid_parameter and changes nothing', async () => {
  const without = ({ legal_moves: _, ...rest }) => rest;
  // Creation.
  const g = await createGame({}, '?legal_moves=false');
  assert.ok(!('legal_moves' in g.created.position));
  const withMoves = await createGame({}, '?legal_moves=1');
  assert.equal(withMoves.created.position.legal_moves.length, 20);
  assert.deepEqual(without(withMoves.created.position), g.created.position);
  expectProblem(await post(server, '/v1/games?legal_moves=maybe', {}), 400, 'invalid_parameter');

  // GET: the same game, with and without.
  const full = await readGame(g);
  const bare = await readGame(g, '?legal_moves=false');
  assert.equal(full.position.legal_moves.length, 20);
  assert.deepEqual(bare, { ...full, position: without(full.position) });
  assert.deepEqual(await readGame(g, '?legal_moves=0'), bare);
  assert.deepEqual(await readGame(g, '?legal_moves=true'), full);
  expectProblem(await get(server, `/v1/games/${g.id}?legal_moves=maybe`), 400, 'invalid_parameter');

  /** A change with ?legal_moves=maybe: refused before anything, the version stays. */
  async function refusedMaybe(color, what, body) {
    const res = await post(server, `/v1/games/${g.id}/${what}?legal_moves=maybe`, { ...body, expected_version: g.version },
      { headers: auth(g.tokens[color]) });
    const p = expectProblem(res, 400, 'invalid_parameter');
    assert.match(p.detail, /legal_moves/);
    assert.equal((await readGame(g)).version, g.version, `${what}?legal_moves=maybe changed the game`);
  }
  /** A change with ?legal_moves=false: no legal_moves, and the position is the one GET then has. */
  async function honoured(color, what, body, query = '?legal_moves=false') {
    const res = await changeOk(g, color, what, body, query);
    assert.ok(!('legal_moves' in res.body.position), `${what}${query}: ${res.text}`);
    const after = await readGame(g);
    if (after.status === 'active') assert.ok(after.position.legal_moves.length > 0);
    assert.deepEqual(res.body.position, without(after.position), `${what}: the position GET has, less legal_moves`);
    return res;
  }

  await refusedMaybe('white', 'moves', { move: 'e4' });
  await honoured('white', 'moves', { move: 'e4' });
  await refusedMaybe('white', 'undo', {});
  await honoured('white', 'undo', {}, '?legal_moves=0');
  await honoured('white', 'moves', { move: 'd4' });
  const defaulted = await changeOk(g, 'black', 'moves', { move: 'd5' });
  assert.ok(defaulted.body.position.legal_moves.length > 0, 'without the parameter the position has its legal moves');
  await refusedMaybe('white', 'draw', { action: 'offer' });
  await honoured('white', 'draw', { action: 'offer' });
  await honoured('black', 'draw', { action: 'decline' });
  await refusedMaybe('black', 'resign', {});
  const resigned = await honoured('black', 'resign', {});
  assert.equal(resigned.body.status, 'resigned');
  assert.deepEqual((await readGame(g)).moves.map((m) => m.san), ['d4', 'd5'], 'only the changes that were made');
});
