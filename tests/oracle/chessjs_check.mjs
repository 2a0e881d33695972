// Oracle for tests/rules/test_oracle.c: checks chessd's SAN, FEN and status output
// against chess.js 1.4.0 (pinned in package.json; install with
// `npm ci --prefix tests/oracle`). Reads the file named by argv[2], or stdin,
// one position a line (format below); prints every disagreement with its FEN
// and ends with `chessjs: N positions checked, M mismatches`.
// Exit status: 0 no mismatch, 1 some mismatch, 2 unreadable or malformed input.
//
// Input line, four TAB-separated fields ('#' lines and blank lines are skipped):
//   FEN      chessd's canonical FEN (fen_format) of the position
//   SANS     chessd's SAN (san_format) of every legal move, space-separated;
//            empty when there is no legal move
//   FLAGS    chessd's status, comma-separated words among check, checkmate,
//            stalemate, insufficient; "-" for none
//   AFTERS   chessd's FEN after each move of SANS, in the same order,
//            separated by '|' (empty when SANS is empty)
//
// Compared, each disagreement counting as one mismatch:
//   - the SET of SAN strings of chess.js moves() with SANS (and SANS must
//     not name two moves alike);
//   - chess.js fen() of the loaded position with FEN, and, for every SAN both
//     sides list, chess.js's FEN after the move (Move.after) with chessd's.
//     The whole FEN is compared: chess.js 1.4.0 fen() writes the en passant
//     square only when some en passant capture is legal (it tries the capture
//     and tests its king), which is exactly chessd's rule, so no field needs
//     to be left out.
//   - isCheck, isCheckmate, isStalemate and isInsufficientMaterial with FLAGS.
import { Chess } from 'chess.js'
import { runOracle } from './oracle_run.mjs'

const FLAG_WORDS = ['check', 'checkmate', 'stalemate', 'insufficient']

// Splits one input line into its fields; throws on a malformed line.
function parseLine(line, lineNumber) {
  const fields = line.split('\t')
  if (fields.length !== 4) {
    throw new Error(`line ${lineNumber}: expected 4 TAB-separated fields, found ${fields.length}`)
  }
  const [fen, sanField, flagField, afterField] = fields
  const sans = sanField === '' ? [] : sanField.split(' ')
  const afters = afterField === '' ? [] : afterField.split('|')
  if (sans.length !== afters.length) {
    throw new Error(`line ${lineNumber}: ${sans.length} SAN moves but ${afters.length} FENs after them`)
  }
  const flags = new Set(flagField === '-' ? [] : flagField.split(','))
  for (const word of flags) {
    if (!FLAG_WORDS.includes(word)) {
      throw new Error(`line ${lineNumber}: unknown flag '${word}'`)
    }
  }
  return { fen, sans, flags, afters }
}

// Compares one position; returns the list of disagreements (strings).
function comparePosition({ fen, sans, flags, afters }) {
  let chess
  try {
    chess = new Chess(fen)
  } catch (error) {
    return [`chess.js rejects the FEN: ${error.message}`]
  }
  const problems = []
  const theirFen = chess.fen()
  if (theirFen !== fen) {
    problems.push(`FEN: chessd '${fen}', chess.js '${theirFen}'`)
  }

  const duplicates = sans.filter((san, i) => sans.indexOf(san) !== i)
  if (duplicates.length) {
    problems.push(`chessd gives two moves one SAN: [${[...new Set(duplicates)].join(' ')}]`)
  }

  const theirMoves = new Map(chess.moves({ verbose: true }).map((move) => [move.san, move]))
  const onlyOurs = sans.filter((san) => !theirMoves.has(san))
  const onlyTheirs = [...theirMoves.keys()].filter((san) => !sans.includes(san))
  if (onlyOurs.length || onlyTheirs.length) {
    problems.push(
      `SAN sets differ (${sans.length} vs ${theirMoves.size}): only chessd [${onlyOurs.join(' ')}], ` +
        `only chess.js [${onlyTheirs.join(' ')}]`,
    )
  }
  sans.forEach((san, i) => {
    const move = theirMoves.get(san)
    if (move && move.after !== afters[i]) {
      problems.push(`FEN after ${san}: chessd '${afters[i]}', chess.js '${move.after}'`)
    }
  })

  const theirFlags = {
    check: chess.isCheck(),
    checkmate: chess.isCheckmate(),
    stalemate: chess.isStalemate(),
    insufficient: chess.isInsufficientMaterial(),
  }
  for (const word of FLAG_WORDS) {
    if (theirFlags[word] !== flags.has(word)) {
      problems.push(`${word}: chessd ${flags.has(word)}, chess.js ${theirFlags[word]}`)
    }
  }
  return problems
}

runOracle('chessjs', parseLine, comparePosition)
