/* The game service (service.h). A change loads the game's state and the tail
 * of its history, not its moves, checks the caller's token and version, and
 * writes what rules/game.h made of it with one compare-and-set (game_save).
 * Time is Redis's: every load brings its clock. About 1,190 lines on purpose:
 * load, check, apply and save are one protocol, and its retries and kept
 * answers are judged right only when read in one place. */
#include "service.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../rules/base/decimal.h"
#include "../../rules/rules.h"
#include "../../rules/base/text.h"
#include "../../store/deadlines.h"
#include "../../store/engine_jobs.h"
#include "../render/game_json.h"
#include "finished.h"
#include "game_cache.h"
#include "spectator.h"
#include "if_match.h"
#include "import.h"
#include "tokens.h"
#include "webhook_kinds.h"

enum {
    IDEMPOTENCY_KEPT_MAX = 32, /* answers kept per player and game: enough for any retry */
    SCOPE_SIZE = GAME_ID_SIZE + TOKENS_HASH_SIZE + 4,
    CHANGE_ATTEMPTS = 4, /* loads for one change or read: a copy, then the store again after a flag, a late
                          * write, or a lost race of a move guarded by its ply */
};

static const char creation_scope[] = "new";

void game_svc_result_free(game_svc_result_t *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

void game_svc_game_free(game_svc_game_t *g)
{
    store_game_clear(&g->stored);
    game_meta_free(g->meta);
    g->meta = NULL;
    free(g->legacy_moves);
    free(g->legacy_history);
    g->legacy_moves = g->legacy_history = NULL;
}

/* Sets out's detail and returns status. */
static game_svc_status_t fail(game_svc_result_t *out, game_svc_status_t status, const char *detail)
{
    snprintf(out->detail, sizeof out->detail, "%s", detail);
    return status;
}

/* The service's status for a store failure (not STORE_OK). */
static game_svc_status_t from_store(store_status_t status)
{
    switch (status) {
    case STORE_ENOT_FOUND: return GAME_SVC_ENOT_FOUND;
    case STORE_EUNAVAILABLE: return GAME_SVC_EUNAVAILABLE;
    case STORE_EFULL: return GAME_SVC_EFULL;
    case STORE_EUNKNOWN: return GAME_SVC_EUNKNOWN;
    case STORE_EDAMAGED: return GAME_SVC_EDAMAGED;
    default: return GAME_SVC_ESTORE;
    }
}

/* Tells the caller's count callback (game_svc_config_t) of one event. */
static void count(const game_svc_config_t *c, game_svc_counter_t counter)
{
    if (c->count)
        c->count(counter);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether a move list has exactly `plies` entries, each "uci:san". */
static bool line_well_formed(const char *line, size_t length, int plies)
{
    int entries = 0;
    const char *p = line, *end = line + length;
    while (p < end) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        if (!colon || colon == p || colon + 1 == stop)
            return false;
        entries++;
        p = stop < end ? stop + 1 : end;
    }
    return entries == plies;
}

/* What a game with no clock and no days holds from the settings and its
 * record, never stored: the idle end, counted from its last change,
 * `updated` (the record keeps no turn's start for it, so that its text is
 * as before idle ends existed). */
static void apply_settings(const game_svc_config_t *c, game_t *g, int64_t updated)
{
    if (game_is_timed(g) || game_is_correspondence(g))
        return;
    g->clock.idle_ms = c->idle_end_ms;
    g->clock.turn_started_ms = updated > 0 ? updated : 0;
}

/* Loads game id from the store into *g (zeroed first; to be freed also on
 * failure), the players of bit mask `present` marked here first. */
static game_svc_status_t load_marking(const game_svc_config_t *c, const char *id, store_load_t what, unsigned present,
                                      game_svc_game_t *g)
{
    memset(g, 0, sizeof *g);
    if (!tokens_is_id(id))
        return GAME_SVC_ENOT_FOUND;
    store_status_t status = present ? store_game_load_present(c->store, id, present, &g->stored)
                                    : store_game_load(c->store, id, what, &g->stored);
    if (status != STORE_OK)
        return from_store(status);
    const store_game_t *s = &g->stored;
    bool ok;
    if (s->legacy) {
        size_t moves_length = 0;
        g->legacy = true;
        ok = game_record_from_legacy(&g->record, s->legacy, s->legacy_length, &g->legacy_moves, &moves_length,
                                     &g->legacy_history, &g->legacy_history_length);
        g->moves = g->legacy_moves;
        g->moves_length = moves_length;
    } else {
        ok = game_record_read(&g->record, s->state, s->state_length, s->history, s->history_length);
        g->moves = s->moves;
        g->moves_length = s->moves_length;
        if (ok && what == STORE_LOAD_FULL)
            ok = line_well_formed(g->moves, g->moves_length, g->record.game.ply_count);
    }
    if (!ok)
        return GAME_SVC_EBAD_RECORD;
    apply_settings(c, &g->record.game, g->record.updated_at_ms);
    memcpy(g->record.id, id, TOKENS_ID_SIZE); /* tokens_is_id: 16 characters */
    g->record.version = s->version;
    g->now_ms = s->now_ms;
    memcpy(g->record.write_id, s->write_id, sizeof g->record.write_id);
    memcpy(g->record.webhooks, s->webhooks, sizeof g->record.webhooks);
    return GAME_SVC_OK;
}

static game_svc_status_t load_id(const game_svc_config_t *c, const char *id, store_load_t what, game_svc_game_t *g)
{
    return load_marking(c, id, what, 0, g);
}

_Static_assert((int)GAME_WEBHOOKS_TEXT_SIZE == (int)STORE_WEBHOOKS_TEXT_SIZE, "a record holds what a load reads");

/* --- idempotency --- */

/* A write's Idempotency-Key (key NULL: none), its request's fingerprint
 * and the scope its answers are kept in. */
typedef struct {
    const char *key;
    const char *fingerprint;
    char scope[SCOPE_SIZE];
} idem_t;

/* GAME_SVC_REPLAY with the kept (sealed) answer in out, or why it cannot answer this request. */
static game_svc_status_t open_kept(const char *fingerprint, const char *sealed, game_svc_result_t *out)
{
    idem_answer_t kept;
    switch (idem_kept_open(sealed, fingerprint, &kept)) {
    case IDEM_REPLAY_OK:
        out->answer_status = kept.status;
        out->version = kept.version;
        snprintf(out->location, sizeof out->location, "%s", kept.location);
        free(out->body);
        out->body = kept.body;
        out->body_length = kept.body_length;
        return GAME_SVC_REPLAY;
    case IDEM_REPLAY_OTHER:
        return fail(out, GAME_SVC_EKEY_REUSED, "this Idempotency-Key was used with another request");
    case IDEM_REPLAY_SEALED:
        return fail(out, GAME_SVC_EINTERNAL, "a kept answer cannot be opened (was the token secret changed?)");
    default:
        return fail(out, GAME_SVC_EINTERNAL, "a kept answer cannot be read");
    }
}

/* GAME_SVC_OK when the request has no kept answer (or no key); else the
 * kept answer (GAME_SVC_REPLAY), or why it cannot be told. */
static game_svc_status_t kept_answer(const game_svc_config_t *c, const idem_t *idem, game_svc_result_t *out)
{
    if (!idem->key)
        return GAME_SVC_OK;
    char *kept = NULL;
    store_status_t status = store_idempotency_get(c->store, idem->scope, idem->key, &kept);
    game_svc_status_t answer = status == STORE_ENOT_FOUND ? GAME_SVC_OK
                               : status == STORE_OK       ? open_kept(idem->fingerprint, kept, out)
                                                          : from_store(status);
    free(kept);
    return answer;
}

/* After STORE_EUNKNOWN, finds out once whether this request's write (state
 * as version expected + 1) was made: the kept answer for the caller's key,
 * else the stored state compared byte for byte (it holds the request's own
 * updated_at). Returns STORE_OK (it was made), STORE_EREPLAY (*replay: the
 * kept answer), STORE_ECONFLICT (another change took that version: this one
 * was not and will not be made) or STORE_EUNKNOWN (Redis still cannot tell). */
static store_status_t settle_unknown_write(const game_svc_config_t *c, const char *id, uint64_t expected,
                                           const char *state, size_t length, const idem_t *idem, uint64_t *current,
                                           char **replay)
{
    if (idem->key && store_idempotency_get(c->store, idem->scope, idem->key, replay) == STORE_OK)
        return STORE_EREPLAY;
    store_game_t stored;
    if (store_game_load(c->store, id, STORE_LOAD_CHANGE, &stored) != STORE_OK)
        return STORE_EUNKNOWN;
    store_status_t status = STORE_EUNKNOWN; /* older: it may still arrive; newer: it may be under another change */
    if (stored.version == expected + 1) {
        *current = stored.version;
        status = stored.state && stored.state_length == length && !memcmp(stored.state, state, length)
                     ? STORE_OK
                     : STORE_ECONFLICT;
    }
    store_game_clear(&stored);
    return status;
}

/* --- writing a change --- */

/* What a change did: the move it played, if any, how the move list
 * changes, and its event's name. */
typedef struct {
    const game_played_t *played;
    store_line_op_t op;
    uint64_t key_before; /* STORE_LINE_APPEND: the position key before the move */
    size_t moves_keep;   /* STORE_LINE_TRUNCATE: bytes of the move list kept */
    const char *line, *history; /* STORE_LINE_SET: the whole move list and history (a game from PGN) */
    size_t line_length, history_length;
    const char *event;   /* "move", "resign", "timeout"... */
    int64_t deadline_ms; /* the game's deadline before the change (game_flag_deadline; 0: none) */
    int absent;          /* a claim: 1 + the gone player's colour, whose last sign must still be... */
    int64_t absent_seen_ms; /* ...this one when written (store_game_change_t) */
} change_t;

/* The move list and history a change writes. A game of the first format
 * is written whole (STORE_LINE_SET) and replaces its old record. */
typedef struct {
    store_game_change_t store;
    char entry[GAME_LINE_ENTRY_SIZE + 1];
    char history_entry[GAME_RECORD_HISTORY_ENTRY];
    char *moves, *history; /* converted games: malloc'd */
    char *meta;            /* a creation's tags and metadata text: malloc'd */
} line_write_t;

static bool line_write_prepare(const game_svc_game_t *g, const change_t *change, line_write_t *lw)
{
    memset(lw, 0, sizeof *lw);
    store_game_change_t *s = &lw->store;
    const game_t *game = &g->record.game;
    s->line_op = change->op;
    s->history_count = (unsigned)game->history_count;
    if (change->op == STORE_LINE_APPEND) {
        size_t n = 0;
        if (game->ply_count > 1)
            lw->entry[n++] = ' ';
        n += game_line_entry(change->played, lw->entry + n);
        game_record_history_entry(change->key_before, lw->history_entry);
        s->moves = lw->entry;
        s->moves_length = n;
        s->history = lw->history_entry;
        s->history_length = GAME_RECORD_HISTORY_ENTRY;
    } else if (change->op == STORE_LINE_TRUNCATE) {
        s->moves_keep = change->moves_keep;
        s->history_keep = (size_t)game->ply_count * GAME_RECORD_HISTORY_ENTRY;
    } else if (change->op == STORE_LINE_SET) {
        s->moves = change->line;
        s->moves_length = change->line_length;
        s->history = change->history;
        s->history_length = change->history_length;
    }
    if (!g->legacy)
        return true;
    /* The whole line of a converted game, as it is after the change. */
    size_t old_moves = g->moves_length, old_history = g->legacy_history_length;
    if (change->op == STORE_LINE_TRUNCATE) {
        old_moves = s->moves_keep;
        old_history = s->history_keep;
    }
    size_t extra_moves = change->op == STORE_LINE_APPEND ? s->moves_length : 0;
    size_t extra_history = change->op == STORE_LINE_APPEND ? s->history_length : 0;
    lw->moves = malloc(old_moves + extra_moves + 1);
    lw->history = malloc(old_history + extra_history + 1);
    if (!lw->moves || !lw->history)
        return false;
    memcpy(lw->moves, g->moves, old_moves);
    memcpy(lw->history, g->legacy_history, old_history);
    if (change->op == STORE_LINE_APPEND) { /* only a move has texts to add (memcpy from NULL is undefined) */
        memcpy(lw->moves + old_moves, s->moves, extra_moves);
        memcpy(lw->history + old_history, s->history, extra_history);
    }
    s->line_op = STORE_LINE_SET;
    s->moves = lw->moves;
    s->moves_length = old_moves + extra_moves;
    s->history = lw->history;
    s->history_length = old_history + extra_history;
    s->replaces_legacy = true;
    return true;
}

/* A creation's tags and metadata, written once with it (game_meta.h's
 * text): no change writes them again. */
static bool meta_write_prepare(const game_svc_game_t *g, uint64_t expected, line_write_t *lw)
{
    if (expected != 0 || !g->meta)
        return true;
    if (!game_meta_text(g->meta, &lw->meta, &lw->store.meta_length))
        return false;
    lw->store.meta = lw->meta;
    return true;
}

static void line_write_free(line_write_t *lw)
{
    free(lw->moves);
    free(lw->history);
    free(lw->meta);
}

/* What became of a write. */
typedef enum {
    SAVE_MADE = 0, /* this request's write was made (or found made) */
    SAVE_STALE,    /* refused because the game is not at the version g has (or is gone): nothing was written */
    SAVE_LATE,     /* refused by Redis's clock (see STORE_ELATE): nothing was written; load again and redo */
    SAVE_FAILED,   /* anything else: the status says why */
} save_t;

/* The message a change publishes on its game's channel: a line
 * "<version> <ended 0|1> <at_ms> <flag deadline ms> change", then the
 * change's event object (see game_events.h), json when it is already
 * written (json_length bytes; freed here), else written here. NULL when out
 * of memory. */
static char *event_message(const game_record_t *r, const change_t *change, int64_t now, char *json,
                           size_t json_length, size_t *length)
{
    if (!json)
        json = game_json_change(r, change->played, change->event, GAME_JSON_EVENT, now, &json_length);
    if (!json)
        return NULL;
    char head[3 * (DECIMAL_U64_MAX + 2) + sizeof " 1 change\n"];
    size_t n = decimal_write(r->version, head);
    memcpy(head + n, game_is_over(&r->game) ? " 1 " : " 0 ", 3);
    n += 3;
    n += decimal_write_signed(now, head + n);
    head[n++] = ' ';
    n += decimal_write_signed(game_flag_deadline(&r->game), head + n);
    memcpy(head + n, " change\n", sizeof " change\n" - 1);
    n += sizeof " change\n" - 1;
    buf_t message;
    buf_init(&message);
    buf_reserve(&message, n + json_length);
    buf_append(&message, head, n);
    buf_append(&message, json, json_length);
    free(json);
    return buf_finish(&message, length);
}

/* The intent of the computer's turn in r, recorded unless owner's queue
 * has engine_turns_per_client turns or everyone's engine_turns_max
 * (*reached then says which; nothing recorded). The bounds are read with
 * the intent, just before the write, so requests at once from one client
 * may pass its bound by as many as there are. */
static store_status_t turn_intent(const game_svc_config_t *c, const game_record_t *r, int64_t now, const char *owner,
                                  store_engine_bound_t *reached)
{
    store_engine_bounds_t bounds = { owner ? c->engine_turns_per_client : 0, c->engine_turns_max };
    return store_engine_turn_intent(c->store, r->id, r->version, now + (int64_t)c->engine_lease_ms, owner, &bounds,
                                    reached);
}

/* The refusal of a turn past a bound, its detail and the bound in out. */
static game_svc_status_t turn_refused(const game_svc_config_t *c, store_engine_bound_t reached, game_svc_result_t *out)
{
    if (reached == STORE_ENGINE_BOUND_OWNER) {
        snprintf(out->detail, sizeof out->detail,
                 "this client has as many of the computer's turns waiting as it may (--engine-turns-per-client %u); "
                 "nothing was changed", c->engine_turns_per_client);
        out->limit = c->engine_turns_per_client;
        return GAME_SVC_ETOO_MANY_TURNS;
    }
    snprintf(out->detail, sizeof out->detail,
             "as many of the computer's turns are waiting as this service queues (--engine-turns-max %u); nothing "
             "was changed", c->engine_turns_max);
    out->limit = c->engine_turns_max;
    return GAME_SVC_EENGINE_BUSY;
}

/* When the computer's turn in r must be played by, or its game is lost:
 * the first-move grace's end, or its clock's flag at now_ms (0: never). */
static int64_t engine_deadline(const game_record_t *r, int64_t now_ms)
{
    int64_t deadline = game_first_move_deadline(&r->game);
    if (game_is_timed(&r->game)) {
        int64_t flag = now_ms + game_clock_remaining(&r->game, (color_t)r->game.pos.side_to_move, now_ms);
        if (!deadline || flag < deadline)
            deadline = flag;
    }
    return deadline;
}

/* Who writes and what their answer is: the key its answer is kept under,
 * the request's answer settings, and for a creation the players' tokens
 * (the answer is then the Game, else the GameChange). */
typedef struct {
    const idem_t *idem;
    const game_svc_request_t *rq;
    const char *const *tokens;
    const char *answer_webhooks; /* a creation's: added to its answer as "webhooks" (NULL: none) */
    int seen; /* 1 + the colour of the player making the change, whose sign it is (0: nobody's) */
} writer_t;

/* The store's part of a write: the compare-and-set with its kept answer,
 * settled when its outcome is unknown. */
static store_status_t store_write(const game_svc_config_t *c, const game_svc_game_t *g, uint64_t expected,
                                  const change_t *change, const idem_t *idem, line_write_t *lw, const char *kept,
                                  const char *write_id, uint64_t *current, char **replay)
{
    const game_record_t *r = &g->record;
    lw->store.expected_write_id = r->write_id;
    lw->store.write_id = write_id;
    /* The time came from Redis, so Redis checks it: the write is refused if
     * its clock has passed the mover's flag since the load. */
    if (game_is_timed(&r->game) && g->stored.now_ms) {
        lw->store.time_from_ms = g->now_ms;
        lw->store.deadline_ms = change->deadline_ms;
    }
    /* In a game a caller's kept answers are bounded, oldest dropped first, so
     * changes looped with fresh keys cannot grow the store; a creation's is
     * not (each comes with a new game, under the per-address creation limit). */
    unsigned keep_max = strcmp(idem->scope, creation_scope) ? IDEMPOTENCY_KEPT_MAX : 0;
    store_idempotency_t store_idem = { idem->scope, idem->key, kept, c->idempotency_ttl_seconds, keep_max };
    /* An active game never expires (0: the script removes an expiry an older
     * version gave it); it ends by a rule (store/deadlines.h). */
    unsigned ttl = game_is_over(&r->game) ? c->finished_game_ttl_seconds : 0;
    store_status_t status = store_game_write(c->store, r->id, expected, &lw->store, ttl,
                                             idem->key ? &store_idem : NULL, current, replay);
    if (status == STORE_EUNKNOWN)
        status = settle_unknown_write(c, r->id, expected, lw->store.state, lw->store.state_length, idem, current,
                                      replay);
    return status;
}

/* Step 1 of store/deadlines.h's protocol, before r's write: the index
 * lowered to r's deadline when it is earlier than the game's before the
 * change (before; 0: none), or to a retry time when the write ends the game
 * (the feed's step clears it). *score is what the index holds then (0:
 * nothing was sent). */
static store_status_t lower_deadline(const game_svc_config_t *c, const game_record_t *r, int64_t before, int64_t now,
                                     int64_t *score)
{
    *score = 0;
    bool over = game_is_over(&r->game);
    int64_t due = over ? now + GAME_FINISHED_RETRY_MS : game_flag_deadline(&r->game);
    if (!due || (!over && before && due >= before))
        return STORE_OK;
    return store_deadline_lower(c->store, r->id, due, score);
}

/* The webhook part of r's write (store/webhooks.h): the subscriptions
 * that want the change's event, and the first line of the outbox entry
 * they take ("<event> <kinds>", into head; the published message follows
 * it). A creation also keeps the game's subscriptions text. */
static void webhook_write_prepare(const game_record_t *r, const change_t *change, uint64_t expected, bool message,
                                  char hits[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE],
                                  const char *hit_ids[STORE_WEBHOOKS_PER_GAME], char head[WEBHOOK_HEAD_SIZE],
                                  store_game_change_t *store)
{
    if (expected == 0 && r->webhooks[0])
        store->webhooks = r->webhooks;
    if (!r->webhooks[0] || !change->event || !message)
        return;
    unsigned kinds = webhook_event_kinds(change->event, game_is_over(&r->game));
    unsigned count = kinds ? webhook_subs_hit(r->webhooks, kinds, hits) : 0;
    int n = count ? snprintf(head, WEBHOOK_HEAD_SIZE, "%s %u\n", change->event, kinds) : 0;
    if (n <= 0 || n >= WEBHOOK_HEAD_SIZE)
        return;
    for (unsigned i = 0; i < count; i++)
        hit_ids[i] = hits[i];
    store->webhook_entry = head;
    store->webhook_entry_length = (size_t)n;
    store->webhook_subs = hit_ids;
    store->webhook_count = count;
}

/* body, a JSON object, with the member "webhooks": json added last, in
 * place of body (freed); NULL when out of memory. */
static char *add_webhooks(char *body, size_t *length, const char *json)
{
    static const char member[] = ",\"webhooks\":";
    size_t n = strlen(json), old = *length;
    if (!body || old < 2 || body[old - 1] != '}') {
        free(body);
        return NULL;
    }
    char *grown = realloc(body, old + sizeof member - 1 + n + 1);
    if (!grown) {
        free(body);
        return NULL;
    }
    size_t at = old - 1;
    memcpy(grown + at, member, sizeof member - 1);
    at += sizeof member - 1;
    memcpy(grown + at, json, n);
    at += n;
    grown[at++] = '}';
    grown[at] = '\0';
    *length = at;
    return grown;
}

/* Writes g as version expected + 1; out's answer is the Game (a creation)
 * or the GameChange, kept under the writer's key. A finished game expires
 * finished_game_ttl_seconds after its end (0: never), and is put on the
 * finished-games feed right after its ending write (finished.h); an
 * active one never expires. A write made is kept in the game cache.
 * *status is what the caller answers. */
static save_t game_save(const game_svc_config_t *c, game_svc_game_t *g, uint64_t expected, const change_t *change,
                        const writer_t *w, game_svc_status_t *status, game_svc_result_t *out)
{
    game_record_t *r = &g->record;
    const idem_t *idem = w->idem;
    int64_t now = g->now_ms ? g->now_ms : now_ms();
    g->now_ms = now;
    r->updated_at_ms = now;
    apply_settings(c, &r->game, now); /* as a reload of this write will have it */
    r->version = expected + 1;
    char state[GAME_RECORD_STATE_MAX], location[IDEM_LOCATION_SIZE] = "", write_id[STORE_WRITE_ID_SIZE];
    size_t state_length = game_record_state(r, state, sizeof state), body_length = 0, message_length = 0;
    unsigned flags = w->rq && w->rq->legal_moves ? GAME_JSON_LEGAL_MOVES : 0;
    char *body, *event_json = NULL;
    size_t event_length = 0;
    if (w->tokens) {
        body = game_json_game(r, g->meta, g->moves, g->moves_length, now, flags, w->tokens, &body_length);
        if (w->answer_webhooks)
            body = add_webhooks(body, &body_length, w->answer_webhooks);
    } else if (change->event) /* the answer and the event written together */
        body = game_json_change_and_event(r, change->played, change->event, flags, now, &body_length, &event_json,
                                          &event_length);
    else
        body = game_json_change(r, change->played, change->event, flags, now, &body_length);
    char *message = change->event ? event_message(r, change, now, event_json, event_length, &message_length) : NULL;
    char *kept = NULL, *replay = NULL;
    unsigned answer_status = w->rq ? w->rq->answer_status : 0;
    if (w->rq && w->rq->location_prefix)
        text_join(location, sizeof location, (const char *const[]){ w->rq->location_prefix, r->id }, 2);
    if (body && idem->key)
        kept = idem_kept_seal(idem->fingerprint, answer_status, r->version, location, body, body_length);
    line_write_t lw;
    bool prepared = line_write_prepare(g, change, &lw) && meta_write_prepare(g, expected, &lw);
    char hits[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE], hook_head[WEBHOOK_HEAD_SIZE];
    const char *hit_ids[STORE_WEBHOOKS_PER_GAME];
    if (prepared)
        webhook_write_prepare(r, change, expected, message != NULL, hits, hit_ids, hook_head, &lw.store);
    const char *trouble = NULL;
    if (!state_length || !body || (idem->key && !kept) || !prepared || (change->event && !message))
        trouble = "out of memory";
    else if (!tokens_new_write_id(write_id))
        trouble = "no randomness for a write id";
    store_status_t written = STORE_OK;
    uint64_t current = 0;
    /* The computer's turn: its intent (and its bounds) before the write, its job after. */
    bool engine_turn = c->engine_lease_ms && game_svc_engine_has_turn(r);
    const char *owner = w->rq && w->rq->client && w->rq->client[0] ? w->rq->client : NULL;
    store_engine_bound_t reached = STORE_ENGINE_BOUND_NONE;
    if (!trouble && engine_turn
        && (written = turn_intent(c, r, now, owner, &reached)) != STORE_OK)
        trouble = "the computer's turn could not be recorded";
    if (reached != STORE_ENGINE_BOUND_NONE) {
        free(kept);
        free(message);
        line_write_free(&lw);
        free(body);
        *status = turn_refused(c, reached, out);
        return SAVE_FAILED;
    }
    /* The game's deadline before the write, so that a replica's sweep ends
     * it on time with nobody reading it, and puts it on the feed if this
     * replica does not get to. */
    int64_t index_score = 0;
    if (!trouble && (written = lower_deadline(c, r, change->deadline_ms, now, &index_score)) != STORE_OK)
        trouble = "the game's deadline could not be recorded";
    /* A new game with subscriptions is known to the webhook sweep first
     * (store/webhooks.h, step 1). */
    if (!trouble && expected == 0 && r->webhooks[0] && (written = store_webhook_game_add(c->store, r->id)) != STORE_OK)
        trouble = "the game's webhooks could not be recorded";
    if (!trouble) {
        lw.store.state = state;
        lw.store.state_length = state_length;
        lw.store.seen = w->seen;
        lw.store.absent = change->absent;
        lw.store.absent_seen_ms = change->absent_seen_ms;
        lw.store.event = message;
        lw.store.event_length = message_length;
        written = store_write(c, g, expected, change, idem, &lw, kept, write_id, &current, &replay);
    }
    free(kept);
    free(message);
    line_write_free(&lw);
    if (trouble) {
        free(body);
        if (written == STORE_EFULL)
            count(c, GAME_SVC_COUNTER_STORE_FULL);
        *status = fail(out, written == STORE_OK      ? GAME_SVC_EINTERNAL
                            : written == STORE_EFULL ? GAME_SVC_EFULL
                                                     : GAME_SVC_EUNAVAILABLE,
                       trouble);
        return SAVE_FAILED;
    }
    if (written == STORE_OK) {
        if (game_is_over(&r->game)) /* failed: the deadline entry makes a sweep do it */
            (void)game_finished_record(c, r, index_score);
        if (engine_turn) { /* lost (no answer, a replica gone): the intent finds it again */
            store_engine_turn_t turn = { owner, engine_deadline(r, now) };
            (void)store_engine_turn_add(c->store, r->id, r->version, &turn, NULL);
        }
        memcpy(r->write_id, write_id, sizeof r->write_id);
        free(out->body);
        out->body = body;
        out->body_length = body_length;
        out->answer_status = answer_status;
        out->version = r->version;
        text_copy(out->location, sizeof out->location, location);
        game_cache_put(r);
        *status = GAME_SVC_OK;
        return SAVE_MADE;
    }
    free(body);
    game_cache_drop(r->id);
    switch (written) {
    case STORE_ELATE:
        *status = fail(out, GAME_SVC_EBUSY, "the game's clock moved on while the change was made; retry");
        return SAVE_LATE;
    case STORE_EREPLAY:
        *status = open_kept(idem->fingerprint, replay, out);
        free(replay);
        return SAVE_FAILED;
    case STORE_ECONFLICT: /* counted by the caller, if it is the answer */
        out->current_version = current;
        out->expected_version = expected;
        snprintf(out->detail, sizeof out->detail, "the game is at version %" PRIu64 ", not %" PRIu64, current,
                 expected);
        *status = GAME_SVC_ECONFLICT;
        return SAVE_STALE;
    case STORE_EFULL: count(c, GAME_SVC_COUNTER_STORE_FULL); break;
    case STORE_EUNKNOWN: count(c, GAME_SVC_COUNTER_OUTCOME_UNKNOWN); break;
    default: break;
    }
    *status = from_store(written);
    return written == STORE_ENOT_FOUND ? SAVE_STALE : SAVE_FAILED;
}

/* Records the fall of g's flag when it fell by g's load time (Redis's
 * clock): one write, nobody's request (no Idempotency-Key), publishing a
 * "timeout" event. SAVE_MADE also when the flag had not fallen (nothing to
 * write: *fell false). On SAVE_FAILED *status and out say why. */
static save_t record_flag(const game_svc_config_t *c, game_svc_game_t *g, bool *fell, game_svc_status_t *status,
                          game_svc_result_t *out)
{
    *fell = g->now_ms && game_flag(&g->record.game, g->now_ms);
    if (!*fell)
        return SAVE_MADE;
    /* A first-move grace that passed aborts the game: announced as an abort. */
    change_t change = { .op = STORE_LINE_KEEP,
                        .event = g->record.game.state == GAME_ABORTED ? "abort" : "timeout" };
    idem_t nobody = { 0 };
    writer_t w = { .idem = &nobody };
    game_svc_result_t written = { 0 };
    game_svc_status_t written_status;
    save_t saved = game_save(c, g, g->record.version, &change, &w, &written_status, &written);
    if (saved == SAVE_FAILED) {
        game_svc_result_free(out);
        *out = written;
        *status = written_status;
    } else {
        game_svc_result_free(&written);
    }
    return saved;
}

/* --- reads --- */

/* The tags and metadata of a full read, from the text loaded with it. */
static game_svc_status_t read_meta(game_svc_game_t *g, game_svc_result_t *out)
{
    if (!g->stored.meta)
        return GAME_SVC_OK;
    if (!(g->meta = game_meta_new()))
        return fail(out, GAME_SVC_EINTERNAL, "out of memory");
    return game_meta_read(g->meta, g->stored.meta, g->stored.meta_length) ? GAME_SVC_OK : GAME_SVC_EBAD_RECORD;
}

/* Any read that finds a flag fallen records the ending first (record_flag):
 * a compare-and-set like any change, so it happens once. A full read's tags
 * and metadata are read only here: a change (even one that loads in full,
 * an undo) never needs them. */
game_svc_status_t game_svc_read(const game_svc_config_t *c, const char *id, store_load_t what, game_svc_game_t *g,
                                game_svc_result_t *out)
{
    for (int attempt = 1;; attempt++) {
        game_svc_status_t status = load_id(c, id, what, g);
        if (status != GAME_SVC_OK)
            return status;
        bool fell;
        save_t saved = record_flag(c, g, &fell, &status, out);
        if (saved == SAVE_MADE)
            return what == STORE_LOAD_FULL ? read_meta(g, out) : GAME_SVC_OK;
        game_svc_game_free(g);
        if (saved == SAVE_FAILED)
            return status;
        if (attempt == CHANGE_ATTEMPTS) /* the game keeps changing under this read */
            return fail(out, GAME_SVC_EBUSY, "the game is changing too fast to be read; retry");
        game_svc_result_free(out);
    }
}

void game_svc_keep(const game_svc_config_t *c, const game_svc_game_t *g)
{
    if (g->legacy || game_is_timed(&g->record.game))
        return;
    game_cache_setup(c->game_cache_slots);
    game_cache_put(&g->record);
}

/* --- the version a change is made against --- */

/* The version a change is made against (*expected, the game's as loaded),
 * when the guards it was sent with pass on the game in g. */
static game_svc_status_t check_version(const game_svc_version_t *v, const game_record_t *r, uint64_t *expected,
                                       game_svc_result_t *out)
{
    uint64_t plies = (uint64_t)r->game.ply_count;
    switch (precondition_judge(v, r->version, plies, out->detail, sizeof out->detail)) {
    case PRECONDITION_OK: *expected = r->version; return GAME_SVC_OK;
    case PRECONDITION_REQUIRED: return GAME_SVC_EPRECONDITION_REQUIRED;
    case PRECONDITION_INVALID: return GAME_SVC_EINVALID;
    case PRECONDITION_CONFLICTING: return GAME_SVC_ECONFLICTING;
    case PRECONDITION_STALE:
        out->current_version = r->version;
        out->expected_version = v->expected;
        out->ply_known = true;
        out->current_ply = plies;
        return GAME_SVC_ECONFLICT;
    default: out->current_version = r->version; return GAME_SVC_EPRECONDITION;
    }
}

/* --- the changes --- */

/* rules/ refused a change to game. */
static game_svc_status_t refused(game_svc_result_t *out, const game_t *game, game_status_t status)
{
    out->refusal = status;
    out->takeback = game->takeback;
    return GAME_SVC_EREFUSED;
}

static game_svc_status_t apply_move(const game_svc_config_t *c, const game_svc_action_t *a, game_svc_game_t *g,
                                    color_t who, change_t *change, game_played_t *played, game_svc_result_t *out)
{
    game_t *game = &g->record.game;
    uint64_t key_before = game->pos.key;
    game_status_t status = game_move(game, who, a->move, strlen(a->move), (int)c->max_game_plies, g->now_ms, played);
    if (status == GAME_EILLEGAL_MOVE) {
        out->move_reason = played->reason;
        text_copy(out->move_message, sizeof out->move_message, played->message);
        out->move_text = a->move;
        out->move_index = game->ply_count;
        fen_format(&game->pos, out->move_fen, sizeof out->move_fen);
    }
    if (status != GAME_OK)
        return refused(out, game, status);
    /* The offer after the move, in the same change: moot once the move
     * ended the game, and already standing when the mover offered before
     * the first move of the game and has not been answered. */
    if (a->offer_draw && !game_is_over(game)) {
        status = game_draw(game, who, GAME_DRAW_OFFER, g->now_ms);
        if (status != GAME_OK && status != GAME_EDRAW_ALREADY_OFFERED)
            return fail(out, GAME_SVC_EINTERNAL, "the draw offer with the move was refused");
    }
    change->played = played;
    change->op = STORE_LINE_APPEND;
    change->key_before = key_before;
    change->event = "move";
    return GAME_SVC_OK;
}

/* An undo, or a takeback action: an undo or an accepted takeback cuts the
 * move list and history by the plies taken back. */
static game_svc_status_t apply_take_back(const game_svc_action_t *a, game_svc_game_t *g, color_t who,
                                         change_t *change, game_svc_result_t *out)
{
    static const char *const events[GAME_TAKEBACK_ACTION_COUNT] = { "takeback_offer", "takeback_accept",
                                                                     "takeback_decline" };
    game_t *game = &g->record.game;
    int plies = 1;
    game_status_t status;
    if (a->kind == GAME_SVC_UNDO) {
        status = game_undo(game, who, g->moves, g->moves_length, g->now_ms);
        change->event = "undo";
    } else {
        plies = 0;
        status = game_takeback(game, who, (game_takeback_action_t)a->action, g->moves, g->moves_length, g->now_ms,
                               &plies);
        change->event = events[a->action];
    }
    if (status != GAME_OK)
        return refused(out, game, status);
    if (plies > 0) { /* the move list loses its last entries and the space before them */
        change->op = STORE_LINE_TRUNCATE;
        change->moves_keep = game_line_keep(g->moves, g->moves_length, plies);
        if (a->kind == GAME_SVC_TAKEBACK)
            change->event = "takeback_accept";
    }
    return GAME_SVC_OK;
}

/* The changes that are one call of rules/ by the player and write no move:
 * resignation, abort, the draw actions, time given and the clocks
 * started, each with its event's name. */
static game_svc_status_t apply_ending(const game_svc_action_t *a, game_svc_game_t *g, color_t who,
                                      change_t *change, game_svc_result_t *out)
{
    static const char *const draw_events[GAME_DRAW_ACTION_COUNT] = { "draw_offer", "draw_accept", "draw_decline",
                                                                      "draw_claim" };
    game_t *game = &g->record.game;
    game_status_t status;
    if (a->kind == GAME_SVC_DRAW) {
        status = game_draw(game, who, (game_draw_action_t)a->action, g->now_ms);
        change->event = draw_events[a->action];
    } else if (a->kind == GAME_SVC_GIVE_TIME) {
        status = game_give_time(game, who, a->give_ms, g->now_ms);
        change->event = "give_time";
    } else if (a->kind == GAME_SVC_START_CLOCKS) {
        char hash[TOKENS_HASH_SIZE];
        if (!a->other_token || !tokens_hash(a->other_token, hash)
            || !tokens_hash_equal(hash, g->record.players[!who].token_hash))
            return fail(out, GAME_SVC_EFORBIDDEN, "starting the clocks takes both players' tokens");
        status = game_start_clocks(game, g->now_ms);
        change->event = "clock_start";
    } else {
        bool resign = a->kind == GAME_SVC_RESIGN;
        status = (resign ? game_resign : game_abort)(game, who, g->now_ms);
        change->event = resign ? "resign" : "abort";
    }
    return status == GAME_OK ? GAME_SVC_OK : refused(out, game, status);
}

/* When `opponent` has been gone since, for a claim (game_claim): their last
 * sign (0: none), or -1 while it is younger than presence_ms. */
static int64_t gone_since(const game_svc_config_t *c, const game_svc_game_t *g, color_t opponent)
{
    int64_t seen = g->stored.seen_ms[opponent];
    return seen && g->now_ms - seen < c->presence_ms ? -1 : seen;
}

/* A claim against the opponent gone on their turn, judged on their last
 * sign as loaded; the write is made only if it is still that sign. The
 * computer is always there: no claim in a game it plays. */
static game_svc_status_t apply_claim(const game_svc_config_t *c, const game_svc_action_t *a, game_svc_game_t *g,
                                     color_t who, change_t *change, game_svc_result_t *out)
{
    static const char *const events[GAME_CLAIM_COUNT] = { "claim_victory", "claim_draw" };
    game_t *game = &g->record.game;
    if ((unsigned)a->action >= GAME_CLAIM_COUNT)
        return fail(out, GAME_SVC_EINTERNAL, "no such claim");
    if (g->record.engine.plays && !game_is_over(game))
        return refused(out, game, GAME_ECLAIM_NOT_ALLOWED);
    color_t opponent = (color_t)!who;
    int64_t at = 0;
    game_status_t status = game_claim(game, who, (game_claim_t)a->action, gone_since(c, g, opponent),
                                      c->gone_after_ms, g->now_ms, &at);
    if (status != GAME_OK) {
        out->claim_in_ms = at > g->now_ms ? at - g->now_ms : 0;
        return refused(out, game, status);
    }
    change->event = events[a->action];
    change->absent = 1 + (int)opponent;
    change->absent_seen_ms = g->stored.seen_ms[opponent];
    return GAME_SVC_OK;
}

/* Applies action for player `who` to g at g->now_ms, filling *change. */
static game_svc_status_t apply(const game_svc_config_t *c, const game_svc_action_t *a, game_svc_game_t *g,
                               color_t who, change_t *change, game_played_t *played, game_svc_result_t *out)
{
    if (a->invalid)
        return fail(out, GAME_SVC_EINVALID, a->invalid);
    switch (a->kind) {
    case GAME_SVC_MOVE: return apply_move(c, a, g, who, change, played, out);
    case GAME_SVC_UNDO:
    case GAME_SVC_TAKEBACK: return apply_take_back(a, g, who, change, out);
    case GAME_SVC_RESIGN:
    case GAME_SVC_ABORT:
    case GAME_SVC_DRAW:
    case GAME_SVC_GIVE_TIME:
    case GAME_SVC_START_CLOCKS: return apply_ending(a, g, who, change, out);
    case GAME_SVC_CLAIM: return apply_claim(c, a, g, who, change, out);
    default: return fail(out, GAME_SVC_EINTERNAL, "no such change");
    }
}

/* What one attempt at a change came to. */
typedef enum {
    CHANGE_FINAL = 0, /* the status is the answer */
    CHANGE_REFUSED,   /* refused on g's content, nothing written: on a cached copy, judge again from the store */
    CHANGE_AGAIN,     /* nothing written, for a reason a fresh load clears (a flag or a change recorded meanwhile) */
} change_outcome_t;

/* A change by player `who` (whose keys live in idem->scope) on the loaded game g. */
static change_outcome_t change_by(const game_svc_config_t *c, const game_svc_request_t *rq,
                                  const game_svc_version_t *version, const game_svc_action_t *action,
                                  game_svc_game_t *g, color_t who, const idem_t *idem, game_svc_status_t *status,
                                  game_svc_result_t *out)
{
    uint64_t expected = 0;
    change_t change = { .op = STORE_LINE_KEEP };
    game_played_t played;
    change_outcome_t outcome = CHANGE_FINAL;
    bool fell = false;
    save_t flagged;
    game_svc_status_t answer = kept_answer(c, idem, out);
    if (answer != GAME_SVC_OK) {
        /* a kept answer */
    } else if ((flagged = record_flag(c, g, &fell, &answer, out)) != SAVE_MADE) {
        outcome = flagged == SAVE_FAILED ? CHANGE_FINAL : CHANGE_AGAIN;
        if (outcome == CHANGE_AGAIN) /* the answer if no attempt is left */
            answer = fail(out, GAME_SVC_EBUSY, "the game changed while its fallen flag was being recorded; retry");
    } else if (fell) {
        answer = fail(out, GAME_SVC_ETIMED_OUT,
                      g->record.game.state == GAME_ABORTED
                          ? "the first-move grace passed before this request: the game was aborted"
                          : "the flag fell before this request: the game is over on time");
    } else if ((answer = check_version(version, &g->record, &expected, out)) != GAME_SVC_OK) {
        /* A game over is over whatever version a change names: the change
         * was made for a game that another request, or a sweep on its
         * deadline, has ended since. */
        if (answer == GAME_SVC_ECONFLICT && game_is_over(&g->record.game))
            answer = refused(out, &g->record.game, GAME_EOVER);
        outcome = CHANGE_REFUSED;
    } else if (game_is_over(&g->record.game)) {
        answer = refused(out, &g->record.game, GAME_EOVER);
        outcome = CHANGE_REFUSED;
    } else {
        change.deadline_ms = game_flag_deadline(&g->record.game);
        if ((answer = apply(c, action, g, who, &change, &played, out)) != GAME_SVC_OK) {
            outcome = CHANGE_REFUSED;
        } else {
            writer_t w = { .idem = idem, .rq = rq, .seen = c->gone_after_ms ? 1 + (int)who : 0 };
            save_t saved = game_save(c, g, expected, &change, &w, &answer, out);
            if (saved == SAVE_MADE && change.played)
                count(c, GAME_SVC_COUNTER_MOVE_APPLIED);
            outcome = saved == SAVE_STALE ? CHANGE_REFUSED : saved == SAVE_LATE ? CHANGE_AGAIN : CHANGE_FINAL;
            /* Guarded by its ply, a move the game's version moved under is
             * judged again on the game as it is now: only a move in between
             * refuses it. */
            if (saved == SAVE_STALE && version->ply_given)
                outcome = CHANGE_AGAIN;
        }
    }
    /* A retry racing its own first attempt can see the version that attempt
     * made: its answer is the kept one, not a conflict. */
    if (idem->key && answer == GAME_SVC_ECONFLICT) {
        game_svc_result_t kept = { 0 };
        game_svc_status_t kept_status = kept_answer(c, idem, &kept);
        if (kept_status != GAME_SVC_OK) {
            game_svc_result_free(out);
            *out = kept;
            answer = kept_status;
            outcome = CHANGE_FINAL;
        } else {
            game_svc_result_free(&kept);
        }
    }
    if (outcome == CHANGE_AGAIN && answer == GAME_SVC_ECONFLICT) /* the answer if no attempt is left */
        answer = fail(out, GAME_SVC_EBUSY, "the game kept changing while this move was written; retry");
    *status = answer;
    return outcome;
}

/* The game for a change: the cached copy when there is one (*from_copy),
 * else the game as stored. A timed game is always read from the store,
 * which brings Redis's clock; a copy is judged on this replica's. */
static game_svc_status_t change_load(const game_svc_config_t *c, const char *id, store_load_t what, bool use_copy,
                                     game_svc_game_t *g, bool *from_copy)
{
    memset(g, 0, sizeof *g);
    game_cache_setup(c->game_cache_slots);
    *from_copy = use_copy && what == STORE_LOAD_CHANGE && tokens_is_id(id) && game_cache_get(id, &g->record)
                 && !game_is_timed(&g->record.game);
    /* A copy's time is this replica's: an idle end or a correspondence
     * deadline, days long, does not turn on the moments between clocks. */
    if (*from_copy)
        g->now_ms = now_ms();
    return *from_copy ? GAME_SVC_OK : load_id(c, id, what, g);
}

/* Which player token belongs to, with the token's HMAC in hash. */
static game_svc_status_t authenticate(const char *token, const game_record_t *r, char hash[TOKENS_HASH_SIZE],
                                      int *who, game_svc_result_t *out)
{
    *who = -1;
    if (!token || !*token)
        return GAME_SVC_EUNAUTHORIZED;
    if (!tokens_hash(token, hash)) /* one HMAC, compared with both players' */
        return fail(out, GAME_SVC_EINTERNAL, "the token cannot be checked now");
    for (int c = 0; c < COLOR_COUNT; c++)
        if (tokens_hash_equal(hash, r->players[c].token_hash))
            *who = c;
    return *who < 0 ? GAME_SVC_EFORBIDDEN : GAME_SVC_OK;
}

bool game_svc_is_player(const game_record_t *r, const char *token)
{
    char hash[TOKENS_HASH_SIZE];
    int who;
    game_svc_result_t out = { 0 };
    bool player = authenticate(token, r, hash, &who, &out) == GAME_SVC_OK;
    game_svc_result_free(&out);
    return player;
}

game_svc_status_t game_svc_change(const game_svc_config_t *c, const char *id, const char *token,
                                  const game_svc_request_t *rq, const game_svc_version_t *version,
                                  const game_svc_action_t *action, game_svc_result_t *out)
{
    store_load_t what = action->kind == GAME_SVC_UNDO || action->kind == GAME_SVC_TAKEBACK ? STORE_LOAD_FULL
                                                                                          : STORE_LOAD_CHANGE;
    idem_t idem = { .key = rq->key, .fingerprint = rq->fingerprint };
    game_svc_game_t g;
    bool from_copy, use_copy = action->kind != GAME_SVC_CLAIM; /* a copy holds no one's presence */
    game_svc_status_t status;
    for (int attempt = 1; (status = change_load(c, id, what, use_copy, &g, &from_copy)) == GAME_SVC_OK; attempt++) {
        /* Only a player of this game may see a kept answer, and only their
         * own: the token is checked before a retry is answered from it.
         * Refused on a copy, even for the token, the answer is the stored
         * game's: the game may be gone (expired) since the copy was made. */
        char caller[TOKENS_HASH_SIZE];
        int who;
        change_outcome_t outcome = from_copy ? CHANGE_REFUSED : CHANGE_FINAL;
        status = authenticate(token, &g.record, caller, &who, out);
        if (status == GAME_SVC_OK) {
            const char *scope[] = { "{", g.record.id, "}:", caller };
            text_join(idem.scope, sizeof idem.scope, scope, 4);
            outcome = change_by(c, rq, version, action, &g, (color_t)who, &idem, &status, out);
        }
        game_svc_game_free(&g);
        if (outcome == CHANGE_FINAL || (outcome == CHANGE_REFUSED && !from_copy) || attempt == CHANGE_ATTEMPTS)
            break;
        /* Refused on a copy, or to be redone: judged again on the game as stored. */
        game_cache_drop(id);
        game_svc_result_free(out);
        use_copy = false;
    }
    game_svc_game_free(&g);
    if (status == GAME_SVC_ECONFLICT)
        count(c, GAME_SVC_COUNTER_VERSION_CONFLICT);
    return status;
}

/* --- the computer's turn --- */

/* Whether the person's takeback offer stands in r, the computer's to answer. */
static bool takeback_offered_to_engine(const game_record_t *r)
{
    game_offer_t other = r->engine.color == WHITE ? GAME_OFFER_BLACK : GAME_OFFER_WHITE;
    return r->engine.plays && r->game.state == GAME_ACTIVE && r->game.takeback_offer == other;
}

bool game_svc_engine_has_turn(const game_record_t *r)
{
    return game_record_engine_to_move(r) || takeback_offered_to_engine(r);
}

game_svc_status_t game_svc_engine_turn(const game_svc_config_t *c, const char *id, uint64_t version,
                                       game_svc_choose_fn choose, void *ctx, game_svc_result_t *out)
{
    game_svc_game_t g;
    bool from_copy;
    char uci[UCI_BUFFER_SIZE];
    game_svc_action_t action = { .kind = GAME_SVC_TAKEBACK, .action = GAME_TAKEBACK_ACCEPT };
    game_svc_status_t status = change_load(c, id, STORE_LOAD_FULL, false, &g, &from_copy);
    if (status == GAME_SVC_OK && (g.record.version != version || !game_svc_engine_has_turn(&g.record)))
        status = GAME_SVC_ECONFLICT;
    /* An offer made while the computer was to move (the person's move
     * still unanswered) is accepted, not passed over by a move. */
    if (status == GAME_SVC_OK && !takeback_offered_to_engine(&g.record) && game_record_engine_to_move(&g.record)) {
        /* The think may take long: the move is then judged on a fresh load,
         * at Redis's time of the write. */
        if (!choose(ctx, &g.record, g.moves, g.moves_length, g.now_ms, uci))
            status = fail(out, GAME_SVC_EBUSY, "the engine gave no move");
        action = (game_svc_action_t){ .kind = GAME_SVC_MOVE, .move = uci };
        game_svc_game_free(&g);
        if (status == GAME_SVC_OK)
            status = change_load(c, id, STORE_LOAD_CHANGE, false, &g, &from_copy);
    }
    const game_svc_version_t expected = { .given = true, .expected = version };
    const game_svc_request_t rq = { .fingerprint = "", .answer_status = 200 };
    idem_t idem = { .key = NULL, .fingerprint = "" };
    snprintf(idem.scope, sizeof idem.scope, "{%s}:engine", id);
    for (int attempt = 1; status == GAME_SVC_OK; attempt++) {
        color_t engine = g.record.engine.color;
        change_outcome_t outcome = change_by(c, &rq, &expected, &action, &g, engine, &idem, &status, out);
        game_svc_game_free(&g);
        if (outcome != CHANGE_AGAIN || attempt == CHANGE_ATTEMPTS)
            break;
        game_svc_result_free(out);
        status = change_load(c, id, action.kind == GAME_SVC_MOVE ? STORE_LOAD_CHANGE : STORE_LOAD_FULL, false, &g,
                             &from_copy);
    }
    game_svc_game_free(&g);
    if (status == GAME_SVC_EREFUSED && out->refusal == GAME_EOVER)
        status = GAME_SVC_ECONFLICT; /* ended meanwhile */
    if (status == GAME_SVC_EDAMAGED)
        status = GAME_SVC_EBAD_RECORD; /* no turn can be played in it: its job is dropped as an unreadable game's */
    return status;
}

/* --- a new game --- */

game_svc_status_t game_svc_kept(const game_svc_config_t *c, const char *scope, const game_svc_request_t *rq,
                                game_svc_result_t *out)
{
    idem_t idem = { .key = rq->key, .fingerprint = rq->fingerprint };
    snprintf(idem.scope, sizeof idem.scope, "%s", scope);
    return kept_answer(c, &idem, out);
}

game_svc_status_t game_svc_created_before(const game_svc_config_t *c, const game_svc_request_t *rq,
                                          game_svc_result_t *out)
{
    return game_svc_kept(c, creation_scope, rq, out);
}

game_svc_status_t game_svc_open_kept(const char *fingerprint, const char *sealed, game_svc_result_t *out)
{
    return open_kept(fingerprint, sealed, out);
}

/* Gives a new game spec's clock (or days a move), first-move grace, start
 * time, rules and takeback policy, its first turn starting at now; false
 * when one is out of its bounds (the caller checked them all). */
static bool set_clock_and_rules(const game_svc_config_t *c, const game_svc_new_t *spec, game_t *g, int64_t now)
{
    bool timed = spec->controls[WHITE].period_count > 0;
    if (!(timed ? game_set_controls(g, &spec->controls[WHITE], &spec->controls[BLACK])
                : game_set_rules(g, 0, 0, spec->takeback))
        || !game_set_first_move(g, timed ? spec->first_move_ms : 0, now)
        || (spec->start_at_ms && !game_set_start_at(g, spec->start_at_ms))
        || (spec->days_per_move && !game_set_correspondence(g, spec->days_per_move, c->day_ms, now))
        || !game_set_game_rules(g, &spec->rules))
        return false;
    g->takeback = spec->takeback;
    apply_settings(c, g, now);
    return true;
}

/* Sets up g as the new game of spec, with a new id and the players' tokens. */
static game_svc_status_t new_game(const game_svc_config_t *c, const game_svc_new_t *spec, game_svc_game_t *g,
                                  char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE], game_svc_result_t *out)
{
    game_record_t *r = &g->record;
    for (int side = 0; side < COLOR_COUNT; side++)
        memcpy(r->players[side].name, spec->names[side], sizeof r->players[side].name);
    game_start(&r->game, &spec->start);
    r->created_at_ms = now_ms();
    if (!set_clock_and_rules(c, spec, &r->game, r->created_at_ms))
        return fail(out, GAME_SVC_EINTERNAL, "the clock or the rules are out of their bounds");
    if (!tokens_new_id(r->id))
        return fail(out, GAME_SVC_EINTERNAL, "no randomness for an id");
    for (int side = 0; side < COLOR_COUNT; side++)
        if (!tokens_new_token(tokens[side]) || !tokens_hash(tokens[side], r->players[side].token_hash))
            return fail(out, GAME_SVC_EINTERNAL, "no randomness for a token");
    r->engine = spec->engine;
    r->analysis = spec->analysis;
    memcpy(r->webhooks, spec->webhooks, sizeof r->webhooks);
    r->spectator_delay_plies = spec->spectator_delay_plies >= 0 ? spec->spectator_delay_plies : c->spectator_delay_plies;
    return GAME_SVC_OK;
}

