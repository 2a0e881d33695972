// The computer in the variants end to end: the real Fairy-Stockfish (Debian's
// 11.1, /usr/games/fairy-stockfish or CHESSD_VARIANT_ENGINE), a real Redis,
// real HTTP, and no chess engine (--engine none: the variant engine alone
// plays the computer's turns). /readyz lists the variants it plays; analysis
// in each answers legal moves; atomic, which 11.1 lacks, is refused 422 with
// nothing sent to the engine; a whole game against the computer in each
// variant, every move of the computer legal by chessd's rules and the end
// chessd's. The engine is a wrapper that copies what it is sent into a log (a
// real engine still): what it was sent is counted, so a finished three-check
// position (which kills 11.1 with SIGFPE) is seen never to reach it, and
// UCI_Variant is seen set before each position of another variant only. The
// engine killed mid-think: the analysis and the computer's turn are retried
// on the restarted engine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gameRedis, startServer, tempDir } from './server.mjs';
import { expectProblem, get, post, sleep } from './http.mjs';
import { childrenOf } from './analysis_lib.mjs';
import { prng } from './prng.mjs';

const FAIRY = process.env.CHESSD_VARIANT_ENGINE ?? '/usr/games/fairy-stockfish';
const ENV = { CHESSD_TOKEN_SECRET: 'e2e-engine-variants-token-secret-0123456789' };
const WAIT_MS = 15000;
const MAX_PLIES = 600; // a game against level 1 ends long before (about 20 to 150 plies)
// Three-check, White's three checks given and White to move: 11.1 dies of it (SIGFPE).
const THREE_CHECKS_GIVEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0+3 0 1';
// White to give the third check (Qh5+ down the open diagonal).
const THIRD_CHECK_TO_GIVE = 'rnbqkbnr/ppppp1pp/8/5p2/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 1+3 0 2';
const dir = tempDir('chessd-e2e-engine-variants-');
const log = path.join(dir, 'engine.log');
let server;

before(async () => {
  assert.ok(existsSync(FAIRY), `${FAIRY} is missing: install the Debian package fairy-stockfish (make deps) or set CHESSD_VARIANT_ENGINE`);
  const wrapper = path.join(dir, 'logging-fairy-stockfish');
  writeFileSync(wrapper, `#!/bin/sh\n# every byte chessd sends, into the log, then to Fairy-Stockfish\ntee -a '${log}' | '${FAIRY}'\n`);
  chmodSync(wrapper, 0o755);
  writeFileSync(log, '');
  server = await startServer(['--engine', 'none', '--variant-engine', wrapper, '--engine-max-think-ms', '2000'], { env: ENV });
});
after(async () => { await server?.stop(); });

/** The lines the engine has been sent so far. */
const sent = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
const count = (lines, prefix) => lines.filter((l) => l.startsWith(prefix)).length;
const auth = (token) => ({ authorization: `Bearer ${token}` });

/** Waits until the variant engine of s is searching (its one worker busy). */
async function searching(s) {
  const deadline = Date.now() + WAIT_MS;
  while ((await playedOn(s)).variant_engine.busy !== 1) {
    assert.ok(Date.now() < deadline, 'the variant engine never got busy');
    await sleep(10);
  }
}

/** The variants the computer plays on server, from /readyz, and its variant engine. */
async function playedOn(s) {
  const res = await get(s, '/readyz');
  assert.equal(res.status, 200, res.text);
  return res.body.engine;
}

/** The legal moves (UCI), status and result of the position reached in variant from fen (null: its start) by moves. */
async function rulesOf(s, variant, moves = [], fen = null) {
  const res = await post(s, '/v1/position/moves', { variant, moves, ...(fen ? { fen } : {}) });
  assert.equal(res.status, 200, `${variant} ${JSON.stringify(moves)}: ${res.text}`);
  const { legal_moves: legal, status, result } = res.body.position;
  return { uci: legal.map((m) => m.uci), status, result };
}

test('/readyz lists the variants the computer plays: what Fairy-Stockfish lists, never atomic on 11.1', async () => {
  const engine = await playedOn(server);
  assert.equal(engine.state, 'off', 'no chess engine here');
  assert.equal(engine.variant_engine.state, 'up');
  assert.match(engine.variant_engine.name, /^Fairy-Stockfish /);
  for (const v of ['crazyhouse', 'antichess', 'kingOfTheHill', 'threeCheck', 'horde', 'racingKings', 'seirawan'])
    assert.ok(engine.variants.includes(v), `${v} in ${engine.variants}`);
  assert.ok(!engine.variants.includes('standard') && !engine.variants.includes('chess960'), 'chess needs --engine');
  if (/^Fairy-Stockfish 11\.1\b/.test(engine.variant_engine.name)) assert.ok(!engine.variants.includes('atomic'));
});

