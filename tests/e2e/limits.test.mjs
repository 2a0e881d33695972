// Limits a client cannot get around: per-address, per-token and creation
// rate limits (429 naming the limit, its rate and the wait, with
// Retry-After; never on probes), the most plies a game keeps, and the
// request header size.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { call, get, post, expectProblem, rawExchange } from './http.mjs';

let limited;
let short;
let creations;

before(async () => {
  [limited, short, creations] = await Promise.all([
    startServer(['--rate-limit-ip', '5', '--rate-limit-burst', '5']),
    startServer(['--max-game-plies', '4', '--rate-limit-token', '3', '--rate-limit-burst', '3']),
    startServer(['--rate-limit-create', '1']),
  ]);
});

after(async () => {
  await Promise.all([limited.stop(), short.stop(), creations.stop()]);
});

/** Asserts r is a 429 rate_limited that names its limit (detail: its words
 * before "; retry after N s"), its rate and the wait, the same seconds as
 * Retry-After. */
function expectRateLimited(r, limit, max, words) {
  const p = expectProblem(r, 429, 'rate_limited');
  const seconds = Number(r.headers.get('retry-after'));
  assert.ok(Number.isInteger(seconds) && seconds >= 1, `Retry-After ${r.headers.get('retry-after')}`);
  assert.equal(p.retry_after_s, seconds);
  assert.equal(p.limit, limit);
  assert.equal(p.max, max);
  assert.equal(p.detail, `${words}; retry after ${seconds} s`);
}

test('per-address rate limit: the burst passes, then 429 rate_limited with Retry-After; probes are never limited', async () => {
  const answers = [];
  for (let i = 0; i < 12; i++) answers.push(await get(limited, '/v1/position?legal_moves=false'));
  const ok = answers.filter((r) => r.status === 200).length;
  const refused = answers.filter((r) => r.status === 429);
  assert.ok(ok >= 5 && ok <= 7, `${ok} of 12 passed a burst of 5 at 5/s`);
  assert.ok(refused.length >= 5, `${refused.length} refused`);
  for (const r of refused)
    expectRateLimited(r, 'rate-limit-ip', 5, 'requests from one client address are limited to 5 a second (--rate-limit-ip)');
  for (let i = 0; i < 20; i++) {
    assert.equal((await get(limited, '/healthz')).status, 200);
    assert.notEqual((await get(limited, '/metrics')).status, 429);
  }
  // The bucket refills at the rate: after a second there is room again.
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await get(limited, '/v1/position?legal_moves=false')).status, 200);
});

test('per-token rate limit counts each player token apart', async () => {
  const created = await post(short, '/v1/games', {});
  assert.equal(created.status, 201);
  const { id, tokens } = created.body;
  const read = (token) => call(short, 'POST', `/v1/games/${id}/draw`, {
    json: { action: 'decline', expected_version: 1 }, headers: { authorization: `Bearer ${token}` },
  });
  const white = [];
  for (let i = 0; i < 6; i++) white.push(await read(tokens.white));
  const refused = white.filter((r) => r.status === 429);
  assert.equal(refused.length >= 2, true, `white: ${white.map((r) => r.status)}`);
  for (const r of refused)
    expectRateLimited(r, 'rate-limit-token', 3, 'requests with one player token are limited to 3 a second (--rate-limit-token)');
  // Black's budget is untouched by white's requests.
  expectProblem(await read(tokens.black), 409, 'no_draw_offer');
});

test('game creations past --rate-limit-create: 429 naming the limit, its burst and the wait; other routes pass', async () => {
  const answers = [];
  for (let i = 0; i < 8; i++) answers.push(await post(creations, '/v1/games', {}));
  const made = answers.filter((r) => r.status === 201).length;
  assert.ok(made >= 5 && made <= 6, `${made} of 8 created under a burst of 5 at 1 a second`);
  const refused = answers.filter((r) => r.status === 429);
  assert.ok(refused.length >= 2);
  for (const r of refused) {
    expectRateLimited(r, 'rate-limit-create', 1,
      'game creations from one client address are limited to 1 a second (--rate-limit-create, in bursts of 5)');
  }
  assert.equal((await get(creations, '/v1/position?legal_moves=false')).status, 200);
});

test('a game keeps at most --max-game-plies moves: the next one is 422 game_too_long and changes nothing', async () => {
  await new Promise((r) => setTimeout(r, 1100)); // a fresh token budget
  const created = await post(short, '/v1/games', {});
  const { id, tokens } = created.body;
  const moves = [['white', 'Nf3'], ['black', 'Nf6'], ['white', 'Ng1'], ['black', 'Ng8']];
  let version = 1;
  for (const [color, move] of moves) {
    const res = await call(short, 'POST', `/v1/games/${id}/moves`, {
      json: { move, expected_version: version }, headers: { authorization: `Bearer ${tokens[color]}` },
    });
    assert.equal(res.status, 200, res.text);
    version = res.body.version;
    await new Promise((r) => setTimeout(r, 350)); // stay inside 3 requests a second per token
  }
  const fifth = await call(short, 'POST', `/v1/games/${id}/moves`, {
    json: { move: 'e4', expected_version: version }, headers: { authorization: `Bearer ${tokens.white}` },
  });
  expectProblem(fifth, 422, 'game_too_long');
  const game = await get(short, `/v1/games/${id}`);
  assert.equal(game.body.version, version);
  assert.equal(game.body.moves.length, 4);
});

test('request headers are bounded: a 20 KiB header is refused with a 4xx and the server keeps serving', async () => {
  const big = 'x'.repeat(20 * 1024);
  const { raw } = await rawExchange(short, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\nConnection: close\r\n\r\n`],
    { timeoutMs: 2000, silenceOk: true });
  assert.match(raw, /^HTTP\/1\.1 4\d\d /, JSON.stringify(raw.slice(0, 80)));
  assert.equal((await get(short, '/healthz')).status, 200);
});