/* g's tags and metadata: the creation's, then an imported PGN's tags the
 * creation does not give (imported NULL: none), as long as they fit, and
 * its notes. */
static game_svc_status_t new_meta(const game_svc_new_t *spec, const game_import_t *imported, game_svc_game_t *g,
                                  game_svc_result_t *out)
{
    if (game_meta_empty(spec->meta) && (!imported || game_meta_empty(&imported->tags)))
        return GAME_SVC_OK;
    if (!(g->meta = game_meta_new()) || (spec->meta && !game_meta_copy(g->meta, spec->meta)))
        return fail(out, GAME_SVC_EINTERNAL, "out of memory");
    if (imported)
        game_meta_merge(g->meta, &imported->tags);
    if (imported && imported->tags.notes
        && !game_meta_set_notes(g->meta, imported->tags.notes, imported->tags.notes_length))
        return fail(out, GAME_SVC_EINTERNAL, "out of memory");
    return GAME_SVC_OK;
}

/* g's game from the PGN of spec, and the change that stores its moves. */
static game_svc_status_t import_pgn(const game_svc_config_t *c, const game_svc_new_t *spec, game_svc_game_t *g,
                                    game_import_t *p, change_t *change, game_svc_result_t *out)
{
    int max_plies = c->max_game_plies < GAME_MAX_PLIES ? (int)c->max_game_plies : GAME_MAX_PLIES;
    switch (game_import_pgn(spec->pgn, spec->pgn_length, max_plies, &g->record, p, &out->pgn)) {
    case GAME_IMPORT_OK: break;
    case GAME_IMPORT_EPGN: return GAME_SVC_EPGN;
    case GAME_IMPORT_ENOTES: return GAME_SVC_ENOTES_TOO_LARGE;
    case GAME_IMPORT_ECLOCK: return fail(out, GAME_SVC_EINTERNAL, "the imported game does not take the clock");
    default: return fail(out, GAME_SVC_EINTERNAL, "out of memory");
    }
    g->moves = p->moves.data ? p->moves.data : "";
    g->moves_length = p->moves.length;
    change->op = STORE_LINE_SET;
    change->line = g->moves;
    change->line_length = g->moves_length;
    change->history = p->history.data ? p->history.data : "";
    change->history_length = p->history.length;
    return GAME_SVC_OK;
}

