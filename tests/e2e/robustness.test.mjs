// Nothing a client sends gets a 5xx: a seeded loop (CHESSD_E2E_SEED,
// CHESSD_E2E_FUZZ) of random methods, paths, query strings, headers and bodies
// (random bytes, random JSON, non-ASCII text, mutated valid requests), every
// answer < 500, valid UTF-8 and valid against openapi.yaml, the server still
// healthy afterwards. Then byte-level protocol garbage, which libmicrohttpd
// answers itself (text/html, outside the API contract): still no 5xx and the
// server keeps serving; and ambiguous body framing (RFC 9112 section 6.3).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startServer } from './server.mjs';
import { get, nodeRequest, rawExchange, START_FEN, KIWIPETE } from './http.mjs';
import { prng } from './prng.mjs';

const SEED = Number(process.env.CHESSD_E2E_SEED ?? 20240607);
const ITERATIONS = Number(process.env.CHESSD_E2E_FUZZ ?? 800);
const PARALLEL = 8;

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const METHODS = ['GET', 'GET', 'POST', 'POST', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'FOO', 'BREW', 'M-SEARCH'];
const PATHS = ['/healthz', '/readyz', '/version', '/openapi.yaml', '/v1/position', '/v1/position', '/v1/position/moves',
  '/v1/position/moves', '/v1/perft', '/', '/v1', '/v1/', '/v1/position/', '/v1//position', '/v1/position/../perft',
  '/v1/%70osition', '/%00', '/v1/position%00x', '/%ff%fe', '/' + 'a'.repeat(3000), '/v1/perft/', '/*'];
const OPERATIONS = [['GET', '/v1/position'], ['POST', '/v1/position'], ['POST', '/v1/position/moves'],
  ['POST', '/v1/position/moves'], ['GET', '/v1/perft'], ['GET', '/healthz'], ['HEAD', '/v1/position']];
const PRINTABLE = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&\'()*+,;=:@/?[]{}"<>\\^`|#'];
const FEN_CHARS = [...'pnbrqkPNBRQK12345678/ wb-KQkqabcdefgh0123456789XYZ'];
const SAN_CHARS = [...'abcdefgh12345678NBRQKxO-=+#e2e4 '];
const UNICODE = [...'abcdefgh12345678NBRQK\u00e9\u00fc\u00df\u2654\u265a\u4e2d\u{1f600}\u0430'];
const JSON_TYPES = ['application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', null,
  'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/problem+json', ';;;', 'APPLICATION/JSON'];
const ACCEPTS = [null, null, 'text/plain', 'application/json', '*/*', 'text/plain, application/json', 'image/png', ';q=0'];

function randomJson(r, depth = 0) {
  switch (r.int(depth > 4 ? 5 : 8)) {
    case 0: return null;
    case 1: return r.chance(0.5);
    case 2: return r.pick([0, -1, 1e308, -0.5, 2 ** 53 + 1, 1000000]);
    case 3: return r.str(PRINTABLE, 20);
    case 4: return r.str(FEN_CHARS, 90);
    case 5: return Array.from({ length: r.int(6) }, () => randomJson(r, depth + 1));
    default: {
      const o = {};
      for (let i = r.int(5); i > 0; i--) o[r.pick(['fen', 'moves', 'chess960', 'x', '', 'FEN', r.str(PRINTABLE, 8)])] = randomJson(r, depth + 1);
      return o;
    }
  }
}

function validBody(r) {
  return r.pick([
    { fen: START_FEN },
    { fen: KIWIPETE, chess960: false },
    { moves: ['e4', 'e5', 'Nf3'] },
    { fen: 'bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1', chess960: true, moves: ['g1f3'] },
    { moves: Array.from({ length: r.int(30) }, () => r.str(SAN_CHARS, 6)) },
    { fen: r.str(FEN_CHARS, 80), moves: [r.str(SAN_CHARS, 5)] },
    { moves: Array.from({ length: 1 + r.int(6) }, () => r.pick(['e4', 'e5', 'Nf3', 'Nc6', 'Ke2', 'O-O', 'Qh5', 'exd5', 'd7d5', 'e1g1', 'a7a8q'])) },
  ]);
}

