// A client for chessd's event streams (GET /v1/games/{id}/events) over
// node:http, one socket per stream: Server-Sent Events (Accept:
// text/event-stream; "id:", "event:", "data:" fields, ": heartbeat" comments)
// or NDJSON (one JSON object a line, an empty line as the heartbeat). Every
// event is parsed on arrival, stamped with its arrival time (performance.now()
// and Date.now(), taken when its last byte is read) and checked against the
// event contract of issue 11 and openapi.yaml's event schemas (StreamEvent); a
// stream that breaks the contract fails the next next()/waitFor() of the test.
// An answer that is not a stream (404, 503) is read whole and checked against
// openapi.yaml like any other answer.
import assert from 'node:assert/strict';
import http from 'node:http';
import { checkResponse, spec, validatorFor } from './openapi.mjs';

export const SSE = 'text/event-stream';
export const NDJSON = 'application/x-ndjson';

/** The media type asked for by format 'sse' or 'ndjson'. */
const ACCEPT = { sse: SSE, ndjson: NDJSON };

/**
 * The schema check of one event's JSON against openapi.yaml's own event
 * schemas: the event is a StreamEvent (what the route documents for its
 * stream lines), and its type's schema (GameEvent, ChangeEvent,
 * ClosingEvent) names what is wrong when it is not, so a schema that lies
 * about what the server sends fails here. A snapshot carries no tokens and
 * no event its legal moves (the schemas say so too). Returns a list of
 * complaints (empty when the event is as the contract says).
 */
export function eventComplaints(data) {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return [`not a JSON object: ${JSON.stringify(data)}`];
  const schemas = spec().doc.components.schemas;
  const errorsOf = (schemaName) => {
    const validate = validatorFor(schemas[schemaName], `components.schemas.${schemaName}`);
    return validate(data) ? null : validate.errors.map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`).join('; ');
  };
  const byType = { game: 'GameEvent', change: 'ChangeEvent', closing: 'ClosingEvent' };
  const complaints = [];
  const own = byType[data.type];
  if (!own) complaints.push(`unknown event type ${JSON.stringify(data.type)}`);
  else {
    const errors = errorsOf(own);
    if (errors) complaints.push(`does not match components.schemas.${own}: ${errors}`);
  }
  if (!complaints.length && errorsOf('StreamEvent')) complaints.push(`does not match components.schemas.StreamEvent: ${errorsOf('StreamEvent')}`);
  if (data.type === 'game' && 'tokens' in data) complaints.push('a snapshot carries the tokens');
  if (data.position && typeof data.position === 'object' && 'legal_moves' in data.position) complaints.push(`a ${data.type} event carries legal_moves`);
  return complaints;
}

/**
 * Opens GET `path` (default /v1/games/{gameId}/events) on target (anything
 * with a port on 127.0.0.1). opts: format 'sse' | 'ndjson' (the Accept header
 * sent; accept overrides it, null sends none), lastEventId (sent as
 * Last-Event-ID), headers, localAddress, timeoutMs (for the response head,
 * default 5000). Resolves to a Stream for a 200 answer, or to
 * { status, headers, text, body } (checked against openapi.yaml) for any other.
 */
export function openStream(target, gameId, opts = {}) {
  const { format = 'ndjson', lastEventId, headers = {}, localAddress, timeoutMs = 5000 } = opts;
  const reqPath = opts.path ?? `/v1/games/${gameId}/events`;
  const accept = opts.accept === undefined ? ACCEPT[format] : opts.accept;
  assert.ok(accept !== undefined, `unknown stream format ${format}`);
  const h = { ...headers };
  if (accept !== null) h.accept = accept;
  if (lastEventId !== undefined) h['last-event-id'] = String(lastEventId);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request({ host: '127.0.0.1', port: target.port, path: reqPath, headers: h, agent: false, localAddress }, (res) => {
      clearTimeout(timer);
      if (res.statusCode !== 200) {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('error', reject);
        res.on('end', () => {
          try {
            const text = Buffer.concat(chunks).toString('utf8');
            const body = checkResponse({ method: 'GET', path: reqPath, status: res.statusCode, headers: res.headers, body: text });
            resolve({ status: res.statusCode, headers: res.headers, text, body });
          } catch (err) {
            reject(err);
          }
        });
        return;
      }
      res.socket.setNoDelay(true);
      resolve(new Stream(req, res, { format, path: reqPath, openedAt: started }));
    });
    const timer = setTimeout(() => req.destroy(new Error(`GET ${reqPath}: no response head within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => { clearTimeout(timer); reject(err); });
    req.end();
  });
}

