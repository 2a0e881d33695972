// chessd's games over TLS (rediss://) to real redis-servers with the certificates of tests/tls/make_certs.sh:
// by name and by address, games, moves, reads and an event stream (Pub/Sub on TLS too) work; an unknown CA, a
// wrong name, an expired certificate, no client certificate under mutual TLS, the wrong protocol and a refused
// password answer game requests 503 at once (a failed handshake or AUTH logged once, with why, never a password)
// while the rules API goes on; the insecure flag accepts any certificate, loudly; bad TLS files stop the start.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRedis, REPO_ROOT } from './server.mjs';
import { get, post, expectProblem, START_FEN } from './http.mjs';
import { openEvents, subscribed } from './events.mjs';
import { withServer, runServe } from './attacks_lib.mjs';

const TOKEN_SECRET = 'e2e-tls-token-secret-0123456789abcdef';
const WITH_SECRET = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };
const PASSWORD = 'Tls-e2e-Pa55word-right-7Q';
const WRONG_PASSWORD = 'Tls-e2e-Pa55word-wrong-3Z';
const CONNECT_TIMEOUT_MS = 500; // --redis-connect-timeout-ms of every chessd here
const ANSWER_BOUND_MS = 3000; // a refused TLS connection is answered well within this: no hang
const NO_GAME = 'AAAAAAAAAAAAAAAA'; // a well-formed id of no game
const CONNECT_FAILURE = /^chessd: cannot connect to Redis .*$/gm;

let certs; // the directory of make_certs.sh's files
const file = (name) => path.join(certs, name);
/** startRedis's tls option for a server presenting NAME.crt/NAME.key (and trusting ca.crt for clients). */
const serving = (name, more = {}) => ({ cert: file(`${name}.crt`), key: file(`${name}.key`), ca: file('ca.crt'), ...more });

// redis-servers, each listening with TLS beside its plain port (which the
// tests use to look inside, and once to offer TLS to a plain port), with
// certificates by ca.crt for localhost/127.0.0.1, by the unrelated CA, for
// wrong.example, and expired; one requires client certificates, one a password.
let good;
let unknownCa;
let wrongName;
let expired;
let mutual;
let guarded;

before(async () => {
  certs = mkdtempSync(path.join(os.tmpdir(), 'chessd-e2e-tls-'));
  execFileSync('sh', [path.join(REPO_ROOT, 'tests/tls/make_certs.sh'), certs], { stdio: ['ignore', 'ignore', 'inherit'] });
  [good, unknownCa, wrongName, expired, mutual, guarded] = await Promise.all([
    startRedis({ tls: serving('server') }),
    startRedis({ tls: serving('unknown-ca') }),
    startRedis({ tls: serving('wrong') }),
    startRedis({ tls: serving('expired') }),
    startRedis({ tls: serving('server', { authClients: true }) }),
    startRedis({ tls: serving('server'), args: ['--requirepass', PASSWORD] }),
  ]);
});

after(async () => {
  await Promise.all([good, unknownCa, wrongName, expired, mutual, guarded].map((r) => r?.stop()));
  if (certs) rmSync(certs, { recursive: true, force: true });
});

/** chessd serve on `url` with args and the short connect timeout; fn(server); stopped (exit 0 asserted) after. */
function withChessd(url, args, fn, opts = WITH_SECRET) {
  return withServer(['--redis', url, '--redis-connect-timeout-ms', String(CONNECT_TIMEOUT_MS), ...args], fn, opts);
}

/** The redis-server's TLS URL: by name (localhost), or with another host (127.0.0.1). */
const rediss = (redis, host) => (host ? `rediss://${host}:${redis.tlsPort}/0` : redis.tlsUrl);
const trustCa = () => ['--redis-ca-file', file('ca.crt')];
const clientCert = (name = 'client') => ['--redis-cert-file', file(`${name}.crt`), '--redis-key-file', file(`${name}.key`)];

/** Runs fn and resolves to [its result, elapsed ms]. */
async function timed(fn) {
  const started = performance.now();
  const result = await fn();
  return [result, performance.now() - started];
}

/**
 * Asserts that /readyz does not call Redis usable: 503 store_unavailable, or,
 * where /readyz only reports Redis (200 while it is down unless
 * --ready-requires-redis), 200 with redis "down".
 */
