// Writes the PGN corpus of pgn_bench.sh: DISTINCT random legal games
// (chessops, a fixed seed), Lichess export style ([%eval] and [%clk] on every
// move, a variation now and then), repeated with their own Event tags until
// the file holds GAMES games.   usage: node pgn_corpus.mjs OUT GAMES [DISTINCT]
import { writeFileSync } from 'node:fs';
import { prng } from '../e2e/prng.mjs';

// chessops from tests/e2e's packages (npm ci --prefix tests/e2e, make deps)
const { Chess } = await import(new URL('../e2e/node_modules/chessops/dist/esm/chess.js', import.meta.url));
const { makeSan } = await import(new URL('../e2e/node_modules/chessops/dist/esm/san.js', import.meta.url));

const [out, gamesArg, distinctArg] = process.argv.slice(2);
const GAMES = Number(gamesArg ?? 50000), DISTINCT = Number(distinctArg ?? 2000);
const rnd = prng(20261207);

function legal(pos) {
  const moves = [];
  for (const [from, dests] of pos.allDests()) for (const to of dests) {
    const promo = pos.board.get(from)?.role === 'pawn' && (to >> 3 === 7 || to >> 3 === 0);
    moves.push(promo ? { from, to, promotion: 'queen' } : { from, to });
  }
  return moves;
}

function clock(s) {
  return `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

function movetext() {
  const pos = Chess.default();
  const tokens = [];
  let secs = [300, 300];
  const plies = 40 + rnd.int(60);
  for (let ply = 0; ply < plies && !pos.isEnd(); ply++) {
    const moves = legal(pos);
    const move = moves[rnd.int(moves.length)];
    if (ply % 2 === 0) tokens.push(`${ply / 2 + 1}.`);
    else if (tokens.length && tokens[tokens.length - 1].endsWith('}')) tokens.push(`${(ply + 1) / 2}...`);
    tokens.push(makeSan(pos, move));
    secs[ply % 2] = Math.max(0, secs[ply % 2] - rnd.int(8));
    tokens.push(`{ [%eval ${(rnd.int(400) - 200) / 100}] [%clk ${clock(secs[ply % 2])}] }`);
    if (rnd.chance(0.05) && moves.length > 1) {
      const alt = moves.find((m) => m !== move);
      tokens.push(`( ${ply % 2 === 0 ? `${ply / 2 + 1}.` : `${(ply + 1) / 2}...`} ${makeSan(pos, alt)} )`);
    }
    pos.play(move);
  }
  tokens.push('*');
  const lines = [];
  let line = '';
  for (const t of tokens) {
    if (line && line.length + 1 + t.length > 79) { lines.push(line); line = t; } else line = line ? `${line} ${t}` : t;
  }
  lines.push(line);
  return lines.join('\n');
}

const distinct = Array.from({ length: DISTINCT }, movetext);
const parts = [];
for (let i = 0; i < GAMES; i++) {
  parts.push(`[Event "Bench ${i}"]\n[Site "https://example.org"]\n[Date "2026.12.07"]\n[Round "-"]\n[White "White ${i % 97}"]\n[Black "Black ${i % 89}"]\n[Result "*"]\n\n${distinct[i % DISTINCT]}\n\n`);
}
writeFileSync(out, parts.join(''));
