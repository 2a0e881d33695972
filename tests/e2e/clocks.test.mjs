// The clocks clubs play, over real HTTP and a real Redis: Bronstein and
// simple delay, periods, a clock a side, Armageddon's draw odds, a start
// time, time given, correspondence days and the idle end (on a server whose
// day and idle end are a second, the settings' documented use for tests),
// the rules a game switches, and a clock on every move in the Game and its
// PGN. Times are the server's; a check allows what a loaded machine adds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { get, post, expectProblem, sleep } from './http.mjs';

const SLACK_MS = 3000; // a loaded two-core machine under the sanitizers
let server;
before(async () => {
  server = await startServer(['--correspondence-day', '1', '--idle-end', '1']);
});
after(async () => { await server?.stop(); });

async function newGame(body) {
  const res = await post(server, '/v1/games', body);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, tokens: res.body.tokens, version: res.body.version, created: res.body };
}

async function act(g, color, what, body = {}) {
  const res = await post(server, `/v1/games/${g.id}/${what}`, { ...body, expected_version: g.version },
    { headers: { authorization: `Bearer ${g.tokens[color]}` } });
  if (res.status === 200) g.version = res.body.version;
  return res;
}

/** Plays the moves in turn, White first; returns the answers. */
async function play(g, moves) {
  const answers = [];
  for (const [i, move] of moves.entries()) {
    const res = await act(g, i % 2 ? 'black' : 'white', 'moves', { move });
    assert.equal(res.status, 200, res.text);
    answers.push(res.body);
  }
  return answers;
}

test('Bronstein delay: a move quicker than the delay costs nothing, so every clock stays full', async () => {
  const g = await newGame({ clock: { initial_ms: 60000, delay_ms: 10000, delay_mode: 'bronstein' } });
  const answers = await play(g, ['e4', 'e5', 'Nf3', 'Nc6']);
  assert.deepEqual(answers.map((a) => a.move.clock_ms), [60000, 60000, 60000, 60000]);
  const read = await get(server, `/v1/games/${g.id}`);
  assert.deepEqual(read.body.clocks, [60000, 60000, 60000, 60000]);
  assert.equal(read.body.time_control, '60d10');
  assert.deepEqual(read.body.clock.white, { initial_ms: 60000, increment_ms: 0, delay_ms: 10000, delay_mode: 'bronstein',
    periods: [{ moves: null, ms: 60000 }] });
});

test('simple delay: the flag falls a delay after the time runs out, and a quick move costs nothing', async () => {
  const g = await newGame({ clock: { initial_ms: 60000, delay_ms: 10000, delay_mode: 'simple' } });
  const [, second] = await play(g, ['e4', 'e5']);
  // White's clock runs from Black's move: its flag falls the delay and its minute later.
  assert.equal(second.deadline_ms - second.clock.at_ms, 10000 + 60000);
  const white = await act(g, 'white', 'moves', { move: 'Nf3' });
  assert.equal(white.status, 200, white.text);
  assert.equal(white.body.move.clock_ms, 60000);
});

