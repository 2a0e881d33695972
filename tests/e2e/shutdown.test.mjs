// Graceful shutdown: SIGTERM while a slow request (perft 5 on Kiwipete, a
// few tenths of a second) is running lets it finish with 200 and the right
// count, /readyz answers 503 unavailable on a connection that is already
// open, new connections are refused, and the process exits 0. SIGINT too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startServer } from './server.mjs';
import { nodeRequest, expectProblem, sleep, KIWIPETE } from './http.mjs';

test('SIGTERM during perft 5 on Kiwipete: the request completes with 200, then exit 0', async () => {
  const server = await startServer();
  const slowAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const idleAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // Open both connections first, so the slow request is surely on the server when the signal lands.
    assert.equal((await nodeRequest(server, { path: '/healthz', agent: slowAgent })).status, 200);
    assert.equal((await nodeRequest(server, { path: '/readyz', agent: idleAgent })).status, 200);
    let answeredAt = 0;
    const slow = nodeRequest(server, { path: `/v1/perft?depth=5&fen=${encodeURIComponent(KIWIPETE)}`, agent: slowAgent })
      .then((res) => { answeredAt = Date.now(); return res; });
    await sleep(50);
    const signalledAt = Date.now();
    server.proc.kill('SIGTERM');
    await sleep(50);

    // Draining: an open connection still gets answers, and /readyz says 503.
    const ready = await nodeRequest(server, { path: '/readyz', agent: idleAgent });
    expectProblem(ready, 503, 'unavailable');
    // The listening socket is closed: a new connection is refused.
    await assert.rejects(fetch(`${server.base}/healthz`), 'a new connection during the drain must fail');

    const res = await slow;
    assert.equal(res.status, 200);
    assert.equal(res.body.nodes, 193690690);
    assert.equal(res.body.depth, 5);
    assert.ok(answeredAt > signalledAt, 'the perft finished before SIGTERM, so nothing was drained: use a heavier request');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    assert.match(server.stderr(), /signal 15: draining/);
  } finally {
    slowAgent.destroy();
    idleAgent.destroy();
    await server.stop();
  }
});

test('SIGTERM with no request in flight exits 0 at once', async () => {
  const server = await startServer();
  const started = Date.now();
  await server.stop();
  assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
});

test('SIGINT drains and exits 0 too', async () => {
  const server = await startServer();
  server.proc.kill('SIGINT');
  assert.deepEqual(await server.exited, { code: 0, signal: null });
  assert.match(server.stderr(), /signal 2: draining/);
});