game_svc_status_t game_svc_prepare(const game_svc_config_t *c, const game_svc_new_t *spec, game_svc_game_t *g,
                                   char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE], game_svc_result_t *out)
{
    memset(g, 0, sizeof *g);
    game_svc_status_t status = new_game(c, spec, g, tokens, out);
    return status == GAME_SVC_OK ? new_meta(spec, NULL, g, out) : status;
}

static bool id_in_slot(const char *id, void *slot) { return store_id_slot(id) == *(unsigned *)slot; }

/* A creation under an Idempotency-Key writes its game and the key's record in
 * one step, so on a Redis Cluster both must live in one hash slot: the new
 * id is drawn in the record's slot (store.h). */
static game_svc_status_t id_for_key(const idem_t *idem, game_svc_game_t *g, game_svc_result_t *out)
{
    if (!idem->key)
        return GAME_SVC_OK;
    unsigned slot = store_idempotency_slot(idem->scope, idem->key);
    if (!store_id_fit_slot(g->record.id, tokens_id_alphabet(), slot)
        && !tokens_new_id_where(g->record.id, id_in_slot, &slot))
        return fail(out, GAME_SVC_EINTERNAL, "no randomness for an id");
    return GAME_SVC_OK;
}

game_svc_status_t game_svc_create(const game_svc_config_t *c, const game_svc_request_t *rq,
                                  const game_svc_new_t *spec, game_svc_result_t *out)
{
    idem_t idem = { .key = rq->key, .fingerprint = rq->fingerprint };
    snprintf(idem.scope, sizeof idem.scope, "%s", creation_scope);
    game_svc_game_t g;
    memset(&g, 0, sizeof g);
    char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE];
    /* The computer's side gets a token no one is told (no one may move for it). */
    const char *const token_list[COLOR_COUNT] = {
        spec->engine.plays && spec->engine.color == WHITE ? NULL : tokens[WHITE],
        spec->engine.plays && spec->engine.color == BLACK ? NULL : tokens[BLACK],
    };
    change_t change = { .op = STORE_LINE_KEEP };
    game_import_t *imported = spec->pgn ? calloc(1, sizeof *imported) : NULL; /* a game_t and two buffers */
    game_svc_status_t status = spec->pgn && !imported ? fail(out, GAME_SVC_EINTERNAL, "out of memory")
                                                      : new_game(c, spec, &g, tokens, out);
    if (status == GAME_SVC_OK && imported)
        status = import_pgn(c, spec, &g, imported, &change, out);
    if (status == GAME_SVC_OK)
        status = new_meta(spec, imported, &g, out);
    if (status == GAME_SVC_OK)
        status = id_for_key(&idem, &g, out);
    if (status == GAME_SVC_OK && spec->on_id && !spec->on_id(spec->on_id_ctx, g.record.id))
        status = fail(out, GAME_SVC_EUNAVAILABLE, "the game's webhook subscriptions could not be recorded");
    if (status == GAME_SVC_OK) {
        writer_t w = { .idem = &idem, .rq = rq, .tokens = token_list, .answer_webhooks = spec->answer_webhooks };
        (void)game_save(c, &g, 0, &change, &w, &status, out);
    }
    game_import_free(imported);
    free(imported);
    game_svc_game_free(&g);
    return status;
}

