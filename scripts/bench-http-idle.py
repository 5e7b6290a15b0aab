#!/usr/bin/env python3
"""Issue 31 item 8: 10,000 idle keep-alive HTTP connections against kvod, and what a socket
client notices: the p50/p99 of a `ping` over the Unix socket before, while the connections
are opened, and while they sit idle; kvod's resident memory; how many HTTP connections kvod
kept (at most a quarter of --max-connections and 1,024; the rest are closed when accepted).

usage: scripts/bench-http-idle.py KVOD [ROUNDS] [CONNECTIONS]   (defaults 3 and 10000)
Prints one table row per round and the medians (docs/PERFORMANCE.md, "Idle HTTP connections").
"""
import os, socket, statistics, subprocess, sys, tempfile, threading, time

KVOD = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
CONNECTIONS = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
PINGS = 3_000


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def wait_for(condition, what, seconds=10):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.01)


class Pinger:
    """Pings over the socket one at a time; the latencies in microseconds."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)

    def latencies(self, count=PINGS, until=None):
        times, buffer, n = [], b"", 0
        while (until is None and n < count) or (until is not None and not until.is_set()):
            start = time.perf_counter_ns()
            self.sock.sendall(b'{"id":%d,"op":"ping"}\n' % n)
            while b"\n" not in buffer:
                buffer += self.sock.recv(65536)
            buffer = buffer.split(b"\n", 1)[1]
            times.append((time.perf_counter_ns() - start) / 1000)
            n += 1
        return times


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def open_idle(port, count):
    """Opens `count` keep-alive connections, each having had one /healthz; returns those kvod kept."""
    request = b"GET /healthz HTTP/1.1\r\nHost: kvod\r\n\r\n"
    opened = []
    for _ in range(count):
        connection = socket.socket()
        connection.setblocking(False)
        try:
            connection.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        opened.append(connection)
    kept = []
    for connection in opened:
        connection.setblocking(True)
        connection.settimeout(5)
        try:
            connection.sendall(request)
            if b"200 OK" in connection.recv(4096):
                kept.append(connection)
                continue
        except OSError:
            pass
        connection.close()
    return opened, kept


def round_once():
    folder = tempfile.mkdtemp(prefix="kvod-idle-")
    path = os.path.join(folder, "kvod.sock")
    log = open(os.path.join(folder, "kvod.log"), "a+")  # append: the offset is shared with kvod
    kvod = subprocess.Popen([KVOD, "--socket", path, "--http", "127.0.0.1:0", "--http-request-timeout", "600"],
                            stderr=log)
    try:
        def address():
            log.seek(0)
            return next((line.split("http://")[1].strip() for line in log if "serving HTTP on" in line), None)
        wait_for(lambda: address() and os.path.exists(path), "kvod")
        port = int(address().rsplit(":", 1)[1])
        pinger = Pinger(path)
        pinger.latencies(500)  # warm
        before = pinger.latencies()
        rss_before = rss_kib(kvod.pid)
        storm_done = threading.Event()
        storm = []
        thread = threading.Thread(target=lambda: storm.extend(pinger.latencies(until=storm_done)))
        thread.start()
        opened, kept = open_idle(port, CONNECTIONS)
        storm_done.set()
        thread.join()
        idle = pinger.latencies()
        rss_idle = rss_kib(kvod.pid)
        for connection in opened:
            connection.close()
        return dict(before=before, storm=storm, idle=idle, kept=len(kept),
                    rss_before=rss_before, rss_idle=rss_idle)
    finally:
        kvod.terminate()
        kvod.wait()


def row(label, values):
    return f"{label} p50 {percentile(values, 0.5):.0f} µs, p99 {percentile(values, 0.99):.0f} µs"


results = []
for n in range(ROUNDS):
    r = round_once()
    results.append(r)
    print(f"round {n + 1}: {r['kept']} of {CONNECTIONS} kept open; RSS {r['rss_before'] // 1024} -> {r['rss_idle'] // 1024} MiB; "
          f"{row('before', r['before'])}; {row('opening', r['storm'])}; {row('idle', r['idle'])}; load {os.getloadavg()[0]:.1f}")
median = statistics.median
print(f"medians: p99 before {median(percentile(r['before'], 0.99) for r in results):.0f} µs, "
      f"while opening {median(percentile(r['storm'], 0.99) for r in results):.0f} µs, "
      f"idle {median(percentile(r['idle'], 0.99) for r in results):.0f} µs; "
      f"kept {median(r['kept'] for r in results):.0f}; "
      f"RSS +{median((r['rss_idle'] - r['rss_before']) / 1024 for r in results):.1f} MiB")
