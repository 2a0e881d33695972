/* The game API: games in the store under an id, changed only by a player's
 * token and only against the version the change was made for. Every change
 * follows one path (game_change): load, authenticate, check the version,
 * apply the rule, then one compare-and-set write (game_save) that also keeps
 * the answer for the caller's Idempotency-Key and settles a write whose
 * outcome the store could not report. Endings are written with their move. */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../rules/rules.h"
#include "../store/game_record.h"
#include "../store/store.h"
#include "body.h"
#include "config.h"
#include "handlers.h"
#include "json_out.h"
#include "metrics.h"
#include "problem.h"
#include "tokens.h"
#include "utf8.h"

static const char *const color_names[COLOR_COUNT] = { "white", "black" };

/* A game as loaded: the record plus its replayed current position. */
typedef struct {
    game_record_t record;
    position_t pos;
    uint64_t *history; /* key before each move, record.move_count long */
    status_t status;
} game_t;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void game_free(game_t *g)
{
    game_record_free(&g->record);
    free(g->history);
    g->history = NULL;
}

/* Rebuilds pos, history and status from the record's moves. */
static bool game_replay(game_t *g)
{
    game_record_t *r = &g->record;
    free(g->history);
    g->history = malloc(sizeof *g->history * (size_t)(r->move_count + 1));
    if (!g->history
        || fen_parse(r->initial_fen, strlen(r->initial_fen), r->chess960 ? FEN_CHESS960 : 0, &g->pos, NULL, 0)
               != FEN_OK)
        return false;
    for (int i = 0; i < r->move_count; i++) {
        position_undo_t undo;
        g->history[i] = g->pos.key;
        position_make(&g->pos, r->moves[i].move, &undo);
    }
    fen_format(&g->pos, r->fen, sizeof r->fen);
    status_evaluate(&g->pos, g->history, (size_t)r->move_count, &g->status);
    return true;
}

/* Plays the record's newest move on the replayed position: the step
 * game_replay() would take last, without replaying the game from the start.
 * history has room for it (game_replay allocates one entry more). */
static void game_advance(game_t *g)
{
    game_record_t *r = &g->record;
    position_undo_t undo;
    g->history[r->move_count - 1] = g->pos.key;
    position_make(&g->pos, r->moves[r->move_count - 1].move, &undo);
    fen_format(&g->pos, r->fen, sizeof r->fen);
    status_evaluate(&g->pos, g->history, (size_t)r->move_count, &g->status);
}

static bool game_is_over(const game_t *g) { return strcmp(g->record.status, "active") != 0; }

/* Ends the game by the position's own status when it ended by itself. */
static void apply_automatic_ending(game_t *g)
{
    game_record_t *r = &g->record;
    const status_t *st = &g->status;
    if (st->state == STATUS_ACTIVE)
        return;
    r->draw_offer = -1;
    if (st->state == STATUS_CHECKMATE) {
        strcpy(r->status, "checkmate");
        strcpy(r->result, g->pos.side_to_move == WHITE ? "0-1" : "1-0");
        strcpy(r->termination, "checkmate");
    } else if (st->state == STATUS_STALEMATE) {
        strcpy(r->status, "stalemate");
        strcpy(r->result, "1/2-1/2");
        strcpy(r->termination, "stalemate");
    } else {
        strcpy(r->status, "draw");
        strcpy(r->result, "1/2-1/2");
        snprintf(r->termination, sizeof r->termination, "%s", status_draw_reason_name(st->draw_reason));
    }
}

static void iso_time(int64_t ms, char *buf, size_t size)
{
    time_t seconds = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, size - n, ".%03dZ", (int)(ms % 1000));
}

