/* See service_keys.h. The table is a reference-counted value behind a mutex:
 * a lookup takes a reference and reads the table without a lock, a re-read
 * swaps in a new one, and the last reference frees the old. Each key's
 * buckets have a lock of their own. */
#include "service_keys.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../rules/base/hex.h"
#include "../store/credentials.h"
#include "game/tokens.h"
#include "http/ratelimit.h"

enum {
    FILE_MAX = 1 << 20,          /* bytes: a thousand lines of a thousand bytes */
    PATH_SHOWN = 160,            /* a longer path is cut in messages */
    BULK_GAMES_BURST = 1000,     /* as the per-address bucket of --rate-limit-bulk-games */
    CREATES_BURST_SECONDS = 5,   /* as the per-address bucket of --rate-limit-create */
    REFRESH_US = 1000000,
};

static const char *const scope_names[SERVICE_SCOPE_COUNT] = {
    [SERVICE_SCOPE_GAMES_CREATE] = "games:create", [SERVICE_SCOPE_GAMES_BULK] = "games:bulk",
    [SERVICE_SCOPE_GAMES_EXPORT] = "games:export", [SERVICE_SCOPE_GAMES_READ_LIVE] = "games:read-live",
    [SERVICE_SCOPE_ANALYSIS] = "analysis",         [SERVICE_SCOPE_ADMIN] = "admin",
};

/* Each quota's name, and what it counts in a refusal's words. */
static const struct {
    const char *name, *counts;
} quotas[SERVICE_QUOTA_COUNT] = {
    [SERVICE_QUOTA_REQUESTS] = { "requests", "requests" },
    [SERVICE_QUOTA_CREATES] = { "creates", "game creations" },
    [SERVICE_QUOTA_BULK_GAMES] = { "bulk-games", "games made by bulks" },
};

const char *service_scope_name(service_scope_t scope)
{
    return (unsigned)scope < SERVICE_SCOPE_COUNT ? scope_names[scope] : "?";
}

const char *service_quota_name(service_quota_t quota)
{
    return (unsigned)quota < SERVICE_QUOTA_COUNT ? quotas[quota].name : "?";
}

/* --- one line --- */

typedef struct {
    const char *text;
    size_t length;
} span_t;

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static bool span_is(span_t s, const char *word) { return strlen(word) == s.length && !memcmp(s.text, word, s.length); }

/* The next item of a comma-separated list at *rest (consumed); false at its end. */
static bool next_item(span_t *rest, span_t *item)
{
    if (!rest->text)
        return false;
    const char *comma = memchr(rest->text, ',', rest->length);
    item->text = rest->text;
    item->length = comma ? (size_t)(comma - rest->text) : rest->length;
    if (comma) {
        rest->length -= item->length + 1;
        rest->text = comma + 1;
    } else {
        rest->text = NULL;
    }
    return true;
}

static bool parse_name(span_t field, service_key_line_t *out, char *err, size_t err_size)
{
    bool ok = field.length >= 1 && field.length <= SERVICE_KEY_NAME_MAX;
    for (size_t i = 0; ok && i < field.length; i++) {
        char c = field.text[i];
        ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'
             || c == '-';
    }
    if (!ok) {
        snprintf(err, err_size, "the name '%.*s%s' is not 1 to %d of A-Z a-z 0-9 _ . -",
                 (int)(field.length > SERVICE_KEY_NAME_MAX ? SERVICE_KEY_NAME_MAX : field.length), field.text,
                 field.length > SERVICE_KEY_NAME_MAX ? "..." : "", SERVICE_KEY_NAME_MAX);
        return false;
    }
    memcpy(out->name, field.text, field.length);
    out->name[field.length] = '\0';
    return true;
}

