// POST /v1/position/moves: SAN and UCI mixed, the move records it returns,
// repetition counted over the line (threefold claim), mates and their
// results, and every way a move can be refused (illegal_move, ambiguous_move,
// invalid_move_text, with move_index, move, reason and fen), plus limits.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { post, call, expectProblem, START_FEN } from './http.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const play = (moves, extra = {}, query = '') => post(server, `/v1/position/moves${query}`, { moves, ...extra });

test('SAN and UCI may be mixed; each move comes back in both notations', async () => {
  const res = await play(['e4', 'e7e5', 'Nf3', 'b8c6', 'Bb5', 'a7a6', 'Ba4', 'g8f6', 'O-O', 'f8e7']);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.moves.map((m) => m.uci),
    ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1b5', 'a7a6', 'b5a4', 'g8f6', 'e1g1', 'f8e7']);
  assert.deepEqual(res.body.moves.map((m) => m.san),
    ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5', 'a6', 'Ba4', 'Nf6', 'O-O', 'Be7']);
  const castle = res.body.moves[8];
  assert.deepEqual(castle, { uci: 'e1g1', san: 'O-O', from: 'e1', to: 'g1', piece: 'k', color: 'white', captured: null, promotion: null, flags: ['castle'] });
  assert.equal(res.body.position.fen, 'r1bqk2r/1pppbppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 4 6');
  assert.equal(res.body.position.turn, 'white');
  assert.ok(Array.isArray(res.body.position.legal_moves));
});

test('captures, checks and promotions are flagged in the move records', async () => {
  const res = await play(['e4', 'd5', 'exd5', 'Qxd5', 'Nc3', 'Qe5+'], {}, '?legal_moves=false');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.moves[2].flags, ['capture']);
  assert.equal(res.body.moves[2].captured, 'p');
  assert.deepEqual(res.body.moves[5].flags, ['check']);
  assert.equal(res.body.moves[5].san, 'Qe5+');
  assert.equal(res.body.position.check, true);
  assert.ok(!('legal_moves' in res.body.position));
  const promo = await play(['b8=N'], { fen: '4k3/1P6/8/8/8/8/8/4K3 w - - 0 1' });
  assert.equal(promo.body.moves[0].uci, 'b7b8n');
  assert.equal(promo.body.moves[0].promotion, 'n');
  assert.deepEqual(promo.body.moves[0].flags, ['promotion']);
});

test('Nf3 Nf6 Ng1 Ng8 twice: threefold_repetition is claimable, the game goes on', async () => {
  const res = await play(['Nf3', 'Nf6', 'Ng1', 'Ng8', 'Nf3', 'Nf6', 'Ng1', 'Ng8']);
  assert.equal(res.status, 200);
  const p = res.body.position;
  assert.deepEqual(p.claimable_draws, ['threefold_repetition']);
  assert.equal(p.status, 'active');
  assert.equal(p.result, '*');
  assert.equal(p.draw_reason, null);
  assert.equal(p.repetitions, 3);
  assert.equal(p.fen, 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 8 5');
  const twice = await play(['Nf3', 'Nf6', 'Ng1', 'Ng8']);
  assert.deepEqual(twice.body.position.claimable_draws, [], 'two occurrences are not a threefold repetition');
  assert.equal(twice.body.position.repetitions, 2);
});

test('fivefold repetition ends the game as a draw', async () => {
  const line = Array(4).fill(['Nf3', 'Nf6', 'Ng1', 'Ng8']).flat();
  const res = await play(line);
  assert.equal(res.body.position.repetitions, 5);
  assert.equal(res.body.position.status, 'draw');
  assert.equal(res.body.position.draw_reason, 'fivefold_repetition');
  assert.equal(res.body.position.result, '1/2-1/2');
});

test("fool's mate: checkmate, result 0-1, no legal moves", async () => {
  const res = await play(['f3', 'e5', 'g4', 'Qh4#']);
  assert.equal(res.status, 200);
  const p = res.body.position;
  assert.equal(p.status, 'checkmate');
  assert.equal(p.result, '0-1');
  assert.equal(p.check, true);
  assert.equal(p.turn, 'white');
  assert.deepEqual(p.legal_moves, []);
  assert.deepEqual(res.body.moves[3].flags, ['check', 'checkmate']);
  assert.equal(res.body.moves[3].san, 'Qh4#');
});

test("scholar's mate in UCI: result 1-0", async () => {
  const res = await play(['e2e4', 'e7e5', 'd1h5', 'b8c6', 'f1c4', 'g8f6', 'h5f7']);
  assert.equal(res.body.position.status, 'checkmate');
  assert.equal(res.body.position.result, '1-0');
  assert.equal(res.body.moves[6].san, 'Qxf7#');
});

test('an empty move list describes the starting FEN', async () => {
  const res = await play([], { fen: START_FEN });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.moves, []);
  assert.equal(res.body.position.fen, START_FEN);
});

test('Chess960 castling by king-takes-rook UCI and by O-O', async () => {
  const fen = '4k3/8/8/8/8/8/8/RK5R w KQ - 0 1';
  const uci = await play(['b1h1'], { fen, chess960: true });
  assert.equal(uci.status, 200);
  assert.equal(uci.body.position.fen, '4k3/8/8/8/8/8/8/R4RK1 b - - 1 1');
  const san = await play(['O-O-O'], { fen, chess960: true });
  assert.equal(san.body.moves[0].uci, 'b1a1');
  assert.equal(san.body.position.fen, '4k3/8/8/8/8/8/8/2KR3R b - - 1 1');
});

