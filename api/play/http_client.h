/* A small HTTP/1.1 client over TCP sockets, for `chessd play --server`: one
 * request a connection (Connection: close), chunked transfer decoded, every
 * wait bounded by a deadline and every response in size. A streaming GET (an
 * event stream) is read piece by piece while the caller polls its socket.
 * https:// goes through store/tls.h (OpenSSL, the host's name checked).
 * Errors are sentences written into the caller's buffer; nothing here prints. */
#ifndef CHESSD_API_PLAY_HTTP_CLIENT_H
#define CHESSD_API_PLAY_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "../../store/tls.h"
#include "../http/buf.h"

enum {
    HTTP_CLIENT_HOST_MAX = 256,
    HTTP_CLIENT_HEAD_MAX = 16384, /* status line and headers */
};

typedef struct {
    char host[HTTP_CLIENT_HOST_MAX]; /* a name or an address, without IPv6 brackets */
    char port[8];
    char host_header[HTTP_CLIENT_HOST_MAX + 16]; /* as sent in Host: */
    char base_path[256];                        /* the URL's path without a trailing '/', may be "" */
    bool https;
    tls_context_t *tls; /* for https, set by http_client_url_tls(); owned */
} http_client_url_t;

/* Reads "http://host[:port][/path]" or "https://..." (IPv6 as [addr]);
 * false with a sentence in err for anything else. */
bool http_client_parse_url(const char *text, http_client_url_t *url, char *err, size_t err_size);

/* For an https URL, loads the CAs to trust (ca_file: PEM; NULL or "": the
 * system's); false with a sentence in err when they cannot be read. Does
 * nothing for http. Free with http_client_url_free(). */
bool http_client_url_tls(http_client_url_t *url, const char *ca_file, char *err, size_t err_size);
void http_client_url_free(http_client_url_t *url);

typedef struct {
    int status;
    char content_type[128];
    char *body; /* malloc'd (NUL-terminated), owned by the response */
    size_t body_length;
} http_client_response_t;

/* Frees the body; NULL and an empty response are fine. */
void http_client_response_free(http_client_response_t *res);

/* One request: method and path (below the URL's base path), `headers` extra
 * header lines each ending in CRLF (may be NULL), and a body (may be NULL).
 * Waits at most timeout_ms in all; a body over max_body bytes is an error.
 * True with *res filled (any status); false with a sentence in err. */
bool http_client_request(const http_client_url_t *url, const char *method, const char *path, const char *headers,
                         const char *body, size_t body_length, int timeout_ms, size_t max_body,
                         http_client_response_t *res, char *err, size_t err_size);

/* A GET whose body is read as it comes. */
typedef struct http_client_stream http_client_stream_t;

/* Sends the GET and reads the response head within timeout_ms. Returns the
 * stream when the status is 200; otherwise NULL, with res holding the whole
 * (bounded) answer when one came (res->status 0 when none), and a sentence
 * in err. */
http_client_stream_t *http_client_stream_open(const http_client_url_t *url, const char *path, const char *headers,
                                              int timeout_ms, http_client_response_t *res, char *err,
                                              size_t err_size);

/* The socket to poll, and the poll events to wait for (POLLIN, or POLLOUT
 * while TLS must write before it can read on). */
int http_client_stream_fd(const http_client_stream_t *s);
short http_client_stream_events(const http_client_stream_t *s);

/* Whether body bytes wait to be read without a poll (read with the head, or
 * decrypted inside the TLS session). */
bool http_client_stream_pending(const http_client_stream_t *s);

/* Reads what the socket has (one read, which may block when nothing is
 * ready: poll first) and appends the decoded body bytes to out. Returns 1
 * when the stream goes on, 0 when it has ended, -1 on an error (sentence in err). */
int http_client_stream_read(http_client_stream_t *s, buf_t *out, char *err, size_t err_size);

/* Closes the connection and frees s; NULL is fine. */
void http_client_stream_close(http_client_stream_t *s);

#endif
