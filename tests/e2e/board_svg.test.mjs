// Board pictures over real HTTP: GET /v1/position?format=svg (or Accept:
// image/svg+xml) and GET /v1/games/{id}/board.svg. Every picture is rendered
// to PNG by a real SVG renderer (rsvg-convert, Debian's librsvg2-bin) and read
// back by sampling pixels: each square's corners must show the square's
// colour (light, dark, last-move highlight or check mark) and its centre the
// fill of the piece chess.js says stands there, or the square's colour when
// none does; for both orientations, with and without coordinates. Also: the
// Accept negotiation, bad parameters (400 problem+json, no picture), the
// game picture's last move, check, ETag and 304, and 404 for an unknown game.
// The variants: standard pictures keep the bytes of tests/data/board_svg;
// S-chess's Hawk and Elephant are sampled where their shapes differ from the
// bishop's, knight's and rook's; crazyhouse pockets, S-chess reserves and
// three-check's checks given are read from the strips above and below the
// board (pieces, counts compared as glyphs, discs), in a position and in a
// game.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { Chess } from 'chess.js';
import { startServer, REPO_ROOT } from './server.mjs';
import { call, get, post, expectProblem, START_FEN, KIWIPETE } from './http.mjs';
import { spec } from './openapi.mjs';

// The picture's geometry and palette as api/render/board_svg.h and openapi.yaml
// (BoardPicture) document them: the one place this file takes them from.
const PICTURE = {
  square: 100, // viewBox units per square
  margin: 40, // the coordinates frame, on every side
  pieceCore: 8, // every piece fills the disc of this radius about its square's centre
  edgeClear: 10, // and keeps this far from its square's edges
  defaultSize: 360,
  colors: {
    light: '#eedcb4',
    dark: '#b08660',
    lastmoveLight: '#d8e07a',
    lastmoveDark: '#a8ae48',
    check: '#e5463a',
    whiteFill: '#fbfbf7',
    blackFill: '#2b2b2b',
    frame: '#4a3b2e',
    strip: '#c9c1b1',
    stripInk: '#1f3a5f',
  },
  // a variant's strips (crazyhouse, S-chess, three-check), above and below the board
  strip: 100, // their height
  stripCell: 160, // a pocket's cell per piece type, the piece in its first 100 units
  checkStep: 60, // three-check's discs: centres this far apart, the first half a step in
  checkRadius: 22,
};
// How far (per channel, 0-255) a sampled pixel may be from its palette colour.
const TOLERANCE = 6;

const ITALIAN_MATE = 'r1bqkbnr/pppp1Qpp/2n5/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4';
const ENDGAME = '8/5k2/3p4/1p1Pp2p/pP2Pp1P/P4P1K/8/8 b - - 99 50';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const q = encodeURIComponent;

