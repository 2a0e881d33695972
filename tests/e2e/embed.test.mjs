// The embeddable live board (GET /v1/games/{id}/embed) in a real headless
// Chromium (Debian's chromium, driven with playwright-core): the page's
// headers (its own Content-Security-Policy, nosniff, no token anywhere); the
// board it shows, read from its pixels (each square's centre shows a piece's
// fill or the square, see api/render/board_svg.h) against the position; a
// move made through the API on the page within a second; the clock of the
// side to move counting down; the opening; the result once the game ends; a
// player's name with markup staying text; no request to any other host; and
// the frame-ancestors setting obeyed by the browser. A crazyhouse game's
// page shows its picture at its own proportions, the pockets in strips above
// and below the board, filled as captures fill them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { startServer } from './server.mjs';
import { call, post } from './http.mjs';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
let server;
let framesNone;
let browser;
before(async () => {
  [server, framesNone] = await Promise.all([
    startServer(),
    startServer(['--embed-frame-ancestors', "'none'"]),
  ]);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await framesNone?.stop();
});

const NAME = 'Ann <script>window.pwned = 1</script><b>bold</b> & "co"';

async function newGame(srv, body) {
  const res = await post(srv, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, srv };
}

async function act(g, color, what, body) {
  const res = await post(g.srv, `/v1/games/${g.id}/${what}`, { ...body, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens[color]}` } });
  assert.equal(res.status, 200, res.text);
  g.version = res.body.version;
  return res;
}

/** What the board picture shows on each square: 'W', 'B' (a piece's fill at its centre) or '.', rank 8 first. */
async function boardSeen(page) {
  const png = PNG.sync.read(await page.locator('#board').screenshot());
  const square = png.width / 8;
  const rows = [];
  for (let row = 0; row < 8; row++) {
    let line = '';
    for (let col = 0; col < 8; col++) {
      const x = Math.floor(col * square + square / 2), y = Math.floor(row * square + square / 2);
      const i = (png.width * y + x) * 4;
      const [r, g, b] = [png.data[i], png.data[i + 1], png.data[i + 2]];
      const near = (hex) => Math.abs(r - parseInt(hex.slice(0, 2), 16)) + Math.abs(g - parseInt(hex.slice(2, 4), 16))
        + Math.abs(b - parseInt(hex.slice(4, 6), 16)) < 40;
      line += near('fbfbf7') ? 'W' : near('2b2b2b') ? 'B' : '.';
    }
    rows.push(line);
  }
  return rows;
}

/**
 * What a variant's picture shows (coordinates=false, strips of 100 units
 * above and below an 800-unit board, pocket cells of 160 units): the board
 * as boardSeen reads it, and the first `cells` cells of each strip ('W', 'B'
 * or '.' at each cell's piece centre), the top strip first.
 */
async function variantSeen(page, cells) {
  const png = PNG.sync.read(await page.locator('#board').screenshot());
  const scale = png.width / 800;
  const at = (x, y) => {
    const i = (png.width * Math.floor(y) + Math.floor(x)) * 4;
    const near = (hex) => [0, 2, 4]
      .reduce((d, k, j) => d + Math.abs(png.data[i + j] - parseInt(hex.slice(k, k + 2), 16)), 0) < 40;
    return near('fbfbf7') ? 'W' : near('2b2b2b') ? 'B' : '.';
  };
  const rows = [];
  for (let row = 0; row < 8; row++) {
    let line = '';
    for (let col = 0; col < 8; col++) line += at((col * 100 + 50) * scale, (100 + row * 100 + 50) * scale);
    rows.push(line);
  }
  const strip = (y) => Array.from({ length: cells }, (_, cell) => at((cell * 160 + 50) * scale, y)).join('');
  return { board: rows, top: strip(50 * scale), bottom: strip(png.height - 50 * scale) };
}

/** The same from a FEN's placement. */
function boardOf(fen) {
  return fen.split(' ')[0].split('/').map((rank) => rank.replace(/\d/g, (n) => '.'.repeat(Number(n)))
    .replace(/[A-Z]/g, 'W').replace(/[a-z]/g, 'B'));
}

/** Waits until the page shows version v, its picture loaded. */
const shows = (page, v, timeout = 5000) => page.waitForFunction((version) => {
  const img = document.getElementById('board');
  return document.body.dataset.version === String(version) && img.complete && img.naturalWidth > 0
    && img.src.endsWith(`v=${version}`);
}, v, { timeout });

test('the page: its own policy, no token, the board, live moves, the clock, the opening and the result', async () => {
  const g = await newGame(server, { white: NAME, black: 'Bob', clock: { initial_ms: 60000 } });
  const url = `${server.base}/v1/games/${g.id}/embed`;
  const head = await call(server, 'GET', `/v1/games/${g.id}/embed`);
  assert.equal(head.status, 200);
  assert.match(head.headers.get('content-type'), /^text\/html; charset=utf-8$/);
  assert.equal(head.headers.get('x-content-type-options'), 'nosniff');
  const csp = head.headers.get('content-security-policy');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]{43}='(;|$)/);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/]{43}='(;|$)/);
  assert.match(csp, /frame-ancestors \*$/);
  for (const token of Object.values(g.tokens)) assert.ok(!head.text.includes(token), 'no token on the page');
  assert.ok(!head.text.includes('Ann'), 'no game data in the page itself');
  assert.ok(head.text.length < 8192, `${head.text.length} bytes`);

  const page = await browser.newPage({ viewport: { width: 720, height: 480 }, deviceScaleFactor: 1 });
  const requests = [];
  const problems = [];
  page.on('request', (r) => requests.push(r.url()));
  const failed = [];
  // A load that failed is counted by its address below (Chromium asks for /favicon.ico on its own).
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text()); });
  page.on('response', (r) => { if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) failed.push(`${r.status()} ${r.url()}`); });
  page.on('pageerror', (e) => problems.push(String(e)));
  try {
    await page.goto(url);
    await shows(page, 1);
    const box = await page.locator('#board').boundingBox();
    assert.deepEqual([box.width, box.height], [320, 320], 'a standard game\'s board is square');
    assert.equal(await page.locator('#bottom .name').textContent(), NAME, 'the name, as text');
    assert.equal(await page.locator('#top .name').textContent(), 'Bob');
    assert.equal(await page.locator('#bottom .name b').count(), 0, 'no markup from a name');
    assert.equal(await page.evaluate(() => window.pwned), undefined, 'no script from a name');
    assert.deepEqual(await boardSeen(page), boardOf('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR'));

    const t0 = Date.now();
    await act(g, 'white', 'moves', { move: 'e4' });
    await shows(page, 2, 1000);
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 1000, `the move shown after ${elapsed} ms`);
    assert.deepEqual(await boardSeen(page), boardOf('rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR'));
    assert.equal(await page.locator('#opening').textContent(), "B00 King's Pawn Game");

    await act(g, 'black', 'moves', { move: 'e5' });
    await shows(page, 3, 1000);
    assert.deepEqual(await page.locator('#moves li').allTextContents(), ['e4 e5']);
    assert.equal(await page.locator('#opening').textContent(), "C20 King's Pawn Game");
    // White's clock runs: it reads less a second later; Black's stands.
    const read = async () => ({ white: await page.locator('#bottom .clock').textContent(), black: await page.locator('#top .clock').textContent() });
    const seconds = (text) => { const [m, s] = text.split(':'); return Number(m) * 60 + Number(s); };
    const first = await read();
    await page.waitForTimeout(1300);
    const later = await read();
    assert.ok(seconds(later.white) < seconds(first.white), `white's clock ${first.white} then ${later.white}`);
    assert.equal(later.black, first.black);
    assert.equal(await page.locator('#bottom .clock.running').count(), 1);

    await act(g, 'white', 'resign', {});
    await shows(page, 4, 1000);
    assert.equal(await page.locator('#result').textContent(), '0-1 (resignation)');

    assert.deepEqual(problems, [], 'no script error, no policy violation');
    assert.deepEqual(failed, [], 'every request of the page answered');
    const origin = new URL(server.base).origin;
    const elsewhere = requests.filter((r) => new URL(r).origin !== origin);
    assert.deepEqual(elsewhere, [], 'no request leaves for another host');
    assert.ok(requests.some((r) => r.includes('/events')), 'the page follows the event stream');
  } finally {
    await page.close();
  }
});