/* The Game object; tokens (two strings) only in the creation answer. */
static void write_game(jsonw_t *w, const game_t *g, char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE])
{
    const game_record_t *r = &g->record;
    char when[40];
    jsonw_object_begin(w);
    jsonw_kv_string(w, "id", r->id);
    jsonw_kv_int(w, "version", (long long)r->version);
    for (int c = 0; c < COLOR_COUNT; c++) {
        jsonw_key(w, color_names[c]);
        jsonw_object_begin(w);
        jsonw_key(w, "name");
        if (r->players[c].name[0])
            jsonw_string(w, r->players[c].name);
        else
            jsonw_null(w);
        jsonw_object_end(w);
    }
    jsonw_kv_bool(w, "chess960", r->chess960);
    jsonw_kv_string(w, "initial_fen", r->initial_fen);
    jsonw_key(w, "moves");
    jsonw_array_begin(w);
    for (int i = 0; i < r->move_count; i++) {
        jsonw_object_begin(w);
        jsonw_kv_string(w, "uci", r->moves[i].uci);
        jsonw_kv_string(w, "san", r->moves[i].san);
        jsonw_object_end(w);
    }
    jsonw_array_end(w);
    jsonw_key(w, "position");
    json_out_position(w, &g->pos, &g->status, !game_is_over(g));
    jsonw_kv_string(w, "status", r->status);
    jsonw_kv_string(w, "result", r->result);
    jsonw_key(w, "termination");
    if (r->termination[0])
        jsonw_string(w, r->termination);
    else
        jsonw_null(w);
    jsonw_key(w, "draw_offer");
    if (r->draw_offer == WHITE || r->draw_offer == BLACK)
        jsonw_string(w, color_names[r->draw_offer]);
    else
        jsonw_null(w);
    iso_time(r->created_at_ms, when, sizeof when);
    jsonw_kv_string(w, "created_at", when);
    iso_time(r->updated_at_ms, when, sizeof when);
    jsonw_kv_string(w, "updated_at", when);
    if (tokens) {
        jsonw_key(w, "tokens");
        jsonw_object_begin(w);
        jsonw_kv_string(w, "white", tokens[WHITE]);
        jsonw_kv_string(w, "black", tokens[BLACK]);
        jsonw_object_end(w);
    }
    jsonw_object_end(w);
}

static char *game_json(const game_t *g, char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE], size_t *length)
{
    jsonw_t w;
    jsonw_init(&w);
    write_game(&w, g, tokens);
    return jsonw_finish(&w, length);
}

static void set_etag(api_response_t *res, uint64_t version)
{
    snprintf(res->etag, sizeof res->etag, "\"%llu\"", (unsigned long long)version);
}

/* The answer for a store status other than STORE_OK (and the two a write
 * handles itself, conflict and replay); counts the ones /metrics shows. */
static void store_problem(api_response_t *res, store_status_t status)
{
    switch (status) {
    case STORE_ENOT_FOUND:
        api_problem(res, API_EGAME_NOT_FOUND, "no game has this id", NULL, NULL);
        break;
    case STORE_EUNAVAILABLE:
        api_problem(res, API_ESTORE_UNAVAILABLE,
                    "the game store cannot be reached or did not answer in time; nothing was changed", NULL, NULL);
        break;
    case STORE_EFULL:
        metrics_store_full();
        api_problem(res, API_ESTORE_FULL, "the game store is out of memory and refuses new data; nothing was changed",
                    NULL, NULL);
        break;
    case STORE_EUNKNOWN:
        metrics_outcome_unknown();
        api_problem(res, API_EOUTCOME_UNKNOWN,
                    "the change was sent to the game store but no answer came, so it may have been made: retry with "
                    "the same Idempotency-Key, or read the game (GET) before sending the change again", NULL, NULL);
        break;
    default:
        api_problem(res, API_EINTERNAL, "the game store answered something unexpected", NULL, NULL);
        break;
    }
}

/* Loads game req->path_param; fills res with the problem on failure. */
static bool game_load(const api_request_t *req, game_t *g, api_response_t *res)
{
    memset(g, 0, sizeof *g);
    game_record_init(&g->record);
    if (!tokens_is_id(req->path_param)) {
        api_problem(res, API_EGAME_NOT_FOUND, "no game has this id", NULL, NULL);
        return false;
    }
    char *data = NULL;
    size_t length = 0;
    uint64_t version = 0;
    store_status_t status = store_game_load(req->store, req->path_param, &data, &length, &version);
    if (status != STORE_OK) {
        store_problem(res, status);
        return false;
    }
    bool ok = game_record_from_json(&g->record, data, length) && game_replay(g);
    free(data);
    if (!ok) {
        api_problem(res, API_EINTERNAL, "the stored game cannot be read", NULL, NULL);
        return false;
    }
    g->record.version = version;
    return true;
}

/* --- idempotency: the kept answer is "<request sha256> <status> <version>\n<location>\n<body>",
 * sealed with tokens_seal() because a creation's answer holds the player tokens. A key is
 * scoped to its caller: in a game, the game id and the caller's token HMAC; for a creation,
 * which has no caller yet, the key itself is the secret (see read_idempotency_key) --- */

enum {
    IDEMPOTENCY_KEY_MAX = 255,
    CREATION_KEY_MIN = 22, /* 128 bits of base64url */
    IDEMPOTENCY_KEPT_MAX = 32, /* answers kept per player and game: enough for any retry */
    SCOPE_SIZE = GAME_ID_SIZE + TOKENS_HASH_SIZE + 1,
};

static const char creation_scope[] = "new";

