// Games against the computer end to end: the real Stockfish, a real
// redis-server (or a Redis Cluster: CHESSD_E2E_REDIS=cluster, run.sh), real
// HTTP. Whole games at level 1 played by random legal moves, each move of the
// computer checked legal (chess.js) and seen on the event stream; a takeback,
// a resignation and an abort while the computer thinks (its move must lose
// the compare-and-set); a worker killed mid-think and another one finishing
// the turn after the lease; a job lost between the game's write and the queue
// found by its intent; a duplicate job; `chessd engine` (the probes only);
// hints (GET /analysis). Creation's refusals are rows of tests/BAD_INPUT.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Chess } from 'chess.js';
import { startServer, gameRedis, CHESSD_BIN } from './server.mjs';
import { get, post, expectProblem, sleep } from './http.mjs';
import { openEvents } from './events.mjs';
import { metricValue } from './attacks_lib.mjs';
import { prng } from './prng.mjs';

const STOCKFISH = process.env.CHESSD_STOCKFISH ?? '/usr/games/stockfish';
const TOKEN_SECRET = 'e2e-engine-games-token-secret-0123456789';
const ENV = { CHESSD_TOKEN_SECRET: TOKEN_SECRET };
const JOBS_KEY = 'chessd:{engine}:jobs'; // store/store.h, the engine job protocol
const DUE_KEY = 'chessd:{engine}:due';
// The backlog (store/store.h): turns waiting, each owner's queue, the urgent ones, who owns each.
const QUEUED_KEY = 'chessd:{engine}:queued';
const OWNER_PREFIX = 'chessd:{engine}:owner:';
const OWNER_OF_KEY = 'chessd:{engine}:owner-of';
const URGENT_KEY = 'chessd:{engine}:urgent';
const BACKLOG_KEYS = [QUEUED_KEY, OWNER_OF_KEY, URGENT_KEY, 'chessd:{engine}:owners', 'chessd:{engine}:in-flight',
  'chessd:{engine}:round', 'chessd:{engine}:seq', 'chessd:{engine}:jumped', 'chessd:{engine}:bell', `${OWNER_PREFIX}-`, `${OWNER_PREFIX}127.0.0.1`];
const MAX_PLIES = 400; // a whole game longer than this is resigned
// Level 8 thinks for its movetime (1000 ms, api/engine/levels.c) unless its
// 400000 nodes come first: long enough for a request or two meanwhile.
const THINKER = { level: 8 };
const THINK_MS = 1000;
const WAIT_MS = 15000; // the most any one step here may take on a loaded machine

const auth = (token) => ({ authorization: `Bearer ${token}` });
const other = (color) => (color === 'white' ? 'black' : 'white');
const uciOf = (m) => m.from + m.to + (m.promotion ?? '');
const moveOf = (uci) => ({ from: uci.slice(0, 2), to: uci.slice(2, 4), ...(uci[4] ? { promotion: uci[4] } : {}) });
const turnOf = (chess) => (chess.turn() === 'w' ? 'white' : 'black');
/** A FEN's board, side to move and castling rights (chess.js and chessd may write the en passant square differently). */
const fenHead = (fen) => fen.split(' ').slice(0, 3).join(' ');

/**
 * The servers and Redis of one test, stopped in reverse order when it ends:
 * a Redis of its own (the shared cluster in CLUSTER_MODE, its engine keys
 * cleared first, so that no job of an earlier test reaches this one's
 * workers). api(args): `chessd serve --engine none`; worker(args, command,
 * engine): a replica with the real Stockfish (or engine), `chessd serve` or
 * `chessd engine`.
 */
async function setUp(t) {
  assert.ok(existsSync(STOCKFISH), `${STOCKFISH} is missing: install the Debian package stockfish (make deps) or set CHESSD_STOCKFISH`);
  const redis = await gameRedis();
  const stops = [() => redis.stop()];
  t.after(async () => { for (const stop of stops.reverse()) await stop(); });
  await redis.command('DEL', JOBS_KEY, DUE_KEY, ...BACKLOG_KEYS);
  const started = (server) => { stops.push(() => (server.killed ? undefined : server.stop())); return server; };
  return {
    redis,
    api: async (args = []) => started(await startServer(['--redis', redis.url, '--engine', 'none', ...args], { env: ENV })),
    worker: async (args = [], command = 'serve', engine = STOCKFISH) =>
      started(await startServer(['--redis', redis.url, '--engine', engine, ...args], { env: ENV, command })),
  };
}

