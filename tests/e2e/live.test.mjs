// Live play across replicas: three chessd replicas (A, B, C) on one
// redis-server, and a private nginx in front of them set up for streams
// (startNginx with streaming: unbuffered, long read timeout, HTTP/1.1 to the
// upstreams). Pins down the contract of clocks, takebacks and abort through
// the API, the event streams (NDJSON and SSE, tests/e2e/stream.mjs) and
// long-polls, seen from any replica:
//  * clock fields and their bounds; the first two plies are free, then a move
//    charges its mover and adds the increment; a fallen flag ends the game
//    (timeout, or a draw when the other side cannot mate) and shows in PGN;
//  * takebacks under "agreement", "free" and "none"; a takeback gives back
//    no increment (loops of moves and takebacks with a large increment, the
//    first plies, an imported PGN, Chess960); abort before both players
//    have moved;
//  * a move on replica A reaches streams on B and C (latency over 200 moves
//    printed: p50/p99);
//  * a replica killed under an SSE stream held through nginx: the client
//    reconnects with Last-Event-ID and misses no version; a redis-server
//    restart: open streams resync without reconnecting;
//  * a flag that falls with nobody moving is announced within 200 ms of the
//    deadline; 32 racing reads after a deadline make one ending write;
//  * 1,000 streams on one replica (RSS and threads printed);
//  * long-poll (If-None-Match + Prefer: wait=N); bad input and stream bounds.
// Waits are on conditions with deadlines; timings are printed, and asserted
// only where the contract fixes a bound (200 ms for a flag's announcement)
// or as a generous ceiling that only a broken fan-out would miss.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startServer, startRedis, startNginx, REPO_ROOT } from './server.mjs';
import { expectProblem, nodeRequest, sleep, START_FEN } from './http.mjs';
import { openStream, mustOpenStream, Stream } from './stream.mjs';

const TOKEN_SECRET = 'e2e-live-token-secret-0123456789abcdef';
const ENV = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };

// A 600-ply active game in UCI (no capture, check or promotion; no position
// more than twice): any prefix of it is an active game.
const LINE = readFileSync(path.join(REPO_ROOT, 'tests/bench/game_growth.line'), 'utf8')
  .split('\n').filter((l) => l && !l.startsWith('#'));

let main; // the shared cluster: { redis, replicas, A, B, C, lb }

/**
 * Starts a redis-server (persistent: with its data on disk, so it can be
 * restarted), three replicas on it with `args`, and (nginx) a streaming nginx
 * in front of them. Resolves to { redis, replicas, A, B, C, lb, stop() }.
 */
async function startCluster({ persistent = false, args = [], nginx = true } = {}) {
  const redis = await startRedis({ persistent });
  const replicas = await Promise.all([0, 1, 2].map(() => startServer(['--redis', redis.url, '--threads', '2', ...args], ENV)));
  const lb = nginx ? await startNginx(replicas.map((r) => r.port), { streaming: true }) : null;
  const [A, B, C] = replicas;
  return {
    redis, replicas, A, B, C, lb,
    async stop() {
      await lb?.stop();
      for (const r of replicas) await r.stop();
      await redis.stop();
    },
  };
}

before(async () => {
  main = await startCluster();
});

after(async () => {
  await main?.stop();
});

/** One request with node:http (answer checked against openapi.yaml); json is sent as the body, token as Bearer. */
function api(target, method, p, { json, token, headers = {}, timeoutMs = 10000, agent } = {}) {
  const h = { ...headers };
  let body;
  if (json !== undefined) {
    body = JSON.stringify(json);
    h['content-type'] = 'application/json';
  }
  if (token) h.authorization = `Bearer ${token}`;
  return nodeRequest(target, { method, path: p, headers: h, body, timeoutMs, agent });
}

/** POST /v1/games on target; resolves to { id, tokens, body, v } (v: the version, kept up to date by step()). */
async function createGame(target, json = {}) {
  const res = await api(target, 'POST', '/v1/games', { json });
  assert.equal(res.status, 201, `create ${JSON.stringify(json)}: ${res.text}`);
  return { id: res.body.id, tokens: res.body.tokens, body: res.body, v: res.body.version };
}

/** POST /v1/games/{id}/{route} by color with fields plus expected_version g.v; resolves to the raw answer. */
function change(target, g, color, route, fields = {}, headers = {}) {
  return api(target, 'POST', `/v1/games/${g.id}/${route}`,
    { json: { ...fields, expected_version: g.v }, token: g.tokens[color], headers });
}

/**
 * change() that must answer 200 with the next version; updates g.v and
 * resolves to the GameChange with sent/received (performance.now() before the
 * request and after its answer).
 */
async function step(target, g, color, route, fields = {}) {
  const sent = performance.now();
  const res = await change(target, g, color, route, fields);
  const received = performance.now();
  assert.equal(res.status, 200, `${color} ${route} ${JSON.stringify(fields)} at version ${g.v}: ${res.text}`);
  assert.equal(res.body.version, g.v + 1, `${route}: the version goes up by one`);
  assert.equal(res.headers.etag, `"${g.v + 1}"`);
  g.v = res.body.version;
  return Object.assign(res.body, { sent, received });
}

/** Plays move (UCI or SAN) for color. */
const play = (target, g, color, move) => step(target, g, color, 'moves', { move });

/** The colour to move at ply index i (0-based) of a game from the start position. */
const mover = (i) => (i % 2 ? 'black' : 'white');

/** GET /v1/games/{id} on target, which must answer 200. */
async function read(target, g, headers = {}) {
  const res = await api(target, 'GET', `/v1/games/${g.id}`, { headers });
  assert.equal(res.status, 200, `GET ${g.id}: ${res.text}`);
  return res.body;
}

/** Asserts a 409 (with `code` when given) and that the game's version did not move. */
async function expectRefused(res, g, code, what) {
  assert.equal(res.status, 409, `${what}: expected 409, got ${res.status}: ${res.text}`);
  if (code) expectProblem(res, 409, code);
  else expectProblem(res, 409, res.body.code);
  assert.equal((await read(main.A, g)).version, g.v, `${what}: a refusal writes nothing`);
  return res.body;
}

/** Redis's clock (TIME) in Unix ms. */
async function redisMs(redis) {
  const [s, us] = await redis.command('TIME');
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/**
 * Redis's clock minus this process's Date.now(), from the quickest of five
 * TIME round trips (same machine: a few ms at most).
 */
async function redisClockOffset(redis) {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 5; i++) {
    const t0 = Date.now();
    const r = await redisMs(redis);
    const t1 = Date.now();
    if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: r - (t0 + t1) / 2 };
  }
  return best;
}

/** Waits until Redis's clock has passed ms (polled every 10 ms, for at most limitMs). */
async function untilRedisTime(redis, ms, limitMs = 10000) {
  const deadline = Date.now() + limitMs;
  while (await redisMs(redis) <= ms) {
    assert.ok(Date.now() < deadline, `Redis's clock did not reach ${ms} within ${limitMs} ms`);
    await sleep(10);
  }
}

/** Waits until pred() (may be async) is true, checking every 10 ms, or fails after timeoutMs with message(). */
async function waitUntil(pred, timeoutMs, message) {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    assert.ok(Date.now() < deadline, typeof message === 'function' ? message() : message);
    await sleep(10);
  }
}

/** The value of one unlabelled metric on server's /metrics (fails when absent). */
async function metric(server, name) {
  const res = await api(server, 'GET', '/metrics');
  assert.equal(res.status, 200);
  const m = new RegExp(`^${name} (\\d+(?:\\.\\d+)?)$`, 'm').exec(res.text);
  assert.ok(m, `no ${name} in /metrics of port ${server.port}`);
  return Number(m[1]);
}

/** VmRSS (KiB) and Threads of a process, from /proc/<pid>/status. */
function procStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1]);
  return { rssKiB: field('VmRSS'), threads: field('Threads') };
}

/** The q-quantile (0..1) of numbers, nearest rank. */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

/**
 * Checks that a sequence of events covers every version without a hole: a
 * snapshot may jump ahead (never back), a change must be the next version.
 * Resolves to the last version covered; starts from `from` (0: expects a
 * snapshot first).
 */
