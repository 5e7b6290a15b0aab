/*
 * loadgen: a second load generator for kvod beside Redis (issue 16), written
 * from the description of the outside one and not from kvod-bench:
 * C11 and libc only, epoll, one setter thread and one observer thread, kvod's
 * line protocol and RESP, every reply and event counted and checked for order.
 *
 *   cc -O2 -pthread -o loadgen loadgen.c
 *   loadgen --peer kvod|redis --socket PATH --scenario set|fanout|ping [options]
 *
 * Scenarios:
 *   set     --setters (4) connections x --pipeline (64) sets, each its own key,
 *           one observer of those keys (kvod: observe with "new"; Redis: SET with
 *           keyspace notifications to a SUBSCRIBEr); --shape plain|id|dumps
 *           spells kvod's sets as KVOClient, a socat user with an id first, or
 *           Python's json.dumps.
 *   fanout  one setter (--pipeline sets unanswered, flat out: it never waits for
 *           observers) and --observers connections observing one key (kvod,
 *           --compact for compact events) or SUBSCRIBEd to one channel (Redis
 *           PUBLISH), all read by one epoll thread, --read-bytes (4096) a read.
 *   ping    a lone client's ping, one at a time every --ping-interval-us (1000),
 *           while --setters connections set flat out; p50/p99/max.
 *
 * Every change's value is its index per key ("17"; --value-bytes N pads it to
 * N bytes, "17,000…"); observers check that the indexes grow, and a kvod
 * event with "coalesced":N may skip exactly N. After
 * the window the setters stop, and every observer must reach the last index.
 * An error reply, a dropped connection, a lost, duplicated or out-of-order
 * event exits 1. The figures go to stdout as one line "result key=value ...".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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

enum peer { KVOD, REDIS };
enum scenario { SC_SET, SC_FANOUT, SC_PING };
enum shape { SH_PLAIN, SH_ID, SH_DUMPS };

#define MAX_KEYS 8     /* keys one observer connection watches (set scenario) */
#define CARRY_MAX 4096 /* an unfinished line or RESP message kept between reads */

static struct {
    enum peer peer;
    enum scenario scenario;
    enum shape shape;
    const char *socket;
    int observers, setters, pipeline, compact, ping_interval_us;
    size_t read_bytes;
    double seconds, warmup, drain_seconds;
    int server_pid; /* for the server's CPU time over the window; 0: not measured */
    int value_bytes; /* a value shorter than this is padded, "17,000…" */
} opt = {KVOD, SC_SET, SH_PLAIN, NULL, 100, 4, 64, 0, 1000, 4096, 2.0, 0.5, 60.0, 0, 0};

struct conn {
    int fd;
    int key;                 /* setter: the key it sets */
    uint64_t sent, answered; /* setter */
    int nkeys;               /* observer: keys observed, 0..nkeys-1 */
    uint64_t last[MAX_KEYS], delivered[MAX_KEYS], coalesced[MAX_KEYS];
    size_t carry_len;
    char carry[CARRY_MAX];
};

static struct conn *setters, *observers;
static int nsetters, nobservers, nkeys;
static uint64_t final_index[MAX_KEYS]; /* written by the setter thread before setter_done */
static atomic_int stop_setting, setter_done, observers_done;
static atomic_uint_fast64_t replies_total, events_total, changes_total, bytes_total, registered;
static atomic_uint_fast64_t miscounted; /* "coalesced":N larger than the indexes skipped */

_Noreturn static void die(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fputs("loadgen: FAIL: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    fflush(stdout);
    _exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_seconds(double s) {
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static int connect_socket(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(opt.socket) >= sizeof address.sun_path) die("socket path too long");
    strcpy(address.sun_path, opt.socket);
    /* A server just started may not listen yet: try again for up to 10 s. */
    for (double deadline = now() + 10; connect(fd, (struct sockaddr *)&address, sizeof address) != 0;) {
        if ((errno != ENOENT && errno != ECONNREFUSED && errno != EINTR) || now() > deadline) die("connect %s: %s", opt.socket, strerror(errno));
        sleep_seconds(0.005);
    }
    int size = 1 << 20; /* the kernel clamps it; a larger buffer only spares wake-ups */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    return fd;
}

/* Writes all of it (blocking socket): callers keep little enough in flight that it never waits long. */
static void send_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t n = send(fd, bytes, length, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("send: %s (dropped connection)", strerror(errno));
        }
        bytes += n;
        length -= (size_t)n;
    }
}

