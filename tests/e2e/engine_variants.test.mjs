// The computer in the variants, with the real Fairy-Stockfish (Debian's
// 11.1) behind a wrapper that keeps every line chessd sends it: /readyz
// lists what it plays; analysis from each start gives a legal line; atomic,
// which 11.1 lacks, is refused 422; a finished three-check position (which
// kills 11.1) never reaches it; an engine killed mid-think is restarted and
// the search retried; and a game against the computer in each variant it
// plays, random moves against it, to the variant's end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { startServer, gameRedis, tempDir } from './server.mjs';
import { get, post, sleep } from './http.mjs';
import { prng } from './prng.mjs';

const FAIRY = process.env.CHESSD_FAIRY_STOCKFISH ?? '/usr/games/fairy-stockfish';
const PLAYED = ['crazyhouse', 'antichess', 'kingOfTheHill', 'threeCheck', 'horde', 'racingKings', 'seirawan'];
const MAX_PLIES = 400;
// Horde from the whole horde takes the computer a hundred plies and more: a
// smaller horde (eight pawns) ends the same way sooner.
const STARTS = { horde: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/8 w kq - 0 1' };
const WAIT_MS = 20000; // the most one computer move may take on a loaded machine
const TOKEN_SECRET = 'e2e-engine-variants-token-secret-0123456789';

let server, redis, log;
before(async () => {
  assert.ok(existsSync(FAIRY), `${FAIRY} is missing: install the Debian package fairy-stockfish (make deps)`);
  const dir = tempDir('engine-variants');
  log = path.join(dir, 'sent.log');
  const wrapper = path.join(dir, 'fairy.sh');
  writeFileSync(wrapper, `#!/bin/sh\n# keeps what chessd sends the engine\nexec tee -a '${log}' | exec '${FAIRY}'\n`);
  chmodSync(wrapper, 0o755);
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url, '--engine', '/usr/games/stockfish', '--variant-engine', wrapper,
    '--engine-workers', '1'],
    { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } });
  for (let i = 0; i < 100; i++) {
    const ready = (await get(server, '/readyz')).body;
    if (ready.engine.variant_engine?.state === 'up' && ready.engine.variants.length > 2) break;
    await sleep(100);
  }
});
after(async () => { await server?.stop(); await redis?.stop(); });

test('/readyz lists every variant the engine plays, and not atomic', async () => {
  const { body } = await get(server, '/readyz');
  for (const v of PLAYED) assert.ok(body.engine.variants.includes(v), `${v} missing from ${body.engine.variants}`);
  assert.ok(!body.engine.variants.includes('atomic'));
  assert.match(body.engine.variant_engine.name, /Fairy-Stockfish/);
});

test('analysis from each start gives a line of legal moves', async () => {
  for (const variant of PLAYED) {
    const res = await post(server, '/v1/position/analysis', { variant, depth: 6 });
    assert.equal(res.status, 200, `${variant}: ${res.text}`);
    assert.ok(res.body.lines.length >= 1, `${variant}: no line`);
    const legal = (await post(server, '/v1/position', { variant })).body.legal_moves.map((m) => m.uci);
    assert.ok(legal.includes(res.body.lines[0].pv[0]), `${variant}: ${res.body.lines[0].pv[0]} is not legal`);
  }
});

test('atomic is refused: the installed engine does not play it', async () => {
  const res = await post(server, '/v1/position/analysis', { variant: 'atomic', depth: 4 });
  assert.equal(res.status, 422);
  assert.equal(res.body.code, 'variant_not_supported_by_engine');
  const game = await post(server, '/v1/games', { variant: 'atomic', engine: { level: 1 } });
  assert.equal(game.status, 422);
  assert.equal(game.body.code, 'variant_not_supported_by_engine');
});

test('a finished three-check position never reaches the engine', async () => {
  const fen = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1 +2+0';
  const res = await post(server, '/v1/position/analysis', { variant: 'threeCheck', fen, moves: ['Qd7+'], depth: 4 });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.position.status, 'three_checks');
  assert.deepEqual(res.body.lines, []);
  const sent = readFileSync(log, 'utf8');
  assert.ok(!sent.includes('3Q4/4k3') && !sent.includes('0+3') && !sent.includes('+0+3'), 'the finished position was sent');
  // The position before it is searched, its counters in the X-FEN form 11.1 reads.
  const before = await post(server, '/v1/position/analysis', { variant: 'threeCheck', fen, depth: 4 });
  assert.equal(before.status, 200, before.text);
  assert.ok(readFileSync(log, 'utf8').includes('4k3/8/8/8/8/8/8/3QK3 w - - 1+3 0 1'));
});

test('an engine killed mid-think is restarted and the search done', async () => {
  const search = post(server, '/v1/position/analysis', { variant: 'crazyhouse', movetime_ms: 1500 });
  await sleep(400);
  execFileSync('pkill', ['-KILL', '-f', `^${FAIRY}`]);
  const res = await search;
  assert.equal(res.status, 200, res.text);
  assert.ok(res.body.lines.length >= 1);
});

/** Random moves for one side against the computer at level 4, to the end. */
async function playToTheEnd(variant, seed) {
  const random = prng(seed);
  const created = await post(server, '/v1/games', { variant, fen: STARTS[variant], engine: { level: 4, color: 'black' } });
  assert.equal(created.status, 201, `${variant}: ${created.text}`);
  const { id } = created.body;
  const token = created.body.tokens.white;
  let game = created.body;
  for (let ply = 0; game.status === 'active' && ply < MAX_PLIES; ply++) {
    if (game.position.turn === 'white') {
      const moves = game.position.legal_moves.map((m) => m.uci);
      const res = await post(server, `/v1/games/${id}/moves`, { move: random.pick(moves), expected_version: game.version },
        { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200, `${variant}: ${res.text}`);
      game = res.body;
      continue;
    }
    const deadline = Date.now() + WAIT_MS;
    do {
      await sleep(50);
      game = (await get(server, `/v1/games/${id}`)).body;
    } while (game.status === 'active' && game.position.turn === 'black' && Date.now() < deadline);
    assert.ok(game.status !== 'active' || game.position.turn === 'white', `${variant}: the computer did not move`);
  }
  return (await get(server, `/v1/games/${id}`)).body;
}

for (const [i, variant] of PLAYED.entries()) {
  test(`a game against the computer in ${variant} is played to its end`, async (t) => {
    const game = await playToTheEnd(variant, 1000 + i);
    t.diagnostic(`${variant}: ${game.moves.length} plies, ${game.status} ${game.termination} ${game.result}`);
    assert.notEqual(game.status, 'active', `${variant}: not over after ${MAX_PLIES} plies`);
    assert.notEqual(game.result, '*');
  });
}
