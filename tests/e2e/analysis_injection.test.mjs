// Nothing a client sends reaches the engine as text. The server runs an
// engine that is a wrapper (written here) around the real Stockfish: it
// copies every byte it is sent into a log, then to Stockfish. FENs and
// moves carrying newlines, "quit", "setoption", "go infinite", NULs, spaces
// and very long strings, in the body and in a game analysis's query, are
// each refused (400 with the right code) (a FEN whose blanks between fields
// are newlines, or a move with blanks around it, is read as what it is), and afterwards every line of the
// log is one chessd builds itself, read against a strict grammar: uci,
// isready, setoption of the options chessd sets (with their values),
// ucinewgame, position fen <a valid FEN> [moves <uci>...], go with its
// limits, stop. Only printable ASCII and newlines are in it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './server.mjs';
import { call, expectProblem, get, post, START_FEN } from './http.mjs';
import { STOCKFISH, analyse, engineMetrics, startEngineServer } from './analysis_lib.mjs';

const MATE_IN_1 = '6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1';
const dir = tempDir('chessd-e2e-injection-');
const log = path.join(dir, 'engine.log');
let server;

before(async () => {
  const wrapper = path.join(dir, 'logging-stockfish');
  writeFileSync(wrapper, `#!/bin/sh\n# every byte chessd sends, into the log, then to Stockfish\ntee -a '${log}' | '${STOCKFISH}'\n`);
  chmodSync(wrapper, 0o755);
  writeFileSync(log, '');
  server = await startEngineServer(['--engine-max-think-ms', '1000'], { engine: wrapper });
});
after(async () => { await server?.stop(); });

const hostile = [
  // [what, body, status, code, more checks on the problem]
  ['a FEN and "quit" on a line of its own', { fen: `${MATE_IN_1}\nquit` }, 400, 'invalid_fen'],
  ['a FEN and a setoption after CR LF', { fen: `${MATE_IN_1}\r\nsetoption name Hash value 1` }, 400, 'invalid_fen'],
  ['a FEN and "go infinite" as more fields', { fen: `${START_FEN} go infinite` }, 400, 'invalid_fen'],
  ['a FEN and a tab then quit', { fen: `${MATE_IN_1}\tquit` }, 400, 'invalid_fen'],
  ['a FEN that is a UCI command', { fen: 'position startpos moves e2e4' }, 400, 'invalid_fen'],
  ['a FEN that is "quit"', { fen: 'quit' }, 400, 'invalid_fen'],
  ['a FEN ending in a NUL', { fen: `${MATE_IN_1}\u0000` }, 400, 'invalid_json'],
  ['a FEN of 10000 bytes', { fen: 'x'.repeat(10000) }, 400, 'invalid_fen', (p) => assert.equal(p.fen_error, 'too_long')],
  ['a FEN of 257 bytes ending in newlines', { fen: `${START_FEN}${'\n'.repeat(257 - START_FEN.length)}` }, 400, 'invalid_fen'],
  ['a move and "go infinite" after a newline', { moves: ['e2e4\ngo infinite'] }, 400, 'invalid_move_text', (p) => assert.equal(p.reason, 'unparseable')],
  ['a move and a setoption after CR LF', { moves: ['e2e4\r\nsetoption name Threads value 64'] }, 400, 'invalid_move_text'],
  ['a move ending in a NUL', { moves: ['e2e4\u0000'] }, 400, 'invalid_json'],
  ['two SAN moves in one string', { moves: ['e4 e5'] }, 400, 'invalid_move_text'],
  ['a UCI move and quit in one string', { moves: ['e2e4 quit'] }, 400, 'invalid_move_text'],
  ['a move with a CR inside', { moves: ['e4\rquit'] }, 400, 'invalid_move_text'],
  ['a move that is "quit"', { moves: ['quit'] }, 400, 'invalid_move_text'],
  ['a move that is "stop"', { moves: ['stop'] }, 400, 'invalid_move_text'],
  ['a command after a legal move', { moves: ['e2e4', 'isready'] }, 400, 'invalid_move_text', (p) => assert.equal(p.move_index, 1)],
  ['a move of 10000 bytes', { moves: ['e'.repeat(10000)] }, 400, 'invalid_move_text'],
  ['a move that is not a string', { moves: [{ uci: 'e2e4' }] }, 400, 'invalid_field'],
  ['a depth with a command', { depth: '5\ngo infinite' }, 400, 'invalid_field'],
  ['a multipv with a setoption', { multipv: '3\nsetoption name MultiPV value 500' }, 400, 'invalid_field'],
  ['nodes as text', { nodes: '1000 searchmoves e2e4' }, 400, 'invalid_field'],
  ['wdl as text', { wdl: 'true\nquit' }, 400, 'invalid_field'],
  ['a chess960_position with a command', { chess960_position: '0\nquit' }, 400, 'invalid_chess960_position'],
  ['a member named for a UCI command', { setoption: 'name Hash value 1' }, 400, 'unknown_field'],
  ['a searchmoves member', { depth: 3, searchmoves: ['e2e4'] }, 400, 'unknown_field'],
];