/* SCOPES: '-' (none) or names separated by commas, each once. */
static bool parse_scopes(span_t field, service_key_line_t *out, char *err, size_t err_size)
{
    out->scopes = 0;
    if (span_is(field, "-"))
        return true;
    span_t item;
    while (next_item(&field, &item)) {
        int found = -1;
        for (int s = 0; s < SERVICE_SCOPE_COUNT && found < 0; s++)
            if (span_is(item, scope_names[s]))
                found = s;
        if (found < 0) {
            snprintf(err, err_size, "unknown scope '%.*s' (the scopes: games:create, games:bulk, games:export, "
                                    "games:read-live, analysis, admin; '-' for none)", (int)item.length, item.text);
            return false;
        }
        if (out->scopes & 1u << found) {
            snprintf(err, err_size, "the scope %s is named twice", scope_names[found]);
            return false;
        }
        out->scopes |= 1u << found;
    }
    if (out->scopes & 1u << SERVICE_SCOPE_ADMIN)
        out->scopes = (1u << SERVICE_SCOPE_COUNT) - 1;
    return true;
}

/* One quota, NAME=N/s, into out->quotas. */
static bool parse_quota(span_t item, service_key_line_t *out, char *err, size_t err_size)
{
    const char *eq = memchr(item.text, '=', item.length);
    span_t name = { item.text, eq ? (size_t)(eq - item.text) : item.length };
    int found = -1;
    for (int q = 0; q < SERVICE_QUOTA_COUNT && found < 0; q++)
        if (span_is(name, quotas[q].name))
            found = q;
    if (found < 0) {
        snprintf(err, err_size, "unknown quota '%.*s' (the quotas: requests, creates, bulk-games)", (int)name.length,
                 name.text);
        return false;
    }
    if (out->quotas[found] >= 0) {
        snprintf(err, err_size, "the quota %s is given twice", quotas[found].name);
        return false;
    }
    const char *digits = eq ? eq + 1 : item.text + item.length, *end = item.text + item.length;
    long value = 0;
    const char *p = digits;
    while (p < end && *p >= '0' && *p <= '9' && value <= SERVICE_KEYS_QUOTA_MAX)
        value = value * 10 + (*p++ - '0');
    if (p == digits || end - p != 2 || memcmp(p, "/s", 2) || value > SERVICE_KEYS_QUOTA_MAX) {
        snprintf(err, err_size, "the quota '%.*s' is not %s=N/s with N from 0 (no limit) to %d", (int)item.length,
                 item.text, quotas[found].name, SERVICE_KEYS_QUOTA_MAX);
        return false;
    }
    out->quotas[found] = value;
    return true;
}

/* QUOTAS: '-' (every one the setting it replaces) or NAME=N/s items. */
static bool parse_quotas(span_t field, service_key_line_t *out, char *err, size_t err_size)
{
    for (int q = 0; q < SERVICE_QUOTA_COUNT; q++)
        out->quotas[q] = -1;
    if (span_is(field, "-"))
        return true;
    span_t item;
    while (next_item(&field, &item))
        if (!parse_quota(item, out, err, err_size))
            return false;
    return true;
}

