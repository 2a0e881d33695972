// GET /v1/perft: published node counts (standard and Chess960), the divide
// summing to the total, and its refusals: missing or bad depth
// (invalid_parameter), a depth over --max-perft-depth (perft_depth_too_large,
// both the default limit and a server started with a lower one), a count
// that passes the --max-perft-nodes budget (perft_too_large, with `budget`;
// every position visited counts, root and interior included), bad FENs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { get, expectProblem, START_FEN, KIWIPETE } from './http.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const q = (fen) => encodeURIComponent(fen);

test('start position depths 1-4: 20, 400, 8902, 197281', async () => {
  for (const [depth, nodes] of [[1, 20], [2, 400], [3, 8902], [4, 197281]]) {
    const res = await get(server, `/v1/perft?depth=${depth}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.nodes, nodes);
    assert.equal(res.body.depth, depth);
    assert.equal(res.body.fen, START_FEN);
  }
});

test('divide has one entry per legal root move and sums to nodes', async () => {
  const res = await get(server, `/v1/perft?depth=3&fen=${q(KIWIPETE)}`);
  assert.equal(res.body.nodes, 97862);
  const divide = res.body.divide;
  assert.equal(Object.keys(divide).length, 48);
  assert.equal(Object.values(divide).reduce((a, b) => a + b, 0), 97862);
  assert.equal(divide.e1g1, 2059);
  assert.equal(divide.e5f7, 2080);
});

test('CPW positions 3-5 at depth 3', async () => {
  const cases = [
    ['8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1', 2812],
    ['r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1', 9467],
    ['rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8', 62379],
  ];
  for (const [fen, nodes] of cases) {
    const res = await get(server, `/v1/perft?depth=3&fen=${q(fen)}`);
    assert.equal(res.body.nodes, nodes, fen);
  }
});

test('Chess960 perft with Shredder-FEN castling and chess960=true', async () => {
  const fen = 'bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9';
  const res = await get(server, `/v1/perft?depth=3&chess960=true&fen=${q(fen)}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.nodes, 12189);
  assert.equal(Object.keys(res.body.divide).length, 21);
  const without = expectProblem(await get(server, `/v1/perft?depth=1&fen=${q(fen)}`), 400, 'invalid_fen');
  assert.equal(without.fen_error, 'castling_needs_chess960');
});

test('a mated side has perft 0 with an empty divide', async () => {
  const res = await get(server, `/v1/perft?depth=2&fen=${q('rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3')}`);
  assert.equal(res.body.nodes, 0);
  assert.deepEqual(res.body.divide, {});
});

test('depth missing, zero, negative or not a number is invalid_parameter', async () => {
  for (const query of ['', '?depth=', '?depth=0', '?depth=-1', '?depth=abc', '?depth=2x', '?depth=1.5'])
    expectProblem(await get(server, `/v1/perft${query}`), 400, 'invalid_parameter');
});

test('depth above the default limit of 5 is perft_depth_too_large', async () => {
  const problem = expectProblem(await get(server, '/v1/perft?depth=6'), 400, 'perft_depth_too_large');
  assert.match(problem.detail, /5/);
  expectProblem(await get(server, '/v1/perft?depth=99'), 400, 'perft_depth_too_large');
});

test('--max-perft-depth 2 lowers the limit', async () => {
  const low = await startServer(['--max-perft-depth', '2']);
  try {
    assert.equal((await get(low, '/v1/perft?depth=2')).body.nodes, 400);
    const problem = expectProblem(await get(low, '/v1/perft?depth=3'), 400, 'perft_depth_too_large');
    assert.match(problem.detail, /limit of 2/);
  } finally {
    await low.stop();
  }
});

test('a bad FEN is invalid_fen with fen_error', async () => {
  const problem = expectProblem(await get(server, `/v1/perft?depth=1&fen=${q('8/8/8/8/8/8/8/8 w - - 0 1')}`), 400, 'invalid_fen');
  assert.equal(problem.fen_error, 'king_count');
});

// 1.7e10 leaves at depth 5: ~10 s of CPU without a budget, a few hundred ms with the default one.
const QUEENS = '3Q2rk/N1Qb2rb/1Q1q4/q4Q2/Q1q4q/3qQ1Qq/BR1nQ1Bq/KR3qqQ w - - 0 1';

test('a queen-filled board at depth 5 passes the default node budget: 422 perft_too_large with budget 200000000', async () => {
  const problem = expectProblem(await get(server, `/v1/perft?depth=5&fen=${q(QUEENS)}`), 422, 'perft_too_large');
  assert.equal(problem.budget, 200000000);
  assert.match(problem.detail, /budget of 200000000 nodes/);
  assert.equal(problem.nodes, undefined, 'no partial count is given');
});

test('Kiwipete at depth 5 (193690690 leaves, 197876243 positions) fits the default budget', async () => {
  const res = await get(server, `/v1/perft?depth=5&fen=${q(KIWIPETE)}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.nodes, 193690690);
});

test('--max-perft-nodes 1000 refuses depth 3 of the start position (8902 leaves) and answers depth 2 (400)', async () => {
  const low = await startServer(['--max-perft-nodes', '1000']);
  try {
    assert.equal((await get(low, '/v1/perft?depth=2')).body.nodes, 400);
    const problem = expectProblem(await get(low, '/v1/perft?depth=3'), 422, 'perft_too_large');
    assert.equal(problem.budget, 1000);
    assert.match(problem.detail, /budget of 1000 nodes/);
    // The depth limit is still checked first, before any counting.
    expectProblem(await get(low, '/v1/perft?depth=6'), 400, 'perft_depth_too_large');
  } finally {
    await low.stop();
  }
});

test('the budget counts interior positions too: 969 leaves that need 1156 positions pass a budget of 1000', async () => {
  // perft 1-4: 6, 18, 162, 969; with the root, depth 4 visits 1 + 6 + 18 + 162 + 969 = 1156 positions.
  const fen = q('k7/8/8/8/8/8/8/K5N1 w - - 0 1');
  const low = await startServer(['--max-perft-nodes', '1000']);
  try {
    assert.equal((await get(low, `/v1/perft?depth=3&fen=${fen}`)).body.nodes, 162);
    const problem = expectProblem(await get(low, `/v1/perft?depth=4&fen=${fen}`), 422, 'perft_too_large');
    assert.equal(problem.budget, 1000);
  } finally {
    await low.stop();
  }
});