async function expectNotReadyForGames(srv, what) {
  const res = await get(srv, '/readyz');
  if (res.status === 503) expectProblem(res, 503, 'store_unavailable');
  else assert.deepEqual([res.status, res.body.redis], [200, 'down'], `${what}: /readyz: ${res.text}`);
}

/** Asserts /readyz 200, and Redis "up" where the answer reports it. */
async function expectReady(srv, what) {
  const res = await get(srv, '/readyz');
  assert.equal(res.status, 200, `${what}: /readyz: ${res.text}; stderr:\n${srv.stderr()}`);
  if ('redis' in res.body) assert.equal(res.body.redis, 'up', `${what}: /readyz: ${res.text}`);
}

/**
 * Asserts that the game routes answer 503 store_unavailable with Retry-After,
 * each within ANSWER_BOUND_MS, that /readyz does not call Redis usable, and
 * that /healthz and the stateless rules API answer 200. `create` lists the
 * codes a creation may answer (see the mutual TLS test).
 */
async function expectGamesUnavailable(srv, what, { create = ['store_unavailable'] } = {}) {
  const requests = [
    ['POST /v1/games', () => post(srv, '/v1/games', {}), create],
    ['GET /v1/games/{id}', () => get(srv, `/v1/games/${NO_GAME}`), ['store_unavailable']],
    ['GET /v1/games/{id} again', () => get(srv, `/v1/games/${NO_GAME}`), ['store_unavailable']],
  ];
  for (const [label, send, codes] of requests) {
    const [res, ms] = await timed(send);
    assert.equal(res.status, 503, `${what}: ${label} answered ${res.status}: ${res.text}`);
    assert.ok(codes.includes(res.body.code), `${what}: ${label} answered ${res.body.code}, not ${codes.join(' or ')}`);
    expectProblem(res, 503, res.body.code);
    assert.match(res.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/, `${what}: ${label} must carry Retry-After in seconds`);
    assert.ok(ms < ANSWER_BOUND_MS, `${what}: ${label} took ${Math.round(ms)} ms`);
  }
  await expectNotReadyForGames(srv, what);
  assert.equal((await get(srv, '/healthz')).status, 200, `${what}: /healthz`);
  const position = await post(srv, '/v1/position', { fen: START_FEN });
  assert.equal(position.status, 200, `${what}: the stateless POST /v1/position must not need Redis: ${position.text}`);
  assert.equal(position.body.fen, START_FEN);
}

/**
 * Waits (up to 2 s: stderr arrives through a pipe) for chessd's "cannot
 * connect to Redis" lines and asserts there is exactly one, matching every
 * pattern; resolves to it. The same reason is logged once however many
 * requests fail within 10 s.
 */
