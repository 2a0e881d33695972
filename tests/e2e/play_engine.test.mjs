// `chessd play` against the computer and its hints, run as a process with
// real Stockfish: the local --level game driven move by move through pipes
// (the person's moves drawn at random among chess.js's legal ones) to its
// end, every computer move legal by chess.js and the printed FEN chess.js's;
// --color honoured (the computer opens as White, the board turned); hint's
// line and its move legal, the mate in a mate-in-one; no engine, a clear
// error. Remote: --server URL --level creates a game against the computer on
// a real chessd + redis-server and plays it (the computer's moves arriving on
// the event stream, checked against the stored game); hint over GET
// /analysis, allowed against the computer and refused in a game between two
// people until it is over.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { Chess } from 'chess.js';
import { startServer, CHESSD_BIN, trackProcess } from './server.mjs';
import { post, get, sleep } from './http.mjs';
import { prng } from './prng.mjs';

let server;
const procs = new Set(); // every chessd play started, killed at the end whatever failed
before(async () => { server = await startServer(['--engine', '/usr/games/stockfish']); });
after(async () => {
  for (const proc of procs) proc.kill('SIGKILL');
  await server?.stop();
});

const HINT_LINE = /^hint: (\S+) \((?:[+-]\d+\.\d\d|mate in \d+|mated in \d+)\)$/;

/** Spawns `chessd play ARGS` with pipes; its output collected as it comes. */
function spawnPlay(args) {
  const proc = trackProcess(spawn(CHESSD_BIN, ['play', ...args], { stdio: ['pipe', 'pipe', 'pipe'] }));
  procs.add(proc);
  proc.on('exit', () => procs.delete(proc));
  const p = { proc, stdout: '', stderr: '' };
  proc.stdout.setEncoding('utf8').on('data', (d) => { p.stdout += d; });
  proc.stderr.setEncoding('utf8').on('data', (d) => { p.stderr += d; });
  p.exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  p.write = (line) => proc.stdin.write(`${line}\n`);
  /** Waits for pattern (a string, or a regex without g) in the output past `from`; resolves to the match. */
  p.waitFor = async (pattern, from = 0, timeoutMs = 15000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rest = p.stdout.slice(from);
      const m = typeof pattern === 'string' ? (rest.includes(pattern) ? [pattern] : null) : pattern.exec(rest);
      if (m) return m;
      assert.ok(Date.now() < deadline, `${pattern} did not come within ${timeoutMs} ms; output:\n${p.stdout.slice(-3000)}\nstderr: ${p.stderr}`);
      await sleep(10);
    }
  };
  /** Waits until the output holds `count` lines matching re (a regex with g); resolves to their matches. */
  p.waitForCount = async (re, count, timeoutMs = 15000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = [...p.stdout.matchAll(re)];
      if (found.length >= count) return found;
      assert.ok(Date.now() < deadline, `${count} of ${re} did not come within ${timeoutMs} ms; output:\n${p.stdout.slice(-3000)}\nstderr: ${p.stderr}`);
      await sleep(10);
    }
  };
  /** Sends `fen` and resolves to the FEN line it prints (the first past the current output). */
  p.fen = async () => {
    const mark = p.stdout.length;
    p.write('fen');
    const m = await p.waitFor(/^([1-8pnbrqkPNBRQK/]+ [wb] \S+ \S+ \d+ \d+)$/m, mark);
    return m[1];
  };
  return p;
}

/** The last "Status: ..." line of text (undefined when none). */
const lastStatus = (text) => text.match(/^Status: .*$/gm)?.at(-1);

