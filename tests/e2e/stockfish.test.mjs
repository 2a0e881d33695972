// Agreement with Stockfish over HTTP: seeded random walks through the API
// (each step picks a move from GET /v1/position's legal_moves and plays it
// with POST /v1/position/moves) give >= 200 standard and some Chess960
// positions; for each, the set of legal_moves[].uci and the check flag must
// equal Stockfish's `go perft 1` moves and `d` checkers. One Stockfish
// process serves the whole run (/usr/games/stockfish or CHESSD_STOCKFISH).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startServer } from './server.mjs';
import { get, post, START_FEN, KIWIPETE } from './http.mjs';
import { prng } from './prng.mjs';

const STOCKFISH = process.env.CHESSD_STOCKFISH ?? '/usr/games/stockfish';
const SEED = Number(process.env.CHESSD_E2E_SEED ?? 20240607);
const PLIES_PER_WALK = 40;

const STANDARD_STARTS = [
  START_FEN,
  KIWIPETE,
  '8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1',
  'r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1',
  'rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8',
  'n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1',
];
const CHESS960_STARTS = [
  'bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1',
  'nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w KQkq - 0 1',
  'rkrnnqbb/pppppppp/8/8/8/8/PPPPPPPP/RKRNNQBB w KQkq - 0 1',
];

/** A line-oriented UCI session with one Stockfish process. */
class Uci {
  constructor(path) {
    this.proc = spawn(path, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = [];
    this.waiters = [];
    let partial = '';
    this.proc.stdout.setEncoding('utf8').on('data', (d) => {
      const parts = (partial + d).split('\n');
      partial = parts.pop();
      for (const line of parts) this.lines.push(line.trimEnd());
      this.wake();
    });
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
  }

  wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  send(command) {
    this.proc.stdin.write(`${command}\n`);
  }

  /** Collects lines up to and including the first one matching re. */
  async until(re, timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    const taken = [];
    for (;;) {
      while (this.lines.length) {
        const line = this.lines.shift();
        taken.push(line);
        if (re.test(line)) return taken;
      }
      assert.ok(Date.now() < deadline, `stockfish: no line matching ${re} within ${timeoutMs} ms`);
      await new Promise((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  /** Legal moves (UCI) and whether the side to move is in check. */
  async analyse(fen) {
    this.send(`position fen ${fen}`);
    this.send('d');
    this.send('go perft 1');
    const lines = await this.until(/^Nodes searched: \d+/);
    const checkers = lines.find((l) => l.startsWith('Checkers:'));
    assert.ok(checkers !== undefined, `stockfish 'd' printed no Checkers line for ${fen}`);
    const moves = lines.filter((l) => /^[a-h][1-8][a-h][1-8][nbrq]?: 1$/.test(l)).map((l) => l.split(':')[0]);
    const nodes = Number(/Nodes searched: (\d+)/.exec(lines.at(-1))[1]);
    assert.equal(moves.length, nodes, `stockfish output for ${fen} did not parse`);
    return { moves: moves.sort(), check: checkers.trim() !== 'Checkers:' };
  }
}

let server;
let uci;
before(async () => {
  assert.ok(existsSync(STOCKFISH), `Stockfish is missing: ${STOCKFISH} does not exist. Install it (apt-get install stockfish, part of make deps) or set CHESSD_STOCKFISH.`);
  server = await startServer();
  uci = new Uci(STOCKFISH);
  uci.send('uci');
  await uci.until(/^uciok$/);
  uci.send('isready');
  await uci.until(/^readyok$/);
});
after(async () => {
  if (uci) {
    uci.send('quit');
    await uci.exited;
  }
  await server?.stop();
});

/**
 * Walks PLIES_PER_WALK random plies from each start FEN through the API,
 * checking every position against Stockfish. Returns how many positions were
 * checked and how many legal moves of each special kind they offered.
 */
async function walkAndCompare(starts, chess960, seed) {
  const r = prng(seed);
  const flag = chess960 ? '&chess960=true' : '';
  let checked = 0;
  const seen = { castle: 0, en_passant: 0, promotion: 0, check: 0 };
  for (const start of starts) {
    let fen = start;
    for (let ply = 0; ply < PLIES_PER_WALK; ply++) {
      const res = await get(server, `/v1/position?fen=${encodeURIComponent(fen)}${flag}`);
      assert.equal(res.status, 200, `${fen}: ${JSON.stringify(res.body)}`);
      const position = res.body;
      const ours = position.legal_moves.map((m) => m.uci).sort();
      const theirs = await uci.analyse(position.fen);
      const missing = theirs.moves.filter((m) => !ours.includes(m));
      const extra = ours.filter((m) => !theirs.moves.includes(m));
      assert.deepEqual({ missing, extra }, { missing: [], extra: [] },
        `legal moves differ from Stockfish in ${position.fen}${chess960 ? ' (Chess960)' : ''} (walk from ${start}, ply ${ply})`);
      assert.equal(position.check, theirs.check, `check flag differs from Stockfish in ${position.fen}`);
      assert.equal(new Set(position.legal_moves.map((m) => m.san)).size, ours.length, `two moves share a SAN in ${position.fen}`);
      checked++;
      for (const m of position.legal_moves) for (const f of m.flags) if (f in seen) seen[f]++;
      if (ours.length === 0) break; // mate or stalemate ends the walk
      const move = r.pick(position.legal_moves);
      const played = await post(server, '/v1/position/moves?legal_moves=false', { fen: position.fen, chess960, moves: [move.uci] });
      assert.equal(played.status, 200, `${position.fen} ${move.uci}: ${JSON.stringify(played.body)}`);
      assert.deepEqual(played.body.moves[0], move, 'the move record from /moves must equal the legal_moves entry');
      fen = played.body.position.fen;
    }
  }
  return { checked, seen };
}

test('legal moves agree with Stockfish on >= 200 random standard positions', async (t) => {
  const { checked, seen } = await walkAndCompare(STANDARD_STARTS, false, SEED);
  t.diagnostic(`${checked} positions (seed ${SEED}); special moves offered: ${JSON.stringify(seen)}`);
  assert.ok(checked >= 200, `only ${checked} positions were checked`);
  for (const [kind, n] of Object.entries(seen)) assert.ok(n > 0, `the walks never met a ${kind} move; pick other starts`);
});

test('legal moves agree with Stockfish (UCI_Chess960) on random Chess960 positions', async (t) => {
  uci.send('setoption name UCI_Chess960 value true');
  uci.send('isready');
  await uci.until(/^readyok$/);
  const { checked, seen } = await walkAndCompare(CHESS960_STARTS, true, SEED + 960);
  t.diagnostic(`${checked} Chess960 positions; special moves offered: ${JSON.stringify(seen)}`);
  assert.ok(checked >= 90, `only ${checked} positions were checked`);
  assert.ok(seen.castle > 0, 'the Chess960 walks never met a castling move');
});
