// The headers that keep a browser from misreading chessd's answers, over real
// HTTP: every kind of answer (JSON, problem, text, metrics, SVG, PGN, the
// openapi document, an event stream, a long poll, HEAD, 404, 405, a 304, and
// the 400 and 413 the strict reader writes before any handler runs) carries
// X-Content-Type-Options: nosniff; a board picture (SVG, both routes) also
// carries a Content-Security-Policy that lets it run no script and fetch
// nothing, and no other answer carries one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { call, get, post, nodeRequest, rawRequest, head, START_FEN } from './http.mjs';
import { openEvents } from './events.mjs';

const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

let server;
before(async () => { server = await startServer(['--max-body', '1024']); });
after(async () => { await server?.stop(); });

/** A header of a fetch (Headers) or node:http/raw (plain object) answer. */
function header(res, name) {
  const h = res.headers;
  return typeof h.get === 'function' ? h.get(name) ?? undefined : h[name.toLowerCase()];
}

function expectNosniff(res, what) {
  assert.equal(header(res, 'x-content-type-options'), 'nosniff', `${what} (${res.status}): no nosniff`);
}

function expectPolicy(res, what) {
  expectNosniff(res, what);
  assert.equal(header(res, 'content-security-policy'), SVG_POLICY, `${what} (${res.status})`);
}

function expectNoPolicy(res, what) {
  assert.equal(header(res, 'content-security-policy'), undefined, `${what} (${res.status}) carries a policy`);
}

test('every kind of answer carries X-Content-Type-Options: nosniff, and only pictures a Content-Security-Policy', async () => {
  const fen = encodeURIComponent(START_FEN);
  const created = await post(server, '/v1/games', {});
  assert.equal(created.status, 201, created.text);
  const { id, tokens } = created.body;
  const moved = await post(server, `/v1/games/${id}/moves`, { move: 'e2e4', expected_version: 1 },
    { headers: { authorization: `Bearer ${tokens.white}` } });
  assert.equal(moved.status, 200, moved.text);

  const answers = [
    ['JSON', await get(server, `/v1/position?fen=${fen}`), 200, /^application\/json/],
    ['health', await get(server, '/healthz'), 200, /^application\/json/],
    ['created game', created, 201, /^application\/json/],
    ['change', moved, 200, /^application\/json/],
    ['problem', await get(server, '/v1/position?fen=nonsense'), 400, /^application\/problem\+json/],
    ['401 problem', await post(server, `/v1/games/${id}/resign`, { expected_version: 2 }), 401, /^application\/problem\+json/],
    ['text', await get(server, `/v1/position?fen=${fen}`, { headers: { accept: 'text/plain' } }), 200, /^text\/plain/],
    ['metrics', await get(server, '/metrics'), 200, /^text\/plain/],
    ['openapi', await get(server, '/openapi.yaml'), 200, /yaml/],
    ['PGN', await get(server, `/v1/games/${id}/pgn`), 200, /^application\/x-chess-pgn/],
    ['long poll', await get(server, `/v1/games/${id}`, { headers: { prefer: 'wait=1' } }), 200, /^application\/json/],
    ['HEAD', await call(server, 'HEAD', '/healthz'), 200, /^application\/json/],
    ['unknown path', await get(server, '/no-such-path'), 404, /^application\/problem\+json/],
    ['unknown game', await get(server, '/v1/games/AAAAAAAAAAAAAAAA'), 404, /^application\/problem\+json/],
    ['other method', await call(server, 'DELETE', '/healthz'), 405, /^application\/problem\+json/],
  ];
  for (const [what, res, status, type] of answers) {
    assert.equal(res.status, status, `${what}: ${res.text?.slice(0, 200)}`);
    assert.match(header(res, 'content-type'), type, what);
    expectNosniff(res, what);
    expectNoPolicy(res, what);
  }

  const stream = await openEvents(server, id, { sse: true });
  try {
    assert.equal(stream.status, 200);
    assert.equal(stream.headers['content-type'], 'text/event-stream');
    expectNosniff(stream, 'event stream');
    expectNoPolicy(stream, 'event stream');
  } finally {
    stream.close();
  }
  const ndjson = await openEvents(server, id);
  try {
    assert.equal(ndjson.headers['content-type'], 'application/x-ndjson');
    expectNosniff(ndjson, 'NDJSON event stream');
  } finally {
    ndjson.close();
  }
});

test('the 400 and 413 the strict reader writes itself carry nosniff', async () => {
  const bad = await rawRequest(server, 'GET', '/healthz',
    ['GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad : 1\r\nConnection: close\r\n\r\n']);
  assert.equal(bad.status, 400, bad.raw);
  assert.match(bad.raw, /\r\nX-Content-Type-Options: nosniff\r\n/);
  const large = await rawRequest(server, 'POST', '/v1/position',
    [head('POST', '/v1/position', { 'Content-Type': 'application/json', 'Content-Length': '4096', Connection: 'close' })]);
  assert.equal(large.status, 413, large.raw);
  assert.equal(large.headers['x-content-type-options'], 'nosniff', large.raw);
  assert.equal(large.headers['content-security-policy'], undefined);
});

test('both picture routes carry nosniff and the Content-Security-Policy, the 304 too', async () => {
  const fen = encodeURIComponent(START_FEN);
  const byFormat = await get(server, `/v1/position?fen=${fen}&format=svg`);
  const byAccept = await get(server, `/v1/position?fen=${fen}`, { headers: { accept: 'image/svg+xml' } });
  const created = await post(server, '/v1/games', {});
  assert.equal(created.status, 201, created.text);
  const picture = await get(server, `/v1/games/${created.body.id}/board.svg`);
  const current = await nodeRequest(server, {
    path: `/v1/games/${created.body.id}/board.svg`, headers: { 'if-none-match': header(picture, 'etag') },
  });
  for (const [what, res, status] of [['format=svg', byFormat, 200], ['Accept: image/svg+xml', byAccept, 200],
    ['board.svg', picture, 200], ['board.svg 304', current, 304]]) {
    assert.equal(res.status, status, `${what}: ${res.text?.slice(0, 200)}`);
    assert.equal(header(res, 'content-type'), 'image/svg+xml', what);
    expectPolicy(res, what);
  }
  // The policy blocks nothing the picture needs: it refers to nothing outside
  // itself (only #fragments), runs no script and holds no event handler.
  for (const svg of [byFormat.text, picture.text]) {
    assert.match(svg, /^<svg /);
    const references = [...svg.matchAll(/(?:href|src)="([^"]*)"/g)].map((m) => m[1]);
    assert.ok(references.length > 0 && references.every((r) => r.startsWith('#')), references.join(' '));
    assert.doesNotMatch(svg, /<script|\son[a-z]+=|url\(|@import|<foreignObject/i);
  }
});