/* --- a bulk's organiser --- */

/* The organiser's change to one game: its clocks started or the game
 * cancelled, at Redis's time; dry_run only judges it. */
static game_svc_status_t organize_once(const game_svc_config_t *c, game_svc_game_t *g,
                                       game_svc_bulk_action_t action, bool dry_run, save_t *saved,
                                       game_svc_result_t *out)
{
    bool fell = false;
    game_svc_status_t status = GAME_SVC_OK;
    if ((*saved = record_flag(c, g, &fell, &status, out)) != SAVE_MADE)
        return status;
    game_t *game = &g->record.game;
    change_t change = { .op = STORE_LINE_KEEP, .deadline_ms = game_flag_deadline(game) };
    game_status_t done = game_is_over(game)                  ? GAME_EOVER
                         : action == GAME_SVC_BULK_START_CLOCKS ? game_start_clocks(game, g->now_ms)
                                                               : game_cancel(game, g->now_ms);
    if (done != GAME_OK)
        return refused(out, game, done);
    if (dry_run)
        return GAME_SVC_OK;
    change.event = action == GAME_SVC_BULK_START_CLOCKS ? "clock_start" : "abort";
    idem_t idem = { 0 };
    writer_t w = { .idem = &idem };
    *saved = game_save(c, g, g->record.version, &change, &w, &status, out);
    return status;
}

