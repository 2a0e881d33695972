// Opening names over real HTTP, against the data set chessd ships
// (rules/openings/*.tsv) with chessops as the oracle for its positions:
// every line, played through POST /v1/position/moves, ends in a position
// whose names in the data set (grouped by chessops's EPD: placement, side to
// move, castling rights, an en passant square only when a capture there is
// legal) include the name chessd gives; the same EPDs sent as FEN to
// POST /v1/position; a transposition; the walk back past unnamed moves; games
// (their answers, their PGN's ECO and Opening tags, read back with chessops);
// POST /v1/pgn; Chess960. Every answer is checked against openapi.yaml by http.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Chess } from 'chessops/chess';
import { makeFen } from 'chessops/fen';
import { parseSan } from 'chessops/san';
import { parsePgn } from 'chessops/pgn';
import { startServer, REPO_ROOT } from './server.mjs';
import { call, get, post } from './http.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

/** The data set's lines: {eco, name, pgn, sans, epd, fullmoves}, the EPD by chessops. */
function loadLines() {
  const dir = path.join(REPO_ROOT, 'rules/openings');
  const lines = [];
  for (const file of ['a.tsv', 'b.tsv', 'c.tsv', 'd.tsv', 'e.tsv']) {
    const rows = fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter((l) => l);
    assert.equal(rows[0], 'eco\tname\tpgn', `${file}: header`);
    for (const row of rows.slice(1)) {
      const [eco, name, pgn] = row.split('\t');
      const sans = pgn.split(' ').filter((t) => !/^\d+\.+$/.test(t));
      const pos = Chess.default();
      for (const san of sans) {
        const move = parseSan(pos, san);
        assert.ok(move, `${eco} ${name}: chessops reads ${san}`);
        pos.play(move);
      }
      const setup = pos.toSetup();
      lines.push({ eco, name, pgn, sans, epd: makeFen(setup, { epd: true }), fullmoves: setup.fullmoves });
    }
  }
  return lines;
}

const lines = loadLines();
/** EPD -> the set of "ECO name" the data set gives that position. */
const namesByEpd = new Map();
for (const l of lines) {
  if (!namesByEpd.has(l.epd)) namesByEpd.set(l.epd, new Set());
  namesByEpd.get(l.epd).add(`${l.eco} ${l.name}`);
}

/** Runs fn over items, `width` at a time. */
async function inParallel(items, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

const playMoves = (moves, extra = {}) => post(server, '/v1/position/moves?legal_moves=false', { moves, ...extra });

test('every line of the data set, played through chessd, names a position whose names include it', async () => {
  assert.equal(lines.length, 3807);
  const wrong = [];
  await inParallel(lines, 8, async (l) => {
    const res = await playMoves(l.sans);
    assert.equal(res.status, 200, `${l.pgn}: ${res.text}`);
    const { fen, opening } = res.body.position;
    assert.equal(fen.split(' ').slice(0, 4).join(' '), l.epd, `${l.pgn}: chessd's position is chessops's`);
    if (!opening || !namesByEpd.get(l.epd).has(`${opening.eco} ${opening.name}`)) wrong.push(`${l.eco} ${l.name}: ${JSON.stringify(opening)}`);
    // The line's own name when no shorter line names its position.
    if (namesByEpd.get(l.epd).size === 1) assert.deepEqual(opening, { eco: l.eco, name: l.name });
  });
  assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} lines misnamed`);
});

test('each of the data set positions, sent as a FEN (chessops\'s EPD), is named from the same set', async () => {
  const epds = [...new Map(lines.map((l) => [l.epd, l])).values()];
  const wrong = [];
  await inParallel(epds, 8, async (l) => {
    const res = await post(server, '/v1/position?legal_moves=false', { fen: `${l.epd} 0 ${l.fullmoves}` });
    assert.equal(res.status, 200, res.text);
    const { opening } = res.body;
    if (!opening || !namesByEpd.get(l.epd).has(`${opening.eco} ${opening.name}`)) wrong.push(`${l.epd}: ${JSON.stringify(opening)}`);
  });
  assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} positions misnamed`);
});

