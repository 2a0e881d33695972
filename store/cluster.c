/* Redis Cluster's routing rules (see cluster.h): CRC16 hash slots, MOVED and
 * ASK redirections, and the slot map of a CLUSTER SLOTS reply. Pure and
 * reentrant: no allocation, no I/O, no state besides the constant CRC table.
 * Every parser reads its input with its length and refuses what Redis never
 * sends rather than guessing. */
#include "cluster.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* CRC16 XMODEM (polynomial 0x1021, initial value 0, no reflection): entry i
 * is the CRC of the byte i, as in Redis's crc16.c. */
static const uint16_t crc16_table[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
    0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef,
    0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
    0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de,
    0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
    0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4,
    0xb75b, 0xa77a, 0x9719, 0x8738, 0xf7df, 0xe7fe, 0xd79d, 0xc7bc,
    0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
    0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12,
    0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
    0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41,
    0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b, 0x8d68, 0x9d49,
    0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
    0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78,
    0x9188, 0x81a9, 0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f,
    0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e,
    0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
    0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
    0xa7db, 0xb7fa, 0x8799, 0x97b8, 0xe75f, 0xf77e, 0xc71d, 0xd73c,
    0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3,
    0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
    0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92,
    0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b, 0x9de8, 0x8dc9,
    0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
    0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8,
    0x6e17, 0x7e36, 0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

static uint16_t crc16(const unsigned char *bytes, size_t length)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < length; i++)
        crc = (uint16_t)(crc << 8) ^ crc16_table[((crc >> 8) ^ bytes[i]) & 0xff];
    return crc;
}

unsigned cluster_key_slot(const char *key, size_t length)
{
    const unsigned char *bytes = (const unsigned char *)key;
    const unsigned char *open = length ? memchr(bytes, '{', length) : NULL;
    if (open) {
        size_t after = (size_t)(open - bytes) + 1;
        const unsigned char *close = memchr(open + 1, '}', length - after);
        /* "{}" hashes the whole key, as Redis does: an empty tag is no tag. */
        if (close && close > open + 1)
            return crc16(open + 1, (size_t)(close - open - 1)) % CLUSTER_SLOT_COUNT;
    }
    return crc16(bytes, length) % CLUSTER_SLOT_COUNT;
}

/* The CRC of three bytes from a zero state, for each tail of alphabet's
 * characters, inverted: by the slot it gives (its low 14 bits), one tail
 * that gives it (+1; 0: none). crc16(prefix tail) is the CRC of prefix
 * followed by three zero bytes, xor the tail's own, so one lookup fits it. */
static uint32_t tail_of_slot[CLUSTER_SLOT_COUNT];
static char tail_alphabet[65];
static pthread_once_t tail_once = PTHREAD_ONCE_INIT;

static void tail_table_init(void)
{
    for (uint32_t t = 0; t < 64 * 64 * 64; t++) {
        unsigned char tail[3] = { (unsigned char)tail_alphabet[t >> 12], (unsigned char)tail_alphabet[(t >> 6) & 63],
                                  (unsigned char)tail_alphabet[t & 63] };
        unsigned slot = crc16(tail, 3) % CLUSTER_SLOT_COUNT;
        if (!tail_of_slot[slot])
            tail_of_slot[slot] = t + 1;
    }
}

bool cluster_fit_slot(char *text, size_t length, const char alphabet[64], unsigned slot)
{
    static pthread_mutex_t setting = PTHREAD_MUTEX_INITIALIZER;
    if (length < 3 || slot >= CLUSTER_SLOT_COUNT)
        return false;
    pthread_mutex_lock(&setting); /* one alphabet a process: the first caller's */
    if (!tail_alphabet[0])
        memcpy(tail_alphabet, alphabet, 64);
    bool same = !memcmp(tail_alphabet, alphabet, 64);
    pthread_mutex_unlock(&setting);
    if (!same)
        return false;
    pthread_once(&tail_once, tail_table_init);
    uint16_t crc = 0;
    const unsigned char *bytes = (const unsigned char *)text;
    for (size_t i = 0; i < length - 3; i++)
        crc = (uint16_t)(crc << 8) ^ crc16_table[((crc >> 8) ^ bytes[i]) & 0xff];
    for (int i = 0; i < 3; i++) /* the prefix followed by three zero bytes */
        crc = (uint16_t)(crc << 8) ^ crc16_table[(crc >> 8) & 0xff];
    uint32_t t = tail_of_slot[(crc ^ slot) % CLUSTER_SLOT_COUNT];
    if (!t--)
        return false;
    text[length - 3] = alphabet[t >> 12];
    text[length - 2] = alphabet[(t >> 6) & 63];
    text[length - 1] = alphabet[t & 63];
    return true;
}

