// Presence and abandonment across replicas: two chessd replicas on one
// Redis (or the shared Cluster), White's stream on replica A, Black's on
// replica B through a small TCP proxy that the test cuts. White's stream
// hears `opponent_gone` with the time to wait; a claim too early is refused,
// one after the wait ends the game (termination abandonment). Black coming
// back first cancels it (`gone: false`); under the rule no_claim_win a win
// may not be claimed, a draw may. Timings are waited for with deadlines of
// 10 s and more: what is asserted is the order of things, not durations.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, gameRedis } from './server.mjs';
import { post, get, expectProblem, sleep } from './http.mjs';
import { openEvents } from './events.mjs';

const TOKEN_SECRET = 'e2e-presence-token-secret-0123456789abc';
const ENV = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };
// --gone-after 4: a stream's player is marked every 500 ms and gone after
// 1.5 s without a mark; a game without a clock waits three times 4 s.
const GONE_AFTER = ['--gone-after', '4'];
const WAIT_MS = 12000;
const DEADLINE_MS = 20000;

let redis;
let replicaA;
let replicaB;

before(async () => {
  redis = await gameRedis();
  [replicaA, replicaB] = await Promise.all([0, 1].map(() => startServer(['--redis', redis.url, ...GONE_AFTER], ENV)));
});

after(async () => {
  await replicaA?.stop();
  await replicaB?.stop();
  await redis?.stop();
});

const auth = (token) => ({ authorization: `Bearer ${token}` });

/** A TCP proxy to port whose connections cut() destroys (both sides, at once); resolves to { port, cut(), close() }. */
function cuttableProxy(port) {
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({
      port: server.address().port,
      cut() { for (const s of sockets) s.destroy(); },
      close() { this.cut(); server.close(); },
    }));
  });
}

/** A new game on replica A (body: creation fields); its id and both tokens. */
async function createGame(body = {}) {
  const res = await post(replicaA, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, white: res.body.tokens.white, black: res.body.tokens.black };
}

/** Plays moves in turn, White on replica A and Black on replica B; resolves to the version after. */
async function play(game, moves, version = 1) {
  for (const [i, move] of moves.entries()) {
    const white = i % 2 === 0;
    const res = await post(white ? replicaA : replicaB, `/v1/games/${game.id}/moves`,
      { move, expected_version: version }, { headers: auth(white ? game.white : game.black) });
    assert.equal(res.status, 200, res.text);
    version = res.body.version;
  }
  return version;
}

const claim = (game, kind, version) =>
  post(replicaA, `/v1/games/${game.id}/claim-${kind}`, { expected_version: version }, { headers: auth(game.white) });

/** The opponent_gone events of stream from index `from` on. */
const goneEvents = (stream, from = 0) => stream.events.slice(from).map((e) => e.data).filter((d) => d.type === 'opponent_gone');

/**
 * The game after 1. e4 e5 2. Nf3 (Black to move), created with body: White
 * follows it on replica A, Black on replica B through a proxy, both with
 * their tokens. Black is shown to be here by its stream alone: its move is
 * older than the time a sign lasts, and a claim is refused without a time
 * to wait. Resolves to { game, version, white (stream), black (stream), proxy }.
 */
async function blackToMoveWithStreams(t, body, { sse = false } = {}) {
  const game = await createGame(body);
  const proxy = await cuttableProxy(replicaB.port);
  t.after(() => proxy.close());
  const white = await openEvents(replicaA, game.id, { sse, headers: auth(game.white) });
  const black = await openEvents({ port: proxy.port }, game.id, { headers: auth(game.black) });
  t.after(() => { white.close(); black.close(); });
  assert.equal(white.status, 200);
  assert.equal(black.status, 200);
  const version = await play(game, ['e4', 'e5', 'Nf3']);
  await white.until((s) => s.events.some((e) => e.data.version === version), DEADLINE_MS, `the change to version ${version}`);
  await sleep(3000); // twice the time a sign lasts: Black's move no longer counts
  const early = await claim(game, 'draw', version); // a draw: the rules may forbid a win claimed
  expectProblem(early, 409, 'opponent_not_gone');
  assert.equal(early.body.claim_in_ms, undefined, 'Black is here (its stream, on the other replica): no time to wait for');
  return { game, version, white, black, proxy };
}

