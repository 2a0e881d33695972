// POST /v1/pgn's annotated game trees (variations, comments, NAGs, [%clk] [%emt] [%eval] [%csl] [%cal])
// against chessops's parsePgn + parseComment on seeded random PGN (PGN_TREE_SEED overrides the seed),
// and on Lichess, chess.com and ChessBase shaped fixtures; FailedGame's path, line and column for an
// illegal move in a variation; PGN written back (Accept: application/x-chess-pgn) read to the same
// trees by chessops and chessd and byte-stable when written again; ?strict=true's problems as before.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Chess } from 'chessops/chess';
import { makeFen, parseFen } from 'chessops/fen';
import { makeSan, parseSan } from 'chessops/san';
import { makeUci } from 'chessops/util';
import { parsePgn, parseComment, emptyHeaders, startingPosition } from 'chessops/pgn';
import { startServer } from './server.mjs';
import { call, expectProblem } from './http.mjs';
import { prng } from './prng.mjs';
import { chess960Rank, legalMoves } from './random_chess.mjs';

const SEED = Number(process.env.PGN_TREE_SEED ?? 20261207);
const GAMES = Number(process.env.PGN_TREE_GAMES ?? 100);
const BATCH_CHARS = 36000; // a batch, and the PGN written back from it, stay well under the 64 KiB body cap
const MAX_DEPTH = 4; // variations nested at most this deep
const ROSTER = ['Event', 'Site', 'Date', 'Round', 'White', 'Black', 'Result'];
const PGN = 'application/x-chess-pgn';

// --- the generator ---

/** A random legal move, preferring promotions and castling when there are some (they are rare otherwise). */
function randomMove(rnd, pos) {
  const moves = legalMoves(pos);
  const special = moves.filter(([san]) => san.includes('=') || san.startsWith('O-O'));
  return special.length && rnd.chance(0.5) ? rnd.pick(special) : rnd.pick(moves);
}

/** A random legal mainline: { fen or null, variant or null, moves (SAN), final position }. */
function randomGame(rnd) {
  let pos = Chess.default();
  let fen = null;
  let variant = null;
  const kind = rnd.int(10);
  if (kind === 0) {
    const rank = chess960Rank(rnd);
    fen = `${rank}/pppppppp/8/8/8/8/PPPPPPPP/${rank.toUpperCase()} w KQkq - 0 1`;
    variant = rnd.pick(['Chess960', 'chess 960', 'fischerandom']);
    pos = Chess.fromSetup(parseFen(fen).unwrap()).unwrap();
  } else if (kind <= 2) { // from a FEN somewhere into a game
    for (let i = rnd.int(30) + 1; i > 0 && !pos.isEnd(); i--) pos.play(randomMove(rnd, pos)[1]);
    if (pos.isEnd()) pos = Chess.default();
    fen = makeFen(pos.toSetup());
  }
  const seen = new Map();
  const moves = [];
  const plies = rnd.chance(0.1) ? 160 : rnd.int(70);
  for (let i = 0; i < plies && !pos.isEnd(); i++) {
    const key = makeFen(pos.toSetup()).split(' ').slice(0, 4).join(' ');
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (seen.get(key) >= 3 || pos.halfmoves >= 100) break; // well before fivefold and the 75-move rule
    const [san, move] = randomMove(rnd, pos);
    moves.push(san);
    pos.play(move);
  }
  return { fen, variant, moves, final: pos };
}

/**
 * A move that no piece of pos can make and that is not ambiguous either, so chessd must call it
 * illegal_move (and chessops's tokenizer reads it as a move): a piece to a square none of that kind
 * reaches, or a pawn push no pawn makes. Undefined when the tries found none.
 */
function illegalSan(rnd, pos) {
  const legal = legalMoves(pos).map(([, m]) => m);
  for (let tries = 0; tries < 50; tries++) {
    const role = rnd.pick(['king', 'queen', 'rook', 'bishop', 'knight', 'pawn']);
    const to = rnd.int(64);
    if (role === 'pawn' && (to >> 3 === 0 || to >> 3 === 7)) continue;
    const reaches = legal.some((m) => pos.board.get(m.from).role === role && m.to === to);
    const occupied = pos.board.get(to);
    if (reaches || (role === 'pawn' && occupied)) continue;
    const square = 'abcdefgh'[to & 7] + (1 + (to >> 3));
    const san = role === 'pawn' ? square : 'KQRBN'['king queen rook bishop knight'.split(' ').indexOf(role)] + square;
    if (!parseSan(pos, san)) return san;
  }
  return undefined;
}

const digits = (rnd, n) => Array.from({ length: n }, () => rnd.int(10)).join('');
const pad2 = (rnd, n) => (rnd.chance(0.1) ? String(n) : String(n).padStart(2, '0'));
const squareName = (rnd) => 'abcdefgh'[rnd.int(8)] + (1 + rnd.int(8));

/** h:mm:ss(.f{1,3}) as [%clk] and [%emt] take it, sometimes with one-digit minutes or seconds. */
function clockText(rnd) {
  const hours = rnd.chance(0.85) ? rnd.int(3) : rnd.int(1000);
  const frac = rnd.chance(0.3) ? '.' + digits(rnd, 1 + rnd.int(3)) : '';
  return `${hours}:${pad2(rnd, rnd.int(60))}:${pad2(rnd, rnd.int(60))}${frac}`;
}

function evalText(rnd) {
  const sign = rnd.pick(['', '', '+', '-', '-']);
  const depth = rnd.chance(0.3) ? `,${rnd.int(60)}` : '';
  if (rnd.chance(0.2)) return `#${sign}${1 + rnd.int(30)}${depth}`;
  const whole = rnd.chance(0.1) ? rnd.int(400) : rnd.int(6);
  const value = rnd.pick([`${whole}.${digits(rnd, 2)}`, `${whole}.${digits(rnd, 1)}`, `${whole}`, `.${digits(rnd, 1)}`]);
  return `${sign}${value}${depth}`;
}

const COLOURS = 'GRYB';
/** Shapes for [%csl] (mostly squares) or [%cal] (mostly arrows); from == to now and then. */
function shapesText(rnd, arrows) {
  return Array.from({ length: 1 + rnd.int(3) }, () => {
    const colour = rnd.pick([...COLOURS]);
    const from = squareName(rnd);
    const asArrow = arrows ? rnd.chance(0.85) : rnd.chance(0.15);
    if (!asArrow) return colour + from;
    return colour + from + (rnd.chance(0.1) ? from : squareName(rnd));
  }).join(',');
}

// Words of comment text: no braces; move-like, result-like and bracket noise; commands chessops does not
// read (they stay in the text: unknown names, bad values, two spaces after the name).
const WORDS = ['good', 'Nf3!', 'é', 'x', '1-0', '(', ')', '$1', ';', 'a "b"', 'idea:', '♞', '0-0', '...', '[', ']',
  'e4', '*', '%', 'Best move was O-O.', '(0.30 → -0.25)'];
const NOISE = ['[%timestamp 15]', '[%evp 0,12,30]', '[%mdl 8192]', '[%clk 1:2]', '[%eval abc]', '[%csl Xe4]',
  '[%cal Ge2e9]', '[%clk  0:00:01]', '[%emt 0:0]', '[%eval #]', '[%csl]'];
const SEPARATORS_IN_COMMENTS = [' ', ' ', ' ', '', '  ', '\n', '\t', '\r\n'];

/**
 * The text of one comment (without braces). commands: which of clk emt eval shapes it may carry.
 * No blank or whitespace-only line inside (chessops would end nothing there, but a reader might), no
 * line starting with '%', no lone CR.
 */