game_svc_status_t game_svc_organize(const game_svc_config_t *c, const char *id, const char *bulk,
                                    game_svc_bulk_action_t action, bool dry_run, game_svc_result_t *out)
{
    game_svc_status_t status = GAME_SVC_EBUSY;
    for (int attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
        game_svc_game_t g;
        save_t saved = SAVE_FAILED;
        status = load_id(c, id, STORE_LOAD_CHANGE, &g);
        if (status == GAME_SVC_OK && strcmp(g.record.bulk, bulk))
            status = fail(out, GAME_SVC_EFORBIDDEN, "the game is not one of this bulk's");
        else if (status == GAME_SVC_OK)
            status = organize_once(c, &g, action, dry_run, &saved, out);
        game_svc_game_free(&g);
        if (saved != SAVE_STALE && saved != SAVE_LATE)
            break;
        game_cache_drop(id);
        game_svc_result_free(out);
        status = fail(out, GAME_SVC_EBUSY, "the game kept changing; retry");
    }
    return status;
}

/* --- the event hub's reads --- */

static void event_meta(const game_svc_game_t *g, const char *type, game_event_meta_t *meta)
{
    memset(meta, 0, sizeof *meta);
    meta->version = g->record.version;
    meta->ended = game_is_over(&g->record.game);
    meta->at_ms = g->now_ms;
    meta->deadline_ms = game_flag_deadline(&g->record.game);
    snprintf(meta->type, sizeof meta->type, "%s", type);
}

