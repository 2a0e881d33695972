// Creates `count` correspondence games on a chessd (base URL), `parallel`
// requests at a time on kept-alive connections; exits non-zero on any
// answer but 201. Run by tests/bench/sleeping_bench.sh.
import http from 'node:http';

const [base, countText, parallelText, body] = process.argv.slice(2);
const count = Number(countText), parallel = Number(parallelText);
const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
const url = new URL('/v1/games', base);
let next = 0, done = 0;

function create() {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`POST /v1/games: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function worker() {
  while (next < count) {
    next++;
    await create();
    done++;
  }
}

await Promise.all(Array.from({ length: parallel }, worker));
agent.destroy();
console.log(`created ${done}`);
