// kvod's HTTP server: H2O (libh2o, built on libuv) on kvod's own loop, behind a few
// plain C calls, so that H2O's macros and structs stay out of Swift.
#ifndef KVOD_HTTP_H
#define KVOD_HTTP_H

#include <stddef.h>
#include <stdint.h>

/// One listening HTTP/1.1 server on a libuv loop.
typedef struct kvod_http_server kvod_http_server;
/// One request (H2O's `h2o_req_t`): valid from the request callback until the
/// response is sent or the connection goes (`kvod_http_on_gone`).
typedef struct st_h2o_req_t kvod_http_request;

/// Bytes owned by H2O (a request's), valid as long as the request.
typedef struct {
    const char *base;
    size_t len;
} kvod_http_text;

typedef void (*kvod_http_request_cb)(void *context, kvod_http_request *request);
typedef void (*kvod_http_gone_cb)(void *context, uint64_t key);

/// A server on `uv_loop` (a `uv_loop_t *`); `on_request` is called on the loop
/// for each request, with `context`. `request_timeout_ms` bounds how long a
/// request may take to arrive (a slow sender); bodies over `max_body_bytes`
/// get 413 from H2O; connections past `max_connections` are closed as soon as
/// accepted. HTTP/2 is off (no upgrade, no TLS ALPN).
kvod_http_server *kvod_http_server_create(void *uv_loop, void *context, kvod_http_request_cb on_request,
                                          uint64_t request_timeout_ms, size_t max_body_bytes, size_t max_connections);
/// Binds and listens on `host` (an IPv4 or IPv6 address) and `port` (0: any);
/// `bound_port` gets the port. Returns 0 or a negative libuv error code.
int kvod_http_server_listen(kvod_http_server *server, const char *host, uint16_t port, uint16_t *bound_port);
/// Serves TLS (1.2 and later) with the certificate chain and key of these PEM
/// files, from the next connection on. Returns 0, or -1 with OpenSSL's reason in
/// `error`.
int kvod_http_server_use_tls(kvod_http_server *server, const char *certificate_file, const char *key_file,
                             char *error, size_t error_size);
/// Stops accepting and asks idle keep-alive connections to close.
void kvod_http_server_stop(kvod_http_server *server);

kvod_http_text kvod_http_method(const kvod_http_request *request);
/// The path with its query, as sent.
kvod_http_text kvod_http_path(const kvod_http_request *request);
/// The first header of that name (lower case), or {NULL, 0}.
kvod_http_text kvod_http_header(const kvod_http_request *request, const char *lowercase_name);
kvod_http_text kvod_http_body(const kvod_http_request *request);
/// Adds a response header (name and value are copied).
void kvod_http_add_header(kvod_http_request *request, const char *name, const char *value, size_t value_len);
/// Sends the whole response (the body is copied).
void kvod_http_respond(kvod_http_request *request, int status, const char *reason, const char *content_type,
                       const void *body, size_t body_len);
/// Calls `gone(context, key)` when the request's memory goes: after its
/// response, or when its connection closes first.
void kvod_http_on_gone(kvod_http_request *request, kvod_http_gone_cb gone, void *context, uint64_t key);

typedef void (*kvod_http_proceed_cb)(void *context, uint64_t key);

/// Starts a streamed response (Server-Sent Events): its status and content type,
/// after the headers added so far; the body follows in `kvod_http_stream_send`s.
/// After each send, `proceed(context, key)` says the bytes went to the socket and
/// the next send may come (one at a time, as H2O wants).
void kvod_http_stream_start(kvod_http_request *request, int status, const char *reason, const char *content_type,
                            kvod_http_proceed_cb proceed, void *context, uint64_t key);
/// Sends a part of a streamed response (copied); `final` ends it.
void kvod_http_stream_send(kvod_http_request *request, const void *bytes, size_t length, int final);
/// Sends a part of a streamed response without copying it: the bytes must stay
/// valid and unchanged until the next `proceed` (or the request is gone).
void kvod_http_stream_send_unowned(kvod_http_request *request, const void *bytes, size_t length);

#endif
