// Bulks (POST /v1/games/bulk), over real HTTP and a real Redis (one node, or
// the Cluster when run.sh runs the game suites again): a round of 500 games
// in one call, all written or none; one bad pairing refuses the bulk and
// names its index; a retry with its Idempotency-Key gets the first answer;
// the organiser starts the clocks and cancels with the bulk's token; export
// and a multi-game stream by bulk; a bulk is one creation against the limit,
// its games bounded besides;
// and a replica killed while it writes a bulk leaves all of it or nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, gameRedis, redisCommands } from './server.mjs';
import { call, get, post, expectProblem, nodeRequest } from './http.mjs';
import { openEvents } from './events.mjs';

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

const auth = (token) => ({ headers: { authorization: `Bearer ${token}` } });
const newKey = () => randomBytes(18).toString('base64url');
const CLOCK = { initial_ms: 300000, increment_ms: 2000 };

function pairings(n, prefix = 'P') {
  return Array.from({ length: n }, (_, i) => ({ white: `${prefix}${i}w`, black: `${prefix}${i}b`, tags: { Board: String(i + 1) } }));
}

async function bulk(body, key = newKey(), srv = server) {
  return post(srv, '/v1/games/bulk', body, { headers: { 'idempotency-key': key } });
}

/** Every game key the store holds (each master's, on a Cluster). */
async function gameKeys() {
  const ports = redis.cluster ? (await redis.cluster.masters()).map((m) => m.port) : [new URL(redis.url).port];
  const keys = [];
  for (const port of ports) keys.push(...(await redisCommands(Number(port), [['KEYS', 'chessd:game:*']]))[0]);
  return keys;
}

test('a round of 500 games in one call: every game readable, with the shared and its own tags, and playable', async () => {
  const before = (await gameKeys()).length;
  const res = await bulk({ games: pairings(500), clock: CLOCK, tags: { Event: 'Club', Round: '3' } });
  assert.equal(res.status, 201, res.text);
  const b = res.body;
  assert.equal(b.count, 500);
  assert.equal(b.games.length, 500);
  assert.equal(res.headers.get('location'), `/v1/games/bulk/${b.id}`);
  assert.equal(new Set(b.games.map((g) => g.id)).size, 500);
  assert.equal((await gameKeys()).length, before + 500);
  // The export by bulk reads them all, in order, as GET answers each.
  const exp = await post(server, '/v1/games/export', { bulk: b.id });
  assert.equal(exp.status, 200, exp.text);
  const lines = exp.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((g) => g.id), b.games.map((g) => g.id));
  for (const [i, g] of lines.entries()) {
    assert.equal(g.bulk, b.id);
    assert.equal(g.white.name, `P${i}w`);
    assert.deepEqual(g.tags, { Event: 'Club', Round: '3', Board: String(i + 1) });
    assert.equal(g.clock.white.initial_ms, 300000);
  }
  // A game of the bulk plays like any: its players' tokens move, the bulk's does not.
  const g = b.games[137];
  const refused = await post(server, `/v1/games/${g.id}/moves`, { move: 'e4', expected_version: 1 }, auth(b.token));
  expectProblem(refused, 403, 'forbidden');
  const moved = await post(server, `/v1/games/${g.id}/moves`, { move: 'e4', expected_version: 1 }, auth(g.white.token));
  assert.equal(moved.status, 200, moved.text);
  const state = await get(server, `/v1/games/bulk/${b.id}`);
  assert.equal(state.status, 200, state.text);
  assert.equal(state.body.games.length, 500);
  assert.equal(state.body.games[137].plies, 1);
  assert.equal(state.body.games[136].plies, 0);
  assert.ok(state.body.games.every((s) => s.status === 'active'));
});

