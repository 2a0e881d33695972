// The first-move grace of a timed game over real HTTP and a real Redis (one
// node, or the shared Cluster when run.sh runs the game suites again): a
// side that does not make its first move within clock.first_move_ms of its
// turn's start has the game aborted by itself, with nobody connected and
// nobody reading it (the stored record says so, read straight from Redis,
// before any request touches the game), and a stream that follows it gets
// the "abort" change; a first move made just before the grace ends keeps the
// game; the bounds; an untimed game has none. Every answer is checked
// against openapi.yaml by http.mjs (streams by stream.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, gameRedis } from './server.mjs';
import { get, post, expectProblem } from './http.mjs';
import { mustOpenStream } from './stream.mjs';

let redis;
let server;
before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url]);
});
after(async () => {
  await server?.stop();
  await redis?.stop();
});

async function newGame(clock) {
  const res = await post(server, '/v1/games', { clock });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, body: res.body };
}

async function move(g, color, text) {
  const res = await post(server, `/v1/games/${g.id}/moves`, { move: text, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens[color]}` } });
  if (res.status === 200) g.version = res.body.version;
  return res;
}

/** The state text of game id as stored (HGET of its hash), without chessd. */
async function storedState(id) {
  const reply = await redis.command('HGET', `chessd:game:{${id}}`, 'state');
  return String(reply ?? '');
}

/** Polls fn until it returns true, or fails after ms. */
async function until(fn, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(50);
  }
  assert.fail(`not within ${ms} ms: ${what}`);
}

test('a timed game says its first-move grace; the default is 30 s; an untimed game has none', async () => {
  const g = await newGame({ initial_ms: 60000 });
  assert.equal(g.body.clock.first_move_ms, 30000);
  const created = Date.parse(g.body.created_at);
  assert.ok(Math.abs(g.body.clock.abort_at_ms - (created + 30000)) < 2000, JSON.stringify(g.body.clock));
  const untimed = await post(server, '/v1/games', {});
  assert.equal(untimed.body.clock, null);
  for (const bad of [-1, 86400001, 1.5, 'x', null]) {
    const res = await post(server, '/v1/games', { clock: { initial_ms: 60000, first_move_ms: bad } });
    expectProblem(res, 400, 'invalid_field');
  }
  const none = await newGame({ initial_ms: 60000, first_move_ms: 0 });
  assert.equal(none.body.clock.first_move_ms, 0);
  assert.equal(none.body.clock.abort_at_ms, null);
});

test('with nobody connected, a game whose first move does not come is aborted by itself, in Redis', async () => {
  const g = await newGame({ initial_ms: 60000, first_move_ms: 1000 });
  assert.match(await storedState(g.id), /\nstate active\n/);
  // Nothing reads the game through chessd until Redis says it is aborted.
  await until(async () => /\nstate aborted\n/.test(await storedState(g.id)), 6000, 'the stored game aborted');
  const read = await get(server, `/v1/games/${g.id}`);
  assert.equal(read.body.status, 'aborted');
  assert.equal(read.body.termination, 'aborted');
  assert.equal(read.body.result, '*');
  assert.equal(read.body.version, g.version + 1, 'one write: the abort');
  g.version = read.body.version;
  expectProblem(await move(g, 'white', 'e4'), 409, 'game_over');
});

test('Black\'s grace starts with White\'s first move, and a stream sees the abort as a change', async () => {
  const g = await newGame({ initial_ms: 60000, first_move_ms: 1500 });
  assert.equal((await move(g, 'white', 'e4')).status, 200);
  const stream = await mustOpenStream(server, g.id, { format: 'ndjson' });
  await stream.waitFor((d) => d.type === 'game');
  const abort = await stream.waitFor((d) => d.type === 'change', 8000, 'the abort');
  assert.equal(abort.data.event, 'abort');
  assert.equal(abort.data.status, 'aborted');
  assert.equal(abort.data.version, g.version + 1);
  assert.equal(abort.data.move, null);
  stream.close();
});

test('a first move just before the grace ends keeps the game, and once both have moved there is no grace', async () => {
  const grace = 2500;
  const g = await newGame({ initial_ms: 60000, first_move_ms: grace });
  await sleep(grace - 1200);
  const white = await move(g, 'white', 'd4');
  assert.equal(white.status, 200, white.text);
  assert.equal(white.body.status, 'active');
  await sleep(grace - 1200);
  const black = await move(g, 'black', 'd5');
  assert.equal(black.status, 200, black.text);
  assert.equal(black.body.clock.abort_at_ms, null);
  assert.equal(black.body.clock.running, 'white');
  await sleep(grace + 1000);
  const read = await get(server, `/v1/games/${g.id}`);
  assert.equal(read.body.status, 'active');
  assert.equal(read.body.version, g.version);
});
