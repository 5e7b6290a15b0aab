/*
 * client-rate: the C side of scripts/bench-client.sh (issue 30): a writer that
 * pipelines N sets of one key path, and a reader that counts that key path's
 * events, the rate a client reading with no decoding at all can reach.
 *
 *   cc -O2 -pthread -o client-rate client-rate.c
 *   client-rate write SOCKET N     sets bench/0 v to 0..N-1 (values are the index),
 *                                  writing ahead of the replies, then reads all N replies
 *   client-rate count SOCKET N     observes bench/0 v (options new, initial), prints
 *                                  "ready" at the reply, then counts events until the
 *                                  one whose value is N-1, and prints one "result" line
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        exit(1);
    }
    return fd;
}

static void write_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t written = write(fd, bytes, count);
        if (written <= 0) { perror("write"); exit(1); }
        bytes += written;
        count -= (size_t)written;
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
           (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

static long total;
static int writer_fd;

/* Reads the writer's N replies; any error reply fails the run. */
static void *read_replies(void *unused) {
    (void)unused;
    static char buffer[1 << 16];
    long lines = 0;
    while (lines < total) {
        ssize_t count = read(writer_fd, buffer, sizeof buffer);
        if (count <= 0) { fprintf(stderr, "writer: connection ended after %ld replies\n", lines); exit(1); }
        for (ssize_t i = 0; i < count; i++) {
            if (buffer[i] == '\n') lines++;
        }
        if (memmem(buffer, (size_t)count, "\"ok\":false", 10)) { fprintf(stderr, "writer: error reply\n"); exit(1); }
    }
    return NULL;
}

static int write_sets(const char *path) {
    writer_fd = connect_to(path);
    pthread_t reader;
    pthread_create(&reader, NULL, read_replies, NULL);
    static char chunk[1 << 16];
    size_t used = 0;
    double start = now();
    for (long index = 0; index < total; index++) {
        if (used > sizeof chunk - 128) {
            write_all(writer_fd, chunk, used);
            used = 0;
        }
        used += (size_t)sprintf(chunk + used, "{\"op\":\"set\",\"object\":\"bench/0\",\"keyPath\":\"v\",\"value\":%ld}\n", index);
    }
    write_all(writer_fd, chunk, used);
    pthread_join(reader, NULL);
    printf("result role=writer sets=%ld seconds=%.3f\n", total, now() - start);
    return 0;
}

static int count_events(const char *path) {
    int fd = connect_to(path);
    const char *observe = "{\"op\":\"observe\",\"object\":\"bench/0\",\"keyPath\":\"v\",\"options\":[\"new\",\"initial\"]}\n";
    write_all(fd, observe, strlen(observe));
    static char buffer[1 << 16];
    char line[4096];
    size_t length = 0;
    int ready = 0;
    long events = 0, changes = 0, last = -1;
    double first = 0, cpu_first = 0;
    for (;;) {
        ssize_t count = read(fd, buffer, sizeof buffer);
        if (count <= 0) { fprintf(stderr, "count: connection ended\n"); return 1; }
        for (ssize_t i = 0; i < count; i++) {
            if (buffer[i] != '\n') {
                if (length < sizeof line - 1) line[length++] = buffer[i];
                continue;
            }
            line[length] = 0;
            length = 0;
            if (!ready) {
                if (strstr(line, "\"ok\":true")) { ready = 1; printf("ready\n"); fflush(stdout); }
                continue;
            }
            char *value = strstr(line, "\"new\":");
            if (!value) continue;
            if (events == 0) { first = now(); cpu_first = cpu_seconds(); }
            events++;
            char *folded = strstr(line, "\"coalesced\":");
            changes += 1 + (folded ? atol(folded + 12) : 0);
            last = atol(value + 6);
            if (last == total - 1) {
                double seconds = now() - first;
                printf("result role=c events=%ld changes=%ld seconds=%.4f rate=%.0f cpu_us=%.3f\n", events, changes,
                       seconds, (double)events / seconds, (cpu_seconds() - cpu_first) * 1e6 / (double)events);
                return 0;
            }
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: client-rate write|count SOCKET N\n");
        return 2;
    }
    total = atol(argv[3]);
    if (strcmp(argv[1], "write") == 0) return write_sets(argv[2]);
    if (strcmp(argv[1], "count") == 0) return count_events(argv[2]);
    fprintf(stderr, "usage: client-rate write|count SOCKET N\n");
    return 2;
}
