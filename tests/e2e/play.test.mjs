// `chessd play`, the terminal mode, run as a process: with piped standard
// input (the local session compared with a real chessd's HTTP answers for the
// same moves: FEN, legal moves, refusals' code and detail, status, claimable
// draws, PGN movetext), and the remote mode against a real
// chessd + redis-server (the opponent's move arrives on the event stream
// while the process waits for input; a bad token's problem detail; the token
// never printed); --variant locally, in a joined crazyhouse game and for a
// game against the computer. play_terminal.test.mjs runs it in a real
// terminal (tmux).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { startServer, CHESSD_BIN, REPO_ROOT, trackProcess, tempDir } from './server.mjs';
import { post, get, sleep } from './http.mjs';
import { prng } from './prng.mjs';

let server;
const remotes = new Set(); // the remote-mode processes, killed at the end whatever failed
before(async () => { server = await startServer(); });
after(async () => {
  for (const proc of remotes) proc.kill('SIGKILL');
  await server?.stop();
});

/** Runs `chessd play ARGS` with input piped in; resolves to { code, stdout, stderr }. */
function playLocal(args, input, env = {}) {
  const res = spawnSync(CHESSD_BIN, ['play', ...args], {
    input, encoding: 'utf8', timeout: 20000, env: { ...process.env, ...env },
  });
  assert.equal(res.error, undefined, `chessd play failed to run: ${res.error}`);
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** The API's answer to a line of moves from fen (the start when undefined). */
async function apiLine(moves, fen) {
  return post(server, '/v1/position/moves', fen ? { fen, moves } : { moves });
}

/** The output's lines. */
const lines = (text) => text.split('\n');

test('chessd play --help prints the usage and exits 0; a bad option exits 2', () => {
  const help = playLocal(['--help'], '');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: chessd play /);
  assert.match(help.stdout, /--server URL/);
  const bad = playLocal(['--nonsense'], '');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown argument '--nonsense'/);
  const fen = playLocal(['--fen', 'not a fen'], '');
  assert.equal(fen.code, 2);
  assert.match(fen.stderr, /invalid_fen/);
});

test('piped, a random game shows after every move the FEN and the legal moves the API gives, and every refusal with the API\'s code and detail', async () => {
  const rnd = prng(1301);
  const files = 'abcdefgh';
  const moves = [];
  const script = [];
  const expected = []; // what each command must print, from the API
  for (let ply = 0; ply < 60; ply++) {
    const state = await apiLine(moves);
    assert.equal(state.status, 200);
    const legal = state.body.position.legal_moves;
    if (legal.length === 0) break;
    if (rnd.chance(0.3)) { // a refused move: random squares (or a word)
      const text = rnd.chance(0.2) ? rnd.pick(['Kz9', 'O-O-O', 'Qxh8', 'e', 'Nbd2']) :
        `${rnd.pick(files)}${1 + rnd.int(8)}${rnd.pick(files)}${1 + rnd.int(8)}`;
      const refused = await apiLine([...moves, text]);
      if (refused.status !== 200) {
        script.push(text);
        expected.push(`error: ${refused.body.code}: ${refused.body.detail}`);
      }
    }
    const move = rnd.pick(legal);
    const text = rnd.chance(0.5) ? move.uci : move.san;
    moves.push(text);
    const after = await apiLine(moves);
    script.push(text, 'fen', 'moves');
    expected.push(after.body.position.fen,
      `Legal moves (${after.body.position.legal_moves.length}):${after.body.position.legal_moves.map((m) => ` ${m.san}`).join('')}`);
  }
  const run = playLocal([], `${script.join('\n')}\n`);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, '');
  const interesting = lines(run.stdout).filter((l) => l.startsWith('error: ') || l.startsWith('Legal moves (') || /^[1-8KQRBNPkqrbnp/]+ [wb] /.test(l));
  assert.deepEqual(interesting, expected);
  assert.ok(expected.some((l) => l.startsWith('error: illegal_move: ')), 'the game should have refused an illegal move');
  assert.ok(!run.stdout.includes('\x1b'), 'no terminal escapes when piped');
  assert.ok(!/(white|black)> /.test(run.stdout), 'no prompt when standard input is not a terminal');
});

