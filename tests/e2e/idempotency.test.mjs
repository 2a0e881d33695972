// Game writes over real HTTP against real redis-servers, where the store and
// the client can disagree about what happened: Idempotency-Keys scoped to the
// caller (a creation key must be a secret; in a game each player's keys are
// their own; If-Match is part of the request), the TTL of finished games
// (active ones have none), a Redis out of memory (507 store_full), writes whose answer Redis
// never sent (settled by reading back, else 503 outcome_unknown) through a
// proxy that pauses Redis or loses a reply, and a repeated draw offer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { startServer, startRedis, gameRedis } from './server.mjs';
import { get, post, expectProblem } from './http.mjs';

const TIMEOUT_MS = 300; // the Redis timeouts of the servers behind the proxy
const ACTIVE_TTL = 1000; // ignored: an active game never expires
const FINISHED_TTL = 5000;

let redis;
let server;

before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url, '--active-ttl', String(ACTIVE_TTL),
    '--finished-ttl', String(FINISHED_TTL)]);
});
after(async () => {
  await server?.stop();
  await redis?.stop();
});

const auth = (token) => ({ authorization: `Bearer ${token}` });
/** A creation key as the API asks for one: 16 random bytes in base64url (22 characters). */
const secretKey = () => randomBytes(16).toString('base64url');

async function createGame(srv = server, body = {}) {
  const res = await post(srv, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, srv };
}

/** POST /v1/games/{id}/{what} as `color` with a JSON body and extra headers. */
function change(g, color, what, body, headers = {}) {
  return post(g.srv, `/v1/games/${g.id}/${what}`, body, { headers: { ...auth(g.tokens[color]), ...headers } });
}

async function version(g) {
  const res = await get(g.srv, `/v1/games/${g.id}`);
  assert.equal(res.status, 200, res.text);
  return res.body.version;
}

/** A counter's value in GET /metrics. */
async function metric(srv, name) {
  const res = await get(srv, '/metrics');
  assert.equal(res.status, 200);
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(res.text);
  assert.ok(m, `/metrics has no ${name}:\n${res.text}`);
  return Number(m[1]);
}

// --- Idempotency-Key: whose answer a key may bring back ---

test('a creation Idempotency-Key must be a secret: guessable keys are 400 weak_idempotency_key, so no client gets another\'s tokens', async () => {
  // Two clients who both pick "create-1" must not end up holding one game's tokens.
  for (const client of ['A', 'B']) {
    const p = expectProblem(await post(server, '/v1/games', { white: client }, { headers: { 'idempotency-key': 'create-1' } }),
      400, 'weak_idempotency_key');
    assert.match(p.detail, /22 to 255 characters/);
    assert.match(p.detail, /has 8\b/);
  }
  expectProblem(await post(server, '/v1/games', {}, { headers: { 'idempotency-key': 'a'.repeat(21) } }), 400, 'weak_idempotency_key');
  expectProblem(await post(server, '/v1/games', {}, { headers: { 'idempotency-key': 'k'.repeat(256) } }), 400, 'weak_idempotency_key');
  for (const [key, at] of [['abc.defghijklmnopqrstuvwxyz', 4], ['q83vEjRWeJASNFZ4kKvN7w+/ab==', 23], ['game of ann and bob number 1', 5]]) {
    const p = expectProblem(await post(server, '/v1/games', {}, { headers: { 'idempotency-key': key } }), 400, 'weak_idempotency_key');
    assert.match(p.detail, new RegExp(`character ${at} is not one`), `${key}: ${p.detail}`);
  }

  // A secret key: the retry gets the same game and tokens; another body is 422.
  const key = secretKey();
  assert.equal(key.length, 22);
  const first = await post(server, '/v1/games', { white: 'Ann' }, { headers: { 'idempotency-key': key } });
  assert.equal(first.status, 201, first.text);
  const again = await post(server, '/v1/games', { white: 'Ann' }, { headers: { 'idempotency-key': key } });
  assert.equal(again.status, 201);
  assert.equal(again.text, first.text);
  expectProblem(await post(server, '/v1/games', { white: 'Bob' }, { headers: { 'idempotency-key': key } }), 422, 'idempotency_key_reused');
  // A UUID is a good key too.
  const uuid = await post(server, '/v1/games', {}, { headers: { 'idempotency-key': '8f14e45f-ceea-467f-a0e6-1d4b9b8c0e5a' } });
  assert.equal(uuid.status, 201, uuid.text);
  assert.notEqual(uuid.body.id, first.body.id);
});