/* The fingerprint of a request: method, path, If-Match (or its absence) and body. */
static void request_digest(const api_request_t *req, char out[65])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    const char *if_match = api_request_header(req, "If-Match");
    const char *precondition = if_match ? if_match : "";
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, req->method, strlen(req->method))
        && EVP_DigestUpdate(ctx, " ", 1) && EVP_DigestUpdate(ctx, req->path, strlen(req->path))
        && EVP_DigestUpdate(ctx, if_match ? "\n+" : "\n-", 2)
        && EVP_DigestUpdate(ctx, precondition, strlen(precondition))
        && EVP_DigestUpdate(ctx, "\n", 1) && EVP_DigestUpdate(ctx, req->body, req->body_length))
        EVP_DigestFinal_ex(ctx, digest, &length);
    EVP_MD_CTX_free(ctx);
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", i < length ? digest[i] : 0);
}

/* Answers a retry from an opened kept answer. */
static void replay_opened(const api_request_t *req, const char *kept, api_response_t *res)
{
    char digest[65], kept_digest[65], location[96] = "";
    unsigned status = 0;
    unsigned long long version = 0;
    request_digest(req, digest);
    const char *line2 = strchr(kept, '\n');
    const char *line3 = line2 ? strchr(line2 + 1, '\n') : NULL;
    if (!line3 || sscanf(kept, "%64s %u %llu", kept_digest, &status, &version) != 3) {
        api_problem(res, API_EINTERNAL, "a kept answer cannot be read", NULL, NULL);
        return;
    }
    if (strcmp(digest, kept_digest)) {
        api_problem(res, API_EIDEMPOTENCY_KEY_REUSED, "this Idempotency-Key was used with another request", NULL,
                    NULL);
        return;
    }
    size_t location_length = (size_t)(line3 - line2 - 1);
    if (location_length < sizeof location) {
        memcpy(location, line2 + 1, location_length);
        location[location_length] = '\0';
    }
    size_t length = strlen(line3 + 1);
    char *body = malloc(length + 1);
    if (body)
        memcpy(body, line3 + 1, length + 1);
    api_response_set(res, status, "application/json", body, length);
    set_etag(res, version);
    snprintf(res->location, sizeof res->location, "%s", location);
}

/* Answers a retry from a kept (sealed) answer, or 422 when the key came with another request. */
static void replay_answer(const api_request_t *req, const char *sealed, api_response_t *res)
{
    char *kept = tokens_open(sealed);
    if (!kept) {
        api_problem(res, API_EINTERNAL, "a kept answer cannot be opened (was the token secret changed?)", NULL, NULL);
        return;
    }
    replay_opened(req, kept, res);
    free(kept);
}

/* Reads the Idempotency-Key header into *key (NULL: none). In a game a key
 * is 1 to 255 characters: its kept answer is scoped to the caller's token. A
 * creation has no caller to scope to, so its key is the only secret guarding
 * the kept answer (both player tokens): 22 to 255 base64url characters, 128
 * bits or more when random (a UUID qualifies). False with res filled when refused. */
static bool read_idempotency_key(const api_request_t *req, bool creation, const char **key, api_response_t *res)
{
    static const char base64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    *key = api_request_header(req, "Idempotency-Key");
    if (!*key)
        return true;
    size_t length = strlen(*key);
    char detail[256];
    if (!creation) {
        if (length >= 1 && length <= IDEMPOTENCY_KEY_MAX)
            return true;
        api_problem(res, API_EINVALID_PARAMETER, "Idempotency-Key must be 1 to 255 characters", NULL, NULL);
        return false;
    }
    size_t valid = strspn(*key, base64url);
    if (length < CREATION_KEY_MIN || length > IDEMPOTENCY_KEY_MAX)
        snprintf(detail, sizeof detail, "a creation Idempotency-Key is the secret that guards the new game's "
                 "tokens, so it must be %d to %d characters (128 random bits in base64url, or a UUID); this one "
                 "has %zu", CREATION_KEY_MIN, IDEMPOTENCY_KEY_MAX, length);
    else if (valid < length)
        snprintf(detail, sizeof detail, "a creation Idempotency-Key may hold only A-Z, a-z, 0-9, '-' and '_'; "
                 "character %zu is not one of them", valid + 1);
    else
        return true;
    api_problem(res, API_EWEAK_IDEMPOTENCY_KEY, detail, NULL, NULL);
    return false;
}

/* Returns true (with res filled) when the request is a retry answered from a kept answer. */
static bool answered_before(const api_request_t *req, const char *scope, const char *key, api_response_t *res)
{
    if (!key)
        return false;
    char *kept = NULL;
    store_status_t status = store_idempotency_get(req->store, scope, key, &kept);
    if (status == STORE_ENOT_FOUND)
        return false;
    if (status == STORE_OK)
        replay_answer(req, kept, res);
    else
        store_problem(res, status);
    free(kept);
    return true;
}