test('a bulk in a variant, from a Chess960 start, or by correspondence: every game takes the shared settings', async () => {
  for (const [settings, check] of [
    [{ variant: 'crazyhouse', clock: CLOCK }, (g) => g.variant === 'crazyhouse'],
    [{ chess960_position: 0 }, (g) => g.chess960 && g.chess960_position === 0],
    [{ days_per_move: 5, rules: ['no_claim_win'], draw_odds: 'black' }, (g) => g.days_per_move === 5 && g.draw_odds === 'black'],
  ]) {
    const res = await bulk({ games: pairings(3), ...settings });
    assert.equal(res.status, 201, res.text);
    for (const { id } of res.body.games) {
      const read = await get(server, `/v1/games/${id}`);
      assert.ok(check(read.body), `${JSON.stringify(settings)}: ${read.text.slice(0, 300)}`);
    }
  }
});

test('one bad pairing refuses the bulk, naming its index, and no game is made', async () => {
  const before = (await gameKeys()).length;
  const games = pairings(20);
  games[7].tags = { WhiteElo: 'strong' };
  const bad = expectProblem(await bulk({ games, clock: CLOCK }), 400, 'invalid_tag');
  assert.equal(bad.index, 7);
  assert.equal(bad.pointer, '/games/7');
  assert.match(bad.detail, /^games\[7\]: /);
  const unknown = pairings(3);
  unknown[2].colour = 'white';
  const u = expectProblem(await bulk({ games: unknown }), 400, 'unknown_field');
  assert.equal(u.index, 2);
  const long = pairings(2);
  long[1].black = 'x'.repeat(65);
  assert.equal(expectProblem(await bulk({ games: long }), 400, 'invalid_field').index, 1);
  const big = expectProblem(await bulk({ games: Array.from({ length: 501 }, () => ({})) }), 413, 'bulk_too_large');
  assert.deepEqual([big.limit, big.max], ['games', 500]);
  expectProblem(await bulk({ games: [] }), 400, 'invalid_field');
  expectProblem(await bulk({ games: pairings(2), clock: { initial_ms: -5 } }), 400, 'invalid_field');
  expectProblem(await bulk({ games: pairings(2), engine: { level: 3 } }), 400, 'unknown_field');
  assert.equal((await gameKeys()).length, before, 'nothing was made');
});

test('a retry with the Idempotency-Key gets the first answer and makes nothing; the key with another body is refused', async () => {
  const key = newKey();
  const body = { games: pairings(30, 'R'), days_per_move: 3 };
  const first = await bulk(body, key);
  assert.equal(first.status, 201, first.text);
  const count = (await gameKeys()).length;
  const again = await bulk(body, key);
  assert.equal(again.status, 201, again.text);
  assert.deepEqual(again.body, first.body);
  assert.equal((await gameKeys()).length, count);
  expectProblem(await bulk({ ...body, days_per_move: 4 }, key), 422, 'idempotency_key_reused');
  expectProblem(await bulk(body, 'short'), 400, 'weak_idempotency_key');
});

test('start-clocks with the bulk\'s token starts every clock; a cancel then is refused, naming a game', async () => {
  const res = await bulk({ games: pairings(4), clock: CLOCK, start_clocks_at: Date.now() + 3600000 });
  assert.equal(res.status, 201, res.text);
  const b = res.body;
  const path = `/v1/games/bulk/${b.id}/start-clocks`;
  expectProblem(await post(server, path, undefined), 401, 'unauthorized');
  expectProblem(await post(server, path, undefined, auth(b.games[0].white.token)), 403, 'forbidden');
  const started = await post(server, path, undefined, auth(b.token));
  assert.equal(started.status, 200, started.text);
  assert.deepEqual(started.body, { id: b.id, started: 4, count: 4 });
  for (const g of b.games) {
    const read = await get(server, `/v1/games/${g.id}`);
    assert.ok(read.body.clock.start_at_ms <= Date.now() + 1000, 'started now, not in an hour');
    assert.ok(read.body.deadline_ms > 0 && read.body.deadline_ms <= read.body.clock.start_at_ms + 300000);
  }
  const again = await post(server, path, undefined, auth(b.token));
  assert.deepEqual(again.body, { id: b.id, started: 0, count: 4 }, 'clocks that run are left');
  const cancel = expectProblem(await call(server, 'DELETE', `/v1/games/bulk/${b.id}`, auth(b.token)), 409, 'bulk_started');
  assert.ok(b.games.some((g) => g.id === cancel.game));
  const state = await get(server, `/v1/games/bulk/${b.id}`);
  assert.ok(state.body.clocks_started_at_ms > 0);
  assert.equal(state.body.cancelled, false);
  assert.ok(state.body.games.every((s) => s.status === 'active'), 'nothing was cancelled');
});

