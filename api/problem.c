/* problem+json documents (RFC 9457). The table below is the single mapping
 * from API outcome to HTTP status; handlers never pick status codes for
 * errors themselves. */
#include "problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/base/utf8.h"

static const struct {
    const char *code;
    unsigned http;
    const char *title;
} table[API_STATUS_COUNT] = {
    [API_OK] = { "ok", 200, "OK" },
    [API_EBAD_REQUEST] = { "bad_request", 400, "The HTTP request is malformed" },
    [API_EINVALID_JSON] = { "invalid_json", 400, "The request body is not valid JSON" },
    [API_EINVALID_FIELD] = { "invalid_field", 400, "A field has the wrong type or value" },
    [API_EUNKNOWN_FIELD] = { "unknown_field", 400, "The request has a field this endpoint does not know" },
    [API_EINVALID_PARAMETER] = { "invalid_parameter", 400, "A query parameter is missing or invalid" },
    [API_EUNKNOWN_PARAMETER] = { "unknown_parameter", 400,
                                 "The request has a query parameter this endpoint does not know" },
    [API_EINVALID_FEN] = { "invalid_fen", 400, "The FEN does not describe a valid position" },
    [API_EINVALID_MOVE_TEXT] = { "invalid_move_text", 400, "The move is neither UCI nor SAN" },
    [API_EILLEGAL_MOVE] = { "illegal_move", 422, "The move is not legal in this position" },
    [API_EAMBIGUOUS_MOVE] = { "ambiguous_move", 422, "The move could mean more than one legal move" },
    [API_ETOO_MANY_MOVES] = { "too_many_moves", 413, "Too many moves in one request" },
    [API_EPAYLOAD_TOO_LARGE] = { "payload_too_large", 413, "The request body is too large" },
    [API_EUNSUPPORTED_MEDIA_TYPE] = { "unsupported_media_type", 415, "The request body must be application/json" },
    [API_ENOT_FOUND] = { "not_found", 404, "No such resource" },
    [API_EMETHOD_NOT_ALLOWED] = { "method_not_allowed", 405, "Method not allowed on this resource" },
    [API_EPERFT_DEPTH_TOO_LARGE] = { "perft_depth_too_large", 400, "The perft depth is above the server's limit" },
    [API_EPERFT_TOO_LARGE] = { "perft_too_large", 422, "The perft count needs more nodes than the server's budget" },
    [API_EUNAUTHORIZED] = { "unauthorized", 401, "A player token is needed (Authorization: Bearer)" },
    [API_EFORBIDDEN] = { "forbidden", 403, "The token is not a player's of this game" },
    [API_ENOT_YOUR_TURN] = { "not_your_turn", 403, "Only the side to move may do this" },
    [API_EGAME_NOT_FOUND] = { "game_not_found", 404, "No such game" },
    [API_EGAMES_DISABLED] = { "games_disabled", 404, "This server keeps no games" },
    [API_EVERSION_CONFLICT] = { "version_conflict", 409, "The game has changed since the version or ply given" },
    [API_EGAME_OVER] = { "game_over", 409, "The game is over" },
    [API_ENOTHING_TO_UNDO] = { "nothing_to_undo", 409, "There is no move of yours to take back" },
    [API_ENO_DRAW_OFFER] = { "no_draw_offer", 409, "There is no draw offer to answer" },
    [API_EDRAW_NOT_CLAIMABLE] = { "draw_not_claimable", 409, "No draw may be claimed in this position" },
    [API_EPRECONDITION_FAILED] = { "precondition_failed", 412, "If-Match does not match the game's version" },
    [API_EPRECONDITION_REQUIRED] = { "precondition_required", 428,
                                     "Send expected_version or If-Match with every change, or expected_ply "
                                     "with a move" },
    [API_EIDEMPOTENCY_KEY_REUSED] = { "idempotency_key_reused", 422,
                                      "The Idempotency-Key was used for a different request" },
    [API_EWEAK_IDEMPOTENCY_KEY] = { "weak_idempotency_key", 400,
                                    "A creation Idempotency-Key must be a secret: 22 to 255 URL-safe characters" },
    [API_EDRAW_ALREADY_OFFERED] = { "draw_already_offered", 409, "Your draw offer is already standing" },
    [API_EGAME_TOO_LONG] = { "game_too_long", 422, "The game has reached the most moves this server keeps" },
    [API_ERATE_LIMITED] = { "rate_limited", 429, "Too many requests; retry after Retry-After seconds" },
    [API_ETOO_MANY_STREAMS] = { "too_many_streams", 503,
                                "Too many event streams are open; retry after Retry-After seconds" },
    [API_EUNAVAILABLE] = { "unavailable", 503, "The service cannot handle the request now" },
    [API_ESTORE_UNAVAILABLE] = { "store_unavailable", 503, "The game store cannot be reached; retry shortly" },
    [API_EOUTCOME_UNKNOWN] = { "outcome_unknown", 503,
                               "The change was sent to the game store but no answer came; it may have been made" },
    [API_ESTORE_FULL] = { "store_full", 507, "The game store is out of memory and refuses new data" },
    /* 410: the game as it was is gone for good (its store lost part of it)
     * and no retry or other version brings it back; 500 would invite
     * retries, 409 a fix by the client, and 404 would hide what happened. */
    [API_EGAME_DAMAGED] = { "game_damaged", 410,
                            "Part of this game was lost by the game store (evicted or lost in a failover)" },
    [API_ESTORE_MAY_EVICT] = { "store_may_evict", 503,
                               "The game store may evict games (its maxmemory-policy is not noeviction)" },
    [API_ETAKEBACK_NOT_ALLOWED] = { "takeback_not_allowed", 409, "The game's takeback policy does not allow this" },
    [API_ETAKEBACK_ALREADY_OFFERED] = { "takeback_already_offered", 409, "Your takeback offer is already standing" },
    [API_ENO_TAKEBACK_OFFER] = { "no_takeback_offer", 409, "There is no takeback offer to answer" },
    [API_EABORT_TOO_LATE] = { "abort_too_late", 409, "Both players have moved: the game can no longer be aborted" },
    [API_EABORT_NOT_ALLOWED] = { "abort_not_allowed", 409, "The game's rules allow no abort" },
    [API_EDRAW_TOO_EARLY] = { "draw_too_early", 409, "The game's rules allow draw offers only from a later move" },
    [API_EGIVE_TIME_NOT_ALLOWED] = { "give_time_not_allowed", 409,
                                     "No time can be given in this game: it has no clock, or its rules forbid it" },
    [API_EGIVE_TIME_TOO_MUCH] = { "give_time_too_much", 409, "More time than a player may give in a game" },
    [API_ENO_CLOCK] = { "no_clock", 409, "The game has no clock to start" },
    [API_ECLOCK_RUNNING] = { "clock_running", 409, "The game's clocks run already" },
    [API_EINVALID_CHESS960_POSITION] = { "invalid_chess960_position", 400,
                                         "chess960_position is not a Chess960 start number (0 to 959)" },
    [API_ECONFLICTING_FIELDS] = { "conflicting_fields", 400, "The request has fields that contradict each other" },
    [API_EINVALID_VARIANT] = { "invalid_variant", 400, "The variant is not one this server plays" },
    [API_EVARIANT_NOT_SUPPORTED_BY_ENGINE] = { "variant_not_supported_by_engine", 422,
                                               "The installed engine does not play this variant" },
    [API_EINVALID_PGN] = { "invalid_pgn", 400, "The PGN cannot be read" },
    [API_EPGN_TOO_LARGE] = { "pgn_too_large", 413,
                             "The PGN has more games, moves, tags or nesting than the server reads" },
    [API_EPGN_RESULT_MISMATCH] = { "pgn_result_mismatch", 422,
                                   "The PGN's result disagrees with its Result tag or its final position" },
    [API_EANALYSIS_LIMIT_TOO_LARGE] = { "analysis_limit_too_large", 422,
                                        "A search limit is above this server's bound" },
    [API_EANALYSIS_NOT_ALLOWED] = { "analysis_not_allowed", 403,
                                    "A game between two people cannot be analysed while it is played" },
    [API_EENGINE_UNAVAILABLE] = { "engine_unavailable", 503, "This server has no chess engine running" },
    [API_EENGINE_BUSY] = { "engine_busy", 503, "Every engine is busy and the queue is full; retry after Retry-After" },
    [API_ETOO_MANY_ENGINE_TURNS] = { "too_many_engine_turns", 429,
                                     "This client has as many of the computer's turns waiting as it may; retry "
                                     "after Retry-After" },
    [API_ETOO_MANY_ANALYSES] = { "too_many_analyses", 429,
                                 "This client has as many analyses running or waiting as it may; retry after "
                                 "Retry-After" },
    [API_EENGINE_FAILED] = { "engine_failed", 503,
                             "The engine failed on this search, and again on a retry; retry after Retry-After" },
    [API_EREVIEW_NOT_ALLOWED] = { "review_not_allowed", 403,
                                  "The game is neither over nor open to analysis, so it cannot be reviewed" },
    [API_EREVIEW_NOT_FOUND] = { "review_not_found", 404, "The game has no review; POST one first" },
    [API_EREVIEW_TOO_LONG] = { "review_too_long", 422, "The game has more plies than a review takes" },
    [API_ESTREAM_NOT_FOUND] = { "stream_not_found", 404, "No such multi-game stream is open" },
    [API_ETOO_MANY_IDS] = { "too_many_ids", 422, "The stream would follow more games than its bound" },
    [API_EBUFFERS_FULL] = { "buffers_full", 503,
                            "This replica holds as much for slow readers as its memory allows; retry after Retry-After seconds" },
    [API_ETOO_MANY_EXPORTS] = { "too_many_exports", 503,
                                "This replica runs as many exports as it may; retry after Retry-After seconds" },
    [API_EINVALID_TAG] = { "invalid_tag", 400, "A tag's name or value is not one a game may have" },
    [API_ETOO_MANY_TAGS] = { "too_many_tags", 413, "The game has more tags than a game keeps" },
    [API_EINVALID_METADATA] = { "invalid_metadata", 400, "The metadata is not a JSON object a game may keep" },
    [API_EMETADATA_TOO_LARGE] = { "metadata_too_large", 413, "The metadata is larger than a game keeps" },
    [API_EBULK_NOT_FOUND] = { "bulk_not_found", 404, "No bulk has this id (or it expired with its last game)" },
    [API_EBULK_TOO_LARGE] = { "bulk_too_large", 413, "The bulk has more games than a bulk holds" },
    [API_EBULK_STARTED] = { "bulk_started", 409, "A game of the bulk has begun: the bulk can no longer be cancelled" },
    [API_ECORS_REFUSED] = { "cors_refused", 403,
                            "A page of another origin may not make this request (origin, method or header)" },
    [API_ECLAIM_NOT_ALLOWED] = { "claim_not_allowed", 409, "No claim against a gone opponent may be made in this game" },
    [API_EOPPONENT_NOT_GONE] = { "opponent_not_gone", 409,
                                 "Your opponent is not gone on their turn, or not long enough to claim" },
    [API_ESERVICE_KEY_REQUIRED] = { "service_key_required", 401,
                                    "This route needs a service key (Authorization: Bearer chsk_...)" },
    [API_EINVALID_SERVICE_KEY] = { "invalid_service_key", 401, "The service key is not one of this server's" },
    [API_ESCOPE_MISSING] = { "scope_missing", 403, "The service key lacks the scope this route needs" },
    [API_EWEBHOOKS_DISABLED] = { "webhooks_disabled", 403,
                                 "This server sends no webhooks (no --webhook-allow, or no service keys)" },
    [API_EWEBHOOK_DESTINATION_REFUSED] = { "webhook_destination_refused", 422,
                                           "A webhook's destination is not one this server may send to" },
    [API_ETOO_MANY_WEBHOOKS] = { "too_many_webhooks", 422,
                                 "More webhook subscriptions than a game or a service key may have" },
    [API_EWEBHOOK_NOT_FOUND] = { "webhook_not_found", 404, "No webhook subscription of this key has this id" },
    [API_EINTERNAL] = { "internal_error", 500, "Internal error" },
};