function coverage(events, from = 0) {
  let covered = from;
  for (const { data } of events) {
    if (data.type === 'game') {
      assert.ok(data.version >= covered, `a snapshot went back from version ${covered} to ${data.version}`);
      covered = data.version;
    } else if (data.type === 'change') {
      assert.ok(covered > 0, 'a change came before any snapshot');
      assert.equal(data.version, covered + 1, `after version ${covered} came change ${data.version}: a hole without a snapshot`);
      covered = data.version;
    }
  }
  return covered;
}

/** The snapshot (first event) of a fresh stream; asserts its type and version. */
async function expectSnapshot(stream, version, what = 'the first event') {
  const ev = await stream.next();
  assert.equal(ev.data.type, 'game', `${what} is a snapshot: ${JSON.stringify(ev.data).slice(0, 200)}`);
  assert.equal(ev.data.version, version, `${what}: the snapshot's version`);
  return ev;
}

/** The next event of stream must be change `version` of kind `event`; resolves to it. */
async function expectChange(stream, version, event, timeoutMs = 5000) {
  const ev = await stream.next(timeoutMs);
  assert.equal(ev.data.type, 'change', `expected change ${version} (${event}), got ${JSON.stringify(ev.data).slice(0, 200)}`);
  assert.equal(ev.data.version, version);
  assert.equal(ev.data.event, event);
  return ev;
}

/**
 * A raw Redis subscriber (PSUBSCRIBE pattern) on the redis-server at port:
 * resolves once subscribed to { messages: [{ channel, payload, at }], close() }.
 */
function redisSubscriber(port, pattern) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const messages = [];
    let buf = '';
    let subscribed = false;
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('connect', () => socket.write(`*2\r\n$10\r\nPSUBSCRIBE\r\n$${Buffer.byteLength(pattern)}\r\n${pattern}\r\n`));
    // Pushes are arrays of bulk strings and one integer; the JSON is ASCII-safe here (no names with
    // multibyte characters), so string lengths are byte lengths.
    const parse = () => {
      const items = [];
      let at = 0;
      const lineEnd = (from) => buf.indexOf('\r\n', from);
      let e = lineEnd(at);
      if (e < 0 || buf[0] !== '*') return null;
      const n = Number(buf.slice(1, e));
      at = e + 2;
      for (let i = 0; i < n; i++) {
        e = lineEnd(at);
        if (e < 0) return null;
        if (buf[at] === ':') { items.push(Number(buf.slice(at + 1, e))); at = e + 2; continue; }
        const len = Number(buf.slice(at + 1, e));
        if (buf.length < e + 2 + len + 2) return null;
        items.push(buf.slice(e + 2, e + 2 + len));
        at = e + 2 + len + 2;
      }
      buf = buf.slice(at);
      return items;
    };
    socket.on('data', (d) => {
      const at = performance.now();
      buf += d;
      for (let m; (m = parse());) {
        if (m[0] === 'psubscribe') { subscribed = true; resolve({ messages, close: () => socket.destroy() }); }
        else if (m[0] === 'pmessage') messages.push({ channel: m[2], payload: m[3], at });
      }
    });
    setTimeout(() => { if (!subscribed) reject(new Error('PSUBSCRIBE got no answer')); }, 5000);
  });
}

/** A published event message split as issue 11 fixes it: "<version> <ended> <at_ms> <deadline_ms> <type>\n<json>". */
function parsePublished(payload) {
  const nl = payload.indexOf('\n');
  assert.ok(nl > 0, `no header line: ${JSON.stringify(payload.slice(0, 100))}`);
  const m = /^(\d+) ([01]) (\d+) (\d+) ([a-z]+)$/.exec(payload.slice(0, nl));
  assert.ok(m, `bad header line ${JSON.stringify(payload.slice(0, nl))}`);
  const json = payload.slice(nl + 1);
  assert.ok(!json.includes('\n'), 'no newline inside the JSON');
  return { version: Number(m[1]), ended: m[2] === '1', at_ms: Number(m[3]), deadline_ms: Number(m[4]), type: m[5], data: JSON.parse(json) };
}

test('publications: each write publishes its change in its own Lua step on chessd:events:{id}; creation and refusals publish nothing', async () => {
  const { A, B, C, redis } = main;
  const sub = await redisSubscriber(redis.port, 'chessd:events:*');
  try {
    const g = await createGame(A, { clock: { initial_ms: 60000, increment_ms: 1000 } });
    const channel = `chessd:events:{${g.id}}`;
    const mine = () => sub.messages.filter((m) => m.channel === channel);
    const answers = [];
    answers.push(await play(A, g, 'white', 'e4'));
    answers.push(await play(B, g, 'black', 'e5'));
    expectProblem(await change(C, g, 'black', 'moves', { move: 'Nc6' }), 403, 'not_your_turn');
    expectProblem(await api(C, 'POST', `/v1/games/${g.id}/moves`, { json: { move: 'Nf3', expected_version: 1 }, token: g.tokens.white }),
      409, 'version_conflict');
    answers.push(await play(C, g, 'white', 'Nf3'));
    answers.push(await step(A, g, 'black', 'draw', { action: 'offer' }));
    answers.push(await step(B, g, 'black', 'resign'));
    await waitUntil(() => mine().length >= answers.length, 5000, () => `${mine().length} of ${answers.length} publications`);
    // Redis runs the writes one after another, so a message from the creation or a refusal would
    // come before a later write's and shift every version below.
    const pubs = mine().map((m) => parsePublished(m.payload));
    assert.equal(pubs.length, answers.length, 'one message per write: none for the creation or the refusals');
    for (const [i, p] of pubs.entries()) {
      const a = answers[i];
      assert.equal(p.type, 'change');
      assert.equal(p.version, a.version, 'published in the order of the writes');
      assert.equal(p.data.version, a.version);
      assert.equal(p.data.type, 'change');
      assert.equal(p.data.event, ['move', 'move', 'move', 'draw_offer', 'resign'][i]);
      assert.equal(p.ended, i === 4, 'ended only with the resignation');
      assert.equal(p.at_ms, a.clock.at_ms, 'at_ms is the write\'s clock time');
      const running = a.clock.running;
      // The flag's fall once the clock runs; before, the first-move grace's end (abort_at_ms).
      assert.equal(p.deadline_ms, running ? a.clock.at_ms + a.clock[`${running}_ms`] : a.clock.abort_at_ms ?? 0,
        `deadline at version ${p.version}`);
      const { sent, received, ...answer } = a;
      const { legal_moves: _, ...position } = answer.position;
      assert.deepEqual({ ...p.data, type: undefined, event: undefined }, { ...answer, position, type: undefined, event: undefined });
    }
  } finally {
    sub.close();
  }
});

// ---------------------------------------------------------------- clocks

