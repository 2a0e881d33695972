// Starts and stops a real chessd for a test file: `chessd serve --bind
// 127.0.0.1 --port 0` (binary from CHESSD_BIN, default build/chessd relative
// to the repository root), the port read from the "listening" line on stderr
// ("chessd: listening on ADDRESS port N with T threads (who can reach it)"),
// the JSON access log collected from stdout, and SIGTERM at the end with the
// exit status asserted to be 0. Each test process also runs one throwaway
// redis-server for the servers it starts (readiness checks the game store);
// startRedis() gives a test a redis-server of its own (optionally listening
// with TLS too) that it may stop, restart (optionally with its data kept on
// disk), pause and resume, and redisCommands()/redisDump() read it over raw
// RESP. startNginx() puts a private nginx in front of several chessd replicas
// as a round-robin load balancer (with { streaming: true }, one that passes
// event streams and long-polls through as they come). spawnRedis,
// trackProcess and tempDir are shared with cluster.mjs, which starts whole
// Redis Clusters.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '../..');
export const CHESSD_BIN = path.resolve(REPO_ROOT, process.env.CHESSD_BIN ?? 'build/chessd');
const REDIS_SERVER = process.env.CHESSD_REDIS_SERVER ?? 'redis-server';

const START_TIMEOUT_MS = 5000;

// Servers still running when this test process exits (a failed or timed-out
// test) are killed, so no chessd outlives the run.
const running = new Set();
process.on('exit', () => { for (const proc of running) proc.kill('SIGKILL'); });

/** Kills proc (SIGKILL) when this test process exits, if it is still running then; returns proc. */
export function trackProcess(proc) {
  running.add(proc);
  proc.on('exit', () => running.delete(proc));
  return proc;
}
const STOP_TIMEOUT_MS = 15000;

let redis; // one private redis-server per test process, started on first use

// Temporary directories of persistent redis-servers, removed when the process exits.
const tempDirs = new Set();
process.on('exit', () => { for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true }); });

/** A new temporary directory named prefix + random characters, removed when this process exits. */
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/**
 * Spawns redis-server on `port` with `args` (a later option wins over the
 * defaults: `--port 0 --tls-port P` for TLS only) and waits for "Ready to
 * accept connections"; resolves to the process, or null when it did not start.
 */
export async function spawnRedis(port, args) {
  const proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  proc.on('exit', () => running.delete(proc));
  const ready = await new Promise((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(false), START_TIMEOUT_MS);
    proc.on('error', () => { clearTimeout(timer); resolve(false); });
    proc.on('exit', () => { clearTimeout(timer); resolve(false); });
    proc.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (/Ready to accept connections/.test(out)) { clearTimeout(timer); resolve(true); }
    });
  });
  if (ready) return proc;
  proc.kill('SIGKILL');
  return null;
}

/** Starts (once) a throwaway redis-server on a free loopback port; resolves to its URL. */
export function privateRedis() {
  if (CLUSTER_MODE) return clusterRedis().then((c) => c.url);
  redis ??= (async () => {
    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      const proc = await spawnRedis(port, ['--save', '', '--appendonly', 'no']);
      if (proc) {
        // Let the test process end while redis still runs; the exit hook kills it.
        proc.stdout.unref();
        proc.stderr.unref();
        proc.unref();
        return `redis://127.0.0.1:${port}/0`;
      }
      assert.ok(attempt < 2, `cannot start ${REDIS_SERVER} (redis-server is installed by make deps; set CHESSD_REDIS_SERVER)`);
    }
  })();
  return redis;
}

