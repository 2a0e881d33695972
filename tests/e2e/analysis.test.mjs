// POST /v1/position/analysis and GET /v1/games/{id}/analysis over real HTTP
// with the real Stockfish: mates found (the mate count, the mating move,
// '#' at the end of the line), MultiPV best first, wdl only when asked,
// the depth, nodes and movetime_ms limits honoured, a search stopped by
// --engine-max-think-ms, finished positions answered without the engine,
// moves (SAN and UCI) and Chess960 (castling as king takes rook), every
// bound (422 analysis_limit_too_large naming it) and bad value (400); a
// stored game's analysis (403 while two people play it); the engine in
// /readyz and /metrics; and a server without an engine (off, or one that
// cannot start). Every answer is checked against openapi.yaml by call().
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { get, post, expectProblem, START_FEN } from './http.mjs';
import { analyse, engineMetrics, legalMoves, startEngineServer, waitForMetrics } from './analysis_lib.mjs';
import { runServe } from './attacks_lib.mjs';

const MATE_IN_1 = '6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1';
const MATE_IN_2 = 'r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1';
const ITALIAN = 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3';
const FOOLS_MATE = ['f3', 'e5', 'g4', 'Qh4#'];
const MAX_THINK_MS = 3000;
const MAX_NODES = 2000000;

let server; // Stockfish, --engine-max-think-ms 3000, --engine-max-nodes 2000000

before(async () => {
  server = await startEngineServer(['--engine-max-think-ms', String(MAX_THINK_MS), '--engine-max-nodes', String(MAX_NODES)]);
});
after(async () => { await server?.stop(); });

/** analyse expecting 200: the body, with the bestmove checked legal and the first line's first move the bestmove. */
async function analysed(body, srv = server) {
  const res = await analyse(srv, body);
  assert.equal(res.status, 200, `${JSON.stringify(body)}: ${res.text}`);
  const a = res.body;
  if (a.position.status === 'active') {
    const legal = await legalMoves(srv, { fen: a.position.fen, chess960: a.position.chess960 || undefined });
    assert.ok(legal.uci.includes(a.bestmove), `bestmove ${a.bestmove} is not legal in ${a.position.fen}`);
    assert.ok(a.lines.length >= 1, res.text);
    assert.equal(a.lines[0].pv[0], a.bestmove, 'the first line starts with the bestmove');
    assert.equal(a.lines[0].pv_san[0], a.bestmove_san);
    assert.match(a.engine.name, /^Stockfish/);
    for (const line of a.lines) {
      assert.equal(line.pv.length, line.pv_san.length, 'a move in UCI and SAN for each');
      assert.ok(('cp' in line) !== ('mate' in line), `one of cp and mate: ${JSON.stringify(line)}`);
    }
  }
  return a;
}

