// Game event streams and long polls against a real chessd and redis-server.
// The changes are published here by hand, in the form a game's write
// publishes them (events.mjs publishEvent), and a game's stored version is
// moved without publishing (HSET) where a test needs a stream to have missed
// something. Pins down: the first event is the game (a snapshot), unless
// Last-Event-ID names its version; published changes reach NDJSON and SSE
// streams in order, framed as documented; a gap brings a snapshot; an ending
// event ends the stream; unknown games are 404; the stream bounds answer 503
// too_many_streams with Retry-After; HEAD answers GET's head and holds
// nothing; heartbeats come every --heartbeat
// seconds and keep a stream alive past --timeout; a client that leaves is
// forgotten; SIGTERM sends the closing event; a Redis restart does not cut a
// stream; a client that stops reading is cut off; long polls wake on a
// change, answer 304 on time-out and cap the wait at 60 s; a silent game is
// read again after --resync-seconds, which sends the game to a stream that
// missed a change, and never turns a change the streams are about to get (a
// flag the re-read itself found fallen) into a snapshot.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startServer, startRedis, privateRedis, redisCommands } from './server.mjs';
import { nodeRequest, expectProblem, sleep, rawExchange, parseRawResponse, head as requestHead } from './http.mjs';
import {
  openEvents, publishEvent, subscribed, unsubscribed, redisPort, redisCommandFor, streamsOpen, streamsOpenBecomes, metric,
  quietFlagFall, expectTimeoutChange, changeEvent,
} from './events.mjs';

let server; // --heartbeat 1
let port; // its Redis

before(async () => {
  server = await startServer(['--heartbeat', '1']);
  port = redisPort(await privateRedis());
});

after(async () => {
  await server.stop();
});

async function newGame(target = server) {
  const res = await fetch(`${target.base}/v1/games`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 201);
  return res.json();
}

/** Moves the stored version of game id to `version` without publishing anything. */
async function setVersion(id, version, redis = port) {
  const reply = await redisCommandFor(redis, `chessd:game:{${id}}`, ['HSET', `chessd:game:{${id}}`, 'version', String(version)]);
  assert.ok(!(reply instanceof Error), String(reply));
}

const changes = (stream) => stream.events.filter((e) => e.data.type === 'change').map((e) => e.data.version);