static uint64_t parse_digits(const char *p, const char *end, const char **after) {
    uint64_t value = 0;
    while (p < end && *p >= '0' && *p <= '9') value = value * 10 + (uint64_t)(*p++ - '0');
    if (after) *after = p;
    return value;
}

/* The number after `name` in the line (name includes its quotes and colon), or `missing`. */
static uint64_t member_number(const char *line, size_t length, const char *name, uint64_t missing) {
    size_t name_length = strlen(name);
    const char *at = memmem(line, length, name, name_length);
    if (!at) return missing;
    const char *p = at + name_length;
    if (p < line + length && *p == '"') p++;
    return parse_digits(p, line + length, NULL);
}

/* ---- requests ---- */

/* Appends text; written out by hand, as sprintf would cost the setter thread more than some servers spend on a set. */
static char *put(char *p, const char *text, size_t length) {
    memcpy(p, text, length);
    return p + length;
}
#define PUT(p, literal) put(p, literal, sizeof literal - 1)

static char *put_decimal(char *p, uint64_t value) {
    char digits[20];
    int n = 0;
    do digits[n++] = (char)('0' + value % 10); while ((value /= 10) > 0);
    while (n > 0) *p++ = digits[--n];
    return p;
}

/* One set of key to index as the peer and shape spell it; returns its length. */
static size_t format_set(char *out, int key, uint64_t index) {
    char name[8] = "f", value[64];
    size_t name_length = 1, value_length = (size_t)(put_decimal(value, index) - value), id_length = value_length;
    if (value_length < (size_t)opt.value_bytes) {
        value[value_length] = ',';
        memset(value + value_length + 1, '0', (size_t)opt.value_bytes - value_length - 1);
        value_length = (size_t)opt.value_bytes;
    }
    if (opt.scenario != SC_FANOUT) name_length = (size_t)(put_decimal(PUT(name, "s/"), (uint64_t)key) - name);
    char *p = out;
    if (opt.peer == REDIS) {
        p = opt.scenario == SC_FANOUT ? PUT(p, "*3\r\n$7\r\nPUBLISH\r\n$") : PUT(p, "*3\r\n$3\r\nSET\r\n$");
        p = PUT(put(PUT(put_decimal(p, name_length), "\r\n"), name, name_length), "\r\n$");
        p = PUT(put(PUT(put_decimal(p, value_length), "\r\n"), value, value_length), "\r\n");
        return (size_t)(p - out);
    }
    switch (opt.shape) {
    case SH_ID:
        p = PUT(put(PUT(p, "{\"id\":"), value, id_length), ",\"op\":\"set\",\"object\":\"");
        p = PUT(put(PUT(put(p, name, name_length), "\",\"keyPath\":\"v\",\"value\":\""), value, value_length), "\"}\n");
        break;
    case SH_DUMPS:
        p = PUT(put(PUT(p, "{\"op\": \"set\", \"object\": \""), name, name_length), "\", \"keyPath\": \"v\", \"value\": \"");
        p = PUT(put(PUT(put(p, value, value_length), "\", \"id\": "), value, id_length), "}\n");
        break;
    default:
        p = PUT(put(PUT(p, "{\"op\":\"set\",\"object\":\""), name, name_length), "\",\"keyPath\":\"v\",\"value\":\"");
        p = PUT(put(p, value, value_length), "\"}\n");
    }
    return (size_t)(p - out);
}

/* ---- RESP: one message (a simple value or an array of up to 4 simple values) ---- */

struct resp {
    int count;       /* items; 1 for a simple value */
    char type[4];    /* '+', '-', ':', '$' */
    const char *s[4];
    size_t l[4];
};

