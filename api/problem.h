/* API outcomes and their RFC 9457 problem+json form. api_status_t is the one
 * list of what can go wrong at the HTTP layer; problem.c is the one place
 * that maps it to HTTP status codes, titles and stable `code` strings. */
#ifndef CHESSD_API_PROBLEM_H
#define CHESSD_API_PROBLEM_H

#include "../rules/game.h"
#include "../rules/pgn_read.h"
#include "../rules/rules.h"
#include "../store/store.h"
#include "http/request.h"
#include "http/jsonw.h"

typedef enum {
    API_OK = 0,
    API_EBAD_REQUEST,
    API_EINVALID_JSON,
    API_EINVALID_FIELD,
    API_EUNKNOWN_FIELD,
    API_EINVALID_PARAMETER,
    API_EUNKNOWN_PARAMETER,
    API_EINVALID_FEN,
    API_EINVALID_MOVE_TEXT,
    API_EILLEGAL_MOVE,
    API_EAMBIGUOUS_MOVE,
    API_ETOO_MANY_MOVES,
    API_EPAYLOAD_TOO_LARGE,
    API_EUNSUPPORTED_MEDIA_TYPE,
    API_ENOT_FOUND,
    API_EMETHOD_NOT_ALLOWED,
    API_EPERFT_DEPTH_TOO_LARGE,
    API_EPERFT_TOO_LARGE,
    API_EUNAUTHORIZED,
    API_EFORBIDDEN,
    API_ENOT_YOUR_TURN,
    API_EGAME_NOT_FOUND,
    API_EGAMES_DISABLED,
    API_EVERSION_CONFLICT,
    API_EGAME_OVER,
    API_ENOTHING_TO_UNDO,
    API_ENO_DRAW_OFFER,
    API_EDRAW_NOT_CLAIMABLE,
    API_EPRECONDITION_FAILED,
    API_EPRECONDITION_REQUIRED,
    API_EIDEMPOTENCY_KEY_REUSED,
    API_EWEAK_IDEMPOTENCY_KEY,
    API_EDRAW_ALREADY_OFFERED,
    API_EGAME_TOO_LONG,
    API_ERATE_LIMITED,
    API_ETOO_MANY_STREAMS,
    API_EUNAVAILABLE,
    API_ESTORE_UNAVAILABLE,
    API_EOUTCOME_UNKNOWN,
    API_ESTORE_FULL,
    API_EGAME_DAMAGED,
    API_ESTORE_MAY_EVICT,
    API_ETAKEBACK_NOT_ALLOWED,
    API_ETAKEBACK_ALREADY_OFFERED,
    API_ENO_TAKEBACK_OFFER,
    API_EABORT_TOO_LATE,
    API_EABORT_NOT_ALLOWED,
    API_EDRAW_TOO_EARLY,
    API_EGIVE_TIME_NOT_ALLOWED,
    API_EGIVE_TIME_TOO_MUCH,
    API_ENO_CLOCK,
    API_ECLOCK_RUNNING,
    API_EINVALID_CHESS960_POSITION,
    API_ECONFLICTING_FIELDS,
    API_EINVALID_VARIANT,
    API_EVARIANT_NOT_SUPPORTED_BY_ENGINE,
    API_EINVALID_PGN,
    API_EPGN_TOO_LARGE,
    API_EPGN_RESULT_MISMATCH,
    API_EANALYSIS_LIMIT_TOO_LARGE,
    API_EANALYSIS_NOT_ALLOWED,
    API_EENGINE_UNAVAILABLE,
    API_EENGINE_BUSY,
    API_ETOO_MANY_ENGINE_TURNS,
    API_ETOO_MANY_ANALYSES,
    API_EENGINE_FAILED,
    API_EREVIEW_NOT_ALLOWED,
    API_EREVIEW_NOT_FOUND,
    API_EREVIEW_TOO_LONG,
    API_ESTREAM_NOT_FOUND,
    API_ETOO_MANY_IDS,
    API_EBUFFERS_FULL,
    API_ETOO_MANY_EXPORTS,
    API_EINVALID_TAG,
    API_ETOO_MANY_TAGS,
    API_EINVALID_METADATA,
    API_EMETADATA_TOO_LARGE,
    API_EBULK_NOT_FOUND,
    API_EBULK_TOO_LARGE,
    API_EBULK_STARTED,
    API_ECORS_REFUSED,
    API_ECLAIM_NOT_ALLOWED,
    API_EOPPONENT_NOT_GONE,
    API_ESERVICE_KEY_REQUIRED,
    API_EINVALID_SERVICE_KEY,
    API_ESCOPE_MISSING,
    API_EWEBHOOKS_DISABLED,
    API_EWEBHOOK_DESTINATION_REFUSED,
    API_ETOO_MANY_WEBHOOKS,
    API_EWEBHOOK_NOT_FOUND,
    API_EINTERNAL,
    API_STATUS_COUNT
} api_status_t;

