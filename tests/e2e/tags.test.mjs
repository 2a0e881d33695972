// A game's tags and metadata over real HTTP and a real Redis (one node, or
// the shared Cluster when run.sh runs the game suites again): given at
// creation, they come back as given from the creation's answer, GET, a
// stream's game event and both exports, and survive the game's changes; the
// PGN writes the tags escaped and in their order (chessops reads them back),
// and an exported PGN imported again (POST /v1/games with pgn) gives the same
// tags. A game without any, or stored before they existed (its hash without
// the field), has none, and its PGN the defaults, --pgn-site and --pgn-event.
// Every answer is checked against openapi.yaml by http.mjs; the bad inputs
// are rows of tests/BAD_INPUT.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parsePgn } from 'chessops/pgn';
import { startServer, gameRedis } from './server.mjs';
import { call, get, post } from './http.mjs';
import { openEvents } from './events.mjs';

const SITE = 'https://chess.example/';
const EVENT = 'Club "night"';

let redis;
let server;
let sited; // the same Redis, with --pgn-site and --pgn-event
before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url]);
  sited = await startServer(['--redis', redis.url, '--pgn-site', SITE, '--pgn-event', EVENT]);
});
after(async () => {
  await server?.stop();
  await sited?.stop();
  await redis?.stop();
});

// Known tags in the table's order come first, then the custom ones by name:
// given here in another order on purpose.
const TAGS = {
  ZetaId: 'z-9',
  Round: '3.1',
  Event: 'The "Open" \\ Caf\u00e9',
  WhiteElo: '1850',
  Date: '2026.??.??',
  AlphaId: 'a "1"',
  Annotator: 'A. N. Other',
};
const TAG_ORDER = ['Event', 'Date', 'Round', 'WhiteElo', 'Annotator', 'AlphaId', 'ZetaId'];
const METADATA = {
  ids: { product: 'g-4411', board: 4 },
  list: [1, -0.25, 9007199254740991, true, false, null, {}, []],
  text: 'caf\u00e9 \n "quoted" \\ \u2603',
};