test('hostile FENs, moves and limits are refused before any engine sees them', async () => {
  const before = await engineMetrics(server);
  for (const [what, body, status, code, more] of hostile) {
    const res = await analyse(server, body);
    const p = expectProblem(res, status, code);
    if (more) more(p);
    void what;
  }
  // a stored game's analysis reads its limits from the query
  const created = await post(server, '/v1/games', {});
  assert.equal(created.status, 201, created.text);
  const id = created.body.id;
  for (const query of ['depth=5%0Aquit', 'depth=5%0D%0Asetoption', 'depth=5%00', 'multipv=3%20go%20infinite',
    'nodes=1000%0Astop', 'wdl=true%0Aquit'])
    expectProblem(await get(server, `/v1/games/${id}/analysis?${query}`), 400, 'invalid_parameter');
  expectProblem(await get(server, `/v1/games/${id}/analysis?go=infinite`), 400, 'unknown_parameter');
  // a body of raw bytes: a NUL and a newline outside any JSON string
  const raw = await call(server, 'POST', '/v1/position/analysis', { headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"depth":5}\nquit\n\u0000') });
  expectProblem(raw, 400, 'invalid_json');
  const after = await engineMetrics(server);
  assert.equal(after.jobs, before.jobs, 'no hostile request became an engine job');
});

/** The FEN grammar: 8 ranks of pieces and digits, side, castling (KQkq or files), en passant, two counters. */
const FEN = /^(?:[pnbrqkPNBRQK1-8]{1,8}\/){7}[pnbrqkPNBRQK1-8]{1,8} [wb] (?:-|[KQA-H]{0,4}[kqa-h]{0,4}) (?:-|[a-h][36]) \d{1,4} \d{1,4}$/;
const UCI_MOVE = /^[a-h][1-8][a-h][1-8][qrbn]?$/;
const OPTIONS = {
  Threads: /^\d+$/, Hash: /^\d+$/, UCI_ShowWDL: /^true$/, MultiPV: /^[1-5]$/, UCI_Chess960: /^(true|false)$/,
  'Skill Level': /^\d+$/, UCI_LimitStrength: /^(true|false)$/, UCI_Elo: /^\d+$/,
};

/** Why line is not one chessd builds, or null when it is. */
function badLine(line) {
  if (['uci', 'isready', 'ucinewgame', 'stop', 'quit'].includes(line)) return null;
  let m = /^setoption name (.+?) value (.+)$/.exec(line);
  if (m) return OPTIONS[m[1]]?.test(m[2]) ? null : `setoption of ${JSON.stringify(m[1])} to ${JSON.stringify(m[2])}`;
  m = /^position fen (\S+ \S+ \S+ \S+ \S+ \S+)(?: moves ((?:\S+ )*\S+))?$/.exec(line);
  if (m) {
    if (!FEN.test(m[1])) return `position with the FEN ${JSON.stringify(m[1])}`;
    const bad = (m[2] ?? '').split(' ').filter((t) => t && !UCI_MOVE.test(t));
    return bad.length ? `position with moves ${JSON.stringify(bad)}` : null;
  }
  m = /^go( depth \d+)?( nodes \d+)?( movetime \d+)?$/.exec(line);
  if (m && line !== 'go') return null;
  return 'not a command chessd sends';
}

test('a FEN whose newlines, CRs or tabs only separate its fields is read as that FEN: the engine is given chessd\'s own', async () => {
  // rules/fen.c reads a tab, CR and LF as it reads a space (a FEN pasted with its line's end); what the
  // engine reads is fen_format's text, checked by the next test's grammar.
  for (const fen of [MATE_IN_1.replace(' w ', ' w\r\n'), `\n${MATE_IN_1}\n`, MATE_IN_1.replaceAll(' ', '\t')]) {
    const res = await analyse(server, { fen, depth: 3 });
    assert.equal(res.status, 200, `${JSON.stringify(fen)}: ${res.text}`);
    assert.equal(res.body.position.fen, MATE_IN_1);
    assert.equal(res.body.bestmove, 'd1d8');
  }
});

test('a move with blanks around it is read as that move, as a FEN is: the engine is given chessd\'s own UCI', async () => {
  // rules/notation.c skips blanks around a move (not inside); the engine reads uci_format's text, checked by the next test.
  const res = await analyse(server, { moves: [' e4', 'e5\r', '\tNf3\r\n'], depth: 3 });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.position.fen, 'rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2');
});

