// The chessd command line, run as a user runs it: every subcommand takes
// --help and -h (its usage on stdout, exit 0, nothing on stderr, whatever
// else is on the line), as `chessd help COMMAND` does, `chessd help`, -h and
// --help list every subcommand,
// -v, --version and `version` print the version, an unknown command or no
// command at all is exit 2 with the usage on stderr (for an unknown word, two
// lines: what is unknown and the commands), and `chessd serve` says
// at start which address it listens on and who can reach it, and does not
// start on a port that is already taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { CHESSD_BIN, startServer } from './server.mjs';

const run = (args) => spawnSync(CHESSD_BIN, args, { encoding: 'utf8', timeout: 10000 });

// Each subcommand and a word its usage must hold.
const SUBCOMMANDS = { serve: /--bind\s+CHESSD_BIND/, engine: /--engine-workers/, perft: /DEPTH \[FEN \[MOVES\.\.\.\]\]/, play: /--server URL/, keys: /--service-keys-file/, version: /version/, help: /help/ };

test('every subcommand prints its usage for --help and -h, exit 0', () => {
  for (const [name, holds] of Object.entries(SUBCOMMANDS)) {
    for (const flag of ['--help', '-h']) {
      for (const args of [[name, flag], [name, '3', flag]]) {
        const r = run(args);
        assert.equal(r.status, 0, `chessd ${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stderr, '', `chessd ${args.join(' ')}`);
        assert.ok(r.stdout.startsWith(`usage: chessd ${name}`), `chessd ${args.join(' ')}: ${r.stdout}`);
        assert.match(r.stdout, holds);
      }
    }
  }
});

test('chessd help, -h and --help list every subcommand on stdout', () => {
  for (const args of [['help'], ['-h'], ['--help']]) {
    const r = run(args);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: chessd <command>/);
    for (const name of Object.keys(SUBCOMMANDS)) assert.match(r.stdout, new RegExp(`^  ${name}\\b`, 'm'));
    assert.match(r.stdout, /--bind/); // the serve options follow
  }
});

test('chessd help COMMAND prints that command\'s usage; an unknown one is exit 2', () => {
  for (const [name, holds] of Object.entries(SUBCOMMANDS)) {
    const r = run(['help', name]);
    assert.equal(r.status, 0, `chessd help ${name}: ${r.stderr}`);
    assert.equal(r.stdout, run([name, '--help']).stdout, `chessd help ${name}`);
    assert.match(r.stdout, holds);
  }
  const bad = run(['help', 'serv']);
  assert.equal(bad.status, 2);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /unknown command 'serv'/);
  assert.match(bad.stderr, /usage: chessd <command>/);
});

test('-v, --version and version print the version', () => {
  const printed = ['-v', '--version', 'version'].map((flag) => {
    const r = run([flag]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^chessd \d+\.\d+\.\d+\S*\n$/);
    return r.stdout;
  });
  assert.equal(new Set(printed).size, 1);
});

test('an unknown command or none is exit 2 with the usage on stderr', () => {
  for (const args of [[], ['serv'], ['--verbose']]) {
    const r = run(args);
    assert.equal(r.status, 2, `chessd ${args.join(' ')}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /usage: chessd <command>/);
  }
  // A misspelt command: one line naming it, one listing the commands, not serve's options.
  for (const args of [['bogus'], ['help', 'bogus']]) {
    const r = run(args);
    assert.equal(r.status, 2);
    assert.equal(r.stderr, "chessd: unknown command 'bogus'\n"
      + 'usage: chessd <command> [arguments]; commands: serve engine perft play keys version help (chessd help: what each does)\n');
  }
  // An option where the command goes was meant for serve: the usage lists serve's options.
  assert.match(run(['--port', '80']).stderr, /--bind\s+CHESSD_BIND/);
  const bad = run(['serve', '--no-such-option']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown option '--no-such-option'/);
});

/** Starts `chessd serve` with args (no Redis), resolves to its "listening" line once printed, then stops it (exit 0). */
async function listeningLine(args) {
  const proc = spawn(CHESSD_BIN, ['serve', '--redis', 'none', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${stderr}`)), 5000);
    proc.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
      const m = /^chessd: listening on .*$/m.exec(stderr);
      if (m) { clearTimeout(timer); resolve(m[0]); }
    });
    proc.on('exit', () => { clearTimeout(timer); reject(new Error(`exited: ${stderr}`)); });
  });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  proc.kill('SIGTERM');
  assert.equal(await exited, 0);
  return line;
}

test('serve says which address it listens on, and that --bind 127.0.0.1 keeps it local', async () => {
  const all = await listeningLine(['--bind', '0.0.0.0']);
  assert.match(all, /^chessd: listening on 0\.0\.0\.0 port \d+ with \d+ threads \(all interfaces: other machines can connect; --bind 127\.0\.0\.1 keeps it local\)$/);
  const local = await listeningLine(['--bind', '127.0.0.1']);
  assert.match(local, /^chessd: listening on 127\.0\.0\.1 port \d+ with \d+ threads \(loopback: this machine only\)$/);
  // The default is every interface, and the line says so.
  const byDefault = await listeningLine([]);
  assert.match(byDefault, /^chessd: listening on 0\.0\.0\.0 port \d+ .*\(all interfaces/);
});

test('serve on a port another chessd holds: exit 1 with the reason, the first one keeps it alone', async () => {
  const first = await startServer([], { withRedis: false });
  try {
    const r = spawnSync(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', String(first.port)],
      { encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 1, `a second chessd on port ${first.port} must not start; stderr: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1 port ${first.port}: Address already in use`));
    assert.doesNotMatch(r.stderr, /listening on/);
    assert.equal((await fetch(`${first.base}/healthz`)).status, 200);
  } finally {
    await first.stop();
  }
});