/** openStream that fails the test unless the answer is a 200 stream; resolves to the Stream. */
export async function mustOpenStream(target, gameId, opts) {
  const s = await openStream(target, gameId, opts);
  assert.ok(s instanceof Stream, `GET ${opts?.path ?? `/v1/games/${gameId}/events`} on port ${target.port}: ` +
    `expected a 200 stream, got ${s.status}: ${s.text}`);
  return s;
}

/**
 * One open event stream. events: every event so far, each
 * { data (the parsed JSON), id (SSE id field, or undefined), name (SSE event
 * field), at (performance.now()), wall (Date.now()) }; heartbeats: the arrival
 * times of heartbeats; closed: a promise of { at, complete } once the
 * connection ends (complete: the server ended the response properly).
 * next()/waitFor() read the events in order through a cursor.
 */
export class Stream {
  constructor(req, res, { format, path, openedAt }) {
    this.req = req;
    this.res = res;
    this.format = format;
    this.path = path;
    this.status = res.statusCode;
    this.headers = res.headers;
    this.openedAt = openedAt;
    this.events = [];
    this.heartbeats = [];
    this.cursor = 0;
    this.ended = null; // { at, complete } once closed
    this.failure = null; // the first contract violation seen
    this.waiters = new Set();
    this.pending = '';
    this.sse = { data: null, id: undefined, name: undefined };
    const type = String(res.headers['content-type'] ?? '');
    const wanted = format === 'sse' ? SSE : NDJSON;
    if (!type.toLowerCase().startsWith(wanted)) this.fail(`Content-Type is ${JSON.stringify(type)}, not ${wanted}`);
    res.setEncoding('utf8');
    res.on('data', (chunk) => this.onData(chunk));
    this.closed = new Promise((resolve) => {
      res.on('close', () => {
        this.ended = { at: performance.now(), complete: res.complete };
        // A cut connection may stop anywhere; a stream the server ended must end with a whole line.
        if (res.complete && this.pending !== '') this.fail(`the stream ended inside a line: ${JSON.stringify(this.pending.slice(0, 200))}`);
        this.wake();
        resolve(this.ended);
      });
    });
    res.on('error', () => { /* a cut connection shows as close with complete false */ });
    req.on('error', () => { /* likewise */ });
  }

  fail(message) {
    this.failure ??= new Error(`${this.format} stream ${this.path}: ${message}`);
    this.wake();
  }

  wake() {
    for (const w of this.waiters) w();
  }

  onData(chunk) {
    const at = performance.now();
    const wall = Date.now();
    this.pending += chunk;
    let eol;
    while ((eol = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, eol).replace(/\r$/, '');
      this.pending = this.pending.slice(eol + 1);
      if (this.format === 'sse') this.sseLine(line, at, wall);
      else this.ndjsonLine(line, at, wall);
    }
    this.wake();
  }

  ndjsonLine(line, at, wall) {
    if (line === '') {
      this.heartbeats.push(at);
      return;
    }
    this.push({ raw: line, id: undefined, name: undefined }, at, wall);
  }

