// POST /v1/games/events (many games on one stream) and POST
// /v1/games/events/{stream}/ids over real HTTP, two replicas on one real
// Redis (the shared Cluster when run.sh runs the game suites again): games
// changed on one replica arrive on a stream held by the other, each in its
// order, every event naming its game and matching openapi.yaml's
// MultiStreamEvent; ids added on the other replica while the stream is
// open; a resume with `since` after a dropped connection loses nothing and
// sends nothing twice; an unknown id reported once; the bounds (ids, since,
// 500 games in all, one place per stream under the per-address limit); a
// closed stream's ids can no longer be added to; a client that stops
// reading is cut off once 1 MiB waits for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, gameRedis } from './server.mjs';
import { post, expectProblem, sleep } from './http.mjs';
import net from 'node:net';
import { openMultiEvents, streamsOpenBecomes, streamsOpen, publishEvent, changeEvent, subscribed, redisPort } from './events.mjs';

let redis;
let a; // where games are made and changed
let b; // where the streams are held
before(async () => {
  redis = await gameRedis();
  a = await startServer(['--redis', redis.url]);
  b = await startServer(['--redis', redis.url, '--heartbeat', '1', '--max-streams-per-address', '3']);
});
after(async () => {
  await a?.stop();
  await b?.stop();
  await redis?.stop();
});

const LINE = ['e4', 'e5', 'Nf3', 'Nc6', 'Bc4', 'Bc5', 'c3', 'Nf6', 'd4', 'exd4'];

async function newGame() {
  const res = await post(a, '/v1/games', {});
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: 1 };
}

/** Plays the game's next move of LINE on replica a. */
async function play(game) {
  const ply = game.version - 1;
  const res = await post(a, `/v1/games/${game.id}/moves`, { move: LINE[ply], expected_version: game.version }, {
    headers: { authorization: `Bearer ${ply % 2 ? game.tokens.black : game.tokens.white}` },
  });
  assert.equal(res.status, 200, res.text);
  game.version++;
}

/** The events of stream about game id: [type, version] pairs. */
const about = (stream, id) => stream.events.filter((e) => e.data.id === id).map((e) => [e.data.type, e.data.version]);

/** Waits until the stream has an event about game id at version. */
const hasVersion = (stream, id, version, what) => stream.until(
  (s) => s.events.some((e) => e.data.id === id && e.data.version === version), 5000, what ?? `${id} at version ${version}`);

const addIds = (server, stream, ids) => post(server, `/v1/games/events/${stream}/ids`, { ids });

for (const sse of [false, true]) {
  const kind = sse ? 'SSE' : 'NDJSON';

  test(`${kind}: three games changed on another replica arrive on one stream, each in its order; an unknown id once`, async () => {
    const games = [await newGame(), await newGame(), await newGame()];
    const unknown = 'AAAAAAAAAAAAAAAA';
    const stream = await openMultiEvents(b, { ids: [games[0].id, unknown, games[1].id, games[2].id, games[0].id] }, { sse });
    assert.equal(stream.status, 200);
    const first = await stream.next();
    assert.equal(first.data.type, 'stream');
    assert.match(first.data.stream, /^[A-Za-z0-9_-]{16}$/);
    for (const g of games) await hasVersion(stream, g.id, 1, `${g.id}'s state`);
    await stream.until((s) => s.events.some((e) => e.data.type === 'not_found'), 5000, 'the unknown id reported');
    // Interleaved changes: 3, 2 and 4 moves.
    const plan = [0, 1, 2, 0, 2, 1, 0, 2, 2];
    for (const k of plan) await play(games[k]);
    for (const g of games) await hasVersion(stream, g.id, g.version);
    await sleep(300); // nothing more should come
    for (const g of games) {
      const seen = about(stream, g.id);
      const want = [['game', 1]];
      for (let v = 2; v <= g.version; v++) want.push(['change', v]);
      assert.deepEqual(seen, want, `${g.id}: its state, then each change once, in order`);
    }
    assert.deepEqual(stream.events.filter((e) => e.data.type === 'not_found').map((e) => e.data.id), [unknown], 'reported once');
    assert.equal(stream.ended, false, 'a missing game does not end the stream');
    stream.close();
  });
}

