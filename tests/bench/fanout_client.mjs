// The client of tests/bench/fanout_bench.sh (see its header for the method):
// holds event streams on replicas B and C, plays moves on replica A, and
// times each move from its request to each stream's event; then, for
// reference, times Redis alone fanning the same messages out (PUBLISH to as
// many raw subscribers). Prints the report; dies (exit 1, the reason on
// stderr) on any answer or event that is not what it must be.
//
// With games > 1 each stream is one multi-game stream (POST /v1/games/events)
// following that many games, and the moves go round the games.
//
//   usage: node fanout_client.mjs CONFIG_JSON
//   CONFIG_JSON: {a, b, c (base URLs), bPid, cPid, redisPid, redisPort, lineFile, streams, moves, subscribers, games}
import http from 'node:http'
import net from 'node:net'
import { readFileSync } from 'node:fs'

const cfg = JSON.parse(process.argv[2])
const line = readFileSync(cfg.lineFile, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'))

function die(message) {
  process.stderr.write(`fanout_client: ${message}\n`)
  process.exit(1)
}
for (const event of ['uncaughtException', 'unhandledRejection']) process.on(event, (error) => die(`${error.stack ?? error}`))
const games = cfg.games ?? 1
const mux = games > 1
if (Math.ceil(cfg.moves / games) > line.length) die(`BENCH_MOVES ${cfg.moves} is more than the ${line.length} plies of ${cfg.lineFile}`)

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })

/** One JSON request; resolves to { status, body (parsed) }. */
function request(base, method, path, token, payload) {
  const url = new URL(path, base)
  return new Promise((resolve, reject) => {
    const headers = {}
    const body = payload === undefined ? undefined : JSON.stringify(payload)
    if (token) headers.Authorization = `Bearer ${token}`
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json'
      headers['Content-Length'] = Buffer.byteLength(body)
    }
    const req = http.request({ host: url.hostname, port: url.port, method, path: url.pathname, headers, agent }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        try {
          resolve({ status: res.statusCode, body: text ? JSON.parse(text) : null, text })
        } catch {
          reject(new Error(`${method} ${path}: ${res.statusCode} answer is not JSON: ${text.slice(0, 300)}`))
        }
      })
      res.on('error', reject)
    })
    req.on('error', (error) => reject(new Error(`${method} ${path} on ${base}: ${error.message}`)))
    if (body !== undefined) req.write(body)
    req.end()
  })
}

/** VmRSS (KiB) and Threads of a process. */
function procStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8')
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1])
  return { rss: field('VmRSS'), threads: field('Threads') }
}

/**
 * Waiters keyed by version: every receiver calls arrived(version, t); a move
 * waits until `expected` arrivals of its version came in.
 */
class Arrivals {
  constructor() {
    this.byVersion = new Map()
  }

  arrived(version, t) {
    let entry = this.byVersion.get(version)
    if (!entry) this.byVersion.set(version, (entry = { times: [], waiters: [] }))
    entry.times.push(t)
    for (const w of entry.waiters) w()
  }

  until(version, expected, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      let entry = this.byVersion.get(version)
      if (!entry) this.byVersion.set(version, (entry = { times: [], waiters: [] }))
      const timer = setTimeout(() => reject(new Error(`${what}: ${entry.times.length} of ${expected} got version ${version} within ${timeoutMs} ms`)), timeoutMs)
      const check = () => {
        if (entry.times.length >= expected) {
          clearTimeout(timer)
          resolve(entry.times)
        }
      }
      entry.waiters.push(check)
      check()
    })
  }
}

/**
 * An event stream (NDJSON or SSE) on base for game id; every event's version
 * is reported to arrivals with its arrival time. The first event of each
 * stream must be the snapshot (version 1); then every change must be the
 * next version (a fresh snapshot instead would be a gap: the bench dies).
 */
