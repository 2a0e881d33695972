// A small chessd client typed by nothing but what openapi-typescript makes of
// openapi.yaml (run.sh writes chessd.d.ts), compiled with tsc --strict: it
// plays one game the way an integrator's code would. No type assertion
// anywhere (no `as any`, no `as unknown as`, no `!`; no_casts.mjs refuses
// one), so a spec that does not describe what the server sends fails to
// compile here, or fails the checks below when the game is played.
import type { components, paths } from "./chessd.js";

type Schemas = components["schemas"];
type Method = "get" | "post";

// What an operation's generated type says of its parts.
type Responses<O> = O extends { responses: infer R } ? R : never;
type Status<O> = Extract<keyof Responses<O>, number>;
type BodyOf<O, S extends Status<O>> = Responses<O>[S] extends { content: infer C } ? C[keyof C] : undefined;
type Part<O, K extends string> = O extends { parameters: { [P in K]?: infer T } } ? T : never;
type JsonBody<O> = O extends { requestBody?: infer B }
  ? NonNullable<B> extends { content: { "application/json": infer J } } ? J : never
  : never;

/** One request's parts, each typed as the operation documents it. */
interface Request<O> {
  params?: Part<O, "path">;
  query?: Part<O, "query">;
  headers?: Part<O, "header">;
  json?: JsonBody<O>;
  /** A player token, sent as `Authorization: Bearer` (the playerToken scheme). */
  token?: string;
}

/** An answer: its status, and its body as the operation documents that status. */
interface Answer<O> {
  status: number;
  text: string;
  /** The body when the answer's status is `status`, typed as openapi.yaml says; undefined otherwise. */
  body<S extends Status<O>>(status: S): BodyOf<O, S> | undefined;
}

/** The path and method's operation, as generated. */
type Op<P extends keyof paths, M extends Method> = paths[P][M];

/** Sends one request; the answer's types come from openapi.yaml for P and M. */
async function call<P extends keyof paths, M extends Method>(
  base: string, method: M, path: P, request: Request<Op<P, M>> = {},
): Promise<Answer<Op<P, M>>> {
  let target: string = path;
  for (const [name, value] of Object.entries(request.params ?? {}))
    target = target.replace(`{${name}}`, encodeURIComponent(String(value)));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) query.set(name, String(value));
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name, String(value));
  if (request.token !== undefined) headers.set("authorization", `Bearer ${request.token}`);
  let body: string | undefined;
  if (request.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(request.json);
  }
  const res = await fetch(`${base}${target}${query.toString() ? `?${query}` : ""}`, { method: method.toUpperCase(), headers, body });
  const text = await res.text();
  // Where data without a type meets the generated ones (EventStream.next is
  // the other place): JSON.parse's answer takes the type of the status that answered.
  const parsed = /json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : text;
  return {
    status: res.status,
    text,
    body<S extends Status<Op<P, M>>>(status: S) {
      return res.status === status ? parsed : undefined;
    },
  };
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`client: ${what}`);
}

/** The body of an answer that must have this status. */
function must<O, S extends Status<O>>(answer: Answer<O>, status: S, what: string): BodyOf<O, S> {
  const body = answer.body(status);
  if (body === undefined) throw new Error(`client: ${what}: expected ${status}, got ${answer.status}: ${answer.text}`);
  return body;
}

// The stream route documents NDJSON (one event a line): this fails to compile if it stops doing so.
const NDJSON: keyof Responses<Op<"/v1/games/{id}/events", "get">>[200]["content"] = "application/x-ndjson";

/** A game's event stream (GET /v1/games/{id}/events), NDJSON, each line typed as a StreamEvent. */
class EventStream {
  private pending = "";
  private readonly decoder = new TextDecoder();

  private constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  static async open(base: string, id: string): Promise<EventStream> {
    const headers: Part<Op<"/v1/games/{id}/events", "get">, "header"> = { Accept: NDJSON };
    const res = await fetch(`${base}/v1/games/${encodeURIComponent(id)}/events`, { headers });
    check(res.status === 200 && res.body !== null, `the stream answered ${res.status}`);
    check(res.headers.get("content-type") === NDJSON, `the stream is ${res.headers.get("content-type")}`);
    if (res.body === null) throw new Error("client: the stream has no body");
    return new EventStream(res.body.getReader());
  }

  /** The next event (heartbeats, empty lines, skipped); null once the server has ended the stream. */
  async next(): Promise<Schemas["StreamEvent"] | null> {
    for (;;) {
      const newline = this.pending.indexOf("\n");
      if (newline >= 0) {
        const line = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        if (line === "") continue;
        const event: Schemas["StreamEvent"] = JSON.parse(line);
        return event;
      }
      const { done, value } = await this.reader.read();
      if (done) return null;
      this.pending += this.decoder.decode(value, { stream: true });
    }
  }

  /** The next event, which must be a change made by `kind`. */
  async change(kind: Schemas["ChangeEvent"]["event"], what: string): Promise<Schemas["ChangeEvent"]> {
    const event = await this.next();
    if (event === null) throw new Error(`client: ${what}: the stream ended`);
    if (event.type !== "change") throw new Error(`client: ${what}: a ${event.type} event, not a change`);
    check(event.event === kind, `${what}: the change is ${event.event}, not ${kind}`);
    return event;
  }
}

