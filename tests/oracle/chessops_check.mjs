// Oracle for tests/rules/test_oracle.c: checks chessd's per-side insufficient
// material (status_insufficient_material_for) against chessops 0.15.1's
// hasInsufficientMaterial(color), the rule Lichess applies when a flag falls
// (pinned in package.json; install with `npm ci --prefix tests/oracle`).
// Reads the file named by argv[2], or stdin, one position a line; prints
// every disagreement with its FEN and ends with
// `chessops: N positions checked, M mismatches`.
// Exit status: 0 no mismatch, 1 some mismatch, 2 unreadable or malformed input.
//
// Input line, three TAB-separated fields ('#' lines and blank lines are skipped):
//   FEN      the position, as chessd's fen_format writes it
//   WHITE    chessd's verdict for white: "insufficient" or "sufficient"
//   BLACK    the same for black
// Each colour whose verdict differs from chessops's counts as one mismatch;
// a FEN chessops refuses counts as one too.
import { Chess } from 'chessops/chess'
import { parseFen } from 'chessops/fen'
import { runOracle } from './oracle_run.mjs'

const VERDICTS = ['insufficient', 'sufficient']
const COLORS = ['white', 'black']

// Splits one input line into its fields; throws on a malformed line.
function parseLine(line, lineNumber) {
  const fields = line.split('\t')
  if (fields.length !== 3) {
    throw new Error(`line ${lineNumber}: expected 3 TAB-separated fields, found ${fields.length}`)
  }
  const [fen, white, black] = fields
  for (const verdict of [white, black]) {
    if (!VERDICTS.includes(verdict)) {
      throw new Error(`line ${lineNumber}: unknown verdict '${verdict}'`)
    }
  }
  return { fen, verdicts: { white: white === 'insufficient', black: black === 'insufficient' } }
}

// chessops's "insufficient" verdicts, counted for the summary.
const insufficient = { white: 0, black: 0 }

// Compares one position; returns the list of disagreements (strings).
function comparePosition({ fen, verdicts }) {
  const position = parseFen(fen).chain((setup) => Chess.fromSetup(setup))
  if (position.isErr) {
    return [`chessops rejects the FEN: ${position.error.message}`]
  }
  const problems = []
  for (const color of COLORS) {
    const theirs = position.value.hasInsufficientMaterial(color)
    insufficient[color] += theirs ? 1 : 0
    if (theirs !== verdicts[color]) {
      problems.push(`${color} insufficient material: chessd ${verdicts[color]}, chessops ${theirs}`)
    }
  }
  return problems
}

runOracle('chessops', parseLine, comparePosition, () => [
  `chessops says insufficient: white ${insufficient.white}, black ${insufficient.black}`,
])
