// Random games in every variant, through the HTTP API, against the oracles:
// chessops (Lichess's rules) for the Lichess variants, ffish (Fairy-Stockfish's
// rules) for S-chess. At every ply: the same legal moves (UCI), the same end
// and result, and chessd's FEN read back by the oracle to the very position
// the oracle reached; the oracles are tests/oracle/variant_oracles.mjs's
// (npm ci --prefix tests/oracle). VARIANT_DIFF_PLIES plies per variant (default 3000 in
// make test; make bench runs many more), VARIANT_DIFF_SEED to replay a run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOracle, oracleFen, VARIANT_KEYS } from '../oracle/variant_oracles.mjs';
import { startServer } from './server.mjs';
import { post } from './http.mjs';
import { prng } from './prng.mjs';

const PLIES = Number(process.env.VARIANT_DIFF_PLIES ?? 3000);
const SEED = Number(process.env.VARIANT_DIFF_SEED ?? 20261206);
const GAME_MAX = 250; // plies before a game is left and a new one begun
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
const RESULTS = { white: '1-0', black: '0-1', draw: '1/2-1/2', none: '*' };

/** Plays PLIES random plies from the variant's start, game after game,
 * comparing chessd with the oracle at each. */
async function differential(variant) {
  const random = prng(SEED + variant.length);
  let plies = 0, games = 0;
  const ends = {};
  while (plies < PLIES) {
    games++;
    let position = await chessd(variant, null, null);
    const oracle = await openOracle(variant, position.fen);
    for (let ply = 0; ply < GAME_MAX && plies < PLIES; ply++, plies++) {
      const where = `${variant} seed ${SEED} game ${games} ply ${ply}: ${position.fen}`;
      const mine = position.status === 'active' ? position.legal_moves.map((m) => m.uci).sort() : [];
      const theirs = oracle.outcome() !== 'none' ? [] : oracle.moves();
      assert.deepEqual(mine, theirs, `${where}: legal moves differ`);
      if (position.halfmove_clock < 100) assert.equal(position.result, RESULTS[oracle.outcome()], `${where}: result differs`);
      if (!mine.length || position.result !== '*') {
        ends[position.status] = (ends[position.status] ?? 0) + 1;
        break;
      }
      const move = random.pick(mine);
      oracle.play(move);
      position = await chessd(variant, position.fen, move);
      assert.equal(await oracleFen(variant, position.fen), oracle.fen(), `${where} ${move}: chessd's FEN reads back otherwise`);
    }
    oracle.close();
  }
  return { games, ends };
}

for (const variant of VARIANT_KEYS) {
  test(`${variant}: random games agree with ${variant === 'seirawan' ? 'ffish' : 'chessops'} move for move`, async (t) => {
    const summary = await differential(variant);
    t.diagnostic(`${summary.games} games, ends ${JSON.stringify(summary.ends)}`);
    assert.ok(summary.games >= 1);
  });
}
