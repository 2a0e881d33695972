/* Tests for api/game/idempotency.c, against idempotency.h's protocol: which
 * Idempotency-Keys are accepted and why one is refused, and the request
 * fingerprint, which any one part of a request changes. A kept answer opens
 * whole for the same request only, and never once altered. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../api/game/idempotency.h"
#include "../../../api/game/tokens.h"
#include "../../support/tests.h"

/* Sealing needs a token secret: one is set unless an earlier suite has, and
 * nothing here depends on which. */
static int suite_init(void)
{
    if (!tokens_ready())
        tokens_init("idempotency suite secret: 32 bytes and more, for sealing");
    return tokens_ready() ? 0 : 1;
}

/* --- keys --- */

/* Checks a key; returns the kind, with the detail in detail (cleared first). */
static idem_key_check_t check_key(const char *key, bool creation, char detail[256])
{
    detail[0] = '\0';
    return idem_check_key(key, creation, detail, 256);
}

static void test_a_game_key_of_1_to_255_characters_of_any_kind_is_accepted(void)
{
    char key[IDEM_KEY_MAX + 1], detail[256];
    for (size_t length = 1; length <= IDEM_KEY_MAX; length++) {
        /* every byte value but NUL, control characters, spaces and non-ASCII included */
        for (size_t i = 0; i < length; i++)
            key[i] = (char)(1 + (length + i) % 255);
        key[length] = '\0';
        CU_ASSERT_EQUAL(check_key(key, false, detail), IDEM_KEY_OK);
    }
    CU_ASSERT_EQUAL(check_key("a", false, detail), IDEM_KEY_OK);
    CU_ASSERT_EQUAL(check_key("retry #1 / \"quoted\"", false, detail), IDEM_KEY_OK);
}

static void test_an_empty_or_overlong_game_key_is_invalid_and_the_detail_gives_the_lengths(void)
{
    char key[IDEM_KEY_MAX + 2], detail[256];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0'; /* 256 characters */
    CU_ASSERT_EQUAL(check_key(key, false, detail), IDEM_KEY_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "1 to 255"));
    CU_ASSERT_EQUAL(check_key("", false, detail), IDEM_KEY_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "1 to 255"));
}

static void test_a_creation_key_of_22_to_255_base64url_characters_is_accepted(void)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char key[IDEM_KEY_MAX + 1], detail[256];
    for (size_t length = IDEM_CREATION_KEY_MIN; length <= IDEM_KEY_MAX; length++) {
        for (size_t i = 0; i < length; i++)
            key[i] = alphabet[(length * 7 + i) % 64];
        key[length] = '\0';
        CU_ASSERT_EQUAL(check_key(key, true, detail), IDEM_KEY_OK);
    }
    CU_ASSERT_EQUAL(check_key(alphabet, true, detail), IDEM_KEY_OK);
    CU_ASSERT_EQUAL(check_key("123e4567-e89b-12d3-a456-426614174000", true, detail), IDEM_KEY_OK); /* a UUID */
}

static void test_a_creation_key_too_short_or_too_long_is_weak_and_the_detail_names_its_length(void)
{
    static const size_t lengths[] = { 0, 1, IDEM_CREATION_KEY_MIN - 1, IDEM_KEY_MAX + 1, 1000 };
    char key[1001], detail[256], expected[32];
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        memset(key, 'A', lengths[i]);
        key[lengths[i]] = '\0';
        CU_ASSERT_EQUAL(check_key(key, true, detail), IDEM_KEY_WEAK);
        snprintf(expected, sizeof expected, "has %zu", lengths[i]);
        if (!strstr(detail, expected))
            fprintf(stderr, "\nno '%s' in: %s\n", expected, detail);
        CU_ASSERT_PTR_NOT_NULL(strstr(detail, expected));
        CU_ASSERT_PTR_NOT_NULL(strstr(detail, "22 to 255"));
    }
    /* a game key of the same length is fine */
    memset(key, 'A', IDEM_CREATION_KEY_MIN - 1);
    key[IDEM_CREATION_KEY_MIN - 1] = '\0';
    CU_ASSERT_EQUAL(check_key(key, false, detail), IDEM_KEY_OK);
}

