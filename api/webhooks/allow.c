/* The webhook destination policy (see allow.h): the non-public table, the
 * rule, the URL reader and the bounded resolver. A resolution shares one
 * reference-counted record between the caller and its helper thread, so
 * either may leave first; the last one out frees it. */
#include "allow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "../../rules/base/text.h"
#include "../../store/fiber.h"

/* Non-public space: what a webhook never reaches unless a listed range
 * wholly inside one of these rows opens part of it. IPv4-mapped and NAT64
 * addresses are not rows: they are judged as the IPv4 address they hold. */
static const struct {
    const char *base;
    unsigned prefix;
} non_public_table[] = {
    { "0.0.0.0", 8 },        /* "this network" (RFC 791, RFC 6890) */
    { "10.0.0.0", 8 },       /* private (RFC 1918) */
    { "100.64.0.0", 10 },    /* carrier-grade NAT (RFC 6598); some clouds' metadata */
    { "127.0.0.0", 8 },      /* loopback (RFC 1122) */
    { "169.254.0.0", 16 },   /* link-local (RFC 3927), cloud metadata 169.254.169.254 */
    { "172.16.0.0", 12 },    /* private (RFC 1918) */
    { "192.0.0.0", 24 },     /* IETF protocol assignments (RFC 6890) */
    { "192.0.2.0", 24 },     /* TEST-NET-1 (RFC 5737) */
    { "192.168.0.0", 16 },   /* private (RFC 1918) */
    { "198.18.0.0", 15 },    /* benchmarking (RFC 2544) */
    { "198.51.100.0", 24 },  /* TEST-NET-2 (RFC 5737) */
    { "203.0.113.0", 24 },   /* TEST-NET-3 (RFC 5737) */
    { "224.0.0.0", 4 },      /* multicast (RFC 5771) */
    { "240.0.0.0", 4 },      /* reserved and broadcast (RFC 1112, RFC 919) */
    { "::", 128 },           /* unspecified (RFC 4291) */
    { "::1", 128 },          /* loopback (RFC 4291) */
    { "::", 96 },            /* IPv4-compatible, deprecated (RFC 4291 2.5.5.1) */
    { "64:ff9b:1::", 48 },   /* local-use NAT64 (RFC 8215) */
    { "100::", 64 },         /* discard-only (RFC 6666) */
    { "2001:db8::", 32 },    /* documentation (RFC 3849) */
    { "fc00::", 7 },         /* unique local (RFC 4193) */
    { "fe80::", 10 },        /* link-local (RFC 4291) */
    { "fec0::", 10 },        /* site-local, deprecated (RFC 3879) */
    { "ff00::", 8 },         /* multicast (RFC 4291) */
};
enum { NON_PUBLIC_COUNT = sizeof non_public_table / sizeof non_public_table[0] };

static const char *const refusal_codes[WEBHOOK_REFUSAL_COUNT] = {
    [WEBHOOK_ALLOWED] = "allowed",
    [WEBHOOK_REFUSE_URL] = "url",
    [WEBHOOK_REFUSE_TOO_LONG] = "too_long",
    [WEBHOOK_REFUSE_SCHEME] = "scheme",
    [WEBHOOK_REFUSE_USERINFO] = "userinfo",
    [WEBHOOK_REFUSE_HOST] = "host",
    [WEBHOOK_REFUSE_PORT] = "port",
    [WEBHOOK_REFUSE_FRAGMENT] = "fragment",
    [WEBHOOK_REFUSE_NOT_ALLOWED] = "not_allowed",
    [WEBHOOK_REFUSE_PRIVATE] = "private_address",
    [WEBHOOK_REFUSE_UNRESOLVED] = "unresolved",
};

const char *webhook_refusal_code(webhook_refusal_t refusal)
{
    return (unsigned)refusal < WEBHOOK_REFUSAL_COUNT ? refusal_codes[refusal] : "unknown";
}

/* --- addresses and ranges --- */

bool webhook_addr_parse(const char *text, webhook_addr_t *out)
{
    memset(out, 0, sizeof *out);
    if (inet_pton(AF_INET, text, out->bytes) == 1) {
        out->family = 4;
        return true;
    }
    if (inet_pton(AF_INET6, text, out->bytes) == 1) {
        out->family = 6;
        return true;
    }
    return false;
}

