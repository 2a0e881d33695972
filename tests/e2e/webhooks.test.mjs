// Webhook deliveries on a real Redis, two or three chessd replicas and a
// local receiver that checks every Standard Webhooks signature with node's
// own HMAC: every move and the end arrive signed, in order; failing first
// answers are retried with the same webhook-id and logged; a replica
// killed mid-delivery leaves the event to another, which sends it again
// with the same id; a redirect to an address outside --webhook-allow is
// refused without a connection to it; a key whose destination hangs holds
// half the delivery threads at most, so another key's events still go; an
// outbox whose mark was lost (a replica dead between a move and its
// marking, on a Cluster) is found by the sweep; offers reach only the
// subscriptions that ask for them; an event retried past
// --webhook-give-up-seconds is dropped, counted, and never tried again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHESSD_BIN, gameRedis, startRedis, startServer, tempDir } from './server.mjs';
import { get, post, sleep } from './http.mjs';
import { spec, validatorFor } from './openapi.mjs';
import { startReceiver } from './support/webhook_receiver.mjs';

const dir = tempDir('chessd-webhooks-');
const HOOK_HOST = '127.0.0.2';
const TIMEOUT_MS = 1500;
let redis, store, keyFile, key, otherKey, receiver, stray, replicas = [];

function newKey(name, ...scopes) {
  const r = spawnSync(CHESSD_BIN, ['keys', 'new', name, ...scopes], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [k, line] = r.stdout.split('\n');
  return { key: k, line };
}

const bearer = (token) => ({ headers: { authorization: `Bearer ${token}` } });

/** A replica on the shared Redis; workers 0: it delivers nothing. */
async function replica({ workers = 4, redirects = 0, timeoutMs = TIMEOUT_MS, retryMs = 300, giveUpSeconds, on = redis } = {}) {
  const server = await startServer(['--redis', on, '--service-keys-file', keyFile,
    '--webhook-allow', `${HOOK_HOST}/32`, '--webhook-timeout-ms', String(timeoutMs), '--webhook-retry-ms', String(retryMs),
    '--webhook-workers', String(workers), '--webhook-redirects', String(redirects),
    ...(giveUpSeconds ? ['--webhook-give-up-seconds', String(giveUpSeconds)] : [])]);
  replicas.push(server);
  return server;
}

/** A game with one subscription to url, made with the key (by default the first); { game, hook }. */
async function gameWithHook(server, url, events, withKey = key) {
  const res = await post(server, '/v1/games', { webhooks: [{ url, ...(events ? { events } : {}) }] }, bearer(withKey));
  assert.equal(res.status, 201, res.text);
  const game = res.body;
  assert.equal(game.webhooks.length, 1);
  const hook = game.webhooks[0];
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
  return { game, hook };
}

/** Plays ucis in game, alternating the players' tokens, on the servers in turn. */
async function play(servers, game, ucis) {
  let version = game.version;
  for (let i = 0; i < ucis.length; i++) {
    const token = i % 2 === 0 ? game.tokens.white : game.tokens.black;
    const res = await post(servers[i % servers.length], `/v1/games/${game.id}/moves`,
      { move: ucis[i], expected_version: version }, bearer(token));
    assert.equal(res.status, 200, res.text);
    version = res.body.version;
  }
  return version;
}

/** The receiver's requests for game id. */
const of = (id) => receiver.requests.filter((r) => JSON.parse(r.text).data.game === id);

async function waitFor(pred, ms, what) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
    await sleep(25);
  }
}

before(async () => {
  store = await gameRedis();
  redis = store.url;
  key = newKey('backend', 'games:create');
  otherKey = newKey('other', 'games:create');
  keyFile = path.join(dir, 'keys');
  writeFileSync(keyFile, `${key.line}\n${otherKey.line}\n`);
  key = key.key;
  otherKey = otherKey.key;
  const secrets = new Map();
  receiver = await startReceiver({ host: HOOK_HOST,
    secretFor: (r) => secrets.get(JSON.parse(r.text).data.subscription) });
  receiver.secrets = secrets;
  stray = await startReceiver({ host: '127.0.0.1' });
});

after(async () => {
  for (const server of replicas) if (server.proc.exitCode === null && server.proc.signalCode === null) await server.stop();
  await receiver?.close();
  await stray?.close();
  await store?.stop();
});

