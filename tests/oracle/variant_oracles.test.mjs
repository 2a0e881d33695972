// variant_oracles.mjs checked against what is known without it: scalachess's
// published counts (tests/data/perft/variants) counted through its UCI moves
// up to VARIANT_ORACLE_PERFT_BUDGET nodes a line (default 60,000), and one
// move, FEN and outcome of each kind chessd writes: castling in both forms,
// drops, antichess's king promotion, S-chess's gates, each variant's end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openOracle, oracleFen, perft } from './variant_oracles.mjs';
import { perftLines } from './perft_file.mjs';

const BUDGET = Number(process.env.VARIANT_ORACLE_PERFT_BUDGET ?? 60000);
const FILES = { '3check.perft': 'threeCheck', 'antichess.perft': 'antichess', 'atomic.perft': 'atomic',
  'crazyhouse.perft': 'crazyhouse', 'horde.perft': 'horde', 'racingkings.perft': 'racingKings' };

for (const [file, variant] of Object.entries(FILES)) {
  test(`${file}: the published counts within the budget, move by move through chessops`, async (t) => {
    let compared = 0;
    for (const { id, fen, depth, nodes } of perftLines(file)) {
      if (nodes > BUDGET) continue;
      assert.equal(perft(await openOracle(variant, fen), depth), nodes, `${id} perft ${depth}`);
      compared++;
    }
    t.diagnostic(`${compared} counts compared, up to ${BUDGET} nodes`);
    assert.ok(compared >= 5, `only ${compared} counts compared`);
  });
}

/** The oracle's moves on fen, and its FEN and outcome after uci. */
async function after(variant, fen, uci) {
  const oracle = await openOracle(variant, fen);
  try {
    const moves = oracle.moves();
    assert.ok(moves.includes(uci), `${uci} not among ${moves.join(' ')}`);
    oracle.play(uci);
    return { fen: oracle.fen(), outcome: oracle.outcome() };
  } finally {
    oracle.close();
  }
}

test('castling is the king\'s two-step, and king-takes-rook when the rights need Chess960', async () => {
  const standard = await after('kingOfTheHill', 'r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1', 'e1g1');
  assert.equal(standard.fen, 'r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1');
  const chess960 = await after('atomic', '8/8/8/8/8/8/2k5/rR4KR w KQ - 0 1', 'g1h1');
  assert.equal(chess960.fen, '8/8/8/8/8/8/2k5/rR3RK1 b - - 1 1');
  await assert.rejects(after('atomic', '8/8/8/8/8/8/2k5/rR4KR w KQ - 0 1', 'g1g1'));
});

test('a drop is written with a capital and read in either case', async () => {
  const fen = '2k5/8/8/8/8/8/8/4K3[Qn] w - - 0 1';
  assert.equal((await after('crazyhouse', fen, 'Q@d7')).outcome, 'none');
  const oracle = await openOracle('crazyhouse', fen);
  assert.ok(!oracle.moves().includes('q@d7'));
  oracle.play('q@d7');
  assert.equal(oracle.fen(), '2k5/3Q4/8/8/8/8/8/4K3[n] b - - 1 1');
});

test('antichess: a pawn may promote to a king, and the side left without pieces wins', async () => {
  assert.equal((await after('antichess', '8/P7/8/8/8/8/8/7n w - - 0 1', 'a7a8k')).fen, 'K7/8/8/8/8/8/8/7n b - - 0 1');
  assert.equal((await after('antichess', '8/8/8/8/8/8/1p6/B7 w - - 0 1', 'a1b2')).outcome, 'black');
});

test('S-chess: gates on the square left, on the king\'s and on the rook\'s when castling', async () => {
  const start = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[HEhe] w KQBCDFGkqbcdfg - 0 1';
  assert.equal((await after('seirawan', start, 'g1f3h')).fen,
    'rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKBHR[Eeh] b KQBCDFkqbcdfg - 1 1');
  const castle = 'r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R[HEhe] w KQBCDkqcdg - 4 4';
  assert.match((await after('seirawan', castle, 'e1g1e')).fen, /^\S+\/RNBQERK1\[Heh\] b /);
  assert.match((await after('seirawan', castle, 'h1e1h')).fen, /^\S+\/RNBQ1RKH\[Eeh\] b /);
  await assert.rejects(openOracle('seirawan', 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBXKBNR[HEhe] w KQkq - 0 1'));
});

test('each variant\'s end is an outcome', async () => {
  assert.equal((await after('kingOfTheHill', '4k3/8/8/8/8/3K4/8/8 w - - 0 1', 'd3d4')).outcome, 'white');
  assert.equal((await after('threeCheck', '4k3/8/8/8/8/8/8/R3K3 w - - 1+3 0 1', 'a1a8')).outcome, 'white');
  assert.equal((await after('atomic', '4k3/4q3/8/8/8/8/8/4RK2 w - - 0 1', 'e1e7')).outcome, 'white');
  assert.equal((await after('horde', '4k3/8/8/8/8/8/1P6/8 b - - 0 1', 'e8d7')).outcome, 'none');
  assert.equal((await after('racingKings', '8/1k6/8/8/8/8/8/6K1 b - - 0 1', 'b7b8')).outcome, 'black');
  assert.equal(await oracleFen('threeCheck', '4k3/8/8/8/8/8/8/R3K3 w - - 0 1 +1+0'), '4k3/8/8/8/8/8/8/R3K3 w - - 2+3 0 1');
});