test('a crazyhouse game: the picture at its proportions, its pockets above and below the board, kept live', async () => {
  const g = await newGame(server, { variant: 'crazyhouse', white: 'Ann', black: 'Bob' });
  const page = await browser.newPage({ viewport: { width: 720, height: 600 }, deviceScaleFactor: 1 });
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  try {
    await page.goto(`${server.base}/v1/games/${g.id}/embed`);
    await shows(page, 1);
    const box = await page.locator('#board').boundingBox();
    assert.deepEqual([box.width, box.height], [320, 400], 'the board 320 pixels wide, a strip of 40 above and below');
    assert.deepEqual(await page.evaluate(() => [document.getElementById('board').naturalWidth,
      document.getElementById('board').naturalHeight]), [320, 400]);
    let seen = await variantSeen(page, 5);
    assert.deepEqual(seen, { board: boardOf('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR'), top: '.....', bottom: '.....' });
    for (const [color, move] of [['white', 'e4'], ['black', 'd5'], ['white', 'exd5']]) await act(g, color, 'moves', { move });
    await shows(page, 4, 2000);
    seen = await variantSeen(page, 5);
    assert.deepEqual(seen, { board: boardOf('rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR'), top: '.....', bottom: 'W....' },
      'white holds the pawn it took, in its strip below the board');
    await act(g, 'black', 'moves', { move: 'Qxd5' });
    await shows(page, 5, 1000);
    seen = await variantSeen(page, 5);
    assert.deepEqual(seen, { board: boardOf('rnb1kbnr/ppp1pppp/8/3q4/8/8/PPPP1PPP/RNBQKBNR'), top: 'B....', bottom: 'W....' });
    assert.deepEqual(await page.locator('#moves li').allTextContents(), ['e4 d5', 'exd5 Qxd5']);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('a delayed game: the page, the game it reads and its board show no hidden ply', async () => {
  const g = await newGame(server, { white: 'Ann', black: 'Bob', spectator_delay_plies: 2 });
  for (const [color, move] of [['white', 'e4'], ['black', 'e5'], ['white', 'Nf3'], ['black', 'Nc6']]) await act(g, color, 'moves', { move });
  const hidden = /Nf3|Nc6|g1f3|b8c6|Bb5|f1b5/;
  const head = await call(server, 'GET', `/v1/games/${g.id}/embed`);
  assert.equal(head.status, 200);
  assert.doesNotMatch(head.text, hidden, 'no move in the page itself');
  assert.doesNotMatch(head.text, /e2e4|"e4"|plies_hidden/, 'no game data in the page itself');

  const page = await browser.newPage({ viewport: { width: 720, height: 480 }, deviceScaleFactor: 1 });
  const reads = []; // the bodies of the game's reads (not its stream) the page made
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('response', (r) => {
    if (new URL(r.url()).pathname === `/v1/games/${g.id}`) reads.push(r.text());
  });
  try {
    await page.goto(`${server.base}/v1/games/${g.id}/embed`);
    await shows(page, 5);
    assert.deepEqual(await page.locator('#moves li').allTextContents(), ['e4 e5'], 'two plies shown, two hidden');
    assert.deepEqual(await boardSeen(page), boardOf('rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR'));
    assert.doesNotMatch(await page.content(), hidden);
    // What the page's stream sends, read by a second EventSource of the page's own.
    await page.evaluate(() => {
      window.seen = [];
      const es = new EventSource('events');
      for (const type of ['game', 'change', 'clock']) es.addEventListener(type, (e) => window.seen.push(`${type} ${e.data}`));
    });
    await page.waitForFunction(() => window.seen.length >= 1, null, { timeout: 5000 });

    await act(g, 'white', 'moves', { move: 'Bb5' });
    await shows(page, 6);
    assert.deepEqual(await page.locator('#moves li').allTextContents(), ['e4 e5', 'Nf3']);
    assert.deepEqual(await boardSeen(page), boardOf('rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R'));
    assert.doesNotMatch(await page.content(), /Nc6|b8c6|Bb5|f1b5/);
    await page.waitForFunction(() => window.seen.some((e) => e.includes('"version":6')), null, { timeout: 5000 });
    const streamed = await page.evaluate(() => window.seen);
    for (const e of streamed) {
      assert.ok(e.startsWith('game '), `a spectator's stream sends views only: ${e.slice(0, 80)}`);
      assert.doesNotMatch(e, /Nc6|b8c6|Bb5|f1b5/);
    }
    // Any read of the game the page made (it reads after a change event) is the view too.
    for (const body of await Promise.all(reads)) {
      assert.doesNotMatch(body, /Nc6|b8c6|Bb5|f1b5/);
      assert.equal(JSON.parse(body).plies_hidden, 2);
    }

    // Once it is over, the page shows everything.
    await act(g, 'black', 'resign', {});
    await shows(page, 7);
    assert.deepEqual(await page.locator('#moves li').allTextContents(), ['e4 e5', 'Nf3 Nc6', 'Bb5']);
    assert.equal(await page.locator('#result').textContent(), '1-0 (resignation)');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('frame-ancestors: framed by any page by default, by none when the setting says so', async () => {
  const open = await newGame(server, {});
  const closed = await newGame(framesNone, {});
  const closedHead = await call(framesNone, 'GET', `/v1/games/${closed.id}/embed`);
  assert.match(closedHead.headers.get('content-security-policy'), /frame-ancestors 'none'$/);
  // The site that embeds: a page of its own on another origin (a node server on another port).
  const host = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<iframe id="a" src="${server.base}/v1/games/${open.id}/embed" width="700" height="400"></iframe>`
      + `<iframe id="b" src="${framesNone.base}/v1/games/${closed.id}/embed" width="700" height="400"></iframe>`);
  });
  await new Promise((resolve) => host.listen(0, '127.0.0.1', resolve));
  const page = await browser.newPage();
  try {
    await page.goto(`http://127.0.0.1:${host.address().port}/site`);
    const framed = await (await page.$('#a')).contentFrame();
    assert.ok(framed, 'the first frame is there');
    await framed.waitForFunction(() => document.body && document.body.dataset.version === '1', null, { timeout: 5000 });
    const blocked = await (await page.$('#b')).contentFrame();
    await page.waitForTimeout(1000);
    const shown = blocked ? await blocked.evaluate(() => Boolean(document.body && document.body.dataset.game)).catch(() => false) : false;
    assert.equal(shown, false, 'the page that no page may frame does not show in a frame');
  } finally {
    await page.close();
    host.close();
  }
});

test('an id that names no game is 404, and the settings refuse frame-ancestors that could break the header', async () => {
  const res = await call(server, 'GET', '/v1/games/AAAAAAAAAAAAAAAA/embed');
  assert.equal(res.status, 404);
  for (const bad of ['a; script-src *', 'https://x.example\r\nX: y', 'a,b', '']) {
    await assert.rejects(startServer(['--embed-frame-ancestors', bad]), /embed-frame-ancestors|exited|status/, JSON.stringify(bad));
  }
});
