/* A game's tags and metadata (game_meta.h): the known tags' table with
 * each one's format, the names the server writes itself, the checks, and
 * the text kept in the game's hash. cJSON makes and reads that text, once
 * at creation and once a full read. */
#include "game_meta.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../rules/base/utf8.h"
#include "game_record.h"

typedef enum { FORMAT_TEXT = 0, FORMAT_DATE, FORMAT_ROUND, FORMAT_TITLE, FORMAT_ELO, FORMAT_FIDE_ID, FORMAT_BOARD } format_t;

/* The known tags, in the order they are written after the roster's: the
 * roster's four a client sets, then PGN's supplemental tags about the
 * players and the event that PGN readers know. */
static const struct {
    const char *name;
    format_t format;
} known[GAME_TAGS_KNOWN] = {
    { "Event", FORMAT_TEXT },        { "Site", FORMAT_TEXT },         { "Date", FORMAT_DATE },
    { "Round", FORMAT_ROUND },       { "WhiteTitle", FORMAT_TITLE },  { "BlackTitle", FORMAT_TITLE },
    { "WhiteElo", FORMAT_ELO },      { "BlackElo", FORMAT_ELO },      { "WhiteFideId", FORMAT_FIDE_ID },
    { "BlackFideId", FORMAT_FIDE_ID }, { "WhiteTeam", FORMAT_TEXT },  { "BlackTeam", FORMAT_TEXT },
    { "EventDate", FORMAT_DATE },    { "Board", FORMAT_BOARD },       { "Annotator", FORMAT_TEXT },
};

/* What the server writes from the game itself, each with why. */
static const struct {
    const char *name, *why;
} server_written[] = {
    { "White", "it is the white player's name, given as 'white'" },
    { "Black", "it is the black player's name, given as 'black'" },
    { "Result", "it is the game's result" },
    { "Variant", "it is the game's variant" },
    { "SetUp", "it says the game's start, given as 'fen'" },
    { "FEN", "it is the game's start, given as 'fen'" },
    { "ECO", "it is the opening the moves reach" },
    { "Opening", "it is the opening the moves reach" },
    { "Termination", "it is how the game ended" },
    { "TimeControl", "it is the game's clock, given as 'clock'" },
    { "BlackTimeControl", "it is Black's clock in a game at odds, given as 'clock'" },
    { "PlyCount", "it is the number of moves played" },
};
enum { SERVER_WRITTEN = sizeof server_written / sizeof server_written[0] };

/* What every value must be, and what each format's values look like, for the detail. */
static const char value_rule[] = "UTF-8 text of at most 255 bytes without control characters";
static const char *const format_rules[] = {
    [FORMAT_TEXT] = "",
    [FORMAT_DATE] = "a PGN date, YYYY.MM.DD with question marks for what is not known, as in 2024.??.??",
    [FORMAT_ROUND] = "'-', '?' or whole numbers joined by dots (3, 3.1)",
    [FORMAT_TITLE] = "a title in 1 to 8 capital letters (GM, IM, WFM...) or '-'",
    [FORMAT_ELO] = "a rating, a whole number from 0 to 4000",
    [FORMAT_FIDE_ID] = "a FIDE id, 1 to 10 digits",
    [FORMAT_BOARD] = "a board number, 1 to 4 digits",
};

game_meta_t *game_meta_new(void) { return calloc(1, sizeof(game_meta_t)); }

void game_meta_free(game_meta_t *meta)
{
    if (!meta)
        return;
    free(meta->metadata);
    free(meta->notes);
    free(meta);
}

bool game_meta_empty(const game_meta_t *meta)
{
    return !meta || (meta->count == 0 && !meta->metadata && !meta->notes);
}

/* The known tag's index, GAME_TAGS_KNOWN for another name. */
static int rank_of(const char *name)
{
    for (int i = 0; i < GAME_TAGS_KNOWN; i++)
        if (!strcmp(name, known[i].name))
            return i;
    return GAME_TAGS_KNOWN;
}

static bool is_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Whether s[0..n) are n digits. */
static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_digit(s[i]))
            return false;
    return true;
}

