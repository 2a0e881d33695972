// Client helpers for game event streams (GET /v1/games/{id}/events) and the
// Redis side of them: openEvents() reads a stream as it comes (SSE or NDJSON),
// checking the head against openapi.yaml and every event against its
// StreamEvent schema; publishEvent() publishes a message in the form a game's
// write publishes it; subscribed() waits until a replica has subscribed to a
// game's channel (a message published before that reaches no one).
import assert from 'node:assert/strict';
import http from 'node:http';
import { redisCommands, CLUSTER_MODE, gameRedis } from './server.mjs';
import { checkResponse, spec, validatorFor } from './openapi.mjs';
import { utf8, sleep } from './http.mjs';

export const channelOf = (id) => `chessd:events:{${id}}`;

/** The port of a redis://host:port/db URL (of its first node, for a redis+cluster:// one). */
export const redisPort = (url) => Number(/^[a-z+]+:\/\/(?:[^@/]*@)?[^:/,]+:(\d+)/.exec(url)[1]);

/**
 * One command about key to the Redis on port; in CLUSTER_MODE, when port is
 * a node of the shared cluster, to the master of key's slot instead.
 */
export async function redisCommandFor(port, key, cmd) {
  if (CLUSTER_MODE) {
    const store = await gameRedis();
    if (store.cluster.nodes.some((n) => n.port === port)) {
      const { keySlot } = await import('./cluster.mjs');
      return store.cluster.command((await store.cluster.slotOwner(keySlot(key))).port, ...cmd);
    }
  }
  return (await redisCommands(port, [cmd]))[0];
}

/** Whether port is a node of the shared cluster (sharded Pub/Sub there). */
async function sharded(port) {
  return CLUSTER_MODE && (await gameRedis()).cluster.nodes.some((n) => n.port === port);
}

/**
 * A change event with every field a game's write publishes (openapi.yaml's
 * ChangeEvent, which the streams' checks hold every event to): 1.e4 in an
 * untimed standard game, at `version`. filler (a string) stands as the
 * opening's name, for a test that needs big events.
 */
export function changeEvent(id, version, { filler } = {}) {
  return {
    type: 'change', event: 'move', id, version,
    move: { uci: 'e2e4', san: 'e4' },
    move_count: 1,
    position: {
      fen: 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1', turn: 'black', check: false, variant: 'standard',
      status: 'active', result: '*', draw_reason: null, claimable_draws: [], halfmove_clock: 0, fullmove_number: 1,
      castling_rights: 'KQkq', en_passant: null, chess960: false, repetitions: 1,
      opening: { eco: 'B00', name: filler ?? "King's Pawn Game" },
    },
    status: 'active', result: '*', termination: null, draw_offer: null, takeback: 'agreement', takeback_offer: null,
    clock: null, deadline_ms: null, updated_at: new Date().toISOString(),
  };
}

/** PUBLISHes (SPUBLISHes, on a cluster) a game event message (by default changeEvent's); resolves to the number of subscribers that got it. */
export async function publishEvent(port, id, { version, ended = false, atMs = 0, deadlineMs = 0, type = 'change', json } = {}) {
  const body = json ?? JSON.stringify(changeEvent(id, version));
  const message = `${version} ${ended ? 1 : 0} ${atMs} ${deadlineMs} ${type}\n${body}`;
  return redisCommandFor(port, channelOf(id), [(await sharded(port)) ? 'SPUBLISH' : 'PUBLISH', channelOf(id), message]);
}

/** The subscribers of a game's channel (PUBSUB NUMSUB, or SHARDNUMSUB on a cluster). */
async function subscribers(port, id) {
  const reply = await redisCommandFor(port, channelOf(id), ['PUBSUB', (await sharded(port)) ? 'SHARDNUMSUB' : 'NUMSUB', channelOf(id)]);
  return Number(reply[1]);
}

