// A flag left to fall after a minute of silence, with chessd's default
// settings: a 60 s clock runs out with nobody moving while two SSE and two
// NDJSON streams are open on the game all along, so the quiet spell outlasts
// the heartbeat (--heartbeat, 10 s) and, twice, the re-read of a silent game
// (--resync-seconds, 30 s: its second one comes as the flag falls, and the
// read records the fall itself). Every stream must get the end as the
// documented change event ("event": "timeout") with the final clocks, never
// as a whole-game snapshot, and no stream gets a snapshot at all. The same
// race in seconds, on one Redis and on a Redis Cluster, is in
// events.test.mjs (--resync-seconds 1); this file runs on one Redis only.
// Longer than node's --test-timeout of 60 s allows a whole file, it runs on
// its own beside the other files (tests/e2e/run.sh), mostly waiting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, privateRedis } from './server.mjs';
import { quietFlagFall, expectTimeoutChange, redisPort, metric } from './events.mjs';

const CLOCK_MS = 60000;
let server;
let port;

before(async () => {
  server = await startServer();
  port = redisPort(await privateRedis());
});

after(async () => {
  await server.stop();
});

test('a 60 s clock that falls after a minute of silence reaches every open stream as the change event "timeout"', { timeout: 120000 }, async () => {
  const resyncs = await metric(server, 'chessd_stream_resyncs_total');
  const fall = await quietFlagFall(server, port, { clockMs: CLOCK_MS, formats: [true, false, true, false], waitMs: 15000 });
  expectTimeoutChange(fall, CLOCK_MS);
  for (const s of fall.streams) assert.ok(s.heartbeats >= 4, `${s.format}: ${s.heartbeats} heartbeats in a minute of silence`);
  assert.equal(await metric(server, 'chessd_stream_resyncs_total'), resyncs, 'no stream missed anything: no snapshot was sent');
});
