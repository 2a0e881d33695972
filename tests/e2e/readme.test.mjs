// The READMEs cannot drift from what chessd does:
// - in README.md, rules/, api/engine/ and api/play/README.md every ```sh block
//   after an `<!-- tested -->` line is run as printed, in order, in one bash
//   session per page (a block may use the variables of the one before),
//   against a real chessd on a real redis-server; the fenced block right
//   after it (text, json) is what it prints on stdout, and a block with none
//   must print nothing. Every other ```sh block says why it is not run
//   (`<!-- not run: ... -->`), and no block has `$ ` prompts, so each pastes
//   into a shell. `localhost:8080` becomes the test server's address and
//   `build/chessd` runs CHESSD_BIN. Only what must vary is normalised, in both
//   texts alike: a PGN's Date tag, ISO timestamps, and ids and tokens where
//   they follow "id", "white" or "black" as JSON members;
// - the problem-codes table of api/problems.md lists exactly the codes,
//   HTTP statuses and titles of api/problem.c's table, and the code enum of
//   openapi.yaml's Problem has exactly those codes;
// - the route table lists exactly the methods and paths of openapi.yaml, and
//   k8s/README.md (the operator's guide) names every setting of `chessd serve
//   --help`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { startServer, gameRedis, tempDir, REPO_ROOT, CHESSD_BIN } from './server.mjs';
import { spec } from './openapi.mjs';

const read = (name) => readFileSync(path.join(REPO_ROOT, name), 'utf8');
const README = read('README.md');
/** The pages whose tested blocks run, each in a bash session of its own. */
const PAGES = ['README.md', 'rules/README.md', 'api/engine/README.md', 'api/play/README.md'];
/** The operator's guide, which names the settings. */
const GUIDE = read('k8s/README.md');
/** The problem codes' page. */
const PROBLEMS = read('api/problems.md');
const TESTED = '<!-- tested -->';
const NOT_RUN = /^<!-- not run: \S.* -->$/;

/** A page's ```sh blocks, tested or not: [{ line, tested, script, expected }].
 *  `expected` is the lines of the fenced block right after a tested one
 *  (blank lines between allowed), or [] when none follows. */
