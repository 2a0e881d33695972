// POST /v1/pgn with bodies past --max-body: a 100 MiB body sent chunked is
// kept in a file and answered as NDJSON game by game, while the process's
// resident memory (/proc/PID/status VmRSS, sampled every 20 ms) stays within
// 16 MiB of what it was idle; a bad game and one over the game bound fail
// alone, at their lines; and the bounds: --max-pgn-bytes, JSON and strict.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { startServer } from './server.mjs';
import { call, expectProblem } from './http.mjs';

const MiB = 1024 * 1024;
let server;
let small; // --max-pgn-bytes 1 MiB, --max-spool-bytes 1 MiB

before(async () => {
  server = await startServer([], { withRedis: false });
  small = await startServer(['--max-pgn-bytes', String(MiB), '--max-spool-bytes', String(MiB)], { withRedis: false });
});
after(async () => {
  await server?.stop();
  await small?.stop();
});

/** Under AddressSanitizer the resident memory is the sanitizer's (shadow, quarantine): not asserted. */
const sanitized = (pid) => /libasan|libclang_rt\.asan/.test(readFileSync(`/proc/${pid}/maps`, 'utf8'));
const rss = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

/** A good game with a comment of `pad` bytes: five lines, the movetext the fourth. */
const goodGame = (i, pad) => `[Event "g${i}"]\n[Result "*"]\n\n1. e4 e5 2. Nf3 {${'x'.repeat(pad)}} Nc6 (2... d6 3. d4) 3. Bb5 a6 *\n\n`;
const badGame = (i) => `[Event "g${i}"]\n[Result "*"]\n\n1. e4 e5 2. Ke3 Nc6 *\n\n`;
/** A game of over 1 MiB: 300 comments of 4000 bytes, all on its fourth line. */
const hugeGame = (i) => `[Event "g${i}"]\n[Result "*"]\n\n1. e4 ${`{${'y'.repeat(4000)}} `.repeat(300)}e5 *\n\n`;

/**
 * Sends the games made by next() (null at the end) as one chunked body and
 * reads the NDJSON answer line by line, sampling the server's RSS meanwhile.
 */
function streamPgn(target, next, pid) {
  return new Promise((resolve, reject) => {
    let peak = 0;
    const sampler = setInterval(() => { try { peak = Math.max(peak, rss(pid)); } catch { /* exited */ } }, 20);
    const req = http.request({ host: '127.0.0.1', port: target.port, method: 'POST', path: '/v1/pgn?moves=false',
      headers: { 'content-type': 'application/x-chess-pgn', accept: 'application/x-ndjson', 'transfer-encoding': 'chunked' } });
    req.on('error', (e) => { clearInterval(sampler); reject(e); });
    req.on('response', (res) => {
      const lines = [];
      let rest = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        const parts = (rest + d).split('\n');
        rest = parts.pop();
        for (const p of parts) lines.push(JSON.parse(p));
      });
      res.on('end', () => { clearInterval(sampler); resolve({ status: res.statusCode, type: res.headers['content-type'], lines, rest, peak }); });
      res.on('error', (e) => { clearInterval(sampler); reject(e); });
    });
    const pump = () => {
      for (;;) {
        const chunk = next();
        if (chunk === null) { req.end(); return; }
        if (!req.write(chunk)) { req.once('drain', pump); return; }
      }
    };
    pump();
  });
}

