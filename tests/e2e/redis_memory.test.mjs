// A Redis that may evict keys, or that is full, is said out loud and loses
// nothing silently (k8s/README.md, "Redis memory"). An evicting policy is a
// warning in the log, a member of /readyz and a metric, and with
// --require-noeviction an unready replica until the policy is set back. A
// game some of whose keys went (deleted here behind chessd's back, as an
// eviction does) answers 410 game_damaged on reads and changes, and a
// change writes nothing. A full Redis (noeviction at maxmemory) makes every
// write 507 store_full, the computer's turn and a creation too, and /readyz
// says so (200) until the background reading finds room again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { startRedis, startServer, redisCommands } from './server.mjs';
import { get, post, expectProblem, sleep } from './http.mjs';

const TOKEN_SECRET = 'redis-memory-test-secret-of-32-bytes-or-more';
const withSecret = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };
// The background reading's period here (--redis-memory-check), and how long
// a test waits for what one reading changes: several periods, for a loaded
// machine running the sanitizer build.
const CHECK = ['--redis-memory-check', '1'];
const WAIT_MS = 10000;
const auth = (token) => ({ authorization: `Bearer ${token}` });

/** The value of a metric line (name with its labels, as written), or undefined. */
function metric(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Asks /readyz until pred(answer) holds (within WAIT_MS); resolves to that answer. */
async function readyzUntil(server, pred, what) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const res = await get(server, '/readyz');
    if (pred(res)) return res;
    assert.ok(Date.now() < deadline, `/readyz: ${what} not within ${WAIT_MS} ms: ${res.status} ${res.text}`);
    await sleep(50);
  }
}

async function createGame(server, body = {}) {
  const res = await post(server, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version };
}

/** Plays moves (UCI) alternately from White, each expecting 200. */
async function play(server, game, moves) {
  let color = 'white';
  for (const move of moves) {
    const res = await post(server, `/v1/games/${game.id}/moves`, { move, expected_version: game.version },
      { headers: auth(game.tokens[color]) });
    assert.equal(res.status, 200, `${move}: ${res.text}`);
    game.version = res.body.version;
    color = color === 'white' ? 'black' : 'white';
  }
}