test('every move and the end arrive signed, in order, from any replica', async () => {
  const a = await replica();
  const b = await replica({ workers: 0 });
  const { game, hook } = await gameWithHook(a, `${receiver.url}/hook`);
  receiver.secrets.set(hook.id, hook.secret);
  const version = await play([a, b], game, ['e2e4', 'e7e5', 'g1f3']);
  const resign = await post(b, `/v1/games/${game.id}/resign`, { expected_version: version }, bearer(game.tokens.black));
  assert.equal(resign.status, 200, resign.text);
  await waitFor(() => of(game.id).length >= 4, 10000, 'four deliveries');
  const got = of(game.id);
  assert.equal(got.length, 4);
  for (const r of got) {
    assert.ok(r.verified, r.verifyReason);
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/hook');
    assert.equal(r.headers['content-type'], 'application/json');
  }
  const bodies = got.map((r) => JSON.parse(r.text));
  // What openapi.yaml's webhooks.gameEvent says is sent: the body and the three headers.
  const sent = spec().doc.webhooks.gameEvent.post;
  const body = validatorFor(sent.requestBody.content['application/json'].schema, 'webhooks.gameEvent body');
  for (const [i, x] of bodies.entries()) {
    assert.ok(body(x), `delivery ${i}: ${JSON.stringify(body.errors)}`);
    for (const p of sent.parameters) {
      const header = validatorFor(p.schema, `webhooks.gameEvent ${p.name}`, { header: true });
      assert.ok(header(got[i].headers[p.name]), `${p.name}: ${got[i].headers[p.name]}`);
    }
  }
  assert.deepEqual(bodies.map((x) => x.type), ['game.move', 'game.move', 'game.move', 'game.resign']);
  assert.deepEqual(bodies.map((x) => x.data.version), [2, 3, 4, 5]);
  assert.deepEqual(bodies.map((x) => x.data.ended), [false, false, false, true]);
  assert.equal(bodies[0].data.event.move.uci, 'e2e4');
  assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 4);
  // The log, read with the key that made the subscription, says each was delivered.
  const log = await get(b, `/v1/webhooks/${hook.id}/deliveries`, bearer(key));
  assert.equal(log.status, 200, log.text);
  assert.equal(log.body.deliveries.length, 4);
  assert.ok(log.body.deliveries.every((d) => d.outcome === 'delivered' && d.status === 200));
});

test('failing first answers are retried with the same webhook-id, each attempt logged', async () => {
  const [a] = replicas;
  const { game, hook } = await gameWithHook(a, `${receiver.url}/flaky`, ['move']);
  receiver.secrets.set(hook.id, hook.secret);
  receiver.next({ status: 503 });
  receiver.next({ status: 500 });
  await play([a], game, ['d2d4']);
  await waitFor(() => of(game.id).length >= 3, 10000, 'a third attempt');
  const got = of(game.id);
  assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'one event, one id');
  assert.ok(got.every((r) => r.verified));
  // The log has each attempt once its answer is in (newest first).
  let log = [];
  for (let i = 0; i < 200 && log.length < 3; i++) {
    log = (await get(a, `/v1/webhooks/${hook.id}/deliveries`, bearer(key))).body.deliveries;
    if (log.length < 3) await sleep(50);
  }
  assert.deepEqual(log.map((d) => [d.attempt, d.outcome, d.status]).reverse(),
    [[1, 'http_status', 503], [2, 'http_status', 500], [3, 'delivered', 200]]);
  // The waits double, on Redis's clock: 300 ms after the first, 600 ms after the second.
  const [third, second, first] = log;
  assert.equal(first.next_attempt_at - first.at, 300);
  assert.equal(second.next_attempt_at - second.at, 600);
  assert.equal(third.next_attempt_at, null);
  assert.ok(second.at >= first.next_attempt_at && third.at >= second.next_attempt_at, 'no try came early');
});

test('a replica killed mid-delivery: another sends the event again, with the same id', async () => {
  // Only the first replica delivers; the receiver holds its first request.
  for (const server of replicas) await server.stop();
  replicas = [];
  const doomed = await replica();
  const player = await replica({ workers: 0 });
  const { game, hook } = await gameWithHook(player, `${receiver.url}/slow`);
  receiver.secrets.set(hook.id, hook.secret);
  receiver.next({ hang: true });
  await play([player], game, ['c2c4']);
  await waitFor(() => of(game.id).length >= 1, 10000, 'the first attempt');
  doomed.proc.kill('SIGKILL');
  await doomed.exited;
  replicas = replicas.filter((s) => s !== doomed);
  const reply = await post(player, `/v1/games/${game.id}/moves`, { move: 'e7e5', expected_version: 2 },
    bearer(game.tokens.black));
  assert.equal(reply.status, 200, reply.text);
  const heir = await replica();
  // The claim's lease (the timeout and a margin) passes, then the heir sends both events.
  await waitFor(() => of(game.id).length >= 3, 15000, 'the event again and the next one');
  const got = of(game.id);
  assert.equal(got[0].headers['webhook-id'], got[1].headers['webhook-id'], 'the same event, the same id');
  assert.equal(got[0].text, got[1].text);
  assert.notEqual(got[2].headers['webhook-id'], got[1].headers['webhook-id']);
  assert.ok(got.every((r) => r.verified));
  assert.deepEqual(got.map((r) => JSON.parse(r.text).data.version), [2, 2, 3]);
  await heir.stop();
  replicas = replicas.filter((s) => s !== heir);
});

