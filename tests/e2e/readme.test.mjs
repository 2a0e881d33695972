// The README cannot drift from what chessd does:
// - every code block after an `<!-- tested -->` line is run, in order, in one
//   bash session (so a block may use the variables of the one before), against
//   a real chessd on a real redis-server: `$ ` starts a command, which goes on
//   over the next lines, printed as they are pasted, while its shell text is
//   incomplete (`bash -n` finds an unclosed quote, brace, parenthesis or
//   pipe, or the line ends in `\`); the lines up to the next `$ ` are its
//   output, compared line by line with what the command printed on stdout.
//   `localhost:8080` becomes the test server's address and `build/chessd`
//   runs CHESSD_BIN. Only what must vary is normalised, in both texts alike:
//   a PGN's Date tag, ISO timestamps, and ids and tokens where they follow
//   "id", "white" or "black" as JSON members;
// - the table of problem codes after `<!-- problem-codes` (in k8s/README.md,
//   the operator's guide) lists exactly the codes, HTTP statuses and titles
//   of api/problem.c's table, and the code enum of openapi.yaml's Problem has
//   exactly those codes;
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

const README = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
/** The operator's guide, where the problem codes and the settings are listed. */
const GUIDE = readFileSync(path.join(REPO_ROOT, 'k8s/README.md'), 'utf8');
const MARK = '<!-- tested -->';

/** Whether a command's shell text goes on over the next line: it ends in a
 *  backslash, or bash reads it to its end still waiting for something (a
 *  closing quote, brace or parenthesis, the command after a pipe or &&). */
function incomplete(command) {
  if (command.endsWith('\\')) return true;
  const check = spawnSync('bash', ['--noprofile', '--norc', '-n', '-c', command], { encoding: 'utf8' });
  return /unexpected end of file|unexpected EOF while looking for matching/.test(check.stderr);
}

/** The tested examples: [{ line, command, expected: [lines] }] in README order. */
function examples(text) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== MARK) continue;
    const indent = lines[i].indexOf(MARK);
    assert.match(lines[i + 1] ?? '', /^\s*```sh\s*$/, `README line ${i + 2}: a tested example is a \`\`\`sh block`);
    let j = i + 2;
    let current = null;
    for (; j < lines.length && lines[j].trim() !== '```'; j++) {
      const line = lines[j].slice(indent);
      if (line.startsWith('$ ')) {
        current = { line: j + 1, command: line.slice(2), expected: [] };
        found.push(current);
        while (incomplete(current.command)) {
          assert.ok(j + 1 < lines.length && lines[j + 1].trim() !== '```',
            `README line ${current.line}: the command is still incomplete at the end of its block`);
          current.command += '\n' + lines[++j].slice(indent);
        }
      } else {
        assert.ok(current, `README line ${j + 1}: output before any $ command`);
        current.expected.push(line);
      }
    }
    assert.ok(j < lines.length, `README line ${i + 1}: unterminated tested block`);
    i = j;
  }
  return found;
}

/** What may differ between two runs of the same example, made the same in both texts. */
function normalise(text) {
  return text
    .replace(/^\[Date "\d{4}\.\d{2}\.\d{2}"\]$/gm, '[Date "<date>"]')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/"(id|white|black)":"[A-Za-z0-9_-]{16,22}"/g, '"$1":"<id>"')
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

test('every tested README example prints what the README shows', () => {
  const list = examples(README);
  assert.ok(list.length >= 15, `only ${list.length} tested examples found`);
  // `build/chessd` in a private directory is the binary under test.
  const dir = tempDir('chessd-readme-');
  mkdirSync(path.join(dir, 'build'));
  symlinkSync(CHESSD_BIN, path.join(dir, 'build', 'chessd'));
  const address = `127.0.0.1:${server.port}`;
  const marker = (i) => `@@@readme-example ${i}@@@`;
  const script = list.map((e, i) => `printf '\\n%s\\n' '${marker(i)}'\n${e.command.replaceAll('localhost:8080', address)}\n`).join('');
  const run = spawnSync('bash', ['--noprofile', '--norc', '-c', script], {
    cwd: dir, encoding: 'utf8', timeout: 120000, env: { PATH: process.env.PATH, HOME: dir, LC_ALL: 'C.UTF-8' },
  });
  assert.equal(run.error, undefined, String(run.error));
  const outputs = [];
  for (const [i] of list.entries()) {
    const start = run.stdout.indexOf(`${marker(i)}\n`);
    assert.ok(start >= 0, `example ${i} (README line ${list[i].line}) did not run; stderr: ${run.stderr}`);
    const end = i + 1 < list.length ? run.stdout.indexOf(`\n${marker(i + 1)}\n`) : run.stdout.length;
    outputs.push(run.stdout.slice(start + marker(i).length + 1, end));
  }
  const drifted = [];
  for (const [i, e] of list.entries()) {
    const expected = normalise(e.expected.join('\n'));
    const actual = normalise(outputs[i]);
    if (expected !== actual) drifted.push(`README line ${e.line}: ${e.command}\n--- README\n${expected}\n--- chessd\n${actual}`);
  }
  assert.deepEqual(drifted, [], `${drifted.length} README examples drifted (stderr: ${run.stderr})\n${drifted.join('\n\n')}`);
});

test('a command goes on while its shell text is incomplete, and only then', () => {
  const text = ['<!-- tested -->', '```sh', '$ f() {  # a helper', '    echo "$1" |', "      tr a b", '  }',
    "$ echo 'one", "two'", 'one', 'two', '$ echo a \\', '    b', 'a b', '$ echo {', '{', '```'].join('\n');
  assert.deepEqual(examples(text).map((e) => [e.command, e.expected]), [
    ['f() {  # a helper\n    echo "$1" |\n      tr a b\n  }', []],
    ["echo 'one\ntwo'", ['one', 'two']],
    ['echo a \\\n    b', ['a b']],
    ['echo {', ['{']],
  ]);
  assert.throws(() => examples(['<!-- tested -->', '```sh', "$ echo 'open", '```'].join('\n')), /still incomplete/);
});

test('the normalisation only touches what must vary', () => {
  assert.equal(normalise('[Date "2026.11.29"]\n{"id":"AbCdEfGhIjKlMnOp","x":1}  \n\n'), '[Date "<date>"]\n{"id":"<id>","x":1}');
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

test('k8s/README.md lists every problem code with its HTTP status and title, as api/problem.c has them', () => {
  const codes = problemTable();
  assert.ok(codes.size >= 40, `only ${codes.size} codes read from api/problem.c`);
  assert.ok(!README.includes('<!-- problem-codes'), 'the table lives once, in k8s/README.md');
  const start = GUIDE.indexOf('<!-- problem-codes');
  assert.ok(start >= 0, 'k8s/README.md has a <!-- problem-codes --> table');
  assert.equal(GUIDE.indexOf('<!-- problem-codes', start + 1), -1, 'k8s/README.md has one problem-codes table');
  const rows = GUIDE.slice(start).split('\n').slice(1);
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
