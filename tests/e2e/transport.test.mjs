// HTTP behaviour around the handlers: X-Request-Id echoed or generated, the
// JSON access log on stdout, keep-alive reusing one socket, 64 concurrent
// clients all answered correctly, a body that arrives in pieces with pauses,
// pipelined requests, and the --timeout and --per-ip-connections limits.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startServer } from './server.mjs';
import { get, post, call, nodeRequest, rawRequest, rawExchange, parseRawResponses, head, sleep, START_FEN } from './http.mjs';
import { checkResponse } from './openapi.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

test('X-Request-Id is echoed when the client sends a plain one (up to 64 characters)', async () => {
  for (const id of ['abc-123', 'trace_1.2:3', 'A'.repeat(64)]) {
    const res = await get(server, '/healthz', { headers: { 'x-request-id': id } });
    assert.equal(res.headers.get('x-request-id'), id);
  }
  const problem = await get(server, '/nope', { headers: { 'x-request-id': 'err-1' } });
  assert.equal(problem.status, 404);
  assert.equal(problem.headers.get('x-request-id'), 'err-1');
});

test('X-Request-Id is generated (32 hex digits, unique) when absent or not plain', async () => {
  const seen = new Set();
  for (const given of [undefined, '', 'has space', 'semi;colon', 'A'.repeat(65), 'ünïcode']) {
    const headers = given === undefined ? {} : { 'x-request-id': given };
    const res = await nodeRequest(server, { path: '/healthz', headers });
    const id = res.headers['x-request-id'];
    assert.match(id, /^[0-9a-f]{32}$/, `given ${JSON.stringify(given)}`);
    assert.ok(!seen.has(id), 'generated ids must not repeat');
    seen.add(id);
  }
});

test('each request is logged as one JSON line on stdout with its id and status', async () => {
  const id = `log-check-${process.pid}`;
  await get(server, '/v1/perft?depth=1', { headers: { 'x-request-id': id } });
  await post(server, '/v1/position/moves', { moves: ['e4', 'e4'] }, { headers: { 'x-request-id': `${id}-bad` } });
  // The line is written when the request completes, just after the answer: poll briefly.
  let lines = [];
  for (let i = 0; i < 50 && !lines.some((l) => l.request_id === `${id}-bad`); i++) {
    await sleep(20);
    lines = server.logLines();
  }
  const ok = lines.find((l) => l.request_id === id);
  assert.ok(ok, 'log line for the perft request');
  assert.equal(ok.method, 'GET');
  assert.equal(ok.path, '/v1/perft');
  assert.equal(ok.status, 200);
  assert.equal(typeof ok.us, 'number');
  assert.equal(typeof ok.ts, 'number');
  assert.equal(lines.find((l) => l.request_id === `${id}-bad`)?.status, 422);
});

test('keep-alive: several requests travel on one reused socket', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const ports = [];
    const paths = ['/healthz', '/v1/position?legal_moves=false', '/v1/perft?depth=2', '/nope', '/readyz'];
    for (const path of paths) {
      const res = await nodeRequest(server, { path, agent });
      assert.ok(res.status === 200 || (path === '/nope' && res.status === 404));
      ports.push(res.socket.localPort);
    }
    const post1 = await nodeRequest(server, {
      method: 'POST', path: '/v1/position/moves', agent,
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ moves: ['d4', 'd5'] }),
    });
    assert.equal(post1.status, 200);
    ports.push(post1.socket.localPort);
    assert.equal(new Set(ports).size, 1, `expected one socket, saw local ports ${ports}`);
  } finally {
    agent.destroy();
  }
});

test('keep-alive survives error answers (400, 405, 415, 422) on the same socket', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const ports = new Set();
    const json = { 'content-type': 'application/json' };
    const requests = [
      { method: 'POST', path: '/v1/position', headers: json, body: '{bad' },
      { method: 'DELETE', path: '/v1/position' },
      { method: 'POST', path: '/v1/position', headers: { 'content-type': 'text/plain' }, body: '{}' },
      { method: 'POST', path: '/v1/position/moves', headers: json, body: '{"moves":["Ke2"]}' },
      { method: 'GET', path: '/healthz' },
    ];
    const statuses = [];
    for (const r of requests) {
      const res = await nodeRequest(server, { ...r, agent });
      statuses.push(res.status);
      ports.add(res.socket.localPort);
    }
    assert.deepEqual(statuses, [400, 405, 415, 422, 200]);
    assert.equal(ports.size, 1);
  } finally {
    agent.destroy();
  }
});

