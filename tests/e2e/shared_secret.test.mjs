// Replicas started without CHESSD_TOKEN_SECRET agree on player tokens: three
// of them on one redis-server behind nginx (round robin) share the secret the
// first one stores in Redis (chessd:token-secret). A plain game through the
// balancer, moves of both players landing on every replica, a draw offered
// and declined, GET and PGN; a token from replica 1 used on replicas 2 and 3,
// and a creation's kept answer (sealed under a key from the same secret)
// replayed by the others; the secret never printed. A replica whose Redis is
// down at start answers game requests 503 until Redis comes, then serves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startServer, startRedis, startNginx } from './server.mjs';
import { get, post, expectProblem, sleep, waitForRedis, NOEVICTION } from './http.mjs';

const NO_SECRET = { env: { CHESSD_TOKEN_SECRET: undefined } };
const SECRET_KEY = 'chessd:token-secret';

let redis;
let replicas = [];
let lb;

before(async () => {
  redis = await startRedis();
  replicas = await Promise.all([0, 1, 2].map(() => startServer(['--redis', redis.url, '--threads', '2'], NO_SECRET)));
  lb = await startNginx(replicas.map((r) => r.port));
});

after(async () => {
  await lb?.stop();
  for (const r of replicas) await r.stop();
  await redis?.stop();
});

const auth = (token) => ({ headers: { authorization: `Bearer ${token}` } });

/** A change on game g through target by color's token; asserts 200 and the next version. */
async function changeOk(target, g, color, what, json) {
  const res = await post(target, `/v1/games/${g.id}/${what}`, { ...json, expected_version: g.version }, auth(g.tokens[color]));
  assert.equal(res.status, 200, `${color} ${what} ${JSON.stringify(json)}: ${res.text}`);
  assert.equal(res.body.version, g.version + 1);
  g.version = res.body.version;
  return res.body;
}

async function create(target, json = {}, opts = {}) {
  const res = await post(target, '/v1/games', json, opts);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, text: res.text };
}

test('a plain game through the balancer: moves of both players on every replica, a draw offer declined, GET and PGN', async () => {
  const g = await create(lb, { white: 'Ann', black: 'Bob' });
  const line = ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5', 'a6'];
  for (const [i, move] of line.entries()) {
    const body = await changeOk(lb, g, i % 2 ? 'black' : 'white', 'moves', { move });
    assert.equal(body.move.san, move);
    assert.equal(body.move_count, i + 1);
  }
  expectProblem(await post(lb, `/v1/games/${g.id}/moves`, { move: 'Nf6', expected_version: g.version }, auth(g.tokens.black)),
    403, 'not_your_turn');
  expectProblem(await post(lb, `/v1/games/${g.id}/moves`, { move: 'Ba4', expected_version: g.version }, auth('not-a-token')),
    403, 'forbidden');
  assert.equal((await changeOk(lb, g, 'white', 'draw', { action: 'offer' })).draw_offer, 'white');
  assert.equal((await changeOk(lb, g, 'black', 'draw', { action: 'decline' })).draw_offer, null);
  await changeOk(lb, g, 'white', 'moves', { move: 'Ba4' });
  await changeOk(lb, g, 'black', 'moves', { move: 'Nf6' });

  const read = await get(lb, `/v1/games/${g.id}`);
  assert.equal(read.status, 200);
  assert.equal(read.body.version, g.version);
  assert.deepEqual(read.body.moves.map((m) => m.san), [...line, 'Ba4', 'Nf6']);
  assert.equal(read.body.status, 'active');
  assert.equal(read.body.draw_offer, null);
  const pgn = await get(lb, `/v1/games/${g.id}/pgn`);
  assert.equal(pgn.status, 200);
  assert.match(pgn.headers.get('content-type'), /^application\/x-chess-pgn/);
  assert.match(pgn.text, /\[White "Ann"\][\s\S]*\[Black "Bob"\][\s\S]*1\. e4 e5 2\. Nf3 Nc6 3\. Bb5 a6 4\. Ba4 Nf6 \*/);

  // Every replica checked tokens of this game and accepted them (its access log).
  const served = (r) => r.logLines().filter((l) => l.method === 'POST' && l.path.startsWith(`/v1/games/${g.id}/`) && l.status === 200);
  for (let waited = 0; replicas.reduce((n, r) => n + served(r).length, 0) < 10 && waited < 2000; waited += 20) await sleep(20);
  assert.deepEqual(replicas.map((r) => served(r).length > 0), [true, true, true],
    `changes with 200 per replica: ${replicas.map((r) => served(r).length).join(' / ')}`);
});

test('a token from replica 1 works on replicas 2 and 3, and a kept creation answer replays on each', async () => {
  const [one, two, three] = replicas;
  const g = await create(one);
  await changeOk(two, g, 'white', 'moves', { move: 'd4' });
  await changeOk(three, g, 'black', 'moves', { move: 'd5' });
  await changeOk(one, g, 'white', 'moves', { move: 'c4' });
  await changeOk(three, g, 'black', 'moves', { move: 'e6' });

  const key = { headers: { 'idempotency-key': randomBytes(16).toString('base64url') } };
  const first = await create(one, { white: 'Cy' }, key);
  for (const r of [two, three]) assert.equal((await create(r, { white: 'Cy' }, key)).text, first.text);
});

test('the shared secret is in Redis once, made by one replica, and never printed', async () => {
  const secret = await redis.command('GET', SECRET_KEY);
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
  const made = replicas.filter((r) => r.stderr().includes('token secret: made one and stored it in Redis'));
  const read = replicas.filter((r) => r.stderr().includes('token secret: using the one in Redis'));
  assert.equal(made.length, 1, replicas.map((r) => r.stderr()).join('\n---\n'));
  assert.equal(read.length, 2);
  for (const r of replicas) {
    assert.match(r.stderr(), /warning: CHESSD_TOKEN_SECRET is not set/);
    assert.ok(!r.stderr().includes(secret) && !r.stdout().includes(secret), 'the secret is printed');
  }
});

test('with Redis down at start, game requests answer 503 store_unavailable, never a secret of its own; then it serves', async () => {
  const down = await startRedis();
  await down.stop();
  const server = await startServer(['--redis', down.url, '--redis-connect-timeout-ms', '200', '--threads', '4'], NO_SECRET);
  try {
    // Redis, not the secret, is what is wrong: the problem says so.
    const refused = expectProblem(await post(server, '/v1/games', {}), 503, 'store_unavailable');
    assert.equal(refused.store_fault, 'unreachable', JSON.stringify(refused));
    assert.match(refused.detail, /cannot be reached/);
    assert.equal((await get(server, '/readyz')).body.redis, 'down');
    await down.start();
    await waitForRedis(server, 'up');
    // A burst on the replica's threads: one asks Redis, the others wait for its answer.
    const burst = await Promise.all(Array.from({ length: 8 }, () => post(server, '/v1/games', {})));
    assert.deepEqual(burst.map((r) => r.status), Array(8).fill(201), burst.map((r) => r.text).join('\n'));
    // Redis's memory policy is read again every second until Redis first answers.
    let ready = await get(server, '/readyz');
    for (let i = 0; i < 100 && ready.body.redis_memory?.policy === 'unknown'; i++) ready = await sleep(50).then(() => get(server, '/readyz'));
    assert.deepEqual(ready.body, { status: 'ready', redis: 'up', redis_memory: NOEVICTION, engine: { state: 'off' } });
    assert.match(server.stderr(), /token secret: Redis cannot be reached[\s\S]*token secret: made one/);
  } finally {
    await server.stop();
    await down.stop();
  }
});
