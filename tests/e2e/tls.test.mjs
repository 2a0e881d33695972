// chessd's games over TLS (rediss://) to real redis-servers with the certificates of tests/tls/make_certs.sh:
// by name and by address, games, moves, reads and an event stream (Pub/Sub on TLS too) work; an unknown CA, a
// wrong name, an expired certificate, no client certificate under mutual TLS, the wrong protocol and a refused
// password answer game requests 503 at once (a failed handshake or AUTH logged once, with why, never a password)
// while the rules API goes on; the insecure flag accepts any certificate, loudly; bad TLS files stop the start.
// The same on a Redis Cluster over TLS (rediss+cluster://): games, moves and sharded event streams on every
// master; no client certificate, a wrong name, an unknown CA and an expired certificate answer 503 within the
// routing budget, one log line per node.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRedis, spawnRedis, freePort, redisCommands, tempDir, REPO_ROOT } from './server.mjs';
import { startCluster, keySlot } from './cluster.mjs';
import { get, post, expectProblem, sleep, START_FEN } from './http.mjs';
import { openEvents, subscribed, channelOf } from './events.mjs';
import { withServer, runServe } from './attacks_lib.mjs';

const TOKEN_SECRET = 'e2e-tls-token-secret-0123456789abcdef';
const WITH_SECRET = { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } };
const PASSWORD = 'Tls-e2e-Pa55word-right-7Q';
const WRONG_PASSWORD = 'Tls-e2e-Pa55word-wrong-3Z';
const CONNECT_TIMEOUT_MS = 500; // --redis-connect-timeout-ms of every chessd here
const ANSWER_BOUND_MS = 3000; // a refused TLS connection is answered well within this: no hang
const NO_GAME = 'AAAAAAAAAAAAAAAA'; // a well-formed id of no game
const CONNECT_FAILURE = /^chessd: cannot connect to Redis .*$/gm;
// The cluster tests' --redis-timeout-ms: a game request gives up routing (every node refused) after twice it.
const CLUSTER_COMMAND_TIMEOUT_MS = 250;
// A refusal by every node of a cluster is answered once that budget is spent (and a last connect is over).
const CLUSTER_ANSWER_BOUND_MS = 2 * CLUSTER_COMMAND_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 1000;
// Each cluster test fails on its own after this (a hang is named, within the runner's per-file limit).
const CLUSTER_TEST_TIMEOUT = { timeout: 20000 };

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
 * each within boundMs, that /readyz does not call Redis usable, and
 * that /healthz and the stateless rules API answer 200. `create` lists the
 * codes a creation may answer (see the mutual TLS test).
 */
async function expectGamesUnavailable(srv, what, { create = ['store_unavailable'], boundMs = ANSWER_BOUND_MS } = {}) {
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
    assert.ok(ms < boundMs, `${what}: ${label} took ${Math.round(ms)} ms`);
  }
  await expectNotReadyForGames(srv, what);
  assert.equal((await get(srv, '/healthz')).status, 200, `${what}: /healthz`);
  const position = await post(srv, '/v1/position', { fen: START_FEN });
  assert.equal(position.status, 200, `${what}: the stateless POST /v1/position must not need Redis: ${position.text}`);
  assert.equal(position.body.fen, START_FEN);
}

/**
 * Waits (up to 2 s: stderr arrives through a pipe) for chessd's "cannot
 * connect to Redis" lines and asserts there are exactly `count`, each
 * matching every pattern; resolves to them. The same reason is logged once
 * however many requests fail within 10 s.
 */