function openStream(base, id, format, arrivals) {
  const url = new URL(mux ? '/v1/games/events' : `/v1/games/${id}/events`, base)
  return new Promise((resolve, reject) => {
    const accept = format === 'sse' ? 'text/event-stream' : 'application/x-ndjson'
    const body = mux ? JSON.stringify({ ids: id }) : undefined
    const headers = { Accept: accept, ...(mux ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) }
    const req = http.request({ host: url.hostname, port: url.port, method: mux ? 'POST' : 'GET', path: url.pathname, headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`${mux ? 'POST' : 'GET'} ${url.pathname} (${format}): ${res.statusCode}`))
        return
      }
      res.socket.setNoDelay(true)
      res.setEncoding('utf8')
      let pending = ''
      let last = 0
      const lastOf = new Map() // a multi-game stream: each game's last version
      const stream = { req, format, closed: false }
      res.on('data', (chunk) => {
        const t = performance.now()
        pending += chunk
        let eol
        while ((eol = pending.indexOf('\n')) >= 0) {
          const l = pending.slice(0, eol)
          pending = pending.slice(eol + 1)
          let json
          if (format === 'sse') {
            if (!l.startsWith('data: ')) continue
            json = l.slice(6)
          } else {
            if (l === '') continue
            json = l
          }
          const ev = JSON.parse(json)
          if (mux) {
            if (ev.type === 'stream') continue
            const had = lastOf.get(ev.id) ?? 0
            const want = had === 0 ? 'game' : 'change'
            if (ev.type !== want || (had !== 0 && ev.version !== had + 1))
              die(`${format} multi-game stream on ${base}: game ${ev.id} after version ${had} came ${ev.type} ${ev.version}`)
            lastOf.set(ev.id, ev.version)
            arrivals.arrived(had === 0 ? 'snapshot' : `${ev.id}:${ev.version}`, t)
            continue
          }
          const expectedType = last === 0 ? 'game' : 'change'
          if (ev.type !== expectedType || (last !== 0 && ev.version !== last + 1))
            die(`${format} stream on ${base}: after version ${last} came ${ev.type} ${ev.version}`)
          last = ev.version
          arrivals.arrived(ev.version, t)
        }
      })
      res.on('close', () => { stream.closed = true })
      res.on('error', () => {})
      resolve(stream)
    })
    req.on('error', (error) => reject(new Error(`${url.pathname} on ${base} (${format}): ${error.message}`)))
    req.end(body)
  })
}

