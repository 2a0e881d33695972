// The analysis queue over real HTTP with the real Stockfish and one engine
// worker (--engine-workers 1: one engine route thread, 4 analyses waiting
// for it): one long search and 4 waiting fill it, the next is 503
// engine_busy with Retry-After at once; /healthz stays fast meanwhile; and
// a client that leaves while its analysis waits frees its place and its
// search is never run (chessd_engine_jobs_total counts only those run).
// From one address here: --engine-analyses-per-client 0 lifts its bound.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { expectProblem, get, nodeRequest } from './http.mjs';
import { checkResponse } from './openapi.mjs';
import { analyse, engineMetrics, startEngineServer, waitForMetrics } from './analysis_lib.mjs';

const ITALIAN = 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3';
const THINK_MS = 1500; // the long search: a depth 60 one, ended by --engine-max-think-ms
const QUEUE = 4;

let server;
before(async () => {
  server = await startEngineServer(['--engine-workers', '1', '--engine-max-think-ms', String(THINK_MS), '--engine-analyses-per-client', '0']);
  // nodeRequest's time includes the check against openapi.yaml, whose first use of a schema compiles it
  for (const path of ['/healthz', '/readyz']) await get(server, path);
});
after(async () => { await server?.stop(); });

/** Starts an analysis that holds the engine for THINK_MS; resolves once it runs to { long: its answer's promise }. */
async function occupyEngine() {
  const long = analyse(server, { fen: ITALIAN, depth: 60 });
  await waitForMetrics(server, (m) => m.busy === 1, 'the long search runs');
  return { long };
}

test('one search and 4 waiting fill the queue: the next is 503 engine_busy with Retry-After at once, /healthz stays fast', async () => {
  const before = await engineMetrics(server);
  const { long } = await occupyEngine();
  const longStarted = performance.now();
  const waiting = [];
  for (let i = 0; i < QUEUE; i++) waiting.push(analyse(server, { fen: ITALIAN, depth: 2 }));
  await waitForMetrics(server, (m) => m.analysisWaiting === QUEUE, `${QUEUE} analyses waiting`);

  const refused = await rawAnalysis({ fen: ITALIAN, depth: 2 }).answered;
  const p = expectProblem(refused, 503, 'engine_busy');
  assert.match(p.detail, /queue is full/);
  assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After ${refused.headers['retry-after']}`);
  assert.ok(refused.ms < 1000, `the refusal took ${Math.round(refused.ms)} ms: it must not wait for the engine`);
  assert.ok(refused.at - longStarted < THINK_MS, 'refused while the long search still ran');

  // Liveness is answered on the connection threads, never behind the engine.
  const healthz = [];
  for (let i = 0; i < 10; i++) {
    const res = await nodeRequest(server, { path: '/healthz', agent: false, timeoutMs: 5000 });
    assert.equal(res.status, 200);
    healthz.push(res.ms);
  }
  const slowest = Math.max(...healthz);
  assert.ok(slowest < 100, `/healthz under a full engine pool: ${healthz.map((ms) => Math.round(ms)).join(', ')} ms`);
  const ready = (await nodeRequest(server, { path: '/readyz', agent: false, timeoutMs: 5000 }));
  assert.equal(ready.status, 200);
  assert.equal(ready.body.engine.busy, 1);
  assert.ok(ready.ms < 100, `/readyz took ${Math.round(ready.ms)} ms`);

  const first = await long;
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.stopped, true);
  for (const res of await Promise.all(waiting)) assert.equal(res.status, 200, res.text);
  const after = await engineMetrics(server);
  assert.equal(after.jobs - before.jobs, 1 + QUEUE, 'the refused one never ran');
  assert.equal(after.refused - before.refused, 1);
  assert.equal(after.analysisWaiting, 0);
  assert.equal(after.failed - before.failed, 0);
});

/**
 * An analysis request over its own connection, which the caller may destroy. answered resolves to
 * 'gone', or { status, headers, body, ms, at }: ms until the answer's last byte (at: its time), then the body checked
 * against openapi.yaml (whose first check of a schema takes long: it is compiled then).
 */
function rawAnalysis(body) {
  const text = JSON.stringify(body);
  const started = performance.now();
  const req = http.request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/v1/position/analysis', agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } });
  const answered = new Promise((resolve) => {
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const at = performance.now();
        const ms = at - started;
        const answer = Buffer.concat(chunks).toString('utf8');
        const parsed = checkResponse({ method: 'POST', path: '/v1/position/analysis', status: res.statusCode, headers: res.headers, body: answer });
        resolve({ status: res.statusCode, headers: res.headers, body: parsed, text: answer, ms, at });
      });
    });
    req.on('error', () => resolve('gone'));
  });
  req.end(text);
  return { req, answered };
}

test('a client that leaves while its analysis waits is not searched for; the one behind it is', async () => {
  const before = await engineMetrics(server);
  const analysisLines = () => server.logLines().filter((l) => l.path === '/v1/position/analysis');
  const linesBefore = analysisLines().length;
  const { long } = await occupyEngine();
  const leaving = rawAnalysis({ fen: ITALIAN, depth: 5 });
  await waitForMetrics(server, (m) => m.analysisWaiting === 1, 'the leaving analysis waits');
  const staying = rawAnalysis({ fen: ITALIAN, depth: 5 });
  await waitForMetrics(server, (m) => m.analysisWaiting === 2, 'the staying analysis waits behind it');
  leaving.req.destroy();
  assert.equal(await leaving.answered, 'gone');

  assert.equal((await long).status, 200);
  assert.equal((await staying.answered).status, 200);
  const after = await waitForMetrics(server, (m) => m.analysisWaiting === 0 && m.busy === 0, 'the queue empty');
  assert.equal(after.jobs - before.jobs, 2, 'the long search and the one that stayed; not the one whose client left');
  assert.equal(after.failed - before.failed, 0);
  // its request is logged, with the answer nobody read (503 unavailable) or none (status 0, when the
  // connection was found closed first); the two others answered 200
  const lines = await server.waitForLog(() => analysisLines().length === linesBefore + 3).then(() => analysisLines().slice(linesBefore));
  assert.equal(lines.filter((l) => l.status !== 200).length, 1, JSON.stringify(lines));
  assert.ok([0, 503].includes(lines.find((l) => l.status !== 200).status), JSON.stringify(lines));
});
