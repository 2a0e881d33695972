/* The remote mode of `chessd play` (see play_remote.h). The server is the
 * truth; the session mirrors the game (a game_t replayed from its moves, and
 * its version) to draw the board and list the legal moves. Moves are POSTed
 * with expected_ply, which an offer does not make stale, other changes with
 * expected_version; the opponent's arrive on the SSE stream, read by the
 * input's wait hook (play_input.h). A game against the computer is made here. */
#include "play_remote.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../rules/rules.h"
#include "../../store/sock.h"
#include "../http/buf.h"
#include "http_client.h"
#include "play_engine.h"

enum {
    REQUEST_TIMEOUT_MS = 10000,
    STREAM_OPEN_TIMEOUT_MS = 5000,   /* input waits meanwhile */
    STREAM_IDLE_MS = 60000,          /* no byte, not even a heartbeat, for this long: the stream is lost */
    RECONNECT_FIRST_MS = 1000,
    RECONNECT_MAX_MS = 16000,
    ANSWER_MAX = 8 * 1024 * 1024,    /* a game of GAME_MAX_PLIES moves is well below this */
    EVENT_MAX = 8 * 1024 * 1024,
    TOKEN_MAX = 512,
    GAME_ID_MAX = 64,
};

typedef struct {
    http_client_url_t url;
    char game_id[GAME_ID_MAX + 1];
    char auth[TOKEN_MAX + 32]; /* the Authorization header line; never printed */
    play_view_t view;
    FILE *out;
    /* the mirror */
    game_t game;
    buf_t line;
    uint64_t version;
    int side; /* color_t, or -1 when not known (a finished game) */
    bool created; /* the mirror and side come from the creation's answer */
    game_takeback_t takeback;
    game_offer_t draw_offer, takeback_offer;
    bool timed;
    int64_t clock_ms[COLOR_COUNT];
    int running; /* color_t whose clock runs, or -1 */
    /* the event stream */
    http_client_stream_t *stream;
    buf_t stream_bytes;  /* decoded, not yet split into lines */
    buf_t event_data;    /* the data lines of the event being read */
    char event_type[32];
    bool stream_refused; /* a 4xx: no reconnecting */
    int64_t reconnect_at, last_byte_at;
    int backoff_ms;
    /* standard input */
    play_input_t *input;
    bool poll_failed; /* the session ends with status 1 */
} remote_t;


/* ---- answers ---- */

/* Prints a refused request: its problem's code and detail, or the status and
 * the start of the body when it is not a problem document. */
static void print_refusal(remote_t *r, const http_client_response_t *res)
{
    cJSON *doc = res->body ? cJSON_ParseWithLengthOpts(res->body, res->body_length, NULL, 0) : NULL;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(doc, "code");
    const cJSON *detail = cJSON_GetObjectItemCaseSensitive(doc, "detail");
    if (cJSON_IsString(code) && cJSON_IsString(detail)) {
        play_print_error(r->out, code->valuestring, detail->valuestring);
    } else {
        char what[32], text[200];
        snprintf(what, sizeof what, "http_%d", res->status);
        snprintf(text, sizeof text, "%.*s", (int)(res->body_length < 160 ? res->body_length : 160),
                 res->body ? res->body : "");
        play_print_error(r->out, what, text[0] ? text : "the server gave no detail");
    }
    cJSON_Delete(doc);
}

static const char *problem_code(const http_client_response_t *res, char *code, size_t size)
{
    cJSON *doc = res->body ? cJSON_ParseWithLengthOpts(res->body, res->body_length, NULL, 0) : NULL;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(doc, "code");
    snprintf(code, size, "%s", cJSON_IsString(item) ? item->valuestring : "");
    cJSON_Delete(doc);
    return code;
}

static bool request(remote_t *r, const char *method, const char *path, const char *body,
                    http_client_response_t *res)
{
    char full[GAME_ID_MAX + 128], err[256];
    snprintf(full, sizeof full, "/v1/games/%s%s", r->game_id, path);
    if (!http_client_request(&r->url, method, full, r->auth, body, body ? strlen(body) : 0, REQUEST_TIMEOUT_MS,
                             ANSWER_MAX, res, err, sizeof err)) {
        play_print_error(r->out, "connection_failed", err);
        return false;
    }
    return true;
}

/* ---- the mirror ---- */

static int name_of(int (*from_name)(const char *, size_t), const cJSON *item, int fallback)
{
    if (!cJSON_IsString(item))
        return fallback;
    int value = from_name(item->valuestring, strlen(item->valuestring));
    return value < 0 ? fallback : value;
}

/* The colour a JSON string names ("white", "black"), else -1. */
static int color_of(const cJSON *item)
{
    return cJSON_IsString(item) ? play_color_from_name(item->valuestring, strlen(item->valuestring)) : -1;
}