/** RESP frame of one command. */
function frame(args) {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`
}

/**
 * A raw Redis connection: commands answered in order (send), and pushed
 * messages (SUBSCRIBE) handed to onMessage(channel, payload, t). Parses only
 * what these commands answer: simple strings, integers, errors and arrays of
 * bulk strings or integers.
 */
function redisConnection(port, onMessage) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    let buf = Buffer.alloc(0)
    const replies = []
    const parse = (at) => {
      const eol = buf.indexOf('\r\n', at)
      if (eol < 0) return null
      const kind = String.fromCharCode(buf[at])
      const text = buf.toString('utf8', at + 1, eol)
      if (kind === '+' || kind === '-') return [kind === '-' ? new Error(text) : text, eol + 2]
      if (kind === ':') return [Number(text), eol + 2]
      if (kind === '$') {
        const n = Number(text)
        if (n < 0) return [null, eol + 2]
        if (buf.length < eol + 2 + n + 2) return null
        return [buf.toString('utf8', eol + 2, eol + 2 + n), eol + 2 + n + 2]
      }
      if (kind === '*') {
        const items = []
        let pos = eol + 2
        for (let i = 0; i < Number(text); i++) {
          const item = parse(pos)
          if (!item) return null
          items.push(item[0])
          pos = item[1]
        }
        return [items, pos]
      }
      throw new Error(`unexpected RESP type ${kind}`)
    }
    socket.on('data', (d) => {
      const t = performance.now()
      buf = buf.length ? Buffer.concat([buf, d]) : d
      for (;;) {
        const item = parse(0)
        if (!item) break
        buf = buf.subarray(item[1])
        const v = item[0]
        if (Array.isArray(v) && v[0] === 'message') onMessage(v[1], v[2], t)
        else if (Array.isArray(v) && v[0] === 'pmessage') onMessage(v[2], v[3], t)
        else replies.shift()?.(v)
      }
    })
    socket.on('error', reject)
    socket.on('connect', () => resolve({
      socket,
      send: (...args) => new Promise((res) => { replies.push(res); socket.write(frame(args)) }),
      close: () => socket.destroy(),
    }))
  })
}

/**
 * Opens n subscribers of channel (a pattern with pattern set); each
 * message's version (its first field) goes to arrivals, or its game and
 * version (the message's own count, byCount: messages of many games).
 */
async function subscribers(n, channel, arrivals, { pattern = false, byCount = false } = {}) {
  const subs = []
  for (let i = 0; i < n; i += 100) {
    subs.push(...await Promise.all(Array.from({ length: Math.min(100, n - i) }, async () => {
      let count = 0
      const c = await redisConnection(cfg.redisPort, (ch, payload, t) => {
        if (pattern) arrivals.arrived(`${/\{(.*)\}/.exec(ch)[1]}:${parseInt(payload, 10)}`, t)
        else if (ch === channel) arrivals.arrived(byCount ? ++count : parseInt(payload, 10), t)
      })
      const ack = await c.send(pattern ? 'PSUBSCRIBE' : 'SUBSCRIBE', channel)
      if (!Array.isArray(ack) || ack[0] !== (pattern ? 'psubscribe' : 'subscribe')) die(`SUBSCRIBE ${channel}: ${ack}`)
      return c
    })))
  }
  return subs
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]
}
const ms = (x) => x.toFixed(2)
const summary = (xs) => `p50 ${ms(quantile(xs, 0.5))}  p99 ${ms(quantile(xs, 0.99))}  max ${ms(xs.reduce((a, b) => (a > b ? a : b), -Infinity))}`

// ---------------------------------------------------------------- phase 1: chessd
const made = []
for (let i = 0; i < games; i += 50) {
  made.push(...await Promise.all(Array.from({ length: Math.min(50, games - i) }, async () => {
    const created = await request(cfg.a, 'POST', '/v1/games', null, {})
    if (created.status !== 201) die(`POST /v1/games: ${created.status} ${created.text}`)
    return { ...created.body, version: 1 }
  })))
}
const { id, tokens } = made[0]
const ids = made.map((g) => g.id)
const channel = mux ? 'chessd:events:*' : `chessd:events:{${id}}`
for (const base of [cfg.b, cfg.c]) {
  const r = await request(base, 'GET', `/v1/games/${id}`)
  if (r.status !== 200) die(`GET /v1/games/${id} on ${base}: ${r.status}`)
}
const before = { b: procStatus(cfg.bPid), c: procStatus(cfg.cPid) }
const arrivals = new Arrivals()
const streams = []
for (let i = 0; i < cfg.streams; i += 100) {
  streams.push(...await Promise.all(Array.from({ length: Math.min(100, cfg.streams - i) }, (_, j) => {
    const k = i + j
    return openStream(k % 2 ? cfg.c : cfg.b, mux ? ids : id, k % 4 < 2 ? 'ndjson' : 'sse', arrivals)
  })))
}
await arrivals.until(mux ? 'snapshot' : 1, cfg.streams * games, 60000, 'snapshots')
await new Promise((r) => setTimeout(r, 500)) // let the replicas settle after the burst of opens
const idle = { b: procStatus(cfg.bPid), c: procStatus(cfg.cPid) }

// One raw subscriber on the game's channel: when Redis hands chessd's publication out.
const tap = new Arrivals()
const tapConn = (await subscribers(1, channel, tap, { pattern: mux }))[0]
const captured = [] // the messages as published, for the reference phase
const capture = await redisConnection(cfg.redisPort, (ch, payload) => { if (mux || ch === channel) captured.push(payload) })
await capture.send(mux ? 'PSUBSCRIBE' : 'SUBSCRIBE', channel)

const perStream = []
const lastStream = []
const tapLatency = []
const answerLatency = []
for (let i = 0; i < cfg.moves; i++) {
  const game = made[i % games]
  const ply = game.version - 1
  const version = game.version + 1
  const t0 = performance.now()
  const r = await request(cfg.a, 'POST', `/v1/games/${game.id}/moves`, ply % 2 ? game.tokens.black : game.tokens.white,
    { move: line[ply], expected_version: version - 1 })
  const tAnswer = performance.now()
  if (r.status !== 200 || r.body.version !== version) die(`ply ${ply + 1} (${line[ply]}): ${r.status} ${r.text.slice(0, 300)}`)
  game.version = version
  const key = mux ? `${game.id}:${version}` : version
  const times = await arrivals.until(key, cfg.streams, 10000, `move ${i + 1}`)
  const [tTap] = await tap.until(key, 1, 10000, `move ${i + 1} (raw subscriber)`)
  for (const t of times) perStream.push(t - t0)
  lastStream.push(Math.max(...times) - t0)
  tapLatency.push(tTap - t0)
  answerLatency.push(tAnswer - t0)
}
const open = streams.filter((s) => !s.closed).length
if (open !== cfg.streams) die(`${cfg.streams - open} streams closed during the moves`)
for (const s of streams) s.req.destroy()
tapConn.close()
capture.close()
if (captured.length !== cfg.moves) die(`captured ${captured.length} publications for ${cfg.moves} moves`)

// ---------------------------------------------------------------- phase 2: Redis alone
const refChannel = `chessd:bench:{${id}}`
const infoConn = await redisConnection(cfg.redisPort)
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await infoConn.send('INFO', 'memory'))[1])
const memBefore = await usedMemory()
const refArrivals = new Arrivals()
const subs = await subscribers(cfg.subscribers, refChannel, refArrivals, { byCount: mux })
const memAfter = await usedMemory()
const publisher = await redisConnection(cfg.redisPort)
const refPer = []
const refLast = []
for (const [i, payload] of captured.entries()) {
  const version = mux ? i + 1 : parseInt(payload, 10)
  const t0 = performance.now()
  const receivers = await publisher.send('PUBLISH', refChannel, payload)
  if (receivers !== cfg.subscribers) die(`PUBLISH reached ${receivers} of ${cfg.subscribers} subscribers`)
  const times = await refArrivals.until(version, cfg.subscribers, 10000, `reference message ${i + 1}`)
  for (const t of times) refPer.push(t - t0)
  refLast.push(Math.max(...times) - t0)
}
for (const s of subs) s.close()
publisher.close()
infoConn.close()

// ---------------------------------------------------------------- report
const kib = (x) => `${x} KiB`
const perIdle = (k) => ((idle[k].rss - before[k].rss) * 1024) / (cfg.streams / 2)
const ratio = (a, b) => (b > 0 ? (a / b).toFixed(2) : 'n/a')
const q = (xs, p) => quantile(xs, p)
console.log('')
console.log(mux
  ? `  ${cfg.streams} multi-game streams, each following the same ${games} games (half on B, half on C; half NDJSON, half SSE), ${cfg.moves} moves on A round the games, one at a time`
  : `  ${cfg.streams} streams on game ${id} (half on B, half on C; half NDJSON, half SSE), ${cfg.moves} moves on A, one at a time`)
console.log(`  replica B: RSS ${kib(before.b.rss)} -> ${kib(idle.b.rss)}, threads ${before.b.threads} -> ${idle.b.threads}`)
console.log(`  replica C: RSS ${kib(before.c.rss)} -> ${kib(idle.c.rss)}, threads ${before.c.threads} -> ${idle.c.threads}`)
console.log(`  memory per idle stream: B ${(perIdle('b') / 1024).toFixed(1)} KiB, C ${(perIdle('c') / 1024).toFixed(1)} KiB` +
  ` (Redis: ${((memAfter - memBefore) / cfg.subscribers / 1024).toFixed(1)} KiB of used_memory per raw subscriber)`)
console.log('')
console.log('  latency (ms), from the request (move) or PUBLISH (reference) to the receiver:')
const row = (label, xs) => console.log(`    ${label.padEnd(48)} ${summary(xs)}`)
row('move -> answer on A', answerLatency)
row("move -> raw subscriber (chessd's PUBLISH)", tapLatency)
row(`move -> event, each of ${cfg.streams} streams`, perStream)
row('move -> event on the last stream', lastStream)
row(`reference: PUBLISH -> each of ${cfg.subscribers} subscribers`, refPer)
row('reference: PUBLISH -> the last subscriber', refLast)
console.log('')
console.log('goal: move -> event p99 < 50 ms')
console.log(`move->event p50 ms: ${ms(q(perStream, 0.5))}`)
console.log(`move->event p99 ms: ${ms(q(perStream, 0.99))}`)
console.log(`memory per idle stream KiB: ${((perIdle('b') + perIdle('c')) / 2 / 1024).toFixed(1)}`)
console.log(`ratio move->event / Redis PUBLISH->subscriber p50: ${ratio(q(perStream, 0.5), q(refPer, 0.5))}`)
console.log(`ratio move->event / Redis PUBLISH->subscriber p99: ${ratio(q(perStream, 0.99), q(refPer, 0.99))}`)
console.log(`ratio (move->event minus move->raw subscriber) / Redis PUBLISH->subscriber p50: ` +
  `${ratio(q(perStream, 0.5) - q(tapLatency, 0.5), q(refPer, 0.5))}`)
process.exit(0)