service_line_t service_keys_parse_line(const char *line, size_t length, service_key_line_t *out, char *err,
                                       size_t err_size)
{
    memset(out, 0, sizeof *out);
    while (length && (is_blank(line[length - 1]) || line[length - 1] == '\r'))
        length--;
    size_t at = 0;
    while (at < length && is_blank(line[at]))
        at++;
    if (at == length || line[at] == '#')
        return SERVICE_LINE_NONE;
    if (length > SERVICE_KEYS_LINE_MAX) {
        snprintf(err, err_size, "longer than %d bytes", SERVICE_KEYS_LINE_MAX);
        return SERVICE_LINE_BAD;
    }
    if (memchr(line, '\0', length)) {
        snprintf(err, err_size, "holds a NUL byte");
        return SERVICE_LINE_BAD;
    }
    /* A key pasted in place of its hash must not reach a message. */
    for (size_t i = 0; i + SERVICE_KEY_PREFIX_LENGTH <= length; i++)
        if (!memcmp(line + i, SERVICE_KEY_PREFIX, SERVICE_KEY_PREFIX_LENGTH)) {
            snprintf(err, err_size, "holds a service key (" SERVICE_KEY_PREFIX "...): a line has the key's SHA-256, "
                                    "never the key (chessd keys new prints the line)");
            return SERVICE_LINE_BAD;
        }
    span_t fields[5];
    int count = 0;
    while (at < length && count < 5) {
        size_t start = at;
        while (at < length && !is_blank(line[at]))
            at++;
        fields[count++] = (span_t){ line + start, at - start };
        while (at < length && is_blank(line[at]))
            at++;
    }
    if (count != 4) {
        snprintf(err, err_size, "has %s%d fields; a line is NAME SCOPES QUOTAS SHA256, separated by spaces",
                 count == 5 ? "more than " : "", count == 5 ? 4 : count);
        return SERVICE_LINE_BAD;
    }
    if (!parse_name(fields[0], out, err, err_size) || !parse_scopes(fields[1], out, err, err_size)
        || !parse_quotas(fields[2], out, err, err_size))
        return SERVICE_LINE_BAD;
    span_t hash = fields[3];
    char copy[SERVICE_KEY_HASH_HEX + 1] = "";
    if (hash.length == SERVICE_KEY_HASH_HEX)
        memcpy(copy, hash.text, SERVICE_KEY_HASH_HEX);
    if (hex_span(copy) != SERVICE_KEY_HASH_HEX) {
        snprintf(err, err_size, "the last field is not a SHA-256 in 64 lower-case hex digits, as sha256sum prints it");
        return SERVICE_LINE_BAD;
    }
    memcpy(out->hash, copy, sizeof copy);
    return SERVICE_LINE_KEY;
}

bool service_keys_is_key(const char *authorization)
{
    if (!authorization || strncasecmp(authorization, "Bearer ", 7))
        return false;
    const char *key = authorization + 7;
    return strlen(key) == SERVICE_KEY_LENGTH && !memcmp(key, SERVICE_KEY_PREFIX, SERVICE_KEY_PREFIX_LENGTH)
           && strspn(key + SERVICE_KEY_PREFIX_LENGTH, tokens_id_alphabet())
                  == SERVICE_KEY_LENGTH - SERVICE_KEY_PREFIX_LENGTH;
}

bool service_keys_hash(const char *key, size_t length, char out[SERVICE_KEY_HASH_HEX + 1])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    out[0] = '\0';
    if (!EVP_Digest(key, length, digest, &size, EVP_sha256(), NULL) || size * 2 != SERVICE_KEY_HASH_HEX)
        return false;
    hex_encode(digest, size, out);
    return true;
}

/* --- the table --- */

typedef struct {
    service_key_line_t line;
    double rate[SERVICE_QUOTA_COUNT], burst[SERVICE_QUOTA_COUNT]; /* rate 0: no limit */
    pthread_mutex_t lock;                                         /* guards buckets */
    ratelimit_bucket_t buckets[SERVICE_QUOTA_COUNT];
} entry_t;

typedef struct {
    atomic_uint refs;
    unsigned count;
    entry_t *entries;
} table_t;

/* What a file was when last read, to tell a change. */
typedef struct {
    bool exists;
    dev_t device;
    ino_t inode;
    off_t size;
    struct timespec modified, changed;
} file_id_t;

struct service_keys {
    char path[512];
    service_keys_limits_t limits;
    pthread_mutex_t lock; /* guards table (the pointer, not what it points to) */
    table_t *table;       /* holds one reference */
    atomic_uint_fast64_t next_check_us;
    pthread_mutex_t refresh_lock; /* one re-read at a time; guards seen */
    file_id_t seen;
};

static void table_free(table_t *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->count; i++)
        pthread_mutex_destroy(&t->entries[i].lock);
    free(t->entries);
    free(t);
}

static void table_release(table_t *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1)
        table_free(t);
}

/* The table now, with a reference the caller gives back (table_release). */
static table_t *table_acquire(service_keys_t *keys)
{
    pthread_mutex_lock(&keys->lock);
    table_t *t = keys->table;
    atomic_fetch_add(&t->refs, 1);
    pthread_mutex_unlock(&keys->lock);
    return t;
}