function rgb(hex) {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

/** The PNG that rsvg-convert makes of an SVG text: { width, height, data (RGBA) }. */
function render(svg) {
  let png;
  try {
    png = execFileSync('rsvg-convert', ['--format=png'], { input: svg, maxBuffer: 64 << 20 });
  } catch (err) {
    assert.fail(`rsvg-convert could not render the picture (is librsvg2-bin installed? make deps): ${err.message}`);
  }
  return PNG.sync.read(png);
}

function pixel(png, x, y) {
  assert.ok(x >= 0 && y >= 0 && x < png.width && y < png.height, `pixel ${x},${y} is outside ${png.width}x${png.height}`);
  const i = (png.width * y + x) * 4;
  return [...png.data.subarray(i, i + 4)];
}

/** The palette entry a pixel shows (opaque, within TOLERANCE), or its hex when none. */
function colorName(p) {
  for (const [name, hex] of Object.entries(PICTURE.colors))
    if (p[3] === 255 && rgb(hex).every((c, k) => Math.abs(c - p[k]) <= TOLERANCE)) return name;
  return `#${p.slice(0, 3).map((c) => c.toString(16).padStart(2, '0')).join('')}/${p[3]}`;
}

/**
 * Where a square is drawn, in pixels: its top-left corner and pixels per
 * viewBox unit (strips: the picture has a variant's strips, the board one
 * strip lower).
 */
function squareBox(square, options = {}) {
  const { orientation = 'white', coordinates = true, size = PICTURE.defaultSize, strips = false } = options;
  const file = square.charCodeAt(0) - 97;
  const rank = Number(square[1]) - 1;
  const column = orientation === 'white' ? file : 7 - file;
  const row = orientation === 'white' ? 7 - rank : rank;
  const margin = coordinates ? PICTURE.margin : 0;
  const scale = size / (8 * PICTURE.square + 2 * margin);
  const top = margin + (strips ? PICTURE.strip : 0);
  return { x: (margin + column * PICTURE.square) * scale, y: (top + row * PICTURE.square) * scale, scale };
}

/** The colour names at points of a square given in viewBox units from its top-left corner. */
function sample(png, square, options, points) {
  const box = squareBox(square, options);
  return points.map(([u, v]) => colorName(pixel(png, Math.floor(box.x + u * box.scale), Math.floor(box.y + v * box.scale))));
}

const half = PICTURE.square / 2;
const inCore = PICTURE.pieceCore / 2;
const CENTRE = [[half, half], [half - inCore, half], [half + inCore, half], [half, half - inCore], [half, half + inCore]];
const inset = PICTURE.edgeClear * 0.6;
const CORNERS = [[inset, inset], [PICTURE.square - inset, inset], [inset, PICTURE.square - inset],
  [PICTURE.square - inset, PICTURE.square - inset]];

const SQUARES = [];
for (let rank = 8; rank >= 1; rank--) for (const file of 'abcdefgh') SQUARES.push(`${file}${rank}`);
const isLight = (square) => (square.charCodeAt(0) - 97 + Number(square[1]) - 1) % 2 === 1;

/**
 * What each square should show, from chess.js's reading of the FEN: the
 * square's colour at its corners (the check mark on the king chess.js finds
 * in check unless check is false, else the highlight on the last move's
 * squares, else light or dark), and at its centre the fill of its piece or
 * the square's colour.
 */
function expected(fen, { lastmove, check = true, variant } = {}) {
  const chess = variant ? null : new Chess(fen);
  let checked = null;
  if (chess && check && chess.inCheck())
    checked = SQUARES.find((s) => { const p = chess.get(s); return p && p.type === 'k' && p.color === chess.turn(); });
  const drop = lastmove?.[1] === '@'; // P@e6: its one square
  const marked = !lastmove ? [] : drop ? [lastmove.slice(2, 4)] : [lastmove.slice(0, 2), lastmove.slice(2, 4)];
  const placed = variant ? placement(fen) : null;
  return SQUARES.map((square) => {
    let base = isLight(square) ? 'light' : 'dark';
    if (marked.includes(square)) base = isLight(square) ? 'lastmoveLight' : 'lastmoveDark';
    if (square === checked) base = 'check';
    const piece = chess ? chess.get(square) : placed.get(square);
    return { square, corners: base, centre: piece ? (piece.color === 'w' ? 'whiteFill' : 'blackFill') : base };
  });
}

/**
 * A variant FEN's pieces by square ({ type, color } as chess.js gives them),
 * read from its placement alone (S-chess's h and e too; a crazyhouse pocket
 * in brackets and promoted '~' marks skipped). Its positions are drawn
 * without check marks.
 */
function placement(fen) {
  const board = fen.split(' ')[0].replace(/\[.*\]$/, '').replace(/~/g, '');
  const placed = new Map();
  board.split('/').slice(0, 8).forEach((rank, row) => {
    let file = 0;
    for (const c of rank) {
      if (/\d/.test(c)) { file += Number(c); continue; }
      placed.set(`${'abcdefgh'[file]}${8 - row}`, { type: c.toLowerCase(), color: c === c.toLowerCase() ? 'b' : 'w' });
      file++;
    }
  });
  return placed;
}

/** Asserts that every square of png shows what expected() says (options: the picture's query options). */
function assertBoard(png, fen, options = {}, label = fen) {
  const wrong = [];
  for (const want of expected(fen, options)) {
    const corners = sample(png, want.square, options, CORNERS);
    const centre = sample(png, want.square, options, CENTRE);
    if (corners.some((c) => c !== want.corners)) wrong.push(`${want.square} corners ${corners} (want ${want.corners})`);
    if (centre.some((c) => c !== want.centre)) wrong.push(`${want.square} centre ${centre} (want ${want.centre})`);
  }
  assert.deepEqual(wrong, [], `${label} ${JSON.stringify(options)}: squares drawn wrong:\n  ${wrong.join('\n  ')}`);
}

/** GET /v1/position as a picture: asserts 200 image/svg+xml and returns { svg, png }. */
async function picture(fen, params = {}, headers = { accept: 'image/svg+xml' }) {
  const query = new URLSearchParams({ fen, ...params }).toString();
  const res = await get(server, `/v1/position?${query}`, { headers });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('content-type'), 'image/svg+xml');
  assertSvgDocument(res.text, params.size ?? PICTURE.defaultSize);
  return { svg: res.text, png: render(res.text) };
}

function assertSvgDocument(svg, size) {
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" /);
  assert.match(svg, new RegExp(` width="${size}" height="${size}" viewBox="0 0 (800|880) \\1"`));
  assert.ok(svg.length < 32 * 1024, `a picture of ${svg.length} bytes`);
}

test('rsvg-convert is installed (Debian librsvg2-bin, in the Makefile\'s DEB_PACKAGES)', () => {
  assert.match(execFileSync('rsvg-convert', ['--version'], { encoding: 'utf8' }), /rsvg-convert/);
});

