// Graceful shutdown: SIGTERM while a slow request (perft 5 on Kiwipete, a
// few tenths of a second) is running lets it finish with 200 and the right
// count, /readyz answers 503 unavailable on a connection that is already
// open, new connections are refused, and the process exits 0. SIGINT too.
// SIGTERM lands again and again while many connections send requests and
// new ones keep arriving, with epoll_ctl's removals slowed down by a preload
// library (fixtures/slow_epoll_del.c) to widen any race between threads: the
// exit is always 0. The listening socket is chessd's own and closes without
// libmicrohttpd's MHD_quiesce_daemon(), which aborts the process when a
// server thread takes the socket out of its epoll set at the same moment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { REPO_ROOT, startServer, tempDir } from './server.mjs';
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

test('SIGTERM under load with slow epoll removals, 15 times over: every exit is 0, no abort', async () => {
  const ROUNDS = 15;
  const shim = path.join(tempDir('chessd-slow-epoll-'), 'slow_epoll_del.so');
  execFileSync(process.env.CC ?? 'cc', ['-shared', '-fPIC', '-O2', '-o', shim,
    path.join(REPO_ROOT, 'tests/e2e/fixtures/slow_epoll_del.c'), '-ldl']);
  // Under AddressSanitizer the preload comes before its runtime, which it allows with this option.
  const env = { LD_PRELOAD: shim,
    ASAN_OPTIONS: [process.env.ASAN_OPTIONS, 'verify_asan_link_order=0'].filter(Boolean).join(':') };
  const KEPT = 48; // keep-alive connections, each sending its next request as soon as an answer arrives
  const request = 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n';
  const closing = 'GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n';
  for (let round = 0; round < ROUNDS; round++) {
    const server = await startServer([], { withRedis: false, env });
    const sockets = [];
    let stopping = false;
    let answers = 0;
    const connect = (first, again) => {
      const socket = net.connect(server.port, '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => {});
      socket.on('connect', () => socket.write(first));
      socket.on('data', () => { answers++; if (again && !stopping && socket.writable) socket.write(request); });
      return socket;
    };
    for (let i = 0; i < KEPT; i++) connect(request, true);
    // New connections all the time, each with one request: the listening socket is busy when the signal lands.
    const churn = setInterval(() => { if (!stopping) for (let i = 0; i < 4; i++) connect(closing, false); }, 2);
    try {
      await sleep(150 + 20 * (round % 5));
      assert.ok(answers > 0, `round ${round}: no answer before the signal`);
      server.proc.kill('SIGTERM');
      let timer;
      const result = await Promise.race([server.exited,
        new Promise((resolve) => { timer = setTimeout(() => resolve(null), 15000); })]);
      clearTimeout(timer);
      assert.ok(result, `round ${round}: chessd did not exit within 15 s of SIGTERM`);
      assert.deepEqual(result, { code: 0, signal: null }, `round ${round}: stderr: ${server.stderr()}`);
      assert.doesNotMatch(server.stderr(), /Failed to remove|epoll/i, `round ${round}`);
      assert.match(server.stderr(), /chessd: stopped/);
    } finally {
      stopping = true;
      clearInterval(churn);
      for (const socket of sockets) socket.destroy();
      await server.stop();
    }
  }
});
