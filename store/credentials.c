/* See credentials.h. The file is read whole into a buffer of its own, one
 * byte longer than the password may be, so a file too long is told from one
 * that fits; that buffer is wiped whatever happens. */
#include "credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool credentials_decode(const char *text, size_t length, const char *what, char *out, size_t out_size, char *err,
                        size_t err_size)
{
    size_t n = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == '%') {
            int high = i + 1 < length ? hex_value(text[i + 1]) : -1;
            int low = i + 2 < length ? hex_value(text[i + 2]) : -1;
            if (high < 0 || low < 0) {
                snprintf(err, err_size, "%s has a '%%' without two hex digits after it (a '%%' itself is %%25)",
                         what);
                goto fail;
            }
            c = (char)(high << 4 | low);
            if (c == '\0') {
                snprintf(err, err_size, "%s holds %%00: a NUL byte cannot be sent to Redis", what);
                goto fail;
            }
            i += 2;
        }
        if (n + 1 >= out_size) {
            snprintf(err, err_size, "%s is longer than %zu bytes", what, out_size - 1);
            goto fail;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return true;
fail:
    explicit_bzero(out, out_size);
    return false;
}

ssize_t credentials_read_up_to(int fd, char *buf, size_t size)
{
    size_t n = 0;
    while (n < size) {
        ssize_t got = read(fd, buf + n, size - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        n += (size_t)got;
    }
    return (ssize_t)n;
}

bool credentials_read_file(const char *path, char *out, size_t out_size, char *err, size_t err_size)
{
    /* A path longer than this is cut in the reason, which must fit a line. */
    enum { PATH_SHOWN = 160 };
    const char *more = strlen(path) > PATH_SHOWN ? "..." : "";
    explicit_bzero(out, out_size);
    if (out_size == 0)
        return false;
    char *buf = malloc(out_size + 2); /* out_size - 1 bytes, a "\r\n", and one byte too many */
    if (!buf) {
        snprintf(err, err_size, "out of memory");
        return false;
    }
    bool ok = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    ssize_t n = fd < 0 ? -1 : credentials_read_up_to(fd, buf, out_size + 2);
    int read_errno = errno;
    if (fd >= 0)
        close(fd);
    if (n < 0) {
        snprintf(err, err_size, "the Redis password file '%.*s%s' cannot be read: %s", PATH_SHOWN, path, more,
                 strerror(read_errno));
        goto done;
    }
    size_t length = (size_t)n;
    if (length > 0 && buf[length - 1] == '\n')
        length -= length > 1 && buf[length - 2] == '\r' ? 2 : 1;
    if (length == 0)
        snprintf(err, err_size, "the Redis password file '%.*s%s' is empty", PATH_SHOWN, path, more);
    else if (memchr(buf, '\0', length))
        snprintf(err, err_size, "the Redis password file '%.*s%s' holds a NUL byte, which cannot be sent to Redis",
                 PATH_SHOWN, path, more);
    else if (length >= out_size)
        snprintf(err, err_size, "the Redis password file '%.*s%s' holds more than %zu bytes", PATH_SHOWN, path, more,
                 out_size - 1);
    else {
        memcpy(out, buf, length);
        out[length] = '\0';
        ok = true;
    }
done:
    explicit_bzero(buf, out_size + 2);
    free(buf);
    return ok;
}

bool credentials_take_password(const char *given, const char *file, bool user_only, char *password,
                               size_t password_size, char *err, size_t err_size)
{
    bool has_given = given && given[0];
    bool has_file = file && file[0];
    if (has_given && has_file) {
        snprintf(err, err_size, "a Redis password and a Redis password file are both given: give one");
        return false;
    }
    if (has_given) {
        size_t length = strlen(given);
        if (length >= password_size) {
            snprintf(err, err_size, "the Redis password is longer than %zu bytes", password_size - 1);
            return false;
        }
        explicit_bzero(password, password_size);
        memcpy(password, given, length + 1);
    } else if (has_file && !credentials_read_file(file, password, password_size, err, err_size)) {
        return false;
    }
    if (user_only && !password[0]) {
        snprintf(err, err_size, "Redis URL credentials must be [user]:password, or a user whose password is given "
                                "apart");
        return false;
    }
    return true;
}
