// The client of tests/bench/engine_bench.sh (see its header for the method).
//   analysis: the same positions analysed by chessd (POST /v1/position/analysis)
//             and by Stockfish driven directly over its pipes, interleaved.
//   games:    games at a level against chessd's engine, timing each engine
//             reply on the event stream; then the same level's search driven
//             directly on the positions the engine met, for its think time.
// Prints the report; dies (exit 1, the reason on stderr) on any answer or
// event that is not what it must be.
//
//   usage: node engine_bench.mjs analysis|games CONFIG_JSON
import http from 'node:http'
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'

const [mode, cfgText] = process.argv.slice(2)
const cfg = JSON.parse(cfgText ?? '{}')

function die(message) {
  process.stderr.write(`engine_bench: ${message}\n`)
  process.exit(1)
}
for (const event of ['uncaughtException', 'unhandledRejection']) process.on(event, (error) => die(`${error.stack ?? error}`))

// ---------------------------------------------------------------- figures
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] : NaN
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
}
const ms = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a')
const max = (xs) => xs.reduce((a, b) => (a > b ? a : b), -Infinity)
const percentiles = (xs) =>
  `p50 ${ms(quantile(xs, 0.5)).padStart(7)}  p90 ${ms(quantile(xs, 0.9)).padStart(7)}  ` +
  `p99 ${ms(quantile(xs, 0.99)).padStart(7)}  max ${ms(max(xs)).padStart(7)}`

/** On-CPU time (ms) of every thread of the given processes (/proc/PID/task/TID/schedstat), summed. */
function cpuMs(pids) {
  let ns = 0
  for (const pid of pids) {
    let tasks = []
    try { tasks = readdirSync(`/proc/${pid}/task`) } catch { continue }
    for (const tid of tasks) {
      try { ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) } catch { /* a thread gone */ }
    }
  }
  return ns / 1e6
}

// ---------------------------------------------------------------- HTTP
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** One JSON request on a kept-alive connection; resolves to { status, body, text, t } (t: when the answer ended). */
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
        const t = performance.now()
        const text = Buffer.concat(chunks).toString('utf8')
        try {
          resolve({ status: res.statusCode, body: text ? JSON.parse(text) : null, text, t })
        } catch {
          reject(new Error(`${method} ${path}: ${res.statusCode} answer is not JSON: ${text.slice(0, 300)}`))
        }
      })
      res.on('error', reject)
    })
    req.setNoDelay(true)
    req.on('error', reject)
    if (body !== undefined) req.write(body)
    req.end()
  })
}

// ---------------------------------------------------------------- UCI
/**
 * Stockfish over its pipes, as chessd's api/engine/uci.c runs it: its own
 * process at nice +10, stderr to /dev/null, one command a line. until(pred)
 * resolves to [line, t] for the first line (after the call) that pred accepts,
 * t the time its bytes were read.
 */
class Uci {
  constructor(path) {
    this.proc = spawn('nice', ['-n', '10', path], { stdio: ['pipe', 'pipe', 'ignore'] })
    this.proc.on('exit', (code, signal) => { if (!this.quitting) die(`${path} exited (${code ?? signal})`) })
    this.proc.stdin.on('error', (e) => die(`writing to ${path}: ${e.message}`))
    this.pending = ''
    this.waiter = null
    this.proc.stdout.setEncoding('latin1')
    this.proc.stdout.on('data', (chunk) => {
      const t = performance.now()
      this.pending += chunk
      let eol
      while ((eol = this.pending.indexOf('\n')) >= 0) {
        const line = this.pending.slice(0, eol).replace(/\r$/, '')
        this.pending = this.pending.slice(eol + 1)
        const w = this.waiter
        if (w && w.pred(line)) {
          this.waiter = null
          clearTimeout(w.timer)
          w.resolve([line, t])
        }
      }
    })
  }

  send(...lines) {
    this.proc.stdin.write(lines.map((l) => `${l}\n`).join(''))
  }