const char *api_status_code(api_status_t status)
{
    return (unsigned)status < API_STATUS_COUNT ? table[status].code : table[API_EINTERNAL].code;
}

unsigned api_status_http(api_status_t status)
{
    return (unsigned)status < API_STATUS_COUNT ? table[status].http : 500;
}

/* The WWW-Authenticate of a 401: a player token's is a bare Bearer (as
 * it always was); a service key's names the realm, and a key refused says
 * so (RFC 6750 section 3). */
static const char *authenticate(api_status_t status)
{
    switch (status) {
    case API_EUNAUTHORIZED:
        return "Bearer";
    case API_ESERVICE_KEY_REQUIRED:
        return "Bearer realm=\"chessd\"";
    case API_EINVALID_SERVICE_KEY:
        return "Bearer realm=\"chessd\", error=\"invalid_token\"";
    default:
        return NULL;
    }
}

void api_problem(api_response_t *res, api_status_t status, const char *detail, api_problem_extra_fn extra,
                 const void *ctx)
{
    if ((unsigned)status >= API_STATUS_COUNT)
        status = API_EINTERNAL;
    char type[96];
    /* A URN: stable and unique, and promises no web page behind it. */
    snprintf(type, sizeof type, "urn:chessd:problem:%s", table[status].code);
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "type", type);
    jsonw_kv_string(&w, "title", table[status].title);
    jsonw_kv_int(&w, "status", table[status].http);
    jsonw_kv_string(&w, "detail", detail ? detail : table[status].title);
    jsonw_kv_string(&w, "code", table[status].code);
    if (extra)
        extra(&w, ctx);
    jsonw_object_end(&w);
    size_t length = 0;
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, table[status].http, "application/problem+json", body, length);
    if (!body)
        return; /* a 500 without a body: not the problem it would have been */
    res->allow = NULL;
    res->etag[0] = res->location[0] = '\0';
    res->retry_after = table[status].http == 503 ? 1 : 0;
    res->authenticate = authenticate(status);
    res->problem_code = table[status].code;
}

