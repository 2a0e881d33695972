// --max-connections with chessd's own accept thread (api/http/acceptor.c): more
// clients than the limit arriving at once wait in the kernel's backlog and
// are all served as slots free, none reset or left hanging; exactly the
// limit arriving at once is served too; the process still exits 0 promptly
// on SIGTERM afterwards. (libmicrohttpd 0.9.75 leaves a server thread's
// mutex locked when a connection handed to it finds that thread at its share
// of the limit, which froze the thread and then the shutdown.) Out of file
// descriptors, the accept thread logs a JSON warning of its own (source
// "accept", not libmicrohttpd), at most a few a second, and serves again once
// clients leave.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { CHESSD_BIN, startServer, trackProcess } from './server.mjs';
import { sleep } from './http.mjs';

// Opens `count` connections at once; each sends GET /healthz (Connection:
// close) after `delayMs` and resolves to the status line it read ('' when
// the connection ended without an answer, 'timeout' after timeoutMs).
function flood(port, count, delayMs, timeoutMs) {
  const one = () => new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => { socket.destroy(); resolve('timeout'); }, timeoutMs);
    const done = () => { clearTimeout(timer); resolve(data.split('\r\n')[0]); };
    socket.setEncoding('utf8');
    socket.on('connect', () => setTimeout(() => {
      if (socket.writable) socket.write('GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
    }, delayMs));
    socket.on('data', (d) => { data += d; });
    socket.on('end', done);
    socket.on('error', done);
  });
  return Promise.all(Array.from({ length: count }, one));
}

function tally(lines) {
  const counts = {};
  for (const line of lines) counts[line] = (counts[line] ?? 0) + 1;
  return counts;
}

async function stopsPromptly(server) {
  server.proc.kill('SIGTERM');
  let timer;
  const result = await Promise.race([server.exited,
    new Promise((resolve) => { timer = setTimeout(() => resolve(null), 8000); })]);
  clearTimeout(timer);
  assert.ok(result, `chessd did not exit within 8 s of SIGTERM; stderr: ${server.stderr()}`);
  assert.deepEqual(result, { code: 0, signal: null });
}

for (const [clients, threads] of [[20, 8], [100, 8], [60, 1]]) {
  test(`--max-connections 20, ${threads} threads: ${clients} clients at once are all answered, then SIGTERM exits 0`, async () => {
    const server = await startServer(['--max-connections', '20', '--threads', String(threads), '--per-ip-connections', '0'],
      { withRedis: false });
    try {
      const lines = await flood(server.port, clients, 300, 6000);
      assert.deepEqual(tally(lines), { 'HTTP/1.1 200 OK': clients });
      // Every server thread still serves.
      assert.deepEqual(tally(await flood(server.port, 16, 0, 3000)), { 'HTTP/1.1 200 OK': 16 });
      await sleep(100);
      await stopsPromptly(server);
    } finally {
      server.proc.kill('SIGKILL');
    }
  });
}

test('out of file descriptors: the accept thread warns as "accept", a few times a second, and recovers', async () => {
  const proc = trackProcess(spawn('prlimit', ['--nofile=48:48', CHESSD_BIN, 'serve', '--bind', '127.0.0.1', '--port', '0',
    '--redis', 'none', '--per-ip-connections', '0'], { stdio: ['ignore', 'ignore', 'pipe'] }));
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
  const sockets = [];
  try {
    for (let i = 0; i < 100 && !/listening on 127\.0\.0\.1 port \d+/.test(stderr); i++) await sleep(50);
    const port = Number(/listening on 127\.0\.0\.1 port (\d+)/.exec(stderr)[1]);
    for (let i = 0; i < 60; i++) {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      sockets.push(socket);
    }
    await sleep(1500);
    const warnings = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const accepts = warnings.filter((w) => /accept failed: Too many open files/.test(w.message));
    assert.ok(accepts.length >= 1, `no accept warning; stderr: ${stderr}`);
    assert.ok(accepts.length <= 10, `${accepts.length} accept warnings in 1.5 s`);
    for (const w of accepts) assert.equal(w.source, 'accept');
    for (const socket of sockets) socket.destroy();
    await sleep(300);
    assert.deepEqual(tally(await flood(port, 8, 0, 3000)), { 'HTTP/1.1 200 OK': 8 });
    proc.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null });
  } finally {
    for (const socket of sockets) socket.destroy();
    proc.kill('SIGKILL');
  }
});