test('piped: fool\'s mate is checkmate as the API says, and the PGN movetext is the stored game\'s', async () => {
  const moves = ['f3', 'e5', 'g4', 'Qh4#'];
  const run = playLocal([], `${moves.join('\n')}\npgn\nquit\nthis is never read\n`);
  assert.equal(run.code, 0);
  const api = await apiLine(moves);
  assert.equal(api.body.position.status, 'checkmate');
  assert.ok(run.stdout.includes(`Status: ${api.body.position.status}, result ${api.body.position.result}\n`));
  assert.ok(run.stdout.includes('White to move, in check\n'));
  assert.ok(run.stdout.includes('Moves: 1. f3 e5 2. g4 Qh4#\n'));

  const game = await post(server, '/v1/games', {});
  assert.equal(game.status, 201);
  const tokens = game.body.tokens;
  for (let i = 0; i < moves.length; i++) {
    const res = await post(server, `/v1/games/${game.body.id}/moves`, { move: moves[i], expected_version: i + 1 },
      { headers: { authorization: `Bearer ${i % 2 ? tokens.black : tokens.white}` } });
    assert.equal(res.status, 200);
  }
  const pgn = await get(server, `/v1/games/${game.body.id}/pgn`);
  const movetext = (text) => text.split('\n\n')[1].trim();
  const localPgn = run.stdout.slice(run.stdout.indexOf('[Event '));
  assert.equal(movetext(localPgn), movetext(pgn.text));
  assert.ok(!run.stdout.includes('never read'));
});

test('piped: undo takes back a ply (the FEN is the API\'s after the shorter line), claim after a threefold repetition', async () => {
  const line = ['Nf3', 'Nf6', 'Ng1', 'Ng8', 'Nf3', 'Nf6', 'Ng1', 'Ng8'];
  const run = playLocal([], `e4\nundo\nfen\n${line.join('\n')}\nclaim\nfen\n`);
  assert.equal(run.code, 0);
  const start = await apiLine([]);
  const out = lines(run.stdout);
  assert.equal(out.filter((l) => l.includes(' w KQkq'))[0], start.body.position.fen);
  const repeated = await apiLine(line);
  assert.deepEqual(repeated.body.position.claimable_draws, ['threefold_repetition']);
  assert.ok(out.includes('Draw may be claimed: threefold_repetition'));
  assert.ok(out.includes('Status: draw (threefold_repetition), result 1/2-1/2'));
  assert.equal(out.filter((l) => l.includes(' w KQkq')).at(-1), repeated.body.position.fen);
});