static void write_fen_error(jsonw_t *w, const void *ctx)
{
    jsonw_kv_string(w, "fen_error", fen_error_code(*(const fen_error_t *)ctx));
}

void api_problem_fen(api_response_t *res, fen_error_t error, const char *message)
{
    api_problem(res, API_EINVALID_FEN, message, write_fen_error, &error);
}

typedef struct {
    int index;
    const char *move;
    legality_reason_t reason;
    const char *fen;
} move_problem_t;

static void write_move_problem(jsonw_t *w, const void *ctx)
{
    const move_problem_t *m = ctx;
    jsonw_kv_int(w, "move_index", m->index);
    jsonw_kv_string(w, "move", m->move);
    jsonw_kv_string(w, "reason", legality_reason_code(m->reason));
    jsonw_kv_string(w, "fen", m->fen);
}

/* Names a move as a chess player would, by its move number and the side that
 * plays it in the position it was tried in: "2. Ke3" for White, "2... Nf6" for
 * Black (an empty text shows as ''). The machine field move_index stays
 * zero-based; this is only the detail's text. */
static void move_label(char *out, size_t size, color_t side, unsigned fullmove, const char *move)
{
    snprintf(out, size, "%u%s %.32s", fullmove, side == BLACK ? "..." : ".", *move ? move : "''");
}

