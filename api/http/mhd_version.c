/* See mhd_version.h. A version is tested when chessd's whole suite, the
 * strict reader's end-to-end attacks and tests/api/http/interpose_guards.sh
 * (which pins the receive functions libmicrohttpd imports) have passed on it;
 * only then is it added to tested_versions. */
#include "mhd_version.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

static const char *const tested_versions[] = { "0.9.75" };
enum { TESTED_COUNT = sizeof tested_versions / sizeof tested_versions[0] };

bool http_mhd_version_supported(const char *version)
{
    if (!version)
        return false;
    for (int i = 0; i < TESTED_COUNT; i++)
        if (!strcmp(version, tested_versions[i]))
            return true;
    return false;
}

/* The tested versions, ", " between them. */
static void tested_list(char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < TESTED_COUNT && used < size; i++) {
        int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "", tested_versions[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

bool http_mhd_version_check(bool allow, char *err, size_t size)
{
    const char *version = MHD_get_version();
    if (size)
        err[0] = '\0';
    if (http_mhd_version_supported(version))
        return true;
    char tested[64];
    tested_list(tested, sizeof tested);
    if (allow)
        snprintf(err, size,
                 "WARNING: --allow-untested-libmicrohttpd: running on libmicrohttpd %s, not a version chessd has "
                 "been tested with (%s); its strict HTTP reader may be bypassed (see api/http/README.md; "
                 "chessd_http_framing_backstop_total in /metrics counts what got past it)",
                 version ? version : "(unknown)", tested);
    else
        snprintf(err, size,
                 "libmicrohttpd %s is not a version chessd has been tested with (%s); its strict HTTP reader "
                 "depends on how libmicrohttpd reads sockets (see api/http/README.md); start with "
                 "--allow-untested-libmicrohttpd to run anyway",
                 version ? version : "(unknown)", tested);
    return allow;
}
