// Oracle for tests/test_oracle.c: checks chessd's per-side insufficient
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
import { readFileSync } from 'node:fs'
import { Chess } from 'chessops/chess'
import { parseFen } from 'chessops/fen'

const VERDICTS = ['insufficient', 'sufficient']
const COLORS = ['white', 'black']

function readInput() {
  const path = process.argv[2]
  try {
    return readFileSync(path === undefined || path === '-' ? 0 : path, 'utf8')
  } catch (error) {
    console.error(`chessops: cannot read ${path ?? 'stdin'}: ${error.message}`)
    process.exit(2)
  }
}

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

// Compares one position; returns the list of disagreements (strings) and
// chessops's verdicts.
function comparePosition({ fen, verdicts }) {
  const position = parseFen(fen).chain((setup) => Chess.fromSetup(setup))
  if (position.isErr) {
    return { problems: [`chessops rejects the FEN: ${position.error.message}`], theirs: null }
  }
  const problems = []
  const theirs = {}
  for (const color of COLORS) {
    theirs[color] = position.value.hasInsufficientMaterial(color)
    if (theirs[color] !== verdicts[color]) {
      problems.push(`${color} insufficient material: chessd ${verdicts[color]}, chessops ${theirs[color]}`)
    }
  }
  return { problems, theirs }
}

function main() {
  const lines = readInput().split('\n')
  let positions = 0
  let mismatches = 0
  const insufficient = { white: 0, black: 0 }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '')
    if (line === '' || line.startsWith('#')) continue
    let parsed
    try {
      parsed = parseLine(line, i + 1)
    } catch (error) {
      console.error(`chessops: malformed input: ${error.message}`)
      process.exit(2)
    }
    positions++
    const { problems, theirs } = comparePosition(parsed)
    for (const problem of problems) {
      console.log(`mismatch at ${parsed.fen}: ${problem}`)
    }
    mismatches += problems.length
    for (const color of COLORS) insufficient[color] += theirs?.[color] ? 1 : 0
  }
  console.log(`chessops says insufficient: white ${insufficient.white}, black ${insufficient.black}`)
  console.log(`chessops: ${positions} positions checked, ${mismatches} mismatches`)
  process.exit(mismatches ? 1 : 0)
}

main()
