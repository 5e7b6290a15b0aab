/*
 * httpload: the socket side and the SSE side of scripts/bench-http.sh (issue 31's
 * "Done when" figures), C11 and libc only, epoll.
 *
 *   cc -O2 -pthread -o httpload httpload.c
 *   httpload get --socket PATH [--connections 32] [--threads 2] [--seconds 5]
 *       kvod's socket get rate at wrk's shape: each connection has one
 *       {"op":"get","object":"x","keyPath":"k"} in flight, answered before the next.
 *   httpload fanout --transport sse|socket --socket PATH [--http HOST:PORT --token T]
 *                   [--observers 100] [--seconds 5]
 *       N observers of f.v, either HTTP/1.0 GETs of /v1/watch (counting `data:`
 *       lines) or socket observes (counting event lines), all read by one epoll
 *       thread, while one socket writer sets f.v flat out (64 sets unanswered).
 *
 * --warmup S (default 0.5) of warm-up, then the window of --seconds. An error reply or a dropped connection exits 1.
 * Prints one line "result key=value ...".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *socket_path, *http_addr = "127.0.0.1:0", *token = "", *transport = "sse";
static int connections = 32, threads = 2, observers = 100;
static double seconds = 5, warmup = 0.5;
static atomic_int stop;

static void die(const char *what) { perror(what); exit(1); }
static void fail(const char *what) { fprintf(stderr, "httpload: %s\n", what); exit(1); }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int connect_unix(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", socket_path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect (unix)");
    return fd;
}

static int connect_tcp(void) {
    char host[64];
    snprintf(host, sizeof host, "%s", http_addr);
    char *colon = strrchr(host, ':');
    if (!colon) fail("--http wants HOST:PORT");
    *colon = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) fail("--http: not an IPv4 address");
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect (tcp)");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write");
        p += w; n -= (size_t)w;
    }
}

/* ---- get: closed loop, one request in flight per connection ---- */

static const char get_line[] = "{\"op\":\"get\",\"object\":\"x\",\"keyPath\":\"k\"}\n";
static _Atomic uint64_t answered;

static void *get_thread(void *arg) {
    int n = *(int *)arg, ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < n; i++) {
        int fd = connect_unix();
        struct epoll_event e = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0) die("epoll_ctl");
        write_all(fd, get_line, sizeof get_line - 1);
    }
    struct epoll_event events[64];
    char buf[65536];
    while (!atomic_load(&stop)) {
        int ready = epoll_wait(ep, events, 64, 100);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0) fail("a get connection closed");
            if (memmem(buf, (size_t)r, "\"error\"", 7)) { fprintf(stderr, "%.*s", (int)r, buf); fail("error reply"); }
            /* One request in flight, so one read holds at most one (short) reply. */
            if (buf[r - 1] != '\n') fail("a reply split across reads (value too big for this tool)");
            atomic_fetch_add(&answered, 1);
            write_all(fd, get_line, sizeof get_line - 1);
        }
    }
    return NULL;
}

static int run_get(void) {
    pthread_t t[16];
    int per[16];
    if (threads < 1 || threads > 16) fail("--threads 1..16");
    for (int i = 0; i < threads; i++) {
        per[i] = connections / threads + (i < connections % threads);
        pthread_create(&t[i], NULL, get_thread, &per[i]);
    }
    usleep((useconds_t)(warmup * 1e6));
    uint64_t a0 = atomic_load(&answered);
    double t0 = now();
    usleep((useconds_t)(seconds * 1e6));
    uint64_t a1 = atomic_load(&answered);
    double t1 = now();
    atomic_store(&stop, 1);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    printf("result scenario=get connections=%d gets_per_s=%.0f\n", connections, (double)(a1 - a0) / (t1 - t0));
    return 0;
}

/* ---- fanout: N observers (SSE or socket), one flat-out writer ---- */

struct observer { int fd, col, data_match, retry_match, registered; };
static _Atomic uint64_t sets_answered;

static void *writer_thread(void *arg) {
    (void)arg;
    int fd = connect_unix();
    char out[64 * 96], in[65536];
    uint64_t sent = 0, acked = 0;
    while (!atomic_load(&stop)) {
        size_t n = 0;
        while (sent - acked < 64) n += (size_t)sprintf(out + n, "{\"op\":\"set\",\"object\":\"f\",\"keyPath\":\"v\",\"value\":%llu}\n", (unsigned long long)++sent);
        if (n) write_all(fd, out, n);
        ssize_t r = read(fd, in, sizeof in);
        if (r <= 0) fail("the writer's connection closed");
        if (memmem(in, (size_t)r, "\"error\"", 7)) { fprintf(stderr, "%.*s", (int)r, in); fail("error reply to a set"); }
        for (ssize_t i = 0; i < r; i++) if (in[i] == '\n') { acked++; atomic_fetch_add(&sets_answered, 1); }
    }
    close(fd);
    return NULL;
}