test('clock fields: bounds on initial_ms and increment_ms are 400 naming the field; takeback policy names', async () => {
  const { A } = main;
  const bad = [
    [{ clock: { initial_ms: 999 } }, 'initial_ms'],
    [{ clock: { initial_ms: 0 } }, 'initial_ms'],
    [{ clock: { initial_ms: -60000 } }, 'initial_ms'],
    [{ clock: { initial_ms: 86400001 } }, 'initial_ms'],
    [{ clock: { initial_ms: 60000.5 } }, 'initial_ms'],
    [{ clock: { initial_ms: '60000' } }, 'initial_ms'],
    [{ clock: { increment_ms: 2000 } }, 'initial_ms'],
    [{ clock: { initial_ms: 60000, increment_ms: -1 } }, 'increment_ms'],
    [{ clock: { initial_ms: 60000, increment_ms: 600001 } }, 'increment_ms'],
    [{ clock: { initial_ms: 60000, increment_ms: '2000' } }, 'increment_ms'],
    [{ clock: 60000 }, 'clock'],
    [{ clock: [60000, 2000] }, 'clock'],
    [{ takeback: 'sometimes' }, 'takeback'],
    [{ takeback: 1 }, 'takeback'],
  ];
  for (const [json, field] of bad) {
    const res = await api(A, 'POST', '/v1/games', { json });
    assert.equal(res.status, 400, `${JSON.stringify(json)}: ${res.text}`);
    expectProblem(res, 400, 'invalid_field');
    assert.ok(res.body.detail.includes(field), `${JSON.stringify(json)}: the problem names ${field}: ${res.body.detail}`);
  }

  // The bounds themselves are accepted; at_ms is Redis's time of the creation.
  for (const [clock, increment] of [[{ initial_ms: 1000 }, 0], [{ initial_ms: 86400000, increment_ms: 600000 }, 600000],
    [{ initial_ms: 300000, increment_ms: 0 }, 0]]) {
    const t0 = await redisMs(main.redis);
    const g = await createGame(A, { clock });
    const t1 = await redisMs(main.redis);
    const c = g.body.clock;
    const control = { initial_ms: clock.initial_ms, increment_ms: increment, delay_ms: 0, delay_mode: 'none',
      periods: [{ moves: null, ms: clock.initial_ms }] };
    assert.deepEqual({ ...c, at_ms: 0, abort_at_ms: 0 }, { initial_ms: clock.initial_ms, increment_ms: increment,
      white: control, black: control, start_at_ms: null, given_ms: { white: 0, black: 0 },
      first_move_ms: 30000, abort_at_ms: 0, white_ms: clock.initial_ms, black_ms: clock.initial_ms, running: null, at_ms: 0 },
    JSON.stringify(c));
    // White's first move is due within the default grace of the creation.
    assert.ok(Math.abs(c.abort_at_ms - (c.at_ms + 30000)) < 1000, `abort_at_ms ${c.abort_at_ms} (at_ms ${c.at_ms})`);
    assert.ok(c.at_ms >= t0 && c.at_ms <= t1, `at_ms ${c.at_ms} is Redis's time of the creation (${t0}..${t1})`);
    assert.equal(g.body.takeback, 'agreement');
    assert.equal(g.body.takeback_offer, null);
  }
  for (const json of [{}, { clock: null }]) {
    const g = await createGame(A, json);
    assert.equal(g.body.clock, null, `${JSON.stringify(json)}: an untimed game`);
    assert.equal(g.body.takeback, 'agreement');
  }
  for (const policy of ['agreement', 'free', 'none']) {
    const g = await createGame(A, { takeback: policy });
    assert.equal(g.body.takeback, policy);
    assert.equal((await read(main.B, g)).takeback, policy, 'another replica reads the same policy');
  }
  // An unknown member of clock is named, as an unknown top-level field is ("unknown field 'x'").
  const unknown = await api(A, 'POST', '/v1/games', { json: { clock: { initial_ms: 60000, byoyomi_ms: 5 } } });
  expectProblem(unknown, 400, 'unknown_field');
  assert.ok(unknown.body.detail.includes('byoyomi_ms'), `the problem names the unknown field: ${unknown.body.detail}`);
});

test('clock: the first two plies are free; from ply 3 a move charges its mover and adds the increment', async () => {
  const { A, B, C, lb } = main;
  const g = await createGame(lb, { clock: { initial_ms: 60000, increment_ms: 2000 } });
  const p1 = await play(A, g, 'white', 'e4');
  assert.equal(p1.clock.running, null, 'the clock does not run after ply 1');
  assert.equal(p1.clock.white_ms, 60000, 'ply 1 is free: no charge, no increment');
  assert.equal(p1.clock.black_ms, 60000);
  await sleep(150); // a pause that ply 2 must not be charged for
  const p2 = await play(B, g, 'black', 'e5');
  assert.equal(p2.clock.running, 'white', 'the clock starts with ply 2');
  assert.equal(p2.clock.white_ms, 60000);
  assert.equal(p2.clock.black_ms, 60000, 'ply 2 is free: no charge, no increment');

  // Ply 3 by white on another replica: white pays the time since ply 2 and gets the increment.
  await sleep(250);
  const p3 = await play(C, g, 'white', 'Nf3');
  const charge3 = 62000 - p3.clock.white_ms;
  assert.equal(p3.clock.running, 'black');
  assert.equal(p3.clock.black_ms, 60000, 'black was not charged');
  assert.ok(Math.abs(charge3 - (p3.clock.at_ms - p2.clock.at_ms)) <= 1,
    `white is charged Redis's time between the two writes: ${charge3} vs ${p3.clock.at_ms - p2.clock.at_ms}`);
  // The clock ran at least from ply 2's answer to ply 3's request, at most from ply 2's request to ply 3's answer.
  const low3 = p3.sent - p2.received - 2;
  const high3 = p3.received - p2.sent + 2;
  assert.ok(charge3 >= low3 && charge3 <= high3, `charge ${charge3} ms within the measured ${low3.toFixed(1)}..${high3.toFixed(1)} ms`);

  // A read shows the running clock as of its at_ms: black's deadline stays where ply 3 put it.
  await sleep(100);
  for (const target of [A, B, C]) {
    const r = await read(target, g);
    assert.equal(r.clock.running, 'black');
    assert.equal(r.clock.white_ms, p3.clock.white_ms);
    assert.ok(r.clock.at_ms >= p3.clock.at_ms);
    assert.ok(Math.abs(r.clock.at_ms + r.clock.black_ms - (p3.clock.at_ms + 60000)) <= 1,
      `black's flag falls at ${p3.clock.at_ms + 60000}; the read says ${r.clock.black_ms} ms left at ${r.clock.at_ms}`);
  }

  // Ply 4 by black, with its increment.
  await sleep(200);
  const p4 = await play(A, g, 'black', 'Nc6');
  const charge4 = 62000 - p4.clock.black_ms;
  assert.equal(p4.clock.running, 'white');
  assert.equal(p4.clock.white_ms, p3.clock.white_ms, 'white was not charged for black\'s move');
  assert.ok(Math.abs(charge4 - (p4.clock.at_ms - p3.clock.at_ms)) <= 1, `${charge4} vs ${p4.clock.at_ms - p3.clock.at_ms}`);
  const low4 = p4.sent - p3.received - 2;
  const high4 = p4.received - p3.sent + 2;
  assert.ok(charge4 >= low4 && charge4 <= high4, `charge ${charge4} ms within the measured ${low4.toFixed(1)}..${high4.toFixed(1)} ms`);
  assert.equal(p4.clock.initial_ms, 60000);
  assert.equal(p4.clock.increment_ms, 2000);
});

/** Creates a 1+0 game (from fen when given), plays two plies on A and resolves to { g, deadline } (Redis ms of white's flag). */
async function flaggingGame(plies = ['e4', 'e5'], fen) {
  const g = await createGame(main.A, { clock: { initial_ms: 1000 }, ...(fen ? { fen } : {}) });
  await play(main.A, g, 'white', plies[0]);
  const p2 = await play(main.A, g, 'black', plies[1]);
  assert.equal(p2.clock.running, 'white');
  assert.equal(p2.clock.white_ms, 1000);
  return { g, p2, deadline: p2.clock.at_ms + p2.clock.white_ms };
}

test('clock: a move after the flag fell is 409 game_over; the game is timeout for the opponent, and PGN says so', async () => {
  const { A, B, C, redis } = main;
  const { g, deadline } = await flaggingGame();
  await untilRedisTime(redis, deadline + 20);
  const late = await change(C, g, 'white', 'moves', { move: 'Nf3' });
  expectProblem(late, 409, 'game_over');
  for (const target of [A, B, C]) {
    const r = await read(target, g);
    assert.equal(r.status, 'timeout');
    assert.equal(r.result, '0-1', 'white lost on time');
    assert.equal(r.termination, 'time_forfeit');
    // The position agrees with the game once it is over.
    assert.deepEqual([r.position.status, r.position.result, r.position.draw_reason], ['timeout', '0-1', null]);
    assert.equal(r.version, 4, 'one write ended the game');
    assert.equal(r.clock.white_ms, 0);
    assert.equal(r.clock.black_ms, 1000);
    assert.equal(r.clock.running, null);
    assert.equal(r.moves.length, 2, 'the late move was not played');
  }
  const pgn = await api(B, 'GET', `/v1/games/${g.id}/pgn`);
  assert.equal(pgn.status, 200);
  assert.match(pgn.text, /^\[TimeControl "1\+0"\]$/m);
  assert.match(pgn.text, /^\[Termination "time forfeit"\]$/m);
  assert.match(pgn.text, /^\[Result "0-1"\]$/m);
  assert.match(pgn.text, /1\. e4 \{ \[%clk 0:00:01\] \} 1\.\.\. e5 \{ \[%clk 0:00:01\] \} 0-1\s*$/);
});

