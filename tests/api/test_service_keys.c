/* Tests for api/service_keys.c, with time passed in. A line is NAME SCOPES
 * QUOTAS SHA256, and a bad one is refused saying why, never echoing a key
 * or a hash; a key is "Bearer chsk_" and 43 base64url characters. A key of
 * the file holds its scopes (admin all of them) and its quotas; a changed
 * file is read again at most once a second, a good one replacing the table
 * with the buckets of its names kept, a bad one keeping the old table. */
#include <stdio.h>
#include <string.h>

#include "../../api/service_keys.h"
#include "../support/tests.h"

enum { SECOND_US = 1000000 };
static const uint64_t start_us = 1000ull * SECOND_US;

/* Keys of the key's form (the prefix and 43 base64url characters). */
#define KEY_A "chsk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define KEY_B "chsk_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
#define KEY_C "chsk_abcdefghijklmnopqrstuvwxyz-_0123456789ABCDE"

static char dir[64], path[128];
static const service_keys_limits_t limits = { { [SERVICE_QUOTA_REQUESTS] = 0, [SERVICE_QUOTA_CREATES] = 10,
                                                [SERVICE_QUOTA_BULK_GAMES] = 100 } };

static int setup(void) { return tests_temp_dir(dir, "service-keys") ? 0 : -1; }

static int teardown(void)
{
    tests_remove_dir(dir);
    return 0;
}

/* A key's hash in hex, in a static buffer (one at a time). */
static const char *hash_of(const char *key)
{
    static char hash[SERVICE_KEY_HASH_HEX + 1];
    CU_ASSERT_TRUE(service_keys_hash(key, strlen(key), hash));
    return hash;
}

/* Writes text to the keys file as operators should: a new file renamed over
 * the old one, so a reader sees either whole. */
