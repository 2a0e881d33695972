// Event-stream clients that stop reading cost the host little kernel memory
// and lose their streams in bounded time, against a real chessd and
// redis-server over loopback. The clients that never read are
// stalled_readers.py (Python: Node cannot give a TCP socket a small receive
// buffer before it connects), 4 KiB receive buffers, not one byte read. The
// events are real: a draw offered and declined, again and again, through the
// API. Pins down: 100 such streams on a game that makes 2,400 events grow the
// kernel's TCP memory (/proc/net/sockstat, "TCP: ... mem N" in pages) by less
// than 16 MiB, and each is closed within --stream-stall-timeout (plus the
// time to fill its buffers, and slack) while a reader that takes a little
// every 100 ms keeps its stream and sees every event; a stream whose client
// takes nothing is closed once that long has passed without progress, though
// a heartbeat is queued every second, and is counted in
// chessd_streams_stalled_total, while a reading stream of the same game that
// has nothing to read for longer than that stays open.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, trackProcess } from './server.mjs';
import { sleep } from './http.mjs';
import { openEvents, streamsOpen, streamsOpenBecomes, metric } from './events.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const STALL_SECONDS = 3;
// A stream is looked at an eighth of the stall time apart, so it is closed
// at most 9/8 of it after its last progress; the slack covers a loaded machine.
const STALL_BOUND_MS = STALL_SECONDS * 1000 * 9 / 8;
const SLACK_MS = 3000;
const PAGE = 4096;

let server;

before(async () => {
  server = await startServer(['--stream-stall-timeout', String(STALL_SECONDS), '--heartbeat', '1']);
});

after(async () => {
  await server.stop();
});

/** The kernel's TCP memory now, in pages (the "mem" of /proc/net/sockstat's TCP line). */
function tcpPages() {
  const m = /^TCP:.* mem (\d+)/m.exec(readFileSync('/proc/net/sockstat', 'utf8'));
  assert.ok(m, 'no TCP mem in /proc/net/sockstat');
  return Number(m[1]);
}

/** Samples tcpPages() every 20 ms until stop(), which returns the highest seen. */
function sampleTcpPages() {
  let peak = tcpPages();
  const timer = setInterval(() => { peak = Math.max(peak, tcpPages()); }, 20);
  return { stop() { clearInterval(timer); return Math.max(peak, tcpPages()); } };
}

async function newGame() {
  const res = await fetch(`${server.base}/v1/games`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 201);
  return res.json();
}

/**
 * Makes `count` events on game (a draw offered by white, declined by black,
 * again and again), at most perSecond of them a second (0: as fast as the
 * server answers). Resolves to the game's last version.
 */
async function drawLoop(game, count, perSecond = 0) {
  let version = game.version;
  const started = Date.now();
  const change = async (token, action) => {
    const res = await fetch(`${server.base}/v1/games/${game.id}/draw?legal_moves=false`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ action, expected_version: version }),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `draw ${action} at version ${version}: ${text}`);
    version = JSON.parse(text).version;
  };
  for (let made = 0; made < count; made += 2) {
    await change(game.tokens.white, 'offer');
    await change(game.tokens.black, 'decline');
    const ahead = perSecond ? started + ((made + 2) * 1000) / perSecond - Date.now() : 0;
    if (ahead > 0) await sleep(ahead);
  }
  return version;
}

/**
 * Starts stalled_readers.py: `count` streams of game id that never read.
 * Resolves once every request is sent, to { closedAt (index -> Date.now()
 * when the server closed it), allClosed(byMs), finish() }.
 */
async function stalledReaders(id, count) {
  const proc = trackProcess(spawn('python3', [path.join(here, 'stalled_readers.py'), '--port', String(server.port),
    '--path', `/v1/games/${id}/events`, '--count', String(count), '--rcvbuf', '4096', '--seconds', '60'],
  { stdio: ['pipe', 'pipe', 'inherit'] }));
  const closedAt = new Map();
  let left = null;
  let pending = '';
  const opened = new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('exit', (code) => reject(new Error(`stalled_readers.py exited (${code}) before opening its streams`)));
    proc.stdout.setEncoding('utf8').on('data', (chunk) => {
      pending += chunk;
      for (let at; (at = pending.indexOf('\n')) >= 0;) {
        const message = JSON.parse(pending.slice(0, at));
        pending = pending.slice(at + 1);
        if ('open' in message) resolve();
        if ('closed' in message) closedAt.set(message.closed, Date.now());
        if ('left' in message) left = message.left;
      }
    });
  });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  await opened;
  return {
    closedAt,
    /** Waits until every stream is closed, or until byMs (a Date.now() time). True when all are. */
    async allClosed(byMs) {
      while (closedAt.size < count && Date.now() < byMs) await sleep(20);
      return closedAt.size === count;
    },
    async finish() {
      proc.stdin.end();
      await exited;
      return left;
    },
  };
}

/**
 * A reader of game id's NDJSON stream (from 127.0.0.2) that takes what its
 * socket has buffered every everyMs and nothing in between. Its events are
 * parsed as they are taken; until(version) waits for one.
 */
