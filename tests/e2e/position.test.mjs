// GET and POST /v1/position: the start position, FENs in the query and in
// the body, ?legal_moves=false, game states (check, mate, stalemate, draws),
// Chess960 with X-FEN and Shredder-FEN castling, and the text/plain diagram.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { get, post, call, expectProblem, START_FEN, KIWIPETE } from './http.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const q = (fen) => encodeURIComponent(fen);
const ucis = (pos) => pos.legal_moves.map((m) => m.uci).sort();

test('GET /v1/position with no FEN describes the start position with its 20 moves', async () => {
  const res = await get(server, '/v1/position');
  assert.equal(res.status, 200);
  const p = res.body;
  assert.equal(p.fen, START_FEN);
  assert.equal(p.turn, 'white');
  assert.equal(p.check, false);
  assert.equal(p.status, 'active');
  assert.equal(p.result, '*');
  assert.equal(p.draw_reason, null);
  assert.deepEqual(p.claimable_draws, []);
  assert.equal(p.castling_rights, 'KQkq');
  assert.equal(p.en_passant, null);
  assert.equal(p.chess960, false);
  assert.equal(p.repetitions, 1);
  assert.equal(p.legal_moves.length, 20);
  const nf3 = p.legal_moves.find((m) => m.uci === 'g1f3');
  assert.deepEqual(nf3, { uci: 'g1f3', san: 'Nf3', from: 'g1', to: 'f3', piece: 'n', color: 'white', captured: null, promotion: null, flags: [] });
  assert.deepEqual(p.legal_moves.find((m) => m.uci === 'e2e4').flags, ['double_push']);
});

test('?legal_moves=false leaves legal_moves out (GET and POST)', async () => {
  const g = await get(server, '/v1/position?legal_moves=false');
  assert.equal(g.status, 200);
  assert.ok(!('legal_moves' in g.body));
  assert.equal(g.body.fen, START_FEN);
  const p = await post(server, '/v1/position?legal_moves=false', { fen: KIWIPETE });
  assert.equal(p.status, 200);
  assert.ok(!('legal_moves' in p.body));
  const t = await get(server, '/v1/position?legal_moves=true');
  assert.equal(t.body.legal_moves.length, 20);
});

test('?legal_moves with a value other than true/false/1/0 is invalid_parameter', async () => {
  expectProblem(await get(server, '/v1/position?legal_moves=maybe'), 400, 'invalid_parameter');
  expectProblem(await get(server, '/v1/position?chess960=yes'), 400, 'invalid_parameter');
});

test('GET with a FEN in the query (%20 or + for spaces) equals POST with it in the body', async () => {
  const g = await get(server, `/v1/position?fen=${q(KIWIPETE)}`);
  const plus = await get(server, `/v1/position?fen=${KIWIPETE.replaceAll(' ', '+')}`);
  const p = await post(server, '/v1/position', { fen: KIWIPETE });
  assert.equal(g.status, 200);
  assert.equal(g.body.legal_moves.length, 48);
  assert.deepEqual(plus.body, g.body);
  assert.deepEqual(p.body, g.body);
  const castles = g.body.legal_moves.filter((m) => m.flags.includes('castle')).map((m) => [m.uci, m.san, m.to]);
  assert.deepEqual(castles.sort(), [['e1c1', 'O-O-O', 'c1'], ['e1g1', 'O-O', 'g1']]);
});