static void write_keys(const char *text)
{
    char temporary[160];
    snprintf(path, sizeof path, "%s/keys", dir);
    snprintf(temporary, sizeof temporary, "%s/keys.new", dir);
    FILE *f = fopen(temporary, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    CU_ASSERT_EQUAL(rename(temporary, path), 0);
}

/* "NAME SCOPES QUOTAS HASH(key)\n" into out. */
static void key_line(char *out, size_t size, const char *name, const char *scopes, const char *quotas,
                     const char *key)
{
    snprintf(out, size, "%s %s %s %s\n", name, scopes, quotas, hash_of(key));
}

static service_line_t parse(const char *line, service_key_line_t *out, char *err, size_t size)
{
    err[0] = '\0';
    return service_keys_parse_line(line, strlen(line), out, err, size);
}

static void test_a_line_names_its_scopes_and_quotas(void)
{
    char line[300], err[240];
    service_key_line_t k;
    snprintf(line, sizeof line, "lobby-1 games:create,games:bulk requests=50/s,creates=5/s %s\r", hash_of(KEY_A));
    CU_ASSERT_EQUAL(parse(line, &k, err, sizeof err), SERVICE_LINE_KEY);
    CU_ASSERT_STRING_EQUAL(k.name, "lobby-1");
    CU_ASSERT_EQUAL(k.scopes, 1u << SERVICE_SCOPE_GAMES_CREATE | 1u << SERVICE_SCOPE_GAMES_BULK);
    CU_ASSERT_EQUAL(k.quotas[SERVICE_QUOTA_REQUESTS], 50);
    CU_ASSERT_EQUAL(k.quotas[SERVICE_QUOTA_CREATES], 5);
    CU_ASSERT_EQUAL(k.quotas[SERVICE_QUOTA_BULK_GAMES], -1); /* not given: the setting's */
    CU_ASSERT_STRING_EQUAL(k.hash, hash_of(KEY_A));
    /* '-' for none, blanks around and between the fields */
    snprintf(line, sizeof line, "  ops\t-   -  %s  ", hash_of(KEY_B));
    CU_ASSERT_EQUAL(parse(line, &k, err, sizeof err), SERVICE_LINE_KEY);
    CU_ASSERT_EQUAL(k.scopes, 0);
    for (int q = 0; q < SERVICE_QUOTA_COUNT; q++)
        CU_ASSERT_EQUAL(k.quotas[q], -1);
    /* admin holds every scope; 0/s is no limit */
    snprintf(line, sizeof line, "root admin bulk-games=0/s,requests=1000000/s %s", hash_of(KEY_C));
    CU_ASSERT_EQUAL(parse(line, &k, err, sizeof err), SERVICE_LINE_KEY);
    CU_ASSERT_EQUAL(k.scopes, (1u << SERVICE_SCOPE_COUNT) - 1);
    CU_ASSERT_EQUAL(k.quotas[SERVICE_QUOTA_BULK_GAMES], 0);
    CU_ASSERT_EQUAL(k.quotas[SERVICE_QUOTA_REQUESTS], 1000000);
    /* blank lines and comments are none */
    CU_ASSERT_EQUAL(parse("", &k, err, sizeof err), SERVICE_LINE_NONE);
    CU_ASSERT_EQUAL(parse(" \t\r", &k, err, sizeof err), SERVICE_LINE_NONE);
    CU_ASSERT_EQUAL(parse("# lobby games:create - chsk_...", &k, err, sizeof err), SERVICE_LINE_NONE);
    CU_ASSERT_STRING_EQUAL(service_scope_name(SERVICE_SCOPE_GAMES_READ_LIVE), "games:read-live");
    CU_ASSERT_STRING_EQUAL(service_scope_name(SERVICE_SCOPE_COUNT), "?");
    CU_ASSERT_STRING_EQUAL(service_quota_name(SERVICE_QUOTA_BULK_GAMES), "bulk-games");
}

/* Each bad line is refused with a reason containing `says`, and neither the
 * hash nor a key shows in it. */
static void test_a_bad_line_is_refused_saying_why_without_the_hash(void)
{
    static const struct {
        const char *fields, *says;
    } bad[] = {
        { "lobby games:create -", "has 3 fields" },
        { "lobby games:create - extra", "has more than 4 fields" },
        { "lob/by games:create -", "the name 'lob/by'" },
        { "lobby games:destroy -", "unknown scope 'games:destroy'" },
        { "lobby games:create,games:create -", "the scope games:create is named twice" },
        { "lobby games:create, -", "unknown scope ''" },
        { "lobby - moves=1/s", "unknown quota 'moves'" },
        { "lobby - creates=1/s,creates=2/s", "the quota creates is given twice" },
        { "lobby - creates=1", "the quota 'creates=1' is not creates=N/s" },
        { "lobby - creates=-1/s", "is not creates=N/s" },
        { "lobby - creates=1000001/s", "from 0 (no limit) to 1000000" },
        { "lobby - creates", "is not creates=N/s" },
    };
    char line[400], err[240];
    service_key_line_t k;
    const char *hash = hash_of(KEY_A);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* the hash last, but on the line that lacks a field */
        bool three = strstr(bad[i].says, "3 fields") != NULL;
        snprintf(line, sizeof line, "%s%s%s", bad[i].fields, three ? "" : " ", three ? "" : hash);
        CU_ASSERT_EQUAL(parse(line, &k, err, sizeof err), SERVICE_LINE_BAD);
        if (!strstr(err, bad[i].says))
            fprintf(stderr, "\n'%s': '%s' does not say '%s'\n", bad[i].fields, err, bad[i].says);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].says));
        CU_ASSERT_PTR_NULL(strstr(err, hash));
    }
    /* The hash: 64 lower-case hex digits, nothing else. */
    char upper[SERVICE_KEY_HASH_HEX + 1];
    snprintf(upper, sizeof upper, "%s", hash);
    for (char *p = upper; *p; p++)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 'a' + 'A');
    const char *hashes[] = { upper, "abc123", "0000000000000000000000000000000000000000000000000000000000000000f" };
    for (size_t i = 0; i < sizeof hashes / sizeof hashes[0]; i++) {
        snprintf(line, sizeof line, "lobby - - %s", hashes[i]);
        CU_ASSERT_EQUAL(parse(line, &k, err, sizeof err), SERVICE_LINE_BAD);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a SHA-256"));
        CU_ASSERT_PTR_NULL(strstr(err, hashes[i]));
    }
    /* A key pasted in place of its hash, anywhere, is refused and not echoed. */
    snprintf(line, sizeof line, "lobby games:create - %s", KEY_A);
    CU_ASSERT_EQUAL(parse(line, &k, err, sizeof err), SERVICE_LINE_BAD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "holds a service key"));
    CU_ASSERT_PTR_NULL(strstr(err, KEY_A + SERVICE_KEY_PREFIX_LENGTH));
    snprintf(line, sizeof line, "%s games:create - %s", KEY_A, hash);
    CU_ASSERT_EQUAL(parse(line, &k, err, sizeof err), SERVICE_LINE_BAD);
    CU_ASSERT_PTR_NULL(strstr(err, KEY_A + SERVICE_KEY_PREFIX_LENGTH));
    /* Too long, and a NUL. */
    char longer[SERVICE_KEYS_LINE_MAX + 40];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    CU_ASSERT_EQUAL(parse(longer, &k, err, sizeof err), SERVICE_LINE_BAD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "longer than"));
    CU_ASSERT_EQUAL(service_keys_parse_line("a\0b - - x", 9, &k, err, sizeof err), SERVICE_LINE_BAD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "NUL"));
}

