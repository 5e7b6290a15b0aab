#define H2O_USE_LIBUV 1
#include "kvod_http.h"

#include <h2o.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

struct kvod_http_server {
    h2o_globalconf_t config;
    h2o_context_t context;
    h2o_accept_ctx_t accept;
    uv_tcp_t listener;
    int listening;
    void *owner;
    kvod_http_request_cb on_request;
    /// Open connections, and how many may be (more are closed at once).
    size_t connections;
    size_t max_connections;
};

/// A connection's handle with its server, to count it out when it closes.
typedef struct {
    uv_tcp_t tcp;
    kvod_http_server *server;
} kvod_connection;

static void on_connection_closed(uv_handle_t *handle) {
    kvod_connection *connection = (kvod_connection *)handle;
    connection->server->connections--;
    free(connection);
}

/// H2O's handler with the server it answers for.
typedef struct {
    h2o_handler_t super;
    kvod_http_server *server;
} kvod_handler;

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
    kvod_http_server *server = ((kvod_handler *)self)->server;
    server->on_request(server->owner, req);
    return 0;
}

kvod_http_server *kvod_http_server_create(void *uv_loop, void *context, kvod_http_request_cb on_request,
                                          uint64_t request_timeout_ms, size_t max_body_bytes, size_t max_connections) {
    kvod_http_server *server = calloc(1, sizeof(*server));
    if (server == NULL) return NULL;
    server->owner = context;
    server->on_request = on_request;
    server->max_connections = max_connections;
    h2o_config_init(&server->config);
    // Debian's H2O 2.2.5 predates HTTP/2's rapid-reset fixes: HTTP/1.1 only.
    server->config.http1.upgrade_to_http2 = 0;
    server->config.server_name = h2o_iovec_init(H2O_STRLIT("kvod"));
    server->config.http1.req_timeout = request_timeout_ms;
    server->config.max_request_entity_size = max_body_bytes;
    h2o_hostconf_t *host = h2o_config_register_host(&server->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    kvod_handler *handler = (kvod_handler *)h2o_create_handler(path, sizeof(kvod_handler));
    handler->super.on_req = on_req;
    handler->server = server;
    h2o_context_init(&server->context, uv_loop, &server->config);
    server->accept.ctx = &server->context;
    server->accept.hosts = server->config.hosts;
    return server;
}

static void on_accept(uv_stream_t *listener, int status) {
    if (status != 0) return;
    kvod_http_server *server = listener->data;
    kvod_connection *connection = h2o_mem_alloc(sizeof(*connection));
    connection->server = server;
    server->connections++;
    uv_tcp_init(listener->loop, &connection->tcp);
    // Over the limit the connection is accepted and closed at once: left in the
    // backlog, it would keep the listener readable and the loop spinning.
    if (uv_accept(listener, (uv_stream_t *)&connection->tcp) != 0 || server->connections > server->max_connections) {
        uv_close((uv_handle_t *)&connection->tcp, on_connection_closed);
        return;
    }
    h2o_socket_t *socket = h2o_uv_socket_create((uv_stream_t *)&connection->tcp, on_connection_closed);
    h2o_accept(&server->accept, socket);
}

int kvod_http_server_listen(kvod_http_server *server, const char *host, uint16_t port, uint16_t *bound_port) {
    struct sockaddr_storage address;
    int error = uv_ip4_addr(host, port, (struct sockaddr_in *)&address);
    if (error != 0) error = uv_ip6_addr(host, port, (struct sockaddr_in6 *)&address);
    if (error != 0) return error;
    uv_tcp_init(server->context.loop, &server->listener);
    server->listener.data = server;
    server->listening = 1;
    if ((error = uv_tcp_bind(&server->listener, (struct sockaddr *)&address, 0)) != 0 ||
        (error = uv_listen((uv_stream_t *)&server->listener, 128, on_accept)) != 0) {
        kvod_http_server_stop(server);
        return error;
    }
    struct sockaddr_storage bound;
    int length = sizeof(bound);
    if ((error = uv_tcp_getsockname(&server->listener, (struct sockaddr *)&bound, &length)) != 0) {
        kvod_http_server_stop(server);
        return error;
    }
    *bound_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                    : ((struct sockaddr_in *)&bound)->sin_port);
    return 0;
}

int kvod_http_server_use_tls(kvod_http_server *server, const char *certificate_file, const char *key_file,
                             char *error, size_t error_size) {
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    if (context == NULL) goto failed;
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(context, certificate_file) != 1) goto failed;
    if (SSL_CTX_use_PrivateKey_file(context, key_file, SSL_FILETYPE_PEM) != 1) goto failed;
    if (SSL_CTX_check_private_key(context) != 1) goto failed;
    server->accept.ssl_ctx = context;
    return 0;
failed:
    ERR_error_string_n(ERR_get_error(), error, error_size);
    if (context != NULL) SSL_CTX_free(context);
    return -1;
}

void kvod_http_server_stop(kvod_http_server *server) {
    if (server->listening) {
        server->listening = 0;
        uv_close((uv_handle_t *)&server->listener, NULL);
    }
    h2o_context_request_shutdown(&server->context);
}

kvod_http_text kvod_http_method(const kvod_http_request *request) {
    return (kvod_http_text){request->method.base, request->method.len};
}

kvod_http_text kvod_http_path(const kvod_http_request *request) {
    return (kvod_http_text){request->path.base, request->path.len};
}