test('piped: the material line after captures, --flip, --ascii and --fen', async () => {
  const run = playLocal(['--flip', '--ascii', '--fen', 'r3k2r/8/8/3q4/8/8/8/R3K2R w KQkq - 0 1'], 'Rxa8+\nKe7\nO-O\n');
  assert.equal(run.code, 0);
  const out = lines(run.stdout);
  assert.equal(out[0], '1 R . . K . . . R', 'flipped: rank 1 on top, the h-file on the left');
  assert.equal(out[8], '  h g f e d c b a');
  assert.ok(out.includes('Material - white 10, black 14'));
  assert.ok(out.includes('Material - white 10, black 19'));
  assert.ok(out.includes('Moves: 1. Rxa8+ Ke7 2. O-O'));
  const unicode = playLocal(['--unicode'], 'e4\nd5\nexd5\n');
  assert.ok(unicode.stdout.includes('Material \u2014 white 39, black 38\n'));
  assert.ok(unicode.stdout.includes('8 \u265c \u265e \u265d \u265b \u265a \u265d \u265e \u265c\n'));
  // Piped output is letters whatever the locale says (a script reads it).
  const piped = playLocal([], '', { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' });
  assert.ok(piped.stdout.startsWith('8 r n b q k b n r\n'));
});

test('piped: --chess960-position N starts Chess960 start N as the API describes it, --chess960 alone a random one', async () => {
  for (const n of [0, 518, 959]) {
    const run = playLocal(['--chess960-position', String(n)], 'fen\n');
    assert.equal(run.code, 0, run.stderr);
    const api = await get(server, `/v1/position?chess960_position=${n}&legal_moves=false`);
    assert.equal(api.status, 200);
    assert.equal(lines(run.stdout)[0], `Chess960 start ${n}`);
    assert.ok(lines(run.stdout).includes(api.body.fen), `start ${n}: ${api.body.fen}`);
  }
  const seen = new Set();
  for (let i = 0; i < 4; i++) {
    const run = playLocal(['--chess960'], 'fen\npgn\n');
    const n = Number(/^Chess960 start (\d+)$/.exec(lines(run.stdout)[0])[1]);
    const api = await get(server, `/v1/position?chess960_position=${n}&legal_moves=false`);
    assert.ok(lines(run.stdout).includes(api.body.fen));
    assert.ok(run.stdout.includes('[Variant "Chess960"]'));
    seen.add(n);
  }
  assert.ok(seen.size > 1, 'four random starts should not all be the same');
  const bad = playLocal(['--chess960-position', '960'], '');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /from 0 to 959/);
});

test('piped: --variant plays each variant as the API does (FEN after every move), shows pockets, checks and reserves', async () => {
  const lines_ = {
    crazyhouse: ['e4', 'd5', 'exd5', 'Qxd5', 'Nc3', 'Qa5', 'P@b4', 'Qxb4', 'd4', 'P@e6'],
    threeCheck: ['e4', 'e5', 'Bc4', 'Nc6', 'Bxf7+', 'Kxf7', 'Qh5+', 'g6', 'Qxe5', 'Qe7', 'Qxe7+'],
    seirawan: ['Nc3/H', 'e5', 'e4', 'Nf6/E', 'Ha3'],
    atomic: ['e4', 'd5', 'exd5', 'Qxd5'],
    antichess: ['e3', 'b5', 'Bxb5'],
    kingOfTheHill: ['e4', 'e5', 'Ke2', 'Ke7', 'Ke3'],
    horde: ['e5', 'd5', 'exd6'],
    racingKings: ['Kh3', 'Ka3'],
  };
  for (const [variant, moves] of Object.entries(lines_)) {
    const run = playLocal(['--variant', variant], `${moves.join('\nfen\n')}\nfen\n`);
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout);
    for (let i = 1; i <= moves.length; i++) {
      const api = await post(server, '/v1/position/moves?legal_moves=false', { variant, moves: moves.slice(0, i) });
      assert.equal(api.status, 200, `${variant} ${moves.slice(0, i)}: ${api.text}`);
      assert.ok(out.includes(api.body.position.fen), `${variant}, ply ${i}: ${api.body.position.fen} in\n${run.stdout}`);
      if (i === moves.length) {
        const status = api.body.position.status === 'active' ? 'Status: active' : `Status: variant_end (${api.body.position.status}), result ${api.body.position.result}`;
        assert.ok(out.includes(status), `${variant}: ${status}`);
      }
    }
    assert.ok(!run.stdout.includes('error:'), `${variant}: ${run.stdout}`);
  }
  const zh = playLocal(['--variant', 'ZH'], `${lines_.crazyhouse.join('\n')}\npgn\n`);
  assert.ok(zh.stdout.includes('White pocket: -\nBlack pocket: p p\n'));
  assert.ok(zh.stdout.includes('White pocket: -\nBlack pocket: p\n'), 'a pawn left the pocket');
  assert.ok(zh.stdout.includes('[Variant "Crazyhouse"]\n'));
  assert.ok(!zh.stdout.includes('[FEN '), 'the variant\'s own start needs no FEN tag');
  const three = playLocal(['--variant', '3check'], `${lines_.threeCheck.join('\n')}\n`);
  assert.ok(three.stdout.includes('Checks given: white 3, black 0 (three win)\n'));
  const schess = playLocal(['--variant', 's-chess'], `${lines_.seirawan.join('\n')}\n`);
  assert.ok(schess.stdout.includes('White reserve: E\nBlack reserve: h\n'));
  assert.ok(schess.stdout.includes('3[H]. N . . . . .\n'), 'the hawk gated on b1 moved to a3: the last move');
  // A FEN read in the variant; a name that is no variant's, or a variant with a Chess960 start: exit 2.
  const fen = playLocal(['--variant', 'crazyhouse', '--fen', 'k7/8/1K6/8/8/8/8/8[Q] w - - 0 1'], 'Q@b7\n');
  assert.ok(fen.stdout.includes('Status: checkmate, result 1-0\n'));
  const bad = playLocal(['--variant', 'bughouse'], '');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown variant 'bughouse'/);
  const c960 = playLocal(['--variant', 'atomic', '--chess960-position', '10'], '');
  assert.equal(c960.code, 2);
  assert.match(c960.stderr, /Chess960 goes with standard chess only/);
  const chess960 = playLocal(['--variant', 'chess960'], 'fen\n');
  assert.equal(chess960.code, 0);
  assert.match(lines(chess960.stdout)[0], /^Chess960 start \d+$/);
});