/* A quota's rate and bucket size: its line's, or the setting's for '-'. */
static void entry_limits(entry_t *e, const service_keys_limits_t *limits)
{
    for (int q = 0; q < SERVICE_QUOTA_COUNT; q++) {
        double rate = e->line.quotas[q] >= 0 ? (double)e->line.quotas[q] : (double)limits->rate[q];
        e->rate[q] = rate;
        e->burst[q] = q == SERVICE_QUOTA_CREATES      ? rate * CREATES_BURST_SECONDS
                      : q == SERVICE_QUOTA_BULK_GAMES ? (rate > BULK_GAMES_BURST ? rate : BULK_GAMES_BURST)
                                                      : rate;
    }
}

/* The lines of text (length bytes) as a table (one reference); NULL with
 * err naming the line when one is bad, or two share a name or a hash. */
static table_t *table_parse(const char *text, size_t length, const service_keys_limits_t *limits, char *err,
                            size_t err_size)
{
    table_t *t = calloc(1, sizeof *t);
    unsigned capacity = 0;
    if (!t) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    atomic_init(&t->refs, 1);
    unsigned number = 0;
    for (size_t at = 0; at < length; number++) {
        const char *newline = memchr(text + at, '\n', length - at);
        size_t line_length = newline ? (size_t)(newline - (text + at)) : length - at;
        service_key_line_t line;
        char why[240];
        service_line_t kind = service_keys_parse_line(text + at, line_length, &line, why, sizeof why);
        at += line_length + 1;
        if (kind == SERVICE_LINE_NONE)
            continue;
        for (unsigned i = 0; kind == SERVICE_LINE_KEY && i < t->count; i++) {
            if (!strcmp(t->entries[i].line.name, line.name))
                snprintf(why, sizeof why, "the name '%s' is on an earlier line too", line.name);
            else if (!strcmp(t->entries[i].line.hash, line.hash))
                snprintf(why, sizeof why, "the hash of '%s' is on an earlier line too (the same key twice)",
                         t->entries[i].line.name);
            else
                continue;
            kind = SERVICE_LINE_BAD;
        }
        if (kind == SERVICE_LINE_KEY && t->count == SERVICE_KEYS_MAX) {
            snprintf(why, sizeof why, "more than %d keys", SERVICE_KEYS_MAX);
            kind = SERVICE_LINE_BAD;
        }
        if (kind == SERVICE_LINE_BAD) {
            snprintf(err, err_size, "line %u: %s", number + 1, why);
            table_free(t);
            return NULL;
        }
        if (t->count == capacity) {
            unsigned more = capacity ? capacity * 2 : 8;
            entry_t *grown = realloc(t->entries, more * sizeof *grown);
            if (!grown) {
                snprintf(err, err_size, "out of memory");
                table_free(t);
                return NULL;
            }
            t->entries = grown;
            capacity = more;
        }
        entry_t *e = &t->entries[t->count++];
        memset(e, 0, sizeof *e);
        e->line = line;
        entry_limits(e, limits);
    }
    /* The locks last: an entry does not move once its lock is made. */
    for (unsigned i = 0; i < t->count; i++)
        pthread_mutex_init(&t->entries[i].lock, NULL);
    return t;
}

static void file_id_of(const struct stat *st, file_id_t *id)
{
    *id = (file_id_t){ .exists = true, .device = st->st_dev, .inode = st->st_ino, .size = st->st_size,
                       .modified = st->st_mtim, .changed = st->st_ctim };
}

static bool file_id_equal(const file_id_t *a, const file_id_t *b)
{
    if (!a->exists || !b->exists)
        return a->exists == b->exists;
    return a->device == b->device && a->inode == b->inode && a->size == b->size
           && a->modified.tv_sec == b->modified.tv_sec && a->modified.tv_nsec == b->modified.tv_nsec
           && a->changed.tv_sec == b->changed.tv_sec && a->changed.tv_nsec == b->changed.tv_nsec;
}

/* Reads and parses the file: its table (one reference), and what it was
 * into *id (exists false when it could not be opened); NULL with err
 * naming the file, and the line when one is bad. */
