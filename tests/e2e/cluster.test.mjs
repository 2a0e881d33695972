// Games on a real Redis Cluster (3 masters, a replica each; cluster.mjs)
// under load, through two chessd replicas: slots resharded while clients
// play, a planned failover (CLUSTER FAILOVER) and a crashed master (SIGKILL).
// Every move a client sends is acknowledged (200) or refused with a problem;
// the test keeps each game's moves as the answers gave them and checks the
// stored games against them: none applied twice, none lost (after a crash,
// only moves acknowledged in the moments before it, the window k8s/README.md
// documents). The counts and the window of 503 answers are printed as test
// diagnostics.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Chess } from 'chess.js';
import { startServer } from './server.mjs';
import { startCluster, keySlot } from './cluster.mjs';
import { get, post, sleep } from './http.mjs';
import { prng } from './prng.mjs';
import { mustOpenStream } from './stream.mjs';

const TOKEN_SECRET = 'e2e-cluster-token-secret-0123456789';
const NODE_TIMEOUT_MS = 1000;
const WORKERS = 8;
const GAMES_PER_WORKER = 3;
const MAX_PLIES = 120; // a game this long is left alone and a new one made

let cluster;
let servers = [];

before(async () => {
  cluster = await startCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });
  servers = await Promise.all([0, 1].map(() => startServer(['--redis', cluster.url, '--redis-timeout-ms', '500',
    '--redis-connect-timeout-ms', '500'], { env: { CHESSD_TOKEN_SECRET: TOKEN_SECRET } })));
});
after(async () => {
  for (const s of servers) await s?.stop();
  await cluster?.stop();
});

const auth = (token) => ({ authorization: `Bearer ${token}` });

/** A new game; its model: the moves as answered (acked) and those found applied after a refusal (settled). */
async function newGame(srv) {
  const res = await post(srv, '/v1/games', {});
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, chess: new Chess(), played: [], acks: [] };
}

/** Rebuilds a game's model from what the store holds (after a lost move). */
function resetTo(game, stored) {
  game.chess = new Chess();
  game.played = stored.moves.map((m) => m.uci);
  for (const uci of game.played) game.chess.move({ from: uci.slice(0, 2), to: uci.slice(2, 4), promotion: uci[4] });
  game.version = stored.version;
}

/**
 * The load: WORKERS loops, each playing its own games (so no two requests
 * race on a game) through both replicas in turn, until stop() is called.
 * Counts: moves acknowledged, refusals by code, moves found applied after a
 * refusal (the outcome was unknown), acknowledged moves found lost, and the
 * time of every refusal.
 */
function startLoad(seed, t) {
  const stats = { acked: 0, refused: {}, appliedAfterRefusal: 0, lost: [], refusalTimes: [], games: [] };
  let running = true;
  const settle = async (srv, game, uci) => {
    // What did the store make of it? Read until it answers.
    for (let i = 0; i < 200; i++) {
      const res = await get(srv, `/v1/games/${game.id}`).catch(() => null);
      if (res?.status === 200) return res.body;
      await sleep(50);
    }
    assert.fail(`game ${game.id} could not be read back after a refusal of ${uci}`);
  };
  const playOne = async (rand, srv, game) => {
    const moves = game.chess.moves({ verbose: true });
    const m = rand.pick(moves);
    const uci = m.from + m.to + (m.promotion ?? '');
    const side = game.chess.turn() === 'w' ? 'white' : 'black';
    const res = await post(srv, `/v1/games/${game.id}/moves`, { move: uci, expected_version: game.version },
      { headers: auth(game.tokens[side]) }).catch((err) => ({ status: 0, text: String(err), body: {} }));
    if (res.status === 200) {
      assert.equal(res.body.version, game.version + 1, `${game.id}: ${res.text}`);
      assert.equal(res.body.move.uci, uci);
      game.chess.move(m);
      game.played.push(uci);
      game.version++;
      game.acks.push({ version: game.version, uci, at: Date.now() });
      stats.acked++;
      return;
    }
    const code = res.body?.code ?? `http_${res.status}`;
    stats.refused[code] = (stats.refused[code] ?? 0) + 1;
    if (res.status === 503) stats.refusalTimes.push(Date.now());
    else assert.ok(res.status === 409 && code === 'version_conflict', `${game.id} ${uci}: unexpected ${res.status} ${res.text}`);
    const stored = await settle(srv, game, uci);
    const storedUci = stored.moves.map((x) => x.uci);
    if (stored.version === game.version + 1 && storedUci.at(-1) === uci
        && storedUci.slice(0, -1).join(' ') === game.played.join(' ')) {
      // Refused in answer (503 outcome_unknown, or a lost reply) but made once.
      game.chess.move(m);
      game.played.push(uci);
      game.version++;
      stats.appliedAfterRefusal++;
      return;
    }
    if (stored.version === game.version && storedUci.join(' ') === game.played.join(' ')) return; // not made: play on
    // The store is behind what was acknowledged: moves were lost (a crash before replication).
    assert.ok(stored.version < game.version, `${game.id}: stored version ${stored.version}, model ${game.version}`);
    assert.equal(game.played.slice(0, storedUci.length).join(' '), storedUci.join(' '), `${game.id}: stored moves are not a prefix of the played ones`);
    for (const ack of game.acks.filter((a) => a.version > stored.version)) stats.lost.push({ id: game.id, ...ack });
    game.acks = game.acks.filter((a) => a.version <= stored.version);
    resetTo(game, stored);
  };
  const worker = async (w) => {
    const rand = prng(seed * 100 + w);
    const games = [];
    for (let i = 0; i < GAMES_PER_WORKER; i++) games.push(await newGame(servers[(w + i) % servers.length]));
    stats.games.push(...games);
    for (let n = 0; running; n++) {
      const i = n % games.length;
      if (games[i].chess.isGameOver() || games[i].played.length >= MAX_PLIES) {
        const fresh = await newGame(servers[n % servers.length]).catch(() => null);
        if (!fresh) { await sleep(50); continue; }
        games[i] = fresh;
        stats.games.push(fresh);
      }
      await playOne(rand, servers[n % servers.length], games[i]);
    }
  };
  const done = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  const stop = async () => { running = false; await done; return stats; };
  // Resolves once every worker has its games and the load has run for ms more.
  const warm = async (ms) => {
    for (let i = 0; i < 400 && stats.games.length < WORKERS * GAMES_PER_WORKER; i++) await sleep(25);
    assert.ok(stats.games.length >= WORKERS * GAMES_PER_WORKER, 'the load made its games');
    await sleep(ms);
  };
  // A test that fails midway still stops its load before the servers go.
  t.after(() => { running = false; return done.catch(() => {}); });
  return { stats, stop, warm };
}

