// Reads what a soak run left in its temporary directory (tests/soak/soak.sh:
// events.jsonl, requests-*.jsonl and result-*.json from the clients, rss.jsonl,
// metrics-*.txt, the Redis key list, the access logs) and prints the summary,
// writes it to --summary (and the same figures as JSON beside it), and exits 1
// when an invariant failed.
import { createReadStream, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const opts = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([^=]+)=(.*)$/.exec(a);
  if (!m) throw new Error(`bad argument ${a}`);
  return [m[1], m[2]];
}));
const DIR = opts.dir;
const SUMMARY = opts.summary;
const CLIENTS_FAILED = Number(opts['clients-failed'] ?? 0);

const config = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8'));
const GRACE = config.grace_ms;
const events = readFileSync(path.join(DIR, 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const at = (name) => events.find((e) => e.event === name)?.t;
const T0 = at('traffic_start');
const END = at('traffic_end');
const redisDown = at('redis_stopping');
const redisUp = at('redis_up');
const sigterm = at('replica_sigterm');
const replicaUp = at('replica_up');
const sec = (t) => (t === undefined ? '?' : ((t - T0) / 1000).toFixed(1));

// Phases by the time an attempt started.
const phases = [
  { name: 'before_outage', from: T0, to: redisDown },
  { name: 'redis_outage', from: redisDown, to: redisUp + GRACE, note: `Redis stopped, +${GRACE / 1000} s after it is back` },
  { name: 'after_outage', from: redisUp + GRACE, to: sigterm },
  { name: 'replica_restart', from: sigterm, to: replicaUp + GRACE, note: `replica B SIGTERM to ready again, +${GRACE / 1000} s` },
  { name: 'after_restart', from: replicaUp + GRACE, to: END },
  { name: 'wind_down_verify', from: END, to: Infinity, note: 'retries finishing after the end, then every game read back' },
];
const phaseOf = (rec) => (rec.k.startsWith('verify') ? phases[5] : phases.find((p) => rec.t0 >= p.from && rec.t0 < p.to) ?? phases[0]);
const overlaps = (rec, from, to) => rec.t1 >= from && rec.t0 <= to;
const inRedisWindow = (rec) => overlaps(rec, redisDown, redisUp + GRACE);
const inRestartWindow = (rec) => overlaps(rec, sigterm, replicaUp + GRACE);

// ---------------------------------------------------------------- requests

const byStatus = {};
const byPhase = Object.fromEntries(phases.map((p) => [p.name, { statuses: {}, durations: [] }]));
const byKind = {};
const allDurations = [];
let total = 0;
let allowed503 = 0;
const badFiveXX = []; // 5xx other than 503 (the first 20)
const outside503 = []; // 503 outside the outage window (the first 10)
const outside503BySecond = {}; // whole second from traffic start -> [count, min ms, max ms]
const badConn = [];
let badFiveXXCount = 0;
let outside503Count = 0;
let badConnCount = 0;
let restartConnErrors = 0;
const bump = (m, k, n = 1) => { m[k] = (m[k] ?? 0) + n; };

for (const file of readdirSync(DIR).filter((f) => /^requests-\d+\.jsonl$/.test(f)).sort()) {
  const rl = readline.createInterface({ input: createReadStream(path.join(DIR, file)), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line) continue;
    const rec = JSON.parse(line);
    total++;
    const s = String(rec.s);
    bump(byStatus, s);
    const ph = byPhase[phaseOf(rec).name];
    bump(ph.statuses, s);
    byKind[rec.k] ??= {};
    bump(byKind[rec.k], s);
    if (typeof rec.s === 'number') {
      ph.durations.push(rec.t1 - rec.t0);
      allDurations.push(rec.t1 - rec.t0);
    }
    if (typeof rec.s === 'number' && rec.s >= 500) {
      if (rec.s === 503 && inRedisWindow(rec)) {
        allowed503++;
      } else {
        badFiveXXCount++;
        const sample = { ...rec, at_s: sec(rec.t0), phase: phaseOf(rec).name };
        if (rec.s === 503) {
          outside503Count++;
          if (outside503.length < 10) outside503.push(sample);
          const k = Math.floor((rec.t0 - T0) / 1000);
          const d = rec.t1 - rec.t0;
          const g = (outside503BySecond[k] ??= [0, d, d]);
          g[0]++;
          g[1] = Math.min(g[1], d);
          g[2] = Math.max(g[2], d);
        } else if (badFiveXX.length < 20) {
          badFiveXX.push(sample);
        }
      }
    } else if (typeof rec.s !== 'number') {
      // Only replica B restarts: a failed connection to it then is expected (and retried), to A never.
      if (inRestartWindow(rec) && rec.r === 1) {
        restartConnErrors++;
      } else {
        badConnCount++;
        if (badConn.length < 20) badConn.push({ ...rec, at_s: sec(rec.t0), phase: phaseOf(rec).name });
      }
    }
  }
}

// Access log lines of the failed requests, to see what the server made of them.
const wanted = new Set([...badFiveXX, ...outside503, ...badConn].map((r) => r.rid));
const serverLines = {};
if (wanted.size) {
  for (const file of readdirSync(DIR).filter((f) => /^access-/.test(f))) {
    const rl = readline.createInterface({ input: createReadStream(path.join(DIR, file)), crlfDelay: Infinity });
    for await (const line of rl) {
      const m = /"request_id":"([^"]+)"/.exec(line);
      if (m && wanted.has(m[1])) serverLines[m[1]] = `${file}: ${line}`;
    }
  }
}