/* After STORE_EUNKNOWN, finds out once whether this request's write (data as
 * version expected + 1) was made: the kept answer for the caller's key, else
 * the stored record compared byte for byte (the record holds the request's
 * own updated_at). Returns STORE_OK (it was made), STORE_EREPLAY (*replay: the
 * kept answer), STORE_ECONFLICT (another change took that version: this one
 * was not and will not be made) or STORE_EUNKNOWN (Redis still cannot tell). */
static store_status_t settle_unknown_write(const api_request_t *req, const char *id, uint64_t expected,
                                           const char *data, size_t length, const char *scope, const char *key,
                                           uint64_t *current, char **replay)
{
    if (key && store_idempotency_get(req->store, scope, key, replay) == STORE_OK)
        return STORE_EREPLAY;
    char *stored = NULL;
    size_t stored_length = 0;
    uint64_t version = 0;
    if (store_game_load(req->store, id, &stored, &stored_length, &version) != STORE_OK)
        return STORE_EUNKNOWN;
    store_status_t status = STORE_EUNKNOWN; /* older: it may still arrive; newer: it may be under another change */
    if (version == expected + 1) {
        *current = version;
        status = stored_length == length && !memcmp(stored, data, length) ? STORE_OK : STORE_ECONFLICT;
    }
    free(stored);
    return status;
}

/* The kept answer for an Idempotency-Key (sealed, malloc'd), or NULL on OOM. */
static char *kept_answer(const api_request_t *req, unsigned status, uint64_t version, const char *location,
                         const char *body, size_t body_length)
{
    char digest[65];
    request_digest(req, digest);
    size_t size = body_length + 200;
    char *plain = malloc(size);
    if (!plain)
        return NULL;
    int n = snprintf(plain, size, "%s %u %llu\n%s\n%s", digest, status, (unsigned long long)version, location, body);
    char *sealed = n > 0 ? tokens_seal(plain, (size_t)n) : NULL;
    free(plain);
    return sealed;
}

/* Writes g as version expected + 1 and answers with the Game (success_status),
 * keeping the answer under key within scope. An active game expires
 * active_game_ttl_seconds after its last change, a finished one
 * finished_game_ttl_seconds after its end (0: never). Returns true when this
 * request's write was made (not a replay, not a refusal). */
static bool game_save(const api_request_t *req, api_response_t *res, game_t *g, uint64_t expected,
                      unsigned success_status, char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE], const char *scope,
                      const char *idem_key)
{
    game_record_t *r = &g->record;
    r->updated_at_ms = now_ms();
    r->version = expected + 1;
    size_t data_length = 0, body_length = 0;
    char *data = game_record_to_json(r, &data_length);
    char *body = game_json(g, tokens, &body_length);
    char *kept = NULL, *replay = NULL;
    char location[96] = "";
    if (success_status == 201)
        snprintf(location, sizeof location, "/v1/games/%s", r->id);
    if (data && body && idem_key)
        kept = kept_answer(req, success_status, r->version, location, body, body_length);
    if (!data || !body || (idem_key && !kept)) {
        free(data);
        free(body);
        free(kept);
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return false;
    }
    /* In a game a caller's kept answers are bounded, oldest dropped first, so
     * changes looped with fresh keys cannot grow the store; a creation's is
     * not (each comes with a new game, under the per-address creation limit). */
    unsigned keep_max = strcmp(scope, creation_scope) ? IDEMPOTENCY_KEPT_MAX : 0;
    store_idempotency_t idem = { scope, idem_key, kept, req->config->idempotency_ttl_seconds, keep_max };
    unsigned ttl = game_is_over(g) ? req->config->finished_game_ttl_seconds : req->config->active_game_ttl_seconds;
    uint64_t current = 0;
    store_status_t status = store_game_write(req->store, r->id, expected, data, data_length, ttl,
                                             idem_key ? &idem : NULL, &current, &replay);
    if (status == STORE_EUNKNOWN)
        status = settle_unknown_write(req, r->id, expected, data, data_length, scope, idem_key, &current, &replay);
    free(data);
    free(kept);
    if (status == STORE_OK) {
        api_response_set(res, success_status, "application/json", body, body_length);
        set_etag(res, r->version);
        snprintf(res->location, sizeof res->location, "%s", location);
        return true;
    }
    free(body);
    if (status == STORE_EREPLAY) {
        replay_answer(req, replay, res);
        free(replay);
    } else if (status == STORE_ECONFLICT) {
        metrics_version_conflict();
        api_problem_conflict(res, current, expected);
    } else {
        store_problem(res, status);
    }
    return false;
}