void webhook_addr_format(const webhook_addr_t *addr, char *out, size_t size)
{
    if (!inet_ntop(addr->family == 4 ? AF_INET : AF_INET6, addr->bytes, out, (socklen_t)size))
        text_copy(out, size, "?");
}

/* The address judged for addr: the IPv4 address inside an IPv4-mapped
 * (::ffff:0:0/96) or NAT64 (64:ff9b::/96) one, else addr itself. */
static webhook_addr_t effective(const webhook_addr_t *addr)
{
    static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };
    if (addr->family != 6 || (memcmp(addr->bytes, mapped, 12) && memcmp(addr->bytes, nat64, 12)))
        return *addr;
    webhook_addr_t v4 = { .family = 4 };
    memcpy(v4.bytes, addr->bytes + 12, 4);
    return v4;
}

/* Whether the first prefix bits of a and b are equal (same family). */
static bool same_prefix(const webhook_addr_t *a, const webhook_addr_t *b, unsigned prefix)
{
    if (a->family != b->family)
        return false;
    unsigned whole = prefix / 8, rest = prefix % 8;
    if (memcmp(a->bytes, b->bytes, whole))
        return false;
    if (!rest)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (a->bytes[whole] & mask) == (b->bytes[whole] & mask);
}

static bool cidr_contains(const webhook_cidr_t *cidr, const webhook_addr_t *addr)
{
    return same_prefix(&cidr->base, addr, cidr->prefix);
}

/* Row i of the non-public table as a range. */
static webhook_cidr_t non_public_row(int i)
{
    webhook_cidr_t row = { .prefix = non_public_table[i].prefix, .non_public = true };
    webhook_addr_parse(non_public_table[i].base, &row.base);
    return row;
}

bool webhook_addr_is_public(const webhook_addr_t *addr)
{
    webhook_addr_t judged = effective(addr);
    for (int i = 0; i < NON_PUBLIC_COUNT; i++) {
        webhook_cidr_t row = non_public_row(i);
        if (cidr_contains(&row, &judged))
            return false;
    }
    return true;
}

/* Whether cidr lies wholly inside one row of the non-public table. */
static bool inside_non_public(const webhook_cidr_t *cidr)
{
    for (int i = 0; i < NON_PUBLIC_COUNT; i++) {
        webhook_cidr_t row = non_public_row(i);
        if (row.prefix <= cidr->prefix && cidr_contains(&row, &cidr->base))
            return true;
    }
    return false;
}

/* --- host names --- */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alnum(char c) { return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'z'); }

/* Whether name[0..length) is a host name: labels of 1 to 63 letters, digits
 * and hyphens, not starting or ending with a hyphen, at most
 * WEBHOOK_HOST_MAX bytes. */
static bool is_host_name(const char *name, size_t length)
{
    if (length == 0 || length > WEBHOOK_HOST_MAX)
        return false;
    size_t label = 0;
    for (size_t i = 0; i <= length; i++) {
        char c = i < length ? name[i] : '.';
        if (c == '.') {
            if (label == 0 || label > 63 || name[i - 1] == '-')
                return false;
            label = 0;
            continue;
        }
        if (!is_alnum(c) && !(c == '-' && label > 0))
            return false;
        label++;
    }
    return true;
}

/* Whether a resolver could read name[0..length) as an IPv4 number (inet_aton
 * takes "127.1", "0x7f.1", "017700000001"; URL parsers read a name whose last
 * label is numeric as one too): its last label is digits, or 0x and hex. */
static bool looks_numeric(const char *name, size_t length)
{
    size_t start = length;
    while (start > 0 && name[start - 1] != '.')
        start--;
    const char *last = name + start;
    size_t n = length - start;
    if (n >= 2 && last[0] == '0' && lower(last[1]) == 'x')
        return true;
    for (size_t i = 0; i < n; i++)
        if (!is_digit(last[i]))
            return false;
    return n > 0;
}

/* Copies name[0..length) in lower case into out (WEBHOOK_HOST_MAX + 2 bytes). */
static void copy_lower(char *out, const char *name, size_t length)
{
    for (size_t i = 0; i < length; i++)
        out[i] = lower(name[i]);
    out[length] = '\0';
}

/* Whether host (lower case) is listed by name or below a listed suffix. */
static bool name_listed(const webhook_allow_t *allow, const char *host)
{
    size_t length = strlen(host);
    for (int i = 0; i < allow->name_count; i++) {
        const char *entry = allow->names[i];
        size_t n = strlen(entry);
        if (entry[0] != '.' ? !strcmp(entry, host) : length > n && !strcmp(host + length - n, entry))
            return true;
    }
    return false;
}

