// `chessd play` as a person sees it, in a real terminal: tmux panes on a
// private socket, keys typed with send-keys. Line editing (an arrow-key
// correction, the history), the board in colour with the last move's squares
// tinted, NO_COLOR's and --ascii's plain boards with the move in brackets,
// and the remote mode redrawing a half-typed line when the opponent's move
// arrives. Piped, the output holds no escape at all. Every wait polls the
// pane under a generous deadline (a loaded machine, a sanitizer build).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { startServer, CHESSD_BIN } from './server.mjs';
import { post, sleep } from './http.mjs';

const PANE_TIMEOUT_MS = 30000;

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

let sessions = 0;

/** Runs f(pane) with a private tmux server (its own socket) running `command`, killed afterwards. */
async function withPane(command, f) {
  const socket = `chessd-play-terminal-${process.pid}-${++sessions}`;
  const env = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TMUX: '' };
  const tmux = (...args) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env });
  // The shell in the pane keeps it open after chessd exits, so its status can be read.
  tmux('-u', 'new-session', '-d', '-s', 'play', '-x', '120', '-y', '80',
    `${command}; echo "exit status $?"; sleep 600`);
  const pane = {
    text: () => tmux('capture-pane', '-p', '-J', '-t', 'play', '-S', '-'),
    escaped: () => tmux('capture-pane', '-p', '-e', '-J', '-t', 'play', '-S', '-'),
    /** Types text as it is (no key names read into it). */
    type: (text) => tmux('send-keys', '-t', 'play', '-l', text),
    /** Presses keys by their tmux names (Enter, Left, BSpace, Up, C-u). */
    press: (...keys) => tmux('send-keys', '-t', 'play', ...keys),
    /** Polls the pane until pred(text) holds; resolves to the text. */
    async waitFor(pred, what) {
      const deadline = Date.now() + PANE_TIMEOUT_MS;
      let text = '';
      while (Date.now() < deadline) {
        text = pane.text();
        if (pred(text)) return text;
        await sleep(100);
      }
      assert.fail(`${what} not seen in the pane within ${PANE_TIMEOUT_MS} ms:\n${text}`);
    },
  };
  try {
    await f(pane);
  } finally {
    try { tmux('kill-server'); } catch { /* already gone */ }
  }
}

/** The command line of `chessd play ARGS` with env (a value of null unsets it) and no ~/.editrc. */
function playCommand(args, env = {}) {
  const unset = Object.keys(env).filter((k) => env[k] === null).map((k) => `-u ${k}`);
  const set = Object.entries(env).filter(([, v]) => v !== null).map(([k, v]) => `${k}='${v}'`);
  return ['env', ...unset, 'EDITRC=/dev/null', ...set, CHESSD_BIN, 'play', ...args].join(' ');
}

const lastLine = (text) => text.trimEnd().split('\n').at(-1);
/** The pane's lines that draw rank N of a board (the last board first). */
const rankLines = (text, n) => text.split('\n').filter((l) => l.startsWith(`${n} `)).reverse();

/**
 * The squares of a board line captured with escapes (capture-pane -e): for
 * each of the eight squares, its text and its background colour ('' when
 * the terminal's own). A coloured square is three columns wide after "N ".
 */