/* --- reading requests --- */

static bool read_name(const cJSON *root, const char *key, char *out, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    out[0] = '\0';
    if (!item || cJSON_IsNull(item))
        return true;
    char detail[96];
    if (!cJSON_IsString(item) || utf8_length(item->valuestring) > GAME_NAME_CHARS
        || strlen(item->valuestring) > GAME_NAME_MAX) {
        snprintf(detail, sizeof detail, "'%s' must be a string of at most %d characters", key, GAME_NAME_CHARS);
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    for (const unsigned char *p = (const unsigned char *)item->valuestring; *p; p++) {
        /* C0 controls, DEL, and C1 controls (U+0080..U+009F: C2 80..C2 9F in UTF-8). */
        if (*p < 0x20 || *p == 0x7f || (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)) {
            snprintf(detail, sizeof detail, "'%s' must not contain control characters", key);
            api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
            return false;
        }
    }
    strcpy(out, item->valuestring);
    return true;
}

/* Which player the bearer token belongs to, with the token's HMAC in hash;
 * -1 with res filled when none. */
static int authenticate(const api_request_t *req, const game_record_t *r, char hash[TOKENS_HASH_SIZE],
                        api_response_t *res)
{
    const char *header = api_request_header(req, "Authorization");
    if (!header || strncasecmp(header, "Bearer ", 7) || !header[7]) {
        api_problem(res, API_EUNAUTHORIZED, "send Authorization: Bearer <player token>", NULL, NULL);
        return -1;
    }
    int who = -1;
    if (tokens_hash(header + 7, hash)) /* one HMAC, compared with both players' */
        for (int c = 0; c < COLOR_COUNT; c++)
            if (tokens_hash_equal(hash, r->players[c].token_hash))
                who = c;
    if (who < 0)
        api_problem(res, API_EFORBIDDEN, "the token is not a player's of this game", NULL, NULL);
    return who;
}

/* The version a change was made against: body expected_version or If-Match.
 * On a mismatch or when neither is given, fills res and returns false. */
/* Whether an If-Match value names the current version. RFC 9110 compares
 * strongly: a weak tag never matches; "*" matches the existing game. */
static bool if_match_fits(const char *value, uint64_t current)
{
    if (!strcmp(value, "*"))
        return true;
    char tag[32];
    snprintf(tag, sizeof tag, "\"%llu\"", (unsigned long long)current);
    /* A list of tags: any one of them may match. */
    for (const char *p = value; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == strlen(tag) && !strncmp(p, tag, n))
            return true;
        p += strcspn(p, ",");
    }
    return false;
}

/* The version a change was made against: body expected_version and/or
 * If-Match; every one given must fit. Fills res and returns false on a
 * mismatch (409 for expected_version, 412 for If-Match) or when neither is
 * given (428). */
static bool check_version(const api_request_t *req, const cJSON *root, uint64_t current, uint64_t *expected,
                          api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "expected_version");
    const char *if_match = api_request_header(req, "If-Match");
    bool has_expected = item != NULL;
    if (!has_expected && !if_match) {
        api_problem(res, API_EPRECONDITION_REQUIRED, "send expected_version (or If-Match) with every change", NULL,
                    NULL);
        return false;
    }
    if (has_expected) {
        if (!cJSON_IsNumber(item) || item->valuedouble < 1 || item->valuedouble > 9007199254740991.0
            || item->valuedouble != (double)(uint64_t)item->valuedouble) {
            api_problem(res, API_EINVALID_FIELD, "'expected_version' must be a whole number from 1", NULL, NULL);
            return false;
        }
        if ((uint64_t)item->valuedouble != current) {
            metrics_version_conflict();
            api_problem_conflict(res, current, (uint64_t)item->valuedouble);
            return false;
        }
    }
    if (if_match && !if_match_fits(if_match, current)) {
        char detail[96];
        snprintf(detail, sizeof detail, "If-Match %.32s does not match version \"%llu\"", if_match,
                 (unsigned long long)current);
        api_problem(res, API_EPRECONDITION_FAILED, detail, NULL, NULL);
        return false;
    }
    *expected = current;
    return true;
}

/* --- one path for every change --- */

/* Applies a change for player `who`; false with res filled when refused. */
typedef bool (*change_fn)(const api_request_t *req, const cJSON *root, game_t *g, int who, api_response_t *res);

/* The common start of every write: its Idempotency-Key (*key) and its body.
 * NULL with res filled when either is refused. */
