/* The libmicrohttpd versions chessd has been tested with, checked at start:
 * wire.c's strict reader sees every byte only because libmicrohttpd reads
 * its sockets with plain recv() (interpose.c), which another version may
 * not do. The tested list is a constant in mhd_version.c. */
#ifndef CHESSD_API_HTTP_MHD_VERSION_H
#define CHESSD_API_HTTP_MHD_VERSION_H

#include <stdbool.h>
#include <stddef.h>

/* Whether version (as MHD_get_version() gives it: "0.9.75") is one chessd
 * has been tested with. NULL: false. Pure. */
bool http_mhd_version_supported(const char *version);

/* Checks the libmicrohttpd this process runs on (MHD_get_version()). On a
 * tested one: true, err "". On another: false with the one-line error in
 * err, or, when allow (--allow-untested-libmicrohttpd), true with a
 * one-line warning in err. Neither line starts with "chessd: ". */
bool http_mhd_version_check(bool allow, char *err, size_t size);

#endif
