// Scale-out: three chessd replicas on one redis-server behind a private nginx
// doing round robin (startNginx in server.mjs; POSTs are never retried by
// nginx on another replica, see the comment in its config). Proves that
// (1) 32 racing writers through the balancer, landing on all three replicas,
// have exactly one winner; (2) a whole game played through the balancer is
// served by every replica and each replica reads back the same game after
// every move; (3) a replica killed with SIGKILL mid-load loses no
// acknowledged move and applies none twice, with clients retrying on
// 502/503/connection errors with the same Idempotency-Key and
// expected_version; (4) SIGTERM on a replica under direct load drains it:
// every answer is whole and valid, every request sent before the signal gets
// 200, /readyz answers 503 during the drain, and the process exits 0 within
// its grace period; (5) a move sent on an open keep-alive connection as a
// drain ends is either answered or not applied. Every chessd answer is
// checked against openapi.yaml; the balancer's own error pages (502/504
// text/html) are recognised as such.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startServer, startRedis, startNginx } from './server.mjs';
import { expectProblem, sleep, utf8, KIWIPETE } from './http.mjs';
import { checkResponse } from './openapi.mjs';
import { prng } from './prng.mjs';

const TOKEN_SECRET = 'e2e-scaleout-token-secret-0123456789';
const ENV = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };

let redis;
let replicas = []; // three chessd serve processes on one Redis
let lb; // nginx in front of them
const killed = new Set(); // replicas this file SIGKILLed (no clean stop for them)

before(async () => {
  redis = await startRedis();
  replicas = await Promise.all([0, 1, 2].map(() => startServer(['--redis', redis.url, '--threads', '2'], ENV)));
  lb = await startNginx(replicas.map((r) => r.port));
});

after(async () => {
  await lb?.stop();
  for (const r of replicas) if (!killed.has(r)) await r.stop();
  await redis?.stop();
});

const auth = (token) => ({ authorization: `Bearer ${token}` });

/**
 * One request through the balancer (or any server with a port) with node:http.
 * Resolves to { status, headers, text, body, fromBalancer }: a chessd answer is
 * checked against openapi.yaml; nginx's own error page (502/503/504 as
 * text/html: no replica answered) is not, and has fromBalancer set. Rejects on
 * a connection error or after timeoutMs.
 */
