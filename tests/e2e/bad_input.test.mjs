// Every row of the tables in tests/BAD_INPUT.md is one test here, so the
// document and the tests cannot drift apart. The file is parsed when this
// module loads; each table with `class`, `request`, `status` and `code`
// columns contributes one test per row, grouped by the section heading above
// it. A row that cannot be read is a failing test (never a silently skipped
// one). The row format, its placeholders and what is checked are described at
// the top of BAD_INPUT.md. On top of the rows: at least 120 of them, every
// fen_error and every move reason in openapi.yaml has a row, and every code
// and enum value the table names exists in openapi.yaml. The rows of the
// section "Service keys" run on a second server, with service keys; those of
// STARTUP_SECTION are settings chessd serve must refuse (exit 2, a reason).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHESSD_BIN, startServer, tempDir } from './server.mjs';
import { call, nodeRequest, rawExchange, START_FEN, utf8 } from './http.mjs';
import { checkResponse, spec } from './openapi.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DOC_PATH = path.resolve(here, '../BAD_INPUT.md');
const DOC_NAME = 'tests/BAD_INPUT.md';
const MIN_ROWS = 120;

// ---------------------------------------------------------------- parsing

/** The cells of a table line: split on unescaped '|', with '\|' read as '|'. */
function splitCells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (s[i] === '|') {
      cells.push(cur.trim());
      cur = '';
    } else {
      cur += s[i];
    }
  }
  cells.push(cur.trim());
  return cells;
}

const isSeparator = (line) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line);

/**
 * The inline code spans of a cell (CommonMark: a run of N backticks up to the
 * next run of exactly N; one leading and trailing space stripped when both are
 * there). Throws when the cell has anything but blanks outside its spans.
 */
function codeSpans(cell, what) {
  const spans = [];
  let i = 0;
  let outside = '';
  while (i < cell.length) {
    if (cell[i] !== '`') {
      outside += cell[i++];
      continue;
    }
    let n = 0;
    while (cell[i + n] === '`') n++;
    const fence = '`'.repeat(n);
    let j = i + n;
    let end = -1;
    while (j < cell.length) {
      const k = cell.indexOf(fence, j);
      if (k < 0) break;
      if (cell[k + n] !== '`' && cell[k - 1] !== '`') { end = k; break; }
      j = k + 1;
    }
    if (end < 0) throw new Error(`${what}: unclosed code span in ${JSON.stringify(cell)}`);
    let content = cell.slice(i + n, end);
    if (content.length > 2 && content.startsWith(' ') && content.endsWith(' ') && content.trim()) content = content.slice(1, -1);
    spans.push(content);
    i = end + n;
  }
  if (outside.trim()) throw new Error(`${what}: text outside code spans: ${JSON.stringify(outside.trim())}`);
  return spans;
}

/** Reads a request cell into { raw, method, target, headers: [[name, template]], body: template|null }. */
function parseRequest(cell) {
  const spans = codeSpans(cell, 'request');
  if (!spans.length) throw new Error('request: no code span');
  const first = spans[0];
  if (first.startsWith('RAW ')) {
    if (spans.length > 1) throw new Error('request: a RAW request is one code span');
    return { raw: true, text: first.slice(4) };
  }
  const m = /^([A-Z][A-Z-]*) (\/\S*)$/.exec(first);
  if (!m) throw new Error(`request: the first span must be "METHOD /path", got ${JSON.stringify(first)}`);
  const headers = [];
  let body = null;
  for (const span of spans.slice(1)) {
    if (span.startsWith('H:')) {
      if (body !== null) throw new Error('request: headers come before the body');
      const eq = span.indexOf('=');
      if (eq < 3) throw new Error(`request: header span must be H:Name=Value, got ${JSON.stringify(span)}`);
      headers.push([span.slice(2, eq), span.slice(eq + 1)]);
    } else {
      if (body !== null) throw new Error('request: more than one body span');
      body = span;
    }
  }
  return { raw: false, method: m[1], target: m[2], headers, body };
}

