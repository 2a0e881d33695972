// The spectator delay (issue 38, part 3) on two chessd replicas sharing one
// real Redis: a game created with spectator_delay_plies 2 is shown to a
// spectator on replica B two plies behind (GET, PGN, board.svg, export, SSE
// and the multi-game stream), with plies_hidden, the clocks of that moment
// and no offer; its players (their tokens) and a service key with
// games:read-live see it live, a key without the scope does not; once the
// game ends everyone sees everything; no spectator's event shows a hidden
// move. A server's --spectator-delay-plies is the default a game keeps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHESSD_BIN, startServer, tempDir } from './server.mjs';
import { call, get, post, expectProblem, sleep } from './http.mjs';
import { openStream } from './stream.mjs';
import { openMultiEvents } from './events.mjs';

const dir = tempDir('chessd-delay-');
let a, b;

/** `chessd keys new NAME SCOPES...`: { key, line }. */
function newKey(name, ...scopes) {
  const r = spawnSync(CHESSD_BIN, ['keys', 'new', name, ...scopes], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [key, line] = r.stdout.split('\n');
  return { key, line };
}

const keys = {
  admin: newKey('organiser', 'admin'),
  live: newKey('broadcaster', 'games:read-live'),
  exporter: newKey('exporter', 'games:export'),
};
const auth = (secret) => ({ headers: { authorization: `Bearer ${secret}` } });

before(async () => {
  const file = path.join(dir, 'keys');
  writeFileSync(file, `${Object.values(keys).map((k) => k.line).join('\n')}\n`);
  // Two replicas on the same Redis (the test process's own).
  [a, b] = await Promise.all([startServer(['--service-keys-file', file]), startServer(['--service-keys-file', file])]);
});

after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

async function newGame(body) {
  const res = await post(a, '/v1/games', body, auth(keys.admin.key));
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** Plays uci for the side to move with that side's token, on replica `on`. */
async function play(game, uci, on = a) {
  game.ply ??= 0;
  const res = await post(on, `/v1/games/${game.id}/moves`, { move: uci, expected_ply: game.ply }, auth(game.tokens[game.turn]));
  assert.equal(res.status, 200, res.text);
  game.turn = game.turn === 'white' ? 'black' : 'white';
  game.ply++;
  return res.body;
}

/** Another change (draw, resign) by `side`, at the version the player reads. */
async function act(game, route, body, side, on = a) {
  const current = await get(on, `/v1/games/${game.id}`, auth(game.tokens[side]));
  const res = await post(on, `/v1/games/${game.id}/${route}`, { ...body, expected_version: current.body.version }, auth(game.tokens[side]));
  assert.equal(res.status, 200, res.text);
  return res;
}

const ucis = (g) => g.moves.map((m) => m.uci);
const MOVES = ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1b5', 'a7a6'];

test('creation: the delay is stored, shown, defaulted and checked', async () => {
  const plain = await newGame({});
  assert.equal(plain.spectator_delay_plies, 0);
  assert.equal(plain.plies_hidden, 0);
  for (const bad of [-1, 21, 1.5, '2', true]) {
    const res = await post(a, '/v1/games', { spectator_delay_plies: bad }, auth(keys.admin.key));
    expectProblem(res, 400, 'invalid_field');
    assert.match(res.body.detail, /spectator_delay_plies/);
  }
  const res = await post(a, '/v1/games/bulk', { games: [{ white: 'A', black: 'B' }], spectator_delay_plies: 3 },
    auth(keys.admin.key));
  assert.equal(res.status, 201, res.text);
  const id = res.body.games[0].id;
  const seen = await get(b, `/v1/games/${id}`);
  assert.equal(seen.body.spectator_delay_plies, 3, 'a bulk game keeps the shared delay, read on the other replica');
});

test('a spectator sees the game two plies behind on every read; players and read-live keys see it live', async () => {
  const game = await newGame({ white: 'W', black: 'B', spectator_delay_plies: 2, clock: { initial_ms: 300000, increment_ms: 2000 } });
  game.turn = 'white';
  assert.equal(game.spectator_delay_plies, 2);
  const live = [];
  for (const uci of MOVES.slice(0, 5)) {
    live.push(await play(game, uci, live.length % 2 ? b : a));
    await sleep(30); // each move takes a little time off its clock
  }
  // White offers a draw with its last move: a player sees it, a spectator never.
  await act(game, 'draw', { action: 'offer' }, 'black');
  const full = await get(a, `/v1/games/${game.id}`, auth(game.tokens.white));
  assert.deepEqual(ucis(full.body), MOVES.slice(0, 5));
  assert.equal(full.body.plies_hidden, 0);
  assert.equal(full.body.draw_offer, 'black');

  // The spectator on replica B: three plies shown, two hidden, the clocks after them, no offer.
  const view = await get(b, `/v1/games/${game.id}`);
  assert.equal(view.status, 200);
  assert.deepEqual(ucis(view.body), MOVES.slice(0, 3));
  assert.equal(view.body.plies_hidden, 2);
  assert.equal(view.body.status, 'active');
  assert.equal(view.body.draw_offer, null);
  assert.deepEqual(view.body.clocks, full.body.clocks.slice(0, 3));
  assert.equal(view.body.clock.white_ms, full.body.clocks[2], "White's clock after its last move shown");
  assert.equal(view.body.clock.black_ms, full.body.clocks[1], "Black's clock after its last move shown");
  assert.equal(view.body.version, full.body.version, 'the version is the live one (documented)');
  assert.equal(view.headers.get('etag'), `"${full.body.version}-delayed"`);
  assert.notEqual(view.body.position.fen, full.body.position.fen);

  // Conditional reads: the live tag does not answer a spectator's copy, nor the reverse.
  const liveTag = `"${full.body.version}"`;
  assert.equal((await get(b, `/v1/games/${game.id}`, { headers: { 'if-none-match': liveTag } })).status, 200);
  assert.equal((await get(b, `/v1/games/${game.id}`, { headers: { 'if-none-match': view.headers.get('etag') } })).status, 304);
  const player304 = await get(b, `/v1/games/${game.id}`, { headers: { 'if-none-match': view.headers.get('etag'), authorization: `Bearer ${game.tokens.black}` } });
  assert.equal(player304.status, 200, "a player's read is never answered with the spectator's copy");
  assert.equal(player304.body.plies_hidden, 0);

  // The players see it live on either replica; so does a key with games:read-live, not one without.
  for (const server of [a, b]) {
    for (const token of [game.tokens.white, game.tokens.black, keys.live.key, keys.admin.key]) {
      const seen = await get(server, `/v1/games/${game.id}`, auth(token));
      assert.deepEqual(ucis(seen.body), MOVES.slice(0, 5));
      assert.equal(seen.body.plies_hidden, 0);
    }
  }
  const exporterView = await get(b, `/v1/games/${game.id}`, auth(keys.exporter.key));
  assert.equal(exporterView.body.plies_hidden, 2, 'a key without games:read-live sees what spectators see');

  // PGN: the moves shown, unfinished.
  const pgn = await get(b, `/v1/games/${game.id}/pgn`);
  assert.match(pgn.text, /\[Result "\*"\]/);
  assert.match(pgn.text, /1\. e4 .*1\.\.\. e5 .*2\. Nf3 [^\n]*\*\n$/);
  assert.doesNotMatch(pgn.text, /Nc6|Bb5/);
  const livePgn = await get(b, `/v1/games/${game.id}/pgn`, auth(game.tokens.white));
  assert.match(livePgn.text, /Bb5/);

  // board.svg: the picture of the view, not the live one, under its own tag.
  const svg = await get(b, `/v1/games/${game.id}/board.svg`);
  const liveSvg = await get(b, `/v1/games/${game.id}/board.svg`, auth(game.tokens.white));
  assert.equal(svg.status, 200);
  assert.notEqual(svg.text, liveSvg.text);
  assert.equal(svg.headers.get('etag'), view.headers.get('etag'));

  // Export by ids: the view, unless a read-live key asks.
  const exported = await post(b, '/v1/games/export', { ids: [game.id] }, auth(keys.exporter.key));
  const line = JSON.parse(exported.text.trim());
  assert.deepEqual(ucis(line), MOVES.slice(0, 3));
  assert.equal(line.plies_hidden, 2);
  const liveExport = await post(b, '/v1/games/export', { ids: [game.id] }, auth(keys.admin.key));
  assert.deepEqual(ucis(JSON.parse(liveExport.text.trim())), MOVES.slice(0, 5));

  // Analysis of a game between two people being played stays refused, to a spectator too.
  const hint = await get(b, `/v1/games/${game.id}/analysis`, auth(keys.exporter.key));
  assert.ok([403, 409].includes(hint.status), hint.text);

  // Once it is over, everyone sees everything.
  await act(game, 'resign', {}, 'white', b);
  const over = await get(b, `/v1/games/${game.id}`);
  assert.deepEqual(ucis(over.body), MOVES.slice(0, 5));
  assert.equal(over.body.plies_hidden, 0);
  assert.equal(over.body.status, 'resigned');
  assert.equal(over.headers.get('etag'), `"${over.body.version}"`);
});

test("a spectator's streams get the delayed view at each move and never a hidden move", async () => {
  const game = await newGame({ spectator_delay_plies: 2, clock: { initial_ms: 300000, increment_ms: 0 } });
  game.turn = 'white';
  const spectator = await openStream(b, game.id, { format: 'sse' });
  const player = await openStream(b, game.id, { format: 'sse', headers: { authorization: `Bearer ${game.tokens.white}` } });
  const played = [];
  try {
    const first = await spectator.next();
    assert.equal(first.data.type, 'game');
    assert.deepEqual(first.data.moves, []);
    for (const uci of MOVES) {
      await play(game, uci, played.length % 2 ? a : b);
      played.push(uci);
      const shown = Math.max(0, played.length - 2);
      if (shown > 0) {
        const ev = await spectator.waitFor((d) => d.type === 'game' && d.moves.length === shown, 5000, `the view of ${shown} plies`);
        assert.deepEqual(ucis(ev.data), played.slice(0, shown));
        assert.equal(ev.data.plies_hidden, 2);
      }
      await player.waitFor((d) => (d.type === 'change' && d.move?.uci === uci) || (d.type === 'game' && d.moves.length === played.length), 5000, `the live ${uci}`);
    }
    // An offer changes nothing a spectator sees.
    await act(game, 'draw', { action: 'offer' }, game.turn);
    await sleep(300);
    await act(game, 'resign', {}, 'white');
    const last = await spectator.waitFor((d) => d.type === 'game' && d.status === 'resigned', 5000, 'the ended game');
    assert.deepEqual(ucis(last.data), MOVES);
    assert.equal(last.data.plies_hidden, 0);
    await spectator.end();
    // Every event before the end: no change event, no hidden move, no offer.
    const before = spectator.datas.filter((d) => d.status !== 'resigned');
    for (const d of before) {
      assert.equal(d.type, 'game', `a spectator gets views, never changes: ${JSON.stringify(d).slice(0, 120)}`);
      assert.ok(d.plies_hidden === Math.min(2, d.moves.length + d.plies_hidden) && d.plies_hidden >= 0);
      assert.equal(d.draw_offer, null);
      assert.ok(d.moves.length <= MOVES.length - 2, 'no event shows more than the game minus the delay');
    }
    const counts = before.map((d) => d.moves.length);
    assert.deepEqual(counts, [...new Set(counts)], 'one event per view: an offer sends nothing');
  } finally {
    spectator.close();
    player.close();
  }
});

/** The next event of a multi-game stream whose data satisfies pred. */
async function nextGame(stream, pred) {
  for (;;) {
    const e = await stream.next(5000);
    if (pred(e.data)) return e.data;
  }
}

test('the multi-game stream shows a spectator the view, and a read-live key the game', async () => {
  const game = await newGame({ spectator_delay_plies: 2 });
  game.turn = 'white';
  for (const uci of MOVES.slice(0, 3)) await play(game, uci);
  const spectator = await openMultiEvents(b, { ids: [game.id] });
  const broadcaster = await openMultiEvents(b, { ids: [game.id] }, { headers: { authorization: `Bearer ${keys.live.key}` } });
  try {
    const isGame = (d) => d.type === 'game' && d.id === game.id;
    const view = await nextGame(spectator, isGame);
    assert.deepEqual(ucis(view), MOVES.slice(0, 1));
    assert.equal(view.plies_hidden, 2);
    const liveGame = await nextGame(broadcaster, isGame);
    assert.deepEqual(ucis(liveGame), MOVES.slice(0, 3));
    await play(game, MOVES[3], a);
    const next = await nextGame(spectator, isGame);
    assert.deepEqual(ucis(next), MOVES.slice(0, 2));
    for (const e of spectator.events) {
      assert.notEqual(e.data.type, 'change', 'a spectator of a delayed game gets views, never changes');
      if (e.data.moves) assert.ok(e.data.moves.length <= 2, 'never a hidden move');
    }
  } finally {
    spectator.close();
    broadcaster.close();
  }
});

test("--spectator-delay-plies is the default a game keeps; its own spectator_delay_plies 0 overrides it", async () => {
  const file = path.join(dir, 'keys');
  const c = await startServer(['--service-keys-file', file, '--spectator-delay-plies', '2']);
  try {
    const create = async (body) => {
      const res = await post(c, '/v1/games', body, auth(keys.admin.key));
      assert.equal(res.status, 201, res.text);
      return { ...res.body, turn: 'white' };
    };
    const delayed = await create({});
    const open = await create({ spectator_delay_plies: 0 });
    assert.equal(delayed.spectator_delay_plies, 2, 'no value: the server default');
    assert.equal(open.spectator_delay_plies, 0, 'its own 0 wins over the default');
    for (const game of [delayed, open]) for (const uci of MOVES.slice(0, 3)) await play(game, uci, c);

    // The default is stored with the game: a spectator on any replica (a's default is 0) sees it one ply in.
    for (const server of [c, a]) {
      const view = await get(server, `/v1/games/${delayed.id}`);
      assert.equal(view.status, 200, view.text);
      assert.deepEqual(ucis(view.body), MOVES.slice(0, 1));
      assert.equal(view.body.plies_hidden, 2);
      const pgn = await get(server, `/v1/games/${delayed.id}/pgn`);
      assert.match(pgn.text, /1\. e4 \*\n$/);
      for (const side of ['white', 'black']) {
        const seen = await get(server, `/v1/games/${delayed.id}`, auth(delayed.tokens[side]));
        assert.deepEqual(ucis(seen.body), MOVES.slice(0, 3), `the ${side} player sees it live`);
        assert.equal(seen.body.plies_hidden, 0);
      }
      const spectator = await get(server, `/v1/games/${open.id}`);
      assert.deepEqual(ucis(spectator.body), MOVES.slice(0, 3), 'spectator_delay_plies 0: live for everyone');
      assert.equal(spectator.body.plies_hidden, 0);
    }

    // A spectator's stream opens on the delayed view too.
    const stream = await openStream(c, delayed.id, { format: 'sse' });
    try {
      const first = await stream.next();
      assert.equal(first.data.type, 'game');
      assert.deepEqual(ucis(first.data), MOVES.slice(0, 1));
    } finally {
      stream.close();
    }

    // A bulk without the field keeps the default; with 0, none.
    for (const [extra, plies] of [[{}, 2], [{ spectator_delay_plies: 0 }, 0]]) {
      const res = await post(c, '/v1/games/bulk', { games: [{ white: 'A', black: 'B' }], ...extra }, auth(keys.admin.key));
      assert.equal(res.status, 201, res.text);
      const seen = await get(a, `/v1/games/${res.body.games[0].id}`);
      assert.equal(seen.body.spectator_delay_plies, plies, JSON.stringify(extra));
    }
  } finally {
    await c.stop();
  }
});