/* The fields every Game, GameChange and ChangeEvent carries beside the
 * position; an offer or a clock's side that is absent is none. */
static void read_fields(remote_t *r, const cJSON *doc)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
    if (cJSON_IsNumber(version) && version->valuedouble >= 1)
        r->version = (uint64_t)version->valuedouble;
    r->draw_offer = (game_offer_t)name_of(game_offer_from_name, cJSON_GetObjectItemCaseSensitive(doc, "draw_offer"),
                                          GAME_OFFER_NONE);
    r->takeback_offer = (game_offer_t)name_of(game_offer_from_name,
                                              cJSON_GetObjectItemCaseSensitive(doc, "takeback_offer"), GAME_OFFER_NONE);
    r->takeback = (game_takeback_t)name_of(game_takeback_from_name, cJSON_GetObjectItemCaseSensitive(doc, "takeback"),
                                           (int)r->takeback);
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(doc, "clock");
    r->timed = cJSON_IsObject(clock);
    if (r->timed) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(clock, "white_ms");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(clock, "black_ms");
        r->clock_ms[WHITE] = cJSON_IsNumber(w) ? (int64_t)w->valuedouble : 0;
        r->clock_ms[BLACK] = cJSON_IsNumber(b) ? (int64_t)b->valuedouble : 0;
        r->running = color_of(cJSON_GetObjectItemCaseSensitive(clock, "running"));
    }
}

/* Rebuilds the mirror from a whole game (GET /v1/games/{id}, or a `game` event). */
static bool load_game(remote_t *r, const cJSON *doc)
{
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(doc, "initial_fen");
    const cJSON *chess960 = cJSON_GetObjectItemCaseSensitive(doc, "chess960");
    const cJSON *variant_name = cJSON_GetObjectItemCaseSensitive(doc, "variant");
    const cJSON *moves = cJSON_GetObjectItemCaseSensitive(doc, "moves");
    position_t initial;
    char message[200];
    variant_t variant = VARIANT_STANDARD; /* a server older than variants sends none */
    bool named_960;
    if (cJSON_IsString(variant_name)
        && !variant_from_name(variant_name->valuestring, strlen(variant_name->valuestring), &variant, &named_960))
        variant = VARIANT_COUNT;
    if (!cJSON_IsString(fen) || !cJSON_IsArray(moves) || variant == VARIANT_COUNT
        || fen_parse_variant(fen->valuestring, strlen(fen->valuestring), variant,
                             cJSON_IsTrue(chess960) ? FEN_CHESS960 : 0, &initial, message, sizeof message) != FEN_OK) {
        play_print_error(r->out, "bad_answer", "the server's game has no readable initial_fen or moves");
        return false;
    }
    buf_t line;
    buf_init(&line);
    const cJSON *move;
    cJSON_ArrayForEach(move, moves) {
        const cJSON *uci = cJSON_GetObjectItemCaseSensitive(move, "uci");
        const cJSON *san = cJSON_GetObjectItemCaseSensitive(move, "san");
        if (!cJSON_IsString(uci) || !cJSON_IsString(san)) {
            buf_fail(&line);
            break;
        }
        buf_printf(&line, "%s%s:%s", line.length ? " " : "", uci->valuestring, san->valuestring);
    }
    game_state_t state = (game_state_t)name_of(game_state_from_name, cJSON_GetObjectItemCaseSensitive(doc, "status"), -1);
    game_result_t result = (game_result_t)name_of(game_result_from_name, cJSON_GetObjectItemCaseSensitive(doc, "result"), -1);
    game_termination_t termination = (game_termination_t)name_of(
        game_termination_from_name, cJSON_GetObjectItemCaseSensitive(doc, "termination"), GAME_TERMINATION_NONE);
    game_offer_t offer = (game_offer_t)name_of(game_offer_from_name, cJSON_GetObjectItemCaseSensitive(doc, "draw_offer"),
                                               GAME_OFFER_NONE);
    game_t g;
    if (buf_failed(&line) || (int)state < 0 || (int)result < 0
        || game_replay(&g, &initial, line.data ? line.data : "", line.length, state, result, termination, offer)
               != GAME_OK) {
        play_print_error(r->out, "bad_answer", "the server's game does not replay");
        buf_free(&line);
        return false;
    }
    r->game = g;
    buf_free(&r->line);
    r->line = line;
    read_fields(r, doc);
    return true;
}

static bool fetch_game(remote_t *r)
{
    http_client_response_t res;
    if (!request(r, "GET", "?legal_moves=false", NULL, &res))
        return false;
    bool ok = false;
    if (res.status == 200) {
        cJSON *doc = cJSON_ParseWithLengthOpts(res.body, res.body_length, NULL, 0);
        ok = doc && load_game(r, doc);
        if (!doc)
            play_print_error(r->out, "bad_answer", "the server's game is not JSON");
        cJSON_Delete(doc);
    } else {
        print_refusal(r, &res);
    }
    http_client_response_free(&res);
    return ok;
}