function mutate(r, text) {
  const chars = [...text];
  for (let i = 1 + r.int(4); i > 0; i--) {
    const at = r.int(chars.length + 1);
    switch (r.int(3)) {
      case 0: chars.splice(at, 1); break;
      case 1: chars.splice(at, 0, r.pick([...'{}[]",:\\\0 \u00e9\u0000\ud83d'])); break;
      default: chars[at] = r.pick(PRINTABLE);
    }
  }
  return chars.join('');
}

function randomBody(r) {
  switch (r.int(7)) {
    case 0: return undefined;
    case 1: return Buffer.from(Array.from({ length: r.int(600) }, () => r.int(256)));
    case 2: return JSON.stringify(randomJson(r));
    case 3: return JSON.stringify(validBody(r));
    case 4: return mutate(r, JSON.stringify(validBody(r)));
    case 5: return r.chance(0.5)
      ? JSON.stringify({ moves: Array.from({ length: 1 + r.int(3) }, () => r.str(UNICODE, 45)) })
      : Buffer.concat([Buffer.from('{"moves":["'), Buffer.from(Array.from({ length: 1 + r.int(40) }, () => 0x80 + r.int(128))), Buffer.from('"]}')]);
    default: return r.pick(['', '{}', '[]', 'null', '{"moves":[]}', '{'.repeat(200), '['.repeat(5000), '"\\ud800"',
      '{"fen":"\\u0000"}', '{"moves":["\\u00e9"]}', `{"moves":${JSON.stringify(Array(1001).fill('e4'))}}`]);
  }
}

function randomQuery(r) {
  if (r.chance(0.4)) return '';
  const params = [];
  // Mostly names the routes read, each once (so requests reach the handlers);
  // sometimes an unknown name or a repeated one, which are refused with 400.
  const used = new Set();
  for (let i = 1 + r.int(3); i > 0; i--) {
    let key = r.pick(['fen', 'depth', 'legal_moves', 'chess960', 'fen', 'depth', 'legal_moves']);
    if (r.chance(0.1)) key = r.pick(['x', '', 'Depth']);
    else if (used.has(key) && !r.chance(0.1)) continue;
    used.add(key);
    let value;
    if (key === 'depth') value = r.pick(['1', '2', '3', '0', '-1', '6', '99', '1e3', 'abc', '', '%00', '3.5']);
    else if (key === 'fen') value = r.chance(0.5) ? encodeURIComponent(r.pick([START_FEN, KIWIPETE, r.str(FEN_CHARS, 90)])) : r.str(PRINTABLE.filter((c) => c !== '#'), 40);
    else value = r.pick(['true', 'false', '1', '0', 'yes', '', '%ff', r.str(PRINTABLE, 10)]);
    params.push(`${key}=${value}`);
  }
  return `?${params.join('&').replaceAll('#', '%23')}`;
}