/* The side to move and the fullmove number of a FEN that fen_format wrote:
 * its second and sixth fields. */
static void fen_turn(const char *fen, color_t *side, unsigned *fullmove)
{
    *side = WHITE;
    *fullmove = 1;
    const char *field = fen;
    for (int i = 1; i < 6 && field; i++) {
        field = strchr(field, ' ');
        if (field)
            field++;
        if (field && i == 1)
            *side = *field == 'b' ? BLACK : WHITE;
    }
    if (field && *field >= '1' && *field <= '9')
        *fullmove = (unsigned)strtoul(field, NULL, 10);
}

void api_problem_move(api_response_t *res, api_status_t status, const char *message, int index, const char *move,
                      legality_reason_t reason, const char *fen)
{
    move_problem_t info = { index, move, reason, fen };
    color_t side;
    unsigned fullmove;
    fen_turn(fen, &side, &fullmove);
    char label[64], detail[320];
    move_label(label, sizeof label, side, fullmove, move);
    snprintf(detail, sizeof detail, "%s: %s", label, message);
    api_problem(res, status, detail, write_move_problem, &info);
}

api_status_t api_status_for_reason(legality_reason_t reason)
{
    if (reason == LEGALITY_UNPARSEABLE)
        return API_EINVALID_MOVE_TEXT;
    return reason == LEGALITY_AMBIGUOUS ? API_EAMBIGUOUS_MOVE : API_EILLEGAL_MOVE;
}

