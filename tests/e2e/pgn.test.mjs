// PGN import over real HTTP: POST /v1/pgn against chessops's PGN parser on
// a corpus generated here from a seeded PRNG (random legal games played with
// chessops, written with tags and escapes, move numbers in several forms,
// comments, NAGs and suffixes, nested variations of legal and illegal moves,
// escape lines, odd whitespace, some from a FEN, some Chess960), the broken
// inputs (an unterminated comment, an illegal move, a wrong Result tag, a
// 10 MiB body), and POST /v1/games with "pgn", read back through GET and the
// game's PGN. Every answer is checked against openapi.yaml by http.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Chess } from 'chessops/chess';
import { makeFen, parseFen } from 'chessops/fen';
import { makeSan, parseSan } from 'chessops/san';
import { makeUci } from 'chessops/util';
import { parsePgn, emptyHeaders, startingPosition } from 'chessops/pgn';
import { startServer } from './server.mjs';
import { call, get, post, expectProblem, START_FEN } from './http.mjs';
import { prng } from './prng.mjs';
import { chess960Rank, legalMoves } from './random_chess.mjs';

const SEED = Number(process.env.PGN_SEED ?? 20261201);
const GAMES = 360;
const PER_REQUEST = 12;

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const postPgn = (text, type = 'application/x-chess-pgn', query = '') =>
  call(server, 'POST', `/v1/pgn${query}`, { headers: { 'content-type': type }, body: text });
/** With strict=true: the first error of any game is the answer, as a problem. */
const postStrict = (text, type = 'application/x-chess-pgn') => postPgn(text, type, '?strict=true');

// --- the corpus ---

/** A random legal game: { start fen or null, variant or null, moves (SAN), final position }. */
function randomGame(rnd) {
  let pos = Chess.default();
  let fen = null;
  let variant = null;
  const kind = rnd.int(10);
  if (kind === 0) { // Chess960
    const rank = chess960Rank(rnd);
    fen = `${rank}/pppppppp/8/8/8/8/PPPPPPPP/${rank.toUpperCase()} w KQkq - 0 1`;
    variant = rnd.pick(['Chess960', 'chess 960', 'fischerandom', 'CHESS960', 'FischeRandom']);
    pos = Chess.fromSetup(parseFen(fen).unwrap()).unwrap();
  } else if (kind <= 2) { // from a FEN somewhere into a game
    for (let i = rnd.int(30) + 1; i > 0 && !pos.isEnd(); i--) pos.play(rnd.pick(legalMoves(pos))[1]);
    if (pos.isEnd()) pos = Chess.default();
    fen = makeFen(pos.toSetup());
  }
  const seen = new Map();
  const moves = [];
  const plies = rnd.chance(0.1) ? 300 : rnd.int(120);
  for (let i = 0; i < plies && !pos.isEnd(); i++) {
    const key = makeFen(pos.toSetup()).split(' ').slice(0, 4).join(' ');
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (seen.get(key) >= 3 || pos.halfmoves >= 100) break; // well before fivefold and the 75-move rule
    const [san, move] = rnd.pick(legalMoves(pos));
    moves.push(san);
    pos.play(move);
  }
  return { fen, variant, moves, final: pos };
}

const TAG_ALPHABET = [...'abcXYZ 019.-?', '"', '\\', 'é', '♞'];

function escapeTag(value) {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** A comment's text: anything but '}', on one or two lines. */
function commentText(rnd) {
  const words = ['good', 'Nf3', '(', ')', '[%clk 0:01:00]', ';', 'é', '1-0', '$1', '[', '{', 'x'];
  const parts = Array.from({ length: rnd.int(5) + 1 }, () => rnd.pick(words));
  return parts.join(rnd.chance(0.2) ? '\n' : ' ');
}