test('clock: a flag that falls while the opponent has only a king is a draw (insufficient material)', async () => {
  const { B, redis } = main;
  const { g, deadline } = await flaggingGame(['Ka2', 'Kg8'], '7k/8/8/8/8/8/8/KQ6 w - - 0 1');
  await untilRedisTime(redis, deadline + 20);
  expectProblem(await change(B, g, 'white', 'moves', { move: 'Qb8+' }), 409, 'game_over');
  const r = await read(B, g);
  assert.equal(r.status, 'timeout');
  assert.equal(r.result, '1/2-1/2', 'black cannot mate with a bare king');
  assert.equal(r.termination, 'time_forfeit');
  const pgn = await api(B, 'GET', `/v1/games/${g.id}/pgn`);
  assert.match(pgn.text, /^\[Result "1\/2-1\/2"\]$/m);
  assert.match(pgn.text, /^\[Termination "time forfeit"\]$/m);
});

test('PGN of a timed game carries TimeControl in seconds+increment', async () => {
  const g = await createGame(main.A, { clock: { initial_ms: 300000, increment_ms: 2000 } });
  await play(main.A, g, 'white', 'd4');
  await step(main.B, g, 'black', 'resign');
  const pgn = await api(main.C, 'GET', `/v1/games/${g.id}/pgn`);
  assert.equal(pgn.status, 200);
  assert.match(pgn.text, /^\[TimeControl "300\+2"\]$/m);
  assert.match(pgn.text, /^\[Result "1-0"\]$/m);
  const untimed = await createGame(main.A);
  const upgn = await api(main.A, 'GET', `/v1/games/${untimed.id}/pgn`);
  assert.doesNotMatch(upgn.text, /TimeControl "\d/, 'an untimed game has no time control of seconds');
});

// ---------------------------------------------------------------- takebacks and abort

test('takeback by agreement: offer and accept go back to the proposer\'s turn; decline; lapse; one offer; nothing to take back; /undo refused', async () => {
  const { A, B, C } = main;
  const g = await createGame(A);
  const ok = (target, color, route, fields) => step(target, g, color, route, fields);
  const tb = (target, color, action) => ok(target, color, 'takeback', { action });

  // Nothing to take back yet, for either side.
  await expectRefused(await change(A, g, 'white', 'takeback', { action: 'offer' }), g, null, 'white offers at move 0');
  await expectRefused(await change(B, g, 'black', 'takeback', { action: 'offer' }), g, null, 'black offers at move 0');
  await ok(A, 'white', 'moves', { move: 'e4' });
  await expectRefused(await change(B, g, 'black', 'takeback', { action: 'offer' }), g, null, 'black has not moved');
  // No offer to answer.
  await expectRefused(await change(B, g, 'black', 'takeback', { action: 'accept' }), g, null, 'accept without an offer');
  await expectRefused(await change(B, g, 'black', 'takeback', { action: 'decline' }), g, null, 'decline without an offer');

  // White takes back e4 before black replied: one ply.
  let r = await tb(B, 'white', 'offer');
  assert.equal(r.takeback_offer, 'white');
  assert.equal(r.move, null);
  assert.equal(r.move_count, 1);
  await expectRefused(await change(C, g, 'white', 'takeback', { action: 'offer' }), g, null, 'a second offer');
  r = await tb(C, 'black', 'accept');
  assert.equal(r.takeback_offer, null);
  assert.equal(r.move_count, 0);
  assert.equal(r.position.fen, START_FEN);

  // After e4 e5 white proposes: back two plies to white's turn before e4.
  await ok(A, 'white', 'moves', { move: 'e4' });
  await ok(B, 'black', 'moves', { move: 'e5' });
  await tb(A, 'white', 'offer');
  r = await tb(B, 'black', 'accept');
  assert.equal(r.move_count, 0, 'two plies back');
  assert.equal(r.position.fen, START_FEN);
  assert.equal(r.position.turn, 'white');

  // After e4 e5 black proposes: back one ply to black's turn before e5.
  await ok(A, 'white', 'moves', { move: 'e4' });
  const afterE4 = (await read(A, g)).position.fen;
  await ok(B, 'black', 'moves', { move: 'e5' });
  await tb(C, 'black', 'offer');
  r = await tb(A, 'white', 'accept');
  assert.equal(r.move_count, 1, 'one ply back');
  assert.equal(r.position.fen, afterE4);
  assert.equal(r.position.turn, 'black');
  assert.deepEqual((await read(B, g)).moves, [{ uci: 'e2e4', san: 'e4' }]);

  // Decline: the offer goes, the position stays.
  await ok(B, 'black', 'moves', { move: 'c5' });
  const beforeDecline = (await read(A, g)).position.fen;
  await tb(A, 'white', 'offer');
  r = await tb(B, 'black', 'decline');
  assert.equal(r.takeback_offer, null);
  assert.equal(r.move_count, 2);
  assert.equal(r.position.fen, beforeDecline);

  // An offer lapses when its receiver moves instead.
  await ok(A, 'white', 'moves', { move: 'Nf3' });
  await tb(B, 'white', 'offer');
  r = await ok(C, 'black', 'moves', { move: 'd6' });
  assert.equal(r.takeback_offer, null, 'the move answers the offer');
  await expectRefused(await change(A, g, 'black', 'takeback', { action: 'accept' }), g, null, 'accept a lapsed offer');
  assert.equal((await read(A, g)).moves.length, 4);

  // Under "agreement" /undo is refused, naming the policy.
  const undo = await expectRefused(await change(A, g, 'black', 'undo'), g, null, '/undo under agreement');
  assert.match(`${undo.code} ${undo.detail}`, /agreement/, 'the refusal names the policy');
});

test('takeback policies "free" (undo works) and "none" (neither undo nor takeback)', async () => {
  const { A, B } = main;
  const free = await createGame(A, { takeback: 'free' });
  await play(A, free, 'white', 'e4');
  const u = await step(B, free, 'white', 'undo');
  assert.equal(u.move_count, 0);
  assert.equal(u.position.fen, START_FEN);
  assert.equal(u.takeback, 'free');

  const none = await createGame(A, { takeback: 'none' });
  await play(A, none, 'white', 'e4');
  const undo = await expectRefused(await change(B, none, 'white', 'undo'), none, null, '/undo under none');
  assert.match(`${undo.code} ${undo.detail}`, /none/, 'the refusal names the policy');
  const offer = await expectRefused(await change(B, none, 'white', 'takeback', { action: 'offer' }), none, null, 'offer under none');
  assert.match(`${offer.code} ${offer.detail}`, /none/, 'the refusal names the policy');
});

// ---------------------------------------------------------------- takebacks give back no increment

/**
 * The clock of game g as GET /v1/games/{id} on target reads it: { white, black, at } (ms; at is Redis's time of
 * the read).
 */
async function clockOf(target, g) {
  const { clock } = await read(target, g);
  return { white: clock.white_ms, black: clock.black_ms, at: clock.at_ms };
}

/**
 * Asserts that neither side holds more than it did at `before` (a clockOf() read) and that neither lost more
 * than the Redis time that passed between the two reads: time spent stays spent, and a takeback takes back the
 * increment a move earned and nothing else.
 */
function expectNoTimeMinted(before, after, what) {
  const passed = after.at - before.at;
  for (const side of ['white', 'black']) {
    assert.ok(after[side] <= before[side], `${what}: ${side} holds ${after[side]} ms, more than the ${before[side]} ms before`);
    assert.ok(after[side] >= before[side] - passed,
      `${what}: ${side} lost ${before[side] - after[side]} ms in ${passed} ms: a takeback took away more than the increment`);
  }
}

test('clock: moving and undoing in a loop under "free" with a 10-minute increment never gives the mover more time', async () => {
  const { A, B, C } = main;
  const g = await createGame(A, { takeback: 'free', clock: { initial_ms: 60000, increment_ms: 600000 } });
  await play(A, g, 'white', 'e4');
  await play(B, g, 'black', 'e5'); // the clock runs from here, White to move
  const before = await clockOf(C, g);
  assert.equal(before.black, 60000, 'the first two plies earned nothing');
  const started = performance.now();
  let highest = 0;
  for (let i = 0; i < 20; i++) {
    const m = await play([A, B, C][i % 3], g, 'white', 'Nf3');
    assert.ok(m.clock.white_ms > 600000, `Nf3 earns its increment: ${m.clock.white_ms}`);
    const u = await step([B, C, A][i % 3], g, 'white', 'undo');
    assert.equal(u.move_count, 2);
    assert.ok(u.clock.white_ms <= before.white, `undo ${i + 1}: White ${u.clock.white_ms} ms, above the ${before.white} ms before the loop`);
    assert.ok(u.clock.white_ms < m.clock.white_ms - 599000, `undo ${i + 1} takes the increment back: ${m.clock.white_ms} -> ${u.clock.white_ms}`);
    const now = await clockOf([C, A, B][i % 3], g);
    highest = Math.max(highest, now.white);
    assert.ok(now.white <= before.white && now.black <= before.black, `after undo ${i + 1}: ${JSON.stringify(now)} vs ${JSON.stringify(before)}`);
  }
  const after = await clockOf(A, g);
  expectNoTimeMinted(before, after, '20 moves and undos');
  assert.equal((await read(A, g)).status, 'active');
  console.log(`takeback loop, free: 20 move+undo cycles with a 600 s increment in ${(performance.now() - started).toFixed(0)} ms: ` +
    `White ${before.white} -> ${after.white} ms (highest read ${highest}), Black ${before.black} -> ${after.black} ms`);
});

test('clock: moves and accepted takebacks in a loop under "agreement" (one ply and two) never give either side more time', async () => {
  const { A, B, C } = main;
  const g = await createGame(A, { clock: { initial_ms: 60000, increment_ms: 600000 } });
  await play(A, g, 'white', 'e4');
  await play(B, g, 'black', 'e5');
  const before = await clockOf(C, g);
  for (let i = 0; i < 5; i++) { // White's own last move: one ply
    await play(A, g, 'white', 'Nf3');
    await step(B, g, 'white', 'takeback', { action: 'offer' });
    const r = await step(C, g, 'black', 'takeback', { action: 'accept' });
    assert.equal(r.move_count, 2, 'one ply back');
    const now = await clockOf(A, g);
    assert.ok(now.white <= before.white, `takeback ${i + 1}: White ${now.white} ms, above the ${before.white} ms before the loop`);
    assert.ok(now.black <= before.black, `takeback ${i + 1}: Black ${now.black} ms, above the ${before.black} ms before`);
  }
  for (let i = 0; i < 5; i++) { // White's move and Black's reply: two plies, both increments
    await play(A, g, 'white', 'Nf3');
    const reply = await play(B, g, 'black', 'Nc6');
    assert.ok(reply.clock.black_ms > 600000 && reply.clock.white_ms > 600000, 'both moves earned their increment');
    await step(C, g, 'white', 'takeback', { action: 'offer' });
    const r = await step(A, g, 'black', 'takeback', { action: 'accept' });
    assert.equal(r.move_count, 2, 'two plies back');
    const now = await clockOf(B, g);
    assert.ok(now.white <= before.white, `two-ply takeback ${i + 1}: White ${now.white} ms, above the ${before.white} ms before`);
    assert.ok(now.black <= before.black, `two-ply takeback ${i + 1}: Black ${now.black} ms, above the ${before.black} ms before`);
  }
  const after = await clockOf(C, g);
  expectNoTimeMinted(before, after, '10 moves and accepted takebacks');
  console.log(`takeback loop, agreement: 10 takebacks with a 600 s increment: White ${before.white} -> ${after.white} ms, Black ${before.black} -> ${after.black} ms`);
});

test('clock: a takeback of the first plies, of an imported PGN\'s moves, and in Chess960 takes away no increment they never earned', async () => {
  const { A, B } = main;
  const clock = { initial_ms: 60000, increment_ms: 600000 };
  // Right after the start: the first two plies earn nothing, so their undo leaves both clocks full.
  const g = await createGame(A, { takeback: 'free', clock });
  await play(A, g, 'white', 'e4');
  let u = await step(B, g, 'white', 'undo');
  assert.deepEqual([u.clock.white_ms, u.clock.black_ms, u.clock.running], [60000, 60000, null]);
  await play(A, g, 'white', 'e4');
  await play(B, g, 'black', 'e5');
  u = await step(A, g, 'black', 'undo');
  assert.equal(u.clock.black_ms, 60000, 'Black\'s first move earned nothing and loses nothing');
  assert.ok(u.clock.white_ms <= 60000);

  // Imported from PGN: the four moves earned nothing; a move made after the import earns and loses its increment.
  const imported = await createGame(A, { takeback: 'free', clock, pgn: '1. e4 e5 2. Nf3 Nc6 *' });
  assert.equal(imported.body.clock.running, 'white', 'four imported plies: the clock runs');
  u = await step(B, imported, 'black', 'undo'); // Black takes back its imported Nc6
  assert.equal(u.move_count, 3);
  assert.equal(u.clock.black_ms, 60000, 'an imported move earned no increment: its undo takes none');
  const before = await clockOf(A, imported);
  for (let i = 0; i < 5; i++) {
    const m = await play(A, imported, 'black', 'Nc6');
    assert.ok(m.clock.black_ms > 600000, 'Nc6 played on this clock earns its increment');
    await step(B, imported, 'black', 'undo');
  }
  expectNoTimeMinted(before, await clockOf(B, imported), 'an imported game\'s move and undo loop');

  // Chess960 (position 0, BBQNNRKR): the same loop, the same clock.
  const c960 = await createGame(A, { takeback: 'free', clock, chess960_position: 0 });
  await play(A, c960, 'white', 'a2a3');
  await play(B, c960, 'black', 'a7a6');
  const start960 = await clockOf(A, c960);
  for (let i = 0; i < 5; i++) {
    await play(A, c960, 'white', 'h2h3');
    await step(B, c960, 'white', 'undo');
  }
  expectNoTimeMinted(start960, await clockOf(B, c960), 'Chess960 move and undo loop');
});

test('abort: either player before both have moved; refused once aborted and after ply 2', async () => {
  const { A, B, C } = main;
  for (const [plies, who] of [[[], 'black'], [[], 'white'], [['e4'], 'white'], [['e4'], 'black']]) {
    const g = await createGame(A, { clock: { initial_ms: 60000, increment_ms: 1000 } });
    for (const [i, m] of plies.entries()) await play(A, g, mover(i), m);
    const r = await step(B, g, who, 'abort');
    assert.equal(r.status, 'aborted', `${who} aborts after ${plies.length} plies`);
    assert.equal(r.result, '*');
    assert.equal(r.termination, 'aborted');
    assert.deepEqual([r.position.status, r.position.result, r.position.draw_reason], ['aborted', '*', null]);
    assert.equal(r.clock.running, null);
    const again = await change(C, g, who === 'white' ? 'black' : 'white', 'abort');
    await expectRefused(again, g, 'game_over', 'abort after abort');
    expectProblem(await change(A, g, mover(plies.length), 'moves', { move: plies.length ? 'e5' : 'e4' }), 409, 'game_over');
    const pgn = await api(A, 'GET', `/v1/games/${g.id}/pgn`);
    assert.match(pgn.text, /^\[Result "\*"\]$/m);
  }
  const g = await createGame(A);
  await play(A, g, 'white', 'e4');
  await play(B, g, 'black', 'e5');
  for (const who of ['white', 'black']) await expectRefused(await change(C, g, who, 'abort'), g, null, `${who} aborts after ply 2`);
  assert.equal((await read(A, g)).status, 'active');
});

// ---------------------------------------------------------------- fan-out

test('events: each kind of write reaches a stream on another replica as a change named for it, in order', async () => {
  const { A, B, C } = main;
  const g = await createGame(A, { takeback: 'free', clock: { initial_ms: 600000, increment_ms: 1000 } });
  const streams = [await mustOpenStream(B, g.id, { format: 'ndjson' }), await mustOpenStream(C, g.id, { format: 'sse' })];
  for (const s of streams) {
    const snap = await expectSnapshot(s, 1);
    assert.equal(snap.data.takeback, 'free');
    assert.equal(snap.data.clock.initial_ms, 600000);
    assert.equal(snap.data.id, g.id);
  }
  const writes = [
    ['white', 'moves', { move: 'e4' }, 'move'],
    ['white', 'undo', {}, 'undo'],
    ['white', 'moves', { move: 'd4' }, 'move'],
    ['black', 'moves', { move: 'd5' }, 'move'],
    ['white', 'takeback', { action: 'offer' }, 'takeback_offer'],
    ['black', 'takeback', { action: 'decline' }, 'takeback_decline'],
    ['black', 'takeback', { action: 'offer' }, 'takeback_offer'],
    ['white', 'takeback', { action: 'accept' }, 'takeback_accept'],
    ['black', 'moves', { move: 'Nf6' }, 'move'],
    ['white', 'draw', { action: 'offer' }, 'draw_offer'],
    ['black', 'draw', { action: 'decline' }, 'draw_decline'],
    ['black', 'draw', { action: 'offer' }, 'draw_offer'],
    ['white', 'draw', { action: 'accept' }, 'draw_accept'],
  ];
  const answers = [];
  for (const [color, route, fields] of writes) answers.push(await step(A, g, color, route, fields));
  for (const s of streams) {
    for (const [i, [, , , kind]] of writes.entries()) {
      const ev = await expectChange(s, i + 2, kind);
      // The event is the change as its writer's answer told it, without the legal moves.
      const { sent, received, ...answer } = answers[i];
      const { legal_moves: _, ...position } = answer.position;
      assert.deepEqual({ ...ev.data, type: undefined, event: undefined }, { ...answer, position, type: undefined, event: undefined },
        `${kind} at version ${i + 2}`);
    }
    assert.equal((await s.end(2000)).complete, true, 'the draw ended the game and the stream');
  }
  assert.equal(answers.at(-1).status, 'draw');
  assert.equal(answers.at(-1).termination, 'agreement');
});

test('fan-out: 200 moves on replica A reach NDJSON and SSE streams on B and C (latency p50/p99 printed)', async () => {
  const { A, B, C } = main;
  const g = await createGame(A);
  const streams = [];
  for (const [name, target] of [['B', B], ['C', C]]) {
    for (const format of ['ndjson', 'sse']) {
      const s = await mustOpenStream(target, g.id, { format });
      s.label = `${name}/${format}`;
      streams.push(s);
    }
  }
  for (const s of streams) await expectSnapshot(s, 1, `${s.label}: the first event`);
  const lat = new Map(streams.map((s) => [s.label, []]));
  for (let i = 0; i < 200; i++) {
    const sent = performance.now();
    const res = await change(A, g, mover(i), 'moves', { move: LINE[i] });
    assert.equal(res.status, 200, `ply ${i + 1}: ${res.text}`);
    g.v = res.body.version;
    for (const s of streams) {
      const ev = await expectChange(s, g.v, 'move');
      assert.equal(ev.data.move.uci, LINE[i], `${s.label}: ply ${i + 1}`);
      assert.equal(ev.data.move_count, i + 1);
      lat.get(s.label).push(ev.at - sent);
    }
  }
  const all = [...lat.values()].flat();
  const fmt = (xs) => `p50 ${quantile(xs, 0.5).toFixed(2)} ms, p99 ${quantile(xs, 0.99).toFixed(2)} ms, max ${Math.max(...xs).toFixed(2)} ms`;
  for (const [label, xs] of lat) console.log(`fan-out move on A -> event on ${label}: ${fmt(xs)} (${xs.length} moves)`);
  console.log(`fan-out all streams: ${fmt(all)}; goal p99 < 50 ms`);
  assert.ok(quantile(all, 0.99) < 1000, `p99 ${quantile(all, 0.99)} ms: a move takes a second to reach a stream`);
  for (const s of streams) {
    s.assertClean();
    assert.equal(s.ended, null, `${s.label} is still open`);
    await s.close();
  }
});

/**
 * An SSE client through `target` that reconnects with Last-Event-ID whenever
 * its connection ends (as a browser's EventSource does) and checks that the
 * events of all its connections together cover every version.
 */
class Follower {
  constructor(target, id, label) {
    Object.assign(this, { target, id, label, streams: [], covered: 0, cuts: 0, stopped: false, error: null });
  }

  async start() {
    await this.connect();
    this.done = this.run();
  }

  async connect() {
    const deadline = Date.now() + 10000;
    for (;;) {
      let s;
      try {
        s = await openStream(this.target, this.id, { format: 'sse', ...(this.covered ? { lastEventId: this.covered } : {}) });
      } catch { /* the balancer or the replica is away: try again */ }
      if (s instanceof Stream) {
        this.streams.push(s);
        return s;
      }
      // Only "no replica answered" (nginx's 502/504) or "come back later" (503) is worth another try.
      assert.ok(s === undefined || [502, 503, 504].includes(s.status), `${this.label}: the stream was refused: ${s?.status} ${s?.text}`);
      assert.ok(Date.now() < deadline, `${this.label}: no stream within 10 s of the cut (last answer ${s?.status}: ${s?.text})`);
      await sleep(50);
    }
  }

  async run() {
    let s = this.streams.at(-1);
    while (!this.stopped) {
      let ev;
      try {
        ev = await s.next(60000);
      } catch (err) {
        if (this.stopped) return;
        if (s.failure || !s.ended) { this.error = err; return; }
        this.cuts++;
        s = await this.connect();
        continue;
      }
      try {
        this.covered = coverage([ev], this.covered);
      } catch (err) {
        this.error = err;
        return;
      }
    }
  }

  async stop() {
    this.stopped = true;
    for (const s of this.streams) if (!s.ended) await s.close();
    await this.done;
    if (this.error) throw this.error;
  }
}

test('a replica killed under an SSE stream held through nginx: the client reconnects with Last-Event-ID and misses no version', async () => {
  const { A, C, redis } = main;
  const victim = await startServer(['--redis', redis.url, '--threads', '2'], ENV);
  const lb = await startNginx([A.port, victim.port, C.port], { streaming: true });
  try {
    const g = await createGame(A);
    // Streams through the balancer until the victim holds at least one (round robin: three do it).
    const followers = [];
    for (let i = 0; i < 9 && (followers.length < 3 || (await metric(victim, 'chessd_streams_open')) < 1); i++) {
      const f = new Follower(lb, g.id, `follower ${i}`);
      await f.start();
      followers.push(f);
      await waitUntil(() => f.covered === 1, 5000, `${f.label}: no snapshot`);
    }
    const onVictim = await metric(victim, 'chessd_streams_open');
    assert.ok(onVictim >= 1, 'the victim holds a stream');

    // Moves on A all along; the victim dies after the tenth.
    const plies = 60;
    for (let i = 0; i < plies; i++) {
      if (i === 10) victim.proc.kill('SIGKILL');
      await play(A, g, mover(i), LINE[i]);
      await sleep(5);
    }
    assert.deepEqual(await victim.exited, { code: null, signal: 'SIGKILL' });
    await waitUntil(() => followers.every((f) => f.covered === g.v || f.error), 15000,
      () => `every follower reaches version ${g.v}: ${followers.map((f) => `${f.label} ${f.covered}`).join(', ')}`);
    for (const f of followers) await f.stop();
    const cut = followers.filter((f) => f.cuts > 0);
    console.log(`kill: ${followers.length} followers, ${onVictim} on the killed replica, ${cut.length} cut and reconnected` +
      `, reconnections answered with ${cut.map((f) => f.streams.slice(1).map((s) => s.events[0]?.data.type).join('+')).join(', ')}`);
    assert.equal(cut.length, onVictim, 'exactly the streams on the killed replica were cut');
    for (const f of followers) assert.equal(f.covered, g.v, `${f.label} covers every version`);
  } finally {
    await lb.stop();
    killIfRunning(victim);
  }
});

test('a redis-server restart: open streams resync (later versions arrive) without reconnecting', async () => {
  const cluster = await startCluster({ persistent: true, nginx: false });
  try {
    const { A, B, C, redis } = cluster;
    const g = await createGame(A);
    const streams = [];
    for (const [name, target, format] of [['B', B, 'ndjson'], ['C', C, 'sse'], ['B', B, 'sse']]) {
      const s = await mustOpenStream(target, g.id, { format });
      s.label = `${name}/${format}`;
      streams.push(s);
      await expectSnapshot(s, 1);
    }
    for (let i = 0; i < 3; i++) {
      await play(A, g, mover(i), LINE[i]);
      for (const s of streams) await expectChange(s, g.v, 'move');
    }
    const reconnects = await Promise.all([B, C].map((r) => metric(r, 'chessd_pubsub_reconnects_total')));

    await redis.stop();
    await redis.start();
    // Moves on A again, each retried (same Idempotency-Key) until Redis is back for A.
    for (let i = 3; i < 8; i++) {
      const deadline = Date.now() + 15000;
      for (;;) {
        const res = await change(A, g, mover(i), 'moves', { move: LINE[i] }, { 'idempotency-key': `restart-${i}` });
        if (res.status === 200) {
          g.v = res.body.version;
          break;
        }
        assert.equal(res.status, 503, `ply ${i + 1} after the restart: ${res.text}`);
        assert.ok(Date.now() < deadline, `ply ${i + 1}: Redis not back for A within 15 s: ${res.text}`);
        await sleep(50);
      }
    }
    assert.equal(g.v, 9);
    for (const s of streams) {
      await waitUntil(() => s.lastVersion === g.v || s.failure || s.ended, 20000, () => `${s.label} resyncs to ${g.v}: ${s.summary()}`);
      s.assertClean();
      assert.equal(s.ended, null, `${s.label} was not closed: it resyncs on the same connection`);
      assert.equal(coverage(s.events), g.v, `${s.label}: every version or a snapshot that covers it`);
    }
    const after = await Promise.all([B, C].map((r) => metric(r, 'chessd_pubsub_reconnects_total')));
    assert.ok(after.every((n, i) => n > reconnects[i]), `both stream replicas reconnected to Redis: ${reconnects} -> ${after}`);
    console.log(`redis restart: ${streams.map((s) => `${s.label} ${s.summary()}`).join('; ')}`);
    for (const s of streams) await s.close();
  } finally {
    await cluster.stop();
  }
});

// ---------------------------------------------------------------- flags

test('a flag that falls with nobody moving is announced within 200 ms of the deadline, once', async () => {
  const { A, B, C, lb, redis } = main;
  const g = await createGame(A, { clock: { initial_ms: 1000 } });
  const streams = [];
  for (const [name, target, format] of [['B', B, 'ndjson'], ['C', C, 'sse'], ['lb', lb, 'sse']]) {
    const s = await mustOpenStream(target, g.id, { format });
    s.label = `${name}/${format}`;
    streams.push(s);
    await expectSnapshot(s, 1);
  }
  await play(A, g, 'white', 'e4');
  await play(A, g, 'black', 'e5');
  const { offset, rtt } = await redisClockOffset(redis);
  let deadline;
  for (const s of streams) {
    await expectChange(s, 2, 'move');
    const ev = await expectChange(s, 3, 'move');
    assert.equal(ev.data.clock.running, 'white');
    deadline ??= ev.data.clock.at_ms + ev.data.clock.white_ms;
    assert.equal(ev.data.clock.at_ms + ev.data.clock.white_ms, deadline);
  }
  const delays = [];
  for (const s of streams) {
    const ev = await expectChange(s, 4, 'timeout', 5000);
    assert.equal(ev.data.status, 'timeout');
    assert.equal(ev.data.result, '0-1');
    assert.equal(ev.data.termination, 'time_forfeit');
    assert.equal(ev.data.clock.white_ms, 0);
    assert.ok(ev.data.clock.at_ms >= deadline, `the ending was written at ${ev.data.clock.at_ms}, not before the deadline ${deadline}`);
    const delay = ev.wall + offset - deadline;
    delays.push(delay);
    assert.ok(delay <= 200, `${s.label}: announced ${delay.toFixed(1)} ms after the deadline (Redis-local clock offset ${offset.toFixed(1)} ms, rtt ${rtt} ms)`);
    const end = await s.end(2000);
    assert.equal(end.complete, true, `${s.label}: the stream ends after the ending event`);
  }
  console.log(`flag announced ${delays.map((d) => d.toFixed(1)).join(', ')} ms after the deadline (B ndjson, C sse, nginx sse)`);
  const r = await read(A, g);
  assert.equal(r.version, 4, 'three replicas with timers wrote one ending');
  assert.equal(r.status, 'timeout');
});

test('32 concurrent reads after a deadline make exactly one ending write', async () => {
  const { A, B, C, lb, redis } = main;
  const { g, deadline } = await flaggingGame();
  const barrier = await createGame(A);
  const sub = await redisSubscriber(redis.port, 'chessd:events:*');
  await untilRedisTime(redis, deadline + 20);
  const targets = [A, B, C, lb];
  const answers = await Promise.all(Array.from({ length: 32 }, (_, i) => api(targets[i % 4], 'GET', `/v1/games/${g.id}`, { agent: false })));
  // The one ending write published one timeout event; the reads after it publish nothing. A move on
  // another game afterwards is the barrier: Redis sends one subscriber its messages in order.
  await read(A, g);
  await play(A, barrier, 'white', 'e4');
  await waitUntil(() => sub.messages.some((m) => m.channel === `chessd:events:{${barrier.id}}`), 5000, 'the barrier move is published');
  sub.close();
  const ours = sub.messages.filter((m) => m.channel === `chessd:events:{${g.id}}`);
  assert.equal(ours.length, 1, `one publication: ${ours.map((m) => m.payload.slice(0, 40)).join(' | ')}`);
  const pub = parsePublished(ours[0].payload);
  assert.deepEqual([pub.version, pub.ended, pub.deadline_ms, pub.data.event, pub.data.status], [4, true, 0, 'timeout', 'timeout']);
  assert.ok(pub.at_ms >= deadline, 'written after the flag fell');
  for (const [i, res] of answers.entries()) {
    assert.equal(res.status, 200, `read ${i}: ${res.text}`);
    assert.equal(res.body.status, 'timeout', `read ${i}`);
    assert.equal(res.body.result, '0-1');
    assert.equal(res.body.version, 4, `read ${i}: one ending write (version 3 -> 4)`);
    assert.equal(res.headers.etag, '"4"');
  }
  for (const target of targets) assert.equal((await read(target, g)).version, 4);
});

// ---------------------------------------------------------------- many streams

test('1,000 streams on one replica: RSS and threads printed; every stream gets a broadcast event', async () => {
  const { A, redis } = main;
  const n = 1000;
  const big = await startServer(['--redis', redis.url, '--threads', '2', '--max-connections', '3000', '--per-ip-connections', '0',
    '--max-streams', String(n + 100), '--max-streams-per-address', String(n + 100)], ENV);
  const streams = [];
  try {
    const g = await createGame(A);
    await read(big, g); // the game once through the replica, so its first read is not in the figures
    const before = procStatus(big.proc.pid);
    for (let i = 0; i < n; i += 100) {
      const batch = await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) =>
        mustOpenStream(big, g.id, { format: (i + j) % 2 ? 'sse' : 'ndjson' })));
      streams.push(...batch);
    }
    await Promise.all(streams.map((s) => expectSnapshot(s, 1)));
    assert.equal(await metric(big, 'chessd_streams_open'), n);
    const afterOpen = procStatus(big.proc.pid);
    const sent = performance.now();
    await play(A, g, 'white', 'e4');
    const evs = await Promise.all(streams.map((s) => expectChange(s, 2, 'move', 10000)));
    const lat = evs.map((ev) => ev.at - sent);
    const perStream = ((afterOpen.rssKiB - before.rssKiB) * 1024) / n;
    console.log(`${n} streams: RSS ${before.rssKiB} -> ${afterOpen.rssKiB} KiB (${(perStream / 1024).toFixed(1)} KiB per stream), ` +
      `threads ${before.threads} -> ${afterOpen.threads}; one move on A -> all ${n}: p50 ${quantile(lat, 0.5).toFixed(1)} ms, ` +
      `last ${Math.max(...lat).toFixed(1)} ms`);
    assert.ok(afterOpen.threads <= before.threads + 8, `no thread per stream: ${before.threads} -> ${afterOpen.threads}`);
    await stopWithStreams(big, streams);
  } finally {
    killIfRunning(big);
    for (const s of streams) if (!s.ended) s.close();
  }
});