static void write_pgn_problem(jsonw_t *w, const void *ctx)
{
    const pgn_read_error_t *e = ctx;
    jsonw_kv_int(w, "game", e->game);
    api_pgn_error_fields(w, e);
}

void api_pgn_error_fields(jsonw_t *w, const pgn_read_error_t *e)
{
    jsonw_kv_int(w, "line", e->line);
    jsonw_kv_int(w, "column", e->column);
    jsonw_kv_string(w, "pgn_error", pgn_read_status_code(e->status));
    if (e->status == PGN_READ_EBAD_FEN)
        jsonw_kv_string(w, "fen_error", fen_error_code(e->fen_error));
    if (e->status == PGN_READ_EILLEGAL_MOVE) {
        char fen[FEN_BUFFER_SIZE];
        if (e->ply >= 0)
            jsonw_kv_int(w, "move_index", e->ply);
        jsonw_kv_string(w, "move", e->move);
        jsonw_kv_string(w, "reason", legality_reason_code(e->reason));
        jsonw_kv_string(w, "fen", fen_format(&e->position, fen, sizeof fen));
    }
    if (e->path_length > 0) {
        jsonw_key(w, "path");
        jsonw_array_begin(w);
        for (int i = 0; i < e->path_length; i++)
            jsonw_int(w, e->path[i]);
        jsonw_array_end(w);
    }
}

api_status_t api_pgn_status(const pgn_read_error_t *error)
{
    api_status_t status;
    switch (error->status) {
    case PGN_READ_EILLEGAL_MOVE: status = api_status_for_reason(error->reason); break;
    case PGN_READ_ERESULT_MISMATCH:
    case PGN_READ_ERESULT_CONTRADICTS: status = API_EPGN_RESULT_MISMATCH; break;
    case PGN_READ_ETOO_MANY_GAMES:
    case PGN_READ_ETOO_MANY_PLIES:
    case PGN_READ_ETOO_MANY_TAGS:
    case PGN_READ_ETAG_TOO_LONG:
    case PGN_READ_ECOMMENT_TOO_LONG:
    case PGN_READ_ETOO_DEEP: status = API_EPGN_TOO_LARGE; break;
    case PGN_READ_ESTOPPED:
    case PGN_READ_OK: status = API_EINTERNAL; break;
    default: status = API_EINVALID_PGN; break;
    }
    return status;
}