test('POST with an empty body, {} or a null fen describes the start position', async () => {
  for (const body of [undefined, '{}', '{"fen":null,"chess960":null}']) {
    const res = await call(server, 'POST', '/v1/position', { body, headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 200, String(body));
    assert.equal(res.body.fen, START_FEN);
  }
});

test('a 4-field FEN is read with clocks 0 1', async () => {
  const res = await post(server, '/v1/position', { fen: 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -' });
  assert.equal(res.status, 200);
  assert.equal(res.body.fen, 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1');
  assert.equal(res.body.turn, 'black');
});

test('the en passant square is kept only when the capture is legal', async () => {
  const legal = await post(server, '/v1/position', { fen: 'rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3' });
  assert.equal(legal.body.en_passant, 'f6');
  const ep = legal.body.legal_moves.find((m) => m.uci === 'e5f6');
  assert.deepEqual(ep.flags, ['capture', 'en_passant']);
  assert.equal(ep.captured, 'p');
  assert.equal(ep.san, 'exf6');
  const none = await post(server, '/v1/position', { fen: 'rnbqkbnr/ppppp1pp/8/5p2/8/8/PPPPPPPP/RNBQKBNR w KQkq f6 0 2' });
  assert.equal(none.status, 200);
  assert.equal(none.body.en_passant, null, 'no white pawn can take on f6');
  assert.equal(none.body.fen, 'rnbqkbnr/ppppp1pp/8/5p2/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2');
});

test('check, checkmate and their results are reported', async () => {
  const check = await post(server, '/v1/position', { fen: 'rnbqkbnr/ppp2ppp/3p4/1B2p3/4P3/8/PPPP1PPP/RNBQK1NR b KQkq - 1 3' });
  assert.equal(check.body.check, true);
  assert.equal(check.body.status, 'active');
  assert.ok(check.body.legal_moves.length > 0);
  const mate = await post(server, '/v1/position', { fen: 'rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3' });
  assert.equal(mate.body.status, 'checkmate');
  assert.equal(mate.body.result, '0-1');
  assert.equal(mate.body.check, true);
  assert.deepEqual(mate.body.legal_moves, []);
});

test('stalemate is 1/2-1/2 with no draw_reason; bare kings are an insufficient_material draw', async () => {
  const stale = await post(server, '/v1/position', { fen: '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1' });
  assert.equal(stale.body.status, 'stalemate');
  assert.equal(stale.body.result, '1/2-1/2');
  assert.equal(stale.body.check, false);
  assert.equal(stale.body.draw_reason, null);
  const bare = await post(server, '/v1/position', { fen: '8/8/4k3/8/8/3K4/8/8 w - - 0 1' });
  assert.equal(bare.body.status, 'draw');
  assert.equal(bare.body.draw_reason, 'insufficient_material');
  assert.equal(bare.body.result, '1/2-1/2');
});

test('a halfmove clock of 100 makes fifty_moves claimable, 150 ends the game', async () => {
  const fifty = await post(server, '/v1/position', { fen: '4k3/8/8/8/8/8/8/R3K3 w - - 100 80' });
  assert.deepEqual(fifty.body.claimable_draws, ['fifty_moves']);
  assert.equal(fifty.body.status, 'active');
  const seventyfive = await post(server, '/v1/position', { fen: '4k3/8/8/8/8/8/8/R3K3 w - - 150 120' });
  assert.equal(seventyfive.body.status, 'draw');
  assert.equal(seventyfive.body.draw_reason, 'seventyfive_moves');
});

test('promotions are listed once per piece with the promotion flag', async () => {
  const res = await get(server, `/v1/position?fen=${q('4k3/1P6/8/8/8/8/8/4K3 w - - 0 1')}`);
  const promos = res.body.legal_moves.filter((m) => m.from === 'b7');
  assert.deepEqual(promos.map((m) => m.uci).sort(), ['b7b8b', 'b7b8n', 'b7b8q', 'b7b8r']);
  const q8 = promos.find((m) => m.promotion === 'q');
  assert.equal(q8.san, 'b8=Q+');
  assert.deepEqual(q8.flags, ['promotion', 'check']);
});

test('Chess960 start position with X-FEN KQkq and "chess960": true', async () => {
  const fen = 'bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1';
  const res = await post(server, '/v1/position', { fen, chess960: true });
  assert.equal(res.status, 200);
  assert.equal(res.body.chess960, true);
  assert.equal(res.body.castling_rights, 'KQkq');
  assert.equal(res.body.fen, fen);
  assert.equal(res.body.legal_moves.length, 20);
});

test('Chess960 castling is king-takes-rook in UCI, O-O/O-O-O in SAN, and `to` is the king\'s square', async () => {
  const res = await post(server, '/v1/position', { fen: '4k3/8/8/8/8/8/8/RK5R w KQ - 0 1', chess960: true });
  assert.equal(res.status, 200);
  const castles = res.body.legal_moves.filter((m) => m.flags.includes('castle'));
  assert.deepEqual(castles.map((m) => [m.uci, m.san, m.from, m.to]).sort(),
    [['b1a1', 'O-O-O', 'b1', 'c1'], ['b1h1', 'O-O', 'b1', 'g1']]);
});

test('Chess960 via GET ?chess960=true; Shredder-FEN is read and written back as X-FEN', async () => {
  const res = await get(server, `/v1/position?chess960=true&legal_moves=false&fen=${q('4k3/8/8/8/8/8/8/RK5R w HA - 0 1')}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.fen, '4k3/8/8/8/8/8/8/RK5R w KQ - 0 1');
  assert.equal(res.body.chess960, true);
  const inner = await post(server, '/v1/position', { fen: '4k3/8/8/8/8/8/8/1R2K1RR w G - 0 1', chess960: true });
  assert.equal(inner.status, 200);
  assert.equal(inner.body.castling_rights, 'G', 'an inner rook needs its file letter in X-FEN');
});

test('a Chess960 castling field without chess960 is invalid_fen castling_needs_chess960', async () => {
  const res = await post(server, '/v1/position', { fen: '4k3/8/8/8/8/8/8/RK5R w KQ - 0 1' });
  const problem = expectProblem(res, 400, 'invalid_fen');
  assert.equal(problem.fen_error, 'castling_needs_chess960');
});

test('Accept: text/plain gives a board diagram', async () => {
  const res = await get(server, '/v1/position', { headers: { accept: 'text/plain' } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain/);
  const lines = res.text.split('\n');
  assert.equal(lines[0], '8  r n b q k b n r');
  assert.equal(lines[7], '1  R N B Q K B N R');
  assert.equal(lines[8], '   a b c d e f g h');
  assert.ok(res.text.includes(`FEN: ${START_FEN}`));
  assert.ok(res.text.includes('White to move'));
  assert.match(res.text, /Legal moves \(20\): a3 .* Nh3\n/);
  const noMoves = await get(server, '/v1/position?legal_moves=false', { headers: { accept: 'text/plain' } });
  assert.ok(!noMoves.text.includes('Legal moves'));
});

test('Accept preferring JSON (or naming both, JSON first) gives JSON', async () => {
  for (const accept of ['application/json', 'application/json, text/plain', '*/*']) {
    const res = await get(server, '/v1/position?legal_moves=false', { headers: { accept } });
    assert.equal(res.headers.get('content-type'), 'application/json', accept);
  }
  const text = await get(server, '/v1/position?legal_moves=false', { headers: { accept: 'text/plain, application/json' } });
  assert.match(text.headers.get('content-type'), /^text\/plain/);
});

test('invalid FENs name the rule they broke in fen_error', async () => {
  const cases = [
    ['bad', 'field_count'],
    ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1', 'rank_count'],
    ['rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', 'rank_width'],
    ['rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', 'rank_width'],
    ['rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', 'piece_letter'],
    ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1', 'piece_letter'],
    ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1', 'side_to_move'],
    ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w - - 0 1', 'king_count'],
    ['4k3/8/8/8/8/8/8/P3K3 w - - 0 1', 'pawn_on_back_rank'],
  ];
  for (const [fen, code] of cases) {
    const viaBody = expectProblem(await post(server, '/v1/position', { fen }), 400, 'invalid_fen');
    assert.equal(viaBody.fen_error, code, fen);
    const viaQuery = expectProblem(await get(server, `/v1/position?fen=${q(fen)}`), 400, 'invalid_fen');
    assert.equal(viaQuery.fen_error, code, fen);
  }
});