/** SIGKILL: the replica dies at once (no drain, no ack). */
async function kill(server) {
  server.killed = true;
  server.proc.kill('SIGKILL');
  await server.exited;
}

/** The engine series of /metrics that these tests read. */
async function engineMetrics(server) {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const turns = (outcome) => {
    const m = new RegExp(`^chessd_engine_turns_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text);
    assert.ok(m, `/metrics has no chessd_engine_turns_total{outcome="${outcome}"}`);
    return Number(m[1]);
  };
  return { busy: metricValue(text, 'chessd_engine_workers_busy'), played: turns('played'), stale: turns('stale'),
    failed: turns('failed'), recovered: turns('recovered') };
}

/** Waits until pred(engineMetrics(server)) holds; resolves to those metrics. */
async function metricsUntil(server, pred, what, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = await engineMetrics(server);
    if (pred(m)) return m;
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms; metrics ${JSON.stringify(m)}`);
    await sleep(10);
  }
}

/** The computer is searching now on server (its one engine busy). */
const thinking = (server) => metricsUntil(server, (m) => m.busy === 1, 'the engine busy with the turn');

/** POST /v1/games expecting 201; resolves to the answer (GameCreated). */
async function create(server, body) {
  const res = await post(server, '/v1/games', body);
  assert.equal(res.status, 201, `create ${JSON.stringify(body)}: ${res.text}`);
  return res.body;
}

/** A change by the person (path moves, takeback, resign, abort...); resolves to the raw answer. */
function change(server, game, color, what, body) {
  return post(server, `/v1/games/${game.id}/${what}`, body, { headers: auth(game.tokens[color]) });
}

/** A move by color expecting 200; resolves to the answer (GameChange). */
async function move(server, game, color, uci, version) {
  const res = await change(server, game, color, 'moves', { move: uci, expected_version: version });
  assert.equal(res.status, 200, `${color} ${uci} at version ${version}: ${res.text}`);
  assert.equal(res.body.version, version + 1);
  return res.body;
}