function send(target, { method = 'GET', path: p, json, headers = {}, agent, timeoutMs = 10000 }) {
  const body = json === undefined ? undefined : JSON.stringify(json);
  const h = { ...headers };
  if (body !== undefined) {
    h['content-type'] ??= 'application/json';
    h['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: target.port, method, path: p, headers: h, agent }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('error', reject);
      res.on('end', () => {
        const type = res.headers['content-type'] ?? '';
        const fromBalancer = [502, 503, 504].includes(res.statusCode) && type.startsWith('text/html');
        try {
          const text = fromBalancer ? Buffer.concat(chunks).toString('latin1') : utf8(Buffer.concat(chunks), `${method} ${p} -> ${res.statusCode}`);
          const parsed = fromBalancer ? text
            : checkResponse({ method, path: p, status: res.statusCode, headers: res.headers, body: text });
          resolve({ status: res.statusCode, headers: res.headers, text, body: parsed, fromBalancer });
        } catch (err) {
          reject(err);
        }
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${p}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** POST /v1/games through `target`; resolves to { id, tokens, body }. */
async function createGame(target, json = {}, headers = {}) {
  const res = await send(target, { method: 'POST', path: '/v1/games', json, headers });
  assert.equal(res.status, 201, `create: ${res.text}`);
  return { id: res.body.id, tokens: res.body.tokens, body: res.body };
}

/** POST lines of the access log of `server` for one game's moves. */
const movePosts = (server, id) => server.logLines().filter((l) => l.method === 'POST' && l.path === `/v1/games/${id}/moves`);

/** chessd_moves_applied_total of one replica. */
async function movesApplied(server) {
  const res = await send(server, { path: '/metrics' });
  assert.equal(res.status, 200);
  const m = /^chessd_moves_applied_total (\d+)$/m.exec(res.text);
  assert.ok(m, `no chessd_moves_applied_total in /metrics:\n${res.text}`);
  return Number(m[1]);
}

/** Waits until pred() is true (checked every 20 ms) or fails after timeoutMs with message(). */
async function waitFor(pred, message, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    assert.ok(Date.now() < deadline, message());
    await sleep(20);
  }
}

test('32 racing moves with one version through the balancer, spread over all three replicas: one 200, 31 x 409', async () => {
  const g = await createGame(lb);
  const answers = await Promise.all(Array.from({ length: 32 }, (_, i) => send(lb, {
    method: 'POST', path: `/v1/games/${g.id}/moves`, json: { move: 'e4', expected_version: 1 }, agent: false,
    headers: { ...auth(g.tokens.white), 'x-request-id': `race-${i}` },
  })));
  const statuses = answers.map((r) => r.status).join(' ');
  const ok = answers.filter((r) => r.status === 200);
  const conflicts = answers.filter((r) => r.status === 409);
  assert.equal(ok.length, 1, `one winner; statuses: ${statuses}`);
  assert.equal(conflicts.length, 31, `31 conflicts; statuses: ${statuses}`);
  assert.equal(ok[0].body.version, 2);
  assert.deepEqual(ok[0].body.move, { uci: 'e2e4', san: 'e4' });
  assert.equal(ok[0].body.move_count, 1);
  for (const c of conflicts) {
    expectProblem(c, 409, 'version_conflict');
    assert.equal(c.body.current_version, 2);
  }
  // The race really was between replicas: each one served some of the 32, and nginx sent each POST once.
  await waitFor(() => replicas.reduce((n, r) => n + movePosts(r, g.id).length, 0) >= 32,
    () => `the replicas logged ${replicas.map((r) => movePosts(r, g.id).length).join('+')} of the 32 POSTs`);
  const perReplica = replicas.map((r) => movePosts(r, g.id).length);
  assert.ok(perReplica.every((n) => n > 0), `every replica takes part in the race: ${perReplica.join(' / ')}`);
  assert.equal(perReplica.reduce((a, b) => a + b), 32, `each POST reached exactly one replica once: ${perReplica.join(' / ')}`);
  const winners = replicas.map((r) => movePosts(r, g.id).filter((l) => l.status === 200).length);
  assert.equal(winners.reduce((a, b) => a + b), 1, `one 200 in all the logs together: ${winners.join(' / ')}`);

  // One move stored, whoever is asked.
  for (const target of [lb, ...replicas]) {
    const read = await send(target, { path: `/v1/games/${g.id}` });
    assert.equal(read.status, 200);
    assert.equal(read.body.version, 2);
    assert.deepEqual(read.body.moves, [{ uci: 'e2e4', san: 'e4' }]);
  }
});

// Morphy - Duke of Brunswick and Count Isouard, Paris 1858 (33 plies, mate).
const OPERA = ['e4', 'e5', 'Nf3', 'd6', 'd4', 'Bg4', 'dxe5', 'Bxf3', 'Qxf3', 'dxe5', 'Bc4', 'Nf6', 'Qb3', 'Qe7',
  'Nc3', 'c6', 'Bg5', 'b5', 'Nxb5', 'cxb5', 'Bxb5+', 'Nbd7', 'O-O-O', 'Rd8', 'Rxd7', 'Rxd7', 'Rd1', 'Qe6', 'Bxd7+',
  'Nxd7', 'Qb8+', 'Nxb8', 'Rd8#'];

test('a whole game through the balancer is served by all three replicas, and each reads it back the same after every move', async () => {
  const appliedBefore = await Promise.all(replicas.map(movesApplied));
  const g = await createGame(lb, { white: 'Paul Morphy', black: 'Duke Karl / Count Isouard' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    let version = 1;
    const played = []; // the moves as their answers gave them
    for (const [i, san] of OPERA.entries()) {
      const color = i % 2 ? 'black' : 'white';
      const res = await send(lb, {
        method: 'POST', path: `/v1/games/${g.id}/moves`, json: { move: san, expected_version: version }, agent,
        headers: auth(g.tokens[color]),
      });
      assert.equal(res.status, 200, `move ${i} ${san}: ${res.text}`);
      assert.equal(res.body.version, version + 1);
      assert.equal(res.body.move_count, i + 1);
      assert.equal(res.body.move.san, san);
      played.push(res.body.move);
      version = res.body.version;
      // Every replica, asked directly, has this move already: the same version, moves and position.
      for (const [n, r] of replicas.entries()) {
        const read = await send(r, { path: `/v1/games/${g.id}` });
        assert.equal(read.status, 200);
        assert.equal(read.headers.etag, `"${version}"`, `replica ${n} after move ${i} ${san}`);
        assert.equal(read.body.version, version, `replica ${n} after move ${i} ${san}`);
        assert.deepEqual(read.body.moves, played, `replica ${n} after move ${i} ${san}`);
        assert.deepEqual(read.body.position, res.body.position, `replica ${n} after move ${i} ${san}`);
        assert.equal(read.body.status, res.body.status);
        assert.equal(read.body.updated_at, res.body.updated_at);
      }
    }
    const last = await send(lb, { path: `/v1/games/${g.id}` });
    assert.equal(last.body.status, 'checkmate');
    assert.equal(last.body.result, '1-0');
    assert.equal(last.body.version, OPERA.length + 1);
  } finally {
    agent.destroy();
  }

  // Each replica served some of the game's moves (its access log), and together they served each move once.
  await waitFor(() => replicas.reduce((n, r) => n + movePosts(r, g.id).length, 0) >= OPERA.length,
    () => `the replicas logged ${replicas.map((r) => movePosts(r, g.id).length).join('+')} of ${OPERA.length} moves`);
  const perReplica = replicas.map((r) => movePosts(r, g.id).length);
  assert.ok(perReplica.every((n) => n > 0), `every replica served some of the game's moves: ${perReplica.join(' / ')}`);
  assert.equal(perReplica.reduce((a, b) => a + b), OPERA.length, `moves served per replica: ${perReplica.join(' / ')}`);
  assert.ok(replicas.every((r) => movePosts(r, g.id).every((l) => l.status === 200)));
  // The same from the metrics: each replica's chessd_moves_applied_total grew, by OPERA.length in all.
  const appliedAfter = await Promise.all(replicas.map(movesApplied));
  const grew = appliedAfter.map((n, i) => n - appliedBefore[i]);
  assert.ok(grew.every((n) => n > 0), `chessd_moves_applied_total grew on every replica: ${grew.join(' / ')}`);
  assert.equal(grew.reduce((a, b) => a + b), OPERA.length, `moves applied per replica: ${grew.join(' / ')}`);
});

/** Whether a request failure is worth a retry: the balancer found no replica, or the connection failed. */
const retryable = (res) => res.fromBalancer || res.status === 503;

/**
 * One client of the SIGKILL test: plays random legal moves in its own games
 * through the balancer until stop() says so. Every request is retried on a
 * connection error, a balancer error page or 503, with the same body and
 * Idempotency-Key. A 409 version_conflict after such an error means "look at
 * the game": the move may have been applied by a replica that died before
 * answering. A move counts as acknowledged only when a 200 came back.
 */
async function playUntil(lbTarget, seed, stop, stats) {
  const rnd = prng(seed);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const games = [];

  /** Sends until an answer that is not a retryable failure; resolves to [answer, whether a failure came first]. */
  async function persist(req) {
    let failed = false;
    for (let attempt = 0; ; attempt++) {
      let res;
      try {
        res = await send(lbTarget, { ...req, agent });
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        res = null;
        stats.connectionErrors++;
      }
      if (res && !retryable(res)) return [res, failed];
      if (res) stats[`status${res.status}`] = (stats[`status${res.status}`] ?? 0) + 1;
      failed = true;
      stats.retries++;
      assert.ok(attempt < 200, `${req.method} ${req.path}: still failing after ${attempt} retries: ${res?.status} ${res?.text}`);
      await sleep(10 + rnd.int(20));
    }
  }

  async function newGame() {
    // A creation key is 22 to 255 base64url characters (the API refuses guessable ones).
    const key = `create-${String(seed).padStart(8, '0')}-${String(games.length).padStart(8, '0')}`;
    const [res] = await persist({ method: 'POST', path: '/v1/games', json: { white: `client ${seed}` }, headers: { 'idempotency-key': key } });
    assert.equal(res.status, 201, `create: ${res.text}`);
    const game = { id: res.body.id, tokens: res.body.tokens, state: res.body, applied: [], acked: [] };
    games.push(game);
    return game;
  }

  try {
    let g = await newGame();
    while (!stop()) {
      // A game that ended (or grew long) is left; the client starts another.
      if (g.state.status !== 'active' || g.applied.length >= 500) g = await newGame();
      const version = g.state.version;
      const { uci } = rnd.pick(g.state.position.legal_moves);
      const color = g.state.position.turn;
      const [res, failedFirst] = await persist({
        method: 'POST', path: `/v1/games/${g.id}/moves`, json: { move: uci, expected_version: version },
        headers: { ...auth(g.tokens[color]), 'idempotency-key': `${g.id}-${version}` },
      });
      if (res.status === 200) {
        assert.equal(res.body.version, version + 1, `game ${g.id}: ${uci} at version ${version}`);
        assert.equal(res.body.move_count, g.applied.length + 1);
        assert.equal(res.body.move.uci, uci);
        g.applied.push(uci);
        g.acked.push({ ply: g.applied.length - 1, uci, at: performance.now() });
        g.state = res.body;
        stats.acked++;
        if (failedFirst) stats.ackedAfterRetry++;
        continue;
      }
      assert.ok(failedFirst && res.status === 409 && res.body.code === 'version_conflict',
        `game ${g.id}: ${uci} at version ${version}: ${res.status} ${res.text} (only one client plays this game)`);
      // Was the move applied by a replica that could not answer? Look.
      const [read] = await persist({ method: 'GET', path: `/v1/games/${g.id}` });
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.version, version + 1, `game ${g.id}: a conflict at version ${version}, yet the game is at ${read.body.version}`);
      assert.deepEqual(read.body.moves.map((m) => m.uci), [...g.applied, uci],
        `game ${g.id}: the only change since version ${version} can be this client's ${uci}`);
      g.applied.push(uci); // applied, but never acknowledged
      g.state = read.body;
      stats.appliedUnacked++;
    }
  } finally {
    agent.destroy();
  }
  return games;
}

test('SIGKILL of one replica under load through the balancer: no acknowledged move lost, none applied twice', async (t) => {
  const victim = replicas[1];
  const survivors = replicas.filter((r) => r !== victim);
  const stats = { acked: 0, ackedAfterRetry: 0, appliedUnacked: 0, retries: 0, connectionErrors: 0 };
  const survivorsAppliedBefore = await Promise.all(survivors.map(movesApplied));
  let stopping = false;
  const started = performance.now();
  const clients = Array.from({ length: 6 }, (_, i) => playUntil(lb, 1000 + i, () => stopping, stats));

  await sleep(1200);
  const ackedBeforeKill = stats.acked;
  const victimMovesBeforeKill = victim.logLines().filter((l) => l.method === 'POST' && /\/moves$/.test(l.path)).length;
  victim.proc.kill('SIGKILL');
  killed.add(victim);
  const killedAt = performance.now();
  assert.deepEqual(await victim.exited, { code: null, signal: 'SIGKILL' });
  await sleep(1800);
  stopping = true;
  const games = (await Promise.all(clients)).flat();
  const ackedAfterKill = stats.acked - ackedBeforeKill;
  const survivorsApplied = (await Promise.all(survivors.map(movesApplied))).reduce((n, a, i) => n + a - survivorsAppliedBefore[i], 0);

  assert.ok(ackedBeforeKill >= 30, `load before the kill: ${ackedBeforeKill} moves acknowledged`);
  assert.ok(victimMovesBeforeKill > 0, 'the killed replica was serving moves when it died');
  assert.ok(ackedAfterKill >= 30, `play went on after the kill: ${ackedAfterKill} moves acknowledged`);
  // nginx did not hide the failure by resending POSTs: the clients saw it and retried themselves.
  assert.ok(stats.retries > 0, `the kill was never noticed by a client: ${JSON.stringify(stats)}`);

  // Every game as stored, read through a surviving replica (and the other one agrees).
  let stored = 0;
  for (const g of games) {
    const read = await send(survivors[0], { path: `/v1/games/${g.id}` });
    assert.equal(read.status, 200, read.text);
    const moves = read.body.moves.map((m) => m.uci);
    stored += moves.length;
    for (const { ply, uci } of g.acked)
      assert.equal(moves[ply], uci, `game ${g.id}: acknowledged move ${ply} (${uci}) is not stored there: ${moves.join(' ')}`);
    assert.equal(read.body.version, 1 + moves.length, `game ${g.id}: version ${read.body.version} with ${moves.length} moves stored (a move applied twice?)`);
    assert.deepEqual(moves, g.applied, `game ${g.id}: the stored moves are exactly the ones the client played`);
    const other = await send(survivors[1], { path: `/v1/games/${g.id}` });
    assert.equal(other.text, read.text, `game ${g.id}: the surviving replicas disagree`);
    const [version] = await redis.command('HMGET', `chessd:game:{${g.id}}`, 'version');
    assert.equal(Number(version), read.body.version);
  }
  // What the killed replica wrote: every stored move not written by a survivor. Those it wrote
  // without logging an answer were cut off by the kill between the Redis write and the answer.
  const victimWrote = stored - survivorsApplied;
  const victimAnswered = victim.logLines().filter((l) => l.method === 'POST' && /\/moves$/.test(l.path) && l.status === 200
    && games.some((g) => l.path === `/v1/games/${g.id}/moves`)).length;
  assert.ok(victimWrote >= victimAnswered, `the killed replica answered ${victimAnswered} moves with 200 but only ${victimWrote} were stored by it`);
  const ms = (x) => `${Math.round(x)} ms`;
  t.diagnostic(`kill after ${ms(killedAt - started)}, ${games.length} games, ${stored} moves stored, acknowledged before/after ` +
    `the kill ${ackedBeforeKill}/${ackedAfterKill}; the killed replica wrote ${victimWrote} moves and logged ${victimAnswered} ` +
    `answers; ${JSON.stringify(stats)}`);
});

// --- graceful shutdown under direct load ---

/**
 * A raw keep-alive HTTP/1.1 connection that knows exactly when each request
 * was written (sentAt, performance.now() at the write) and whether an answer
 * came whole: a connection closed in the middle of an answer rejects with
 * partial > 0 (a truncated answer), before any byte of it with partial 0.
 */
class RawConnection {
  static open(port) {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.removeListener('error', reject); resolve(new RawConnection(socket)); });
      socket.once('error', reject);
    });
  }

  constructor(socket) {
    this.socket = socket;
    this.buf = Buffer.alloc(0);
    this.pending = null;
    this.closed = false;
    this.unsolicited = 0;
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
    });
    socket.on('error', (err) => { this.error = err; });
    socket.on('close', () => {
      this.closed = true;
      const p = this.pending;
      this.pending = null;
      if (p) {
        p.reject(Object.assign(new Error(`${p.method} ${p.path}: connection closed (${this.error?.code ?? 'FIN'}) after ` +
          `${this.buf.length} bytes of the answer`), { partial: this.buf.length, sentAt: p.sentAt, raw: this.buf.toString('latin1') }));
      }
    });
  }

  request(method, p, { headers = {}, json } = {}) {
    const body = json === undefined ? '' : JSON.stringify(json);
    const lines = [`${method} ${p} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    if (json !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    const raw = `${lines.join('\r\n')}\r\n\r\n${body}`;
    if (this.closed || this.socket.destroyed) {
      return Promise.reject(Object.assign(new Error(`${method} ${p}: the connection was closed before the request`), { partial: 0, notSent: true }));
    }
    return new Promise((resolve, reject) => {
      this.pending = { method, path: p, resolve, reject, sentAt: performance.now() };
      this.socket.write(raw);
    });
  }

  parse() {
    if (!this.pending) {
      this.unsolicited += this.buf.length;
      this.buf = Buffer.alloc(0);
      return;
    }
    const split = this.buf.indexOf('\r\n\r\n');
    if (split < 0) return;
    const [statusLine, ...lines] = this.buf.subarray(0, split).toString('latin1').split('\r\n');
    const headers = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length']);
    const p = this.pending;
    if (!Number.isInteger(length)) {
      this.pending = null;
      p.reject(Object.assign(new Error(`${p.method} ${p.path}: an answer without Content-Length: ${statusLine}`), { partial: this.buf.length, sentAt: p.sentAt }));
      return;
    }
    if (this.buf.length < split + 4 + length) return;
    const bytes = this.buf.subarray(split + 4, split + 4 + length);
    this.buf = this.buf.subarray(split + 4 + length);
    this.pending = null;
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    if (/close/i.test(headers.connection ?? '')) {
      this.closed = true;
      this.socket.end();
    }
    p.resolve({ status, headers, bytes, text: bytes.toString('utf8'), sentAt: p.sentAt, doneAt: performance.now() });
  }

  destroy() { this.socket.destroy(); }
}

test('SIGTERM on a replica under direct load: whole answers, 200 for every request sent before it, /readyz 503 while draining, exit 0 within the grace', async (t) => {
  const GRACE_S = 8;
  const server = await startServer(['--redis', redis.url, '--threads', '4', '--shutdown-grace', String(GRACE_S)], ENV);
  const results = []; // { client, method, path, sentAt, status?, error?, partial? }
  const conns = new Set();
  let signalledAt = Infinity;
  try {
    // Games to play in, made before the load starts.
    const games = await Promise.all(Array.from({ length: 6 }, () => createGame(server)));
    // The server's document (~40 KB), the large answer every later copy must equal byte for byte.
    const spec = (await send(server, { path: '/openapi.yaml' })).text;
    assert.match(spec, /^openapi: 3\./);

    /** One request on conn, recorded and checked: whole, valid by openapi.yaml, and right. */
    async function recorded(client, conn, method, p, opts = {}, check = undefined) {
      const requestId = `drain-${client}-${results.length}`;
      const entry = { client, method, path: p, requestId };
      results.push(entry);
      try {
        const res = await conn.request(method, p, { ...opts, headers: { ...opts.headers, 'X-Request-Id': requestId } });
        Object.assign(entry, { sentAt: res.sentAt, doneAt: res.doneAt, status: res.status, close: /close/i.test(res.headers.connection ?? '') });
        const text = utf8(res.bytes, `${method} ${p} -> ${res.status}`);
        entry.body = checkResponse({ method, path: p, status: res.status, headers: res.headers, body: text });
        if (res.status === 200) check?.(entry.body, text);
        return entry;
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        Object.assign(entry, { sentAt: err.sentAt ?? performance.now(), error: err.message, partial: err.partial ?? 0, notSent: !!err.notSent });
        return entry;
      }
    }

    // Six clients, each on its own keep-alive connection, going round a mix of game reads, moves,
    // a large answer (the document), some computing (perft 3) and a stateless POST.
    const rnd = prng(4242);
    let stopAll = false;
    const clients = games.map(async (g, c) => {
      let conn = await RawConnection.open(server.port);
      conns.add(conn);
      let state = g.body;
      for (let i = 0; !stopAll; i++) {
        let entry;
        switch ((i + c) % 5) {
          case 0:
            entry = await recorded(c, conn, 'GET', `/v1/games/${g.id}`, {}, (b) => assert.equal(b.version, state.version));
            break;
          case 1: {
            if (state.status !== 'active') continue;
            const { uci } = rnd.pick(state.position.legal_moves);
            entry = await recorded(c, conn, 'POST', `/v1/games/${g.id}/moves`,
              { json: { move: uci, expected_version: state.version }, headers: auth(g.tokens[state.position.turn]) },
              (b) => { assert.equal(b.move.uci, uci); state = b; });
            break;
          }
          case 2:
            entry = await recorded(c, conn, 'GET', '/openapi.yaml', {}, (b, text) => assert.equal(text, spec, 'the whole document'));
            break;
          case 3:
            entry = await recorded(c, conn, 'GET', `/v1/perft?depth=3&fen=${encodeURIComponent(KIWIPETE)}`, {}, (b) => assert.equal(b.nodes, 97862));
            break;
          default:
            entry = await recorded(c, conn, 'POST', '/v1/position/moves', { json: { moves: ['e4', 'e5', 'Qh5', 'Nc6', 'Bc4', 'Nf6', 'Qxf7#'] } },
              (b) => assert.equal(b.position.status, 'checkmate'));
        }
        if (entry.error === undefined && !conn.closed) continue;
        // The connection is gone: a new one must be refused once the listener is closed.
        try {
          conn = await RawConnection.open(server.port);
          conns.add(conn);
        } catch (err) {
          results.push({ client: c, refusedAt: performance.now(), refused: err.code });
          return;
        }
      }
    });

    // Load first: a good number of answers before the signal.
    await waitFor(() => results.filter((r) => r.status !== undefined).length >= 150,
      () => `only ${results.filter((r) => r.status !== undefined).length} answers before the signal`, 10000);
    // Two slow requests (perft 5 on Kiwipete, a few tenths of a second each) surely in flight at
    // the signal: the drain must wait for them, so it lasts long enough to watch.
    const slow = await Promise.all([0, 1].map(() => RawConnection.open(server.port)));
    slow.forEach((s) => conns.add(s));
    const slowAnswers = slow.map((s) => recorded('slow', s, 'GET', `/v1/perft?depth=5&fen=${encodeURIComponent(KIWIPETE)}`, {},
      (b) => assert.equal(b.nodes, 193690690)));
    await sleep(60);
    // Connections for /readyz, opened while the perfts run: each libmicrohttpd pool thread serves
    // the connections it accepted, one request at a time, and a thread busy with a perft accepts
    // none, so these land on threads that can answer during the drain. (A /readyz queued behind a
    // perft on its thread would wait for it, and may then be dropped with the connection when the
    // drain ends.) Each answers 200 first: accepted, and not draining yet.
    const readyConns = await Promise.all([0, 1].map(() => RawConnection.open(server.port)));
    for (const rc of readyConns) {
      conns.add(rc);
      const ready = await rc.request('GET', '/readyz');
      assert.equal(ready.status, 200, ready.text);
    }
    signalledAt = performance.now();
    server.proc.kill('SIGTERM');

    // Poll /readyz as fast as each open connection allows until the server closes it.
    const readyz = [];
    await Promise.all(readyConns.map(async (rc) => {
      const mine = [];
      for (;;) {
        const entry = await recorded('readyz', rc, 'GET', '/readyz');
        readyz.push(entry);
        mine.push(entry);
        if (entry.error !== undefined) break;
      }
      const firstBusy = mine.findIndex((r) => r.status === 503);
      assert.ok(firstBusy < 0 || mine.slice(firstBusy).every((r) => r.status === 503 || r.status === undefined),
        `/readyz on one connection went back from 503: ${mine.map((r) => r.status).join(' ')}`);
    }));
    let timer;
    const exit = await Promise.race([server.exited, new Promise((resolve) => { timer = setTimeout(resolve, (GRACE_S + 5) * 1000, null); })]);
    clearTimeout(timer);
    const exitedAt = performance.now();
    stopAll = true;
    await Promise.all([...clients, ...slowAnswers]);
    assert.ok(exit, `chessd did not exit within ${GRACE_S + 5} s of SIGTERM; stderr: ${server.stderr()}`);
    assert.deepEqual(exit, { code: 0, signal: null }, `exit 0 after the drain; stderr: ${server.stderr()}`);
    assert.ok(exitedAt - signalledAt < GRACE_S * 1000,
      `the drain took ${Math.round(exitedAt - signalledAt)} ms, longer than the ${GRACE_S} s grace: it ended by the deadline, not by finishing`);
    assert.match(server.stderr(), /signal 15: draining/);

    // 1. No truncated answer anywhere.
    const truncated = results.filter((r) => r.partial > 0);
    assert.deepEqual(truncated.map((r) => `${r.client}: ${r.method} ${r.path}: ${r.error}`), [], 'answers cut short');
    // 2. Every request written before the signal got a whole 200.
    const before = results.filter((r) => r.sentAt !== undefined && r.sentAt < signalledAt);
    const failedBefore = before.filter((r) => r.status !== 200);
    const logged = (r) => JSON.stringify(server.logLines().find((l) => l.request_id === r.requestId) ?? null);
    assert.deepEqual(failedBefore.map((r) => `${r.client}: ${r.method} ${r.path.slice(0, 60)} sent ${Math.round(signalledAt - r.sentAt)} ms before SIGTERM: ` +
      `${r.status ?? r.error}; chessd's log: ${logged(r)}`), [],
      `requests sent before SIGTERM that did not complete with 200 (SIGTERM to exit: ${Math.round(exitedAt - signalledAt)} ms; ` +
      `slow perfts answered ${results.filter((r) => r.client === 'slow').map((r) => Math.round(r.doneAt - signalledAt)).join('/')} ms after SIGTERM)`);
    const slowDone = await Promise.all(slowAnswers);
    for (const s of slowDone) {
      assert.equal(s.status, 200);
      assert.ok(s.doneAt > signalledAt, 'the perft was over before SIGTERM, so nothing was drained: use heavier requests');
    }
    // 3. /readyz said 503 unavailable during the drain (and never 200 again once it had, checked above).
    const answeredReadyz = readyz.filter((r) => r.status !== undefined);
    const busy = answeredReadyz.filter((r) => r.status === 503);
    assert.ok(busy.length > 0, `/readyz never answered 503 after SIGTERM: ${readyz.map((r) => r.status ?? r.error).join(' ')}`);
    for (const r of busy) assert.equal(r.body.code, 'unavailable');
    assert.ok(busy.some((r) => r.doneAt < exitedAt - 100), '/readyz answered 503 well before the process exited');
    // 4. Requests written after the signal: answered whole (checked above) or not at all.
    const after = results.filter((r) => r.sentAt !== undefined && r.sentAt >= signalledAt && r.client !== 'readyz');
    const answeredAfter = after.filter((r) => r.status !== undefined);
    const droppedAfter = after.filter((r) => r.status === undefined);
    const refused = results.filter((r) => r.refused);
    assert.ok(before.length >= 150, `load before SIGTERM: ${before.length} requests`);
    t.diagnostic(`${before.length} requests before the signal (all 200), after it ${answeredAfter.length} answered ` +
      `(${[...new Set(answeredAfter.map((r) => r.status))].join(',') || '-'}; ${answeredAfter.filter((r) => r.close).length} with Connection: close), ` +
      `${droppedAfter.length} closed unanswered ` +
      `(${droppedAfter.filter((r) => r.notSent).length} not sent), ${refused.length} new connections refused (${[...new Set(refused.map((r) => r.refused))].join(',')}); ` +
      `/readyz ${answeredReadyz.length} answers (${busy.length} x 503, the first ${Math.round(busy[0].doneAt - signalledAt)} ms after SIGTERM); ` +
      `exit after ${Math.round(exitedAt - signalledAt)} ms, slow perfts done ${slowDone.map((s) => Math.round(s.doneAt - signalledAt)).join('/')} ms after SIGTERM`);
  } finally {
    for (const c of conns) c.destroy();
    if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL');
  }
});