static void test_a_key_is_bearer_the_prefix_and_43_base64url_characters(void)
{
    CU_ASSERT_TRUE(service_keys_is_key("Bearer " KEY_A));
    CU_ASSERT_TRUE(service_keys_is_key("bearer " KEY_C));
    CU_ASSERT_FALSE(service_keys_is_key(NULL));
    CU_ASSERT_FALSE(service_keys_is_key(KEY_A));                         /* no scheme */
    CU_ASSERT_FALSE(service_keys_is_key("Basic " KEY_A));
    CU_ASSERT_FALSE(service_keys_is_key("Bearer  " KEY_A));              /* two spaces */
    CU_ASSERT_FALSE(service_keys_is_key("Bearer " KEY_A "A"));           /* 44 characters */
    CU_ASSERT_FALSE(service_keys_is_key("Bearer chsk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")); /* 42 */
    CU_ASSERT_FALSE(service_keys_is_key("Bearer chsk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="));
    CU_ASSERT_FALSE(service_keys_is_key("Bearer CHSK_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    CU_ASSERT_FALSE(service_keys_is_key("Bearer abcdefghijklmnopqrstuv")); /* a player token: 22 characters */
}

static void test_a_keys_hash_is_its_sha256_in_lower_case_hex(void)
{
    char hash[SERVICE_KEY_HASH_HEX + 1];
    CU_ASSERT_TRUE(service_keys_hash("abc", 3, hash));
    CU_ASSERT_STRING_EQUAL(hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static service_keys_t *open_keys(const char *text)
{
    char err[400] = "";
    write_keys(text);
    service_keys_t *keys = service_keys_open(path, &limits, err, sizeof err);
    if (!keys)
        fprintf(stderr, "\n%s\n", err);
    return keys;
}

/* A file of three keys: one that creates, one that analyses, an admin. */
static service_keys_t *three_keys(void)
{
    char text[1000], line[300];
    snprintf(text, sizeof text, "# the lobby\n\n");
    key_line(line, sizeof line, "lobby", "games:create,games:read-live", "creates=2/s", KEY_A);
    strcat(text, line);
    key_line(line, sizeof line, "coach", "analysis", "-", KEY_B);
    strcat(text, line);
    key_line(line, sizeof line, "ops", "admin", "requests=3/s", KEY_C);
    strcat(text, line);
    return open_keys(text);
}

static void test_a_key_holds_its_scopes_and_admin_holds_them_all(void)
{
    service_keys_t *keys = three_keys();
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    CU_ASSERT_EQUAL(service_keys_count(keys), 3);
    char name[SERVICE_KEY_NAME_MAX + 1];
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_A, SERVICE_SCOPE_GAMES_CREATE, start_us, name),
                    SERVICE_KEYS_OK);
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_A, SERVICE_SCOPE_GAMES_BULK, start_us, name),
                    SERVICE_KEYS_ESCOPE);
    CU_ASSERT_STRING_EQUAL(name, "lobby");
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_B, SERVICE_SCOPE_ANALYSIS, start_us, name),
                    SERVICE_KEYS_OK);
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_B, SERVICE_SCOPE_GAMES_EXPORT, start_us, name),
                    SERVICE_KEYS_ESCOPE);
    CU_ASSERT_STRING_EQUAL(name, "coach");
    for (int s = 0; s < SERVICE_SCOPE_COUNT; s++)
        CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_C, (service_scope_t)s, start_us, name),
                        SERVICE_KEYS_OK);
    /* A key of the form that no line has; no key at all; a player token. */
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer chsk_DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD",
                                       SERVICE_SCOPE_GAMES_CREATE, start_us, name),
                    SERVICE_KEYS_EINVALID);
    CU_ASSERT_EQUAL(service_keys_check(keys, NULL, SERVICE_SCOPE_GAMES_CREATE, start_us, name), SERVICE_KEYS_ENONE);
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer abcdefghijklmnopqrstuv", SERVICE_SCOPE_GAMES_CREATE, start_us,
                                       name),
                    SERVICE_KEYS_ENONE);
    service_keys_free(keys);
    service_keys_free(NULL);
}