  until(pred, what, timeoutMs = 10000) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => die(`no ${what} from the engine within ${timeoutMs} ms`), timeoutMs)
      this.waiter = { pred, resolve, timer }
    })
  }

  /** uci ... uciok; then the options chessd's boot() sets, then isready. */
  async handshake(options) {
    const ok = this.until((l) => {
      if (l.startsWith('id name ')) this.name = l.slice(8)
      return l === 'uciok'
    }, 'uciok')
    this.send('uci')
    await ok
    this.send(...options.map(([n, v]) => `setoption name ${n} value ${v}`))
    await this.ready()
  }

  async ready() {
    const ok = this.until((l) => l === 'readyok', 'readyok')
    this.send('isready')
    return (await ok)[1]
  }

  /** position + go; resolves to { ms, bestmove } timed from the write to the bestmove line. */
  async search(position, go) {
    const done = this.until((l) => l.startsWith('bestmove '), 'bestmove', 30000)
    const t0 = performance.now()
    this.send(position, go)
    const [line, t] = await done
    return { ms: t - t0, bestmove: line.split(' ')[1] }
  }

  quit() {
    this.quitting = true
    this.send('quit')
  }
}

// chessd's boot(): Threads, Hash, UCI_ShowWDL (Skill Level is at its maximum already).
const BOOT_OPTIONS = [['Threads', 1], ['Hash', cfg.hashMb ?? 16], ['UCI_ShowWDL', 'true']]
const UCI_MOVE = /^[a-h][1-8][a-h][1-8][qrbn]?$/

// ---------------------------------------------------------------- analysis
async function analysis() {
  const direct = new Uci(cfg.stockfish)
  await direct.handshake(BOOT_OPTIONS)
  // chessd's engine gets UCI_Chess960 false before its first search (uci.c: its value unknown until set)
  direct.send('setoption name UCI_Chess960 value false')
  await direct.ready()

  const viaDirect = async (fen, nodes) => direct.search(`position fen ${fen}`, `go nodes ${nodes}`)
  const viaChessd = async (fen, nodes) => {
    const t0 = performance.now()
    const r = await request(cfg.url, 'POST', '/v1/position/analysis', null, { fen, nodes })
    if (r.status !== 200) die(`POST /v1/position/analysis ${fen} nodes ${nodes}: ${r.status} ${r.text.slice(0, 300)}`)
    const line = r.body.lines?.[0]
    if (!UCI_MOVE.test(r.body.bestmove ?? '') || !line || !(line.nodes > 0) || !Array.isArray(line.pv) || line.pv[0] !== r.body.bestmove)
      die(`POST /v1/position/analysis ${fen}: not an analysis: ${r.text.slice(0, 300)}`)
    if (r.body.stopped) die(`POST /v1/position/analysis ${fen} nodes ${nodes}: stopped by the deadline (raise --engine-max-think-ms)`)
    return { ms: r.t - t0, bestmove: r.body.bestmove, nodes: line.nodes }
  }
  const targets = { direct: viaDirect, chessd: viaChessd }
  // The processes whose CPU time an analysis takes: chessd and its engine, or the direct engine.
  const cpuPids = { direct: [[direct.proc.pid]], chessd: [[cfg.chessdPid], [cfg.chessdEnginePid]] }
  const one = async (name, fen, nodes) => {
    const cpu0 = cpuPids[name].map(cpuMs)
    const e = await targets[name](fen, nodes)
    e.cpu = cpuPids[name].map((pids, i) => cpuMs(pids) - cpu0[i])
    return e
  }

  // Warm-up: each position once on each at the smallest node count (the network is read and the hash touched).
  const smallest = Math.min(...cfg.nodes)
  for (let i = 0; i < cfg.warmup; i++) {
    for (const fen of cfg.positions) for (const name of ['direct', 'chessd']) await one(name, fen, smallest)
  }

  // Interleaved by position: each position goes to both targets one after
  // the other (which first alternates), so that the machine's noise, which
  // changes over seconds, falls on both alike; each target still sees the
  // positions in the same order. The rate: positions / the sum over the
  // positions of each one's median time over the repetitions (a spike from
  // elsewhere on the machine in one repetition does not move it).
  const R = {} // R[nodes][name] = { byPosition: [[ms per rep]], times, best, nodes, cpu: [ms per process group] }
  const blank = (groups) => ({ byPosition: cfg.positions.map(() => []), times: [], best: [], nodes: [], cpu: Array(groups).fill(0) })
  for (const n of cfg.nodes) R[n] = { direct: blank(1), chessd: blank(2) }
  for (let rep = 0; rep < cfg.reps; rep++) {
    for (const n of cfg.nodes) {
      for (const [i, fen] of cfg.positions.entries()) {
        for (const name of (rep + i) % 2 ? ['chessd', 'direct'] : ['direct', 'chessd']) {
          const e = await one(name, fen, n)
          const r = R[n][name]
          r.byPosition[i].push(e.ms)
          r.times.push(e.ms)
          r.best.push(e.bestmove)
          if (e.nodes) r.nodes.push(e.nodes)
          e.cpu.forEach((c, k) => { r.cpu[k] += c })
        }
      }
    }
  }
  for (const n of cfg.nodes) {
    for (const r of Object.values(R[n])) r.rate = cfg.positions.length / (r.byPosition.reduce((a, xs) => a + median(xs), 0) / 1000)
  }
  direct.quit()

  console.log(`  engine: ${direct.name} (${cfg.stockfish}), Threads 1, Hash ${cfg.hashMb ?? 16} MiB, nice +10; ` +
    `${cfg.positions.length} positions, ${cfg.reps} repetition(s) of each node count, interleaved position by position`)
  console.log('')
  console.log(`  ${'target'.padEnd(40)} ${'analyses/s'.padStart(10)}   per analysis (ms)`)
  const summary = []
  for (const n of cfg.nodes) {
    const d = R[n].direct
    const c = R[n].chessd
    const agree = c.best.filter((m, i) => m === d.best[i]).length
    console.log(`  ${`nodes ${n}: Stockfish over its pipes`.padEnd(40)} ${d.rate.toFixed(2).padStart(10)}   ${percentiles(d.times)}`)
    console.log(`  ${`nodes ${n}: chessd POST /analysis`.padEnd(40)} ${c.rate.toFixed(2).padStart(10)}   ${percentiles(c.times)}`)
    const paired = c.times.map((x, i) => x - d.times[i])
    console.log(`  ${''.padEnd(40)} same bestmove in ${agree} of ${c.best.length} analyses; chessd - direct, the same ` +
      `position one after the other: median ${ms(median(paired))} ms; median nodes reported ${median(c.nodes)}`)
    const count = c.times.length
    console.log(`  ${''.padEnd(40)} CPU per analysis: the direct engine ${ms(d.cpu[0] / count)} ms; chessd's engine ` +
      `${ms(c.cpu[1] / count)} ms + chessd itself ${ms(c.cpu[0] / count)} ms`)
    summary.push([n, c.rate / d.rate, d, c])
  }
  console.log('')
  console.log('goal: ratio chessd/Stockfish analyses per second >= 0.9')
  for (const [n, ratio, d, c] of summary) {
    console.log(`nodes ${n} Stockfish analyses/s: ${d.rate.toFixed(2)}`)
    console.log(`nodes ${n} chessd analyses/s: ${c.rate.toFixed(2)}`)
    console.log(`nodes ${n} chessd p50 ms: ${ms(quantile(c.times, 0.5))}`)
    console.log(`nodes ${n} chessd p99 ms: ${ms(quantile(c.times, 0.99))}`)
    console.log(`nodes ${n} ratio chessd/Stockfish analyses/s: ${ratio.toFixed(3)}`)
    console.log(`nodes ${n} chessd CPU per analysis ms: ${ms(c.cpu[0] / c.times.length)}`)
    console.log(`nodes ${n} ratio engine CPU direct/(chessd's engine + chessd): ${(d.cpu[0] / (c.cpu[0] + c.cpu[1])).toFixed(3)}`)
  }
}