/** A variation from pos: some legal moves, comments, nested variations (pgn_tree.test.mjs plants illegal ones). */
function variation(rnd, pos, ply, depth) {
  const tokens = ['('];
  const p = pos.clone();
  let n = ply;
  for (let i = rnd.int(4) + 1; i > 0 && !p.isEnd(); i--) {
    if (n % 2 === 0) tokens.push(`${Math.floor(n / 2) + 1}.`);
    else if (tokens.length === 1) tokens.push(`${Math.floor(n / 2) + 1}...`);
    const [san, move] = rnd.pick(legalMoves(p));
    tokens.push(san);
    if (rnd.chance(0.2)) tokens.push(`{${commentText(rnd)}}`);
    if (depth < 3 && rnd.chance(0.15)) tokens.push(...variation(rnd, p, n, depth + 1));
    p.play(move);
    n++;
  }
  tokens.push(')');
  return tokens;
}

const SEPARATORS = [' ', ' ', ' ', '  ', '\t', '\n', '\r\n', ' \t '];

/** Joins tokens with odd whitespace, never making a blank line (chessops ends a game there). */
function joinTokens(rnd, tokens) {
  let out = '';
  for (const t of tokens) {
    if (out === '') { out = t; continue; }
    if (out.endsWith('\n')) out += t; // after a ';' comment or an escape line
    else if (t.startsWith('%')) out += '\n' + t; // an escape line starts a line
    else out += rnd.pick(SEPARATORS) + t;
  }
  return out;
}