/* Whether s[0..n) are digits or all '?'. */
static bool digits_or_unknown(const char *s, size_t n)
{
    return digits(s, n) || strspn(s, "?") >= n;
}

/* Whether the two digits at s are a number from 1 to max, or "??". */
static bool date_part(const char *s, int max)
{
    if (s[0] == '?' && s[1] == '?')
        return true;
    int n = is_digit(s[0]) && is_digit(s[1]) ? (s[0] - '0') * 10 + (s[1] - '0') : 0;
    return n >= 1 && n <= max;
}

static bool date_ok(const char *v, size_t n)
{
    return n == 10 && v[4] == '.' && v[7] == '.' && digits_or_unknown(v, 4) && date_part(v + 5, 12)
           && date_part(v + 8, 31);
}

/* "-", "?", or groups of digits joined by single dots. */
static bool round_ok(const char *v, size_t n)
{
    if (n == 1 && (v[0] == '-' || v[0] == '?'))
        return true;
    size_t group = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_digit(v[i]))
            group++;
        else if (v[i] != '.' || group == 0)
            return false;
        else
            group = 0;
    }
    return group > 0;
}

static bool title_ok(const char *v, size_t n)
{
    if (n == 1 && v[0] == '-')
        return true;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 'A' || v[i] > 'Z')
            return false;
    return n >= 1 && n <= 8;
}

static bool format_ok(format_t format, const char *v, size_t n)
{
    switch (format) {
    case FORMAT_DATE: return date_ok(v, n);
    case FORMAT_ROUND: return round_ok(v, n);
    case FORMAT_TITLE: return title_ok(v, n);
    case FORMAT_ELO: return n >= 1 && n <= 4 && digits(v, n) && atoi(v) <= 4000;
    case FORMAT_FIDE_ID: return n >= 1 && n <= 10 && digits(v, n);
    case FORMAT_BOARD: return n >= 1 && n <= 4 && digits(v, n);
    default: return true;
    }
}

/* A PGN symbol of 1 to GAME_TAG_NAME_MAX bytes that starts with a letter. */
static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > GAME_TAG_NAME_MAX || !is_letter(name[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!is_letter(name[i]) && !is_digit(name[i]) && name[i] != '_')
            return false;
    return true;
}

/* The known or server-written name that name spells in another case, or NULL. */
static const char *other_case(const char *name)
{
    for (int i = 0; i < GAME_TAGS_KNOWN; i++)
        if (!strcasecmp(name, known[i].name))
            return known[i].name;
    for (int i = 0; i < SERVER_WRITTEN; i++)
        if (!strcasecmp(name, server_written[i].name))
            return server_written[i].name;
    return NULL;
}

static game_tag_status_t say(game_tag_status_t status, char *detail, size_t size, const char *format,
                             const char *name, const char *more)
{
    if (size)
        snprintf(detail, size, format, name, more);
    return status;
}

/* The name's own checks: a symbol, not the server's, not a known one's in another case. */
static game_tag_status_t check_name(const char *name, char *detail, size_t size)
{
    if (!name_ok(name))
        return say(GAME_TAG_ENAME, detail, size,
                   "tag name '%.40s' is not a PGN tag name: %s", name,
                   "a letter, then letters, digits and '_', at most 32 bytes");
    for (int i = 0; i < SERVER_WRITTEN; i++)
        if (!strcmp(name, server_written[i].name))
            return say(GAME_TAG_ESERVER, detail, size, "tag '%s' is not set through tags: %s", name,
                       server_written[i].why);
    const char *spelt = rank_of(name) == GAME_TAGS_KNOWN ? other_case(name) : NULL;
    if (spelt)
        return say(GAME_TAG_ECASE, detail, size, "tag '%s' is spelt '%s'", name, spelt);
    return GAME_TAG_OK;
}

