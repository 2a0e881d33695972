// Client helpers for the e2e tests. Every response that passes through here
// is checked against openapi.yaml (checkResponse) before a test sees it:
// fetch for ordinary requests, node:http for agent/socket control, node:net
// for byte-level requests (pieces, pauses, chunked bodies, early answers).
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { checkResponse } from './openapi.mjs';

export const START_FEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
export const KIWIPETE = 'r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1';

/**
 * One request with fetch. opts: { headers, body (string/Buffer), json (object,
 * sent as application/json) }. Resolves to { status, headers, text, body }
 * where body is the validated, parsed body.
 */
export async function call(server, method, path, opts = {}) {
  const headers = { ...(opts.headers ?? {}) };
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(server.base + path, { method, headers, body });
  const text = utf8(Buffer.from(await res.arrayBuffer()), `${method} ${path} -> ${res.status}`);
  const parsed = checkResponse({ method, path, status: res.status, headers: res.headers, body: text });
  return { status: res.status, headers: res.headers, text, body: parsed };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a response body, failing the test when it is not valid UTF-8 (RFC 8259 section 8.1). */
export function utf8(bytes, label) {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    const bad = firstBadUtf8(bytes);
    assert.fail(`${label}: the response body is not valid UTF-8 (byte ${bad} is 0x${bytes[bad]?.toString(16)}): ` +
      `...${JSON.stringify(bytes.subarray(Math.max(0, bad - 60), bad + 20).toString('latin1'))}...`);
  }
}

/** Offset of the first byte that starts an invalid UTF-8 sequence (a linear scan). */
function firstBadUtf8(bytes) {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const n = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    try {
      strictUtf8.decode(bytes.subarray(i, i + n + 1));
    } catch {
      return i;
    }
    i += n + 1;
  }
  return -1;
}

export const get = (server, path, opts) => call(server, 'GET', path, opts);
export const post = (server, path, json, opts = {}) => call(server, 'POST', path, { ...opts, json });

/** Asserts a problem+json answer with this HTTP status and `code`; returns the document. */
export function expectProblem(res, status, code) {
  const body = typeof res.body === 'object' ? res.body : safeJson(res.text ?? res.body);
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${JSON.stringify(body)}`);
  const type = typeof res.headers.get === 'function' ? res.headers.get('content-type') : res.headers['content-type'];
  assert.match(type, /^application\/problem\+json/);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(body.type, `urn:chessd:problem:${code}`);
  assert.equal(typeof body.title, 'string');
  assert.equal(typeof body.detail, 'string');
  return body;
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text };
  }
}

/**
 * One request with node:http (for Agent and socket control). opts as for
 * fetch, plus agent, localAddress (the client's source address) and timeoutMs
 * (no complete answer by then rejects; none by default). Resolves to
 * { status, headers, text, body, socket, ms } with the body validated.
 */
export function nodeRequest(server, { method = 'GET', path = '/', headers = {}, body, agent, localAddress, timeoutMs } = {}) {
  // node:http frames a GET/DELETE/OPTIONS body with neither Content-Length nor
  // chunked encoding, so the bytes would read as the start of the next request.
  if (body !== undefined && !Object.keys(headers).some((h) => /^(content-length|transfer-encoding)$/i.test(h)))
    headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let timer;
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers, agent, localAddress }, (res) => {
      const socket = res.socket;
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        clearTimeout(timer);
        try {
          const text = utf8(Buffer.concat(chunks), `${method} ${path} -> ${res.statusCode}`);
          const parsed = checkResponse({ method, path, status: res.statusCode, headers: res.headers, body: text });
          resolve({ status: res.statusCode, headers: res.headers, text, body: parsed, socket, ms: performance.now() - started });
        } catch (err) {
          reject(err);
        }
      });
      res.on('error', reject);
    });
    if (timeoutMs !== undefined)
      timer = setTimeout(() => req.destroy(new Error(`${method} ${path}${localAddress ? ` from ${localAddress}` : ''}: no complete answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => { clearTimeout(timer); reject(err); });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Writes `pieces` (strings/Buffers) to a fresh TCP connection, pausing
 * `pauseMs` between them, and reads until the server closes the connection
 * (send "Connection: close"). Pieces not yet sent when the first response
 * byte arrives are dropped, so an early answer (413 before the body) shows in
 * piecesSentBeforeAnswer. Resolves to { raw (latin1 string), piecesSentBeforeAnswer };
 * with silenceOk, a connection still open after timeoutMs resolves with timedOut.
 */
