// The variants' reference rules behind one small interface in chessd's terms:
// chessops 0.15.1 (Lichess's rules) for the Lichess variants, ffish 0.7.10
// (Fairy-Stockfish's rules in WebAssembly) for S-chess. Moves go in and come
// out as chessd writes UCI: castling as the king's two-step (king takes rook
// in Chess960), drops "N@f3", S-chess gates "b1c3h" and "h1e1h". The packages
// come from this folder's lock (npm ci --prefix tests/oracle).
import { createRequire } from 'node:module';
import { parseFen, makeFen } from 'chessops/fen';
import { setupPosition } from 'chessops/variant';
import { makeSquare, parseUci, squareFile, squareRank } from 'chessops/util';
import { normalizeMove } from 'chessops/chess';

/** chessd's variant keys, with the name each oracle knows the variant by. */
export const CHESSOPS_RULES = {
  crazyhouse: 'crazyhouse', atomic: 'atomic', antichess: 'antichess', kingOfTheHill: 'kingofthehill',
  threeCheck: '3check', horde: 'horde', racingKings: 'racingkings',
};
export const FFISH_VARIANTS = { seirawan: 'seirawan' };
export const VARIANT_KEYS = [...Object.keys(CHESSOPS_RULES), ...Object.keys(FFISH_VARIANTS)];

const ROLE_LETTERS = { pawn: 'p', knight: 'n', bishop: 'b', rook: 'r', queen: 'q', king: 'k' };
const OUTCOMES = { '1-0': 'white', '0-1': 'black', '1/2-1/2': 'draw', '*': 'none' };

let ffishLoading;
/** ffish, loaded once. Its 2023 loader takes Node's global fetch for a
 * browser's and fails, so fetch is hidden while it loads. */
export function loadFfish() {
  ffishLoading ??= (async () => {
    const require = createRequire(import.meta.url);
    const saved = globalThis.fetch;
    globalThis.fetch = undefined;
    try {
      const ffish = require('ffish');
      if (!ffish.Board) await new Promise((resolve) => { ffish.onRuntimeInitialized = resolve; });
      return ffish;
    } finally {
      globalThis.fetch = saved;
    }
  })();
  return ffishLoading;
}

/** Whether a chessops setup's castling rights need Chess960 (a king off
 * the e-file or a castling rook off the corners), as FEN_DETECT_CHESS960. */
function needsChess960(setup) {
  for (const rook of setup.castlingRights) {
    const color = squareRank(rook) === 0 ? 'white' : 'black';
    const king = setup.board.kingOf(color);
    if (king === undefined || squareFile(king) !== 4 || (squareFile(rook) !== 0 && squareFile(rook) !== 7)) return true;
  }
  return false;
}

/** A chessops position's legal moves in chessd's UCI, unsorted. */
function chessopsMoves(pos, chess960) {
  const moves = [];
  const backRank = (sq) => squareRank(sq) === 0 || squareRank(sq) === 7;
  const promotions = pos.rules === 'antichess' ? 'nbrqk' : 'nbrq';
  const ctx = pos.ctx();
  for (const [from, dests] of pos.allDests(ctx)) {
    const piece = pos.board.get(from);
    for (const to of dests) {
      const own = pos.board.get(to);
      const castles = piece.role === 'king' && own?.color === piece.color && own.role === 'rook';
      const target = castles && !chess960 ? (to > from ? 6 : 2) + (from & ~7) : to;
      const uci = makeSquare(from) + makeSquare(target);
      if (piece.role === 'pawn' && backRank(to)) for (const p of promotions) moves.push(uci + p);
      else moves.push(uci);
    }
  }
  if (pos.pockets) {
    const dests = pos.dropDests(ctx);
    for (const [role, letter] of Object.entries(ROLE_LETTERS)) {
      if (pos.pockets[pos.turn][role] <= 0) continue;
      for (const to of dests) if (role !== 'pawn' || !backRank(to)) moves.push(letter.toUpperCase() + '@' + makeSquare(to));
    }
  }
  return moves;
}