test(`${ITERATIONS} random requests (seed ${SEED}): every answer < 500 and as documented`, async () => {
  const r = prng(SEED);
  const agent = new http.Agent({ keepAlive: true, maxSockets: PARALLEL });
  const requests = Array.from({ length: ITERATIONS }, () => {
    // Mostly the documented operations (so bodies reach the handlers), the rest anything.
    const [method, base] = r.chance(0.6) ? r.pick(OPERATIONS) : [r.pick(METHODS), r.pick(PATHS)];
    const path = base + randomQuery(r);
    const body = method === 'HEAD' ? undefined : randomBody(r);
    const headers = {};
    const type = r.pick(JSON_TYPES);
    if (type && body !== undefined) headers['content-type'] = type;
    const accept = r.pick(ACCEPTS);
    if (accept) headers.accept = accept;
    if (r.chance(0.2)) headers['x-request-id'] = r.str(PRINTABLE, 70);
    return { method, path, body, headers };
  });
  const statuses = new Map();
  let nextIndex = 0;
  const worker = async () => {
    while (nextIndex < requests.length) {
      const i = nextIndex++;
      const req = requests[i];
      let res;
      try {
        res = await nodeRequest(server, { ...req, agent });
      } catch (err) {
        assert.fail(`request #${i} (seed ${SEED}) ${req.method} ${req.path.slice(0, 120)} body ${JSON.stringify(String(req.body ?? '')).slice(0, 200)}: ${err.message}`);
      }
      assert.ok(res.status < 500, `request #${i} (seed ${SEED}) ${req.method} ${req.path.slice(0, 120)} got ${res.status}: ${res.text.slice(0, 300)}`);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  } finally {
    agent.destroy();
  }
  // The loop must have reached the interesting answers, not just 404s.
  for (const status of [200, 400, 404, 405, 415, 422]) assert.ok(statuses.get(status) > 0, `no ${status} in ${JSON.stringify([...statuses])}`);
  const health = await get(server, '/healthz');
  assert.equal(health.status, 200);
  assert.equal(server.proc.exitCode, null, 'the server must still be running');
});

// Raw requests that break HTTP/1.1 framing. libmicrohttpd answers these
// before chessd's code runs, with its own text/html pages, so they are held
// to "no 5xx, connection ends, server keeps serving", not to openapi.yaml.
const PROTOCOL_GARBAGE = [
  'GARBAGE\r\n\r\n',
  '\r\n\r\n\r\n',
  'GET\r\n\r\n',
  'GET /healthz\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost x\r\n\r\n',
  'GET /healthz HTTP/1.1\r\n: empty-name\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nX-Folded: a\r\n b\r\n\r\n',
  'POST /v1/position HTTP/1.1\r\nContent-Length: abc\r\n\r\n',
  'POST /v1/position HTTP/1.1\r\nContent-Length: -1\r\n\r\n',
  'POST /v1/position HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n',
  'POST /v1/position HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
  'POST /v1/position HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n',
  'POST /v1/position HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n',
  'POST /v1/position HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n',
  `GET /healthz HTTP/1.1\r\nX-Big: ${'a'.repeat(40000)}\r\n\r\n`,
  `GET /${'a'.repeat(40000)} HTTP/1.1\r\n\r\n`,
  '\x00\x01\x02\xff\xfe binary \r\n\r\n',
];

test('protocol-level garbage never gets a 5xx and does not disturb the server', async () => {
  for (const raw of PROTOCOL_GARBAGE) {
    // Some of these leave the server waiting for the rest of a request: silence is fine too.
    const { raw: answer } = await rawExchange(server, [Buffer.from(raw, 'latin1')], { timeoutMs: 400, silenceOk: true });
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(answer);
    if (m) assert.ok(Number(m[1]) < 500, `${JSON.stringify(raw.slice(0, 80))} got ${m[1]}`);
  }
  assert.equal((await get(server, '/healthz')).status, 200);
});

test('conflicting Content-Length headers are refused with 400 (RFC 9112 section 6.3)', async () => {
  // Two different lengths make the framing ambiguous (request smuggling behind a proxy that picks the other one).
  const res = await rawExchange(server, ['POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Content-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}'], { timeoutMs: 1000, silenceOk: true });
  assert.match(res.raw, /^HTTP\/1\.1 400 /, `got ${JSON.stringify(res.raw.slice(0, 120))}`);
});

test('a Transfer-Encoding other than chunked is refused with 400 (RFC 9112 section 6.3)', async () => {
  const res = await rawExchange(server, ['POST /v1/position HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Transfer-Encoding: gzip\r\nConnection: close\r\n\r\n{}'], { timeoutMs: 1000, silenceOk: true });
  assert.match(res.raw, /^HTTP\/1\.1 400 /, `got ${res.timedOut ? 'no answer within 1 s' : JSON.stringify(res.raw.slice(0, 120))}`);
});