  sseLine(line, at, wall) {
    const s = this.sse;
    if (line === '') {
      if (s.data !== null) this.push({ raw: s.data, id: s.id, name: s.name }, at, wall);
      this.sse = { data: null, id: undefined, name: undefined };
      return;
    }
    if (line.startsWith(':')) {
      if (line.slice(1).trim() === 'heartbeat') this.heartbeats.push(at);
      else this.fail(`unexpected comment line ${JSON.stringify(line)}`);
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') s.data = s.data === null ? value : `${s.data}\n${value}`;
    else if (field === 'id') s.id = value;
    else if (field === 'event') s.name = value;
    else if (field !== 'retry') this.fail(`unknown SSE field ${JSON.stringify(field)}`);
  }

  push({ raw, id, name }, at, wall) {
    let data;
    try {
      data = JSON.parse(raw);
    } catch (err) {
      this.fail(`an event is not JSON (${err.message}): ${JSON.stringify(raw.slice(0, 200))}`);
      return;
    }
    const complaints = eventComplaints(data);
    if (this.format === 'sse') {
      if (name !== data.type) complaints.push(`SSE event field ${JSON.stringify(name)} is not the type ${JSON.stringify(data.type)}`);
      if (data.type === 'closing') {
        if (id !== undefined) complaints.push('a closing event carries an id');
      } else if (id !== String(data.version)) {
        complaints.push(`SSE id ${JSON.stringify(id)} is not the version ${data.version}`);
      }
    }
    if (this.ended) complaints.push('an event after the end');
    if (complaints.length) this.fail(`event ${JSON.stringify(data).slice(0, 300)}: ${complaints.join('; ')}`);
    this.events.push({ data, id, name, at, wall });
  }

  /** The data of every event received so far. */
  get datas() {
    return this.events.map((e) => e.data);
  }

  /** The version of the last snapshot or change received, or 0. */
  get lastVersion() {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const v = this.events[i].data.version;
      if (typeof v === 'number') return v;
    }
    return 0;
  }

  /**
   * Resolves to the next event whose data satisfies pred (events before it
   * are passed over), moving the cursor past it. Rejects when the stream broke
   * the contract, ended without one, or timeoutMs passed.
   */
  waitFor(pred, timeoutMs = 5000, what = 'a matching event') {
    return new Promise((resolve, reject) => {
      let timer;
      const check = () => {
        if (this.failure) return finish(reject, this.failure);
        while (this.cursor < this.events.length) {
          const ev = this.events[this.cursor++];
          if (pred(ev.data, ev)) return finish(resolve, ev);
        }
        if (this.ended) return finish(reject, new Error(`${this.format} stream ${this.path} ended before ${what}; got ${this.summary()}`));
        return undefined;
      };
      const finish = (fn, value) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        fn(value);
        return true;
      };
      if (check()) return;
      timer = setTimeout(() => finish(reject, new Error(`${this.format} stream ${this.path}: no ${what} within ${timeoutMs} ms; got ${this.summary()}`)), timeoutMs);
      this.waiters.add(check);
    });
  }

  /** The next event, whatever it is. */
  next(timeoutMs = 5000) {
    return this.waitFor(() => true, timeoutMs, 'event');
  }

  /** Resolves once the server has ended the stream (within timeoutMs); rejects on a contract violation. */
  async end(timeoutMs = 5000) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.format} stream ${this.path} still open after ${timeoutMs} ms; got ${this.summary()}`)), timeoutMs);
    });
    try {
      const ended = await Promise.race([this.closed, timeout]);
      if (this.failure) throw this.failure;
      return ended;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Throws the first contract violation seen, if any. */
  assertClean() {
    if (this.failure) throw this.failure;
  }

  /** A short account of what arrived, for failure messages. */
  summary() {
    const kinds = this.events.map((e) => `${e.data.type}${e.data.event ? `/${e.data.event}` : ''}@${e.data.version ?? '-'}`);
    return `${this.events.length} events [${kinds.slice(-12).join(' ')}]${this.ended ? `, ended (complete ${this.ended.complete})` : ''}`;
  }

  /** Closes the connection from the client side. */
  close() {
    this.req.destroy();
    return this.closed;
  }
}