/** Reads a given cell: empty, '-' or one code span of space-separated steps. */
function parseGiven(cell) {
  if (!cell || cell === '-') return [];
  const spans = codeSpans(cell, 'given');
  const steps = spans.join(' ').split(/\s+/).filter(Boolean);
  for (const step of steps)
    if (step !== 'resign' && step !== 'offer' && !/^[^@\s]+(@[^@\s]+)?$/.test(step)) throw new Error(`given: cannot read step ${JSON.stringify(step)}`);
  return steps;
}

/** Reads the also cell: ';'-separated key=value checks (backticks ignored). */
function parseAlso(cell) {
  const text = cell.replaceAll('`', '').trim();
  if (!text || text === '-') return [];
  return text.split(';').map((part) => part.trim()).filter(Boolean).map((part) => {
    const eq = part.indexOf('=');
    if (eq < 1) throw new Error(`also: expected key=value, got ${JSON.stringify(part)}`);
    return [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
  });
}

function parseStatus(cell) {
  const text = cell.replaceAll('`', '').trim();
  if (/^[1-5]\d\d$/.test(text)) return { exact: Number(text), text };
  if (/^[1-5]xx$/i.test(text)) return { klass: Number(text[0]), text: text.toLowerCase() };
  throw new Error(`status: expected a status like 400 or 4xx, got ${JSON.stringify(cell)}`);
}

const COLUMNS = ['class', 'given', 'request', 'status', 'code', 'also', 'notes'];
const REQUIRED = ['class', 'request', 'status', 'code'];

/**
 * Parses the document into rows: { line, section, cls, given, request,
 * status, code, also, notes, error } (error set, the rest partial, when the
 * row cannot be read).
 */
export function parseDocument(text) {
  const lines = text.split('\n');
  const rows = [];
  let section = '(top)';
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      section = heading[1].trim();
      continue;
    }
    if (!line.trim().startsWith('|') || !isSeparator(lines[i + 1] ?? '')) continue;
    const header = splitCells(line).map((c) => c.toLowerCase());
    i += 2;
    const isRowTable = REQUIRED.every((c) => header.includes(c));
    for (; i < lines.length && lines[i].trim().startsWith('|'); i++) {
      if (!isRowTable) continue;
      const cells = splitCells(lines[i]);
      const row = { line: i + 1, section, cls: '', raw: lines[i] };
      try {
        if (cells.length !== header.length) throw new Error(`${cells.length} cells, the header has ${header.length}`);
        const get = (name) => cells[header.indexOf(name)] ?? '';
        for (const name of header) if (!COLUMNS.includes(name)) throw new Error(`unknown column ${JSON.stringify(name)}`);
        row.cls = get('class');
        if (!row.cls) throw new Error('class: empty');
        row.notes = get('notes');
        row.given = parseGiven(get('given'));
        row.request = parseRequest(get('request'));
        row.status = parseStatus(get('status'));
        const code = get('code').replaceAll('`', '').trim();
        if (!/^([a-z0-9_]+|-)$/.test(code)) throw new Error(`code: expected a problem code or -, got ${JSON.stringify(code)}`);
        row.code = code === '-' ? null : code;
        row.also = parseAlso(get('also'));
        if (!row.code && (row.status.klass ?? Math.floor(row.status.exact / 100)) >= 4 && !row.request.raw)
          throw new Error('an error answer without a problem code is only possible on RAW rows (libmicrohttpd\'s own pages)');
      } catch (err) {
        row.error = err.message;
      }
      rows.push(row);
    }
    i--;
  }
  return rows;
}

// ---------------------------------------------------------------- placeholders

const PLACEHOLDER = /\{(?:repeat:'((?:[^'\\]|\\.)*)',(\d+)|hex:([0-9a-fA-F ]+)|(game|white|black|version|other_game|other_white|other_black|start)|key:([a-z]+))\}/g;