void api_problem_pgn(api_response_t *res, const pgn_read_error_t *error)
{
    api_status_t status = api_pgn_status(error);
    char detail[400];
    if (error->status == PGN_READ_EILLEGAL_MOVE) {
        char label[64];
        move_label(label, sizeof label, (color_t)error->position.side_to_move, error->position.fullmove_number,
                   error->move);
        snprintf(detail, sizeof detail, "game %d, line %d, column %d: %s: %s", error->game, error->line,
                 error->column, label, error->message);
    } else
        snprintf(detail, sizeof detail, "game %d, line %d, column %d: %s", error->game, error->line, error->column,
                 error->message);
    api_problem(res, status, detail, write_pgn_problem, error);
}

static void write_notes_problem(jsonw_t *w, const void *ctx)
{
    (void)ctx;
    jsonw_kv_int(w, "game", 0);
    jsonw_kv_string(w, "pgn_error", "notes_too_large");
}

void api_problem_pgn_notes(api_response_t *res, size_t limit)
{
    char detail[200];
    snprintf(detail, sizeof detail,
             "game 0: its mainline's comments, NAGs and variations are over %zu bytes as a game keeps them; "
             "leave some out",
             limit);
    api_problem(res, API_EPGN_TOO_LARGE, detail, write_notes_problem, NULL);
}

static void write_current_version(jsonw_t *w, const void *ctx)
{
    jsonw_key(w, "current_version");
    jsonw_uint(w, *(const uint64_t *)ctx);
}

typedef struct {
    uint64_t version;
    int64_t ply;
} conflict_t;

static void write_conflict(jsonw_t *w, const void *ctx)
{
    const conflict_t *c = ctx;
    write_current_version(w, &c->version);
    if (c->ply >= 0)
        jsonw_kv_int(w, "current_ply", c->ply);
}

void api_problem_conflict(api_response_t *res, const char *detail, uint64_t current_version, int64_t current_ply)
{
    api_problem(res, API_EVERSION_CONFLICT, detail, write_conflict, &(conflict_t){ current_version, current_ply });
}

void api_problem_precondition(api_response_t *res, const char *detail, uint64_t current)
{
    api_problem(res, API_EPRECONDITION_FAILED, detail, write_current_version, &current);
}

typedef struct {
    const char *name;
    unsigned long long max;
    unsigned retry_after; /* 0: none said */
} limit_t;

static void write_limit(jsonw_t *w, const void *ctx)
{
    const limit_t *limit = ctx;
    jsonw_kv_string(w, "limit", limit->name);
    jsonw_key(w, "max");
    jsonw_uint(w, limit->max);
    if (limit->retry_after) {
        jsonw_key(w, "retry_after_s");
        jsonw_uint(w, limit->retry_after);
    }
}

void api_problem_limit(api_response_t *res, api_status_t status, const char *detail, const char *limit,
                       unsigned long long max)
{
    api_problem(res, status, detail, write_limit, &(limit_t){ limit, max, 0 });
}

static void write_tag_name(jsonw_t *w, const void *ctx)
{
    const char *name = ctx;
    size_t length = 0, n = strlen(name);
    while (length < n) { /* whole characters up to 64 bytes; a byte that is not UTF-8 ends it */
        size_t step = utf8_sequence_length((const unsigned char *)name + length, n - length);
        if (step == 0 || length + step > 64)
            break;
        length += step;
    }
    jsonw_key(w, "tag");
    jsonw_string_len(w, name, length);
}

void api_problem_tag(api_response_t *res, const char *detail, const char *name)
{
    api_problem(res, API_EINVALID_TAG, detail, write_tag_name, name);
}

static void write_scope(jsonw_t *w, const void *ctx)
{
    jsonw_kv_string(w, "scope", ctx);
}

