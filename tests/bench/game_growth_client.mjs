// The client of tests/bench/game_growth.sh (see its header for the method):
// plays the line's games on one keep-alive connection, one request after
// another, samples CPU and Redis's byte counters around each window, and
// prints one line "GROWTH key=value ..." of sums and latency figures.
// Dies (exit 1, the reason on stderr) on any answer that is not what it must be.
//
//   usage: node game_growth_client.mjs CONFIG_JSON
//   CONFIG_JSON: {url, chessdPid, redisPid, redisPort, lineFile, plies, window,
//                 games, replays, minTicks, maxSeconds}
import http from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const cfg = JSON.parse(process.argv[2])
const line = readFileSync(cfg.lineFile, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'))
const late = cfg.plies - cfg.window + 1
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const url = new URL(cfg.url)

function die(message) {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}
for (const event of ['uncaughtException', 'unhandledRejection']) process.on(event, (error) => die(`${error.message ?? error}`))
// The JSON body of answer r, or death naming what it answered.
function json(r, what) {
  try {
    return JSON.parse(r.body)
  } catch {
    return die(`${what}: the answer (${r.status}) is not JSON: ${r.body.toString().slice(0, 400)}`)
  }
}

let socket = null
let connections = 0
// One request on the agent's one connection: {status, etag, body, bytes, us}
// (us: from the call to the last byte of the body).
function request(method, path, token, payload) {
  return new Promise((resolve, reject) => {
    const headers = {}
    if (token) headers.Authorization = `Bearer ${token}`
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/json'
      headers['Content-Length'] = Buffer.byteLength(payload)
    }
    const t0 = process.hrtime.bigint()
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        const length = res.headers['content-length']
        if (length !== undefined && Number(length) !== body.length) {
          reject(new Error(`${method} ${path}: ${body.length} body bytes, Content-Length ${length}`))
          return
        }
        const us = Number(process.hrtime.bigint() - t0) / 1000
        resolve({ status: res.statusCode, etag: res.headers.etag, body, bytes: body.length, us })
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

function ticks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')   // fields[0] is field 3
  return Number(fields[11]) + Number(fields[12])
}
// On-CPU nanoseconds of the process's threads (/proc/PID/task/*/schedstat,
// first field): the precise figure that utime + stime rounds to ticks.
function runNs(pid) {
  let ns = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {}   // a thread that has just exited
  }
  return ns
}
function redisBytes() {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(cfg.redisPort), 'INFO', 'stats'], { encoding: 'utf8' })
  const get = (name) => Number((r.stdout.match(new RegExp(`^${name}:(\\d+)`, 'm')) ?? die(`redis-cli INFO stats: no ${name}: ${r.stdout}${r.stderr}`))[1])
  return { input: get('total_net_input_bytes'), output: get('total_net_output_bytes') }
}
function cpu() {
  return { chessd: ticks(cfg.chessdPid), chessdNs: runNs(cfg.chessdPid), redisNs: runNs(cfg.redisPid) }
}
// Redis's counters outside the CPU samples, so that the INFO command's own
// work falls outside the window's CPU time.
const sampleBefore = () => ({ ...redisBytes(), ...cpu() })
const sampleAfter = () => ({ ...cpu(), ...redisBytes() })

async function newGame() {
  const r = await request('POST', '/v1/games', null, '{}')
  if (r.status !== 201 || r.etag !== '"1"') die(`POST /v1/games: expected 201 with ETag "1", got ${r.status} ${r.etag}: ${r.body.toString().slice(0, 400)}`)
  const game = json(r, 'POST /v1/games')
  if (!game.id || !game.tokens?.white || !game.tokens?.black) die(`POST /v1/games: no id and tokens: ${r.body.toString().slice(0, 400)}`)
  return { id: game.id, tokens: [game.tokens.white, game.tokens.black] }
}