for (const sse of [false, true]) {
  const kind = sse ? 'SSE' : 'NDJSON';

  test(`${kind}: the first event is the game, then each published change in order`, async () => {
    const game = await newGame();
    const stream = await openEvents(server, game.id, { sse });
    try {
      const first = await stream.next();
      assert.equal(first.data.type, 'game');
      assert.equal(first.data.id, game.id);
      assert.equal(first.data.version, 1);
      assert.deepEqual(first.data.moves, []);
      assert.equal(first.data.position.legal_moves, undefined, 'a snapshot carries no legal moves');
      assert.equal(first.data.tokens, undefined, 'a snapshot carries no tokens');
      if (sse) assert.deepEqual([first.id, first.event], ['1', 'game']);
      await subscribed(port, game.id);
      for (const version of [2, 3, 4]) assert.equal(await publishEvent(port, game.id, { version }), 1);
      for (const version of [2, 3, 4]) {
        const e = await stream.next();
        assert.deepEqual([e.data.type, e.data.version], ['change', version]);
        if (sse) assert.deepEqual([e.id, e.event], [String(version), 'change']);
      }
      // A message for a version the stream has is not sent again.
      await publishEvent(port, game.id, { version: 3 });
      await publishEvent(port, game.id, { version: 5 });
      assert.equal((await stream.next()).data.version, 5);
    } finally {
      stream.close();
    }
  });

  test(`${kind}: heartbeats come every --heartbeat seconds`, async () => {
    const game = await newGame();
    const stream = await openEvents(server, game.id, { sse });
    try {
      await stream.next();
      const started = Date.now();
      await stream.until((s) => s.heartbeats >= 2, 3500, 'two heartbeats');
      assert.ok(Date.now() - started >= 900, 'heartbeats come no faster than one a second');
      assert.equal(stream.events.length, 1, 'a heartbeat is not an event');
    } finally {
      stream.close();
    }
  });

  test(`${kind}: an event that ends the game is the last; a finished game is sent, then the stream ends`, async () => {
    const game = await newGame();
    const stream = await openEvents(server, game.id, { sse });
    await stream.next();
    await subscribed(port, game.id);
    await publishEvent(port, game.id, { version: 2, ended: true });
    const last = await stream.next();
    assert.deepEqual([last.data.type, last.data.version], ['change', 2]);
    await stream.done;
    assert.equal(stream.events.length, 2);

    const over = await newGame();
    const resigned = await fetch(`${server.base}/v1/games/${over.id}/resign`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${over.tokens.white}` },
      body: JSON.stringify({ expected_version: 1 }),
    });
    assert.equal(resigned.status, 200);
    const finished = await openEvents(server, over.id, { sse });
    await finished.done;
    assert.equal(finished.events.length, 1);
    assert.deepEqual([finished.events[0].data.type, finished.events[0].data.status, finished.events[0].data.version],
      ['game', 'resigned', 2]);
    // Everything was had: 204, so an EventSource stops reconnecting.
    const had = await openEvents(server, over.id, { sse, headers: { 'last-event-id': '2' } });
    assert.equal(had.status, 204);
  });
}

test('Last-Event-ID equal to the version: only what follows; garbage, future or older: the game', async () => {
  const game = await newGame();
  const current = await openEvents(server, game.id, { sse: true, headers: { 'last-event-id': '1' } });
  try {
    await subscribed(port, game.id);
    await publishEvent(port, game.id, { version: 2 });
    const e = await current.next();
    assert.deepEqual([e.data.type, e.data.version], ['change', 2]);
    assert.equal(current.events.length, 1, 'no snapshot before it');
  } finally {
    current.close();
  }
  await setVersion(game.id, 2);
  for (const id of ['garbage', '-1', '+2', '2 2', '2x', '0', '99', '18446744073709551617', '1', '', '00000000000000000000002']) {
    for (const sse of [false, true]) {
      const stream = await openEvents(server, game.id, { sse, headers: { 'last-event-id': id } });
      try {
        const first = await stream.next();
        assert.deepEqual([first.data.type, first.data.version], ['game', 2], `Last-Event-ID ${JSON.stringify(id)}`);
      } finally {
        stream.close();
      }
    }
  }
  // Read on NDJSON too.
  const ndjson = await openEvents(server, game.id, { headers: { 'last-event-id': '2' } });
  try {
    await publishEvent(port, game.id, { version: 3 });
    const e = await ndjson.next();
    assert.deepEqual([e.data.type, e.data.version], ['change', 3]);
  } finally {
    ndjson.close();
  }
});

test('a stream that missed a version gets the game again instead of the change after the gap', async () => {
  const game = await newGame();
  const stream = await openEvents(server, game.id);
  try {
    assert.equal((await stream.next()).data.version, 1);
    await subscribed(port, game.id);
    await setVersion(game.id, 3); // versions 2 and 3 made without their messages reaching us
    await publishEvent(port, game.id, { version: 3 });
    const e = await stream.next();
    assert.deepEqual([e.data.type, e.data.version], ['game', 3]);
    await publishEvent(port, game.id, { version: 4 });
    assert.deepEqual(changes(stream).concat((await stream.next()).data.version), [4]);
  } finally {
    stream.close();
  }
});

test('unknown games are 404 game_not_found, not a stream', async () => {
  for (const id of ['AAAAAAAAAAAAAAAA', 'not-an-id']) {
    for (const sse of [false, true]) {
      const res = await openEvents(server, id, { sse });
      expectProblem(res, 404, 'game_not_found');
    }
  }
  assert.equal((await fetch(`${server.base}/v1/games/AAAAAAAAAAAAAAAA/events`, { method: 'POST' })).status, 405);
  const head = await fetch(`${server.base}/v1/games/${(await newGame()).id}/events`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-type'), 'application/x-ndjson');
});

test('a client that leaves is forgotten: streams_open back where it was, the game unsubscribed', async () => {
  const game = await newGame();
  await streamsOpenBecomes(server, 0); // the earlier tests' streams are gone too
  const before = await streamsOpen(server);
  const streams = await Promise.all([0, 1, 2].map((i) => openEvents(server, game.id, { sse: i === 1 })));
  await Promise.all(streams.map((s) => s.next()));
  assert.equal(await streamsOpen(server), before + 3);
  await subscribed(port, game.id);
  for (const s of streams) s.close();
  await streamsOpenBecomes(server, before, 4000); // found at the next heartbeat at the latest
  await unsubscribed(port, game.id);
});

test('many games at once: each stream gets its own game\'s changes', async () => {
  const games = await Promise.all(Array.from({ length: 40 }, () => newGame()));
  const streams = await Promise.all(games.map((g, i) => openEvents(server, g.id, { sse: i % 2 === 0 })));
  try {
    await Promise.all(streams.map((s) => s.next()));
    await Promise.all(games.map((g) => subscribed(port, g.id)));
    await Promise.all(games.map((g) => publishEvent(port, g.id, { version: 2 })));
    await Promise.all(games.map((g, i) => (i % 3 === 0 ? publishEvent(port, g.id, { version: 3 }) : null)));
    for (const [i, s] of streams.entries()) {
      assert.equal((await s.next()).data.version, 2);
      if (i % 3 === 0) assert.equal((await s.next()).data.version, 3);
      assert.ok(s.events.every((e) => e.data.id === games[i].id), 'another game\'s event');
    }
  } finally {
    for (const s of streams) s.close();
  }
});

test('the stream bounds: --max-streams and --max-streams-per-address answer 503 too_many_streams with Retry-After', async () => {
  const limited = await startServer(['--max-streams', '3', '--max-streams-per-address', '2', '--heartbeat', '1']);
  try {
    const game = await newGame(limited);
    const a = await openEvents(limited, game.id);
    const b = await openEvents(limited, game.id, { sse: true });
    const refused = await openEvents(limited, game.id);
    const problem = expectProblem(refused, 503, 'too_many_streams');
    assert.match(problem.detail, /event streams/);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    // A long poll counts too: over the bound it is answered at once, without waiting.
    const started = Date.now();
    const poll = await nodeRequest(limited, { path: `/v1/games/${game.id}`, headers: { 'if-none-match': '"1"', prefer: 'wait=5' } });
    assert.equal(poll.status, 304);
    assert.equal(poll.headers['preference-applied'], undefined);
    assert.ok(Date.now() - started < 1000);
    // Another address (127.0.0.2 is loopback too) has its own budget, under the total.
    const fromAddress = (localAddress) => new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: limited.port, path: `/v1/games/${game.id}/events`, localAddress, agent: false }, resolve);
      req.on('error', reject);
      req.end();
    });
    const other = await fromAddress('127.0.0.2');
    assert.equal(other.statusCode, 200);
    const third = await fromAddress('127.0.0.3'); // the total is reached
    assert.equal(third.statusCode, 503);
    third.resume();
    other.destroy();
    a.close();
    await streamsOpenBecomes(limited, 1);
    const again = await openEvents(limited, game.id);
    assert.equal(again.status, 200);
    again.close();
    b.close();
  } finally {
    await limited.stop();
  }
});

test('a stream outlives --timeout: suspended, it is never idle; heartbeats keep it going', async () => {
  const strict = await startServer(['--timeout', '1', '--heartbeat', '2']);
  try {
    const game = await newGame(strict);
    const stream = await openEvents(strict, game.id);
    await stream.next();
    await sleep(3500);
    assert.equal(stream.ended, false, 'the stream was cut');
    assert.ok(stream.heartbeats >= 1);
    stream.close();
  } finally {
    await strict.stop();
  }
});

test('SIGTERM: every stream gets the closing event and ends; a long poll is answered; exit 0', async () => {
  const draining = await startServer(['--heartbeat', '5']);
  const game = await newGame(draining);
  const ndjson = await openEvents(draining, game.id);
  const sse = await openEvents(draining, game.id, { sse: true });
  await Promise.all([ndjson.next(), sse.next()]);
  const poll = nodeRequest(draining, { path: `/v1/games/${game.id}`, headers: { 'if-none-match': '"1"', prefer: 'wait=30' } });
  await sleep(200);
  const signalled = Date.now();
  draining.proc.kill('SIGTERM');
  for (const s of [ndjson, sse]) {
    const e = await s.next(3000);
    assert.deepEqual(e.data, { type: 'closing', reason: 'shutdown' });
    await s.done;
  }
  const answered = await poll;
  assert.equal(answered.status, 304);
  assert.ok(Date.now() - signalled < 3000, 'the long poll was answered at the drain');
  assert.deepEqual(await draining.exited, { code: 0, signal: null });
  await draining.stop();
});

test('Redis restarted: the stream stays open, resubscribes and goes on with later versions', async () => {
  const redis = await startRedis({ persistent: true });
  const replica = await startServer(['--redis', redis.url, '--heartbeat', '1'], { env: { CHESSD_TOKEN_SECRET: 'e2e-events-token-secret-0123456789abcdef' } });
  try {
    const game = await newGame(replica);
    const stream = await openEvents(replica, game.id, { sse: true });
    await stream.next();
    await subscribed(redis.port, game.id);
    const reconnects = await metric(replica, 'chessd_pubsub_reconnects_total');
    await redis.stop();
    await sleep(300);
    await redis.start();
    await subscribed(redis.port, game.id, { timeoutMs: 5000 });
    assert.ok(await metric(replica, 'chessd_pubsub_reconnects_total') > reconnects);
    await publishEvent(redis.port, game.id, { version: 2 });
    const e = await stream.next();
    assert.deepEqual([e.data.type, e.data.version], ['change', 2]);
    // Moved while the stream could not hear it: the game again.
    await redis.stop();
    await redis.start();
    await setVersion(game.id, 4, redis.port);
    await subscribed(redis.port, game.id, { timeoutMs: 5000 });
    await publishEvent(redis.port, game.id, { version: 4 });
    const resynced = await stream.next();
    assert.equal(resynced.data.version, 4);
    assert.equal(stream.ended, false);
    stream.close();
  } finally {
    await replica.stop();
    await redis.stop();
  }
});

test('a client that stops reading is cut off once 256 KiB wait for it', async () => {
  const game = await newGame();
  await streamsOpenBecomes(server, 0);
  const before = 0;
  const socket = net.connect(server.port, '127.0.0.1');
  await new Promise((resolve) => socket.on('connect', resolve));
  socket.write(`GET /v1/games/${game.id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  socket.pause(); // never reads
  const closed = new Promise((resolve) => socket.on('close', resolve));
  await subscribed(port, game.id);
  assert.equal(await streamsOpen(server), before + 1);
  const filler = 'x'.repeat(60000);
  for (let version = 2; version < 600; version++) {
    await publishEvent(port, game.id, { version, json: JSON.stringify(changeEvent(game.id, version, { filler })) });
    if (version % 50 === 0 && (await streamsOpen(server)) === before) break;
  }
  await streamsOpenBecomes(server, before, 5000);
  socket.destroy();
  await closed;
});

test('long poll: a published change wakes it with the new game and Preference-Applied', async () => {
  const game = await newGame();
  const started = Date.now();
  const poll = nodeRequest(server, { path: `/v1/games/${game.id}?legal_moves=false`, headers: { 'if-none-match': '"1"', prefer: 'respond-async, wait=10; x=1' } });
  await subscribed(port, game.id);
  await setVersion(game.id, 2);
  await publishEvent(port, game.id, { version: 2 });
  const res = await poll;
  assert.equal(res.status, 200);
  assert.equal(res.body.version, 2);
  assert.equal(res.headers.etag, '"2"');
  assert.equal(res.headers['preference-applied'], 'wait=10');
  assert.ok(Date.now() - started < 3000);
});

test('long poll: 304 when the wait runs out; no wait without a current If-None-Match or with wait=0', async () => {
  const game = await newGame();
  let started = Date.now();
  const res = await nodeRequest(server, { path: `/v1/games/${game.id}`, headers: { 'if-none-match': '"1"', prefer: 'wait=1' } });
  const took = Date.now() - started;
  assert.equal(res.status, 304);
  assert.equal(res.headers['preference-applied'], 'wait=1');
  assert.ok(took >= 900 && took < 2500, `took ${took} ms`);
  for (const headers of [{ prefer: 'wait=5' }, { 'if-none-match': '"7"', prefer: 'wait=5' }, { 'if-none-match': '"1"', prefer: 'wait=0' },
    { 'if-none-match': '"1"', prefer: 'wait=x' }, { 'if-none-match': '"1"', prefer: 'wait=-3' }, { 'if-none-match': '"1"', prefer: 'waits=3' }]) {
    started = Date.now();
    const quick = await nodeRequest(server, { path: `/v1/games/${game.id}`, headers });
    assert.ok(Date.now() - started < 500, `${JSON.stringify(headers)} waited`);
    assert.equal(quick.headers['preference-applied'], undefined);
  }
  await streamsOpenBecomes(server, await streamsOpen(server));
});

test('long poll: a wait over 60 s is applied as 60 (woken early here by a change)', async () => {
  const game = await newGame();
  const poll = nodeRequest(server, { path: `/v1/games/${game.id}`, headers: { 'if-none-match': '"1"', prefer: 'wait=999' } });
  await subscribed(port, game.id);
  await publishEvent(port, game.id, { version: 2 }); // the stored game is still at 1: 304, after the wake
  const res = await poll;
  assert.equal(res.status, 304);
  assert.equal(res.headers['preference-applied'], 'wait=60');
});

test('long poll: a client that leaves (FIN or reset) gives its place back at the next heartbeat, not when its wait runs out', async () => {
  const game = await newGame();
  await streamsOpenBecomes(server, 0);
  const sockets = [];
  for (let i = 0; i < 6; i++) {
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
    socket.on('error', () => {});
    socket.write(`GET /v1/games/${game.id} HTTP/1.1\r\nHost: x\r\nIf-None-Match: "1"\r\nPrefer: wait=60\r\n\r\n`);
    sockets.push(socket);
  }
  await streamsOpenBecomes(server, 6);
  sockets.forEach((s, i) => (i % 2 ? s.end() : s.resetAndDestroy()));
  await streamsOpenBecomes(server, 0, 4000); // --heartbeat 1; the wait would hold them 60 s
  await unsubscribed(port, game.id);
});

test('a running clock: the flag is checked just after the deadline its event gives, and not once a later event stops the clock', async () => {
  const game = await newGame();
  const stream = await openEvents(server, game.id);
  try {
    await stream.next();
    await subscribed(port, game.id);
    const checks = await metric(server, 'chessd_flag_checks_total');
    const published = Date.now();
    await publishEvent(port, game.id, { version: 2, atMs: 1_000_000, deadlineMs: 1_000_300 }); // 300 ms left
    let after;
    while ((after = await metric(server, 'chessd_flag_checks_total')) === checks) {
      assert.ok(Date.now() - published < 2000, 'no flag check within 2 s of a 300 ms deadline');
      await sleep(5);
    }
    const took = Date.now() - published;
    assert.ok(took >= 295 && took < 500, `checked ${took} ms after a deadline 300 ms away`);
    assert.equal(after, checks + 1);
    // A clock started, then stopped by the next event (deadline 0): no check.
    await publishEvent(port, game.id, { version: 3, atMs: 2_000_000, deadlineMs: 2_000_200 });
    await publishEvent(port, game.id, { version: 4, atMs: 2_000_050, deadlineMs: 0 });
    await sleep(500);
    assert.equal(await metric(server, 'chessd_flag_checks_total'), checks + 1);
    assert.deepEqual(stream.events.map((e) => e.data.version), [1, 2, 3, 4]);
  } finally {
    stream.close();
  }
});

test('--resync-seconds 1: a 2 s flag that falls as the silent game is read again reaches every stream as the change event "timeout"', async () => {
  const quick = await startServer(['--heartbeat', '1', '--resync-seconds', '1']);
  try {
    const resyncs = await metric(quick, 'chessd_stream_resyncs_total');
    // Read again 1 s and 2 s after the last move: the second read finds the flag fallen and records it.
    const fall = await quietFlagFall(quick, port, { clockMs: 2000, formats: [true, false, true, false] });
    expectTimeoutChange(fall, 2000);
    assert.equal(await metric(quick, 'chessd_stream_resyncs_total'), resyncs, 'no stream missed anything: no snapshot was sent');
  } finally {
    await quick.stop();
  }
});

test('--resync-seconds 1: a change no message announced reaches a silent stream as the game within the re-read', async () => {
  const quick = await startServer(['--heartbeat', '1', '--resync-seconds', '1']);
  try {
    const game = await newGame(quick);
    const streams = [await openEvents(quick, game.id), await openEvents(quick, game.id, { sse: true })];
    try {
      for (const s of streams) assert.equal((await s.next()).data.version, 1);
      await subscribed(port, game.id);
      await setVersion(game.id, 3);
      for (const s of streams) {
        const ev = await s.next(4000);
        assert.deepEqual([ev.data.type, ev.data.version], ['game', 3], 'what was missed comes as the whole game');
      }
    } finally {
      for (const s of streams) s.close();
    }
  } finally {
    await quick.stop();
  }
});

test('HEAD of a stream: GET\'s head without Content-Length: 0 or any body, and no stream held', async () => {
  const game = await newGame();
  // Framing aside (libmicrohttpd 0.9.75 would send a chunked answer's last chunk after a HEAD's
  // head, so the HEAD answer is unchunked and ends with its connection), the headers are GET's.
  const framing = new Set(['date', 'x-request-id', 'connection', 'transfer-encoding']);
  for (const sse of [false, true]) {
    const get = await openEvents(server, game.id, { sse });
    get.close();
    assert.equal(get.headers['transfer-encoding'], 'chunked');
    await streamsOpenBecomes(server, 0);
    const { raw } = await rawExchange(server, [requestHead('HEAD', `/v1/games/${game.id}/events`, sse ? { Accept: 'text/event-stream' } : {})]);
    const split = raw.indexOf('\r\n\r\n');
    assert.ok(split > 0, `no head: ${JSON.stringify(raw)}`);
    const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
    assert.match(statusLine, /^HTTP\/1\.1 200 /);
    const headers = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    const strip = (h) => Object.fromEntries(Object.entries(h).filter(([k]) => !framing.has(k)));
    assert.deepEqual(strip(headers), strip(get.headers), `HEAD's headers are GET's (${sse ? 'SSE' : 'NDJSON'})`);
    assert.equal(headers['content-length'], undefined, 'no Content-Length: a stream has no length');
    assert.equal(headers['transfer-encoding'], undefined);
    assert.equal(headers.connection, 'close', 'the answer ends with the connection');
    assert.equal(raw.slice(split + 4), '', 'nothing after the head: no body, no last chunk');
    assert.equal(await streamsOpen(server), 0, 'a HEAD holds no stream');
  }
});
