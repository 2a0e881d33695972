// A Redis that stalls, dies or never answers must not take the replica
// down with it: no server thread waits on Redis (game requests run on the
// store threads), the breaker fails game requests fast once Redis is known
// to be away, and the readiness watcher probes it in the background. Under
// game traffic from more clients than there are server threads (the k8s
// settings: 4 server threads, 4 store threads): /healthz, /readyz and the
// rules API answer as fast as ever, every game request is answered within
// the Redis timeout and a margin, and once Redis is back games are served
// again with nothing acknowledged lost. Also: a Redis that refuses this
// server's password is named as such in /readyz, /metrics and the problems.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { startRedis, startServer, freePort } from './server.mjs';
import { get, post, nodeRequest, expectProblem, waitForRedis, sleep } from './http.mjs';

const TIMEOUT_MS = 500;
// What a game request may take beyond the Redis timeout: a queue wait of a
// few ms, the answer, and a noisy shared machine.
const GAME_MARGIN_MS = 700;
// What a probe or a rules request may take at most, whatever Redis does.
const FAST_MS = 100;
const TOKEN_SECRET = 'redis-stall-test-secret-of-32-bytes-or-more';
const K8S = ['--threads', '4', '--store-threads', '4'];

function serverArgs(url) {
  return ['--redis', url, '--redis-timeout-ms', String(TIMEOUT_MS), '--redis-connect-timeout-ms', String(TIMEOUT_MS),
    ...K8S];
}
const withSecret = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };

async function timed(fn) {
  const start = performance.now();
  const res = await fn();
  return [res, performance.now() - start];
}

/** One request on a connection of its own, as kubelet's probes make them. */
const fresh = (srv, opts) => nodeRequest(srv, { agent: false, timeoutMs: 5000, ...opts });

/**
 * Game traffic until stop(): `clients` loops reading the game, and one
 * player moving knights out and back in games of its own (every
 * acknowledged move recorded; a game drawn by repetition is followed by a
 * new one). Each answer's status and time are kept.
 */