/* --- the setting --- */

/* Reads one CIDR entry (or a bare address); false with err set. */
static bool parse_cidr(const char *entry, webhook_cidr_t *out, char *err, size_t err_size)
{
    char address[64];
    const char *slash = strchr(entry, '/');
    size_t length = slash ? (size_t)(slash - entry) : strlen(entry);
    if (length < sizeof address) {
        memcpy(address, entry, length);
        address[length] = '\0';
    }
    if (length >= sizeof address || !webhook_addr_parse(address, &out->base)) {
        snprintf(err, err_size, "'%s' is not an IPv4 or IPv6 address", entry);
        return false;
    }
    unsigned bits = out->base.family == 4 ? 32 : 128;
    out->prefix = bits;
    if (slash) {
        const char *p = slash + 1;
        unsigned prefix = 0;
        size_t digits = 0;
        for (; is_digit(*p) && digits < 4; p++, digits++)
            prefix = prefix * 10 + (unsigned)(*p - '0');
        if (!digits || *p || prefix > bits || (digits > 1 && slash[1] == '0')) {
            snprintf(err, err_size, "'%s': the prefix length must be a number from 0 to %u", entry, bits);
            return false;
        }
        out->prefix = prefix;
    }
    webhook_addr_t masked = { .family = out->base.family };
    for (unsigned i = 0; i < out->prefix; i++)
        masked.bytes[i / 8] |= (unsigned char)(out->base.bytes[i / 8] & (0x80 >> (i % 8)));
    if (memcmp(masked.bytes, out->base.bytes, sizeof masked.bytes)) {
        snprintf(err, err_size, "'%s' has bits set after its /%u prefix", entry, out->prefix);
        return false;
    }
    /* A range of mapped or NAT64 addresses is the IPv4 range they hold. */
    webhook_addr_t judged = effective(&out->base);
    if (judged.family == 4 && out->prefix >= 96) {
        out->base = judged;
        out->prefix -= 96;
    }
    out->non_public = inside_non_public(out);
    return true;
}

/* Reads one entry of the setting into allow; false with err set. */
static bool parse_entry(const char *entry, webhook_allow_t *allow, char *err, size_t err_size)
{
    if (strchr(entry, ':') || strchr(entry, '/') || (is_digit(entry[0]) && looks_numeric(entry, strlen(entry)))) {
        if (allow->cidr_count == WEBHOOK_ALLOW_MAX) {
            snprintf(err, err_size, "more than %d ranges", WEBHOOK_ALLOW_MAX);
            return false;
        }
        return parse_cidr(entry, &allow->cidrs[allow->cidr_count++], err, err_size);
    }
    bool suffix = entry[0] == '*';
    const char *name = suffix ? entry + 1 : entry;
    if (suffix && name[0] != '.') {
        snprintf(err, err_size, "'%s': a suffix is written *.example.com", entry);
        return false;
    }
    size_t length = strlen(name);
    if (length > 1 && name[length - 1] == '.')
        length--;
    const char *label = suffix ? name + 1 : name;
    size_t label_length = suffix ? length - 1 : length;
    if (!is_host_name(label, label_length) || looks_numeric(label, label_length)) {
        snprintf(err, err_size, "'%s' is not a range, an address, a host name or *.suffix", entry);
        return false;
    }
    if (allow->name_count == WEBHOOK_ALLOW_MAX) {
        snprintf(err, err_size, "more than %d names", WEBHOOK_ALLOW_MAX);
        return false;
    }
    copy_lower(allow->names[allow->name_count++], name, length);
    return true;
}

