// The Redis password over real processes: a redis-server started with
// --requirepass and a password holding '@', ':' and '%', and chessd given it
// percent-encoded in the URL, in a file (--redis-password-file, as a
// Kubernetes secret is mounted) or as a setting (CHESSD_REDIS_PASSWORD):
// each creates a game (201), and a file or setting replaces a wrong password
// in the URL. A wrong password leaves games 503 store_unavailable. The start-up
// refusals are the rows of tests/BAD_INPUT.md's "Redis credentials at
// start-up" table. In no case does the password reach chessd's stdout or stderr.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, startRedis, tempDir, CHESSD_BIN, REPO_ROOT } from './server.mjs';
import { get, post, expectProblem } from './http.mjs';

const PASSWORD = 'e2e-p@ss:w%rd-7Q';
const WRONG = 'e2e-wr@ng:p%ss-3Z';
const WITH_SECRET = { env: { CHESSD_TOKEN_SECRET: 'e2e-redis-password-token-secret-0123456789', CHESSD_REDIS_PASSWORD: undefined,
  CHESSD_REDIS_PASSWORD_FILE: undefined, CHESSD_REDIS_URL: undefined } };
const NO_GAME = 'AAAAAAAAAAAAAAAA';

let redis;
let dir;
before(async () => {
  redis = await startRedis({ args: ['--requirepass', PASSWORD] });
  dir = tempDir('chessd-e2e-password-');
});
after(async () => {
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const host = () => `127.0.0.1:${redis.port}`;

/** chessd serve with args (and env), fn(server), then a clean stop; the password is in neither stream. */
async function withChessd(args, fn, env = {}) {
  const srv = await startServer(['--redis-timeout-ms', '500', '--redis-connect-timeout-ms', '500', ...args],
    { env: { ...WITH_SECRET.env, ...env } });
  try {
    await fn(srv);
  } finally {
    await srv.stop();
  }
  for (const [stream, text] of [['stderr', srv.stderr()], ['stdout', srv.stdout()]]) {
    for (const secret of [PASSWORD, WRONG, encodeURIComponent(PASSWORD), encodeURIComponent(WRONG)])
      assert.ok(!text.includes(secret), `a password is in chessd's ${stream}:\n${text}`);
  }
  return srv;
}

async function expectGamesWork(srv, what) {
  const created = await post(srv, '/v1/games', {});
  assert.equal(created.status, 201, `${what}: ${created.text}\nstderr:\n${srv.stderr()}`);
  const game = await get(srv, `/v1/games/${created.body.id}`);
  assert.equal(game.status, 200, `${what}: ${game.text}`);
  const ready = await get(srv, '/readyz');
  assert.deepEqual([ready.status, ready.body.redis], [200, 'up'], `${what}: /readyz: ${ready.text}`);
}

test('a password with @, : and % percent-encoded in the URL creates a game', async () => {
  const encoded = encodeURIComponent(PASSWORD);
  assert.match(encoded, /%40.*%3A.*%25/, 'the password needs every escape');
  await withChessd(['--redis', `redis://:${encoded}@${host()}/0`], (srv) => expectGamesWork(srv, 'encoded URL'));
  await withChessd(['--redis', `redis://default:${encoded}@${host()}/0`], (srv) => expectGamesWork(srv, 'encoded URL with user'));
});

test('a password file (one trailing newline dropped) creates a game, and replaces a wrong password in the URL', async () => {
  const file = path.join(dir, 'redis-password');
  writeFileSync(file, `${PASSWORD}\n`, { mode: 0o600 });
  await withChessd(['--redis', `redis://${host()}/0`, '--redis-password-file', file], (srv) => expectGamesWork(srv, 'file flag'));
  await withChessd(['--redis', `redis://:${encodeURIComponent(WRONG)}@${host()}/0`], (srv) => expectGamesWork(srv, 'file variable over a wrong URL password'),
    { CHESSD_REDIS_PASSWORD_FILE: file });
  await withChessd(['--redis', `redis://default@${host()}/0`, `--redis-password-file=${file}`], (srv) => expectGamesWork(srv, 'the URL\'s user, the file\'s password'));
});

test('a password setting, as it is (not decoded), replaces a wrong password in the URL', async () => {
  await withChessd(['--redis', `redis://:${encodeURIComponent(WRONG)}@${host()}/0`], (srv) => expectGamesWork(srv, 'CHESSD_REDIS_PASSWORD'),
    { CHESSD_REDIS_PASSWORD: PASSWORD });
});

test('a wrong password: game routes answer 503 store_unavailable, /readyz reports Redis down, the log says AUTH was refused', async () => {
  for (const [what, args, env] of [
    ['in the URL', ['--redis', `redis://:${encodeURIComponent(WRONG)}@${host()}/0`], {}],
    ['in a file', ['--redis', `redis://:${encodeURIComponent(PASSWORD)}@${host()}/0`, '--redis-password-file', path.join(dir, 'wrong')], {}],
    ['as a setting over the right one in the URL', ['--redis', `redis://:${encodeURIComponent(PASSWORD)}@${host()}/0`], { CHESSD_REDIS_PASSWORD: WRONG }],
    ['the undecoded spelling', ['--redis', `redis://:${encodeURIComponent(encodeURIComponent(PASSWORD))}@${host()}/0`], {}],
  ]) {
    writeFileSync(path.join(dir, 'wrong'), WRONG);
    await withChessd(args, async (srv) => {
      expectProblem(await post(srv, '/v1/games', {}), 503, 'store_unavailable');
      expectProblem(await get(srv, `/v1/games/${NO_GAME}`), 503, 'store_unavailable');
      const ready = await get(srv, '/readyz');
      assert.deepEqual([ready.status, ready.body.redis], [200, 'down'], `${what}: /readyz: ${ready.text}`);
      assert.ok(!ready.text.includes(PASSWORD) && !ready.text.includes(WRONG));
      assert.match(srv.stderr(), /cannot connect to Redis 127\.0\.0\.1:\d+: AUTH was refused/, `${what}: ${srv.stderr()}`);
    }, env);
  }
});

/** The rows of tests/BAD_INPUT.md's "Redis credentials at start-up" table. */
function startupRows() {
  const lines = readFileSync(path.join(REPO_ROOT, 'tests/BAD_INPUT.md'), 'utf8').split('\n');
  const start = lines.indexOf('## Redis credentials at start-up');
  assert.ok(start >= 0, 'BAD_INPUT.md has no "Redis credentials at start-up" section');
  const rows = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) {
    if (!lines[i].startsWith('| ') || lines[i].startsWith('| class') || lines[i].startsWith('| ---')) continue;
    const cells = lines[i].split('|').slice(1, -1).map((c) => c.trim()); // no cell holds a '|'
    assert.equal(cells.length, 5, `BAD_INPUT.md line ${i + 1}: 5 cells`);
    const spans = (cell) => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]);
    rows.push({ line: i + 1, cls: cells[0], args: spans(cells[1]).flatMap((s) => s.split(' ')), env: spans(cells[2]),
      says: spans(cells[3])[0] });
  }
  return rows;
}