async function readGame(server, id) {
  const res = await get(server, `/v1/games/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** The next event of stream: a change at version, of kind event. */
async function nextChange(stream, version, event, ms = WAIT_MS) {
  const { data } = await stream.next(ms);
  assert.equal(data.type, 'change', `a change at version ${version}, got ${JSON.stringify(data).slice(0, 300)}`);
  assert.equal(data.version, version, `the changes' versions are consecutive: ${JSON.stringify(data).slice(0, 300)}`);
  assert.equal(data.event, event, `version ${version}: ${JSON.stringify(data).slice(0, 300)}`);
  return data;
}

/** Opens the game's event stream; resolves to [stream, its first event (the whole game)]. */
async function follow(server, id) {
  const stream = await openEvents(server, id);
  assert.equal(stream.status, 200);
  const { data } = await stream.next(WAIT_MS);
  assert.equal(data.type, 'game');
  return [stream, data];
}

/** No event came after those taken, and the game is still at version with these moves (UCI). */
async function nothingMore(server, stream, id, version, moves) {
  assert.equal(stream.events.length, stream.taken, `no more events: ${JSON.stringify(stream.events.slice(stream.taken).map((e) => e.data))}`);
  const g = await readGame(server, id);
  assert.equal(g.version, version);
  assert.deepEqual(g.moves.map((m) => m.uci), moves);
  return g;
}

/** The intent of the computer's turn at version (its score, the Redis time it is due by), or null. */
async function intent(redis, id, version) {
  const score = await redis.command('ZSCORE', DUE_KEY, `${id}:${version}`);
  return score === null ? null : Number(score);
}

/** The jobs of game id, waiting in the backlog ('queued') or claimed (their stream entry): [[entry id, version], ...]. */
async function jobsOf(redis, id) {
  const queued = await redis.command('ZRANGE', QUEUED_KEY, '0', '-1');
  assert.ok(Array.isArray(queued), `ZRANGE ${QUEUED_KEY}: ${queued}`);
  const waiting = queued.filter((m) => m.startsWith(`${id}:`)).map((m) => ['queued', Number(m.slice(id.length + 1))]);
  const entries = await redis.command('XRANGE', JOBS_KEY, '-', '+');
  assert.ok(Array.isArray(entries), `XRANGE ${JOBS_KEY}: ${entries}`);
  return [...waiting, ...entries.map(([entry, fields]) => [entry, Object.fromEntries(fields.flatMap((f, i) => (i % 2 ? [] : [[f, fields[i + 1]]])))])
    .filter(([, f]) => f.game === id).map(([entry, f]) => [entry, Number(f.version)])];
}

/** Takes game id's turn at version out of the backlog, as if the replica that wrote the game died before queueing it. */
async function loseQueued(redis, id, version) {
  const member = `${id}:${version}`;
  const owner = await redis.command('HGET', OWNER_OF_KEY, member);
  assert.ok(owner, `the turn ${member} waits in the backlog`);
  assert.equal(await redis.command('ZREM', QUEUED_KEY, member), 1);
  assert.equal(await redis.command('ZREM', `${OWNER_PREFIX}${owner}`, member), 1);
  await redis.command('HDEL', OWNER_OF_KEY, member);
  await redis.command('ZREM', URGENT_KEY, member);
}

/**
 * One whole game at level 1 with a clock, the computer playing
 * engineColor, the person random legal moves (seeded) until it ends (or
 * MAX_PLIES, then the person resigns). Every change is read from the event
 * stream: versions consecutive, each move replayed with chess.js (a move the
 * computer made that is not legal throws), its SAN and position checked,
 * the clock in every change. Resolves to what the game came to.
 */
async function wholeGame(t, server, engineColor, seed) {
  const person = other(engineColor);
  const game = await create(server, { engine: { level: 1, color: engineColor }, clock: { initial_ms: 60000, increment_ms: 500 } });
  // The creation answer: the person's token only; the computer's side named for its level.
  assert.deepEqual(Object.keys(game.tokens), [person]);
  assert.equal(typeof game.tokens[person], 'string');
  assert.deepEqual(game[engineColor], { name: 'chessd level 1', engine: { level: 1 } });
  assert.deepEqual(game[person], { name: null });
  assert.equal(game.analysis, true);
  assert.equal(game.version, 1);
  const [stream, head] = await follow(server, game.id);
  const chess = new Chess();
  let version = head.version;
  let status = head.status;
  let engineMoves = 0;
  const rnd = prng(seed);
  const replay = (uci, mover, label) => {
    assert.equal(turnOf(chess), mover, `${label}: ${mover} to move`);
    let played;
    try {
      played = chess.move(moveOf(uci));
    } catch (err) {
      assert.fail(`${label}: ${uci} is not legal in ${chess.fen()} (${err.message}); seed ${seed}`);
    }
    if (mover === engineColor) engineMoves++;
    return played;
  };
  // The computer playing white may have moved before the stream opened: then its move is in the first event.
  assert.ok(head.moves.length <= 1 && (head.moves.length === 0 || engineColor === 'white'));
  for (const m of head.moves) replay(m.uci, engineColor, 'the first event');
  assert.equal(version, 1 + head.moves.length);
  while (status === 'active') {
    if (turnOf(chess) === person) {
      const legal = chess.moves({ verbose: true }).map(uciOf);
      if (chess.history().length >= MAX_PLIES) {
        const res = await change(server, game, person, 'resign', { expected_version: version });
        assert.equal(res.status, 200, res.text);
      } else {
        const answer = await move(server, game, person, rnd.pick(legal), version);
        if (answer.status === 'active') // the computer's legal moves, as chessd and chess.js see them
          assert.deepEqual(answer.position.legal_moves.map((m) => m.uci).sort(), legalAfter(chess, answer.move.uci));
      }
    }
    const mover = turnOf(chess);
    const { data } = await stream.next(WAIT_MS);
    assert.equal(data.type, 'change', `version ${version + 1}: ${JSON.stringify(data).slice(0, 300)}`);
    assert.equal(data.version, version + 1, 'the changes come one version at a time');
    const label = `version ${data.version} (${data.event} by ${mover})`;
    if (data.event === 'move') {
      const played = replay(data.move.uci, mover, label);
      assert.equal(data.move.san, played.san, label);
      assert.equal(fenHead(data.position.fen), fenHead(chess.fen()), label);
      assert.equal(data.move_count, chess.history().length, label);
    } else {
      assert.equal(data.event, 'resign', `${label}: only the person's resignation ends a game otherwise`);
      assert.equal(mover, person);
    }
    // Every change carries the clock; it runs from the second ply on, for the side to move.
    const clock = data.clock;
    assert.ok(clock && Number.isInteger(clock.white_ms) && Number.isInteger(clock.black_ms) && Number.isInteger(clock.at_ms), `${label}: clock ${JSON.stringify(clock)}`);
    assert.equal(clock.initial_ms, 60000);
    assert.equal(clock.increment_ms, 500);
    if (data.status === 'active') assert.equal(clock.running, chess.history().length >= 2 ? turnOf(chess) : null, label);
    else assert.equal(clock.running, null, label);
    version = data.version;
    status = data.status;
  }
  // The change that ends the game ends the stream.
  await Promise.race([stream.done, sleep(5000).then(() => assert.fail('the stream did not end with the game'))]);
  stream.close();
  const stored = await readGame(server, game.id);
  assert.equal(stored.version, version);
  assert.equal(stored.status, status);
  assert.deepEqual(stored.moves.map((m) => m.uci), chess.history({ verbose: true }).map(uciOf));
  assert.deepEqual(stored[engineColor], { name: 'chessd level 1', engine: { level: 1 } });
  assert.equal('tokens' in stored, false, 'tokens are shown at creation only');
  // The computer's clock ran while it thought: less is left than its time and the increments of its moves
  // after the first (the first two plies are free: no charge, no increment), which is all a clock never
  // charged would show. (A few moves may each take under a millisecond; many cannot.)
  if (engineMoves >= 5) {
    const unchargedMs = 60000 + 500 * (engineMoves - 1);
    assert.ok(stored.clock[`${engineColor}_ms`] < unchargedMs, `the computer's clock: ${JSON.stringify(stored.clock)}, ${unchargedMs} if never charged`);
  }
  // The PGN names the computer's side for its level and holds the moves played.
  const pgn = await get(server, `/v1/games/${game.id}/pgn`);
  assert.equal(pgn.status, 200);
  assert.match(pgn.text, new RegExp(`^\\[${engineColor === 'white' ? 'White' : 'Black'} "chessd level 1"\\]$`, 'm'));
  assert.match(pgn.text, new RegExp(`^\\[${person === 'white' ? 'White' : 'Black'} "\\?"\\]$`, 'm'));
  assert.match(pgn.text, /^\[TimeControl "60\+0\.5"\]$/m);
  const fromPgn = new Chess();
  fromPgn.loadPgn(pgn.text);
  assert.deepEqual(fromPgn.history(), chess.history());
  t.diagnostic(`level 1 as ${engineColor}: ${chess.history().length} plies, ${engineMoves} by the computer, ${status} ${stored.result}, ` +
    `its clock ${stored.clock[`${engineColor}_ms`]} ms (seed ${seed})`);
  return { status, plies: chess.history().length, engineMoves, version };
}

/** The legal moves (UCI, sorted) after uci in chess's position (chess itself is left as it is). */
function legalAfter(chess, uci) {
  const next = new Chess(chess.fen());
  next.move(moveOf(uci));
  return next.moves({ verbose: true }).map(uciOf).sort();
}

test('a whole game at level 1 with a clock, the computer black: random legal moves until it ends, every move of the computer legal and on the stream', async (t) => {
  const s = await setUp(t);
  const server = await s.worker();
  const seed = Number(process.env.CHESSD_E2E_SEED ?? Date.now() % 100000);
  const before = await engineMetrics(server);
  const result = await wholeGame(t, server, 'black', seed);
  assert.ok(result.engineMoves >= 1);
  const after = await metricsUntil(server, (m) => m.played - before.played >= result.engineMoves, 'every turn counted');
  assert.equal(after.played - before.played, result.engineMoves, 'each turn played once');
  assert.equal(after.failed, before.failed);
});

test('a whole game at level 1, the computer white: its first move arrives without any request', async (t) => {
  const s = await setUp(t);
  const server = await s.worker();
  const seed = Number(process.env.CHESSD_E2E_SEED ?? Date.now() % 100000) + 1;
  const result = await wholeGame(t, server, 'white', seed);
  assert.ok(result.engineMoves >= 1);
});

test('a takeback offered while the computer thinks: its move loses the compare-and-set, it accepts the offer, and nothing else is played', async (t) => {
  const s = await setUp(t);
  const server = await s.worker();
  const game = await create(server, { engine: { ...THINKER, color: 'black' }, clock: { initial_ms: 300000, increment_ms: 0 } });
  const [stream] = await follow(server, game.id);
  await move(server, game, 'white', 'e2e4', 1);
  await nextChange(stream, 2, 'move');
  const reply = await nextChange(stream, 3, 'move');
  await move(server, game, 'white', 'd2d4', 3);
  await nextChange(stream, 4, 'move');
  await thinking(server);
  // The offer is a write at version 4 too: it can only succeed while the computer's move is not in.
  const offer = await change(server, game, 'white', 'takeback', { action: 'offer', expected_version: 4 });
  assert.equal(offer.status, 200, `the offer lands while the computer thinks: ${offer.text}`);
  assert.equal(offer.body.version, 5);
  assert.equal(offer.body.takeback_offer, 'white');
  await nextChange(stream, 5, 'takeback_offer');
  // The computer accepts (the only other player), back to the position before d4; white to move.
  const accepted = await nextChange(stream, 6, 'takeback_accept');
  assert.equal(accepted.position.fen, reply.position.fen);
  assert.equal(accepted.position.turn, 'white');
  assert.equal(accepted.move_count, 2);
  assert.equal(accepted.takeback_offer, null);
  assert.equal(accepted.status, 'active');
  // The turn at version 4 ended stale (its move lost), the offer's was played; then nothing runs.
  const m = await metricsUntil(server, (x) => x.played + x.stale === 3 && x.busy === 0, 'the three turns done');
  assert.deepEqual([m.played, m.stale, m.failed], [2, 1, 0]);
  await sleep(THINK_MS + 500);
  await nothingMore(server, stream, game.id, 6, ['e2e4', reply.move.uci]);
  assert.equal(await intent(s.redis, game.id, 4), null);
  assert.equal(await intent(s.redis, game.id, 5), null);
  // Offered on the person's own turn, the takeback goes back two plies: the computer's reply and the person's move.
  const again = await change(server, game, 'white', 'takeback', { action: 'offer', expected_version: 6 });
  assert.equal(again.status, 200, again.text);
  await nextChange(stream, 7, 'takeback_offer');
  const start = await nextChange(stream, 8, 'takeback_accept');
  assert.equal(start.move_count, 0);
  assert.equal(fenHead(start.position.fen), fenHead(new Chess().fen()));
  await metricsUntil(server, (x) => x.played === 3, 'the second takeback accepted');
  await nothingMore(server, stream, game.id, 8, []);
  stream.close();
});

test('a resignation while the computer thinks ends the game; no move of the computer is ever added', async (t) => {
  const s = await setUp(t);
  const server = await s.worker();
  const game = await create(server, { engine: { ...THINKER, color: 'black' }, clock: { initial_ms: 300000, increment_ms: 0 } });
  const [stream] = await follow(server, game.id);
  await move(server, game, 'white', 'e2e4', 1);
  await nextChange(stream, 2, 'move');
  await thinking(server);
  const res = await change(server, game, 'white', 'resign', { expected_version: 2 });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'resigned');
  assert.equal(res.body.result, '0-1');
  const resigned = await nextChange(stream, 3, 'resign');
  assert.equal(resigned.status, 'resigned');
  await Promise.race([stream.done, sleep(5000).then(() => assert.fail('the stream did not end with the game'))]);
  const m = await metricsUntil(server, (x) => x.stale === 1 && x.busy === 0, 'the turn found stale');
  assert.equal(m.played, 0);
  await sleep(THINK_MS + 500);
  const g = await nothingMore(server, stream, game.id, 3, ['e2e4']);
  assert.equal(g.status, 'resigned');
  assert.equal(g.termination, 'resignation');
  assert.equal(await intent(s.redis, game.id, 2), null);
});