/* One simple value at p; returns the bytes it takes, 0 if incomplete. */
static size_t resp_item(const char *p, size_t n, char *type, const char **s, size_t *l) {
    const char *nl = memchr(p, '\n', n);
    if (!nl) return 0;
    size_t header = (size_t)(nl - p) + 1;
    *type = p[0];
    switch (p[0]) {
    case '+': case '-': case ':':
        *s = p + 1;
        *l = header - 3;
        return header;
    case '$': {
        size_t length = (size_t)parse_digits(p + 1, nl, NULL);
        if (n < header + length + 2) return 0;
        *s = p + header;
        *l = length;
        return header + length + 2;
    }
    default: die("unexpected RESP byte 0x%02x", (unsigned char)p[0]);
    }
}

static size_t resp_message(const char *p, size_t n, struct resp *m) {
    if (n == 0) return 0;
    if (p[0] != '*') {
        m->count = 1;
        return resp_item(p, n, &m->type[0], &m->s[0], &m->l[0]);
    }
    const char *nl = memchr(p, '\n', n);
    if (!nl) return 0;
    m->count = (int)parse_digits(p + 1, nl, NULL);
    if (m->count < 1 || m->count > 4) die("RESP array of %d", m->count);
    size_t used = (size_t)(nl - p) + 1;
    for (int i = 0; i < m->count; i++) {
        size_t item = resp_item(p + used, n - used, &m->type[i], &m->s[i], &m->l[i]);
        if (item == 0) return 0;
        used += item;
    }
    return used;
}

/* ---- reading ---- */

/* Puts c's unfinished line or message at buf's start and reads at most size bytes after it;
   returns the bytes now in buf, 0 if nothing was ready. `who` names c in errors. */
static size_t read_more(struct conn *c, char *buf, size_t size, const char *who) {
    memcpy(buf, c->carry, c->carry_len);
    ssize_t got = recv(c->fd, buf + c->carry_len, size, MSG_DONTWAIT);
    if (got == 0) die("%s's connection was dropped (fd %d)", who, c->fd);
    if (got < 0) {
        if (errno == EAGAIN || errno == EINTR) return 0;
        die("%s's recv: %s", who, strerror(errno));
    }
    return c->carry_len + (size_t)got;
}

/* Keeps what follows the used bytes of buf for the next read. */
static void keep_rest(struct conn *c, const char *buf, size_t length, size_t used) {
    c->carry_len = length - used;
    if (c->carry_len > CARRY_MAX) die("a line or message over %d bytes", CARRY_MAX);
    memcpy(c->carry, buf + used, c->carry_len);
}

/* The next complete line of buf after *used (its length without the newline in *line_length),
   moving *used past it; NULL when none is complete. */
static const char *next_line(const char *buf, size_t length, size_t *used, size_t *line_length) {
    const char *line = buf + *used, *nl = memchr(line, '\n', length - *used);
    if (!nl) return NULL;
    *line_length = (size_t)(nl - line);
    *used += *line_length + 1;
    return line;
}

/* ---- observers ---- */

/* One change reached observer c for key: index (0 for Redis keyspace events, which carry no value). */
static void observed(struct conn *c, int key, uint64_t index, uint64_t coalesced, uint64_t *events, uint64_t *changes) {
    if (key < 0 || key >= c->nkeys) die("event for unknown key %d", key);
    if (index == 0) index = c->last[key] + 1; /* keyspace event: counted, order not visible */
    uint64_t last = c->last[key];
    if (index <= last) die("observer fd %d key %d: index %llu after %llu (duplicate or out of order)", c->fd, key,
                           (unsigned long long)index, (unsigned long long)last);
    uint64_t skipped = index - last - 1;
    if (skipped > coalesced) die("observer fd %d key %d: index %llu after %llu with coalesced %llu (%llu lost)", c->fd, key,
                                 (unsigned long long)index, (unsigned long long)last, (unsigned long long)coalesced,
                                 (unsigned long long)(skipped - coalesced));
    if (skipped < coalesced) atomic_fetch_add_explicit(&miscounted, 1, memory_order_relaxed);
    c->last[key] = index;
    c->delivered[key]++;
    c->coalesced[key] += coalesced;
    *events += 1;
    *changes += 1 + skipped;
}