// The section whose rows run on the server with service keys: its file has a
// line for each key of SERVICE_KEYS (name: scopes), {key:NAME} is that key and
// {key:none} one of a key's form that no line has; its rows' games are made
// with the admin key. It sends webhooks to 127.0.0.2 only (--webhook-allow).
const KEYED_SECTION = 'Service keys';
const SERVICE_KEYS = { creator: 'games:create', nothing: '-', admin: 'admin' };
const KEYS = Object.fromEntries([...Object.keys(SERVICE_KEYS), 'none']
  .map((name) => [name, `chsk_${randomBytes(32).toString('base64url')}`]));
const NEEDS_GAME = /\{(game|white|black|version)\}/;
const NEEDS_OTHER = /\{other_(game|white|black)\}/;

const unescapeQuoted = (s) => s.replace(/\\(.)/g, (_, c) => ({ r: '\r', n: '\n', t: '\t' })[c] ?? c);
const unescapeRaw = (s) => s.replace(/\\([rnt\\])/g, (_, c) => ({ r: '\r', n: '\n', t: '\t', '\\': '\\' })[c]);

/** Expands a template into bytes; raw: the literal text has \r \n \t \\ escapes. */
function expand(template, ctx, { raw = false } = {}) {
  const parts = [];
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    const literal = template.slice(last, m.index);
    parts.push(Buffer.from(raw ? unescapeRaw(literal) : literal, 'utf8'));
    last = m.index + m[0].length;
    if (m[2] !== undefined) {
      parts.push(Buffer.from(unescapeQuoted(m[1]).repeat(Number(m[2])), 'utf8'));
    } else if (m[3] !== undefined) {
      parts.push(Buffer.from(m[3].replace(/\s+/g, ''), 'hex'));
    } else if (m[5] !== undefined) {
      assert.ok(KEYS[m[5]], `placeholder {key:${m[5]}}: no such key (${Object.keys(KEYS).join(', ')})`);
      parts.push(Buffer.from(KEYS[m[5]], 'utf8'));
    } else {
      const name = m[4];
      const value = name === 'start' ? START_FEN : ctx[name];
      assert.ok(value !== undefined, `placeholder {${name}} has no value for this row`);
      parts.push(Buffer.from(String(value), 'utf8'));
    }
  }
  const literal = template.slice(last);
  parts.push(Buffer.from(raw ? unescapeRaw(literal) : literal, 'utf8'));
  return Buffer.concat(parts);
}

const expandText = (template, ctx) => expand(template, ctx).toString('utf8');

// ---------------------------------------------------------------- running

let plain;
let keyed;
let server; // the row's: keyed for KEYED_SECTION's rows, else plain

async function newGame(json = {}) {
  const headers = server === keyed ? { authorization: `Bearer ${KEYS.admin}` } : {};
  const res = await call(server, 'POST', '/v1/games', { json, headers });
  assert.equal(res.status, 201, `creating a game for the row: ${res.status} ${res.text}`);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version };
}

/** Creates the row's games and plays its given steps; resolves to the placeholder values. */
async function prepare(row) {
  const templates = row.request.raw ? [row.request.text] : [row.request.target, ...row.request.headers.flat(), row.request.body ?? ''];
  const all = templates.join('\n');
  const ctx = {};
  if (row.given.length || NEEDS_GAME.test(all)) {
    // A first step "takeback=POLICY" picks the game's takeback policy (default: agreement).
    const policy = row.given[0]?.startsWith('takeback=') ? row.given[0].slice('takeback='.length) : null;
    const game = await newGame(policy ? { takeback: policy } : {});
    let turn = 'white';
    for (const step of policy ? row.given.slice(1) : row.given) {
      const headers = { authorization: `Bearer ${game.tokens[turn]}` };
      let res;
      if (step === 'resign') {
        res = await call(server, 'POST', `/v1/games/${game.id}/resign`, { headers, json: { expected_version: game.version } });
      } else if (step === 'offer') {
        res = await call(server, 'POST', `/v1/games/${game.id}/draw`, { headers, json: { action: 'offer', expected_version: game.version } });
      } else {
        const [move, key] = step.split('@');
        if (key) headers['idempotency-key'] = key;
        res = await call(server, 'POST', `/v1/games/${game.id}/moves`, { headers, json: { move, expected_version: game.version } });
        turn = turn === 'white' ? 'black' : 'white';
      }
      assert.equal(res.status, 200, `given step ${JSON.stringify(step)} failed: ${res.status} ${res.text}`);
      game.version = res.body.version;
    }
    Object.assign(ctx, { game: game.id, white: game.tokens.white, black: game.tokens.black, version: game.version });
  }
  if (NEEDS_OTHER.test(all)) {
    const other = await newGame();
    Object.assign(ctx, { other_game: other.id, other_white: other.tokens.white, other_black: other.tokens.black });
  }
  return ctx;
}