test('a bulk\'s state shows a flag that fell, at Redis\'s time, whether or not it was recorded yet', async () => {
  const res = await bulk({ games: pairings(3), clock: { initial_ms: 1000 } });
  const b = res.body;
  const started = await post(server, `/v1/games/bulk/${b.id}/start-clocks`, undefined, auth(b.token));
  assert.equal(started.status, 200, started.text);
  await sleep(1500);
  const state = await get(server, `/v1/games/bulk/${b.id}`);
  assert.deepEqual(state.body.games.map((g) => [g.status, g.result, g.termination]),
    Array(3).fill(['timeout', '0-1', 'time_forfeit']), 'White, to move, lost on time');
});

test('a cancel before the games begin aborts every game, whatever their rules, and the bulk goes after its games', async () => {
  const res = await bulk({ games: pairings(3), clock: CLOCK, rules: ['no_abort'] });
  assert.equal(res.status, 201, res.text);
  const b = res.body;
  expectProblem(await call(server, 'DELETE', `/v1/games/bulk/${b.id}`, auth(newKey())), 403, 'forbidden');
  const cancelled = await call(server, 'DELETE', `/v1/games/bulk/${b.id}`, auth(b.token));
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.deepEqual(cancelled.body, { id: b.id, cancelled: 3, count: 3 });
  const state = await get(server, `/v1/games/bulk/${b.id}`);
  assert.equal(state.body.cancelled, true);
  assert.deepEqual(state.body.games.map((g) => [g.status, g.termination]), Array(3).fill(['aborted', 'aborted']));
  // No game of it plays: its record expires with them (--finished-ttl), not before.
  const ttl = await redis.command('TTL', `chessd:bulk:{${b.id}}`);
  assert.ok(ttl > 0, `the bulk expires once its games are over (TTL ${ttl})`);
  const live = await bulk({ games: pairings(2), days_per_move: 2 });
  assert.equal(await redis.command('TTL', `chessd:bulk:{${live.body.id}}`), -1, 'a bulk in play never expires');
  expectProblem(await get(server, '/v1/games/bulk/AAAAAAAAAAAAAAAA'), 404, 'bulk_not_found');
  expectProblem(await call(server, 'DELETE', '/v1/games/bulk/AAAAAAAAAAAAAAAA', auth(b.token)), 404, 'bulk_not_found');
});

test('a multi-game stream by bulk follows every game of it', async () => {
  const res = await bulk({ games: pairings(5), clock: CLOCK });
  const b = res.body;
  const stream = await openEvents(server, null, { path: '/v1/games/events', json: { bulk: b.id } });
  assert.equal(stream.status, 200);
  const ids = new Set(b.games.map((g) => g.id));
  await stream.until((s) => s.events.filter((e) => e.data.type === 'game' && ids.has(e.data.id)).length === 5, 5000,
    'each game\'s state');
  const g = b.games[3];
  const moved = await post(server, `/v1/games/${g.id}/moves`, { move: 'd4', expected_version: 1 }, auth(g.white.token));
  assert.equal(moved.status, 200, moved.text);
  await stream.until((s) => s.events.some((e) => e.data.id === g.id && e.data.version === 2), 5000, 'the move');
  stream.close();
  expectProblem(await post(server, '/v1/games/events', { bulk: 'AAAAAAAAAAAAAAAA' }), 404, 'bulk_not_found');
  expectProblem(await post(server, '/v1/games/export', { bulk: b.id, ids: [g.id] }), 400, 'conflicting_fields');
});