async function connectFailures(srv, count, patterns, what) {
  const deadline = Date.now() + 2000;
  let lines;
  for (;;) {
    lines = srv.stderr().match(CONNECT_FAILURE) ?? [];
    if (lines.length >= count || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(lines.length, count, `${what}: expected ${count} "chessd: cannot connect to Redis" line(s); stderr:\n${srv.stderr()}`);
  for (const line of lines) for (const pattern of patterns) assert.match(line, pattern, `${what}: the log line must say why`);
  return lines;
}

/** connectFailures of one line; resolves to it. */
async function oneConnectFailure(srv, patterns, what) {
  return (await connectFailures(srv, 1, patterns, what))[0];
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

describe('cluster mode (rediss+cluster://)', () => {
  // A 3-master Redis Cluster (no replicas) on TLS only: clients, the cluster
  // bus and replication, every node presenting server.crt and requiring a
  // client certificate by ca.crt (tls-auth-clients yes, Redis's default).
  // And a cluster of one node presenting expired.crt, which several nodes
  // could not form: they check each other's certificates on the bus.
  let cluster;
  let expiredNode;

  // The clusters are up within seconds; a start that hangs fails here, named.
  // Both are kept even when the other fails, for after() to stop. No node
  // fails here, so the node timeout is long: it is also how long a node waits
  // for a peer's first answer on the bus, which it never asks for again (seen
  // once on a loaded machine at 1 s: the cluster never joined).
  before(async () => {
    const [started, one] = await Promise.allSettled([
      startCluster({ masters: 3, replicasPerMaster: 0, nodeTimeoutMs: 5000,
        tls: { cert: file('server.crt'), key: file('server.key'), ca: file('ca.crt') } }),
      startOneNodeCluster('expired'),
    ]);
    cluster = started.value;
    expiredNode = one.value;
    for (const result of [started, one]) if (result.status === 'rejected') throw result.reason;
  }, { timeout: 40000 });

  after(async () => {
    await Promise.all([cluster?.stop(), expiredNode?.stop()]);
  });

  const timeouts = ['--redis-timeout-ms', String(CLUSTER_COMMAND_TIMEOUT_MS)];
  /** chessd on the 3 masters' rediss+cluster:// URL with the short timeouts and args. */
  const withClusterChessd = (args, fn, opts) => withChessd(cluster.url, [...timeouts, ...args], fn, opts);
  const masterPorts = () => cluster.nodes.filter((n) => n.role === 'master').map((n) => n.port);
  /** DBSIZE of each master, in masterPorts() order. */
  const dbsizes = () => Promise.all(masterPorts().map((port) => cluster.command(port, 'DBSIZE')));

  /**
   * The game routes and a game's event stream answer 503 within
   * CLUSTER_ANSWER_BOUND_MS (chessd tries the nodes again until its routing
   * budget is spent: a cluster may be failing over), the rules API goes on;
   * and one "cannot connect" line per node in `ports` says why, each matching
   * patterns: a reason is logged once per node however many requests fail.
   */
  async function expectClusterUnavailable(srv, ports, patterns, what) {
    await expectGamesUnavailable(srv, what, { boundMs: CLUSTER_ANSWER_BOUND_MS });
    const [events, ms] = await timed(() => openEvents(srv, NO_GAME));
    expectProblem(events, 503, 'store_unavailable');
    assert.ok(ms < CLUSTER_ANSWER_BOUND_MS, `${what}: GET /v1/games/{id}/events took ${Math.round(ms)} ms`);
    const lines = await connectFailures(srv, ports.length, patterns, what);
    const logged = lines.map((l) => Number(/^chessd: cannot connect to Redis 127\.0\.0\.1:(\d+): /.exec(l)?.[1]));
    const byPort = (a, b) => a - b;
    assert.deepEqual(logged.sort(byPort), [...ports].sort(byPort), `${what}: one line for each node:\n${lines.join('\n')}`);
  }

  /** Waits until a connection is subscribed (SSUBSCRIBE) to the game's channel on the master at port. */
  async function shardSubscribed(port, id) {
    const deadline = Date.now() + 3000;
    for (;;) {
      const [, count] = await cluster.command(port, 'PUBSUB', 'SHARDNUMSUB', channelOf(id));
      if (count >= 1) return;
      assert.ok(Date.now() < deadline, `no shard subscriber on ${channelOf(id)} at ${port}`);
      await sleep(20);
    }
  }

  test('the masters, the CA and client.crt: games land on all three masters, moves play, GET reads them, event streams get the moves (sharded Pub/Sub over TLS)', CLUSTER_TEST_TIMEOUT, async () => {
    await withClusterChessd([...trustCa(), ...clientCert()], async (srv) => {
      await expectReady(srv, 'a TLS cluster');
      const masters = await cluster.masters();
      assert.equal(masters.length, 3);
      const ownerOf = (id) => {
        const slot = keySlot(`chessd:game:{${id}}`);
        return masters.find((m) => m.slots.some(([first, last]) => first <= slot && slot <= last)).port;
      };
      // New games until each master holds one (ids are random: 60 games miss a master with odds 3 (2/3)^60, 10^-10).
      const games = new Map(masters.map((m) => [m.port, []]));
      for (let i = 0; i < 60 && [...games.values()].some((g) => !g.length); i++) {
        const game = await createGame(srv, `game ${i}`);
        games.get(ownerOf(game.id)).push(game);
      }
      for (const [port, list] of games) {
        assert.ok(list.length > 0, `no game landed on the master at ${port}`);
        // A new game is its record, its move list and its history, all on its slot's master (the
        // server's own keys, the deadline index and the feed's, lie in their own slot, wherever it is).
        const keys = await cluster.command(port, 'KEYS', '*');
        for (const game of list)
          assert.equal(keys.filter((k) => k.endsWith(`{${game.id}}`)).length, 3, `the keys of ${game.id} on the master at ${port}`);
      }
      // One game on each master, watched while it is played.
      for (const [port, [game]] of games) {
        const what = `the game on the master at ${port}`;
        const stream = await openEvents(srv, game.id);
        try {
          assert.equal(stream.status, 200, `${what}: GET /v1/games/{id}/events: ${stream.text}`);
          const first = await stream.next();
          assert.deepEqual([first.data.type, first.data.version], ['game', 1]);
          await shardSubscribed(port, game.id);
          await move(srv, game, 'white', 'e4', 1);
          const e4 = await stream.next();
          assert.deepEqual([e4.data.type, e4.data.event, e4.data.version, e4.data.move.san], ['change', 'move', 2, 'e4'], what);
          await move(srv, game, 'black', 'e5', 2);
          const e5 = await stream.next();
          assert.deepEqual([e5.data.type, e5.data.event, e5.data.version, e5.data.move.san], ['change', 'move', 3, 'e5'], what);
        } finally {
          stream.close();
        }
        const read = await get(srv, `/v1/games/${game.id}`);
        assert.equal(read.status, 200, `${what}: GET: ${read.text}`);
        assert.equal(read.body.version, 3);
        assert.deepEqual(read.body.moves.map((m) => m.san), ['e4', 'e5']);
        assert.equal(await cluster.command(port, 'HGET', `chessd:game:{${game.id}}`, 'version'), '3', `${what}: in Redis`);
      }
      assert.equal(srv.stderr().match(CONNECT_FAILURE), null, `no connection failed: ${srv.stderr()}`);
      assert.equal(insecureWarning(srv.stderr()), undefined, 'verification is on: no warning');
    });
  });

  test('mutual TLS: without --redis-cert-file/--redis-key-file every node refuses chessd: 503, "cannot connect" with the PING for each master, nothing written', CLUSTER_TEST_TIMEOUT, async () => {
    const keys = await dbsizes();
    await withClusterChessd(trustCa(), (srv) => expectClusterUnavailable(srv, masterPorts(), [/PING/], 'no client certificate'));
    assert.deepEqual(await dbsizes(), keys, 'nothing was written without a client certificate');
  });

  test('--redis-tls-server-name other.example, a name the nodes\' certificates do not carry: 503, "hostname mismatch" for each master', CLUSTER_TEST_TIMEOUT, async () => {
    await withClusterChessd([...trustCa(), ...clientCert(), '--redis-tls-server-name', 'other.example'],
      (srv) => expectClusterUnavailable(srv, masterPorts(), [/TLS handshake with other\.example/, /hostname mismatch/],
        'server name other.example'));
  });

  test('an unknown CA (chessd trusts other-ca.crt only): 503, the verification failure for each master', CLUSTER_TEST_TIMEOUT, async () => {
    // The nodes send their chain up to ca.crt (OpenSSL completes it from
    // tls-ca-cert-file), so the reason is the self-signed root nobody trusts.
    await withClusterChessd([...clientCert(), '--redis-ca-file', file('other-ca.crt')],
      (srv) => expectClusterUnavailable(srv, masterPorts(),
        [/TLS handshake with 127\.0\.0\.1/, /certificate failed verification/, /self-signed certificate in certificate chain/],
        'unknown CA'));
  });

  test('an expired node certificate: 503, "certificate has expired"; the same cluster works unverified', CLUSTER_TEST_TIMEOUT, async () => {
    const args = [...timeouts, ...trustCa()];
    await withChessd(expiredNode.url, args, (srv) => expectClusterUnavailable(srv, [expiredNode.port],
      [/TLS handshake with 127\.0\.0\.1/, /certificate has expired/], 'expired'));
    assert.equal(await expiredNode.command('DBSIZE'), 0, 'nothing was written to the expired node');
    // The control: the node is a working cluster; only its certificate was refused.
    await withChessd(expiredNode.url, [...timeouts, '--redis-tls-insecure-skip-verify'], async (srv) => {
      await expectReady(srv, 'expired, unverified');
      const game = await createGame(srv, 'expired, unverified');
      await move(srv, game, 'white', 'd4', 1);
      const read = await get(srv, `/v1/games/${game.id}`);
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body.moves.map((m) => m.san), ['d4']);
      assert.equal(await expiredNode.command('HGET', `chessd:game:{${game.id}}`, 'version'), '2');
    });
  });
});

/**
 * A Redis Cluster of one node serving every slot, listening with TLS only and
 * presenting NAME.crt (tls-auth-clients no). --tls-cluster yes makes the node
 * announce its TLS port (CLUSTER SLOTS); it has no peer on the bus. The test
 * sets it up over TLS without checking the certificate. Resolves, once it
 * reports cluster_state:ok, to { port, url (rediss+cluster://), command(...cmd), stop() }.
 */
async function startOneNodeCluster(name) {
  const dir = tempDir('chessd-e2e-tls-node-');
  let port;
  let proc;
  for (let attempt = 0; !proc; attempt++) {
    port = await freePort();
    let busPort;
    do busPort = await freePort(); while (busPort === port);
    rmSync(path.join(dir, 'nodes.conf'), { force: true }); // a failed start may have written one
    proc = await spawnRedis(port, ['--port', '0', '--tls-port', String(port), '--tls-cert-file', file(`${name}.crt`),
      '--tls-key-file', file(`${name}.key`), '--tls-ca-cert-file', file('ca.crt'), '--tls-auth-clients', 'no',
      '--tls-cluster', 'yes', '--cluster-enabled', 'yes', '--cluster-port', String(busPort),
      '--cluster-config-file', path.join(dir, 'nodes.conf'), '--dir', dir, '--save', '', '--appendonly', 'no']);
    assert.ok(proc || attempt < 2, `cannot start a one-node cluster presenting ${name}.crt`);
  }
  // A forgotten stop() must not keep the test process alive; the exit hook of server.mjs kills the node.
  proc.unref();
  proc.stdout.unref();
  proc.stderr.unref();
  const command = async (...cmd) => (await redisCommands(port, [cmd], { tls: { rejectUnauthorized: false } }))[0];
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.ref(); // waiting for the exit keeps the event loop alive
    proc.kill('SIGKILL');
    await exited;
  };
  try {
    assert.equal(await command('CLUSTER', 'ADDSLOTSRANGE', '0', '16383'), 'OK');
    // A master reports ok only some time after its start (2 s in Redis 7.0).
    const deadline = Date.now() + 10000;
    while (!/^cluster_state:ok\r?$/m.test(await command('CLUSTER', 'INFO'))) {
      assert.ok(Date.now() < deadline, `the one-node cluster presenting ${name}.crt is not ok`);
      await sleep(50);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url: `rediss+cluster://127.0.0.1:${port}`, command, stop };
}