game_tag_status_t game_meta_check_tag(const char *name, const char *value, size_t length, char *detail,
                                      size_t size)
{
    game_tag_status_t status = check_name(name, detail, size);
    if (status != GAME_TAG_OK)
        return status;
    char text[GAME_TAG_VALUE_MAX + 1];
    if (length > GAME_TAG_VALUE_MAX || memchr(value, '\0', length) || !utf8_valid(value, length))
        return say(GAME_TAG_EVALUE, detail, size, "tag '%s' must be %s", name, value_rule);
    memcpy(text, value, length);
    text[length] = '\0';
    if (!game_record_name_ok(text))
        return say(GAME_TAG_EVALUE, detail, size, "tag '%s' must be %s", name, value_rule);
    int rank = rank_of(name);
    if (rank < GAME_TAGS_KNOWN && !format_ok(known[rank].format, value, length))
        return say(GAME_TAG_EFORMAT, detail, size, "tag '%s' must be %s", name, format_rules[known[rank].format]);
    return GAME_TAG_OK;
}

/* Whether a goes before b in the order tags are written. */
static bool before(const game_tag_t *a, int rank, const char *name)
{
    return a->rank != rank ? a->rank < rank : strcmp(a->name, name) < 0;
}

static game_tag_t *find(game_meta_t *meta, const char *name)
{
    for (int i = 0; i < meta->count; i++)
        if (!strcmp(meta->tags[i].name, name))
            return &meta->tags[i];
    return NULL;
}

const char *game_meta_tag(const game_meta_t *meta, const char *name)
{
    const game_tag_t *tag = meta ? find((game_meta_t *)meta, name) : NULL;
    return tag ? tag->value : NULL;
}

static int custom_count(const game_meta_t *meta)
{
    int n = 0;
    for (int i = 0; i < meta->count; i++)
        n += meta->tags[i].rank == GAME_TAGS_KNOWN;
    return n;
}

game_tag_status_t game_meta_set_tag(game_meta_t *meta, const char *name, const char *value, size_t length,
                                    char *detail, size_t size)
{
    game_tag_status_t status = game_meta_check_tag(name, value, length, detail, size);
    if (status != GAME_TAG_OK)
        return status;
    game_tag_t *tag = find(meta, name);
    int rank = rank_of(name);
    if (!tag) {
        if (rank == GAME_TAGS_KNOWN && custom_count(meta) >= GAME_TAGS_CUSTOM_MAX)
            return say(GAME_TAG_ETOO_MANY, detail, size, "tag '%s' is one too many: %s", name,
                       "a game has at most 16 tags besides the known ones");
        int at = 0;
        while (at < meta->count && before(&meta->tags[at], rank, name))
            at++;
        memmove(&meta->tags[at + 1], &meta->tags[at], (size_t)(meta->count - at) * sizeof *tag);
        meta->count++;
        tag = &meta->tags[at];
        memcpy(tag->name, name, strlen(name) + 1);
        tag->rank = rank;
    }
    memcpy(tag->value, value, length);
    tag->value[length] = '\0';
    return GAME_TAG_OK;
}

void game_meta_merge(game_meta_t *dst, const game_meta_t *src)
{
    for (int i = 0; i < src->count; i++)
        if (!find(dst, src->tags[i].name))
            (void)game_meta_set_tag(dst, src->tags[i].name, src->tags[i].value, strlen(src->tags[i].value), NULL, 0);
}

bool game_meta_copy(game_meta_t *dst, const game_meta_t *src)
{
    memcpy(dst->tags, src->tags, (size_t)src->count * sizeof *src->tags);
    dst->count = src->count;
    dst->metadata = dst->notes = NULL;
    dst->metadata_length = dst->notes_length = 0;
    if (src->metadata && !(dst->metadata = malloc(src->metadata_length + 1)))
        return false;
    if (src->notes && !game_meta_set_notes(dst, src->notes, src->notes_length)) {
        free(dst->metadata);
        dst->metadata = NULL;
        return false;
    }
    if (src->metadata) {
        memcpy(dst->metadata, src->metadata, src->metadata_length + 1);
        dst->metadata_length = src->metadata_length;
    }
    return true;
}