test('a draw offer is not answered by the computer: its move made while the offer was made loses, its next one lets the offer lapse', async (t) => {
  const s = await setUp(t);
  const server = await s.worker();
  const game = await create(server, { engine: { ...THINKER, color: 'black' } });
  const [stream] = await follow(server, game.id);
  await move(server, game, 'white', 'e2e4', 1);
  await nextChange(stream, 2, 'move');
  await thinking(server);
  const offer = await change(server, game, 'white', 'draw', { action: 'offer', expected_version: 2 });
  assert.equal(offer.status, 200, offer.text);
  assert.equal(offer.body.draw_offer, 'white');
  await nextChange(stream, 3, 'draw_offer');
  const reply = await nextChange(stream, 4, 'move');
  assert.equal(reply.draw_offer, null, 'the offer lapses with the move');
  assert.equal(reply.status, 'active');
  const m = await metricsUntil(server, (x) => x.played + x.stale === 2 && x.busy === 0, 'both turns done');
  assert.deepEqual([m.played, m.stale], [1, 1]);
  await sleep(THINK_MS + 500);
  await nothingMore(server, stream, game.id, 4, ['e2e4', reply.move.uci]);
  stream.close();
});

test('an abort while the computer thinks over its first move, or over its reply to the first', async (t) => {
  const s = await setUp(t);
  const server = await s.worker();
  // The computer white, thinking over the first move: the person (black) aborts.
  const first = await create(server, { engine: { ...THINKER, color: 'white' } });
  await thinking(server);
  const res = await change(server, first, 'black', 'abort', { expected_version: 1 });
  assert.equal(res.status, 200, `the abort lands before the computer's first move: ${res.text}`);
  assert.equal(res.body.status, 'aborted');
  // The computer black, thinking over its reply to 1. e4: white aborts.
  const second = await create(server, { engine: { ...THINKER, color: 'black' } });
  await move(server, second, 'white', 'e2e4', 1);
  await metricsUntil(server, (x) => x.busy === 1 && x.stale === 1, 'the first game\'s turn stale, the second\'s thinking');
  const res2 = await change(server, second, 'white', 'abort', { expected_version: 2 });
  assert.equal(res2.status, 200, `the abort lands before the computer's reply: ${res2.text}`);
  assert.equal(res2.body.status, 'aborted');
  const m = await metricsUntil(server, (x) => x.stale === 2 && x.busy === 0, 'both turns found stale');
  assert.equal(m.played, 0);
  await sleep(THINK_MS + 500);
  for (const [g, version, moves] of [[first, 2, []], [second, 3, ['e2e4']]]) {
    const stored = await readGame(server, g.id);
    assert.equal(stored.version, version);
    assert.equal(stored.status, 'aborted');
    assert.deepEqual(stored.moves.map((x) => x.uci), moves);
  }
});