test('the palette this file samples against is the one openapi.yaml documents', () => {
  const described = spec().doc.components.schemas.BoardPicture.description.replace(/\s+/g, ' '); // as prose
  for (const [name, hex] of Object.entries(PICTURE.colors))
    assert.ok(described.includes(`\`${hex}\``), `BoardPicture does not document ${name} ${hex}`);
  assert.match(described, /square is 100 units/);
  assert.match(described, /40-unit frame/);
  assert.match(described, /radius 8 units/);
  assert.match(described, /10 units clear/);
  assert.match(described, new RegExp(`strip of ${PICTURE.strip} units`));
  assert.match(described, new RegExp(`one cell of ${PICTURE.stripCell} units`));
  assert.match(described, new RegExp(`radius ${PICTURE.checkRadius} units centred ${PICTURE.checkStep / 2}, `
    + `${PICTURE.checkStep * 1.5} and ${PICTURE.checkStep * 2.5} units`));
});

test('the start position: every piece on its square in its side\'s colour, every other square empty', async () => {
  const { png } = await picture(START_FEN);
  assert.equal(png.width, PICTURE.defaultSize);
  assert.equal(png.height, PICTURE.defaultSize);
  assertBoard(png, START_FEN);
});

test('a middlegame and an endgame, in both orientations, with and without coordinates', async () => {
  for (const fen of [KIWIPETE, ENDGAME])
    for (const orientation of ['white', 'black'])
      for (const coordinates of [true, false]) {
        const options = { orientation, coordinates };
        const { png } = await picture(fen, { orientation, coordinates: String(coordinates) });
        assertBoard(png, fen, options);
      }
});

test('the last move\'s squares are highlighted and a checked king marked; check=false leaves it plain', async () => {
  const lastmove = 'h5f7';
  assertBoard((await picture(ITALIAN_MATE, { lastmove })).png, ITALIAN_MATE, { lastmove });
  assertBoard((await picture(ITALIAN_MATE, { lastmove, check: 'false' })).png, ITALIAN_MATE, { lastmove, check: false });
  // Both marks are where the FEN puts them: the king on e8, the queen that mated on f7.
  const { png } = await picture(ITALIAN_MATE, { lastmove });
  assert.deepEqual(sample(png, 'e8', {}, CORNERS), Array(4).fill('check'));
  assert.deepEqual(sample(png, 'e8', {}, CENTRE), Array(5).fill('blackFill'));
  assert.deepEqual(sample(png, 'f7', {}, CORNERS), Array(4).fill('lastmoveLight'));
  assert.deepEqual(sample(png, 'h5', {}, CORNERS), Array(4).fill('lastmoveLight'));
  // Without lastmove nothing is highlighted.
  const plain = (await picture(START_FEN)).png;
  for (const square of SQUARES)
    assert.ok(!sample(plain, square, {}, CORNERS).some((c) => c.startsWith('lastmove') || c === 'check'), square);
});

test('a position after moves: the picture of the line\'s last position, its last move highlighted', async () => {
  const line = ['e4', 'd5', 'exd5', 'Qxd5', 'Nc3', 'Qa5', 'd4', 'c6', 'Nf3', 'Bg4', 'Bc4', 'e6', 'O-O'];
  const played = await post(server, '/v1/position/moves', { moves: line });
  assert.equal(played.status, 200, played.text);
  const fen = played.body.position.fen;
  const lastmove = played.body.moves.at(-1).uci;
  const chess = new Chess();
  for (const m of line) chess.move(m);
  assert.equal(fen, chess.fen(), 'chessd and chess.js agree on where the line ends');
  assert.equal(lastmove, 'e1g1');
  for (const orientation of ['white', 'black']) {
    const { png } = await picture(fen, { lastmove, orientation });
    assertBoard(png, fen, { lastmove, orientation });
  }
});

test('orientation black turns the board: a square\'s content moves to the mirrored pixel position', async () => {
  const fen = 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1';
  const white = (await picture(fen, { orientation: 'white' })).png;
  const black = (await picture(fen, { orientation: 'black' })).png;
  const size = PICTURE.defaultSize;
  // The top-left square is a8 (a black rook) for white, h1 (a white rook) for black.
  assert.deepEqual(sample(white, 'a8', {}, [[half, half]]), ['blackFill']);
  assert.deepEqual(sample(black, 'h1', { orientation: 'black' }, [[half, half]]), ['whiteFill']);
  const topLeft = (png) => colorName(pixel(png, Math.floor(squareBox('a8').x + half * squareBox('a8').scale),
    Math.floor(squareBox('a8').y + half * squareBox('a8').scale)));
  assert.equal(topLeft(white), 'blackFill');
  assert.equal(topLeft(black), 'whiteFill');
  // The pawn on e4: where white's picture shows it, black's shows it rotated by half a turn.
  const e4 = squareBox('e4');
  const [x, y] = [Math.floor(e4.x + half * e4.scale), Math.floor(e4.y + half * e4.scale)];
  assert.equal(colorName(pixel(white, x, y)), 'whiteFill');
  assert.equal(colorName(pixel(black, size - 1 - x, size - 1 - y)), 'whiteFill');
  assert.equal(colorName(pixel(black, x, y)), isLight('d5') ? 'light' : 'dark', 'black\'s picture has d5, empty, there');
});