bool webhook_allow_parse(const char *text, webhook_allow_t *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    size_t total = strlen(text);
    if (total > WEBHOOK_ALLOW_TEXT_MAX) {
        snprintf(err, err_size, "the list is over %d bytes", WEBHOOK_ALLOW_TEXT_MAX);
        return false;
    }
    bool blank = true;
    for (const char *p = text; *p; p++)
        blank = blank && (*p == ' ' || *p == '\t');
    if (blank)
        return true;
    int entries = 0;
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        const char *last = end;
        while (last > p && (last[-1] == ' ' || last[-1] == '\t'))
            last--;
        char entry[WEBHOOK_HOST_MAX + 8];
        size_t length = (size_t)(last - p);
        if (length == 0) {
            snprintf(err, err_size, "entry %d is empty (two commas, or a comma at an end)", entries + 1);
            return false;
        }
        if (length >= sizeof entry) {
            snprintf(err, err_size, "entry %d is over %zu bytes", entries + 1, sizeof entry - 1);
            return false;
        }
        memcpy(entry, p, length);
        entry[length] = '\0';
        for (size_t i = 0; i < length; i++)
            if ((unsigned char)entry[i] <= ' ' || (unsigned char)entry[i] >= 0x7f) {
                snprintf(err, err_size, "entry %d holds a blank, control or non-ASCII byte", entries + 1);
                return false;
            }
        if (++entries > WEBHOOK_ALLOW_MAX) {
            snprintf(err, err_size, "more than %d entries", WEBHOOK_ALLOW_MAX);
            return false;
        }
        if (!parse_entry(entry, out, err, err_size))
            return false;
        if (!comma)
            return true;
        p = comma + 1;
    }
}

bool webhook_allow_enabled(const webhook_allow_t *allow)
{
    return allow->cidr_count > 0 || allow->name_count > 0;
}

/* --- the rule --- */

webhook_refusal_t webhook_allow_check_addr(const webhook_allow_t *allow, const char *host,
                                           const webhook_addr_t *addr)
{
    webhook_addr_t judged = effective(addr);
    bool listed = host && name_listed(allow, host), opened = false;
    for (int i = 0; i < allow->cidr_count; i++) {
        if (!cidr_contains(&allow->cidrs[i], &judged))
            continue;
        listed = true;
        opened = opened || allow->cidrs[i].non_public;
    }
    if (!listed)
        return WEBHOOK_REFUSE_NOT_ALLOWED;
    return opened || webhook_addr_is_public(&judged) ? WEBHOOK_ALLOWED : WEBHOOK_REFUSE_PRIVATE;
}

webhook_refusal_t webhook_allow_check_addrs(const webhook_allow_t *allow, const char *host,
                                            const webhook_addr_t *addrs, size_t count, char *detail,
                                            size_t detail_size)
{
    if (count == 0) {
        snprintf(detail, detail_size, "the destination's host has no address");
        return WEBHOOK_REFUSE_UNRESOLVED;
    }
    for (size_t i = 0; i < count; i++) {
        webhook_refusal_t refusal = webhook_allow_check_addr(allow, host, &addrs[i]);
        if (refusal == WEBHOOK_ALLOWED)
            continue;
        char text[INET6_ADDRSTRLEN];
        webhook_addr_format(&addrs[i], text, sizeof text);
        if (refusal == WEBHOOK_REFUSE_PRIVATE)
            snprintf(detail, detail_size, "the destination's address %s is not public, and no range of "
                                          "--webhook-allow inside non-public space opens it", text);
        else
            snprintf(detail, detail_size, "the destination's address %s is not in --webhook-allow, nor is its "
                                          "host name", text);
        return refusal;
    }
    return WEBHOOK_ALLOWED;
}

/* --- URLs --- */

/* Whether c may stand in a path or query (RFC 3986: unreserved, sub-delims,
 * ':', '@', '/', '?'; '%' checked apart). */
static bool is_target_char(char c)
{
    return is_alnum(c) || (c && strchr("-._~!$&'()*+,;=:@/?%", c));
}

static bool is_hex(char c) { return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'f'); }

static webhook_refusal_t refuse(webhook_refusal_t refusal, char *detail, size_t detail_size, const char *sentence)
{
    text_copy(detail, detail_size, sentence);
    return refusal;
}