static void print_game(remote_t *r)
{
    play_print_game(r->out, &r->game, r->line.data ? r->line.data : "", r->line.length, &r->view);
    /* play_print_game ended with an empty line: the remote lines go before the next block */
    if (r->draw_offer != GAME_OFFER_NONE || r->takeback_offer != GAME_OFFER_NONE || r->timed) {
        if (r->draw_offer != GAME_OFFER_NONE)
            fprintf(r->out, "Draw offered by %s\n", game_offer_name(r->draw_offer));
        if (r->takeback_offer != GAME_OFFER_NONE)
            fprintf(r->out, "Takeback offered by %s\n", game_offer_name(r->takeback_offer));
        if (r->timed)
            fprintf(r->out, "Clock: white %" PRId64 ".%01" PRId64 " s, black %" PRId64 ".%01" PRId64 " s%s%s\n",
                    r->clock_ms[WHITE] / 1000, r->clock_ms[WHITE] % 1000 / 100, r->clock_ms[BLACK] / 1000,
                    r->clock_ms[BLACK] % 1000 / 100, r->running >= 0 ? ", running: " : "",
                    r->running >= 0 ? play_color_name(r->running) : "");
        fputc('\n', r->out);
    }
    if (game_is_over(&r->game))
        fputs("The game is over.\n\n", r->out);
}

/* Plays a move a change reports (version one ahead) on the mirror; false
 * when it does not fit, and the caller reloads the game. */
static bool apply_change_move(remote_t *r, const cJSON *change)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(change, "version");
    const cJSON *move = cJSON_GetObjectItemCaseSensitive(change, "move");
    const cJSON *uci = cJSON_GetObjectItemCaseSensitive(move, "uci");
    const cJSON *position = cJSON_GetObjectItemCaseSensitive(change, "position");
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(position, "fen");
    if (!cJSON_IsNumber(version) || (uint64_t)version->valuedouble != r->version + 1 || !cJSON_IsString(uci)
        || !cJSON_IsString(fen))
        return false;
    game_t g = r->game;
    game_played_t played;
    if (game_move(&g, (color_t)g.pos.side_to_move, uci->valuestring, strlen(uci->valuestring), GAME_MAX_PLIES, 0,
                  &played) != GAME_OK)
        return false;
    char mine[FEN_BUFFER_SIZE];
    if (strcmp(fen_format(&g.pos, mine, sizeof mine), fen->valuestring))
        return false;
    /* The server ends a game by itself exactly as the rules core does; a
     * status that says otherwise (a flag fell with the move) reloads. */
    if (name_of(game_state_from_name, cJSON_GetObjectItemCaseSensitive(change, "status"), -1) != (int)g.state)
        return false;
    char entry[GAME_LINE_ENTRY_SIZE];
    size_t n = game_line_entry(&played, entry);
    if (r->line.length)
        buf_putc(&r->line, ' ');
    buf_append(&r->line, entry, n);
    r->game = g;
    read_fields(r, change);
    return !buf_failed(&r->line);
}

/* Brings the mirror up to a change (an answer or an event): a move one
 * version ahead is played on it, anything else (another change, a gap in
 * the versions, a disagreement) reloads the game. True when it moved on. */
static bool follow_change(remote_t *r, const cJSON *change)
{
    const cJSON *move = cJSON_GetObjectItemCaseSensitive(change, "move");
    if (cJSON_IsObject(move) && apply_change_move(r, change))
        return true;
    return fetch_game(r);
}

/* ---- changes ---- */

/* POSTs a change (body: JSON with the mirror's expected_version added, or
 * for a move its expected_ply) and follows its answer. A change that means
 * the same whatever has been played since (any_version: resigning) is sent
 * once more, at the game's new version, when the game moved on under it
 * (the computer's reply landed before its event was read) and is still
 * being played. */
static void post_change_at(remote_t *r, const char *path, cJSON *body, bool any_version)
{
    bool move = !strcmp(path, "/moves");
    const char *guard = move ? "expected_ply" : "expected_version";
    for (int attempt = 0; attempt < 2; attempt++) {
        cJSON_DeleteItemFromObjectCaseSensitive(body, guard);
        cJSON_AddNumberToObject(body, guard, move ? (double)r->game.ply_count : (double)r->version);
        char *text = cJSON_PrintUnformatted(body);
        if (!text) {
            play_print_error(r->out, "internal_error", "out of memory");
            break;
        }
        http_client_response_t res;
        bool answered = request(r, "POST", path, text, &res);
        free(text);
        if (!answered)
            break;
        char code[64];
        /* On a conflict the game moved on: read it once, as it is now. */
        bool moved_on = res.status != 200 && !strcmp(problem_code(&res, code, sizeof code), "version_conflict")
                        && fetch_game(r);
        if (res.status == 200) {
            cJSON *doc = cJSON_ParseWithLengthOpts(res.body, res.body_length, NULL, 0);
            if (doc && follow_change(r, doc))
                print_game(r);
            cJSON_Delete(doc);
        } else if (moved_on && any_version && attempt == 0 && !game_is_over(&r->game)) {
            http_client_response_free(&res);
            continue; /* the same change at the version the game is at now */
        } else {
            print_refusal(r, &res);
            if (moved_on)
                print_game(r); /* show it as it is */
        }
        http_client_response_free(&res);
        break;
    }
    cJSON_Delete(body);
}

