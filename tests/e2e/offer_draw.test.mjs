// A draw offer with a move (POST /v1/games/{id}/moves with "offer_draw":
// true) over real HTTP: the move and the offer are one change (one version,
// one event on the game's stream), the other side can accept it, a move that
// ends the game makes the offer moot, a standing offer by the other side
// lapses with the move, bad values are refused and change nothing, and an
// Idempotency-Key sent again with another offer_draw is refused. Every answer
// is checked against openapi.yaml by http.mjs (streams by stream.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { get, post, expectProblem } from './http.mjs';
import { mustOpenStream } from './stream.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

async function newGame() {
  const res = await post(server, '/v1/games', {});
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version };
}

async function act(g, color, what, body, headers = {}) {
  const res = await post(server, `/v1/games/${g.id}/${what}`, { ...body, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens[color]}`, ...headers } });
  if (res.status === 200) g.version = res.body.version;
  return res;
}

test('a move with offer_draw is one version and one event, and the other side can accept it', async () => {
  const g = await newGame();
  assert.equal((await act(g, 'white', 'moves', { move: 'e4' })).status, 200);
  const stream = await mustOpenStream(server, g.id, { format: 'ndjson' });
  await stream.waitFor((d) => d.type === 'game');
  const before = g.version;
  const res = await act(g, 'black', 'moves', { move: 'e5', offer_draw: true });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.version, before + 1);
  assert.equal(res.body.move.san, 'e5');
  assert.equal(res.body.draw_offer, 'black');
  const event = await stream.waitFor((d) => d.type === 'change');
  assert.equal(event.data.event, 'move');
  assert.equal(event.data.version, before + 1);
  assert.equal(event.data.draw_offer, 'black');
  const read = await get(server, `/v1/games/${g.id}`);
  assert.equal(read.body.draw_offer, 'black');
  assert.equal(read.body.version, before + 1);
  const accept = await act(g, 'white', 'draw', { action: 'accept' });
  assert.equal(accept.status, 200, accept.text);
  assert.equal(accept.body.status, 'draw');
  assert.equal(accept.body.termination, 'agreement');
  const accepted = await stream.waitFor((d) => d.type === 'change');
  assert.equal(accepted.data.event, 'draw_accept');
  // Exactly one event for the move with its offer, one for the acceptance.
  assert.deepEqual(stream.datas.filter((d) => d.type === 'change').map((d) => d.version), [before + 1, before + 2]);
  stream.close();
});

test('offer_draw false or absent offers nothing; a mating move makes the offer moot', async () => {
  const g = await newGame();
  const plain = await act(g, 'white', 'moves', { move: 'f3', offer_draw: false });
  assert.equal(plain.status, 200, plain.text);
  assert.equal(plain.body.draw_offer, null);
  await act(g, 'black', 'moves', { move: 'e5' });
  await act(g, 'white', 'moves', { move: 'g4' });
  const mate = await act(g, 'black', 'moves', { move: 'Qh4#', offer_draw: true });
  assert.equal(mate.status, 200, mate.text);
  assert.equal(mate.body.status, 'checkmate');
  assert.equal(mate.body.result, '0-1');
  assert.equal(mate.body.draw_offer, null);
});

test('moving with offer_draw lets the other side\'s offer lapse and leaves the mover\'s', async () => {
  const g = await newGame();
  await act(g, 'white', 'moves', { move: 'd4' });
  const offer = await act(g, 'black', 'draw', { action: 'offer' });
  assert.equal(offer.status, 200, offer.text);
  assert.equal(offer.body.draw_offer, 'black');
  await act(g, 'black', 'moves', { move: 'd5' });
  const res = await act(g, 'white', 'moves', { move: 'c4', offer_draw: true });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'active');
  assert.equal(res.body.draw_offer, 'white');
});

test('a bad offer_draw is refused and changes nothing; a reused Idempotency-Key with another offer is refused', async () => {
  const g = await newGame();
  for (const bad of ['yes', 1, null, {}]) {
    const res = await act(g, 'white', 'moves', { move: 'e4', offer_draw: bad });
    expectProblem(res, 400, 'invalid_field');
  }
  const read = await get(server, `/v1/games/${g.id}`);
  assert.equal(read.body.version, g.version);
  assert.deepEqual(read.body.moves, []);
  const key = { 'idempotency-key': `offer-${g.id}` };
  const first = await post(server, `/v1/games/${g.id}/moves`, { move: 'e4', offer_draw: true, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens.white}`, ...key } });
  assert.equal(first.status, 200, first.text);
  const again = await post(server, `/v1/games/${g.id}/moves`, { move: 'e4', offer_draw: false, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens.white}`, ...key } });
  assert.equal(again.status, 422, again.text);
  assert.equal(again.body.code, 'idempotency_key_reused');
  const replay = await post(server, `/v1/games/${g.id}/moves`, { move: 'e4', offer_draw: true, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens.white}`, ...key } });
  assert.equal(replay.status, 200, replay.text);
  assert.equal(replay.body.version, first.body.version);
  assert.equal(replay.body.draw_offer, 'white');
});