/** SIGTERM with streams open: each gets {"type":"closing","reason":"shutdown"} and ends; the replica exits 0. */
async function stopWithStreams(server, streams) {
  const stopping = server.stop();
  await Promise.all(streams.map(async (s) => {
    const ev = await s.waitFor((d) => d.type === 'closing', 15000, 'the closing event');
    assert.deepEqual(ev.data, { type: 'closing', reason: 'shutdown' });
    assert.equal((await s.end(15000)).complete, true, 'the stream ends properly after closing');
  }));
  await stopping;
}

/** SIGKILL for a replica a failed test left running. */
function killIfRunning(server) {
  if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL');
}

// ---------------------------------------------------------------- long-poll

/** GET /v1/games/{id} with If-None-Match "version" and Prefer: wait=N; resolves to the answer with ms (elapsed). */
function longPoll(target, g, version, wait) {
  return api(target, 'GET', `/v1/games/${g.id}?legal_moves=false`,
    { headers: { 'if-none-match': `"${version}"`, prefer: `wait=${wait}` }, timeoutMs: 90000, agent: false });
}

/** Waits until target holds `count` long-poll waiters (they count as streams). */
const waiters = (target, count) => waitUntil(async () => (await metric(target, 'chessd_streams_open')) === count, 5000,
  `${count} waiter(s) held on port ${target.port}`);