test('size sets the picture\'s pixels; coordinates=false drops the frame', async () => {
  for (const size of [64, 200, 2048]) {
    const { png } = await picture(START_FEN, { size: String(size) });
    assert.equal(png.width, size);
    assert.equal(png.height, size);
  }
  const framed = (await picture(START_FEN, { size: '200' })).png;
  assert.equal(colorName(pixel(framed, 1, 1)), 'frame');
  assert.equal(colorName(pixel(framed, 198, 198)), 'frame');
  const bare = (await picture(START_FEN, { size: '200', coordinates: 'false' })).png;
  assert.equal(colorName(pixel(bare, 1, 1)), 'light', 'a8 reaches the corner');
  assert.equal(colorName(pixel(bare, 198, 198)), 'light', 'h1 reaches the corner');
  assertBoard((await picture(START_FEN, { size: '720', coordinates: 'false' })).png, START_FEN,
    { size: 720, coordinates: false });
});

test('the same request gives the same bytes', async () => {
  const first = await picture(KIWIPETE, { lastmove: 'e1g1', orientation: 'black' });
  const second = await picture(KIWIPETE, { lastmove: 'e1g1', orientation: 'black' });
  assert.equal(first.svg, second.svg);
});

test('format and Accept: SVG when asked for, JSON otherwise', async () => {
  const kind = async (path, headers) => {
    const res = await get(server, path, { headers });
    assert.equal(res.status, 200, res.text);
    return res.headers.get('content-type');
  };
  const path = `/v1/position?fen=${q(START_FEN)}`;
  assert.equal(await kind(`${path}&format=svg`, {}), 'image/svg+xml');
  assert.equal(await kind(`${path}&format=svg`, { accept: 'application/json' }), 'image/svg+xml');
  assert.equal(await kind(`${path}&format=json`, { accept: 'image/svg+xml' }), 'application/json');
  assert.equal(await kind(path, {}), 'application/json');
  const cases = [
    ['image/svg+xml', 'image/svg+xml'],
    ['image/*', 'image/svg+xml'],
    ['image/svg+xml, application/json', 'image/svg+xml'],
    ['application/json, image/svg+xml', 'application/json'],
    ['application/json;q=0.5, image/svg+xml', 'image/svg+xml'],
    ['image/svg+xml;q=0.5, application/json', 'application/json'],
    ['image/svg+xml;q=0', 'application/json'],
    // the more specific range decides (RFC 9110 12.5.1): image/* does not undo svg's q=0
    ['image/svg+xml;q=0, image/*', 'application/json'],
    ['image/*, image/svg+xml;q=0.1, application/json;q=0.5', 'application/json'],
    ['image/*;q=0.1, image/svg+xml, application/json;q=0.5', 'image/svg+xml'],
    ['text/plain, image/svg+xml', 'text/plain; charset=utf-8'],
    ['*/*', 'application/json'],
    ['image/png', 'application/json'],
    // what a browser asks for an <img src>
    ['image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', 'image/svg+xml'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'application/json'],
  ];
  for (const [accept, want] of cases) assert.equal(await kind(path, { accept }), want, `Accept: ${accept}`);
  // POST /v1/position stays JSON: it reads no picture parameters
  const posted = await post(server, '/v1/position', { fen: START_FEN }, { headers: { accept: 'image/svg+xml' } });
  assert.equal(posted.headers.get('content-type'), 'application/json');
});

test('bad picture parameters are 400 invalid_parameter, with no picture', async () => {
  const bad = {
    format: ['png', 'SVG', ''],
    orientation: ['up', 'White', ''],
    lastmove: ['e2e2', 'e2e9', 'Nf3', 'e2-e4', 'e7e8x', ''],
    check: ['maybe', ''],
    coordinates: ['yes', '2'],
    size: ['63', '2049', '0', '360px', '-1', '1e3', '99999999999999999999', ''],
  };
  for (const [name, values] of Object.entries(bad)) {
    for (const value of values) {
      const path = name === 'format'
        ? `/v1/position?fen=${q(START_FEN)}&format=${q(value)}`
        : `/v1/position?fen=${q(START_FEN)}&format=svg&${name}=${q(value)}`;
      const answer = await get(server, path, { headers: { accept: 'image/svg+xml' } });
      const problem = expectProblem(answer, 400, 'invalid_parameter');
      assert.ok(problem.detail.includes(`'${name}'`), `${name}=${value}: ${problem.detail}`);
      assert.ok(!answer.text.includes('<svg'), `${name}=${value}`);
    }
  }
  // A bad FEN is invalid_fen whatever the format; an unknown parameter is unknown_parameter.
  expectProblem(await get(server, `/v1/position?fen=${q('8/8/8/8/8/8/8/8 w - - 0 1')}&format=svg`), 400, 'invalid_fen');
  expectProblem(await get(server, `/v1/position?format=svg&flip=true`), 400, 'unknown_parameter');
  expectProblem(await get(server, `/v1/position?format=svg&size=100&size=200`), 400, 'invalid_parameter');
});

/** A new game (undo allowed) with its tokens and version. */
async function createGame() {
  const res = await post(server, '/v1/games', { takeback: 'free' });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version };
}