test('in a game each player\'s Idempotency-Keys are their own: black sending white\'s key and body never gets white\'s answer', async () => {
  const g = await createGame();
  const key = { 'idempotency-key': 'k1' };
  const white = await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }, key);
  assert.equal(white.status, 200, white.text);

  // Black with white's key and white's body: a request of black's own, refused for its version.
  const copy = await change(g, 'black', 'moves', { move: 'e4', expected_version: 1 }, key);
  const p = expectProblem(copy, 409, 'version_conflict');
  assert.equal(p.current_version, 2);
  assert.notEqual(copy.text, white.text);

  // The same key for black's own move is a new key: the move is made.
  const black = await change(g, 'black', 'moves', { move: 'e5', expected_version: 2 }, key);
  assert.equal(black.status, 200, black.text);
  assert.equal(black.body.version, 3);

  // Each player's retry gets that player's first answer.
  const whiteRetry = await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }, key);
  assert.equal(whiteRetry.status, 200);
  assert.equal(whiteRetry.text, white.text);
  const blackRetry = await change(g, 'black', 'moves', { move: 'e5', expected_version: 2 }, key);
  assert.equal(blackRetry.status, 200);
  assert.equal(blackRetry.text, black.text);
  assert.equal(await version(g), 3);
});

test('If-Match is part of the request a key stands for: the same key and body with another If-Match is 422, not the first answer', async () => {
  const g = await createGame();
  const key = 'with-if-match';
  const first = await change(g, 'white', 'moves', { move: 'e4' }, { 'idempotency-key': key, 'if-match': '"1"' });
  assert.equal(first.status, 200, first.text);
  const retry = await change(g, 'white', 'moves', { move: 'e4' }, { 'idempotency-key': key, 'if-match': '"1"' });
  assert.equal(retry.status, 200);
  assert.equal(retry.text, first.text);
  expectProblem(await change(g, 'white', 'moves', { move: 'e4' }, { 'idempotency-key': key, 'if-match': '"2"' }),
    422, 'idempotency_key_reused');
  expectProblem(await change(g, 'white', 'moves', { move: 'e4' }, { 'idempotency-key': key }), 422, 'idempotency_key_reused');
  assert.equal(await version(g), 2);
});

test('the query is part of the request a key stands for: the same key with another legal_moves is 422, not an answer of the other shape', async () => {
  const g = await createGame();
  const key = 'with-a-query';
  const path = `/v1/games/${g.id}/moves`;
  const send = (query) => post(server, path + query, { move: 'e4', expected_version: 1 },
    { headers: { ...auth(g.tokens.white), 'idempotency-key': key } });
  const first = await send('?legal_moves=false');
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.position.legal_moves, undefined);
  const retry = await send('?legal_moves=false');
  assert.equal(retry.status, 200);
  assert.equal(retry.text, first.text);
  expectProblem(await send(''), 422, 'idempotency_key_reused');
  expectProblem(await send('?legal_moves=true'), 422, 'idempotency_key_reused');
  assert.equal(await version(g), 2);
});

// --- what Redis keeps, and for how long ---

// A game's keys (store/store.h): the hash chessd:game:{<id>} (version, state
// text, hlen), its move list chessd:moves:{<id>} and its position history
// chessd:history:{<id>}. A creation writes the hash only; the first move makes the other two.
const gameKeys = (id) => [`chessd:game:{${id}}`, `chessd:moves:{${id}}`, `chessd:history:{${id}}`];

/** The TTL of the game's hash (seconds; -1 none, -2 no such key). */
async function ttl(store, id) {
  return store.command('TTL', gameKeys(id)[0]);
}

/** The TTLs of all three of the game's keys. */
async function ttls(store, id) {
  return Promise.all(gameKeys(id).map((key) => store.command('TTL', key)));
}

const within = (ttlSeconds, limit) => ttlSeconds > limit - 10 && ttlSeconds <= limit;

test('an active game never expires (--active-ttl is ignored, a TTL an older chessd gave it goes with the next write); a finished one expires --finished-ttl after its end', async () => {
  const g = await createGame();
  assert.deepEqual(await ttls(redis, g.id), [-1, -1, -1], 'no TTL after creation, whatever --active-ttl says');
  // As an older chessd left it: every key with a TTL.
  for (const key of gameKeys(g.id)) assert.equal(await redis.command('EXPIRE', key, '50'), 1);
  const moved = await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 });
  assert.equal(moved.status, 200, moved.text);
  assert.deepEqual(await ttls(redis, g.id), [-1, -1, -1], 'the move took the TTL away from every key');
  const resigned = await change(g, 'black', 'resign', { expected_version: 2 });
  assert.equal(resigned.status, 200, resigned.text);
  const finished = await ttls(redis, g.id);
  assert.ok(finished.every((t) => within(t, FINISHED_TTL)), `TTLs after the end: ${finished}`);
  assert.match(server.stderr(), /--active-ttl \(CHESSD_ACTIVE_TTL\) 1000 is ignored/, 'one warning at start');
  assert.equal(server.stderr().match(/--active-ttl/g).length, 1, 'only one');
});