// ---------------------------------------------------------------- games
/** xorshift32 from a fixed seed: the client's moves are the same from run to run (the engine's are not). */
function rng(seed) {
  let x = seed >>> 0 || 1
  return (bound) => {
    x ^= x << 13; x >>>= 0
    x ^= x >>> 17
    x ^= x << 5; x >>>= 0
    return x % bound
  }
}

/**
 * A game's NDJSON event stream on base: each event by version, with its
 * arrival time. event(version) resolves once that version has arrived; the
 * first event must be the snapshot, then every change the next version.
 */
function openStream(base, id) {
  const url = new URL(`/v1/games/${id}/events`, base)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, headers: { Accept: 'application/x-ndjson' }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET ${url.pathname}: ${res.statusCode}`))
        return
      }
      res.socket.setNoDelay(true)
      res.setEncoding('utf8')
      const events = new Map()
      const waiters = new Map()
      let pending = ''
      let last = 0
      res.on('data', (chunk) => {
        const t = performance.now()
        pending += chunk
        let eol
        while ((eol = pending.indexOf('\n')) >= 0) {
          const l = pending.slice(0, eol)
          pending = pending.slice(eol + 1)
          if (l === '') continue
          const ev = JSON.parse(l)
          if (ev.type === 'heartbeat') continue
          const expected = last === 0 ? 'game' : 'change'
          if (ev.type !== expected || (last !== 0 && ev.version !== last + 1))
            die(`stream of ${id} on ${base}: after version ${last} came ${ev.type} ${ev.version}: ${l.slice(0, 200)}`)
          last = ev.version
          events.set(ev.version, { ev, t })
          waiters.get(ev.version)?.()
        }
      })
      res.on('error', () => {})
      resolve({
        close: () => req.destroy(),
        event: (version, timeoutMs, what) => new Promise((ok) => {
          if (events.has(version)) return ok(events.get(version))
          const timer = setTimeout(() => die(`${what}: version ${version} of game ${id} did not arrive on ${base} within ${timeoutMs} ms`), timeoutMs)
          waiters.set(version, () => { clearTimeout(timer); waiters.delete(version); ok(events.get(version)) })
        }),
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/** The game's legal moves at version (read again while a replica's cache is behind). */
async function legalMoves(base, id, version) {
  for (let i = 0; i < 100; i++) {
    const r = await request(base, 'GET', `/v1/games/${id}`)
    if (r.status !== 200) die(`GET /v1/games/${id}: ${r.status} ${r.text.slice(0, 300)}`)
    if (r.body.version === version) return r.body.position.legal_moves.map((m) => m.uci)
    if (r.body.version > version) die(`GET /v1/games/${id}: version ${r.body.version}, expected ${version}`)
    await new Promise((ok) => setTimeout(ok, 2))
  }
  die(`GET /v1/games/${id} stayed behind version ${version}`)
}

/**
 * Plays games on base (the engine black at cfg.level) until `count` engine
 * replies were timed; pushes { answer, request } latencies (ms) to out and
 * each position the engine moved in (initial FEN and the moves before its
 * reply, with the game's index) to positions.
 */
async function playGames(base, count, random, out, positions) {
  let timed = 0
  while (timed < count) {
    const created = await request(base, 'POST', '/v1/games', null, { engine: { level: cfg.level, color: 'black' } })
    if (created.status !== 201) die(`POST /v1/games on ${base}: ${created.status} ${created.text.slice(0, 300)}`)
    const { id, tokens, initial_fen: initialFen } = created.body
    if (!tokens?.white || tokens.black) die(`POST /v1/games: expected the white token only: ${created.text.slice(0, 300)}`)
    const game = out.games++
    const stream = await openStream(base, id)
    await stream.event(1, 5000, 'snapshot')
    let legal = created.body.position.legal_moves.map((m) => m.uci)
    const moves = []
    let version = 1
    for (let ply = 0; timed < count && ply < cfg.maxPlies; ply += 2) {
      const mine = legal[random(legal.length)]
      const t0 = performance.now()
      const r = await request(base, 'POST', `/v1/games/${id}/moves`, tokens.white, { move: mine, expected_version: version })
      if (r.status !== 200 || r.body.version !== version + 1) die(`game ${id} move ${mine}: ${r.status} ${r.text.slice(0, 300)}`)
      moves.push(mine)
      if (r.body.status !== 'active') break
      const { ev, t } = await stream.event(version + 2, 10000, `the engine's reply to ${mine}`)
      if (ev.event !== 'move' || !UCI_MOVE.test(ev.move?.uci ?? '') || ev.move_count !== moves.length + 1)
        die(`game ${id}: expected the engine's move as version ${version + 2}, got ${JSON.stringify(ev).slice(0, 300)}`)
      out.answer.push(t - r.t)
      out.request.push(t - t0)
      if (ply === 0) out.first.push(t - r.t)
      positions.push({ game, initialFen, moves: [...moves] })
      timed++
      moves.push(ev.move.uci)
      version += 2
      if (ev.status !== 'active') break
      legal = await legalMoves(base, id, version)
    }
    stream.close()
  }
}