function commentBody(rnd, commands = {}) {
  const parts = [];
  for (let i = rnd.int(4); i > 0; i--) parts.push(rnd.chance(0.1) ? rnd.pick(NOISE) : rnd.pick(WORDS));
  const insert = (s) => parts.splice(rnd.int(parts.length + 1), 0, s);
  if (commands.clk) insert(`[%clk ${clockText(rnd)}]`);
  if (commands.emt) insert(`[%emt ${clockText(rnd)}]`);
  if (commands.eval) insert(`[%eval ${evalText(rnd)}]`);
  if (commands.csl) insert(`[%csl ${shapesText(rnd, false)}]`);
  if (commands.cal) insert(`[%cal ${shapesText(rnd, true)}]`);
  let text = '';
  for (const part of parts) text += (text === '' ? '' : rnd.pick(SEPARATORS_IN_COMMENTS)) + part;
  if (rnd.chance(0.2)) text = rnd.pick([' ', '\n', '  ']) + text;
  if (rnd.chance(0.2)) text += rnd.pick([' ', '\n', '\t']);
  for (let old = ''; old !== text;) { old = text; text = text.replace(/\n[ \t\r]*\n/g, '\n'); }
  return text.replace(/\n%/g, '\n %');
}

/** Comments after a move: 1-3, the commands spread over them (clk/emt/eval may repeat: the last one wins). */
function moveComments(rnd) {
  const n = 1 + (rnd.chance(0.3) ? rnd.int(3) : 0);
  const shapesIn = rnd.int(n); // shapes in one comment of the move only (see the report on "last one wins")
  return Array.from({ length: n }, (_, i) => commentBody(rnd, {
    clk: rnd.chance(0.4), emt: rnd.chance(0.15), eval: rnd.chance(0.35),
    csl: i === shapesIn && rnd.chance(0.25), cal: i === shapesIn && rnd.chance(0.25),
  }));
}

const SUFFIXES = ['!', '?', '!!', '??', '!?', '?!'];

/**
 * Writes the tokens of one line (the mainline when sans is given, else a random variation) from pos at
 * ply into g.tokens; g.illegal asks for one illegal move somewhere in a variation, and g.illegalToken
 * is the index of its token once written.
 */