function slowReader(id, everyMs) {
  const reader = { events: [], ended: false, bytes: 0 };
  let pending = '';
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path: `/v1/games/${id}/events`, localAddress: '127.0.0.2', agent: false,
      headers: { accept: 'application/x-ndjson' } }, (res) => {
      assert.equal(res.statusCode, 200);
      res.pause();
      const finish = () => { reader.ended = true; };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const timer = setInterval(() => {
        const chunk = res.read(); // what the socket has buffered (at most its 16 KiB high-water mark)
        if (!chunk) return;
        reader.bytes += chunk.length;
        pending += chunk.toString('utf8');
        for (let at; (at = pending.indexOf('\n')) >= 0;) {
          const line = pending.slice(0, at);
          pending = pending.slice(at + 1);
          if (line) reader.events.push(JSON.parse(line));
        }
      }, everyMs);
      reader.close = () => { clearInterval(timer); req.destroy(); };
      reader.until = async (version, timeoutMs) => {
        const deadline = Date.now() + timeoutMs;
        while (!reader.events.some((e) => e.version === version)) {
          assert.ok(!reader.ended, `the slow reader's stream ended at ${reader.events.at(-1)?.version} (${reader.bytes} bytes)`);
          assert.ok(Date.now() < deadline, `the slow reader has ${reader.events.at(-1)?.version}, not ${version}, after ${timeoutMs} ms`);
          await sleep(20);
        }
      };
      resolve(reader);
    });
    req.on('error', reject);
    req.end();
  });
}

test('100 streams that never read, while their game makes 2,400 events: kernel TCP memory grows by under 16 MiB and each is closed within the stall bound; a reader taking a little every 100 ms keeps its stream and sees every event', async (t) => {
  const game = await newGame();
  await streamsOpenBecomes(server, 0);
  const slow = await slowReader(game.id, 100);
  const base = tcpPages();
  const memory = sampleTcpPages();
  const readers = await stalledReaders(game.id, 100);
  try {
    await streamsOpenBecomes(server, 101, 10000);
    const started = Date.now();
    // 250 events a second: about 150 KB/s, which the slow reader's 16 KiB
    // (one buffered chunk) every 100 ms keeps up with.
    const last = await drawLoop(game, 2400, 250);
    const allClosed = await readers.allClosed(started + STALL_BOUND_MS + SLACK_MS);
    const peak = memory.stop();
    assert.ok(allClosed, `${readers.closedAt.size} of 100 streams closed within ${STALL_BOUND_MS + SLACK_MS} ms of the first event`);
    const growth = (peak - base) * PAGE;
    const slowest = Math.max(...readers.closedAt.values()) - started;
    t.diagnostic(`kernel TCP memory: ${base} -> ${peak} pages (+${(growth / 1048576).toFixed(1)} MiB); the last stream closed ${slowest} ms after the first event`);
    assert.ok(growth < 16 * 1024 * 1024, `kernel TCP memory grew by ${(growth / 1048576).toFixed(1)} MiB (${base} -> ${peak} pages)`);

    await slow.until(last, 15000);
    const versions = slow.events.map((e) => e.version);
    assert.equal(slow.events[0].type, 'game');
    assert.ok(slow.events.slice(1).every((e) => e.type === 'change'), 'the slow reader got a snapshot after its first event: it missed some');
    assert.deepEqual(versions, Array.from({ length: last - game.version + 1 }, (_, i) => game.version + i));
    assert.equal(slow.ended, false);
    t.diagnostic(`the slow reader took ${slow.bytes} bytes, ${slow.events.length} events`);
    await streamsOpenBecomes(server, 1); // the slow reader's alone
  } finally {
    memory.stop();
    slow.close();
    await readers.finish();
  }
});

test('a stream whose client takes nothing is closed once --stream-stall-timeout passes without progress, though heartbeats are queued, and counted; a reading stream of the same game with nothing to read stays', async (t) => {
  const game = await newGame();
  await streamsOpenBecomes(server, 0);
  const reading = await openEvents(server, game.id);
  const readers = await stalledReaders(game.id, 20);
  try {
    await streamsOpenBecomes(server, 21, 10000);
    const stalledBefore = await metric(server, 'chessd_streams_stalled_total');
    // About 180 KB a stream: more than its socket buffers hold, less than
    // the 256 KiB bound, so only the lack of progress can close it.
    const last = await drawLoop(game, 300);
    const lastEvent = Date.now();
    const allClosed = await readers.allClosed(lastEvent + STALL_BOUND_MS + SLACK_MS);
    assert.ok(allClosed, `${readers.closedAt.size} of 20 streams closed within ${STALL_BOUND_MS + SLACK_MS} ms of the last event`);
    const closed = [...readers.closedAt.values()].map((at) => at - lastEvent);
    t.diagnostic(`closed ${Math.min(...closed)} to ${Math.max(...closed)} ms after the last event`);
    assert.equal(await metric(server, 'chessd_streams_stalled_total'), stalledBefore + 20);
    await streamsOpenBecomes(server, 1);

    // The reading stream had nothing to read for longer than the stall time: still open.
    await reading.until((s) => s.events.some((e) => e.data.version === last), 5000, `version ${last}`);
    await sleep(STALL_BOUND_MS + 1000);
    assert.equal(await streamsOpen(server), 1);
    const next = await drawLoop({ ...game, version: last }, 2);
    await reading.until((s) => s.events.some((e) => e.data.version === next), 5000, `version ${next}`);
    assert.equal(reading.ended, false);
    assert.equal(await metric(server, 'chessd_streams_stalled_total'), stalledBefore + 20);
  } finally {
    reading.close();
    await readers.finish();
  }
});