test('ids added on another replica while the stream is open: the game\'s state, then its changes; a retry adds nothing', async () => {
  const [g1, g2, g3] = [await newGame(), await newGame(), await newGame()];
  await play(g2);
  const stream = await openMultiEvents(b, { ids: [g1.id] });
  const sid = (await stream.next()).data.stream;
  await hasVersion(stream, g1.id, 1);
  const added = await addIds(a, sid, [g2.id, g1.id, g3.id, g2.id]);
  assert.equal(added.status, 200, added.text);
  assert.deepEqual(added.body, { stream: sid, added: 2, ids: 3 });
  await hasVersion(stream, g2.id, 2, 'the added game\'s state');
  await hasVersion(stream, g3.id, 1, 'the other added game\'s state');
  await play(g2);
  await play(g3);
  await play(g1);
  await hasVersion(stream, g2.id, 3);
  await hasVersion(stream, g3.id, 2);
  await hasVersion(stream, g1.id, 2);
  assert.deepEqual(about(stream, g2.id), [['game', 2], ['change', 3]]);
  assert.deepEqual(about(stream, g3.id), [['game', 1], ['change', 2]]);
  const again = await addIds(b, sid, [g3.id]);
  assert.deepEqual(again.body, { stream: sid, added: 0, ids: 3 }, 'a retry is harmless');
  await sleep(200);
  assert.deepEqual(about(stream, g3.id), [['game', 1], ['change', 2]], 'nothing sent again');
  stream.close();
  // Once the replica sees the client gone (a heartbeat a second), the stream's ids are dropped.
  const deadline = Date.now() + 5000;
  let res;
  do {
    await sleep(200);
    res = await addIds(a, sid, [g1.id]);
  } while (res.status === 200 && Date.now() < deadline);
  expectProblem(res, 404, 'stream_not_found');
});

test('a resume with since after a dropped connection loses nothing and sends nothing twice', async () => {
  const games = [await newGame(), await newGame(), await newGame()];
  const ids = games.map((g) => g.id);
  const seen = new Map(ids.map((id) => [id, []]));
  const take = (stream) => {
    for (const e of stream.events) if (seen.has(e.data.id)) seen.get(e.data.id).push([e.data.type, e.data.version]);
  };
  const first = await openMultiEvents(b, { ids });
  for (const g of games) await hasVersion(first, g.id, 1);
  await play(games[0]);
  await play(games[1]);
  await hasVersion(first, games[0].id, 2);
  await hasVersion(first, games[1].id, 2);
  first.close();
  take(first);
  // While away: game 0 moves twice, game 1 not, game 2 once.
  await play(games[0]);
  await play(games[0]);
  await play(games[2]);
  const since = Object.fromEntries(ids.map((id) => [id, seen.get(id).at(-1)[1]]));
  const second = await openMultiEvents(b, { ids, since }, { sse: true });
  await hasVersion(second, games[0].id, 4, 'game 0, changed while away, whole');
  await hasVersion(second, games[2].id, 2, 'game 2, changed while away, whole');
  await play(games[1]);
  await play(games[0]);
  await hasVersion(second, games[1].id, 3);
  await hasVersion(second, games[0].id, 5);
  await sleep(200);
  take(second);
  assert.deepEqual(about(second, games[1].id), [['change', 3]], 'a game not changed while away is not sent again');
  assert.deepEqual(about(second, games[0].id), [['game', 4], ['change', 5]]);
  assert.deepEqual(about(second, games[2].id), [['game', 2]]);
  for (const g of games) {
    const versions = seen.get(g.id).map(([, v]) => v);
    assert.deepEqual(versions, [...new Set(versions)].sort((x, y) => x - y), `${g.id}: no version twice, in order`);
    assert.equal(versions.at(-1), g.version, `${g.id}: up to date`);
  }
  // A since that is not the game's version (ahead of it) gets the game.
  const odd = await openMultiEvents(b, { ids: [games[1].id], since: { [games[1].id]: 99 } });
  await hasVersion(odd, games[1].id, games[1].version);
  assert.deepEqual(about(odd, games[1].id), [['game', games[1].version]]);
  odd.close();
  second.close();
});