test('the start-up refusals of BAD_INPUT.md: exit 2, a clear reason, no password', () => {
  const rows = startupRows();
  assert.ok(rows.length >= 15, `only ${rows.length} rows`);
  const files = path.join(dir, 'files');
  mkdirSync(files);
  writeFileSync(path.join(files, 'empty'), '');
  writeFileSync(path.join(files, 'newline-only'), '\n');
  writeFileSync(path.join(files, 'nul'), 'SeCrEt\0more');
  writeFileSync(path.join(files, 'too-long'), 'SeCrEt'.repeat(200).slice(0, 1100));
  writeFileSync(path.join(files, 'good'), `${PASSWORD}\n`);
  const fill = (text) => text.replaceAll('{redis}', host()).replaceAll('{missing}', path.join(files, 'missing'))
    .replaceAll('{dir}', files);
  const base = { ...process.env };
  for (const name of ['CHESSD_REDIS_URL', 'CHESSD_REDIS_PASSWORD', 'CHESSD_REDIS_PASSWORD_FILE']) delete base[name];
  for (const row of rows) {
    const what = `BAD_INPUT.md line ${row.line} (${row.cls})`;
    assert.ok(row.says, `${what}: no "stderr says"`);
    const env = Object.fromEntries(row.env.map((s) => fill(s)).map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
    const run = spawnSync(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', ...row.args.map(fill)],
      { encoding: 'utf8', env: { ...base, ...env }, timeout: 5000 });
    assert.equal(run.status, 2, `${what}: exit ${run.status} ${run.signal ?? ''}\n${run.stderr}`);
    assert.ok(run.stderr.includes(fill(row.says)), `${what}: stderr does not say ${JSON.stringify(fill(row.says))}:\n${run.stderr}`);
    for (const [stream, text] of [['stderr', run.stderr], ['stdout', run.stdout]]) {
      assert.ok(!text.includes('SeCrEt'), `${what}: the password is in chessd's ${stream}:\n${text}`);
      assert.ok(!text.includes(PASSWORD), `${what}: the file's password is in chessd's ${stream}:\n${text}`);
    }
  }
});

test('serve --help lists both password settings', () => {
  const help = spawnSync(CHESSD_BIN, ['serve', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /--redis-password\s+CHESSD_REDIS_PASSWORD\s+the Redis password/);
  assert.match(help.stdout, /--redis-password-file\s+CHESSD_REDIS_PASSWORD_FILE\s+a file holding the Redis password/);
  assert.match(help.stdout, /percent-encoded/);
});