test('64 concurrent clients each get their own correct answer', async () => {
  const openings = [['e4'], ['d4'], ['c4'], ['Nf3'], ['e4', 'c5'], ['d4', 'Nf6'], ['e4', 'e5', 'Nf3'], ['g3']];
  const jobs = Array.from({ length: 64 }, (_, i) => {
    const id = `par-${i}`;
    const headers = { 'x-request-id': id };
    let p;
    switch (i % 4) {
      case 0: p = post(server, '/v1/position/moves', { moves: openings[i % openings.length] }, { headers }); break;
      case 1: p = get(server, `/v1/perft?depth=${1 + (i % 3)}`, { headers }); break;
      case 2: p = get(server, '/v1/position', { headers }); break;
      default: p = post(server, '/v1/position/moves', { moves: ['e4', 'e5', 'Qh5', 'Ke7', 'Qxe5#'] }, { headers });
    }
    return p.then((res) => ({ i, id, res }));
  });
  const results = await Promise.all(jobs);
  for (const { i, id, res } of results) {
    assert.equal(res.status, 200, `request ${i}`);
    assert.equal(res.headers.get('x-request-id'), id);
    switch (i % 4) {
      case 0: assert.deepEqual(res.body.moves.map((m) => m.san), openings[i % openings.length]); break;
      case 1: assert.equal(res.body.nodes, [20, 400, 8902][i % 3]); break;
      case 2: assert.equal(res.body.fen, START_FEN); break;
      default: assert.equal(res.body.position.result, '1-0');
    }
  }
});

test('64 clients on 64 separate sockets at once (node:http, no pooling)', async () => {
  const results = await Promise.all(Array.from({ length: 64 }, (_, i) => nodeRequest(server, {
    method: 'POST', path: '/v1/position/moves', agent: false,
    headers: { 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ moves: Array(i % 4).fill(['Nf3', 'Nf6', 'Ng1', 'Ng8']).flat() }),
  })));
  results.forEach((res, i) => {
    assert.equal(res.status, 200);
    assert.equal(res.body.position.repetitions, 1 + (i % 4));
  });
});

test('a body sent in three pieces with pauses is read whole', async () => {
  const body = JSON.stringify({ fen: START_FEN, moves: ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5'] });
  const cut = [0, 17, 40, body.length];
  const pieces = [head('POST', '/v1/position/moves', {
    'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close',
  })];
  for (let i = 0; i < 3; i++) pieces.push(body.slice(cut[i], cut[i + 1]));
  const res = await rawRequest(server, 'POST', '/v1/position/moves', pieces, { pauseMs: 120 });
  assert.equal(res.status, 200);
  assert.equal(res.body.moves[4].san, 'Bb5');
  assert.equal(res.piecesSentBeforeAnswer, 4, 'the answer must wait for the whole body');
});

test('headers split mid-line and a body trickled byte by byte are read correctly', async () => {
  const body = '{"moves":["e4"]}';
  const headers = head('POST', '/v1/position/moves', { 'Content-Type': 'application/json', 'Content-Length': String(body.length), Connection: 'close' });
  const pieces = [headers.slice(0, 10), headers.slice(10, 30), headers.slice(30), ...body.split('')];
  const res = await rawRequest(server, 'POST', '/v1/position/moves', pieces, { pauseMs: 5 });
  assert.equal(res.status, 200);
  assert.equal(res.body.moves[0].uci, 'e2e4');
});

test('pipelined requests on one connection are answered in order', async () => {
  const req1 = head('GET', '/v1/perft?depth=2', {});
  const req2 = head('GET', '/nope', {});
  const req3 = head('GET', '/healthz', { Connection: 'close' });
  const { raw } = await rawExchange(server, [req1 + req2 + req3]);
  const responses = parseRawResponses(raw);
  assert.deepEqual(responses.map((r) => r.status), [200, 404, 200]);
  const paths = ['/v1/perft?depth=2', '/nope', '/healthz'];
  responses.forEach((res, i) => checkResponse({ method: 'GET', path: paths[i], status: res.status, headers: res.headers, body: res.text }));
  assert.equal(JSON.parse(responses[0].text).nodes, 400);
});

test('--timeout closes idle connections; --per-ip-connections refuses extra ones', async () => {
  const limited = await startServer(['--timeout', '1', '--per-ip-connections', '2']);
  try {
    const open = () => new Promise((resolve) => {
      const s = net.connect(limited.port, '127.0.0.1');
      const started = Date.now();
      s.closedAfter = new Promise((r) => s.on('close', () => r(Date.now() - started)));
      s.on('error', () => {});
      s.resume(); // drain answers, or 'close' never comes
      s.on('connect', () => resolve(s));
    });
    const a = await open();
    const b = await open();
    const c = await open();
    const cClosed = await Promise.race([c.closedAfter, sleep(800).then(() => null)]);
    assert.notEqual(cClosed, null, 'a third connection from one IP must be closed unserved (after waiting half a second for a place)');
    // b is used, then idles; a idles from the start: both go after about a second.
    b.write(head('GET', '/healthz', {}));
    const [aClosed, bClosed] = await Promise.all([a.closedAfter, b.closedAfter]);
    assert.ok(aClosed >= 900 && aClosed < 3000, `idle connection closed after ${aClosed} ms`);
    assert.ok(bClosed >= 900 && bClosed < 3000, `idle connection closed after ${bClosed} ms`);
    assert.equal((await get(limited, '/healthz')).status, 200);
  } finally {
    await limited.stop();
  }
});