test('bounds: 1 to 500 game ids, since only for them, 500 games in all, one place per stream', async () => {
  const fake = (i) => `Z${String(i).padStart(15, '0')}`;
  for (const body of [{}, { ids: [] }, { ids: ['short'] }, { ids: [7] }, { ids: Array.from({ length: 501 }, (_, i) => fake(i)) },
    { ids: [fake(1)], since: { [fake(2)]: 3 } }, { ids: [fake(1)], since: { [fake(1)]: 0 } },
    { ids: [fake(1)], since: { [fake(1)]: 1.5 } }, { ids: [fake(1)], since: [3] }]) {
    expectProblem(await post(a, '/v1/games/events', body), 400, 'invalid_field');
  }
  expectProblem(await post(a, '/v1/games/events', { ids: [fake(1)], also: 1 }), 400, 'unknown_field');
  expectProblem(await addIds(a, 'AAAAAAAAAAAAAAAA', [fake(1)]), 404, 'stream_not_found');
  expectProblem(await addIds(a, 'not*an*id', [fake(1)]), 404, 'stream_not_found');

  await streamsOpenBecomes(b, 0); // the earlier tests' streams, once b has seen them closed
  const g = await newGame();
  const ids = Array.from({ length: 499 }, (_, i) => fake(i));
  const big = await openMultiEvents(b, { ids: [...ids, g.id] });
  const sid = (await big.next()).data.stream;
  await hasVersion(big, g.id, 1);
  await big.until((s) => s.events.filter((e) => e.data.type === 'not_found').length === 499, 10000, '499 unknown ids reported');
  const over = await addIds(a, sid, [fake(600), fake(601)]);
  expectProblem(over, 422, 'too_many_ids');
  assert.equal(over.body.ids, 500);
  assert.equal(over.body.max, 500);
  assert.deepEqual((await addIds(a, sid, [g.id])).body, { stream: sid, added: 0, ids: 500 });
  await play(g);
  await hasVersion(big, g.id, 2, 'the stream of 500 goes on');
  expectProblem(await addIds(a, sid, Array.from({ length: 501 }, (_, i) => fake(i))), 400, 'invalid_field');

  // --max-streams-per-address 3: the big one and two more, then 503.
  const more = [await openMultiEvents(b, { ids: [g.id] }), await openMultiEvents(b, { ids: [g.id] })];
  const refused = await openMultiEvents(b, { ids: [g.id] });
  expectProblem(refused, 503, 'too_many_streams');
  for (const s of [...more, big]) s.close();
});

test('a client that stops reading is cut off once 1 MiB waits for it; the other streams go on', async () => {
  await streamsOpenBecomes(b, 0, 5000);
  const g = await newGame();
  const port = redisPort(redis.url);
  // The published events are made up (the stored game stays at version 1),
  // so both streams must follow the game before the first one: a stream that
  // came later would find its game behind them and read it again instead.
  // The one that never reads opens first; the game's channel subscribed
  // says it follows the game.
  const body = JSON.stringify({ ids: [g.id] });
  const socket = net.connect(b.port, '127.0.0.1');
  await new Promise((resolve) => socket.on('connect', resolve));
  socket.write(`POST /v1/games/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  socket.pause(); // never reads
  const closed = new Promise((resolve) => socket.on('close', resolve));
  await subscribed(port, g.id, { count: 1 });
  const reader = await openMultiEvents(b, { ids: [g.id] });
  await hasVersion(reader, g.id, 1);
  assert.equal(await streamsOpen(b), 2, 'both streams open');
  const filler = 'x'.repeat(60000);
  let version = 2;
  for (; version < 600; version++) {
    await publishEvent(port, g.id, { version, json: JSON.stringify(changeEvent(g.id, version, { filler })) });
    if (version % 25 === 0 && (await streamsOpen(b)) === 1) break;
  }
  await streamsOpenBecomes(b, 1, 5000);
  assert.ok(version < 600, 'cut off');
  await hasVersion(reader, g.id, version, 'the reading stream has every event');
  assert.equal(reader.ended, false);
  socket.destroy();
  await closed;
  reader.close();
});