static void test_a_keys_quotas_are_its_own_and_say_when_spent(void)
{
    service_keys_t *keys = three_keys();
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    const unsigned create[SERVICE_QUOTA_COUNT] = { [SERVICE_QUOTA_REQUESTS] = 1, [SERVICE_QUOTA_CREATES] = 1 };
    service_keys_spent_t spent;
    /* creates=2/s: a burst of five seconds' worth, as --rate-limit-create's */
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_A, create, start_us, &spent), SERVICE_KEYS_OK);
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_A, create, start_us, &spent), SERVICE_KEYS_ESPENT);
    CU_ASSERT_STRING_EQUAL(spent.limit, "service-key:lobby:creates");
    CU_ASSERT_EQUAL(spent.max, 2);
    CU_ASSERT_EQUAL(spent.retry_after, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(spent.detail, "game creations with the service key 'lobby' are limited to 2 a second"));
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_A, create, start_us + SECOND_US / 2 + 1, &spent),
                    SERVICE_KEYS_OK);
    /* requests: unlimited here (0/s by the setting for '-'), so never spent */
    const unsigned request[SERVICE_QUOTA_COUNT] = { [SERVICE_QUOTA_REQUESTS] = 1 };
    for (int i = 0; i < 100; i++)
        CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_A, request, start_us, &spent), SERVICE_KEYS_OK);
    /* requests=3/s: three, then a second to wait */
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_C, request, start_us, &spent), SERVICE_KEYS_OK);
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_C, request, start_us, &spent), SERVICE_KEYS_ESPENT);
    CU_ASSERT_STRING_EQUAL(spent.limit, "service-key:ops:requests");
    /* '-' quotas are the settings': bulk-games 100/s in bursts of 1000 */
    const unsigned bulk[SERVICE_QUOTA_COUNT] = { [SERVICE_QUOTA_BULK_GAMES] = 600 };
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_B, bulk, start_us, &spent), SERVICE_KEYS_OK);
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_B, bulk, start_us, &spent), SERVICE_KEYS_ESPENT);
    CU_ASSERT_STRING_EQUAL(spent.limit, "service-key:coach:bulk-games");
    CU_ASSERT_EQUAL(spent.max, 100);
    CU_ASSERT_EQUAL(spent.retry_after, 2);
    /* No key, or one no line has: the caller counts per address. */
    CU_ASSERT_EQUAL(service_keys_take(keys, NULL, create, start_us, &spent), SERVICE_KEYS_ENONE);
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer chsk_DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD", create,
                                      start_us, &spent),
                    SERVICE_KEYS_EINVALID);
    service_keys_free(keys);
}

static void test_a_changed_file_is_read_again_keeping_each_names_buckets(void)
{
    char text[1000], line[300];
    key_line(text, sizeof text, "lobby", "games:create", "creates=1/s", KEY_A);
    service_keys_t *keys = open_keys(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    const unsigned create[SERVICE_QUOTA_COUNT] = { [SERVICE_QUOTA_CREATES] = 1 };
    service_keys_spent_t spent;
    uint64_t now = start_us;
    while (service_keys_take(keys, "Bearer " KEY_A, create, now, &spent) == SERVICE_KEYS_OK)
        ;
    /* lobby's key rotated to B (its bucket spent still), and a new key C */
    key_line(text, sizeof text, "lobby", "games:create", "creates=1/s", KEY_B);
    key_line(line, sizeof line, "coach", "analysis", "-", KEY_C);
    strcat(text, line);
    write_keys(text);
    char name[SERVICE_KEY_NAME_MAX + 1];
    /* Within the second, the file is not looked at. */
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_A, SERVICE_SCOPE_GAMES_CREATE, now + 1000, name),
                    SERVICE_KEYS_OK);
    now += SECOND_US + 1000;
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_A, SERVICE_SCOPE_GAMES_CREATE, now, name),
                    SERVICE_KEYS_EINVALID);
    CU_ASSERT_EQUAL(service_keys_count(keys), 2);
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_C, SERVICE_SCOPE_ANALYSIS, now, name), SERVICE_KEYS_OK);
    /* lobby's bucket came along: one token a second since, no fresh burst */
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_B, create, now, &spent), SERVICE_KEYS_OK);
    CU_ASSERT_EQUAL(service_keys_take(keys, "Bearer " KEY_B, create, now, &spent), SERVICE_KEYS_ESPENT);
    service_keys_free(keys);
}