static void test_a_creation_key_with_any_other_character_is_weak_and_the_detail_names_its_position(void)
{
    char key[41], detail[256], expected[48];
    int refused = 0;
    for (int c = 1; c < 256; c++) {
        bool base64url = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
                         || c == '_';
        for (size_t at = 0; at < sizeof key - 1; at += 13) { /* first, in the middle, last */
            memset(key, 'x', sizeof key - 1);
            key[sizeof key - 1] = '\0';
            key[at] = (char)c;
            idem_key_check_t check = check_key(key, true, detail);
            if (base64url) {
                CU_ASSERT_EQUAL(check, IDEM_KEY_OK);
                continue;
            }
            CU_ASSERT_EQUAL(check, IDEM_KEY_WEAK);
            snprintf(expected, sizeof expected, "character %zu is not", at + 1);
            if (!strstr(detail, expected))
                fprintf(stderr, "\nbyte %d at %zu: no '%s' in: %s\n", c, at, expected, detail);
            CU_ASSERT_PTR_NOT_NULL(strstr(detail, expected));
            refused++;
        }
    }
    CU_ASSERT_EQUAL(refused, (255 - 64) * 4);
    /* the first bad character is the one named */
    CU_ASSERT_EQUAL(check_key("abcdefghij+klmnopqrstuv/wxyz", true, detail), IDEM_KEY_WEAK);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "character 11 is not"));
}

/* --- fingerprints --- */

typedef struct {
    const char *method, *path;
    char query[256];
    size_t query_length;
    const char *if_match; /* NULL: absent */
    const char *body;
    size_t body_length;
} request_t;

/* Adds a query parameter as the handlers encode it: its two lengths, then its bytes. */
static void add_param(request_t *r, const char *name, const char *value)
{
    size_t name_length = strlen(name), value_length = strlen(value);
    int n = snprintf(r->query + r->query_length, sizeof r->query - r->query_length, "%zu:%zu:", name_length,
                     value_length);
    CU_ASSERT_FATAL(n > 0 && r->query_length + (size_t)n + name_length + value_length < sizeof r->query);
    r->query_length += (size_t)n;
    memcpy(r->query + r->query_length, name, name_length);
    memcpy(r->query + r->query_length + name_length, value, value_length);
    r->query_length += name_length + value_length;
}

static void fingerprint(const request_t *r, char out[IDEM_FINGERPRINT_SIZE])
{
    CU_ASSERT_TRUE_FATAL(idem_fingerprint(r->method, r->path, r->query, r->query_length, r->if_match, r->body,
                                          r->body_length, out));
    CU_ASSERT_EQUAL(strlen(out), IDEM_FINGERPRINT_SIZE - 1);
    CU_ASSERT_EQUAL(strspn(out, "0123456789abcdef"), IDEM_FINGERPRINT_SIZE - 1);
}

static request_t base_request(void)
{
    request_t r = { .method = "POST", .path = "/v1/games/AbCdEfGhIjKlMnOp/moves", .if_match = "\"3\"",
                    .body = "{\"move\":\"e4\"}" };
    r.body_length = strlen(r.body);
    add_param(&r, "format", "san");
    return r;
}

static void test_the_same_request_always_has_the_same_fingerprint(void)
{
    request_t r = base_request();
    char a[IDEM_FINGERPRINT_SIZE], b[IDEM_FINGERPRINT_SIZE];
    fingerprint(&r, a);
    for (int i = 0; i < 3; i++) {
        request_t copy = base_request(); /* other buffers, same bytes */
        fingerprint(&copy, b);
        CU_ASSERT_STRING_EQUAL(a, b);
    }
}