static void post_change(remote_t *r, const char *path, cJSON *body) { post_change_at(r, path, body, false); }

static cJSON *action_body(const char *action)
{
    cJSON *body = cJSON_CreateObject();
    if (action)
        cJSON_AddStringToObject(body, "action", action);
    return body;
}

/* `hint`: the server's analysis of the game's position (refused in a game
 * between two people still being played: analysis_not_allowed). */
static void remote_hint(remote_t *r)
{
    char path[64];
    snprintf(path, sizeof path, "/analysis?nodes=%d", PLAY_HINT_NODES);
    http_client_response_t res;
    if (!request(r, "GET", path, NULL, &res))
        return;
    if (res.status != 200) {
        print_refusal(r, &res);
        http_client_response_free(&res);
        return;
    }
    cJSON *doc = cJSON_ParseWithLengthOpts(res.body, res.body_length, NULL, 0);
    const cJSON *san = cJSON_GetObjectItemCaseSensitive(doc, "bestmove_san");
    const cJSON *line = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "lines"), 0);
    const cJSON *mate = cJSON_GetObjectItemCaseSensitive(line, "mate");
    const cJSON *cp = cJSON_GetObjectItemCaseSensitive(line, "cp");
    if (!doc)
        play_print_error(r->out, "bad_answer", "the server's analysis is not JSON");
    else if (!cJSON_IsString(san))
        play_print_error(r->out, "game_over", "the game is over and its position has no legal move");
    else if (cJSON_IsNumber(mate))
        play_print_hint(r->out, san->valuestring, true, mate->valueint);
    else if (cJSON_IsNumber(cp))
        play_print_hint(r->out, san->valuestring, false, cp->valueint);
    else
        play_print_error(r->out, "bad_answer", "the server's analysis has no score");
    cJSON_Delete(doc);
    http_client_response_free(&res);
}

/* Whether the opponent has an offer standing (offer: the mirror's draw or takeback offer). */
static bool opponent_offers(const remote_t *r, game_offer_t offer)
{
    game_offer_t mine = r->side == WHITE ? GAME_OFFER_WHITE : GAME_OFFER_BLACK;
    return offer != GAME_OFFER_NONE && (r->side < 0 || offer != mine);
}

static void remote_pgn(remote_t *r)
{
    http_client_response_t res;
    if (!request(r, "GET", "/pgn", NULL, &res))
        return;
    if (res.status == 200) {
        fwrite(res.body, 1, res.body_length, r->out);
        fputc('\n', r->out);
    } else {
        print_refusal(r, &res);
    }
    http_client_response_free(&res);
}

/* Accepts or declines the opponent's takeback offer when it is the only
 * one standing, else its draw offer. */
static void remote_answer_offer(remote_t *r, const char *action)
{
    bool takeback = opponent_offers(r, r->takeback_offer) && !opponent_offers(r, r->draw_offer);
    post_change(r, takeback ? "/takeback" : "/draw", action_body(action));
}

static void remote_move(remote_t *r, const char *text, size_t length)
{
    cJSON *body = cJSON_CreateObject();
    char move[PLAY_LINE_MAX + 1];
    snprintf(move, sizeof move, "%.*s", (int)length, text);
    cJSON_AddStringToObject(body, "move", move);
    post_change(r, "/moves", body);
}

