// Every problem code a client can provoke, and the body rules behind them:
// invalid_json (malformed, not an object, duplicate field, NUL, nesting over
// the limit), unknown_field, invalid_field, invalid_parameter,
// unsupported_media_type, not_found, method_not_allowed (with Allow),
// payload_too_large (Content-Length over --max-body answered before the body
// is sent; a chunked body that grows past the cap; the 64 KiB default), and
// UTF-8 hygiene of problem documents.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { get, post, call, expectProblem, rawRequest, head, START_FEN } from './http.mjs';

let server; // defaults
let small; // --max-body 1024
before(async () => {
  [server, small] = await Promise.all([startServer(), startServer(['--max-body', '1024'])]);
});
after(async () => { await Promise.all([server?.stop(), small?.stop()]); });

const postRaw = (srv, path, body, type = 'application/json') =>
  call(srv, 'POST', path, { body, headers: type ? { 'content-type': type } : {} });

test('malformed JSON is invalid_json', async () => {
  for (const body of ['{"fen":', '{', '{"fen" "x"}', "{'fen':'x'}", '{"moves":[e4]}', '{} trailing', 'nul', '{"a":1,}'])
    expectProblem(await postRaw(server, '/v1/position/moves', body), 400, 'invalid_json');
});

test('a JSON body that is not an object is invalid_json', async () => {
  for (const body of ['[]', '"fen"', '42', 'null', 'true'])
    expectProblem(await postRaw(server, '/v1/position', body), 400, 'invalid_json');
});