static void test_changing_any_one_part_of_a_request_changes_its_fingerprint(void)
{
    enum { VARIANTS = 16 };
    request_t requests[VARIANTS];
    const char *names[VARIANTS];
    int n = 0;
#define VARIANT(label, change)                                                                                     \
    do {                                                                                                           \
        request_t r = base_request();                                                                              \
        change;                                                                                                    \
        names[n] = label;                                                                                          \
        requests[n++] = r;                                                                                         \
    } while (0)
    VARIANT("the request", (void)0);
    VARIANT("method", r.method = "PUT");
    VARIANT("method case", r.method = "post");
    VARIANT("path", r.path = "/v1/games/AbCdEfGhIjKlMnOq/moves");
    VARIANT("no query", r.query_length = 0);
    VARIANT("another parameter value", (r.query_length = 0, add_param(&r, "format", "uci")));
    VARIANT("one more parameter", add_param(&r, "x", ""));
    VARIANT("If-Match absent", r.if_match = NULL);
    VARIANT("If-Match empty", r.if_match = "");
    VARIANT("If-Match value", r.if_match = "\"4\"");
    VARIANT("If-Match weak", r.if_match = "W/\"3\"");
    VARIANT("body", r.body = "{\"move\":\"d4\"}");
    VARIANT("body empty", r.body_length = 0);
    VARIANT("body one byte shorter", r.body_length--);
    VARIANT("body with a NUL", (r.body = "{\"move\":\"e4\"}\0x", r.body_length += 2));
    VARIANT("body with a NUL at the end", (r.body = "{\"move\":\"e4\"}\0", r.body_length += 1));
#undef VARIANT
    CU_ASSERT_EQUAL_FATAL(n, VARIANTS);
    char prints[VARIANTS][IDEM_FINGERPRINT_SIZE];
    for (int i = 0; i < n; i++)
        fingerprint(&requests[i], prints[i]);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!strcmp(prints[i], prints[j])) {
                fprintf(stderr, "\n'%s' and '%s' have the same fingerprint\n", names[i], names[j]);
                CU_FAIL("two different requests have the same fingerprint");
            }
}

/* Two requests that must not share a fingerprint. */
static void check_differ(const request_t *a, const request_t *b, const char *what)
{
    char fa[IDEM_FINGERPRINT_SIZE], fb[IDEM_FINGERPRINT_SIZE];
    fingerprint(a, fa);
    fingerprint(b, fb);
    if (!strcmp(fa, fb))
        fprintf(stderr, "\nsame fingerprint: %s\n", what);
    CU_ASSERT_STRING_NOT_EQUAL(fa, fb);
}

static void test_bytes_moved_across_a_boundary_change_the_fingerprint(void)
{
    request_t a = base_request(), b = base_request();
    a.query_length = b.query_length = 0;
    add_param(&a, "a", "bc");
    add_param(&b, "ab", "c");
    check_differ(&a, &b, "a=bc against ab=c");

    a.query_length = b.query_length = 0;
    add_param(&a, "a", "b");
    add_param(&a, "c", "d");
    add_param(&b, "a", "b&c=d");
    check_differ(&a, &b, "a=b&c=d as two parameters against one");

    a.query_length = b.query_length = 0;
    add_param(&a, "a", "");
    add_param(&b, "a=", "");
    check_differ(&a, &b, "'a' with an empty value against 'a='");

    /* a parameter that holds what follows the query in the digest */
    a = base_request();
    b = base_request();
    a.query_length = b.query_length = 0;
    a.if_match = b.if_match = NULL;
    add_param(&a, "a", "b\n-\nc");
    a.body = "";
    a.body_length = 0;
    add_param(&b, "a", "b");
    b.body = "c\n-\n";
    b.body_length = 4;
    check_differ(&a, &b, "query bytes against body bytes");

    /* the path against the query, If-Match against the body */
    a = base_request();
    b = base_request();
    a.path = "/v1/games/1:0:x"; /* what the query below is, encoded */
    b.path = "/v1/games/";
    a.query_length = 0;
    b.query_length = 0;
    add_param(&b, "x", "");
    check_differ(&a, &b, "path against query");
    a = base_request();
    b = base_request();
    a.if_match = "\"3\"";
    a.body = "x";
    a.body_length = 1;
    b.if_match = "\"3\"x";
    b.body = "";
    b.body_length = 0;
    check_differ(&a, &b, "If-Match against body");
    b.if_match = NULL;
    b.body = "\"3\"\nx";
    b.body_length = 5;
    check_differ(&a, &b, "If-Match against an absent one and the body");
}