/* Runs one command (text: length bytes, blanks cut); false to end the session. */
static bool remote_command(remote_t *r, const char *text, size_t length)
{
    switch (play_command_find(text, length, true)) {
    case PLAY_COMMAND_QUIT:
        return false;
    case PLAY_COMMAND_HELP:
        play_print_help(r->out, true);
        break;
    case PLAY_COMMAND_MOVES:
        play_print_legal_moves(r->out, &r->game);
        break;
    case PLAY_COMMAND_HINT:
        remote_hint(r);
        break;
    case PLAY_COMMAND_FEN: {
        char fen[FEN_BUFFER_SIZE];
        fprintf(r->out, "%s\n", fen_format(&r->game.pos, fen, sizeof fen));
        break;
    }
    case PLAY_COMMAND_BOARD:
        print_game(r);
        break;
    case PLAY_COMMAND_PGN:
        remote_pgn(r);
        break;
    case PLAY_COMMAND_UNDO:
        if (r->takeback == GAME_TAKEBACK_FREE)
            post_change(r, "/undo", action_body(NULL));
        else
            post_change(r, "/takeback", action_body("offer"));
        break;
    case PLAY_COMMAND_CLAIM:
        post_change(r, "/draw", action_body("claim"));
        break;
    case PLAY_COMMAND_DRAW:
        post_change(r, "/draw", action_body("offer"));
        break;
    case PLAY_COMMAND_RESIGN:
        post_change_at(r, "/resign", action_body(NULL), true);
        break;
    case PLAY_COMMAND_ACCEPT:
        remote_answer_offer(r, "accept");
        break;
    case PLAY_COMMAND_DECLINE:
        remote_answer_offer(r, "decline");
        break;
    case PLAY_COMMAND_MOVE:
    case PLAY_COMMAND_COUNT:
        remote_move(r, text, length);
        break;
    }
    return true;
}

/* ---- which side the token plays ---- */

/* Sets r->side by a move that can never be legal ("-"): the answer is
 * not_your_turn for the side not to move and invalid_move_text for the
 * other, and the game is not changed either way. False when the token is
 * refused. */
static bool find_side(remote_t *r)
{
    r->side = -1;
    for (int attempt = 0; attempt < 3 && !game_is_over(&r->game); attempt++) {
        char body[64];
        snprintf(body, sizeof body, "{\"move\":\"-\",\"expected_version\":%" PRIu64 "}", r->version);
        http_client_response_t res;
        if (!request(r, "POST", "/moves", body, &res))
            return false;
        char code[64];
        problem_code(&res, code, sizeof code);
        bool known = true;
        if (!strcmp(code, "invalid_move_text"))
            r->side = r->game.pos.side_to_move;
        else if (!strcmp(code, "not_your_turn"))
            r->side = !r->game.pos.side_to_move;
        else if (!strcmp(code, "version_conflict") || !strcmp(code, "game_over"))
            known = false;
        else {
            print_refusal(r, &res);
            http_client_response_free(&res);
            return false;
        }
        http_client_response_free(&res);
        if (known)
            return true;
        if (!fetch_game(r))
            return false;
    }
    return true; /* over: no side to play */
}

/* ---- the event stream ---- */

/* The next attempt to open the stream, after a wait that doubles each time (to RECONNECT_MAX_MS). */
static void schedule_reconnect(remote_t *r)
{
    r->reconnect_at = clock_now_ms() + r->backoff_ms;
    r->backoff_ms = r->backoff_ms * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : r->backoff_ms * 2;
}

static void stream_drop(remote_t *r, const char *why)
{
    http_client_stream_close(r->stream);
    r->stream = NULL;
    r->stream_bytes.length = 0;
    r->event_data.length = 0;
    r->event_type[0] = '\0';
    if (game_is_over(&r->game))
        return;
    if (why) {
        play_input_hide(r->input);
        fprintf(r->out, "notice: the event stream ended (%s); reconnecting\n", why);
    }
    schedule_reconnect(r);
}

static void stream_open(remote_t *r)
{
    char path[GAME_ID_MAX + 32], headers[sizeof r->auth + 96], err[256];
    snprintf(path, sizeof path, "/v1/games/%s/events", r->game_id);
    /* No Last-Event-ID: the stream starts with the whole game, at once, so a
     * proxy that holds a response's head until its first body bytes passes
     * it on without waiting for a heartbeat; the game is read only when its
     * version is not the session's. */
    snprintf(headers, sizeof headers, "%sAccept: text/event-stream\r\n", r->auth);
    http_client_response_t res;
    r->stream = http_client_stream_open(&r->url, path, headers, STREAM_OPEN_TIMEOUT_MS, &res, err, sizeof err);
    r->reconnect_at = 0;
    if (r->stream) {
        r->last_byte_at = clock_now_ms();
        r->backoff_ms = RECONNECT_FIRST_MS;
        return;
    }
    play_input_hide(r->input);
    if (res.status >= 400 && res.status < 500 && res.status != 429) {
        print_refusal(r, &res);
        fputs("notice: the opponent's moves will not be shown (type board to reload the game)\n", r->out);
        r->stream_refused = true;
    } else {
        play_print_error(r->out, "stream_unavailable", err);
        schedule_reconnect(r);
    }
    http_client_response_free(&res);
}

/* A whole game that arrives one move ahead of the mirror (the stream
 * missed that move's change, as a new subscription may): the move is
 * announced as a change would have announced it. */
