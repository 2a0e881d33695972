// A webhook receiver for the end-to-end tests: an HTTP server on a loopback
// address that records every request (headers, body, time) and verifies its
// Standard Webhooks signature with node's crypto, independently of chessd's C
// code; each request is answered by a behaviour: a status, a delay, a
// redirect, or a hang. Node's own modules only.
import crypto from 'node:crypto';
import http from 'node:http';

const SECRET_PREFIX = 'whsec_';

/** The HMAC key of a secret: "whsec_" and base64 (padding optional). Throws on anything else. */
export function secretKey(secret) {
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
    throw new Error('a webhook secret starts with whsec_');
  }
  const text = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new Error('a webhook secret is whsec_ and standard base64');
  const key = Buffer.from(text, 'base64');
  if (key.length < 24 || key.length > 64) throw new Error(`a webhook secret's key is 24 to 64 bytes, not ${key.length}`);
  return key;
}

/** "v1,<base64>" for one secret over "id.timestamp.body" (body a string or Buffer). */
export function signPayload(secret, id, timestamp, body) {
  const hmac = crypto.createHmac('sha256', secretKey(secret));
  hmac.update(`${id}.${timestamp}.`);
  hmac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return `v1,${hmac.digest('base64')}`;
}

/**
 * Verifies a webhook-signature header against the secrets (any one of them may
 * have signed; the header may carry several space-separated signatures, as
 * during a rotation). toleranceSeconds: the most the timestamp may differ from
 * now (null: not checked, for published vectors). Returns { ok, reason }.
 */
export function verifySignature({ id, timestamp, body, header, secrets, toleranceSeconds = 300, now = Date.now() }) {
  if (!id || !timestamp || !header) return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' };
  if (!/^\d+$/.test(String(timestamp))) return { ok: false, reason: 'webhook-timestamp is not Unix seconds' };
  if (toleranceSeconds !== null && Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
    return { ok: false, reason: 'webhook-timestamp is outside the tolerance' };
  }
  const given = header.split(' ').filter((part) => part.startsWith('v1,')).map((part) => Buffer.from(part.slice(3)));
  for (const secret of secrets) {
    const expected = Buffer.from(signPayload(secret, id, timestamp, body).slice(3));
    if (given.some((signature) => signature.length === expected.length && crypto.timingSafeEqual(signature, expected))) {
      return { ok: true, reason: '' };
    }
  }
  return { ok: false, reason: given.length ? 'no v1 signature matches' : 'no v1 signature in the header' };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts a receiver. Options:
 *   host: the address to listen on (default 127.0.0.1), port (default 0: any free one);
 *   secret, secrets, or secretFor(request) giving a secret or a list of them: what signatures are checked with;
 *   toleranceSeconds: the timestamp's tolerance (default 300; null: unchecked);
 *   behaviour: an object or a function(record) returning one, for every request not given a behaviour by next():
 *     { status = 200, delayMs = 0, redirect: url (status 302 unless given), hang: true, headers: {}, body: '' }.
 * Resolves to { url, host, port, requests, next(behaviour), setBehaviour(b), waitForRequests(n, ms), close() }.
 * Each record: { method, path, headers (lower-case names), body (Buffer), text, receivedAt (ms since the epoch),
 *   verified, verifyReason }.
 */
export async function startReceiver(options = {}) {
  const host = options.host ?? '127.0.0.1';
  const toleranceSeconds = options.toleranceSeconds === undefined ? 300 : options.toleranceSeconds;
  const secretsOf = (record) => {
    const given = options.secretFor ? options.secretFor(record) : options.secrets ?? options.secret;
    return given === undefined ? [] : Array.isArray(given) ? given : [given];
  };
  let behaviour = options.behaviour ?? { status: 200 };
  const queued = [];
  const requests = [];
  const waiters = [];
  const sockets = new Set();

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const record = { method: req.method, path: req.url, headers: { ...req.headers }, body, text: body.toString('utf8'),
        receivedAt: Date.now(), verified: false, verifyReason: '' };
      let secrets = [];
      try {
        secrets = secretsOf(record);
        const result = verifySignature({ id: req.headers['webhook-id'], timestamp: req.headers['webhook-timestamp'],
          body, header: req.headers['webhook-signature'], secrets, toleranceSeconds, now: record.receivedAt });
        record.verified = result.ok;
        record.verifyReason = result.reason;
      } catch (error) {
        record.verifyReason = error.message;
      }
      requests.push(record);
      for (const waiter of [...waiters]) waiter();
      const chosen = queued.length ? queued.shift() : behaviour;
      const plan = (typeof chosen === 'function' ? chosen(record) : chosen) ?? {};
      if (plan.hang) return; // the socket stays open and silent until the client leaves or close()
      if (plan.delayMs) await sleep(plan.delayMs);
      const headers = { 'content-type': 'text/plain', ...(plan.headers ?? {}) };
      if (plan.redirect) headers.location = plan.redirect;
      res.writeHead(plan.status ?? (plan.redirect ? 302 : 200), headers);
      res.end(plan.body ?? '');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address();
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port,
    url: `http://${shownHost}:${port}`,
    requests,
    /** The behaviour of the next request (queued: each call one more request). */
    next(plan) { queued.push(plan); },
    setBehaviour(plan) { behaviour = plan; },
    /** Resolves once n requests have come, rejects after ms. */
    waitForRequests(n, ms = 10000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < n) return;
          clearTimeout(timer);
          waiters.splice(waiters.indexOf(check), 1);
          resolve(requests.slice(0, n));
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`the receiver got ${requests.length} requests, not ${n}, in ${ms} ms`));
        }, ms);
        waiters.push(check);
        check();
      });
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
