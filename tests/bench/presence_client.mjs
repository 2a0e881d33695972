// presence_client.mjs: the HTTP side of presence_bench.sh. `create URL N
// TIMED` makes N games (TIMED 1: a ten-minute clock) and prints them as
// JSON; `play URL FILE` plays a fixed line of ten plies in each game of FILE
// with its players' tokens and prints the number of moves made.
const LINE = ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1b5', 'a7a6', 'b5a4', 'g8f6', 'e1g1', 'f8e7'];
const [mode, base, arg, timed] = process.argv.slice(2);

async function post(path, body, token) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

if (mode === 'create') {
  const games = [];
  for (let i = 0; i < Number(arg); i++) {
    const g = await post('/v1/games', timed === '1' ? { clock: { initial_ms: 600000, increment_ms: 0 } } : {});
    games.push({ id: g.id, version: g.version, tokens: g.tokens });
  }
  process.stdout.write(JSON.stringify(games));
} else if (mode === 'play') {
  const { readFileSync } = await import('node:fs');
  const games = JSON.parse(readFileSync(arg, 'utf8'));
  let moves = 0;
  for (const g of games) {
    let version = g.version;
    for (let i = 0; i < LINE.length; i++) {
      const r = await post(`/v1/games/${g.id}/moves`, { move: LINE[i], expected_version: version },
        i % 2 ? g.tokens.black : g.tokens.white);
      version = r.version;
      moves++;
    }
  }
  console.log(moves);
} else {
  console.error('usage: presence_client.mjs create URL N TIMED | play URL FILE');
  process.exit(2);
}
