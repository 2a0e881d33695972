// Attacks on the server as a whole rather than on one handler: perft that
// would hold the connection threads (A), slowloris heads, stalled and
// aborted bodies (B), request smuggling through lenient header parsing (C),
// an encoded '/' or NUL steering the router (D), unknown or repeated query
// parameters (E), an over-cap body written before the answer is read (F),
// mass game creation from one address (G), secrets echoed at start-up (H), and
// libmicrohttpd's own error messages flooding stderr (I). Each test starts the
// chessd it needs with small limits (the machine has two cores); answers that
// come through http.mjs are checked against openapi.yaml.
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

// ---------------------------------------------------------------- helpers

/**
 * Starts chessd with `args`, runs fn(server), then stops it with SIGTERM
 * (asserting a clean exit). When fn fails the server is killed instead: a
 * server that is still counting a perft or holding stuck connections must
 * not turn one failure into a second one at shutdown.
 */
async function withServer(args, fn, opts) {
  const server = await startServer(args, opts);
  let ok = false;
  try {
    const result = await fn(server);
    ok = true;
    return result;
  } finally {
    if (ok) {
      await server.stop();
    } else {
      server.proc.kill('SIGKILL');
      await server.exited;
    }
  }
}

/** Polls pred every 25 ms until it is true; fails with `what` after timeoutMs. */
async function waitFor(pred, timeoutMs, what) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await pred()) return;
    assert.ok(performance.now() < deadline, `timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** CPU seconds (user + system) the process has used, from /proc/<pid>/stat (100 ticks a second). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Open file descriptors of a process. */
const openFds = (pid) => readdirSync(`/proc/${pid}/fd`).length;

/** The descriptor count once two readings 100 ms apart agree (at most 2 s). */
async function settledFds(pid) {
  let last = openFds(pid);
  for (let i = 0; i < 20; i++) {
    await sleep(100);
    const now = openFds(pid);
    if (now === last) return now;
    last = now;
  }
  return last;
}

/** The sum of every sample of a Prometheus metric in exposition text, or null when there is none. */
function metricValue(text, name) {
  let sum = null;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (m && m[1] === name) sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

/** Checks a problem document against components.schemas.Problem alone (for paths the router must not map). */
function checkProblemSchema(res, label) {
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, `${label}: expected a problem document, got ${JSON.stringify(res.text.slice(0, 200))}`);
  const body = JSON.parse(res.text);
  const validate = validatorFor(spec().doc.components.schemas.Problem, 'components.schemas.Problem');
  assert.ok(validate(body), `${label}: the body does not match components.schemas.Problem: ${JSON.stringify(validate.errors)}`);
  assert.equal(body.status, res.status);
  return body;
}

const POSITION_4 = 'r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1';
const perftPath = (depth, fen) => `/v1/perft?depth=${depth}&fen=${encodeURIComponent(fen)}`;
const json = { 'content-type': 'application/json' };

// ---------------------------------------------------------------- A. perft

describe('A. perft runs on its own pool, off the connection threads', () => {
  test('while two depth-6 perfts count, /healthz and 10 kept-alive connections answer within 100 ms; the perfts finish with the right counts', async () => {
    await withServer(['--threads', '2', '--max-perft-depth', '6', '--max-perft-nodes', '100000000000', '--perft-threads', '2'], async (server) => {
      const pid = server.proc.pid;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
      const pending = [];
      try {
        // Ten connections, opened and kept alive before the perfts start.
        const warm = await Promise.all(Array.from({ length: 10 }, () => nodeRequestFrom(server, { path: '/v1/position?legal_moves=false', agent })));
        const ports = new Set(warm.map((r) => r.socket.localPort));
        assert.equal(ports.size, 10, 'ten kept-alive connections are open before the perfts');

        const cpu0 = cpuSeconds(pid);
        let finished = 0;
        const perfts = [0, 1].map(() => {
          const p = nodeRequestFrom(server, { path: perftPath(6, KIWIPETE), agent: false, timeoutMs: 120000 });
          p.then(() => { finished++; }, () => { finished++; });
          pending.push(p);
          return p;
        });
        // Both are counting once the server burns CPU (about two cores' worth).
        await waitFor(() => cpuSeconds(pid) - cpu0 >= 0.5, 5000, 'the perfts to start counting');

        let sampling = true;
        const slow = [];
        const kept = Array.from({ length: 10 }, async (_, w) => {
          let n = 0;
          while (sampling) {
            const res = await nodeRequestFrom(server, { path: '/v1/position?legal_moves=false', agent, timeoutMs: 1000 })
              .catch((err) => assert.fail(`kept-alive client ${w}, request ${n}, while the perfts run: ${err.message}`));
            assert.equal(res.status, 200);
            assert.equal(res.body.fen, START_FEN);
            assert.ok(ports.has(res.socket.localPort), `kept-alive client ${w} was given a new connection (local port ${res.socket.localPort})`);
            if (res.ms >= 100) slow.push(`kept-alive client ${w}, request ${n}: ${res.ms.toFixed(1)} ms`);
            n++;
            await sleep(200);
          }
          return n;
        });
        kept.forEach((p) => { pending.push(p); });
        const health = [];
        try {
          for (let i = 0; i < 20; i++) {
            const res = await nodeRequestFrom(server, { path: '/healthz', agent: false, timeoutMs: 1000 })
              .catch((err) => assert.fail(`/healthz sample ${i}, while the perfts run: ${err.message}`));
            assert.equal(res.status, 200);
            health.push(res.ms);
            assert.ok(res.ms < 100, `/healthz sample ${i} took ${res.ms.toFixed(1)} ms while the perfts run (samples so far: ${health.map((m) => m.toFixed(1)).join(', ')})`);
            await sleep(200);
          }
        } finally {
          sampling = false;
        }
        const counts = await Promise.all(kept);
        assert.equal(finished, 0, 'the perfts must still be counting when the sampling ends, or it proved nothing');
        assert.deepEqual(slow, [], 'every request on a kept-alive connection must answer within 100 ms');
        assert.ok(counts.every((n) => n >= 5), `each kept-alive client made several requests: ${counts}`);

        for (const res of await Promise.all(perfts)) {
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.depth, 6);
          assert.equal(res.body.nodes, 8031647685);
          assert.equal(Object.values(res.body.divide).reduce((a, b) => a + b, 0), 8031647685);
        }
      } finally {
        pending.forEach((p) => p.catch(() => {}));
        agent.destroy();
      }
    });
  });

  test('with --perft-threads 1, one perft counting and four queued, a sixth is refused at once with 503 unavailable and Retry-After', async () => {
    await withServer(['--perft-threads', '1', '--max-perft-depth', '6', '--max-perft-nodes', '1000000000'], async (server) => {
      const pid = server.proc.pid;
      const path = perftPath(6, POSITION_4); // 706045033 nodes, about a second each here
      const started = performance.now();
      const pending = [];
      const send = () => {
        const p = nodeRequestFrom(server, { path, agent: false, timeoutMs: 60000 }).then((res) => ({ ...res, at: performance.now() - started }));
        pending.push(p);
        return p;
      };
      try {
        const cpu0 = cpuSeconds(pid);
        const first = send();
        await waitFor(() => cpuSeconds(pid) - cpu0 >= 0.1, 5000, 'the first perft to start counting');
        const rest = Array.from({ length: 5 }, send);
        const results = await Promise.all([first, ...rest]);
        const statuses = results.map((r) => r.status);
        const refused = results.filter((r) => r.status === 503);
        assert.equal(refused.length, 1, `exactly one of six perfts is refused (1 counting + 4 queued fit): statuses ${statuses}`);
        expectProblem(refused[0], 503, 'unavailable');
        assert.ok(Number(refused[0].headers['retry-after']) >= 1, `Retry-After: ${refused[0].headers['retry-after']}`);
        const done = results.filter((r) => r.status === 200);
        assert.equal(done.length, 5, `statuses ${statuses}`);
        for (const r of done) assert.equal(r.body.nodes, 706045033);
        const firstDone = Math.min(...done.map((r) => r.at));
        assert.ok(refused[0].at < firstDone, `the refusal (${refused[0].at.toFixed(0)} ms) must come before any perft finishes (${firstDone.toFixed(0)} ms), not after waiting in line`);
      } finally {
        pending.forEach((p) => p.catch(() => {}));
      }
    });
  });

  test('a perft over --max-perft-nodes is refused with 422 perft_too_large naming the budget; one within it is counted', async () => {
    await withServer(['--max-perft-nodes', '100000'], async (server) => {
      const res = await nodeRequestFrom(server, { path: '/v1/perft?depth=4', agent: false, timeoutMs: 5000 });
      const problem = expectProblem(res, 422, 'perft_too_large');
      assert.equal(problem.budget, 100000, `budget: ${JSON.stringify(problem)}`);
      const ok = await get(server, '/v1/perft?depth=3');
      assert.equal(ok.status, 200);
      assert.equal(ok.body.nodes, 8902);
    });
  });
});

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

// ---------------------------------------------------------------- C. strict HTTP parsing

// A complete request of its own (34 bytes): sent right after an ambiguous
// head, it must never be answered as a second request.
const SMUGGLED = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
const POST_HEAD = 'POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
const GET_HEAD = 'GET /v1/position?legal_moves=false HTTP/1.1\r\nHost: x\r\n';

describe('C. ambiguous or malformed heads are refused with one 400 and the connection closed', () => {
  let server;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.stop(); });

  const cases = [
    ['obs-fold: Content-Length folded onto a continuation line', `${POST_HEAD}Content-Length:\r\n 34\r\n\r\n${SMUGGLED}`],
    ['obs-fold: a continuation line on another header', `${GET_HEAD}X-A: 1\r\n 2\r\n\r\n${SMUGGLED}`],
    ['whitespace before the colon: "Content-Length : 34"', `${POST_HEAD}Content-Length : 34\r\n\r\n${SMUGGLED}`],
    ['"Transfer-Encoding : chunked" with Content-Length: 3', `${POST_HEAD}Transfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\n{}\n${SMUGGLED}`],
    ['Transfer-Encoding: chunked twice', `${POST_HEAD}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n${SMUGGLED}`],
    ['two Host headers', `GET /v1/position?legal_moves=false HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n${SMUGGLED}`],
    ['a NUL byte in a header value', `${GET_HEAD}X-A: a\0b\r\n\r\n${SMUGGLED}`],
    ['a space inside a header name: "Content Length: 3"', `${POST_HEAD}Content Length: 3\r\n\r\n{}\n${SMUGGLED}`],
    ['bare LF line endings', `GET /healthz HTTP/1.1\nHost: x\n\n${SMUGGLED}`],
  ];
  for (const [what, text] of cases) {
    test(`${what}: 400, one answer, then EOF (the bytes after the head are not run)`, async () => {
      const bytes = Buffer.from(text, 'latin1');
      const { raw, timedOut } = await rawExchange(server, [bytes], { timeoutMs: 3000, silenceOk: true });
      const answers = raw ? parseRawResponses(raw) : [];
      const shown = JSON.stringify(raw.slice(0, 600));
      assert.equal(answers.length, 1, `expected exactly one answer, got ${answers.length}: ${shown}`);
      assert.equal(answers[0].status, 400, `expected 400, got ${answers[0].status}: ${shown}`);
      assert.ok(!timedOut, `the connection must be closed after the 400; it is still open 3 s later: ${shown}`);
      const res = answers[0];
      if (/^application\/problem\+json/.test(res.headers['content-type'] ?? '')) {
        const [, method, target] = /^(\S+) (\S+)/.exec(text);
        const body = checkResponse({ method, path: target, status: res.status, headers: res.headers, body: res.text });
        assert.equal(body.code, 'bad_request');
      }
    });
  }

  test('a chunked body over --max-body is answered 413 payload_too_large at once, without the final chunk', async () => {
    const s = net.connect(server.port, '127.0.0.1');
    const chunks = [];
    s.on('data', (d) => chunks.push(d));
    s.on('error', () => {});
    try {
      await new Promise((resolve, reject) => { s.on('connect', resolve); s.on('error', reject); });
      s.write(`${POST_HEAD}Transfer-Encoding: chunked\r\n\r\n`);
      const chunk = `2710\r\n${' '.repeat(10000)}\r\n`; // 0x2710 = 10000 bytes
      for (let i = 0; i < 8; i++) s.write(chunk); // 80000 bytes > 65536, and no 0-chunk
      const sent = performance.now();
      const complete = () => {
        const raw = Buffer.concat(chunks).toString('latin1');
        const split = raw.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: *(\d+)/i.exec(raw);
        return split > 0 && length && raw.length >= split + 4 + Number(length[1]);
      };
      while (!complete() && performance.now() - sent < 2000) await sleep(20);
      const raw = Buffer.concat(chunks).toString('latin1');
      assert.ok(complete(), `no complete answer within 2 s of the chunks (the body is still open); got ${JSON.stringify(raw.slice(0, 200))}`);
      const res = parseRawResponse(raw);
      res.body = checkResponse({ method: 'POST', path: '/v1/position', status: res.status, headers: res.headers, body: res.text });
      expectProblem(res, 413, 'payload_too_large');
    } finally {
      s.destroy();
    }
  });

  test('an absolute-form target is routed by its path: /healthz and /v1/position answer 200', async () => {
    const ask = async (path) => {
      const { raw } = await rawExchange(server, [`GET http://example.com${path} HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n`]);
      const res = parseRawResponse(raw);
      assert.equal(res.status, 200, `GET http://example.com${path}: ${raw.slice(0, 400)}`);
      return checkResponse({ method: 'GET', path, status: res.status, headers: res.headers, body: res.text });
    };
    assert.equal((await ask('/healthz')).status, 'ok');
    const position = await ask('/v1/position?legal_moves=false');
    assert.equal(position.fen, START_FEN);
    assert.equal(position.legal_moves, undefined, 'legal_moves=false from the absolute-form query was honoured');
  });
});