function examples(text) {
  const lines = text.split('\n');
  const found = [];
  const fenceEnd = (from) => {
    let j = from;
    while (j < lines.length && lines[j].trim() !== '```') j++;
    assert.ok(j < lines.length, `line ${from}: unterminated code block`);
    return j;
  };
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = fenceEnd(i + 1);
    if (open[1] === 'sh') {
      let k = i - 1;
      while (k >= 0 && lines[k].trim() === '') k--;
      const mark = k >= 0 ? lines[k].trim() : '';
      const tested = mark === TESTED;
      assert.ok(tested || NOT_RUN.test(mark), `line ${i + 1}: a sh block is marked ${TESTED} or <!-- not run: why -->`);
      const body = lines.slice(i + 1, end);
      const prompt = body.findIndex((l) => l.startsWith('$ '));
      assert.equal(prompt, -1, `line ${i + 2 + prompt}: a sh block has no $ prompts, so it pastes as printed`);
      const example = { line: i + 2, tested, script: body.join('\n'), expected: [] };
      let next = end + 1;
      while (next < lines.length && lines[next].trim() === '') next++;
      const output = /^```(text|json)?\s*$/.exec(lines[next] ?? '');
      if (tested && output) {
        const outputEnd = fenceEnd(next + 1);
        example.expected = lines.slice(next + 1, outputEnd);
        i = outputEnd;
      } else {
        i = end;
      }
      found.push(example);
    } else {
      i = end;
    }
  }
  return found;
}

/** What may differ between two runs of the same example, made the same in both texts. */
function normalise(text) {
  return text
    .replace(/^\[Date "\d{4}\.\d{2}\.\d{2}"\]$/gm, '[Date "<date>"]')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/"(id|white|black)":"[A-Za-z0-9_-]{16,22}"/g, '"$1":"<id>"')
    .replace(/\[%clk \d+:\d\d:\d\d\]/g, '[%clk <clock>]')
    .split('\n').map((l) => l.trimEnd()).join('\n').replace(/\n+$/, '');
}

let server;
let redis;

before(async () => {
  redis = await gameRedis();
  server = await startServer(['--redis', redis.url, '--engine', '/usr/games/stockfish',
    '--variant-engine', '/usr/games/fairy-stockfish'], { env: { CHESSD_TOKEN_SECRET: 'e2e-readme-token-secret-0123456789' } });
});
after(async () => {
  await server?.stop();
  await redis?.stop();
});

/** Runs a page's tested blocks in one bash session; the list of drifts. */
function drifts(page) {
  const list = examples(read(page)).filter((e) => e.tested);
  // `build/chessd` in a private directory is the binary under test.
  const dir = tempDir('chessd-readme-');
  mkdirSync(path.join(dir, 'build'));
  symlinkSync(CHESSD_BIN, path.join(dir, 'build', 'chessd'));
  const address = `127.0.0.1:${server.port}`;
  const marker = (i) => `@@@readme-example ${i}@@@`;
  const script = list.map((e, i) => `printf '\\n%s\\n' '${marker(i)}'\n${e.script.replaceAll('localhost:8080', address)}\n`).join('');
  const run = spawnSync('bash', ['--noprofile', '--norc', '-c', script], {
    cwd: dir, encoding: 'utf8', timeout: 120000, env: { PATH: process.env.PATH, HOME: dir, LC_ALL: 'C.UTF-8' },
  });
  assert.equal(run.error, undefined, String(run.error));
  const drifted = [];
  for (const [i, e] of list.entries()) {
    const start = run.stdout.indexOf(`${marker(i)}\n`);
    assert.ok(start >= 0, `${page} line ${e.line}: the block did not run; stderr: ${run.stderr}`);
    const end = i + 1 < list.length ? run.stdout.indexOf(`\n${marker(i + 1)}\n`) : run.stdout.length;
    const expected = normalise(e.expected.join('\n'));
    const actual = normalise(run.stdout.slice(start + marker(i).length + 1, end));
    if (expected !== actual) drifted.push(`${page} line ${e.line}:\n${e.script}\n--- the page\n${expected}\n--- chessd\n${actual}`);
  }
  return { count: list.length, drifted, stderr: run.stderr };
}

for (const page of PAGES) {
  test(`every tested block of ${page} prints what the page shows`, () => {
    const { count, drifted, stderr } = drifts(page);
    assert.ok(count >= (page === 'README.md' ? 15 : 1), `only ${count} tested blocks found in ${page}`);
    assert.deepEqual(drifted, [], `${drifted.length} blocks of ${page} drifted (stderr: ${stderr})\n${drifted.join('\n\n')}`);
  });
}

test('every sh block of the pages is run or says why not, and none has a prompt', () => {
  for (const page of [...PAGES, 'k8s/README.md', 'tests/README.md', 'api/README.md', 'api/http/README.md', 'api/problems.md']) {
    examples(read(page)); // throws on a block with a prompt or without its mark
  }
});

test('a tested block owns the output block right after it, and only that', () => {
  const text = ['<!-- tested -->', '```sh', 'echo one', '```', '', '```text', 'one', '```',
    '<!-- tested -->', '```sh', 'true', '```', 'prose', '```json', '{}', '```',
    '<!-- not run: starts a server -->', '```sh', 'make run', '```', '```text', 'x', '```'].join('\n');
  assert.deepEqual(examples(text).map((e) => [e.tested, e.script, e.expected]), [
    [true, 'echo one', ['one']],
    [true, 'true', []],
    [false, 'make run', []],
  ]);
  assert.throws(() => examples(['```sh', 'ls', '```'].join('\n')), /is marked/);
  assert.throws(() => examples(['<!-- tested -->', '```sh', '$ ls', '```'].join('\n')), /no \$ prompts/);
  assert.throws(() => examples(['<!-- tested -->', '```sh', 'ls'].join('\n')), /unterminated/);
});

test('the normalisation only touches what must vary', () => {
  assert.equal(normalise('[Date "2026.11.29"]\n{"id":"AbCdEfGhIjKlMnOp","x":1}  \n\n'), '[Date "<date>"]\n{"id":"<id>","x":1}');
  assert.equal(normalise('1. e4 { [%clk 0:04:58] }'), '1. e4 { [%clk <clock>] }');
  assert.notEqual(normalise('{"version":2}'), normalise('{"version":3}'));
  assert.notEqual(normalise('[Result "1-0"]'), normalise('[Result "0-1"]'));
});