test('a bulk is one creation against the per-address limit', async () => {
  const limited = await startServer(['--redis', redis.url, '--rate-limit-create', '1']);
  const json = { 'content-type': 'application/json' };
  /** Single creations from address until one is refused: how many passed. */
  async function passes(localAddress) {
    for (let n = 0; ; n++) {
      const res = await nodeRequest(limited, { method: 'POST', path: '/v1/games', headers: json, body: '{}', agent: false, localAddress });
      if (res.status === 429) return n;
      assert.equal(res.status, 201, res.text);
      assert.ok(n < 100, 'the limit holds');
    }
  }
  try {
    const burst = await passes('127.0.0.2');
    const res = await nodeRequest(limited, { method: 'POST', path: '/v1/games/bulk', headers: { ...json, 'idempotency-key': newKey() },
      body: JSON.stringify({ games: pairings(50) }), agent: false, localAddress: '127.0.0.3' });
    assert.equal(res.status, 201, res.text);
    assert.equal(await passes('127.0.0.3'), burst - 1, 'a bulk of 50 spent one creation of the burst');
  } finally {
    await limited.stop();
  }
});

test('a bulk\'s games are bounded per address besides: two full rounds at once, then their rate', async () => {
  const limited = await startServer(['--redis', redis.url, '--rate-limit-bulk-games', '1']);
  try {
    for (let round = 0; round < 2; round++) {
      const res = await bulk({ games: pairings(500, `L${round}`) }, newKey(), limited);
      assert.equal(res.status, 201, res.text);
    }
    const refused = expectProblem(await bulk({ games: pairings(500, 'L2') }, newKey(), limited), 429, 'rate_limited');
    assert.deepEqual([refused.limit, refused.max], ['rate-limit-bulk-games', 1]);
    assert.ok(refused.retry_after_s >= 400, `a bulk of 500 waits for 500 games of budget (${refused.retry_after_s} s)`);
    const single = await post(limited, '/v1/games', {});
    assert.equal(single.status, 201, 'single creations have their own limit');
  } finally {
    await limited.stop();
  }
});

test('a replica killed while it writes a bulk leaves the whole bulk or nothing, and the retry completes it once', async () => {
  const survivor = await startServer(['--redis', redis.url]);
  try {
    // How long a bulk of 500 takes here, to kill the writer across that time.
    const probe = await bulk({ games: pairings(500, 'T') }, newKey(), survivor);
    assert.equal(probe.status, 201);
    const t0 = performance.now();
    await bulk({ games: pairings(500, 'U') }, newKey(), survivor);
    const took = performance.now() - t0;
    const seen = { none: 0, all: 0 };
    for (const fraction of [0.1, 0.3, 0.5, 0.7, 0.9, 1.2]) {
      const victim = await startServer(['--redis', redis.url]);
      await get(victim, '/readyz');
      const key = newKey();
      const body = { games: pairings(500, `K${fraction}`), clock: CLOCK };
      const before = (await gameKeys()).length;
      const sent = bulk(body, key, victim).catch(() => null);
      await sleep(took * fraction);
      victim.proc.kill('SIGKILL');
      await sent;
      await victim.exited;
      const after = (await gameKeys()).length - before;
      assert.ok(after === 0 || after === 500, `after the kill ${after} games: a bulk is all or nothing`);
      seen[after ? 'all' : 'none']++;
      const retry = await bulk(body, key, survivor);
      assert.equal(retry.status, 201, retry.text);
      assert.equal((await gameKeys()).length - before, 500, 'the retry completes it once');
      const state = await get(survivor, `/v1/games/bulk/${retry.body.id}`);
      assert.equal(state.body.games.filter((g) => g.status === 'active').length, 500);
    }
    console.log(`# kills: ${seen.none} left nothing, ${seen.all} the whole bulk (a bulk took ${took.toFixed(0)} ms)`);
  } finally {
    await survivor.stop();
  }
});