// ---------------------------------------------------------------- D, E, F: the default server

describe('D. the router reads the raw path: an encoded / or NUL never selects a route', () => {
  let server;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.stop(); });

  test('POST /v1/games/<id>%2Fresign (and %2Fresign%00.png) is 400 and does not resign; /healthz%00xyz and /healthz%2F are 400; the log shows the raw path', async () => {
    const created = await post(server, '/v1/games', {});
    assert.equal(created.status, 201, created.text);
    const { id, tokens } = created.body;
    for (const suffix of ['%2Fresign', '%2Fresign%00.png']) {
      const res = await nodeRequest(server, {
        method: 'POST', path: `/v1/games/${id}${suffix}`, agent: false,
        headers: { ...json, authorization: `Bearer ${tokens.white}` }, body: '{"expected_version":1}',
      });
      assert.equal(res.status, 400, `POST /v1/games/<id>${suffix}: ${res.status} ${res.text.slice(0, 300)}`);
      const game = await get(server, `/v1/games/${id}`);
      assert.equal(game.status, 200);
      assert.equal(game.body.status, 'active', `after POST /v1/games/<id>${suffix} the game is ${game.body.status}`);
      assert.equal(game.body.version, 1);
    }
    // openapi.mjs maps a path by decoding it, which is what the server must
    // not do here, so these answers are checked against the Problem schema.
    for (const target of ['/healthz%00xyz', '/healthz%2F']) {
      const { raw } = await rawExchange(server, [`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
      const res = parseRawResponse(raw);
      assert.equal(res.status, 400, `GET ${target}: ${raw.slice(0, 300)}`);
      checkProblemSchema(res, `GET ${target}`);
    }
    for (const path of [`/v1/games/${id}%2Fresign`, `/v1/games/${id}%2Fresign%00.png`, '/healthz%00xyz', '/healthz%2F'])
      await server.waitForLog((l) => l.path === path);
    const decoded = server.logLines().filter((l) => l.path === `/v1/games/${id}/resign` || l.path === '/healthz/');
    assert.deepEqual(decoded, [], 'no access log line may show a decoded path');
  });
});

describe('E. query parameters: unknown names and repeats are refused', () => {
  let server;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.stop(); });

  const refused = [
    ['GET', '/v1/position?legal_move=false', 'unknown_parameter'],
    ['GET', '/v1/position?Legal_moves=false', 'unknown_parameter'],
    ['GET', '/healthz?x=1', 'unknown_parameter'],
    ['GET', '/v1/perft?depth=1&Depth=2', 'unknown_parameter'],
    ['GET', '/v1/perft?depth=1&legal_moves=false', 'unknown_parameter'],
    ['POST', '/v1/position?fen=x', 'unknown_parameter'],
    ['POST', '/v1/position/moves?chess960=false', 'unknown_parameter'],
    ['POST', '/v1/games?legal_moves=false', 'unknown_parameter'],
    ['GET', '/v1/perft?depth=1&depth=2', 'invalid_parameter'],
    ['GET', '/v1/position?legal_moves=false&legal_moves=false', 'invalid_parameter'],
  ];
  for (const [method, path, code] of refused) {
    test(`${method} ${path} -> 400 ${code}`, async () => {
      const body = method === 'POST' ? (path.startsWith('/v1/position/moves') ? { moves: [] } : {}) : undefined;
      const res = method === 'POST' ? await post(server, path, body) : await get(server, path);
      expectProblem(res, 400, code);
    });
  }

  test('a game route takes no parameters: POST /v1/games/<id>/moves?legal_moves=false is 400 unknown_parameter and plays nothing', async () => {
    const created = await post(server, '/v1/games', {});
    const { id, tokens } = created.body;
    const res = await post(server, `/v1/games/${id}/moves?legal_moves=false`, { move: 'e4', expected_version: 1 },
      { headers: { authorization: `Bearer ${tokens.white}` } });
    expectProblem(res, 400, 'unknown_parameter');
    assert.equal((await get(server, `/v1/games/${id}`)).body.version, 1);
  });

  test('guard (kept): every documented parameter is still accepted', async () => {
    const a = await get(server, `/v1/position?fen=${encodeURIComponent(START_FEN)}&chess960=false&legal_moves=false`);
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body.legal_moves, undefined);
    const b = await post(server, '/v1/position?legal_moves=false', {});
    assert.equal(b.status, 200, b.text);
    const c = await post(server, '/v1/position/moves?legal_moves=false', { moves: ['e4'] });
    assert.equal(c.status, 200, c.text);
    const d = await get(server, `/v1/perft?depth=2&fen=${encodeURIComponent(START_FEN)}&chess960=false`);
    assert.equal(d.status, 200, d.text);
    assert.equal(d.body.nodes, 400);
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
    const attempt = (pieces) => new Promise((resolve) => {
      const s = net.connect(server.port, '127.0.0.1');
      const chunks = [];
      let settled = false;
      const done = (outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        s.destroy();
        resolve(outcome);
      };
      const timer = setTimeout(() => done(`no answer and no close within 10 s (${Buffer.concat(chunks).length} bytes)`), 10000);
      s.pause(); // nothing is read until the whole request has been written
      s.on('connect', () => {
        pieces.forEach((piece, i) => s.write(piece, i < pieces.length - 1 ? undefined : (err) => { if (!err) s.resume(); }));
      });
      s.on('data', (d) => chunks.push(d));
      s.on('error', (err) => done(`${err.code ?? err.message} after ${Buffer.concat(chunks).length} answer bytes`));
      s.on('end', () => {
        const raw = Buffer.concat(chunks).toString('latin1');
        try {
          const res = parseRawResponse(raw);
          res.body = checkResponse({ method: 'POST', path: '/v1/position', status: res.status, headers: res.headers, body: res.text });
          done(res.status === 413 && res.body.code === 'payload_too_large' ? 'ok' : `${res.status} ${res.text.slice(0, 100)}`);
        } catch (err) {
          done(`unreadable answer: ${err.message}`);
        }
      });
    });
    const split = [];
    const whole = [];
    for (let i = 0; i < 10; i++) split.push(await attempt([head, body]));
    for (let i = 0; i < 10; i++) whole.push(await attempt([Buffer.concat([head, body])]));
    assert.deepEqual(split, Array(10).fill('ok'), `head, then body: ${split.join('; ')}`);
    assert.deepEqual(whole, Array(10).fill('ok'), `head and body in one write: ${whole.join('; ')}`);
  });
});

// ---------------------------------------------------------------- G. creation rate limit

describe('G. game creation is rate-limited per client address', () => {
  test('--rate-limit-create 2: 10 creations pass (the burst), then 429 rate_limited with Retry-After; 127.0.0.2 and other routes are unaffected', async () => {
    await withServer(['--rate-limit-create', '2'], async (server) => {
      const started = performance.now();
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await post(server, '/v1/games', {}));
      const elapsed = (performance.now() - started) / 1000;
      const statuses = answers.map((r) => r.status);
      assert.deepEqual(statuses.slice(0, 10), Array(10).fill(201), `the first ten are the burst: ${statuses}`);
      const created = statuses.filter((s) => s === 201).length;
      assert.ok(created <= 10 + Math.floor(2 * elapsed), `${created} of 20 created in ${elapsed.toFixed(2)} s at 2/s with a burst of 10: ${statuses}`);
      const limited = answers.filter((r) => r.status !== 201);
      assert.ok(limited.length >= 1, `none refused: ${statuses}`);
      for (const r of limited) {
        expectProblem(r, 429, 'rate_limited');
        assert.ok(Number(r.headers.get('retry-after')) >= 1, `Retry-After: ${r.headers.get('retry-after')}`);
      }
      // Another address has a budget of its own.
      const other = await nodeRequestFrom(server, { method: 'POST', path: '/v1/games', headers: json, body: '{}', agent: false, localAddress: '127.0.0.2' });
      assert.equal(other.status, 201, other.text);
      // The limit is on creation only: the same address reads and plays.
      const game = answers[0].body;
      assert.equal((await get(server, `/v1/games/${game.id}`)).status, 200);
      assert.equal((await get(server, '/v1/position?legal_moves=false')).status, 200);
      assert.equal((await get(server, '/v1/perft?depth=2')).status, 200);
      const moved = await post(server, `/v1/games/${game.id}/moves`, { move: 'e4', expected_version: 1 },
        { headers: { authorization: `Bearer ${game.tokens.white}` } });
      assert.equal(moved.status, 200, moved.text);
    });
  });

  test('the creation limit is on by default: 80 quick creations from one address (10 at a time) meet 429 after the burst of 50', async () => {
    await withServer([], async (server) => {
      const started = performance.now();
      const statuses = [];
      for (let batch = 0; batch < 8; batch++)
        statuses.push(...(await Promise.all(Array.from({ length: 10 }, () => post(server, '/v1/games', {})))).map((r) => r.status));
      const elapsed = (performance.now() - started) / 1000;
      const created = statuses.filter((s) => s === 201).length;
      assert.ok(created >= 50 && created <= 50 + Math.floor(10 * elapsed),
        `${created} of 80 created in ${elapsed.toFixed(2)} s (default 10/s, burst 50): ${statuses}`);
      assert.ok(statuses.includes(429) && statuses.every((s) => s === 201 || s === 429), `${statuses}`);
    }, { defaultLimits: true }); // startServer turns the limit off unless asked to keep the default
  });
});

// ---------------------------------------------------------------- H. start-up secrets

/** Runs `chessd serve args` (expected to exit by itself within 5 s); resolves to { code, signal, stderr, stdout }. */
function runServe(args, env = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env },
    });
    let stderr = '';
    let stdout = '';
    proc.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    proc.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`chessd serve ${args.join(' ')} did not exit within 5 s; stderr: ${stderr}`)); }, 5000);
    proc.on('error', (err) => { clearTimeout(timer); reject(err); });
    proc.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stderr, stdout }); });
  });
}

describe('H. start-up refusals do not print secrets', () => {
  test('guard (kept): a CHESSD_TOKEN_SECRET under 32 bytes exits 2 without printing the secret', async () => {
    const secret = 'tiny-Secret-XYZ42';
    const r = await runServe(['--redis', 'redis://127.0.0.1:1/0'], { CHESSD_TOKEN_SECRET: secret });
    assert.equal(r.code, 2, `exit ${r.code}; stderr: ${r.stderr}`);
    assert.ok(r.stderr.trim().length > 0, 'the refusal says why');
    assert.ok(!r.stderr.includes(secret) && !r.stdout.includes(secret), `the secret is printed: ${r.stderr}`);
  });

  test('guard (kept): a 300-character --redis URL with a password exits 2 without printing the password', async () => {
    const prefix = 'redis://user:hunter2secret@';
    const url = `${prefix}${'h'.repeat(300 - prefix.length - 5)}:6379`;
    assert.equal(url.length, 300);
    const r = await runServe(['--redis', url], { CHESSD_TOKEN_SECRET: 'e2e-attacks-token-secret-0123456789' });
    assert.equal(r.code, 2, `exit ${r.code}; stderr: ${r.stderr}`);
    assert.ok(!r.stderr.includes('hunter2secret') && !r.stdout.includes('hunter2secret'), `the password is printed: ${r.stderr}`);
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
