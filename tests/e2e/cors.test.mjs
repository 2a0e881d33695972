// Pages of other origins (--cors-origins): preflights granted and refused
// on every path of openapi.yaml, the CORS headers on answers, problems and
// event streams, nothing of it without the setting, a bad setting refused
// at start-up; and a real headless Chromium whose page, on another origin,
// plays a move with a player token, reads the exposed ETag and follows the
// game's SSE stream, while a page of an origin not listed is kept out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { startServer } from './server.mjs';
import { call, post, expectProblem } from './http.mjs';
import { spec } from './openapi.mjs';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const CHESSD_BIN = process.env.CHESSD_BIN ?? 'build/chessd';
const EXPOSED = ['ETag', 'Location', 'Retry-After', 'X-Request-Id', 'Preference-Applied', 'WWW-Authenticate', 'Allow'];

/** A page server on its own port (its own origin): / answers page(). */
async function pageServer(page) {
  const srv = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${srv.address().port}`;
  return { origin, close: () => new Promise((resolve) => srv.close(resolve)) };
}

// The page plays the move its URL names with the token it names, then
// follows the game's SSE stream; it keeps what it saw in window.seen (each
// event's type and version).
const PAGE = `<!doctype html><title>cors</title><script>
window.seen = { events: [], etag: null, status: null, error: null };
(async () => {
  const q = new URLSearchParams(location.hash.slice(1));
  const base = q.get('base'), id = q.get('id');
  try {
    const res = await fetch(base + '/v1/games/' + id + '/moves', { method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + q.get('token') },
      body: JSON.stringify({ move: q.get('move'), expected_version: Number(q.get('version')) }) });
    window.seen.status = res.status;
    window.seen.etag = res.headers.get('etag');
    window.seen.requestId = res.headers.get('x-request-id');
  } catch (e) { window.seen.error = String(e); return; }
  const source = new EventSource(base + '/v1/games/' + id + '/events');
  for (const type of ['game', 'change'])
    source.addEventListener(type, (m) => { window.seen.events.push([type, JSON.parse(m.data).version]); });
})();
</script>`;

let pages, stranger, server, plain, browser;
before(async () => {
  [pages, stranger] = await Promise.all([pageServer(PAGE), pageServer(PAGE)]);
  [server, plain] = await Promise.all([
    startServer(['--cors-origins', `https://app.example, ${pages.origin}`]),
    startServer(),
  ]);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await plain?.stop();
  await pages?.close();
  await stranger?.close();
});

function preflight(srv, path, origin, method, headers) {
  return call(srv, 'OPTIONS', path, { headers: { origin, 'access-control-request-method': method,
    ...(headers ? { 'access-control-request-headers': headers } : {}) } });
}

const sorted = (list) => list.split(',').map((s) => s.trim()).filter(Boolean).sort();

test('a preflight on every path of openapi.yaml is granted for a listed origin, with its methods, and refused for any other', async () => {
  const { doc } = spec();
  let tried = 0;
  for (const [template, item] of Object.entries(doc.paths)) {
    const path = template.replace(/\{[^}]+\}/g, 'AAAAAAAAAAAAAAAA');
    const methods = [...(item.get ? ['GET', 'HEAD'] : []), ...(item.post ? ['POST'] : []), ...(item.delete ? ['DELETE'] : [])];
    const res = await preflight(server, path, 'https://app.example', methods.at(-1), 'Authorization, content-type');
    assert.equal(res.status, 204, `${template}: ${res.text}`);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example', template);
    assert.deepEqual(sorted(res.headers.get('access-control-allow-methods')), methods.sort(), template);
    assert.equal(res.headers.get('access-control-allow-headers'), 'Authorization, Content-Type', template);
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.equal(res.headers.get('vary'), 'Origin');
    assert.equal(res.text, '');
    const refused = expectProblem(await preflight(server, path, 'https://app.example.evil', methods[0]), 403, 'cors_refused');
    assert.match(refused.detail, /origin/);
    tried++;
  }
  assert.ok(tried >= 20, `only ${tried} paths`);
});

test('a preflight is refused, without any grant, for a method the path has not or a header chessd does not read', async () => {
  const cases = [
    ['/v1/perft', 'POST', null, /method.*POST.*GET, HEAD/],
    ['/v1/games', 'PUT', null, /PUT/],
    ['/v1/games', 'POST', 'content-type, x-forwarded-for', /x-forwarded-for/],
    ['/v1/games', 'POST', 'cookie', /cookie/],
    ['/v1/games', 'POST', 'a<b>', /header asked for/],
  ];
  for (const [path, method, headers, detail] of cases) {
    const res = await preflight(server, path, 'https://app.example', method, headers);
    const p = expectProblem(res, 403, 'cors_refused');
    assert.match(p.detail, detail, `${method} ${path} ${headers}`);
    assert.ok(!p.detail.includes('<b>'), p.detail);
    for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers'])
      assert.equal(res.headers.get(name), null, `${name} on a refusal`);
  }
  // OPTIONS that is no preflight, and a preflight at a path that is none.
  expectProblem(await call(server, 'OPTIONS', '/v1/games', { headers: { origin: 'https://app.example' } }), 405, 'method_not_allowed');
  expectProblem(await call(server, 'OPTIONS', '/v1/games'), 405, 'method_not_allowed');
  expectProblem(await preflight(server, '/v1/nothing', 'https://app.example', 'GET'), 404, 'not_found');
});