/* Stable machine-readable code, e.g. "illegal_move". */
const char *api_status_code(api_status_t status);
/* The HTTP status code for an outcome. */
unsigned api_status_http(api_status_t status);

/* Extra members for a problem document, written by the caller into w (inside
 * the open object). */
typedef void (*api_problem_extra_fn)(jsonw_t *w, const void *ctx);

/* Fills res with a problem+json document for status, with `detail` and, when
 * extra is not NULL, the members it writes. */
void api_problem(api_response_t *res, api_status_t status, const char *detail, api_problem_extra_fn extra,
                 const void *ctx);

/* The API outcome for a refused move: invalid_move_text, ambiguous_move or illegal_move. */
api_status_t api_status_for_reason(legality_reason_t reason);

/* An invalid_fen problem with its fen_error code. */
void api_problem_fen(api_response_t *res, fen_error_t error, const char *message);

/* A problem about the move at zero-based `index` (text `move`: in a list of
 * moves, its place; in a game, its ply) tried in position `fen`, carrying the
 * rules core's reason code. The detail names the move as a chess player would,
 * by the move number and side from `fen`: "2. Ke3: ...", "2... Nf6: ...". */
void api_problem_move(api_response_t *res, api_status_t status, const char *message, int index, const char *move,
                      legality_reason_t reason, const char *fen);

/* A PGN that cannot be read or played (see rules/pgn_read.h): invalid_pgn,
 * pgn_too_large, pgn_result_mismatch, or for a mainline move the move
 * API's illegal_move, ambiguous_move or invalid_move_text; each with the
 * game's index (0-based), line and column (1-based) and pgn_error. */
void api_problem_pgn(api_response_t *res, const pgn_read_error_t *error);
/* The creation's PGN has more notes than a game keeps (limit bytes):
 * pgn_too_large, its pgn_error notes_too_large. */
void api_problem_pgn_notes(api_response_t *res, size_t limit);
/* The status such an error answers, and its members (line, column,
 * pgn_error, the move's when it is one, its path in the tree) in a JSON
 * object: POST /v1/pgn's per-game errors. */
api_status_t api_pgn_status(const pgn_read_error_t *error);
void api_pgn_error_fields(jsonw_t *w, const pgn_read_error_t *error);

/* A refused game operation (not GAME_OK; an illegal move goes through
 * api_problem_move), with its fixed detail. */
void api_problem_game(api_response_t *res, game_status_t status);

/* A store failure (not STORE_OK; conflicts and replays are the caller's).
 * For STORE_EUNAVAILABLE, store (may be NULL) is asked what is wrong
 * (store_health): the problem then names the fault in its detail and in a
 * `store_fault` member, without the node or any secret. */
void api_problem_store(api_response_t *res, store_status_t status, store_t *store);

/* A version_conflict problem with detail, carrying current_version and,
 * when known (not negative), current_ply: the game's plies played. */
void api_problem_conflict(api_response_t *res, const char *detail, uint64_t current_version, int64_t current_ply);
/* 412 precondition_failed with the detail given and current_version (the
 * member api_problem_conflict's 409 has). */
void api_problem_precondition(api_response_t *res, const char *detail, uint64_t current);
/* A problem about a bound passed, naming it: members `limit` (the bound's
 * name: a field, or the setting) and `max`. */
void api_problem_limit(api_response_t *res, api_status_t status, const char *detail, const char *limit,
                       unsigned long long max);
/* 400 invalid_tag with the detail given and member `tag`: the tag's name
 * as sent, cut to 64 bytes between characters. */
void api_problem_tag(api_response_t *res, const char *detail, const char *name);
/* A service key refused for a route (401 service_key_required, 401
 * invalid_service_key, 403 scope_missing) with the detail given and member
 * `scope`: the scope the route needs (NULL: none). */
void api_problem_scope(api_response_t *res, api_status_t status, const char *detail, const char *scope);
/* 401 invalid_service_key: a key's form that no line of --service-keys-file has. */
void api_problem_key_unknown(api_response_t *res);
/* A problem about a quota spent, a 429: api_problem_limit's members and
 * retry_after_s, the seconds to wait (at least 1), which the detail ends
 * with and Retry-After carries. */
void api_problem_quota(api_response_t *res, api_status_t status, const char *detail, const char *limit,
                       unsigned long long max, unsigned retry_after);

#endif
