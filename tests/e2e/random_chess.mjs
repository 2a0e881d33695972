// Random chess for the generated corpora (pgn.test.mjs, pgn_tree.test.mjs):
// the pieces several suites draw the same way, from a prng.mjs generator.
import { makeSan } from 'chessops/san';

/** Every legal move of a chessops position, by canonical SAN (castling once), promotions to every piece. */
export function legalMoves(pos) {
  const moves = new Map();
  for (const [from, dests] of pos.allDests()) {
    for (const to of dests) {
      const piece = pos.board.get(from);
      const last = piece.role === 'pawn' && (to >> 3 === 7 || to >> 3 === 0);
      for (const promotion of last ? ['queen', 'knight', 'rook', 'bishop'] : [undefined]) {
        const move = promotion ? { from, to, promotion } : { from, to };
        moves.set(makeSan(pos, move), move);
      }
    }
  }
  return [...moves.entries()];
}

/** A random Chess960 back rank (bishops on opposite colours, the king between the rooks). */
export function chess960Rank(rnd) {
  const rank = Array(8).fill(null);
  rank[2 * rnd.int(4)] = 'b';
  rank[2 * rnd.int(4) + 1] = 'b';
  const free = () => rank.map((p, i) => (p ? -1 : i)).filter((i) => i >= 0);
  let f = free(); rank[f[rnd.int(f.length)]] = 'q';
  f = free(); rank[f[rnd.int(f.length)]] = 'n';
  f = free(); rank[f[rnd.int(f.length)]] = 'n';
  f = free(); rank[f[0]] = 'r'; rank[f[1]] = 'k'; rank[f[2]] = 'r';
  return rank.join('');
}
