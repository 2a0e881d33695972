// Prints the 960 Chess960 start positions as kokopu builds them, one line per
// Scharnagl number: `N FEN` for N = 0..959 (kokopu writes Shredder-FEN
// castling, e.g. "AHah"). tests/rules/test_chess960.c compares every line with
// rules/chess960.c. Exit status 2 when kokopu cannot be loaded.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
let kokopu
try {
  kokopu = require('kokopu')
} catch (error) {
  console.error(`chess960_table: cannot load kokopu (npm ci --prefix tests/oracle): ${error.message}`)
  process.exit(2)
}
const lines = []
for (let n = 0; n < 960; n++) lines.push(`${n} ${new kokopu.Position('chess960', n).fen()}`)
process.stdout.write(lines.join('\n') + '\n')