/** Waits until `count` connections subscribe to the game's channel (within timeoutMs). */
export async function subscribed(port, id, { count = 1, timeoutMs = 3000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await subscribers(port, id) >= count) return;
    assert.ok(Date.now() < deadline, `no subscriber on ${channelOf(id)} within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Waits until none of this test process's replicas is subscribed to the game's channel. */
export async function unsubscribed(port, id, { timeoutMs = 3000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await subscribers(port, id) === 0) return;
    assert.ok(Date.now() < deadline, `${channelOf(id)} still has subscribers after ${timeoutMs} ms`);
    await sleep(20);
  }
}

let eventValidator;
let muxValidator;
function checkEvent(data, label, mux) {
  if (mux) {
    muxValidator ??= validatorFor(spec().doc.components.schemas.MultiStreamEvent, 'components.schemas.MultiStreamEvent');
    assert.ok(muxValidator(data), `${label}: the event does not match MultiStreamEvent: ${JSON.stringify(muxValidator.errors)}\n${JSON.stringify(data).slice(0, 400)}`);
    return;
  }
  eventValidator ??= validatorFor(spec().doc.components.schemas.StreamEvent, 'components.schemas.StreamEvent');
  assert.ok(eventValidator(data), `${label}: the event does not match StreamEvent: ${JSON.stringify(eventValidator.errors)}\n${JSON.stringify(data).slice(0, 400)}`);
}

/**
 * Opens GET /v1/games/{id}/events (sse: Accept text/event-stream). Resolves,
 * once the head has come, to a stream: { status, headers, events (each {
 * data, id?, event? }), heartbeats, text, done (resolves when the server ends
 * it), next(timeoutMs) (the next event not taken yet), close() }. An answer
 * that is not a stream (404, 503...) resolves whole, with body checked.
 */
export function openEvents(server, id, { sse = false, headers = {}, path, agent, json } = {}) {
  const target = path ?? `/v1/games/${id}/events`;
  const method = json === undefined ? 'GET' : 'POST';
  const mux = method === 'POST';
  const allHeaders = { ...(sse ? { accept: 'text/event-stream' } : {}), ...(mux ? { 'content-type': 'application/json' } : {}), ...headers };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path: target, method, headers: allHeaders, agent: agent ?? false }, (res) => {
      const type = res.headers['content-type'] ?? '';
      const streaming = res.statusCode === 200 && /^(text\/event-stream|application\/x-ndjson)/.test(type);
      if (!streaming) {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => {
          try {
            const text = utf8(Buffer.concat(chunks), `${method} ${target} -> ${res.statusCode}`);
            const body = checkResponse({ method, path: target, status: res.statusCode, headers: res.headers, body: text });
            resolve({ status: res.statusCode, headers: res.headers, text, body });
          } catch (err) {
            reject(err);
          }
        });
        return;
      }
      checkResponse({ method, path: target, status: res.statusCode, headers: res.headers, body: '' });
      assert.equal(type, sse ? 'text/event-stream' : 'application/x-ndjson');
      const stream = makeStream(res, req, sse, `${method} ${target}`, mux);
      resolve(stream);
    });
    req.on('error', reject);
    req.end(mux ? JSON.stringify(json) : undefined);
  });
}

/** Opens POST /v1/games/events with body json (ids, since), as openEvents does. */
export const openMultiEvents = (server, json, opts = {}) => openEvents(server, null, { ...opts, path: '/v1/games/events', json });

function makeStream(res, req, sse, label, mux = false) {
  const stream = {
    status: res.statusCode,
    headers: res.headers,
    events: [],
    heartbeats: 0,
    text: '',
    ended: false,
    error: null,
    taken: 0,
    close() { req.destroy(); },
  };
  let pending = '';
  const waiters = new Set();
  const notify = () => { for (const w of waiters) w(); };
  const frame = sse ? '\n\n' : '\n';
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    stream.text += chunk;
    pending += chunk;
    for (let at; (at = pending.indexOf(frame)) >= 0;) {
      const block = pending.slice(0, at);
      pending = pending.slice(at + frame.length);
      try {
        if (sse) takeSse(stream, block, label, mux);
        else takeNdjson(stream, block, label, mux);
      } catch (err) {
        stream.error = err;
      }
    }
    notify();
  });
  stream.done = new Promise((resolve) => {
    const finish = () => { stream.ended = true; notify(); resolve(); };
    res.on('end', finish);
    res.on('close', finish);
    res.on('error', finish);
  });
  /** The next event not yet taken, within timeoutMs. */
  stream.next = (timeoutMs = 3000) => new Promise((resolve, reject) => {
    const check = () => {
      if (stream.error) { cleanup(); reject(stream.error); return true; }
      if (stream.taken < stream.events.length) { cleanup(); resolve(stream.events[stream.taken++]); return true; }
      if (stream.ended) { cleanup(); reject(new Error(`${label}: the stream ended; it had ${JSON.stringify(stream.text.slice(-300))}`)); return true; }
      return false;
    };
    const timer = setTimeout(() => { cleanup(); reject(new Error(`${label}: no event within ${timeoutMs} ms; got ${JSON.stringify(stream.text.slice(-300))}`)); }, timeoutMs);
    const cleanup = () => { clearTimeout(timer); waiters.delete(check); };
    if (!check()) waiters.add(check);
  });
  /** Resolves once pred(stream) holds, within timeoutMs. */
  stream.until = (pred, timeoutMs = 3000, what = 'the condition') => new Promise((resolve, reject) => {
    const check = () => {
      if (pred(stream)) { cleanup(); resolve(); return true; }
      if (stream.ended) { cleanup(); reject(new Error(`${label}: the stream ended before ${what}`)); return true; }
      return false;
    };
    const timer = setTimeout(() => { cleanup(); reject(new Error(`${label}: not ${what} within ${timeoutMs} ms`)); }, timeoutMs);
    const cleanup = () => { clearTimeout(timer); waiters.delete(check); };
    if (!check()) waiters.add(check);
  });
  return stream;
}

function takeNdjson(stream, line, label, mux) {
  if (line === '') {
    stream.heartbeats++;
    return;
  }
  const data = JSON.parse(line);
  checkEvent(data, label, mux);
  stream.events.push({ data });
}

function takeSse(stream, block, label, mux) {
  const lines = block.split('\n');
  if (lines.every((l) => l.startsWith(':'))) {
    assert.deepEqual(lines, [': heartbeat'], `${label}: an SSE comment other than the heartbeat`);
    stream.heartbeats++;
    return;
  }
  const fields = {};
  for (const l of lines) {
    const m = /^(id|event|data): (.*)$/.exec(l);
    assert.ok(m, `${label}: an SSE line that is not id, event or data: ${JSON.stringify(l)}`);
    assert.ok(!(m[1] in fields), `${label}: two ${m[1]} lines in one event`);
    fields[m[1]] = m[2];
  }
  const data = JSON.parse(fields.data);
  checkEvent(data, label, mux);
  assert.equal(fields.event, data.type, `${label}: the SSE event name is the event's type`);
  if (data.type === 'closing' || data.type === 'opponent_gone' || mux) assert.equal(fields.id, undefined, `${label}: the closing and opponent_gone events (any event of a multi-game stream) have no id`);
  else assert.equal(fields.id, String(data.version), `${label}: the SSE id is the event's version`);
  stream.events.push({ data, id: fields.id, event: fields.event });
}

/** chessd_streams_open from /metrics. */
export async function streamsOpen(server) {
  const res = await fetch(`${server.base}/metrics`);
  const text = await res.text();
  const m = /^chessd_streams_open (\d+)$/m.exec(text);
  assert.ok(m, 'no chessd_streams_open in /metrics');
  return Number(m[1]);
}

/** A counter or gauge from /metrics (0 when absent). */
export async function metric(server, name) {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** Waits until chessd_streams_open is `want` (within timeoutMs). */
export async function streamsOpenBecomes(server, want, timeoutMs = 4000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await streamsOpen(server);
    if (n === want) return;
    assert.ok(Date.now() < deadline, `chessd_streams_open is ${n}, not ${want}, after ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** POST /v1/games/{id}/moves for color (its token from the creation's answer); resolves to the answer's game. */
async function playMove(server, game, color, move, expectedVersion) {
  const res = await fetch(`${server.base}/v1/games/${game.id}/moves`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${game.tokens[color]}` },
    body: JSON.stringify({ move, expected_version: expectedVersion }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${color} ${move}: ${text}`);
  return JSON.parse(text);
}

/**
 * A flag left to fall on a quiet game: makes a game with a clockMs clock,
 * opens one stream per entry of formats (true: SSE, false: NDJSON) and waits
 * until each is live (its first event read, the channel subscribed on
 * redisPort), plays 1.e4 e5 (black's move starts white's clock), then
 * nothing: resolves once every stream has ended (within clockMs + waitMs) to
 * { game, deadline (Redis's ms when white's flag falls), streams }.
 */
export async function quietFlagFall(server, redisPort, { clockMs, formats, waitMs = 10000 }) {
  const created = await fetch(`${server.base}/v1/games`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clock: { initial_ms: clockMs, increment_ms: 0 } }),
  });
  assert.equal(created.status, 201);
  const game = await created.json();
  const streams = [];
  try {
    for (const sse of formats) {
      const stream = await openEvents(server, game.id, { sse });
      stream.format = sse ? 'SSE' : 'NDJSON';
      streams.push(stream);
      assert.equal((await stream.next(5000)).data.version, 1);
    }
    await subscribed(redisPort, game.id, { timeoutMs: 5000 });
    await playMove(server, game, 'white', 'e4', 1);
    const e5 = await playMove(server, game, 'black', 'e5', 2);
    assert.equal(e5.clock.running, 'white');
    assert.equal(e5.clock.white_ms, clockMs);
    let timer;
    const late = new Promise((resolve) => { timer = setTimeout(resolve, clockMs + waitMs, 'late'); });
    const ended = await Promise.race([Promise.all(streams.map((s) => s.done)), late]);
    clearTimeout(timer);
    assert.notEqual(ended, 'late', `not every stream ended within ${clockMs + waitMs} ms: ${streams.map((s) => `${s.format} ${JSON.stringify(s.text.slice(-200))}`).join('; ')}`);
    return { game, deadline: e5.clock.at_ms + e5.clock.white_ms, streams };
  } finally {
    for (const s of streams) s.close();
  }
}

/**
 * What every stream of quietFlagFall must have read: the game, the two
 * moves, then the end on time as a change event ("event": "timeout", white's
 * flag at 0, written at or after the deadline and within lateMs of it by
 * Redis's clock), and nothing after it.
 */
export function expectTimeoutChange({ deadline, streams }, clockMs, { lateMs = 2000 } = {}) {
  for (const [i, s] of streams.entries()) {
    const label = `stream ${i} (${s.format})`;
    assert.equal(s.error, null, `${label}: ${s.error}`);
    assert.deepEqual(s.events.map((e) => [e.data.type, e.data.event ?? null, e.data.version]),
      [['game', null, 1], ['change', 'move', 2], ['change', 'move', 3], ['change', 'timeout', 4]],
      `${label}: the flag's fall comes as the change event "timeout", not as the whole game`);
    const { data } = s.events.at(-1);
    if (s.format === 'SSE') assert.equal(s.events.at(-1).event, 'change');
    assert.deepEqual([data.status, data.result, data.termination], ['timeout', '0-1', 'time_forfeit'], label);
    assert.deepEqual([data.clock.white_ms, data.clock.black_ms, data.clock.running], [0, clockMs, null], label);
    assert.ok(data.clock.at_ms >= deadline, `${label}: the ending was written at ${data.clock.at_ms}, before the deadline ${deadline}`);
    assert.ok(data.clock.at_ms - deadline < lateMs, `${label}: the ending was written ${data.clock.at_ms - deadline} ms after the deadline`);
  }
}
