// Engine faults over real HTTP. Fake engines (sh scripts written here that
// speak just enough UCI: id name, uciok, readyok) that exit on "go"
// (crashed), never answer it (timeout; the server's --engine-max-think-ms
// small) or answer an illegal bestmove (garbage): each analysis is 503
// engine_failed with Retry-After after its retry on the restarted engine,
// and the retries, restarts and failures by kind are counted in /metrics
// and /readyz. With the real Stockfish, the engine process killed (SIGKILL)
// in the middle of a long search: the search is retried on the restarted
// engine and answered 200 with a legal move, never a wrong one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir } from './server.mjs';
import { expectProblem, get, sleep } from './http.mjs';
import { analyse, childrenOf, engineMetrics, fakeEngine, legalMoves, startEngineServer, waitForMetrics } from './analysis_lib.mjs';

const ITALIAN = 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3';
const dir = tempDir('chessd-e2e-engines-');
const servers = [];
after(async () => { for (const s of servers) await s.stop(); });

async function serve(engine, args = []) {
  const server = await startEngineServer(['--engine-max-think-ms', '300', ...args], { engine });
  servers.push(server);
  return server;
}

const faults = [
  { kind: 'crashed', name: 'exits-on-go', go: 'exit 3' },
  { kind: 'timeout', name: 'never-answers', go: ':' },
  { kind: 'garbage', name: 'illegal-bestmove', go: "echo 'bestmove e2e5'" },
  { kind: 'garbage', name: 'bestmove-none', go: "echo 'bestmove (none)'" },
  { kind: 'garbage', name: 'bestmove-text', go: "echo 'bestmove quit'" },
];

for (const fault of faults) {
  test(`an engine that ${fault.name.replaceAll('-', ' ')}: 503 engine_failed with Retry-After, retried once, ${fault.kind} counted, restarted`, async () => {
    const server = await serve(fakeEngine(dir, fault.name, fault.go));
    const ready = await get(server, '/readyz');
    assert.deepEqual([ready.body.engine.state, ready.body.engine.name, ready.body.engine.restarts], ['up', 'Fake', 0]);
    const res = await analyse(server, { depth: 5 });
    const p = expectProblem(res, 503, 'engine_failed');
    assert.match(p.detail, new RegExp(`\\(${fault.kind}\\)`));
    assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After ${res.headers.get('retry-after')}`);
    assert.equal(p.bestmove, undefined);
    const m = await waitForMetrics(server, (x) => x.restarts >= 2 && x.up === 1, 'both failed engines restarted');
    assert.equal(m.jobs, 1);
    assert.equal(m.retried, 1, 'retried once, on the restarted engine');
    assert.equal(m.failed, 1);
    assert.equal(m.failures[fault.kind], 2, `two ${fault.kind} failures: ${JSON.stringify(m.failures)}`);
    const others = Object.entries(m.failures).filter(([k]) => k !== fault.kind).map(([, v]) => v);
    assert.deepEqual(others, [0, 0]);
    assert.equal(m.startFailures, 0, 'the restarts themselves worked');
    const after = (await get(server, '/readyz')).body.engine;
    assert.equal(after.state, 'up');
    assert.ok(after.restarts >= 2, JSON.stringify(after));
    assert.equal(after.timeouts, fault.kind === 'timeout' ? 2 : 0);
    // a finished position never reaches the engine, failing or not
    const over = await analyse(server, { moves: ['f3', 'e5', 'g4', 'Qh4#'] });
    assert.equal(over.status, 200);
    assert.deepEqual(over.body.lines, []);
  });
}

test('a hung engine: the answer comes within two searches and a restart, not later', async () => {
  const server = await serve(fakeEngine(dir, 'hangs', ':'), ['--engine-max-think-ms', '200']);
  const started = performance.now();
  expectProblem(await analyse(server, { depth: 5 }), 503, 'engine_failed');
  const took = performance.now() - started;
  // each try: 200 ms, then 200 ms of grace after "stop"; the restart between: 100 ms and the handshake
  assert.ok(took >= 2 * 400 - 50, `answered after ${Math.round(took)} ms: were both tries run?`);
  assert.ok(took < 2 * 400 + 100 + 4000, `answered after ${Math.round(took)} ms`);
});

test('Stockfish killed (SIGKILL) in the middle of a long search: retried on the restarted engine, 200 with a legal move', async () => {
  const server = await startEngineServer(['--engine-max-think-ms', '2500']);
  servers.push(server);
  const [engine] = childrenOf(server.proc.pid);
  assert.ok(engine > 0, 'the engine is a child of the server');
  const answer = analyse(server, { fen: ITALIAN, depth: 60 });
  await waitForMetrics(server, (m) => m.busy === 1, 'the search runs');
  await sleep(300);
  process.kill(engine, 'SIGKILL');
  const res = await answer;
  assert.equal(res.status, 200, res.text);
  const legal = await legalMoves(server, { fen: ITALIAN });
  assert.ok(legal.uci.includes(res.body.bestmove), `bestmove ${res.body.bestmove} is not legal`);
  for (const line of res.body.lines)
    assert.ok(legal.uci.includes(line.pv[0]), `line ${line.multipv} starts with ${line.pv[0]}, not legal`);
  assert.equal(res.body.stopped, true, 'the retry had a search of its own, stopped by its deadline');
  assert.ok(res.body.lines[0].depth > 1, `the retry searched to depth ${res.body.lines[0].depth}`);
  const m = await engineMetrics(server);
  assert.deepEqual([m.jobs, m.retried, m.failed, m.restarts, m.failures.crashed], [1, 1, 0, 1, 1]);
  const [restarted] = childrenOf(server.proc.pid);
  assert.ok(restarted > 0 && restarted !== engine, `a new engine process (${restarted}, was ${engine})`);
  const ready = (await get(server, '/readyz')).body.engine;
  assert.deepEqual([ready.state, ready.restarts], ['up', 1]);
  // and it serves the next search as before
  const next = await analyse(server, { fen: ITALIAN, depth: 6 });
  assert.equal(next.status, 200);
  assert.equal(next.body.stopped, false);
});
