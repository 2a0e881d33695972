// Service keys (--service-keys-file) on a real chessd and Redis. The scoped
// routes refuse a client without a key (401 service_key_required), with a
// key of no line (401 invalid_service_key) or lacking the scope (403
// scope_missing), each naming the scope; admin passes, and a game's analysis
// takes a player's token too. A key's quotas replace the per-address limits
// (its holder passes them, its own 429 names them). A rewritten file is read
// within about two seconds, a broken one keeps the keys read before, and the
// files of tests/BAD_INPUT.md's table stop the start naming their line;
// `chessd keys new` makes what the file takes; no key or hash is ever logged.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHESSD_BIN, REPO_ROOT, startServer, tempDir } from './server.mjs';
import { call, get, post, expectProblem, sleep } from './http.mjs';

const dir = tempDir('chessd-keys-');
const SCOPED = [
  ['POST', '/v1/games', 'games:create', {}],
  ['POST', '/v1/games/bulk', 'games:bulk', { games: [{ white: 'A', black: 'B' }] }],
  ['POST', '/v1/games/export', 'games:export', { ids: ['AAAAAAAAAAAAAAAA'] }],
  ['GET', '/v1/games/finished', 'games:export', undefined],
  ['POST', '/v1/position/analysis', 'analysis', { moves: ['e4'] }],
];

