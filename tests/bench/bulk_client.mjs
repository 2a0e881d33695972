// The client of tests/bench/bulk_bench.sh: in each round, `count` single
// POST /v1/games one after another, and one POST /v1/games/bulk of `count`
// pairings, all over one kept-alive connection. Prints each round's times and
// ratio, their median, and the CPU per game of each way. Exits 1 on any answer
// but 201.
//
//   usage: node bulk_client.mjs CONFIG_JSON
//   CONFIG_JSON: {url, label, chessdPid, redisPids, rounds, count, settings, clkTck}
import http from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'

const cfg = JSON.parse(process.argv[2])
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const url = new URL(cfg.url)
const say = (text) => console.log(`bulk_bench (${cfg.label}): ${text}`)

function die(message) {
  process.stderr.write(`bulk_bench (${cfg.label}): FAIL: ${message}\n`)
  process.exit(1)
}
for (const event of ['uncaughtException', 'unhandledRejection']) process.on(event, (error) => die(`${error.message ?? error}`))

let socket = null
let connections = 0
// One POST on the agent's one connection; resolves to the answer's body once
// its last byte is in, dies on a status but 201.
function post(path, payload) {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }
    const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path, headers, agent }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString()
        if (res.statusCode !== 201) reject(new Error(`POST ${path}: ${res.statusCode} ${body.slice(0, 400)}`))
        else resolve(body)
      })
      res.on('error', reject)
    })
    req.on('socket', (s) => {
      if (s !== socket) connections++
      socket = s
    })
    req.on('error', reject)
    req.end(payload)
  })
}

// utime + stime of the processes, in clock ticks (/proc/PID/stat).
function ticks(pids) {
  let total = 0
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ') // fields[0] is field 3
    total += Number(fields[11]) + Number(fields[12])
  }
  return total
}
// On-CPU nanoseconds of the processes' threads (/proc/PID/task/*/schedstat):
// the figure that the ticks round to 10 ms, exact for a phase of a few ticks.
function runNs(pids) {
  let ns = 0
  for (const pid of pids) {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {} // a thread that has just exited
    }
  }
  return ns
}

const pairing = (round, i) => ({ white: `W${round}.${i}`, black: `B${round}.${i}` })

async function singles(round, n) {
  for (let i = 0; i < n; i++) await post('/v1/games', JSON.stringify({ ...cfg.settings, ...pairing(round, i) }))
}
async function bulk(round, n) {
  const games = Array.from({ length: n }, (_, i) => pairing(round, i))
  const answer = JSON.parse(await post('/v1/games/bulk', JSON.stringify({ ...cfg.settings, games })))
  if (answer.count !== n || answer.games?.length !== n) die(`the bulk answered count ${answer.count}, not ${n}`)
}

// Runs fn, adding its wall time, chessd's ticks and schedstat and Redis's
// schedstat to sum; returns its milliseconds.
async function measured(sum, fn) {
  const c0 = ticks([cfg.chessdPid]), n0 = runNs([cfg.chessdPid]), r0 = runNs(cfg.redisPids)
  const t0 = process.hrtime.bigint()
  await fn()
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  sum.ticks += ticks([cfg.chessdPid]) - c0
  sum.ns += runNs([cfg.chessdPid]) - n0
  sum.redisNs += runNs(cfg.redisPids) - r0
  return ms
}

// The connection opened and both ways' first calls (a script's first load)
// made before anything is timed.
await singles(0, 1)
await bulk(0, 2)

const sums = { single: { ticks: 0, ns: 0, redisNs: 0 }, bulk: { ticks: 0, ns: 0, redisNs: 0 } }
const ratios = []
for (let r = 1; r <= cfg.rounds; r++) {
  let single, inBulk
  if (r % 2) {
    single = await measured(sums.single, () => singles(r, cfg.count))
    inBulk = await measured(sums.bulk, () => bulk(r, cfg.count))
  } else {
    inBulk = await measured(sums.bulk, () => bulk(r, cfg.count))
    single = await measured(sums.single, () => singles(r, cfg.count))
  }
  ratios.push(single / inBulk)
  say(`round ${r}: ${cfg.count} single creations ${single.toFixed(1)} ms, one bulk of ${cfg.count} ` +
      `${inBulk.toFixed(1)} ms: ${(single / inBulk).toFixed(1)}x`)
}
agent.destroy()
if (connections !== 1) die(`the requests took ${connections} connections, not one kept alive`)

const sorted = [...ratios].sort((a, b) => a - b)
const mid = sorted.length >> 1
const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
say(`single creations / bulk, wall time (median of ${cfg.rounds}): ${median.toFixed(1)}x   (goal >= 10)`)
const hz = cfg.clkTck
const games = cfg.rounds * cfg.count
for (const [way, s] of Object.entries(sums)) {
  say(`CPU per game made ${way === 'bulk' ? 'in a bulk' : 'singly'}: chessd ${(s.ticks / hz * 1e6 / games).toFixed(1)} us ` +
      `(${s.ticks} ticks; schedstat ${(s.ns / 1000 / games).toFixed(1)} us), ` +
      `redis-server ${(s.redisNs / 1000 / games).toFixed(1)} us (schedstat), over ${games} games`)
}
