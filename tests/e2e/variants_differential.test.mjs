// Random games in every variant, through the HTTP API, against the oracles:
// chessops (Lichess's rules) for the Lichess variants, ffish (Fairy-Stockfish's
// rules) for S-chess. At every ply: the same legal moves (UCI), the same end
// and result, and chessd's FEN read back by the oracle to the very position
// the oracle reached. VARIANT_DIFF_PLIES plies per variant (default 1500 in
// make test; make bench runs many more), VARIANT_DIFF_SEED to replay a run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { parseFen, makeFen } from 'chessops/fen';
import { setupPosition } from 'chessops/variant';
import { makeSquare, parseSquare } from 'chessops/util';
import { startServer } from './server.mjs';
import { post } from './http.mjs';
import { prng } from './prng.mjs';

const PLIES = Number(process.env.VARIANT_DIFF_PLIES ?? 1500);
const SEED = Number(process.env.VARIANT_DIFF_SEED ?? 20261206);
const GAME_MAX = 250; // plies before a game is left and a new one begun
const LICHESS = { crazyhouse: 'crazyhouse', atomic: 'atomic', antichess: 'antichess', kingOfTheHill: 'kingofthehill',
  threeCheck: '3check', horde: 'horde', racingKings: 'racingkings' };
const ROLES = { pawn: 'p', knight: 'n', bishop: 'b', rook: 'r', queen: 'q', king: 'k' };

let server;
before(async () => { server = await startServer([], { withRedis: false }); });
after(async () => { await server?.stop(); });

/** chessd's answer to one move played on fen (or to fen itself when move is null). */
async function chessd(variant, fen, move) {
  const path = move ? '/v1/position/moves' : '/v1/position';
  const res = await post(server, path, move ? { variant, fen, moves: [move] } : { variant, fen });
  assert.equal(res.status, 200, `${variant} ${fen} ${move}: ${res.text}`);
  return move ? res.body.position : res.body;
}

/** The result chessd would answer for an oracle outcome. */
const resultOf = (outcome) => (!outcome ? '*' : outcome.winner === 'white' ? '1-0' : outcome.winner === 'black' ? '0-1' : '1/2-1/2');

// ---- chessops: the Lichess variants

function chessopsPosition(rules, fen) {
  return setupPosition(rules, parseFen(fen).unwrap()).unwrap();
}

/** Every legal move of a chessops position, in chessd's UCI. */
function chessopsMoves(pos) {
  const moves = [];
  const backRank = (sq) => sq < 8 || sq >= 56;
  for (const [from, dests] of pos.allDests()) {
    const piece = pos.board.get(from);
    for (const to of dests) {
      let target = to;
      const onOwnRook = piece.role === 'king' && pos.board.get(to)?.color === piece.color && pos.board.get(to)?.role === 'rook';
      if (onOwnRook) target = (to > from ? 6 : 2) + (from & ~7); // chess's two-step, never Chess960 here
      const uci = makeSquare(from) + makeSquare(target);
      if (piece.role === 'pawn' && backRank(to)) {
        for (const p of pos.rules === 'antichess' ? 'nbrqk' : 'nbrq') moves.push(uci + p);
      } else {
        moves.push(uci);
      }
    }
  }
  if (pos.pockets) {
    const dests = pos.dropDests();
    for (const [role, letter] of Object.entries(ROLES)) {
      if (pos.pockets[pos.turn][role] <= 0) continue;
      for (const to of dests) if (role !== 'pawn' || !backRank(to)) moves.push(letter.toUpperCase() + '@' + makeSquare(to));
    }
  }
  return moves.sort();
}