/** `chessd keys new NAME SCOPES...`: { key, line }, checked as the file will read it. */
function newKey(name, ...scopes) {
  const r = spawnSync(CHESSD_BIN, ['keys', 'new', name, ...scopes], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [key, line, ...rest] = r.stdout.split('\n');
  assert.deepEqual(rest, ['']);
  assert.match(key, /^chsk_[A-Za-z0-9_-]{43}$/);
  const fields = line.split(' ');
  assert.equal(fields.length, 4, line);
  assert.equal(fields[0], name);
  assert.equal(fields[1], scopes.length ? scopes.join(',') : '-');
  assert.equal(fields[3], createHash('sha256').update(key).digest('hex'));
  assert.ok(!line.includes(key));
  return { key, line, fields };
}

/** A key's line with its quotas replaced. */
const withQuotas = (k, quotas) => [k.fields[0], k.fields[1], quotas, k.fields[3]].join(' ');

/** Writes text to file as an operator should: a new file renamed over the old. */
function writeKeys(file, text) {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

const bearer = (key, more = {}) => ({ headers: { authorization: `Bearer ${key}`, ...more } });
const idem = () => ({ 'idempotency-key': randomBytes(18).toString('base64url') });

function send(server, [method, route, , body], opts = {}) {
  return call(server, method, route, { ...opts, ...(body === undefined ? {} : { json: body }) });
}

const keys = {
  creator: newKey('creator', 'games:create'),
  bulker: newKey('bulker', 'games:bulk'),
  exporter: newKey('exporter', 'games:export'),
  analyst: newKey('analyst', 'analysis'),
  admin: newKey('ops.admin', 'admin'),
  nothing: newKey('nothing'),
  live: newKey('watcher', 'games:read-live'),
};
const NO_LINE = `chsk_${'A'.repeat(43)}`;
let gated;

before(async () => {
  const file = path.join(dir, 'gated');
  writeKeys(file, `# backends\n${Object.values(keys).map((k) => k.line).join('\n')}\n`);
  gated = await startServer(['--service-keys-file', file]);
  assert.match(gated.stderr(), /--service-keys-file: 7 service keys; creating games, bulks, exports and analysis need one/);
});

after(async () => {
  await gated?.stop();
});

test('without a key each scoped route is 401 service_key_required naming its scope; a key no line has is 401 invalid_service_key', async () => {
  for (const route of SCOPED) {
    const none = expectProblem(await send(gated, route), 401, 'service_key_required');
    assert.equal(none.scope, route[2]);
    assert.ok(none.detail.includes(`needs a service key with the scope ${route[2]}`), none.detail);
    const r = await send(gated, route);
    assert.equal(r.headers.get('www-authenticate'), 'Bearer realm="chessd"');
    const invalid = await send(gated, route, bearer(NO_LINE));
    expectProblem(invalid, 401, 'invalid_service_key');
    assert.equal(invalid.body.scope, undefined);
    assert.equal(invalid.headers.get('www-authenticate'), 'Bearer realm="chessd", error="invalid_token"');
    // A player token in a key's place is no key at all.
    expectProblem(await send(gated, route, bearer('abcdefghijklmnopqrstuv')), 401, 'service_key_required');
  }
});

test('a scopeless key, or one with other scopes, is 403 scope_missing naming the scope and the key', async () => {
  for (const route of SCOPED) {
    for (const k of [keys.nothing, keys.live, route[2] === 'games:create' ? keys.bulker : keys.creator]) {
      const p = expectProblem(await send(gated, route, bearer(k.key)), 403, 'scope_missing');
      assert.equal(p.scope, route[2]);
      assert.equal(p.detail, `the service key '${k.fields[0]}' lacks the scope ${route[2]}, which ${route[0]} ${route[1]} needs`);
    }
  }
});

test('a key with the scope passes, and admin passes everywhere; unscoped routes stay open', async () => {
  const holder = { 'games:create': keys.creator, 'games:bulk': keys.bulker, 'games:export': keys.exporter, analysis: keys.analyst };
  for (const route of SCOPED) {
    for (const k of [holder[route[2]], keys.admin]) {
      const r = await send(gated, route, bearer(k.key, idem()));
      assert.ok(![401, 403].includes(r.status), `${route[0]} ${route[1]} with ${k.fields[0]}: ${r.status} ${r.text}`);
      // --engine none: the analysis got past the key to the engine.
      if (route[2] === 'analysis') expectProblem(r, 503, 'engine_unavailable');
      else assert.ok([200, 201].includes(r.status), `${route[1]}: ${r.status} ${r.text}`);
    }
  }
  const created = await post(gated, '/v1/games', {}, bearer(keys.creator.key));
  assert.equal(created.status, 201);
  const { id, tokens } = created.body;
  assert.equal((await get(gated, `/v1/games/${id}`)).status, 200);
  const move = await post(gated, `/v1/games/${id}/moves`, { move: 'e4', expected_version: created.body.version }, bearer(tokens.white));
  assert.equal(move.status, 200, move.text);
  assert.equal((await get(gated, '/v1/position?fen=8/8/8/8/8/8/8/K6k%20w%20-%20-%200%201')).status, 200);
  // A backend follows a game with its key as a spectator would: the key is no player's token.
  const controller = new AbortController();
  const stream = await fetch(`${gated.base}/v1/games/${id}/events`,
    { headers: { authorization: `Bearer ${keys.live.key}` }, signal: controller.signal });
  assert.equal(stream.status, 200);
  controller.abort();
});

test("a game's analysis takes a key with analysis or a player's token", async () => {
  const { body: game } = await post(gated, '/v1/games', {}, bearer(keys.creator.key));
  const route = `/v1/games/${game.id}/analysis`;
  const none = expectProblem(await get(gated, route), 401, 'service_key_required');
  assert.equal(none.scope, 'analysis');
  assert.match(none.detail, /or a player's token of the game/);
  expectProblem(await get(gated, route, bearer(keys.creator.key)), 403, 'scope_missing');
  expectProblem(await get(gated, route, bearer(NO_LINE)), 401, 'invalid_service_key');
  expectProblem(await get(gated, route, bearer('abcdefghijklmnopqrstuv')), 403, 'forbidden');
  // Past the key: a game between two people being played is not analysed.
  expectProblem(await get(gated, route, bearer(keys.analyst.key)), 403, 'analysis_not_allowed');
  expectProblem(await get(gated, route, bearer(game.tokens.black)), 403, 'analysis_not_allowed');
  const resigned = await post(gated, `/v1/games/${game.id}/resign`, { expected_version: game.version }, bearer(game.tokens.white));
  assert.equal(resigned.status, 200, resigned.text);
  expectProblem(await get(gated, route, bearer(game.tokens.white)), 503, 'engine_unavailable');
  expectProblem(await get(gated, route, bearer(keys.admin.key)), 503, 'engine_unavailable');
});

test('no key and no hash is ever logged', async () => {
  await sleep(100); // the access log line follows the answer
  const logged = gated.stderr() + gated.stdout();
  for (const k of [...Object.values(keys).map((k) => k.key), NO_LINE])
    assert.ok(!logged.includes(k.slice(5)), 'a key is in the log');
  for (const k of Object.values(keys)) assert.ok(!logged.includes(k.fields[3]), 'a hash is in the log');
});

test("a key's quotas replace the per-address limits: its holder passes them, its own 429 names its quota", async () => {
  const lobby = newKey('lobby', 'games:create');
  const tight = newKey('tight', 'games:create');
  const file = path.join(dir, 'quotas');
  writeKeys(file, `${withQuotas(lobby, 'requests=1000/s,creates=1000/s')}\n${withQuotas(tight, 'creates=1/s')}\n`);
  const server = await startServer(['--service-keys-file', file, '--rate-limit-ip', '10', '--rate-limit-create', '1']);
  try {
    // Past --rate-limit-ip (10 in a burst) and --rate-limit-create (5 in a burst) from 127.0.0.1.
    for (let i = 0; i < 25; i++) assert.equal((await get(server, '/v1/position', bearer(lobby.key))).status, 200);
    for (let i = 0; i < 12; i++) assert.equal((await post(server, '/v1/games', {}, bearer(lobby.key))).status, 201);
    // The same address without a key has its own budgets, untouched by the key's holder.
    const keyless = [];
    for (let i = 0; i < 8; i++) keyless.push(await post(server, '/v1/games', {}));
    assert.equal(keyless[0].status, 401);
    const limited = keyless.filter((r) => r.status === 429);
    assert.ok(limited.length >= 2, keyless.map((r) => r.status).join(' '));
    assert.equal(limited[0].body.limit, 'rate-limit-create');
    // tight: creates=1/s, in bursts of 5 (as --rate-limit-create's); requests as --rate-limit-ip ('-').
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await post(server, '/v1/games', {}, bearer(tight.key)));
    const made = answers.filter((r) => r.status === 201).length;
    assert.ok(made >= 5 && made <= 6, answers.map((r) => r.status).join(' '));
    const spent = expectProblem(answers[6], 429, 'rate_limited');
    assert.equal(spent.limit, 'service-key:tight:creates');
    assert.equal(spent.max, 1);
    assert.equal(Number(answers[6].headers.get('retry-after')), spent.retry_after_s);
    assert.match(spent.detail, /^game creations with the service key 'tight' are limited to 1 a second \(its quota creates in --service-keys-file, in bursts of 5\); retry after 1 s$/);
    // lobby's own budget is still whole.
    assert.equal((await post(server, '/v1/games', {}, bearer(lobby.key))).status, 201);
  } finally {
    await server.stop();
  }
});

/** Polls until check() is true, for up to ms; asserts it came. */
async function eventually(what, check, ms = 4000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
    await sleep(100);
  }
}

test('a rewritten file is read again within about two seconds; a broken one keeps the keys read before', async () => {
  const old = newKey('rotating', 'games:create');
  const fresh = newKey('rotating', 'games:create');
  const file = path.join(dir, 'rotated');
  writeKeys(file, `${old.line}\n`);
  const server = await startServer(['--service-keys-file', file]);
  try {
    const create = (k) => post(server, '/v1/games', {}, bearer(k.key));
    assert.equal((await create(old)).status, 201);
    expectProblem(await create(fresh), 401, 'invalid_service_key');
    writeKeys(file, `# rotated\n${fresh.line}\n`);
    const started = Date.now();
    await eventually('the new key works', async () => (await create(fresh)).status === 201);
    assert.ok(Date.now() - started < 2500, `${Date.now() - started} ms`);
    expectProblem(await create(old), 401, 'invalid_service_key');
    assert.match(server.stderr(), /--service-keys-file '.*rotated' re-read: 1 service key\n/);
    // A broken file (a key pasted in place of its hash): warned of, naming the line, and ignored.
    writeKeys(file, `${fresh.line}\nbroken games:create - ${old.key}\n`);
    // The file is looked at when a key is, at most once a second.
    await eventually('the warning', async () => (await create(fresh)).status === 201
      && /WARNING: --service-keys-file '.*rotated' line 2: holds a service key/.test(server.stderr()));
    assert.equal((await create(fresh)).status, 201);
    expectProblem(await create(old), 401, 'invalid_service_key');
    assert.ok(!server.stderr().includes(old.key.slice(5)), 'the pasted key is in the log');
  } finally {
    await server.stop();
  }
});

/** The rows of tests/BAD_INPUT.md's "Service keys files at start-up" table. */
function startupRows() {
  const lines = readFileSync(path.join(REPO_ROOT, 'tests/BAD_INPUT.md'), 'utf8').split('\n');
  const start = lines.indexOf('## Service keys files at start-up');
  assert.ok(start >= 0, 'BAD_INPUT.md has no "Service keys files at start-up" section');
  const rows = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) {
    if (!lines[i].startsWith('| ') || lines[i].startsWith('| class') || lines[i].startsWith('| ---')) continue;
    const cells = lines[i].split('|').slice(1, -1).map((c) => c.trim()); // no cell holds a '|'
    assert.equal(cells.length, 4, `BAD_INPUT.md line ${i + 1}: 4 cells`);
    const span = (cell) => /^`([^`]*)`$/.exec(cell)?.[1];
    rows.push({ line: i + 1, cls: cells[0], file: span(cells[1]), says: span(cells[2]) });
  }
  return rows;
}

test('the files of BAD_INPUT.md stop the start: exit 2, naming the line, never a key or a hash', () => {
  const rows = startupRows();
  assert.ok(rows.length >= 12, `only ${rows.length} rows`);
  const k = newKey('one', 'analysis');
  const other = newKey('two', 'analysis');
  const fill = (text) => text.replaceAll('{hash}', k.fields[3]).replaceAll('{other_hash}', other.fields[3])
    .replaceAll('{HASH}', k.fields[3].toUpperCase()).replaceAll('{key}', k.key).replaceAll('\\n', '\n');
  for (const row of rows) {
    const what = `BAD_INPUT.md line ${row.line} (${row.cls})`;
    assert.ok(row.file && row.says, `${what}: a file and what stderr says, each in backticks`);
    const file = path.join(dir, `bad-${row.line}`);
    if (row.file !== '(none)') writeKeys(file, `# backends\n${fill(row.file)}\n`);
    const r = spawnSync(CHESSD_BIN, ['serve', '--redis', 'none', '--bind', '127.0.0.1', '--port', '0', '--service-keys-file', file],
      { encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, `${what}: exit ${r.status}\n${r.stderr}`);
    assert.ok(r.stderr.includes(`--service-keys-file '${file}'`), `${what}: the file is not named:\n${r.stderr}`);
    assert.ok(r.stderr.includes(row.says), `${what}: stderr does not say ${JSON.stringify(row.says)}:\n${r.stderr}`);
    assert.match(r.stderr, /; not starting\n$/, what);
    for (const secret of [k.key.slice(5), k.fields[3], k.fields[3].toUpperCase(), other.fields[3]])
      assert.ok(!r.stderr.includes(secret) && !r.stdout.includes(secret), `${what}: a key or hash is in the output:\n${r.stderr}`);
  }
});

test('chessd keys new refuses a bad name or scope; keys hash prints a key\'s SHA-256', () => {
  for (const args of [['new'], ['new', 'a b', 'analysis'], ['new', 'lobby', 'games:destroy'], ['new', 'lob/by'],
    ['new', 'lobby', 'analysis', 'analysis'], ['bogus']]) {
    const r = spawnSync(CHESSD_BIN, ['keys', ...args], { encoding: 'utf8' });
    assert.equal(r.status, 2, `keys ${args.join(' ')}`);
    assert.equal(r.stdout, '');
    assert.ok(r.stderr.length > 0);
  }
  const k = newKey('hashed', 'games:create', 'games:export');
  const r = spawnSync(CHESSD_BIN, ['keys', 'hash'], { input: `${k.key}\n`, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${k.fields[3]}\n`);
  const bad = spawnSync(CHESSD_BIN, ['keys', 'hash'], { input: 'abcdefghijklmnopqrstuv\n', encoding: 'utf8' });
  assert.equal(bad.status, 2);
});
