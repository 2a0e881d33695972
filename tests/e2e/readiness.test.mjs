// Readiness that matches what a replica can serve: /readyz is 200 while the
// rules API can be served and reports Redis ("up", "down", "off"), 503 while
// Redis is down only with --ready-requires-redis; games in an outage answer
// 503 with Retry-After; --redis none (the default) answers 404 games_disabled
// on every game operation; chessd_redis_up/_configured in /metrics; a boolean
// setting that is not 1, 0, true or false stops chessd at start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startServer, startRedis, CHESSD_BIN } from './server.mjs';
import { get, post, call, nodeRequest, expectProblem, waitForRedis, START_FEN } from './http.mjs';
import { operations } from './openapi.mjs';

const TOKEN_SECRET = 'e2e-readiness-token-secret-0123456789';
const TIMEOUT_MS = 300;
const redisFlags = (url) => ['--redis', url, '--redis-timeout-ms', String(TIMEOUT_MS),
  '--redis-connect-timeout-ms', String(TIMEOUT_MS)];
const withSecret = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The value of an unlabelled metric in /metrics, or undefined when it is absent. */
async function metric(srv, name) {
  const res = await get(srv, '/metrics');
  assert.equal(res.status, 200);
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text);
  return m ? Number(m[1]) : undefined;
}

function expectReady(res, redis) {
  assert.equal(res.status, 200, res.text);
  const type = typeof res.headers.get === 'function' ? res.headers.get('content-type') : res.headers['content-type'];
  assert.equal(type, 'application/json');
  assert.equal(res.body.status, 'ready');
  assert.equal(res.body.redis, redis, res.text);
  if (redis === 'down') {
    assert.equal(typeof res.body.redis_reason, 'string', res.text);
    assert.ok('redis_fault' in res.body, res.text);
  } else {
    // Redis's memory policy as last read (redis_memory.test.mjs), with a Redis only.
    const { redis_memory: memory, ...rest } = res.body;
    assert.deepEqual(rest, { status: 'ready', redis, engine: { state: 'off' } }); // --engine none (server.mjs)
    assert.equal(typeof memory?.policy, redis === 'off' ? 'undefined' : 'string', res.text);
  }
}

function expectRetryLater(res, code, what) {
  expectProblem(res, 503, code);
  assert.match(res.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/, `${what}: a 503 must say when to retry`);
}

const createGame = (srv) => post(srv, '/v1/games', {});
const playMove = (srv, created, move, version) => post(srv, `/v1/games/${created.body.id}/moves`,
  { move, expected_version: version }, { headers: { authorization: `Bearer ${created.body.tokens.white}` } });

test('Redis stopped: /readyz stays 200 reporting "down", the rules API serves, games answer 503 with Retry-After; restarted: "up" and games work', async () => {
  const redis = await startRedis();
  const srv = await startServer([...redisFlags(redis.url), '--threads', '2'], withSecret);
  try {
    // The gauge is the readiness watcher's latest probe, made before the server listens.
    expectReady(await get(srv, '/readyz'), 'up');
    assert.equal(await metric(srv, 'chessd_redis_up'), 1);
    assert.equal(await metric(srv, 'chessd_redis_configured'), 1);
    const game = await createGame(srv);
    assert.equal(game.status, 201, game.text);

    await redis.stop();
    // The watcher probes every second: /readyz says so within that, never waiting for Redis itself.
    const down = await waitForRedis(srv, 'down');
    assert.equal(down.body.redis_fault, 'unreachable', down.text);
    assert.match(down.body.redis_reason, /127\.0\.0\.1:\d+: Connection refused/);
    assert.equal(await metric(srv, 'chessd_redis_up'), 0, 'the gauge follows the latest check');
    assert.equal(await metric(srv, 'chessd_redis_fault{fault="unreachable"}'), 1);
    assert.equal(await metric(srv, 'chessd_redis_fault{fault="timeout"}'), 0);
    assert.equal((await get(srv, '/healthz')).status, 200);
    const position = await post(srv, '/v1/position', { fen: START_FEN });
    assert.equal(position.status, 200, position.text);
    assert.equal(position.body.legal_moves.length, 20);
    const line = await post(srv, '/v1/position/moves', { moves: ['e4', 'e5', 'Qh5', 'Nc6', 'Bc4', 'Nf6', 'Qxf7#'] });
    assert.equal(line.body.position.status, 'checkmate');
    assert.equal((await get(srv, '/v1/perft?depth=2')).body.nodes, 400);
    expectRetryLater(await createGame(srv), 'store_unavailable', 'POST /v1/games');
    expectRetryLater(await get(srv, `/v1/games/${game.body.id}`), 'store_unavailable', 'GET game');
    expectRetryLater(await get(srv, `/v1/games/${game.body.id}/pgn`), 'store_unavailable', 'GET pgn');
    expectRetryLater(await playMove(srv, game, 'e4', 1), 'store_unavailable', 'POST move');
    // Still ready after those, on every thread.
    for (let i = 0; i < 4; i++) expectReady(await nodeRequest(srv, { path: '/readyz', agent: false }), 'down');

    await redis.start(); // the same port, without the data
    await waitForRedis(srv, 'up');
    assert.equal(await metric(srv, 'chessd_redis_up'), 1);
    const again = await createGame(srv);
    assert.equal(again.status, 201, again.text);
    const moved = await playMove(srv, again, 'e4', 1);
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.version, 2);
  } finally {
    await srv.stop();
    await redis.stop();
  }
});

