// One client must not take the computer from everyone (the real Stockfish,
// one engine): a flood of computer-first games from one address (127.10.0.2)
// is bounded (429 too_many_engine_turns) and does not delay another
// client's (127.0.0.3) reply by more than a round; the computer's turns go
// ahead of queued analyses; one address's analyses are bounded (429
// too_many_analyses) while another's small one is answered; turns that wait
// past their lease are not queued again (the sweep's recovered counter only
// counts lost jobs); the backlog shows in /metrics and /readyz; workers
// stopped leave no consumer behind; and a Redis 600 ms away does not flap
// /readyz. The bounds, not the durations, are asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { expectProblem, nodeRequest, sleep } from './http.mjs';
import { startRedis } from './server.mjs';
import { STOCKFISH, startEngineServer } from './analysis_lib.mjs';
import { metricValue } from './attacks_lib.mjs';

const ITALIAN = 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3';
const JOBS_KEY = 'chessd:{engine}:jobs'; // store/store.h
const WAIT_MS = 60000;

/** A request from a source address (127.0.0.x), with a JSON body. */
function from(server, address, method, path, body) {
  const headers = body === undefined ? {} : { 'content-type': 'application/json' };
  return nodeRequest(server, { method, path, headers, body: body === undefined ? undefined : JSON.stringify(body),
    agent: false, localAddress: address, timeoutMs: WAIT_MS });
}

/** Creates a game where the computer (level) moves first, from address; resolves to the raw answer. */
const computerFirst = (server, address, level) => from(server, address, 'POST', '/v1/games', { engine: { level, color: 'white' } });

/** Waits until game id has the computer's move (version 2 or more); resolves to the game. */
async function replied(server, id) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const res = await from(server, '127.0.0.1', 'GET', `/v1/games/${id}`);
    assert.equal(res.status, 200, res.text);
    if (res.body.version >= 2) return res.body;
    assert.ok(Date.now() < deadline, `no reply in game ${id} within ${WAIT_MS} ms`);
    await sleep(20);
  }
}

async function metrics(server) {
  return (await nodeRequest(server, { path: '/metrics', agent: false, timeoutMs: 10000 })).text;
}

const labelled = (text, name, label, value) => {
  const m = new RegExp(`^${name}\\{${label}="${value}"\\} (\\d+)$`, 'm').exec(text);
  assert.ok(m, `/metrics has no ${name}{${label}="${value}"}`);
  return Number(m[1]);
};
const played = (text) => labelled(text, 'chessd_engine_turns_total', 'outcome', 'played');