test('the replica that took the turn is killed mid-think: another finishes it after the lease, exactly once', async (t) => {
  const s = await setUp(t);
  // The API replica runs no engine; its intents are due after its own (default) lease, 15 s: the sweep stays out of it.
  const api = await s.api();
  const lease = THINK_MS + 2000; // --engine-job-lease-ms is raised to --engine-max-think-ms + 2 s
  const workerArgs = ['--engine-max-think-ms', String(THINK_MS), '--engine-job-lease-ms', '500'];
  const first = await s.worker(workerArgs, 'engine');
  const game = await create(api, { engine: { ...THINKER, color: 'black' } });
  const [stream] = await follow(api, game.id);
  const sent = Date.now();
  await move(api, game, 'white', 'e2e4', 1);
  await nextChange(stream, 2, 'move');
  await thinking(first);
  await kill(first);
  const killed = Date.now();
  const second = await s.worker(workerArgs, 'engine');
  const reply = await nextChange(stream, 3, 'move', lease + THINK_MS + WAIT_MS);
  const arrived = Date.now();
  // Not before the first worker's claim had been quiet for the lease; within the lease and one think after the kill (and slack).
  assert.ok(arrived - sent >= lease - 100, `the turn was taken over after ${arrived - sent} ms, before its lease of ${lease} ms`);
  assert.ok(arrived - killed <= lease + THINK_MS + 5000, `the turn took ${arrived - killed} ms after the kill`);
  assert.ok(new Chess('rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1').move(moveOf(reply.move.uci)));
  const m = await metricsUntil(second, (x) => x.played === 1 && x.busy === 0, 'the second worker played the turn');
  assert.deepEqual([m.stale, m.failed, m.recovered], [0, 0, 0], 'taken by its lease, not found by the sweep');
  await sleep(THINK_MS + 500);
  await nothingMore(api, stream, game.id, 3, ['e2e4', reply.move.uci]);
  assert.equal(await intent(s.redis, game.id, 2), null);
  assert.deepEqual(await jobsOf(s.redis, game.id), [], 'the job acknowledged and removed');
  t.diagnostic(`killed mid-think: the move came ${arrived - killed} ms after the kill (lease ${lease} ms)`);
  stream.close();
});

