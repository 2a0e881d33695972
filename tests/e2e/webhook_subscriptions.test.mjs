// Webhook subscriptions on a real chessd and Redis (--webhook-allow
// 127.0.0.2/32): a service key's own (/v1/webhooks), a game's ("webhooks"
// of POST /v1/games) and a bulk's. Each needs a key, which owns it; the
// secret is shown once; another key gets 404 for it, an admin key reads it.
// Destinations outside the policy are refused (422 webhook_destination_
// refused with the refusal's code); webhooks are off without keys or
// without --webhook-allow (403 webhooks_disabled). A game with subscriptions
// keeps them in its hash (wh), and a move fills their outboxes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHESSD_BIN, gameRedis, startServer, tempDir } from './server.mjs';
import { call, get, post, expectProblem } from './http.mjs';

const dir = tempDir('chessd-webhooks-');
const ALLOW = ['--webhook-allow', '127.0.0.2/32'];
const HOOK = 'http://127.0.0.2:9/hook';

function newKey(name, ...scopes) {
  const r = spawnSync(CHESSD_BIN, ['keys', 'new', name, ...scopes], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [key, line] = r.stdout.split('\n');
  return { key, line, name };
}

const keys = {
  creator: newKey('creator', 'games:create', 'games:bulk'),
  other: newKey('other', 'games:create'),
  admin: newKey('ops', 'admin'),
};
const bearer = (k) => ({ headers: { authorization: `Bearer ${k.key}` } });
let redis, server, off, keyless;

before(async () => {
  const file = path.join(dir, 'keys');
  writeFileSync(file, `${Object.values(keys).map((k) => k.line).join('\n')}\n`);
  redis = await gameRedis();
  [server, off, keyless] = await Promise.all([
    startServer(['--redis', redis.url, '--service-keys-file', file, ...ALLOW]),
    startServer(['--redis', redis.url, '--service-keys-file', file]),
    startServer(['--redis', redis.url, ...ALLOW]),
  ]);
});

after(async () => {
  await Promise.all([server?.stop(), off?.stop(), keyless?.stop()]);
  await redis?.stop();
});

test("a key's own subscription: 201 with its secret once, listed and read without it, deleted by its key only", async () => {
  const made = await post(server, '/v1/webhooks', { url: HOOK, events: ['move', 'end'] }, bearer(keys.other));
  assert.equal(made.status, 201, made.text);
  const sub = made.body;
  assert.match(sub.id, /^wh_[A-Za-z0-9_-]{16}$/);
  assert.match(sub.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.deepEqual([sub.url, sub.events, sub.scope], [HOOK, ['move', 'end'], 'key']);
  assert.equal(made.headers.get('location'), `/v1/webhooks/${sub.id}`);
  const listed = await get(server, '/v1/webhooks', bearer(keys.other));
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.webhooks.map((w) => w.id), [sub.id]);
  assert.ok(!listed.text.includes('whsec_'));
  const read = await get(server, `/v1/webhooks/${sub.id}`, bearer(keys.other));
  assert.equal(read.status, 200);
  assert.equal(read.body.secret, undefined);
  // Another key: the same 404 as an id no one has; admin reads it.
  expectProblem(await get(server, `/v1/webhooks/${sub.id}`, bearer(keys.creator)), 404, 'webhook_not_found');
  expectProblem(await get(server, `/v1/webhooks/${sub.id}/deliveries`, bearer(keys.creator)), 404, 'webhook_not_found');
  expectProblem(await call(server, 'DELETE', `/v1/webhooks/${sub.id}`, bearer(keys.creator)), 404, 'webhook_not_found');
  expectProblem(await get(server, '/v1/webhooks/wh_AAAAAAAAAAAAAAAA', bearer(keys.other)), 404, 'webhook_not_found');
  expectProblem(await get(server, '/v1/webhooks/nonsense', bearer(keys.other)), 404, 'webhook_not_found');
  const log = await get(server, `/v1/webhooks/${sub.id}/deliveries?limit=5`, bearer(keys.admin));
  assert.equal(log.status, 200, log.text);
  assert.deepEqual(log.body, { deliveries: [] });
  expectProblem(await get(server, `/v1/webhooks/${sub.id}/deliveries?limit=0`, bearer(keys.other)), 400, 'invalid_parameter');
  // The deliverer's lines come back parsed, newest first.
  await redis.command('LPUSH', `chessd:{webhooks}:log:${sub.id}`, '{"status":500}', '{"status":200}');
  const lines = await get(server, `/v1/webhooks/${sub.id}/deliveries`, bearer(keys.other));
  assert.deepEqual(lines.body, { deliveries: [{ status: 200 }, { status: 500 }] });
  const gone = await call(server, 'DELETE', `/v1/webhooks/${sub.id}`, bearer(keys.other));
  assert.equal(gone.status, 204);
  expectProblem(await get(server, `/v1/webhooks/${sub.id}`, bearer(keys.other)), 404, 'webhook_not_found');
});

test('a game with webhooks: secrets in the 201 only, wh in its hash, a move in the outbox; the key\'s own join it', async () => {
  const own = (await post(server, '/v1/webhooks', { url: HOOK, events: ['end'] }, bearer(keys.creator))).body;
  const res = await post(server, '/v1/games', { webhooks: [{ url: HOOK, events: ['move'] }, { url: `${HOOK}2` }] },
    bearer(keys.creator));
  assert.equal(res.status, 201, res.text);
  const hooks = res.body.webhooks;
  assert.equal(hooks.length, 3);
  assert.deepEqual(hooks.map((h) => [h.scope, Boolean(h.secret)]), [['game', true], ['game', true], ['key', false]]);
  assert.deepEqual(hooks[1].events, ['move', 'offer', 'takeback', 'clock', 'end']);
  assert.equal(hooks[2].id, own.id);
  const { id, tokens, version } = res.body;
  const game = await get(server, `/v1/games/${id}`);
  assert.ok(!game.text.includes('whsec_') && !game.text.includes('"webhooks"'));
  const sub = await get(server, `/v1/webhooks/${hooks[0].id}`, bearer(keys.creator));
  assert.deepEqual([sub.body.scope, sub.body.target, sub.body.secret], ['game', id, undefined]);
  // A game's subscriptions are read by id, never listed with the key's own.
  assert.deepEqual((await get(server, '/v1/webhooks', bearer(keys.creator))).body.webhooks.map((w) => w.id), [own.id]);
  const wh = await redis.command('HGET', `chessd:game:{${id}}`, 'wh');
  assert.equal(wh, `${hooks[0].id}=1 ${hooks[1].id}=31 ${own.id}=16`);
  const move = await post(server, `/v1/games/${id}/moves`, { move: 'e4', expected_version: version },
    { headers: { authorization: `Bearer ${tokens.white}` } });
  assert.equal(move.status, 200, move.text);
  for (const [h, held] of [[hooks[0], 1], [hooks[1], 1], [own, 0]]) {
    const outbox = await redis.command('LRANGE', `chessd:whout:{${id}}:${h.id}`, '0', '-1');
    assert.equal(outbox.length, held, `${h.id}: ${outbox}`);
    if (held) assert.match(outbox[0], /^move 1\n/);
  }
  await call(server, 'DELETE', `/v1/webhooks/${own.id}`, bearer(keys.creator));
});

test('a bulk with webhooks: one subscription for the bulk, its text in every game', async () => {
  const res = await post(server, '/v1/games/bulk', {
    games: [{ white: 'A', black: 'B' }, { white: 'C', black: 'D' }],
    webhooks: [{ url: HOOK, events: ['end'] }],
  }, bearer(keys.creator));
  assert.equal(res.status, 201, res.text);
  const [hook] = res.body.webhooks;
  assert.match(hook.secret, /^whsec_/);
  const sub = await get(server, `/v1/webhooks/${hook.id}`, bearer(keys.creator));
  assert.deepEqual([sub.body.scope, sub.body.target], ['bulk', res.body.id]);
  for (const g of res.body.games) {
    assert.equal(await redis.command('HGET', `chessd:game:{${g.id}}`, 'wh'), `${hook.id}=16`);
    assert.equal(await redis.command('SISMEMBER', 'chessd:{webhooks}:games', g.id), 1);
  }
});

test('refused: no key, a key of no line, webhooks off, destinations outside --webhook-allow, bad entries, too many', async () => {
  expectProblem(await post(server, '/v1/webhooks', { url: HOOK }), 401, 'service_key_required');
  expectProblem(await post(server, '/v1/webhooks', { url: HOOK },
    { headers: { authorization: `Bearer chsk_${'A'.repeat(43)}` } }), 401, 'invalid_service_key');
  for (const srv of [off, keyless]) {
    expectProblem(await post(srv, '/v1/webhooks', { url: HOOK }, bearer(keys.creator)), 403, 'webhooks_disabled');
    const opts = srv === off ? bearer(keys.creator) : {};
    expectProblem(await post(srv, '/v1/games', { webhooks: [{ url: HOOK }] }, opts), 403, 'webhooks_disabled');
    assert.equal((await post(srv, '/v1/games', {}, opts)).status, 201);
  }
  const refused = [
    ['http://127.0.0.1:9/hook', 'not_allowed'],
    ['http://localhost:9/hook', 'not_allowed'],
    ['http://10.1.2.3/hook', 'not_allowed'],
    ['ftp://127.0.0.2/hook', 'scheme'],
    ['http://user:pw-s3cret@127.0.0.2/hook', 'userinfo'],
  ];
  for (const [url, code] of refused) {
    const p = expectProblem(await post(server, '/v1/webhooks', { url }, bearer(keys.creator)), 422,
      'webhook_destination_refused');
    assert.equal(p.refusal, code, `${url}: ${p.detail}`);
    assert.ok(!p.detail.includes('s3cret') && !p.detail.includes(url), p.detail);
    const g = expectProblem(await post(server, '/v1/games', { webhooks: [{ url: HOOK }, { url }] }, bearer(keys.creator)),
      422, 'webhook_destination_refused');
    assert.deepEqual([g.refusal, g.index], [code, 1]);
  }
  expectProblem(await post(server, '/v1/webhooks', { url: HOOK, events: ['moves'] }, bearer(keys.creator)), 400, 'invalid_field');
  expectProblem(await post(server, '/v1/webhooks', { url: HOOK, events: [] }, bearer(keys.creator)), 400, 'invalid_field');
  expectProblem(await post(server, '/v1/webhooks', { url: HOOK, extra: 1 }, bearer(keys.creator)), 400, 'unknown_field');
  expectProblem(await post(server, '/v1/games', { webhooks: [{ url: HOOK, secret: 'x' }] }, bearer(keys.creator)), 400, 'unknown_field');
  expectProblem(await post(server, '/v1/games', { webhooks: [] }, bearer(keys.creator)), 400, 'invalid_field');
  const five = Array.from({ length: 5 }, () => ({ url: HOOK }));
  const many = expectProblem(await post(server, '/v1/games', { webhooks: five }, bearer(keys.creator)), 422, 'too_many_webhooks');
  assert.equal(many.max, 4);
  // A key holds 8 of its own; a game carries 8 in all.
  const made = [];
  for (let i = 0; i < 8; i++) {
    const r = await post(server, '/v1/webhooks', { url: HOOK }, bearer(keys.other));
    assert.equal(r.status, 201, r.text);
    made.push(r.body.id);
  }
  const ninth = expectProblem(await post(server, '/v1/webhooks', { url: HOOK }, bearer(keys.other)), 422, 'too_many_webhooks');
  assert.equal(ninth.max, 8);
  const full = expectProblem(await post(server, '/v1/games', { webhooks: [{ url: HOOK }] }, bearer(keys.other)), 422,
    'too_many_webhooks');
  assert.equal(full.max, 8);
  const plain = await post(server, '/v1/games', {}, bearer(keys.other));
  assert.equal(plain.body.webhooks.length, 8);
  for (const id of made) assert.equal((await call(server, 'DELETE', `/v1/webhooks/${id}`, bearer(keys.admin))).status, 204);
});