/** Plays (or, with what 'undo', takes back) for color; returns the change's answer. */
async function change(g, color, what, body) {
  const res = await post(server, `/v1/games/${g.id}/${what}`, { ...body, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens[color]}` } });
  assert.equal(res.status, 200, `${what} ${JSON.stringify(body)}: ${res.text}`);
  g.version = res.body.version;
  return res.body;
}

/** GET board.svg: asserts 200 with the game's version as ETag; returns { svg, png, etag }. */
async function board(g, params = {}, headers = {}) {
  const query = new URLSearchParams(params).toString();
  const res = await get(server, `/v1/games/${g.id}/board.svg${query ? `?${query}` : ''}`, { headers });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('content-type'), 'image/svg+xml');
  assert.equal(res.headers.get('etag'), `"${g.version}"`);
  assertSvgDocument(res.text, params.size ?? PICTURE.defaultSize);
  return { svg: res.text, png: render(res.text), etag: res.headers.get('etag') };
}

test('a game\'s board.svg: its position, its last move, check, undo; ETag the version, 304 while current', async () => {
  const g = await createGame();
  const chess = new Chess();
  const picture0 = await board(g);
  assertBoard(picture0.png, chess.fen());
  // 304 for the current version, 200 once the game has moved on
  const notModified = await get(server, `/v1/games/${g.id}/board.svg`, { headers: { 'if-none-match': picture0.etag } });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.text, '');
  assert.equal(notModified.headers.get('etag'), picture0.etag);
  const headOnly = await call(server, 'HEAD', `/v1/games/${g.id}/board.svg`);
  assert.equal(headOnly.status, 200);
  assert.equal(headOnly.headers.get('content-type'), 'image/svg+xml');
  assert.equal(headOnly.headers.get('etag'), picture0.etag);
  assert.equal(headOnly.text, '');
  const line = [['white', 'e4'], ['black', 'e5'], ['white', 'Qh5'], ['black', 'Nc6'], ['white', 'Bc4'], ['black', 'Nf6']];
  let lastmove;
  for (const [color, move] of line) {
    lastmove = (await change(g, color, 'moves', { move })).move.uci;
    chess.move(move);
  }
  const stale = await get(server, `/v1/games/${g.id}/board.svg`, { headers: { 'if-none-match': picture0.etag } });
  assert.equal(stale.status, 200);
  assert.equal(stale.headers.get('etag'), `"${g.version}"`);
  assertBoard((await board(g)).png, chess.fen(), { lastmove: 'g8f6' });
  assert.equal(lastmove, 'g8f6');
  // mate: the mating move highlighted, the mated king marked, in both orientations and sizes
  await change(g, 'white', 'moves', { move: 'Qxf7#' });
  chess.move('Qxf7#');
  assert.ok(chess.isCheckmate());
  for (const params of [{}, { orientation: 'black' }, { size: '600', coordinates: 'false' }]) {
    const options = { ...params, size: params.size ? Number(params.size) : undefined, lastmove: 'h5f7' };
    if (params.coordinates) options.coordinates = false;
    assertBoard((await board(g, params)).png, chess.fen(), options, `game after Qxf7# ${JSON.stringify(params)}`);
  }
  assertBoard((await board(g, { check: 'false' })).png, chess.fen(), { lastmove: 'h5f7', check: false });
});

test('board.svg after undo shows the move now last; before any move, none', async () => {
  const g = await createGame();
  const fresh = (await board(g)).png;
  for (const square of SQUARES)
    assert.ok(!sample(fresh, square, {}, CORNERS).some((c) => c.startsWith('lastmove')), square);
  await change(g, 'white', 'moves', { move: 'd4' });
  await change(g, 'black', 'moves', { move: 'Nf6' });
  await change(g, 'white', 'moves', { move: 'c4' });
  await change(g, 'white', 'undo', {});
  const chess = new Chess();
  chess.move('d4');
  chess.move('Nf6');
  assertBoard((await board(g)).png, chess.fen(), { lastmove: 'g8f6' });
});

test('board.svg refuses bad parameters, lastmove (the game\'s own) and unknown games', async () => {
  const g = await createGame();
  for (const [name, value] of [['orientation', 'sideways'], ['size', '10'], ['size', '4096'], ['check', 'no'],
    ['coordinates', 'maybe']]) {
    const res = await get(server, `/v1/games/${g.id}/board.svg?${name}=${value}`);
    expectProblem(res, 400, 'invalid_parameter');
    assert.ok(!res.text.includes('<svg'));
  }
  expectProblem(await get(server, `/v1/games/${g.id}/board.svg?lastmove=e2e4`), 400, 'unknown_parameter');
  expectProblem(await get(server, `/v1/games/${g.id}/board.svg?format=svg`), 400, 'unknown_parameter');
  expectProblem(await get(server, '/v1/games/AAAAAAAAAAAAAAAA/board.svg'), 404, 'game_not_found');
  expectProblem(await get(server, '/v1/games/not-an-id/board.svg'), 404, 'game_not_found');
  const wrongMethod = await post(server, `/v1/games/${g.id}/board.svg`, {});
  expectProblem(wrongMethod, 405, 'method_not_allowed');
  assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD');
});