/* The value of the decimal digits text[0..length) into *value when there are
 * 1 to max_digits of them and nothing else (no sign, no space). */
static bool parse_digits(const char *text, size_t length, size_t max_digits, unsigned long *value)
{
    if (length == 0 || length > max_digits)
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(text[i] - '0');
    }
    *value = v;
    return true;
}

/* A host as Redis writes one (a name or an IP literal, no brackets): printable
 * ASCII without spaces, shorter than CLUSTER_HOST_SIZE. Copied into host with
 * its NUL; "?" (an endpoint the node does not know) becomes "", the "same
 * host as the one asked" of an empty host. */
static bool copy_host(const char *text, size_t length, char host[CLUSTER_HOST_SIZE])
{
    if (length >= CLUSTER_HOST_SIZE)
        return false;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= ' ' || c >= 0x7f || c == '[' || c == ']')
            return false;
    }
    if (length == 1 && text[0] == '?')
        length = 0;
    memcpy(host, text, length);
    host[length] = '\0';
    return true;
}

/* "<host>:<port>", split at the last ':' (an IPv6 literal has several). */
static bool parse_endpoint(const char *text, size_t length, cluster_node_t *node)
{
    const char *colon = NULL;
    for (size_t i = length; i > 0; i--) {
        if (text[i - 1] == ':') {
            colon = text + i - 1;
            break;
        }
    }
    if (!colon)
        return false;
    size_t host_length = (size_t)(colon - text);
    unsigned long port;
    if (!parse_digits(colon + 1, length - host_length - 1, 5, &port) || port < 1 || port > 65535)
        return false;
    if (!copy_host(text, host_length, node->host))
        return false;
    node->port = (int)port;
    return true;
}

bool cluster_parse_redirect(const char *error, size_t length, cluster_redirect_t *out)
{
    static const struct {
        const char *word;
        cluster_redirect_kind_t kind;
    } kinds[] = { { "MOVED ", CLUSTER_REDIRECT_MOVED }, { "ASK ", CLUSTER_REDIRECT_ASK } };
    if (!error || !out)
        return false;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t word_length = strlen(kinds[k].word);
        if (length <= word_length || memcmp(error, kinds[k].word, word_length))
            continue;
        const char *slot_text = error + word_length;
        const char *end = error + length;
        const char *space = memchr(slot_text, ' ', (size_t)(end - slot_text));
        if (!space)
            return false;
        unsigned long slot;
        cluster_redirect_t parsed = { .kind = kinds[k].kind };
        if (!parse_digits(slot_text, (size_t)(space - slot_text), 5, &slot) || slot >= CLUSTER_SLOT_COUNT
            || !parse_endpoint(space + 1, (size_t)(end - space - 1), &parsed.node))
            return false;
        parsed.slot = (unsigned)slot;
        *out = parsed;
        return true;
    }
    return false;
}

/* Writes "range <index>: <why>" into err (when there is room). */
static bool refuse(char *err, size_t err_size, size_t range, const char *why)
{
    if (err && err_size)
        snprintf(err, err_size, "CLUSTER SLOTS range %zu: %s", range, why);
    return false;
}

/* A node entry [host, port, id, metadata...] into node: host a bulk string
 * (empty, "?" or nil: the asked host), port an integer 1-65535. NULL when
 * it is fine, else why not. */
