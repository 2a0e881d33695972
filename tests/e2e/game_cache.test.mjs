// The game cache (--game-cache): a replica keeps a copy of the games it wrote
// or read, and a change against the copy's version skips the read. The copy
// is only a guess. Two replicas on one redis-server show that a stale copy
// never decides an answer: a version another replica moved on is judged on
// the game as stored, and a Redis that lost a write (the same version
// written twice, with different moves) never gets a move applied to the
// wrong one of the two: the write id in the compare-and-set tells them apart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Chess } from 'chess.js';
import { startServer, startRedis, gameRedis } from './server.mjs';
import { get, post, expectProblem } from './http.mjs';

let redis;
let one; // the replica that keeps the stale copies
let two; // the replica that changes the games behind its back

before(async () => {
  redis = await gameRedis();
  [one, two] = await Promise.all([0, 1].map(() => startServer(['--redis', redis.url, '--threads', '2'])));
});
after(async () => {
  await one?.stop();
  await two?.stop();
  await redis?.stop();
});

const auth = (token) => ({ authorization: `Bearer ${token}` });

async function createGame(srv) {
  const res = await post(srv, '/v1/games', {});
  assert.equal(res.status, 201, res.text);
  return res.body;
}

function move(srv, game, color, text, version) {
  return post(srv, `/v1/games/${game.id}/moves?legal_moves=false`, { move: text, expected_version: version },
    { headers: auth(game.tokens[color]) });
}

/** The game as stored, checked to be one game: its moves replayed by chess.js give its position. */
async function stored(srv, id) {
  const res = await get(srv, `/v1/games/${id}?legal_moves=false`);
  assert.equal(res.status, 200, res.text);
  const chess = new Chess();
  for (const m of res.body.moves) assert.ok(chess.move(m.san), `stored move ${m.san} is not legal`);
  assert.equal(res.body.position.fen, chess.fen(), 'the stored position is not the one its moves lead to');
  return res.body;
}

test('a copy another replica made stale: a change against the stored version is made, one against the copy\'s is 409 with the stored version', async () => {
  const g = await createGame(one);
  assert.equal((await move(one, g, 'white', 'e4', 1)).status, 200); // one keeps version 2
  assert.equal((await move(two, g, 'black', 'e5', 2)).status, 200); // the store is at 3
  const stale = await move(one, g, 'black', 'c5', 2);
  expectProblem(stale, 409, 'version_conflict');
  assert.equal(stale.body.current_version, 3);
  const res = await move(one, g, 'white', 'Nf3', 3);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.version, 4);
  assert.deepEqual((await stored(two, g.id)).moves.map((m) => m.san), ['e4', 'e5', 'Nf3']);
});

test('a refusal judged on a stale copy is judged again on the stored game: not_your_turn on the copy, a move on the store', async () => {
  const g = await createGame(one);
  assert.equal((await move(one, g, 'white', 'd4', 1)).status, 200); // one: version 2, black to move
  assert.equal((await move(two, g, 'black', 'd5', 2)).status, 200); // store: version 3, white to move
  // On one's copy (version 2) it is black's turn and the version is stale;
  // the answer must be the one the stored game gives.
  const res = await move(one, g, 'white', 'c4', 3);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual((await stored(one, g.id)).moves.map((m) => m.san), ['d4', 'd5', 'c4']);
});

test('a Redis that lost a write holds another version 2: a move made on the copy of the lost one is not applied to it', async () => {
  const g = await createGame(one);
  const hash = `chessd:game:{${g.id}}`;
  const atVersion1 = await redis.command('HGETALL', hash);
  assert.equal((await move(one, g, 'white', 'e4', 1)).status, 200); // one's copy: 1.e4 at version 2
  // Redis loses that write (a restart without its data, a failover): the game is back at version 1 ...
  await redis.command('DEL', hash, `chessd:moves:{${g.id}}`, `chessd:history:{${g.id}}`);
  assert.equal(await redis.command('HSET', hash, ...atVersion1), atVersion1.length / 2);
  // ... and another replica makes a different version 2.
  assert.equal((await move(two, g, 'white', 'd4', 1)).status, 200);
  // e5 is legal after both 1.e4 and 1.d4: on one's copy it would make 1.e4 e5,
  // appended to the stored 1.d4. It must be played on the stored game.
  const res = await move(one, g, 'black', 'e5', 2);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.version, 3);
  const game = await stored(two, g.id);
  assert.deepEqual(game.moves.map((m) => m.san), ['d4', 'e5']);
  assert.equal(res.body.position.fen, game.position.fen);
});