void api_problem_scope(api_response_t *res, api_status_t status, const char *detail, const char *scope)
{
    api_problem(res, status, detail, scope ? write_scope : NULL, scope);
}

void api_problem_key_unknown(api_response_t *res)
{
    api_problem_scope(res, API_EINVALID_SERVICE_KEY,
                      "the service key sent is none of this server's: it was never made here, or has been rotated "
                      "out of --service-keys-file",
                      NULL);
}

void api_problem_quota(api_response_t *res, api_status_t status, const char *detail, const char *limit,
                       unsigned long long max, unsigned retry_after)
{
    char sentence[320];
    if (retry_after < 1)
        retry_after = 1;
    snprintf(sentence, sizeof sentence, "%s; retry after %u s", detail, retry_after);
    api_problem(res, status, sentence, write_limit, &(limit_t){ limit, max, retry_after });
    res->retry_after = retry_after;
}

void api_problem_game(api_response_t *res, game_status_t status)
{
    static const struct {
        api_status_t api;
        const char *detail;
    } games[GAME_STATUS_COUNT] = {
        [GAME_OK] = { API_EINTERNAL, "a game operation succeeded but was reported as refused" },
        [GAME_ENOT_YOUR_TURN] = { API_ENOT_YOUR_TURN, "it is the other player's move" },
        [GAME_EOVER] = { API_EGAME_OVER, "the game is over; nothing can change it" },
        [GAME_EILLEGAL_MOVE] = { API_EILLEGAL_MOVE, "the move is not legal in this position" },
        [GAME_ETOO_LONG] = { API_EGAME_TOO_LONG, "the game has as many moves as this server keeps" },
        [GAME_ENOTHING_TO_UNDO] = { API_ENOTHING_TO_UNDO,
                                    "only the player who made the last move may take it back, before the reply" },
        [GAME_ENO_DRAW_OFFER] = { API_ENO_DRAW_OFFER, "the other player has not offered a draw" },
        [GAME_EDRAW_ALREADY_OFFERED] = { API_EDRAW_ALREADY_OFFERED,
                                         "your draw offer already stands until the other player answers it or moves" },
        [GAME_EDRAW_NOT_CLAIMABLE] = { API_EDRAW_NOT_CLAIMABLE,
                                       "neither the 50-move rule nor threefold repetition applies" },
        [GAME_EBAD_RECORD] = { API_EINTERNAL, "the stored game cannot be read" },
        [GAME_ETAKEBACK_NOT_ALLOWED] = { API_ETAKEBACK_NOT_ALLOWED,
                                         "the game's takeback policy does not allow this way of taking back" },
        [GAME_ETAKEBACK_ALREADY_OFFERED] = { API_ETAKEBACK_ALREADY_OFFERED,
                                             "your takeback offer already stands until the other player answers "
                                             "it or moves" },
        [GAME_ENO_TAKEBACK_OFFER] = { API_ENO_TAKEBACK_OFFER, "the other player has not offered a takeback" },
        [GAME_EABORT_TOO_LATE] = { API_EABORT_TOO_LATE,
                                   "both players have moved; resign or offer a draw instead" },
        [GAME_EABORT_NOT_ALLOWED] = { API_EABORT_NOT_ALLOWED, "the game's rules allow no abort; resign instead" },
        [GAME_EDRAW_TOO_EARLY] = { API_EDRAW_TOO_EARLY,
                                   "the game's rules allow draw offers only from a later move (draw_offers_from_move)" },
        [GAME_EGIVE_TIME_NOT_ALLOWED] = { API_EGIVE_TIME_NOT_ALLOWED,
                                          "the game has no clock to give time on, or its rules forbid it" },
        [GAME_EGIVE_TIME_TOO_MUCH] = { API_EGIVE_TIME_TOO_MUCH,
                                       "a player may give at most 600000 ms of time in a game" },
        [GAME_ENO_CLOCK] = { API_ENO_CLOCK, "the game has no clock to start" },
        [GAME_ECLOCK_RUNNING] = { API_ECLOCK_RUNNING,
                                  "the clocks run already: both players moved, or their start time passed" },
        [GAME_ECLAIM_NOT_ALLOWED] = { API_ECLAIM_NOT_ALLOWED,
                                      "no claim here: the game has not had both players' moves, is a correspondence "
                                      "game or one against the computer, claims are off on this server, or its rules "
                                      "(no_claim_win) allow a draw claimed but not a win" },
        [GAME_EOPPONENT_NOT_GONE] = { API_EOPPONENT_NOT_GONE,
                                      "your opponent is not to move, or is here (a stream open with their token, or "
                                      "an action of theirs, lately)" },
    };
    if ((unsigned)status >= GAME_STATUS_COUNT)
        status = GAME_OK;
    api_problem(res, games[status].api, games[status].detail, NULL, NULL);
}