static void announce_new_move(remote_t *r, const cJSON *doc)
{
    const cJSON *moves = cJSON_GetObjectItemCaseSensitive(doc, "moves");
    if (!cJSON_IsArray(moves) || cJSON_GetArraySize(moves) != r->game.ply_count + 1)
        return;
    const cJSON *last = cJSON_GetArrayItem(moves, r->game.ply_count);
    const cJSON *san = cJSON_GetObjectItemCaseSensitive(last, "san");
    if (cJSON_IsString(san))
        fprintf(r->out, "%s played %s\n", play_color_name(r->game.pos.side_to_move), san->valuestring);
}

/* The events of a game's stream the session reads, by their "type". */
typedef enum { STREAM_EVENT_GAME = 0, STREAM_EVENT_CHANGE, STREAM_EVENT_CLOSING, STREAM_EVENT_COUNT } stream_event_t;
static const char *const stream_event_names[STREAM_EVENT_COUNT] = { "game", "change", "closing" };

static stream_event_t stream_event_type(const cJSON *doc)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(doc, "type");
    for (int t = 0; cJSON_IsString(type) && t < STREAM_EVENT_COUNT; t++)
        if (!strcmp(type->valuestring, stream_event_names[t]))
            return (stream_event_t)t;
    return STREAM_EVENT_COUNT;
}

/* The whole game, which starts each connection: read when it is not the mirror's version. */
static void stream_game(remote_t *r, const cJSON *doc)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
    if (cJSON_IsNumber(version) && (uint64_t)version->valuedouble == r->version)
        return;
    play_input_hide(r->input);
    announce_new_move(r, doc);
    if (load_game(r, doc))
        print_game(r);
}

/* A change newer than the mirror: announced ("black played e5", or its event's name) and followed. */
static void stream_change(remote_t *r, const cJSON *doc)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
    if (!cJSON_IsNumber(version) || (uint64_t)version->valuedouble <= r->version)
        return;
    const cJSON *event = cJSON_GetObjectItemCaseSensitive(doc, "event");
    const cJSON *san = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "move"), "san");
    const cJSON *turn = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "position"), "turn");
    int mover = color_of(turn) == WHITE ? BLACK : WHITE; /* the side not to move after the move */
    play_input_hide(r->input);
    if (cJSON_IsString(event) && !strcmp(event->valuestring, "move") && cJSON_IsString(san))
        fprintf(r->out, "%s played %s\n", play_color_name(mover), san->valuestring);
    else
        fprintf(r->out, "event: %s\n", cJSON_IsString(event) ? event->valuestring : "change");
    if (follow_change(r, doc))
        print_game(r);
}

/* One whole SSE event: its data (JSON), whose type says what it is. */
static void stream_event(remote_t *r)
{
    cJSON *doc = cJSON_ParseWithLengthOpts(r->event_data.data, r->event_data.length, NULL, 0);
    switch (stream_event_type(doc)) {
    case STREAM_EVENT_GAME:
        stream_game(r, doc);
        break;
    case STREAM_EVENT_CHANGE:
        stream_change(r, doc);
        break;
    case STREAM_EVENT_CLOSING:
        stream_drop(r, "the server is shutting down");
        break;
    case STREAM_EVENT_COUNT:
        break;
    }
    cJSON_Delete(doc);
}

/* Splits the decoded stream into SSE lines and dispatches each complete event. */
static void stream_lines(remote_t *r)
{
    size_t start = 0;
    while (r->stream && start < r->stream_bytes.length) {
        char *line = r->stream_bytes.data + start;
        char *newline = memchr(line, '\n', r->stream_bytes.length - start);
        if (!newline)
            break;
        size_t n = (size_t)(newline - line);
        start += n + 1;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        if (n == 0) {
            if (r->event_data.length)
                stream_event(r);
            r->event_data.length = 0;
            r->event_type[0] = '\0';
        } else if (n >= 5 && !memcmp(line, "data:", 5)) {
            size_t skip = n > 5 && line[5] == ' ' ? 6 : 5;
            if (r->event_data.length)
                buf_putc(&r->event_data, '\n');
            buf_append(&r->event_data, line + skip, n - skip);
        } else if (n >= 6 && !memcmp(line, "event:", 6)) {
            snprintf(r->event_type, sizeof r->event_type, "%.*s", (int)(n - 6), line + 6);
        } /* "id:" is the version, which the data carries too; ':' starts a heartbeat comment */
    }
    if (!r->stream) {
        return;
    }
    memmove(r->stream_bytes.data, r->stream_bytes.data + start, r->stream_bytes.length - start);
    r->stream_bytes.length -= start;
    r->stream_bytes.data[r->stream_bytes.length] = '\0';
    if (r->stream_bytes.length > EVENT_MAX || r->event_data.length > EVENT_MAX || buf_failed(&r->stream_bytes)
        || buf_failed(&r->event_data)) {
        buf_free(&r->stream_bytes);
        buf_free(&r->event_data);
        stream_drop(r, "an event over the size limit");
    }
}

