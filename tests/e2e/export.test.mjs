// POST /v1/games/export over real HTTP and a real Redis (one node, or the
// shared Cluster when run.sh runs the game suites again): NDJSON and PGN of
// a set of games, compared game by game with GET /v1/games/{id} and
// GET /v1/games/{id}/pgn; the order asked, an id named twice once; unknown
// ids skipped and counted in the trailers; the bounds; an export of many
// long games arrives whole while the client reads it slowly (the server
// makes it as it is taken). Every answer through call() is checked against
// openapi.yaml by http.mjs; the trailers are read with node:http.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parsePgn } from 'chessops/pgn';
import { startServer, gameRedis } from './server.mjs';
import { call, get, post, expectProblem } from './http.mjs';

let redis;
let server;
before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url]);
});
after(async () => {
  await server?.stop();
  await redis?.stop();
});

const exportCall = (ids, accept) => call(server, 'POST', '/v1/games/export', {
  json: { ids }, headers: accept ? { accept } : {},
});

/** The export with node:http: { status, headers, text, trailers }, read slowly when pauseMs is set. */
function exportRaw(ids, { accept, pauseMs = 0 } = {}) {
  const url = new URL('/v1/games/export', server.base);
  const body = JSON.stringify({ ids });
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', async (chunk) => {
        chunks.push(chunk);
        if (pauseMs) {
          res.pause();
          await sleep(pauseMs);
          res.resume();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), trailers: res.trailers, complete: res.complete }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A game with these moves (a PGN import), its id. */
async function gameWith(pgn, extra = {}) {
  const res = await post(server, '/v1/games', { pgn, ...extra });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

const PGNS = [
  '1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 *',
  '[White "Ann"]\n[Black "Bob"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0',
  '1. d4 d5 2. c4 e6 *',
];

test('NDJSON and PGN exports are GET\'s games, in the order asked, an unknown id skipped and counted', async () => {
  const ids = [];
  for (const pgn of PGNS) ids.push(await gameWith(pgn));
  ids.push(await gameWith('*', { white: 'Carla <b>', clock: { initial_ms: 60000, increment_ms: 1000 } }));
  const unknown = 'AAAAAAAAAAAAAAAA';
  const asked = [ids[2], unknown, ids[0], ids[1], ids[0], ids[3]];
  const wanted = [ids[2], ids[0], ids[1], ids[3]];

  const ndjson = await exportCall(asked);
  assert.equal(ndjson.status, 200, ndjson.text);
  assert.match(ndjson.headers.get('content-type'), /^application\/x-ndjson/);
  const lines = ndjson.text.split('\n');
  assert.equal(lines.pop(), '', 'every line ends with a newline');
  assert.equal(lines.length, wanted.length);
  for (const [i, line] of lines.entries()) {
    const game = JSON.parse(line);
    const one = await get(server, `/v1/games/${wanted[i]}?legal_moves=false`);
    // The clock's at_ms is the read's time: the rest is byte for byte the same.
    assert.deepEqual({ ...game, clock: game.clock && { ...game.clock, at_ms: 0, abort_at_ms: 0 } },
      { ...one.body, clock: one.body.clock && { ...one.body.clock, at_ms: 0, abort_at_ms: 0 } }, `game ${i}`);
    if (!game.clock) assert.equal(line, one.text, `game ${i}: the same bytes`);
  }

  const pgn = await exportCall(asked, 'application/x-chess-pgn');
  assert.equal(pgn.status, 200, pgn.text);
  assert.match(pgn.headers.get('content-type'), /^application\/x-chess-pgn/);
  const singles = [];
  for (const id of wanted) singles.push((await get(server, `/v1/games/${id}/pgn`)).text);
  assert.equal(pgn.text, singles.join('\n'), 'the games as GET writes them, a blank line between two');
  assert.equal(parsePgn(pgn.text).length, wanted.length, 'chessops reads as many games');

  for (const accept of [undefined, 'application/x-chess-pgn']) {
    const raw = await exportRaw(asked, { accept });
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.trailer, 'X-Games-Exported, X-Games-Missing');
    assert.equal(raw.trailers['x-games-exported'], String(wanted.length));
    assert.equal(raw.trailers['x-games-missing'], '1');
  }
});

test('the bounds: 1 to 300 ids, each a game id; nothing but ids', async () => {
  expectProblem(await exportCall([]), 400, 'invalid_field');
  expectProblem(await exportCall(Array.from({ length: 301 }, (_, i) => `A${String(i).padStart(15, '0')}`)), 400, 'invalid_field');
  expectProblem(await exportCall(['short']), 400, 'invalid_field');
  expectProblem(await exportCall([42]), 400, 'invalid_field');
  expectProblem(await exportCall('AAAAAAAAAAAAAAAA'), 400, 'invalid_field');
  expectProblem(await call(server, 'POST', '/v1/games/export', { json: { ids: ['AAAAAAAAAAAAAAAA'], more: 1 } }), 400, 'unknown_field');
  const none = await exportRaw(['AAAAAAAAAAAAAAAA', 'BBBBBBBBBBBBBBBB']);
  assert.equal(none.status, 200);
  assert.equal(none.text, '');
  assert.equal(none.trailers['x-games-missing'], '2');
  assert.equal(none.trailers['x-games-exported'], '0');
  // 300 ids are allowed.
  const many = await exportRaw(Array.from({ length: 300 }, (_, i) => `Z${String(i).padStart(15, '0')}`));
  assert.equal(many.status, 200);
  assert.equal(many.trailers['x-games-missing'], '300');
});

test('an export of 300 games, read slowly, arrives whole', async () => {
  // 300 games of 20 plies, about 1.3 KB of JSON each: 400 KB in all, more than the server holds at once.
  const line = '1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 e5 7. Nb3 Be6 8. f3 Be7 9. Qd2 O-O 10. O-O-O Nbd7 *';
  const ids = [];
  for (let batch = 0; batch < 30; batch++) {
    ids.push(...await Promise.all(Array.from({ length: 10 }, () => gameWith(line))));
  }
  const slow = await exportRaw(ids, { pauseMs: 1 });
  assert.equal(slow.status, 200);
  assert.ok(slow.complete, 'the answer ended with its last chunk');
  assert.ok(slow.text.length > 384 * 1024, `${slow.text.length} bytes`);
  const lines = slow.text.trimEnd().split('\n');
  assert.equal(lines.length, ids.length);
  assert.deepEqual(lines.map((l) => JSON.parse(l).id), ids);
  assert.equal(slow.trailers['x-games-exported'], '300');
  assert.equal(slow.trailers['x-games-missing'], '0');
});