// --- the variants ---

/** GET /v1/position?variant=...&format=svg: asserts 200 and the taller viewBox when strips; returns { svg, png }. */
async function variantPicture(variant, fen, params = {}, { strips = true } = {}) {
  const query = new URLSearchParams({ variant, ...(fen ? { fen } : {}), format: 'svg', ...params }).toString();
  const res = await get(server, `/v1/position?${query}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('content-type'), 'image/svg+xml');
  assertVariantDocument(res.text, params, strips);
  return { svg: res.text, png: render(res.text) };
}

/** The document's size and viewBox: the board's, 200 units taller with strips, the height in proportion. */
function assertVariantDocument(svg, params, strips) {
  const size = Number(params.size ?? PICTURE.defaultSize);
  const width = 8 * PICTURE.square + (params.coordinates === 'false' ? 0 : 2 * PICTURE.margin);
  const height = width + (strips ? 2 * PICTURE.strip : 0);
  const pixels = Math.round((size * height) / width);
  assert.match(svg, new RegExp(`^<svg [^>]* width="${size}" height="${pixels}" viewBox="0 0 ${width} ${height}">`));
  assert.ok(svg.length < 32 * 1024, `a picture of ${svg.length} bytes`);
}

/**
 * Where a strip is drawn, in pixels: x of its first cell (the board's left
 * edge), its top, and pixels per unit. top: the strip above the board.
 */
function stripBox({ top, coordinates = true, size = PICTURE.defaultSize }) {
  const margin = coordinates ? PICTURE.margin : 0;
  const extent = 8 * PICTURE.square + 2 * margin;
  const scale = size / extent;
  return { x: margin * scale, y: (top ? 0 : PICTURE.strip + extent) * scale, scale };
}

/** The colour names at points of a strip's cell (viewBox units from the cell's top-left corner). */
function sampleCell(png, cell, options, points) {
  const box = stripBox(options);
  const x0 = box.x + cell * PICTURE.stripCell * box.scale;
  return points.map(([u, v]) => colorName(pixel(png, Math.floor(x0 + u * box.scale), Math.floor(box.y + v * box.scale))));
}

/**
 * The count written in a cell, as a mask: the pixels of the cell's last 60
 * units that are not the strip's colour ('' when none), one line a row.
 */
function countGlyph(png, cell, options) {
  const box = stripBox(options);
  const x0 = Math.round(box.x + (cell * PICTURE.stripCell + PICTURE.square) * box.scale);
  const width = Math.round((PICTURE.stripCell - PICTURE.square) * box.scale);
  const [y0, height] = [Math.round(box.y), Math.round(PICTURE.strip * box.scale)];
  const strip = rgb(PICTURE.colors.strip);
  const rows = [];
  let inked = 0;
  for (let y = y0; y < y0 + height; y++) {
    let row = '';
    for (let x = x0; x < x0 + width; x++) {
      const p = pixel(png, x, y);
      const ink = p.slice(0, 3).some((c, k) => Math.abs(c - strip[k]) > 40);
      inked += ink;
      row += ink ? '#' : '.';
    }
    rows.push(row);
  }
  return inked ? rows.join('\n') : '';
}

const S_CHESS_PIECES = 'rnbqkbnr/pppppppp/3he3/8/8/3HE3/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1';

test('standard pictures keep their bytes (tests/data/board_svg, written before the variants drew anything)', async () => {
  const kept = [
    ['start.svg', { fen: START_FEN }],
    ['kiwipete_black_bare_720_e1g1.svg',
      { fen: KIWIPETE, orientation: 'black', coordinates: 'false', size: '720', lastmove: 'e1g1' }],
    ['italian_mate_h5f7.svg', { fen: ITALIAN_MATE, lastmove: 'h5f7' }],
  ];
  for (const [file, params] of kept) {
    const want = readFileSync(path.join(REPO_ROOT, 'tests/data/board_svg', file), 'utf8');
    const res = await get(server, `/v1/position?${new URLSearchParams({ ...params, format: 'svg' })}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, want, `${file}: the standard picture changed`);
  }
  // variants with nothing beside the board draw standard chess's picture
  const atomic = await get(server, '/v1/position?variant=atomic&format=svg');
  assert.equal(atomic.text, readFileSync(path.join(REPO_ROOT, 'tests/data/board_svg/start.svg'), 'utf8'));
  for (const variant of ['antichess', 'kingOfTheHill', 'horde', 'racingKings'])
    await variantPicture(variant, null, {}, { strips: false });
});

