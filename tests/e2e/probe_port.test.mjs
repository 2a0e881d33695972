// --probe-port: a second listening socket with its own accept thread and a
// one-thread libmicrohttpd daemon, serving the ROUTE_PROBE routes (/healthz,
// /readyz, /metrics) alone and without per-address limits. Probes answer
// there while the main port's per-address connection cap for the probing
// address is full; every other path there is 404 not_found; the probes still
// answer on the main port; and after SIGTERM the probe port goes on
// answering (/readyz 503) while the main port no longer accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { freePort, startServer } from './server.mjs';
import { nodeRequestFrom, sleep, NOEVICTION } from './http.mjs';
import { checkProblemSchema, metricValue, waitFor } from './attacks_lib.mjs';


// One request on a fresh connection from 127.0.0.1 to port, unvalidated:
// { status, headers, text }.
function request(port, method, path, body) {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.setTimeout(3000, () => req.destroy(new Error(`${method} ${path} on port ${port}: no answer within 3 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

// Idle connections from 127.0.0.1 to port, once each is connected.
function idle(port, count) {
  return Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.on('connect', () => resolve(s));
  })));
}

// GET /healthz on a fresh connection from 127.0.0.1 to the main port: the
// status line read ('' when closed without an answer).
function mainHealthz(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    s.setEncoding('latin1');
    s.on('connect', () => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    s.on('data', (d) => { data += d; });
    s.on('close', () => resolve(data.split('\r\n')[0]));
    s.on('error', () => {});
  });
}

test('--probe-port: /healthz, /readyz and /metrics answer there while the main port is full for the probing address; other paths there are 404; SIGTERM leaves it answering /readyz 503', async () => {
  const probePort = await freePort();
  const server = await startServer(['--probe-port', String(probePort), '--per-ip-connections', '4', '--threads', '2']);
  const held = [];
  try {
    assert.match(server.stderr(), new RegExp(`chessd: probes \\(/healthz, /readyz, /metrics\\) on 127\\.0\\.0\\.1 port ${probePort}\\b`));
    // 127.0.0.1 takes every connection it may have on the main port.
    held.push(...await idle(server.port, 4));
    await waitFor(async () => /chessd_accepted_connections\{listener="main"\} 4\n/.test((await request(probePort, 'GET', '/metrics')).text),
      3000, 'the four idle connections to be counted on the main port');
    assert.equal(await mainHealthz(server.port), '', 'a fifth connection from 127.0.0.1 on the main port must be closed unserved');

    // The probe port serves the same address all the same.
    const health = await request(probePort, 'GET', '/healthz');
    assert.equal(health.status, 200);
    const ready = await request(probePort, 'GET', '/readyz');
    assert.equal(ready.status, 200, ready.text);
    assert.deepEqual(JSON.parse(ready.text), { status: 'ready', redis: 'up', redis_memory: NOEVICTION, engine: { state: 'off' } });
    assert.ok(ready.headers['x-request-id'], 'a probe answer carries X-Request-Id like any other');
    const metrics = await request(probePort, 'GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /chessd_accepted_connections\{listener="probe"\} 1\n/);
    assert.ok(metricValue(metrics.text, 'chessd_address_full_closes_total') >= 1, metrics.text);
    assert.equal((await request(probePort, 'HEAD', '/healthz')).status, 200);

    // Only the probe routes are there: another route is 404, not 405 or its answer.
    for (const [method, path, body] of [['GET', '/version'], ['GET', '/openapi.yaml'], ['POST', '/v1/position', '{}'],
      ['GET', '/v1/perft?depth=1'], ['GET', '/no/such/path']]) {
      const res = await request(probePort, method, path, body);
      assert.equal(res.status, 404, `${method} ${path} on the probe port: ${res.status} ${res.text}`);
      checkProblemSchema(res, `${method} ${path} on the probe port`);
      assert.equal(JSON.parse(res.text).code, 'not_found');
    }
    // A probe route asked with another method is 405 there, as on the main port.
    const post = await request(probePort, 'POST', '/healthz', '{}');
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');

    // The main port still serves probes (and everything) to other addresses.
    const other = await nodeRequestFrom(server, { path: '/healthz', agent: false, localAddress: '127.0.0.2' });
    assert.equal(other.status, 200);
    assert.equal((await nodeRequestFrom(server, { path: '/version', agent: false, localAddress: '127.0.0.2' })).status, 200);

    // SIGTERM: the main port stops accepting; the probe port says "not ready"
    // until the process exits (the idle connections keep the drain going).
    server.proc.kill('SIGTERM');
    let draining = null;
    for (let i = 0; i < 100 && !draining; i++) {
      const res = await request(probePort, 'GET', '/readyz');
      if (res.status === 503) draining = res;
      else await sleep(20);
    }
    assert.ok(draining, 'the probe port never answered /readyz 503 after SIGTERM');
    checkProblemSchema(draining, '/readyz while draining');
    assert.equal((await request(probePort, 'GET', '/healthz')).status, 200);
    const refused = await new Promise((resolve) => {
      const s = net.connect(server.port, '127.0.0.1');
      s.on('connect', () => { s.destroy(); resolve('connected'); });
      s.on('error', (err) => resolve(err.code));
    });
    assert.equal(refused, 'ECONNREFUSED', 'the main port must no longer accept while draining');
  } finally {
    for (const s of held) s.destroy();
    await server.stop();
  }
});

test('--probe-port equal to --port is refused at start', async () => {
  const port = await freePort();
  await assert.rejects(startServer(['--port', String(port), '--probe-port', String(port)], { withRedis: false }),
    /cannot listen on 127\.0\.0\.1 port \d+ \(--probe-port\): Address already in use/);
});
