#ifndef KVOD_BENCH_CEPOLL_SHIM_H
#define KVOD_BENCH_CEPOLL_SHIM_H
// epoll for kvod-bench's load generator: Swift's Glibc module leaves out
// <sys/epoll.h> and <sys/eventfd.h>. Only the benchmark uses this; the daemon polls through libuv.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
