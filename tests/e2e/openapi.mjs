// The OpenAPI contract check every e2e test runs on every response it gets.
// Loads ../../openapi.yaml (or CHESSD_OPENAPI) afresh in each test process,
// finds paths[path][method].responses[status].content[type].schema, resolves
// "#/..." $refs inside the document, and validates the body with Ajv
// (JSON Schema 2020-12, the dialect of OpenAPI 3.1). A status or content type
// the document does not list for that operation is a failure, not a skip.
// OPTIONS on a listed path with no options operation is a 405, or a CORS
// preflight's answer when the document's x-cors-preflight lists its status.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import YAML from 'yaml';

const addFormats = addFormatsModule.default ?? addFormatsModule;
const here = path.dirname(fileURLToPath(import.meta.url));
export const SPEC_PATH = process.env.CHESSD_OPENAPI ?? path.resolve(here, '../../openapi.yaml');

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
// Keywords whose values are data, not schemas: never look for $ref inside them.
const DATA_KEYWORDS = new Set(['example', 'examples', 'const', 'enum', 'default']);

let cached;

/** The parsed document and its validator cache, loaded once per process. */
export function spec() {
  if (!cached) {
    const text = readFileSync(SPEC_PATH, 'utf8');
    const doc = YAML.parse(text);
    assert.ok(doc && typeof doc === 'object', `${SPEC_PATH} is not a YAML mapping`);
    assert.match(String(doc.openapi), /^3\.[01]\./, `${SPEC_PATH}: 'openapi' must be 3.0.x or 3.1.x`);
    const makeAjv = (extra) => {
      const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false, ...extra });
      addFormats(ajv);
      // OpenAPI's own schema keywords (annotations for validation purposes).
      ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example']);
      return ajv;
    };
    cached = {
      text, doc, ajv: makeAjv({}), headerAjv: makeAjv({ coerceTypes: true }),
      validators: new Map(), is30: String(doc.openapi).startsWith('3.0'),
    };
  }
  return cached;
}

/** Resolves a local JSON pointer ("#/a/b") in doc; throws when it leads nowhere. */
export function resolvePointer(doc, ref) {
  assert.ok(typeof ref === 'string' && ref.startsWith('#'), `only local $refs are supported, got ${ref}`);
  let node = doc;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    assert.ok(node && typeof node === 'object' && key in node, `openapi.yaml: $ref ${ref} does not resolve`);
    node = node[key];
  }
  return node;
}

/** Follows $ref chains on a non-schema object (response, media type, header). */
function deref(doc, node) {
  const seen = new Set();
  while (node && typeof node === 'object' && typeof node.$ref === 'string') {
    assert.ok(!seen.has(node.$ref), `openapi.yaml: $ref cycle at ${node.$ref}`);
    seen.add(node.$ref);
    node = resolvePointer(doc, node.$ref);
  }
  return node;
}

/** OpenAPI 3.0 "nullable: true" in 2020-12 terms (3.1 documents need nothing). */
function from30(schema) {
  if (!schema || typeof schema !== 'object' || !schema.nullable) return schema;
  const out = { ...schema };
  delete out.nullable;
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

/**
 * Makes a self-contained copy of a schema: every "#/..." $ref reachable from
 * it is copied under $defs and the $ref rewritten to point there, so cycles
 * and $ref siblings keep their JSON Schema meaning.
 */
function bundle(doc, schema, is30) {
  const defs = {};
  const keys = new Map();
  const rewrite = (node) => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    node = is30 ? from30(node) : node;
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$schema') continue; // the OAS dialect URI is not something Ajv can load
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#')) out.$ref = `#/$defs/${refKey(v)}`;
      else out[k] = DATA_KEYWORDS.has(k) ? v : rewrite(v);
    }
    return out;
  };
  const refKey = (ref) => {
    if (!keys.has(ref)) {
      const key = `oas${keys.size}`;
      keys.set(ref, key);
      defs[key] = rewrite(resolvePointer(doc, ref));
    }
    return keys.get(ref);
  };
  const root = rewrite(schema);
  if (typeof root === 'boolean') return root;
  if (keys.size) root.$defs = { ...(root.$defs ?? {}), ...defs };
  return root;
}

/**
 * A compiled validator for the schema at `where` (a description for
 * messages). header: the value is a header's text, so it is wrapped and
 * coerced the way OpenAPI's "simple" style reads "1" as an integer.
 */
