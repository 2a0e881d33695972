/* `chessd keys` (keys_cli.h). A new key is 32 bytes of RAND_bytes in
 * base64url after the prefix, printed once, with the line to add to the
 * file: its SHA-256, never the key. The line is read back by the file's own
 * parser before anything is printed, so what is printed is what loads. */
#include "keys_cli.h"

#include <string.h>

#include "game/tokens.h"
#include "service_keys.h"

static const char usage[] = "usage: chessd keys new NAME [SCOPE...] | chessd keys hash < KEY\n";

/* The scopes, joined by commas ('-' for none), into out; false when they
 * do not fit or an argument holds a blank (it would split the line). */
static bool join_scopes(int count, char **scopes, char *out, size_t size)
{
    size_t used = 0;
    snprintf(out, size, "-");
    for (int i = 0; i < count; i++) {
        size_t length = strlen(scopes[i]);
        if (strpbrk(scopes[i], " \t\r\n") || used + length + 2 > size)
            return false;
        if (used)
            out[used++] = ',';
        memcpy(out + used, scopes[i], length + 1);
        used += length;
    }
    return true;
}

static int keys_new(int argc, char **argv, FILE *out, FILE *err)
{
    char scopes[SERVICE_KEYS_LINE_MAX], key[SERVICE_KEY_SIZE], secret[TOKENS_SECRET_TEXT_SIZE];
    char hash[SERVICE_KEY_HASH_HEX + 1], line[SERVICE_KEYS_LINE_MAX + 1], why[240];
    if (argc < 1) {
        fputs(usage, err);
        return 2;
    }
    if (strpbrk(argv[0], " \t\r\n") || !join_scopes(argc - 1, argv + 1, scopes, sizeof scopes)) {
        fprintf(err, "chessd keys new: a name or scope holds a blank, or the scopes are too long\n");
        return 2;
    }
    if (!tokens_new_secret(secret) || strlen(secret) != SERVICE_KEY_LENGTH - SERVICE_KEY_PREFIX_LENGTH) {
        fprintf(err, "chessd keys new: no random bytes from OpenSSL (RAND_bytes failed)\n");
        return 2;
    }
    snprintf(key, sizeof key, SERVICE_KEY_PREFIX "%s", secret);
    if (!service_keys_hash(key, strlen(key), hash)) {
        fprintf(err, "chessd keys new: OpenSSL failed to hash the key\n");
        return 2;
    }
    int length = snprintf(line, sizeof line, "%s %s " SERVICE_KEYS_DEFAULT_QUOTAS " %s", argv[0], scopes, hash);
    service_key_line_t parsed;
    if (length < 0 || (size_t)length >= sizeof line
        || service_keys_parse_line(line, (size_t)length, &parsed, why, sizeof why) != SERVICE_LINE_KEY) {
        fprintf(err, "chessd keys new: %s\n", length < 0 || (size_t)length >= sizeof line ? "the line is too long" : why);
        return 2;
    }
    fprintf(out, "%s\n%s\n", key, line);
    fprintf(err, "chessd keys new: the first line is the key for '%s', shown this once: give it to that service "
                 "alone (Authorization: Bearer KEY). The second is its line for --service-keys-file, which "
                 "holds only the key's SHA-256: add it, and chessd reads the file again within a second. Its "
                 "quotas are requests, creations and games of bulks a second; edit them as needed.\n",
            parsed.name);
    return 0;
}

/* A key on in (one line), its SHA-256 on out: to check a line, or to make
 * one for a key minted elsewhere. */
static int keys_hash(FILE *in, FILE *out, FILE *err)
{
    char text[SERVICE_KEY_LENGTH + 8] = "", bearer[sizeof text + 8], hash[SERVICE_KEY_HASH_HEX + 1];
    if (!fgets(text, sizeof text, in))
        text[0] = '\0';
    text[strcspn(text, "\r\n")] = '\0';
    snprintf(bearer, sizeof bearer, "Bearer %s", text);
    if (!service_keys_is_key(bearer)) {
        fprintf(err, "chessd keys hash: stdin does not hold a key (" SERVICE_KEY_PREFIX " and 43 base64url "
                     "characters, then a newline or the end)\n");
        return 2;
    }
    if (!service_keys_hash(text, strlen(text), hash)) {
        fprintf(err, "chessd keys hash: OpenSSL failed to hash the key\n");
        return 2;
    }
    fprintf(out, "%s\n", hash);
    return 0;
}

int keys_cli_main(int argc, char **argv, FILE *in, FILE *out, FILE *err)
{
    if (argc >= 1 && !strcmp(argv[0], "new"))
        return keys_new(argc - 1, argv + 1, out, err);
    if (argc == 1 && !strcmp(argv[0], "hash"))
        return keys_hash(in, out, err);
    fputs(usage, err);
    return 2;
}
