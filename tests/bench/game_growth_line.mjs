// Writes tests/bench/game_growth.line, the fixed 600-ply line that
// tests/bench/game_growth.sh plays: legal, and a game that never ends by
// itself on the way (no checkmate, stalemate, insufficient material,
// fivefold repetition or 75-move rule).
//
//   usage: node tests/bench/game_growth_line.mjs [PLIES [SEED]] >tests/bench/game_growth.line
//
// A seeded random walk (mulberry32, tests/e2e/prng.mjs) over chess.js 1.4.0
// (tests/oracle/node_modules; `npm ci --prefix tests/oracle`): only moves that
// neither capture, promote nor give check, so the material stays whole and
// no side is ever mated. A move is refused when the position it leads to
// would occur a fourth time (positions compared by the first four FEN fields;
// chess.js writes the en passant square only when a capture there is legal,
// as chessd does) or when the halfmove clock would reach 140. Pawn moves are
// spent sparingly (without captures only about 30 exist): some in the first
// plies to free the pieces, then one when the halfmove clock passes 90, and
// otherwise only when nothing else is left. A dead end is backtracked, so the
// same seed always gives the same line.
import { createRequire } from 'node:module'
import { prng } from '../e2e/prng.mjs'

const require = createRequire(new URL('../oracle/package.json', import.meta.url))
const { Chess } = require('chess.js')

const PLIES = Number(process.argv[2] ?? 600)
const SEED = Number(process.argv[3] ?? 20240601)
const OPENING_PLIES = 16      // pawn moves are chosen freely before this ply
const CLOCK_PAWN_MOVE = 90    // from this halfmove clock on, a pawn move comes first
const CLOCK_LIMIT = 140       // the clock stays below this
const MOST_OCCURRENCES = 3    // no position occurs more often
const NODE_BUDGET = 1e6

if (!Number.isInteger(PLIES) || PLIES < 1 || !Number.isInteger(SEED)) {
  console.error('usage: node game_growth_line.mjs [PLIES [SEED]]')
  process.exit(2)
}

const rand = prng(SEED)
const chess = new Chess()
const occurrences = new Map()
const positionKey = () => chess.fen().split(' ').slice(0, 4).join(' ')
const halfmoveClock = () => Number(chess.fen().split(' ')[4])
const bump = (key, by) => occurrences.set(key, (occurrences.get(key) ?? 0) + by)

function shuffled(xs) {
  const a = xs.slice()
  for (let i = a.length - 1; i > 0; i--) {
    const j = rand.int(i + 1)
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a
}

// The candidate moves of the position, in the order they are tried.
function candidates(ply) {
  const quiet = chess.moves({ verbose: true }).filter((m) => !m.captured && !m.promotion && !/[+#]/.test(m.san))
  const pawn = shuffled(quiet.filter((m) => m.piece === 'p'))
  const piece = shuffled(quiet.filter((m) => m.piece !== 'p'))
  if (ply < OPENING_PLIES) return rand.chance(0.5) ? [...pawn, ...piece] : [...piece, ...pawn]
  return halfmoveClock() >= CLOCK_PAWN_MOVE ? [...pawn, ...piece] : [...piece, ...pawn]
}

let nodes = 0
const line = []
// Extends `line` to PLIES plies from the current position; false at a dead end.
function walk(ply) {
  if (ply === PLIES) return true
  if (++nodes > NODE_BUDGET) throw new Error(`no line found within ${NODE_BUDGET} positions (seed ${SEED})`)
  for (const m of candidates(ply)) {
    chess.move({ from: m.from, to: m.to })
    const key = positionKey()
    const over = chess.isCheckmate() || chess.isStalemate() || chess.isInsufficientMaterial()
    if ((occurrences.get(key) ?? 0) < MOST_OCCURRENCES && halfmoveClock() < CLOCK_LIMIT && !over) {
      bump(key, 1)
      line.push(m.from + m.to)
      if (walk(ply + 1)) return true
      line.pop()
      bump(key, -1)
    }
    chess.undo()
  }
  return false
}

bump(positionKey(), 1)
if (!walk(0)) {
  console.error(`no line of ${PLIES} plies exists from seed ${SEED}`)
  process.exit(1)
}
// `walk` left the board at the line's end; the figures of the header are
// counted again on a replay, independently of the walk's bookkeeping.
const replay = new Chess()
const seen = new Map([[replay.fen().split(' ').slice(0, 4).join(' '), 1]])
let pawnMoves = 0
let highestClock = 0
for (const uci of line) {
  const m = replay.move({ from: uci.slice(0, 2), to: uci.slice(2, 4) })
  if (m.piece === 'p') pawnMoves++
  const fields = replay.fen().split(' ')
  highestClock = Math.max(highestClock, Number(fields[4]))
  const key = fields.slice(0, 4).join(' ')
  seen.set(key, (seen.get(key) ?? 0) + 1)
}
const highestOccurrence = Math.max(...seen.values())
if (replay.fen() !== chess.fen() || highestOccurrence > MOST_OCCURRENCES || highestClock >= CLOCK_LIMIT) {
  console.error('the replayed line does not match the walk')
  process.exit(1)
}
console.log(`# The ${PLIES}-ply line of tests/bench/game_growth.sh: UCI, one move a line.`)
console.log(`# Written by: node tests/bench/game_growth_line.mjs ${PLIES} ${SEED} (do not edit by hand).`)
console.log(`# No capture, promotion or check; ${pawnMoves} pawn moves; halfmove clock at most ${highestClock};`)
console.log(`# no position more than ${highestOccurrence} times.`)
console.log(`# end: ${chess.fen()}`)
for (const uci of line) console.log(uci)