test('chessd play --help lists --level, --color and --engine, and hint among the commands', () => {
  const r = spawnSync(CHESSD_BIN, ['play', '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^usage: chessd play \[--level N \[--color C\]\] \[--engine PATH\]/);
  assert.match(r.stdout, /^ {7}chessd play --server URL --level N \[--color C\]/m);
  assert.match(r.stdout, /^ {2}--level N {8}play against the computer at level N/m);
  assert.match(r.stdout, /^ {2}--color C {8}the side you play against the computer: white \(the default\),\n\s+black or random$/m);
  assert.match(r.stdout, /^ {2}--engine PATH {4}.*\n\s+\(default \/usr\/games\/stockfish\)$/m);
  assert.match(r.stdout, /^ {2}hint {5}the engine's best move/m);
});

test('local --level 6: a game played to its end by random moves; every computer move is legal and every FEN is chess.js\'s', async (t) => {
  const rnd = prng(6061);
  const chess = new Chess();
  const p = spawnPlay(['--level', '6']); // white, the default
  await p.waitFor('You play white against chessd level 6 (Stockfish');
  assert.equal(await p.fen(), chess.fen());
  let computerMoves = 0;
  let status = 'Status: active';
  for (let ply = 0; ply < 300 && status === 'Status: active'; ply++) {
    const move = rnd.pick(chess.moves());
    chess.move(move);
    const mark = p.stdout.length;
    p.write(move);
    const fen = await p.fen();
    const block = p.stdout.slice(mark);
    assert.ok(!block.includes('error: '), block);
    const reply = /^black played (\S+)$/m.exec(block);
    if (reply) {
      assert.doesNotThrow(() => chess.move(reply[1]), `the computer's ${reply[1]} is legal after ${chess.history().join(' ')}`);
      computerMoves++;
    }
    assert.equal(fen, chess.fen(), `after ${chess.history().join(' ')}`);
    assert.ok(!/^white played /m.test(block), 'the computer plays black only');
    status = lastStatus(block);
    if (!reply) assert.notEqual(status, 'Status: active', `no reply, yet the game goes on: ${block}`);
  }
  assert.notEqual(status, 'Status: active', `the game should have ended within 300 plies: ${chess.pgn()}`);
  assert.ok(chess.isGameOver(), `chess.js agrees the game is over (${status})`);
  if (chess.isCheckmate()) assert.match(status, /^Status: checkmate, result (1-0|0-1)$/);
  assert.ok(computerMoves >= 1);
  t.diagnostic(`${chess.history().length} plies, ${computerMoves} by the computer: ${status}`);
  const mark = p.stdout.length;
  p.write('pgn');
  await p.waitFor(/^\[Black "chessd level 6"\]$/m, mark);
  p.proc.stdin.end();
  assert.equal(await p.exited, 0, p.stderr);
  assert.equal(p.stderr, '');
});

test('local --color black: the computer opens as White before any input, the board turned for black, hint legal on the person\'s turn', async () => {
  const p = spawnPlay(['--level', '1', '--color', 'black']);
  await p.waitFor('You play black against chessd level 1');
  const opening = await p.waitFor(/^white played (\S+)$/m);
  const chess = new Chess();
  chess.move(opening[1]);
  // One board, after the computer's move (marked in brackets): rank 1 on top.
  await p.waitFor(/^Moves: 1\. \S+$/m);
  const ranks = p.stdout.split('\n').filter((l) => /^[1-8][ [][^ ]/.test(l)).map((l) => l[0]);
  assert.deepEqual(ranks, ['1', '2', '3', '4', '5', '6', '7', '8'], 'rank 1 on top: black at the bottom');
  assert.match(p.stdout, /^ {2}h g f e d c b a$/m);
  assert.equal(await p.fen(), chess.fen());
  const mark = p.stdout.length;
  p.write('hint');
  const hint = await p.waitFor(/^hint: .*$/m, mark);
  const m = HINT_LINE.exec(hint[0]);
  assert.ok(m, hint[0]);
  assert.doesNotThrow(() => chess.move(m[1]), `the hinted ${m[1]} is legal`);
  p.write('quit');
  assert.equal(await p.exited, 0);
  // random: the side drawn is said, and the computer opens exactly when it drew white
  const r = spawnPlay(['--level', '1', '--color', 'random']);
  const side = (await r.waitFor(/^You play (white|black) against chessd level 1/m))[1];
  await r.fen();
  assert.equal(/^white played /m.test(r.stdout), side === 'black');
  r.proc.stdin.end();
  assert.equal(await r.exited, 0);
});

test('hint: the mate in one, in a game between two people and against the computer; its line and move in random positions', async () => {
  const mate = spawnSync(CHESSD_BIN, ['play', '--fen', '6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1'], { input: 'hint\nRd8#\nhint\n', encoding: 'utf8' });
  assert.equal(mate.status, 0, mate.stderr);
  const lines = mate.stdout.split('\n');
  assert.ok(lines.includes('hint: Rd8# (mate in 1)'), mate.stdout);
  assert.ok(lines.includes('Status: checkmate, result 1-0'));
  assert.ok(lines.includes('error: game_over: the game is over and its position has no legal move'));
  const against = spawnSync(CHESSD_BIN, ['play', '--level', '3', '--fen', '6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1'], { input: 'hint\n', encoding: 'utf8' });
  assert.ok(against.stdout.split('\n').includes('hint: Rd8# (mate in 1)'), against.stdout);
  // A few random positions: each hint's move is legal there (chess.js), its line as documented.
  const rnd = prng(4242);
  const chess = new Chess();
  const script = [];
  const positions = [];
  for (let ply = 0; ply < 24 && !chess.isGameOver(); ply++) {
    const move = rnd.pick(chess.moves());
    chess.move(move);
    script.push(move);
    if (ply % 6 === 5) { script.push('hint'); positions.push(chess.fen()); }
  }
  const run = spawnSync(CHESSD_BIN, ['play'], { input: `${script.join('\n')}\n`, encoding: 'utf8', timeout: 60000 });
  assert.equal(run.status, 0, run.stderr);
  const hints = run.stdout.split('\n').filter((l) => l.startsWith('hint'));
  assert.equal(hints.length, positions.length, run.stdout);
  hints.forEach((line, i) => {
    const m = HINT_LINE.exec(line);
    assert.ok(m, line);
    assert.doesNotThrow(() => new Chess(positions[i]).move(m[1]), `${m[1]} is legal in ${positions[i]}`);
  });
});

test('no engine: --level exits 2 with a clear error; hint between two people is an error line and the session goes on', () => {
  const level = spawnSync(CHESSD_BIN, ['play', '--level', '4', '--engine', '/nonexistent/stockfish'], { input: '', encoding: 'utf8' });
  assert.equal(level.status, 2);
  assert.equal(level.stdout, '');
  assert.match(level.stderr, /^chessd play: --level needs a chess engine, and none runs at '\/nonexistent\/stockfish': .*\(install stockfish, or give --engine PATH\)\n$/);
  const hint = spawnSync(CHESSD_BIN, ['play', '--engine', '/nonexistent/stockfish'], { input: 'hint\ne4\nfen\n', encoding: 'utf8' });
  assert.equal(hint.status, 0);
  assert.match(hint.stdout, /^error: engine_unavailable: no engine for hints at \/nonexistent\/stockfish: /m);
  assert.ok(hint.stdout.includes('rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n'));
  for (const [args, message] of [
    [['--color', 'black'], /--color is the side you play against the computer: give --level too/],
    [['--level', '9'], /--level must be a number from 1 to 8/],
    [['--level', '2', '--color', 'green'], /--color must be white, black or random/],
    [['--server', 'http://127.0.0.1:1', '--level', '2', '--game', 'abc'], /--level creates a new game; --game and --token join a stored one/],
    [['--server', 'http://127.0.0.1:1', '--level', '2', '--engine', '/usr/games/stockfish'], /--engine is for the local session/],
  ]) {
    const r = spawnSync(CHESSD_BIN, ['play', ...args], { input: '', encoding: 'utf8' });
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, message);
  }
});

test('remote --level: creates a game against the computer on the server and plays it; its moves arrive on the stream, hint is the server\'s analysis', async () => {
  const rnd = prng(777);
  const p = spawnPlay(['--server', server.base, '--level', '2', '--color', 'black']);
  const id = (await p.waitFor(/^Created game ([A-Za-z0-9_-]+) against chessd level 2\.$/m))[1];
  await p.waitFor(`You play black in game ${id} (version 1).`);
  const game = await get(server, `/v1/games/${id}`);
  assert.equal(game.status, 200);
  assert.deepEqual(game.body.white.engine, { level: 2 });
  assert.equal(game.body.black.engine, undefined);
  assert.match(p.stdout, /^1 R N B K Q B N R$/m, 'black at the bottom');
  for (let round = 0; round < 4; round++) {
    await p.waitForCount(/^white played (\S+)$/gm, round + 1);
    const stored = await get(server, `/v1/games/${id}`);
    const chess = new Chess();
    for (const m of stored.body.moves) assert.doesNotThrow(() => chess.move(m.san), `${m.san} is legal`);
    const shown = [...p.stdout.matchAll(/^white played (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(shown, stored.body.moves.filter((_, i) => i % 2 === 0).map((m) => m.san));
    if (stored.body.status !== 'active') break;
    if (round === 1) { // hint on the person's turn: the server's analysis, a legal move there
      const mark = p.stdout.length;
      p.write('hint');
      const line = (await p.waitFor(/^(?:hint|error): .*$/m, mark))[0];
      const m = HINT_LINE.exec(line);
      assert.ok(m, line);
      assert.doesNotThrow(() => new Chess(stored.body.position.fen).move(m[1]), `the hinted ${m[1]} is legal`);
    }
    const move = rnd.pick(chess.moves());
    const mark = p.stdout.length;
    p.write(move);
    await p.waitFor(`Moves: `, mark);
  }
  const mark = p.stdout.length;
  p.write('resign');
  await p.waitFor('Status: resigned (resignation), result 1-0\n', mark);
  p.proc.stdin.end();
  assert.equal(await p.exited, 0, p.stderr);
  assert.equal((await get(server, `/v1/games/${id}`)).body.status, 'resigned');
});

test('remote hint between two people: analysis_not_allowed while it is played, a hint once it is over', async () => {
  const game = await post(server, '/v1/games', {});
  assert.equal(game.status, 201);
  const { id, tokens } = game.body;
  const p = spawnPlay(['--server', server.base, '--game', id, '--token', tokens.white]);
  await p.waitFor(`You play white in game ${id}`);
  let mark = p.stdout.length;
  p.write('hint');
  await p.waitFor(/^error: analysis_not_allowed: this game between two people is still being played/m, mark);
  p.write('resign');
  await p.waitFor('Status: resigned (resignation), result 0-1\n', mark);
  mark = p.stdout.length;
  p.write('hint');
  const line = (await p.waitFor(/^(?:hint|error): .*$/m, mark))[0];
  const m = HINT_LINE.exec(line);
  assert.ok(m, line);
  assert.doesNotThrow(() => new Chess().move(m[1]));
  p.proc.stdin.end();
  assert.equal(await p.exited, 0, p.stderr);
  assert.ok(!p.stdout.includes(tokens.white));
});
