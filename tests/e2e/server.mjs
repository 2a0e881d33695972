// Starts and stops a real chessd for a test file: `chessd serve --bind
// 127.0.0.1 --port 0` (binary from CHESSD_BIN, default build/chessd relative
// to the repository root), the port read from the "listening" line on stderr,
// the JSON access log collected from stdout, and SIGTERM at the end with the
// exit status asserted to be 0. Each test process also runs one throwaway
// redis-server for the servers it starts (readiness checks the game store);
// startRedis() gives a test a redis-server of its own that it may stop,
// restart (optionally with its data kept on disk), pause and resume, and
// redisCommands()/redisDump() read it over raw RESP.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
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
const STOP_TIMEOUT_MS = 15000;

let redis; // one private redis-server per test process, started on first use

// Temporary directories of persistent redis-servers, removed when the process exits.
const tempDirs = new Set();
process.on('exit', () => { for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true }); });

/**
 * Spawns redis-server on `port` with `args` and waits for "Ready to accept
 * connections"; resolves to the process, or null when it did not start.
 */
async function spawnRedis(port, args) {
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
 */
export async function startRedis({ persistent = false } = {}) {
  let dir = null;
  if (persistent) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chessd-e2e-redis-'));
    tempDirs.add(dir);
  }
  const args = persistent
    ? ['--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--save', '', '--appendonly', 'no'];
  let port;
  let proc;
  for (let attempt = 0; !proc; attempt++) {
    port = await freePort();
    proc = await spawnRedis(port, args);
    assert.ok(proc || attempt < 2, `cannot start ${REDIS_SERVER} (redis-server is installed by make deps; set CHESSD_REDIS_SERVER)`);
  }
  const url = `redis://127.0.0.1:${port}/0`;
  const handle = {
    port,
    url,
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
        const next = await spawnRedis(port, args);
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
 * for error replies.
 */
export function redisCommands(port, commands) {
  const frame = (cmd) => {
    const parts = [`*${cmd.length}\r\n`];
    for (const arg of cmd) {
      const b = Buffer.from(String(arg));
      parts.push(`$${b.length}\r\n`, b, '\r\n');
    }
    return Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p))));
  };
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const replies = [];
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`redis on port ${port} did not answer`)); }, 5000);
    socket.on('error', (err) => { clearTimeout(timer); reject(err); });
    socket.on('connect', () => socket.write(Buffer.concat(commands.map(frame))));
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
  keys.forEach((k, i) => out.set(k, { type: types[i], values: [values[i]].flat(Infinity).map(String) }));
  return out;
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
 * env). Unless the flags name a --redis, the server gets this process's
 * private redis-server, so /readyz can be ready. Resolves to
 * { port, base, proc, stderr(), stdout(), logLines(), waitForLog(pred), stop() }.
 */
export async function startServer(extraArgs = [], { env = {} } = {}) {
  assert.ok(existsSync(CHESSD_BIN), `chessd binary not found at ${CHESSD_BIN} (set CHESSD_BIN or run make)`);
  const redisArgs = extraArgs.some((a) => a === '--redis' || a.startsWith('--redis=')) ? [] : ['--redis', await privateRedis()];
  const proc = spawn(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', ...redisArgs, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
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