/** Every game as stored must hold exactly the moves its model has: none twice, none missing. */
async function checkStored(stats) {
  for (const game of stats.games) {
    const res = await get(servers[0], `/v1/games/${game.id}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.moves.map((m) => m.uci).join(' '), game.played.join(' '), `game ${game.id}`);
    assert.equal(res.body.version, 1 + game.played.length, `game ${game.id}`);
  }
}

/** The span of the 503 answers that came after `since` (ms), or 0. */
const refusalWindow = (stats, since) => {
  const times = stats.refusalTimes.filter((t) => t >= since);
  return times.length ? times.at(-1) - times[0] : 0;
};

const summary = (stats) => `${stats.acked} moves acknowledged, refusals ${JSON.stringify(stats.refused)}, `
  + `${stats.appliedAfterRefusal} found made after a refusal, ${stats.lost.length} acknowledged and lost, ${stats.games.length} games`;

test('games land on all three masters, and the load plays through both replicas', async (t) => {
  const load = startLoad(1, t);
  await load.warm(1500);
  // Enough moves to spread over the slots, however slow the machine: a count, not a rate.
  for (let i = 0; i < 400 && load.stats.acked <= 100; i++) await sleep(50);
  const stats = await load.stop();
  await checkStored(stats);
  const masters = await cluster.masters();
  assert.equal(masters.length, 3);
  for (const m of masters) {
    const size = await cluster.command(m.port, 'DBSIZE');
    assert.ok(size > 0, `master ${m.port} holds no key`);
  }
  const slots = new Set(stats.games.map((g) => keySlot(`{${g.id}}`)));
  assert.ok(slots.size > 10);
  assert.equal(stats.lost.length, 0);
  assert.ok(stats.acked > 100, summary(stats));
});

test('resharding under load: every move acknowledged or refused, none applied twice, none lost', async (t) => {
  const load = startLoad(2, t);
  await load.warm(500);
  // Streams on the other replica than half the moves: every change must reach them, slots moving or not.
  const watched = load.stats.games.slice(0, 12);
  const streams = await Promise.all(watched.map((g) => mustOpenStream(servers[1], g.id)));
  t.after(() => { for (const s of streams) s.close(); });
  const masters = await cluster.masters();
  const ownerBefore = new Map();
  for (const g of load.stats.games) ownerBefore.set(g.id, (await cluster.slotOwner(keySlot(`{${g.id}}`)))?.port);
  const started = Date.now();
  await cluster.reshard({ from: masters[0], to: masters[1], slots: 2000 });
  await cluster.reshard({ from: masters[1], to: masters[2], slots: 3000 });
  const reshardMs = Date.now() - started;
  await sleep(500);
  const stats = await load.stop();
  await checkStored(stats);
  let resyncs = 0;
  for (const [i, stream] of streams.entries()) {
    const g = watched[i];
    await stream.waitFor((d) => d.version === g.version, 5000, `version ${g.version} of ${g.id}`).catch(() => {});
    stream.assertClean();
    const versions = stream.datas.map((d) => d.version);
    assert.equal(versions.at(-1), g.version, `the stream of ${g.id} ends at its stored version: ${stream.summary()}`);
    for (let k = 1; k < versions.length; k++) assert.ok(versions[k] > versions[k - 1], `${g.id}: versions ${versions.join(',')}`);
    // Each change comes as a change event, unless the subscription was lost (a slot moved): then a snapshot.
    resyncs += stream.datas.slice(1).filter((d) => d.type === 'game').length;
    for (let k = 1; k < stream.datas.length; k++) {
      if (stream.datas[k].type === 'change') assert.ok(versions[k] === versions[k - 1] + 1, `${g.id}: a change skipped a version`);
    }
  }
  let moved = 0;
  for (const [id, port] of ownerBefore) if ((await cluster.slotOwner(keySlot(`{${id}}`)))?.port !== port) moved++;
  const metrics = (await get(servers[0], '/metrics')).text + (await get(servers[1], '/metrics')).text;
  const redirects = [...metrics.matchAll(/^chessd_redis_redirects_total (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  t.diagnostic(`resharding (2000 + 3000 slots, ${reshardMs} ms): ${summary(stats)}; ${moved} of ${ownerBefore.size} `
    + `games changed master; ${redirects} MOVED/ASK followed; ${streams.length} streams on the other replica saw every `
    + `version (${resyncs} snapshots after a lost subscription)`);
  assert.equal(stats.lost.length, 0, 'no acknowledged move may be lost to a reshard');
  assert.ok(moved > 0, 'some games under load changed master');
  assert.ok(redirects > 0, 'the replicas followed redirections');
  assert.ok(stats.acked > 100, summary(stats));
});

test('CLUSTER FAILOVER under load loses no acknowledged move, and play goes on', async (t) => {
  const load = startLoad(3, t);
  await load.warm(500);
  const replica = cluster.nodes.find((n) => n.alive && n.role === 'replica');
  const started = Date.now();
  await cluster.failover(replica.port);
  const failoverMs = Date.now() - started;
  const ackedAtFailover = load.stats.acked;
  await sleep(1000);
  const stats = await load.stop();
  await checkStored(stats);
  t.diagnostic(`CLUSTER FAILOVER (${failoverMs} ms): ${summary(stats)}; 503 answers spanned ${refusalWindow(stats, started)} ms`);
  assert.equal(stats.lost.length, 0);
  assert.ok(stats.acked > ackedAtFailover, 'moves acknowledged after the failover');
});

test('a master killed under load: 503 for a bounded window, lost moves only from just before the crash, then play goes on', async (t) => {
  const load = startLoad(4, t);
  await load.warm(500);
  const masters = await cluster.masters();
  // A master whose games are being played.
  const victim = masters.find((m) => load.stats.games.some((g) => m.slots.some(([a, b]) => {
    const s = keySlot(`{${g.id}}`);
    return a <= s && s <= b;
  }))) ?? masters[0];
  const victimSlots = victim.slots.map(([a, b]) => [a, b]); // the harness forgets them once the replica took over
  const killedAt = Date.now();
  cluster.kill(victim.port);
  await cluster.waitOk({ timeoutMs: 20000 });
  const recoveredAt = Date.now();
  const ackedAtRecovery = load.stats.acked;
  await sleep(1500);
  const stats = await load.stop();
  await checkStored(stats);
  const lateAcks = stats.lost.filter((l) => l.at < killedAt - NODE_TIMEOUT_MS);
  // How long the crashed master's games could not be played: from the crash to their first move acknowledged after it.
  const onVictim = (g) => victimSlots.some(([a, b]) => { const s = keySlot(`{${g.id}}`); return a <= s && s <= b; });
  const refusalsAfter = stats.refusalTimes.filter((x) => x >= killedAt);
  const since = refusalsAfter.length ? refusalsAfter[0] : killedAt; // a move answered just after the crash was made before it
  const firstAfter = Math.min(...stats.games.filter(onVictim).flatMap((g) => g.acks.filter((a) => a.at > since).map((a) => a.at)));
  const outageMs = firstAfter - killedAt;
  t.diagnostic(`SIGKILL of master ${victim.port}: replica promoted after ${recoveredAt - killedAt} ms; ${summary(stats)}; `
    + `its games took moves again ${outageMs} ms after the crash (503 answers from ${refusalsAfter.length ? refusalsAfter[0] - killedAt : '-'} `
    + `to ${refusalsAfter.length ? refusalsAfter.at(-1) - killedAt : '-'} ms after it); lost moves acknowledged `
    + `${stats.lost.map((l) => killedAt - l.at).join(', ') || 'none'} ms before the crash`);
  assert.equal(lateAcks.length, 0, 'only moves acknowledged within cluster-node-timeout before the crash may be lost');
  assert.ok(Number.isFinite(outageMs) && outageMs < 20000, `the crashed master's games play again (${outageMs} ms)`);
  assert.ok(stats.acked > ackedAtRecovery, 'moves acknowledged after the failover');
  // Every game the load was playing takes a move again.
  for (const g of stats.games.slice(-WORKERS * GAMES_PER_WORKER)) {
    if (g.chess.isGameOver()) continue;
    const m = g.chess.moves({ verbose: true })[0];
    const side = g.chess.turn() === 'w' ? 'white' : 'black';
    const res = await post(servers[1], `/v1/games/${g.id}/moves`, { move: m.from + m.to + (m.promotion ?? ''), expected_version: g.version },
      { headers: auth(g.tokens[side]) });
    assert.equal(res.status, 200, `${g.id} after the failover: ${res.text}`);
  }
});