test('a redirect to an address outside --webhook-allow is refused, never connected to', async () => {
  const a = await replica({ redirects: 1 });
  const { game, hook } = await gameWithHook(a, `${receiver.url}/moved`, ['move']);
  receiver.secrets.set(hook.id, hook.secret);
  receiver.next({ redirect: `${stray.url}/inside` });
  await play([a], game, ['b2b3']);
  await waitFor(() => of(game.id).length >= 1, 10000, 'the first attempt');
  let log = [];
  for (let i = 0; i < 100 && !log.length; i++) {
    log = (await get(a, `/v1/webhooks/${hook.id}/deliveries`, bearer(key))).body.deliveries;
    if (!log.length) await sleep(50);
  }
  assert.equal(log.at(-1).outcome, 'refused', JSON.stringify(log));
  assert.equal(stray.requests.length, 0, 'nothing reached 127.0.0.1');
});

test("a key whose destination hangs holds half the threads at most: another key's event still goes", async () => {
  for (const server of replicas) await server.stop();
  replicas = [];
  const hanging = await startReceiver({ host: HOOK_HOST, behaviour: { hang: true } });
  try {
    // Two threads, eight seconds an attempt: without the share, the first
    // key's six hanging outboxes would hold both for about eight seconds.
    const a = await replica({ workers: 2, timeoutMs: 8000 });
    for (let i = 0; i < 6; i++) {
      const { game } = await gameWithHook(a, `${hanging.url}/hang`, ['move']);
      await play([a], game, ['e2e4']);
    }
    await hanging.waitForRequests(1, 10000);
    const { game, hook } = await gameWithHook(a, `${receiver.url}/other`, ['move'], otherKey);
    receiver.secrets.set(hook.id, hook.secret);
    const moved = Date.now();
    await play([a], game, ['d2d4']);
    await waitFor(() => of(game.id).length >= 1, 10000, "the other key's event");
    const waited = of(game.id)[0].receivedAt - moved;
    assert.ok(waited < 6000, `the other key's event waited ${waited} ms behind the hanging destination`);
    assert.ok(of(game.id)[0].verified);
  } finally {
    await hanging.close(); /* its attempts end at once: the replicas stop without waiting them out */
    for (const server of replicas) await server.stop();
    replicas = [];
  }
});

test('an outbox whose mark was lost is found by the sweep and delivered', async () => {
  for (const server of replicas) await server.stop();
  replicas = [];
  const player = await replica({ workers: 0 });
  const { game, hook } = await gameWithHook(player, `${receiver.url}/swept`, ['move']);
  receiver.secrets.set(hook.id, hook.secret);
  await play([player], game, ['g2g3']);
  // The event is in its outbox; its mark goes, as if the replica had died first.
  assert.equal(await store.command('LLEN', `chessd:whout:{${game.id}}:${hook.id}`), 1);
  assert.equal(await store.command('ZREM', 'chessd:{webhooks}:due', `${game.id} ${hook.id}`), 1);
  const deliverer = await replica();
  await waitFor(() => of(game.id).length >= 1, 20000, 'the swept event');
  assert.ok(of(game.id)[0].verified);
  assert.equal(JSON.parse(of(game.id)[0].text).data.version, 2);
  const metrics = await (await fetch(`${deliverer.base}/metrics`)).text();
  assert.match(metrics, /^chessd_webhook_swept_total [1-9]/m);
});