function writeLine(rnd, g, startPos, ply, depth, sans) {
  const pos = startPos.clone();
  let needNumber = true;
  const length = sans ? sans.length : 1 + rnd.int(depth >= 3 ? 3 : 6);
  for (let i = 0; i < length; i++) {
    if (!sans && pos.isEnd()) break;
    const number = Math.floor(ply / 2) + 1;
    if (!sans && g.illegal && g.illegalToken === undefined && rnd.chance(0.25)) {
      const bad = illegalSan(rnd, pos);
      if (bad) {
        if (ply % 2 === 0 || needNumber) g.tokens.push(`${number}${ply % 2 === 0 ? '.' : '...'}`);
        g.illegalToken = g.tokens.length;
        g.tokens.push(bad);
        return;
      }
    }
    const [san, move] = sans ? [sans[i], parseSan(pos, sans[i])] : randomMove(rnd, pos);
    const written = rnd.chance(0.1) ? san.replace(/O/g, '0') : rnd.chance(0.1) ? san.replace(/[+#]$/, '') : san;
    const suffix = rnd.chance(0.1) ? rnd.pick(SUFFIXES) : '';
    if (ply % 2 === 0) {
      if (rnd.chance(0.2)) g.tokens.push(`${number}.${written}${suffix}`);
      else g.tokens.push(`${number}.`, written + suffix);
    } else if (needNumber && rnd.chance(0.3)) {
      g.tokens.push(`${number}...${written}${suffix}`);
    } else {
      if (needNumber) g.tokens.push(`${number}...`);
      g.tokens.push(written + suffix);
    }
    needNumber = false;
    if (rnd.chance(0.1)) {
      for (let k = 1 + rnd.int(2); k > 0; k--) g.tokens.push(`$${1 + rnd.int(255)}`);
      needNumber = true;
    }
    if (rnd.chance(sans ? 0.3 : 0.15)) {
      for (const c of moveComments(rnd)) g.tokens.push(`{${c}}`);
      needNumber = true;
      if (rnd.chance(0.1)) g.tokens.push(`$${1 + rnd.int(255)}`); // a NAG after the comment: still this move's
    }
    const chance = [0.12, 0.2, 0.15, 0.1][depth] ?? 0;
    if (depth < MAX_DEPTH && rnd.chance(chance)) {
      for (let v = rnd.chance(0.25) ? 2 + rnd.int(2) : 1; v > 0; v--) {
        g.tokens.push('(');
        if (rnd.chance(0.2)) for (let k = 1 + rnd.int(2); k > 0; k--) g.tokens.push(`{${commentBody(rnd)}}`);
        writeLine(rnd, g, pos, ply, depth + 1, null);
        g.tokens.push(')');
      }
      needNumber = true;
      // a comment after ')' belongs to this move (the last one of the enclosing line)
      if (rnd.chance(0.15)) g.tokens.push(`{${commentBody(rnd, { clk: rnd.chance(0.3) })}}`);
    }
    pos.play(move);
    ply++;
  }
}

const JOINS = [' ', ' ', ' ', '  ', '\t', '\n', '\r\n', ' \t '];

/** Joins tokens with odd whitespace, never making a blank line; the offset of token `mark` too. */
function joinTokens(rnd, tokens, mark) {
  let out = '';
  let markOffset;
  tokens.forEach((t, i) => {
    if (out !== '') out += rnd.pick(JOINS);
    if (i === mark) markOffset = out.length;
    out += t;
  });
  return { text: out, markOffset };
}

const TAG_ALPHABET = [...'abcXYZ 019.-?', '"', '\\', 'é', '♞'];
const escapeTag = (value) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"');

/** One game as PGN: { text, tagsGiven, illegalOffset (in text) when it has an illegal move in a variation }. */
function writeGame(rnd, game) {
  const startPos = game.fen ? Chess.fromSetup(parseFen(game.fen).unwrap()).unwrap() : Chess.default();
  const forced = game.final.isCheckmate() ? (game.final.turn === 'white' ? '0-1' : '1-0')
    : game.final.isEnd() ? '1/2-1/2' : null;
  const result = rnd.chance(0.2) ? '*' : forced ?? rnd.pick(['1-0', '0-1', '1/2-1/2', '*']);
  const tags = [];
  for (const name of ['Event', 'Site', 'Date', 'Round', 'White', 'Black']) {
    if (rnd.chance(0.7)) tags.push([name, rnd.str(TAG_ALPHABET, 12)]);
  }
  if (rnd.chance(0.8)) tags.push(['Result', result]);
  if (rnd.chance(0.3)) tags.push(['Annotator', rnd.str(TAG_ALPHABET, 20)]);
  if (game.variant) tags.push(['Variant', game.variant]);
  if (game.fen) {
    if (rnd.chance(0.8)) tags.push(['SetUp', '1']);
    tags.push(['FEN', game.fen]);
  }
  if (rnd.chance(0.3)) tags.push(['WhiteElo', String(1000 + rnd.int(1800))]);
  if (rnd.chance(0.5)) { // the roster out of its order, and custom tags among it
    for (let i = tags.length - 1; i > 0; i--) {
      const j = rnd.int(i + 1);
      [tags[i], tags[j]] = [tags[j], tags[i]];
    }
  }
  let head = '';
  for (const [name, value] of tags) head += `[${name} "${escapeTag(value)}"]${rnd.pick(['\n', '\r\n'])}`;
  if (tags.length) head += rnd.pick(['\n', '\r\n']);

  const g = { tokens: [], illegal: rnd.chance(0.12), illegalToken: undefined };
  if (rnd.chance(0.25)) for (let k = 1 + rnd.int(2); k > 0; k--) g.tokens.push(`{${commentBody(rnd)}}`);
  const ply = (startPos.fullmoves - 1) * 2 + (startPos.turn === 'white' ? 0 : 1);
  writeLine(rnd, g, startPos, ply, 0, game.moves);
  g.tokens.push(result);
  const { text, markOffset } = joinTokens(rnd, g.tokens, g.illegalToken);
  return {
    text: head + text,
    tagsGiven: tags,
    illegalOffset: markOffset === undefined ? undefined : head.length + markOffset,
  };
}

// --- the oracle: chessops's tree in the contract's terms ---

/** 1-based line and column (characters, tabs one, CRLF one line end) of offset in text. */
function lineColumn(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}

const texts = (comments) => (comments ?? []).map((c) => parseComment(c).text).filter((t) => t !== '');
const SQUARE = (s) => 'abcdefgh'[s & 7] + (1 + (s >> 3));

class Illegal extends Error {
  constructor(path, san, fen) { super(`illegal ${san} at ${JSON.stringify(path)} in ${fen}`); this.path = path; this.san = san; }
}

/** One chessops node played on pos (mutated): the contract's Node without variations. */
function playNode(data, pos, path, chess960) {
  const move = parseSan(pos, data.san);
  if (!move) throw new Illegal(path, data.san, makeFen(pos.toSetup()));
  const san = makeSan(pos, move);
  let uci = makeUci(move);
  if (!chess960 && san.startsWith('O-O')) { // chessops writes castling king-takes-rook, chessd king two squares
    uci = uci.slice(0, 2) + (san.startsWith('O-O-O') ? 'c' : 'g') + uci[3];
  }
  pos.play(move);
  const node = { uci, san, fen: makeFen(pos.toSetup()) };
  const before = texts(data.startingComments);
  if (before.length) node.comments_before = before;
  const after = texts(data.comments);
  if (after.length) node.comments = after;
  if (data.nags?.length) node.nags = [...data.nags];
  let clock, emt, evaluation, shapes;
  for (const c of data.comments ?? []) { // the last comment with a command wins
    const parsed = parseComment(c);
    if (parsed.clock !== undefined) clock = parsed.clock;
    if (parsed.emt !== undefined) emt = parsed.emt;
    if (parsed.evaluation) evaluation = parsed.evaluation;
    if (parsed.shapes.length) shapes = parsed.shapes;
  }
  if (clock !== undefined) node.clock_ms = Math.round(clock * 1000);
  if (emt !== undefined) node.emt_ms = Math.round(emt * 1000);
  if (evaluation) {
    node.eval = 'mate' in evaluation ? { mate: evaluation.mate } : { cp: Math.round(evaluation.pawns * 100) || 0 };
    if (evaluation.depth !== undefined) node.eval.depth = evaluation.depth;
  }
  if (shapes) {
    const arrows = shapes.filter((s) => s.from !== s.to).map((s) => ({ color: s.color, from: SQUARE(s.from), to: SQUARE(s.to) }));
    const squares = shapes.filter((s) => s.from === s.to).map((s) => ({ color: s.color, square: SQUARE(s.to) }));
    if (arrows.length) node.arrows = arrows;
    if (squares.length) node.squares = squares;
  }
  return node;
}

/** The line from parent on (children[0] each time; the other children are variations of children[0]). */
function convertLine(parent, pos, path, chess960) {
  const out = [];
  let node = parent;
  for (let i = 0; node.children.length; i++) {
    const [main, ...alts] = node.children;
    const before = pos.clone();
    const n = playNode(main.data, pos, [...path, i], chess960);
    if (alts.length) {
      n.variations = alts.map((alt, v) => convertLine({ children: [alt] }, before.clone(), [...path, i, v], chess960));
    }
    out.push(n);
    node = main;
  }
  return out;
}

/**
 * What the contract says chessd answers for one game chessops read: a Game, or a FailedGame (without
 * line/column: the caller knows where the bad move is). tagsGiven: the tags written (chessops copies a
 * result token into Result).
 */
function oracle(cg, index, tagsGiven) {
  const headers = new Map(cg.headers);
  if (tagsGiven && !tagsGiven.some(([name]) => name === 'Result')) headers.delete('Result');
  const tags = Object.fromEntries(headers);
  const start = startingPosition(cg.headers).unwrap();
  const chess960 = /960|fischer/i.test(cg.headers.get('Variant') ?? '');
  const pos = start.clone();
  let moves;
  try {
    moves = convertLine(cg.moves, pos, [], chess960);
  } catch (err) {
    if (!(err instanceof Illegal)) throw err;
    return { failed: true, index, tags, path: err.path, san: err.san };
  }
  const game = {
    index, tags, moves, initial_fen: makeFen(start.toSetup()), chess960, variant: 'standard',
    position: {
      fen: makeFen(pos.toSetup()),
      status: pos.isCheckmate() ? 'checkmate' : pos.isStalemate() ? 'stalemate' : pos.isInsufficientMaterial() ? 'draw' : 'active',
    },
    result: cg.headers.get('Result') ?? '*',
  };
  const comments = texts(cg.comments);
  if (comments.length) game.comments = comments;
  return game;
}

/** The first place where got differs from want ("" when none), as a path and both values. */
function firstDiff(got, want, path = '$') {
  if (Object.is(got, want)) return '';
  if (typeof got !== 'object' || typeof want !== 'object' || got === null || want === null
    || Array.isArray(got) !== Array.isArray(want)) {
    return `${path}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
  }
  if (Array.isArray(want) && got.length !== want.length) {
    const i = Math.min(got.length, want.length);
    const inner = i < Math.max(got.length, want.length) ? firstDiff(got[i], want[i], `${path}[${i}]`) : '';
    return `${path}: got ${got.length} entries, want ${want.length}${inner ? `; first odd one: ${inner}` : ''}`;
  }
  const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
  for (const k of keys) {
    if (!(k in got)) return `${path}.${k}: missing, want ${JSON.stringify(want[k])}`;
    if (!(k in want)) return `${path}.${k}: got ${JSON.stringify(got[k])}, want no such key`;
    const d = firstDiff(got[k], want[k], Array.isArray(want) ? `${path}[${k}]` : `${path}.${k}`);
    if (d) return d;
  }
  return '';
}

function assertSame(got, want, label) {
  const d = firstDiff(got, want);
  if (d) assert.fail(`${d}\n${label}`);
}

// --- checks shared by the generated batches and the fixtures ---

// Started by the first test that sends something, so the generator's own test runs without a chessd.
let server;
const chessd = async () => (server ??= await startServer());
after(async () => { await server?.stop(); });

/** POSTs PGN text in one of the three forms (rnd picks one; the application/x-chess-pgn body without rnd). */
async function postPgn(text, { rnd, query = '', accept } = {}) {
  const srv = await chessd();
  const how = rnd ? rnd.int(3) : 0;
  const headers = accept ? { accept } : {};
  if (how === 2) {
    return call(srv, 'POST', `/v1/pgn${query}`, { headers, json: { pgn: text } });
  }
  headers['content-type'] = how === 0 ? PGN : 'text/plain; charset=utf-8';
  return call(srv, 'POST', `/v1/pgn${query}`, { headers, body: text });
}

/** Compares the answer for one game with the oracle's; bad: { offset } of the illegal move in the batch. */
function checkGame(got, want, text, bad, label) {
  assert.equal(got.index, want.index, label);
  if (!want.failed) {
    const { position, ...rest } = got;
    const { position: wantPosition, ...wantRest } = want;
    assertSame(rest, wantRest, label);
    assert.equal(position?.fen, wantPosition.fen, `final FEN, ${label}`);
    assert.equal(position?.status, wantPosition.status, `status, ${label}`);
    assert.deepEqual(Object.keys(got.tags), Object.keys(want.tags), `tag order, ${label}`);
    return;
  }
  assert.ok(!('moves' in got) && !('position' in got), `a FailedGame has no moves or position, ${label}`);
  assertSame(got.tags, want.tags, `tags read before the error, ${label}`);
  assert.ok(Array.isArray(got.errors) && got.errors.length >= 1, `errors, ${label}: ${JSON.stringify(got)}`);
  const e = got.errors[0];
  assert.equal(e.code, 'illegal_move', `${JSON.stringify(e)}, ${label}`);
  assert.equal(typeof e.message, 'string', label);
  if (want.path.length > 1) assert.deepEqual(e.path, want.path, `path of ${want.san}, ${label}`);
  else assert.ok(e.path === undefined || firstDiff(e.path, want.path) === '', `mainline error path ${JSON.stringify(e.path)}, ${label}`);
  assert.ok(bad, `the test knows where the bad move of a failed game is, ${label}`);
  {
    const { line, column } = lineColumn(text, bad.offset);
    assert.deepEqual([e.line, e.column], [line, column], `line and column of ${want.san}, ${label}`);
  }
}

/**
 * Reads text (games joined) with chessd and checks every game against chessops. bads: the batch
 * offsets of illegal moves in variations, by game index. Returns { res, wants }.
 */
async function readAndCheck(text, { rnd, tagsGiven = [], bads = [], label }) {
  const parsed = parsePgn(text, emptyHeaders);
  const wants = parsed.map((cg, i) => oracle(cg, i, tagsGiven[i]));
  const res = await postPgn(text, { rnd });
  assert.equal(res.status, 200, `${label}: ${res.text.slice(0, 2000)}`);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  assert.equal(res.body.games.length, wants.length, `${label}: games`);
  const failed = wants.filter((w) => w.failed).length;
  assert.deepEqual([res.body.read, res.body.failed], [wants.length - failed, failed], `${label}: read, failed`);
  for (let i = 0; i < wants.length; i++) {
    checkGame(res.body.games[i], wants[i], text, bads[i], `game ${i} of ${label}`);
  }
  return { res, wants };
}

/**
 * The movetext lines of written PGN against wrapping at 80 columns, python-chess's way (a line ends
 * where the next token would not fit): a line over 80 columns is one token (a long comment), and a
 * line and the next one's first token do not fit in 80 together (80, not 79: a writer that fills
 * lines to 80 or to 79 columns both pass). A comment ({ ... }) is one token; lines holding part of a
 * comment that spans lines are left out of the second rule (python-chess counts the whole comment).
 */
function layoutFaults(pgn) {
  const faults = [];
  const lines = [];
  let inComment = false;
  for (const line of pgn.split('\n')) {
    if (!inComment && (line === '' || line.startsWith('['))) { lines.push(null); continue; }
    const tokens = [];
    let multi = inComment;
    let i = 0;
    while (i < line.length) {
      if (inComment || line[i] === '{') {
        const close = line.indexOf('}', i);
        if (close < 0) { tokens.push(line.slice(i)); inComment = true; multi = true; break; }
        tokens.push(line.slice(i, close + 1));
        inComment = false;
        i = close + 1;
      } else if (line[i] === ' ') {
        i++;
      } else {
        const m = /[^ {]+/.exec(line.slice(i));
        tokens.push(m[0]);
        i += m[0].length;
      }
    }
    lines.push({ line, length: [...line].length, tokens, multi });
  }
  lines.forEach((l, n) => {
    if (!l) return;
    if (l.length > 80 && l.tokens.length > 1) faults.push(`${l.length} columns in ${l.tokens.length} tokens: ${l.line}`);
    const next = lines[n + 1];
    if (next && !l.multi && !next.multi && next.tokens.length
      && l.length + 1 + [...next.tokens[0]].length < 80) faults.push(`"${next.tokens[0]}" fits after: ${l.line}`);
  });
  return faults;
}

/** Where chessops's regexes find the commands of one comment, in order: [[offset, 'csl'], [offset, 'eval'], ...]. */
function commandsIn(comment) {
  const found = [];
  const scan = (re, name) => { for (const m of comment.matchAll(re)) found.push([m.index, name(m)]); };
  scan(/\[%(emt|clk)\s\d{1,5}:\d{1,2}:\d{1,2}(?:\.\d{0,3})?\]/g, (m) => m[1]);
  scan(/\[%(csl|cal)\s[RGYB][a-h][1-8](?:[a-h][1-8])?(?:,[RGYB][a-h][1-8](?:[a-h][1-8])?)*\]/g, (m) => m[1]);
  scan(/\[%eval\s(?:#[+-]?\d{1,5}|[+-]?(?:\d{1,5}|\d{0,5}\.\d{1,2}))(?:,\d{1,5})?\]/g, () => 'eval');
  return found.sort((a, b) => a[0] - b[0]);
}

/** Every node of a chessops tree, depth first. */
function* allNodes(node) {
  for (const child of node.children) { yield child; yield* allNodes(child); }
}

/**
 * Writes back what text held (Accept: application/x-chess-pgn) and checks it: chessops reads the written
 * games to the trees it read from text, chessd reads them to the answers it gave, the layout rules that
 * can be told without a byte-exact writer hold, and writing them again gives the same bytes.
 */
async function roundTrip(text, first, wants, { rnd, label }) {
  const okWants = wants.filter((w) => !w.failed);
  const okGot = first.body.games.filter((g) => !g.errors);
  const res = await postPgn(text, { rnd, accept: PGN });
  assert.equal(res.status, 200, `${label}: ${res.text.slice(0, 2000)}`);
  assert.match(res.headers.get('content-type'), /^application\/x-chess-pgn/, label);
  const written = res.text;
  const where = `${label}\n--- written ---\n${written.slice(0, 6000)}`;
  assert.ok(written.endsWith('\n'), where);
  assert.deepEqual(layoutFaults(written), [], `wrapping at 80 columns, ${where}`);

  // chessops on the written text: the same trees, commands in makeComment's order in the first comment
  const again = parsePgn(written, emptyHeaders);
  assert.equal(again.length, okWants.length, `written games, ${where}`);
  for (let i = 0; i < again.length; i++) {
    const want = okWants[i];
    const names = [...again[i].headers.keys()];
    const roster = names.filter((n) => ROSTER.includes(n));
    assert.deepEqual(names.slice(0, roster.length), ROSTER.filter((n) => roster.includes(n)), `roster first, ${where}`);
    assert.deepEqual(names.filter((n) => !ROSTER.includes(n)), Object.keys(want.tags).filter((n) => !ROSTER.includes(n)),
      `other tags in their order, ${where}`);
    for (const [name, value] of Object.entries(want.tags)) assert.equal(again[i].headers.get(name), value, `tag ${name}, ${where}`);
    for (const name of roster.filter((n) => !(n in want.tags))) { // a roster tag the game lacked: only its "unknown"
      const value = again[i].headers.get(name);
      assert.ok(name === 'Result' ? value === want.result : ['?', '????.??.??'].includes(value), `added ${name} "${value}", ${where}`);
    }
    const back = oracle(again[i], want.index, null);
    assert.ok(!back.failed, `written game ${i} has an illegal move for chessops: ${JSON.stringify(back)}\n${where}`);
    assertSame({ comments: back.comments, moves: back.moves, result: back.result, initial_fen: back.initial_fen },
      { comments: want.comments, moves: want.moves, result: want.result, initial_fen: want.initial_fen },
      `chessops on the written game ${i}, ${where}`);
    for (const node of allNodes(again[i].moves)) {
      const [firstComment, ...rest] = node.data.comments ?? [];
      if (firstComment === undefined) continue;
      const commands = commandsIn(firstComment);
      const order = commands.map(([, name]) => name);
      const rank = order.map((n) => ['csl', 'cal', 'eval', 'emt', 'clk'].indexOf(n));
      assert.deepEqual(rank, [...rank].sort((a, b) => a - b), `command order in { ${firstComment} }, ${where}`);
      assert.equal(new Set(order).size, order.length, `one of each command in { ${firstComment} }, ${where}`);
      if (order.length) {
        assert.equal(parseComment(firstComment).text,
          firstComment.slice(0, commands[0][0]).trim(), `text before the commands, ${where}`);
      }
      for (const c of rest) assert.deepEqual(commandsIn(c), [], `commands only in the first comment, ${where}`);
    }
  }

  // chessd on the written text: the same answers (tags aside, checked above), and the same bytes again
  const reread = await postPgn(written, { rnd });
  assert.equal(reread.status, 200, `${where}\n${reread.text.slice(0, 2000)}`);
  assert.deepEqual([reread.body.read, reread.body.failed], [okGot.length, 0], where);
  for (let i = 0; i < okGot.length; i++) {
    const { tags: _a, index: _b, ...got } = reread.body.games[i];
    const { tags: _c, index: _d, ...want } = okGot[i];
    assertSame(got, want, `chessd on written game ${i}, ${where}`);
  }
  const rewritten = await postPgn(written, { rnd, accept: PGN });
  assert.equal(rewritten.status, 200, where);
  if (rewritten.text !== written) {
    let at = 0;
    while (rewritten.text[at] === written[at]) at++;
    const from = Math.max(0, at - 40);
    assert.fail(`written twice differs at offset ${at}: ${JSON.stringify(written.slice(from, at + 40))} then ` +
      `${JSON.stringify(rewritten.text.slice(from, at + 40))}\n${where}`);
  }
}

// --- the tests ---

/** The generated corpus in batches: { text, tagsGiven, bads, games } each. Deterministic for a seed. */
function corpus(seed, total) {
  const rnd = prng(seed);
  const batches = [];
  let batch = null;
  for (let n = 0; n < total; n++) {
    const w = writeGame(rnd, randomGame(rnd));
    if (!batch || batch.text.length + w.text.length > BATCH_CHARS) {
      batch = { text: '', tagsGiven: [], bads: [], games: 0 };
      batches.push(batch);
    }
    if (batch.games) batch.text += rnd.pick(['\n\n', '\r\n\r\n', '\n\n\n']);
    if (w.illegalOffset !== undefined) batch.bads[batch.games] = { offset: batch.text.length + w.illegalOffset };
    batch.text += w.text;
    batch.tagsGiven.push(w.tagsGiven);
    batch.games++;
  }
  for (const b of batches) if (rnd.chance(0.5)) b.text += '\n';
  return { rnd, batches };
}

test(`the generated corpus is what it should be for chessops (seed ${SEED}, PGN_TREE_SEED overrides)`, () => {
  // The generator and the oracle on their own, so the rest can be trusted before chessd answers.
  const { batches } = corpus(SEED, GAMES);
  const count = { games: 0, failed: 0, variations: 0, deep: 0, siblings: 0, before: 0, clk: 0, emt: 0, eval: 0, mate: 0,
    depth: 0, arrows: 0, squares: 0, nags: 0, gameComments: 0, chess960: 0, castles: 0, promotions: 0, noiseText: 0, mostNodes: 0 };
  const visit = (line, depth) => {
    for (const n of line) {
      count.nodes++;
      if (n.san.startsWith('O-O')) count.castles++;
      if (n.san.includes('=')) count.promotions++;
      if (n.comments_before) count.before++;
      if (n.clock_ms !== undefined) count.clk++;
      if (n.emt_ms !== undefined) count.emt++;
      if (n.eval) { count.eval++; if ('mate' in n.eval) count.mate++; if ('depth' in n.eval) count.depth++; }
      if (n.arrows) count.arrows++;
      if (n.squares) count.squares++;
      if (n.nags) count.nags++;
      if (n.comments?.some((c) => c.includes('[%'))) count.noiseText++;
      if (n.variations) {
        count.variations += n.variations.length;
        if (n.variations.length > 1) count.siblings++;
        if (depth + 1 >= 3) count.deep++;
        for (const v of n.variations) visit(v, depth + 1);
      }
    }
  };
  for (const [b, batch] of batches.entries()) {
    assert.ok(Buffer.byteLength(JSON.stringify({ pgn: batch.text })) < 60000, `batch ${b} fits the body cap`);
    if (process.env.PGN_DUMP && b === 0) console.log(batch.text); // PGN_DUMP=1 shows a batch and the counts
    const parsed = parsePgn(batch.text, emptyHeaders);
    assert.equal(parsed.length, batch.games, `chessops sees every game of batch ${b} (seed ${SEED})`);
    for (const [i, cg] of parsed.entries()) {
      const want = oracle(cg, i, batch.tagsGiven[i]);
      count.games++;
      const bad = batch.bads[i];
      assert.equal(Boolean(want.failed), Boolean(bad), `batch ${b} game ${i}: failed iff an illegal move was written (seed ${SEED})`);
      if (want.failed) {
        count.failed++;
        assert.ok(want.path.length >= 3 && want.path.length % 2 === 1, `a variation's path: ${want.path}`);
        assert.ok(batch.text.startsWith(want.san, bad.offset), `the illegal move's offset: ${want.san}`);
        continue;
      }
      if (want.chess960) count.chess960++;
      if (want.comments) count.gameComments++;
      const before = count.nodes ?? 0;
      count.nodes = before;
      visit(want.moves, 0);
      count.mostNodes = Math.max(count.mostNodes, count.nodes - before);
    }
  }
  if (process.env.PGN_DUMP) console.log(batches.length, 'batches', count);
  const floor = (n, min, what) => assert.ok(n >= min, `${n} ${what} in ${GAMES} games (seed ${SEED})`);
  assert.equal(count.games, GAMES);
  if (GAMES >= 100) {
    floor(count.failed, 3, 'failed games'); floor(count.variations, 100, 'variations'); floor(count.deep, 10, 'depth >= 3 variations');
    floor(count.siblings, 10, 'moves with sibling variations'); floor(count.before, 10, 'comments_before');
    floor(count.clk, 50, 'clocks'); floor(count.emt, 10, 'emts'); floor(count.eval, 50, 'evals'); floor(count.mate, 5, 'mates');
    floor(count.depth, 10, 'eval depths'); floor(count.arrows, 10, 'arrows'); floor(count.squares, 10, 'squares');
    floor(count.nags, 50, 'moves with NAGs'); floor(count.gameComments, 5, 'game comments'); floor(count.chess960, 3, 'Chess960 games');
    floor(count.castles, 20, 'castles'); floor(count.promotions, 5, 'promotions'); floor(count.noiseText, 10, 'unread commands in text');
  }
});

