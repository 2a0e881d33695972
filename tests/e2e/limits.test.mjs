// Limits a client cannot get around: per-address and per-token rate limits
// (429 with Retry-After, never on probes), the most plies a game keeps, and
// the request header size.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { call, get, post, expectProblem, rawExchange } from './http.mjs';

let limited;
let short;

before(async () => {
  [limited, short] = await Promise.all([
    startServer(['--rate-limit-ip', '5', '--rate-limit-burst', '5']),
    startServer(['--max-game-plies', '4', '--rate-limit-token', '3', '--rate-limit-burst', '3']),
  ]);
});

after(async () => {
  await Promise.all([limited.stop(), short.stop()]);
});

test('per-address rate limit: the burst passes, then 429 rate_limited with Retry-After; probes are never limited', async () => {
  const answers = [];
  for (let i = 0; i < 12; i++) answers.push(await get(limited, '/v1/position?legal_moves=false'));
  const ok = answers.filter((r) => r.status === 200).length;
  const refused = answers.filter((r) => r.status === 429);
  assert.ok(ok >= 5 && ok <= 7, `${ok} of 12 passed a burst of 5 at 5/s`);
  assert.ok(refused.length >= 5, `${refused.length} refused`);
  for (const r of refused) {
    expectProblem(r, 429, 'rate_limited');
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
  }
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
  for (let i = 0; i < 6; i++) white.push((await read(tokens.white)).status);
  assert.equal(white.filter((s) => s === 429).length >= 2, true, `white: ${white}`);
  // Black's budget is untouched by white's requests.
  expectProblem(await read(tokens.black), 409, 'no_draw_offer');
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