test('a job lost between the game\'s write and the queue: the sweep finds its intent once due, and the computer moves', async (t) => {
  const s = await setUp(t);
  // Intents written by this API replica are due 2.5 s after the write (the least lease: 500 ms of think and 2 s).
  const api = await s.api(['--engine-max-think-ms', '500', '--engine-job-lease-ms', '500']);
  const game = await create(api, { engine: { level: 1, color: 'white' } });
  assert.ok(await intent(s.redis, game.id, 1), 'the intent is written with the game');
  const jobs = await jobsOf(s.redis, game.id);
  assert.equal(jobs.length, 1, 'one job queued');
  assert.deepEqual(jobs, [['queued', 1]]);
  // The job is lost (as if the replica died between the two writes): the
  // intent stays as the write left it, due 2.5 s on (queueing the turn would have pushed it on).
  await loseQueued(s.redis, game.id, 1);
  const [seconds, micros] = await s.redis.command('TIME');
  const due = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + 2500;
  await s.redis.command('ZADD', DUE_KEY, String(due), `${game.id}:1`);
  const worker = await s.worker([], 'engine');
  const [stream, head] = await follow(api, game.id);
  assert.equal(head.version, 1, 'no move without a job');
  const played = await nextChange(stream, 2, 'move', WAIT_MS + 2500);
  const arrived = Date.now();
  assert.ok(arrived >= due - 200, `the move came ${due - arrived} ms before its intent was due`);
  assert.ok(arrived <= due + WAIT_MS);
  assert.ok(new Chess().move(moveOf(played.move.uci)));
  const m = await metricsUntil(worker, (x) => x.played === 1, 'the recovered turn played');
  assert.equal(m.recovered, 1, 'queued again by the sweep');
  assert.equal(m.failed, 0);
  await sleep(1500);
  await nothingMore(api, stream, game.id, 2, [played.move.uci]);
  assert.equal(await intent(s.redis, game.id, 1), null, 'the intent cleared once played');
  assert.deepEqual(await jobsOf(s.redis, game.id), []);
  stream.close();
});