bool game_meta_set_notes(game_meta_t *meta, const char *text, size_t length)
{
    char *copy = length <= GAME_NOTES_MAX ? malloc(length + 1) : NULL;
    if (!copy)
        return false;
    memcpy(copy, text, length);
    copy[length] = '\0';
    free(meta->notes);
    meta->notes = copy;
    meta->notes_length = length;
    return true;
}

/* --- metadata --- */

/* Metadata written as compact JSON into a fixed buffer, cut off (too_large)
 * past the bound, so a large body costs no more than the bound to look at.
 * cJSON's own printer is not used: it rounds numbers of 16 and 17 digits
 * (9007199254740991 comes back ...990), and the value must come back whole. */
typedef struct {
    char text[GAME_METADATA_MAX + 1];
    size_t length;
    bool too_large;
} compact_t;

static void put(compact_t *c, const char *bytes, size_t n)
{
    if (c->too_large || n > GAME_METADATA_MAX - c->length) {
        c->too_large = true;
        return;
    }
    memcpy(c->text + c->length, bytes, n);
    c->length += n;
}

/* A JSON string: '"' and '\' escaped, and the C0 controls (RFC 8259). */
static void put_string(compact_t *c, const char *s)
{
    put(c, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p && !c->too_large; p++) {
        if (*p == '"' || *p == '\\' || *p < 0x20) {
            char escape[8];
            snprintf(escape, sizeof escape, *p < 0x20 ? "\\u%04x" : "\\%c", *p);
            put(c, escape, strlen(escape));
        } else {
            put(c, (const char *)p, 1);
        }
    }
    put(c, "\"", 1);
}

/* The shortest of %.15g, %.16g and %.17g that reads back as the same
 * double (%.17g always does). chessd never sets a locale: the point is '.'. */
static void put_number(compact_t *c, double d)
{
    char text[40];
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*g", precision, d);
        if (strtod(text, NULL) == d)
            break;
    }
    put(c, text, strlen(text));
}

static game_metadata_status_t say_metadata(game_metadata_status_t status, char *detail, size_t size,
                                           const char *sentence)
{
    if (size)
        snprintf(detail, size, "%s", sentence);
    return status;
}

/* Whether member repeats the name of one before it in object (cJSON keeps
 * both, and the text would then say two things). */
static bool repeated(const cJSON *object, const cJSON *member)
{
    for (const cJSON *earlier = object->child; earlier != member; earlier = earlier->next)
        if (!strcmp(earlier->string, member->string))
            return true;
    return false;
}

/* Writes item into c; a number beyond a double or a repeated member is
 * refused (what is wrong in detail). The body reader bounds the nesting. */
static game_metadata_status_t put_value(compact_t *c, const cJSON *item, char *detail, size_t size)
{
    if (cJSON_IsNumber(item)) {
        if (!isfinite(item->valuedouble))
            return say_metadata(GAME_METADATA_ENUMBER, detail, size,
                                "'metadata' holds a number beyond a double's range");
        put_number(c, item->valuedouble);
    } else if (cJSON_IsString(item)) {
        put_string(c, item->valuestring);
    } else if (cJSON_IsBool(item) || cJSON_IsNull(item)) {
        const char *word = cJSON_IsNull(item) ? "null" : cJSON_IsTrue(item) ? "true" : "false";
        put(c, word, strlen(word));
    } else if (cJSON_IsArray(item) || cJSON_IsObject(item)) {
        bool object = cJSON_IsObject(item);
        put(c, object ? "{" : "[", 1);
        for (const cJSON *child = item->child; child && !c->too_large; child = child->next) {
            if (child != item->child)
                put(c, ",", 1);
            if (object && repeated(item, child)) {
                if (size)
                    snprintf(detail, size, "'metadata' has an object with member '%.64s' twice", child->string);
                return GAME_METADATA_EREPEATED;
            }
            if (object) {
                put_string(c, child->string);
                put(c, ":", 1);
            }
            game_metadata_status_t status = put_value(c, child, detail, size);
            if (status != GAME_METADATA_OK)
                return status;
        }
        put(c, object ? "}" : "]", 1);
    } else {
        return say_metadata(GAME_METADATA_ETYPE, detail, size, "'metadata' holds something that is not JSON");
    }
    return GAME_METADATA_OK;
}