kvod_http_text kvod_http_header(const kvod_http_request *request, const char *lowercase_name) {
    ssize_t index = h2o_find_header_by_str(&request->headers, lowercase_name, strlen(lowercase_name), -1);
    if (index < 0) return (kvod_http_text){NULL, 0};
    h2o_iovec_t value = request->headers.entries[index].value;
    return (kvod_http_text){value.base, value.len};
}

kvod_http_text kvod_http_body(const kvod_http_request *request) {
    return (kvod_http_text){request->entity.base, request->entity.base == NULL ? 0 : request->entity.len};
}

void kvod_http_add_header(kvod_http_request *request, const char *name, const char *value, size_t value_len) {
    h2o_iovec_t copied_name = h2o_strdup(&request->pool, name, SIZE_MAX);
    h2o_iovec_t copied_value = h2o_strdup(&request->pool, value, value_len);
    h2o_add_header_by_str(&request->pool, &request->res.headers, copied_name.base, copied_name.len, 0, NULL,
                          copied_value.base, copied_value.len);
}

void kvod_http_respond(kvod_http_request *request, int status, const char *reason, const char *content_type,
                       const void *body, size_t body_len) {
    // H2O keeps pointers to the reason and header values: copies in the request's pool.
    request->res.status = status;
    request->res.reason = h2o_strdup(&request->pool, reason, SIZE_MAX).base;
    request->res.content_length = body_len;
    if (content_type != NULL) {
        h2o_iovec_t type = h2o_strdup(&request->pool, content_type, SIZE_MAX);
        h2o_add_header(&request->pool, &request->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type.base, type.len);
    }
    h2o_send_inline(request, body, body_len);
}

typedef struct {
    kvod_http_gone_cb gone;
    void *context;
    uint64_t key;
} kvod_gone_watch;

static void on_pool_dispose(void *memory) {
    kvod_gone_watch *watch = memory;
    watch->gone(watch->context, watch->key);
}

void kvod_http_on_gone(kvod_http_request *request, kvod_http_gone_cb gone, void *context, uint64_t key) {
    kvod_gone_watch *watch = h2o_mem_alloc_shared(&request->pool, sizeof(*watch), on_pool_dispose);
    watch->gone = gone;
    watch->context = context;
    watch->key = key;
}

/// A streamed response's generator, with the bytes H2O is writing (it keeps
/// pointers to them until it asks to proceed): one buffer, kept from send to
/// send while small, since a watch sends after every write. Only small ones:
/// a kept buffer is memory no connection's output counts once H2O proceeded.
typedef struct {
    h2o_generator_t super;
    kvod_http_proceed_cb proceed;
    void *context;
    uint64_t key;
    void *in_flight;
    size_t capacity;
} kvod_stream;

/// Buffers up to this size are kept for the next send; larger ones are freed.
#define KVOD_STREAM_KEPT_BYTES 4096

static void on_stream_proceed(h2o_generator_t *generator, h2o_req_t *request) {
    (void)request;
    kvod_stream *stream = (kvod_stream *)generator;
    if (stream->capacity > KVOD_STREAM_KEPT_BYTES) {
        free(stream->in_flight);
        stream->in_flight = NULL;
        stream->capacity = 0;
    }
    stream->proceed(stream->context, stream->key);
}

static void on_stream_stop(h2o_generator_t *generator, h2o_req_t *request) {
    // The connection went: the request's pool goes next, and its gone watch says so.
    (void)generator;
    (void)request;
}

static void on_stream_dispose(void *memory) {
    kvod_stream *stream = memory;
    free(stream->in_flight);
    stream->in_flight = NULL;
}

void kvod_http_stream_start(kvod_http_request *request, int status, const char *reason, const char *content_type,
                            kvod_http_proceed_cb proceed, void *context, uint64_t key) {
    kvod_stream *stream = h2o_mem_alloc_shared(&request->pool, sizeof(*stream), on_stream_dispose);
    stream->super.proceed = on_stream_proceed;
    stream->super.stop = on_stream_stop;
    stream->proceed = proceed;
    stream->context = context;
    stream->key = key;
    stream->in_flight = NULL;
    stream->capacity = 0;
    request->res.status = status;
    request->res.reason = h2o_strdup(&request->pool, reason, SIZE_MAX).base;
    h2o_iovec_t type = h2o_strdup(&request->pool, content_type, SIZE_MAX);
    h2o_add_header(&request->pool, &request->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type.base, type.len);
    h2o_start_response(request, &stream->super);
}

void kvod_http_stream_send(kvod_http_request *request, const void *bytes, size_t length, int final) {
    kvod_stream *stream = (kvod_stream *)request->_generator;
    h2o_iovec_t buffer = h2o_iovec_init(NULL, 0);
    if (length > 0) {
        if (length > stream->capacity) {
            free(stream->in_flight);
            stream->in_flight = malloc(length);
            stream->capacity = length;
        }
        memcpy(stream->in_flight, bytes, length);
        buffer = h2o_iovec_init(stream->in_flight, length);
    }
    h2o_send(request, &buffer, length > 0 ? 1 : 0, final ? H2O_SEND_STATE_FINAL : H2O_SEND_STATE_IN_PROGRESS);
}

void kvod_http_stream_send_unowned(kvod_http_request *request, const void *bytes, size_t length) {
    h2o_iovec_t buffer = h2o_iovec_init(bytes, length);
    h2o_send(request, &buffer, length > 0 ? 1 : 0, H2O_SEND_STATE_IN_PROGRESS);
}