test('a duplicate job (the same game and version queued twice): one move lands, the other turn is stale', async (t) => {
  const s = await setUp(t);
  const api = await s.api();
  const game = await create(api, { engine: { level: 1, color: 'white' } });
  assert.equal((await jobsOf(s.redis, game.id)).length, 1);
  const added = await s.redis.command('XADD', JOBS_KEY, '*', 'game', game.id, 'version', '1');
  assert.match(String(added), /^\d+-\d+$/);
  assert.deepEqual((await jobsOf(s.redis, game.id)).map(([, v]) => v), [1, 1]);
  const worker = await s.worker([], 'engine');
  const m = await metricsUntil(worker, (x) => x.played + x.stale === 2 && x.busy === 0, 'both jobs taken');
  assert.deepEqual([m.played, m.stale, m.failed], [1, 1, 0]);
  const g = await readGame(api, game.id);
  assert.equal(g.version, 2);
  assert.equal(g.moves.length, 1);
  assert.deepEqual(await jobsOf(s.redis, game.id), []);
  assert.equal(await intent(s.redis, game.id, 1), null);
});

/** Runs chessd with args to its exit; resolves to { code, stderr }. */
function runChessd(args, env = {}) {
  return new Promise((resolve, reject) => {
    const all = Object.entries({ ...process.env, ...ENV, ...env }).filter(([, v]) => v !== undefined);
    const proc = spawn(CHESSD_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'], env: Object.fromEntries(all) });
    let stderr = '';
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10000);
    proc.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    proc.on('error', reject);
    proc.on('exit', (code) => { clearTimeout(timer); resolve({ code, stderr }); });
  });
}

