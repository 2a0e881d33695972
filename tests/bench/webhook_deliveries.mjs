// Part 2 of tests/bench/webhook_bench.sh: deliveries a second. Games with
// three subscriptions each play their plies on a replica that delivers
// nothing; then a replica that delivers starts, and the time until the
// receiver (every signature checked) holds every event is measured, with
// that replica's CPU from /proc. Prints "deliveries/s: N" and "chessd cpu us
// per delivery: N"; exits 1 on a missing or unsigned event.
//
//   usage: CHESSD_BIN=... node webhook_deliveries.mjs CHESSD KEYS_FILE KEY GAMES PLIES WORKERS
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { privateRedis, startServer } from '../e2e/server.mjs';
import { startReceiver } from '../e2e/support/webhook_receiver.mjs';

const [, , , keysFile, key, gamesText, pliesText, workersText] = process.argv;
const GAMES = Number(gamesText), PLIES = Number(pliesText), WORKERS = Number(workersText), SUBS = 3;
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
const die = (message) => { console.error(`webhook_bench: FAIL: ${message}`); process.exit(1); };

function call(server, method, path, body, token) {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload),
        authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => { text += d; }).on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A line of legal plies that never repeats a position: a pawn move each, then the knights out and back (up to 42). */
const PAWNS = [['e2e4', 'e7e5'], ['d2d3', 'd7d6'], ['c2c3', 'c7c6'], ['h2h3', 'h7h6'], ['a2a3', 'a7a6'], ['b2b3', 'b7b6'],
  ['g2g3', 'g7g6']];
const line = (n) => PAWNS.flatMap((pair) => [...pair, 'g1f3', 'g8f6', 'f3g1', 'f6g8']).slice(0, n);

/** User and system CPU of pid, in microseconds. */
function cpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / 100; // clock ticks of 10 ms
}

const redis = await privateRedis();
const secretOf = new Map(); // each subscription's secret, by its id (the payload names it)
const receiver = await startReceiver({ host: '127.0.0.2', secretFor: (r) => secretOf.get(JSON.parse(r.text).data.subscription) });
const common = ['--redis', redis, '--service-keys-file', keysFile, '--webhook-allow', '127.0.0.2/32', '--rate-limit-ip', '0', '--rate-limit-token', '0'];
const player = await startServer([...common, '--webhook-workers', '0']);

const games = [];
for (let i = 0; i < GAMES; i++) {
  const hook = { url: `${receiver.url}/hook` };
  const res = await call(player, 'POST', '/v1/games', { webhooks: [hook, hook, hook] }, key);
  if (res.status !== 201) die(`POST /v1/games: ${res.status} ${res.text.slice(0, 300)}`);
  const game = JSON.parse(res.text);
  for (const h of game.webhooks) secretOf.set(h.id, h.secret);
  games.push(game);
}
const plies = line(PLIES);
await Promise.all(games.map(async (game) => {
  let version = game.version;
  for (let i = 0; i < plies.length; i++) {
    const token = i % 2 ? game.tokens.black : game.tokens.white;
    const res = await call(player, 'POST', `/v1/games/${game.id}/moves`, { move: plies[i], expected_version: version }, token);
    if (res.status !== 200) die(`a move: ${res.status} ${res.text.slice(0, 300)}`);
    version = JSON.parse(res.text).version;
  }
}));
const expected = GAMES * PLIES * SUBS;
console.log(`webhook_bench: ${GAMES} games x ${PLIES} plies x ${SUBS} subscriptions queued: ${expected} events`);

const started = Date.now();
const deliverer = await startServer([...common, '--webhook-workers', String(WORKERS)]);
const cpuBefore = cpuUs(deliverer.proc.pid);
const nodeBefore = process.cpuUsage();
try {
  await receiver.waitForRequests(expected, 120000);
} catch (error) {
  die(error.message);
}
const seconds = (Date.now() - started) / 1000;
const cpu = cpuUs(deliverer.proc.pid) - cpuBefore;
const nodeUsed = process.cpuUsage(nodeBefore);
const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
const bad = receiver.requests.filter((r) => !r.verified);
if (bad.length) die(`${bad.length} requests whose signature does not verify: ${bad[0].verifyReason}`);
if (ids.size !== expected) die(`${ids.size} distinct webhook-ids, not ${expected}`);
console.log(`webhook_bench: ${receiver.requests.length} requests in ${seconds.toFixed(2)} s, ${ids.size} events, every signature verified`);
console.log(`deliveries/s: ${(expected / seconds).toFixed(0)}`);
console.log(`chessd cpu us per delivery: ${(cpu / expected).toFixed(1)}`);
console.log(`receiver cpu us per delivery: ${((nodeUsed.user + nodeUsed.system) / expected).toFixed(1)}`);
await deliverer.stop();
await player.stop();
await receiver.close();
process.exit(0);
