// Connection accounting at the accept thread (api/http/acceptor.c): chessd counts
// a connection from its accept until its descriptor is really closed, per
// client address as well as in all, and libmicrohttpd has no limit of its own
// that could refuse one chessd admitted. Right after a burst of connections
// from one address closes at once, that address's next connection is still
// served: an over-cap body written in full before reading gets its 413, not
// a reset, every time (libmicrohttpd's own per-address count, still holding
// the burst's connections for a moment, used to close it unserved). A
// connection from an address at its cap waits a moment for a place rather
// than being closed at once; one from an address that keeps its cap full is
// closed unserved after that moment, and counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer } from './server.mjs';
import { get, nodeRequestFrom, sleep } from './http.mjs';
import { metricValue, overCapPost, waitFor } from './attacks_lib.mjs';

const BODY = Buffer.alloc(2 * 1024 * 1024, 0x20);
const HEAD = Buffer.from('POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
  + `Content-Length: ${BODY.length}\r\n\r\n`);

// Opens `count` connections from 127.0.0.1, each sending the start of a
// request head (a slowloris client), and resolves to the sockets once each
// has connected or ended.
async function slowloris(port, count) {
  const sockets = [];
  await Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    sockets.push(s);
    s.on('error', resolve);
    s.on('close', resolve);
    s.on('connect', () => {
      s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      resolve();
    });
  })));
  return sockets;
}

const metrics = async (server) => (await get(server, '/metrics')).text;

for (const [burst, perAddress] of [[1500, 2000], [1500, 256]]) {
  test(`--per-ip-connections ${perAddress}: after ${burst} connections from one address close at once, its next over-cap body gets 413, 10 of 10 times`, async () => {
    const server = await startServer(['--max-connections', '4096', '--per-ip-connections', String(perAddress),
      '--threads', '4'], { withRedis: false });
    try {
      const outcomes = [];
      for (let round = 0; round < 10; round++) {
        const sockets = await slowloris(server.port, burst);
        for (const s of sockets) s.destroy();
        // 30 s, not 10: on a loaded machine the kernel may hold a new
        // connection a few seconds while the burst is still being accepted,
        // and TCP's backoff then stretches that wait (a hang still fails).
        outcomes.push(await overCapPost(server.port, [HEAD, BODY], 30000));
      }
      assert.deepEqual(outcomes, Array(10).fill('ok'), outcomes.join('; '));
      // Every descriptor is given back: the count falls to what is open now
      // (15,000 closes take libmicrohttpd's threads a second or two on a busy
      // machine; a count that leaks never falls back at all).
      await waitFor(async () => metricValue(await metrics(server), 'chessd_accepted_connections') <= 1, 20000,
        'chessd_accepted_connections to fall back to the scrape alone');
    } finally {
      await server.stop();
    }
  });
}

// One connection from 127.0.0.1 that sends GET /healthz (Connection: close)
// at once and resolves to { line, ms }: the status line it read ('' when it
// was closed without an answer) and when.
function healthz(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const started = performance.now();
    let data = '';
    const done = () => resolve({ line: data.split('\r\n')[0], ms: performance.now() - started });
    s.setEncoding('latin1');
    s.on('connect', () => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    s.on('data', (d) => { data += d; });
    s.on('close', done);
    s.on('error', () => {});
  });
}

// Idle connections from 127.0.0.1, once each is connected.
async function idle(port, count) {
  return Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.on('connect', () => resolve(s));
  })));
}

test('--per-ip-connections 2: a third connection waits for a place, is served when one frees, and is closed unserved and counted when none does, while other addresses are served', async () => {
  const server = await startServer(['--per-ip-connections', '2'], { withRedis: false });
  // Scrapes come from another address, which the full one never blocks.
  const scrape = async () => (await nodeRequestFrom(server, { path: '/metrics', agent: false, localAddress: '127.0.0.2' })).text;
  const held = await idle(server.port, 2);
  try {
    await waitFor(async () => metricValue(await scrape(), 'chessd_accepted_connections') === 3, 3000,
      'the two idle connections (and the scrape) to be counted');
    // A place frees while the third waits: it is served.
    const third = healthz(server.port);
    await waitFor(async () => metricValue(await scrape(), 'chessd_connections_waiting') === 1, 1000,
      'the third connection to wait');
    held.pop().destroy();
    const served = await third;
    assert.equal(served.line, 'HTTP/1.1 200 OK', `the waiting connection got ${JSON.stringify(served)}`);
    // The place is taken again; nothing frees: the next is closed unserved after a moment.
    held.push(...await idle(server.port, 1));
    await waitFor(async () => metricValue(await scrape(), 'chessd_accepted_connections') === 3, 3000,
      'the new idle connection to be counted');
    const refused = await healthz(server.port);
    assert.equal(refused.line, '', `an over-share connection was answered: ${JSON.stringify(refused)}`);
    assert.ok(refused.ms >= 300 && refused.ms < 3000, `closed after ${refused.ms.toFixed(0)} ms (it waits about 500 ms)`);
    const text = await scrape();
    assert.equal(metricValue(text, 'chessd_address_full_closes_total'), 1);
    assert.equal(metricValue(text, 'chessd_connections_waiting'), 0);
  } finally {
    for (const s of held) s.destroy();
    await server.stop();
  }
});