/* Reads the authority's host and port (authority[0..length)) into out. */
static webhook_refusal_t parse_authority(const char *authority, size_t length, webhook_url_t *out, char *detail,
                                         size_t detail_size)
{
    if (memchr(authority, '@', length))
        return refuse(WEBHOOK_REFUSE_USERINFO, detail, detail_size,
                      "the URL has a user or password before its host; credentials cannot go in a webhook URL");
    const char *host = authority, *port = NULL;
    size_t host_length = length;
    if (length && authority[0] == '[') {
        const char *close = memchr(authority, ']', length);
        if (!close)
            return refuse(WEBHOOK_REFUSE_HOST, detail, detail_size, "the URL's IPv6 address has no closing ']'");
        host = authority + 1;
        host_length = (size_t)(close - host);
        if (close + 1 < authority + length) {
            if (close[1] != ':')
                return refuse(WEBHOOK_REFUSE_HOST, detail, detail_size, "the URL has text after its IPv6 address");
            port = close + 2;
        }
    } else {
        const char *colon = memchr(authority, ':', length);
        if (colon) {
            host_length = (size_t)(colon - authority);
            port = colon + 1;
        }
    }
    out->port = out->https ? 443 : 80;
    if (port) {
        const char *end = authority + length;
        unsigned value = 0;
        if (port == end || end - port > 5)
            return refuse(WEBHOOK_REFUSE_PORT, detail, detail_size, "the URL's port must be a number from 1 to 65535");
        for (const char *p = port; p < end; p++) {
            if (!is_digit(*p))
                return refuse(WEBHOOK_REFUSE_PORT, detail, detail_size,
                              "the URL's port must be a number from 1 to 65535");
            value = value * 10 + (unsigned)(*p - '0');
        }
        if (value < 1 || value > 65535)
            return refuse(WEBHOOK_REFUSE_PORT, detail, detail_size, "the URL's port must be a number from 1 to 65535");
        out->port = value;
    }
    if (host_length == 0 || host_length > WEBHOOK_HOST_MAX)
        return refuse(WEBHOOK_REFUSE_HOST, detail, detail_size, "the URL has no host, or one over 253 bytes");
    if (authority[0] != '[' && host_length > 1 && host[host_length - 1] == '.')
        host_length--; /* "example.com." is example.com */
    copy_lower(out->host, host, host_length);
    webhook_addr_t addr;
    if (authority[0] == '[') {
        if (!strchr(out->host, ':') || inet_pton(AF_INET6, out->host, addr.bytes) != 1)
            return refuse(WEBHOOK_REFUSE_HOST, detail, detail_size,
                          "the URL's [host] is not an IPv6 address (a zone such as %eth0 is not accepted)");
        out->host_kind = WEBHOOK_HOST_IPV6;
        char canonical[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, addr.bytes, canonical, sizeof canonical);
        text_copy(out->host, sizeof out->host, canonical);
        return WEBHOOK_ALLOWED;
    }
    if (inet_pton(AF_INET, out->host, addr.bytes) == 1) {
        out->host_kind = WEBHOOK_HOST_IPV4;
        return WEBHOOK_ALLOWED;
    }
    if (!is_host_name(out->host, strlen(out->host)))
        return refuse(WEBHOOK_REFUSE_HOST, detail, detail_size,
                      "the URL's host is not a host name (letters, digits, '-' and dots), an IPv4 address or an "
                      "[IPv6] address");
    if (looks_numeric(out->host, strlen(out->host)))
        return refuse(WEBHOOK_REFUSE_HOST, detail, detail_size,
                      "the URL's host reads as a number: write an IPv4 address as four decimal numbers");
    out->host_kind = WEBHOOK_HOST_NAME;
    return WEBHOOK_ALLOWED;
}

webhook_refusal_t webhook_url_parse(const char *text, webhook_url_t *out, char *detail, size_t detail_size)
{
    memset(out, 0, sizeof *out);
    size_t length = strnlen(text, WEBHOOK_URL_MAX + 1);
    if (length > WEBHOOK_URL_MAX)
        return refuse(WEBHOOK_REFUSE_TOO_LONG, detail, detail_size, "the URL is over 2048 bytes");
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= ' ' || c >= 0x7f || c == '\\')
            return refuse(WEBHOOK_REFUSE_URL, detail, detail_size,
                          "the URL holds a space, a control or non-ASCII byte, or a backslash");
    }
    if (memchr(text, '#', length))
        return refuse(WEBHOOK_REFUSE_FRAGMENT, detail, detail_size, "the URL has a #fragment");
    size_t scheme_length = !strncasecmp(text, "https://", 8) ? 8 : !strncasecmp(text, "http://", 7) ? 7 : 0;
    if (!scheme_length)
        return refuse(WEBHOOK_REFUSE_SCHEME, detail, detail_size, "the URL must start with http:// or https://");
    out->https = scheme_length == 8;
    const char *authority = text + scheme_length;
    size_t authority_length = strcspn(authority, "/?");
    webhook_refusal_t refusal = parse_authority(authority, authority_length, out, detail, detail_size);
    if (refusal != WEBHOOK_ALLOWED)
        return refusal;
    const char *target = authority + authority_length;
    for (const char *p = target; *p; p++) {
        if (!is_target_char(*p))
            return refuse(WEBHOOK_REFUSE_URL, detail, detail_size,
                          "the URL's path or query holds a character that must be %-escaped");
        if (*p == '%' && !(is_hex(p[1]) && is_hex(p[2])))
            return refuse(WEBHOOK_REFUSE_URL, detail, detail_size, "the URL has a '%' without two hex digits after it");
    }
    const char *parts[] = { target[0] == '/' ? "" : "/", target };
    text_join(out->target, sizeof out->target, parts, 2);
    return WEBHOOK_ALLOWED;
}