test('long-poll: 200 when a move lands on another replica, 304 after N s, wait capped at 60', async () => {
  const { A, C, lb, redis } = main;
  // The waiters are held on a replica of their own, so its count of streams is theirs alone.
  const B = await startServer(['--redis', redis.url, '--threads', '2'], ENV);
  try {
    await longPolls(A, B, C, lb);
    await B.stop();
  } finally {
    killIfRunning(B);
  }
});

async function longPolls(A, B, C, lb) {
  const g = await createGame(A);

  // Woken by a move on A.
  const held = longPoll(B, g, 1, 10);
  await waiters(B, 1);
  const moveSent = performance.now();
  await play(A, g, 'white', 'e4');
  const woken = await held;
  assert.equal(woken.status, 200, woken.text);
  assert.equal(woken.body.version, 2);
  assert.equal(woken.headers['preference-applied'], 'wait=10');
  console.log(`long-poll woken ${(performance.now() - moveSent).toFixed(1)} ms after the move was sent`);

  // Nothing changes for N s: 304.
  const t0 = performance.now();
  const idle = await longPoll(B, g, 2, 1);
  const idleMs = performance.now() - t0;
  assert.equal(idle.status, 304, idle.text);
  assert.equal(idle.headers.etag, '"2"');
  assert.equal(idle.headers['preference-applied'], 'wait=1');
  assert.ok(idleMs >= 950, `held for the second asked: ${idleMs.toFixed(0)} ms`);
  assert.ok(idleMs < 5000, `not much longer than asked: ${idleMs.toFixed(0)} ms`);

  // Through nginx, the same.
  const t1 = performance.now();
  const viaLb = await longPoll(lb, g, 2, 2);
  assert.equal(viaLb.status, 304);
  assert.equal(viaLb.headers['preference-applied'], 'wait=2');
  assert.ok(performance.now() - t1 >= 1950);

  // wait=999 is applied as 60; a move wakes it long before.
  const capped = longPoll(B, g, 2, 999);
  await waiters(B, 1);
  await play(C, g, 'black', 'e5');
  const res = await capped;
  assert.equal(res.status, 200);
  assert.equal(res.body.version, 3);
  assert.equal(res.headers['preference-applied'], 'wait=60');

  // A stale copy is answered at once.
  const t2 = performance.now();
  const stale = await longPoll(B, g, 1, 30);
  assert.equal(stale.status, 200);
  assert.equal(stale.body.version, 3);
  assert.ok(performance.now() - t2 < 5000, 'a stale If-None-Match is not held');
}