/** Waits until pred(metrics text) holds. */
async function metricsUntil(server, pred, what, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const text = await metrics(server);
    if (pred(text)) return text;
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

test('a flood of computer turns from one address is bounded, and another client\'s turn is served within a round', async (t) => {
  // Level 8, its think cut to 400 ms: each turn holds the one engine a while.
  const redis = await startRedis();
  t.after(() => redis.stop());
  const server = await startEngineServer(['--redis', redis.url, '--engine-workers', '1', '--engine-max-think-ms', '400']);
  t.after(() => server.stop());
  const FLOODER = '127.10.0.2'; // loopback too; its text has octets of 3, 2 and 1 digits
  const FLOOD = 20, PER_CLIENT = 8;
  const answers = [];
  const playedBefore = played(await metrics(server));
  for (let i = 0; i < FLOOD; i++) answers.push(await computerFirst(server, FLOODER, 8));
  const playedDuring = played(await metrics(server)) - playedBefore;
  const accepted = answers.filter((r) => r.status === 201), refused = answers.filter((r) => r.status !== 201);
  // Turns being played or played already no longer wait: as many more may pass while the flood is sent.
  assert.ok(accepted.length >= PER_CLIENT && accepted.length <= PER_CLIENT + playedDuring + 2,
    `${accepted.length} of ${FLOOD} computer-first games accepted from one address (--engine-turns-per-client ${PER_CLIENT}; ${playedDuring} played meanwhile)`);
  for (const r of refused) {
    const p = expectProblem(r, 429, 'too_many_engine_turns');
    assert.equal(p.limit, 'engine-turns-per-client');
    assert.equal(p.max, PER_CLIENT);
    assert.ok(Number(r.headers['retry-after']) >= 1);
  }
  // The backlog shows in /metrics and /readyz (read by the sweep, about every second).
  const during = await metricsUntil(server, (m) => metricValue(m, 'chessd_engine_turns_queued') >= 3, 'the backlog in /metrics');
  assert.ok(metricValue(during, 'chessd_engine_turns_clients') >= 1);
  assert.equal(labelled(during, 'chessd_engine_turns_refused_total', 'reason', 'per_client'), refused.length);
  // The flood's turns wait in the queue named for its address.
  const waiting = await redis.command('ZCARD', `chessd:{engine}:owner:${FLOODER}`);
  assert.ok(waiting >= 1 && waiting <= PER_CLIENT, `${waiting} turns in ${FLOODER}'s queue`);
  const ready = await from(server, '127.0.0.1', 'GET', '/readyz');
  assert.equal(ready.status, 200);
  assert.ok(ready.body.engine.turns.queued >= 1, JSON.stringify(ready.body.engine));

  // Another client's turn: served after at most the turn in flight and one of the flood's.
  const before = played(await metrics(server));
  const calm = await computerFirst(server, '127.0.0.3', 1);
  assert.equal(calm.status, 201, calm.text);
  await replied(server, calm.body.id);
  const between = played(await metrics(server)) - before - 1;
  assert.ok(between <= 3, `${between} of the flood's turns were played before another client's one turn`);
  t.diagnostic(`flood: ${accepted.length} accepted, ${refused.length} refused; ${between} flood turns before the other client's`);
  // Every accepted turn is played once: none is queued twice.
  await metricsUntil(server, (m) => played(m) === accepted.length + 1, 'every accepted turn played');
  const end = await metrics(server);
  assert.equal(labelled(end, 'chessd_engine_turns_total', 'outcome', 'stale'), 0);
  assert.equal(labelled(end, 'chessd_engine_turns_total', 'outcome', 'recovered'), 0);
});

test('the computer\'s turn goes ahead of queued analyses; one address\'s analyses are bounded, another\'s is answered', async (t) => {
  const server = await startEngineServer(['--engine-workers', '1', '--engine-max-think-ms', '1500']);
  t.after(() => server.stop());
  const long = { fen: ITALIAN, movetime_ms: 1000 };
  // One address: 2 in flight at most; 4 more refused at once.
  const flood = [];
  for (let i = 0; i < 6; i++) flood.push(from(server, '127.0.0.2', 'POST', '/v1/position/analysis', long));
  const settled = [];
  const answers = flood.map((p) => p.then((r) => { settled.push(performance.now()); return r; }));
  await sleep(300);
  // Two more addresses fill the queue (1 running, 4 waiting).
  for (const address of ['127.0.0.4', '127.0.0.4', '127.0.0.5'])
    answers.push(from(server, address, 'POST', '/v1/position/analysis', long).then((r) => { settled.push(performance.now()); return r; }));
  await sleep(300);
  // The computer's turn now: it goes before the analyses waiting.
  const created = performance.now();
  const game = await computerFirst(server, '127.0.0.3', 1);
  assert.equal(game.status, 201, game.text);
  await replied(server, game.body.id);
  const replyAt = performance.now();
  const doneBefore = settled.filter((at) => at <= replyAt && at >= created).length;
  assert.ok(doneBefore <= 1, `${doneBefore} analyses finished between the turn's creation and its reply: only the one running may`);
  const results = await Promise.all(answers);
  const floodAnswers = results.slice(0, 6);
  const ok = floodAnswers.filter((r) => r.status === 200);
  assert.equal(ok.length, 2, floodAnswers.map((r) => r.status).join(' '));
  for (const r of floodAnswers.filter((x) => x.status !== 200)) {
    const p = expectProblem(r, 429, 'too_many_analyses');
    assert.equal(p.limit, 'engine-analyses-per-client');
    assert.equal(p.max, 2);
    assert.ok(Number(r.headers['retry-after']) >= 1);
  }
  for (const r of results.slice(6)) assert.equal(r.status, 200, r.text);
  // Another client's small analysis is answered while the first address is at its bound.
  const busy = [from(server, '127.0.0.2', 'POST', '/v1/position/analysis', long),
    from(server, '127.0.0.2', 'POST', '/v1/position/analysis', long)];
  await sleep(200);
  const refusedNow = await from(server, '127.0.0.2', 'POST', '/v1/position/analysis', { fen: ITALIAN, depth: 2 });
  expectProblem(refusedNow, 429, 'too_many_analyses');
  const small = await from(server, '127.0.0.6', 'POST', '/v1/position/analysis', { fen: ITALIAN, depth: 2 });
  assert.equal(small.status, 200, small.text);
  for (const r of await Promise.all(busy)) assert.equal(r.status, 200, r.text);
  const m = await metrics(server);
  assert.equal(labelled(m, 'chessd_analysis_refused_by_reason_total', 'reason', 'per_client'), 5);
});

test('turns that wait past their lease are not queued again: recovered counts lost jobs only', async (t) => {
  // Lease 2.5 s (500 ms of think and 2 s); 8 turns of about 500 ms wait about 4 s in all.
  const server = await startEngineServer(['--engine-workers', '1', '--engine-max-think-ms', '500', '--engine-job-lease-ms', '500']);
  t.after(() => server.stop());
  const games = [];
  for (const address of ['127.0.0.2', '127.0.0.3'])
    for (let i = 0; i < 4; i++) {
      const res = await computerFirst(server, address, 8);
      assert.equal(res.status, 201, res.text);
      games.push(res.body.id);
    }
  for (const id of games) await replied(server, id);
  await sleep(2500); // two sweeps more
  const m = await metrics(server);
  assert.equal(played(m), games.length);
  assert.equal(labelled(m, 'chessd_engine_turns_total', 'outcome', 'stale'), 0, 'no turn was queued twice');
  assert.equal(labelled(m, 'chessd_engine_turns_total', 'outcome', 'recovered'), 0, 'no job was lost');
  assert.equal(metricValue(m, 'chessd_engine_turns_queued'), 0);
});

test('engine workers stopped cleanly leave no consumer behind', async (t) => {
  const redis = await startRedis();
  t.after(() => redis.stop());
  const api = await startEngineServer(['--redis', redis.url, '--engine', 'none']);
  t.after(() => api.stop());
  for (let i = 0; i < 3; i++) {
    const worker = await startEngineServer(['--redis', redis.url], { command: 'engine' });
    const game = await computerFirst(api, '127.0.0.2', 1);
    assert.equal(game.status, 201, game.text);
    await replied(api, game.body.id);
    await worker.stop();
  }
  const consumers = await redis.command('XINFO', 'CONSUMERS', JOBS_KEY, 'engines');
  assert.ok(Array.isArray(consumers), String(consumers));
  assert.equal(consumers.length, 0, `consumers left: ${JSON.stringify(consumers)}`);
});

/** A TCP proxy to port that delays every chunk by delay.ms each way (changed at will); resolves to { port, close() }. */
async function delayingProxy(port, delay) {
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => { client.destroy(); upstream.destroy(); });
      s.on('close', () => { sockets.delete(s); client.destroy(); upstream.destroy(); });
    }
    client.on('data', (d) => setTimeout(() => upstream.write(d), delay.ms));
    upstream.on('data', (d) => setTimeout(() => client.write(d), delay.ms));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    close: () => { for (const s of sockets) s.destroy(); return new Promise((resolve) => server.close(resolve)); },
  };
}