webhook_refusal_t webhook_allow_check_url(const webhook_allow_t *allow, const char *url, unsigned resolve_timeout_ms,
                                          webhook_url_t *out, char *detail, size_t detail_size)
{
    webhook_url_t local;
    webhook_url_t *parsed = out ? out : &local;
    webhook_refusal_t refusal = webhook_url_parse(url, parsed, detail, detail_size);
    if (refusal != WEBHOOK_ALLOWED)
        return refusal;
    if (!webhook_allow_enabled(allow))
        return refuse(WEBHOOK_REFUSE_NOT_ALLOWED, detail, detail_size,
                      "webhooks are off: --webhook-allow lists no destination");
    webhook_addr_t addrs[WEBHOOK_ADDRS_MAX];
    size_t count = 0;
    if (parsed->host_kind != WEBHOOK_HOST_NAME) {
        webhook_addr_parse(parsed->host, &addrs[0]);
        return webhook_allow_check_addrs(allow, NULL, addrs, 1, detail, detail_size);
    }
    if (!name_listed(allow, parsed->host) && allow->cidr_count == 0)
        return refuse(WEBHOOK_REFUSE_NOT_ALLOWED, detail, detail_size,
                      "the URL's host is not a name --webhook-allow lists, and it lists no address range");
    if (resolve_timeout_ms == 0)
        return WEBHOOK_ALLOWED;
    webhook_resolve_status_t status = webhook_resolve(parsed->host, resolve_timeout_ms, addrs, WEBHOOK_ADDRS_MAX,
                                                      &count);
    if (status != WEBHOOK_RESOLVE_OK)
        return refuse(WEBHOOK_REFUSE_UNRESOLVED, detail, detail_size,
                      status == WEBHOOK_RESOLVE_ETIMEOUT ? "the URL's host name did not resolve in time"
                                                         : "the URL's host name has no address");
    return webhook_allow_check_addrs(allow, parsed->host, addrs, count, detail, detail_size);
}

/* --- bounded resolution --- */

/* What the caller and the resolver thread share; the last to leave frees it. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    int references; /* under lock */
    bool done;      /* under lock */
    int done_fd;    /* an eventfd written when done, for a caller on a fiber; -1: none */
    webhook_resolve_status_t status;
    size_t count;
    webhook_addr_t addrs[WEBHOOK_ADDRS_MAX];
    char host[WEBHOOK_HOST_MAX + 1];
} resolution_t;

static atomic_int resolvers_running;

