// One soak client process (started by tests/soak/soak.sh): LOOPS concurrent
// loops of mixed traffic spread over the chessd replicas until --end-at, then
// a read-back of every game it made. Built-ins only (fetch, node:fs).
//
// What each loop does, chosen at random per step:
// - stateless rules requests (position, position/moves, perft, health),
//   with their answers checked where the answer is known;
// - its own game: create (Idempotency-Key), play a legal move (Idempotency-Key
//   and expected_version; the answer is the change: the move played, the
//   move count and the new state), now and then two different moves raced at
//   the same version on the two replicas (exactly one may win), read the game
//   back (the move list) from the other replica, resign when the game is long
//   enough;
// - bad requests that must be refused and change nothing: garbage JSON,
//   illegal moves, unknown/opponent/missing tokens, stale versions, If-Match
//   mismatches, a reused Idempotency-Key, unknown ids, wrong media type,
//   unknown fields, bad FENs, too deep perft.
//
// Every HTTP attempt is written as one JSON line to <out>/requests-<id>.jsonl
// ({t0, t1, k: kind, r: replica, s: status or "conn_error"/"timeout", c: problem
// code, rid: X-Request-Id, a: attempt number}). A request that gets 503 or no
// answer is retried (same body, same Idempotency-Key) on the other replica with
// backoff, up to RETRY_BUDGET_MS; what stays unanswered is "unresolved" and,
// for a game change, remembered as a pending change that may or may not have
// been applied. The checks and their counts go to <out>/result-<id>.json.
import { createWriteStream, writeFileSync } from 'node:fs';
import path from 'node:path';

const opts = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([^=]+)=(.*)$/.exec(a);
  if (!m) throw new Error(`bad argument ${a} (expected --name=value)`);
  return [m[1], m[2]];
}));
const ID = Number(opts.id ?? 0);
const REPLICAS = (opts.replicas ?? '').split(',').filter(Boolean);
const END_AT = Number(opts['end-at']);
const OUT = opts.out;
const LOOPS = Number(opts.loops ?? 3);
const SEED = Number(opts.seed ?? 1);
const THINK_MS = Number(opts['think-ms'] ?? 10);
const RETRY_BUDGET_MS = Number(opts['retry-budget-ms'] ?? 30000);
const ATTEMPT_TIMEOUT_MS = Number(opts['attempt-timeout-ms'] ?? 10000);
const PAIR_CHANCE = Number(opts['pair-chance'] ?? 0.12);
if (!REPLICAS.length || !END_AT || !OUT) throw new Error('usage: client.mjs --id=N --replicas=URL,URL --end-at=MS --out=DIR');

// ---------------------------------------------------------------- helpers

function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)], chance: (p) => next() < p };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const b64chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const START_FEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
const KIWIPETE = 'r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1';
const POSITION_3 = '8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1';
const CHESS960 = 'bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9';
// Published perft counts: depth -> nodes.
const PERFT = {
  [START_FEN]: { 1: 20, 2: 400, 3: 8902, 4: 197281 },
  [KIWIPETE]: { 1: 48, 2: 2039, 3: 97862 },
  [POSITION_3]: { 1: 14, 2: 191, 3: 2812, 4: 43238 },
};
const BAD_FENS = ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1', 'not a fen', '8/8/8/8/8/8/8/8 w - - 0 1',
  'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1'];
const GARBAGE = ['{', '{"moves": [', 'null', '[1,2', '{"move": "e4", }', '\u0000\u0001', '{"moves": "e4"', 'tru'];

// ---------------------------------------------------------------- recording

const log = createWriteStream(path.join(OUT, `requests-${ID}.jsonl`));
let seq = 0;
const counts = {
  attempts: 0, logical: 0, unresolved: {}, unexpected: 0, versionObservations: 0, versionsBackwards: 0,
  lostUpdates: 0, noWinnerPairs: 0, unexpectedConflicts: 0, inconsistent: 0, pairs: {}, staleReads: 0,
  replays: 0, wrongReplays: 0,
};
const samples = { unexpected: [], versionsBackwards: [], lostUpdates: [], noWinnerPairs: [], unexpectedConflicts: [],
  inconsistent: [], staleReads: [], verify: [], unresolved: [], wrongReplays: [] };
