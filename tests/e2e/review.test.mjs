// Whole-game reviews end to end (POST and GET /v1/games/{id}/review): the
// real Stockfish, a real redis-server (or the shared cluster), real HTTP. A
// known short game whose White missed a mate in one is judged a blunder there
// with the mate as the best move; each side's accuracy is recomputed here from
// the returned evaluations with Lichess's formulas; the PGN carries [%eval];
// a second POST answers the cached review; a replica killed mid-review
// (SIGKILL) leaves the review to another, which keeps every position done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startServer, gameRedis } from './server.mjs';
import { get, post, expectProblem, sleep } from './http.mjs';
import { openEvents } from './events.mjs';

const STOCKFISH = process.env.CHESSD_STOCKFISH ?? '/usr/games/stockfish';
const ENV = { CHESSD_TOKEN_SECRET: 'e2e-review-token-secret-0123456789abcdef' };
const REVIEW_KEYS = ['chessd:{review}:queue', 'chessd:{review}:holder', 'chessd:{review}:owner-of', 'chessd:{review}:owner:127.0.0.1'];
const WAIT_MS = 90000; // a whole review on a loaded 2-core machine with sanitizers

const auth = (token) => ({ authorization: `Bearer ${token}` });

async function setUp(t) {
  assert.ok(existsSync(STOCKFISH), `${STOCKFISH} is missing: install the Debian package stockfish (make deps) or set CHESSD_STOCKFISH`);
  const redis = await gameRedis();
  const stops = [() => redis.stop()];
  t.after(async () => { for (const stop of stops.reverse()) await stop(); });
  await redis.command('DEL', ...REVIEW_KEYS);
  return {
    redis,
    replica: async (args = []) => {
      const server = await startServer(['--redis', redis.url, '--engine', STOCKFISH, '--engine-workers', '1', ...args], { env: ENV });
      stops.push(() => (server.killed ? undefined : server.stop()));
      return server;
    },
  };
}

/** A game between two people with these moves (UCI), then resigned by the side to move. */
async function playedGame(server, moves, { resign = true } = {}) {
  const created = await post(server, '/v1/games', {});
  assert.equal(created.status, 201, created.text);
  const game = created.body;
  let version = game.version;
  for (const [i, uci] of moves.entries()) {
    const color = i % 2 === 0 ? 'white' : 'black';
    const res = await post(server, `/v1/games/${game.id}/moves`, { move: uci, expected_version: version }, { headers: auth(game.tokens[color]) });
    assert.equal(res.status, 200, `${uci}: ${res.text}`);
    version = res.body.version;
  }
  if (resign) {
    const color = moves.length % 2 === 0 ? 'white' : 'black';
    const res = await post(server, `/v1/games/${game.id}/resign`, { expected_version: version }, { headers: auth(game.tokens[color]) });
    assert.equal(res.status, 200, res.text);
  }
  return game;
}

