// The loop both oracles share (chessjs_check.mjs, chessops_check.mjs): reads
// the file named by argv[2] (or stdin), skips blank and '#' lines, parses
// each other line, compares it, prints every disagreement with its FEN and
// ends with `NAME: N positions checked, M mismatches` after the oracle's own
// summary lines. Exit status: 0 no mismatch, 1 some mismatch, 2 unreadable
// or malformed input.
import { readFileSync } from 'node:fs'

function readInput(name) {
  const path = process.argv[2]
  try {
    return readFileSync(path === undefined || path === '-' ? 0 : path, 'utf8')
  } catch (error) {
    console.error(`${name}: cannot read ${path ?? 'stdin'}: ${error.message}`)
    process.exit(2)
  }
}

// parseLine(line, lineNumber) gives the parsed position (with its fen) or
// throws on a malformed line; comparePosition(parsed) gives the list of
// disagreements (strings); summary() gives lines printed before the last.
export function runOracle(name, parseLine, comparePosition, summary = () => []) {
  const lines = readInput(name).split('\n')
  let positions = 0
  let mismatches = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '')
    if (line === '' || line.startsWith('#')) continue
    let parsed
    try {
      parsed = parseLine(line, i + 1)
    } catch (error) {
      console.error(`${name}: malformed input: ${error.message}`)
      process.exit(2)
    }
    positions++
    const problems = comparePosition(parsed)
    for (const problem of problems) {
      console.log(`mismatch at ${parsed.fen}: ${problem}`)
    }
    mismatches += problems.length
  }
  for (const line of summary()) console.log(line)
  console.log(`${name}: ${positions} positions checked, ${mismatches} mismatches`)
  process.exit(mismatches ? 1 : 0)
}
