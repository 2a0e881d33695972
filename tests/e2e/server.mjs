// Starts and stops a real chessd for a test file: `chessd serve --bind
// 127.0.0.1 --port 0` (binary from CHESSD_BIN, default build/chessd relative
// to the repository root), the port read from the "listening" line on stderr,
// the JSON access log collected from stdout, and SIGTERM at the end with the
// exit status asserted to be 0. Each test process also runs one throwaway
// redis-server for the servers it starts (readiness checks the game store).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
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

/** Starts (once) a throwaway redis-server on a free loopback port; resolves to its URL. */
export function privateRedis() {
  redis ??= (async () => {
    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      const proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
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
      if (ready) {
        // Let the test process end while redis still runs; the exit hook kills it.
        proc.stdout.unref();
        proc.stderr.unref();
        proc.unref();
        return `redis://127.0.0.1:${port}/0`;
      }
      proc.kill('SIGKILL');
      assert.ok(attempt < 2, `cannot start ${REDIS_SERVER} (redis-server is installed by make deps; set CHESSD_REDIS_SERVER)`);
    }
  })();
  return redis;
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
 * Starts chessd with extra serve flags. Unless the flags name a --redis, the
 * server gets this process's private redis-server, so /readyz can be ready. Resolves to
 * { port, base, proc, stderr(), logLines(), waitForLog(pred), stop() }.
 */
export async function startServer(extraArgs = []) {
  assert.ok(existsSync(CHESSD_BIN), `chessd binary not found at ${CHESSD_BIN} (set CHESSD_BIN or run make)`);
  const redisArgs = extraArgs.some((a) => a.startsWith('--redis')) ? [] : ['--redis', await privateRedis()];
  const proc = spawn(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', ...redisArgs, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env },
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
    /** The access log so far, one parsed JSON object per line. */
    logLines: () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)),
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