async function games() {
  const random = rng(cfg.seed)
  const R = {}
  const positions = []
  for (const t of cfg.targets) R[t.name] = { answer: [], request: [], first: [], games: 0 }
  // Interleaved: each repetition plays its share on every target in turn.
  for (let rep = 0; rep < cfg.reps; rep++) {
    for (const t of cfg.targets) {
      const share = Math.floor(cfg.moves / cfg.reps) + (rep < cfg.moves % cfg.reps ? 1 : 0)
      await playGames(t.base, share, random, R[t.name], positions)
    }
  }

  // The think time: the same level's commands to Stockfish directly, on the
  // same positions, a new game (ucinewgame, isready) where chessd's engine
  // had one (its pool sends them when the game it serves changes).
  const direct = new Uci(cfg.stockfish)
  await direct.handshake(BOOT_OPTIONS)
  // level_move's engine_set_strength (UCI_Elo, then UCI_LimitStrength, when
  // the level limits it) and engine_search's MultiPV (when not 1).
  const l = cfg.levelSettings
  direct.send('setoption name UCI_Chess960 value false')
  if (l.elo) direct.send(`setoption name UCI_Elo value ${l.elo}`, 'setoption name UCI_LimitStrength value true')
  if (l.multipv > 1) direct.send(`setoption name MultiPV value ${l.multipv}`)
  await direct.ready()
  const go = ['go', l.depth && `depth ${l.depth}`, l.nodes && `nodes ${l.nodes}`, l.movetime && `movetime ${l.movetime}`].filter(Boolean).join(' ')
  const think = []
  const newGame = []
  let game = -1
  for (const p of positions) {
    if (p.game !== game) {
      game = p.game
      const t0 = performance.now()
      direct.send('ucinewgame')
      newGame.push((await direct.ready()) - t0)
    }
    const s = await direct.search(`position fen ${p.initialFen} moves ${p.moves.join(' ')}`, go)
    if (!UCI_MOVE.test(s.bestmove)) die(`the engine's bestmove ${s.bestmove} in ${p.initialFen} moves ${p.moves.join(' ')}`)
    think.push(s.ms)
  }
  direct.quit()

  // Every reply was played by the target's engine replica, once.
  for (const t of cfg.targets) {
    const metrics = await new Promise((ok, fail) => http.get(new URL('/metrics', t.engine), (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { text += c })
      res.on('end', () => ok(text))
    }).on('error', fail))
    const played = Number(/^chessd_engine_turns_total\{outcome="played"\} (\d+)$/m.exec(metrics)?.[1])
    if (played !== R[t.name].answer.length)
      die(`${t.label}: ${t.engine} played ${played} turns, the client timed ${R[t.name].answer.length} replies`)
  }

  const thinkMedian = median(think)
  console.log(`  level ${cfg.level}: ${l.elo ? `UCI_Elo ${l.elo}, ` : ''}MultiPV ${l.multipv}, "${go}", ` +
    `${l.random}/1000 of its moves at random without a search; the engine plays black, the client random legal moves`)
  console.log(`  ${cfg.targets.map((t) => `${t.name}: ${R[t.name].answer.length} engine replies in ${R[t.name].games} games`).join('; ')}`)
  console.log('')
  console.log('  engine reply latency (ms):')
  const row = (label, xs) => console.log(`    ${label.padEnd(60)} ${percentiles(xs)}`)
  for (const t of cfg.targets) {
    row(`${t.label}: move's answer -> engine's move event`, R[t.name].answer)
    row(`${t.label}: move's request -> engine's move event`, R[t.name].request)
    row(`${t.label}: answer -> event, minus the median think`, R[t.name].answer.map((x) => x - thinkMedian))
    row(`${t.label}: answer -> event, a game's first reply (${R[t.name].first.length})`, R[t.name].first)
    const early = R[t.name].answer.filter((x) => x < 0).length
    if (early) console.log(`    ${t.label}: ${early} engine move event(s) arrived before the answer to the move they reply to`)
  }
  row(`think: level ${cfg.level}'s search, Stockfish directly (${think.length} positions)`, think)
  row(`ucinewgame + isready, Stockfish directly (${newGame.length} games)`, newGame)
  console.log('')
  console.log(`  (the latency includes the think: level ${cfg.level} searches in about the time of the "think" row,`)
  console.log('   or not at all for its random moves; "minus the median think" takes that median off every reply;')
  console.log("   a game's first reply also waits for ucinewgame + isready, sent when the engine changes games)")
  console.log('')
  console.log('goal: engine reply latency minus the think p99 < 20 ms')
  console.log(`level ${cfg.level} think p50 ms: ${ms(thinkMedian)}`)
  console.log(`level ${cfg.level} think p99 ms: ${ms(quantile(think, 0.99))}`)
  for (const t of cfg.targets) {
    const a = R[t.name].answer
    console.log(`${t.name} engine reply p50 ms: ${ms(quantile(a, 0.5))}`)
    console.log(`${t.name} engine reply p99 ms: ${ms(quantile(a, 0.99))}`)
    console.log(`${t.name} engine reply minus median think p99 ms: ${ms(quantile(a, 0.99) - thinkMedian)}`)
  }
}

if (mode === 'analysis') await analysis()
else if (mode === 'games') await games()
else die(`usage: node engine_bench.mjs analysis|games CONFIG_JSON (got '${mode}')`)
process.exit(0)