/** What a clock shows, counted down from the answer that carried it: the side to move's time runs from receipt on. */
function clockLine(clock: Schemas["Clock"] | null, receivedAt: number, now: number): string {
  if (clock === null) return "untimed";
  const left = (side: "white" | "black") =>
    Math.max(0, (side === "white" ? clock.white_ms : clock.black_ms) - (clock.running === side ? now - receivedAt : 0));
  return `white ${left("white")} ms, black ${left("black")} ms, running ${clock.running ?? "none"}`;
}

/**
 * Plays a game on the chessd at base: a timed game for two people, followed
 * on its stream; 1.e4 e5, a move against a stale version (409), 2.Nf3, a
 * draw offered and accepted, then the PGN. log takes a line of what happened.
 */
export async function playGame(base: string, log: (line: string) => void): Promise<void> {
  // A game with a clock; first_move_ms, takeback and the engine left out (they have defaults).
  const game = must(await call(base, "post", "/v1/games", {
    json: { white: "Ann", black: "Bob", clock: { initial_ms: 300_000, increment_ms: 2_000 } },
  }), 201, "create a game");
  const id = game.id;
  const { white, black } = game.tokens;
  if (white === undefined || black === undefined) throw new Error("client: a game between two people has two tokens");
  check(game.clock !== null && game.clock.first_move_ms === 30_000, "the first-move grace defaults to 30 s");
  log(`game ${id} at version ${game.version}: ${game.white.name} against ${game.black.name}, ${clockLine(game.clock, Date.now(), Date.now())}`);

  const stream = await EventStream.open(base, id);
  const first = await stream.next();
  check(first !== null && first.type === "game" && first.version === game.version, "the stream starts with the game");

  // 1. e4 by version, without offer_draw (it defaults to false).
  const e4 = must(await call(base, "post", "/v1/games/{id}/moves", {
    params: { id }, token: white, json: { move: "e4", expected_version: game.version },
  }), 200, "1. e4");
  const e4Event = await stream.change("move", "1. e4");
  check(e4Event.version === e4.version && e4Event.move?.san === "e4" && e4Event.move.uci === "e2e4", "the event names the move");
  check(e4Event.status === "active" && e4Event.draw_offer === null, "the game goes on");
  check(e4Event.clock !== null && e4Event.clock.running === null, "the clock waits for the second ply");

  // 1... e5 (in UCI) by If-Match.
  const e5 = must(await call(base, "post", "/v1/games/{id}/moves", {
    params: { id }, token: black, headers: { "If-Match": `"${e4.version}"` }, json: { move: "e7e5" },
  }), 200, "1... e5");
  const e5Event = await stream.change("move", "1... e5");
  const received = Date.now();
  check(e5Event.move?.san === "e5" && e5Event.move_count === 2, "the event counts the moves");
  check(e5Event.clock !== null && e5Event.clock.running === "white" && e5Event.clock.white_ms === 300_000,
    "White's clock runs, full");
  log(`after 1. e4 e5 (version ${e5.version}): ${clockLine(e5Event.clock, received, Date.now())}`);

  // A move against the version before e5: 409, and current_version says where the game is.
  const stale = await call(base, "post", "/v1/games/{id}/moves", {
    params: { id }, token: white, json: { move: "Nf3", expected_version: e4.version },
  });
  const conflict = stale.body(409);
  if (conflict === undefined) throw new Error(`client: a stale version: expected 409, got ${stale.status}: ${stale.text}`);
  check(conflict.code === "version_conflict" && conflict.current_version === e5.version, "409 names the current version");
  log(`a move against version ${e4.version}: ${conflict.status} ${conflict.code}, current_version ${conflict.current_version}`);

  const nf3 = must(await call(base, "post", "/v1/games/{id}/moves", {
    params: { id }, token: white, json: { move: "Nf3", expected_version: conflict.current_version },
  }), 200, "2. Nf3");
  const nf3Event = await stream.change("move", "2. Nf3");
  check(nf3Event.clock !== null && nf3Event.clock.running === "black" && nf3Event.clock.white_ms <= 302_000,
    "the increment is added and Black's clock runs");

  // Black offers a draw, White accepts: the game ends, and so does its stream.
  const offer = must(await call(base, "post", "/v1/games/{id}/draw", {
    params: { id }, token: black, json: { action: "offer", expected_version: nf3.version },
  }), 200, "the draw offer");
  const offerEvent = await stream.change("draw_offer", "the draw offer");
  check(offer.draw_offer === "black" && offerEvent.draw_offer === "black", "the offer is Black's");
  const accepted = must(await call(base, "post", "/v1/games/{id}/draw", {
    params: { id }, token: white, json: { action: "accept", expected_version: offer.version },
  }), 200, "the acceptance");
  const end = await stream.change("draw_accept", "the acceptance");
  const drawn: Schemas["Result"] = "1/2-1/2";
  check(accepted.status === "draw" && end.status === "draw" && end.result === drawn && end.termination === "agreement",
    "a draw by agreement");
  check(end.clock !== null && end.clock.running === null, "the clocks stop");
  check((await stream.next()) === null, "the stream ends with the game");
  log(`version ${end.version}: ${end.status} by ${end.termination}, ${end.result}`);

  const pgn = must(await call(base, "get", "/v1/games/{id}/pgn", { params: { id } }), 200, "the PGN");
  check(pgn.includes('[Result "1/2-1/2"]') && /^1\. e4 \{ \[%clk 0:05:00\] \} 1\.\.\. e5 .* 2\. Nf3/m.test(pgn),
    `the PGN: ${pgn}`);
  check(pgn.includes('[TimeControl "300+2"]'), "the PGN names the time control");
  log(`PGN: ${pgn.split("\n").filter((l) => l.startsWith("1.")).join(" ")}`);
}