/** The codes and statuses of api/problem.c's table (API_OK left out). */
function problemTable() {
  const source = readFileSync(path.join(REPO_ROOT, 'api/problem.c'), 'utf8');
  const opening = '} table[API_STATUS_COUNT] = {';
  const table = source.slice(source.indexOf(opening) + opening.length, source.indexOf('\n};'));
  const entries = [...table.matchAll(/\[(API_\w+)\]\s*=\s*\{\s*"([a-z0-9_]+)",\s*(\d{3}),\s*((?:"[^"\\]*"\s*)+)\}/g)];
  assert.equal(entries.length, (table.match(/\[API_\w+\]\s*=/g) ?? []).length, 'every row of the problem table was read');
  // The title: its string literals joined, as C joins them.
  const title = (literals) => [...literals.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join('');
  return new Map(entries.filter((m) => m[1] !== 'API_OK').map((m) => [m[2], `${m[3]} ${title(m[4])}`]));
}

test('api/problems.md lists every problem code with its HTTP status and title, as api/problem.c has them', () => {
  const codes = problemTable();
  assert.ok(codes.size >= 40, `only ${codes.size} codes read from api/problem.c`);
  for (const other of [README, GUIDE]) assert.ok(!other.includes('<!-- problem-codes'), 'the table lives once, in api/problems.md');
  const start = PROBLEMS.indexOf('<!-- problem-codes');
  assert.ok(start >= 0, 'api/problems.md has a <!-- problem-codes --> table');
  assert.equal(PROBLEMS.indexOf('<!-- problem-codes', start + 1), -1, 'api/problems.md has one problem-codes table');
  const rows = PROBLEMS.slice(start).split('\n').slice(1);
  const listed = new Map();
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    const m = /^\| `([a-z0-9_]+)` \| (\d{3}) \| ([^|]*) \|/.exec(row);
    if (!m) continue; // the header and its rule
    assert.ok(!listed.has(m[1]), `${m[1]} is listed twice`);
    listed.set(m[1], `${m[2]} ${m[3].trim()}`);
  }
  assert.deepEqual(Object.fromEntries([...listed].sort()), Object.fromEntries([...codes].sort()));
  const documented = spec().doc.components.schemas.Problem.properties.code.enum;
  assert.deepEqual([...documented].sort(), [...codes.keys()].sort(), "openapi.yaml's Problem code enum");
});

test("the README's route table lists every method and path of openapi.yaml, and no other", () => {
  const documented = [];
  for (const [route, item] of Object.entries(spec().doc.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) if (item[method]) documented.push(`${method.toUpperCase()} ${route}`);
  }
  const listed = [...README.matchAll(/^\| (GET|PUT|POST|DELETE|PATCH) \| `([^`]+)` \| [^|]*\S[^|]* \|$/gm)].map((m) => `${m[1]} ${m[2]}`);
  assert.equal(new Set(listed).size, listed.length, 'a route is listed twice');
  assert.ok(documented.length >= 20, `only ${documented.length} routes read from openapi.yaml`);
  assert.deepEqual([...listed].sort(), [...documented].sort());
});

test('k8s/README.md names every setting of chessd serve --help, flag and variable', () => {
  const help = spawnSync(CHESSD_BIN, ['serve', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  const settings = [...help.stdout.matchAll(/^  (--[a-z0-9-]+)\s+(CHESSD_[A-Z0-9_]+)/gm)].map((m) => [m[1], m[2]]);
  assert.ok(settings.length >= 30, `only ${settings.length} settings read from chessd serve --help`);
  const missing = settings.filter(([flag, variable]) => !GUIDE.includes(`\`${flag}\``) || !GUIDE.includes(`\`${variable}\``));
  assert.deepEqual(missing, [], 'settings k8s/README.md does not name (as `--flag` and `CHESSD_VARIABLE`)');
  assert.ok(GUIDE.includes('`CHESSD_TOKEN_SECRET`'), 'k8s/README.md names CHESSD_TOKEN_SECRET');
});