test(`POST /v1/pgn answers the trees chessops reads, and writes them back stably (seed ${SEED})`, async () => {
  const { rnd, batches } = corpus(SEED, GAMES);
  for (const [b, batch] of batches.entries()) {
    const label = `seed ${SEED} (PGN_TREE_SEED), batch ${b}`;
    const { res, wants } = await readAndCheck(batch.text, { rnd, tagsGiven: batch.tagsGiven, bads: batch.bads,
      label: `${label}\n--- PGN ---\n${batch.text.slice(0, 6000)}` });
    await roundTrip(batch.text, res, wants, { rnd, label });
  }
});

// --- stored games keep their import's notes ---

const STORED_GAMES = Number(process.env.PGN_TREE_STORED_GAMES ?? 40);
const movetext = (pgn) => pgn.slice(pgn.indexOf('\n\n') + 2);
/** [the text before the last token, the last token]: a line break before it is the text's, not the token's. */
const lastToken = (text) => { const m = /^([\s\S]*?)\s*(\S+)\s*$/.exec(text); return [m[1], m[2]]; };
/** A stored game keeps its clocks to the millisecond but writes them in whole seconds, as Lichess does. */
const wholeClocks = (text) => text.replace(/(\[%clk\s\d{1,5}:\d{1,2}:\d{1,2})\.\d{0,3}\]/g, '$1]');

