// The finished-games feed (GET /v1/games/finished) and the rules that end
// games nobody watches, over real HTTP and a real Redis (one node, or the
// shared Cluster when run.sh runs the game suites again): games ended in
// every way appear once each, in order, with the game as GET answers it;
// readers page with after= and limit and see the same lines; a timed game
// nobody follows or reads loses on time by the sweep, and so do an overdue
// correspondence move and an idle game; an ending whose feed step failed is
// put there by a sweep; the feed outlives a restart; active games never
// expire (--active-ttl is ignored) and the upgrade pass takes an older
// version's TTL away. Every answer is checked against openapi.yaml
// (each NDJSON line against FinishedGameLine) by http.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, gameRedis } from './server.mjs';
import { get, post, expectProblem } from './http.mjs';

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

/** A new game on srv, which its changes go to. */
async function newGame(body = {}, srv = server) {
  const res = await post(srv, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, body: res.body, srv };
}

/** Plays moves in turn from white (or from `first`), each against the game's version. */
async function play(g, moves, first = 'white') {
  let color = first;
  for (const move of moves) {
    const res = await post(g.srv, `/v1/games/${g.id}/moves`, { move, expected_version: g.version }, auth(g.tokens[color]));
    assert.equal(res.status, 200, `${move}: ${res.text}`);
    g.version = res.body.version;
    color = color === 'white' ? 'black' : 'white';
  }
}

async function change(g, color, action, body = {}) {
  const res = await post(g.srv, `/v1/games/${g.id}/${action}`, { expected_version: g.version, ...body }, auth(g.tokens[color]));
  assert.equal(res.status, 200, `${action}: ${res.text}`);
  g.version = res.body.version;
  return res.body;
}

/** One page: { lines (parsed), text, status }. */
async function page(query = '', srv = server) {
  const res = await get(srv, `/v1/games/finished${query}`);
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type'), /^application\/x-ndjson/);
  const lines = res.text === '' ? [] : res.text.trimEnd().split('\n').map((l) => JSON.parse(l));
  return { lines, text: res.text };
}

/** Every line after the cursor `after` (null: from the oldest), in pages of limit. */
async function readAll(after = null, limit = 1000, srv = server) {
  const out = [];
  for (;;) {
    const q = new URLSearchParams({ limit: String(limit), ...(after ? { after } : {}) });
    const { lines } = await page(`?${q}`, srv);
    if (!lines.length) return out;
    out.push(...lines);
    after = lines.at(-1).cursor;
  }
}

/** The cursor of the feed's last line now (null: empty). */
async function feedEnd(srv = server) {
  return (await readAll(null, 1000, srv)).at(-1)?.cursor ?? null;
}

/** A line with the clock's instant zeroed: it is the read's time. */
const steady = (line) => ({ ...line, game: line.game && { ...line.game, clock: line.game.clock && { ...line.game.clock, at_ms: 0 } } });