/** A game's three keys (store/game_keys.c) with what Redis holds under each. */
/** A hash's HGETALL reply as [field, value] pairs sorted by field. */
function pairsByName(flat) {
  const pairs = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
  return pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

async function gameKeys(redis, id) {
  const keys = [`chessd:game:{${id}}`, `chessd:moves:{${id}}`, `chessd:history:{${id}}`];
  const [fields, moves, history] = await redisCommands(redis.port, [['HGETALL', keys[0]], ['GET', keys[1]], ['GET', keys[2]]]);
  // By field: a hash's order changes as Redis rehashes it, with nothing written.
  const hash = pairsByName(fields);
  return { keys, hash, moves, history };
}

test('an evicting maxmemory-policy is a warning, a /readyz member and a metric; --require-noeviction makes /readyz 503 until it is noeviction', async (t) => {
  const password = 'memory-test-redis-password-x9';
  const redis = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru', '--maxmemory', '8mb', '--requirepass', password] });
  t.after(() => redis.stop());
  const url = `redis://:${password}@127.0.0.1:${redis.port}/0`;
  const configSet = async (...args) => {
    const [authed, reply] = await redisCommands(redis.port, [['AUTH', password], ['CONFIG', 'SET', ...args]]);
    assert.equal(authed, 'OK');
    assert.equal(reply, 'OK');
  };
  const server = await startServer(['--redis', url, ...CHECK], withSecret);
  t.after(() => server.stop());
  const strict = await startServer(['--redis', url, '--require-noeviction', ...CHECK], withSecret);
  t.after(() => strict.stop());

  // Said at start, in the log, without the password.
  assert.match(server.stderr(), /WARNING: Redis maxmemory-policy is allkeys-lru .*maxmemory 8388608 bytes.*may evict/);
  assert.ok(!server.stderr().includes(password), 'no password in the log');
  const ready = await get(server, '/readyz');
  assert.equal(ready.status, 200, ready.text);
  assert.equal(ready.body.redis, 'up');
  assert.deepEqual(ready.body.redis_memory, { policy: 'allkeys-lru', maxmemory: 8388608, eviction_possible: true });
  const metrics = await (await fetch(`${server.base}/metrics`)).text();
  assert.equal(metric(metrics, 'chessd_redis_eviction_possible'), 1);
  assert.equal(metric(metrics, 'chessd_redis_maxmemory_policy_info{policy="allkeys-lru"}'), 1);
  assert.equal(metric(metrics, 'chessd_redis_maxmemory_bytes'), 8388608);

  const refused = expectProblem(await get(strict, '/readyz'), 503, 'store_may_evict');
  assert.match(refused.detail, /allkeys-lru/);
  assert.equal(refused.redis_memory.policy, 'allkeys-lru');
  // The rules API still serves: only readiness says no.
  assert.equal((await post(strict, '/v1/position', { fen: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1' })).status, 200);

  // Set back: ready again at the next reading, and the log says so.
  await configSet('maxmemory-policy', 'noeviction');
  const back = await readyzUntil(strict, (r) => r.status === 200, 'ready after CONFIG SET maxmemory-policy noeviction');
  assert.deepEqual(back.body.redis_memory, { policy: 'noeviction', maxmemory: 8388608, eviction_possible: false });
  await readyzUntil(server, (r) => r.body.redis_memory?.policy === 'noeviction', 'noeviction read');
  assert.match(server.stderr(), /maxmemory-policy is noeviction again/);
  const after = await (await fetch(`${server.base}/metrics`)).text();
  assert.equal(metric(after, 'chessd_redis_eviction_possible'), 0);

  // volatile-* evicts games too (every game's keys have a TTL).
  await configSet('maxmemory-policy', 'volatile-lru');
  const volatile = await readyzUntil(strict, (r) => r.status === 503, '503 under volatile-lru');
  expectProblem(volatile, 503, 'store_may_evict');
  await readyzUntil(server, (r) => r.body.redis_memory?.policy === 'volatile-lru', 'volatile-lru read');
  assert.match(server.stderr(), /WARNING: Redis maxmemory-policy is volatile-lru/);
  assert.ok(!server.stderr().includes(password), 'no password in the log');
});

test('where CONFIG is refused (a managed Redis), the policy comes from INFO memory', async (t) => {
  const redis = await startRedis({ args: ['--maxmemory-policy', 'volatile-ttl', '--maxmemory', '16mb', '--rename-command', 'CONFIG', ''] });
  t.after(() => redis.stop());
  const server = await startServer(['--redis', redis.url, ...CHECK], withSecret);
  t.after(() => server.stop());
  const ready = await get(server, '/readyz');
  assert.equal(ready.status, 200, ready.text);
  assert.deepEqual(ready.body.redis_memory, { policy: 'volatile-ttl', maxmemory: 16777216, eviction_possible: true });
  assert.match(server.stderr(), /WARNING: Redis maxmemory-policy is volatile-ttl/);
});

test('a game whose move list or history was evicted answers 410 game_damaged on reads and changes, and a change writes nothing', async (t) => {
  const redis = await startRedis();
  t.after(() => redis.stop());
  // One replica keeps the games it wrote in its cache (a change then skips
  // the read: the write script alone must refuse it), one keeps none.
  const cached = await startServer(['--redis', redis.url], withSecret);
  t.after(() => cached.stop());
  const uncached = await startServer(['--redis', redis.url, '--game-cache', '0'], withSecret);
  t.after(() => uncached.stop());

  for (const lost of ['moves', 'history']) {
    const game = await createGame(cached);
    await play(cached, game, ['e2e4', 'e7e5', 'g1f3']);
    const before = await gameKeys(redis, game.id);
    assert.equal(await redis.command('DEL', `chessd:${lost}:{${game.id}}`), 1);
    const damaged = await gameKeys(redis, game.id);

    for (const server of [cached, uncached]) {
      const read = expectProblem(await get(server, `/v1/games/${game.id}`), 410, 'game_damaged');
      assert.match(read.detail, /lost part of this game/);
      expectProblem(await get(server, `/v1/games/${game.id}/pgn`), 410, 'game_damaged');
      expectProblem(await get(server, `/v1/games/${game.id}/events`), 410, 'game_damaged');
      const move = await post(server, `/v1/games/${game.id}/moves`, { move: 'b8c6', expected_version: game.version },
        { headers: auth(game.tokens.black) });
      expectProblem(move, 410, 'game_damaged');
      const resign = await post(server, `/v1/games/${game.id}/resign`, { expected_version: game.version },
        { headers: auth(game.tokens.white) });
      expectProblem(resign, 410, 'game_damaged');
      assert.deepEqual(await gameKeys(redis, game.id), damaged, `${lost} lost: nothing was written`);
    }
    assert.equal(damaged[lost], null);
    assert.deepEqual(damaged.hash, before.hash);
  }

  // The hash evicted while the lists remain: damaged too, not "no such game".
  const game = await createGame(cached);
  await play(cached, game, ['d2d4']);
  await redis.command('DEL', `chessd:game:{${game.id}}`);
  for (const server of [cached, uncached]) {
    expectProblem(await get(server, `/v1/games/${game.id}`), 410, 'game_damaged');
    const move = await post(server, `/v1/games/${game.id}/moves`, { move: 'd7d5', expected_version: game.version },
      { headers: auth(game.tokens.black) });
    expectProblem(move, 410, 'game_damaged');
  }
  assert.equal((await gameKeys(redis, game.id)).hash.length, 0, 'no hash was written back');
  // A game that is simply gone (all its keys) is still 404.
  await redis.command('DEL', `chessd:moves:{${game.id}}`, `chessd:history:{${game.id}}`);
  expectProblem(await get(uncached, `/v1/games/${game.id}`), 404, 'game_not_found');
});

/** SUBSCRIBEs to channel on redis; resolves to { received(), close() } once subscribed (received: the bytes after the channel's name in the reply). */
function subscribe(redis, channel) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(redis.port, '127.0.0.1');
    let text = '';
    socket.on('error', reject);
    socket.on('connect', () => socket.write(`*2\r\n$9\r\nSUBSCRIBE\r\n$${Buffer.byteLength(channel)}\r\n${channel}\r\n`));
    socket.on('data', (d) => {
      const before = text;
      text += d.toString('utf8');
      if (!before && text.includes(channel)) resolve({ received: () => text.slice(text.indexOf(channel) + channel.length), close: () => socket.destroy() });
    });
  });
}

/**
 * Fills redis (noeviction) with filler keys until it answers OOM, then sets
 * maxmemory a little below what it uses, so that every write is refused
 * whatever the size of the next command. The fill is bounded.
 */
async function fill(redis) {
  const value = 'x'.repeat(1000);
  let refused = false;
  for (let batch = 0; batch < 200 && !refused; batch++) {
    const replies = await redisCommands(redis.port, Array.from({ length: 100 }, (_, i) => ['SET', `filler:${batch}:${i}`, value]));
    refused = replies.some((r) => r instanceof Error && /^OOM/.test(r.message));
  }
  assert.ok(refused, 'Redis answered OOM within 20,000 filler keys');
  const info = await redis.command('INFO', 'memory');
  const used = Number(/^used_memory:(\d+)/m.exec(info)[1]);
  assert.equal(await redis.command('CONFIG', 'SET', 'maxmemory', String(used - 256 * 1024)), 'OK');
}

test('a full Redis (noeviction at maxmemory): every write is 507 store_full, /readyz says full (200) and up again once memory is freed', async (t) => {
  const redis = await startRedis({ args: ['--maxmemory-policy', 'noeviction', '--maxmemory', '4mb'] });
  t.after(() => redis.stop());
  const server = await startServer(['--redis', redis.url, ...CHECK], withSecret);
  t.after(() => server.stop());
  const game = await createGame(server);
  await play(server, game, ['e2e4']);
  const before = await gameKeys(redis, game.id);
  assert.equal((await get(server, '/readyz')).body.redis, 'up');

  await fill(redis);
  const events = await subscribe(redis, `chessd:events:{${game.id}}`);
  t.after(() => events.close());
  const move = await post(server, `/v1/games/${game.id}/moves`, { move: 'e7e5', expected_version: game.version },
    { headers: auth(game.tokens.black) });
  expectProblem(move, 507, 'store_full');
  assert.deepEqual(await gameKeys(redis, game.id), before, 'the refused move wrote nothing');
  // Nor published it: a full Redis lets PUBLISH through, so the script's first write must come before it.
  await sleep(300);
  assert.doesNotMatch(events.received(), /message/, 'no event of the refused move');
  // The computer's turn is recorded before its game: refused as full, not "cannot be reached".
  expectProblem(await post(server, '/v1/games', { engine: { color: 'white', level: 1 } }), 507, 'store_full');
  expectProblem(await post(server, '/v1/games', {}), 507, 'store_full');
  // Reads go on.
  assert.equal((await get(server, `/v1/games/${game.id}`)).status, 200);

  const full = await get(server, '/readyz');
  assert.equal(full.status, 200, full.text);
  assert.equal(full.body.redis, 'full');
  assert.match(full.body.redis_reason, /out of memory and refuses writes/);
  const metrics = await (await fetch(`${server.base}/metrics`)).text();
  assert.equal(metric(metrics, 'chessd_redis_full'), 1);
  assert.ok(metric(metrics, 'chessd_store_full_total') >= 3);

  // Room again, and no write from chessd meanwhile: the reading sees it.
  assert.equal(await redis.command('CONFIG', 'SET', 'maxmemory', '64mb'), 'OK');
  await readyzUntil(server, (r) => r.status === 200 && r.body.redis === 'up', 'redis up after CONFIG SET maxmemory 64mb');
  assert.equal(metric(await (await fetch(`${server.base}/metrics`)).text(), 'chessd_redis_full'), 0);
  await play(server, { ...game, tokens: { white: game.tokens.black, black: game.tokens.white } }, ['e7e5']);
});