/** GET the review until pred holds; resolves to it. */
async function reviewUntil(server, id, pred, what, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await get(server, `/v1/games/${id}/review`);
    assert.equal(res.status, 200, res.text);
    if (pred(res.body)) return res.body;
    assert.ok(res.body.status !== 'failed', `the review failed: ${res.text}`);
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms; review ${res.text.slice(0, 500)}`);
    await sleep(100);
  }
}

// Lichess's formulas (lila's WinPercent and AccuracyPercent), again here.
// A mate of 0 (the side to move is mated) is the ceiling of the side that moved into it (moverWhite).
const cpOf = (e, moverWhite) => Math.max(-1000, Math.min(1000, 'cp' in e ? e.cp
  : e.mate > 0 || (e.mate === 0 && moverWhite) ? 1000 : -1000));
const winPercent = (cp) => 50 + 50 * (2 / (1 + Math.exp(-0.00368208 * cp)) - 1);
const moveAccuracy = (before, after) => (after >= before ? 100
  : Math.max(0, Math.min(100, 103.1668100711649 * Math.exp(-0.04354415386753951 * (before - after)) - 3.166924740191411 + 1)));
const deviation = (xs) => { const m = xs.reduce((a, b) => a + b, 0) / xs.length; return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length); };

/** Each side's acpl and accuracy from the review's evaluations (White moved first). */
function sidesOf(review) {
  const evals = [cpOf(review.start.eval, false), ...review.plies.map((p) => cpOf(p.eval, p.color === 'white'))];
  const wins = evals.map(winPercent);
  const n = evals.length - 1;
  const size = Math.min(Math.max(Math.floor(n / 10), 2), 8);
  const out = {};
  for (const [side, sign, parity] of [['white', 1, 0], ['black', -1, 1]]) {
    let weighted = 0, weights = 0, inverse = 0, loss = 0, moves = 0;
    for (let i = parity; i < n; i += 2) {
      const before = sign * evals[i], after = sign * evals[i + 1];
      const acc = moveAccuracy(winPercent(before), winPercent(after));
      const start = Math.max(0, i - (size - 2));
      const weight = Math.max(0.5, Math.min(12, deviation(wins.slice(start, start + size))));
      weighted += acc * weight; weights += weight; inverse += 1 / Math.max(1, acc);
      loss += Math.max(0, before - after); moves++;
    }
    out[side] = { acpl: loss / moves, accuracy: (weighted / weights + moves / inverse) / 2 };
  }
  return out;
}

// 1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6?? 4. d3?? (Qxf7# was mate), and Black resigns.
const MISSED_MATE = ['e2e4', 'e7e5', 'f1c4', 'b8c6', 'd1h5', 'g8f6', 'd2d3'];

test('a missed mate in one is a blunder with the mate as best; accuracies follow the evals; [%eval] in the PGN; cached', async (t) => {
  const { replica } = await setUp(t);
  const server = await replica();
  const game = await playedGame(server, MISSED_MATE);
  expectProblem(await get(server, `/v1/games/${game.id}/review`), 404, 'review_not_found');
  const queued = await post(server, `/v1/games/${game.id}/review`, { nodes: 50000 });
  assert.equal(queued.status, 202, queued.text);
  assert.ok(['queued', 'running'].includes(queued.body.status));
  assert.deepEqual(queued.body.limit, { nodes: 50000 });
  assert.equal(queued.body.positions, MISSED_MATE.length + 1);
  const review = await reviewUntil(server, game.id, (r) => r.status === 'done', 'the review done');
  assert.equal(review.positions_done, MISSED_MATE.length + 1);
  assert.equal(review.plies.length, MISSED_MATE.length);
  assert.deepEqual(review.plies.map((p) => p.uci), MISSED_MATE);
  const missed = review.plies[6];
  assert.equal(missed.san, 'd3');
  assert.equal(missed.color, 'white');
  assert.equal(review.plies[5].eval.mate, 1, `after Nf6 White mates in one: ${JSON.stringify(review.plies[5])}`);
  assert.equal(missed.best.uci, 'h5f7', JSON.stringify(missed));
  assert.equal(missed.best.san, 'Qxf7#');
  assert.ok(['mistake', 'blunder'].includes(missed.judgement), JSON.stringify(missed));
  assert.equal(review.plies[5].judgement, 'blunder', `Nf6 walked into a mate: ${JSON.stringify(review.plies[5])}`);
  for (const p of review.plies) assert.ok(p.analysed_by, JSON.stringify(p));

  const mine = sidesOf(review);
  for (const side of ['white', 'black']) {
    assert.ok(Math.abs(review[side].accuracy - mine[side].accuracy) < 0.05, `${side}: ${JSON.stringify(review[side])} vs ${JSON.stringify(mine[side])}`);
    assert.ok(Math.abs(review[side].acpl - mine[side].acpl) < 0.05, `${side}: ${JSON.stringify(review[side])} vs ${JSON.stringify(mine[side])}`);
    assert.ok(review[side].accuracy >= 0 && review[side].accuracy <= 100);
  }

  const pgn = await get(server, `/v1/games/${game.id}/pgn`);
  assert.equal(pgn.status, 200);
  assert.match(pgn.text, /Nf6\s\{ \[%eval #1\] \}/, pgn.text);
  assert.match(pgn.text, /d3\s\{ \[%eval -?\d+\.\d\d\] \}/, pgn.text);

  const again = await post(server, `/v1/games/${game.id}/review`, {});
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.body, review);
});

test('refusals: a game still played, limits, a client\'s bound, a variant no engine plays', async (t) => {
  const { replica } = await setUp(t);
  const server = await replica(['--engine-analyses-per-client', '1']);
  const playing = await playedGame(server, ['e2e4'], { resign: false });
  expectProblem(await post(server, `/v1/games/${playing.id}/review`, {}), 403, 'review_not_allowed');
  const over = await playedGame(server, ['e2e4', 'e7e5']);
  expectProblem(await post(server, `/v1/games/${over.id}/review`, { nodes: 1000, depth: 3 }), 400, 'conflicting_fields');
  expectProblem(await post(server, `/v1/games/${over.id}/review`, { movetime_ms: 10 ** 9 }), 422, 'analysis_limit_too_large');
  expectProblem(await post(server, `/v1/games/${over.id}/review`, { multipv: 2 }), 400, 'unknown_field');
  // The one review this client may have: a slow one, so it is still there for the next POST.
  const slow = await post(server, `/v1/games/${over.id}/review`, { movetime_ms: 2000 });
  assert.equal(slow.status, 202, slow.text);
  const other = await playedGame(server, ['d2d4']);
  const refused = expectProblem(await post(server, `/v1/games/${other.id}/review`, {}), 429, 'too_many_analyses');
  assert.equal(refused.max, 1);
  expectProblem(await get(server, `/v1/games/${other.id}/review`), 404, 'review_not_found');
  // A variant no engine here plays (this replica runs no variant engine): refused, nothing queued.
  const atomic = await post(server, '/v1/games', { variant: 'atomic' });
  assert.equal(atomic.status, 201, atomic.text);
  const resigned = await post(server, `/v1/games/${atomic.body.id}/resign`, { expected_version: atomic.body.version },
    { headers: auth(atomic.body.tokens.white) });
  assert.equal(resigned.status, 200, resigned.text);
  expectProblem(await post(server, `/v1/games/${atomic.body.id}/review`, {}), 422, 'variant_not_supported_by_engine');
});

test('a game open to analysis shows the review\'s progress on its event stream', async (t) => {
  const { replica } = await setUp(t);
  const server = await replica();
  const created = await post(server, '/v1/games', { analysis: true });
  assert.equal(created.status, 201, created.text);
  const game = created.body;
  const res = await post(server, `/v1/games/${game.id}/moves`, { move: 'e2e4', expected_version: game.version }, { headers: auth(game.tokens.white) });
  assert.equal(res.status, 200, res.text);
  const stream = await openEvents(server, game.id);
  assert.equal(stream.status, 200);
  assert.equal((await stream.next(WAIT_MS)).data.type, 'game');
  const queued = await post(server, `/v1/games/${game.id}/review`, { nodes: 20000 });
  assert.equal(queued.status, 202, queued.text);
  for (;;) {
    const { data } = await stream.next(WAIT_MS);
    assert.equal(data.type, 'review', JSON.stringify(data));
    assert.equal(data.positions, 2);
    if (data.status === 'done') break;
  }
  stream.close?.();
});

test('a finished game\'s stream follows its review while it runs, and ends with it', async (t) => {
  const { replica } = await setUp(t);
  const server = await replica(['--engine-max-think-ms', '1000']);
  const game = await playedGame(server, ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4', 'g8f6']);
  // without a review, a finished game's stream is its snapshot and its end
  const plain = await openEvents(server, game.id);
  assert.equal((await plain.next(WAIT_MS)).data.type, 'game');
  await plain.done;
  const queued = await post(server, `/v1/games/${game.id}/review`, { movetime_ms: 200 });
  assert.equal(queued.status, 202, queued.text);
  const stream = await openEvents(server, game.id, { sse: true });
  assert.equal(stream.status, 200);
  const first = await stream.next(WAIT_MS);
  assert.equal(first.data.type, 'game');
  assert.equal(first.data.status, 'resigned');
  let last;
  for (;;) {
    const { data } = await stream.next(WAIT_MS);
    assert.equal(data.type, 'review', JSON.stringify(data));
    assert.equal(data.positions, 7);
    assert.ok(!last || data.positions_done >= last.positions_done, 'progress only grows');
    last = data;
    if (data.status === 'done') break;
  }
  await stream.done; // the review's last event ends the stream
  assert.equal(stream.events.length, stream.taken, 'nothing after the review\'s end');
  // once it is done, the game's stream is the snapshot and the end again
  const after = await openEvents(server, game.id);
  assert.equal((await after.next(WAIT_MS)).data.type, 'game');
  await after.done;
  assert.equal(after.events.length, 1);
});

// A longer game, reviewed slowly enough to be killed in the middle.
const OPENING = ['e2e4', 'c7c5', 'g1f3', 'd7d6', 'd2d4', 'c5d4', 'f3d4', 'g8f6', 'b1c3', 'a7a6',
  'c1e3', 'e7e5', 'd4b3', 'c8e6', 'f2f3', 'f8e7', 'd1d2', 'e8g8', 'e1c1', 'b8d7'];

test('a replica killed mid-review: another finishes it and keeps every position done before', async (t) => {
  const { replica } = await setUp(t);
  const args = ['--engine-max-think-ms', '1000', '--engine-job-lease-ms', '500'];
  const first = await replica(args);
  const game = await playedGame(first, OPENING);
  const queued = await post(first, `/v1/games/${game.id}/review`, { movetime_ms: 300 });
  assert.equal(queued.status, 202, queued.text);
  const partial = await reviewUntil(first, game.id, (r) => r.positions_done >= 4, 'four positions done');
  first.killed = true;
  first.proc.kill('SIGKILL');
  await first.exited;
  const second = await replica(args);
  const before = await reviewUntil(second, game.id, () => true, 'read');
  assert.ok(before.positions_done >= partial.positions_done);
  assert.notEqual(before.status, 'done', 'the kill came before the end');
  const done = await reviewUntil(second, game.id, (r) => r.status === 'done', 'the review finished by the other replica');
  assert.equal(done.plies.length, OPENING.length);
  const firstWorker = `:${first.proc.pid}:`;
  const secondWorker = `:${second.proc.pid}:`;
  // Every ply done before the kill is kept as the first replica wrote it.
  for (const p of partial.plies) {
    assert.ok(p.analysed_by.includes(firstWorker), JSON.stringify(p));
    assert.deepEqual(done.plies[p.ply - 1], p, `ply ${p.ply} kept`);
  }
  assert.ok(done.plies.some((p) => p.analysed_by.includes(secondWorker)), 'the other replica finished it');
  assert.ok(done.plies.every((p) => p.analysed_by.includes(firstWorker) || p.analysed_by.includes(secondWorker)));
});