function sample(list, item) { if (samples[list].length < 20) samples[list].push(item); }
function bump(map, key) { map[key] = (map[key] ?? 0) + 1; }

/** One HTTP attempt; never throws. */
async function attempt(kind, replica, method, urlPath, { headers = {}, body } = {}, n = 0) {
  const rid = `soak-c${ID}-${++seq}`;
  const t0 = Date.now();
  let status;
  let text = '';
  let resHeaders = null;
  let error = null;
  try {
    const res = await fetch(REPLICAS[replica] + urlPath, {
      method, body, headers: { 'x-request-id': rid, ...headers }, signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    text = await res.text();
    status = res.status;
    resHeaders = res.headers;
  } catch (err) {
    error = err?.name === 'TimeoutError' || err?.cause?.name === 'TimeoutError' ? 'timeout' : 'conn_error';
    text = String(err?.cause?.code ?? err?.cause?.message ?? err?.message ?? err);
  }
  const t1 = Date.now();
  counts.attempts++;
  let json;
  if (status !== undefined && text && /json/.test(resHeaders?.get('content-type') ?? '')) {
    try { json = JSON.parse(text); } catch { json = undefined; }
  }
  const rec = { t0, t1, k: kind, r: replica, s: status ?? error, rid, a: n };
  if (status >= 300 && json?.code) rec.c = json.code;
  if (error) rec.e = text.slice(0, 80);
  if (status >= 500) rec.d = text.slice(0, 300);
  log.write(`${JSON.stringify(rec)}\n`);
  return { status, error, text, json, headers: resHeaders, rid, t0, t1 };
}

/**
 * A logical request: attempts until an answer other than 503 (or until the
 * retry budget is spent: unresolved), switching replica after each failure.
 * expect: the acceptable final statuses; anything else is counted unexpected.
 */
async function send(kind, replica, method, urlPath, init, expect) {
  counts.logical++;
  const started = Date.now();
  let backoff = 100;
  let r = replica;
  for (let n = 0; ; n++) {
    const res = await attempt(kind, r, method, urlPath, init, n);
    res.attempts = n + 1;
    res.replica = r;
    if (res.status !== undefined && res.status !== 503) {
      if (!expect.includes(res.status)) {
        counts.unexpected++;
        sample('unexpected', { kind, method, path: urlPath, body: init?.body?.slice?.(0, 200), status: res.status,
          answer: res.text.slice(0, 300), rid: res.rid, expected: expect });
      }
      return res;
    }
    if (Date.now() - started > RETRY_BUDGET_MS) {
      bump(counts.unresolved, kind);
      sample('unresolved', { kind, path: urlPath, last: res.status ?? res.error, rid: res.rid });
      res.unresolved = true;
      return res;
    }
    await sleep(backoff + Math.floor(Math.random() * backoff));
    backoff = Math.min(backoff * 2, 1000);
    r = (r + 1) % REPLICAS.length;
  }
}

const jsonInit = (obj, headers = {}) => ({
  headers: { 'content-type': 'application/json', ...headers }, body: typeof obj === 'string' ? obj : JSON.stringify(obj),
});

// ---------------------------------------------------------------- games

const games = []; // every game whose creation was acknowledged
let unknownCreates = 0;

/**
 * Records a version seen for a game. floor is the highest version this
 * client had seen for the game when the request that saw `version` started:
 * seeing less than that is a version going backwards.
 */
function observe(game, version, floor, what, rid) {
  counts.versionObservations++;
  if (!(version >= floor)) {
    counts.versionsBackwards++;
    sample('versionsBackwards', { game: game.id, saw: version, floor, what, rid });
  }
  if (version > game.floor) game.floor = version;
}

function sameMoves(list, acked) {
  return Array.isArray(list) && list.length === acked.length && list.every((m, i) => m.uci === acked[i]);
}

/** Whether a change's answer (GameChange) played `move` ({uci, san}; null: none) and counts `count` moves. */
function changeIs(change, move, count) {
  const got = change?.move;
  return change?.move_count === count && (move === null ? got === null : got?.uci === move.uci && got?.san === move.san);
}

function inconsistent(what, detail) {
  counts.inconsistent++;
  sample('inconsistent', { what, ...detail });
}

async function createGame(rng, loop) {
  const key = `soak-create-c${ID}-l${loop}-${++seq}-${String(rng.int(1e9)).padStart(9, '0')}`; // 22+ characters
  const variant = rng.next();
  const body = { white: `c${ID}-l${loop}-w`, black: `c${ID}-l${loop}-b` };
  if (variant < 0.1) Object.assign(body, { fen: CHESS960, chess960: true });
  else if (variant < 0.2) body.fen = KIWIPETE;
  const res = await send('game_create', rng.int(REPLICAS.length), 'POST', '/v1/games',
    jsonInit(body, { 'idempotency-key': key }), [201]);
  if (res.unresolved || res.status >= 500) {
    unknownCreates++; // may have made a game nobody knows of
    return null;
  }
  if (res.status !== 201 || !res.json?.id) return null;
  const g = res.json;
  // state: the last answer (the Game, then each change's GameChange: the position and the game's state);
  // the start position and variant only come with the Game.
  const game = {
    id: g.id, tokens: g.tokens, acked: [], version: g.version, floor: 0, state: g, done: g.status !== 'active',
    initialFen: g.initial_fen, chess960: g.chess960,
    pending: [], abandoned: false, maxPlies: 8 + rng.int(90), createKey: key, client: ID, loop,
  };
  observe(game, g.version, 0, 'create', res.rid);
  if (g.version !== 1 || g.moves.length !== 0 || !g.tokens?.white || !g.tokens?.black)
    inconsistent('create', { game: g.id, version: g.version });
  if (res.attempts > 1) counts.replays++;
  games.push(game);
  return game;
}

const sideToMove = (game) => game.state.position.turn;
const tokenOf = (game, side) => game.tokens[side];
const other = (side) => (side === 'white' ? 'black' : 'white');

/**
 * Sends one move at the game's current version (not applied to `game`; the
 * caller decides). Resolves to { outcome: 'won'|'conflict'|'refused'|'unresolved', res, move }.
 */
async function sendMove(game, move, replica, rng, kind) {
  const v = game.version;
  const floor = game.floor;
  const key = `soak-move-c${ID}-${game.id}-v${v}-${rng.int(1e9)}`;
  const text = rng.chance(0.5) ? move.san : move.uci;
  const res = await send(kind, replica, 'POST', `/v1/games/${game.id}/moves`,
    jsonInit({ move: text, expected_version: v }, { authorization: `Bearer ${tokenOf(game, sideToMove(game))}`,
      'idempotency-key': key }), [200, 409]);
  // No answer after the retries, or a 5xx that is not retried (already counted as an error):
  // the move may or may not have been applied.
  if (res.unresolved || res.status >= 500) return { outcome: 'unresolved', res, move, index: game.acked.length };
  move = { ...move, key };
  if (res.status === 200 && res.json) {
    const g = res.json;
    observe(game, g.version, floor, 'move 200', res.rid);
    if (res.attempts > 1) counts.replays++;
    const count = game.acked.length + 1;
    if (g.version !== v + 1 || !changeIs(g, move, count)) {
      counts.wrongReplays += res.attempts > 1 ? 1 : 0;
      inconsistent('move answer', { game: game.id, sent: text, expected_version: v, got_version: g.version,
        got_move: g.move, got_move_count: g.move_count, expected_move_count: count, rid: res.rid, attempts: res.attempts });
    }
    return { outcome: 'won', res, move, game: g };
  }
  if (res.status === 409) {
    const current = res.json?.current_version;
    if (typeof current === 'number') observe(game, current, floor, 'move 409', res.rid);
    return { outcome: 'conflict', res, move, current };
  }
  return { outcome: 'refused', res, move };
}

function accept(game, won) {
  game.acked.push(won.move.uci);
  game.lastKey = won.move.key; // for the key-reuse bad request
  game.lastKeySide = sideToMove(game); // keys are the player's own: only the mover reuses this one
  game.version = won.game.version;
  game.state = won.game;
  if (won.game.status !== 'active') game.done = true;
}

function abandon(game, pending) {
  for (const p of pending) game.pending.push({ type: 'move', index: p.index, uci: p.move.uci });
  game.abandoned = true;
  game.done = true;
}

async function singleMove(game, rng) {
  const legal = game.state.position.legal_moves;
  const move = rng.pick(legal);
  const r = await sendMove(game, move, rng.int(REPLICAS.length), rng, 'game_move');
  if (r.outcome === 'won') accept(game, r);
  else if (r.outcome === 'unresolved') abandon(game, [r]);
  else {
    // The only writer of this game got a conflict (or a refusal of a legal move).
    counts.unexpectedConflicts++;
    sample('unexpectedConflicts', { game: game.id, version: game.version, status: r.res.status, answer: r.res.text.slice(0, 200), rid: r.res.rid });
    game.abandoned = true;
    game.done = true;
  }
}

/** Two different moves (or the same one under two keys) at the same version, one per replica, at once. */
async function racedMoves(game, rng) {
  const legal = game.state.position.legal_moves;
  const m1 = rng.pick(legal);
  const m2 = legal.length > 1 && rng.chance(0.8) ? rng.pick(legal.filter((m) => m.uci !== m1.uci)) : m1;
  const first = rng.int(REPLICAS.length);
  const [a, b] = await Promise.all([
    sendMove(game, m1, first, rng, 'game_move_raced'),
    sendMove(game, m2, (first + 1) % REPLICAS.length, rng, 'game_move_raced'),
  ]);
  const outcomes = [a.outcome, b.outcome].sort().join('+');
  bump(counts.pairs, outcomes);
  const won = [a, b].filter((x) => x.outcome === 'won');
  if (won.length === 2) {
    counts.lostUpdates++;
    sample('lostUpdates', { game: game.id, version: game.version, moves: [a.move.uci, b.move.uci], rids: [a.res.rid, b.res.rid] });
    game.abandoned = true;
    game.done = true;
    return;
  }
  if (won.length === 1) {
    accept(game, won[0]);
    return;
  }
  const unresolved = [a, b].filter((x) => x.outcome === 'unresolved');
  if (unresolved.length) {
    abandon(game, unresolved);
    return;
  }
  // Neither won and both were answered: someone else must have moved, and nobody else does.
  counts.noWinnerPairs++;
  sample('noWinnerPairs', { game: game.id, version: game.version, answers: [a.res.text.slice(0, 150), b.res.text.slice(0, 150)], rids: [a.res.rid, b.res.rid] });
  game.abandoned = true;
  game.done = true;
}

/** Reads the game back (from a random replica, sometimes conditionally) and checks it is exactly what was acknowledged. */
async function readBack(game, rng, kind = 'game_get') {
  const floor = game.floor;
  const conditional = rng.chance(0.3);
  const headers = conditional ? { 'if-none-match': `"${game.version}"` } : {};
  const res = await send(kind, rng.int(REPLICAS.length), 'GET', `/v1/games/${game.id}`, { headers }, conditional ? [304] : [200]);
  if (res.unresolved || (res.status !== 200 && res.status !== 304)) return; // counted as unexpected already
  const etag = res.headers?.get('etag');
  const version = res.status === 200 ? res.json?.version : etag ? Number(etag.replaceAll('"', '')) : undefined;
  if (typeof version === 'number') observe(game, version, floor, `${kind} ${res.status}`, res.rid);
  if (version !== game.version || (res.status === 200 && !sameMoves(res.json?.moves, game.acked))) {
    counts.staleReads++;
    sample('staleReads', { game: game.id, acked_version: game.version, got: version, status: res.status, rid: res.rid });
  }
}

async function resign(game, rng) {
  const side = rng.chance(0.5) ? 'white' : 'black';
  const v = game.version;
  const floor = game.floor;
  const key = `soak-resign-c${ID}-${game.id}-${rng.int(1e9)}`;
  const res = await send('game_resign', rng.int(REPLICAS.length), 'POST', `/v1/games/${game.id}/resign`,
    jsonInit({ expected_version: v }, { authorization: `Bearer ${tokenOf(game, side)}`, 'idempotency-key': key }), [200]);
  if (res.unresolved || res.status >= 500) {
    game.pending.push({ type: 'resign', version: v });
    game.abandoned = true;
    game.done = true;
    return;
  }
  if (res.status === 200 && res.json) {
    observe(game, res.json.version, floor, 'resign 200', res.rid);
    if (res.json.version !== v + 1 || res.json.status !== 'resigned' || !changeIs(res.json, null, game.acked.length))
      inconsistent('resign answer', { game: game.id, version: res.json.version, status: res.json.status, rid: res.rid });
    game.version = res.json.version;
    game.state = res.json;
  }
  game.done = true;
}

// ---------------------------------------------------------------- stateless

async function stateless(rng) {
  const replica = rng.int(REPLICAS.length);
  const pick = rng.next();
  if (pick < 0.3) {
    const fen = rng.pick([START_FEN, KIWIPETE, POSITION_3]);
    const legal = rng.chance(0.5);
    const res = await send('position_get', replica, 'GET', `/v1/position?fen=${encodeURIComponent(fen)}&legal_moves=${legal}`, {}, [200]);
    if (res.status === 200 && res.json?.fen !== fen) inconsistent('position fen', { fen, got: res.json?.fen, rid: res.rid });
  } else if (pick < 0.45) {
    const res = await send('position_post', replica, 'POST', '/v1/position', jsonInit({ fen: KIWIPETE }), [200]);
    if (res.status === 200 && res.json?.legal_moves?.length !== 48) inconsistent('kiwipete moves', { got: res.json?.legal_moves?.length, rid: res.rid });
  } else if (pick < 0.7) {
    // Replay some game's acknowledged line statelessly: same final position as the game says.
    const game = games.length ? games[games.length - 1 - rng.int(Math.min(games.length, 8))] : null;
    if (!game) return;
    const snapshot = { acked: [...game.acked], fen: game.state.position.fen, initial: game.initialFen, c960: game.chess960 };
    const res = await send('position_moves', replica, 'POST', `/v1/position/moves?legal_moves=false`,
      jsonInit({ fen: snapshot.initial, chess960: snapshot.c960, moves: snapshot.acked }), [200]);
    if (res.status === 200 && res.json?.position?.fen !== snapshot.fen)
      inconsistent('line replay', { game: game.id, plies: snapshot.acked.length, want: snapshot.fen, got: res.json?.position?.fen, rid: res.rid });
  } else if (pick < 0.95) {
    const fen = rng.pick(Object.keys(PERFT));
    const depths = Object.keys(PERFT[fen]).map(Number);
    const depth = rng.chance(0.85) ? rng.pick(depths.slice(0, 3)) : Math.max(...depths);
    const res = await send('perft', replica, 'GET', `/v1/perft?depth=${depth}&fen=${encodeURIComponent(fen)}`, {}, [200]);
    if (res.status === 200 && res.json?.nodes !== PERFT[fen][depth]) inconsistent('perft', { fen, depth, got: res.json?.nodes, rid: res.rid });
  } else {
    // (/readyz is left to the driver: a 503 there is its job while Redis is away or a replica drains.)
    const which = rng.chance(0.05) ? '/metrics' : rng.pick(['/healthz', '/version']);
    await send(`meta${which.replace('/', '_')}`, replica, 'GET', which, {}, [200]);
  }
}

// ---------------------------------------------------------------- bad requests

function randomId(rng) { return Array.from({ length: 16 }, () => b64chars[rng.int(64)]).join(''); }

/** A move that is surely not legal: a UCI move between squares no legal move joins. */
function illegalMove(game, rng) {
  const legal = new Set(game.state.position.legal_moves.map((m) => m.uci.slice(0, 4)));
  for (;;) {
    const sq = () => 'abcdefgh'[rng.int(8)] + '12345678'[rng.int(8)];
    const mv = sq() + sq();
    if (mv.slice(0, 2) !== mv.slice(2) && !legal.has(mv)) return mv;
  }
}

async function badRequest(rng, game) {
  const replica = rng.int(REPLICAS.length);
  const usable = game && !game.done && game.state.position.legal_moves?.length;
  const kinds = ['garbage_line', 'garbage_create', 'wrong_media', 'bad_fen', 'deep_perft', 'unknown_game', 'unknown_field'];
  if (usable) kinds.push('garbage_move', 'illegal_move', 'wrong_token', 'opponent_token', 'no_token', 'stale_version', 'if_match', 'key_reuse', 'illegal_move');
  const kind = rng.pick(kinds);
  const versionBefore = usable ? game.version : 0;
  const floor = usable ? game.floor : 0;
  const moveUrl = usable ? `/v1/games/${game.id}/moves` : '';
  const auth = (side) => ({ authorization: `Bearer ${tokenOf(game, side)}` });
  let res;
  switch (kind) {
    case 'garbage_line':
      res = await send('bad_garbage_json', replica, 'POST', '/v1/position/moves', jsonInit(rng.pick(GARBAGE)), [400]);
      break;
    case 'garbage_create':
      res = await send('bad_garbage_json', replica, 'POST', '/v1/games', jsonInit(rng.pick(GARBAGE)), [400]);
      break;
    case 'wrong_media':
      res = await send('bad_media_type', replica, 'POST', '/v1/position/moves', { headers: { 'content-type': 'text/plain' }, body: '{"moves":["e4"]}' }, [415]);
      break;
    case 'bad_fen':
      res = await send('bad_fen', replica, 'GET', `/v1/position?fen=${encodeURIComponent(rng.pick(BAD_FENS))}`, {}, [400]);
      break;
    case 'deep_perft':
      res = await send('bad_perft_depth', replica, 'GET', '/v1/perft?depth=9', {}, [400]);
      break;
    case 'unknown_game':
      res = await send('bad_unknown_game', replica, 'GET', `/v1/games/${randomId(rng)}`, {}, [404]);
      break;
    case 'unknown_field':
      res = await send('bad_unknown_field', replica, 'POST', '/v1/position/moves', jsonInit({ moves: ['e4'], mvoes: [] }), [400]);
      break;
    case 'garbage_move':
      res = await send('bad_garbage_json', replica, 'POST', moveUrl, jsonInit(rng.pick(GARBAGE), auth(sideToMove(game))), [400]);
      break;
    case 'illegal_move':
      res = await send('bad_illegal_move', replica, 'POST', moveUrl,
        jsonInit({ move: illegalMove(game, rng), expected_version: game.version }, auth(sideToMove(game))), [422]);
      break;
    case 'wrong_token':
      res = await send('bad_wrong_token', replica, 'POST', moveUrl,
        jsonInit({ move: rng.pick(game.state.position.legal_moves).uci, expected_version: game.version },
          { authorization: `Bearer ${randomId(rng)}${randomId(rng)}` }), [403]);
      break;
    case 'opponent_token':
      res = await send('bad_not_your_turn', replica, 'POST', moveUrl,
        jsonInit({ move: rng.pick(game.state.position.legal_moves).uci, expected_version: game.version }, auth(other(sideToMove(game)))), [403]);
      break;
    case 'no_token':
      res = await send('bad_no_token', replica, 'POST', moveUrl,
        jsonInit({ move: rng.pick(game.state.position.legal_moves).uci, expected_version: game.version }), [401]);
      break;
    case 'stale_version': {
      const stale = game.version > 1 ? 1 + rng.int(game.version - 1) : game.version + 1 + rng.int(5);
      res = await send('bad_stale_version', replica, 'POST', moveUrl,
        jsonInit({ move: rng.pick(game.state.position.legal_moves).uci, expected_version: stale }, auth(sideToMove(game))), [409]);
      if (res.status === 409) {
        observe(game, res.json?.current_version, floor, 'stale 409', res.rid);
        if (res.json?.current_version !== game.version)
          inconsistent('stale 409 current_version', { game: game.id, want: game.version, got: res.json?.current_version, rid: res.rid });
      }
      break;
    }
    case 'if_match':
      res = await send('bad_if_match', replica, 'POST', moveUrl,
        jsonInit({ move: rng.pick(game.state.position.legal_moves).uci },
          { ...auth(sideToMove(game)), 'if-match': `"${game.version + 1 + rng.int(3)}"` }), [412]);
      break;
    case 'key_reuse': {
      // The key of this game's last acknowledged move, sent again by the player who made it with another
      // body: 422, never a replay or a write.
      if (!game.lastKey) return;
      res = await send('bad_key_reuse', replica, 'POST', moveUrl,
        jsonInit({ move: rng.pick(game.state.position.legal_moves).uci, expected_version: game.version + 100 },
          { ...auth(game.lastKeySide), 'idempotency-key': game.lastKey }), [422]);
      break;
    }
    default:
      throw new Error(kind);
  }
  // A refused change must leave the game as it was: read it back now and then.
  if (usable && res && !res.unresolved && rng.chance(0.25)) {
    await readBack(game, rng, 'game_get_after_bad');
    if (game.version !== versionBefore) inconsistent('bad request changed the version', { game: game.id, kind });
  }
}

// ---------------------------------------------------------------- loops

async function loop(n) {
  const rng = prng(SEED * 7919 + ID * 104729 + n * 31);
  let game = null;
  while (Date.now() < END_AT) {
    const p = rng.next();
    if (p < 0.3) {
      await stateless(rng);
    } else if (p < 0.82) {
      if (!game || game.done) game = await createGame(rng, n);
      if (game && !game.done) {
        if (game.acked.length >= game.maxPlies) await resign(game, rng);
        else if (rng.chance(PAIR_CHANCE)) await racedMoves(game, rng);
        else await singleMove(game, rng);
        if (!game.abandoned && rng.chance(0.15)) await readBack(game, rng);
      }
    } else {
      await badRequest(rng, game);
    }
    if (THINK_MS > 0) await sleep(rng.int(2 * THINK_MS + 1));
  }
}

// ---------------------------------------------------------------- the read-back

const verify = {
  games: 0, ackedMoves: 0, storedMoves: 0, lostMoves: 0, lostGames: 0, extraExplained: 0, extraUnexplained: 0,
  versionMismatch: 0, unreadable: 0, pendingMoves: 0, pendingApplied: 0, pendingResigns: 0,
};

async function verifyGame(game, rng) {
  verify.games++;
  verify.ackedMoves += game.acked.length;
  verify.pendingMoves += game.pending.filter((p) => p.type === 'move').length;
  verify.pendingResigns += game.pending.filter((p) => p.type === 'resign').length;
  const floor = game.floor;
  const res = await send('verify_get', rng.int(REPLICAS.length), 'GET', `/v1/games/${game.id}`, {}, [200]);
  if (res.unresolved || res.status !== 200 || !res.json) {
    if (res.status === 404) {
      verify.lostGames++;
      verify.lostMoves += game.acked.length;
      sample('verify', { game: game.id, problem: 'game lost', acked: game.acked.length, rid: res.rid });
    } else {
      verify.unreadable++;
      sample('verify', { game: game.id, problem: 'unreadable', status: res.status ?? res.error, rid: res.rid });
    }
    return;
  }
  const g = res.json;
  observe(game, g.version, floor, 'verify', res.rid);
  const stored = g.moves.map((m) => m.uci);
  verify.storedMoves += stored.length;
  let lost = 0;
  for (let i = 0; i < game.acked.length; i++) if (stored[i] !== game.acked[i]) lost++;
  verify.lostMoves += lost;
  if (lost) sample('verify', { game: game.id, problem: 'acknowledged moves lost', lost, acked: game.acked, stored, rid: res.rid });
  // Stored moves past the acknowledged ones: each must be a pending (answer-lost) move at that index.
  let extraVersions = 0;
  for (let i = game.acked.length; i < stored.length; i++) {
    if (game.pending.some((p) => p.type === 'move' && p.index === i && p.uci === stored[i]) && i === game.acked.length) {
      verify.extraExplained++;
      verify.pendingApplied++;
      extraVersions++;
    } else {
      verify.extraUnexplained++;
      sample('verify', { game: game.id, problem: 'unexplained stored move', index: i, uci: stored[i], pending: game.pending, rid: res.rid });
    }
  }
  const resignPending = game.pending.some((p) => p.type === 'resign');
  if (resignPending && g.status === 'resigned' && game.state.status === 'active') extraVersions++;
  if (g.version !== game.version + extraVersions && lost === 0) {
    verify.versionMismatch++;
    sample('verify', { game: game.id, problem: 'version', stored: g.version, acked: game.version, explained: extraVersions, pending: game.pending, rid: res.rid });
  }
}

async function main() {
  await Promise.all(Array.from({ length: LOOPS }, (_, n) => loop(n)));
  const trafficDone = Date.now();
  const rng = prng(SEED + ID);
  // Read back every game, a few at a time.
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < games.length) await verifyGame(games[next++], rng);
  }));
  await new Promise((r) => log.end(r));
  const result = {
    id: ID, loops: LOOPS, trafficDone, verifyDone: Date.now(), counts, verify, unknownCreates,
    gameIds: games.map((g) => g.id), samples,
  };
  writeFileSync(path.join(OUT, `result-${ID}.json`), JSON.stringify(result));
}

main().catch((err) => {
  console.error(`soak client ${ID}:`, err);
  process.exit(1);
});