export function rawExchange(server, pieces, { pauseMs = 0, timeoutMs = 5000, silenceOk = false } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1');
    const chunks = [];
    let firstByteAfterPiece = -1;
    let sent = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      // silenceOk: the server may still be waiting for more bytes; report what came so far.
      if (silenceOk) resolve({ raw, piecesSentBeforeAnswer: firstByteAfterPiece, timedOut: true });
      else reject(new Error(`no complete response within ${timeoutMs} ms; got: ${raw}`));
    }, timeoutMs);
    socket.on('data', (d) => {
      if (firstByteAfterPiece < 0) firstByteAfterPiece = sent;
      chunks.push(d);
    });
    socket.on('error', (err) => {
      // A reset after the server has answered (and closed) is not a failure here.
      if (chunks.length === 0) { clearTimeout(timer); reject(err); }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ raw: Buffer.concat(chunks).toString('latin1'), piecesSentBeforeAnswer: firstByteAfterPiece });
    });
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (socket.destroyed || firstByteAfterPiece >= 0) break;
        socket.write(piece);
        sent++;
        if (pauseMs) await sleep(pauseMs);
      }
    });
  });
}

/** Parses one HTTP/1.1 response (Content-Length or chunked) from raw text. */
export function parseRawResponse(raw) {
  return parseRawResponses(raw, 1)[0];
}

/**
 * Parses up to `max` back-to-back HTTP/1.1 responses (pipelining) from raw
 * latin1 text; each is { status, headers, text }.
 */
export function parseRawResponses(raw, max = Infinity) {
  const out = [];
  let rest = raw;
  while (rest.length && out.length < max) {
    const split = rest.indexOf('\r\n\r\n');
    assert.ok(split > 0, `no complete header block in response: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, split).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    assert.ok(m, `bad status line: ${statusLine}`);
    const headers = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    rest = rest.slice(split + 4);
    let body;
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      body = rest.slice(0, length);
      assert.equal(body.length, length, 'truncated body');
      rest = rest.slice(length);
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      body = '';
      for (;;) {
        const eol = rest.indexOf('\r\n');
        const size = parseInt(rest.slice(0, eol), 16);
        rest = rest.slice(eol + 2);
        if (!size) {
          rest = rest.slice(rest.indexOf('\r\n') + 2);
          break;
        }
        body += rest.slice(0, size);
        rest = rest.slice(size + 2);
      }
    } else {
      body = rest;
      rest = '';
    }
    out.push({ status: Number(m[1]), headers, text: utf8(Buffer.from(body, 'latin1'), statusLine) });
  }
  return out;
}

/** rawExchange + parse + openapi check for a request to method/path. */
export async function rawRequest(server, method, path, pieces, opts) {
  const { raw, piecesSentBeforeAnswer } = await rawExchange(server, pieces, opts);
  const res = parseRawResponse(raw);
  res.body = checkResponse({ method, path, status: res.status, headers: res.headers, body: res.text });
  res.piecesSentBeforeAnswer = piecesSentBeforeAnswer;
  res.raw = raw;
  return res;
}

/** The request-line and headers block for a raw request. */
export function head(method, path, headers = {}) {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export { sleep };

/**
 * Asks /readyz until it reports `redis` ('up', 'down' or 'off'): the
 * readiness watcher probes Redis in the background (every second, every
 * 100 ms while it is down), and a replica serves games again once a probe
 * has seen Redis back.
 */
export async function waitForRedis(server, redis, ms = 5000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await get(server, '/readyz');
    if (res.status === 200 && res.body.redis === redis) return res;
    assert.ok(Date.now() < deadline, `/readyz did not report redis ${redis} within ${ms} ms: ${res.status} ${res.text}`);
    await sleep(20);
  }
}

/** nodeRequest with a 5 s deadline unless opts say otherwise, for tests that time answers. */
export const nodeRequestFrom = (server, opts = {}) => nodeRequest(server, { timeoutMs: 5000, ...opts });

/** /readyz's redis_memory for the suites' redis-servers: their defaults, noeviction and no maxmemory. */
export const NOEVICTION = { policy: 'noeviction', maxmemory: 0, eviction_possible: false };