test('a mate in 1: Rd8#, mate 1, the line ends with #', async () => {
  const a = await analysed({ fen: MATE_IN_1, depth: 8 });
  assert.equal(a.position.fen, MATE_IN_1);
  assert.equal(a.bestmove, 'd1d8');
  assert.equal(a.bestmove_san, 'Rd8#');
  assert.equal(a.lines.length, 1);
  assert.equal(a.lines[0].mate, 1);
  assert.equal(a.lines[0].cp, undefined);
  assert.deepEqual(a.lines[0].pv, ['d1d8']);
  assert.match(a.lines[0].pv_san.at(-1), /#$/);
  assert.equal(a.stopped, false);
  assert.equal(a.lines[0].wdl, undefined, 'wdl only when asked');
});

test('a mate in 2: Nf6+, mate 2, three moves ending with #, the expected reply as ponder', async () => {
  const a = await analysed({ fen: MATE_IN_2, depth: 12 });
  assert.equal(a.bestmove, 'd5f6');
  assert.equal(a.bestmove_san, 'Nf6+');
  assert.equal(a.lines[0].mate, 2);
  assert.equal(a.lines[0].pv.length, 3);
  assert.match(a.lines[0].pv_san.at(-1), /#$/);
  assert.equal(a.ponder, 'g7f6');
});

test('the side being mated sees a negative mate: mate -1 for the only move, Kb8', async () => {
  const a = await analysed({ fen: 'k7/8/1K6/8/8/8/8/7R b - - 0 1', depth: 8 });
  assert.equal(a.bestmove, 'a8b8');
  assert.equal(a.lines[0].mate, -1);
  assert.deepEqual(a.lines[0].pv_san, ['Kb8', 'Rh8#']);
});

test('multipv 3: lines 1 to 3, different first moves, scores of exact lines best first', async () => {
  const a = await analysed({ fen: ITALIAN, depth: 10, multipv: 3 });
  assert.deepEqual(a.lines.map((l) => l.multipv), [1, 2, 3]);
  assert.equal(new Set(a.lines.map((l) => l.pv[0])).size, 3, JSON.stringify(a.lines.map((l) => l.pv)));
  const legal = await legalMoves(server, { fen: ITALIAN });
  for (const line of a.lines) {
    assert.ok(legal.uci.includes(line.pv[0]), `${line.pv[0]} is not legal`);
    assert.ok(line.depth >= 1 && line.depth <= 10, `depth ${line.depth}`);
  }
  const exact = a.lines.filter((l) => !l.lowerbound && !l.upperbound && l.cp !== undefined && l.depth === a.lines[0].depth);
  for (let i = 1; i < exact.length; i++)
    assert.ok(exact[i].cp <= exact[i - 1].cp, `line ${exact[i].multipv} (${exact[i].cp}) above line ${exact[i - 1].multipv} (${exact[i - 1].cp})`);
  const one = await analysed({ fen: ITALIAN, depth: 6 });
  assert.equal(one.lines.length, 1, 'back to one line');
});

test('wdl only when asked: three per mille values summing to 1000 on each line', async () => {
  const a = await analysed({ fen: ITALIAN, depth: 8, multipv: 2, wdl: true });
  for (const line of a.lines) {
    assert.equal(line.wdl.length, 3);
    assert.equal(line.wdl.reduce((x, y) => x + y, 0), 1000, JSON.stringify(line.wdl));
  }
  const mate = await analysed({ fen: MATE_IN_1, depth: 8, wdl: true });
  assert.deepEqual(mate.lines[0].wdl, [1000, 0, 0]);
  for (const wdl of [false, null]) {
    const without = await analysed({ fen: ITALIAN, depth: 6, wdl });
    assert.equal(without.lines[0].wdl, undefined, `wdl ${wdl}`);
  }
});

test('depth, nodes and movetime_ms are honoured', async () => {
  const byDepth = await analysed({ depth: 5 });
  assert.ok(byDepth.lines[0].depth >= 1 && byDepth.lines[0].depth <= 5, `depth ${byDepth.lines[0].depth}`);
  assert.equal(byDepth.stopped, false);

  const asked = 30000;
  const byNodes = await analysed({ fen: ITALIAN, nodes: asked });
  const nodes = byNodes.lines[0].nodes;
  assert.ok(nodes >= asked / 2 && nodes <= asked * 1.2 + 4096, `nodes ${nodes} for ${asked} asked`);
  assert.equal(byNodes.stopped, false);

  const started = performance.now();
  const byTime = await analysed({ fen: ITALIAN, movetime_ms: 400 });
  const took = performance.now() - started;
  assert.ok(took >= 390, `a 400 ms search answered after ${Math.round(took)} ms`);
  assert.ok(took < 400 + 2500, `a 400 ms search answered after ${Math.round(took)} ms`);
  assert.ok(byTime.lines[0].time >= 0.2 && byTime.lines[0].time <= 1.5, `time ${byTime.lines[0].time}`);
  assert.equal(byTime.stopped, false, 'movetime ends the search itself, not the deadline');

  // Without any limit, nodes 1000000; the first reached of several ends the search.
  const both = await analysed({ fen: ITALIAN, depth: 4, nodes: MAX_NODES });
  assert.ok(both.lines[0].depth <= 4);
  assert.ok(both.lines[0].nodes < MAX_NODES);
});

test('--engine-max-think-ms 200 stops a depth 60 search: stopped true, a legal bestmove, soon after 200 ms', async () => {
  const quick = await startEngineServer(['--engine-max-think-ms', '200']);
  try {
    const started = performance.now();
    const a = await analysed({ fen: ITALIAN, depth: 60 }, quick);
    const took = performance.now() - started;
    assert.equal(a.stopped, true);
    assert.ok(a.lines[0].depth < 60);
    assert.ok(took >= 190, `answered after ${Math.round(took)} ms`);
    assert.ok(took < 200 + 3000, `answered after ${Math.round(took)} ms (a depth 60 search runs for hours)`);
    // and the bound of movetime_ms is that setting
    const refused = expectProblem(await analyse(quick, { movetime_ms: 201 }), 422, 'analysis_limit_too_large');
    assert.deepEqual([refused.limit, refused.max], ['movetime_ms', 200]);
    assert.equal((await analysed({ movetime_ms: 200 }, quick)).position.fen, START_FEN);
  } finally {
    await quick.stop();
  }
});

test('a finished position answers its status, lines [] and no bestmove, without an engine job', async () => {
  const before = await engineMetrics(server);
  const cases = [
    [{ fen: 'rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3' }, 'checkmate', '0-1'],
    [{ moves: FOOLS_MATE }, 'checkmate', '0-1'],
    [{ fen: '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1', depth: 10 }, 'stalemate', '1/2-1/2'],
    [{ fen: '8/8/4k3/8/8/4K3/8/8 w - - 0 1' }, 'draw', '1/2-1/2'],
    [{ fen: '8/8/4k3/8/8/4KB2/8/8 b - - 0 1', multipv: 3 }, 'draw', '1/2-1/2'],
    [{ moves: ['Nf3', 'Nf6', 'Ng1', 'Ng8', 'Nf3', 'Nf6', 'Ng1', 'Ng8', 'Nf3', 'Nf6', 'Ng1', 'Ng8', 'Nf3', 'Nf6', 'Ng1', 'Ng8'] }, 'draw', '1/2-1/2'],
  ];
  for (const [body, status, result] of cases) {
    const a = await analysed(body);
    assert.equal(a.position.status, status, JSON.stringify(body));
    assert.equal(a.position.result, result, JSON.stringify(body));
    assert.deepEqual(a.lines, []);
    for (const member of ['bestmove', 'bestmove_san', 'ponder', 'engine', 'stopped'])
      assert.equal(a[member], undefined, `${member} in ${JSON.stringify(a)}`);
  }
  const after = await engineMetrics(server);
  assert.equal(after.jobs, before.jobs, 'no engine job for a finished position');
});

test('moves in SAN and UCI are played before the search, and the answer is about the position they reach', async () => {
  const moves = ['e4', 'e7e5', 'Nf3', 'b8c6'];
  const a = await analysed({ moves, depth: 6 });
  const reached = await legalMoves(server, { moves });
  assert.equal(a.position.fen, reached.fen);
  assert.equal(a.position.turn, 'white');
  assert.equal(a.position.fen, ITALIAN);
  const fromFen = await analysed({ fen: ITALIAN, moves: ['Bc4', 'Bc5'], depth: 6 });
  assert.equal(fromFen.position.turn, 'white');
  assert.equal(fromFen.position.fullmove_number, 4);
  const illegal = expectProblem(await analyse(server, { moves: ['e4', 'Ke3'] }), 422, 'illegal_move');
  assert.equal(illegal.move_index, 1);
});

test('Chess960: chess960_position and a Chess960 FEN; castling is written as the king taking its rook', async () => {
  // Queen-side castling (the king on b1 takes the rook on a1) is the only mate.
  const fen = '2rkr3/2p1p3/8/8/8/8/8/RK6 w Q - 0 1';
  expectProblem(await analyse(server, { fen, depth: 6 }), 400, 'invalid_fen');
  const a = await analysed({ fen, chess960: true, depth: 6 });
  assert.equal(a.position.chess960, true);
  assert.equal(a.bestmove, 'b1a1');
  assert.equal(a.bestmove_san, 'O-O-O#');
  assert.equal(a.lines[0].mate, 1);
  // Start 0 (bbqnnrkr) after f3 f6 Rf2 Rf7: O-O is g1h1 among the five best lines.
  const b = await analysed({ chess960_position: 0, moves: ['f3', 'f6', 'Rf2', 'Rf7'], depth: 8, multipv: 5 });
  assert.equal(b.position.fen, 'bbqnn1kr/ppppprpp/5p2/8/8/5P2/PPPPPRPP/BBQNN1KR w Kk - 2 3');
  assert.equal(b.position.chess960, true);
  assert.equal(b.lines.length, 5);
  const legal = await legalMoves(server, { fen: b.position.fen, chess960: true });
  assert.ok(legal.uci.includes('g1h1'), 'castling is king takes rook in the rules API too');
  for (const line of b.lines) {
    assert.ok(legal.uci.includes(line.pv[0]), `${line.pv[0]} is not legal`);
    if (line.pv[0] === 'g1h1') assert.equal(line.pv_san[0], 'O-O');
  }
  const c = await analysed({ chess960_position: 518, depth: 6 });
  assert.equal(c.position.fen, START_FEN);
});

test('a limit above its bound is 422 analysis_limit_too_large naming it, with the bound in max', async () => {
  const before = await engineMetrics(server);
  const cases = [
    [{ depth: 61 }, 'depth', 60],
    [{ depth: 1e9 }, 'depth', 60],
    [{ nodes: MAX_NODES + 1 }, 'nodes', MAX_NODES],
    [{ movetime_ms: MAX_THINK_MS + 1 }, 'movetime_ms', MAX_THINK_MS],
    [{ multipv: 6 }, 'multipv', 5],
    [{ depth: 5, multipv: 6 }, 'multipv', 5],
  ];
  for (const [body, limit, max] of cases) {
    const p = expectProblem(await analyse(server, body), 422, 'analysis_limit_too_large');
    assert.equal(p.limit, limit, JSON.stringify(body));
    assert.equal(p.max, max, JSON.stringify(body));
    assert.match(p.detail, new RegExp(`'${limit}'.*${max}`));
  }
  // at the bounds: answered
  await analysed({ depth: 60, nodes: 2000 });
  await analysed({ nodes: 2000, multipv: 5 });
  const after = await engineMetrics(server);
  assert.equal(after.jobs, before.jobs + 2, 'only the two within the bounds ran');
});

test('a limit that is not a whole number from 1 is 400 invalid_field; an unknown member is 400 unknown_field', async () => {
  const before = await engineMetrics(server);
  for (const limit of ['depth', 'nodes', 'movetime_ms', 'multipv']) {
    for (const value of [0, -1, 1.5, '3', true, [], {}]) {
      const p = expectProblem(await analyse(server, { [limit]: value }), 400, 'invalid_field');
      assert.match(p.detail, new RegExp(`'${limit}'`), `${limit}: ${JSON.stringify(value)}`);
    }
  }
  for (const value of [1, 'true', 'yes', []])
    expectProblem(await analyse(server, { wdl: value }), 400, 'invalid_field');
  for (const body of [{ think: 100 }, { depth: 5, searchmoves: ['e2e4'] }, { Depth: 5 }, { go: 'infinite' }])
    expectProblem(await analyse(server, body), 400, 'unknown_field');
  expectProblem(await post(server, '/v1/position/analysis?depth=5', {}), 400, 'unknown_parameter');
  expectProblem(await get(server, '/v1/position/analysis'), 405, 'method_not_allowed');
  const after = await engineMetrics(server);
  assert.equal(after.jobs, before.jobs, 'nothing refused reached the engine');
});

test('an empty body analyses the start position with the default nodes', async () => {
  const a = await analysed({});
  assert.equal(a.position.fen, START_FEN);
  assert.ok(a.lines[0].nodes > 0 && a.lines[0].nodes <= 1000000 * 1.2 + 4096, `nodes ${a.lines[0].nodes}`);
});

// ---------------------------------------------------------------- a stored game

const auth = (token) => ({ authorization: `Bearer ${token}` });

async function newGame(body = {}) {
  const res = await post(server, '/v1/games', { white: 'Ann', black: 'Bob', ...body });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, turn: 'white' };
}

async function play(g, moves) {
  for (const move of moves) {
    const res = await post(server, `/v1/games/${g.id}/moves`, { move, expected_version: g.version }, { headers: auth(g.tokens[g.turn]) });
    assert.equal(res.status, 200, `${move}: ${res.text}`);
    g.version = res.body.version;
    g.turn = g.turn === 'white' ? 'black' : 'white';
  }
}

test('GET /v1/games/{id}/analysis: 403 while two people play it, 200 once resigned, lines [] once mated', async () => {
  const g = await newGame();
  await play(g, ['e4', 'e5', 'Nf3']);
  const before = await engineMetrics(server);
  const refused = expectProblem(await get(server, `/v1/games/${g.id}/analysis?depth=5`), 403, 'analysis_not_allowed');
  assert.match(refused.detail, /over/);
  assert.equal((await engineMetrics(server)).jobs, before.jobs, 'no search for a game in play');

  const resigned = await post(server, `/v1/games/${g.id}/resign`, { expected_version: g.version }, { headers: auth(g.tokens.black) });
  assert.equal(resigned.status, 200, resigned.text);
  const game = (await get(server, `/v1/games/${g.id}`)).body;
  const res = await get(server, `/v1/games/${g.id}/analysis?depth=6&multipv=2&wdl=true`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.position.fen, game.position.fen);
  assert.equal(res.body.position.turn, 'black');
  assert.equal(res.body.lines.length, 2);
  for (const line of res.body.lines) assert.equal(line.wdl.reduce((x, y) => x + y, 0), 1000);
  const legal = await legalMoves(server, { moves: ['e4', 'e5', 'Nf3'] });
  assert.ok(legal.uci.includes(res.body.bestmove), res.body.bestmove);
  // the default limit with none in the query
  assert.equal((await get(server, `/v1/games/${g.id}/analysis`)).status, 200);

  const mated = await newGame();
  await play(mated, FOOLS_MATE);
  const m = await get(server, `/v1/games/${mated.id}/analysis`);
  assert.equal(m.status, 200, m.text);
  assert.equal(m.body.position.status, 'checkmate');
  assert.deepEqual(m.body.lines, []);
  assert.equal(m.body.bestmove, undefined);
});

test('GET /v1/games/{id}/analysis: query bounds are 422, bad values 400, an unknown game 404', async () => {
  const g = await newGame();
  const resigned = await post(server, `/v1/games/${g.id}/resign`, { expected_version: g.version }, { headers: auth(g.tokens.white) });
  assert.equal(resigned.status, 200, resigned.text);
  const base = `/v1/games/${g.id}/analysis`;
  const before = await engineMetrics(server);
  for (const [query, limit, max] of [['depth=61', 'depth', 60], ['multipv=6', 'multipv', 5],
    [`nodes=${MAX_NODES + 1}`, 'nodes', MAX_NODES], [`movetime_ms=${MAX_THINK_MS + 1}`, 'movetime_ms', MAX_THINK_MS]]) {
    const p = expectProblem(await get(server, `${base}?${query}`), 422, 'analysis_limit_too_large');
    assert.deepEqual([p.limit, p.max], [limit, max], query);
  }
  for (const query of ['depth=0', 'depth=-1', 'depth=1.5', 'depth=abc', 'depth=', 'depth=5x', 'nodes=%20100',
    'multipv=1e999', 'wdl=maybe'])
    expectProblem(await get(server, `${base}?${query}`), 400, 'invalid_parameter');
  expectProblem(await get(server, `${base}?think=5`), 400, 'unknown_parameter');
  expectProblem(await get(server, '/v1/games/AAAAAAAAAAAAAAAA/analysis'), 404, 'game_not_found');
  expectProblem(await get(server, '/v1/games/short/analysis'), 404, 'game_not_found');
  expectProblem(await post(server, `${base}`, {}), 405, 'method_not_allowed');
  assert.equal((await engineMetrics(server)).jobs, before.jobs, 'nothing refused reached the engine');
});

// ---------------------------------------------------------------- readiness and metrics

test('/readyz reports the engine up with its name and counts; /metrics has every chessd_engine_* series', async () => {
  const ready = await get(server, '/readyz');
  assert.equal(ready.status, 200);
  const e = ready.body.engine;
  assert.equal(e.state, 'up');
  assert.match(e.name, /^Stockfish/);
  assert.deepEqual([e.workers, e.up, e.busy, e.queued], [1, 1, 0, 0]);
  assert.equal(typeof e.restarts, 'number');
  assert.equal(typeof e.timeouts, 'number');
  const m = await engineMetrics(server);
  assert.deepEqual([m.workers, m.up, m.busy, m.waiting, m.analysisWaiting], [1, 1, 0, 0, 0]);
  assert.ok(m.jobs > 0);
  assert.equal(m.failed, 0);
  assert.equal(m.startFailures, 0);
  const before = m.jobs;
  await analysed({ depth: 3 });
  assert.equal((await engineMetrics(server)).jobs, before + 1, 'one search, one job');
});

test('--engine none: 503 engine_unavailable without Retry-After, /readyz engine state off, the rest serves', async () => {
  const none = await startServer([]); // the e2e servers run --engine none unless told otherwise
  try {
    const p = expectProblem(await analyse(none, { depth: 5 }), 503, 'engine_unavailable');
    assert.equal(p.detail, 'this server runs no engine');
    const res = await analyse(none, {});
    assert.equal(res.headers.get('retry-after'), null);
    const ready = await get(none, '/readyz');
    assert.deepEqual(ready.body.engine, { state: 'off' });
    const m = await engineMetrics(none);
    assert.deepEqual([m.workers, m.up, m.jobs, m.startFailures], [0, 0, 0, 0]);
    // bounds and bad input are still checked first, finished positions still answered
    expectProblem(await analyse(none, { depth: 61 }), 422, 'analysis_limit_too_large');
    expectProblem(await analyse(none, { depth: 0 }), 400, 'invalid_field');
    assert.deepEqual((await analyse(none, { moves: FOOLS_MATE })).body.lines, []);
    assert.equal((await get(none, '/v1/position')).status, 200);
  } finally {
    await none.stop();
  }
  const off = await startServer([], { env: { CHESSD_ENGINE: 'none' } });
  try {
    assert.match(off.stderr(), /no engine \(--engine none\)/);
    assert.deepEqual((await get(off, '/readyz')).body.engine, { state: 'off' });
  } finally {
    await off.stop();
  }
  // An empty --engine is refused, as every empty string setting is ("none" says no engine).
  const empty = await runServe(['--engine', '']);
  assert.equal(empty.code, 2, empty.stderr);
  assert.match(empty.stderr, /--engine must be 1 to 511 characters/);
});

test('--engine /nonexistent: 503 engine_unavailable with Retry-After, /readyz engine down, start failures counted', async () => {
  const broken = await startServer(['--engine', '/nonexistent/stockfish']);
  try {
    const ready = await get(broken, '/readyz');
    assert.equal(ready.status, 200, 'an engine down does not make the replica unready');
    assert.equal(ready.body.engine.state, 'down');
    assert.deepEqual([ready.body.engine.workers, ready.body.engine.up], [1, 0]);
    assert.equal(ready.body.engine.name, undefined, 'no engine ever started');
    const res = await analyse(broken, { depth: 5 });
    expectProblem(res, 503, 'engine_unavailable');
    assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After ${res.headers.get('retry-after')}`);
    const first = await engineMetrics(broken);
    assert.ok(first.startFailures >= 1);
    assert.equal(first.up, 0);
    // the supervisor keeps trying (after 100 ms, then 200, 400 ...)
    await waitForMetrics(broken, (m) => m.startFailures >= first.startFailures + 2, 'more failed starts');
    assert.match(broken.stderr(), /0 of 1 engines started/);
  } finally {
    await broken.stop();
  }
});