static table_t *load(const service_keys_t *keys, file_id_t *id, char *err, size_t err_size)
{
    const char *more = strlen(keys->path) > PATH_SHOWN ? "..." : "";
    char why[300] = "";
    table_t *t = NULL;
    *id = (file_id_t){ .exists = false };
    char *text = malloc(FILE_MAX + 1);
    int fd = text ? open(keys->path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;
    struct stat st;
    ssize_t n = -1;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        file_id_of(&st, id);
        n = credentials_read_up_to(fd, text, FILE_MAX + 1);
    }
    int read_errno = errno;
    if (fd >= 0)
        close(fd);
    if (!text)
        snprintf(why, sizeof why, "out of memory");
    else if (n < 0)
        snprintf(why, sizeof why, "cannot be read: %s", strerror(read_errno));
    else if (n > FILE_MAX)
        snprintf(why, sizeof why, "is larger than %d bytes", FILE_MAX);
    else
        t = table_parse(text, (size_t)n, &keys->limits, why, sizeof why);
    free(text);
    if (!t)
        snprintf(err, err_size, "--service-keys-file '%.*s%s' %s", PATH_SHOWN, keys->path, more, why);
    return t;
}

service_keys_t *service_keys_open(const char *path, const service_keys_limits_t *limits, char *err, size_t err_size)
{
    service_keys_t *keys = calloc(1, sizeof *keys);
    if (!keys || strlen(path) >= sizeof keys->path) {
        snprintf(err, err_size, keys ? "--service-keys-file: the path is too long" : "out of memory");
        free(keys);
        return NULL;
    }
    memcpy(keys->path, path, strlen(path) + 1);
    keys->limits = *limits;
    keys->table = load(keys, &keys->seen, err, err_size);
    if (!keys->table) {
        free(keys);
        return NULL;
    }
    pthread_mutex_init(&keys->lock, NULL);
    pthread_mutex_init(&keys->refresh_lock, NULL);
    atomic_init(&keys->next_check_us, 0);
    return keys;
}

void service_keys_free(service_keys_t *keys)
{
    if (!keys)
        return;
    table_release(keys->table);
    pthread_mutex_destroy(&keys->lock);
    pthread_mutex_destroy(&keys->refresh_lock);
    free(keys);
}

unsigned service_keys_count(service_keys_t *keys)
{
    table_t *t = table_acquire(keys);
    unsigned count = t->count;
    table_release(t);
    return count;
}

/* Puts t in place of the table, each bucket of a name both have carried
 * over, so that rewriting the file gives no key a fresh burst. */
static void swap_in(service_keys_t *keys, table_t *t)
{
    table_t *old = table_acquire(keys);
    for (unsigned i = 0; i < t->count; i++)
        for (unsigned j = 0; j < old->count; j++) {
            if (strcmp(t->entries[i].line.name, old->entries[j].line.name))
                continue;
            pthread_mutex_lock(&old->entries[j].lock);
            memcpy(t->entries[i].buckets, old->entries[j].buckets, sizeof t->entries[i].buckets);
            pthread_mutex_unlock(&old->entries[j].lock);
        }
    pthread_mutex_lock(&keys->lock);
    keys->table = t;
    pthread_mutex_unlock(&keys->lock);
    table_release(old); /* ours */
    table_release(old); /* the one keys->table held */
}

void service_keys_refresh(service_keys_t *keys, uint64_t now_us)
{
    uint_fast64_t due = atomic_load(&keys->next_check_us);
    if (now_us < due || !atomic_compare_exchange_strong(&keys->next_check_us, &due, now_us + REFRESH_US))
        return;
    pthread_mutex_lock(&keys->refresh_lock);
    struct stat st;
    file_id_t now = { .exists = false };
    if (stat(keys->path, &st) == 0)
        file_id_of(&st, &now);
    if (!file_id_equal(&now, &keys->seen)) {
        char err[400];
        file_id_t read_id;
        table_t *t = load(keys, &read_id, err, sizeof err);
        if (t) {
            fprintf(stderr, "chessd: --service-keys-file '%s' re-read: %u service key%s\n", keys->path, t->count,
                    t->count == 1 ? "" : "s");
            swap_in(keys, t);
        } else {
            fprintf(stderr, "chessd: WARNING: %s; the keys read before stay in use\n", err);
        }
        keys->seen = read_id.exists ? read_id : now;
    }
    pthread_mutex_unlock(&keys->refresh_lock);
}