test('chessd engine serves /healthz, /readyz and /metrics only; it needs a Redis and an engine', async (t) => {
  const s = await setUp(t);
  const worker = await s.worker([], 'engine');
  assert.equal((await get(worker, '/healthz')).status, 200);
  const ready = await get(worker, '/readyz');
  assert.equal(ready.status, 200, ready.text);
  assert.equal(ready.body.redis, 'up');
  assert.equal(ready.body.engine.state, 'up');
  const metrics = await get(worker, '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.text, /^chessd_engine_turns_total\{outcome="played"\} 0$/m);
  for (const [method, path, body] of [['POST', '/v1/position/analysis', '{"depth":1}'], ['GET', '/v1/position'],
    ['POST', '/v1/games', '{}'], ['GET', '/version'], ['GET', '/openapi.yaml']]) {
    const res = await fetch(worker.base + path, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
    const text = await res.text();
    assert.equal(res.status, 404, `${method} ${path} on chessd engine: ${text.slice(0, 200)}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  }
  // Without a Redis, or without an engine, it does not start: exit 2 and a sentence saying what it needs.
  const noRedis = await runChessd(['engine', '--bind', '127.0.0.1', '--port', '0', '--engine', STOCKFISH], { CHESSD_REDIS_URL: undefined });
  assert.equal(noRedis.code, 2, noRedis.stderr);
  assert.match(noRedis.stderr, /^chessd engine: needs Redis \(--redis URL\): .+$/m);
  const noEngine = await runChessd(['engine', '--bind', '127.0.0.1', '--port', '0', '--redis', s.redis.url, '--engine', 'none']);
  assert.equal(noEngine.code, 2, noEngine.stderr);
  assert.match(noEngine.stderr, /^chessd engine: needs an engine \(--engine PATH\): .+$/m);
  // An engine that cannot start: it runs, unready.
  const broken = await s.worker([], 'engine', '/nonexistent/stockfish');
  const unready = await get(broken, '/readyz');
  expectProblem(unready, 503, 'engine_unavailable');
  assert.ok(Number(unready.headers.get('retry-after')) >= 1, 'with Retry-After');
  assert.equal((await get(broken, '/healthz')).status, 200);
});

test('hints: GET /analysis answers during a game against the computer, and in a game between two people only with "analysis": true or once it is over', async (t) => {
  const s = await setUp(t);
  const server = await s.worker();
  const hint = (id) => get(server, `/v1/games/${id}/analysis?depth=4`);
  const vsComputer = await create(server, { engine: { level: 1, color: 'black' } });
  assert.equal(vsComputer.analysis, true);
  await move(server, vsComputer, 'white', 'e2e4', 1);
  const during = await hint(vsComputer.id);
  assert.equal(during.status, 200, during.text);
  assert.equal(typeof during.body.bestmove, 'string');
  const people = await create(server, {});
  assert.equal(people.analysis, false);
  expectProblem(await hint(people.id), 403, 'analysis_not_allowed');
  await move(server, people, 'white', 'e2e4', 1);
  expectProblem(await hint(people.id), 403, 'analysis_not_allowed');
  const open = await create(server, { analysis: true });
  assert.equal(open.analysis, true);
  assert.deepEqual(Object.keys(open.tokens).sort(), ['black', 'white']);
  assert.equal((await hint(open.id)).status, 200);
  const resigned = await change(server, people, 'black', 'resign', { expected_version: 2 });
  assert.equal(resigned.status, 200, resigned.text);
  const after = await hint(people.id);
  assert.equal(after.status, 200, after.text);
});

test('creation: a rating in place of a level, a colour drawn at random; the computer\'s side is named for its strength', async (t) => {
  const s = await setUp(t);
  const api = await s.api();
  const rated = await create(api, { engine: { elo: 1500, color: 'white' }, black: 'Ann' });
  assert.deepEqual(rated.white, { name: 'chessd 1500', engine: { elo: 1500 } });
  assert.deepEqual(rated.black, { name: 'Ann' });
  assert.deepEqual(Object.keys(rated.tokens), ['black']);
  const pgn = await get(api, `/v1/games/${rated.id}/pgn`);
  assert.match(pgn.text, /^\[White "chessd 1500"\]$/m);
  assert.match(pgn.text, /^\[Black "Ann"\]$/m);
  const seen = new Set();
  for (let i = 0; i < 40 && seen.size < 2; i++) {
    const g = await create(api, { engine: { level: 3 } });
    const computer = g.white.engine ? 'white' : 'black';
    assert.deepEqual(g[computer], { name: 'chessd level 3', engine: { level: 3 } });
    assert.equal(g[other(computer)].engine, undefined);
    assert.deepEqual(Object.keys(g.tokens), [other(computer)]);
    seen.add(computer);
  }
  assert.equal(seen.size, 2, 'either colour is drawn');
  // A game between two people has no engine member on either side.
  const people = await create(api, { white: 'Ann', black: 'Bob' });
  assert.deepEqual([people.white, people.black], [{ name: 'Ann' }, { name: 'Bob' }]);
});