test('answers to a listed origin name it and expose the headers a page reads; problems and streams too; other origins get none', async () => {
  const game = await post(server, '/v1/games', {}, { headers: { origin: 'https://app.example' } });
  assert.equal(game.status, 201);
  const seen = [
    game,
    await call(server, 'GET', `/v1/games/${game.body.id}`, { headers: { origin: 'https://APP.example' } }),
    await call(server, 'GET', '/v1/games/AAAAAAAAAAAAAAAA', { headers: { origin: 'https://app.example' } }), // 404
    await call(server, 'PUT', '/v1/games', { headers: { origin: 'https://app.example' } }), // 405
  ];
  for (const res of seen) {
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example', `${res.status}`);
    assert.deepEqual(sorted(res.headers.get('access-control-expose-headers')), [...EXPOSED].sort());
    assert.equal(res.headers.get('vary'), 'Origin');
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
  }
  // An event stream: its head carries them as well.
  const controller = new AbortController();
  const stream = await fetch(`${server.base}/v1/games/${game.body.id}/events`,
    { headers: { origin: 'https://app.example', accept: 'text/event-stream' }, signal: controller.signal });
  assert.equal(stream.status, 200);
  assert.equal(stream.headers.get('access-control-allow-origin'), 'https://app.example');
  controller.abort();
  // Another origin: no grant, but the answer still says it varies.
  const other = await call(server, 'GET', `/v1/games/${game.body.id}`, { headers: { origin: 'https://other.example' } });
  assert.equal(other.status, 200);
  assert.equal(other.headers.get('access-control-allow-origin'), null);
  assert.equal(other.headers.get('vary'), 'Origin');
  // Without --cors-origins: no CORS header at all, and a preflight is any OPTIONS.
  const bare = await call(plain, 'GET', '/v1/position', { headers: { origin: 'https://app.example' } });
  for (const name of ['access-control-allow-origin', 'access-control-expose-headers', 'vary'])
    assert.equal(bare.headers.get(name), null, name);
  expectProblem(await preflight(plain, '/v1/games', 'https://app.example', 'POST'), 405, 'method_not_allowed');
});

test('--cors-origins * lets any page in, with Access-Control-Allow-Origin: *', async () => {
  const any = await startServer(['--cors-origins', '*']);
  try {
    const res = await preflight(any, '/v1/position/moves', 'https://whoever.example', 'POST', 'content-type');
    assert.equal(res.status, 204, res.text);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const answer = await call(any, 'GET', '/v1/position', { headers: { origin: 'https://whoever.example' } });
    assert.equal(answer.headers.get('access-control-allow-origin'), '*');
  } finally {
    await any.stop();
  }
});

test('a --cors-origins that is not a list of origins is refused at start-up, saying which and why', () => {
  for (const [value, why] of [['https://app.example/', /no path/], ['*.example.com', /http:\/\/ or https:\/\//],
    ['https://*.example.com', /pattern/], ['https://a.example,,https://b.example', /empty/]]) {
    const r = spawnSync(CHESSD_BIN, ['serve', '--redis', 'none', '--port', '0', '--cors-origins', value],
      { encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, value);
    assert.match(r.stderr, /--cors-origins/, value);
    assert.match(r.stderr, why, `${value}: ${r.stderr}`);
  }
});

test('in Chromium, a page of a listed origin plays a move with its token, reads the ETag and follows the SSE stream; a page of another origin cannot', async () => {
  const made = await post(server, '/v1/games', {});
  assert.equal(made.status, 201, made.text);
  const g = made.body;
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const hash = new URLSearchParams({ base: server.base, id: g.id, token: g.tokens.white, move: 'e4',
      version: String(g.version) });
    await page.goto(`${pages.origin}/#${hash}`);
    await page.waitForFunction(() => window.seen.status !== null || window.seen.error !== null, null, { timeout: 20000 });
    const first = await page.evaluate(() => window.seen);
    assert.equal(first.error, null, first.error);
    assert.equal(first.status, 200);
    assert.equal(first.etag, `"${g.version + 1}"`); // read only because it is exposed
    assert.match(first.requestId, /^[0-9a-f]{32}$/);
    // Once the page's stream has its first event, Black answers through the API; the stream shows it.
    await page.waitForFunction(() => window.seen.events.length > 0, null, { timeout: 20000 });
    const moved = await post(server, `/v1/games/${g.id}/moves`, { move: 'e5', expected_version: g.version + 1 },
      { headers: { authorization: `Bearer ${g.tokens.black}` } });
    assert.equal(moved.status, 200, moved.text);
    const last = g.version + 2;
    await page.waitForFunction((v) => window.seen.events.some(([, version]) => version === v), last, { timeout: 20000 });
    const events = await page.evaluate(() => window.seen.events);
    assert.equal(events[0][0], 'game', JSON.stringify(events));
    assert.deepEqual(events.at(-1), ['change', last]);

    // The same page served from an origin not listed: the browser keeps the answer from it.
    const outsider = await context.newPage();
    await outsider.goto(`${stranger.origin}/#${new URLSearchParams({ base: server.base, id: g.id,
      token: g.tokens.white, move: 'Nf3', version: String(g.version + 2) })}`);
    await outsider.waitForFunction(() => window.seen.status !== null || window.seen.error !== null, null, { timeout: 20000 });
    const refused = await outsider.evaluate(() => window.seen);
    assert.equal(refused.status, null);
    assert.match(refused.error, /TypeError|Failed to fetch/);
    const after = await fetch(`${server.base}/v1/games/${g.id}`).then((r) => r.json());
    assert.equal(after.moves.length, 2, 'the preflight refused, the move was never sent');
  } finally {
    await context.close();
  }
});