static void test_a_bad_new_file_keeps_the_old_table(void)
{
    char text[1000];
    key_line(text, sizeof text, "lobby", "games:create", "-", KEY_A);
    service_keys_t *keys = open_keys(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    char name[SERVICE_KEY_NAME_MAX + 1];
    uint64_t now = start_us;
    write_keys("lobby games:create - not-a-hash\n");
    now += 2 * SECOND_US;
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_A, SERVICE_SCOPE_GAMES_CREATE, now, name),
                    SERVICE_KEYS_OK);
    /* Gone: still the old table. */
    snprintf(text, sizeof text, "%s/keys", dir);
    CU_ASSERT_EQUAL(remove(text), 0);
    now += 2 * SECOND_US;
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_A, SERVICE_SCOPE_GAMES_CREATE, now, name),
                    SERVICE_KEYS_OK);
    /* Good again, with B: B only. */
    key_line(text, sizeof text, "lobby", "games:create", "-", KEY_B);
    write_keys(text);
    now += 2 * SECOND_US;
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_B, SERVICE_SCOPE_GAMES_CREATE, now, name),
                    SERVICE_KEYS_OK);
    CU_ASSERT_EQUAL(service_keys_check(keys, "Bearer " KEY_A, SERVICE_SCOPE_GAMES_CREATE, now, name),
                    SERVICE_KEYS_EINVALID);
    service_keys_free(keys);
}

/* A file refused at start: the reason names the file and the line, never its hash. */
static void test_a_bad_file_is_refused_naming_the_line(void)
{
    char text[1000], line[300], err[400];
    key_line(text, sizeof text, "lobby", "games:create", "-", KEY_A);
    key_line(line, sizeof line, "lobby", "analysis", "-", KEY_B);
    strcat(text, "# two lobbies\n");
    strcat(text, line);
    write_keys(text);
    CU_ASSERT_PTR_NULL(service_keys_open(path, &limits, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line 3: the name 'lobby' is on an earlier line too"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--service-keys-file '"));
    key_line(text, sizeof text, "lobby", "games:create", "-", KEY_A);
    key_line(line, sizeof line, "lobby2", "analysis", "-", KEY_A);
    strcat(text, line);
    write_keys(text);
    CU_ASSERT_PTR_NULL(service_keys_open(path, &limits, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line 2: the hash of 'lobby' is on an earlier line too"));
    CU_ASSERT_PTR_NULL(strstr(err, hash_of(KEY_A)));
    snprintf(text, sizeof text, "%s/none", dir);
    CU_ASSERT_PTR_NULL(service_keys_open(text, &limits, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot be read"));
    /* An empty file is a table of no keys. */
    service_keys_t *keys = open_keys("# none yet\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    CU_ASSERT_EQUAL(service_keys_count(keys), 0);
    service_keys_free(keys);
}

int test_service_keys_register(void)
{
    CU_pSuite suite = CU_add_suite("service_keys", setup, teardown);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_line_names_its_scopes_and_quotas);
    CU_ADD_TEST(suite, test_a_bad_line_is_refused_saying_why_without_the_hash);
    CU_ADD_TEST(suite, test_a_key_is_bearer_the_prefix_and_43_base64url_characters);
    CU_ADD_TEST(suite, test_a_keys_hash_is_its_sha256_in_lower_case_hex);
    CU_ADD_TEST(suite, test_a_key_holds_its_scopes_and_admin_holds_them_all);
    CU_ADD_TEST(suite, test_a_keys_quotas_are_its_own_and_say_when_spent);
    CU_ADD_TEST(suite, test_a_changed_file_is_read_again_keeping_each_names_buckets);
    CU_ADD_TEST(suite, test_a_bad_new_file_keeps_the_old_table);
    CU_ADD_TEST(suite, test_a_bad_file_is_refused_naming_the_line);
    return CU_get_error();
}