test('an offer and its answer reach the subscription that asks for "offer", signed, and no other', async () => {
  for (const server of replicas) await server.stop();
  replicas = [];
  const a = await replica();
  const res = await post(a, '/v1/games', { webhooks: [{ url: `${receiver.url}/offers`, events: ['offer'] },
    { url: `${receiver.url}/moves`, events: ['move', 'end'] }] }, bearer(key));
  assert.equal(res.status, 201, res.text);
  const game = res.body;
  const [offers, moves] = game.webhooks;
  for (const hook of [offers, moves]) receiver.secrets.set(hook.id, hook.secret);
  let version = await play([a], game, ['e2e4']);
  // A draw offered and declined, then a takeback of e2e4 offered and declined (the default policy allows it).
  for (const [route, action, side] of [['draw', 'offer', 'white'], ['draw', 'decline', 'black'],
    ['takeback', 'offer', 'white'], ['takeback', 'decline', 'black']]) {
    const r = await post(a, `/v1/games/${game.id}/${route}`, { action, expected_version: version }, bearer(game.tokens[side]));
    assert.equal(r.status, 200, `${route} ${action}: ${r.text}`);
    version = r.body.version;
  }
  const resign = await post(a, `/v1/games/${game.id}/resign`, { expected_version: version }, bearer(game.tokens.black));
  assert.equal(resign.status, 200, resign.text);
  const to = (hook) => of(game.id).filter((r) => JSON.parse(r.text).data.subscription === hook.id);
  await waitFor(() => to(offers).length >= 4 && to(moves).length >= 2, 10000, 'four offer and two move or end deliveries');
  await sleep(1000); // anything sent where it was not asked for would come within this
  const offered = to(offers);
  assert.deepEqual(offered.map((r) => r.path), ['/offers', '/offers', '/offers', '/offers']);
  assert.deepEqual(offered.map((r) => JSON.parse(r.text).type),
    ['game.draw_offer', 'game.draw_decline', 'game.takeback_offer', 'game.takeback_decline']);
  assert.deepEqual(offered.map((r) => JSON.parse(r.text).data.version), [3, 4, 5, 6]);
  for (const r of offered) assert.ok(r.verified, r.verifyReason);
  assert.ok(offered.every((r) => r.headers['webhook-signature'].startsWith('v1,')));
  const rest = to(moves);
  assert.deepEqual(rest.map((r) => r.path), ['/moves', '/moves']);
  assert.deepEqual(rest.map((r) => JSON.parse(r.text).type), ['game.move', 'game.resign']);
  for (const r of rest) assert.ok(r.verified, r.verifyReason);
  assert.equal(of(game.id).length, 6, 'nothing else was sent');
});

test('an event retried past --webhook-give-up-seconds is dropped, counted, and not tried again', async () => {
  for (const server of replicas) await server.stop();
  replicas = [];
  const failing = await startReceiver({ host: HOOK_HOST, behaviour: { status: 503 } });
  // A redis-server of its own, even on a Cluster run (whose shared Cluster holds the earlier
  // tests' undelivered events, which would be dropped and counted too).
  const own = await startRedis();
  try {
    // Tries 0, 200, 600 and 1400 ms after the move; the next, at 3000 ms, would pass the 2 s.
    const a = await replica({ retryMs: 200, giveUpSeconds: 2, on: own.url });
    const metric = async () => {
      const text = await (await fetch(`${a.base}/metrics`)).text();
      return Number(/^chessd_webhook_dropped_total (\d+)/m.exec(text)?.[1]);
    };
    assert.equal(await metric(), 0);
    const { game, hook } = await gameWithHook(a, `${failing.url}/down`, ['move']);
    const moved = Date.now();
    await play([a], game, ['e2e4']);
    let dropped = 0;
    for (let i = 0; i < 300 && dropped === 0; i++) {
      dropped = await metric();
      if (!dropped) await sleep(50);
    }
    assert.equal(dropped, 1, 'the event counted as dropped within 15 s');
    const tries = failing.requests.length;
    assert.ok(tries >= 1 && tries <= 4, `${tries} attempts before the drop`);
    assert.equal(new Set(failing.requests.map((r) => r.headers['webhook-id'])).size, 1, 'one event');
    const late = failing.requests.map((r) => r.receivedAt - moved).filter((ms) => ms > 4000);
    assert.deepEqual(late, [], 'no attempt long after the give-up');
    // Its outbox is empty and its log says so; no attempt comes in three more seconds.
    assert.equal(await own.command('LLEN', `chessd:whout:{${game.id}}:${hook.id}`), 0);
    const log = (await get(a, `/v1/webhooks/${hook.id}/deliveries`, bearer(key))).body.deliveries;
    // Newest first: the drop (with the last attempt, or alone when a late try found the event too old).
    assert.equal(log[0].dropped, true, JSON.stringify(log[0]));
    assert.ok(log.slice(1).every((d) => d.dropped === false), JSON.stringify(log));
    assert.equal(log.filter((d) => d.status === 503).length, tries, JSON.stringify(log));
    await sleep(3000);
    assert.equal(failing.requests.length, tries, 'no attempt after the drop');
    assert.equal(await metric(), 1);
  } finally {
    for (const server of replicas) await server.stop();
    replicas = [];
    await failing.close();
    await own.stop();
  }
});