function coloredSquares(escapedLine) {
  const cells = [];
  let background = '';
  for (let i = 0; i < escapedLine.length;) {
    const sgr = /^\x1b\[([0-9;]*)m/.exec(escapedLine.slice(i));
    if (sgr) {
      const params = sgr[1] === '' ? ['0'] : sgr[1].split(';');
      for (let k = 0; k < params.length; k++) {
        if (params[k] === '0' || params[k] === '49') background = '';
        else if (params[k] === '48') { background = params.slice(k, k + 3).join(';'); k += 2; }
        else if (params[k] === '38') k += 2;
      }
      i += sgr[0].length;
      continue;
    }
    const ch = String.fromCodePoint(escapedLine.codePointAt(i));
    cells.push({ ch, background });
    i += ch.length;
  }
  const squares = [];
  for (let file = 0; file < 8; file++) {
    const square = cells.slice(2 + 3 * file, 5 + 3 * file);
    squares.push({ text: square.map((c) => c.ch).join('').trim(), background: square[1]?.background ?? '' });
  }
  return squares;
}

/** The line of the last board drawn in an escaped capture for rank n. */
const escapedRank = (escaped, n) => escaped.split('\n').filter((l) => l.replace(/\x1b\[[0-9;]*m/g, '').startsWith(`${n} `)).at(-1);

test('line editing: a move corrected with an arrow key and a backspace is played, the history recalls it, the last move is tinted', async () => {
  await withPane(playCommand([], { NO_COLOR: null }), async (pane) => {
    await pane.waitFor((t) => lastLine(t) === 'white>', 'the first prompt');
    // "e2e54", then Left and BSpace take out the 5: the line sent is e2e4.
    pane.type('e2e54');
    await pane.waitFor((t) => lastLine(t) === 'white> e2e54', 'the typed line');
    pane.press('Left');
    pane.press('BSpace');
    await pane.waitFor((t) => lastLine(t) === 'white> e2e4', 'the line corrected in place');
    pane.press('Enter');
    let text = await pane.waitFor((t) => lastLine(t) === 'black>', 'the prompt for black');
    assert.ok(text.includes('Moves: 1. e4\n'), text);
    assert.ok(!text.includes('error:'), text);
    // The board in colour: solid glyphs on coloured squares; e2 and e4 tinted unlike their neighbours of the same shade.
    const escaped = pane.escaped();
    const rank4 = coloredSquares(escapedRank(escaped, 4));
    const rank2 = coloredSquares(escapedRank(escaped, 2));
    assert.equal(rank4[4].text, '\u265f', 'the pawn on e4');
    assert.equal(rank2[4].text, '', 'e2 left empty');
    assert.notEqual(rank4[4].background, '', 'squares have a background of their own');
    assert.notEqual(rank4[4].background, rank4[2].background, 'e4 is marked, c4 (a light square too) is not');
    assert.notEqual(rank2[4].background, rank2[2].background, 'e2 is marked, c2 is not');
    assert.equal(rank4[3].background, rank4[5].background, 'd4 and f4, both dark, alike');
    // The history: Up brings back e2e4; Ctrl-U clears the line for black's own move.
    pane.press('Up');
    await pane.waitFor((t) => lastLine(t) === 'black> e2e4', 'the history recalled with Up');
    pane.press('C-u');
    await pane.waitFor((t) => lastLine(t) === 'black>', 'the line cleared');
    pane.type('e5');
    pane.press('Enter');
    text = await pane.waitFor((t) => lastLine(t) === 'white>', 'the prompt for white again');
    assert.ok(text.includes('Moves: 1. e4 e5\n'), text);
    pane.type('quit');
    pane.press('Enter');
    await pane.waitFor((t) => t.includes('exit status 0'), 'a clean exit');
  });
});

test('in a terminal: a refusal and the session goes on; Ctrl-D on an empty line ends it', async () => {
  await withPane(playCommand([], { NO_COLOR: null }), async (pane) => {
    let text = await pane.waitFor((t) => lastLine(t) === 'white>', 'the first prompt');
    assert.ok(text.includes('Material \u2014 white 39, black 39'), text);
    pane.type('Ke7');
    pane.press('Enter');
    text = await pane.waitFor((t) => t.includes('error: illegal_move') && lastLine(t) === 'white>', 'the refusal');
    pane.press('C-d');
    await pane.waitFor((t) => t.includes('exit status 0'), 'a clean exit');
  });
});

test('NO_COLOR in a terminal: no colour at all, Unicode pieces, the last move in brackets', async () => {
  await withPane(playCommand([], { NO_COLOR: '1' }), async (pane) => {
    await pane.waitFor((t) => lastLine(t) === 'white>', 'the first prompt');
    pane.type('Nf3');
    pane.press('Enter');
    const text = await pane.waitFor((t) => lastLine(t) === 'black>', 'the prompt for black');
    assert.equal(rankLines(text, 3)[0], '3 \u00b7 \u00b7 \u00b7 \u00b7 \u00b7[\u2658]\u00b7 \u00b7');
    assert.equal(rankLines(text, 1)[0], '1 \u2656 \u2658 \u2657 \u2655 \u2654 \u2657[\u00b7]\u2656');
    assert.ok(!pane.escaped().includes('\x1b['), 'no escape in the pane');
  });
});

test('--ascii in a terminal: letters, no colour, no Unicode', async () => {
  await withPane(playCommand(['--ascii'], { NO_COLOR: null }), async (pane) => {
    await pane.waitFor((t) => lastLine(t) === 'white>', 'the first prompt');
    pane.type('d4');
    pane.press('Enter');
    const text = await pane.waitFor((t) => lastLine(t) === 'black>', 'the prompt for black');
    assert.equal(rankLines(text, 8)[0], '8 r n b q k b n r');
    assert.equal(rankLines(text, 4)[0], '4 . . .[P]. . . .');
    assert.equal(rankLines(text, 2)[0], '2 P P P[.]P P P P');
    assert.ok(text.includes('Material - white 39, black 39'), text);
    assert.ok(!/[^\x00-\x7f]/.test(text), 'ASCII only');
    assert.ok(!pane.escaped().includes('\x1b['), 'no escape in the pane');
  });
});

test('piped: no escape in the output, whatever TERM, the locale and NO_COLOR say', () => {
  for (const env of [{ TERM: 'xterm-256color', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' }, { NO_COLOR: '1' }]) {
    const run = spawnSync(CHESSD_BIN, ['play'], { input: 'e4\ne5\nboard\n', encoding: 'utf8', env: { ...process.env, NO_COLOR: '', ...env } });
    assert.equal(run.status, 0, run.stderr);
    assert.ok(!run.stdout.includes('\x1b'), run.stdout);
    assert.ok(run.stdout.includes('5 . . . .[p]. . .\n'), run.stdout);
  }
  const unicode = spawnSync(CHESSD_BIN, ['play', '--unicode'], { input: 'e4\n', encoding: 'utf8' });
  assert.ok(!unicode.stdout.includes('\x1b'));
  assert.ok(unicode.stdout.includes('4 \u00b7 \u00b7 \u00b7 \u00b7[\u2659]\u00b7 \u00b7 \u00b7\n'), unicode.stdout);
});

test('remote in a terminal: the opponent\'s move arrives while a move is half typed; the line is redrawn below it and finished', async () => {
  const game = await post(server, '/v1/games', {});
  assert.equal(game.status, 201);
  const { id, tokens } = game.body;
  await withPane(playCommand(['--server', server.base, '--game', id], { NO_COLOR: '1', CHESSD_PLAY_TOKEN: tokens.black }), async (pane) => {
    await pane.waitFor((t) => lastLine(t) === 'black>', 'the prompt');
    pane.type('Nf');
    await pane.waitFor((t) => lastLine(t) === 'black> Nf', 'the half-typed move');
    const moved = await post(server, `/v1/games/${id}/moves`, { move: 'e4', expected_version: 1 },
      { headers: { authorization: `Bearer ${tokens.white}` } });
    assert.equal(moved.status, 200, moved.text);
    let text = await pane.waitFor((t) => t.includes('white played e4') && lastLine(t) === 'black> Nf', 'the move above the line redrawn');
    assert.ok(!text.includes('black> Nfwhite'), text);
    assert.equal(rankLines(text, 4)[0], '4 \u00b7 \u00b7 \u00b7[\u2659]\u00b7 \u00b7 \u00b7 \u00b7', 'black\'s view: e4 is the fourth square from the left');
    pane.type('6');
    pane.press('Enter');
    text = await pane.waitFor((t) => t.includes('Moves: 1. e4 Nf6\n') && lastLine(t) === 'black>', 'the move finished and played');
    pane.press('C-d');
    await pane.waitFor((t) => t.includes('exit status 0'), 'a clean exit');
  });
});