/* The entry of hash in t, or NULL: every line is compared, each in constant time. */
static entry_t *table_find(table_t *t, const char *hash)
{
    entry_t *found = NULL;
    for (unsigned i = 0; i < t->count; i++)
        if (CRYPTO_memcmp(t->entries[i].line.hash, hash, SERVICE_KEY_HASH_HEX) == 0)
            found = &t->entries[i];
    return found;
}

/* The table and authorization's entry in it (NULL: none) into *t and *e,
 * the table with a reference to give back; the status so far. */
static service_keys_status_t find_key(service_keys_t *keys, const char *authorization, uint64_t now_us,
                                      table_t **t, entry_t **e)
{
    *t = NULL;
    *e = NULL;
    service_keys_refresh(keys, now_us);
    if (!service_keys_is_key(authorization))
        return SERVICE_KEYS_ENONE;
    char hash[SERVICE_KEY_HASH_HEX + 1];
    if (!service_keys_hash(authorization + 7, SERVICE_KEY_LENGTH, hash))
        return SERVICE_KEYS_EINVALID;
    *t = table_acquire(keys);
    *e = table_find(*t, hash);
    return *e ? SERVICE_KEYS_OK : SERVICE_KEYS_EINVALID;
}

service_keys_status_t service_keys_check(service_keys_t *keys, const char *authorization, service_scope_t scope,
                                         uint64_t now_us, char name[SERVICE_KEY_NAME_MAX + 1])
{
    table_t *t;
    entry_t *e;
    service_keys_status_t status = find_key(keys, authorization, now_us, &t, &e);
    name[0] = '\0';
    if (status == SERVICE_KEYS_OK) {
        memcpy(name, e->line.name, sizeof e->line.name);
        if (!(e->line.scopes & 1u << scope))
            status = SERVICE_KEYS_ESCOPE;
    }
    table_release(t);
    return status;
}

/* Fills *spent for e's quota q, past its rate. */
static void describe_spent(const entry_t *e, service_quota_t q, unsigned retry_after, service_keys_spent_t *spent)
{
    unsigned rate = (unsigned)e->rate[q], burst = (unsigned)e->burst[q];
    snprintf(spent->limit, sizeof spent->limit, "service-key:%s:%s", e->line.name, quotas[q].name);
    spent->max = rate;
    spent->retry_after = retry_after;
    char bursts[40] = "";
    if (burst != rate)
        snprintf(bursts, sizeof bursts, ", in bursts of %u", burst);
    snprintf(spent->detail, sizeof spent->detail, "%s with the service key '%s' are limited to %u a second (its "
             "quota %s in --service-keys-file%s)", quotas[q].counts, e->line.name, rate, quotas[q].name, bursts);
}

service_keys_status_t service_keys_take(service_keys_t *keys, const char *authorization,
                                        const unsigned counts[SERVICE_QUOTA_COUNT], uint64_t now_us,
                                        service_keys_spent_t *spent)
{
    table_t *t;
    entry_t *e;
    service_keys_status_t status = find_key(keys, authorization, now_us, &t, &e);
    if (status == SERVICE_KEYS_OK) {
        pthread_mutex_lock(&e->lock);
        for (int q = 0; q < SERVICE_QUOTA_COUNT && status == SERVICE_KEYS_OK; q++) {
            unsigned retry_after = 1;
            if (counts[q] && e->rate[q] > 0
                && !ratelimit_bucket_take(&e->buckets[q], e->rate[q], e->burst[q], counts[q], now_us, &retry_after)) {
                describe_spent(e, (service_quota_t)q, retry_after, spent);
                status = SERVICE_KEYS_ESPENT;
            }
        }
        pthread_mutex_unlock(&e->lock);
    }
    table_release(t);
    return status;
}