static cJSON *write_request(const api_request_t *req, api_response_t *res, const char *const *allowed, bool creation,
                            const char **key)
{
    return read_idempotency_key(req, creation, key, res) ? body_parse_object(req, allowed, res) : NULL;
}

/* A change by player `who` (whose keys live in scope) on the loaded game g. */
static void game_change_by(const api_request_t *req, api_response_t *res, const cJSON *root, game_t *g, int who,
                           const char *scope, const char *key, change_fn apply, bool counts_as_move)
{
    uint64_t expected = 0;
    if (!answered_before(req, scope, key, res) && check_version(req, root, g->record.version, &expected, res)) {
        if (game_is_over(g))
            api_problem(res, API_EGAME_OVER, "the game is over; nothing can change it", NULL, NULL);
        else if (apply(req, root, g, who, res) && game_save(req, res, g, expected, 200, NULL, scope, key)
                 && counts_as_move)
            metrics_move_applied();
    }
    /* A retry racing its own first attempt can see the version that attempt
     * made: its answer is the kept one, not a conflict. */
    if (key && res->problem_code && !strcmp(res->problem_code, "version_conflict")) {
        api_response_t kept = { 0 };
        if (answered_before(req, scope, key, &kept)) {
            free(res->body);
            *res = kept;
        } else {
            free(kept.body);
        }
    }
}

static void game_change(const api_request_t *req, api_response_t *res, const char *const *allowed, change_fn apply,
                        bool counts_as_move)
{
    const char *key;
    cJSON *root = write_request(req, res, allowed, false, &key);
    if (!root)
        return;
    game_t g;
    /* Only a player of this game may see a kept answer, and only their own:
     * the token is checked before a retry is answered from it. */
    if (game_load(req, &g, res)) {
        char caller[TOKENS_HASH_SIZE], scope[SCOPE_SIZE];
        int who = authenticate(req, &g.record, caller, res);
        if (who >= 0) {
            snprintf(scope, sizeof scope, "%s:%s", g.record.id, caller);
            game_change_by(req, res, root, &g, who, scope, key, apply, counts_as_move);
        }
    }
    game_free(&g);
    cJSON_Delete(root);
}

static bool apply_move(const api_request_t *req, const cJSON *root, game_t *g, int who, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "move");
    if (!cJSON_IsString(item)) {
        api_problem(res, API_EINVALID_FIELD, "'move' must be a string (UCI or SAN)", NULL, NULL);
        return false;
    }
    if (who != g->pos.side_to_move) {
        api_problem(res, API_ENOT_YOUR_TURN, "it is the other player's move", NULL, NULL);
        return false;
    }
    move_t move = MOVE_NONE;
    char message[256];
    legality_reason_t reason = notation_parse_move(&g->pos, item->valuestring, strlen(item->valuestring), &move,
                                                   message, sizeof message);
    if (reason != LEGALITY_OK) {
        api_problem_move(res, api_status_for_reason(reason), message, g->record.move_count, item->valuestring, reason, g->record.fen);
        return false;
    }
    if (g->record.move_count >= (int)req->config->max_game_plies || !game_record_push_move(&g->record, &g->pos, move)) {
        char detail[96];
        snprintf(detail, sizeof detail, "the game has %d moves, the most this server keeps", g->record.move_count);
        api_problem(res, API_EGAME_TOO_LONG, detail, NULL, NULL);
        return false;
    }
    /* An offer lapses when the player it was made to moves instead of answering. */
    if (g->record.draw_offer >= 0 && g->record.draw_offer != who)
        g->record.draw_offer = -1;
    game_advance(g);
    apply_automatic_ending(g);
    return true;
}

static bool apply_undo(const api_request_t *req, const cJSON *root, game_t *g, int who, api_response_t *res)
{
    (void)req;
    (void)root;
    if (g->record.move_count == 0 || who == g->pos.side_to_move) {
        api_problem(res, API_ENOTHING_TO_UNDO, "only the player who made the last move may take it back, before "
                    "the reply", NULL, NULL);
        return false;
    }
    g->record.move_count--;
    g->record.draw_offer = -1;
    if (!game_replay(g)) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return false;
    }
    return true;
}

static bool apply_resign(const api_request_t *req, const cJSON *root, game_t *g, int who, api_response_t *res)
{
    (void)req;
    (void)root;
    (void)res;
    game_record_t *r = &g->record;
    strcpy(r->status, "resigned");
    strcpy(r->result, who == WHITE ? "0-1" : "1-0");
    strcpy(r->termination, "resignation");
    r->draw_offer = -1;
    return true;
}

static void end_in_draw(game_record_t *r, const char *termination)
{
    strcpy(r->status, "draw");
    strcpy(r->result, "1/2-1/2");
    snprintf(r->termination, sizeof r->termination, "%s", termination);
    r->draw_offer = -1;
}