/* Handles the complete lines or messages in buf; returns the bytes used. */
static size_t observer_input(struct conn *c, const char *buf, size_t length, uint64_t *events, uint64_t *changes) {
    size_t used = 0;
    if (opt.peer == REDIS) {
        struct resp m;
        size_t n;
        while ((n = resp_message(buf + used, length - used, &m)) > 0) {
            const char *p = buf + used;
            used += n;
            if (m.type[0] == '-') die("Redis error to an observer: %.*s", (int)m.l[0], m.s[0]);
            if (m.count == 3 && m.l[0] == 9 && memcmp(m.s[0], "subscribe", 9) == 0) {
                atomic_fetch_add_explicit(&registered, 1, memory_order_relaxed);
                continue;
            }
            if (m.count != 3 || m.l[0] != 7 || memcmp(m.s[0], "message", 7) != 0) die("unexpected RESP to an observer: %.40s", p);
            int key = 0;
            const char *slash = memrchr(m.s[1], '/', m.l[1]);
            if (slash) key = (int)parse_digits(slash + 1, m.s[1] + m.l[1], NULL);
            uint64_t index = opt.scenario == SC_FANOUT ? parse_digits(m.s[2], m.s[2] + m.l[2], NULL) : 0;
            if (opt.scenario == SC_FANOUT && index == 0) die("message without an index: %.*s", (int)m.l[2], m.s[2]);
            observed(c, key, index, 0, events, changes);
        }
        return used;
    }
    const char *line;
    size_t line_length;
    while ((line = next_line(buf, length, &used, &line_length)) != NULL) {
        const char *nl = line + line_length;
        int key;
        if (line_length > 5 && memcmp(line, "{\"o\":", 5) == 0) {
            key = (int)parse_digits(line + 5, nl, NULL) - 1;
        } else if (line_length > 17 && memcmp(line, "{\"event\":\"change\"", 17) == 0) {
            key = 0;
            const char *object = memmem(line, line_length, "\"object\":\"", 10);
            if (!object) die("event without an object: %.*s", (int)line_length, line);
            object += 10;
            const char *close = memchr(object, '"', (size_t)(nl - object));
            const char *slash = close ? memrchr(object, '/', (size_t)(close - object)) : NULL;
            if (slash) key = (int)parse_digits(slash + 1, close, NULL);
        } else if (memmem(line, line_length, "\"ok\":true", 9)) {
            atomic_fetch_add_explicit(&registered, 1, memory_order_relaxed);
            continue;
        } else {
            die("unexpected line to an observer: %.*s", (int)line_length, line);
        }
        uint64_t index = member_number(line, line_length, "\"new\":", 0);
        if (index == 0) die("event without an index: %.*s", (int)line_length, line);
        observed(c, key, index, member_number(line, line_length, "\"coalesced\":", 0), events, changes);
    }
    return used;
}

static int observers_caught_up(void) {
    for (int i = 0; i < nobservers; i++)
        for (int k = 0; k < observers[i].nkeys; k++)
            if (observers[i].last[k] != final_index[k]) return 0;
    return 1;
}