test('the Hawk and the Elephant: drawn by the contract, apart from the bishop, knight and rook where they differ', async () => {
  const options = { coordinates: false, size: 800, strips: true, variant: 'seirawan', check: false };
  const { png } = await variantPicture('seirawan', S_CHESS_PIECES, { coordinates: 'false', size: '800' });
  assertBoard(png, S_CHESS_PIECES, options); // centres filled, corners clear, for H and E too
  const where = { R: 'a1', N: 'b1', B: 'c1', Q: 'd1', K: 'e1', P: 'a2', H: 'd3', E: 'e3',
    r: 'a8', n: 'b8', b: 'c8', h: 'd6', e: 'e6' };
  const at = (piece, point) => sample(png, where[piece], options, [point])[0];
  const fill = (piece) => (piece === piece.toUpperCase() ? 'whiteFill' : 'blackFill');
  const ground = (piece) => (isLight(where[piece]) ? 'light' : 'dark');
  // Points (viewBox units in a square) where one shape has its fill and the other none.
  const differences = [
    ['the Hawk\'s beak', [78, 37], 'H', ['B', 'N', 'R']],
    ['the knight\'s muzzle', [25, 54], 'N', ['H']],
    ['the rook\'s battlement', [31, 18], 'R', ['H']],
    ['the Elephant\'s left ear', [20, 52], 'E', ['R', 'B']],
    ['the Elephant\'s right ear', [81, 54], 'E', ['R', 'B', 'N']],
  ];
  for (const white of [true, false]) {
    const side = (p) => (white ? p : p.toLowerCase());
    for (const [name, point, has, lacks] of differences) {
      if (!where[side(has)] || lacks.some((p) => !where[side(p)])) continue; // black's set here is r n b h e
      assert.equal(at(side(has), point), fill(side(has)), `${name}: ${side(has)} fills ${point}`);
      for (const other of lacks.map(side))
        assert.equal(at(other, point), ground(other), `${name}: ${other} leaves ${point} to its square`);
    }
  }
  // At a glance: the share of a square where two shapes differ (one drawn, the
  // other bare) is at least that of the closest standard pair, bishop and pawn.
  const drawn = (piece) => {
    const box = squareBox(where[piece], options);
    const bare = rgb(PICTURE.colors[ground(piece)]);
    const mask = [];
    for (let v = 0; v < 100; v++)
      for (let u = 0; u < 100; u++) {
        const p = pixel(png, Math.floor(box.x + u * box.scale), Math.floor(box.y + v * box.scale));
        mask.push(p.slice(0, 3).some((c, k) => Math.abs(c - bare[k]) > TOLERANCE));
      }
    return mask;
  };
  const apart = (a, b) => {
    const [x, y] = [drawn(a), drawn(b)];
    return x.filter((d, i) => d !== y[i]).length / x.length;
  };
  const closest = apart('B', 'P');
  for (const piece of ['H', 'E'])
    for (const other of ['P', 'N', 'B', 'R', 'Q', 'K', piece === 'H' ? 'E' : 'H'])
      assert.ok(apart(piece, other) >= closest, `${piece} and ${other} differ on ${(100 * apart(piece, other)).toFixed(1)}% `
        + `of a square, less than bishop and pawn's ${(100 * closest).toFixed(1)}%`);
});

test('a crazyhouse pocket: each side\'s pieces in its strip, counts drawn, in both orientations', async () => {
  // White holds P P N R R, Black b x12 and q
  const fen = 'r1bqk2r/pppp1ppp/2n2n2/4p3/1bB1P3/2N2N2/PPPP1PPP/R1BQK2R[PPNRRqbbbbbbbbbbbb] w KQkq - 0 5';
  const held = { white: [2, 1, 0, 2, 0], black: [0, 0, 12, 0, 1] }; // P N B R Q
  for (const orientation of ['white', 'black'])
    for (const coordinates of [true, false]) {
      const params = { orientation, coordinates: String(coordinates), size: '880' };
      const { png } = await variantPicture('crazyhouse', fen, params);
      const options = { orientation, coordinates, size: 880, strips: true, variant: 'crazyhouse' };
      assertBoard(png, fen, options);
      const label = JSON.stringify(params);
      for (const side of ['white', 'black']) {
        const top = (side === 'black') === (orientation === 'white');
        const glyphs = held[side].map((n, cell) => {
          const centre = sampleCell(png, cell, { top, coordinates, size: 880 }, CENTRE);
          const corners = sampleCell(png, cell, { top, coordinates, size: 880 }, CORNERS);
          assert.deepEqual(centre, Array(5).fill(n ? `${side}Fill` : 'strip'), `${side}'s cell ${cell} ${label}`);
          assert.deepEqual(corners, Array(4).fill('strip'), `${side}'s cell ${cell} corners ${label}`);
          const glyph = countGlyph(png, cell, { top, coordinates, size: 880 });
          assert.equal(glyph === '', n === 0, `${side}'s cell ${cell}: a count drawn only for pieces held ${label}`);
          return glyph;
        });
        if (side === 'white') {
          assert.equal(glyphs[0], glyphs[3], 'two pawns, two rooks: the same "2"');
          assert.notEqual(glyphs[0], glyphs[1], '"2" is not "1"');
        } else {
          assert.notEqual(glyphs[2], glyphs[4], '"12" is not "1"');
        }
      }
      // the "1" of White's knight is the "1" of Black's queen, in the other strip
      const whiteTop = orientation === 'black';
      assert.equal(countGlyph(png, 1, { top: whiteTop, coordinates, size: 880 }),
        countGlyph(png, 4, { top: !whiteTop, coordinates, size: 880 }));
      // the count is the strip's ink
      const box = stripBox({ top: whiteTop, coordinates, size: 880 });
      let ink = 0;
      for (let y = Math.round(box.y); y < Math.round(box.y + 100 * box.scale); y++)
        for (let x = Math.round(box.x + 100 * box.scale); x < Math.round(box.x + 160 * box.scale); x++)
          ink += colorName(pixel(png, x, y)) === 'stripInk';
      assert.ok(ink > 50, `white's "2" has ${ink} pixels of ink`);
    }
});