async function oneConnectFailure(srv, patterns, what) {
  const deadline = Date.now() + 2000;
  let lines;
  for (;;) {
    lines = srv.stderr().match(CONNECT_FAILURE) ?? [];
    if (lines.length || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(lines.length, 1, `${what}: expected one "chessd: cannot connect to Redis" line; stderr:\n${srv.stderr()}`);
  for (const pattern of patterns) assert.match(lines[0], pattern, `${what}: the log line must say why`);
  return lines[0];
}

/** Creates a game (201) on srv; resolves to its body. */
async function createGame(srv, what) {
  const res = await post(srv, '/v1/games', {});
  assert.equal(res.status, 201, `${what}: POST /v1/games: ${res.text}`);
  return res.body;
}

/** POSTs move `san` for color at `version`; asserts 200 and the next version; resolves to the change. */
async function move(srv, game, color, san, version) {
  const res = await post(srv, `/v1/games/${game.id}/moves`, { move: san, expected_version: version },
    { headers: { authorization: `Bearer ${game.tokens[color]}` } });
  assert.equal(res.status, 200, `${san} at version ${version}: ${res.text}`);
  assert.equal(res.body.version, version + 1);
  assert.equal(res.body.move.san, san);
  return res.body;
}

/** A short game on srv (create, two moves, GET) and /readyz 200: what a working TLS store allows. */
async function expectGamesWork(srv, redis, what) {
  await expectReady(srv, what);
  const game = await createGame(srv, what);
  await move(srv, game, 'white', 'e4', 1);
  await move(srv, game, 'black', 'c5', 2);
  const read = await get(srv, `/v1/games/${game.id}`);
  assert.equal(read.status, 200, `${what}: GET: ${read.text}`);
  assert.deepEqual(read.body.moves.map((m) => m.san), ['e4', 'c5']);
  // The game is in this redis-server (read on its plain port): it went through the TLS port.
  assert.equal(await redis.command('HGET', `chessd:game:{${game.id}}`, 'version'), '3', `${what}: the game in Redis`);
  return game;
}

/** Whether stderr holds a warning about certificates not being verified. */
const insecureWarning = (stderr) => stderr.split('\n').find((l) => /warn/i.test(l) && /verif|certificate/i.test(l));

describe('a trusted certificate', () => {
  test('rediss://localhost with --redis-ca-file: games, moves, GET and an event stream over TLS; /readyz 200; the token secret is made there', async () => {
    // No CHESSD_TOKEN_SECRET: the shared secret is made and read over TLS too.
    await withChessd(rediss(good), trustCa(), async (srv) => {
      await expectReady(srv, 'a trusted certificate');
      const game = await createGame(srv, 'create');
      const stream = await openEvents(srv, game.id);
      try {
        assert.equal(stream.status, 200, `GET /v1/games/{id}/events: ${stream.text}`);
        const first = await stream.next();
        assert.deepEqual([first.data.type, first.data.version], ['game', 1]);
        // chessd's subscriber (a TLS connection) is on the game's channel, as seen on the plain port.
        await subscribed(good.port, game.id);
        await move(srv, game, 'white', 'e4', 1);
        const e4 = await stream.next();
        assert.deepEqual([e4.data.type, e4.data.event, e4.data.version, e4.data.move.san], ['change', 'move', 2, 'e4']);
        await move(srv, game, 'black', 'e5', 2);
        const e5 = await stream.next();
        assert.deepEqual([e5.data.type, e5.data.event, e5.data.version, e5.data.move.san], ['change', 'move', 3, 'e5']);
      } finally {
        stream.close();
      }
      const read = await get(srv, `/v1/games/${game.id}`);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.version, 3);
      assert.deepEqual(read.body.moves.map((m) => m.san), ['e4', 'e5']);
      assert.equal(await good.command('HGET', `chessd:game:{${game.id}}`, 'version'), '3');
      assert.equal(await good.command('EXISTS', 'chessd:token-secret'), 1, 'the token secret was stored over TLS');
      assert.equal(srv.stderr().match(CONNECT_FAILURE), null, `no connection failed: ${srv.stderr()}`);
      assert.equal(insecureWarning(srv.stderr()), undefined, 'verification is on: no warning');
    }, { env: { CHESSD_TOKEN_SECRET: undefined } });
  });

  test('rediss://127.0.0.1 works too: the certificate names the address', async () => {
    await withChessd(rediss(good, '127.0.0.1'), trustCa(), (srv) => expectGamesWork(srv, good, 'by address'));
  });

  test('--redis-tls-server-name names the certificate to expect: a wrong.example certificate on 127.0.0.1 is accepted under that name', async () => {
    await withChessd(rediss(wrongName, '127.0.0.1'), [...trustCa(), '--redis-tls-server-name', 'wrong.example'],
      (srv) => expectGamesWork(srv, wrongName, 'server name wrong.example'));
  });
});

describe('a certificate that fails verification: game requests 503 at once, one log line says why', () => {
  test('signed by an unknown CA: 503 store_unavailable with Retry-After (events too), the stateless API works, the log names the certificate failure', async () => {
    await withChessd(rediss(unknownCa), trustCa(), async (srv) => {
      await expectGamesUnavailable(srv, 'unknown CA');
      const events = await openEvents(srv, NO_GAME);
      expectProblem(events, 503, 'store_unavailable');
      const moves = await post(srv, '/v1/position/moves', { moves: ['e4', 'e5', 'Qh5', 'Nc6', 'Bc4', 'Nf6', 'Qxf7#'] });
      assert.equal(moves.status, 200, moves.text);
      assert.equal(moves.body.position.status, 'checkmate');
      await oneConnectFailure(srv, [new RegExp(`localhost:${unknownCa.tlsPort}`), /certificate/,
        /verification/, /unable to get local issuer certificate/], 'unknown CA');
    });
  });

  test('a name the certificate does not carry (--redis-tls-server-name other.example): 503, "hostname mismatch" in the log', async () => {
    await withChessd(rediss(good), [...trustCa(), '--redis-tls-server-name', 'other.example'], async (srv) => {
      await expectGamesUnavailable(srv, 'server name other.example');
      await oneConnectFailure(srv, [/other\.example/, /hostname mismatch/], 'server name other.example');
    });
  });

  test('a certificate for wrong.example served to localhost: 503, "hostname mismatch" in the log; on 127.0.0.1, an address mismatch', async () => {
    await withChessd(rediss(wrongName), trustCa(), async (srv) => {
      await expectGamesUnavailable(srv, 'wrong.example as localhost');
      await oneConnectFailure(srv, [/hostname mismatch/], 'wrong.example as localhost');
    });
    await withChessd(rediss(wrongName, '127.0.0.1'), trustCa(), async (srv) => {
      await expectGamesUnavailable(srv, 'wrong.example as 127.0.0.1');
      await oneConnectFailure(srv, [/certificate/, /mismatch/], 'wrong.example as 127.0.0.1');
    });
  });

  test('an expired certificate: 503, "expired" in the log', async () => {
    await withChessd(rediss(expired), trustCa(), async (srv) => {
      await expectGamesUnavailable(srv, 'expired');
      await oneConnectFailure(srv, [/certificate/, /expired/], 'expired');
    });
  });
});

describe('mutual TLS (tls-auth-clients yes)', () => {
  test('without a client certificate games answer 503; with client.crt and client.key they work', async () => {
    // A TLS 1.3 client's handshake is over before the server has checked the
    // client's certificate: the refusal comes as an alert only after a first
    // command. chessd's connection sends PING before it counts as made, so
    // the refusal is a connection that could not be made (store_unavailable,
    // logged), never a write that may have run (outcome_unknown).
    await withChessd(rediss(mutual), trustCa(), async (srv) => {
      await expectGamesUnavailable(srv, 'no client certificate');
      await oneConnectFailure(srv, [/PING/], 'no client certificate');
    });
    assert.equal((await mutual.command('DBSIZE')), 0, 'nothing was written without a client certificate');
    await withChessd(rediss(mutual), [...trustCa(), ...clientCert('unknown-ca')], async (srv) => {
      await expectGamesUnavailable(srv, 'a client certificate from an unknown CA');
      await oneConnectFailure(srv, [/PING/], 'a client certificate from an unknown CA');
    });
    assert.equal((await mutual.command('DBSIZE')), 0, 'nothing was written with a refused client certificate');
    await withChessd(rediss(mutual), [...trustCa(), ...clientCert()], (srv) => expectGamesWork(srv, mutual, 'client.crt'));
  });
});

describe('the wrong protocol or credentials', () => {
  test('plain redis:// to the TLS port: 503 at once, no hang; rediss:// to a plain port: 503 within the connect timeout, logged', async () => {
    // The TCP connection is made and the server hangs up on the PING that
    // comes before any command: a connection that could not be made.
    const keys = await good.command('DBSIZE');
    await withChessd(`redis://127.0.0.1:${good.tlsPort}/0`, [], async (srv) => {
      await expectGamesUnavailable(srv, 'redis:// to TLS');
      await oneConnectFailure(srv, [/PING/], 'redis:// to TLS');
    });
    assert.equal(await good.command('DBSIZE'), keys, 'nothing was written in clear text');
    await withChessd(`rediss://localhost:${good.port}/0`, trustCa(), async (srv) => {
      const [res, ms] = await timed(() => get(srv, `/v1/games/${NO_GAME}`));
      expectProblem(res, 503, 'store_unavailable');
      assert.ok(ms < CONNECT_TIMEOUT_MS + 1500, `rediss:// to a plain port took ${Math.round(ms)} ms`);
      await oneConnectFailure(srv, [/TLS handshake/], 'rediss:// to a plain port');
    });
  });

  test('a refused password: 503, the log says AUTH was refused and holds no password; the right one works and is not logged either', async () => {
    const url = (password) => `rediss://:${password}@localhost:${guarded.tlsPort}/0`;
    await withChessd(url(WRONG_PASSWORD), trustCa(), async (srv) => {
      await expectGamesUnavailable(srv, 'wrong password');
      await oneConnectFailure(srv, [/AUTH was refused/], 'wrong password');
      for (const [stream, text] of [['stderr', srv.stderr()], ['stdout', srv.stdout()]]) {
        assert.ok(!text.includes(WRONG_PASSWORD), `the password is in chessd's ${stream}:\n${text}`);
        assert.ok(!text.includes(PASSWORD), `the server's password is in chessd's ${stream}`);
      }
    });
    await withChessd(url(PASSWORD), trustCa(), async (srv) => {
      await expectReady(srv, 'right password');
      await createGame(srv, 'right password');
      await get(srv, `/v1/games/${NO_GAME}`);
      for (const [stream, text] of [['stderr', srv.stderr()], ['stdout', srv.stdout()]])
        assert.ok(!text.includes(PASSWORD), `the password is in chessd's ${stream}:\n${text}`);
    });
  });
});

describe('--redis-tls-insecure-skip-verify', () => {
  test('accepts a certificate from an unknown CA, and chessd warns loudly at start', async () => {
    await withChessd(rediss(unknownCa), ['--redis-tls-insecure-skip-verify'], async (srv) => {
      const beforeListening = srv.stderr().split('chessd: listening')[0];
      assert.ok(insecureWarning(beforeListening), `no warning about unverified certificates at start; stderr:\n${srv.stderr()}`);
      await expectGamesWork(srv, unknownCa, 'insecure, unknown CA');
    });
  });

  test('CHESSD_REDIS_TLS_INSECURE_SKIP_VERIFY=1 accepts an expired certificate for another name; =false keeps verification', async () => {
    await withChessd(rediss(expired), [], async (srv) => {
      assert.ok(insecureWarning(srv.stderr()), `no warning about unverified certificates; stderr:\n${srv.stderr()}`);
      await expectGamesWork(srv, expired, 'insecure by variable, expired');
    }, { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET, CHESSD_REDIS_TLS_INSECURE_SKIP_VERIFY: '1' } });
    await withChessd(rediss(wrongName), ['--redis-tls-insecure-skip-verify=true'],
      (srv) => expectGamesWork(srv, wrongName, 'insecure=true, wrong name'));
    await withChessd(rediss(unknownCa), [...trustCa(), '--redis-tls-insecure-skip-verify=false'], async (srv) => {
      assert.equal(insecureWarning(srv.stderr()), undefined, `=false: no warning; stderr:\n${srv.stderr()}`);
      await expectGamesUnavailable(srv, 'insecure=false');
    });
  });
});