static void write_store_fault(jsonw_t *w, const void *ctx)
{
    jsonw_kv_string(w, "store_fault", store_fault_name(*(const store_fault_t *)ctx));
}

/* 503 store_unavailable, naming the fault when the breaker knows it. */
static void problem_store_down(api_response_t *res, store_t *store)
{
    static const char *const sentences[STORE_FAULT_COUNT] = {
        [STORE_FAULT_UNREACHABLE] = "the game store cannot be reached",
        [STORE_FAULT_TIMEOUT] = "the game store does not answer in time",
        [STORE_FAULT_AUTH] = "the game store refuses this server's credentials (AUTH): a setting the operator "
                             "must fix",
        [STORE_FAULT_DATABASE] = "the game store refuses this server's database number (SELECT): a setting the "
                                 "operator must fix",
        [STORE_FAULT_TLS] = "this server's TLS connection to the game store fails (the handshake or a "
                            "certificate): a setting the operator must fix",
        [STORE_FAULT_CLUSTER] = "the game store's Redis Cluster does not serve every slot",
        [STORE_FAULT_PROTOCOL] = "the game store does not answer as Redis does",
    };
    store_health_t health = { .up = true };
    if (store)
        store_health(store, &health);
    if (health.up || (unsigned)health.fault >= STORE_FAULT_COUNT || !sentences[health.fault]) {
        api_problem(res, API_ESTORE_UNAVAILABLE,
                    "the game store cannot be reached or did not answer in time; nothing was changed", NULL, NULL);
        return;
    }
    char detail[240];
    snprintf(detail, sizeof detail, "%s; nothing was changed", sentences[health.fault]);
    api_problem(res, API_ESTORE_UNAVAILABLE, detail, write_store_fault, &health.fault);
}

void api_problem_store(api_response_t *res, store_status_t status, store_t *store)
{
    switch (status) {
    case STORE_ENOT_FOUND:
        api_problem(res, API_EGAME_NOT_FOUND, "no game has this id", NULL, NULL);
        break;
    case STORE_EUNAVAILABLE:
        problem_store_down(res, store);
        break;
    case STORE_EFULL:
        api_problem(res, API_ESTORE_FULL, "the game store is out of memory and refuses new data; nothing was changed",
                    NULL, NULL);
        break;
    case STORE_EDAMAGED:
        api_problem(res, API_EGAME_DAMAGED,
                    "the game store lost part of this game (its move list or history was evicted or lost while its "
                    "state remained): it cannot be read or changed, and nothing was changed", NULL, NULL);
        break;
    case STORE_EUNKNOWN:
        api_problem(res, API_EOUTCOME_UNKNOWN,
                    "the change was sent to the game store but no answer came, so it may have been made: retry with "
                    "the same Idempotency-Key, or read the game (GET) before sending the change again", NULL, NULL);
        break;
    default:
        api_problem(res, API_EINTERNAL, "the game store answered something unexpected", NULL, NULL);
        break;
    }
}