// ---------------------------------------------------------------- bad input and bounds

test('bad input: unknown takeback action, nothing to take back, unknown game, bad Last-Event-ID', async () => {
  const { A, B, C, lb } = main;
  const g = await createGame(A);
  expectProblem(await change(A, g, 'white', 'takeback', { action: 'redo' }), 400, 'invalid_field');
  expectProblem(await change(A, g, 'white', 'takeback', {}), 400, 'invalid_field');
  await expectRefused(await change(B, g, 'white', 'takeback', { action: 'offer' }), g, null, 'nothing to take back');
  for (const format of ['ndjson', 'sse']) {
    const res = await openStream(C, 'AAAAAAAAAAAAAAAA', { format });
    expectProblem(res, 404, 'game_not_found');
  }
  await play(A, g, 'white', 'e4');
  await play(A, g, 'black', 'e5');

  // Last-Event-ID equal to the version: only live events; any other value: a snapshot first, then live events.
  const current = await mustOpenStream(B, g.id, { format: 'sse', lastEventId: 3 });
  const currentNd = await mustOpenStream(C, g.id, { format: 'ndjson', lastEventId: 3 });
  const bad = ['garbage', '-1', '0', '2', '3.0', ' 3x', '1e3', '99999999999999999999999', '4', '1000'];
  const streams = [];
  for (const [i, id] of bad.entries()) {
    const s = await mustOpenStream([B, C, lb][i % 3], g.id, { format: i % 2 ? 'sse' : 'ndjson', lastEventId: id });
    s.label = `Last-Event-ID ${JSON.stringify(id)}`;
    streams.push(s);
    await expectSnapshot(s, 3, s.label);
  }
  await play(C, g, 'white', 'Nf3');
  for (const s of [current, currentNd]) await expectChange(s, 4, 'move');
  for (const s of streams) await expectChange(s, 4, 'move');
  await play(A, g, 'black', 'Nc6');
  for (const s of [current, currentNd, ...streams]) {
    await expectChange(s, 5, 'move');
    assert.equal(s.events.length, s === current || s === currentNd ? 2 : 3, `${s.label ?? 'current'}: one snapshot at most, no loop`);
    await s.close();
  }

  // An ended game: its stream is the snapshot, then the end; a live stream ends after the ending event.
  const live = await mustOpenStream(C, g.id, { format: 'sse' });
  await expectSnapshot(live, 5);
  await step(B, g, 'white', 'resign');
  const ending = await expectChange(live, 6, 'resign');
  assert.equal(ending.data.status, 'resigned');
  assert.equal((await live.end(2000)).complete, true);
  const over = await mustOpenStream(A, g.id);
  const snap = await expectSnapshot(over, 6);
  assert.equal(snap.data.status, 'resigned');
  assert.equal((await over.end(2000)).complete, true);
});