describe('bad TLS settings stop chessd at start, naming what is wrong', () => {
  /** Runs chessd serve on the good server's TLS URL with args; asserts exit 2, no listening; resolves to stderr. */
  async function refused(args, what) {
    const r = await runServe(['--redis', rediss(good), ...args], { CHESSD_TOKEN_SECRET: TOKEN_SECRET });
    assert.deepEqual([r.code, r.signal], [2, null], `${what}: exit ${r.code} (signal ${r.signal}); stderr:\n${r.stderr}`);
    assert.ok(!/chessd: listening/.test(r.stderr), `${what}: chessd listened`);
    return r.stderr;
  }

  test('a client certificate without its key, or a key without its certificate', async () => {
    assert.match(await refused(['--redis-cert-file', file('client.crt')], 'certificate only'), /key/);
    assert.match(await refused(['--redis-key-file', file('client.key')], 'key only'), /certificate/);
  });

  test('a CA file that does not exist, or holds no certificate: the file is named', async () => {
    const missing = path.join(certs, 'no-such-ca.crt');
    const stderr = await refused(['--redis-ca-file', missing], 'missing CA file');
    assert.ok(stderr.includes(missing), `the missing CA file is not named: ${stderr}`);
    assert.match(stderr, /CA file/);
    assert.ok((await refused(['--redis-ca-file', file('client.key')], 'a key as CA file')).includes(file('client.key')));
  });

  test('a missing certificate, an encrypted key (no prompt), a key of another certificate: the file is named', async () => {
    const missing = path.join(certs, 'no-such-client.crt');
    assert.ok((await refused(['--redis-cert-file', missing, '--redis-key-file', file('client.key')], 'missing certificate'))
      .includes(missing));
    const encrypted = await refused(['--redis-cert-file', file('client.crt'), '--redis-key-file', file('client-encrypted.key')],
      'encrypted key');
    assert.ok(encrypted.includes(file('client-encrypted.key')), `the encrypted key is not named: ${encrypted}`);
    const mismatch = await refused(['--redis-cert-file', file('client.crt'), '--redis-key-file', file('server.key')],
      'key of another certificate');
    assert.ok(mismatch.includes(file('server.key')), `the key is not named: ${mismatch}`);
    assert.match(mismatch, /does not match/);
  });
});