test('periods: completing the first adds the next period, and the increment comes with every move', async () => {
  const control = { periods: [{ moves: 2, ms: 60000 }, { ms: 30000 }], increment_ms: 1000 };
  const g = await newGame({ clock: control });
  assert.equal(g.created.time_control, '2/60+1:30+1');
  const answers = await play(g, ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5']);
  // The first two plies are free: no increment, no time spent.
  assert.deepEqual(answers.slice(0, 2).map((a) => a.move.clock_ms), [60000, 60000]);
  // Each side's second move ends its first period: +30 s, and +1 s.
  for (const a of answers.slice(2, 4)) {
    assert.ok(a.move.clock_ms <= 91000 && a.move.clock_ms > 91000 - SLACK_MS, JSON.stringify(a.move));
  }
  // The third is in the last period: the increment only.
  assert.ok(answers[4].move.clock_ms <= answers[2].move.clock_ms + 1000, JSON.stringify(answers[4].move));
  assert.ok(answers[4].move.clock_ms > answers[2].move.clock_ms + 1000 - SLACK_MS, JSON.stringify(answers[4].move));
  const pgn = await get(server, `/v1/games/${g.id}/pgn`);
  assert.match(pgn.text, /\[TimeControl "2\/60\+1:30\+1"\]/);
  assert.match(pgn.text, /^1\. e4 \{ \[%clk 0:01:00\] \} 1\.\.\. e5 \{ \[%clk 0:01:00\] \} 2\. Nf3 \{ \[%clk 0:01:3\d\] \}/m);
});

test('odds: each side has its own clock, and the PGN says both', async () => {
  const g = await newGame({ clock: { white: { initial_ms: 60000 }, black: { initial_ms: 30000, increment_ms: 2000 } } });
  assert.equal(g.created.clock.white_ms, 60000);
  assert.equal(g.created.clock.black_ms, 30000);
  assert.equal(g.created.clock.black.increment_ms, 2000);
  const pgn = await get(server, `/v1/games/${g.id}/pgn`);
  assert.match(pgn.text, /\[TimeControl "60\+0"\]\n\[BlackTimeControl "30\+2"\]/);
});

test('Armageddon: a draw agreed is a win for Black, by draw odds', async () => {
  const g = await newGame({ clock: { initial_ms: 60000 }, draw_odds: 'black' });
  assert.equal(g.created.draw_odds, 'black');
  await play(g, ['e4', 'e5']);
  assert.equal((await act(g, 'white', 'draw', { action: 'offer' })).status, 200);
  const accept = await act(g, 'black', 'draw', { action: 'accept' });
  assert.equal(accept.status, 200, accept.text);
  assert.deepEqual([accept.body.status, accept.body.result, accept.body.termination], ['draw', '0-1', 'draw_odds']);
  assert.equal(accept.body.position.draw_reason, null, 'the kind of draw a draw by odds was is not kept');
});

test('the rules: no abort, and no draw offer before the move the organiser set', async () => {
  const g = await newGame({ clock: { initial_ms: 600000 }, rules: ['no_abort', 'no_give_time'], draw_offers_from_move: 2 });
  assert.deepEqual(g.created.rules, ['no_abort', 'no_give_time']);
  expectProblem(await act(g, 'white', 'abort'), 409, 'abort_not_allowed');
  expectProblem(await act(g, 'white', 'draw', { action: 'offer' }), 409, 'draw_too_early');
  await play(g, ['e4', 'e5']);
  assert.equal((await act(g, 'white', 'draw', { action: 'offer' })).status, 200, 'move 2: offers are allowed');
  const timed = await newGame({ clock: { initial_ms: 60000 }, rules: ['no_give_time'] });
  expectProblem(await act(timed, 'white', 'clock/add-time', { ms: 1000 }), 409, 'give_time_not_allowed');
});

test('time given: added to the opponent, counted, and bounded a game', async () => {
  const g = await newGame({ clock: { initial_ms: 60000 } });
  await play(g, ['e4', 'e5']);
  const given = await act(g, 'black', 'clock/add-time', { ms: 15000 });
  assert.equal(given.status, 200, given.text);
  assert.ok(given.body.clock.white_ms <= 75000 && given.body.clock.white_ms > 75000 - SLACK_MS, given.text);
  assert.deepEqual(given.body.clock.given_ms, { white: 0, black: 15000 });
  for (let total = 15000; total + 60000 <= 600000; total += 60000)
    assert.equal((await act(g, 'black', 'clock/add-time', { ms: 60000 })).status, 200);
  expectProblem(await act(g, 'black', 'clock/add-time', { ms: 60000 }), 409, 'give_time_too_much');
});

test('a start time runs the clock with no move made, and a flag that falls then loses', async () => {
  const created = Date.now();
  const g = await newGame({ clock: { initial_ms: 1000 }, start_clocks_at: created + 500 });
  assert.equal(g.created.clock.first_move_ms, 0, 'no first-move grace with a start time');
  assert.equal(g.created.clock.abort_at_ms, null);
  assert.equal(g.created.deadline_ms, g.created.clock.start_at_ms + 1000);
  await sleep(1500 + 200);
  const read = await get(server, `/v1/games/${g.id}`);
  assert.deepEqual([read.body.status, read.body.result, read.body.termination], ['timeout', '0-1', 'time_forfeit']);
  const rfc = await newGame({ clock: { initial_ms: 60000 }, start_clocks_at: new Date(Date.now() + 60000).toISOString() });
  assert.ok(Math.abs(rfc.created.clock.start_at_ms - (Date.now() + 60000)) < SLACK_MS);
});

test('correspondence: each move is due its days after the turn began, and an overdue one loses', async () => {
  const g = await newGame({ days_per_move: 2 }); // two one-second days
  assert.deepEqual([g.created.days_per_move, g.created.time_control, g.created.clock], [2, '-', null]);
  const [first, second] = await play(g, ['e4', 'e5']);
  assert.equal(first.deadline_ms, Date.parse(first.updated_at) + 2000);
  assert.equal(second.deadline_ms, Date.parse(second.updated_at) + 2000, 'a move restarts the days');
  await sleep(2000 + 300);
  const read = await get(server, `/v1/games/${g.id}`);
  assert.deepEqual([read.body.status, read.body.result, read.body.termination], ['timeout', '0-1', 'time_forfeit']);
  const pgn = await get(server, `/v1/games/${g.id}/pgn`);
  assert.match(pgn.text, /\[TimeControl "-"\]/);
});

test('the idle end: a game with neither clock nor days is lost by the side to move, or aborted before both moved', async () => {
  const g = await newGame({});
  assert.equal(g.created.deadline_ms, Date.parse(g.created.updated_at) + 1000, 'counted from the last change');
  await play(g, ['e4', 'e5', 'Nf3']);
  const fresh = await newGame({});
  await sleep(1000 + 300);
  const read = await get(server, `/v1/games/${g.id}`);
  assert.deepEqual([read.body.status, read.body.result, read.body.termination], ['timeout', '1-0', 'idle_end']);
  const never = await get(server, `/v1/games/${fresh.id}`);
  assert.deepEqual([never.body.status, never.body.result], ['aborted', '*']);
});

test('both players start the clocks now; one alone cannot, nor twice', async () => {
  const g = await newGame({ clock: { initial_ms: 60000 } });
  expectProblem(await act(g, 'white', 'clock/start', { other_token: g.tokens.white }), 403, 'forbidden');
  const started = await act(g, 'white', 'clock/start', { other_token: g.tokens.black });
  assert.equal(started.status, 200, started.text);
  assert.equal(started.body.clock.start_at_ms, started.body.clock.at_ms);
  assert.deepEqual([started.body.clock.running, started.body.clock.abort_at_ms], ['white', null]);
  assert.equal(started.body.deadline_ms, started.body.clock.at_ms + 60000);
  expectProblem(await act(g, 'black', 'clock/start', { other_token: g.tokens.white }), 409, 'clock_running');
});