game_metadata_status_t game_meta_set_metadata(game_meta_t *meta, const cJSON *object, char *detail, size_t size)
{
    if (!cJSON_IsObject(object))
        return say_metadata(GAME_METADATA_ETYPE, detail, size, "'metadata' must be a JSON object");
    compact_t *c = malloc(sizeof *c); /* 4 KiB: off a small thread stack */
    if (!c)
        return GAME_METADATA_ENOMEM;
    c->length = 0;
    c->too_large = false;
    game_metadata_status_t status = put_value(c, object, detail, size);
    if (status == GAME_METADATA_OK && c->too_large) {
        if (size)
            snprintf(detail, size, "'metadata' is over %d bytes as compact JSON, the most a game keeps",
                     GAME_METADATA_MAX);
        status = GAME_METADATA_ETOO_LARGE;
    }
    char *text = status == GAME_METADATA_OK ? malloc(c->length + 1) : NULL;
    if (status == GAME_METADATA_OK && !text)
        status = GAME_METADATA_ENOMEM;
    if (text) {
        memcpy(text, c->text, c->length);
        text[c->length] = '\0';
        free(meta->metadata);
        meta->metadata = text;
        meta->metadata_length = c->length;
    }
    free(c);
    return status;
}

/* --- the kept text --- */

bool game_meta_text(const game_meta_t *meta, char **text, size_t *length)
{
    *text = NULL;
    *length = 0;
    if (game_meta_empty(meta))
        return true;
    cJSON *root = cJSON_CreateObject();
    cJSON *tags = root ? cJSON_AddObjectToObject(root, "tags") : NULL;
    bool ok = tags != NULL;
    for (int i = 0; ok && i < meta->count; i++)
        ok = cJSON_AddStringToObject(tags, meta->tags[i].name, meta->tags[i].value) != NULL;
    if (ok && meta->metadata)
        ok = cJSON_AddRawToObject(root, "metadata", meta->metadata) != NULL;
    if (ok && meta->notes)
        ok = cJSON_AddRawToObject(root, "notes", meta->notes) != NULL;
    *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (*text)
        *length = strlen(*text);
    return *text != NULL;
}

/* The tags of a kept text into meta: every one a string that passes. */
static bool read_tags(game_meta_t *meta, const cJSON *tags)
{
    if (!cJSON_IsObject(tags))
        return false;
    for (const cJSON *tag = tags->child; tag; tag = tag->next)
        if (!cJSON_IsString(tag)
            || game_meta_set_tag(meta, tag->string, tag->valuestring, strlen(tag->valuestring), NULL, 0)
                   != GAME_TAG_OK)
            return false;
    return true;
}

/* The notes of a kept text into meta: an object, within the bound. */
static bool read_notes(game_meta_t *meta, const cJSON *notes)
{
    char *text = cJSON_IsObject(notes) ? cJSON_PrintUnformatted(notes) : NULL;
    bool ok = text && game_meta_set_notes(meta, text, strlen(text));
    free(text);
    return ok;
}

/* Frees what meta owns and zeroes it. */
static void clear(game_meta_t *meta)
{
    free(meta->metadata);
    free(meta->notes);
    memset(meta, 0, sizeof *meta);
}

bool game_meta_read(game_meta_t *meta, const char *text, size_t length)
{
    clear(meta);
    if (length == 0)
        return true;
    if (length > GAME_META_TEXT_MAX)
        return false;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, length, &end, 0);
    bool ok = cJSON_IsObject(root) && end == text + length;
    for (const cJSON *member = ok ? root->child : NULL; ok && member; member = member->next) {
        if (!strcmp(member->string, "tags"))
            ok = read_tags(meta, member);
        else if (!strcmp(member->string, "metadata"))
            ok = game_meta_set_metadata(meta, member, NULL, 0) == GAME_METADATA_OK;
        else if (!strcmp(member->string, "notes"))
            ok = read_notes(meta, member);
    }
    cJSON_Delete(root);
    if (!ok)
        clear(meta);
    return ok;
}