test('analysis in every variant the engine plays: a legal best move and lines, read by chessd\'s rules', async () => {
  const { variants } = await playedOn(server);
  for (const variant of variants) {
    const { uci: first } = await rulesOf(server, variant);
    const moves = [first[0]];
    const res = await post(server, '/v1/position/analysis', { variant, moves, nodes: 20000, multipv: 2 });
    assert.equal(res.status, 200, `${variant}: ${res.text}`);
    assert.equal(res.body.position.variant, variant);
    assert.match(res.body.engine.name, /^Fairy-Stockfish /);
    const legal = (await rulesOf(server, variant, moves)).uci;
    assert.ok(legal.includes(res.body.bestmove), `${variant}: bestmove ${res.body.bestmove} is not legal`);
    assert.equal(res.body.lines.length, 2, `${variant}: ${res.text}`);
    for (const line of res.body.lines) {
      assert.ok(legal.includes(line.pv[0]), `${variant}: line ${line.multipv} starts with ${line.pv[0]}`);
      assert.equal(line.pv.length, line.pv_san.length);
    }
  }
  // a drop mates: read as a drop, and as mate in 1
  const drop = await post(server, '/v1/position/analysis', { variant: 'crazyhouse', fen: '7k/5ppp/8/8/8/8/5PPP/6K1[R] w - - 0 1', depth: 5 });
  assert.equal(drop.status, 200, drop.text);
  assert.match(drop.body.bestmove, /^R@[a-h]8$/);
  assert.equal(drop.body.lines[0].mate, 1);
  assert.match(drop.body.bestmove_san, /^R@[a-h]8#$/);
});

test('UCI_Variant is sent before each position of another variant, and only then', async () => {
  const analyse = async (variant) => {
    const res = await post(server, '/v1/position/analysis', { variant, depth: 2 });
    assert.equal(res.status, 200, `${variant}: ${res.text}`);
  };
  await analyse('threeCheck');
  const mark = sent().length;
  for (const variant of ['crazyhouse', 'crazyhouse', 'horde', 'horde', 'crazyhouse']) await analyse(variant);
  const lines = sent().slice(mark);
  const set = lines.filter((l) => l.startsWith('setoption name UCI_Variant value ')).map((l) => l.split(' ').pop());
  assert.deepEqual(set, ['crazyhouse', 'horde', 'crazyhouse']);
  // each position in the form 11.1 reads, after the setoption of its variant
  let current = null;
  for (const line of lines) {
    if (line.startsWith('setoption name UCI_Variant value ')) current = line.split(' ').pop();
    if (!line.startsWith('position fen ')) continue;
    if (current === 'crazyhouse') assert.match(line, /^position fen \S+\[\] w KQkq - 0 1$/);
    else assert.equal(current, 'horde', line);
  }
  assert.equal(count(lines, 'position fen '), 5);
  assert.equal(count(lines, 'go '), 5);
});

test('a finished three-check position never reaches the engine (11.1 dies of it): analysis, a game, its hints', async () => {
  const before = sent();
  const engineBefore = (await playedOn(server)).variant_engine;
  // the X-FEN form, and Lichess's checks given
  for (const fen of [THREE_CHECKS_GIVEN, 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 +3+0']) {
    const res = await post(server, '/v1/position/analysis', { variant: 'threeCheck', fen, depth: 5 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.position.status, 'three_checks');
    assert.deepEqual(res.body.lines, []);
    assert.equal(res.body.bestmove, undefined);
  }
  // reached by a move of the list
  const byMove = await post(server, '/v1/position/analysis', { variant: 'threeCheck', fen: THIRD_CHECK_TO_GIVE, moves: ['Qh5+'], depth: 5 });
  assert.equal(byMove.status, 200, byMove.text);
  assert.equal(byMove.body.position.status, 'three_checks');
  assert.deepEqual(byMove.body.lines, []);
  // a game against the computer that the person's third check ends: no turn for the computer
  const created = await post(server, '/v1/games', { variant: 'threeCheck', fen: THIRD_CHECK_TO_GIVE, engine: { level: 1, color: 'black' } });
  assert.equal(created.status, 201, created.text);
  const game = created.body;
  const moved = await post(server, `/v1/games/${game.id}/moves`, { move: 'Qh5+', expected_version: game.version }, { headers: auth(game.tokens.white) });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.body.status, 'variant_end');
  assert.equal(moved.body.termination, 'three_checks');
  assert.equal(moved.body.result, '1-0');
  const hint = await get(server, `/v1/games/${game.id}/analysis?depth=5`);
  assert.equal(hint.status, 200, hint.text);
  assert.deepEqual(hint.body.lines, []);
  await sleep(300); // a turn wrongly queued would be played by now
  const after = sent().slice(before.length);
  assert.equal(count(after, 'position '), 0, `sent: ${JSON.stringify(after)}`);
  assert.equal(count(after, 'go '), 0, `sent: ${JSON.stringify(after)}`);
  const now = (await playedOn(server)).variant_engine;
  assert.deepEqual([now.state, now.restarts], ['up', engineBefore.restarts], 'the engine never died');
  // one check short of the end is searched, and the third check found
  const last = await post(server, '/v1/position/analysis', { variant: 'threeCheck', fen: THIRD_CHECK_TO_GIVE, depth: 4 });
  assert.equal(last.status, 200, last.text);
  assert.equal(last.body.bestmove, 'd1h5');
  assert.ok(sent().slice(before.length).some((l) => l === `position fen ${THIRD_CHECK_TO_GIVE}`), 'X-FEN checks remaining, as 11.1 reads them');
});

test('atomic, which 11.1 does not play: 422 variant_not_supported_by_engine, nothing sent', async (t) => {
  const { variants, variant_engine: ve } = await playedOn(server);
  if (variants.includes('atomic')) {
    t.skip(`${ve.name} plays atomic`);
    return;
  }
  const mark = sent().length;
  const p = expectProblem(await post(server, '/v1/position/analysis', { variant: 'atomic', depth: 5 }), 422, 'variant_not_supported_by_engine');
  assert.match(p.detail, /atomic/);
  expectProblem(await post(server, '/v1/games', { variant: 'atomic', engine: { level: 3, color: 'white' } }), 422, 'variant_not_supported_by_engine');
  expectProblem(await post(server, '/v1/games', { variant: 'atomic', analysis: true }), 422, 'variant_not_supported_by_engine');
  // two people may play it, without hints
  const game = await post(server, '/v1/games', { variant: 'atomic' });
  assert.equal(game.status, 201, game.text);
  expectProblem(await get(server, `/v1/games/${game.body.id}/analysis`), 403, 'analysis_not_allowed');
  // a finished atomic position needs no engine
  const over = await post(server, '/v1/position/analysis', { variant: 'atomic', fen: '4k3/3p4/8/8/8/8/8/3RK3 w - - 0 1', moves: ['Rxd7'], depth: 5 });
  assert.equal(over.status, 200, over.text);
  assert.equal(over.body.position.status, 'king_exploded');
  assert.deepEqual(over.body.lines, []);
  assert.deepEqual(sent().slice(mark), [], 'nothing reached the engine');
});

/**
 * A whole game against the computer at level 1 in variant, the person
 * (the other colour) playing random legal moves (seeded) from the game's own
 * legal_moves: every move of the computer is one of the legal moves chessd
 * gave before it; the end is chessd's (the rules API replays the moves to the
 * same status). Resolves to "status termination result plies".
 */
async function wholeGame(variant, engineColor, seed) {
  const person = engineColor === 'white' ? 'black' : 'white';
  const created = await post(server, '/v1/games', { variant, engine: { level: 1, color: engineColor } });
  assert.equal(created.status, 201, `${variant}: ${created.text}`);
  const { id, tokens } = created.body;
  assert.deepEqual(Object.keys(tokens), [person]);
  const rnd = prng(seed);
  let g = created.body;
  let legalBefore = g.position.turn === engineColor ? g.position.legal_moves.map((m) => m.uci) : null;
  let plies = 0;
  while (g.status === 'active' && plies < MAX_PLIES) {
    if (g.position.turn === person) {
      const legal = g.position.legal_moves.map((m) => m.uci);
      const res = await post(server, `/v1/games/${id}/moves`, { move: rnd.pick(legal), expected_version: g.version }, { headers: auth(tokens[person]) });
      assert.equal(res.status, 200, `${variant}: ${res.text}`);
      g = res.body;
      legalBefore = g.position.legal_moves?.map((m) => m.uci) ?? null;
      plies++;
      continue;
    }
    const version = g.version;
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const res = await get(server, `/v1/games/${id}`);
      assert.equal(res.status, 200, res.text);
      if (res.body.version > version) {
        g = res.body;
        break;
      }
      assert.ok(Date.now() < deadline, `${variant}: the computer did not move within ${WAIT_MS} ms (seed ${seed})`);
      await sleep(10);
    }
    const played = g.moves[g.moves.length - 1].uci;
    assert.ok(legalBefore?.includes(played), `${variant}: the computer's ${played} was not legal (seed ${seed})`);
    plies++;
  }
  const final = (await get(server, `/v1/games/${id}`)).body;
  assert.notEqual(final.status, 'active', `${variant}: not over after ${MAX_PLIES} plies (seed ${seed})`);
  const replayed = await rulesOf(server, variant, final.moves.map((m) => m.uci));
  assert.notEqual(replayed.status, 'active', `${variant}: the rules end the game there (seed ${seed})`);
  assert.equal(replayed.result, final.result, `${variant}: the game's result is the rules' (seed ${seed})`);
  return `${final.status} ${final.termination} ${final.result} ${final.moves.length}`;
}

test('a whole game against the computer in every variant it plays, from both sides, to the end the rules give', async (t) => {
  const { variants } = await playedOn(server);
  const ends = [];
  let seed = 35;
  for (const variant of variants)
    for (const color of ['white', 'black']) ends.push(`${variant} (computer ${color}): ${await wholeGame(variant, color, seed++)}`);
  t.diagnostic(ends.join('; '));
  assert.equal(ends.length, 2 * variants.length);
  for (const end of ends) assert.doesNotMatch(end, /resign|aborted/, end);
});

test('the variant engine killed mid-think: the analysis and the computer\'s turn are retried on the restarted engine', async () => {
  // the engine itself, no wrapper: the server's one child is Fairy-Stockfish; a Redis of
  // its own, so that no other server here takes its computer's turn
  const redis = await gameRedis();
  const s = await startServer(['--redis', redis.url, '--engine', 'none', '--variant-engine', FAIRY,
    '--engine-max-think-ms', '2500'], { env: ENV });
  try {
    const [first] = childrenOf(s.proc.pid);
    assert.ok(first > 0, 'the variant engine is a child of the server');
    const answer = post(s, '/v1/position/analysis', { variant: 'crazyhouse', moves: ['e4', 'd5', 'exd5'], depth: 60 });
    await searching(s);
    await sleep(200);
    process.kill(first, 'SIGKILL');
    const res = await answer;
    assert.equal(res.status, 200, res.text);
    assert.ok((await rulesOf(s, 'crazyhouse', ['e4', 'd5', 'exd5'])).uci.includes(res.body.bestmove), res.body.bestmove);
    assert.equal(res.body.stopped, true, 'the retry searched to its own deadline');
    let ready = (await playedOn(s)).variant_engine;
    assert.deepEqual([ready.state, ready.restarts], ['up', 1]);
    const [second] = childrenOf(s.proc.pid);
    assert.ok(second > 0 && second !== first, `a new engine process (${second}, was ${first})`);
    // the computer's turn at level 8 (a second's think), its engine killed while it thinks
    const created = await post(s, '/v1/games', { variant: 'kingOfTheHill', engine: { level: 8, color: 'black' } });
    assert.equal(created.status, 201, created.text);
    const { id, tokens, version } = created.body;
    const moved = await post(s, `/v1/games/${id}/moves`, { move: 'e2e4', expected_version: version }, { headers: auth(tokens.white) });
    assert.equal(moved.status, 200, moved.text);
    const legal = moved.body.position.legal_moves.map((m) => m.uci);
    await searching(s);
    process.kill(second, 'SIGKILL');
    const deadline = Date.now() + WAIT_MS;
    let g;
    do {
      await sleep(20);
      g = (await get(s, `/v1/games/${id}`)).body;
      assert.ok(Date.now() < deadline, 'the computer moved after its engine was restarted');
    } while (g.version === moved.body.version);
    assert.ok(legal.includes(g.moves[1].uci), `the computer's ${g.moves[1].uci} is legal`);
    ready = (await playedOn(s)).variant_engine;
    assert.deepEqual([ready.state, ready.restarts], ['up', 2]);
  } finally {
    await s.stop();
    await redis.stop();
  }
});