test('a 100 MiB chunked body is answered game by game as NDJSON within 16 MiB of idle memory', async (t) => {
  const pid = server.proc.pid;
  const asan = sanitized(pid);
  const total = (asan ? 20 : 100) * MiB; // the sanitizers' build reads 5x slower: a fifth of it
  const BAD = 1000, HUGE = 2000;
  await new Promise((r) => setTimeout(r, 200));
  const idle = rss(pid);
  let sent = 0, games = 0, line = 1;
  const lineOf = new Map(); // game index -> the line of its movetext
  const next = () => {
    if (sent >= total) return null;
    const text = games === BAD ? badGame(games) : games === HUGE ? hugeGame(games) : goodGame(games, 3000);
    lineOf.set(games, line + 3);
    line += 5;
    sent += text.length;
    games++;
    return text;
  };
  const started = Date.now();
  const res = await streamPgn(server, next, pid);
  t.diagnostic(`${(sent / MiB).toFixed(1)} MiB, ${games} games in ${Date.now() - started} ms; RSS idle ${(idle / MiB).toFixed(1)} MiB, peak ${(res.peak / MiB).toFixed(1)} MiB`);
  assert.equal(res.status, 200);
  assert.match(res.type, /^application\/x-ndjson/);
  assert.equal(res.rest, '', 'the answer ends with a whole line');
  const odd = res.lines.findIndex((g, i) => i !== HUGE && g.tags.Event !== `g${i}`);
  assert.equal(odd, -1, `the first game out of place: ${JSON.stringify(res.lines[odd])?.slice(0, 300)}`);
  assert.equal(res.lines.length, games, 'a line for every game');
  res.lines.forEach((g, i) => assert.equal(g.index, i));
  for (const [i, g] of res.lines.entries()) {
    if (i === BAD || i === HUGE) continue;
    assert.equal(g.tags.Event, `g${i}`);
    assert.equal(g.position.fen, 'r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4', `game ${i}`);
    assert.equal(g.moves, undefined, 'moves=false');
  }
  const bad = res.lines[BAD].errors[0];
  assert.deepEqual([bad.code, bad.move, bad.line, bad.column], ['illegal_move', 'Ke3', lineOf.get(BAD), 13]);
  const huge = res.lines[HUGE];
  assert.deepEqual([huge.errors[0].code, huge.errors[0].pgn_error], ['pgn_too_large', 'game_too_large']);
  assert.equal(huge.errors[0].line, lineOf.get(HUGE) - 3, 'the game over the bound is named by its first line');
  if (asan) t.diagnostic('AddressSanitizer build: RSS not asserted');
  else assert.ok(res.peak - idle <= 16 * MiB, `RSS grew ${((res.peak - idle) / MiB).toFixed(1)} MiB over idle`);
});

test('a body over --max-pgn-bytes is 413, by its length or as its chunks pass it', async () => {
  const body = goodGame(0, 3000).repeat(Math.ceil((MiB + 1) / goodGame(0, 3000).length));
  expectProblem(await call(small, 'POST', '/v1/pgn', { headers: { 'content-type': 'application/x-chess-pgn' }, body }),
    413, 'payload_too_large');
  let sent = 0;
  const res = await streamPgn(small, () => {
    if (sent > 2 * MiB) return null;
    sent += 3100;
    return goodGame(1, 3000);
  }, small.proc.pid).catch((e) => ({ error: e }));
  // cut off with 413 as the chunks pass the bound, or the connection closed on the rest
  assert.ok(res.error || res.status === 413, `status ${res.status}`);
  // under the bound but over --max-body: read from its file, in one JSON answer
  const fits = goodGame(0, 3000).repeat(200);
  const ok = await call(small, 'POST', '/v1/pgn?moves=false', { headers: { 'content-type': 'application/x-chess-pgn' }, body: fits });
  assert.equal(ok.status, 200, ok.text.slice(0, 300));
  assert.deepEqual([ok.body.read, ok.body.failed, ok.body.games.length], [200, 0, 200]);
  // the files of all requests together are bounded too: while one body of 0.6 MiB is held, a second waits
  const holder = http.request({ host: '127.0.0.1', port: small.port, method: 'POST', path: '/v1/pgn',
    headers: { 'content-type': 'application/x-chess-pgn', 'transfer-encoding': 'chunked' } });
  holder.on('error', () => {});
  holder.write(goodGame(0, 3000).repeat(200));
  await new Promise((r) => setTimeout(r, 300));
  const refused = expectProblem(await call(small, 'POST', '/v1/pgn', { headers: { 'content-type': 'application/x-chess-pgn' },
    body: goodGame(0, 3000).repeat(200) }), 503, 'unavailable');
  assert.match(refused.detail, /max-spool-bytes/);
  holder.destroy();
});

test('a body over --max-body must be PGN text, and cannot be strict', async () => {
  const pgn = goodGame(0, 3000).repeat(30); // about 90 KiB
  expectProblem(await call(server, 'POST', '/v1/pgn', { headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pgn }) }), 415, 'unsupported_media_type');
  expectProblem(await call(server, 'POST', '/v1/pgn?strict=true', { headers: { 'content-type': 'application/x-chess-pgn' },
    body: pgn }), 400, 'invalid_parameter');
  const written = await call(server, 'POST', '/v1/pgn', { headers: { 'content-type': 'application/x-chess-pgn',
    accept: 'application/x-chess-pgn' }, body: pgn });
  assert.equal(written.status, 200);
  assert.equal((written.text.match(/^\[Event /gm) ?? []).length, 30, 'every game written back');
});