const short = (s, n = 300) => (s.length > n ? `${s.slice(0, n)}... (${s.length} characters)` : s);
const printable = (buf) => short(JSON.stringify(buf.toString('latin1')));

/** Splits a raw answer into its first response and whatever follows it. */
function parseOneResponse(raw) {
  const split = raw.indexOf('\r\n\r\n');
  assert.ok(split > 0, `no complete response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  assert.ok(m, `bad status line ${JSON.stringify(statusLine)}`);
  const headers = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = raw.slice(split + 4);
  let body = rest;
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    body = rest.slice(0, length);
    rest = rest.slice(length);
  } else {
    rest = '';
  }
  return { status: Number(m[1]), headers, text: utf8(Buffer.from(body, 'latin1'), statusLine), rest };
}

/** Sends the row's request; resolves to { status, header(name), text, body, described }. */
async function send(row, ctx) {
  if (row.request.raw) {
    const bytes = expand(row.request.text, ctx, { raw: true });
    const described = `RAW ${printable(bytes)}`;
    const { raw, timedOut } = await rawExchange(server, [bytes], { timeoutMs: 3000, silenceOk: true });
    assert.ok(raw.length > 0, `${described}\nno answer${timedOut ? ' within 3 s' : ' before the connection closed'}`);
    const res = parseOneResponse(raw);
    const [, method, target] = /^(\S+) (\S+)/.exec(bytes.toString('latin1')) ?? [];
    res.described = described;
    res.rawAnswer = raw;
    res.header = (name) => res.headers[name.toLowerCase()];
    if (row.code) res.body = checkResponse({ method, path: target, status: res.status, headers: res.headers, body: res.text });
    return res;
  }
  const { method } = row.request;
  const target = expandText(row.request.target, ctx);
  const headers = {};
  for (const [name, value] of row.request.headers) headers[name.toLowerCase()] = expandText(value, ctx);
  const body = row.request.body === null ? undefined : expand(row.request.body, ctx);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const described = [`${method} ${short(target, 200)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${short(v, 120)}`),
    ...(body === undefined ? [] : [`body: ${printable(body)}`])].join('\n  ');
  let res;
  // fetch cannot send a body with GET/HEAD, nor the methods it forbids: node:http can.
  if ((body !== undefined && (method === 'GET' || method === 'HEAD')) || ['TRACE', 'TRACK', 'CONNECT'].includes(method)) {
    res = await nodeRequest(server, { method, path: target, headers, body, agent: false });
    res.header = (name) => res.headers[name.toLowerCase()];
  } else {
    res = await call(server, method, target, { headers, body });
    res.header = (name) => res.headers.get(name) ?? undefined;
  }
  res.described = described;
  return res;
}

/** Checks the answer against the row. */
function verify(row, res) {
  const answer = res.rawAnswer !== undefined ? `(raw) ${short(JSON.stringify(res.rawAnswer), 800)}`
    : `${res.status} ${res.header('content-type') ?? '(no Content-Type)'}\n  ${short(res.text ?? '', 600)}`;
  const context = `\n--- request (${DOC_NAME}:${row.line}):\n  ${res.described}\n--- response:\n  ${answer}`;
  const fail = (msg) => assert.fail(`${msg}${context}`);
  // libmicrohttpd 0.9.75 writes the head of its own 400 page twice; a row
  // that meets this names it (also: libmicrohttpd=head_twice), and then only
  // that exact repetition is let through.
  const headTwice = row.also.some(([k, v]) => k === 'libmicrohttpd' && v === 'head_twice');
  const twoHeads = (String(res.rawAnswer ?? '').match(/HTTP\/1\.1 400 Bad Request\r\n/g) ?? []).length === 2;
  if (row.request.raw && res.rest && !(headTwice && twoHeads))
    fail(`the answer is not exactly one HTTP response: ${res.rest.length} more bytes follow it: ${JSON.stringify(res.rest.slice(0, 160))}`);
  if (row.status.exact !== undefined ? res.status !== row.status.exact : Math.floor(res.status / 100) !== row.status.klass)
    fail(`expected status ${row.status.text}${row.code ? ` ${row.code}` : ''}, got ${res.status}`);
  if (row.code) {
    if (!/^application\/problem\+json/.test(res.header('content-type') ?? '')) fail('expected an application/problem+json answer');
    const body = res.body;
    if (body?.code !== row.code) fail(`expected code ${row.code}, got ${body?.code}`);
    if (body.status !== res.status) fail(`the problem's status ${body.status} is not the HTTP status`);
    if (body.type !== `urn:chessd:problem:${row.code}`) fail(`type ${JSON.stringify(body.type)}`);
    if (typeof body.title !== 'string' || typeof body.detail !== 'string') fail('title and detail must be strings');
    if (!res.header('x-request-id')) fail('no X-Request-Id header');
  }
  for (const [key, want] of row.also) {
    if (key === 'libmicrohttpd') continue;
    if (key.startsWith('H:')) {
      const got = res.header(key.slice(2));
      if (got !== want) fail(`header ${key.slice(2)}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    } else {
      // A dotted key reaches into objects (position.turn); (absent) and (present) ask only whether it is there.
      const got = key.split('.').reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), res.body);
      if (want === '(absent)') {
        if (got !== undefined) fail(`${key}: expected no such field, got ${short(JSON.stringify(got), 120)}`);
      } else if (want === '(present)') {
        if (got === undefined) fail(`${key}: expected the field, the answer has none`);
      } else if (got === undefined || String(got) !== want) {
        fail(`${key}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
      }
    }
  }
}

// ---------------------------------------------------------------- the tests

const rows = parseDocument(readFileSync(DOC_PATH, 'utf8'));

before(async () => {
  const file = path.join(tempDir('chessd-bad-input-'), 'keys');
  writeFileSync(file, Object.entries(SERVICE_KEYS)
    .map(([name, scopes]) => `${name} ${scopes} - ${createHash('sha256').update(KEYS[name]).digest('hex')}\n`).join(''));
  [plain, keyed] = await Promise.all([startServer(), startServer(['--service-keys-file', file, '--webhook-allow', '127.0.0.2/32'])]);
});
after(async () => { await Promise.all([plain?.stop(), keyed?.stop()]); });

const label = (row) => {
  const r = row.request;
  const what = !r ? row.raw : r.raw ? `RAW ${r.text}` : `${r.method} ${r.target}`;
  return `${row.cls} [${DOC_NAME}:${row.line}] ${what.length > 90 ? `${what.slice(0, 90)}...` : what}`;
};

const sections = [...new Set(rows.map((row) => row.section))];
for (const section of sections) {
  describe(section, () => {
    for (const row of rows.filter((r) => r.section === section)) {
      test(label(row), async () => {
        if (row.error) assert.fail(`${DOC_NAME}:${row.line}: the row cannot be read: ${row.error}\n${row.raw}`);
        server = row.section === KEYED_SECTION ? keyed : plain; // the tests of a file run one at a time
        const ctx = await prepare(row);
        const res = await send(row, ctx);
        verify(row, res);
      });
    }
  });
}

// ---------------------------------------------------------------- settings refused at start-up

const STARTUP_SECTION = 'Presence, spectator delay and webhook retries at start-up';

/** The rows of STARTUP_SECTION: { line, cls, args, env, says }. */
function startupRows(text) {
  const lines = text.split('\n');
  const start = lines.indexOf(`## ${STARTUP_SECTION}`);
  assert.ok(start >= 0, `${DOC_NAME} has no "${STARTUP_SECTION}" section`);
  const found = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) {
    if (!lines[i].startsWith('| ') || lines[i].startsWith('| class') || isSeparator(lines[i])) continue;
    const cells = splitCells(lines[i]);
    assert.equal(cells.length, 5, `${DOC_NAME}:${i + 1}: 5 cells`);
    const spans = (cell) => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]);
    found.push({ line: i + 1, cls: cells[0], args: spans(cells[1]).flatMap((x) => x.split(' ')), env: spans(cells[2]),
      says: spans(cells[3])[0] });
  }
  return found;
}

