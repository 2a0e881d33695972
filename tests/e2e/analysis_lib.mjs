// Helpers of the analysis tests (analysis*.test.mjs): a chessd with an
// engine (the real Stockfish, /usr/games/stockfish or CHESSD_STOCKFISH, or
// a fake one written by the test), the analysis request, the engine's
// series in /metrics, the engine processes a server runs (its children),
// and whether a move is legal in a position (asked of chessd's rules API).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startServer } from './server.mjs';
import { post } from './http.mjs';
import { metricValue } from './attacks_lib.mjs';

export const STOCKFISH = process.env.CHESSD_STOCKFISH ?? '/usr/games/stockfish';

/** startServer with --engine STOCKFISH (or `engine`) and the extra flags. */
export async function startEngineServer(args = [], { engine = STOCKFISH, ...opts } = {}) {
  assert.ok(existsSync(engine), `${engine} is missing: install the Debian package stockfish (make deps) or set CHESSD_STOCKFISH`);
  return startServer(['--engine', engine, ...args], opts);
}

/** POST /v1/position/analysis with body (validated against openapi.yaml by call()). */
export const analyse = (server, body) => post(server, '/v1/position/analysis', body);

const ENGINE_SERIES = {
  workers: 'chessd_engine_workers',
  up: 'chessd_engine_workers_up',
  busy: 'chessd_engine_workers_busy',
  waiting: 'chessd_engine_jobs_waiting',
  analysisWaiting: 'chessd_analysis_waiting',
  refused: 'chessd_analysis_refused_total',
  jobs: 'chessd_engine_jobs_total',
  failed: 'chessd_engine_jobs_failed_total',
  retried: 'chessd_engine_jobs_retried_total',
  restarts: 'chessd_engine_restarts_total',
  startFailures: 'chessd_engine_start_failures_total',
};

/** The engine's series of /metrics, by short name (failures: {timeout, crashed, garbage}); each must be there. */
export async function engineMetrics(server) {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const out = {};
  for (const [key, name] of Object.entries(ENGINE_SERIES)) {
    out[key] = metricValue(text, name);
    assert.notEqual(out[key], null, `/metrics has no ${name}`);
  }
  out.failures = {};
  for (const kind of ['timeout', 'crashed', 'garbage']) {
    const m = new RegExp(`^chessd_engine_failures_total\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(text);
    assert.ok(m, `/metrics has no chessd_engine_failures_total{kind="${kind}"}`);
    out.failures[kind] = Number(m[1]);
  }
  return out;
}

/** Waits (up to ms) until pred(engineMetrics) holds; resolves to the metrics. */
export async function waitForMetrics(server, pred, what, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = await engineMetrics(server);
    if (pred(m)) return m;
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms; metrics ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The pids of a process's children (every thread's), from /proc. */
export function childrenOf(pid) {
  const out = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch { /* the thread ended meanwhile */ }
    out.push(...text.split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

/** The legal moves (UCI) of the position reached from fen (null: the start) by moves, asked of POST /v1/position/moves. */
export async function legalMoves(server, { fen = null, moves = [], chess960 = undefined } = {}) {
  const body = { moves, ...(fen ? { fen } : {}), ...(chess960 !== undefined ? { chess960 } : {}) };
  const res = await post(server, '/v1/position/moves', body);
  assert.equal(res.status, 200, `legal moves of ${JSON.stringify(body)}: ${res.text}`);
  return { fen: res.body.position.fen, uci: res.body.position.legal_moves.map((m) => m.uci) };
}

/**
 * Writes a fake UCI engine (sh) at dir/name: it answers "uci" (id name
 * Fake, uciok) and "isready" (readyok), runs goAction (sh) on "go", and
 * exits on "quit". Returns its path.
 */
export function fakeEngine(dir, name, goAction) {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh
while read -r line; do
  case "$line" in
    uci) echo 'id name Fake'; echo uciok ;;
    isready) echo readyok ;;
    go*) ${goAction} ;;
    quit) exit 0 ;;
  esac
done
`);
  chmodSync(file, 0o755);
  return file;
}