static void *observer_thread(void *arg) {
    int epoll = *(int *)arg;
    char *buf = malloc(CARRY_MAX + opt.read_bytes);
    struct epoll_event ready[256];
    double next_check = 0;
    if (!buf) die("out of memory");
    for (;;) {
        int n = epoll_wait(epoll, ready, 256, 5);
        if (n < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
        uint64_t events = 0, changes = 0, bytes = 0;
        for (int i = 0; i < n; i++) {
            struct conn *c = ready[i].data.ptr;
            size_t carried = c->carry_len, length = read_more(c, buf, opt.read_bytes, "an observer");
            if (length == 0) continue;
            bytes += length - carried;
            keep_rest(c, buf, length, observer_input(c, buf, length, &events, &changes));
        }
        if (events) {
            atomic_fetch_add_explicit(&events_total, events, memory_order_relaxed);
            atomic_fetch_add_explicit(&changes_total, changes, memory_order_relaxed);
        }
        atomic_fetch_add_explicit(&bytes_total, bytes, memory_order_relaxed);
        if (atomic_load_explicit(&setter_done, memory_order_acquire)) {
            double t = now();
            if (t >= next_check) {
                next_check = t + 0.001;
                if (observers_caught_up()) break;
            }
        }
        if (atomic_load_explicit(&observers_done, memory_order_relaxed)) break; /* main gave up */
    }
    atomic_store_explicit(&observers_done, 1, memory_order_release);
    free(buf);
    return NULL;
}

/* ---- setters ---- */

/* Counts the replies in buf, checking each; returns the bytes used. */
static size_t setter_input(struct conn *c, const char *buf, size_t length, uint64_t *replies) {
    size_t used = 0;
    if (opt.peer == REDIS) {
        struct resp m;
        size_t n;
        while ((n = resp_message(buf + used, length - used, &m)) > 0) {
            if (m.type[0] == '-') die("Redis error: %.*s", (int)m.l[0], m.s[0]);
            if (m.count != 1) die("unexpected RESP array to a setter");
            used += n;
            *replies += 1;
        }
        return used;
    }
    const char *line;
    size_t line_length;
    while ((line = next_line(buf, length, &used, &line_length)) != NULL) {
        if (!memmem(line, line_length, "\"ok\":true", 9)) die("error reply: %.*s", (int)line_length, line);
        uint64_t expected = c->answered + *replies + 1;
        if (opt.shape != SH_PLAIN && member_number(line, line_length, "{\"id\":", 0) != expected)
            die("reply out of order (expected id %llu): %.*s", (unsigned long long)expected, (int)line_length, line);
        *replies += 1;
    }
    return used;
}

static void send_sets(struct conn *c, uint64_t count) {
    char out[64 * 160];
    size_t length = 0;
    while (count-- > 0) {
        length += format_set(out + length, c->key, ++c->sent);
        if (length > sizeof out - 160) {
            send_all(c->fd, out, length);
            length = 0;
        }
    }
    if (length) send_all(c->fd, out, length);
}

static void *setter_thread(void *arg) {
    (void)arg;
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    size_t read_size = 64 * 1024;
    char *buf = malloc(CARRY_MAX + read_size);
    struct epoll_event ready[64];
    if (epoll < 0 || !buf) die("setter setup failed");
    for (int i = 0; i < nsetters; i++) {
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &setters[i]};
        if (epoll_ctl(epoll, EPOLL_CTL_ADD, setters[i].fd, &e) != 0) die("epoll_ctl: %s", strerror(errno));
        send_sets(&setters[i], (uint64_t)opt.pipeline);
    }
    int outstanding = nsetters;
    while (outstanding > 0) {
        int n = epoll_wait(epoll, ready, 64, 100);
        if (n < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
        int stopping = atomic_load_explicit(&stop_setting, memory_order_relaxed);
        for (int i = 0; i < n; i++) {
            struct conn *c = ready[i].data.ptr;
            size_t length = read_more(c, buf, read_size, "a setter");
            if (length == 0) continue;
            uint64_t replies = 0;
            keep_rest(c, buf, length, setter_input(c, buf, length, &replies));
            c->answered += replies;
            atomic_fetch_add_explicit(&replies_total, replies, memory_order_relaxed);
            if (!stopping) send_sets(c, replies);
        }
        if (stopping) {
            outstanding = 0;
            for (int i = 0; i < nsetters; i++) outstanding += setters[i].answered != setters[i].sent;
        }
    }
    for (int i = 0; i < nsetters; i++) final_index[setters[i].key] = setters[i].sent;
    atomic_store_explicit(&setter_done, 1, memory_order_release);
    free(buf);
    close(epoll);
    return NULL;
}

/* ---- the lone pinger ---- */

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ping_once(int fd) {
    const char *request = opt.peer == REDIS ? "*1\r\n$4\r\nPING\r\n" : "{\"op\":\"ping\"}\n";
    char reply[256];
    size_t length = 0;
    double start = now();
    send_all(fd, request, strlen(request));
    while (!memchr(reply, '\n', length)) {
        ssize_t n = recv(fd, reply + length, sizeof reply - length, 0);
        if (n <= 0) die("the pinger's connection was dropped");
        length += (size_t)n;
        if (length == sizeof reply) die("ping reply too long");
    }
    double elapsed = now() - start;
    if (opt.peer == REDIS ? memcmp(reply, "+PONG", 5) != 0 : !memmem(reply, length, "\"ok\":true", 9))
        die("bad ping reply: %.*s", (int)length, reply);
    return elapsed;
}

/* ---- CPU time ---- */

/* A thread's CPU time in seconds. */
static double thread_cpu(pthread_t thread) {
    clockid_t clock;
    struct timespec t;
    if (pthread_getcpuclockid(thread, &clock) != 0 || clock_gettime(clock, &t) != 0) return 0;
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The server's user and system CPU time in seconds (/proc/PID/stat, in clock ticks), 0 if not measured. */
static double server_cpu(void) {
    if (opt.server_pid <= 0) return 0;
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", opt.server_pid);
    FILE *file = fopen(path, "r");
    if (!file) die("cannot read %s", path);
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = 0;
    const char *p = strrchr(text, ')');
    unsigned long long user = 0, system = 0;
    /* After the command's ")": state, then 10 fields, then utime and stime (fields 14 and 15). */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &user, &system) != 2) die("cannot parse %s", path);
    return (double)(user + system) / (double)sysconf(_SC_CLK_TCK);
}