/** Spawns the remote mode (against base, the test's chessd by default); output collected as it comes. */
function playRemote(args, env = {}, base = server.base) {
  const proc = trackProcess(spawn(CHESSD_BIN, ['play', '--server', base, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env },
  }));
  remotes.add(proc);
  proc.on('exit', () => remotes.delete(proc));
  const p = { proc, stdout: '', stderr: '' };
  proc.stdout.setEncoding('utf8').on('data', (d) => { p.stdout += d; });
  proc.stderr.setEncoding('utf8').on('data', (d) => { p.stderr += d; });
  p.exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  /** Waits for text in the output, past offset `from` (the output's length at some earlier point). */
  p.waitFor = async (text, timeoutMs = 10000, from = 0) => {
    const deadline = Date.now() + timeoutMs;
    while (p.stdout.indexOf(text, from) < 0) {
      assert.ok(Date.now() < deadline, `'${text}' did not come within ${timeoutMs} ms; output:\n${p.stdout}\nstderr: ${p.stderr}`);
      await sleep(20);
    }
  };
  return p;
}

test('remote: plays white of a stored game, and black\'s move made over HTTP arrives on the event stream while input waits', async () => {
  const game = await post(server, '/v1/games', { white: 'Ann', black: 'Bob' });
  assert.equal(game.status, 201);
  const { id, tokens } = game.body;
  const p = playRemote(['--game', id, '--token', tokens.white]);
  await p.waitFor(`You play white in game ${id} (version 1).`);
  const cmdline = readFileSync(`/proc/${p.proc.pid}/cmdline`, 'utf8');
  assert.ok(cmdline.includes('--token') && !cmdline.includes(tokens.white), 'the token is blanked in the process list');
  p.proc.stdin.write('e4\n');
  await p.waitFor('Moves: 1. e4\n');
  const stored = await get(server, `/v1/games/${id}`);
  assert.equal(stored.body.version, 2);
  assert.deepEqual(stored.body.moves.map((m) => m.san), ['e4']);
  // The opponent moves; the play process is waiting on its standard input.
  const black = await post(server, `/v1/games/${id}/moves`, { move: 'e5', expected_version: 2 },
    { headers: { authorization: `Bearer ${tokens.black}` } });
  assert.equal(black.status, 200);
  await p.waitFor('black played e5\n', 5000);
  await p.waitFor('Moves: 1. e4 e5\n');
  // A refusal from the server: its code and detail.
  p.proc.stdin.write('Ke3\nfen\n');
  await p.waitFor('error: illegal_move: 2. Ke3: ');
  const now = await get(server, `/v1/games/${id}`);
  await p.waitFor(`${now.body.position.fen}\n`);
  // Black offers a draw over HTTP: the event, then the offer in the position; white declines it.
  const offer = await post(server, `/v1/games/${id}/draw`, { action: 'offer', expected_version: 3 },
    { headers: { authorization: `Bearer ${tokens.black}` } });
  assert.equal(offer.status, 200);
  await p.waitFor('event: draw_offer\n');
  await p.waitFor('Draw offered by black\n');
  const mark = p.stdout.length;
  p.proc.stdin.write('decline\nfen\n'); // commands run in order: the FEN line comes after the decline's answer
  await p.waitFor('rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n', 10000, mark);
  assert.equal(p.stdout.split('Draw offered by black').length, 2, 'the offer is shown once, and gone after the decline');
  assert.equal((await get(server, `/v1/games/${id}`)).body.draw_offer, null);
  // Moving out of turn is the server's refusal too.
  p.proc.stdin.write('Nf3\nd4\n');
  await p.waitFor('Moves: 1. e4 e5 2. Nf3\n');
  await p.waitFor('error: not_your_turn: ');
  p.proc.stdin.end();
  assert.equal(await p.exited, 0);
  assert.ok(!p.stdout.includes(tokens.white) && !p.stderr.includes(tokens.white), 'the token is never printed');
  assert.ok(!p.stdout.includes('\x1b'));
});

