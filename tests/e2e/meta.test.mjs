// Service endpoints (/healthz, /readyz also with Redis down, /version,
// /openapi.yaml, HEAD) and the OpenAPI document itself: the served copy is
// the repository's file, every documented operation is routed, and every
// response schema in it compiles.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import YAML from 'yaml';
import { startServer, freePort, CHESSD_BIN } from './server.mjs';
import { get, call, nodeRequest, expectProblem, NOEVICTION } from './http.mjs';
import { spec, operations, validatorFor, resolvePointer } from './openapi.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

test('GET /healthz answers 200 {"status":"ok"}', async () => {
  const res = await get(server, '/healthz');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { status: 'ok' });
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.equal(res.headers.get('cache-control'), 'no-store');
});

test('GET /readyz answers 200 {"status":"ready","redis":"up","engine":{"state":"off"}} while serving', async () => {
  const res = await get(server, '/readyz');
  assert.equal(res.status, 200);
  // the e2e servers run --engine none (server.mjs); the engine's states are analysis.test.mjs's
  assert.deepEqual(res.body, { status: 'ready', redis: 'up', redis_memory: NOEVICTION, engine: { state: 'off' } });
});

test('with Redis unreachable /readyz is 200 reporting redis "down" (503 store_unavailable with --ready-requires-redis), and liveness and the rules API answer', async () => {
  const url = `redis://127.0.0.1:${await freePort()}/0`;
  const noRedis = await startServer(['--redis', url]);
  const strict = await startServer(['--redis', url, '--ready-requires-redis']);
  try {
    const ready = await get(noRedis, '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.redis, 'down');
    assert.equal(ready.body.redis_fault, 'unreachable');
    const refused = await get(strict, '/readyz');
    expectProblem(refused, 503, 'store_unavailable');
    assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/, 'a 503 should say when to retry');
    assert.equal((await get(noRedis, '/healthz')).status, 200);
    assert.equal((await get(noRedis, '/v1/position?legal_moves=false')).status, 200);
    assert.equal((await get(noRedis, '/v1/perft?depth=2')).body.nodes, 400);
  } finally {
    await Promise.all([noRedis.stop(), strict.stop()]);
  }
});

test('GET /version names chessd and the version the binary prints', async () => {
  const res = await get(server, '/version');
  assert.equal(res.status, 200);
  assert.equal(res.body.name, 'chessd');
  const printed = execFileSync(CHESSD_BIN, ['version'], { encoding: 'utf8' }).trim();
  assert.equal(printed, `chessd ${res.body.version}`);
});

test('GET /openapi.yaml serves the repository openapi.yaml byte for byte', async () => {
  const res = await get(server, '/openapi.yaml');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/yaml/);
  assert.equal(res.text, spec().text, 'the binary embeds a different openapi.yaml: rebuild it (make) after editing the spec');
  const doc = YAML.parse(res.text);
  assert.match(doc.openapi, /^3\./);
});

test('HEAD is answered like GET, without a body', async () => {
  for (const path of ['/healthz', '/readyz', '/version', '/openapi.yaml', '/v1/position', '/v1/perft?depth=1']) {
    const res = await nodeRequest(server, { method: 'HEAD', path });
    assert.equal(res.status, 200, path);
    assert.equal(res.text, '', path);
    assert.ok(res.headers['x-request-id'], path);
  }
});

test('openapi.yaml documents the stateless routes, and the server routes every documented operation', async () => {
  const documented = operations().map(([p, m]) => `${m.toUpperCase()} ${p}`);
  for (const route of ['GET /healthz', 'GET /readyz', 'GET /version', 'GET /openapi.yaml', 'GET /v1/position',
    'POST /v1/position', 'POST /v1/position/moves', 'GET /v1/perft'])
    assert.ok(documented.includes(route), `openapi.yaml does not document ${route}`);
  for (const [template, method] of operations()) {
    const path = template.replace(/\{[^}]+\}/g, 'e2e-no-such-id');
    const res = await call(server, method.toUpperCase(), path, method === 'get' || method === 'head' ? {} : { json: {} });
    assert.ok(!['not_found', 'method_not_allowed'].includes(res.body?.code),
      `${method.toUpperCase()} ${template} is documented but the server does not route it: ${res.status} ${res.body?.code}`);
  }
});

test('every response schema in openapi.yaml compiles (strict JSON Schema 2020-12)', () => {
  const { doc } = spec();
  let count = 0;
  for (const [p, m] of operations()) {
    for (const [status, raw] of Object.entries(doc.paths[p][m].responses ?? {})) {
      const response = raw.$ref ? resolvePointer(doc, raw.$ref) : raw;
      for (const [type, media] of Object.entries(response.content ?? {})) {
        if (media.schema === undefined) continue;
        validatorFor(media.schema, `paths.${p}.${m}.responses.${status}.content[${type}].schema`);
        count++;
      }
    }
  }
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    validatorFor(schema, `components.schemas.${name}`);
    count++;
  }
  assert.ok(count > 10, `only ${count} schemas found`);
});

test('every error document the server can send has a code openapi.yaml lists', async () => {
  // The Problem schema's code enum must cover the problems the tests provoke.
  const res = await call(server, 'GET', '/no/such/path');
  assert.equal(res.status, 404);
  const codes = spec().doc.components.schemas.Problem.properties.code.enum;
  for (const code of ['invalid_json', 'invalid_field', 'unknown_field', 'invalid_parameter', 'invalid_fen',
    'invalid_move_text', 'illegal_move', 'ambiguous_move', 'too_many_moves', 'payload_too_large',
    'unsupported_media_type', 'not_found', 'method_not_allowed', 'perft_depth_too_large', 'unavailable'])
    assert.ok(codes.includes(code), `Problem.code enum lacks ${code}`);
});