test('S-chess reserves: the Hawk and the Elephant in each strip until gated', async () => {
  const start = await variantPicture('seirawan', null, {});
  for (const [side, top] of [['black', true], ['white', false]])
    for (const [cell, want] of [[0, `${side}Fill`], [1, `${side}Fill`], [2, 'strip'], [3, 'strip']])
      assert.deepEqual(sampleCell(start.png, cell, { top }, CENTRE), Array(5).fill(want), `${side}'s cell ${cell}`);
  // White gates the Hawk on g1 as the knight leaves it: only the Elephant stays in reserve
  const played = await post(server, '/v1/position/moves', { variant: 'seirawan', moves: ['e2e4', 'e7e5', 'g1f3h'] });
  assert.equal(played.status, 200, played.text);
  const fen = played.body.position.fen;
  const { png } = await variantPicture('seirawan', fen, { lastmove: 'g1f3h' });
  const options = { strips: true, variant: 'seirawan', lastmove: 'g1f3' };
  assertBoard(png, fen, options);
  assert.deepEqual(sampleCell(png, 0, { top: false }, CENTRE), Array(5).fill('strip'), 'the Hawk left the reserve');
  assert.deepEqual(sampleCell(png, 1, { top: false }, CENTRE), Array(5).fill('whiteFill'), 'the Elephant is still there');
  assert.deepEqual(sample(png, 'g1', options, [[78, 37]]), ['whiteFill'], 'the Hawk\'s beak on g1');
});

test('three-check: each side\'s checks given as filled discs in its strip', async () => {
  // X-FEN's checks remaining, 1+2: White has given 2, Black 1
  const fen = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 1+2 0 1';
  for (const orientation of ['white', 'black']) {
    const { png } = await variantPicture('threeCheck', fen, { orientation });
    assertBoard(png, fen, { orientation, strips: true, variant: 'threeCheck' });
    for (const [side, given] of [['white', 2], ['black', 1]]) {
      const box = stripBox({ top: (side === 'black') === (orientation === 'white') });
      for (let i = 0; i < 3; i++) {
        const [cx, cy] = [PICTURE.checkStep / 2 + i * PICTURE.checkStep, PICTURE.strip / 2];
        const quarter = PICTURE.checkRadius / 2; // inside the disc, off its '+'
        const seen = colorName(pixel(png, Math.floor(box.x + (cx + quarter) * box.scale),
          Math.floor(box.y + (cy + quarter) * box.scale)));
        assert.equal(seen, i < given ? 'check' : 'strip', `${side}'s disc ${i} (${orientation} below)`);
      }
    }
  }
  const start = await variantPicture('threeCheck', null, { coordinates: 'false' });
  const box = stripBox({ top: true, coordinates: false });
  const inside = pixel(start.png, Math.floor(box.x + 41 * box.scale), Math.floor(box.y + 61 * box.scale));
  assert.equal(colorName(inside), 'strip', 'a check not given: the disc empty');
});

test('a crazyhouse game\'s board.svg: the pockets as captures fill them, a drop\'s square highlighted', async () => {
  const created = await post(server, '/v1/games', { variant: 'crazyhouse' });
  assert.equal(created.status, 201, created.text);
  const g = { id: created.body.id, tokens: created.body.tokens, version: created.body.version };
  for (const [color, move] of [['white', 'e4'], ['black', 'd5'], ['white', 'exd5'], ['black', 'Qxd5'], ['white', 'P@e6']])
    await change(g, color, 'moves', { move });
  const game = await get(server, `/v1/games/${g.id}`);
  const fen = game.body.position.fen;
  assert.match(fen, /\[p\]/, 'black holds the pawn it took; white dropped its own');
  const res = await get(server, `/v1/games/${g.id}/board.svg`);
  assert.equal(res.status, 200, res.text);
  assertVariantDocument(res.text, {}, true);
  const png = render(res.text);
  assertBoard(png, fen, { strips: true, variant: 'crazyhouse', lastmove: 'P@e6' });
  assert.deepEqual(sampleCell(png, 0, { top: true }, CENTRE), Array(5).fill('blackFill'), 'black\'s pawn');
  assert.deepEqual(sampleCell(png, 0, { top: false }, CENTRE), Array(5).fill('strip'), 'white\'s pawn was dropped');
  // lastmove in a position picture: a drop's one square
  const drop = await variantPicture('crazyhouse', fen, { lastmove: 'P@e6' });
  assert.equal(drop.svg, res.text);
});