async function createFromPgn(pgn, extra = {}) {
  return call(await chessd(), 'POST', '/v1/games', { json: { pgn, ...extra } });
}

test(`POST /v1/games keeps a PGN's comments, NAGs, commands and variations; its PGN writes them as POST /v1/pgn does (seed ${SEED})`, async () => {
  const rnd = prng(SEED + 1);
  let stored = 0;
  let refused = 0;
  for (let n = 0; n < STORED_GAMES; n++) {
    const w = writeGame(rnd, randomGame(rnd));
    const text = wholeClocks(w.text);
    const label = `seed ${SEED} (PGN_TREE_SEED), stored game ${n}\n--- PGN ---\n${text.slice(0, 6000)}`;
    const created = await createFromPgn(text);
    if (w.illegalOffset !== undefined) { // a variation's illegal move refuses the game, as the mainline's does
      assert.ok([400, 422].includes(created.status), `${created.status} ${created.text}\n${label}`);
      assert.equal(created.body.code, 'illegal_move', label);
      refused++;
      continue;
    }
    assert.equal(created.status, 201, `${created.text}\n${label}`);
    stored++;
    const got = await call(await chessd(), 'GET', `/v1/games/${created.body.id}/pgn`);
    assert.equal(got.status, 200, label);
    const tree = await postPgn(text, { accept: PGN });
    assert.equal(tree.status, 200, label);
    // the result token aside: a game the PGN leaves at "*" in a mate is 1-0 or 0-1 once stored
    const [gotMoves, gotResult] = lastToken(movetext(got.text));
    assert.equal(gotMoves, lastToken(movetext(tree.text))[0], `the stored game's movetext is the tree's, ${label}`);
    assert.equal(gotResult, created.body.result, label);
    // byte-stable: its own PGN imported again is written the same, tags and all
    const again = await createFromPgn(got.text);
    assert.equal(again.status, 201, `${again.text}\n${label}`);
    const twice = await call(await chessd(), 'GET', `/v1/games/${again.body.id}/pgn`);
    assert.equal(twice.text, got.text, `a stored game's PGN imported again, ${label}`);
  }
  assert.ok(stored >= STORED_GAMES / 2 && (STORED_GAMES < 40 || refused >= 1), `${stored} stored, ${refused} refused`);
});