test('--ready-requires-redis (flag alone, or CHESSD_READY_REQUIRES_REDIS=1): /readyz 503 store_unavailable while Redis is down, 200 once it is back; =0 wins over the variable', async () => {
  const redis = await startRedis();
  const [flag, variable, off] = await Promise.all([
    startServer([...redisFlags(redis.url), '--ready-requires-redis'], withSecret),
    startServer(redisFlags(redis.url), { env: { ...withSecret.env, CHESSD_READY_REQUIRES_REDIS: '1' } }),
    startServer([...redisFlags(redis.url), '--ready-requires-redis=0'],
      { env: { ...withSecret.env, CHESSD_READY_REQUIRES_REDIS: 'true' } }),
  ]);
  try {
    for (const srv of [flag, variable, off]) expectReady(await get(srv, '/readyz'), 'up');

    await redis.stop();
    for (const [srv, name] of [[flag, 'flag'], [variable, 'variable']]) {
      let res = await get(srv, '/readyz');
      for (const deadline = Date.now() + 5000; res.status === 200 && Date.now() < deadline; res = await get(srv, '/readyz'))
        await sleep(50); // the watcher's next probe
      expectRetryLater(res, 'store_unavailable', `/readyz (${name})`);
      assert.equal(res.body.redis, 'down');
      assert.equal(res.body.redis_fault, 'unreachable');
      assert.match(res.body.detail, /game store cannot be used \(unreachable\)/);
      assert.equal((await post(srv, '/v1/position', {})).status, 200, 'the rules API still answers directly');
      assert.equal(await metric(srv, 'chessd_redis_up'), 0);
    }
    expectReady(await get(off, '/readyz'), 'down');

    await redis.start();
    for (const srv of [flag, variable, off]) await waitForRedis(srv, 'up');
  } finally {
    await Promise.all([flag.stop(), variable.stop(), off.stop()]);
    await redis.stop();
  }
});

/** Every game operation of openapi.yaml, with a request that would reach its handler. */
function gameRequests() {
  const ops = operations().filter(([p]) => p.startsWith('/v1/games'));
  assert.ok(ops.length >= 10, `only ${ops.length} game operations in openapi.yaml`);
  return ops.map(([template, method]) => {
    const path = template.replace('{id}', 'abcdefghijklmnopqrstuv');
    const body = method === 'post' ? { move: 'e4', expected_version: 1 } : undefined;
    const headers = { authorization: `Bearer ${'t'.repeat(43)}`, ...(path.endsWith('/events') ? { accept: 'text/event-stream' } : {}) };
    return { method: method.toUpperCase(), path, body, headers };
  });
}