static void resolution_release(resolution_t *r)
{
    pthread_mutex_lock(&r->lock);
    bool last = --r->references == 0;
    pthread_mutex_unlock(&r->lock);
    if (!last)
        return;
    if (r->done_fd >= 0)
        close(r->done_fd);
    pthread_cond_destroy(&r->done_cond);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Adds addr to addrs unless it is there already or addrs is full. */
static void add_unique(webhook_addr_t *addrs, size_t *count, size_t max, const webhook_addr_t *addr)
{
    for (size_t i = 0; i < *count; i++)
        if (!memcmp(&addrs[i], addr, sizeof *addr))
            return;
    if (*count < max)
        addrs[(*count)++] = *addr;
}

static void *resolve_thread(void *arg)
{
    resolution_t *r = arg;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *list = NULL;
    webhook_addr_t found[WEBHOOK_ADDRS_MAX];
    size_t count = 0;
    int rc = getaddrinfo(r->host, NULL, &hints, &list);
    for (struct addrinfo *a = rc ? NULL : list; a; a = a->ai_next) {
        webhook_addr_t addr = { 0 };
        if (a->ai_family == AF_INET) {
            addr.family = 4;
            memcpy(addr.bytes, &((const struct sockaddr_in *)(const void *)a->ai_addr)->sin_addr, 4);
        } else if (a->ai_family == AF_INET6) {
            addr.family = 6;
            memcpy(addr.bytes, &((const struct sockaddr_in6 *)(const void *)a->ai_addr)->sin6_addr, 16);
        } else {
            continue;
        }
        add_unique(found, &count, WEBHOOK_ADDRS_MAX, &addr);
    }
    if (list)
        freeaddrinfo(list);
    pthread_mutex_lock(&r->lock);
    memcpy(r->addrs, found, count * sizeof found[0]);
    r->count = count;
    r->status = count ? WEBHOOK_RESOLVE_OK : WEBHOOK_RESOLVE_ENONAME;
    r->done = true;
    pthread_cond_signal(&r->done_cond);
    uint64_t one = 1;
    if (r->done_fd >= 0)
        (void)!write(r->done_fd, &one, sizeof one);
    pthread_mutex_unlock(&r->lock);
    resolution_release(r);
    atomic_fetch_sub(&resolvers_running, 1);
    return NULL;
}

/* A fresh shared record for host, with two references; NULL without memory. */
static resolution_t *resolution_new(const char *host)
{
    resolution_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr)) {
        free(r);
        return NULL;
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int failed = pthread_cond_init(&r->done_cond, &attr);
    pthread_condattr_destroy(&attr);
    if (failed || pthread_mutex_init(&r->lock, NULL)) {
        if (!failed)
            pthread_cond_destroy(&r->done_cond);
        free(r);
        return NULL;
    }
    r->references = 2;
    /* A caller on a fiber waits by yielding to its event loop (store/fiber.h). */
    r->done_fd = fiber_self() ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
    text_copy(r->host, sizeof r->host, host);
    return r;
}

/* Starts resolve_thread on r, detached; false when no thread could start. */
static bool start_resolver(resolution_t *r)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr))
        return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024); /* getaddrinfo's needs are small; threads may pile up */
    pthread_t thread;
    int failed = pthread_create(&thread, &attr, resolve_thread, r);
    pthread_attr_destroy(&attr);
    return failed == 0;
}

webhook_resolve_status_t webhook_resolve(const char *host, unsigned timeout_ms, webhook_addr_t *out, size_t max,
                                         size_t *count)
{
    *count = 0;
    if (max > WEBHOOK_ADDRS_MAX)
        max = WEBHOOK_ADDRS_MAX;
    if (max == 0 || strlen(host) > WEBHOOK_HOST_MAX)
        return WEBHOOK_RESOLVE_ENONAME;
    if (webhook_addr_parse(host, &out[0])) {
        *count = 1;
        return WEBHOOK_RESOLVE_OK;
    }
    if (atomic_fetch_add(&resolvers_running, 1) >= WEBHOOK_RESOLVERS_MAX) {
        atomic_fetch_sub(&resolvers_running, 1);
        return WEBHOOK_RESOLVE_EBUSY;
    }
    resolution_t *r = resolution_new(host);
    if (!r || !start_resolver(r)) {
        if (r) {
            if (r->done_fd >= 0)
                close(r->done_fd);
            pthread_cond_destroy(&r->done_cond);
            pthread_mutex_destroy(&r->lock);
            free(r);
        }
        atomic_fetch_sub(&resolvers_running, 1);
        return WEBHOOK_RESOLVE_EBUSY;
    }
    int64_t deadline_ms = clock_now_ms() + timeout_ms;
    for (bool done = false; r->done_fd >= 0 && !done && clock_now_ms() < deadline_ms;) {
        (void)fiber_wait(r->done_fd, POLLIN, deadline_ms);
        pthread_mutex_lock(&r->lock);
        done = r->done;
        pthread_mutex_unlock(&r->lock);
    }
    struct timespec until = clock_deadline_after_ms((long)timeout_ms);
    pthread_mutex_lock(&r->lock);
    int waited = 0;
    while (r->done_fd < 0 && !r->done && waited != ETIMEDOUT)
        waited = pthread_cond_timedwait(&r->done_cond, &r->lock, &until);
    webhook_resolve_status_t status = r->done ? r->status : WEBHOOK_RESOLVE_ETIMEOUT;
    if (r->done)
        for (size_t i = 0; i < r->count && *count < max; i++)
            out[(*count)++] = r->addrs[i];
    pthread_mutex_unlock(&r->lock);
    resolution_release(r);
    return status;
}
