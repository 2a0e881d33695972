// Attacks through the HTTP request itself: request smuggling through lenient
// header parsing (C), an encoded '/' or NUL steering the router (D), unknown
// or repeated query parameters (E), mass game creation from one address (G),
// and secrets echoed at start-up (H). Answers that come through http.mjs are
// checked against openapi.yaml.
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
  withServer, waitFor, cpuSeconds, openFds, settledFds, metricValue, checkProblemSchema, runServe, POSITION_4, perftPath, json,
} from './attacks_lib.mjs';

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

  // server.c checks each request's framing again behind the strict reader
  // (wire.c); the reader refuses all of it first, so the backstop cannot fire
  // while the reader works: a count above 0 means the reader was bypassed.
  test('the framing backstop behind the strict reader never fires: chessd_http_framing_backstop_total is 0 after refused and ordinary traffic', async () => {
    const metrics = async () => (await get(server, '/metrics')).text;
    const before = await metrics();
    assert.equal(metricValue(before, 'chessd_http_framing_backstop_total'), 0, 'the heads refused above got past the reader');
    const framing = [
      `${POST_HEAD}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
      `${POST_HEAD}Content-Length: 2\r\nContent-Length: 02\r\n\r\n{}`,
      `${POST_HEAD}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      `${POST_HEAD}Transfer-Encoding: chunked \r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      `${POST_HEAD}Transfer-Encoding: gzip\r\n\r\n`,
    ];
    for (const text of framing) {
      const { raw } = await rawExchange(server, [Buffer.from(text, 'latin1')], { timeoutMs: 3000, silenceOk: true });
      assert.equal(parseRawResponse(raw).status, 400, `${JSON.stringify(text)}: ${JSON.stringify(raw.slice(0, 300))}`);
    }
    assert.equal((await get(server, '/healthz')).status, 200);
    assert.equal((await post(server, '/v1/position', { fen: START_FEN })).status, 200);
    const chunked = await rawExchange(server, [`${POST_HEAD}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`]);
    assert.equal(parseRawResponse(chunked.raw).status, 200, chunked.raw.slice(0, 300));
    const after = await metrics();
    assert.equal(metricValue(after, 'chessd_http_framing_backstop_total'), 0, 'a request got past the strict reader to the framing backstop');
    assert.ok(metricValue(after, 'chessd_http_refused_total') >= metricValue(before, 'chessd_http_refused_total') + framing.length,
      'the strict reader did not count its refusals');
  });
});

// ---------------------------------------------------------------- D, E: the default server

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
    ['POST', '/v1/games?chess960=true', 'unknown_parameter'],
    ['POST', '/v1/games?legal_moves=false&Legal_moves=false', 'unknown_parameter'],
    ['POST', '/v1/games?legal_moves=false&legal_moves=true', 'invalid_parameter'],
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

  test('a game change takes legal_moves only: POST /v1/games/<id>/moves?expected_version=1 is 400 unknown_parameter and plays nothing; the PGN takes none', async () => {
    const created = await post(server, '/v1/games', {});
    const { id, tokens } = created.body;
    const headers = { authorization: `Bearer ${tokens.white}` };
    for (const [query, code] of [['expected_version=1', 'unknown_parameter'], ['move=e4', 'unknown_parameter'],
      ['legal_moves=false&token=x', 'unknown_parameter'], ['legal_moves=false&legal_moves=false', 'invalid_parameter'],
      ['legal_moves=maybe', 'invalid_parameter']]) {
      const res = await post(server, `/v1/games/${id}/moves?${query}`, { move: 'e4', expected_version: 1 }, { headers });
      expectProblem(res, 400, code);
    }
    expectProblem(await post(server, `/v1/games/${id}/resign?reason=x`, { expected_version: 1 }, { headers }), 400, 'unknown_parameter');
    expectProblem(await get(server, `/v1/games/${id}?fen=x`), 400, 'unknown_parameter');
    expectProblem(await get(server, `/v1/games/${id}/pgn?legal_moves=false`), 400, 'unknown_parameter');
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
    // legal_moves on the game routes (openapi.yaml: create, read, and every change).
    const e = await post(server, '/v1/games?legal_moves=false', {});
    assert.equal(e.status, 201, e.text);
    assert.equal(e.body.position.legal_moves, undefined);
    const f = await get(server, `/v1/games/${e.body.id}?legal_moves=false`);
    assert.equal(f.status, 200, f.text);
    assert.equal(f.body.position.legal_moves, undefined);
    const g = await post(server, `/v1/games/${e.body.id}/moves?legal_moves=false`, { move: 'e4', expected_version: 1 },
      { headers: { authorization: `Bearer ${e.body.tokens.white}` } });
    assert.equal(g.status, 200, g.text);
    assert.equal(g.body.position.legal_moves, undefined);
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