test('stream bounds: over --max-streams or --max-streams-per-address is 503 with Retry-After; heartbeats; closing on SIGTERM', async () => {
  const server = await startServer(['--redis', main.redis.url, '--threads', '2', '--max-streams', '3',
    '--max-streams-per-address', '2', '--heartbeat', '1'], ENV);
  const open = [];
  try {
    const g = await createGame(main.A);
    const refused = async (localAddress, what) => {
      const res = await openStream(server, g.id, { localAddress });
      assert.ok(!(res instanceof Stream), `${what}: refused`);
      const p = expectProblem(res, 503, 'too_many_streams');
      assert.match(String(res.headers['retry-after']), /^[1-9][0-9]*$/, `${what}: Retry-After`);
      return p;
    };
    open.push(await mustOpenStream(server, g.id, { format: 'ndjson', localAddress: '127.0.0.1' }));
    open.push(await mustOpenStream(server, g.id, { format: 'sse', localAddress: '127.0.0.1' }));
    await refused('127.0.0.1', 'a third stream from one address');
    open.push(await mustOpenStream(server, g.id, { format: 'ndjson', localAddress: '127.0.0.2' }));
    await refused('127.0.0.3', 'a fourth stream on the replica');
    for (const s of open) await expectSnapshot(s, 1);

    // Heartbeats every second on idle streams (NDJSON: an empty line; SSE: a comment).
    for (const s of open) await waitUntil(() => s.heartbeats.length >= 2, 5000, () => `${s.format}: heartbeats (${s.heartbeats.length})`);

    // A closed stream frees its place.
    await open.shift().close();
    await waitUntil(async () => {
      const s = await openStream(server, g.id, { localAddress: '127.0.0.1' });
      if (s instanceof Stream) open.push(s);
      return s instanceof Stream;
    }, 5000, 'a place freed by a closed stream');
    await expectSnapshot(open.at(-1), 1);
    await stopWithStreams(server, open);
  } finally {
    killIfRunning(server);
    for (const s of open) if (!s.ended) s.close();
  }
});