test('remote: black sees white\'s moves, undo is a takeback offer (agreement policy), resign ends the game', async () => {
  const game = await post(server, '/v1/games', {});
  const { id, tokens } = game.body;
  const p = playRemote(['--game', id], { CHESSD_PLAY_TOKEN: tokens.black });
  await p.waitFor(`You play black in game ${id}`);
  assert.ok(p.stdout.includes('1 R N B K Q B N R'), 'black sees the board from its side');
  await post(server, `/v1/games/${id}/moves`, { move: 'd4', expected_version: 1 },
    { headers: { authorization: `Bearer ${tokens.white}` } });
  await p.waitFor('white played d4\n');
  p.proc.stdin.write('d5\nundo\n');
  await p.waitFor('Takeback offered by black\n');
  assert.equal((await get(server, `/v1/games/${id}`)).body.takeback_offer, 'black');
  p.proc.stdin.write('resign\n');
  await p.waitFor('Status: resigned (resignation), result 1-0\n');
  p.proc.stdin.end();
  assert.equal(await p.exited, 0);
  assert.equal((await get(server, `/v1/games/${id}`)).body.status, 'resigned');
  assert.ok(!p.stdout.includes(tokens.black) && !p.stderr.includes(tokens.black));
});

test('remote: a crazyhouse game joined with --game: the opponent\'s drop arrives on the stream, the pockets follow', async () => {
  const game = await post(server, '/v1/games', { variant: 'crazyhouse', takeback: 'free' });
  assert.equal(game.status, 201);
  const { id, tokens } = game.body;
  const asBlack = (move, version) => post(server, `/v1/games/${id}/moves`, { move, expected_version: version },
    { headers: { authorization: `Bearer ${tokens.black}` } });
  const p = playRemote(['--game', id, '--token', tokens.white]);
  await p.waitFor(`You play white in game ${id} (version 1).`);
  assert.ok(p.stdout.includes('White pocket: -\nBlack pocket: -\n'));
  p.proc.stdin.write('e4\n');
  await p.waitFor('Moves: 1. e4\n');
  assert.equal((await asBlack('d5', 2)).status, 200);
  await p.waitFor('black played d5\n');
  p.proc.stdin.write('exd5\n');
  await p.waitFor('White pocket: P\nBlack pocket: -\n');
  assert.equal((await asBlack('Qxd5', 4)).status, 200);
  await p.waitFor('White pocket: P\nBlack pocket: p\n');
  p.proc.stdin.write('P@e4\nfen\n');
  await p.waitFor('Moves: 1. e4 d5 2. exd5 Qxd5 3. P@e4\n');
  const stored = await get(server, `/v1/games/${id}`);
  await p.waitFor(`${stored.body.position.fen}\n`);
  assert.equal(stored.body.position.fen, 'rnb1kbnr/ppp1pppp/8/3q4/4P3/8/PPPP1PPP/RNBQKBNR[p] b KQkq - 0 3');
  // A drop over HTTP: a move event one version ahead, played on the mirror in crazyhouse.
  assert.equal((await asBlack('P@d4', 6)).status, 200);
  await p.waitFor('black played P@d4\n');
  await p.waitFor('White pocket: -\nBlack pocket: -\n', 10000, p.stdout.indexOf('black played P@d4'));
  p.proc.stdin.end();
  assert.equal(await p.exited, 0);
  assert.ok(!p.stdout.includes('bad_answer'), p.stdout);
});

test('remote: --level with --variant asks the server for a game in that variant; no engine plays it here: its refusal, exit 1', async () => {
  const p = playRemote(['--level', '2', '--variant', 'kingOfTheHill']);
  assert.equal(await p.exited, 1);
  assert.match(p.stdout, /error: variant_not_supported_by_engine: /);
});

/** A plain HTTP proxy to the test's chessd on a free port: { base, sockets, close }. With hold(req)
 * true for a request, what its answer sends is kept back until release(). */