/**
 * Starts a redis-server for one test on a free loopback port. With
 * persistent, it keeps its data in an append-only file in a fresh temporary
 * directory (appendonly yes, appendfsync always, no RDB snapshots), so a
 * stop() then start() on the same port finds every key again. Resolves to
 * { port, url, dir, proc, stop(signal), start(), pause(), resume(), command(...args), dump() }.
 *
 * With tls ({ cert, key, ca, authClients }: PEM files, as tests/tls/make_certs.sh
 * makes them), it also listens with TLS on a second free port, tlsPort
 * (tls-auth-clients yes when authClients: a client must present a certificate
 * signed by ca), and the handle has tlsPort and tlsUrl
 * (rediss://localhost:<tlsPort>/0). The plain port stays open beside it for
 * command() and dump(). args: more redis-server arguments (e.g. --requirepass).
 */
export async function startRedis({ persistent = false, tls = null, args: moreArgs = [] } = {}) {
  let dir = null;
  if (persistent) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chessd-e2e-redis-'));
    tempDirs.add(dir);
  }
  const storage = persistent
    ? ['--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--save', '', '--appendonly', 'no'];
  let port;
  let tlsPort = null;
  const args = () => [...storage, ...(tls ? ['--tls-port', String(tlsPort), '--tls-cert-file', tls.cert,
    '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', tls.authClients ? 'yes' : 'no'] : []),
  ...moreArgs];
  let proc;
  for (let attempt = 0; !proc; attempt++) {
    port = await freePort();
    if (tls) do tlsPort = await freePort(); while (tlsPort === port);
    proc = await spawnRedis(port, args());
    assert.ok(proc || attempt < 2, `cannot start ${REDIS_SERVER} (redis-server is installed by make deps; set CHESSD_REDIS_SERVER)`);
  }
  const url = `redis://127.0.0.1:${port}/0`;
  const handle = {
    port,
    url,
    ...(tls ? { tlsPort, tlsUrl: `rediss://localhost:${tlsPort}/0` } : {}),
    dir,
    get proc() { return proc; },
    /** Stops redis-server (SIGTERM: a clean shutdown that flushes the append-only file) and waits for its exit. */
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGCONT'); // a paused server cannot act on SIGTERM
      proc.kill(signal);
      await exited;
    },
    /** Starts redis-server again on the same port (and, when persistent, the same data directory). */
    async start() {
      assert.ok(proc.exitCode !== null || proc.signalCode !== null, 'redis-server is still running');
      for (let attempt = 0; ; attempt++) {
        const next = await spawnRedis(port, args());
        if (next) { proc = next; return; }
        // The port may linger for a moment after the old process's exit.
        assert.ok(attempt < 20, `cannot restart ${REDIS_SERVER} on port ${port}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /** SIGSTOP: the process keeps its sockets (connections are accepted by the kernel) but answers nothing. */
    pause() { proc.kill('SIGSTOP'); },
    /** SIGCONT after pause(). */
    resume() { proc.kill('SIGCONT'); },
    /** One command over raw RESP; resolves to its reply. */
    async command(...cmd) { return (await redisCommands(port, [cmd]))[0]; },
    /** Every key with its value(s); see redisDump. */
    dump() { return redisDump(port); },
  };
  return handle;
}

/**
 * Sends commands (arrays of strings) pipelined on one new connection to the
 * redis-server on `port` and resolves to their replies: strings for simple and
 * bulk strings (null for nil), numbers for integers, arrays, and Error objects
 * for error replies. With `tls` (options for tls.connect: ca, cert, key...),
 * the connection is TLS.
 */
export function redisCommands(port, commands, { tls: tlsOptions = null } = {}) {
  const frame = (cmd) => {
    const parts = [`*${cmd.length}\r\n`];
    for (const arg of cmd) {
      const b = Buffer.from(String(arg));
      parts.push(`$${b.length}\r\n`, b, '\r\n');
    }
    return Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p))));
  };
  return new Promise((resolve, reject) => {
    const socket = tlsOptions ? tls.connect({ host: '127.0.0.1', port, ...tlsOptions }) : net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const replies = [];
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`redis on port ${port} did not answer`)); }, 5000);
    socket.on('error', (err) => { clearTimeout(timer); reject(err); });
    socket.on(tlsOptions ? 'secureConnect' : 'connect', () => socket.write(Buffer.concat(commands.map(frame))));
    socket.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const parsed = parseResp(buf, 0);
        if (!parsed) break;
        replies.push(parsed[0]);
        buf = buf.subarray(parsed[1]);
      }
      if (replies.length >= commands.length) {
        clearTimeout(timer);
        socket.end();
        resolve(replies);
      }
    });
  });
}

/** One RESP2 value at offset: [value, next offset], or undefined when incomplete. */
function parseResp(buf, at) {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const kind = String.fromCharCode(buf[at]);
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  if (kind === '+') return [line, next];
  if (kind === '-') return [new Error(line), next];
  if (kind === ':') return [Number(line), next];
  if (kind === '$') {
    const n = Number(line);
    if (n < 0) return [null, next];
    if (buf.length < next + n + 2) return undefined;
    return [buf.toString('utf8', next, next + n), next + n + 2];
  }
  if (kind === '*') {
    const n = Number(line);
    if (n < 0) return [null, next];
    const items = [];
    let pos = next;
    for (let i = 0; i < n; i++) {
      const item = parseResp(buf, pos);
      if (!item) return undefined;
      items.push(item[0]);
      pos = item[1];
    }
    return [items, pos];
  }
  throw new Error(`unexpected RESP reply type ${JSON.stringify(kind)}`);
}

/**
 * Every key of the redis-server on `port` (SCAN over all of database 0) with
 * its type and contents: Map key -> { type, values } where values is a flat
 * list of strings (a hash's fields and values, a zset's members and scores).
 */
export async function redisDump(port) {
  const keys = [];
  let cursor = '0';
  do {
    const [reply] = await redisCommands(port, [['SCAN', cursor, 'COUNT', '1000']]);
    assert.ok(Array.isArray(reply), `SCAN failed: ${reply}`);
    [cursor] = reply;
    keys.push(...reply[1]);
  } while (cursor !== '0');
  const out = new Map();
  if (!keys.length) return out;
  const types = await redisCommands(port, keys.map((k) => ['TYPE', k]));
  const read = { string: (k) => ['GET', k], hash: (k) => ['HGETALL', k], list: (k) => ['LRANGE', k, '0', '-1'],
    set: (k) => ['SMEMBERS', k], zset: (k) => ['ZRANGE', k, '0', '-1', 'WITHSCORES'], stream: (k) => ['XRANGE', k, '-', '+'] };
  const values = await redisCommands(port, keys.map((k, i) => (read[types[i]] ?? ((key) => ['TYPE', key]))(k)));
  // A hash by field: its HGETALL order changes as Redis rehashes it, with nothing written.
  const byField = (flat) => {
    const pairs = [];
    for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
    return pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flat();
  };
  keys.forEach((k, i) => out.set(k, { type: types[i],
    values: (types[i] === 'hash' && Array.isArray(values[i]) ? byField(values[i]) : [values[i]]).flat(Infinity).map(String) }));
  return out;
}

/**
 * CHESSD_E2E_REDIS=cluster: the game suites run against a Redis Cluster (3
 * masters with a replica each, started once per test process): the servers'
 * private Redis, and gameRedis(), are that cluster (tests/e2e/run.sh runs the
 * game suites a second time so).
 */
export const CLUSTER_MODE = process.env.CHESSD_E2E_REDIS === 'cluster';
let sharedCluster;

/** The shared cluster as a store handle: { url, cluster, command(...cmd) (sent to the master of cmd[1]'s slot), dump(), stop() (kept running) }. */
function clusterRedis() {
  sharedCluster ??= (async () => {
    const { startCluster, keySlot } = await import('./cluster.mjs');
    const cluster = await startCluster({ masters: 3, replicasPerMaster: 1 });
    const ownerPort = async (key) => (await cluster.slotOwner(keySlot(key))).port;
    return {
      url: cluster.url,
      cluster,
      async command(...cmd) {
        return cluster.command(cmd.length > 1 ? await ownerPort(cmd[1]) : (await cluster.masters())[0].port, ...cmd);
      },
      /** Every key of every master, as redisDump gives one node's. */
      async dump() {
        const out = new Map();
        for (const m of await cluster.masters()) for (const [k, v] of await redisDump(m.port)) out.set(k, v);
        return out;
      },
      async stop() {},
    };
  })();
  return sharedCluster;
}

/**
 * The Redis a game suite keeps its games in: a startRedis() of its own, or
 * the shared cluster in CLUSTER_MODE (same handle methods: url, command,
 * dump, stop). Tests that stop, pause or proxy a Redis use startRedis().
 */
export async function gameRedis() {
  return CLUSTER_MODE ? clusterRedis() : startRedis();
}

/** A TCP port that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts chessd with extra serve flags (and extra environment variables in
 * env). Unless the flags name a --redis (or withRedis is false: then it
 * runs with whatever the flags and env say, by default no Redis and no
 * games), the server gets this process's private redis-server, so games work. Unless they name a
 * --rate-limit-create (or --rate-limit-bulk-games), the per-address creation limits are off: the suites
 * create hundreds of games from 127.0.0.1, and the limit has tests of its own
 * (attacks_http.test.mjs; { defaultLimits: true } keeps the server's default). A
 * variable given as undefined in env is taken out of the server's environment
 * (CHESSD_TOKEN_SECRET: undefined starts it without a token secret even when
 * the test run has one exported). Unless the flags name an --engine (or env
 * a CHESSD_ENGINE), it runs with --engine none: the suites start hundreds of
 * servers, and each would start a Stockfish (the analysis tests name theirs);
 * --variant-engine none likewise, unless the flags (or env) name one.
 * command 'engine' starts `chessd engine` (an engine worker: the probes only)
 * in place of `chessd serve`, with the same flags. Resolves to
 * { port, base, proc, stderr(), stdout(), logLines(), waitForLog(pred), stop() }.
 */
export async function startServer(extraArgs = [], { env = {}, defaultLimits = false, withRedis = true, command = 'serve' } = {}) {
  assert.ok(existsSync(CHESSD_BIN), `chessd binary not found at ${CHESSD_BIN} (set CHESSD_BIN or run make)`);
  const namesRedis = extraArgs.some((a) => a === '--redis' || a.startsWith('--redis='));
  const redisArgs = namesRedis || !withRedis ? [] : ['--redis', await privateRedis()];
  const createArgs = defaultLimits || extraArgs.some((a) => a.startsWith('--rate-limit-create')) ? [] : ['--rate-limit-create', '0'];
  if (!defaultLimits && !extraArgs.some((a) => a.startsWith('--rate-limit-bulk-games'))) createArgs.push('--rate-limit-bulk-games', '0');
  const engineArgs = extraArgs.some((a) => a === '--engine' || a.startsWith('--engine=')) || 'CHESSD_ENGINE' in env ? [] : ['--engine', 'none'];
  const variantEngineArgs = extraArgs.some((a) => a === '--variant-engine' || a.startsWith('--variant-engine=')) || 'CHESSD_VARIANT_ENGINE' in env ? [] : ['--variant-engine', 'none'];
  const proc = spawn(CHESSD_BIN, [command, '--bind', '127.0.0.1', '--port', '0', ...redisArgs, ...createArgs, ...engineArgs, ...variantEngineArgs, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined)),
  });
  let stderr = '';
  let stdout = '';
  running.add(proc);
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => { running.delete(proc); resolve({ code, signal }); }));
  proc.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chessd did not report its port within ${START_TIMEOUT_MS} ms; stderr: ${stderr}`)), START_TIMEOUT_MS);
    proc.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
      const m = /chessd: listening on 127\.0\.0\.1 port (\d+) with (\d+) threads/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.on('error', (err) => { clearTimeout(timer); reject(err); });
    exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`chessd exited (code ${code}, signal ${signal}) before listening; stderr: ${stderr}`)); });
  });
  assert.ok(port > 0, 'chessd reported port 0');
  let stopped;
  const server = {
    port,
    base: `http://127.0.0.1:${port}`,
    proc,
    exited,
    stderr: () => stderr,
    /** Everything chessd wrote on stdout so far (the access log). */
    stdout: () => stdout,
    /** The access log so far, one parsed JSON object per line. */
    logLines: () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)),
    /**
     * Resolves to the first access log line (parsed) for which pred is true,
     * waiting for it up to timeoutMs (the line is written after the answer is sent).
     */
    async waitForLog(pred, timeoutMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = server.logLines().find(pred);
        if (line) return line;
        assert.ok(Date.now() < deadline, `no access log line matched within ${timeoutMs} ms; log:\n${stdout.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    /** Sends SIGTERM (once) and asserts a clean exit; resolves to the exit info. */
    stop() {
      if (!stopped) {
        stopped = (async () => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
          let timer;
          const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(null), STOP_TIMEOUT_MS); });
          const result = await Promise.race([exited, timeout]);
          clearTimeout(timer);
          if (!result) {
            proc.kill('SIGKILL');
            assert.fail(`chessd did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM; stderr: ${stderr}`);
          }
          assert.deepEqual(result, { code: 0, signal: null }, `chessd must exit 0 on SIGTERM; stderr: ${stderr}`);
          return result;
        })();
      }
      return stopped;
    },
  };
  return server;
}

/** The nginx binary: CHESSD_NGINX, else nginx on PATH, else /usr/sbin/nginx (Debian's, often not on a user's PATH). */
export function findNginx() {
  if (process.env.CHESSD_NGINX) return existsSync(process.env.CHESSD_NGINX) ? process.env.CHESSD_NGINX : null;
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'nginx');
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * The server-level lines that let event streams (GET /v1/games/{id}/events)
 * and long-polls (Prefer: wait=N, up to 60 s) through: every byte is passed
 * on as it comes instead of being gathered into nginx's buffers, and a
 * connection may stay silent longer than a long-poll's wait or the gap
 * between two heartbeats.
 */
const STREAMING_LINES = `
        # Streams: pass each event on at once (no buffering, no cache), and
        # wait for the upstream longer than any long-poll (60 s) or heartbeat
        # gap (15 s at most).
        proxy_buffering off;
        proxy_cache off;
        proxy_read_timeout 3600s;
        proxy_send_timeout 3600s;`;

/**
 * The nginx.conf of startNginx: round robin over `upstreamPorts` on
 * 127.0.0.1, listening on `port`; with streaming, STREAMING_LINES too.
 */
function nginxConfig(dir, port, upstreamPorts, { streaming = false } = {}) {
  return `# Written by tests/e2e/server.mjs startNginx: a private load balancer for one test run.
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections ${streaming ? 8192 : 1024}; }
http {
    access_log off;
    client_body_temp_path ${dir}/tmp/body;
    proxy_temp_path ${dir}/tmp/proxy;
    fastcgi_temp_path ${dir}/tmp/fastcgi;
    uwsgi_temp_path ${dir}/tmp/uwsgi;
    scgi_temp_path ${dir}/tmp/scgi;

    upstream chessd {
        # Round robin (the default). One failure takes a replica out for
        # fail_timeout; nginx has no active health checks.
${upstreamPorts.map((p) => `        server 127.0.0.1:${p} max_fails=1 fail_timeout=10s;`).join('\n')}
        # Idle connections kept open to the replicas. Their idle timeout stays
        # below chessd's --timeout (30 s by default), so nginx never sends a
        # request on a connection chessd is just closing.
        keepalive 32;
        keepalive_timeout 10s;
    }

    server {
        listen 127.0.0.1:${port};
        proxy_http_version 1.1;          # needed for keepalive to the upstreams
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_connect_timeout 2s;
${streaming ? STREAMING_LINES : '        proxy_read_timeout 30s;'}

        location / {
            # Writes go to @writes (error_page to a named location keeps the
            # method and the unread request body).
            error_page 418 = @writes;
            if ($request_method = POST) { return 418; }
            # Reads are idempotent: when a replica cannot be reached or dies
            # before answering, nginx asks the next one instead.
            proxy_next_upstream error timeout;
            proxy_pass http://chessd;
        }

        location @writes {
            # Never retry a POST on another replica. A POST that failed may
            # still have been applied (the replica wrote the move to Redis, then
            # died before answering); sending it again would make the client's
            # one request two writes without the client knowing. Only the
            # client can retry safely: with the same Idempotency-Key and
            # expected_version, so a second attempt gets the first answer or a
            # 409 and is never applied twice. So a failure here is a 502 to
            # the client. (nginx's default already skips non-idempotent
            # methods unless "non_idempotent" is listed; "off" says so outright.)
            proxy_next_upstream off;
            proxy_pass http://chessd;
        }
    }
}
`;
}

/**
 * Starts a private nginx (daemon off, one worker, access_log off, error log,
 * pid file and temp files in a fresh temporary directory) on a free loopback
 * port, balancing round robin over chessd replicas on 127.0.0.1 at
 * `upstreamPorts` (see nginxConfig). With streaming, it passes responses on
 * unbuffered and waits an hour for an upstream's next byte (for event streams
 * and long-polls). Fails the test when nginx is not installed. Resolves to
 * { port, base, dir, proc, config, errorLog(), stop() } once GET /healthz
 * through it answers 200.
 */
export async function startNginx(upstreamPorts, { streaming = false } = {}) {
  const bin = findNginx();
  assert.ok(bin, 'nginx is not installed (looked for CHESSD_NGINX, nginx on PATH, /usr/sbin/nginx): the scale-out ' +
    'tests need it as the load balancer. Install the Debian package nginx (apt-get install nginx; ' +
    '`make deps DEB_PACKAGES=nginx` does it) or set CHESSD_NGINX.');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chessd-e2e-nginx-'));
  tempDirs.add(dir);
  // Started as root, nginx runs its worker as an unprivileged user, which must reach the temp directories.
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'tmp'));
  const errorLog = () => (existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const config = nginxConfig(dir, port, upstreamPorts, { streaming });
    writeFileSync(path.join(dir, 'nginx.conf'), config);
    writeFileSync(path.join(dir, 'error.log'), '');
    const proc = spawn(bin, ['-p', `${dir}/`, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(proc);
    let output = '';
    proc.stdout.setEncoding('utf8').on('data', (d) => { output += d; });
    proc.stderr.setEncoding('utf8').on('data', (d) => { output += d; });
    const exited = new Promise((resolve) => proc.on('exit', (code, signal) => { running.delete(proc); resolve({ code, signal }); }));
    proc.on('error', (err) => { output += String(err); });
    const up = await (async () => {
      const deadline = Date.now() + START_TIMEOUT_MS;
      while (Date.now() < deadline) {
        if (proc.exitCode !== null || proc.signalCode !== null) return false;
        try {
          const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
          await res.arrayBuffer();
          if (res.status === 200) return true;
        } catch { /* not listening yet */ }
        await new Promise((r) => setTimeout(r, 20));
      }
      return false;
    })();
    if (up) {
      return {
        port,
        base: `http://127.0.0.1:${port}`,
        dir,
        proc,
        config,
        exited,
        errorLog,
        /** Fast shutdown (SIGTERM); resolves when nginx has exited. */
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
          return exited;
        },
      };
    }
    proc.kill('SIGKILL');
    await exited;
    const why = `${output}${errorLog()}`;
    // Another process may have taken the free port in between: try another.
    assert.ok(/Address already in use/.test(why) && attempt < 4, `nginx did not start on port ${port}: ${why}`);
  }
}
