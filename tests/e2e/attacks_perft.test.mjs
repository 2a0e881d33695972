// Perft as an attack on the server: a count that would hold a connection
// thread runs on its own pool instead, a full pool queue is refused at once,
// and a count over the node budget is refused. Answers that come through
// http.mjs are checked against openapi.yaml.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { startServer, CHESSD_BIN } from './server.mjs';
import {
  get, post, nodeRequest, nodeRequestFrom, expectProblem, rawExchange, rawRequest, parseRawResponse,
  parseRawResponses, sleep, START_FEN, KIWIPETE,
} from './http.mjs';
import { checkResponse, spec, validatorFor } from './openapi.mjs';
import {
  withServer, waitFor, cpuSeconds, openFds, settledFds, metricValue, checkProblemSchema, runServe, POSITION_4, perftPath, json,
} from './attacks_lib.mjs';

// ---------------------------------------------------------------- A. perft

/**
 * Starts chessd with `args`, runs fn(server) and then kills it: these servers
 * are left counting perfts far bigger than a test can wait for (a drain would
 * wait for them), so the count itself is never awaited.
 */
async function withKilledServer(args, fn) {
  const server = await startServer(args);
  try {
    return await fn(server);
  } finally {
    server.proc.kill('SIGKILL');
    await server.exited;
  }
}

// Kiwipete to depth 6: 8,031,647,685 leaves, many seconds of counting even
// at full speed, so the pool stays busy for as long as a test samples.
const LONG_PERFT = perftPath(6, KIWIPETE);
const LONG_FLAGS = ['--max-perft-depth', '6', '--max-perft-nodes', '100000000000'];

describe('A. perft runs on its own pool, off the connection threads', () => {
  test('while two long perfts count, /healthz and 10 kept-alive connections answer within 100 ms', async () => {
    await withKilledServer(['--threads', '2', '--perft-threads', '2', ...LONG_FLAGS], async (server) => {
      const pid = server.proc.pid;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
      const pending = [];
      try {
        // Ten connections, opened and kept alive before the perfts start.
        const warm = await Promise.all(Array.from({ length: 10 }, () => nodeRequestFrom(server, { path: '/v1/position?legal_moves=false', agent })));
        const ports = new Set(warm.map((r) => r.socket.localPort));
        assert.equal(ports.size, 10, 'ten kept-alive connections are open before the perfts');

        const cpu0 = cpuSeconds(pid);
        let finished = 0;
        for (let i = 0; i < 2; i++) {
          const p = nodeRequestFrom(server, { path: LONG_PERFT, agent: false, timeoutMs: 600000 });
          p.then(() => { finished++; }, () => { finished++; });
          pending.push(p);
        }
        // Both are counting once the server burns CPU.
        await waitFor(() => cpuSeconds(pid) - cpu0 >= 0.5, 10000, 'the perfts to start counting');

        const cpuSampling = cpuSeconds(pid);
        let sampling = true;
        const slow = [];
        const kept = Array.from({ length: 10 }, async (_, w) => {
          let n = 0;
          while (sampling) {
            const res = await nodeRequestFrom(server, { path: '/v1/position?legal_moves=false', agent, timeoutMs: 1000 })
              .catch((err) => assert.fail(`kept-alive client ${w}, request ${n}, while the perfts run: ${err.message}`));
            assert.equal(res.status, 200);
            assert.equal(res.body.fen, START_FEN);
            assert.ok(ports.has(res.socket.localPort), `kept-alive client ${w} was given a new connection (local port ${res.socket.localPort})`);
            if (res.ms >= 100) slow.push(`kept-alive client ${w}, request ${n}: ${res.ms.toFixed(1)} ms`);
            n++;
            await sleep(200);
          }
          return n;
        });
        kept.forEach((p) => { pending.push(p); });
        const health = [];
        try {
          for (let i = 0; i < 20; i++) {
            const res = await nodeRequestFrom(server, { path: '/healthz', agent: false, timeoutMs: 1000 })
              .catch((err) => assert.fail(`/healthz sample ${i}, while the perfts run: ${err.message}`));
            assert.equal(res.status, 200);
            health.push(res.ms);
            assert.ok(res.ms < 100, `/healthz sample ${i} took ${res.ms.toFixed(1)} ms while the perfts run (samples so far: ${health.map((m) => m.toFixed(1)).join(', ')})`);
            await sleep(200);
          }
        } finally {
          sampling = false;
        }
        const counts = await Promise.all(kept);
        assert.equal(finished, 0, 'the perfts must still be counting when the sampling ends, or it proved nothing');
        // Still counting: they run below the connection threads' priority, so
        // on a busy machine they get little CPU, but they get some.
        assert.ok(cpuSeconds(pid) > cpuSampling, 'the perfts kept counting while the sampling ran');
        assert.deepEqual(slow, [], 'every request on a kept-alive connection must answer within 100 ms');
        assert.ok(counts.every((n) => n >= 5), `each kept-alive client made several requests: ${counts}`);
      } finally {
        pending.forEach((p) => p.catch(() => {}));
        agent.destroy();
      }
    });
  });

  test('with --perft-threads 1, one perft counting and sixteen queued, the eighteenth is refused at once with 503 unavailable and Retry-After', async () => {
    await withKilledServer(['--perft-threads', '1', ...LONG_FLAGS], async (server) => {
      const pid = server.proc.pid;
      const pending = [];
      const send = () => {
        const p = nodeRequestFrom(server, { path: LONG_PERFT, agent: false, timeoutMs: 600000 });
        pending.push(p);
        return p;
      };
      try {
        const cpu0 = cpuSeconds(pid);
        send();
        await waitFor(() => cpuSeconds(pid) - cpu0 >= 0.1, 10000, 'the first perft to start counting');
        let settled = 0;
        for (let i = 0; i < 16; i++) send().then(() => { settled++; }, () => { settled++; });
        // The sixteen race each other to the server: wait until its queue holds them all.
        const waiting = async () => metricValue((await get(server, '/metrics')).text, 'chessd_perft_waiting');
        await waitFor(async () => (await waiting()) === 16, 10000, 'sixteen perfts to be queued');
        // The queue takes sixteen; the next one has no room.
        const refused = await nodeRequestFrom(server, { path: LONG_PERFT, agent: false, timeoutMs: 10000 });
        expectProblem(refused, 503, 'unavailable');
        assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After: ${refused.headers['retry-after']}`);
        assert.equal(settled, 0, `the refusal came while all sixteen were still waiting (${settled} had an answer)`);
        assert.equal(await waiting(), 16, 'the refused perft was not queued');
        // Probes are not queued behind perft.
        assert.equal((await get(server, '/healthz')).status, 200);
      } finally {
        pending.forEach((p) => p.catch(() => {}));
      }
    });
  });

  test('a perft over --max-perft-nodes is refused with 422 perft_too_large naming the budget; one within it is counted', async () => {
    await withServer(['--max-perft-nodes', '100000'], async (server) => {
      const res = await nodeRequestFrom(server, { path: '/v1/perft?depth=4', agent: false, timeoutMs: 5000 });
      const problem = expectProblem(res, 422, 'perft_too_large');
      assert.equal(problem.budget, 100000, `budget: ${JSON.stringify(problem)}`);
      const ok = await get(server, '/v1/perft?depth=3');
      assert.equal(ok.status, 200);
      assert.equal(ok.body.nodes, 8902);
    });
  });
});
