// chessd serve checks libmicrohttpd's version at start (api/http/mhd_version.c):
// on this machine's libmicrohttpd (a tested one) it starts with nothing to say,
// with or without --allow-untested-libmicrohttpd (or its variable). Another
// version is made real for the process by a stand-in MHD_get_version, a small
// shared object preloaded before libmicrohttpd (LD_PRELOAD): chessd serve then
// refuses to start, exit 2, with one line naming both versions; the flag or the
// variable starts it with a warning line; chessd perft never asks.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHESSD_BIN, startServer, tempDir } from './server.mjs';
import { get } from './http.mjs';

const UNTESTED = '0.9.76';
let standIn;
// An ASan build insists on its runtime coming first among the libraries;
// the stand-in is preloaded before it.
const asanOptions = [process.env.ASAN_OPTIONS, 'verify_asan_link_order=0'].filter(Boolean).join(':');
const untestedEnv = () => ({ LD_PRELOAD: standIn, ASAN_OPTIONS: asanOptions });

before(() => {
  const dir = tempDir('chessd-mhd-version-');
  const source = path.join(dir, 'mhd_version.c');
  standIn = path.join(dir, 'libmhd_version.so');
  writeFileSync(source, `const char *MHD_get_version(void);\nconst char *MHD_get_version(void) { return "${UNTESTED}"; }\n`);
  const cc = spawnSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-o', standIn, source], { encoding: 'utf8' });
  assert.equal(cc.status, 0, `cannot build the stand-in libmicrohttpd version: ${cc.stderr}`);
});

test('chessd serve starts on this machine\'s libmicrohttpd with nothing to say about it, the override set or not', async () => {
  for (const [args, env] of [[[], {}], [['--allow-untested-libmicrohttpd'], {}], [[], { CHESSD_ALLOW_UNTESTED_LIBMICROHTTPD: '1' }]]) {
    const server = await startServer(args, { env, withRedis: false });
    try {
      assert.equal((await get(server, '/healthz')).status, 200);
      assert.doesNotMatch(server.stderr(), /libmicrohttpd/, `chessd serve ${args.join(' ')}`);
    } finally {
      await server.stop();
    }
  }
});

test('on an untested libmicrohttpd chessd serve refuses to start: exit 2, one line naming both versions and the override', () => {
  const r = spawnSync(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0'],
    { encoding: 'utf8', timeout: 10000, env: { ...process.env, ...untestedEnv() } });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr,
    `chessd: libmicrohttpd ${UNTESTED} is not a version chessd has been tested with (0.9.75); its strict HTTP reader `
    + 'depends on how libmicrohttpd reads sockets (see api/http/README.md); start with '
    + '--allow-untested-libmicrohttpd to run anyway\n');
});

test('--allow-untested-libmicrohttpd (or CHESSD_ALLOW_UNTESTED_LIBMICROHTTPD=1) starts it anyway, with a warning line', async () => {
  for (const [args, env] of [[['--allow-untested-libmicrohttpd'], {}], [[], { CHESSD_ALLOW_UNTESTED_LIBMICROHTTPD: '1' }]]) {
    const server = await startServer(args, { env: { ...untestedEnv(), ...env }, withRedis: false });
    try {
      assert.equal((await get(server, '/healthz')).status, 200);
      const warnings = server.stderr().split('\n').filter((l) => l.includes('libmicrohttpd'));
      assert.equal(warnings.length, 1, server.stderr());
      assert.match(warnings[0], new RegExp(`^chessd: WARNING: --allow-untested-libmicrohttpd: running on libmicrohttpd ${UNTESTED.replaceAll('.', '\\.')}, `
        + 'not a version chessd has been tested with \\(0\\.9\\.75\\)'));
    } finally {
      await server.stop();
    }
  }
});

test('chessd perft does not check libmicrohttpd (it serves no HTTP)', () => {
  const r = spawnSync(CHESSD_BIN, ['perft', '2'], { encoding: 'utf8', timeout: 10000, env: { ...process.env, ...untestedEnv() } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /\n\n400\n$/);
});