test('a Redis out of memory (maxmemory, noeviction): writes are 507 store_full and counted, reads go on, writes resume when memory is freed', async () => {
  const store = await startRedis();
  const srv = await startServer(['--redis', store.url]);
  try {
    const g = await createGame(srv);
    assert.equal(await store.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction'), 'OK');
    assert.equal(await store.command('CONFIG', 'SET', 'maxmemory', '1'), 'OK');
    const create = expectProblem(await post(srv, '/v1/games', {}), 507, 'store_full');
    assert.match(create.detail, /out of memory/);
    expectProblem(await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 }), 507, 'store_full');
    expectProblem(await change(g, 'white', 'resign', { expected_version: 1 }, { 'idempotency-key': 'full' }), 507, 'store_full');
    assert.equal(await version(g), 1, 'a read still works, and nothing was written');
    assert.equal(await metric(srv, 'chessd_store_full_total'), 3, 'this server\'s three refused writes');
    assert.match((await get(srv, '/metrics')).text, /chessd_http_requests_total\{route="[^"]+",status="507"\} \d+/);
    assert.equal(await store.command('CONFIG', 'SET', 'maxmemory', '0'), 'OK');
    const moved = await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 });
    assert.equal(moved.status, 200, moved.text);
  } finally {
    await store.command('CONFIG', 'SET', 'maxmemory', '0').catch(() => {});
    await srv.stop();
    await store.stop();
  }
});

// --- writes whose answer never came ---

/** Whether the process is stopped (state T in /proc/<pid>/stat). */
function isStopped(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat[stat.lastIndexOf(')') + 2] === 'T';
}

/**
 * A TCP proxy in front of `store` (a startRedis handle) that can stand in the
 * way of the next game write after arming: the first command that carries a
 * game's state text (the compare-and-set script's argument, "chessd-game
 * <format>" in store/game_record.c; a change's load, also a script, sends
 * none). 'pause' SIGSTOPs redis-server and lets the write through only once
 * it is stopped, so Redis holds the write unanswered until resume(); 'lose'
 * lets the write through and swallows its reply.
 */
const isGameWrite = (bytes) => bytes.includes('EVAL') && bytes.includes('\r\nchessd-game ');

