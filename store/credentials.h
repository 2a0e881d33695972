/* Redis credentials from the operator: a Redis URL's user and password
 * percent-decoded (RFC 3986), a password read from a file (a mounted
 * Kubernetes secret, say), and the choice between the URL's and one given
 * apart. No reason written here ever holds a credential, only what is wrong
 * and where; a buffer that held one is wiped before it is freed. */
#ifndef CHESSD_STORE_CREDENTIALS_H
#define CHESSD_STORE_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Decodes the length bytes at text into out (out_size bytes, NUL-terminated):
 * each "%XX" (two hex digits, either case) becomes its byte, every other byte
 * stays as it is. False, with the reason in err, on a '%' without two hex
 * digits after it, on a %00 (a NUL cannot be sent), or when the result would
 * not fit; what names the part in the reason ("Redis URL password"). */
bool credentials_decode(const char *text, size_t length, const char *what, char *out, size_t out_size, char *err,
                        size_t err_size);

/* Reads at most size bytes of fd into buf, through short reads and
 * EINTR: the count (less only at the end of the file), or -1 with errno
 * set. Also what the service keys file is read with (api/service_keys.c). */
ssize_t credentials_read_up_to(int fd, char *buf, size_t size);

/* Reads the password file at path into out (out_size bytes, NUL-terminated):
 * its bytes as they are, less one trailing newline ("\n" or "\r\n"). False,
 * with the reason (naming the file) in err, when it cannot be opened or read,
 * is empty (or only a newline), holds a NUL byte, or would not fit. */
bool credentials_read_file(const char *path, char *out, size_t out_size, char *err, size_t err_size);

/* Replaces the URL's password (in password, password_size bytes) by one
 * given apart: given as it is (never decoded), or file's, read by
 * credentials_read_file (NULL or empty: none). False, with the reason in
 * err, when both are given, the given one does not fit, the file cannot be
 * read, or the URL names a user without a ':' (user_only) and no password
 * is left. */
bool credentials_take_password(const char *given, const char *file, bool user_only, char *password,
                               size_t password_size, char *err, size_t err_size);

#endif