/** Plays chessd's UCI on a chessops position (castling as king-takes-rook there). */
function chessopsPlay(pos, uci) {
  if (uci[1] === '@') {
    const role = Object.keys(ROLES).find((r) => ROLES[r] === uci[0].toLowerCase());
    pos.play({ role, to: parseSquare(uci.slice(2, 4)) });
    return;
  }
  const from = parseSquare(uci.slice(0, 2));
  let to = parseSquare(uci.slice(2, 4));
  const piece = pos.board.get(from);
  if (piece.role === 'king' && Math.abs(to - from) === 2) to = pos.castles.rook[piece.color][to > from ? 'h' : 'a'];
  const promotion = uci[4] ? Object.keys(ROLES).find((r) => ROLES[r] === uci[4]) : undefined;
  const move = { from, to, promotion };
  assert.ok(pos.isLegal(move), `chessops refuses ${uci} in ${makeFen(pos.toSetup())}`);
  pos.play(move);
}

// ---- ffish: S-chess

let ffish;
async function loadFfish() {
  const require = createRequire(import.meta.url);
  const saved = globalThis.fetch;
  globalThis.fetch = undefined; // its loader takes Node's fetch for a browser's
  ffish = require('ffish');
  if (!ffish.Board) await new Promise((resolve) => { ffish.onRuntimeInitialized = resolve; });
  globalThis.fetch = saved;
}

// ---- the games

async function differential(variant, oracle) {
  const random = prng(SEED + variant.length);
  let plies = 0, games = 0;
  const ends = {};
  while (plies < PLIES) {
    games++;
    let position = await chessd(variant, null, null);
    let state = oracle.start(position.fen);
    for (let ply = 0; ply < GAME_MAX && plies < PLIES; ply++, plies++) {
      const where = `${variant} seed ${SEED} game ${games} ply ${ply}: ${position.fen}`;
      const mine = position.status === 'active' ? position.legal_moves.map((m) => m.uci).sort() : [];
      const theirs = oracle.moves(state);
      assert.deepEqual(mine, theirs, `${where}: legal moves differ`);
      if (position.halfmove_clock < 100) assert.equal(position.result, oracle.result(state), `${where}: result differs`);
      if (!mine.length || position.result !== '*') {
        ends[position.status] = (ends[position.status] ?? 0) + 1;
        break;
      }
      const move = random.pick(mine);
      oracle.play(state, move);
      position = await chessd(variant, position.fen, move);
      assert.equal(oracle.readBack(position.fen), oracle.fen(state), `${where} ${move}: chessd's FEN reads back otherwise`);
    }
    oracle.done?.(state);
  }
  return { games, ends };
}

for (const [variant, rules] of Object.entries(LICHESS)) {
  test(`${variant}: random games agree with chessops move for move`, async (t) => {
    const summary = await differential(variant, {
      start: (fen) => chessopsPosition(rules, fen),
      moves: (pos) => (pos.isEnd() ? [] : chessopsMoves(pos)),
      result: (pos) => resultOf(pos.outcome()),
      play: chessopsPlay,
      fen: (pos) => makeFen(pos.toSetup()),
      readBack: (fen) => makeFen(chessopsPosition(rules, fen).toSetup()),
    });
    t.diagnostic(`${summary.games} games, ends ${JSON.stringify(summary.ends)}`);
    assert.ok(summary.games >= 1);
  });
}

test('seirawan: random games agree with ffish move for move', async (t) => {
  await loadFfish();
  const summary = await differential('seirawan', {
    start: (fen) => new ffish.Board('seirawan', fen),
    moves: (board) => (board.result() !== '*' ? [] : board.legalMoves().split(' ').filter(Boolean).sort()),
    result: (board) => board.result(),
    play: (board, uci) => assert.ok(board.push(uci), `ffish refuses ${uci} in ${board.fen()}`),
    fen: (board) => board.fen(),
    readBack: (fen) => { const b = new ffish.Board('seirawan', fen); const out = b.fen(); b.delete(); return out; },
    done: (board) => board.delete(),
  });
  t.diagnostic(`${summary.games} games, ends ${JSON.stringify(summary.ends)}`);
  assert.ok(summary.games >= 1);
});
