// Creates `count` correspondence games on a chessd (base URL), `parallel`
// requests at a time on kept-alive connections: single POST /v1/games, or
// POST /v1/games/bulk of up to `bulk` games each when bulk is given and not
// 0. Exits non-zero on any answer but 201. Run by tests/bench/sleeping_bench.sh.
//
//   usage: node sleeping_client.mjs URL COUNT PARALLEL SETTINGS_JSON [BULK]
import http from 'node:http';

const [base, countText, parallelText, body, bulkText = '0'] = process.argv.slice(2);
const count = Number(countText), parallel = Number(parallelText), bulk = Number(bulkText);
const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
const settings = JSON.parse(body);
let next = 0, done = 0;

// One POST of payload to path; resolves to the answer's body, rejects on a
// status but 201.
function post(path, payload) {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => (res.statusCode === 201 ? resolve(Buffer.concat(chunks).toString())
        : reject(new Error(`POST ${path}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 400)}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// Makes n games, in one call; resolves to how many the answer made. The
// pairings are empty, so that a game is the size of a single one.
async function create(n) {
  if (!bulk) return post('/v1/games', body).then(() => 1);
  const games = Array.from({ length: n }, () => ({}));
  return JSON.parse(await post('/v1/games/bulk', JSON.stringify({ ...settings, games }))).count;
}

async function worker() {
  while (next < count) {
    const n = bulk ? Math.min(bulk, count - next) : 1;
    next += n;
    const made = await create(n);
    if (made !== n) throw new Error(`a bulk of ${n} made ${made} games`);
    done += made;
  }
}

await Promise.all(Array.from({ length: parallel }, worker));
agent.destroy();
console.log(`created ${done}`);