static void stream_readable(remote_t *r)
{
    char err[256];
    int rc = http_client_stream_read(r->stream, &r->stream_bytes, err, sizeof err);
    r->last_byte_at = clock_now_ms();
    if (r->stream_bytes.length)
        stream_lines(r);
    if (r->stream && rc <= 0)
        stream_drop(r, rc < 0 ? err : "closed by the server");
}

/* ---- the session ---- */

static bool valid_text(const char *text, size_t max, const char *allowed)
{
    size_t n = strlen(text);
    if (n == 0 || n > max)
        return false;
    for (const char *p = text; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (allowed ? !strchr(allowed, c) || c == '\0' : c <= ' ' || c >= 0x7f)
            return false;
    }
    return true;
}

/* The wait hook of the input (play_input.h), run before each byte is read:
 * it reads the event stream, and reopens it after a loss, until standard
 * input can be read. What it prints goes above the line being typed.
 * False when poll fails or standard input is closed. */
static bool remote_wait(void *ctx)
{
    remote_t *r = ctx;
    for (;;) {
        while (r->stream && http_client_stream_pending(r->stream))
            stream_readable(r);
        bool want_stream = !r->stream && !r->stream_refused && !game_is_over(&r->game) && r->reconnect_at;
        int64_t now = clock_now_ms();
        if (want_stream && now >= r->reconnect_at) {
            stream_open(r);
            continue;
        }
        if (r->stream && now - r->last_byte_at > STREAM_IDLE_MS) {
            stream_drop(r, "no heartbeat");
            continue;
        }
        int timeout = -1;
        if (want_stream)
            timeout = (int)(r->reconnect_at - now);
        else if (r->stream)
            timeout = (int)(r->last_byte_at + STREAM_IDLE_MS - now) + 1;
        play_input_show(r->input); /* and flush what was printed, before waiting */
        fflush(r->out);
        struct pollfd fds[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
                                 { .fd = r->stream ? http_client_stream_fd(r->stream) : -1,
                                   .events = r->stream ? http_client_stream_events(r->stream) : POLLIN } };
        int ready = poll(fds, 2, timeout < 0 ? -1 : timeout);
        if (ready < 0 && errno != EINTR) {
            play_input_hide(r->input);
            play_print_error(r->out, "internal_error", "poll failed");
            r->poll_failed = true;
            return false;
        }
        if (ready <= 0)
            continue;
        if (r->stream && (fds[1].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR)))
            stream_readable(r);
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            play_input_show(r->input);
            return true;
        }
        if (fds[0].revents & POLLNVAL)
            return false;
    }
}

static int session(remote_t *r)
{
    if (!r->created && (!fetch_game(r) || !find_side(r)))
        return 1;
    if (r->side >= 0) {
        r->view.flip = r->view.flip != (r->side == BLACK);
        fprintf(r->out, "You play %s in game %s (version %" PRIu64 ").\n\n", play_color_name(r->side), r->game_id,
                r->version);
    } else {
        fprintf(r->out, "Game %s is over (version %" PRIu64 ").\n\n", r->game_id, r->version);
    }
    print_game(r);
    r->backoff_ms = RECONNECT_FIRST_MS;
    fflush(r->out);
    if (!game_is_over(&r->game))
        stream_open(r);
    play_input_set_wait(r->input, remote_wait, r);
    char prompt[16], line[PLAY_LINE_MAX + 1];
    for (;;) {
        snprintf(prompt, sizeof prompt, "%s> ", r->side < 0 ? "game" : play_color_name(r->side));
        size_t length = 0;
        play_input_status_t read = play_input_read(r->input, prompt, line, sizeof line, &length);
        if (read == PLAY_INPUT_END)
            break;
        if (read == PLAY_INPUT_TOO_LONG) {
            play_print_line_too_long(r->out);
            continue;
        }
        const char *text = play_trim(line, &length);
        if (length > 0 && !remote_command(r, text, length))
            break;
    }
    if (r->view.prompt)
        fputc('\n', r->out);
    return r->poll_failed ? 1 : 0;
}

static const char GAME_ID_CHARS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

/* Sets the session up for server (and ca_file); an exit status, 0 when it is ready. */
static int remote_open(remote_t *r, const char *server, const char *ca_file, const play_view_t *view,
                       play_input_t *input)
{
    memset(r, 0, sizeof *r);
    r->running = -1;
    r->input = input;
    char err[256];
    if (!http_client_parse_url(server, &r->url, err, sizeof err)) {
        fprintf(stderr, "chessd play: %s\n", err);
        return 2;
    }
    if (ca_file && !r->url.https) {
        fprintf(stderr, "chessd play: --ca-file is for an https:// server\n");
        return 2;
    }
    if (!http_client_url_tls(&r->url, ca_file, err, sizeof err)) {
        fprintf(stderr, "chessd play: %s\n", err);
        return 2;
    }
    r->view = *view;
    r->out = stdout;
    buf_init(&r->line);
    buf_init(&r->stream_bytes);
    buf_init(&r->event_data);
    return 0;
}

