// The S-chess perft counts in tests/data/perft/variants/seirawan.perft came
// from Fairy-Stockfish 11.1's `go perft`; ffish (Fairy-Stockfish's rules in
// WebAssembly, a 2023 build) counts them again here through
// variant_oracles.mjs, up to SCHESS_PERFT_BUDGET nodes a line (default
// 150,000), so the counts chessd is checked against stand on two oracles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openOracle, perft } from './variant_oracles.mjs';
import { perftLines } from './perft_file.mjs';

const BUDGET = Number(process.env.SCHESS_PERFT_BUDGET ?? 150000);

test('every seirawan.perft count within the budget is ffish\'s count too', async (t) => {
  let compared = 0;
  for (const { id, fen, depth, nodes } of perftLines('seirawan.perft')) {
    if (nodes > BUDGET) continue;
    const oracle = await openOracle('seirawan', fen);
    try {
      assert.equal(perft(oracle, depth), nodes, `${id} perft ${depth}`);
    } finally {
      oracle.close();
    }
    compared++;
  }
  t.diagnostic(`${compared} counts compared, up to ${BUDGET} nodes`);
  assert.ok(compared >= 20, `only ${compared} counts compared`);
});