async function startProxy(hold = () => false) {
  const sockets = new Set();
  let held = [];
  let holding = true;
  const proxy = http.createServer((req, res) => {
    const upstream = http.request({ host: '127.0.0.1', port: server.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      const kept = hold(req);
      answer.on('data', (d) => { if (kept && holding) held.push(() => res.write(d)); else res.write(d); });
      answer.on('end', () => res.end());
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  proxy.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)); });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${proxy.address().port}`,
    sockets,
    release() { holding = false; for (const f of held) f(); held = []; },
    async close() { for (const socket of sockets) socket.destroy(); await new Promise((r) => proxy.close(r)); },
  };
}

test('remote: resign when the opponent has just moved and its event is not read yet: resigned at the new version, no version_conflict shown', async () => {
  // What the event stream sends is held (the session's mirror stays a version behind).
  const proxy = await startProxy((req) => /\/events(\?|$)/.test(req.url));
  let p;
  try {
    const game = await post(server, '/v1/games', {});
    const { id, tokens } = game.body;
    p = playRemote(['--game', id, '--token', tokens.black], {}, proxy.base);
    await p.waitFor(`You play black in game ${id} (version 1).`);
    const white = await post(server, `/v1/games/${id}/moves`, { move: 'e4', expected_version: 1 },
      { headers: { authorization: `Bearer ${tokens.white}` } });
    assert.equal(white.status, 200);
    await sleep(300); // the move's event reached the proxy, which holds it
    assert.ok(!p.stdout.includes('white played e4'), 'the event is held');
    p.proc.stdin.write('resign\n');
    await p.waitFor('Status: resigned (resignation), result 1-0\n');
    assert.ok(!p.stdout.includes('version_conflict'), p.stdout);
    const stored = await get(server, `/v1/games/${id}`);
    assert.equal(stored.body.status, 'resigned');
    assert.deepEqual(stored.body.moves.map((m) => m.san), ['e4']);
    proxy.release();
    p.proc.stdin.end();
    assert.equal(await p.exited, 0);
  } finally {
    p?.proc.kill();
    await proxy.close();
  }
});

test('remote: a move typed after the opponent offered a draw whose event is not read yet is made: moves are sent with expected_ply', async () => {
  // What the event stream sends is held (the session's mirror stays a version behind).
  const proxy = await startProxy((req) => /\/events(\?|$)/.test(req.url));
  let p;
  try {
    const game = await post(server, '/v1/games', {});
    const { id, tokens } = game.body;
    const white = (path, body) => post(server, `/v1/games/${id}/${path}`, body, { headers: { authorization: `Bearer ${tokens.white}` } });
    assert.equal((await white('moves', { move: 'e4', expected_version: 1 })).status, 200);
    p = playRemote(['--game', id, '--token', tokens.black], {}, proxy.base);
    await p.waitFor(`You play black in game ${id} (version 2).`);
    assert.equal((await white('draw', { action: 'offer', expected_version: 2 })).status, 200);
    await sleep(300); // the offer's event reached the proxy, which holds it
    assert.ok(!p.stdout.includes('Draw offered by white'), 'the event is held');
    p.proc.stdin.write('e5\n');
    await p.waitFor('Moves: 1. e4 e5\n');
    assert.ok(!p.stdout.includes('version_conflict'), p.stdout);
    const stored = await get(server, `/v1/games/${id}`);
    assert.deepEqual(stored.body.moves.map((m) => m.san), ['e4', 'e5']);
    assert.equal(stored.body.version, 4);
    proxy.release();
    p.proc.stdin.end();
    assert.equal(await p.exited, 0);
  } finally {
    p?.proc.kill();
    await proxy.close();
  }
});

test('remote: a bad token gets the problem detail and exit 1; https:// is refused; the token is never printed', async () => {
  const game = await post(server, '/v1/games', {});
  const secret = 'not-a-token-of-this-game-0123456789';
  const p = playRemote(['--game', game.body.id, '--token', secret]);
  p.proc.stdin.end();
  assert.equal(await p.exited, 1);
  assert.match(p.stdout, /^error: forbidden: the token is not a player's of this game$/m);
  assert.ok(!p.stdout.includes(secret) && !p.stderr.includes(secret));
  const missing = playRemote(['--game', 'AAAAAAAAAAAAAAAA', '--token', secret]);
  missing.proc.stdin.end();
  assert.equal(await missing.exited, 1);
  assert.match(missing.stdout, /^error: game_not_found: /m);
  const ftp = playLocal(['--server', 'ftp://127.0.0.1:1', '--game', game.body.id, '--token', secret], '');
  assert.equal(ftp.code, 2);
  assert.match(ftp.stderr, /must start with http:\/\/ or https:\/\//);
  assert.ok(!ftp.stderr.includes(secret));
});

test('remote: a dropped event stream is reopened, a move made while it was down is shown, input is read at once through a proxy that holds heads; a timed game shows its clock', async () => {
  const proxy = await startProxy();
  const { sockets } = proxy;
  let p;
  try {
    const game = await post(server, '/v1/games', { clock: { initial_ms: 600000, increment_ms: 0 } });
    const { id, tokens } = game.body;
    p = playRemote(['--game', id, '--token', tokens.white], {}, proxy.base);
    await p.waitFor('Clock: white 600.0 s, black 600.0 s\n', 3000);
    p.proc.stdin.write('e4\n');
    await p.waitFor('Moves: 1. e4\n', 3000); // well before the stream's first heartbeat
    await sleep(200); // the stream is open (it was opened before e4 was read)
    for (const socket of sockets) socket.destroy();
    await p.waitFor('notice: the event stream ended (closed by the server); reconnecting\n');
    await post(server, `/v1/games/${id}/moves`, { move: 'e5', expected_version: 2 },
      { headers: { authorization: `Bearer ${tokens.black}` } });
    await p.waitFor('Moves: 1. e4 e5\n', 5000); // from the whole game sent on the reopened stream
    // Black's first move was free; white's clock runs from it.
    assert.match(p.stdout, /Clock: white \d+\.\d s, black 600\.0 s, running: white\n/);
    p.proc.stdin.end();
    assert.equal(await p.exited, 0);
  } finally {
    p?.proc.kill();
    await proxy.close();
  }
});

/** An HTTPS server (tests/tls/make_certs.sh's certificate for 127.0.0.1) passing every request to chessd as it comes. */
async function startTlsProxy(certs, certName = 'server') {
  const proxy = https.createServer({
    cert: readFileSync(path.join(certs, `${certName}.crt`)), key: readFileSync(path.join(certs, `${certName}.key`)),
  }, (req, res) => {
    const upstream = http.request({ host: '127.0.0.1', port: server.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return proxy;
}

test('remote over https (OpenSSL, the certificate checked against --ca-file): the opponent\'s move arrives on the stream; an untrusted certificate is refused', async () => {
  const certs = tempDir('chessd-play-certs-');
  execFileSync('sh', [path.join(REPO_ROOT, 'tests/tls/make_certs.sh'), certs], { stdio: ['ignore', 'ignore', 'inherit'] });
  const proxy = await startTlsProxy(certs);
  const unknown = await startTlsProxy(certs, 'unknown-ca');
  try {
    const base = `https://127.0.0.1:${proxy.address().port}`;
    const game = await post(server, '/v1/games', {});
    const { id, tokens } = game.body;
    const p = playRemote(['--game', id, '--token', tokens.white, '--ca-file', path.join(certs, 'ca.crt')], {}, base);
    await p.waitFor(`You play white in game ${id}`);
    p.proc.stdin.write('e4\n');
    await p.waitFor('Moves: 1. e4\n');
    await post(server, `/v1/games/${id}/moves`, { move: 'c5', expected_version: 2 },
      { headers: { authorization: `Bearer ${tokens.black}` } });
    await p.waitFor('black played c5\n');
    p.proc.stdin.end();
    assert.equal(await p.exited, 0, p.stderr);
    assert.ok(!p.stdout.includes(tokens.white));

    const refused = playRemote(['--game', id, '--token', tokens.white, '--ca-file', path.join(certs, 'ca.crt')], {},
      `https://127.0.0.1:${unknown.address().port}`);
    refused.proc.stdin.end();
    assert.equal(await refused.exited, 1);
    assert.match(refused.stdout, /^error: connection_failed: TLS with 127\.0\.0\.1 port \d+ failed: /m);
    assert.ok(!refused.stdout.includes(tokens.white));
  } finally {
    proxy.closeAllConnections?.();
    unknown.closeAllConnections?.();
    await Promise.all([new Promise((r) => proxy.close(r)), new Promise((r) => unknown.close(r))]);
  }
});