static bool apply_draw(const api_request_t *req, const cJSON *root, game_t *g, int who, api_response_t *res)
{
    (void)req;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "action");
    const char *action = cJSON_IsString(item) ? item->valuestring : "";
    game_record_t *r = &g->record;
    int other = !who;
    if (!strcmp(action, "offer")) {
        if (r->draw_offer == who) {
            api_problem(res, API_EDRAW_ALREADY_OFFERED,
                        "your draw offer already stands until the other player answers it or moves", NULL, NULL);
            return false;
        }
        if (r->draw_offer == other)
            end_in_draw(r, "agreement"); /* offers crossed: that is an agreement */
        else
            r->draw_offer = who;
        return true;
    }
    if (!strcmp(action, "accept") || !strcmp(action, "decline")) {
        if (r->draw_offer != other) {
            api_problem(res, API_ENO_DRAW_OFFER, "the other player has not offered a draw", NULL, NULL);
            return false;
        }
        if (action[0] == 'a')
            end_in_draw(r, "agreement");
        else
            r->draw_offer = -1;
        return true;
    }
    if (!strcmp(action, "claim")) {
        if (who != g->pos.side_to_move) {
            api_problem(res, API_ENOT_YOUR_TURN, "a draw is claimed by the player to move", NULL, NULL);
            return false;
        }
        if (g->status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION)
            end_in_draw(r, "threefold_repetition");
        else if (g->status.claimable & STATUS_CLAIM_FIFTY_MOVES)
            end_in_draw(r, "fifty_moves");
        else {
            api_problem(res, API_EDRAW_NOT_CLAIMABLE, "neither the 50-move rule nor threefold repetition applies",
                        NULL, NULL);
            return false;
        }
        return true;
    }
    api_problem(res, API_EINVALID_FIELD, "'action' must be offer, accept, decline or claim", NULL, NULL);
    return false;
}

void handle_game_move(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "move", "expected_version", NULL };
    game_change(req, res, allowed, apply_move, true);
}

void handle_game_undo(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, apply_undo, false);
}

void handle_game_resign(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, apply_resign, false);
}

void handle_game_draw(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "action", "expected_version", NULL };
    game_change(req, res, allowed, apply_draw, false);
}

void handle_game_create(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "fen", "chess960", "white", "black", NULL };
    const char *key;
    cJSON *root = write_request(req, res, allowed, true, &key);
    if (!root)
        return;
    game_t g;
    memset(&g, 0, sizeof g);
    game_record_init(&g.record);
    game_record_t *r = &g.record;
    char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE];
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(root, "fen");
    const cJSON *chess960 = cJSON_GetObjectItemCaseSensitive(root, "chess960");
    char message[200];
    if (answered_before(req, creation_scope, key, res))
        goto done;
    if ((fen && !cJSON_IsNull(fen) && !cJSON_IsString(fen)) || (chess960 && !cJSON_IsNull(chess960) && !cJSON_IsBool(chess960))) {
        api_problem(res, API_EINVALID_FIELD, "'fen' must be a string and 'chess960' true or false", NULL, NULL);
        goto done;
    }
    if (!read_name(root, "white", r->players[WHITE].name, res) || !read_name(root, "black", r->players[BLACK].name, res))
        goto done;
    const char *fen_text = cJSON_IsString(fen) ? fen->valuestring : FEN_START;
    position_t pos;
    fen_error_t fe = fen_parse(fen_text, strlen(fen_text), cJSON_IsTrue(chess960) ? FEN_CHESS960 : 0, &pos, message,
                               sizeof message);
    if (fe != FEN_OK) {
        api_problem_fen(res, fe, message);
        goto done;
    }
    r->chess960 = pos.chess960;
    fen_format(&pos, r->initial_fen, sizeof r->initial_fen);
    r->created_at_ms = now_ms();
    if (!tokens_new_id(r->id)) {
        api_problem(res, API_EINTERNAL, "no randomness for an id", NULL, NULL);
        goto done;
    }
    for (int c = 0; c < COLOR_COUNT; c++) {
        if (!tokens_new_token(tokens[c]) || !tokens_hash(tokens[c], r->players[c].token_hash)) {
            api_problem(res, API_EINTERNAL, "no randomness for a token", NULL, NULL);
            goto done;
        }
    }
    if (!game_replay(&g)) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        goto done;
    }
    apply_automatic_ending(&g);
    game_save(req, res, &g, 0, 201, tokens, creation_scope, key);
done:
    game_free(&g);
    cJSON_Delete(root);
}