test('a transposition gets the name of its position, and moves no line has keep the last name', async () => {
  const najdorf = (await playMoves(['e4', 'c5', 'Nf3', 'd6', 'd4', 'cxd4', 'Nxd4', 'Nf6', 'Nc3', 'a6'])).body.position.opening;
  assert.deepEqual(najdorf, { eco: 'B90', name: 'Sicilian Defense: Najdorf Variation' });
  const other = (await playMoves(['e4', 'c5', 'Nc3', 'd6', 'Nf3', 'Nf6', 'd4', 'cxd4', 'Nxd4', 'a6'])).body.position.opening;
  assert.deepEqual(other, najdorf);
  const later = (await playMoves(['e4', 'c5', 'Nf3', 'd6', 'd4', 'cxd4', 'Nxd4', 'Nf6', 'Nc3', 'a6', 'a3', 'h6'])).body.position.opening;
  assert.deepEqual(later, najdorf);
  // The start position has none; a FEN with moves walks from the FEN.
  assert.equal((await post(server, '/v1/position', {})).body.opening, null);
  const fromFen = await playMoves(['a6'], { fen: 'rnbqkb1r/pp2pppp/3p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R b KQkq - 2 5' });
  assert.deepEqual(fromFen.body.position.opening, najdorf);
  // Chess960 has no opening names, even from the standard placement.
  const c960 = await playMoves(['e4', 'c5'], { chess960_position: 518 });
  assert.equal(c960.status, 200, c960.text);
  assert.equal(c960.body.position.opening, null);
});

test('a game names its opening in its answers, its moves\' answers and its PGN tags', async () => {
  const created = await post(server, '/v1/games', { white: 'Ann', black: 'Bob' });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.position.opening, null);
  const { id, tokens } = created.body;
  let version = created.body.version;
  const moves = ['e4', 'c5', 'Nf3', 'd6', 'd4', 'cxd4', 'Nxd4', 'Nf6', 'Nc3', 'a6', 'h3'];
  let last;
  for (const [i, m] of moves.entries()) {
    last = await post(server, `/v1/games/${id}/moves`, { move: m, expected_version: version },
      { headers: { authorization: `Bearer ${tokens[i % 2 ? 'black' : 'white']}` } });
    assert.equal(last.status, 200, last.text);
    version = last.body.version;
  }
  const adams = { eco: 'B90', name: 'Sicilian Defense: Najdorf Variation, Adams Attack' };
  assert.deepEqual(last.body.position.opening, adams);
  const game = await get(server, `/v1/games/${id}`);
  assert.deepEqual(game.body.position.opening, adams);
  const pgn = await get(server, `/v1/games/${id}/pgn`);
  const [parsed] = parsePgn(pgn.text);
  assert.equal(parsed.headers.get('ECO'), 'B90');
  assert.equal(parsed.headers.get('Opening'), adams.name);
  // A takeback walks back to the Najdorf.
  const undo = await post(server, `/v1/games/${id}/takeback`, { action: 'offer', expected_version: version },
    { headers: { authorization: `Bearer ${tokens.white}` } });
  assert.equal(undo.status, 200, undo.text);
  const accept = await post(server, `/v1/games/${id}/takeback`, { action: 'accept', expected_version: undo.body.version },
    { headers: { authorization: `Bearer ${tokens.black}` } });
  assert.equal(accept.status, 200, accept.text);
  assert.deepEqual(accept.body.position.opening, { eco: 'B90', name: 'Sicilian Defense: Najdorf Variation' });
  // A game with no opening has no tags.
  const none = await post(server, '/v1/games', {});
  const nonePgn = await get(server, `/v1/games/${none.body.id}/pgn`);
  assert.doesNotMatch(nonePgn.text, /\[ECO |\[Opening /);
});

test('POST /v1/pgn reports each imported game\'s opening', async () => {
  const text = '[Event "a"]\n\n1. d4 d5 2. c4 e6 *\n\n[Event "b"]\n\n1. c4 e6 2. d4 d5 3. Nc3 *\n\n'
    + '[Event "c"]\n[Variant "Chess960"]\n[FEN "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"]\n\n1. e4 *\n';
  const res = await call(server, 'POST', '/v1/pgn', { headers: { 'content-type': 'application/x-chess-pgn' }, body: text });
  assert.equal(res.status, 200, res.text);
  const [qgd, english, c960] = res.body.games.map((g) => g.position.opening);
  assert.deepEqual(qgd, { eco: 'D30', name: "Queen's Gambit Declined" });
  assert.ok(english && english.eco.startsWith('D3'), JSON.stringify(english));
  assert.ok(namesByEpd.get('rnbqkbnr/ppp2ppp/4p3/3p4/2PP4/2N5/PP2PPPP/R1BQKBNR b KQkq -').has(`${english.eco} ${english.name}`));
  assert.equal(c960, null);
});