/** A game as PGN text, and what was written into it. */
function writeGame(rnd, game) {
  const tags = [];
  const startPos = game.fen ? Chess.fromSetup(parseFen(game.fen).unwrap()).unwrap() : Chess.default();
  const forced = game.final.isCheckmate() ? (game.final.turn === 'white' ? '0-1' : '1-0')
    : game.final.isEnd() ? '1/2-1/2' : null;
  const result = rnd.chance(0.2) ? '*' : forced ?? rnd.pick(['1-0', '0-1', '1/2-1/2', '*']);
  const withTags = game.fen || rnd.chance(0.85);
  if (withTags) {
    for (const name of ['Event', 'Site', 'Date', 'Round', 'White', 'Black']) {
      if (rnd.chance(0.7)) tags.push([name, rnd.str(TAG_ALPHABET, 12)]);
    }
    if (rnd.chance(0.8)) tags.push(['Result', result]);
    if (game.variant) tags.push(['Variant', game.variant]);
    if (game.fen) {
      if (rnd.chance(0.8)) tags.push(['SetUp', '1']);
      tags.push(['FEN', game.fen]);
    }
    if (rnd.chance(0.3)) tags.push(['Annotator_2', rnd.str(TAG_ALPHABET, 20)]);
  }
  let text = '';
  for (const [name, value] of tags) {
    text += `[${name}${rnd.pick([' ', '  ', '\t'])}"${escapeTag(value)}"]`;
    text += rnd.chance(0.1) ? ' ' : rnd.pick(['\n', '\r\n']);
  }
  if (tags.length) text += rnd.pick(['\n', '\r\n', '\n%escape line after the tags\n']);

  const tokens = [];
  if (rnd.chance(0.2)) tokens.push(`{${commentText(rnd)}}`);
  const pos = startPos.clone();
  let ply = (pos.fullmoves - 1) * 2 + (pos.turn === 'white' ? 0 : 1);
  let needNumber = true;
  for (const san of game.moves) {
    const number = Math.floor(ply / 2) + 1;
    const written = rnd.chance(0.1) ? san.replace(/O/g, '0') : rnd.chance(0.1) ? san.replace(/[+#]$/, '') : san;
    const suffix = rnd.chance(0.1) ? rnd.pick(['!', '?', '!!', '??', '!?', '?!']) : '';
    if (ply % 2 === 0) {
      if (rnd.chance(0.2)) tokens.push(`${number}.${written}${suffix}`);
      else tokens.push(`${number}.`, written + suffix);
    } else {
      if (needNumber) tokens.push(rnd.pick([`${number}...`, `${number}...${written}${suffix}`]));
      if (!needNumber || tokens[tokens.length - 1] === `${number}...`) tokens.push(written + suffix);
    }
    needNumber = false;
    const move = parseSan(pos, san);
    if (rnd.chance(0.1)) { tokens.push(`$${rnd.int(256)}`); needNumber = true; }
    if (rnd.chance(0.1)) { tokens.push(`{${commentText(rnd)}}`); needNumber = true; }
    if (rnd.chance(0.08)) { tokens.push(...variation(rnd, pos, ply, 0)); needNumber = true; }
    if (rnd.chance(0.03)) { tokens.push(`; ${commentText(rnd).replace(/\n/g, ' ')}\n`); needNumber = true; }
    if (rnd.chance(0.02)) { tokens.push('%an escape line\n'); needNumber = true; }
    pos.play(move);
    ply++;
  }
  tokens.push(result);
  return { text: text + joinTokens(rnd, tokens), tagsGiven: tags, result };
}

/** What chessops makes of one game's PGN: tags, moves (UCI chessd-style, SAN), final FEN, status, result. */
function oracle(game, tagsGiven) {
  const headers = new Map(game.headers);
  if (!tagsGiven.some(([name]) => name === 'Result')) headers.delete('Result'); // chessops copies the token there
  const pos = startingPosition(game.headers).unwrap();
  const chess960 = /960|fischer/i.test(game.headers.get('Variant') ?? '');
  const moves = [];
  for (const node of game.moves.mainline()) {
    const move = parseSan(pos, node.san);
    assert.ok(move, `chessops cannot play ${node.san}`);
    const san = makeSan(pos, move);
    let uci = makeUci(move);
    if (!chess960 && san.startsWith('O-O')) { // chessops writes castling king-takes-rook
      uci = uci.slice(0, 2) + (san.startsWith('O-O-O') ? 'c' : 'g') + uci[3];
    }
    moves.push({ uci, san });
    pos.play(move);
  }
  const status = pos.isCheckmate() ? 'checkmate' : pos.isStalemate() ? 'stalemate'
    : pos.isInsufficientMaterial() ? 'draw' : 'active';
  return {
    tags: Object.fromEntries(headers),
    moves,
    fen: makeFen(pos.toSetup()),
    status,
    result: game.headers.get('Result') ?? '*',
  };
}

test(`POST /v1/pgn reads ${GAMES} generated games as chessops does (seed ${SEED})`, async () => {
  const rnd = prng(SEED);
  let compared = 0;
  let withVariations = 0;
  let chess960 = 0;
  for (let batch = 0; batch < GAMES / PER_REQUEST; batch++) {
    const written = [];
    for (let i = 0; i < PER_REQUEST; i++) written.push(writeGame(rnd, randomGame(rnd)));
    const separator = () => rnd.pick(['\n\n', '\r\n\r\n', '\n\n\n', '\n \n']);
    let text = written.map((w) => w.text).join(separator());
    if (rnd.chance(0.5)) text += '\n';
    if (process.env.PGN_DUMP && batch === 0) console.log(text); // PGN_DUMP=1 shows a batch of the corpus
    const expected = parsePgn(text, emptyHeaders);
    assert.equal(expected.length, written.length, 'chessops sees every game');
    const how = rnd.int(3);
    const res = how === 0 ? await postPgn(text) : how === 1 ? await postPgn(text, 'text/plain; charset=utf-8')
      : await post(server, '/v1/pgn', { pgn: text });
    assert.equal(res.status, 200, `batch ${batch}: ${res.text}\n--- PGN ---\n${text}`);
    assert.equal(res.body.games.length, written.length);
    for (let i = 0; i < written.length; i++) {
      const want = oracle(expected[i], written[i].tagsGiven);
      const got = res.body.games[i];
      const where = `batch ${batch} game ${i}:\n${written[i].text}`;
      assert.equal(got.index, i);
      assert.deepEqual(got.tags, want.tags, where);
      assert.deepEqual(Object.keys(got.tags), Object.keys(want.tags), `tag order, ${where}`);
      assert.deepEqual(got.moves.map(({ uci, san }) => ({ uci, san })), want.moves, where);
      assert.equal(got.position.fen, want.fen, where);
      assert.equal(got.position.status, want.status, where);
      assert.equal(got.result, want.result, where);
      compared++;
      if (written[i].text.includes('(')) withVariations++;
      if (got.chess960) chess960++;
    }
  }
  assert.ok(compared >= 300, `${compared} games compared`);
  assert.ok(withVariations > 30, `${withVariations} games had variations`);
  assert.ok(chess960 > 10, `${chess960} Chess960 games`);
});

test('POST /v1/pgn: an unterminated comment is invalid_pgn at its brace', async () => {
  const body = expectProblem(await postStrict('[Event "x"]\n\n1. e4 e5\n2. Nf3 {never closed\n2... Nc6 *\n'), 400,
    'invalid_pgn');
  assert.deepEqual([body.game, body.line, body.column, body.pgn_error], [0, 4, 8, 'unterminated_comment']);
  assert.match(body.detail, /game 0, line 4, column 8/);
});

test('POST /v1/pgn: an illegal move gives the move API reason, with game, line and column', async () => {
  const text = '[Result "*"]\n\n1. e4 e5 *\n\n[Result "*"]\n\n1. e4 e5\n2. Ke3 *\n';
  const body = expectProblem(await postStrict(text), 422, 'illegal_move');
  assert.deepEqual([body.game, body.line, body.column, body.pgn_error], [1, 8, 4, 'illegal_move']);
  assert.equal(body.move, 'Ke3');
  assert.equal(body.move_index, 2);
  assert.equal(body.fen, 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2');
  // the same reason and sentence as the move API's for the same move
  const moves = expectProblem(await post(server, '/v1/position/moves', { fen: body.fen, moves: ['Ke3'] }), 422,
    'illegal_move');
  assert.equal(body.reason, moves.reason);
  assert.ok(body.detail.endsWith(moves.detail.replace(/^2\. Ke3: /, '')), `${body.detail} / ${moves.detail}`);
  const ambiguous = expectProblem(await postStrict('1. Nf3 d5 2. Na3 d4 3. Nc4 c5 4. Ne5 *'), 422, 'ambiguous_move');
  assert.deepEqual([ambiguous.line, ambiguous.column, ambiguous.reason], [1, 34, 'ambiguous']);
});

test('POST /v1/pgn: a Result tag the movetext contradicts is pgn_result_mismatch', async () => {
  const body = expectProblem(await postStrict('[Result "1-0"]\n\n1. e4 e5 0-1\n'), 422, 'pgn_result_mismatch');
  assert.deepEqual([body.game, body.line, body.column, body.pgn_error], [0, 3, 10, 'result_tag_mismatch']);
  const mate = expectProblem(await postStrict('1. f3 e5 2. g4 Qh4# 1-0'), 422, 'pgn_result_mismatch');
  assert.deepEqual([mate.line, mate.column, mate.pgn_error], [1, 21, 'result_contradicts_position']);
});

test('POST /v1/pgn: a 10 MiB game fails alone as game_too_large, bounds are pgn_too_large', async () => {
  // past --max-body the body is read from a file (pgn_stream.test.mjs); one game of 10 MiB is over the game bound
  const big = '1. e4 e5 '.repeat(Math.ceil((10 << 20) / 9)).slice(0, 10 << 20);
  const res = await postPgn(big);
  assert.equal(res.status, 200, res.text.slice(0, 300));
  assert.deepEqual([res.body.read, res.body.failed, res.body.games[0].errors[0].pgn_error], [0, 1, 'game_too_large']);
  const games = expectProblem(await postStrict('*\n'.repeat(101)), 413, 'pgn_too_large');
  assert.deepEqual([games.game, games.line, games.column, games.pgn_error], [100, 101, 1, 'too_many_games']);
  // 17 variations each in the one before, every one a legal first move of White's
  const firsts = ['d4', 'c4', 'Nf3', 'Nc3', 'b3', 'g3', 'f4', 'b4', 'a3', 'a4', 'h3', 'h4', 'g4', 'e3', 'd3', 'c3', 'f3'];
  const nested = `1. e4 ${firsts.map((m) => `(1. ${m} `).join('')}`;
  const deep = expectProblem(await postStrict(nested), 413, 'pgn_too_large');
  assert.deepEqual([deep.column, deep.pgn_error], [nested.lastIndexOf('(') + 1, 'variations_too_deep']);
});

test('POST /v1/pgn: media types, the JSON form, empty input and legal_moves', async () => {
  expectProblem(await postPgn('1. e4 *', 'application/xml'), 415, 'unsupported_media_type');
  expectProblem(await post(server, '/v1/pgn', { pgn: 5 }), 400, 'invalid_field');
  expectProblem(await post(server, '/v1/pgn', { pgn: '*', fen: START_FEN }), 400, 'unknown_field');
  const none = expectProblem(await postPgn(''), 400, 'invalid_pgn');
  assert.equal(none.pgn_error, 'no_game');
  const bad = expectProblem(await postStrict(Buffer.from([0x31, 0x2e, 0x20, 0x65, 0x34, 0x0a, 0x20, 0xff])), 400, 'invalid_pgn');
  assert.deepEqual([bad.line, bad.column, bad.pgn_error], [2, 2, 'unexpected_token']);
  const comment = expectProblem(await postStrict(Buffer.concat([Buffer.from('*\n\n1. e4 {'), Buffer.from([0xc3]), Buffer.from('}')])),
    400, 'invalid_pgn');
  assert.deepEqual([comment.game, comment.line, comment.column, comment.pgn_error], [1, 3, 8, 'invalid_utf8']);
  const res = await postPgn('1. e4 e5 *', 'application/x-chess-pgn', '?legal_moves=true');
  assert.equal(res.status, 200);
  assert.equal(res.body.games[0].position.legal_moves.length, 29);
  const plain = await postPgn('1. e4 e5 *');
  assert.equal(plain.body.games[0].position.legal_moves, undefined);
});

test('POST /v1/games with pgn keeps the [%clk] of its mainline as the moves\' clocks', async () => {
  const pgn = '1. e4 { [%clk 0:03:00] } e5 { good [%clk 0:02:58.5] } (1... c5 { [%clk 0:00:01] }) 2. Nf3 { [%eval 0.3] } *';
  const created = await post(server, '/v1/games', { pgn });
  assert.equal(created.status, 201, created.text);
  // a variation's clock is not the mainline's; a move without [%clk] has none
  assert.deepEqual(created.body.clocks, [180000, 178500, null]);
  const text = await get(server, `/v1/games/${created.body.id}/pgn`);
  // the clocks in whole seconds, with the comment, variation and eval kept
  assert.ok(text.text.endsWith('\n\n1. e4 { [%clk 0:03:00] } 1... e5 { good [%clk 0:02:58] } ( 1... c5\n'
    + '{ [%clk 0:00:01] } ) 2. Nf3 { [%eval 0.30] } *\n'), text.text);
});

test('POST /v1/games with pgn starts a stored game from its moves; GET and the PGN give them back', async () => {
  const pgn = '[White "Ann"]\n[Black "Bob"]\n[Result "*"]\n\n1. e4 {x} e5 (1... c5 2. Nf3) 2. Nf3 Nc6 3. Bb5 a6 *';
  const created = await post(server, '/v1/games?legal_moves=false', { pgn });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.status, 'active');
  assert.deepEqual(created.body.moves.map((m) => m.san), ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5', 'a6']);
  assert.equal(created.body.white.name, 'Ann');
  const id = created.body.id;
  const game = await get(server, `/v1/games/${id}`);
  assert.deepEqual(game.body.moves, created.body.moves);
  assert.equal(game.body.position.fen, 'r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4');
  // play on: the stored history is the game's
  const moved = await post(server, `/v1/games/${id}/moves`, { move: 'Ba4', expected_version: 1 },
    { headers: { authorization: `Bearer ${created.body.tokens.white}` } });
  assert.equal(moved.status, 200, moved.text);
  const text = await get(server, `/v1/games/${id}/pgn`);
  assert.equal(text.status, 200);
  const back = await postPgn(text.text);
  assert.deepEqual(back.body.games[0].moves.map((m) => m.san), ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5', 'a6', 'Ba4']);

  // mate: a finished game
  const mate = await post(server, '/v1/games', { pgn: '1. f3 e5 2. g4 Qh4# 0-1' });
  assert.equal(mate.status, 201);
  assert.deepEqual([mate.body.status, mate.body.result, mate.body.termination], ['checkmate', '0-1', 'checkmate']);
  // a decisive result in an open position: the loser resigned; a draw: agreed
  const resigned = await post(server, '/v1/games', { pgn: '[Result "0-1"]\n1. d4 d5 2. c4 0-1', white: 'W' });
  assert.deepEqual([resigned.body.status, resigned.body.result, resigned.body.termination, resigned.body.white.name],
    ['resigned', '0-1', 'resignation', 'W']);
  const drawn = await post(server, '/v1/games', { pgn: '1. d4 d5 1/2-1/2' });
  assert.deepEqual([drawn.body.status, drawn.body.result, drawn.body.termination], ['draw', '1/2-1/2', 'agreement']);
  const pgnOut = await get(server, `/v1/games/${resigned.body.id}/pgn`);
  assert.match(pgnOut.text, /1\. d4 d5 2\. c4 0-1/);
  // from a FEN tag, Chess960
  const c960 = await post(server, '/v1/games', {
    pgn: '[Variant "Chess960"]\n[FEN "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1"]\n1. Ng3 Ng6 2. O-O *',
  });
  assert.equal(c960.status, 201, c960.text);
  assert.equal(c960.body.chess960, true);
  assert.equal(c960.body.moves[2].uci, 'f1g1');
  // with a clock: full time for both, running for the side to move
  const timed = await post(server, '/v1/games', { pgn: '1. e4 e5 *', clock: { initial_ms: 60000, increment_ms: 0 } });
  // white's clock runs from the creation on, so the answer may be a few ms down
  assert.ok(timed.body.clock.white_ms <= 60000 && timed.body.clock.white_ms > 55000, `white_ms ${timed.body.clock.white_ms}`);
  assert.equal(timed.body.clock.black_ms, 60000);
  assert.equal(timed.body.clock.running, 'white');
});

test('POST /v1/games with pgn: its errors, and pgn excludes fen', async () => {
  expectProblem(await post(server, '/v1/games', { pgn: '1. e4 *', fen: START_FEN }), 400, 'conflicting_fields');
  expectProblem(await post(server, '/v1/games', { pgn: '1. e4 *', chess960_position: 518 }), 400, 'conflicting_fields');
  expectProblem(await post(server, '/v1/games', { pgn: '1. e4 *', chess960: true }), 400, 'conflicting_fields');
  expectProblem(await post(server, '/v1/games', { pgn: 1 }), 400, 'invalid_field');
  const illegal = expectProblem(await post(server, '/v1/games', { pgn: '1. e4 e5\n2. Ke3 *' }), 422, 'illegal_move');
  assert.deepEqual([illegal.game, illegal.line, illegal.column, illegal.reason], [0, 2, 4, 'cannot_move_so']);
  const comment = expectProblem(await post(server, '/v1/games', { pgn: '1. e4 {' }), 400, 'invalid_pgn');
  assert.equal(comment.pgn_error, 'unterminated_comment');
  const two = expectProblem(await post(server, '/v1/games', { pgn: '1. e4 *\n\n1. d4 *' }), 413, 'pgn_too_large');
  assert.deepEqual([two.game, two.line, two.pgn_error], [1, 3, 'too_many_games']);
  expectProblem(await post(server, '/v1/games', { pgn: '[Result "1-0"]\n1. e4 0-1' }), 422, 'pgn_result_mismatch');
});