// The end of a drain under keep-alive load. Connections opened before SIGTERM
// stay open during the drain, and clients may go on sending requests on them;
// when the drain ends, the connections are closed. A request that arrives just
// then may go unanswered, which is fine when it was not carried out (the
// client may retry it) but not when it was: a move written to Redis whose
// answer is never sent leaves its client unable to tell. Each round: 16
// clients play moves on their own games over keep-alive connections, SIGTERM,
// then every game must be at the version of the last answer its client got.
test('SIGTERM under keep-alive load: a move that gets no answer was not applied (up to 12 drains)', async (t) => {
  const rnd = prng(777);
  const rounds = [];
  for (let round = 0; round < 12; round++) {
    const server = await startServer(['--redis', redis.url, '--threads', '4'], ENV);
    const conns = [];
    try {
      const games = await Promise.all(Array.from({ length: 16 }, () => createGame(server)));
      let signalledAt = Infinity;
      const clients = games.map(async (g, c) => {
        const conn = await RawConnection.open(server.port);
        conns.push(conn);
        let state = g.body;
        for (;;) {
          if (state.status !== 'active') return { g, state, lost: null };
          const { uci } = rnd.pick(state.position.legal_moves);
          const requestId = `drain${round}-c${c}-v${state.version}`;
          try {
            const res = await conn.request('POST', `/v1/games/${g.id}/moves`, {
              json: { move: uci, expected_version: state.version },
              headers: { ...auth(g.tokens[state.position.turn]), 'X-Request-Id': requestId },
            });
            const body = checkResponse({ method: 'POST', path: `/v1/games/${g.id}/moves`, status: res.status, headers: res.headers, body: res.text });
            assert.equal(res.status, 200, res.text);
            state = body;
          } catch (err) {
            if (err instanceof assert.AssertionError) throw err;
            // Closed by the server after its last answer (Connection: close): nothing was sent.
            if (err.notSent) return { g, state, lost: null };
            assert.equal(err.partial ?? 0, 0, `a truncated answer: ${err.message}`);
            return { g, state, lost: { uci, requestId, sentAfterSignal: (err.sentAt ?? performance.now()) - signalledAt } };
          }
        }
      });
      await sleep(150);
      signalledAt = performance.now();
      server.proc.kill('SIGTERM');
      assert.deepEqual(await server.exited, { code: 0, signal: null });
      const outcomes = await Promise.all(clients);
      const applied = [];
      for (const { g, state, lost } of outcomes) {
        const read = await send(replicas[0], { path: `/v1/games/${g.id}` });
        assert.equal(read.status, 200);
        if (read.body.version === state.version) continue;
        assert.ok(lost, `game ${g.id}: stored at version ${read.body.version}, but the client's last answer was version ${state.version} and nothing went unanswered`);
        assert.equal(read.body.version, state.version + 1);
        assert.equal(read.body.moves.at(-1).uci, lost.uci);
        const logged = server.logLines().find((l) => l.request_id === lost.requestId);
        applied.push(`POST /v1/games/${g.id}/moves {"move":"${lost.uci}","expected_version":${state.version}} sent ` +
          `${lost.sentAfterSignal.toFixed(1)} ms after SIGTERM: no answer (connection closed, 0 bytes), yet stored as version ` +
          `${read.body.version}; chessd's log: ${JSON.stringify(logged ?? null)}`);
      }
      rounds.push({ unanswered: outcomes.filter((o) => o.lost).length, applied: applied.length });
      assert.equal(applied.length, 0, `drain ${round}: ${applied.length} of ${outcomes.filter((o) => o.lost).length} moves ` +
        `that got no answer were applied anyway, e.g.\n${applied.slice(0, 3).join('\n')}`);
    } finally {
      for (const c of conns) c.destroy();
      if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL');
    }
  }
  t.diagnostic(`unanswered/applied per drain: ${rounds.map((r) => `${r.unanswered}/${r.applied}`).join(' ')}`);
});