// Plies from..to (1-based) of the line; ply p is made on version p. Only the
// status and the ETag of an answer are read, and the size of its legal-move
// list (w.legalBytes, w.legalMoves): that list belongs to the position, not to
// the game's length, so its share is reported apart.
async function play(game, from, to, lat, w) {
  let bytes = 0
  for (let p = from; p <= to; p++) {
    const payload = `{"move":"${line[p - 1]}","expected_version":${p}}`
    const r = await request('POST', `/v1/games/${game.id}/moves`, game.tokens[(p - 1) % 2], payload)
    if (r.status !== 200 || r.etag !== `"${p + 1}"`)
      die(`game ${game.id}, ply ${p} (${line[p - 1]}): expected 200 with ETag "${p + 1}", got ${r.status} ETag ${r.etag}: ${r.body.toString().slice(0, 300)}`)
    bytes += r.bytes
    lat?.push(r.us)
    if (w) {
      const legal = json(r, `move ${p}`).position?.legal_moves
      if (legal) {
        w.legalBytes += Buffer.byteLength(',"legal_moves":' + JSON.stringify(legal))
        w.legalMoves += legal.length
      }
    }
  }
  return bytes
}

// The INFO command's own bytes (each window's end sample is one INFO).
const s0 = redisBytes()
const s1 = redisBytes()
const infoIn = s1.input - s0.input
const infoOut = s1.output - s0.output

const kinds = {}
for (const k of ['early', 'late']) kinds[k] = { moves: 0, windows: 0, chessd: 0, chessdNs: 0, redisNs: 0, input: 0, output: 0, bytes: 0, legalBytes: 0, legalMoves: 0, lat: [] }
async function window(kind, game, from, to) {
  const w = kinds[kind]
  const a = sampleBefore()
  w.bytes += await play(game, from, to, w.lat, w)
  const b = sampleAfter()
  w.moves += to - from + 1
  w.windows++
  w.chessd += b.chessd - a.chessd
  w.chessdNs += b.chessdNs - a.chessdNs
  w.redisNs += b.redisNs - a.redisNs
  w.input += b.input - a.input - infoIn
  w.output += b.output - a.output - infoOut
}

const start = Date.now()
let rounds = 0
let fullGame = null
for (;;) {
  const elapsed = (Date.now() - start) / 1000
  const enough = kinds.early.chessd >= cfg.minTicks && kinds.late.chessd >= cfg.minTicks
  if (rounds >= cfg.games && (enough || elapsed >= cfg.maxSeconds)) break
  fullGame = await newGame()
  await window('early', fullGame, 1, cfg.window)
  await play(fullGame, cfg.window + 1, late - 1)
  await window('late', fullGame, late, cfg.plies)
  const r = await request('GET', `/v1/games/${fullGame.id}`)
  const g = r.status === 200 ? json(r, `GET /v1/games/${fullGame.id}`) : {}
  if (g.version !== cfg.plies + 1 || g.moves?.length !== cfg.plies || g.status !== 'active')
    die(`game ${fullGame.id}: played ${cfg.plies} plies, but GET answers ${r.status}, version ${g.version}, ${g.moves?.length} moves, status ${g.status}`)
  for (let k = 0; k < cfg.replays; k++) await window('early', await newGame(), 1, cfg.window)
  rounds++
}
const elapsed = (Date.now() - start) / 1000
// A game left at the end of the early window, for its record's size.
const shortGame = await newGame()
await play(shortGame, 1, cfg.window)

function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * sorted.length) - 1))]
}
const out = { rounds, elapsed: elapsed.toFixed(1), connections, game_short: shortGame.id, game_full: fullGame.id }
for (const [k, w] of Object.entries(kinds)) {
  const sorted = w.lat.slice().sort((x, y) => x - y)
  Object.assign(out, {
    [`${k}_moves`]: w.moves, [`${k}_windows`]: w.windows, [`${k}_chessd_ticks`]: w.chessd, [`${k}_chessd_ns`]: w.chessdNs, [`${k}_redis_ns`]: w.redisNs,
    [`${k}_redis_in`]: w.input, [`${k}_redis_out`]: w.output, [`${k}_answer_bytes`]: w.bytes, [`${k}_legal_bytes`]: w.legalBytes, [`${k}_legal_moves`]: w.legalMoves,
    [`${k}_p50_us`]: percentile(sorted, 0.5).toFixed(0), [`${k}_p90_us`]: percentile(sorted, 0.9).toFixed(0),
    [`${k}_mean_us`]: (sorted.reduce((s, x) => s + x, 0) / sorted.length).toFixed(0),
  })
}
console.log('GROWTH ' + Object.entries(out).map(([k, v]) => `${k}=${v}`).join(' '))
agent.destroy()
