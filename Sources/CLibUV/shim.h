#ifndef KVOD_CLIBUV_SHIM_H
#define KVOD_CLIBUV_SHIM_H
// The one place kvod includes libuv. Static inline helpers go here when Swift
// cannot express a libuv macro or needs a cast it cannot spell.
#include <uv.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// MARK: - Write requests

/// A uv_write_t followed by the bytes it writes, in one allocation: uv_write
/// needs the bytes alive until its callback, and one malloc per queued write
/// is cheaper than two. `req` must stay the first member so that the
/// uv_write_t* handed to the callback is also a kvod_write_req_t*.
typedef struct kvod_write_req {
    uv_write_t req;
    size_t length;
    size_t capacity;
    char bytes[];
} kvod_write_req_t;

static inline kvod_write_req_t *kvod_write_req_create(const void *bytes, size_t length) {
    kvod_write_req_t *w = (kvod_write_req_t *)malloc(sizeof(kvod_write_req_t) + length);
    if (w == NULL) return NULL;
    w->length = length;
    w->capacity = length;
    memcpy(w->bytes, bytes, length);
    return w;
}

/// Appends to a request not yet handed to uv_write, growing it (at least
/// doubling) when full. Returns the request, which realloc may have moved, or
/// NULL when out of memory (then `w` is unchanged and still owned by the caller).
static inline kvod_write_req_t *kvod_write_req_append(kvod_write_req_t *w, const void *bytes, size_t length) {
    if (w->length + length > w->capacity) {
        size_t capacity = w->capacity * 2;
        if (capacity < w->length + length) capacity = w->length + length;
        kvod_write_req_t *grown = (kvod_write_req_t *)realloc(w, sizeof(kvod_write_req_t) + capacity);
        if (grown == NULL) return NULL;
        w = grown;
        w->capacity = capacity;
    }
    memcpy(w->bytes + w->length, bytes, length);
    w->length += length;
    return w;
}

static inline uv_write_t *kvod_write_req_uv(kvod_write_req_t *w) { return &w->req; }
static inline kvod_write_req_t *kvod_write_req_from_uv(uv_write_t *req) { return (kvod_write_req_t *)req; }
static inline size_t kvod_write_req_length(const kvod_write_req_t *w) { return w->length; }
static inline uv_buf_t kvod_write_req_buf(kvod_write_req_t *w) {
    return uv_buf_init(w->bytes, (unsigned int)w->length);
}
/// The stream a finished write belongs to (libuv has no public getter for it).
static inline uv_stream_t *kvod_write_req_stream(const uv_write_t *req) { return req->handle; }
static inline void kvod_write_req_free(kvod_write_req_t *w) { free(w); }

// MARK: - Pipe servers

/// Takes the bound path away from libuv, which would otherwise unlink(2)
/// whatever is at that path when the server closes, even a socket another
/// process put there since (libuv 1.44, uv__pipe_close). kvod unlinks it
/// itself, only if it is still the file it bound. libuv strdup'ed the name
/// with its allocator, which is malloc: kvod never calls uv_replace_allocator.
static inline void kvod_pipe_disown_path(uv_pipe_t *pipe) {
    free((void *)pipe->pipe_fname);
    pipe->pipe_fname = NULL;
}

// MARK: - Descriptors and signals

/// Peer credentials of a connected AF_UNIX socket. Linux: SO_PEERCRED. Our own
/// struct with struct ucred's layout avoids depending on _GNU_SOURCE, which a
/// define here could not reliably provide: glibc's headers are a prebuilt
/// Clang module by the time this header is parsed.
static inline int kvod_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid) {
#if defined(__linux__) && defined(SO_PEERCRED)
    struct { int32_t pid; uint32_t uid; uint32_t gid; } cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -errno;
    if (len != sizeof(cred)) return UV_EINVAL;
    *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
    return 0;
#elif defined(__APPLE__)
    uid_t u; gid_t g; pid_t p = -1; socklen_t len = sizeof(p);
    if (getpeereid(fd, &u, &g) != 0) return -errno;
    if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &p, &len) != 0) p = -1;
    *pid = p; *uid = u; *gid = g;
    return 0;
#else
    (void)fd; (void)pid; (void)uid; (void)gid;
    return UV_ENOTSUP;
#endif
}

/// Supplementary groups of the peer of a connected AF_UNIX socket (Linux 4.13+:
/// SO_PEERGROUPS). Fills up to `max` ids; returns how many the peer has (which
/// may exceed `max`: call again with more room), or a negative errno.
static inline int kvod_peer_groups(int fd, uint32_t *groups, int max) {
#if defined(__linux__)
#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif
    socklen_t len = (socklen_t)(max * sizeof(uint32_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) {
        if (errno == ERANGE) return (int)(len / sizeof(uint32_t));
        return -errno;
    }
    return (int)(len / sizeof(uint32_t));
#else
    (void)fd; (void)groups; (void)max;
    return UV_ENOTSUP;
#endif
}

/// Opens the reserve descriptor kept for the EMFILE fallback (see UVPipeServer).
static inline int kvod_open_reserve_fd(void) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/// Accepts and immediately closes every pending connection on a non-blocking
/// listening socket. Returns the count, or a negative errno if the first
/// accept fails with something else than EAGAIN.
static inline int kvod_drain_listener(int listen_fd) {
    int count = 0;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd >= 0) { close(fd); count++; continue; }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || count > 0) return count;
        return -errno;
    }
}

/// libuv does not ignore SIGPIPE, and writes to a pipe whose peer is gone
/// raise it; SIG_IGN is a macro Swift cannot import portably.
static inline int kvod_ignore_sigpipe(void) {
    return signal(SIGPIPE, SIG_IGN) == SIG_ERR ? -errno : 0;
}

/* Removes `signum` from the calling thread's blocked set; 0 or -errno. */
static inline int kvod_unblock_signal(int signum) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signum);
    int rc = pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    return rc == 0 ? 0 : -rc;
}

// MARK: - Loop metrics

/// uv_loop_configure is variadic, which Swift cannot call: turns on the
/// accounting of time spent waiting in epoll (uv_metrics_idle_time).
static inline int kvod_loop_measure_idle_time(uv_loop_t *loop) {
    return uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
}

#endif