test('a stored game\'s notes stay with the moves they were written for: played on, taken back, too large', async () => {
  const pgn = '[Event "Notes"]\n\n{ Before it all } 1. e4 $1 { The best [%cal Ge2e4] [%eval 0.25,18] } ( 1. d4 d5 ) ( 1. c4 ) '
    + '1... c5 $6 { Sharp } { and more } 2. Nf3 d6 { [%emt 0:00:07] } *';
  const created = await createFromPgn(pgn, { takeback: 'free' });
  assert.equal(created.status, 201, created.text);
  const { id, tokens } = created.body;
  assert.deepEqual(created.body.moves.map((m) => m.san), ['e4', 'c5', 'Nf3', 'd6'], 'variations are never played');
  assert.equal(created.body.notes, undefined, 'the notes are the PGN\'s, not the game\'s JSON');
  const pgnOf = async () => movetext((await call(await chessd(), 'GET', `/v1/games/${id}/pgn`)).text);
  // python-chess's layout: a token and the space after it must fit in 80 columns, or the line breaks before it
  const layout = (tokens) => {
    const lines = [''];
    for (const t of tokens) {
      const line = lines[lines.length - 1];
      if (line && line.length + 1 + t.length + 1 > 80) lines.push(t);
      else lines[lines.length - 1] = line ? `${line} ${t}` : t;
    }
    return `${lines.join('\n')}\n`;
  };
  const head = ['{ Before it all }', '1.', 'e4', '$1', '{ The best [%cal Ge2e4] [%eval 0.25,18] }', '(', '1.', 'd4', 'd5', ')',
    '(', '1.', 'c4', ')', '1...', 'c5', '$6', '{ Sharp }', '{ and more }', '2.', 'Nf3'];
  assert.equal(await pgnOf(), layout([...head, 'd6', '{ [%emt 0:00:07] }', '*']));
  assert.equal(await pgnOf(), movetext((await postPgn(pgn, { accept: PGN })).text));
  const auth = (color) => ({ authorization: `Bearer ${tokens[color]}` });
  const moved = await call(await chessd(), 'POST', `/v1/games/${id}/moves`, { headers: auth('white'), json: { move: 'd4', expected_version: 1 } });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(await pgnOf(), layout([...head, 'd6', '{ [%emt 0:00:07] }', '3.', 'd4', '*']), 'a move played after the import has no notes');
  // Black's d6 taken back and another move played: d6's notes are gone, the others stay
  for (const color of ['white', 'black']) { // each takes back their own last move
    const version = (await call(await chessd(), 'GET', `/v1/games/${id}`)).body.version;
    const undo = await call(await chessd(), 'POST', `/v1/games/${id}/undo`, { headers: { ...auth(color), 'if-match': `"${version}"` } });
    assert.equal(undo.status, 200, undo.text);
  }
  const version = (await call(await chessd(), 'GET', `/v1/games/${id}`)).body.version;
  const other = await call(await chessd(), 'POST', `/v1/games/${id}/moves`, { headers: auth('black'), json: { move: 'Nc6', expected_version: version } });
  assert.equal(other.status, 200, other.text);
  assert.equal(await pgnOf(), layout([...head, 'Nc6', '*']));

  // more notes than a game keeps: a clear refusal, and no game
  const many = `1. e4 ${'(d4) '.repeat(9000)}*`;
  const refused = await createFromPgn(many);
  const body = expectProblem(refused, 413, 'pgn_too_large');
  assert.equal(body.pgn_error, 'notes_too_large');
});

// --- fixtures, shaped like real exports ---

const LICHESS = `[Event "Rated Blitz game"]
[Site "https://lichess.org/kT4bQ9xZ"]
[Date "2024.03.02"]
[White "mardi_gras"]
[Black "tal_fan_77"]
[Result "1-0"]
[UTCDate "2024.03.02"]
[UTCTime "18:41:07"]
[WhiteElo "1893"]
[BlackElo "1871"]
[WhiteRatingDiff "+6"]
[BlackRatingDiff "-6"]
[Variant "Standard"]
[TimeControl "180+2"]
[ECO "C50"]
[Opening "Italian Game: Giuoco Pianissimo"]
[Termination "Normal"]
[Annotator "lichess.org"]

1. e4 { [%eval 0.18] [%clk 0:03:00] } 1... e5 { [%eval 0.22] [%clk 0:03:00] } 2. Nf3 { [%eval 0.17] [%clk 0:02:59] } 2... Nc6 { [%eval 0.2] [%clk 0:02:59] } 3. Bc4 { [%eval 0.0] [%clk 0:02:58] } 3... Bc5 { [%eval 0.19] [%clk 0:02:57] } 4. c3 { [%eval 0.14] [%clk 0:02:57] } 4... Nf6 { [%eval 0.21] [%clk 0:02:55] } 5. d3 { [%eval 0.09] [%clk 0:02:55] } 5... d6 { [%eval 0.15] [%clk 0:02:53] } 6. O-O { [%eval 0.1] [%clk 0:02:54] } 6... O-O { [%eval 0.12] [%clk 0:02:50] } 7. Re1 { [%eval 0.05] [%clk 0:02:52] } 7... a6?! { (0.05 → 0.62) Inaccuracy. h6 was best. } { [%eval 0.62] [%clk 0:02:41] } (7... h6 8. Nbd2 a5 9. Nf1 Be6) 8. Bb3 { [%eval 0.47] [%clk 0:02:50] } 8... Ba7 { [%eval 0.51] [%clk 0:02:38] } 9. h3 { [%eval 0.4] [%clk 0:02:48] } 9... h6 { [%eval 0.48] [%clk 0:02:30] } 10. Nbd2 { [%eval 0.39] [%clk 0:02:46] } 10... Re8 { [%eval 0.47] [%clk 0:02:24] } 11. Nf1 { [%eval 0.33] [%clk 0:02:45] } 11... Be6 { [%eval 0.41] [%clk 0:02:19] } 12. Bxe6 { [%eval 0.32] [%clk 0:02:43] } 12... Rxe6 { [%eval 0.34] [%clk 0:02:18] } 13. Ng3 { [%eval 0.25] [%clk 0:02:40] } 13... d5?? { (0.25 → 3.10) Blunder. Qd7 was best. } { [%eval 3.1] [%clk 0:02:02] } (13... Qd7 14. Nh4 Rae8 15. Nhf5) 14. exd5 { [%eval 3.02] [%clk 0:02:35] } 14... Nxd5 { [%eval 3.2] [%clk 0:02:00] } 15. d4 { [%eval 2.95] [%clk 0:02:31] } 15... exd4 { [%eval 3.4] [%clk 0:01:51] } 16. Rxe6 { [%eval 3.33] [%clk 0:02:29] } 16... fxe6 { [%eval 3.5] [%clk 0:01:50] } 17. Nxd4 { [%eval 3.41] [%clk 0:02:27] } 17... Nxd4 { [%eval 3.62] [%clk 0:01:44] } 18. cxd4 { [%eval 3.5] [%clk 0:02:27] } 18... Bxd4 { [%eval 3.84] [%clk 0:01:40] } 19. Qg4 { [%eval 3.61] [%clk 0:02:20] } 19... Qf6?? { (3.61 → #4) Checkmate is now unavoidable. Qe7 was best. } { [%eval #4] [%clk 0:01:29] } (19... Qe7 20. Bxh6 Qf6 21. Be3) 20. Qxe6+ { [%eval #3] [%clk 0:02:14] } 20... Qxe6 { [%eval 1.15] [%clk 0:01:26] } 21. Nf5 { [%eval 0.8] [%clk 0:02:10] } { White wins on time? No: Black resigns. } 1-0
`;

