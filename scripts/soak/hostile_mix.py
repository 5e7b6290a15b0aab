#!/usr/bin/env python3
"""A hostile client mix against a running kvod, for a bounded time (docs/RELIABILITY.md, "Soak").

Every client is a plain socket and json.dumps (Python's spacing and member order, ids first or
last), as a script on the host would write them. Together they do what issue 17 lists:
many observers, huge values, deep paths, slow and stuck readers, reconnect storms and junk
lines (and issue 33's names spelled in NFC and NFD), while writers record every change kvod acknowledged. The script samples kvod's RSS
(VmRSS, and VmHWM at the end) and writes a JSON summary: the acknowledged values to check
after a restart, the peak RSS, and counts of what each client did.

Only the Unix socket given is ever contacted; every loop stops at the deadline.
"""

import argparse
import collections
import json
import os
import random
import socket
import sys
import threading
import time

MIB = 1 << 20


class Line:
    """One connection: send lines, read lines (or not)."""

    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""

    def send(self, obj):
        self.sock.sendall((json.dumps(obj) + "\n").encode())

    def send_raw(self, data):
        self.sock.sendall(data)

    def read(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("kvod closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def reply(self):
        """The next reply, skipping events."""
        while True:
            message = self.read()
            if "event" not in message:
                return message

    def until_reply(self, request_id):
        """The events before the reply whose id is `request_id`, and that reply."""
        events = []
        while True:
            message = self.read()
            if message.get("id") == request_id:
                return events, message
            events.append(message)

    def discard_waiting(self):
        """Reads and drops what has come (the socket's timeout bounds the wait)."""
        try:
            while self.sock.recv(1 << 16):
                pass
        except (socket.timeout, BlockingIOError):
            pass

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Watchdog:
    """How late this process's threads wake (a thread that sleeps 50 ms at a time, in a process of
    some thirty threads sharing one GIL on a loaded machine) and which of kvod's threads are blocked
    in the kernel (state D, with where), five times a second: what a late reply is told against."""

    def __init__(self, pid):
        self.pid = pid
        self.late = collections.deque(maxlen=100_000)  # (monotonic, seconds woken late) over 0.1 s
        self.blocked = collections.deque(maxlen=100_000)  # (monotonic, "thread: wchan")

    def run(self, running):
        last_sample = 0.0
        while running():
            before = time.monotonic()
            time.sleep(0.05)
            now = time.monotonic()
            if now - before - 0.05 > 0.1:
                self.late.append((before, now - before - 0.05))
            if now - last_sample >= 0.2:
                last_sample = now
                for thread in self.blocked_threads():
                    self.blocked.append((now, thread))

    def blocked_threads(self):
        blocked = []
        try:
            # kvod's threads all bear its name: told apart by their order of creation (with
            # `--sync always`: the loop, the commit syncer, the storage writer).
            for order, task in enumerate(sorted(os.listdir(f"/proc/{self.pid}/task"), key=int)):
                with open(f"/proc/{self.pid}/task/{task}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] == "D":
                        with open(f"/proc/{self.pid}/task/{task}/wchan") as wchan:
                            blocked.append(f"thread {order} in {wchan.read() or '?'}")
        except OSError:
            pass
        return blocked

    def worst_since(self, since):
        return max((late for at, late in list(self.late) if at >= since), default=0.0)

    def blocked_since(self, since):
        counts = collections.Counter(what for at, what in list(self.blocked) if at >= since)
        return ", ".join(f"{what} ({n} samples of 0.2 s)" for what, n in counts.most_common(4))


def socket_queues(sock):
    """The bytes waiting in each end of a Unix connection (`ss -x`): on kvod's, a request it has not
    read; on ours, a reply this process has not read."""
    try:
        import subprocess
        ours = str(os.fstat(sock.fileno()).st_ino)
        lines = subprocess.run(["ss", "-xn"], capture_output=True, text=True, timeout=10).stdout.splitlines()
        for line in lines:
            fields = line.split()
            if len(fields) >= 8 and fields[5] == ours:
                peer = fields[7]
                kvods = next((l.split()[2] for l in lines if len(l.split()) >= 8 and l.split()[5] == peer), "?")
                return f"bytes unread by us {fields[2]}, by kvod {kvods}"
        return "socket not in ss -x"
    except (OSError, ValueError) as error:
        return f"ss -x failed: {error}"


def slow_syncs(path):
    """kvod's syncs of its log so far (`metrics`' kvod_fsync_duration_seconds): how many, how many over
    250 ms and over 1 s."""
    try:
        client = Line(path, timeout=30)
        client.send({"op": "metrics"})
        text = client.reply().get("text", "")
        client.close()
        buckets = {}
        for line in text.splitlines():
            if line.startswith("kvod_fsync_duration_seconds_bucket"):
                le = line.split('le="', 1)[1].split('"', 1)[0]
                buckets[le] = int(float(line.rsplit(" ", 1)[1]))
        total = buckets.get("+Inf", 0)
        over = lambda bound: total - next((v for k, v in buckets.items() if k != "+Inf" and float(k) == bound), total)
        return f"syncs {total}, over 250 ms {over(0.25)}, over 1 s {over(1.0)}"
    except (OSError, ConnectionError, ValueError, IndexError) as error:
        return f"metrics failed: {error}"


class Mix:
    def __init__(self, args):
        self.args = args
        self.started = time.monotonic()
        self.deadline = self.started + args.seconds
        self.lock = threading.Lock()
        self.acknowledged = {}  # "object\tkeyPath" -> value last acknowledged
        self.counts = {}
        self.errors = []
        self.peak_rss = 0
        self.accounts = []  # [RSS, accounted, RSS less accounted at the start], once a second
        self.watchdog = Watchdog(args.pid)

    def running(self):
        return time.monotonic() < self.deadline

    def count(self, what, n=1):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def fail(self, what):
        """Records a client error, and prints the first ones as they come, with when (the run's second)."""
        what = f"{time.monotonic() - self.started:.1f} s in: {what}"
        with self.lock:
            self.errors.append(what)
            if len(self.errors) <= 20:
                print(f"soak: client error {what[:2000]}", file=sys.stderr, flush=True)

    # -- the clients ---------------------------------------------------------------------------

    def writer(self, index):
        """Sets small values at its own keys and records what kvod acknowledged."""
        rng = random.Random(index)
        client = Line(self.args.socket)
        n = 0
        while self.running():
            key = f"w{index}/k{rng.randrange(50)}"
            value = {"n": n, "pad": "x" * rng.randrange(200)}
            request = {"op": "set", "object": key, "keyPath": "v", "value": value, "id": n}
            if n % 2:
                request = dict(reversed(list(request.items())))  # members in another order
            client.send(request)
            reply = client.reply()
            if reply.get("ok"):
                with self.lock:
                    self.acknowledged[f"{key}\tv"] = value
                self.count("acknowledged sets")
            else:
                self.fail(f"writer {index}: {reply}")
            n += 1
        client.close()

    def huge_values(self):
        """1 MiB values at a few keys, observed at every ancestor by a reader that keeps up."""
        client = Line(self.args.socket)
        big = "y" * (MIB - 4096)  # the value and the rest of the line within kvod's 1 MiB line limit
        n = 0
        while self.running():
            key = f"huge/{n % 4}"
            client.send({"op": "set", "object": key, "keyPath": "a.b.c.d", "value": {"blob": big, "n": n}})
            reply = client.reply()
            if reply.get("ok"):
                with self.lock:
                    self.acknowledged[f"{key}\ta.b.c.d"] = {"blob": big, "n": n}
                self.count("huge sets")
            else:
                self.fail(f"huge: {reply}")
            n += 1
        client.close()

    def stuck_reader(self, index):
        """Observes the huge values at every ancestor, with initial, then never reads again."""
        client = Line(self.args.socket)
        key_paths = ["a", "a.b", "a.b.c", "a.b.c.d"]
        for k in range(4):
            client.send({"id": k, "op": "observe", "object": f"huge/{k}", "keyPaths": key_paths,
                         "options": ["new", "old", "initial"]})
        client.send({"op": "observe", "prefix": "huge/", "options": ["new", "old", "initial"]})
        self.count("stuck readers")
        while self.running():
            time.sleep(0.2)  # holding the connection open, reading nothing: that is the point
        client.close()

    def slow_reader(self, index):
        """Reads a little, now and then."""
        client = Line(self.args.socket)
        client.send({"op": "observe", "prefix": "", "options": ["new"]})
        client.sock.settimeout(1.0)
        while self.running():
            try:
                client.sock.recv(4096)
                self.count("slow reads")
            except socket.timeout:
                pass
            except OSError:
                break
            time.sleep(0.05)
        client.close()

    def many_observers(self, index):
        """Thousands of observations on one connection, read as they come."""
        client = Line(self.args.socket)
        for k in range(self.args.observations_per_connection):
            client.send({"op": "observe", "object": f"w{k % 8}/k{k % 50}", "keyPath": f"v.x{k}",
                         "options": ["new"]})
        self.count("observations", self.args.observations_per_connection)
        client.sock.settimeout(1.0)
        while self.running():
            try:
                if not client.sock.recv(1 << 16):
                    self.fail(f"observer {index}: closed by kvod")
                    break
            except socket.timeout:
                pass
        client.close()

    def issue33_rows(self):
        """Issue 33's rows, in turn: a prefix observer that never reads while short-lived objects come
        and go (and one throttled for an hour), a ttl renewed again and again, observations with
        large contexts, and a batch whose condition fails on a value an earlier op wrote."""
        stuck = Line(self.args.socket)
        stuck.send({"op": "observe", "prefix": "tmp/", "keyPath": "k", "options": ["new"]})
        throttled = Line(self.args.socket)
        throttled.send({"op": "observe", "prefix": "tmp/", "keyPath": "k", "options": ["new"],
                        "throttle": 3600000})
        throttled.sock.settimeout(0.01)
        client = Line(self.args.socket)
        context = "c" * 100_000
        n = 0
        while self.running():
            client.send({"op": "set", "object": f"tmp/{n}", "keyPath": "k", "value": n})
            client.reply()
            client.send({"op": "delete", "object": f"tmp/{n}"})
            client.reply()
            client.send({"op": "set", "object": "lease/renewed", "keyPath": "k", "value": n, "ttl": 31536000})
            client.reply()
            if n % 100 == 0:
                client.send({"op": "observe", "object": f"ctx/{n % 5000 // 100}", "keyPath": "k", "context": context})
                client.reply()
                client.send({"op": "batch", "ops": [
                    {"op": "set", "object": "cond", "keyPath": "n", "value": n},
                    {"op": "set", "object": "cond", "keyPath": "n", "value": n + 1, "ifModSeq": 1}]})
                reply = client.reply()
                if reply.get("ok") or reply.get("error", {}).get("code") != "precondition_failed":
                    self.fail(f"issue 33 batch: {reply}")
            throttled.discard_waiting()
            n += 1
            self.count("issue 33 rounds")
        for line in (stuck, throttled, client):
            line.close()

    def aggregates(self):
        """Issue 33 row 3: inserts into and removals from 20,000-element arrays under `@avg`, `@sum`
        and `@min` observers, of the object and of a prefix, that read what comes."""
        client = Line(self.args.socket)
        for k in range(2):
            client.send({"op": "set", "object": f"agg/{k}", "keyPath": "list", "value": list(range(20_000))})
            client.reply()
        watcher = Line(self.args.socket)
        watcher.send({"op": "observe", "object": "agg/0", "keyPaths": ["list.@avg", "list.@min"], "options": ["new"]})
        watcher.send({"op": "observe", "prefix": "agg/", "keyPath": "list.@sum", "options": ["new", "old"]})
        watcher.sock.settimeout(0.01)
        n = 0
        while self.running():
            key = f"agg/{n % 2}"
            client.send({"op": "insert", "object": key, "keyPath": "list", "index": n % 100, "value": n * 0.5})
            reply = client.reply()
            if not reply.get("ok"):
                self.fail(f"aggregates insert: {reply}")
            client.send({"op": "remove", "object": key, "keyPath": "list", "index": 0})
            reply = client.reply()
            if not reply.get("ok"):
                self.fail(f"aggregates remove: {reply}")
            watcher.discard_waiting()
            n += 1
            self.count("aggregate rounds")
        client.close()
        watcher.close()

    def big_replay(self):
        """Issue 33 row 1: a `since` replay of 200 sets of one member of a 20,000-member document to a
        whole-document observer, again and again; the replay must come whole before its reply."""
        client = Line(self.args.socket)
        client.send({"op": "set", "object": "bigdoc", "value": {f"m{i}": i for i in range(20_000)}})
        client.reply()
        n = 0
        while self.running():
            client.send({"op": "info"})
            since = client.reply()["seq"]
            for k in range(200):
                client.send({"op": "set", "object": "bigdoc", "keyPath": f"m{k % 7}", "value": n + k})
            for _ in range(200):
                client.reply()
            replayer = Line(self.args.socket)
            replayer.send({"op": "observe", "object": "bigdoc", "options": ["new"], "since": since, "id": "replay"})
            _, message = replayer.until_reply("replay")
            replayer.close()
            if not message.get("ok") and message.get("error", {}).get("code") != "compacted":
                self.fail(f"big replay: {message}")
            n += 200
            self.count("big replays")
        client.close()

    def long_requests(self):
        """Issue 33 row 11: 20,000 objects observed by prefix with `initial`, and 20,000 key paths
        observed then dropped with `unobserveAll`, again and again, on one connection that reads."""
        client = Line(self.args.socket)
        for start in range(0, 20_000, 1_000):
            client.send({"op": "batch", "ops": [{"op": "set", "object": f"many/{i}", "keyPath": "k", "value": i}
                                                for i in range(start, start + 1_000)]})
            client.reply()
        while self.running():
            client.send({"op": "observe", "prefix": "many/", "keyPath": "k", "options": ["new", "initial"],
                         "id": "initial"})
            before, _ = client.until_reply("initial")
            initial = len(before)
            # The rest of the initial events follow the reply, a slice a turn.
            while initial < 20_000 and self.running():
                message = client.read()
                if message.get("event"):
                    initial += 1
            for half in range(2):  # 10,000 key paths a request at most
                paths = [f"p{i}" for i in range(half * 10_000, (half + 1) * 10_000)]
                client.send({"op": "observe", "object": "many/0", "keyPaths": paths, "options": ["new"]})
                reply = client.reply()
                if not reply.get("ok"):
                    self.fail(f"long requests: {reply}")
            client.send({"op": "unobserveAll", "id": "all"})
            while client.read().get("id") != "all":
                pass
            self.count("long request rounds")
        client.close()

    def deep_paths(self):
        """The deepest accepted key path, and one deeper (refused)."""
        client = Line(self.args.socket)
        n = 0
        while self.running():
            depth = 512 if n % 2 == 0 else 513
            client.send({"op": "set", "object": f"deep/{n % 3}", "keyPath": ".".join(["d"] * depth), "value": n})
            reply = client.reply()
            if depth == 512 and reply.get("ok"):
                with self.lock:
                    self.acknowledged[f"deep/{n % 3}\t" + ".".join(["d"] * depth)] = n
                self.count("deep sets")
            elif depth == 513 and not reply.get("ok"):
                self.count("deep refusals")
            else:
                self.fail(f"deep {depth}: {reply}")
            n += 1
        client.close()

    def reconnect_storm(self, index):
        """Connect, observe, own an ephemeral value, go; over and over."""
        n = 0
        while self.running():
            step, started, client = "connect", time.monotonic(), None
            try:
                client = Line(self.args.socket, timeout=10)
                step = "send"
                client.send({"op": "observe", "prefix": "storm/", "options": ["new", "initial"]})
                client.send({"op": "set", "object": f"storm/{index}", "keyPath": "here", "value": n,
                             "ephemeral": True})
                if n % 3 == 0:
                    step = "reply"
                    client.reply()
                client.close()
                self.count("reconnects")
            except (OSError, ConnectionError) as error:
                late = self.late_reply(client, started) if step == "reply" else ""
                self.fail(f"storm {index}: {step} {error} after {time.monotonic() - started:.1f} s; "
                          f"{self.loop_figures()}{late}")
                if client:
                    client.close()
                time.sleep(0.1)
            n += 1

    def late_reply(self, client, started):
        """Why a reply was late, as far as can be told: whether kvod had read the request (its end
        of the socket's queue), its threads blocked in the kernel, its syncs over a second, how late
        this process's own threads woke lately, and when the reply came after all (or not)."""
        timed_out = time.monotonic()
        parts = [f"python woke late by up to {self.watchdog.worst_since(started - 5):.2f} s since 5 s before the request"]
        parts.append(f"kvod's threads then: {self.watchdog.blocked_since(started) or 'none blocked'}")
        parts.append(socket_queues(client.sock))
        parts.append(slow_syncs(self.args.socket))
        client.sock.settimeout(60)
        try:
            client.reply()
            parts.append(f"the reply came {time.monotonic() - started:.1f} s after the request")
        except (OSError, ConnectionError) as error:
            parts.append(f"no reply {time.monotonic() - started:.1f} s after the request either: {error}")
        parts.append(f"python woke late by up to {self.watchdog.worst_since(timed_out):.2f} s meanwhile")
        return "; " + "; ".join(parts)

    def loop_figures(self):
        """kvod's loop figures now, for a failure's message (what kvod was doing, or not)."""
        try:
            asked = time.monotonic()
            client = Line(self.args.socket, timeout=30)
            client.send({"op": "info"})
            info = client.reply()
            client.close()
            return f"info answered in {time.monotonic() - asked:.2f} s: " + ", ".join(
                f"{k} {info.get(k)}" for k in ("loopLagMaxMs", "loopLagPeakMs", "loopCpuMaxMs", "connections",
                                               "coalescingConnections"))
        except (OSError, ConnectionError) as error:
            return f"info failed too: {error}"

    def spellings(self):
        """Issue 33, rows 6 and 7: `café` in NFC and in NFD is one name. An owner sets an ephemeral
        value under one spelling, another client a durable one over it in the other, and the owner
        goes: the durable value stays. A prefix spelled in NFC hears of objects named in NFD."""
        nfc, nfd = "caf\u00e9", "cafe\u0301"
        watcher = Line(self.args.socket)
        watcher.send({"op": "observe", "prefix": f"{nfc}/", "keyPath": nfc, "options": ["new"]})
        watcher.reply()
        other = Line(self.args.socket)
        n = 0
        while self.running():
            name = f"{nfd}/{n % 50}"
            owner = Line(self.args.socket)
            owner.send({"op": "set", "object": name, "keyPath": f"{nfc}.x", "value": n, "ephemeral": True})
            owner.reply()
            other.send({"op": "set", "object": name, "keyPath": nfd, "value": {"x": "durable"}})
            other.reply()
            owner.close()
            # Both sets, in order; a deletion by the owner's leaving would come between.
            for expected in ({"x": n}, {"x": "durable"}):
                event = watcher.read()
                if event.get("new") != expected or "cause" in event:
                    self.fail(f"spellings {n}: expected new {expected}, got {event}")
                    return
            self.count("spellings")
            n += 1
        watcher.close()
        other.close()

    def junk(self):
        """Lines that are not requests: kvod answers each with an error and goes on."""
        rng = random.Random(7)
        client = Line(self.args.socket)
        while self.running():
            kind = rng.randrange(4)
            if kind == 0:
                # Never only blanks: kvod ignores a line of spaces, tabs and carriage returns without a reply.
                data = b"x" + bytes(rng.randrange(1, 256) for _ in range(rng.randrange(300))).replace(b"\n", b" ")
            elif kind == 1:
                data = b"{" * 2000
            elif kind == 2:
                data = b'{"op":"set","object":"j","keyPath":"","value":1}'
            else:
                data = b'{"op": "nope", "id": 1}'
            client.send_raw(data + b"\n")
            reply = client.reply()
            if reply.get("ok"):
                self.fail(f"junk accepted: {data[:80]!r}")
            self.count("junk lines")
        client.close()

    def replay_checker(self):
        """A live observer of one writer's objects, and every 10 s a `since` replay of the last
        changes it heard, which must be the same lines. The live one has `policy: disconnect`, so
        it is never sent a coalesced event (a replay never is): one that falls behind is closed by
        kvod and made again, and its window is not judged."""
        while self.running():
            try:
                self.replay_windows()
            except ConnectionError:
                self.count("replay checker's live observer fell behind (closed by kvod)")

    def replay_windows(self, scope=None, check=None):
        """`scope`: what is observed (writer 0's `v`s unless given); `check(event)`: a message
        about an event that must not be, live or replayed."""
        scope = scope or {"prefix": "w0/", "keyPath": "v"}
        live = Line(self.args.socket)
        live.send({"op": "observe", **scope, "options": ["new", "old"], "policy": "disconnect", "id": "live"})
        events = []  # in order
        while live.read().get("id") != "live":
            pass
        live.sock.settimeout(0.5)
        last_check = time.monotonic()
        while self.running():
            try:
                events.append(live.read())
            except socket.timeout:
                pass
            if time.monotonic() - last_check < 10 or len(events) < 20:
                continue
            last_check = time.monotonic()
            since = events[-20]["seq"]
            checker = Line(self.args.socket)
            checker.send({"op": "observe", **scope, "options": ["new", "old"], "since": since, "id": "replay"})
            replayed, message = checker.until_reply("replay")
            checker.close()
            if not message.get("ok"):
                if message.get("error", {}).get("code") != "compacted":
                    self.fail(f"replay since {since}: {message}")
                continue
            until = message["seq"]
            while events[-1]["seq"] < until and self.running():
                try:
                    events.append(live.read())
                except socket.timeout:
                    pass
            window = [e for e in events if since < e["seq"] <= until]
            for event in (window + replayed) if check else []:
                if check(event):
                    self.fail(check(event))
            if window != replayed:
                self.fail(f"replay since {since} until {until} differs from live: seqs replayed "
                          f"{[e['seq'] for e in replayed]}, live {[e['seq'] for e in window]}")
            else:
                self.count("replay windows equal to live")
            events = events[-100:]
        live.close()

    def created_objects(self):
        """Issue 33 row 8: objects made by a set of one key path, changed, deleted, each name once.
        Their creation's `old` is null, live and in every replay, also of the history that the
        soak's restart loads from disk (it once came back `{}`). A replay of everything kept comes
        first (after the restart: the first half's), then windows compared with live events."""
        scope = {"prefix": "fresh/"}
        def made_from_nothing(event):
            return f"fresh object's event with old {{}}: {event}" if event.get("old") == {} else None
        tag = f"{os.getpid()}-{random.randrange(1 << 30)}"
        def writes():
            client = Line(self.args.socket)
            n = 0
            while self.running():
                name = f"fresh/{tag}-{n}"
                for request in ({"op": "set", "object": name, "keyPath": "k", "value": n},
                                {"op": "set", "object": name, "keyPath": "k", "value": -n},
                                {"op": "delete", "object": name}):
                    client.send(request)
                    if not client.reply().get("ok"):
                        self.fail(f"created_objects: {request} refused")
                n += 1
                self.count("objects created and deleted")
                time.sleep(0.01)
            client.close()
        threading.Thread(target=self.guard(writes), daemon=True).start()
        info = Line(self.args.socket)
        info.send({"op": "info"})
        oldest = info.reply().get("oldestSeq", 1)
        info.close()
        checker = Line(self.args.socket)
        checker.send({"op": "observe", **scope, "options": ["new", "old"], "since": max(oldest - 1, 0), "id": "all"})
        replayed, message = checker.until_reply("all")
        checker.close()
        if message.get("ok"):
            self.count("created objects' events in the first replay", len(replayed))
            for event in replayed:
                if made_from_nothing(event):
                    self.fail(made_from_nothing(event))
        elif message.get("error", {}).get("code") != "compacted":
            self.fail(f"created_objects: replay of everything kept: {message}")
        while self.running():
            try:
                self.replay_windows(scope, made_from_nothing)
            except ConnectionError:
                self.count("created objects' live observer fell behind (closed by kvod)")

    def write_only(self):
        """Issue 33 row 10, against the real daemon: a client of another uid that may only write
        `wo/` (soak.sh's --policy) overwrites a secret with values of random sizes and reads
        `info`: it must be told no figure that follows their size, and may not read them."""
        if os.geteuid() != 0 or not self.args.write_only_uid:
            self.count("write-only client skipped (not root, or no --write-only-uid)")
            return
        import subprocess
        # The system's Python: another user may not reach root's own (a pyenv under /root).
        python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        child = subprocess.run([python, os.path.abspath(__file__), "--write-only-child", "--socket",
                                self.args.socket, "--pid", "0", "--summary", "-",
                                "--seconds", str(max(self.deadline - time.monotonic(), 1))],
                               user=self.args.write_only_uid, group=self.args.write_only_uid,
                               capture_output=True, text=True, timeout=self.args.seconds + 60)
        try:
            result = json.loads(child.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            return self.fail(f"write_only child: {child.returncode} {child.stderr[-300:]}")
        for what, n in result["counts"].items():
            self.count(what, n)
        for error in result["errors"]:
            self.fail(f"write_only: {error}")

    def sample_rss(self):
        while self.running():
            try:
                with open(f"/proc/{self.args.pid}/status") as status:
                    for line in status:
                        if line.startswith("VmRSS:"):
                            self.peak_rss = max(self.peak_rss, int(line.split()[1]) * 1024)
            except OSError:
                self.fail("kvod is gone")
                return
            time.sleep(0.1)

    def sample_accounts(self):
        """Once a second, kvod's RSS beside its accounts (info's memory.total and clientMemory.total):
        the factor between them is what docs/RELIABILITY.md states."""
        client = Line(self.args.socket)
        base = None
        while self.running():
            client.send({"op": "info"})
            info = client.reply()
            with open(f"/proc/{self.args.pid}/status") as status:
                rss = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmRSS:"))
            accounted = info.get("memory", {}).get("total", 0) + info.get("clientMemory", {}).get("total", 0)
            if base is None:
                base = rss - accounted
            with self.lock:
                self.accounts.append([rss, accounted, base])
            time.sleep(1)
        client.close()

    def run(self):
        a = self.args
        plan = [self.sample_rss, self.sample_accounts, self.replay_checker, self.huge_values, self.deep_paths, self.junk, self.issue33_rows, self.spellings,
                self.aggregates, self.long_requests, self.big_replay, self.created_objects, self.write_only]
        plan = [step for step in plan if step.__name__ not in a.skip]
        plan.append(lambda: self.watchdog.run(self.running))
        plan += [lambda i=i: self.writer(i) for i in range(a.writers)]
        plan += [lambda i=i: self.stuck_reader(i) for i in range(a.stuck_readers)]
        plan += [lambda i=i: self.slow_reader(i) for i in range(a.slow_readers)]
        plan += [lambda i=i: self.many_observers(i) for i in range(a.observers)]
        plan += [lambda i=i: self.reconnect_storm(i) for i in range(a.storms)]
        threads = [threading.Thread(target=self.guard(step), daemon=True) for step in plan]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(a.seconds + 120)
        with open(f"/proc/{a.pid}/status") as status:
            hwm = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmHWM:"))
        return {"acknowledged": [[k.split("\t")[0], k.split("\t")[1], v] for k, v in self.acknowledged.items()],
                "peakRSS": self.peak_rss, "hwm": hwm, "accounts": self.accounts, "counts": self.counts, "errors": self.errors[:50],
                "errorCount": len(self.errors), "pythonLateMax": self.watchdog.worst_since(0),
                "kvodBlocked": self.watchdog.blocked_since(0), "syncs": slow_syncs(a.socket)}

    def guard(self, step):
        def run():
            try:
                step()
            except Exception as error:  # a client that dies is a finding, not a crash of the soak
                self.fail(f"{getattr(step, '__name__', 'client')}: {error!r}")
        return run


def write_only_child(args):
    """The write-only client itself, run as `--write-only-uid`: prints its counts and errors as JSON."""
    counts, errors = {}, []
    deadline = time.monotonic() + args.seconds
    client = Line(args.socket)
    rng = random.Random(os.getpid())
    n = 0
    while time.monotonic() < deadline and len(errors) < 20:
        size = rng.randrange(1, 50_000)
        client.send({"op": "set", "object": "wo/secret", "keyPath": "s", "value": "x" * size, "id": n})
        reply = client.reply()
        if not reply.get("ok"):
            errors.append(f"set refused: {str(reply)[:200]}")
        client.send({"op": "info", "id": n})
        info = client.reply()
        if set(info.get("memory", {})) != {"limit"} or "clientMemory" in info:
            errors.append(f"info tells a write-only client sizes: {info.get('memory')} {info.get('clientMemory')}")
        client.send({"op": "get", "object": "wo/secret", "id": n})
        if client.reply().get("error", {}).get("code") != "forbidden":
            errors.append("a write-only client read its secret")
        counts["write-only client's sets and infos"] = counts.get("write-only client's sets and infos", 0) + 1
        n += 1
        time.sleep(0.02)
    client.close()
    print(json.dumps({"counts": counts, "errors": errors}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--pid", type=int, required=True, help="kvod's pid, for its RSS")
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--stuck-readers", type=int, default=4)
    parser.add_argument("--slow-readers", type=int, default=2)
    parser.add_argument("--observers", type=int, default=4)
    parser.add_argument("--observations-per-connection", type=int, default=5000)
    parser.add_argument("--storms", type=int, default=2)
    parser.add_argument("--summary", required=True, help="where to write the JSON summary")
    parser.add_argument("--skip", nargs="*", default=[], help="clients left out, by name (big_replay, aggregates, …)")
    parser.add_argument("--write-only-uid", type=int, default=0,
                        help="the uid that kvod's --policy lets write wo/ only (write_only runs as it; 0: skipped)")
    parser.add_argument("--write-only-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_only_child:
        return write_only_child(args)
    summary = Mix(args).run()
    with open(args.summary, "w") as out:
        json.dump(summary, out)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary["counts"].items()))
    samples = summary["accounts"]
    if samples:
        # How far RSS above the start's base exceeds what the accounts say, at worst and typically.
        ratios = sorted((rss - base) / max(accounted, 1) for rss, accounted, base in samples)
        print(f"soak: RSS over the base ÷ accounts: median {ratios[len(ratios) // 2]:.2f}, max {ratios[-1]:.2f} "
              f"({len(samples)} samples; base {samples[0][2] / MIB:.1f} MiB)")
    print(f"soak: this process's threads woke late by up to {summary['pythonLateMax']:.2f} s; kvod's threads "
          f"blocked in the kernel: {summary['kvodBlocked'] or 'never seen'}; kvod's {summary['syncs']}")
    print(f"soak: {counts}; peak RSS {summary['peakRSS'] / MIB:.1f} MiB (VmHWM {summary['hwm'] / MIB:.1f} MiB); "
          f"{summary['errorCount']} client errors")


if __name__ == "__main__":
    main()