describe(STARTUP_SECTION, () => {
  const startup = startupRows(readFileSync(DOC_PATH, 'utf8'));
  test('has a row for each of its four settings', () => {
    for (const name of ['spectator-delay-plies', 'gone-after', 'webhook-retry-ms', 'webhook-give-up-seconds']) {
      assert.ok(startup.some((row) => row.args.some((a) => a.startsWith(`--${name}`))), `no row for --${name}`);
    }
  });
  for (const row of startup) {
    test(`${row.cls} [${DOC_NAME}:${row.line}] ${[...row.env, ...row.args].join(' ')}`, () => {
      assert.ok(row.says, 'no "stderr says"');
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CHESSD_')));
      for (const pair of row.env) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
      const run = spawnSync(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', '--engine', 'none',
        '--variant-engine', 'none', ...row.args], { encoding: 'utf8', env, timeout: 10000 });
      assert.equal(run.status, 2, `exit ${run.status} ${run.signal ?? ''}\n${run.stderr}`);
      assert.ok(run.stderr.includes(row.says), `stderr does not say ${JSON.stringify(row.says)}:\n${run.stderr}`);
    });
  }
});

describe(`${DOC_NAME} itself`, () => {
  const schemas = () => spec().doc.components.schemas;
  const enumOf = (schema, field) => schemas()[schema].allOf.find((s) => s.properties?.[field]).properties[field].enum;

  test(`has at least ${MIN_ROWS} rows`, () => {
    assert.ok(rows.length >= MIN_ROWS, `${rows.length} rows`);
  });

  test('every fen_error in openapi.yaml (InvalidFenProblem) has a row that expects it', () => {
    const covered = new Set(rows.flatMap((r) => (r.also ?? []).filter(([k]) => k === 'fen_error').map(([, v]) => v)));
    const missing = enumOf('InvalidFenProblem', 'fen_error').filter((e) => !covered.has(e));
    assert.deepEqual(missing, [], `no row for fen_error ${missing.join(', ')}`);
  });

  test('every move reason in openapi.yaml (IllegalMoveProblem) has a row that expects it', () => {
    const covered = new Set(rows.flatMap((r) => (r.also ?? []).filter(([k]) => k === 'reason').map(([, v]) => v)));
    const missing = enumOf('IllegalMoveProblem', 'reason').filter((e) => !covered.has(e));
    assert.deepEqual(missing, [], `no row for reason ${missing.join(', ')}`);
  });

  test('every code, fen_error and reason the rows name exists in openapi.yaml', () => {
    const codes = new Set(schemas().Problem.properties.code.enum);
    const fenErrors = new Set(enumOf('InvalidFenProblem', 'fen_error'));
    const reasons = new Set(enumOf('IllegalMoveProblem', 'reason'));
    const wrong = [];
    for (const row of rows) {
      if (row.code && !codes.has(row.code)) wrong.push(`${DOC_NAME}:${row.line}: code ${row.code}`);
      for (const [k, v] of row.also ?? []) {
        if (k === 'fen_error' && !fenErrors.has(v)) wrong.push(`${DOC_NAME}:${row.line}: fen_error ${v}`);
        if (k === 'reason' && !reasons.has(v)) wrong.push(`${DOC_NAME}:${row.line}: reason ${v}`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