/* --- kept answers --- */

static const char location_of_game[] = "/v1/games/AbCdEfGhIjKlMnOp";

static void request_fingerprint(char out[IDEM_FINGERPRINT_SIZE])
{
    request_t r = base_request();
    fingerprint(&r, out);
}

/* Seals an answer and opens it with the same fingerprint: it must come back whole. */
static void check_round_trip(unsigned status, uint64_t version, const char *location, const char *body,
                             size_t body_length)
{
    char print[IDEM_FINGERPRINT_SIZE];
    request_fingerprint(print);
    char *sealed = idem_kept_seal(print, status, version, location, body, body_length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sealed);
    idem_answer_t answer;
    CU_ASSERT_EQUAL_FATAL(idem_kept_open(sealed, print, &answer), IDEM_REPLAY_OK);
    CU_ASSERT_EQUAL(answer.status, status);
    CU_ASSERT_EQUAL(answer.version, version);
    CU_ASSERT_STRING_EQUAL(answer.location, location);
    CU_ASSERT_EQUAL_FATAL(answer.body_length, body_length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(answer.body);
    CU_ASSERT_EQUAL(memcmp(answer.body, body, body_length), 0);
    CU_ASSERT_EQUAL(answer.body[body_length], '\0');
    free(answer.body);
    free(sealed);
}

static void test_a_kept_answer_opens_whole_for_the_same_request(void)
{
    const char *created = "{\"id\":\"AbCdEfGhIjKlMnOp\",\"white_token\":\"t\"}";
    check_round_trip(201, 1, location_of_game, created, strlen(created));
    check_round_trip(200, 42, "", "{}", 2);
    check_round_trip(200, 7, "", "", 0);
    check_round_trip(100, 0, "", "x", 1);
    check_round_trip(599, UINT64_MAX, "/", "\n\n\n", 3);
    char longest[IDEM_LOCATION_SIZE];
    memset(longest, 'l', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    longest[0] = '/';
    check_round_trip(201, 1, longest, "{}", 2);
}

static void test_a_kept_body_may_hold_every_byte_but_nul_and_be_large(void)
{
    char every[255 * 3];
    for (size_t i = 0; i < sizeof every; i++)
        every[i] = (char)(1 + i % 255);
    check_round_trip(200, 5, location_of_game, every, sizeof every);

    enum { LARGE = 4 << 20 };
    char *large = malloc(LARGE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(large);
    uint64_t rng = 88172645463325252ull;
    for (size_t i = 0; i < LARGE; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        large[i] = (char)(1 + rng % 255);
    }
    check_round_trip(200, 9, "", large, LARGE);
    free(large);
}

static void test_a_kept_answer_for_another_request_is_refused(void)
{
    char print[IDEM_FINGERPRINT_SIZE], other[IDEM_FINGERPRINT_SIZE];
    request_fingerprint(print);
    request_t r = base_request();
    r.body = "{\"move\":\"d4\"}";
    fingerprint(&r, other);
    char *sealed = idem_kept_seal(print, 200, 3, "", "{}", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sealed);
    idem_answer_t answer;
    CU_ASSERT_EQUAL(idem_kept_open(sealed, other, &answer), IDEM_REPLAY_OTHER);
    CU_ASSERT_PTR_NULL(answer.body);
    /* one hex digit off */
    other[0] = print[0] == '0' ? '1' : '0';
    memcpy(other + 1, print + 1, IDEM_FINGERPRINT_SIZE - 1);
    CU_ASSERT_EQUAL(idem_kept_open(sealed, other, &answer), IDEM_REPLAY_OTHER);
    CU_ASSERT_PTR_NULL(answer.body);
    free(sealed);
}

/* The base64 alphabet's value of c, or -1. */
static int base64_value(char c)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *at = c ? strchr(alphabet, c) : NULL;
    return at ? (int)(at - alphabet) : -1;
}

static void test_an_altered_kept_answer_does_not_open(void)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char print[IDEM_FINGERPRINT_SIZE];
    request_fingerprint(print);
    char *sealed = idem_kept_seal(print, 201, 1, location_of_game, "{\"white_token\":\"secret\"}", 25);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sealed);
    size_t length = strlen(sealed);
    idem_answer_t answer;
    /* Each character in turn with the top bit of its six changed: every
     * character carries that bit into the decoded bytes, even the last one
     * before '=' padding. */
    int altered = 0;
    for (size_t i = 0; i < length; i++) {
        int value = base64_value(sealed[i]);
        if (value < 0)
            continue; /* padding */
        char kept = sealed[i];
        sealed[i] = alphabet[value ^ 32];
        idem_replay_t result = idem_kept_open(sealed, print, &answer);
        if (result != IDEM_REPLAY_SEALED)
            fprintf(stderr, "\ncharacter %zu altered: %d\n", i, (int)result);
        CU_ASSERT_EQUAL(result, IDEM_REPLAY_SEALED);
        CU_ASSERT_PTR_NULL(answer.body);
        free(answer.body);
        sealed[i] = kept;
        altered++;
    }
    CU_ASSERT(altered > 100);
    CU_ASSERT_EQUAL(idem_kept_open(sealed, print, &answer), IDEM_REPLAY_OK); /* restored: it opens */
    free(answer.body);

    /* cut, lengthened, emptied, not base64 */
    char *copy = malloc(length + 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    memcpy(copy, sealed, length - 4);
    copy[length - 4] = '\0';
    CU_ASSERT_EQUAL(idem_kept_open(copy, print, &answer), IDEM_REPLAY_SEALED);
    memcpy(copy, sealed, length);
    memcpy(copy + length, "AAAA", 5);
    CU_ASSERT_EQUAL(idem_kept_open(copy, print, &answer), IDEM_REPLAY_SEALED);
    CU_ASSERT_EQUAL(idem_kept_open("", print, &answer), IDEM_REPLAY_SEALED);
    CU_ASSERT_EQUAL(idem_kept_open("!!!!", print, &answer), IDEM_REPLAY_SEALED);
    CU_ASSERT_EQUAL(idem_kept_open("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", print, &answer), IDEM_REPLAY_SEALED);
    free(copy);
    free(sealed);
}

/* Seals text as it is (not through idem_kept_seal) and opens it for print. */
static idem_replay_t open_text(const char *text, const char *print, idem_answer_t *answer)
{
    char *sealed = tokens_seal(text, strlen(text));
    CU_ASSERT_PTR_NOT_NULL_FATAL(sealed);
    idem_replay_t result = idem_kept_open(sealed, print, answer);
    free(sealed);
    return result;
}

static void test_a_kept_text_that_is_not_a_kept_answer_is_corrupt(void)
{
    char print[IDEM_FINGERPRINT_SIZE], other[IDEM_FINGERPRINT_SIZE];
    request_fingerprint(print);
    char text[512];
    idem_answer_t answer;

    /* the helper makes a good one as idem_kept_seal would */
    snprintf(text, sizeof text, "%s 201 4\n/v1/games/x\n{\"a\":1}", print);
    CU_ASSERT_EQUAL_FATAL(open_text(text, print, &answer), IDEM_REPLAY_OK);
    CU_ASSERT_EQUAL(answer.status, 201);
    CU_ASSERT_EQUAL(answer.version, 4);
    CU_ASSERT_STRING_EQUAL(answer.location, "/v1/games/x");
    CU_ASSERT_STRING_EQUAL(answer.body, "{\"a\":1}");
    free(answer.body);

    memcpy(other, print, sizeof other); /* another fingerprint: one digit changed */
    other[10] = other[10] == '0' ? '1' : '0';
    char long_location[IDEM_LOCATION_SIZE + 1];
    memset(long_location, 'l', sizeof long_location - 1);
    long_location[sizeof long_location - 1] = '\0';

    /* each: the format after the fingerprint (%s is the request's own) */
    static const char *const formats[] = {
        "",
        "%s",
        "%s 200 1",
        "%s 200 1\n",
        "%s 200 1\n/v1/games/x",
        "%s 200\n/v1/games/x\nbody",
        "%s 200\n1\n/v1/games/x\nbody",
        "%s\n200 1\n\nbody",
        "%s  200 1\n\nbody",
        "%s 200  1\n\nbody",
        " %s 200 1\n\nbody",
        "%s 200 1 \n\nbody",
        "%s 200 1 2\n\nbody",
        "%s 200 1x\n\nbody",
        "%s 200 1\r\n\nbody",
        "%s 200x 1\n\nbody",
        "%s +200 1\n\nbody",
        "%s 200 +1\n\nbody",
        "%s 200 -1\n\nbody",
        "%s 200 0x10\n\nbody",
        "%s 200 18446744073709551616\n\nbody",
        "%s 99 1\n\nbody",
        "%s 600 1\n\nbody",
        "%s 4294967496 1\n\nbody",
        "%s -4294967096 1\n\nbody",
        "%s 200 \n\nbody",
        "%sa 200 1\n\nbody",
        "%.63s 200 1\n\nbody",
        "x%.63s 200 1\n\nbody",
        "%.32s %.31s 200 1\n\nbody",
        "%.63sg 200 1\n\nbody",
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (strstr(formats[i], "%.32s"))
            snprintf(text, sizeof text, formats[i], print, print + 32);
        else
            snprintf(text, sizeof text, formats[i], print);
        idem_replay_t result = open_text(text, print, &answer);
        if (result != IDEM_REPLAY_CORRUPT)
            fprintf(stderr, "\nkept text #%zu '%s' gave %d\n", i, text, (int)result);
        CU_ASSERT_EQUAL(result, IDEM_REPLAY_CORRUPT);
        CU_ASSERT_PTR_NULL(answer.body);
        free(answer.body);
    }

    /* 64 characters that are not hex where the fingerprint goes */
    char not_hex[IDEM_FINGERPRINT_SIZE];
    memset(not_hex, 'z', sizeof not_hex - 1);
    not_hex[sizeof not_hex - 1] = '\0';
    snprintf(text, sizeof text, "%s 200 1\n\nbody", not_hex);
    CU_ASSERT_EQUAL(open_text(text, print, &answer), IDEM_REPLAY_CORRUPT);
    /* a location longer than an answer can carry */
    snprintf(text, sizeof text, "%s 200 1\n%s\nbody", print, long_location);
    CU_ASSERT_EQUAL(open_text(text, print, &answer), IDEM_REPLAY_CORRUPT);
    CU_ASSERT_PTR_NULL(answer.body);
    /* well formed, but for another request: that is not corruption */
    snprintf(text, sizeof text, "%s 200 1\n\nbody", other);
    CU_ASSERT_EQUAL(open_text(text, print, &answer), IDEM_REPLAY_OTHER);
    CU_ASSERT_PTR_NULL(answer.body);
}

static void test_a_location_that_a_kept_answer_cannot_carry_is_refused_at_sealing(void)
{
    char print[IDEM_FINGERPRINT_SIZE];
    request_fingerprint(print);
    CU_ASSERT_PTR_NULL(idem_kept_seal(print, 201, 1, "/v1/games/x\n", "{}", 2));
    CU_ASSERT_PTR_NULL(idem_kept_seal(print, 201, 1, "/v1/games/x\nEvil: 1", "{}", 2));
    CU_ASSERT_PTR_NULL(idem_kept_seal(print, 201, 1, "\n", "{}", 2));
    /* longer than an opened answer holds: it could be sealed but never opened */
    char longer[IDEM_LOCATION_SIZE + 1];
    memset(longer, 'l', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    CU_ASSERT_PTR_NULL(idem_kept_seal(print, 201, 1, longer, "{}", 2));
    char *sealed = idem_kept_seal(print, 201, 1, longer + 1, "{}", 2); /* the longest that fits */
    CU_ASSERT_PTR_NOT_NULL(sealed);
    free(sealed);
    /* and the fingerprint must be one */
    CU_ASSERT_PTR_NULL(idem_kept_seal("abc", 201, 1, "", "{}", 2));
    CU_ASSERT_PTR_NULL(idem_kept_seal("", 201, 1, "", "{}", 2));
}

int test_idempotency_register(void)
{
    CU_pSuite suite = CU_add_suite("idempotency", suite_init, NULL);
    if (!suite)
        return CU_get_error();
    if (!CU_add_test(suite, "a game key of 1 to 255 characters of any kind is accepted",
                     test_a_game_key_of_1_to_255_characters_of_any_kind_is_accepted)
        || !CU_add_test(suite, "an empty or overlong game key is invalid and the detail gives the lengths",
                        test_an_empty_or_overlong_game_key_is_invalid_and_the_detail_gives_the_lengths)
        || !CU_add_test(suite, "a creation key of 22 to 255 base64url characters is accepted",
                        test_a_creation_key_of_22_to_255_base64url_characters_is_accepted)
        || !CU_add_test(suite, "a creation key too short or too long is weak and the detail names its length",
                        test_a_creation_key_too_short_or_too_long_is_weak_and_the_detail_names_its_length)
        || !CU_add_test(suite, "a creation key with any other character is weak and the detail names its position",
                        test_a_creation_key_with_any_other_character_is_weak_and_the_detail_names_its_position)
        || !CU_add_test(suite, "the same request always has the same fingerprint",
                        test_the_same_request_always_has_the_same_fingerprint)
        || !CU_add_test(suite, "changing any one part of a request changes its fingerprint",
                        test_changing_any_one_part_of_a_request_changes_its_fingerprint)
        || !CU_add_test(suite, "bytes moved across a boundary change the fingerprint",
                        test_bytes_moved_across_a_boundary_change_the_fingerprint)
        || !CU_add_test(suite, "a kept answer opens whole for the same request",
                        test_a_kept_answer_opens_whole_for_the_same_request)
        || !CU_add_test(suite, "a kept body may hold every byte but NUL and be large",
                        test_a_kept_body_may_hold_every_byte_but_nul_and_be_large)
        || !CU_add_test(suite, "a kept answer for another request is refused",
                        test_a_kept_answer_for_another_request_is_refused)
        || !CU_add_test(suite, "an altered kept answer does not open", test_an_altered_kept_answer_does_not_open)
        || !CU_add_test(suite, "a kept text that is not a kept answer is corrupt",
                        test_a_kept_text_that_is_not_a_kept_answer_is_corrupt)
        || !CU_add_test(suite, "a location that a kept answer cannot carry is refused at sealing",
                        test_a_location_that_a_kept_answer_cannot_carry_is_refused_at_sealing))
        return CU_get_error();
    return CUE_SUCCESS;
}