// ---------------------------------------------------------------- client results

const results = [];
for (let c = 0; c < config.clients; c++) {
  const file = path.join(DIR, `result-${c}.json`);
  if (existsSync(file)) results.push(JSON.parse(readFileSync(file, 'utf8')));
}
const sum = (f) => results.reduce((n, r) => n + (f(r) ?? 0), 0);
const mergeMaps = (f) => results.reduce((m, r) => { for (const [k, v] of Object.entries(f(r) ?? {})) bump(m, k, v); return m; }, {});
const mergeSamples = (key) => results.flatMap((r) => r.samples[key].map((s) => ({ client: r.id, ...s }))).slice(0, 10);
const c = {
  logical: sum((r) => r.counts.logical),
  unresolved: mergeMaps((r) => r.counts.unresolved),
  unexpected: sum((r) => r.counts.unexpected),
  versionObservations: sum((r) => r.counts.versionObservations),
  versionsBackwards: sum((r) => r.counts.versionsBackwards),
  lostUpdates: sum((r) => r.counts.lostUpdates),
  noWinnerPairs: sum((r) => r.counts.noWinnerPairs),
  unexpectedConflicts: sum((r) => r.counts.unexpectedConflicts),
  inconsistent: sum((r) => r.counts.inconsistent),
  staleReads: sum((r) => r.counts.staleReads),
  replays: sum((r) => r.counts.replays),
  pairs: mergeMaps((r) => r.counts.pairs),
  unknownCreates: sum((r) => r.unknownCreates),
};
const v = mergeMaps((r) => r.verify);
const unresolvedTotal = Object.values(c.unresolved).reduce((a, b) => a + b, 0);

// Games in Redis against the games the clients know.
const known = new Set(results.flatMap((r) => r.gameIds));
const keys = existsSync(path.join(DIR, 'redis-game-keys.txt'))
  ? readFileSync(path.join(DIR, 'redis-game-keys.txt'), 'utf8').split('\n').filter(Boolean).map((k) => /^chessd:game:\{(.*)\}$/.exec(k)?.[1] ?? k)
  : [];
const inRedis = new Set(keys);
const missingGames = [...known].filter((id) => !inRedis.has(id)).length;
const orphanGames = keys.filter((id) => !known.has(id)).length;
const idemKeys = existsSync(path.join(DIR, 'redis-idem-count.txt')) ? Number(readFileSync(path.join(DIR, 'redis-idem-count.txt'), 'utf8').trim()) : null;

// ---------------------------------------------------------------- processes

