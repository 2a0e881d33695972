// Helpers shared by the attacks_*.test.mjs files: a server per test that is
// killed rather than stopped when the test fails, polling with a deadline,
// a process's CPU time and open descriptors, Prometheus samples, and a
// `chessd serve` run to its exit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { startServer, CHESSD_BIN } from './server.mjs';
import { parseRawResponse, sleep } from './http.mjs';
import { checkResponse, spec, validatorFor } from './openapi.mjs';


/**
 * Starts chessd with `args`, runs fn(server), then stops it with SIGTERM
 * (asserting a clean exit). When fn fails the server is killed instead: a
 * server that is still counting a perft or holding stuck connections must
 * not turn one failure into a second one at shutdown.
 */
export async function withServer(args, fn, opts) {
  const server = await startServer(args, opts);
  let ok = false;
  try {
    const result = await fn(server);
    ok = true;
    return result;
  } finally {
    if (ok) {
      await server.stop();
    } else {
      server.proc.kill('SIGKILL');
      await server.exited;
    }
  }
}

/** Polls pred every 25 ms until it is true; fails with `what` after timeoutMs. */
export async function waitFor(pred, timeoutMs, what) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await pred()) return;
    assert.ok(performance.now() < deadline, `timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** CPU seconds (user + system) the process has used, from /proc/<pid>/stat (100 ticks a second). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Open file descriptors of a process. */
export const openFds = (pid) => readdirSync(`/proc/${pid}/fd`).length;

/** The descriptor count once two readings 100 ms apart agree (at most 2 s). */
export async function settledFds(pid) {
  let last = openFds(pid);
  for (let i = 0; i < 20; i++) {
    await sleep(100);
    const now = openFds(pid);
    if (now === last) return now;
    last = now;
  }
  return last;
}

/** The sum of every sample of a Prometheus metric in exposition text, or null when there is none. */
export function metricValue(text, name) {
  let sum = null;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (m && m[1] === name) sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

/** Checks a problem document against components.schemas.Problem alone (for paths the router must not map). */
export function checkProblemSchema(res, label) {
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, `${label}: expected a problem document, got ${JSON.stringify(res.text.slice(0, 200))}`);
  const body = JSON.parse(res.text);
  const validate = validatorFor(spec().doc.components.schemas.Problem, 'components.schemas.Problem');
  assert.ok(validate(body), `${label}: the body does not match components.schemas.Problem: ${JSON.stringify(validate.errors)}`);
  assert.equal(body.status, res.status);
  return body;
}

export const POSITION_4 = 'r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1';
export const perftPath = (depth, fen) => `/v1/perft?depth=${depth}&fen=${encodeURIComponent(fen)}`;
export const json = { 'content-type': 'application/json' };

/**
 * Writes pieces (a POST /v1/position head with an over-cap Content-Length,
 * and its body) to a new connection to port before reading anything, as
 * Python's http.client and urllib do, and resolves to 'ok' for a 413
 * payload_too_large answer that openapi.yaml documents, else to what
 * happened instead (a reset, no answer within waitMs, another answer; a
 * timeout says whether the connection had connected and how many bytes of
 * the request the kernel had taken).
 */
export function overCapPost(port, pieces, waitMs = 10000) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks = [];
    let settled = false;
    const done = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve(outcome);
    };
    let connectedMs = null;
    const started = performance.now();
    const timer = setTimeout(() => done(`no answer and no close within ${waitMs / 1000} s (${Buffer.concat(chunks).length} bytes; `
      + `${connectedMs === null ? 'never connected' : `connected after ${connectedMs.toFixed(0)} ms`}, `
      + `${s.bytesWritten} request bytes written)`), waitMs);
    s.pause(); // nothing is read until the whole request has been written
    s.on('connect', () => {
      connectedMs = performance.now() - started;
      pieces.forEach((piece, i) => s.write(piece, i < pieces.length - 1 ? undefined : (err) => { if (!err) s.resume(); }));
    });
    s.on('data', (d) => chunks.push(d));
    s.on('error', (err) => done(`${err.code ?? err.message} after ${Buffer.concat(chunks).length} answer bytes`));
    s.on('end', () => {
      try {
        const res = parseRawResponse(Buffer.concat(chunks).toString('latin1'));
        res.body = checkResponse({ method: 'POST', path: '/v1/position', status: res.status, headers: res.headers, body: res.text });
        done(res.status === 413 && res.body.code === 'payload_too_large' ? 'ok' : `${res.status} ${res.text.slice(0, 100)}`);
      } catch (err) {
        done(`unreadable answer: ${err.message}`);
      }
    });
  });
}

/** Runs `chessd serve args` (expected to exit by itself within 5 s); resolves to { code, signal, stderr, stdout }. */
export function runServe(args, env = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(CHESSD_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env },
    });
    let stderr = '';
    let stdout = '';
    proc.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    proc.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`chessd serve ${args.join(' ')} did not exit within 5 s; stderr: ${stderr}`)); }, 5000);
    proc.on('error', (err) => { clearTimeout(timer); reject(err); });
    proc.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stderr, stdout }); });
  });
}