static int run_fanout(void) {
    int sse = strcmp(transport, "sse") == 0;
    if (!sse && strcmp(transport, "socket") != 0) fail("--transport sse|socket");
    struct observer *obs = calloc((size_t)observers, sizeof *obs);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    char request[1024];
    int rl = sse ? snprintf(request, sizeof request, "GET /v1/watch?object=f&keyPath=v HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", http_addr, token)
                 : snprintf(request, sizeof request, "{\"op\":\"observe\",\"object\":\"f\",\"keyPath\":\"v\",\"options\":[\"new\"]}\n");
    for (int i = 0; i < observers; i++) {
        obs[i].fd = sse ? connect_tcp() : connect_unix();
        obs[i].data_match = obs[i].retry_match = 1;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &obs[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, obs[i].fd, &e) < 0) die("epoll_ctl");
        write_all(obs[i].fd, request, (size_t)rl);
    }
    uint64_t events = 0, bytes = 0;
    int registered = 0;
    struct epoll_event ready[256];
    static char buf[65536];
    double deadline = now() + 30, t0 = 0, t1 = 0;
    uint64_t e0 = 0, s0 = 0, e1 = 0, s1 = 0;
    pthread_t writer;
    int phase = 0; /* 0 registering, 1 warm-up, 2 window */
    double phase_end = 0;
    for (;;) {
        double t = now();
        if (phase == 0 && registered == observers) {
            pthread_create(&writer, NULL, writer_thread, NULL);
            phase = 1; phase_end = t + warmup;
        } else if (phase == 0 && t > deadline) {
            fprintf(stderr, "httpload: %d of %d observers registered\n", registered, observers);
            fail("observers did not register within 30 s");
        } else if (phase == 1 && t >= phase_end) {
            phase = 2; phase_end = t + seconds; t0 = t; e0 = events; s0 = atomic_load(&sets_answered);
        } else if (phase == 2 && t >= phase_end) {
            t1 = t; e1 = events; s1 = atomic_load(&sets_answered);
            break;
        }
        int n = epoll_wait(ep, ready, 256, 50);
        for (int k = 0; k < n; k++) {
            struct observer *o = ready[k].data.ptr;
            ssize_t r = read(o->fd, buf, sizeof buf);
            if (r <= 0) fail("an observer's connection closed");
            bytes += (uint64_t)r;
            for (ssize_t i = 0; i < r; i++) {
                char c = buf[i];
                if (c == '\n') {
                    if (!sse) {
                        if (!o->registered) { o->registered = 1; registered++; } else events++;
                    }
                    o->col = 0; o->data_match = o->retry_match = 1;
                    continue;
                }
                if (sse && o->col < 6) {
                    if (o->data_match && o->col < 5 && c != "data:"[o->col]) o->data_match = 0;
                    else if (o->data_match && o->col == 4) events++;
                    if (o->retry_match && c != "retry:"[o->col]) o->retry_match = 0;
                    else if (o->retry_match && o->col == 5 && !o->registered) { o->registered = 1; registered++; }
                }
                o->col++;
            }
            if (!sse && memmem(buf, (size_t)r, "\"error\"", 7)) { fprintf(stderr, "%.*s", (int)r, buf); fail("error on an observer"); }
            if (sse && o->registered == 0 && memmem(buf, (size_t)r, "HTTP/1.1 4", 10)) { fprintf(stderr, "%.*s", (int)r, buf); fail("HTTP error on a watch"); }
        }
    }
    atomic_store(&stop, 1);
    pthread_join(writer, NULL);
    printf("result scenario=fanout transport=%s observers=%d events_per_s=%.0f sets_per_s=%.0f bytes_per_event=%.0f\n",
           transport, observers, (double)(e1 - e0) / (t1 - t0), (double)(s1 - s0) / (t1 - t0),
           events ? (double)bytes / (double)events : 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) fail("usage: httpload get|fanout [options] (see the file's header)");
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--socket")) socket_path = v;
        else if (!strcmp(k, "--http")) http_addr = v;
        else if (!strcmp(k, "--token")) token = v;
        else if (!strcmp(k, "--transport")) transport = v;
        else if (!strcmp(k, "--connections")) connections = atoi(v);
        else if (!strcmp(k, "--threads")) threads = atoi(v);
        else if (!strcmp(k, "--observers")) observers = atoi(v);
        else if (!strcmp(k, "--seconds")) seconds = atof(v);
        else if (!strcmp(k, "--warmup")) warmup = atof(v);
        else { fprintf(stderr, "httpload: unknown option %s\n", k); return 2; }
    }
    if (!socket_path) fail("--socket PATH is needed");
    if (!strcmp(argv[1], "get")) return run_get();
    if (!strcmp(argv[1], "fanout")) return run_fanout();
    fail("the first argument is get or fanout");
}