const CHESSCOM = `[Event "Live Chess"]
[Site "Chess.com"]
[Date "2024.01.15"]
[Round "-"]
[White "quietbishop"]
[Black "Zugzwang_Zed"]
[Result "0-1"]
[CurrentPosition "r1b1k2r/ppp2ppp/2n5/3q4/1b6/2N2N2/PP3PPP/R2QKB1R w KQkq -"]
[Timezone "UTC"]
[ECO "B01"]
[ECOUrl "https://www.chess.com/openings/Scandinavian-Defense-Mieses-Kotrc-Variation"]
[UTCDate "2024.01.15"]
[UTCTime "19:02:11"]
[WhiteElo "1502"]
[BlackElo "1498"]
[TimeControl "600"]
[Termination "Zugzwang_Zed won by resignation"]
[StartTime "19:02:11"]
[EndDate "2024.01.15"]
[EndTime "19:10:40"]
[Link "https://www.chess.com/game/live/99887766554"]

1. e4 {[%clk 0:09:58.5][%timestamp 15]} 1... d5 {[%clk 0:09:57.1][%timestamp 29]} 2. exd5 {[%clk 0:09:55.9][%timestamp 12]} 2... Qxd5 {[%clk 0:09:56][%timestamp 11]} 3. Nc3 {[%clk 0:09:53.2][%timestamp 27]} 3... Qa5 {[%clk 0:09:54.8][%timestamp 12]} 4. d4 {[%clk 0:09:49.7][%timestamp 35]} 4... Nf6 {[%clk 0:09:52][%timestamp 28]} 5. Nf3 {[%clk 0:09:40.3][%timestamp 94]} 5... Bg4 {[%clk 0:09:47.6][%timestamp 44]} 6. h3 {[%clk 0:09:31][%timestamp 93]} 6... Bxf3 {[%clk 0:09:44.4][%timestamp 32]} 7. Qxf3 {[%clk 0:09:29.8][%timestamp 12]} 7... c6 {[%clk 0:09:40][%timestamp 44]} 8. Bd2 {[%clk 0:09:11.1][%timestamp 187]} 8... e6 {[%clk 0:09:36.2][%timestamp 38]} 9. O-O-O {[%clk 0:09:01.9][%timestamp 92]} 9... Nbd7 {[%clk 0:09:20.5][%timestamp 157]} 10. g4 {[%clk 0:08:40][%timestamp 219]} 10... Bb4 {[%clk 0:09:02.1][%timestamp 184]} 11. a3?? {[%clk 0:08:01.3][%timestamp 387]} 11... Bxc3 {[%clk 0:08:40.6][%timestamp 215]} 12. Bxc3 {[%clk 0:07:58][%timestamp 33]} 12... Qa4 {[%clk 0:08:20.9][%timestamp 197]} 13. Kb1 {[%clk 0:07:30.4][%timestamp 276]} 13... Nd5 {[%clk 0:08:05][%timestamp 159]} 14. Bd2 {[%clk 0:07:02.6][%timestamp 278]} 14... O-O-O {[%clk 0:07:40.2][%timestamp 248]} 0-1
`;

// ChessBase layout: numbers glued to moves, over-disambiguated knights (2.Nge2: the b1 knight cannot reach e2;
// 4...Ngf6: the b8 knight cannot reach f6; 9...Nbd7 is real, the f6 knight reaches d7 too), evaluation NAGs,
// [%evp] that chessops does not read (it stays in the text), [%cal]/[%csl] from its arrows.
const CHESSBASE = `[Event "Club Championship"]
[Site "Utrecht"]
[Date "2023.11.04"]
[Round "5.2"]
[White "Jansen, Pieter"]
[Black "de Vries, Anke"]
[Result "1/2-1/2"]
[ECO "C00"]
[WhiteElo "2105"]
[BlackElo "2170"]
[Annotator "Jansen,P"]
[PlyCount "36"]
[EventDate "2023.10.07"]

{Notes by the winner of the next round.} 1.e4 e6 2.Nge2 $5 {A sideline.} d5 3.exd5 exd5 4.d4 Ngf6 5.Ng3 Bd6
6.Nc3 $146 {[%cal Gc3b5,Rb5d6] [%evp 12,18,25]} O-O 7.Be2 c6 8.O-O Re8 9.Bg5 Nbd7 10.Qd2 Qb6 (10...h6 11.Bh4
Nf8 $11) 11.Nd1 $6 ({Better is} 11.Rab1 $14 {[%csl Ge5,Rd6]}) 11...Ne4 12.Nxe4 dxe4 13.Be3 Nf6 14.c3 Nd5 15.Bc4
Be6 16.Qe2 Nxe3 17.Nxe3 Bxc4 18.Nxc4 Qc7 1/2-1/2
`;

// A game with an illegal move in a nested variation (4...Qh4: the f6 knight blocks the queen; path
// [4, 0, 1, 0, 2]: ply 4 (3.Bb5), its 1st variation, that line's 2nd move (3...Bc5), its 1st variation,
// that line's 3rd move), one with an illegal mainline move (6.Ke3), both between good ones.
const GOOD_BEFORE = `[Event "good 1"]
[Result "*"]

1. d4 {[%clk 0:05:00]} d5 2. c4 (2. Nf3 Nf6 (2... c5 3. dxc5) 3. Bf4) {after the variation} 2... e6 *`;
const BAD_VARIATION = `[Event "bad variation"]
[White "A"]
[Black "B"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 (3. Bc4 Bc5 (3... Nf6 4. Ng5 Qh4 5. Nxf7) 4. c3) 3... a6 4. Ba4 Nf6 5. O-O *`;
const GOOD_BETWEEN = `[Event "good 2"]

1. e4 c5 {Sicilian [%clk 0:01:00]} {[%clk 0:00:59.5]} 2. Nf3 d6 $1 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 1/2-1/2`;
const BAD_MAINLINE = `[Event "bad mainline"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3 Nf6 5. d4 exd4 6. Ke3 *`;
const GOOD_AFTER = `[Event "good 3"]
[Variant "Chess960"]
[FEN "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1"]

1. Ng3 Ng6 2. O-O (2. Nd3 {[%eval 0.3,21]} O-O) 2... O-O *`;