test('a Redis 600 ms away (its timeout 1 s): /readyz never says down while the engine worker waits for turns', async (t) => {
  const redis = await startRedis();
  t.after(() => redis.stop());
  const delay = { ms: 0 };
  const proxy = await delayingProxy(redis.port, delay);
  t.after(() => proxy.close());
  // The engine replica behind the slow link; an API replica (no engine) near Redis creates the game.
  const server = await startEngineServer(['--redis', `redis://127.0.0.1:${proxy.port}`, '--engine-workers', '1']);
  t.after(() => server.stop());
  const api = await startEngineServer(['--redis', redis.url, '--engine', 'none']);
  t.after(() => api.stop());
  delay.ms = 300; // once started (its start-up's round trips would pass the start's timeout)
  const states = [];
  const until = Date.now() + 8000;
  while (Date.now() < until) {
    const res = await nodeRequest(server, { path: '/readyz', agent: false, timeoutMs: 10000 });
    states.push(res.body.redis ?? res.status);
    await sleep(100);
  }
  const down = states.filter((s) => s !== 'up');
  assert.equal(down.length, 0, `/readyz was not up ${down.length} times of ${states.length}: ${[...new Set(down)].join(', ')}`);
  // And the computer still plays through it.
  const game = await computerFirst(api, '127.0.0.2', 1);
  assert.equal(game.status, 201, game.text);
  await replied(api, game.body.id);
});
