// The --webhook-allow values chessd refuses at start-up: every row of
// tests/BAD_INPUT.md's "Webhook destinations at start-up" table is run here
// (exit status 2, the row's text on stderr), and a good list starts.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHESSD_BIN = path.resolve(REPO_ROOT, process.env.CHESSD_BIN ?? 'build/chessd');
const SECTION = '## Webhook destinations at start-up';

/** The rows of the section: { line, cls, args, env, says }. */
function startupRows() {
  const lines = readFileSync(path.join(REPO_ROOT, 'tests/BAD_INPUT.md'), 'utf8').split('\n');
  const start = lines.indexOf(SECTION);
  assert.ok(start >= 0, `BAD_INPUT.md has no "${SECTION.slice(3)}" section`);
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

const baseEnv = () => {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('CHESSD_')) delete env[name];
  return env;
};

test('the --webhook-allow refusals of BAD_INPUT.md: exit 2 and the reason', () => {
  const rows = startupRows();
  assert.ok(rows.length >= 10, `only ${rows.length} rows`);
  for (const row of rows) {
    const what = `BAD_INPUT.md line ${row.line} (${row.cls})`;
    assert.ok(row.says, `${what}: no "stderr says"`);
    const env = Object.fromEntries(row.env.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
    const run = spawnSync(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', ...row.args],
      { encoding: 'utf8', env: { ...baseEnv(), ...env }, timeout: 5000 });
    assert.equal(run.status, 2, `${what}: exit ${run.status} ${run.signal ?? ''}\n${run.stderr}`);
    assert.ok(run.stderr.includes(row.says), `${what}: stderr does not say ${JSON.stringify(row.says)}:\n${run.stderr}`);
  }
});

test('a good list starts the server', async () => {
  const child = spawn(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', '--engine', 'none',
    '--variant-engine', 'none', '--webhook-allow', ' 0.0.0.0/0, ::/0 ,10.0.0.0/8,hooks.example.com,*.example.org',
    '--webhook-timeout-ms', '2000', '--webhook-redirects', '2'], { env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise((resolve) => child.stdout.on('data', resolve));
  const first = await Promise.race([exited.then((code) => ({ code })), listening.then(() => ({ up: true })),
    new Promise((resolve) => setTimeout(() => resolve({ up: true }), 1500))]);
  child.kill('SIGTERM');
  await exited;
  assert.ok(first.up, `chessd exited ${first.code}: ${stderr}`);
});
