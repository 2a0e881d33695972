// Attacks on connections rather than on one handler: slowloris heads,
// stalled, trickled and aborted bodies (B), an over-cap body written before
// the answer is read (F), and libmicrohttpd's own messages flooding stderr
// (I). Each test starts the chessd it needs with small limits.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { startServer, CHESSD_BIN } from './server.mjs';
import {
  get, post, nodeRequest, nodeRequestFrom, expectProblem, rawExchange, rawRequest, parseRawResponse,
  parseRawResponses, sleep, START_FEN, KIWIPETE,
} from './http.mjs';
import { checkResponse, spec, validatorFor } from './openapi.mjs';
import {
  withServer, waitFor, cpuSeconds, openFds, settledFds, metricValue, checkProblemSchema, runServe, POSITION_4, perftPath, json, overCapPost,
} from './attacks_lib.mjs';

const POST_HEAD = 'POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';

// ---------------------------------------------------------------- B. slowloris and deadlines

describe('B. slowloris, stalled and aborted requests', () => {
  test('60 slowloris sockets from 127.0.0.1 do not keep 127.0.0.2 out, and each is closed within --header-timeout + 2 s though bytes keep coming', async () => {
    await withServer(['--max-connections', '100', '--per-ip-connections', '20', '--header-timeout', '3'], async (server) => {
      const sockets = Array.from({ length: 60 }, () => {
        const s = net.connect(server.port, '127.0.0.1');
        const info = { socket: s, start: performance.now(), closedAfter: null, timer: null };
        s.on('error', () => {});
        s.resume();
        info.closed = new Promise((resolve) => s.on('close', () => {
          clearInterval(info.timer);
          info.closedAfter = performance.now() - info.start;
          resolve();
        }));
        info.ready = Promise.race([info.closed, new Promise((resolve) => s.on('connect', () => {
          info.start = performance.now();
          s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
          info.timer = setInterval(() => { if (!s.destroyed) s.write('X'); }, 1000);
          resolve();
        }))]);
        return info;
      });
      try {
        await Promise.all(sockets.map((s) => s.ready));
        // Another client address is served promptly, again and again, for about 5 s.
        const probes = [];
        const probeEnd = performance.now() + 5000;
        while (performance.now() < probeEnd) {
          let res;
          try {
            res = await nodeRequestFrom(server, { path: '/healthz', agent: false, localAddress: '127.0.0.2', timeoutMs: 1000 });
          } catch (err) {
            assert.fail(`probe ${probes.length} from 127.0.0.2 failed while the slowloris sockets are open: ${err.message}`);
          }
          assert.equal(res.status, 200);
          probes.push(res.ms);
          await sleep(250);
        }
        assert.ok(probes.length >= 10, `${probes.length} probes`);
        // Every slowloris socket is gone by its start + header timeout + 2 s.
        const lastStart = Math.max(...sockets.map((s) => s.start));
        await Promise.race([Promise.all(sockets.map((s) => s.closed)), sleep(Math.max(0, lastStart + 5000 - performance.now()))]);
        const open = sockets.filter((s) => s.closedAfter === null);
        const late = sockets.filter((s) => s.closedAfter !== null && s.closedAfter > 5000);
        const accepted = sockets.filter((s) => s.closedAfter === null || s.closedAfter > 1000).length;
        assert.ok(accepted >= 1, 'some slowloris sockets must have been accepted, or nothing was tested');
        assert.equal(open.length + late.length, 0,
          `${open.length} slowloris sockets still open and ${late.length} closed late, 5 s after they started sending ` +
          `(${accepted} were accepted; closing times: ${sockets.map((s) => (s.closedAfter === null ? 'open' : s.closedAfter.toFixed(0))).join(' ')})`);
      } finally {
        for (const s of sockets) {
          clearInterval(s.timer);
          s.socket.destroy();
        }
      }
    });
  });

  test('100 uploads aborted mid-body (FIN, close, RST) leave no descriptor behind after --body-timeout + 2 s', async () => {
    await withServer(['--body-timeout', '2'], async (server) => {
      const pid = server.proc.pid;
      assert.equal((await get(server, '/healthz')).status, 200);
      const baseline = await settledFds(pid);
      const head = 'POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"fen":';
      const clients = [];
      try {
        await Promise.all(Array.from({ length: 100 }, (_, i) => new Promise((resolve) => {
          const s = net.connect(server.port, '127.0.0.1');
          clients.push(s);
          s.on('error', () => {});
          s.on('close', resolve);
          s.resume();
          s.on('connect', () => {
            s.write(head);
            if (i % 2) s.destroy(); // close(2) right behind the bytes
            else if (i % 4 === 0) { s.end(); resolve(); } // FIN, still reading
            else s.resetAndDestroy(); // RST
          });
        })));
        const aborted = performance.now();
        let count = openFds(pid);
        while (count > baseline + 2 && performance.now() - aborted < 4000) {
          await sleep(50);
          count = openFds(pid);
        }
        assert.ok(count <= baseline + 2, `${count} descriptors open ${((performance.now() - aborted) / 1000).toFixed(1)} s after the aborts; ${baseline} at rest`);
      } finally {
        for (const s of clients) s.destroy();
      }
      assert.equal((await get(server, '/healthz')).status, 200);
    });
  });

  test('a body that stalls, or trickles, is cut off within --body-timeout + 2 s of its head; a body finished in time is read', async () => {
    await withServer(['--body-timeout', '2'], async (server) => {
      const head = 'POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n';
      const open = (trickle) => new Promise((resolve) => {
        const s = net.connect(server.port, '127.0.0.1');
        let sent = null;
        let timer = null;
        s.on('error', () => {});
        s.resume();
        s.on('close', () => { clearInterval(timer); resolve({ s, closedAfter: sent === null ? 0 : performance.now() - sent }); });
        s.on('connect', () => {
          s.write(`${head}{"fen":`, () => { sent = performance.now(); });
          if (trickle) timer = setInterval(() => { if (!s.destroyed) s.write(' '); }, 500);
        });
        setTimeout(() => { if (!s.destroyed) resolve({ s, closedAfter: null }); }, 8000);
      });
      const [stalled, trickled] = await Promise.all([open(false), open(true)]);
      stalled.s.destroy();
      trickled.s.destroy();
      for (const [what, r] of [['a stalled body', stalled], ['a body trickled a byte every 500 ms', trickled]]) {
        assert.ok(r.closedAfter !== null, `${what}: the connection is still open 8 s after the head`);
        assert.ok(r.closedAfter <= 4000, `${what}: closed ${r.closedAfter.toFixed(0)} ms after the head (allowed: 4000)`);
      }
      // Guard (kept): a body that is complete within the deadline is answered.
      const body = JSON.stringify({ fen: START_FEN });
      const res = await rawRequest(server, 'POST', '/v1/position?legal_moves=false', [
        `POST /v1/position?legal_moves=false HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        body.slice(0, 10), body.slice(10),
      ], { pauseMs: 700 });
      assert.equal(res.status, 200);
      assert.equal(res.body.fen, START_FEN);
    });
  });
});

describe('F. lingering close: an over-cap body written before reading still gets its 413', () => {
  let server;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.stop(); });

  // Python's http.client (urllib) sends the head and then the body with
  // sendall, and reads only when both are written. A server that answers 413
  // and closes while the body is still coming resets the connection, and such
  // a client sees the reset instead of the answer.
  test('a 2 MiB over-cap body written in full before reading gets 413 payload_too_large, not a reset: 10 of 10 tries, head and body back to back (as urllib) and in one write', async () => {
    const body = Buffer.alloc(2 * 1024 * 1024, 0x20);
    const head = Buffer.from(`${POST_HEAD}Content-Length: ${body.length}\r\n\r\n`);
    const attempt = (pieces) => overCapPost(server.port, pieces);
    const split = [];
    const whole = [];
    for (let i = 0; i < 10; i++) split.push(await attempt([head, body]));
    for (let i = 0; i < 10; i++) whole.push(await attempt([Buffer.concat([head, body])]));
    assert.deepEqual(split, Array(10).fill('ok'), `head, then body: ${split.join('; ')}`);
    assert.deepEqual(whole, Array(10).fill('ok'), `head and body in one write: ${whole.join('; ')}`);
  });
});

// ---------------------------------------------------------------- I. libmicrohttpd's messages

describe("I. libmicrohttpd's own messages are JSON, rate-limited and counted", () => {
  test('200 connections aborted mid-request: stderr gets only JSON lines, at most 10 a second, and chessd_http_library_messages_total goes up', async () => {
    await withServer([], async (server) => {
      const lines = []; // { t, text } for every complete stderr line after start-up
      let partial = '';
      server.proc.stderr.on('data', (d) => {
        const parts = (partial + d).split('\n');
        partial = parts.pop();
        for (const text of parts) lines.push({ t: performance.now(), text });
      });
      const before = metricValue((await get(server, '/metrics')).text, 'chessd_http_library_messages_total') ?? 0;
      const head = 'POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"moves":[';
      for (let batch = 0; batch < 8; batch++) {
        await Promise.all(Array.from({ length: 25 }, (_, i) => new Promise((resolve) => {
          const s = net.connect(server.port, '127.0.0.1');
          s.on('error', () => {});
          s.on('close', resolve);
          s.on('connect', () => {
            s.write(i % 3 === 0 ? head.slice(0, 30) : head);
            if (i % 2) s.resetAndDestroy();
            else s.destroy();
          });
        })));
      }
      // Done once the server has let go of them all (the gauge counts this scrape too).
      const gauge = async () => metricValue((await get(server, '/metrics')).text, 'chessd_open_connections');
      try {
        await waitFor(async () => (await gauge()) <= 1, 5000, 'the aborted connections to be closed');
      } catch { /* judged below by what stderr shows */ }
      await sleep(1100); // one more rate-limit period for messages still held back
      const notJson = lines.filter(({ text }) => {
        try {
          const v = JSON.parse(text);
          return v === null || typeof v !== 'object' || Array.isArray(v);
        } catch {
          return true;
        }
      });
      assert.deepEqual(notJson.map((l) => l.text).slice(0, 10), [], `${notJson.length} of ${lines.length} stderr lines are not JSON objects`);
      const busiest = Math.max(0, ...lines.map(({ t }) => lines.filter((o) => o.t >= t && o.t < t + 1000).length));
      assert.ok(busiest <= 10, `${busiest} stderr lines within one second (${lines.length} in all)`);
      const after = metricValue((await get(server, '/metrics')).text, 'chessd_http_library_messages_total');
      assert.ok(after !== null, '/metrics has no chessd_http_library_messages_total');
      assert.ok(after > before, `chessd_http_library_messages_total went from ${before} to ${after}`);
    });
  });
});
