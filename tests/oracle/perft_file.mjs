// Reads tests/data/perft/variants/*.perft for the node tests in this folder:
// "id NAME", "epd FEN", then "perft DEPTH NODES" lines (see the README there).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const PERFT_DIR = fileURLToPath(new URL('../data/perft/variants/', import.meta.url));

/** Every count of the file: [{ id, fen, depth, nodes }], in file order. */
export function perftLines(name) {
  const lines = [];
  let id = null, fen = null;
  for (const line of readFileSync(PERFT_DIR + name, 'utf8').split('\n')) {
    const [word, ...rest] = line.trim().split(/\s+/);
    if (word === 'id') id = rest.join(' ');
    else if (word === 'epd') fen = rest.join(' ');
    else if (word === 'perft') lines.push({ id, fen, depth: Number(rest[0]), nodes: Number(rest[1]) });
  }
  return lines;
}