/* The game's event snapshot of g (as it is: live or a view) onto out. */
static game_svc_status_t snapshot_json(const game_svc_game_t *g, buf_t *out)
{
    size_t length = 0;
    char *json = game_json_game(&g->record, g->meta, g->moves, g->moves_length, g->now_ms, GAME_JSON_EVENT, NULL,
                                &length);
    if (!json)
        return GAME_SVC_EINTERNAL;
    buf_append(out, json, length);
    free(json);
    return GAME_SVC_OK;
}

/* What a view shows: FNV-1a of its moves (with their clocks) and its ply count. */
static uint64_t view_sig(const game_svc_game_t *g)
{
    uint64_t h = UINT64_C(1469598103934665603) ^ (uint64_t)g->record.game.ply_count;
    for (size_t i = 0; g->moves && i < g->moves_length; i++)
        h = (h ^ (unsigned char)g->moves[i]) * UINT64_C(1099511628211);
    return h | 1; /* never 0: a stream's "nothing shown yet" */
}

game_svc_status_t game_svc_snapshot(const game_svc_config_t *c, const char *id, buf_t *out,
                                    game_event_meta_t *meta)
{
    game_svc_game_t g;
    game_svc_result_t result = { 0 };
    game_svc_status_t status = game_svc_read(c, id, STORE_LOAD_FULL, &g, &result);
    if (status == GAME_SVC_OK) {
        event_meta(&g, "game", meta);
        status = snapshot_json(&g, out);
    }
    game_svc_result_free(&result);
    game_svc_game_free(&g);
    return status;
}

