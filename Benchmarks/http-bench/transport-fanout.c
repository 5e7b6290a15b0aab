// The transports alone, without kvod: one writer thread writes the same batch
// of newline-ended messages to each of N connections in turn (as kvod's loop
// writes a turn's events to every observer), one reader thread reads them all
// with epoll. Unix socketpairs, or loopback TCP (TCP_NODELAY, as H2O sets).
// Prints the messages delivered per second and the writer's CPU per message
// (docs/PERFORMANCE.md, "SSE fan-out: the transport's share").
//   cc -O2 -pthread -o transport-fanout transport-fanout.c
//   ./transport-fanout unix|tcp CONNECTIONS MESSAGE_BYTES MESSAGES_PER_WRITE SECONDS
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int connections;
static int *writers, *readers;
static volatile int stopping;
static long long bytes_read;

static double seconds_of(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *read_all(void *unused) {
    (void)unused;
    int poll = epoll_create1(0);
    struct epoll_event event = {0}, events[256];
    static char buffer[65536];
    for (int i = 0; i < connections; i++) {
        event.events = EPOLLIN;
        event.data.u32 = i;
        epoll_ctl(poll, EPOLL_CTL_ADD, readers[i], &event);
    }
    while (!stopping) {
        int ready = epoll_wait(poll, events, 256, 100);
        for (int j = 0; j < ready; j++) {
            ssize_t got;
            while ((got = read(readers[events[j].data.u32], buffer, sizeof buffer)) > 0)
                __atomic_add_fetch(&bytes_read, got, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s unix|tcp CONNECTIONS MESSAGE_BYTES MESSAGES_PER_WRITE SECONDS\n", argv[0]);
        return 2;
    }
    int tcp = strcmp(argv[1], "tcp") == 0;
    connections = atoi(argv[2]);
    int message = atoi(argv[3]), batch = atoi(argv[4]), seconds = atoi(argv[5]);
    writers = calloc(connections, sizeof(int));
    readers = calloc(connections, sizeof(int));
    int listener = -1;
    struct sockaddr_in address = {0};
    socklen_t length = sizeof address;
    if (tcp) {
        listener = socket(AF_INET, SOCK_STREAM, 0);
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096) ||
            getsockname(listener, (struct sockaddr *)&address, &length)) { perror("listen"); return 1; }
    }
    for (int i = 0; i < connections; i++) {
        if (tcp) {
            int client = socket(AF_INET, SOCK_STREAM, 0), one = 1;
            if (connect(client, (struct sockaddr *)&address, sizeof address)) { perror("connect"); return 1; }
            int server = accept(listener, NULL, NULL);
            setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            writers[i] = server;
            readers[i] = client;
        } else {
            int pair[2];
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair)) { perror("socketpair"); return 1; }
            writers[i] = pair[0];
            readers[i] = pair[1];
        }
        fcntl(writers[i], F_SETFL, O_NONBLOCK);
        fcntl(readers[i], F_SETFL, O_NONBLOCK);
    }
    char *payload = malloc((size_t)message * batch);
    memset(payload, 'x', (size_t)message * batch);
    for (int b = 0; b < batch; b++) payload[b * message + message - 1] = '\n';
    pthread_t reader;
    pthread_create(&reader, NULL, read_all, NULL);
    double wall = seconds_of(CLOCK_MONOTONIC), cpu = seconds_of(CLOCK_THREAD_CPUTIME_ID);
    long long written = 0, refused = 0;
    while (seconds_of(CLOCK_MONOTONIC) - wall < seconds) {
        for (int i = 0; i < connections; i++) {
            ssize_t sent = write(writers[i], payload, (size_t)message * batch);
            if (sent > 0) written += sent; else refused++;
        }
    }
    wall = seconds_of(CLOCK_MONOTONIC) - wall;
    cpu = seconds_of(CLOCK_THREAD_CPUTIME_ID) - cpu;
    stopping = 1;
    pthread_join(reader, NULL);
    printf("%s connections=%d message_bytes=%d per_write=%d delivered_per_s=%.0f writer_ns_per_message=%.0f writes_refused=%lld\n",
           tcp ? "tcp" : "unix", connections, message, batch, bytes_read / (double)message / wall,
           cpu * 1e9 / (written / (double)message), refused);
    return 0;
}