test('100 levels of nesting are invalid_json; 16 are parsed', async () => {
  const deep = (n) => `{"fen":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
  expectProblem(await postRaw(server, '/v1/position', deep(100)), 400, 'invalid_json');
  expectProblem(await postRaw(server, '/v1/position', `${'['.repeat(100)}${']'.repeat(100)}`), 400, 'invalid_json');
  expectProblem(await postRaw(server, '/v1/position', deep(17)), 400, 'invalid_json');
  // 16 levels parse; the value is then simply the wrong type.
  expectProblem(await postRaw(server, '/v1/position', deep(16)), 400, 'invalid_field');
  // Brackets inside strings do not count as nesting.
  const res = await postRaw(server, '/v1/position/moves', JSON.stringify({ moves: ['['.repeat(200)] }));
  expectProblem(res, 400, 'invalid_move_text');
});

test('a field given twice is invalid_json; a NUL byte is invalid_json', async () => {
  expectProblem(await postRaw(server, '/v1/position', `{"fen":"${START_FEN}","fen":"${START_FEN}"}`), 400, 'invalid_json');
  expectProblem(await postRaw(server, '/v1/position', Buffer.from('{"fen":"x"}\0')), 400, 'invalid_json');
});

test('unknown fields are unknown_field, named in detail', async () => {
  const problem = expectProblem(await post(server, '/v1/position', { fen: START_FEN, legal_moves: false }), 400, 'unknown_field');
  assert.match(problem.detail, /legal_moves/);
  expectProblem(await post(server, '/v1/position', { moves: ['e4'] }), 400, 'unknown_field');
  expectProblem(await post(server, '/v1/position/moves', { moves: [], Fen: START_FEN }), 400, 'unknown_field');
});

test('fields of the wrong type are invalid_field', async () => {
  expectProblem(await post(server, '/v1/position', { fen: ['x'] }), 400, 'invalid_field');
  expectProblem(await post(server, '/v1/position', { chess960: 1 }), 400, 'invalid_field');
  expectProblem(await post(server, '/v1/position/moves', { moves: { 0: 'e4' } }), 400, 'invalid_field');
  expectProblem(await post(server, '/v1/position/moves', { moves: null }), 400, 'invalid_field');
});

test('a body that is not application/json is unsupported_media_type (415)', async () => {
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'text/json'])
    expectProblem(await postRaw(server, '/v1/position', '{}', type), 415, 'unsupported_media_type');
  expectProblem(await postRaw(server, '/v1/position/moves', '{"moves":[]}', 'text/plain'), 415, 'unsupported_media_type');
  // application/json with parameters or other case is JSON; no Content-Type at all is read as JSON.
  for (const type of ['application/json; charset=utf-8', 'Application/JSON', null]) {
    const res = await postRaw(server, '/v1/position/moves', Buffer.from('{"moves":["e4"]}'), type);
    assert.equal(res.status, 200, String(type));
  }
});

test('unknown paths are not_found (404)', async () => {
  for (const path of ['/', '/v1', '/v1/positions', '/v1/position/', '/V1/POSITION', '/v2/position', '/healthz/x', '/v1/position/moves/1'])
    expectProblem(await get(server, path), 404, 'not_found');
  expectProblem(await post(server, '/v1/nothing', {}), 404, 'not_found');
});

test('a known path with another method is method_not_allowed (405) with an Allow header', async () => {
  const cases = [
    ['DELETE', '/v1/position', 'GET, HEAD, POST'],
    ['PUT', '/v1/position', 'GET, HEAD, POST'],
    ['GET', '/v1/position/moves', 'POST'],
    ['PATCH', '/v1/position/moves', 'POST'],
    ['POST', '/v1/perft', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/readyz', 'GET, HEAD'],
    ['PUT', '/version', 'GET, HEAD'],
    ['POST', '/openapi.yaml', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of cases) {
    const res = await call(server, method, path, method === 'GET' ? {} : { json: {} });
    expectProblem(res, 405, 'method_not_allowed');
    assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
  }
});

test('Content-Length over --max-body is payload_too_large, answered before the body is sent', async () => {
  const headers = head('POST', '/v1/position', { 'Content-Type': 'application/json', 'Content-Length': '5000', Connection: 'close' });
  const body = `{"fen":"${' '.repeat(4990)}"}`.slice(0, 5000);
  const res = await rawRequest(small, 'POST', '/v1/position', [headers, body.slice(0, 2500), body.slice(2500)], { pauseMs: 300 });
  expectProblem(res, 413, 'payload_too_large');
  assert.equal(res.piecesSentBeforeAnswer, 1, 'the 413 should arrive right after the headers, before any body byte');
  assert.equal(res.headers.connection, 'close');
});

test('a Content-Length of many gigabytes is payload_too_large too', async () => {
  for (const length of ['99999999999', '18446744073709551615']) {
    const res = await rawRequest(small, 'POST', '/v1/position',
      [head('POST', '/v1/position', { 'Content-Type': 'application/json', 'Content-Length': length, Connection: 'close' })]);
    expectProblem(res, 413, 'payload_too_large');
  }
});

test('a chunked body that grows past --max-body is payload_too_large', async () => {
  const headers = head('POST', '/v1/position/moves', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', Connection: 'close' });
  const piece = `{"moves":[${Array(100).fill('"e4"').join(',')}`; // ~500 bytes per chunk
  const chunk = (s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  const pieces = [headers, chunk(piece), chunk(','.repeat(400)), chunk(','.repeat(400)), chunk('"e4"]}'), '0\r\n\r\n'];
  const res = await rawRequest(small, 'POST', '/v1/position/moves', pieces, { pauseMs: 20 });
  expectProblem(res, 413, 'payload_too_large');
  // The server still answers on fresh connections afterwards.
  assert.equal((await get(small, '/healthz')).status, 200);
});

test('a chunked body under the cap is read whole', async () => {
  const headers = head('POST', '/v1/position/moves', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', Connection: 'close' });
  const chunk = (s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  const res = await rawRequest(small, 'POST', '/v1/position/moves',
    [headers, chunk('{"moves":["e4",'), chunk('"e5","Nf3"]'), chunk('}'), '0\r\n\r\n'], { pauseMs: 20 });
  assert.equal(res.status, 200);
  assert.equal(res.body.moves.length, 3);
});

test('the default cap is 64 KiB: 65536 bytes are read, 65537 are payload_too_large', async () => {
  const padded = (n) => { const s = '{"moves":["e4"]}'; return s.slice(0, -1) + ' '.repeat(n - s.length) + '}'; };
  const atCap = await postRaw(server, '/v1/position/moves', padded(65536));
  assert.equal(atCap.status, 200);
  expectProblem(await postRaw(server, '/v1/position/moves', padded(65537)), 413, 'payload_too_large');
});

test('problem documents are valid UTF-8 even when they quote long non-ASCII input', async () => {
  // Details quote at most 32 characters of a move and 40 of a field name; a cut must not split a character.
  const move = `${'a'.repeat(31)}é`;
  const moveRes = await post(server, '/v1/position/moves', { moves: [move] });
  expectProblem(moveRes, 400, 'invalid_move_text');
  assert.equal(moveRes.body.move, move);
  const field = `${'x'.repeat(39)}é`;
  expectProblem(await post(server, '/v1/position', { [field]: 1 }), 400, 'unknown_field');
});

test('a body that is not valid UTF-8 gets a 4xx answer that is itself valid UTF-8', async () => {
  for (const bytes of [Buffer.from('{"moves":["\xff"]}', 'latin1'), Buffer.from('{"\xc3":1}', 'latin1'), Buffer.from('{"fen":"\xe2\x82"}', 'latin1')]) {
    const res = await postRaw(server, bytes.includes(Buffer.from('moves')) ? '/v1/position/moves' : '/v1/position', bytes);
    assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${res.text}`);
  }
});