void handle_game_get(const api_request_t *req, api_response_t *res)
{
    game_t g;
    if (!game_load(req, &g, res)) {
        game_free(&g);
        return;
    }
    char etag[32];
    snprintf(etag, sizeof etag, "\"%llu\"", (unsigned long long)g.record.version);
    const char *if_none_match = api_request_header(req, "If-None-Match");
    if (if_none_match && (strstr(if_none_match, etag) || !strcmp(if_none_match, "*"))) {
        api_response_set(res, 304, "application/json", calloc(1, 1), 0);
    } else {
        size_t length = 0;
        char *body = game_json(&g, NULL, &length);
        api_response_set(res, 200, "application/json", body, length);
    }
    set_etag(res, g.record.version);
    game_free(&g);
}

/* --- PGN --- */

static bool grow(char **out, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    char *p = realloc(*out, c);
    if (!p)
        return false;
    *out = p;
    *cap = c;
    return true;
}

static void append(char **out, size_t *n, size_t *cap, const char *text)
{
    size_t len = strlen(text);
    if (!*out && !grow(out, cap, 1024))
        return;
    if (!grow(out, cap, *n + len + 1))
        return;
    memcpy(*out + *n, text, len + 1);
    *n += len;
}

static void pgn_tag(char **out, size_t *n, size_t *cap, const char *name, const char *value)
{
    char escaped[2 * GAME_NAME_MAX + FEN_BUFFER_SIZE];
    size_t e = 0;
    for (const char *p = value; *p && e + 3 < sizeof escaped; p++) {
        if (*p == '"' || *p == '\\')
            escaped[e++] = '\\';
        escaped[e++] = *p;
    }
    escaped[e] = '\0';
    char line[sizeof escaped + 64];
    snprintf(line, sizeof line, "[%s \"%s\"]\n", name, escaped);
    append(out, n, cap, line);
}

void handle_game_pgn(const api_request_t *req, api_response_t *res)
{
    game_t g;
    if (!game_load(req, &g, res)) {
        game_free(&g);
        return;
    }
    const game_record_t *r = &g.record;
    char *out = NULL, date[16];
    size_t n = 0, cap = 0;
    time_t seconds = (time_t)(r->created_at_ms / 1000);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    strftime(date, sizeof date, "%Y.%m.%d", &tm);
    pgn_tag(&out, &n, &cap, "Event", "?");
    pgn_tag(&out, &n, &cap, "Site", "?");
    pgn_tag(&out, &n, &cap, "Date", date);
    pgn_tag(&out, &n, &cap, "Round", "-");
    pgn_tag(&out, &n, &cap, "White", r->players[WHITE].name[0] ? r->players[WHITE].name : "?");
    pgn_tag(&out, &n, &cap, "Black", r->players[BLACK].name[0] ? r->players[BLACK].name : "?");
    pgn_tag(&out, &n, &cap, "Result", r->result);
    if (r->chess960)
        pgn_tag(&out, &n, &cap, "Variant", "Chess960");
    if (r->chess960 || strcmp(r->initial_fen, FEN_START)) {
        pgn_tag(&out, &n, &cap, "SetUp", "1");
        pgn_tag(&out, &n, &cap, "FEN", r->initial_fen);
    }
    pgn_tag(&out, &n, &cap, "Termination", game_is_over(&g) ? "normal" : "unterminated");
    append(&out, &n, &cap, "\n");

    position_t pos;
    fen_parse(r->initial_fen, strlen(r->initial_fen), r->chess960 ? FEN_CHESS960 : 0, &pos, NULL, 0);
    size_t line_start = n;
    for (int i = 0; i <= r->move_count; i++) {
        char token[SAN_BUFFER_SIZE + 16];
        if (i == r->move_count) {
            snprintf(token, sizeof token, "%s", r->result);
        } else {
            const char *san = r->moves[i].san;
            if (pos.side_to_move == WHITE)
                snprintf(token, sizeof token, "%u. %s", pos.fullmove_number, san);
            else if (i == 0)
                snprintf(token, sizeof token, "%u... %s", pos.fullmove_number, san);
            else
                snprintf(token, sizeof token, "%s", san);
            position_undo_t undo;
            position_make(&pos, r->moves[i].move, &undo);
        }
        /* Lines of at most 80 characters, as the PGN standard asks. */
        if (n > line_start && n - line_start + 1 + strlen(token) > 80) {
            append(&out, &n, &cap, "\n");
            line_start = n;
        } else if (n > line_start) {
            append(&out, &n, &cap, " ");
        }
        append(&out, &n, &cap, token);
    }
    append(&out, &n, &cap, "\n");
    api_response_set(res, 200, "application/x-chess-pgn", out, n);
    set_etag(res, r->version);
    game_free(&g);
}
