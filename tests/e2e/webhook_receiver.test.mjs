// The webhook receiver of support/webhook_receiver.mjs checked on its own:
// its verification reproduces the Standard Webhooks libraries' published
// vector and refuses a tampered body, timestamp or id; over HTTP it records
// requests and answers each by its behaviour (status, redirect, delay, hang).
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { signPayload, startReceiver, verifySignature } from './support/webhook_receiver.mjs';

// The vector every library of the specification signs so (their "sign function works" tests).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: '1614265330',
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const OTHER_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

const verifyVector = (changes = {}) => verifySignature({ id: VECTOR.id, timestamp: VECTOR.timestamp, body: VECTOR.body,
  header: VECTOR.signature, secrets: [VECTOR.secret], toleranceSeconds: null, ...changes });

test('the published vector signs and verifies', () => {
  assert.equal(signPayload(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
  assert.deepEqual(verifyVector(), { ok: true, reason: '' });
});

test('a tampered body, timestamp, id or secret does not verify', () => {
  assert.equal(verifyVector({ body: '{"test": 2432232315}' }).ok, false);
  assert.equal(verifyVector({ timestamp: '1614265331' }).ok, false);
  assert.equal(verifyVector({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJel' }).ok, false);
  assert.equal(verifyVector({ secrets: [OTHER_SECRET] }).ok, false);
  assert.equal(verifyVector({ header: 'v1a,' + VECTOR.signature.slice(3) }).ok, false);
  // The timestamp's tolerance: 2021 is long past.
  assert.match(verifyVector({ toleranceSeconds: 300 }).reason, /tolerance/);
});

test('a rotation header verifies when any signature matches', () => {
  const wrong = signPayload(OTHER_SECRET, VECTOR.id, VECTOR.timestamp, VECTOR.body);
  assert.equal(verifyVector({ header: `${wrong} ${VECTOR.signature}` }).ok, true);
  assert.equal(verifyVector({ header: wrong }).ok, false);
  assert.equal(verifyVector({ header: wrong, secrets: [VECTOR.secret, OTHER_SECRET] }).ok, true);
});

/** POSTs body with the vector's headers (signature as given) to url; resolves to { status, headers }. */
function post(url, body, signature = VECTOR.signature, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', timeout: timeoutMs, headers: { 'content-type': 'application/json',
      'webhook-id': VECTOR.id, 'webhook-timestamp': VECTOR.timestamp, 'webhook-signature': signature } },
    (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

test('the receiver records, verifies and answers by behaviour', async () => {
  const receiver = await startReceiver({ secret: VECTOR.secret, toleranceSeconds: null });
  try {
    assert.equal((await post(`${receiver.url}/hook`, VECTOR.body)).status, 200);
    assert.equal((await post(`${receiver.url}/hook`, '{"test": 1}')).status, 200);
    const [good, tampered] = receiver.requests;
    assert.equal(good.verified, true);
    assert.equal(good.path, '/hook');
    assert.equal(good.text, VECTOR.body);
    assert.equal(good.headers['webhook-id'], VECTOR.id);
    assert.ok(good.receivedAt > 0);
    assert.equal(tampered.verified, false);
    assert.match(tampered.verifyReason, /no v1 signature matches/);

    receiver.next({ status: 500 });
    receiver.next({ redirect: 'http://127.0.0.1:1/elsewhere' });
    receiver.next({ status: 204, delayMs: 150 });
    assert.equal((await post(receiver.url, VECTOR.body)).status, 500);
    const moved = await post(receiver.url, VECTOR.body);
    assert.equal(moved.status, 302);
    assert.equal(moved.headers.location, 'http://127.0.0.1:1/elsewhere');
    const started = Date.now();
    assert.equal((await post(receiver.url, VECTOR.body)).status, 204);
    assert.ok(Date.now() - started >= 140);

    receiver.setBehaviour(() => ({ hang: true }));
    await assert.rejects(post(receiver.url, VECTOR.body, VECTOR.signature, 300), /timeout|socket hang up/);
    await receiver.waitForRequests(6, 2000);
    assert.equal(receiver.requests.length, 6);
  } finally {
    await receiver.close();
  }
});

test('a secret chosen per request verifies that request', async () => {
  const receiver = await startReceiver({ toleranceSeconds: null,
    secretFor: (record) => (record.path === '/vector' ? VECTOR.secret : OTHER_SECRET) });
  try {
    await post(`${receiver.url}/vector`, VECTOR.body);
    await post(`${receiver.url}/other`, VECTOR.body);
    assert.deepEqual(receiver.requests.map((r) => r.verified), [true, false]);
  } finally {
    await receiver.close();
  }
});