export function validatorFor(schema, where, { header = false } = {}) {
  const s = spec();
  const key = `${header ? 'header:' : ''}${where}`;
  if (!s.validators.has(key)) {
    let fn;
    try {
      if (header) {
        const bundled = bundle(s.doc, schema, s.is30);
        const { $defs, ...rest } = typeof bundled === 'object' ? bundled : { value: bundled };
        const inner = s.headerAjv.compile({ type: 'object', properties: { value: typeof bundled === 'object' ? rest : bundled }, ...($defs ? { $defs } : {}) });
        fn = (text) => {
          const ok = inner({ value: text });
          fn.errors = inner.errors;
          return ok;
        };
      } else {
        fn = s.ajv.compile(bundle(s.doc, schema, s.is30));
      }
    } catch (err) {
      assert.fail(`openapi.yaml: the schema at ${where} does not compile: ${err.message}`);
    }
    s.validators.set(key, fn);
  }
  return s.validators.get(key);
}

/** The documented path template matching a concrete path, or undefined. */
export function matchPath(doc, requestPath) {
  const paths = doc.paths ?? {};
  if (Object.hasOwn(paths, requestPath)) return requestPath;
  for (const template of Object.keys(paths)) {
    if (!template.includes('{')) continue;
    const pattern = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
    if (new RegExp(`^${pattern.join('[^/]+')}$`).test(requestPath)) return template;
  }
  return undefined;
}