test('--redis none: /readyz 200 "off", the rules API serves, every game operation (events, PGN and long polls too) answers 404 games_disabled', async () => {
  // No CHESSD_TOKEN_SECRET: without games none is needed, and no warning about one is printed.
  const srv = await startServer(['--redis', 'none'], { env: { CHESSD_TOKEN_SECRET: undefined } });
  try {
    expectReady(await get(srv, '/readyz'), 'off');
    assert.equal((await post(srv, '/v1/position', {})).status, 200);
    assert.equal((await get(srv, '/v1/perft?depth=3')).body.nodes, 8902);
    const line = await post(srv, '/v1/position/moves', { moves: ['f3', 'e5', 'g4', 'Qh4#'] });
    assert.equal(line.body.position.status, 'checkmate');

    for (const { method, path, body, headers } of gameRequests()) {
      const res = await call(srv, method, path, body === undefined ? { headers } : { json: body, headers });
      const problem = expectProblem(res, 404, 'games_disabled');
      assert.match(problem.detail, /no Redis|without Redis/, `${method} ${path}`);
      assert.equal(res.headers.get('retry-after'), null, `${method} ${path}: nothing to wait for`);
    }
    // A long poll is answered at once, not held.
    const started = Date.now();
    expectProblem(await get(srv, '/v1/games/abcdefghijklmnopqrstuv', { headers: { 'if-none-match': '"1"', prefer: 'wait=30' } }),
      404, 'games_disabled');
    assert.ok(Date.now() - started < 2000, 'the long poll was held');
    // HEAD on a game route: the same status, no body.
    const head = await nodeRequest(srv, { method: 'HEAD', path: '/v1/games/abcdefghijklmnopqrstuv/pgn' });
    assert.equal(head.status, 404);
    assert.equal(head.text, '');
    // The creation answer under an Idempotency-Key too (checked before any key handling).
    expectProblem(await post(srv, '/v1/games', {}, { headers: { 'idempotency-key': 'k'.repeat(22) } }), 404, 'games_disabled');

    assert.equal(await metric(srv, 'chessd_redis_configured'), 0);
    assert.equal(await metric(srv, 'chessd_redis_up'), undefined, 'no chessd_redis_up without a Redis');
    assert.equal(await metric(srv, 'chessd_redis_connects_total'), 0, 'nothing connects to Redis');
    assert.match(srv.stderr(), /no Redis configured \(--redis none\): games are off/);
    assert.doesNotMatch(srv.stderr(), /CHESSD_TOKEN_SECRET is not set/);
    expectReady(await get(srv, '/readyz'), 'off');
  } finally {
    await srv.stop();
  }
});

test('with nothing configured the default is --redis none (the help says so)', async () => {
  const srv = await startServer([], { withRedis: false, env: { CHESSD_REDIS_URL: undefined } });
  try {
    expectReady(await get(srv, '/readyz'), 'off');
    expectProblem(await post(srv, '/v1/games', {}), 404, 'games_disabled');
  } finally {
    await srv.stop();
  }
  const help = spawnSync(CHESSD_BIN, ['serve', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /--redis\s+CHESSD_REDIS_URL\s+none\s/);
  assert.match(help.stdout, /--ready-requires-redis\s+CHESSD_READY_REQUIRES_REDIS\s+false\s/);
});

test('a boolean setting that is not true, false, 1 or 0 stops chessd at start, naming the setting', () => {
  const cases = [
    { args: ['--ready-requires-redis=yes'], env: {}, name: '--ready-requires-redis', value: 'yes' },
    { args: ['--ready-requires-redis='], env: {}, name: '--ready-requires-redis', value: '' },
    { args: ['--ready-requires-redis=TRUE '], env: {}, name: '--ready-requires-redis', value: 'TRUE ' },
    { args: [], env: { CHESSD_READY_REQUIRES_REDIS: 'on' }, name: 'CHESSD_READY_REQUIRES_REDIS', value: 'on' },
    { args: [], env: { CHESSD_READY_REQUIRES_REDIS: '2' }, name: 'CHESSD_READY_REQUIRES_REDIS', value: '2' },
  ];
  const base = { ...process.env };
  delete base.CHESSD_READY_REQUIRES_REDIS;
  for (const { args, env, name, value } of cases) {
    const run = spawnSync(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', ...args],
      { encoding: 'utf8', env: { ...base, ...env }, timeout: 5000 });
    assert.equal(run.status, 2, `${JSON.stringify(args)} ${JSON.stringify(env)}: ${run.stderr}`);
    assert.ok(run.stderr.includes(`chessd serve: ${name}: '${value}' must be true, false, 1 or 0`), run.stderr);
  }
  // The flag alone never takes the next argument as its value.
  const separate = spawnSync(CHESSD_BIN, ['serve', '--port', '0', '--ready-requires-redis', 'false'],
    { encoding: 'utf8', env: base, timeout: 5000 });
  assert.equal(separate.status, 2);
  assert.match(separate.stderr, /unknown option 'false'/);
});