/* Frees what remote_open set up, and the session's stream. */
static void remote_close(remote_t *r)
{
    http_client_stream_close(r->stream);
    r->stream = NULL;
    buf_free(&r->line);
    buf_free(&r->stream_bytes);
    buf_free(&r->event_data);
    http_client_url_free(&r->url);
    memset(r->auth, 0, sizeof r->auth);
    fflush(stdout);
}

/* Plays the session set up by remote_open and frees it; its exit status. */
static int remote_play(remote_t *r)
{
    int status = session(r);
    remote_close(r);
    return status;
}

static remote_t the_remote; /* large (the mirror, the input line): one per process */

int play_remote_run(const char *server, const char *game_id, const char *token, const char *ca_file,
                    const play_view_t *view, play_input_t *input)
{
    if (!valid_text(game_id, GAME_ID_MAX, GAME_ID_CHARS)) {
        fprintf(stderr, "chessd play: a game id is 1 to %d letters, digits, '-' or '_'\n", GAME_ID_MAX);
        return 2;
    }
    if (!valid_text(token, TOKEN_MAX, NULL)) {
        fprintf(stderr, "chessd play: a token is 1 to %d printable characters without spaces\n", TOKEN_MAX);
        return 2;
    }
    remote_t *r = &the_remote;
    int status = remote_open(r, server, ca_file, view, input);
    if (status)
        return status;
    snprintf(r->game_id, sizeof r->game_id, "%s", game_id);
    snprintf(r->auth, sizeof r->auth, "Authorization: Bearer %s\r\n", token);
    return remote_play(r);
}

/* Reads the created game's id and the person's token (the only one the
 * answer carries) into r; false, printed, when the answer lacks them. */
static bool read_created(remote_t *r, const http_client_response_t *res)
{
    cJSON *doc = cJSON_ParseWithLengthOpts(res->body, res->body_length, NULL, 0);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(doc, "id");
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(doc, "tokens");
    const cJSON *token = cJSON_IsObject(tokens) ? tokens->child : NULL;
    bool ok = cJSON_IsString(id) && valid_text(id->valuestring, GAME_ID_MAX, GAME_ID_CHARS) && cJSON_IsString(token)
              && !token->next && valid_text(token->valuestring, TOKEN_MAX, NULL);
    if (ok) {
        snprintf(r->game_id, sizeof r->game_id, "%s", id->valuestring);
        snprintf(r->auth, sizeof r->auth, "Authorization: Bearer %s\r\n", token->valuestring);
        /* the game as created: the computer's first move, when it opens,
         * then arrives on the stream and is announced like any other */
        r->side = play_color_from_name(token->string, strlen(token->string));
        r->created = r->side >= 0 && load_game(r, doc);
    } else {
        play_print_error(r->out, "bad_answer", "the created game has no id or not one player token");
    }
    cJSON_Delete(doc);
    return ok;
}

/* POST /v1/games with "engine": the computer at level, playing the side
 * other than color (-1: the server draws it); false, printed, when refused. */
static bool create_game(remote_t *r, int level, int color, variant_t variant)
{
    cJSON *body = cJSON_CreateObject(), *engine = cJSON_AddObjectToObject(body, "engine");
    if (variant != VARIANT_STANDARD)
        cJSON_AddStringToObject(body, "variant", variant_rules(variant)->key);
    cJSON_AddNumberToObject(engine, "level", level);
    cJSON_AddStringToObject(engine, "color", color < 0 ? "random" : play_color_name(!color));
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    if (!text) {
        play_print_error(r->out, "internal_error", "out of memory");
        return false;
    }
    http_client_response_t res;
    char err[256];
    bool sent = http_client_request(&r->url, "POST", "/v1/games", NULL, text, strlen(text), REQUEST_TIMEOUT_MS,
                                    ANSWER_MAX, &res, err, sizeof err);
    free(text);
    if (!sent) {
        play_print_error(r->out, "connection_failed", err);
        return false;
    }
    bool ok = res.status == 201 && read_created(r, &res);
    if (res.status != 201)
        print_refusal(r, &res);
    http_client_response_free(&res);
    if (ok)
        fprintf(r->out, "Created game %s against chessd level %d.\n", r->game_id, level);
    return ok;
}

int play_remote_new(const char *server, int level, int color, variant_t variant, const char *ca_file,
                    const play_view_t *view, play_input_t *input)
{
    remote_t *r = &the_remote;
    int status = remote_open(r, server, ca_file, view, input);
    if (status)
        return status;
    if (!create_game(r, level, color, variant)) {
        remote_close(r);
        return 1;
    }
    return remote_play(r);
}