/** %XX sequences to bytes, read as UTF-8 (malformed sequences become U+FFFD). */
function percentDecode(p) {
  if (!p.includes('%')) return p;
  const bytes = [];
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '%' && /^[0-9a-fA-F]{2}$/.test(p.slice(i + 1, i + 3))) {
      bytes.push(parseInt(p.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(p[i], 'latin1'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function mediaType(contentType) {
  return String(contentType ?? '').split(';')[0].trim().toLowerCase();
}

function isJson(type) {
  const t = mediaType(type);
  return t === 'application/json' || /^application\/[^/]+\+json$/.test(t);
}

/** The documented media type entry for a response Content-Type, or undefined. */
function findContent(content, contentType) {
  if (!content) return undefined;
  const entries = Object.entries(content);
  const wanted = mediaType(contentType);
  const exact = entries.find(([k]) => k.toLowerCase().replace(/\s+/g, '') === String(contentType).toLowerCase().replace(/\s+/g, ''));
  if (exact) return exact;
  const bare = entries.find(([k]) => mediaType(k) === wanted);
  if (bare) return bare;
  const [major] = wanted.split('/');
  return entries.find(([k]) => mediaType(k) === `${major}/*`) ?? entries.find(([k]) => mediaType(k) === '*/*');
}

/** The documented response for a status in an operation: exact, then 4XX, then default. */
function findResponse(operation, status) {
  const responses = operation?.responses ?? {};
  const code = String(status);
  for (const key of [code, `${code[0]}XX`, `${code[0]}xx`, 'default'])
    if (Object.hasOwn(responses, key)) return [key, responses[key]];
  return undefined;
}

/**
 * Asserts that a response is what openapi.yaml says `method path` may answer.
 * res: { method, path (query allowed, ignored), status, headers (Headers, plain
 * object or node IncomingHttpHeaders), body (string; ignored for HEAD) }.
 * Returns the parsed body (JSON value or the text).
 */
export function checkResponse(res) {
  const { doc } = spec();
  const method = res.method.toLowerCase();
  // The server routes on the path segment by segment, decoding each one; a
  // path it cannot route that way (an encoded '/' or NUL inside a segment, a
  // bad escape) is refused with 400 (MalformedRequest) before routing.
  const rawPath = res.path.split('?')[0];
  const requestPath = percentDecode(rawPath).split('\0')[0];
  const unroutable = /%(2f|00)/i.test(rawPath) || /%(?![0-9a-fA-F]{2})/.test(rawPath);
  const header = (name) => {
    const h = res.headers;
    if (!h) return undefined;
    if (typeof h.get === 'function') return h.get(name) ?? undefined;
    const v = h[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  const contentType = header('content-type');
  const label = `${res.method} ${res.path} -> ${res.status} ${contentType ?? '(no Content-Type)'}`;
  const template = matchPath(doc, requestPath);
  const item = template ? deref(doc, doc.paths[template]) : undefined;
  let operation = item?.[method];
  if (!operation && method === 'head') operation = item?.get; // HEAD is GET without a body
  let operationPath = operation ? `paths.${template}.${operation === item?.[method] ? method : 'get'}` : undefined;
  // A CORS preflight (chessd with --cors-origins) is answered alike on every
  // listed path, as x-cors-preflight says; any other OPTIONS stays a 405.
  const preflight = deref(doc, doc['x-cors-preflight']);
  if (!operation && method === 'options' && template && preflight && findResponse(preflight, res.status)) {
    operation = preflight;
    operationPath = 'x-cors-preflight';
  }
  let where, schema, documented;
  if (operation) {
    const found = findResponse(operation, res.status);
    assert.ok(found, `openapi.yaml does not document status ${res.status} for ${method.toUpperCase()} ${template} (${label})\nbody: ${String(res.body).slice(0, 300)}`);
    const [statusKey, raw] = found;
    documented = deref(doc, raw);
    const base = `${operationPath}.responses.${statusKey}`;
    for (const [name, h] of Object.entries(documented.headers ?? {})) {
      const hdr = deref(doc, h);
      if (hdr?.required) assert.ok(header(name) !== undefined, `${label}: required header ${name} (${base}.headers) is missing`);
      if (hdr?.schema && header(name) !== undefined) {
        const v = validatorFor(hdr.schema, `${base}.headers.${name}.schema`, { header: true });
        assert.ok(v(header(name)), `${label}: header ${name}: ${JSON.stringify(header(name))} fails ${base}.headers.${name}.schema: ${JSON.stringify(v.errors)}`);
      }
    }
    if (method === 'head') return undefined;
    if (!documented.content) {
      assert.ok(!res.body, `${label}: ${base} documents no content, but the body is ${String(res.body).slice(0, 200)}`);
      return undefined;
    }
    assert.ok(contentType, `${label}: the response has a body but no Content-Type`);
    const entry = findContent(documented.content, contentType);
    assert.ok(entry, `${label}: openapi.yaml ${base} documents content types ${Object.keys(documented.content).join(', ')}, not ${contentType}\nbody: ${String(res.body).slice(0, 300)}`);
    const mt = deref(doc, entry[1]);
    where = `${base}.content[${entry[0]}].schema`;
    schema = mt?.schema;
  } else {
    // No operation: the server must say so with a problem document (404 for an
    // unknown path, 405 for a known path and another method). Those answers
    // cannot live under an operation, so they are checked against the
    // document's Problem schema.
    // 413 may come first: a body over the cap is refused before routing.
    if (unroutable) assert.ok([400, 413].includes(res.status), `${label}: ${rawPath} cannot be routed, so 400 was expected`);
    else if (template) assert.ok([405, 413].includes(res.status), `${label}: ${template} has no ${method} operation, so 405 was expected`);
    else assert.ok([404, 413].includes(res.status), `${label}: no path in openapi.yaml matches ${requestPath}, so 404 was expected`);
    if (method === 'head') return undefined;
    assert.equal(mediaType(contentType), 'application/problem+json', `${label}: expected a problem document`);
    schema = doc.components?.schemas?.Problem;
    where = 'components.schemas.Problem';
    assert.ok(schema, `${label}: openapi.yaml has no components.schemas.Problem to check this problem document against`);
  }
  let body = res.body ?? '';
  if (isJson(contentType)) {
    try {
      body = JSON.parse(body);
    } catch (err) {
      assert.fail(`${label}: the body is not JSON (${err.message}): ${String(res.body).slice(0, 200)}`);
    }
  }
  if (schema === undefined) return body; // the document gives no schema: anything goes
  const validate = validatorFor(schema, where);
  if (!validate(body)) {
    assert.fail(`${label}: the body does not match openapi.yaml ${where}:\n` +
      `${validate.errors.map((e) => `  ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`).join('\n')}\n` +
      `body: ${JSON.stringify(body).slice(0, 600)}`);
  }
  if (mediaType(contentType) === 'application/x-ndjson' && schema?.contentSchema) checkLines(body, schema.contentSchema, `${where}.contentSchema`, label);
  return body;
}

/**
 * Each line of an NDJSON answer read whole (an export, a feed page) against
 * the schema its media type names for one line (contentSchema): every line
 * ends with a newline and is one JSON value that the schema accepts.
 */
function checkLines(text, lineSchema, where, label) {
  const validate = validatorFor(lineSchema, where);
  const lines = String(text).split('\n');
  assert.equal(lines.pop(), '', `${label}: the last NDJSON line does not end with a newline`);
  for (const [i, line] of lines.entries()) {
    let value;
    try {
      value = JSON.parse(line);
    } catch (err) {
      assert.fail(`${label}: NDJSON line ${i} is not JSON (${err.message}): ${line.slice(0, 200)}`);
    }
    if (!validate(value)) {
      assert.fail(`${label}: NDJSON line ${i} does not match openapi.yaml ${where}:\n` +
        `${validate.errors.map((e) => `  ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`).join('\n')}\n` +
        `line: ${line.slice(0, 600)}`);
    }
  }
}

/** Every (path, method) the document declares, for coverage checks. */
export function operations() {
  const { doc } = spec();
  const out = [];
  for (const [p, raw] of Object.entries(doc.paths ?? {})) {
    const item = deref(doc, raw);
    for (const m of METHODS) if (item?.[m]) out.push([p, m]);
  }
  return out;
}