game_svc_status_t game_svc_snapshot_views(const game_svc_config_t *c, const char *id, buf_t *out, buf_t *view_out,
                                          game_event_meta_t *meta, game_svc_view_t *view)
{
    game_svc_game_t g;
    game_svc_result_t result = { 0 };
    game_svc_status_t status = game_svc_read(c, id, STORE_LOAD_FULL, &g, &result);
    memset(view, 0, sizeof *view);
    if (status == GAME_SVC_OK) {
        event_meta(&g, "game", meta);
        status = snapshot_json(&g, out);
        view->live = spectator_sees_live(&g.record, false, false);
    }
    if (status == GAME_SVC_OK && !view->live && view_out && (status = spectator_view(&g)) == GAME_SVC_OK) {
        view->sig = view_sig(&g);
        status = snapshot_json(&g, view_out);
    }
    game_svc_result_free(&result);
    game_svc_game_free(&g);
    return status;
}

game_svc_status_t game_svc_snapshot_for(const game_svc_config_t *c, const char *id, const char *token, bool live_key,
                                        buf_t *out, game_event_meta_t *meta, int *player, game_svc_view_t *view)
{
    game_svc_game_t g;
    game_svc_result_t result = { 0 };
    game_svc_status_t status = game_svc_read(c, id, STORE_LOAD_FULL, &g, &result);
    *player = 0;
    memset(view, 0, sizeof *view);
    if (status == GAME_SVC_OK && token) {
        char hash[TOKENS_HASH_SIZE];
        int who;
        if ((status = authenticate(token, &g.record, hash, &who, &result)) == GAME_SVC_OK)
            *player = 1 + who;
    }
    if (status == GAME_SVC_OK) {
        event_meta(&g, "game", meta);
        view->live = spectator_sees_live(&g.record, *player != 0, live_key);
        if (!view->live && (status = spectator_view(&g)) == GAME_SVC_OK)
            view->sig = view_sig(&g);
    }
    if (status == GAME_SVC_OK)
        status = snapshot_json(&g, out);
    game_svc_result_free(&result);
    game_svc_game_free(&g);
    return status;
}