/* ---- main ---- */

static void usage(void) {
    fputs("usage: loadgen --peer kvod|redis --socket PATH --scenario set|fanout|ping\n"
          "  [--shape plain|id|dumps] [--observers N] [--compact] [--read-bytes N] [--setters N]\n"
          "  [--pipeline N] [--seconds S] [--warmup S] [--ping-interval-us N] [--drain-seconds S] [--server-pid PID]\n"
          "  [--value-bytes N]\n", stderr);
    exit(2);
}

static void parse_options(int argc, char **argv) {
    static const struct option options[] = {
        {"peer", 1, 0, 'p'}, {"socket", 1, 0, 'S'}, {"scenario", 1, 0, 's'}, {"shape", 1, 0, 'h'},
        {"observers", 1, 0, 'o'}, {"compact", 0, 0, 'c'}, {"read-bytes", 1, 0, 'r'}, {"setters", 1, 0, 'n'},
        {"pipeline", 1, 0, 'l'}, {"seconds", 1, 0, 't'}, {"warmup", 1, 0, 'w'}, {"ping-interval-us", 1, 0, 'i'},
        {"drain-seconds", 1, 0, 'd'}, {"server-pid", 1, 0, 'P'}, {"value-bytes", 1, 0, 'v'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (ch) {
        case 'p': opt.peer = strcmp(optarg, "redis") == 0 ? REDIS : strcmp(optarg, "kvod") == 0 ? KVOD : (usage(), KVOD); break;
        case 'S': opt.socket = optarg; break;
        case 's':
            if (strcmp(optarg, "set") == 0) opt.scenario = SC_SET;
            else if (strcmp(optarg, "fanout") == 0) opt.scenario = SC_FANOUT;
            else if (strcmp(optarg, "ping") == 0) opt.scenario = SC_PING;
            else usage();
            break;
        case 'h':
            if (strcmp(optarg, "plain") == 0) opt.shape = SH_PLAIN;
            else if (strcmp(optarg, "id") == 0) opt.shape = SH_ID;
            else if (strcmp(optarg, "dumps") == 0) opt.shape = SH_DUMPS;
            else usage();
            break;
        case 'o': opt.observers = atoi(optarg); break;
        case 'c': opt.compact = 1; break;
        case 'r': opt.read_bytes = (size_t)atol(optarg); break;
        case 'n': opt.setters = atoi(optarg); break;
        case 'l': opt.pipeline = atoi(optarg); break;
        case 't': opt.seconds = atof(optarg); break;
        case 'w': opt.warmup = atof(optarg); break;
        case 'i': opt.ping_interval_us = atoi(optarg); break;
        case 'd': opt.drain_seconds = atof(optarg); break;
        case 'P': opt.server_pid = atoi(optarg); break;
        case 'v': opt.value_bytes = atoi(optarg); break;
        default: usage();
        }
    }
    if (!opt.socket || opt.observers < 1 || opt.setters < 1 || opt.setters > MAX_KEYS || opt.pipeline < 1 ||
        opt.pipeline > 64 || opt.read_bytes < 64 || opt.read_bytes > (16u << 20) || opt.seconds <= 0 || opt.warmup < 0 ||
        opt.ping_interval_us < 0 || opt.value_bytes < 0 || opt.value_bytes > 60)
        usage();
}

/* Connects the observers and sends their registrations. */
static int start_observers(void) {
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) die("epoll_create1: %s", strerror(errno));
    nobservers = opt.scenario == SC_FANOUT ? opt.observers : 1;
    observers = calloc((size_t)nobservers, sizeof *observers);
    if (!observers) die("out of memory");
    for (int i = 0; i < nobservers; i++) {
        struct conn *c = &observers[i];
        char request[1024];
        size_t length = 0;
        c->fd = connect_socket();
        c->nkeys = nkeys;
        if (opt.peer == REDIS) {
            if (opt.scenario == SC_FANOUT) {
                length = (size_t)sprintf(request, "*2\r\n$9\r\nSUBSCRIBE\r\n$1\r\nf\r\n");
            } else {
                length = (size_t)sprintf(request, "*%d\r\n$9\r\nSUBSCRIBE\r\n", nkeys + 1);
                for (int k = 0; k < nkeys; k++) length += (size_t)sprintf(request + length, "$%d\r\n__keyspace@0__:s/%d\r\n", k < 10 ? 18 : 19, k);
            }
        } else if (opt.scenario == SC_FANOUT) {
            length = (size_t)sprintf(request, "{\"op\":\"observe\",\"object\":\"f\",\"keyPath\":\"v\",\"options\":[\"new\"]%s}\n",
                                     opt.compact ? ",\"compact\":true" : "");
        } else {
            for (int k = 0; k < nkeys; k++)
                length += (size_t)sprintf(request + length, "{\"op\":\"observe\",\"object\":\"s/%d\",\"keyPath\":\"v\",\"options\":[\"new\"]%s}\n",
                                          k, opt.compact ? ",\"compact\":true" : "");
        }
        send_all(c->fd, request, length);
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &e) != 0) die("epoll_ctl: %s", strerror(errno));
    }
    return epoll;
}