async function create(target, body) {
  const res = await post(target, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** The tag pairs of a PGN text's header, in order, as written (escapes kept). */
const rawTags = (pgn) => [...pgn.matchAll(/^\[(\w+) "((?:[^"\\]|\\.)*)"\]$/gm)].map((m) => [m[1], m[2]]);

/** A PGN text's tags as chessops reads them (escapes undone): a Map. */
function chessopsTags(pgn) {
  const games = parsePgn(pgn);
  assert.equal(games.length, 1);
  return games[0].headers;
}

const keyOf = (id) => `chessd:game:{${id}}`;

test('tags and metadata given at creation come back as given from every read, through changes', async () => {
  const game = await create(server, { white: 'Ann', black: 'Bob', tags: TAGS, metadata: METADATA });
  assert.deepEqual(game.tags, TAGS);
  assert.deepEqual(Object.keys(game.tags), TAG_ORDER, 'known tags first in their order, then the custom ones by name');
  assert.deepEqual(game.metadata, METADATA);

  const move = await post(server, `/v1/games/${game.id}/moves`, { move: 'e4', expected_version: 1 },
    { headers: { authorization: `Bearer ${game.tokens.white}` } });
  assert.equal(move.status, 200, move.text);
  assert.equal(move.body.tags, undefined, 'a change carries no tags (openapi.yaml says so too)');

  const read = await get(server, `/v1/games/${game.id}`);
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(read.body.tags, TAGS);
  assert.deepEqual(Object.keys(read.body.tags), TAG_ORDER);
  assert.deepEqual(read.body.metadata, METADATA);

  const stream = await openEvents(server, game.id);
  const first = await stream.next(5000);
  stream.close();
  assert.equal(first.data.type, 'game');
  assert.deepEqual(first.data.tags, TAGS);
  assert.deepEqual(first.data.metadata, METADATA);

  const ndjson = await call(server, 'POST', '/v1/games/export', { json: { ids: [game.id] } });
  assert.equal(ndjson.status, 200, ndjson.text);
  const line = JSON.parse(ndjson.text.trim());
  assert.deepEqual(line.tags, TAGS);
  assert.deepEqual(line.metadata, METADATA);

  const pgn = await call(server, 'POST', '/v1/games/export', { json: { ids: [game.id] }, headers: { accept: 'application/x-chess-pgn' } });
  assert.equal(pgn.status, 200, pgn.text);
  assert.equal(pgn.text, (await get(server, `/v1/games/${game.id}/pgn`)).text, 'the export writes the tags as GET does');

  // The tags and metadata live in their own field of the hash, not in the
  // state text every change loads and writes.
  const state = await redis.command('HGET', keyOf(game.id), 'state');
  assert.ok(!state.includes('Annotator') && !state.includes('g-4411'), state);
  assert.deepEqual(JSON.parse(await redis.command('HGET', keyOf(game.id), 'meta')).metadata, METADATA);
});

test('the PGN writes the tags after the roster, escaped; exported then imported, a game has the same tags', async () => {
  const game = await create(server, { white: 'Ann', black: 'Bob', tags: TAGS });
  const pgn = (await get(server, `/v1/games/${game.id}/pgn`)).text;
  assert.deepEqual(rawTags(pgn), [
    ['Event', 'The \\"Open\\" \\\\ Caf\u00e9'],
    ['Site', '?'],
    ['Date', '2026.??.??'],
    ['Round', '3.1'],
    ['White', 'Ann'],
    ['Black', 'Bob'],
    ['Result', '*'],
    ['WhiteElo', '1850'],
    ['Annotator', 'A. N. Other'],
    ['Termination', 'unterminated'],
    ['TimeControl', '-'],
    ['AlphaId', 'a \\"1\\"'],
    ['ZetaId', 'z-9'],
  ]);
  const read = chessopsTags(pgn);
  for (const [name, value] of Object.entries(TAGS)) assert.equal(read.get(name), value, `chessops reads ${name} back`);

  const imported = await create(server, { pgn });
  assert.deepEqual(imported.tags, TAGS, 'Site "?" says nothing and is left out; every other tag comes back');
  assert.deepEqual(Object.keys(imported.tags), TAG_ORDER);
  assert.equal(imported.white.name, 'Ann');
  assert.equal(imported.metadata, null);
  assert.equal((await get(server, `/v1/games/${imported.id}/pgn`)).text, pgn, 'and the same PGN');

  // Every known tag and 16 custom ones, from a set-up start: a PGN of 38
  // tags (more than POST /v1/pgn read before tags existed) with the
  // server's own among them, read back whole.
  const every = {
    Event: 'e', Site: 's', Date: '2026.12.06', Round: '1', WhiteTitle: 'GM', BlackTitle: '-', WhiteElo: '2700',
    BlackElo: '0', WhiteFideId: '1503014', BlackFideId: '1', WhiteTeam: 't', BlackTeam: 'u', EventDate: '2026.??.??',
    Board: '4', Annotator: 'a',
  };
  for (let i = 1; i <= 16; i++) every[`Custom${String(i).padStart(2, '0')}`] = `c${i}`;
  const full = await create(server, { white: 'Ann', black: 'Bob', fen: '4k3/8/8/8/8/8/4P3/4K3 w - - 0 1', clock: { initial_ms: 60000 }, tags: every });
  const fullPgn = (await get(server, `/v1/games/${full.id}/pgn`)).text;
  assert.equal(rawTags(fullPgn).length, 38);
  assert.deepEqual(rawTags(fullPgn).map(([name]) => name).slice(0, 20), [
    'Event', 'Site', 'Date', 'Round', 'White', 'Black', 'Result', 'WhiteTitle', 'BlackTitle', 'WhiteElo', 'BlackElo',
    'WhiteFideId', 'BlackFideId', 'WhiteTeam', 'BlackTeam', 'EventDate', 'Board', 'Annotator', 'SetUp', 'FEN',
  ]);
  assert.deepEqual((await create(server, { pgn: fullPgn })).tags, every);

  const over = await create(server, { pgn, tags: { Round: '4', Board: '2' }, metadata: { from: game.id } });
  assert.deepEqual(over.tags, { ...TAGS, Round: '4', Board: '2' }, "the creation's tags win over the PGN's");
  assert.deepEqual(over.metadata, { from: game.id });
});

test("an imported PGN's tags a game does not keep are left out, not refused", async () => {
  const customs = Array.from({ length: 17 }, (_, i) => `[C${String(i + 1).padStart(2, '0')} "c"]`);
  const pgn = [
    '[Event "?"]', '[Site "Here"]', '[Date "2026.13.01"]', '[Round "-"]', '[White "Ann"]', '[Black "?"]',
    '[Result "*"]', '[WhiteElo "?"]', '[BlackElo "2900"]', '[WhiteTitle "gm"]', '[TimeControl "300+0"]',
    '[ECO "C20"]', '[Opening "King\'s Pawn"]', '[PlyCount "2"]', '[event "lower case"]', '[Foo "bar"]', ...customs,
    '', '1. e4 e5 *',
  ].join('\n');
  const game = await create(server, { pgn });
  const kept = { Site: 'Here', BlackElo: '2900', Foo: 'bar' };
  for (let i = 1; i <= 15; i++) kept[`C${String(i).padStart(2, '0')}`] = 'c';
  assert.deepEqual(game.tags, kept, 'the first 16 custom tags, the known ones that pass; no server tag');
  assert.equal(game.white.name, 'Ann');
  assert.equal(game.black.name, null);
  assert.equal(game.moves.length, 2);
});

test('a game without tags has none and its PGN the defaults; so has a game stored before tags existed', async () => {
  const plain = await create(server, { white: 'Ann' });
  assert.deepEqual(plain.tags, {});
  assert.equal(plain.metadata, null);
  const day = plain.created_at.slice(0, 10).replaceAll('-', '.');
  const tags = new Map(rawTags((await get(server, `/v1/games/${plain.id}/pgn`)).text));
  assert.equal(tags.get('Event'), '?');
  assert.equal(tags.get('Site'), '?');
  assert.equal(tags.get('Date'), day, 'the creation day (UTC)');
  assert.equal(tags.get('Round'), '-');
  assert.equal(await redis.command('HEXISTS', keyOf(plain.id), 'meta'), 0, 'nothing is stored for none');

  // A game stored before tags existed: its hash has no meta field.
  const older = await create(server, { white: 'Ann', black: 'Bob', tags: TAGS, metadata: METADATA });
  assert.equal(await redis.command('HDEL', keyOf(older.id), 'meta'), 1);
  const read = await get(server, `/v1/games/${older.id}`);
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(read.body.tags, {});
  assert.equal(read.body.metadata, null);
  const move = await post(server, `/v1/games/${older.id}/moves`, { move: 'd4', expected_version: 1 },
    { headers: { authorization: `Bearer ${older.tokens.white}` } });
  assert.equal(move.status, 200, move.text);
  assert.equal(new Map(rawTags((await get(server, `/v1/games/${older.id}/pgn`)).text)).get('Round'), '-');
});

test('--pgn-site and --pgn-event fill in the PGN of a game without its own Site and Event', async () => {
  const plain = await create(sited, { white: 'Ann', black: 'Bob' });
  const pgn = (await get(sited, `/v1/games/${plain.id}/pgn`)).text;
  assert.deepEqual(rawTags(pgn).slice(0, 2), [['Event', 'Club \\"night\\"'], ['Site', SITE]]);
  assert.equal(chessopsTags(pgn).get('Event'), EVENT);
  assert.deepEqual(plain.tags, {}, 'the defaults are written, not kept as the game\'s tags');

  const own = await create(sited, { tags: { Event: 'Its own' } });
  const ownTags = new Map(rawTags((await get(sited, `/v1/games/${own.id}/pgn`)).text));
  assert.equal(ownTags.get('Event'), 'Its own');
  assert.equal(ownTags.get('Site'), SITE);

  const exported = await call(sited, 'POST', '/v1/games/export', { json: { ids: [plain.id, own.id] }, headers: { accept: 'application/x-chess-pgn' } });
  assert.equal(exported.status, 200, exported.text);
  assert.equal(exported.text.split(`[Site "${SITE}"]`).length - 1, 2, 'the export writes the server\'s Site too');
  // The same game through a server without them: its own settings apply.
  assert.equal(new Map(rawTags((await get(server, `/v1/games/${plain.id}/pgn`)).text)).get('Site'), '?');
});