game_svc_status_t game_svc_check_flag(const game_svc_config_t *c, const char *id, game_event_meta_t *meta)
{
    game_svc_game_t g;
    game_svc_result_t result = { 0 };
    game_svc_status_t status = game_svc_read(c, id, STORE_LOAD_CHANGE, &g, &result);
    if (status == GAME_SVC_OK)
        event_meta(&g, "change", meta);
    game_svc_result_free(&result);
    game_svc_game_free(&g);
    return status;
}

/* Whether the streams of `watcher` are told that their opponent is gone,
 * and in how long a claim is possible: the opponent absent on their turn
 * where a claim applies, and their flag not falling before it. */
static void judge_presence(const game_svc_config_t *c, const game_svc_game_t *g, color_t watcher,
                           game_svc_presence_t *out)
{
    const game_t *game = &g->record.game;
    out->gone[watcher] = false;
    out->claim_in_ms[watcher] = 0;
    int64_t at = 0, flag = game_flag_deadline(game);
    if (g->record.engine.plays
        || game_claim_at(game, watcher, GAME_CLAIM_DRAW, gone_since(c, g, (color_t)!watcher), c->gone_after_ms, &at)
               != GAME_OK
        || (game_is_timed(game) && flag && flag <= at))
        return;
    out->gone[watcher] = true;
    out->claim_in_ms[watcher] = at > g->now_ms ? at - g->now_ms : 0;
}

game_svc_status_t game_svc_presence(const game_svc_config_t *c, const char *id, unsigned players,
                                    game_svc_presence_t *out)
{
    memset(out, 0, sizeof *out);
    if (!c->gone_after_ms)
        return GAME_SVC_OK;
    game_svc_game_t g;
    game_svc_status_t status = load_marking(c, id, STORE_LOAD_CHANGE, players & 3u, &g);
    if (status == GAME_SVC_OK && !g.legacy)
        for (int watcher = 0; watcher < COLOR_COUNT; watcher++)
            if (players & (1u << watcher))
                judge_presence(c, &g, (color_t)watcher, out);
    game_svc_game_free(&g);
    return status;
}