int main(int argc, char **argv) {
    parse_options(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    nsetters = opt.scenario == SC_FANOUT ? 1 : opt.setters;
    nkeys = opt.scenario == SC_FANOUT ? 1 : nsetters;
    setters = calloc((size_t)nsetters, sizeof *setters);
    if (!setters) die("out of memory");
    for (int i = 0; i < nsetters; i++) {
        setters[i].fd = connect_socket();
        setters[i].key = i;
    }

    pthread_t observer, setter;
    int observer_epoll = -1;
    if (opt.scenario != SC_PING) {
        observer_epoll = start_observers();
        if (pthread_create(&observer, NULL, observer_thread, &observer_epoll) != 0) die("pthread_create");
        uint64_t expected = (uint64_t)nobservers * (uint64_t)nkeys;
        double deadline = now() + 30;
        while (atomic_load(&registered) < expected) {
            if (now() > deadline) die("%llu of %llu registrations answered in 30 s", (unsigned long long)atomic_load(&registered),
                                      (unsigned long long)expected);
            sleep_seconds(0.001);
        }
    }

    int pinger = opt.scenario == SC_PING ? connect_socket() : -1;
    if (pthread_create(&setter, NULL, setter_thread, NULL) != 0) die("pthread_create");
    sleep_seconds(opt.warmup);
    double window_start = now();
    double observer_cpu0 = opt.scenario != SC_PING ? thread_cpu(observer) : 0, server_cpu0 = server_cpu();
    uint64_t replies0 = atomic_load(&replies_total), events0 = atomic_load(&events_total);
    uint64_t changes0 = atomic_load(&changes_total), bytes0 = atomic_load(&bytes_total);
    size_t ping_count = 0, ping_capacity = 0;
    double *pings = NULL;
    if (pinger >= 0) {
        double interval = opt.ping_interval_us / 1e6, next = window_start;
        while (now() < window_start + opt.seconds) {
            if (ping_count == ping_capacity) {
                ping_capacity = ping_capacity ? 2 * ping_capacity : 4096;
                pings = realloc(pings, ping_capacity * sizeof *pings);
                if (!pings) die("out of memory");
            }
            pings[ping_count++] = ping_once(pinger);
            next += interval;
            double wait = next - now();
            if (wait > 0) sleep_seconds(wait);
        }
    } else {
        sleep_seconds(opt.seconds);
    }
    double window = now() - window_start;
    double observer_busy = opt.scenario != SC_PING ? thread_cpu(observer) - observer_cpu0 : 0, server_busy = server_cpu() - server_cpu0;
    uint64_t replies = atomic_load(&replies_total) - replies0, events = atomic_load(&events_total) - events0;
    uint64_t changes = atomic_load(&changes_total) - changes0, bytes = atomic_load(&bytes_total) - bytes0;
    atomic_store(&stop_setting, 1);
    pthread_join(setter, NULL);

    double stopped = now();
    if (opt.scenario != SC_PING) {
        /* The observer thread ends once every observer has the last index, or when told to. */
        while (!atomic_load_explicit(&observers_done, memory_order_acquire) && now() < stopped + opt.drain_seconds) sleep_seconds(0.001);
        atomic_store(&observers_done, 1);
        pthread_join(observer, NULL);
        for (int i = 0; i < nobservers; i++)
            for (int k = 0; k < nkeys; k++)
                if (observers[i].last[k] != final_index[k])
                    die("observer %d key %d reached index %llu of %llu within %.0f s after the setters stopped (lost events)", i, k,
                        (unsigned long long)observers[i].last[k], (unsigned long long)final_index[k], opt.drain_seconds);
    }
    double drained = now() - stopped;

    uint64_t total_sets = 0, delivered = 0, coalesced = 0;
    for (int k = 0; k < nkeys; k++) total_sets += final_index[k];
    for (int i = 0; i < nobservers && opt.scenario != SC_PING; i++)
        for (int k = 0; k < nkeys; k++) {
            delivered += observers[i].delivered[k];
            coalesced += observers[i].coalesced[k];
        }
    printf("result peer=%s scenario=%s", opt.peer == REDIS ? "redis" : "kvod",
           opt.scenario == SC_SET ? "set" : opt.scenario == SC_FANOUT ? "fanout" : "ping");
    printf(" sets_per_s=%.0f", (double)replies / window);
    if (opt.server_pid > 0) printf(" server_cpu_pct=%.1f", 100 * server_busy / window);
    if (opt.scenario != SC_PING) {
        printf(" events_per_s=%.0f changes_per_s=%.0f bytes_per_event=%.1f", (double)events / window, (double)changes / window,
               events ? (double)bytes / (double)events : 0.0);
        printf(" sets=%llu delivered=%llu coalesced=%llu coalesced_pct=%.2f miscounted=%llu drain_s=%.2f",
               (unsigned long long)total_sets, (unsigned long long)delivered, (unsigned long long)coalesced,
               delivered + coalesced ? 100.0 * (double)coalesced / (double)(delivered + coalesced) : 0.0,
               (unsigned long long)atomic_load(&miscounted), drained);
        printf(" observer_cpu_pct=%.1f observer_ns_per_event=%.1f", 100 * observer_busy / window, events ? 1e9 * observer_busy / (double)events : 0.0);
        if (opt.server_pid > 0) printf(" server_ns_per_event=%.1f", events ? 1e9 * server_busy / (double)events : 0.0);
    } else {
        if (ping_count == 0) die("no ping in the window");
        qsort(pings, ping_count, sizeof *pings, compare_doubles);
        printf(" pings=%zu p50_us=%.1f p99_us=%.1f max_us=%.1f", ping_count, pings[ping_count / 2] * 1e6,
               pings[(size_t)((double)ping_count * 0.99)] * 1e6, pings[ping_count - 1] * 1e6);
    }
    printf("\n");
    fflush(stdout);
    return 0;
}