/** Polls fn until it returns a truthy value, or fails after ms. */
async function until(fn, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value) return value;
    assert.ok(Date.now() < end, `not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

const gameKeys = (id) => [`chessd:game:{${id}}`, `chessd:moves:{${id}}`, `chessd:history:{${id}}`];

async function metric(srv, name) {
  const text = (await get(srv, '/metrics')).text;
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

test('games ended every way are on the feed once each, in the order they ended, each as GET answers it', async () => {
  const start = await feedEnd();
  const addedBefore = await metric(server, 'chessd_finished_feed_added_total');
  const ended = [];
  const resigned = await newGame();
  await change(resigned, 'black', 'resign');
  ended.push([resigned.id, 'resigned', '1-0', 'resignation']);
  const agreed = await newGame();
  await play(agreed, ['e4', 'e5']);
  await change(agreed, 'white', 'draw', { action: 'offer' });
  await change(agreed, 'black', 'draw', { action: 'accept' });
  ended.push([agreed.id, 'draw', '1/2-1/2', 'agreement']);
  const aborted = await newGame();
  await change(aborted, 'white', 'abort');
  ended.push([aborted.id, 'aborted', '*', 'aborted']);
  const mated = await newGame();
  await play(mated, ['f3', 'e5', 'g4', 'Qh4#']);
  ended.push([mated.id, 'checkmate', '0-1', 'checkmate']);
  const hill = await newGame({ variant: 'kingOfTheHill' });
  await play(hill, ['e3', 'a6', 'Ke2', 'a5', 'Kd3', 'a4', 'Ke4']);
  ended.push([hill.id, 'variant_end', '1-0', 'king_of_the_hill']);
  const imported = await newGame({ pgn: '[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1' });
  ended.push([imported.id, 'checkmate', '0-1', 'checkmate']);
  const playing = await newGame();
  await play(playing, ['d4']);

  const lines = await readAll(start);
  assert.deepEqual(lines.map((l) => [l.id, l.status, l.result, l.termination]), ended,
    'each ended game once, in order; the game still played is not there');
  for (const line of lines) {
    const one = await get(server, `/v1/games/${line.id}?legal_moves=false`);
    assert.deepEqual(steady(line).game, steady({ game: one.body }).game, `${line.id}: the game as GET answers it`);
    assert.equal(line.ended_at, one.body.updated_at);
  }
  // Repeat reads take nothing off: a second reader sees the same lines.
  assert.deepEqual((await readAll(start)).map(steady), lines.map(steady));
  assert.equal(await metric(server, 'chessd_finished_feed_added_total'), (addedBefore ?? 0) + ended.length);
});

test('two readers page through the whole feed with after= and limit, and see the same lines; a page ends', async () => {
  for (let i = 0; i < 5; i++) await change(await newGame(), 'white', 'resign');
  const whole = await readAll();
  assert.ok(whole.length >= 5);
  const reader = (limit) => readAll(null, limit);
  const [byTwo, byThree] = await Promise.all([reader(2), reader(3)]);
  assert.deepEqual(byTwo.map(steady), whole.map(steady));
  assert.deepEqual(byThree.map(steady), whole.map(steady));
  const cursors = whole.map((l) => l.cursor);
  assert.equal(new Set(cursors).size, cursors.length, 'a cursor a line');
  const first = await page('?limit=1');
  assert.deepEqual(first.lines.map((l) => l.cursor), [cursors[0]], 'without after: from the oldest kept');
  const rest = await page(`?after=${encodeURIComponent(cursors[1])}&limit=2`);
  assert.deepEqual(rest.lines.map((l) => l.cursor), cursors.slice(2, 4), 'strictly after the cursor');
  assert.deepEqual((await page(`?after=${cursors.at(-1)}`)).lines, [], 'nothing newer: an empty page');
  assert.deepEqual((await page('?after=0-1&limit=1')).lines.map((l) => l.cursor), [cursors[0]],
    'a cursor older than the oldest kept reads from the oldest kept');
  assert.equal((await page()).lines.length, Math.min(100, whole.length), 'a page holds 100 lines by default');
});

test('the bounds: a cursor that is none, a limit outside 1..1000, an unknown parameter, another method', async () => {
  for (const bad of ['x', '12', '1-', '-1', '1-2-3', '99999999999999999999-0', '']) {
    expectProblem(await get(server, `/v1/games/finished?after=${encodeURIComponent(bad)}`), 400, 'invalid_parameter');
  }
  for (const bad of ['0', '1001', '-1', '1.5', 'ten', '']) {
    expectProblem(await get(server, `/v1/games/finished?limit=${encodeURIComponent(bad)}`), 400, 'invalid_parameter');
  }
  expectProblem(await get(server, '/v1/games/finished?cursor=1-0'), 400, 'unknown_parameter');
  expectProblem(await post(server, '/v1/games/finished', {}), 405, 'method_not_allowed');
  assert.equal((await page('?limit=1000')).lines.length <= 1000, true);
});

test('a timed game nobody follows or reads loses on time by the sweep, and is on the feed', async () => {
  const start = await feedEnd();
  const g = await newGame({ clock: { initial_ms: 1000 } });
  await play(g, ['e4', 'e5']);
  // White's flag falls a second later; nothing reads the game: only Redis is looked at.
  await until(async () => /\nstate timeout\n/.test(String(await redis.command('HGET', gameKeys(g.id)[0], 'state') ?? '')),
    6000, 'the game ended on time in Redis');
  const [line] = await until(async () => {
    const lines = (await readAll(start)).filter((l) => l.id === g.id);
    return lines.length ? lines : null;
  }, 3000, 'the game on the feed');
  assert.deepEqual([line.status, line.result, line.termination], ['timeout', '0-1', 'time_forfeit']);
  assert.equal(line.game.status, 'timeout');
  assert.equal(await redis.command('ZSCORE', 'chessd:{games}:deadlines', g.id), null, 'its deadline is cleared');
});

test('an overdue correspondence move and an idle game, nobody reading either, end by the sweep and reach the feed', async () => {
  // Replicas share one --idle-end: this one's days and idle end are seconds, so it runs alone.
  await server.stop();
  const quick = await startServer(['--redis', redis.url, '--correspondence-day', '1', '--idle-end', '2']);
  try {
    const start = await feedEnd(quick);
    const letter = await newGame({ days_per_move: 1 }, quick);
    await play(letter, ['e4', 'e5']);
    const idle = await newGame({}, quick);
    await play(idle, ['d4', 'd5', 'c4']);
    const untouched = await newGame({}, quick);
    const lines = await until(async () => {
      const found = (await readAll(start, 1000, quick)).filter((l) => [letter.id, idle.id, untouched.id].includes(l.id));
      return found.length === 3 ? found : null;
    }, 9000, 'the three games on the feed');
    const ending = Object.fromEntries(lines.map((l) => [l.id, [l.status, l.result, l.termination]]));
    assert.deepEqual(ending[letter.id], ['timeout', '0-1', 'time_forfeit'], 'White\'s day ran out');
    assert.deepEqual(ending[idle.id], ['timeout', '1-0', 'idle_end'], 'Black left the game idle');
    assert.deepEqual(ending[untouched.id].slice(0, 2), ['aborted', '*'], 'idle before both moved');
    for (const id of [letter.id, idle.id, untouched.id])
      assert.equal(await redis.command('ZSCORE', 'chessd:{games}:deadlines', id), null);
  } finally {
    await quick.stop();
    server = await startServer(['--redis', redis.url]);
  }
});

test('an ending whose feed step failed is put on the feed by a sweep, once', async () => {
  const start = await feedEnd();
  // The feed's ids turned into another type: the ending's own feed step fails.
  const saved = await redis.command('DUMP', 'chessd:{games}:finished-ids');
  await redis.command('DEL', 'chessd:{games}:finished-ids');
  await redis.command('SET', 'chessd:{games}:finished-ids', 'in the way');
  const g = await newGame();
  await change(g, 'black', 'resign');
  assert.deepEqual((await readAll(start)).filter((l) => l.id === g.id), [], 'not on the feed yet');
  assert.notEqual(await redis.command('ZSCORE', 'chessd:{games}:deadlines', g.id), null, 'the ending is pending');
  await redis.command('DEL', 'chessd:{games}:finished-ids');
  if (saved) await redis.command('RESTORE', 'chessd:{games}:finished-ids', '0', saved);
  const lines = await until(async () => {
    const found = (await readAll(start)).filter((l) => l.id === g.id);
    return found.length ? found : null;
  }, 9000, 'the sweep put the game on the feed');
  assert.equal(lines.length, 1);
  await sleep(300);
  assert.equal((await readAll(start)).filter((l) => l.id === g.id).length, 1, 'once');
  assert.equal(await redis.command('ZSCORE', 'chessd:{games}:deadlines', g.id), null);
});

test('the feed outlives its replica: another chessd on the same Redis reads the same lines', async () => {
  await change(await newGame(), 'white', 'resign');
  const before = await readAll();
  const other = await startServer(['--redis', redis.url]);
  try {
    assert.deepEqual((await readAll(null, 1000, other)).map(steady), before.map(steady));
    await server.stop();
    server = await startServer(['--redis', redis.url]);
    assert.deepEqual((await readAll(null, 1000, server)).map(steady), before.map(steady), 'after a restart');
    const length = await until(() => metric(server, 'chessd_finished_feed_length'), 8000, 'the feed length read');
    assert.equal(length, before.length);
  } finally {
    await other.stop();
  }
});

test('--active-ttl 1 deletes nothing, and the upgrade pass takes the TTL an older chessd gave away', async () => {
  const ignoring = await startServer(['--redis', redis.url, '--active-ttl', '1']);
  let timed;
  try {
    assert.match(ignoring.stderr(), /--active-ttl \(CHESSD_ACTIVE_TTL\) 1 is ignored/);
    const g = await newGame({}, ignoring);
    timed = await newGame({ clock: { initial_ms: 600000 } }, ignoring);
    await sleep(2500);
    assert.equal((await get(ignoring, `/v1/games/${g.id}`)).status, 200, 'kept well past --active-ttl');
    for (const key of gameKeys(g.id)) assert.equal(await redis.command('TTL', key), -1);
  } finally {
    await ignoring.stop();
  }
  // As an older chessd left it: an expiry on every key of an active game, and no deadline entry.
  for (const key of gameKeys(timed.id)) await redis.command('EXPIRE', key, '3600');
  await redis.command('ZREM', 'chessd:{games}:deadlines', timed.id);
  await redis.command('DEL', 'chessd:{upgrade}:deadline-pass:1:idle-2592000');
  const upgraded = await startServer(['--redis', redis.url]);
  try {
    await until(async () => (await Promise.all(gameKeys(timed.id).map((k) => redis.command('TTL', k)))).every((t) => t === -1),
      5000, 'the pass took the TTL away');
    assert.notEqual(await redis.command('ZSCORE', 'chessd:{games}:deadlines', timed.id), null, 'and indexed its deadline');
    await until(() => /upgrade pass 1 of 2: \d+ games read, [1-9]\d* active ones kept/.test(upgraded.stderr()), 3000, 'the pass says so');
  } finally {
    await upgraded.stop();
  }
});