/** Cuts Black's stream; resolves to the first opponent_gone event White's stream gets after it. */
async function cutBlack({ proxy, white }) {
  const from = white.events.length;
  proxy.cut();
  await white.until((s) => goneEvents(s, from).some((d) => d.gone), DEADLINE_MS, 'opponent_gone after the cut');
  const gone = goneEvents(white, from).find((d) => d.gone);
  assert.ok(Number.isInteger(gone.claim_in_ms) && gone.claim_in_ms > 0 && gone.claim_in_ms <= WAIT_MS,
    `a claim is possible within the wait, not yet: ${JSON.stringify(gone)}`);
  return gone;
}

/** Claims (kind) until the wait has passed, within DEADLINE_MS; the answer that is not opponent_not_gone. */
async function claimOnceGone(game, kind, version) {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const res = await claim(game, kind, version);
    if (res.status !== 409 || res.body.code !== 'opponent_not_gone') return res;
    assert.ok(res.body.claim_in_ms > 0, `Black must still be gone: ${res.text}`);
    assert.ok(Date.now() < deadline, `no claim possible within ${DEADLINE_MS} ms: ${res.text}`);
    await sleep(Math.min(res.body.claim_in_ms + 200, 2000));
  }
}

describe('presence and abandonment across two replicas', { concurrency: true }, () => {
  test("Black's stream is cut: White hears it, a claim too early is refused, one after the wait wins", async (t) => {
    const setup = await blackToMoveWithStreams(t, {});
    const { game, version, white } = setup;
    const gone = await cutBlack(setup);
    const early = await claim(game, 'victory', version);
    expectProblem(early, 409, 'opponent_not_gone');
    assert.ok(early.body.claim_in_ms > 0 && early.body.claim_in_ms <= gone.claim_in_ms + 1000,
      `too early, with the time left: ${early.text}`);
    await sleep(Math.max(0, early.body.claim_in_ms - 500));
    const won = await claimOnceGone(game, 'victory', version);
    assert.equal(won.status, 200, won.text);
    assert.deepEqual([won.body.status, won.body.result, won.body.termination], ['timeout', '1-0', 'abandonment']);
    assert.equal(won.body.version, version + 1);
    await white.done;
    const ending = white.events.at(-1).data;
    assert.deepEqual([ending.type, ending.event, ending.version], ['change', 'claim_victory', version + 1]);
    // The other replica reads the same ending, and its PGN says why.
    const read = await get(replicaB, `/v1/games/${game.id}`);
    assert.deepEqual([read.body.status, read.body.result, read.body.termination], ['timeout', '1-0', 'abandonment']);
    const pgn = await fetch(`${replicaB.base}/v1/games/${game.id}/pgn`).then((r) => r.text());
    assert.match(pgn, /\[Termination "abandoned"\]/);
    expectProblem(await claim(game, 'draw', version + 1), 409, 'game_over');
  });

  test('Black comes back before the claim: White hears gone: false, and no claim is possible', async (t) => {
    const setup = await blackToMoveWithStreams(t, {}, { sse: true });
    const { game, version, white } = setup;
    await cutBlack(setup);
    const from = white.events.length;
    const back = await openEvents(replicaB, game.id, { headers: auth(game.black) }); // straight to replica B
    t.after(() => back.close());
    assert.equal(back.status, 200);
    await white.until((s) => goneEvents(s, from).some((d) => !d.gone), DEADLINE_MS, 'opponent_gone false');
    assert.deepEqual(goneEvents(white, from).find((d) => !d.gone), { type: 'opponent_gone', gone: false });
    const refused = await claim(game, 'victory', version);
    expectProblem(refused, 409, 'opponent_not_gone');
    assert.equal(refused.body.claim_in_ms, undefined);
    // The game goes on: Black moves, as it would.
    const moved = await post(replicaB, `/v1/games/${game.id}/moves`, { move: 'Nc6', expected_version: version },
      { headers: auth(game.black) });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.status, 'active');
  });

  test('under no_claim_win a win may not be claimed against a gone opponent, a draw may', async (t) => {
    const setup = await blackToMoveWithStreams(t, { rules: ['no_claim_win'] });
    const { game, version } = setup;
    await cutBlack(setup);
    expectProblem(await claim(game, 'victory', version), 409, 'claim_not_allowed');
    const drawn = await claimOnceGone(game, 'draw', version);
    assert.equal(drawn.status, 200, drawn.text);
    assert.deepEqual([drawn.body.status, drawn.body.result, drawn.body.termination], ['timeout', '1/2-1/2', 'abandonment']);
  });
});