/** The tag pairs written at the head of one game's PGN, as [name, value]s. */
const tagsOf = (pgn) => [...pgn.matchAll(/^\[(\w+) "((?:[^"\\]|\\.)*)"\]$/gm)].map((m) => [m[1], m[2]]);

/** Joins games as one batch text: { text, offsets of each game, tagsGiven }. */
function batchOf(games) {
  let text = '';
  const offsets = [];
  for (const g of games) {
    if (text) text += '\n\n';
    offsets.push(text.length);
    text += g;
  }
  return { text: text + '\n', offsets, tagsGiven: games.map(tagsOf) };
}

for (const [name, pgn] of [['Lichess', LICHESS], ['chess.com', CHESSCOM], ['ChessBase', CHESSBASE]]) {
  test(`POST /v1/pgn: a ${name} export reads as chessops reads it and writes back stably`, async () => {
    const [cg] = parsePgn(pgn, emptyHeaders);
    const want = oracle(cg, 0, null);
    assert.ok(!want.failed, `the ${name} fixture is legal for chessops: ${JSON.stringify(want)}`);
    const { res, wants } = await readAndCheck(pgn, { tagsGiven: [tagsOf(pgn)], label: `${name} fixture` });
    await roundTrip(pgn, res, wants, { label: `${name} fixture` });
    const got = res.body.games[0];
    if (name === 'Lichess') { // every mainline move has its clock and eval; the analysis comments are kept
      assert.ok(got.moves.every((m) => m.clock_ms !== undefined && m.eval), 'clock and eval on every move');
      assert.deepEqual(got.moves[0].eval, { cp: 18 });
      assert.equal(got.moves[0].clock_ms, 180000);
      assert.deepEqual(got.moves[37].eval, { mate: 4 });
      assert.deepEqual(got.moves[13].comments, ['(0.05 → 0.62) Inaccuracy. h6 was best.']);
      assert.deepEqual(got.moves[13].nags, [6]);
      assert.equal(got.moves[13].variations[0][0].san, 'h6');
    } else if (name === 'chess.com') { // tenths of seconds, and [%timestamp] left in the text
      assert.equal(got.moves[0].clock_ms, 598500);
      assert.deepEqual(got.moves[0].comments, ['[%timestamp 15]']);
      assert.deepEqual(got.moves[20].nags, [4]);
      assert.equal(got.moves[16].uci, 'e1c1');
    } else {
      assert.equal(got.moves[2].san, 'Ne2', 'Nge2 (only one knight reaches e2) in its canonical SAN');
      assert.equal(got.moves[7].san, 'Nf6', 'Ngf6 likewise');
      assert.equal(got.moves[17].san, 'Nbd7', 'a needed disambiguation stays');
      assert.deepEqual(got.comments, ['Notes by the winner of the next round.']);
      assert.deepEqual(got.moves[10].arrows, [{ color: 'green', from: 'c3', to: 'b5' }, { color: 'red', from: 'b5', to: 'd6' }]);
      assert.deepEqual(got.moves[10].comments, ['[%evp 12,18,25]']);
      const v = got.moves[20].variations[0];
      assert.deepEqual([v[0].san, v[0].comments_before, v[0].nags, v[0].squares],
        ['Rab1', ['Better is'], [14], [{ color: 'green', square: 'e5' }, { color: 'red', square: 'd6' }]]);
    }
  });
}

test('POST /v1/pgn: illegal moves in a variation and in a mainline fail their games only, with path, line and column', async () => {
  const { text, offsets, tagsGiven } = batchOf([GOOD_BEFORE, BAD_VARIATION, GOOD_BETWEEN, BAD_MAINLINE, GOOD_AFTER]);
  const bads = [];
  bads[1] = { offset: offsets[1] + BAD_VARIATION.indexOf('Qh4') };
  bads[3] = { offset: offsets[3] + BAD_MAINLINE.indexOf('Ke3') };
  const { res, wants } = await readAndCheck(text, { tagsGiven, bads, label: `fixture batch\n${text}` });
  assert.deepEqual(wants.map((w) => Boolean(w.failed)), [false, true, false, true, false], 'the oracle sees the two bad games');
  assert.deepEqual(wants[1].path, [4, 0, 1, 0, 2]);
  assert.deepEqual([res.body.read, res.body.failed], [3, 2]);
  const e = res.body.games[1].errors[0];
  assert.deepEqual([e.code, e.path, e.line, e.column], ['illegal_move', [4, 0, 1, 0, 2], 11, 57]);
  assert.deepEqual(res.body.games[1].tags, { Event: 'bad variation', White: 'A', Black: 'B', Result: '*' });
  assert.deepEqual([res.body.games[3].errors[0].line, res.body.games[3].errors[0].column], [20, 56]);
  assert.equal(res.body.games[4].moves[2].uci, 'f1g1', 'Chess960 castling king-takes-rook');
  const c4 = res.body.games[0].moves[2];
  assert.deepEqual(c4.comments, ['after the variation'], "a comment after ')' is the move's before '('");
  assert.deepEqual(c4.variations[0].map((m) => m.san), ['Nf3', 'Nf6', 'Bf4']);
  assert.deepEqual(c4.variations[0][1].variations[0].map((m) => m.san), ['c5', 'dxc5']);
  assert.deepEqual([res.body.games[2].moves[1].comments, res.body.games[2].moves[1].clock_ms], [['Sicilian'], 59500],
    'the last [%clk] of a move wins');
  assert.equal(res.body.games[4].moves[2].variations[0][1].uci, 'f8g8');
  await roundTrip(text, res, wants, { label: `fixture batch\n${text}` }); // the good three only
});

test('POST /v1/pgn?strict=true: the first bad game is a problem, as before', async () => {
  const unterminated = batchOf([GOOD_BEFORE, '[Event "x"]\n\n1. e4 e5\n2. Nf3 {never closed\n2... Nc6 *']).text;
  const body = expectProblem(await postPgn(unterminated, { query: '?strict=true' }), 400, 'invalid_pgn');
  assert.deepEqual([body.game, body.line, body.column, body.pgn_error], [1, 9, 8, 'unterminated_comment']);
  // without strict the same text is one read game and one failed one
  const lenient = await postPgn(unterminated);
  assert.equal(lenient.status, 200, lenient.text);
  assert.deepEqual([lenient.body.read, lenient.body.failed], [1, 1]);
  assert.equal(lenient.body.games[1].errors[0].line, 9);

  const mainline = batchOf([GOOD_BETWEEN, BAD_MAINLINE, BAD_VARIATION]).text;
  const illegal = expectProblem(await postPgn(mainline, { query: '?strict=true' }), 422, 'illegal_move');
  assert.deepEqual([illegal.game, illegal.line, illegal.column, illegal.move], [1, 8, 56, 'Ke3']);

  // an illegal move in a variation: variations are now played, so the first bad game is the variation's
  const variation = batchOf([GOOD_BETWEEN, BAD_VARIATION, BAD_MAINLINE]).text;
  const res = await postPgn(variation, { query: '?strict=true' });
  assert.ok([400, 422].includes(res.status), `${res.status}: ${res.text}`);
  const problem = expectProblem(res, res.status, 'illegal_move');
  assert.deepEqual([problem.game, problem.line, problem.column], [1, 10, 57]);

  const good = await postPgn(batchOf([GOOD_BEFORE, GOOD_BETWEEN]).text, { query: '?strict=true' });
  assert.equal(good.status, 200, good.text);
  assert.equal(good.body.games.length, 2);
});