test('Accept: text/plain on /v1/position/moves gives the final position as a diagram', async () => {
  const res = await call(server, 'POST', '/v1/position/moves', {
    json: { moves: ['f3', 'e5', 'g4', 'Qh4#'] }, headers: { accept: 'text/plain' },
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain/);
  assert.match(res.text, /Status: checkmate, result 0-1/);
  assert.match(res.text, /White to move, in check/);
});

test('an illegal move: 422 illegal_move with move_index, move, reason and the fen it was tried in', async () => {
  const problem = expectProblem(await play(['e4', 'e5', 'Ke3']), 422, 'illegal_move');
  assert.equal(problem.move_index, 2);
  assert.equal(problem.move, 'Ke3');
  assert.equal(problem.reason, 'cannot_move_so');
  assert.equal(problem.fen, 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2');
});

test('illegal move reasons: own piece, wrong colour, empty square, pins, castling', async () => {
  const cases = [
    [START_FEN, ['e2e5'], 'cannot_move_so'],
    [START_FEN, ['a1a2'], 'own_piece_on_target'],
    [START_FEN, ['e7e5'], 'not_your_piece'],
    [START_FEN, ['e3e4'], 'no_piece'],
    [START_FEN, ['a1a5'], 'path_blocked'],
    [START_FEN, ['O-O'], 'castling_blocked'],
    ['4k3/8/8/8/8/8/8/4K2R w - - 0 1', ['O-O'], 'castling_no_right'],
    ['4k3/8/8/8/8/8/5r2/4K2R w K - 0 1', ['e1g1'], 'castling_through_check'],
    ['4k3/8/8/8/8/8/6r1/4K2R w K - 0 1', ['e1g1'], 'castling_into_check'],
    ['4k3/8/8/8/8/8/4r3/4K2R w K - 0 1', ['O-O'], 'castling_out_of_check'],
    ['4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1', ['Nc3'], 'leaves_king_in_check'],
    ['4k3/1P6/8/8/8/8/8/4K3 w - - 0 1', ['b7b8'], 'promotion_missing'],
  ];
  for (const [fen, moves, reason] of cases) {
    const res = await play(moves, { fen });
    assert.equal(res.status, 422, `${fen} ${moves}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.reason, reason, `${fen} ${moves}: ${res.body.detail}`);
    assert.equal(res.body.move_index, 0);
    assert.equal(res.body.fen, fen);
  }
});

test('an ambiguous SAN move: 422 ambiguous_move naming the move', async () => {
  const fen = '4k3/8/8/8/8/8/8/1N3N1K w - - 0 1';
  const problem = expectProblem(await play(['Nd2'], { fen }), 422, 'ambiguous_move');
  assert.equal(problem.move_index, 0);
  assert.equal(problem.move, 'Nd2');
  assert.equal(problem.reason, 'ambiguous');
  assert.equal(problem.fen, fen);
  const ok = await play(['Nbd2'], { fen });
  assert.equal(ok.status, 200);
});

test('text that is neither UCI nor SAN: 400 invalid_move_text with the move fields', async () => {
  const problem = expectProblem(await play(['e4', 'zz9']), 400, 'invalid_move_text');
  assert.equal(problem.move_index, 1);
  assert.equal(problem.move, 'zz9');
  assert.equal(problem.reason, 'unparseable');
  assert.equal(problem.fen, 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1');
});

test('1000 moves are read, 1001 are too_many_moves (413)', async () => {
  // The knight shuffle repeats the start position a fifth time after 16 plies:
  // the game is over there (FIDE 9.6), so the 17th move is refused as game_over,
  // which shows all 1000 were accepted for playing.
  const shuffle = Array(250).fill(['Nf3', 'Nf6', 'Ng1', 'Ng8']).flat();
  const over = await play(shuffle, {}, '?legal_moves=false');
  expectProblem(over, 422, 'illegal_move');
  assert.equal(over.body.reason, 'game_over');
  assert.equal(over.body.move_index, 16);
  expectProblem(await play([...shuffle, 'e4']), 413, 'too_many_moves');
});

test('a line that stays legal runs to its end: 16 plies reach fivefold repetition', async () => {
  const res = await play(Array(4).fill(['Nf3', 'Nf6', 'Ng1', 'Ng8']).flat(), {}, '?legal_moves=false');
  assert.equal(res.status, 200);
  assert.equal(res.body.position.status, 'draw');
  assert.equal(res.body.position.draw_reason, 'fivefold_repetition');
});

test('moves must be an array of strings; fen a string; chess960 a boolean', async () => {
  expectProblem(await post(server, '/v1/position/moves', {}), 400, 'invalid_field');
  expectProblem(await play('e4'), 400, 'invalid_field');
  expectProblem(await play(['e4', 5]), 400, 'invalid_field');
  expectProblem(await play(['e4'], { fen: 42 }), 400, 'invalid_field');
  expectProblem(await play(['e4'], { chess960: 'yes' }), 400, 'invalid_field');
  expectProblem(await play(['e4'], { colour: 'white' }), 400, 'unknown_field');
});