static const char *read_node(const redisReply *entry, const char *asked_host, cluster_node_t *node)
{
    if (!entry || entry->type != REDIS_REPLY_ARRAY || entry->elements < 2 || !entry->element)
        return "a node is not an array of at least host and port";
    const redisReply *host = entry->element[0], *port = entry->element[1];
    if (!host || !port)
        return "a node is not an array of at least host and port";
    if (port->type != REDIS_REPLY_INTEGER || port->integer < 1 || port->integer > 65535)
        return "a node's port is not an integer from 1 to 65535";
    if (host->type == REDIS_REPLY_NIL) {
        node->host[0] = '\0';
    } else if (host->type != REDIS_REPLY_STRING || (host->len && !host->str)
               || !copy_host(host->str, host->len, node->host)) {
        return "a node's host is not a string of printable characters shorter than 256 bytes";
    }
    if (!node->host[0] && asked_host) {
        if (!copy_host(asked_host, strlen(asked_host), node->host))
            return "the asked host is not a host name or address shorter than 256 bytes";
    }
    node->port = (int)port->integer;
    return NULL;
}

static void map_clear(cluster_map_t *map)
{
    for (size_t s = 0; s < CLUSTER_SLOT_COUNT; s++)
        map->slot_node[s] = CLUSTER_NO_NODE;
    map->node_count = 0;
}

/* The slot bound reply (an integer 0-16383) into *slot. */
static bool read_slot(const redisReply *reply, unsigned *slot)
{
    if (!reply || reply->type != REDIS_REPLY_INTEGER || reply->integer < 0 || reply->integer >= CLUSTER_SLOT_COUNT)
        return false;
    *slot = (unsigned)reply->integer;
    return true;
}

/* Adds one range [start, end, master, replicas...] to map. */
static bool add_range(const redisReply *range, size_t index, const char *asked_host, cluster_map_t *map, char *err,
                      size_t err_size)
{
    if (!range || range->type != REDIS_REPLY_ARRAY || range->elements < 3 || !range->element)
        return refuse(err, err_size, index, "not an array of start, end and at least one node");
    unsigned start, end;
    if (!read_slot(range->element[0], &start) || !read_slot(range->element[1], &end))
        return refuse(err, err_size, index, "start or end is not an integer slot from 0 to 16383");
    if (start > end)
        return refuse(err, err_size, index, "start is after end");
    cluster_node_t master, replica;
    const char *why = read_node(range->element[2], asked_host, &master);
    for (size_t r = 3; !why && r < range->elements; r++)
        why = read_node(range->element[r], asked_host, &replica);
    if (why)
        return refuse(err, err_size, index, why);
    unsigned node = cluster_map_find(map, master.host, master.port);
    if (node == CLUSTER_NO_NODE) {
        if (map->node_count >= CLUSTER_NODES_MAX)
            return refuse(err, err_size, index, "more masters than a map holds (256)");
        node = map->node_count++;
        map->nodes[node] = master;
    }
    for (unsigned slot = start; slot <= end; slot++) {
        if (map->slot_node[slot] != CLUSTER_NO_NODE)
            return refuse(err, err_size, index, "overlaps an earlier range");
        map->slot_node[slot] = (uint16_t)node;
    }
    return true;
}

bool cluster_map_from_slots(const redisReply *reply, const char *asked_host, cluster_map_t *map, char *err,
                            size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!map)
        return false;
    map_clear(map);
    if (!reply || reply->type != REDIS_REPLY_ARRAY || (reply->elements && !reply->element)) {
        if (err && err_size) {
            if (reply && reply->type == REDIS_REPLY_ERROR && reply->str)
                snprintf(err, err_size, "CLUSTER SLOTS answered an error: %.*s",
                         (int)(reply->len < 200 ? reply->len : 200), reply->str);
            else
                snprintf(err, err_size, "CLUSTER SLOTS answered something other than an array");
        }
        return false;
    }
    for (size_t i = 0; i < reply->elements; i++) {
        if (!add_range(reply->element[i], i, asked_host, map, err, err_size)) {
            map_clear(map);
            return false;
        }
    }
    return true;
}

unsigned cluster_map_find(const cluster_map_t *map, const char *host, int port)
{
    if (!map || !host)
        return CLUSTER_NO_NODE;
    for (unsigned i = 0; i < map->node_count && i < CLUSTER_NODES_MAX; i++) {
        if (map->nodes[i].port == port && !strcmp(map->nodes[i].host, host))
            return i;
    }
    return CLUSTER_NO_NODE;
}
