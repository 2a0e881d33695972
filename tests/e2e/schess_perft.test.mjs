// The S-chess perft counts in tests/data/perft/variants/seirawan.perft came
// from Fairy-Stockfish 11.1's `go perft`; ffish (Fairy-Stockfish's rules in
// WebAssembly, a build of its own) counts them again here, up to a node
// budget, so the counts chessd is checked against stand on two oracles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './server.mjs';

const BUDGET = Number(process.env.SCHESS_PERFT_BUDGET ?? 150000);

function perft(board, depth) {
  const moves = board.legalMoves().split(' ').filter(Boolean);
  if (depth === 1) return moves.length;
  let nodes = 0;
  for (const m of moves) {
    board.push(m);
    nodes += perft(board, depth - 1);
    board.pop();
  }
  return nodes;
}

test('every seirawan.perft count within the budget is ffish\'s count too', async () => {
  const require = createRequire(import.meta.url);
  const saved = globalThis.fetch;
  globalThis.fetch = undefined; // its loader takes Node's fetch for a browser's
  const ffish = require('ffish');
  if (!ffish.Board) await new Promise((resolve) => { ffish.onRuntimeInitialized = resolve; });
  globalThis.fetch = saved;
  const text = readFileSync(path.join(REPO_ROOT, 'tests/data/perft/variants/seirawan.perft'), 'utf8');
  let fen = null, id = null, compared = 0;
  for (const line of text.split('\n')) {
    const [word, ...rest] = line.trim().split(' ');
    if (word === 'id') id = rest.join(' ');
    else if (word === 'epd') fen = rest.join(' ');
    else if (word === 'perft') {
      const [depth, nodes] = rest.map(Number);
      if (nodes > BUDGET) continue;
      const board = new ffish.Board('seirawan', fen);
      assert.equal(perft(board, depth), nodes, `${id} perft ${depth}`);
      board.delete();
      compared++;
    }
  }
  assert.ok(compared >= 16, `only ${compared} counts compared`);
});