/** The Lichess variants through chessops. play() keeps the position before
 * for undo() (chessops has no undo of its own). */
class ChessopsOracle {
  constructor(variant, fen, chess960) {
    const setup = parseFen(fen).unwrap();
    this.variant = variant;
    this.pos = setupPosition(CHESSOPS_RULES[variant], setup).unwrap();
    this.chess960 = chess960 ?? needsChess960(setup);
    this.before = [];
  }
  moves() { return this.pos.isVariantEnd() ? [] : chessopsMoves(this.pos, this.chess960).sort(); }
  play(uci) {
    const parsed = parseUci(uci);
    const move = parsed && (parsed.role ? parsed : normalizeMove(this.pos, parsed));
    if (!move || !this.pos.isLegal(move)) throw new Error(`chessops refuses ${uci} in ${this.fen()}`);
    this.before.push(this.pos.clone());
    this.pos.play(move);
  }
  undo() { this.pos = this.before.pop(); }
  fen() { return makeFen(this.pos.toSetup()); }
  outcome() {
    const outcome = this.pos.outcome();
    return !outcome ? 'none' : outcome.winner ?? 'draw';
  }
  close() {}
}

/** A FEN's piece placement, the pocket and the rest left out. */
const placement = (fen) => fen.split(/[[ ]/)[0];

/** S-chess through ffish, whose UCI is already chessd's. Its validateFen
 * answers -10 to every FEN in this build and its Board reads what it can of a
 * bad one without a word, so a FEN is refused when the placement ffish
 * writes back is not the one given. */
class FfishOracle {
  constructor(ffish, variant, fen, chess960) {
    this.variant = variant;
    this.board = new ffish.Board(FFISH_VARIANTS[variant], fen, !!chess960);
    if (placement(this.board.fen()) !== placement(fen)) {
      this.close();
      throw new Error(`ffish refuses the ${variant} FEN ${fen}`);
    }
  }
  moves() { return this.board.legalMoves().split(' ').filter(Boolean).sort(); }
  play(uci) {
    if (!this.board.push(uci)) throw new Error(`ffish refuses ${uci} in ${this.fen()}`);
  }
  undo() { this.board.pop(); }
  fen() { return this.board.fen(); }
  outcome() { return OUTCOMES[this.board.result()]; }
  close() { this.board.delete(); }
}

/**
 * The oracle of a variant (chessd's key) on fen, throwing when the oracle
 * refuses the FEN. It has moves() (sorted UCI, none once the variant has
 * ended), play(uci) (throws on an illegal move), undo(), fen() (the oracle's
 * own form), outcome() ('white', 'black', 'draw' or 'none'; no repetition or
 * move-count rule, the oracle keeping no history) and close(), which frees an
 * ffish board. chess960: castling written king-takes-rook; by default when
 * the castling rights need it, as chessd decides.
 */
export async function openOracle(variant, fen, { chess960 } = {}) {
  if (CHESSOPS_RULES[variant]) return new ChessopsOracle(variant, fen, chess960);
  if (FFISH_VARIANTS[variant]) return new FfishOracle(await loadFfish(), variant, fen, chess960);
  throw new Error(`no oracle for the variant ${variant}`);
}

/** The oracle's own FEN of fen: chessd's FEN read by the oracle and written back. */
export async function oracleFen(variant, fen) {
  const oracle = await openOracle(variant, fen);
  try {
    return oracle.fen();
  } finally {
    oracle.close();
  }
}

/** The number of move paths of length depth from the oracle's position. */
export function perft(oracle, depth) {
  const moves = oracle.moves();
  if (depth <= 1) return depth === 1 ? moves.length : 1;
  let nodes = 0;
  for (const move of moves) {
    oracle.play(move);
    nodes += perft(oracle, depth - 1);
    oracle.undo();
  }
  return nodes;
}