function gameTraffic(srv, game, first, clients) {
  let running = true;
  const answers = [];
  const acknowledged = [];
  const readers = Array.from({ length: clients }, async () => {
    while (running) {
      const [res, ms] = await timed(() => fresh(srv, { path: `/v1/games/${game.id}` }).catch((e) => ({ status: 0, text: String(e) })));
      answers.push({ kind: 'read', status: res.status, code: res.body?.code, ms, at: Date.now() });
      if (res.status !== 200) await sleep(20);
    }
  });
  const writer = (async () => {
    const line = ['Nf3', 'Nf6', 'Ng1', 'Ng8'];
    let mover = first;
    let version = mover.version;
    for (let i = 0; running; ) {
      if (i >= 12) { // before a fivefold repetition ends the game
        const next = await fresh(srv, { method: 'POST', path: '/v1/games', headers: { 'content-type': 'application/json' }, body: '{}' })
          .catch(() => null);
        if (next?.status === 201) {
          mover = next.body;
          version = mover.version;
          i = 0;
        } else {
          await sleep(20);
        }
        continue;
      }
      const side = i % 2 ? 'black' : 'white';
      const [res, ms] = await timed(() => fresh(srv, {
        method: 'POST', path: `/v1/games/${mover.id}/moves`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${mover.tokens[side]}` },
        body: JSON.stringify({ move: line[i % 4], expected_version: version }),
      }).catch((e) => ({ status: 0, text: String(e) })));
      answers.push({ kind: 'move', status: res.status, code: res.body?.code, ms, at: Date.now() });
      if (res.status === 200) {
        acknowledged.push({ id: mover.id, version: res.body.version, san: line[i % 4] });
        version = res.body.version;
        i++;
      } else {
        // outcome_unknown may or may not have been made (Redis may run the
        // script once it is back): read where the game is, and move again
        // only once that read has answered, as a client must.
        for (;;) {
          await sleep(20);
          const now = await fresh(srv, { path: `/v1/games/${mover.id}` }).catch(() => null);
          if (now?.status === 200) {
            version = now.body.version;
            i = now.body.moves.length;
            break;
          }
          if (!running) break;
        }
      }
    }
  })();
  return {
    answers,
    acknowledged,
    async stop() {
      running = false;
      await Promise.all([...readers, writer]);
    },
  };
}

/** Probes, the rules API and (while `during` runs) their times: each must stay under FAST_MS. */
async function probeWhile(srv, ms) {
  const slow = [];
  let count = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    for (const [what, opts] of [
      ['/healthz', { path: '/healthz' }],
      ['/readyz', { path: '/readyz' }],
      ['POST /v1/position', { method: 'POST', path: '/v1/position', headers: { 'content-type': 'application/json' }, body: '{}' }],
    ]) {
      const [res, took] = await timed(() => fresh(srv, opts));
      count++;
      if (res.status !== 200 || took >= FAST_MS) slow.push(`${what}: ${res.status} in ${Math.round(took)} ms`);
    }
    await sleep(50);
  }
  return { slow, count };
}

function assertGameAnswersBounded(answers, what) {
  const late = answers.filter((a) => a.ms > TIMEOUT_MS + GAME_MARGIN_MS);
  assert.deepEqual(late.map((a) => `${a.kind} ${a.status} ${a.code ?? ''} ${Math.round(a.ms)} ms`), [],
    `${what}: game requests answered later than the Redis timeout (${TIMEOUT_MS} ms) and a margin`);
  const bad = answers.filter((a) => a.status !== 200 && a.status !== 503);
  assert.deepEqual(bad.map((a) => `${a.kind} ${a.status} ${a.code ?? ''}`), [], `${what}: answers other than 200 or 503`);
  for (const a of answers.filter((x) => x.status === 503))
    assert.ok(['store_unavailable', 'outcome_unknown'].includes(a.code), `${what}: 503 ${a.code}`);
}

async function createGame(srv) {
  const res = await post(srv, '/v1/games', {});
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function assertNothingLost(srv, acknowledged) {
  const games = new Map();
  for (const ack of acknowledged) {
    if (!games.has(ack.id)) games.set(ack.id, await get(srv, `/v1/games/${ack.id}`));
    const res = games.get(ack.id);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.version >= ack.version, `acknowledged version ${ack.version} lost: the game is at ${res.body.version}`);
    assert.equal(res.body.moves[ack.version - 2]?.san, ack.san, `acknowledged move ${ack.san} (version ${ack.version}) lost`);
  }
}

test('Redis frozen (SIGSTOP) for 4 s under game traffic from 24 clients: probes and the rules API answer within 100 ms every time, game requests within the timeout; after SIGCONT games are served, nothing acknowledged lost', { timeout: 60000 }, async () => {
  const redis = await startRedis({ persistent: true });
  const srv = await startServer(serverArgs(redis.url), withSecret);
  let traffic; // stopped in finally too, or a failed assertion leaves the file running
  try {
    const game = await createGame(srv);
    const mover = await createGame(srv);
    traffic = gameTraffic(srv, game, mover, 24);
    await sleep(500);
    const before = await probeWhile(srv, 300);
    assert.deepEqual(before.slow, [], 'before the freeze');

    redis.pause();
    let during;
    try {
      during = await probeWhile(srv, 4000);
      const down = await get(srv, '/readyz');
      assert.equal(down.body.redis, 'down', down.text);
      assert.equal(down.body.redis_fault, 'timeout', down.text);
      const metrics = (await get(srv, '/metrics')).text;
      assert.match(metrics, /^chessd_redis_fault\{fault="timeout"\} 1$/m);
      assert.match(metrics, /^chessd_redis_up 0$/m);
      const fastFailures = Number(/^chessd_redis_fast_failures_total (\d+)$/m.exec(metrics)?.[1]);
      assert.ok(fastFailures > 0, 'the breaker failed requests at once');
    } finally {
      redis.resume();
    }
    assert.ok(during.count >= 30, `only ${during.count} probes ran in 4 s`);
    assert.deepEqual(during.slow, [], 'probes and the rules API during the freeze');

    await waitForRedis(srv, 'up');
    const next = await get(srv, `/v1/games/${game.id}`);
    assert.equal(next.status, 200, `the next game request after SIGCONT: ${next.text}`);
    await sleep(300);
    await traffic.stop();
    assertGameAnswersBounded(traffic.answers, 'SIGSTOP');
    const refused = traffic.answers.filter((a) => a.status === 503);
    assert.ok(refused.length > 24, `only ${refused.length} game requests were refused during a 4 s freeze`);
    const fast = refused.filter((a) => a.ms < 50);
    assert.ok(fast.length > refused.length / 2, `only ${fast.length} of ${refused.length} refusals were fast (< 50 ms)`);
    assert.ok(traffic.acknowledged.length > 0, 'no move was acknowledged');
    await assertNothingLost(srv, traffic.acknowledged);
  } finally {
    redis.resume();
    await traffic?.stop();
    await srv.stop();
    await redis.stop();
  }
});

test('Redis killed and restarted under game traffic: refused game requests are fast, probes stay fast, games resume with nothing acknowledged lost', { timeout: 60000 }, async () => {
  const redis = await startRedis({ persistent: true });
  const srv = await startServer(serverArgs(redis.url), withSecret);
  let traffic; // stopped in finally too, or a failed assertion leaves the file running
  try {
    const game = await createGame(srv);
    const mover = await createGame(srv);
    traffic = gameTraffic(srv, game, mover, 24);
    await sleep(500);
    await redis.stop('SIGKILL');
    const during = await probeWhile(srv, 2000);
    assert.deepEqual(during.slow, [], 'probes and the rules API while Redis is away');
    const down = await waitForRedis(srv, 'down');
    assert.equal(down.body.redis_fault, 'unreachable', down.text);
    await redis.start();
    await waitForRedis(srv, 'up');
    const next = await get(srv, `/v1/games/${game.id}`);
    assert.equal(next.status, 200, next.text);
    await sleep(300);
    await traffic.stop();
    assertGameAnswersBounded(traffic.answers, 'SIGKILL');
    await assertNothingLost(srv, traffic.acknowledged);
  } finally {
    await traffic?.stop();
    await srv.stop();
    await redis.stop();
  }
});

test('a Redis that accepts connections but never answers: probes fast, game requests 503 within the timeout, /readyz names the timeout', { timeout: 60000 }, async () => {
  const sockets = new Set();
  const blackhole = net.createServer((s) => { sockets.add(s); s.on('data', () => {}); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); });
  const port = await freePort();
  await new Promise((resolve) => blackhole.listen(port, '127.0.0.1', resolve));
  // The first probe runs before the server listens: it waits the timeouts once.
  const srv = await startServer(serverArgs(`redis://127.0.0.1:${port}/0`), withSecret);
  try {
    const ready = await get(srv, '/readyz');
    assert.equal(ready.body.redis, 'down', ready.text);
    assert.equal(ready.body.redis_fault, 'timeout', ready.text);
    assert.match(ready.body.redis_reason, /no answer to PING within 500 ms/);
    const answers = await Promise.all(Array.from({ length: 24 }, async () => {
      const [res, ms] = await timed(() => fresh(srv, { method: 'POST', path: '/v1/games', headers: { 'content-type': 'application/json' }, body: '{}' }));
      return { kind: 'create', status: res.status, code: res.body?.code, ms, body: res.body };
    }));
    assertGameAnswersBounded(answers, 'never answers');
    for (const a of answers) {
      assert.equal(a.status, 503);
      assert.equal(a.body.store_fault, 'timeout', JSON.stringify(a.body));
    }
    const during = await probeWhile(srv, 1500);
    assert.deepEqual(during.slow, [], 'probes and the rules API against a silent Redis');
  } finally {
    await srv.stop();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => blackhole.close(resolve));
  }
});

test('a wrong Redis password is named: /readyz redis_fault auth_refused, /metrics chessd_redis_fault, the game problem store_fault; the password is never shown', { timeout: 60000 }, async () => {
  const password = 'right-password-7Hq';
  const wrong = 'wrong-password-Zx9';
  const redis = await startRedis({ args: ['--requirepass', password] });
  const srv = await startServer(serverArgs(`redis://:${wrong}@127.0.0.1:${redis.port}/0`), withSecret);
  try {
    const ready = await get(srv, '/readyz');
    assert.equal(ready.body.redis, 'down', ready.text);
    assert.equal(ready.body.redis_fault, 'auth_refused', ready.text);
    assert.match(ready.body.redis_reason, /AUTH was refused/);
    const refused = expectProblem(await post(srv, '/v1/games', {}), 503, 'store_unavailable');
    assert.equal(refused.store_fault, 'auth_refused');
    assert.match(refused.detail, /credentials \(AUTH\)/);
    const metrics = (await get(srv, '/metrics')).text;
    assert.match(metrics, /^chessd_redis_fault\{fault="auth_refused"\} 1$/m);
    assert.match(metrics, /^chessd_redis_fault\{fault="timeout"\} 0$/m);
    for (const text of [ready.text, JSON.stringify(refused), metrics, srv.stderr(), srv.stdout()])
      assert.ok(!text.includes(wrong) && !text.includes(password), 'a password was shown');
  } finally {
    await srv.stop();
    await redis.stop();
  }
});