const exits = events.filter((e) => e.event === 'replica_exited');
const redisExits = events.filter((e) => /^redis_stopped/.test(e.event));
const rss = existsSync(path.join(DIR, 'rss.jsonl'))
  ? readFileSync(path.join(DIR, 'rss.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
const rssByProcess = [];
for (const pid of [...new Set(rss.map((s) => s.pid))]) {
  const xs = rss.filter((s) => s.pid === pid).sort((a, b) => a.t - b.t);
  const first = xs[0];
  const warm = xs.find((s) => s.t >= first.t + 10000) ?? xs[xs.length - 1];
  const last = xs[xs.length - 1];
  rssByProcess.push({
    replica: first.replica, pid, samples: xs.length, start_kb: first.rss_kb, warm_kb: warm.rss_kb,
    max_kb: Math.max(...xs.map((s) => s.rss_kb)), end_kb: last.rss_kb, growth_kb: last.rss_kb - first.rss_kb,
    growth_after_warmup_kb: last.rss_kb - warm.rss_kb, from_s: sec(first.t), to_s: sec(last.t),
  });
}

function metricsOf(file) {
  const text = readFileSync(path.join(DIR, file), 'utf8');
  const out = { requests_5xx: 0, requests: 0 };
  for (const line of text.split('\n')) {
    let m = /^chessd_http_requests_total\{route="[^"]*",status="(\d+)"\} (\d+)/.exec(line);
    if (m) {
      out.requests += Number(m[2]);
      if (m[1] >= 500) out[`requests_${m[1]}`] = (out[`requests_${m[1]}`] ?? 0) + Number(m[2]);
      if (m[1] >= 500) out.requests_5xx += Number(m[2]);
      continue;
    }
    m = /^(chessd_(?:moves_applied_total|version_conflicts_total|open_connections|redis_errors_total|redis_connects_total)) (\d+)/.exec(line);
    if (m) out[m[1].replace(/^chessd_/, '')] = Number(m[2]);
  }
  return out;
}
const metrics = Object.fromEntries(readdirSync(DIR).filter((f) => /^metrics-.*\.txt$/.test(f)).sort()
  .map((f) => [f.replace(/^metrics-|\.txt$/g, ''), metricsOf(f)]));

// ---------------------------------------------------------------- verdicts

const invariants = [
  ['5xx other than 503 while Redis was away', badFiveXXCount, `${allowed503} x 503 inside the outage window; ${outside503Count} x 503 outside it; ${badFiveXXCount - outside503Count} other 5xx`],
  ['acknowledged moves lost', v.lostMoves ?? 0, `${v.ackedMoves ?? 0} acknowledged moves in ${v.games ?? 0} games; games lost ${v.lostGames ?? 0}, unreadable ${v.unreadable ?? 0}`],
  ['stored moves beyond the acknowledged ones, unexplained', (v.extraUnexplained ?? 0) + (v.versionMismatch ?? 0), `${v.extraExplained ?? 0} explained by a change whose answer was lost, i.e. no answer after the retries or a 5xx (${v.pendingMoves ?? 0} such moves, ${v.pendingResigns ?? 0} resigns); version mismatches ${v.versionMismatch ?? 0}`],
  ['versions that went backwards', c.versionsBackwards, `of ${c.versionObservations} versions observed (a request's answer against the highest version its client had seen when it started)`],
  ['lost updates (two 200s for one game version)', c.lostUpdates, `${Object.entries(c.pairs).map(([k, n]) => `${k} ${n}`).join(', ') || 'no'} raced pairs`],
  ['raced pairs with no winner', c.noWinnerPairs, ''],
  ['conflicts or refusals of a lone writer\'s legal move', c.unexpectedConflicts, ''],
  ['answers with an unexpected status', c.unexpected, 'every request had its acceptable statuses (e.g. garbage JSON: 400)'],
  ['inconsistent answers', c.inconsistent + c.staleReads, `perft counts, replayed lines, move answers, read-backs on the other replica (stale reads ${c.staleReads})`],
  ['connection errors/timeouts other than to replica B while it restarted', badConnCount, `${restartConnErrors} to replica B during its restart window, all retried`],
  ['requests unresolved after 30 s of retries', unresolvedTotal, Object.entries(c.unresolved).map(([k, n]) => `${k} ${n}`).join(', ')],
  ['replica exits on SIGTERM not 0', exits.filter((e) => e.code !== 0).length, exits.map((e) => `${e.replica} pid ${e.pid}: exit ${e.code}, drained in ${e.drain_ms} ms`).join('; ')],
  ['acknowledged games missing from Redis', missingGames, `${known.size} games acknowledged, ${keys.length} game keys in Redis`],
  ['unknown games in Redis beyond creations without an answer', Math.max(0, orphanGames - c.unknownCreates), `${orphanGames} unknown keys, ${c.unknownCreates} creations unresolved or answered 5xx`],
  ['client processes that failed', CLIENTS_FAILED + (config.clients - results.length), `${results.length} of ${config.clients} wrote results`],
  ['replicas not ready again after Redis came back', events.some((e) => e.event === 'replicas_ready_after_redis') ? 0 : 1, `ready ${sec(at('replicas_ready_after_redis'))} s (${at('replicas_ready_after_redis') && redisUp ? at('replicas_ready_after_redis') - redisUp : '?'} ms after Redis answered)`],
];
const failed = invariants.filter(([, n]) => n !== 0);

// ---------------------------------------------------------------- output

const pct = (xs, p) => {
  if (!xs.length) return '-';
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const statusLine = (m) => Object.entries(m).sort(([a], [b]) => (a > b ? 1 : -1)).map(([k, n]) => `${k}: ${n}`).join(', ');
const kb = (n) => `${(n / 1024).toFixed(1)} MiB`;
const out = [];
out.push(`chessd soak: ${config.seconds} s of traffic, ${config.clients} clients x ${config.loops} loops, 2 replicas (A :${config.ports.A}, B :${config.ports.B}), redis :${config.redis_port} (appendonly, appendfsync everysec), --redis-timeout-ms ${config.redis_timeout_ms}`);
out.push(`seed ${config.seed}; redis exits on SIGTERM: ${redisExits.map((e) => e.code).join(', ')}`);
out.push(`timeline (s from traffic start): Redis SIGTERM ${sec(redisDown)}, exited ${sec(at('redis_stopped'))}, started ${sec(at('redis_starting'))}, answering ${sec(redisUp)}, both replicas ready ${sec(at('replicas_ready_after_redis'))}; replica B SIGTERM ${sec(sigterm)}, exited ${sec(exits[0]?.t)} (code ${exits[0]?.code}), ready again ${sec(replicaUp)}; traffic end ${sec(END)}; clients done ${sec(at('clients_done'))}`);
out.push('');
out.push(`requests (HTTP attempts, retries included): ${total} (${c.logical} logical requests; ${(total / ((END - T0) / 1000)).toFixed(0)}/s over the traffic time)`);
out.push(`  overall: ${statusLine(byStatus)}`);
out.push(`  latency (answered attempts): p50 ${pct(allDurations, 0.5)} ms, p99 ${pct(allDurations, 0.99)} ms, max ${pct(allDurations, 1)} ms`);
for (const p of phases) {
  const ph = byPhase[p.name];
  const n = Object.values(ph.statuses).reduce((a, b) => a + b, 0);
  const span = p.to === Infinity ? `${sec(p.from)} s-` : `${sec(p.from)}-${sec(p.to)} s`;
  out.push(`  ${p.name} (${span}${p.note ? `; ${p.note}` : ''}): ${n} requests, p50 ${pct(ph.durations, 0.5)} ms, p99 ${pct(ph.durations, 0.99)} ms`);
  out.push(`      ${statusLine(ph.statuses) || '-'}`);
}
out.push('');
out.push('invariants:');
for (const [name, n, detail] of invariants) out.push(`  [${n === 0 ? 'ok' : 'FAIL'}] ${name}: ${n}${detail ? ` (${detail})` : ''}`);
out.push('');
out.push(`games: ${v.games ?? 0} read back; ${v.ackedMoves ?? 0} acknowledged moves, ${v.storedMoves ?? 0} stored; ${c.replays} answers that took a retry; ${idemKeys ?? '?'} idempotency records in Redis`);
out.push('RSS (VmRSS from /proc/PID/status; "warm" is the first sample 10 s or more after the start):');
for (const r of rssByProcess) {
  out.push(`  replica ${r.replica} pid ${r.pid} (${r.from_s}-${r.to_s} s, ${r.samples} samples): start ${kb(r.start_kb)}, warm ${kb(r.warm_kb)}, max ${kb(r.max_kb)}, end ${kb(r.end_kb)}; growth ${r.growth_kb >= 0 ? '+' : ''}${kb(r.growth_kb)} (after warm-up ${r.growth_after_warmup_kb >= 0 ? '+' : ''}${kb(r.growth_after_warmup_kb)})`);
}
out.push('metrics (server side):');
for (const [name, m] of Object.entries(metrics)) out.push(`  ${name}: ${Object.entries(m).map(([k, n]) => `${k} ${n}`).join(', ')}`);
for (const [n, label] of [[1, 'before the outage'], [2, 'after it, to the end']]) {
  const file = path.join(DIR, `redis-latency-${n}.json`);
  let spikes = [];
  try { spikes = JSON.parse(readFileSync(file, 'utf8')); } catch { continue; }
  out.push(`redis latency monitor (stalls >= 100 ms), ${label}: ${spikes.length ? spikes.map(([ev, ts, latest, max]) => `${ev} last at ${sec(ts * 1000)} s (${latest} ms), max ${max} ms`).join('; ') : 'none'}`);
}
if (existsSync(path.join(DIR, 'redis-memory.txt'))) out.push(`redis: ${readFileSync(path.join(DIR, 'redis-memory.txt'), 'utf8').trim().replace(/\n/g, ', ')}`);
out.push(`requests by kind: ${Object.entries(byKind).sort().map(([k, m]) => `${k} {${statusLine(m)}}`).join('; ')}`);

const details = [];
if (badFiveXX.length) {
  details.push(`5xx other than 503 (first ${badFiveXX.length}):`);
  for (const r of badFiveXX) details.push(`  ${JSON.stringify(r)}\n    server: ${serverLines[r.rid] ?? '(no access log line)'}`);
}
if (outside503.length) {
  details.push(`503 outside the outage window, by second from the traffic start (count, fastest-slowest answer): ${Object.entries(outside503BySecond).map(([k, [n, lo, hi]]) => `${k} s: ${n} (${lo}-${hi} ms)`).join('; ')}`);
  details.push(`503 outside the outage window (first ${outside503.length}):`);
  for (const r of outside503) details.push(`  ${JSON.stringify(r)}\n    server: ${serverLines[r.rid] ?? '(no access log line)'}`);
}
if (badConn.length) {
  details.push('connection errors outside the restart window (first 20):');
  for (const r of badConn) details.push(`  ${JSON.stringify(r)}\n    server: ${serverLines[r.rid] ?? '(no access log line)'}`);
}
for (const key of ['unexpected', 'versionsBackwards', 'lostUpdates', 'noWinnerPairs', 'unexpectedConflicts', 'inconsistent', 'staleReads', 'verify', 'unresolved', 'wrongReplays']) {
  const xs = mergeSamples(key);
  if (xs.length) {
    details.push(`${key} (first ${xs.length}):`);
    for (const x of xs) details.push(`  ${JSON.stringify(x)}`);
  }
}
if (details.length) out.push('', ...details);
out.push('', failed.length ? `SOAK FAILED: ${failed.map(([name]) => name).join('; ')}` : 'SOAK PASSED: every invariant held');

const text = `${out.join('\n')}\n`;
process.stdout.write(text);
writeFileSync(SUMMARY, text);
writeFileSync(SUMMARY.replace(/\.txt$/, '') + '.json', JSON.stringify({
  config, events, requests: { total, logical: c.logical, byStatus, byPhase: Object.fromEntries(Object.entries(byPhase).map(([k, p]) => [k, p.statuses])), byKind },
  invariants: invariants.map(([name, count, detail]) => ({ name, count, detail, ok: count === 0 })),
  verify: v, clients: c, rss: rssByProcess, metrics, redis: { gameKeys: keys.length, idempotencyKeys: idemKeys, orphanGames, missingGames },
  failures: { fiveXX: badFiveXX, outside503, outside503BySecond, connection: badConn, serverLines }, passed: failed.length === 0,
}, null, 2));
console.log(`summary written to ${SUMMARY}`);
process.exit(failed.length ? 1 : 0);