test("afterwards, the engine has read only chessd's own commands, each valid", async () => {
  // Legitimate searches (options, moves, Chess960, MultiPV, WDL), so that the log has every kind of line.
  for (const body of [{ depth: 4 }, { moves: ['e4', 'e7e5', 'Nf3'], depth: 4, multipv: 3, wdl: true },
    { chess960_position: 0, moves: ['f3', 'f6', 'Rf2', 'Rf7', 'O-O'], nodes: 5000 }, { fen: MATE_IN_1, movetime_ms: 50 }]) {
    const res = await analyse(server, body);
    assert.equal(res.status, 200, `${JSON.stringify(body)}: ${res.text}`);
  }
  const m = await engineMetrics(server);
  const bytes = readFileSync(log);
  const text = bytes.toString('latin1');
  for (let i = 0; i < bytes.length; i++)
    assert.ok(bytes[i] === 0x0a || (bytes[i] >= 0x20 && bytes[i] < 0x7f), `byte ${i} of the engine's input is 0x${bytes[i].toString(16)}`);
  assert.ok(text.endsWith('\n'), 'every command is ended by its newline');
  const lines = text.slice(0, -1).split('\n');
  const bad = lines.map((line, i) => [i + 1, line, badLine(line)]).filter(([, , why]) => why);
  assert.deepEqual(bad, [], `lines chessd would not send:\n${bad.map(([n, l, why]) => `  ${n}: ${JSON.stringify(l)}: ${why}`).join('\n')}`);
  // every FEN given is one chessd's rules read as a position (a Chess960 one with chess960 set)
  const fens = new Set(lines.filter((l) => l.startsWith('position fen ')).map((l) => l.split(' ').slice(2, 8).join(' ')));
  for (const fen of fens) {
    let res = await post(server, '/v1/position?legal_moves=false', { fen });
    if (res.status === 400 && res.body.fen_error === 'castling_needs_chess960')
      res = await post(server, '/v1/position?legal_moves=false', { fen, chess960: true });
    assert.equal(res.status, 200, `the engine was given ${JSON.stringify(fen)}: ${res.text}`);
    assert.equal(res.body.fen, fen, 'in its canonical form');
  }
  // one position and one go for each search run, and nothing the hostile requests carried
  assert.equal(lines.filter((l) => l.startsWith('go')).length, m.jobs + m.retried);
  assert.equal(lines.filter((l) => l.startsWith('position fen ')).length, m.jobs + m.retried);
  assert.equal(lines.filter((l) => l === 'uci').length, 1 + m.restarts);
  assert.ok(lines.includes('setoption name UCI_Chess960 value true'));
  assert.ok(lines.includes('setoption name MultiPV value 3'));
  assert.ok(lines.includes('setoption name Hash value 16'));
  assert.ok(!lines.some((l) => /infinite|searchmoves|Hash value 1$|Threads value 64/.test(l)));
  // the moves as chessd writes them: UCI after the start's FEN, castling as the king taking its rook
  assert.ok(lines.includes(`position fen ${START_FEN} moves e2e4 e7e5 g1f3`));
  assert.ok(lines.includes('position fen bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1 moves f2f3 f7f6 f1f2 f8f7 g1h1'));
});