async function startProxy(store) {
  let armed = null;
  const sockets = new Set();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(store.port, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let losing = false;
    const end = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
    for (const s of [client, upstream]) { s.on('error', end); s.on('close', end); }
    upstream.on('data', (d) => { if (losing) losing = false; else client.write(d); });
    client.on('data', async (d) => {
      if (armed && isGameWrite(d)) {
        const mode = armed;
        armed = null;
        if (mode === 'lose') losing = true;
        if (mode === 'pause') {
          client.pause();
          store.pause();
          for (let i = 0; !isStopped(store.proc.pid); i++) {
            assert.ok(i < 200, 'redis-server did not stop');
            await new Promise((r) => setTimeout(r, 5));
          }
          client.resume();
        }
      }
      upstream.write(d);
    });
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${proxy.address().port}/0`,
    arm(mode) { armed = mode; },
    get armed() { return armed; },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** A chessd with short Redis timeouts behind a proxy to its own redis-server; fn(store, proxy, srv). */
async function behindProxy(fn) {
  const store = await startRedis();
  const proxy = await startProxy(store);
  const srv = await startServer(['--redis', proxy.url, '--redis-timeout-ms', String(TIMEOUT_MS),
    '--redis-connect-timeout-ms', String(TIMEOUT_MS), '--threads', '4']);
  try {
    await fn(store, proxy, srv);
  } finally {
    store.resume();
    await srv.stop();
    await proxy.close();
    await store.stop();
  }
}

async function timed(fn) {
  const started = performance.now();
  const result = await fn();
  return [result, performance.now() - started];
}

/** Polls GET until the game's version is `want` (Redis runs a held write when it resumes). */
async function waitForVersion(g, want) {
  for (let i = 0; ; i++) {
    const res = await get(g.srv, `/v1/games/${g.id}`);
    if (res.status === 200 && res.body.version === want) return res.body;
    assert.ok(i < 100, `version ${want} never came: ${res.status} ${res.text}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('Redis paused with a move in its socket: 503 outcome_unknown (not store_unavailable), a read is store_unavailable, and after SIGCONT the move is there', async () => {
  await behindProxy(async (store, proxy, srv) => {
    const g = await createGame(srv);
    assert.equal((await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 })).status, 200);

    proxy.arm('pause');
    try {
      const [res, ms] = await timed(() => change(g, 'black', 'moves', { move: 'e5', expected_version: 2 }));
      assert.equal(proxy.armed, null, 'the write went through the proxy');
      const p = expectProblem(res, 503, 'outcome_unknown');
      assert.match(p.detail, /Idempotency-Key/);
      assert.match(p.detail, /GET/);
      assert.match(res.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
      assert.ok(ms < 3 * TIMEOUT_MS + 1000, `the answer took ${Math.round(ms)} ms`);
      // A read changes nothing: it stays store_unavailable.
      expectProblem(await get(srv, `/v1/games/${g.id}`), 503, 'store_unavailable');
      assert.equal(await metric(srv, 'chessd_outcome_unknown_total'), 1, 'this server\'s one unknown outcome');
    } finally {
      store.resume();
    }
    const game = await waitForVersion(g, 3);
    assert.deepEqual(game.moves.map((m) => m.san), ['e4', 'e5'], 'the move answered 503 was made');

    // With an Idempotency-Key, the retry after the pause gets the answer of the write that was made.
    proxy.arm('pause');
    const key = { 'idempotency-key': 'nf3-while-paused' };
    try {
      expectProblem(await change(g, 'white', 'moves', { move: 'Nf3', expected_version: 3 }, key), 503, 'outcome_unknown');
    } finally {
      store.resume();
    }
    await waitForVersion(g, 4);
    const retry = await change(g, 'white', 'moves', { move: 'Nf3', expected_version: 3 }, key);
    assert.equal(retry.status, 200, retry.text);
    assert.equal(retry.body.version, 4);
    assert.deepEqual(retry.body.move, { uci: 'g1f3', san: 'Nf3' });
    assert.equal(retry.body.move_count, 3);
    const after = await waitForVersion(g, 4);
    assert.deepEqual(after.moves.map((m) => m.san), ['e4', 'e5', 'Nf3'], 'made once');
  });
});

test('a write whose reply is lost is settled by reading it back: the answer is the success, and the change is made once', async () => {
  await behindProxy(async (store, proxy, srv) => {
    await createGame(srv); // Redis learns the write script (a lost NOSCRIPT reply would prove nothing)
    // Creation: the game is found as written, and the tokens answered are its own.
    proxy.arm('lose');
    const created = await post(srv, '/v1/games', { white: 'Ann' });
    assert.equal(proxy.armed, null, 'the write went through the proxy');
    assert.equal(created.status, 201, created.text);
    const g = { id: created.body.id, tokens: created.body.tokens, srv };
    assert.equal(await version(g), 1);

    // A move without a key: the record read back is byte for byte the one written.
    proxy.arm('lose');
    const moved = await change(g, 'white', 'moves', { move: 'e4', expected_version: 1 });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.version, 2);
    assert.deepEqual(moved.body.move, { uci: 'e2e4', san: 'e4' });
    assert.equal(moved.body.move_count, 1);

    // With a key: the kept answer is found.
    proxy.arm('lose');
    const key = { 'idempotency-key': 'e5-reply-lost' };
    const keyed = await change(g, 'black', 'moves', { move: 'e5', expected_version: 2 }, key);
    assert.equal(keyed.status, 200, keyed.text);
    assert.equal(keyed.body.version, 3);
    assert.deepEqual(keyed.body.move, { uci: 'e7e5', san: 'e5' });
    const retry = await change(g, 'black', 'moves', { move: 'e5', expected_version: 2 }, key);
    assert.equal(retry.text, keyed.text);

    const game = (await get(srv, `/v1/games/${g.id}`)).body;
    assert.equal(game.version, 3);
    assert.deepEqual(game.moves.map((m) => m.san), ['e4', 'e5']);
  });
});

// --- draws ---

test('repeating your own standing draw offer is 409 draw_already_offered and writes nothing', async () => {
  const g = await createGame();
  const offer = await change(g, 'white', 'draw', { action: 'offer', expected_version: 1 });
  assert.equal(offer.status, 200, offer.text);
  assert.equal(offer.body.draw_offer, 'white');
  const p = expectProblem(await change(g, 'white', 'draw', { action: 'offer', expected_version: 2 }), 409, 'draw_already_offered');
  assert.match(p.detail, /already stands/);
  assert.equal(await version(g), 2, 'the version did not move');
  // The offer still stands: black's offer crosses it, an agreement.
  const agreed = await change(g, 'black', 'draw', { action: 'offer', expected_version: 2 });
  assert.equal(agreed.status, 200, agreed.text);
  assert.equal(agreed.body.termination, 'agreement');
});
