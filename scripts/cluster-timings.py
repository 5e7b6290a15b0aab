#!/usr/bin/env python3
"""Timings of kvod over etcd for docs/CLUSTER.md (issue 35 item 8), each run
on a fresh etcd in a temporary folder (Debian's etcd 3.4, default flags):

  leader     a 3-member etcd; a writer through a kvod on the leader (a follower
             listed next) and one through a kvod on a follower, each inserting
             distinct numbers into its own array one at a time; the leader is
             killed with SIGKILL: the time from the kill to the first write sent
             after it that is acknowledged, through each kvod, and from when a
             member first said it had a new leader (its status, polled every
             5 ms); then every array is checked: nothing applied twice.
  stale      a 3-member etcd; a kvod on one member; the other two SIGSTOPped:
             the time until the kvod's `get` says `stale`, and until etcd's own
             verdict (a watch with `hasleader` on that member ends).
  ephemeral  a 1-member etcd; a client of kvod A sets an ephemeral value, an
             observer on kvod B; A is killed with SIGKILL right after the set
             (which granted the lease: a whole ttl to run, as after a renewal):
             the time until B's observer gets the deletion, for
             --etcd-lease-ttl 2, 5 and 10.
  start      a 1-member etcd holding 10,000 revisions of the prefix (sets
             through a kvod, each its own Txn, over 100 objects): the time from
             a new kvod's exec to its socket answering, with the default
             --etcd-history-revisions (10,000) and with 0.

  scripts/cluster-timings.py [--kvod PATH] [--runs N] [leader|stale|ephemeral|start ...]

PATH defaults to .build/release/kvod; N to 5. Prints one line per run and a
median per measure. Not a test: the whole takes minutes.
"""
import argparse, base64, http.client, json, os, shutil, signal, socket, statistics, subprocess
import sys, tempfile, threading, time


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def wait(what, condition, timeout=60, every=0.01):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting until {what}")
        time.sleep(every)


def gateway(url, path, body, timeout=1.0):
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()


class Etcd:
    """`size` members on free loopback ports, in `folder`."""

    def __init__(self, folder, size):
        ports = free_ports(size * 2)
        names = [f"m{i}" for i in range(size)]
        peers = [f"http://127.0.0.1:{ports[size + i]}" for i in range(size)]
        self.urls = [f"http://127.0.0.1:{ports[i]}" for i in range(size)]
        cluster = ",".join(f"{n}={p}" for n, p in zip(names, peers))
        self.processes = []
        for i in range(size):
            log = open(f"{folder}/{names[i]}.log", "w")
            self.processes.append(subprocess.Popen([
                "etcd", "--name", names[i], "--data-dir", f"{folder}/{names[i]}",
                "--listen-client-urls", self.urls[i], "--advertise-client-urls", self.urls[i],
                "--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
                "--initial-cluster", cluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", os.path.basename(folder)], stdout=subprocess.DEVNULL, stderr=log))
        wait("etcd has a leader", lambda: self.leader() is not None)

    def status(self, index):
        try:
            return gateway(self.urls[index], "/v3/maintenance/status", {}, timeout=0.5)
        except (OSError, ValueError):
            return None

    def leader(self):
        for index in range(len(self.urls)):
            status = self.status(index)
            if status and status.get("leader") and status["leader"] == status["header"]["member_id"]:
                return index
        return None

    def stop(self):
        for process in self.processes:
            process.send_signal(signal.SIGCONT)
            process.kill()
            process.wait()


class Kvod:
    """A kvod of this script's; every one still running is killed when a run ends, failed or not."""
    running = []

    def __init__(self, binary, folder, name, arguments):
        self.socket = f"{folder}/{name}.sock"
        self.log = open(f"{folder}/{name}.log", "w")
        self.started = time.monotonic()
        self.process = subprocess.Popen([binary, "--socket", self.socket] + arguments, stdout=self.log, stderr=self.log)
        Kvod.running.append(self)
        wait(f"{name} listens", self.listens, timeout=120, every=0.002)
        self.listening = time.monotonic()

    def listens(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"kvod exited {self.process.returncode}: {open(self.log.name).read()[-500:]}")
        try:
            Line(self.socket).close()
            return True
        except OSError:
            return False

    def kill(self):
        self.process.kill()
        self.process.wait()


class Line:
    """A kvod client: one JSON line each way."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.buffer = b""

    def send(self, message):
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def read(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("kvod closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def ask(self, message):
        self.send(message)
        while True:
            reply = self.read()
            if "event" not in reply:
                return reply

    def set_until_ok(self, message, timeout=30):
        wait("a set is ok", lambda: self.ask(message).get("ok"), timeout=timeout, every=0.05)

    def close(self):
        self.sock.close()


class InsertWriter(threading.Thread):
    """Inserts distinct numbers into `object`.items one at a time; keeps each outcome and when."""

    def __init__(self, path, object, first):
        super().__init__(daemon=True)
        self.line, self.object, self.next = Line(path), object, first
        self.outcomes = []  # (value, sent, answered, outcome)
        self.stopping = False
        self.line.set_until_ok({"op": "set", "object": object, "keyPath": "items", "value": []})

    def run(self):
        while not self.stopping:
            value, self.next = self.next, self.next + 1
            sent = time.monotonic()
            reply = self.line.ask({"op": "insert", "object": self.object, "keyPath": "items", "value": value})
            if reply.get("ok"):
                outcome = "ok"
            elif "nothing changed" in reply.get("error", {}).get("message", ""):
                outcome = "refused"
                if self.line.ask({"op": "get", "object": self.object}).get("stale"):
                    time.sleep(0.01)
            else:
                outcome = "unknown"
            self.outcomes.append((value, sent, time.monotonic(), outcome))

    def resumed(self, after):
        return next((answered for _, sent, answered, outcome in self.outcomes if sent >= after and outcome == "ok"), None)


def measure_leader(binary, folder):
    etcd = Etcd(folder, 3)
    try:
        leader = etcd.leader()
        follower = (leader + 1) % 3
        old = etcd.status(leader)["header"]["member_id"]
        on_leader = Kvod(binary, folder, "on-leader", ["--etcd", f"{etcd.urls[leader]},{etcd.urls[follower]}"])
        on_follower = Kvod(binary, folder, "on-follower", ["--etcd", etcd.urls[follower]])
        writers = [InsertWriter(on_leader.socket, "a", 0), InsertWriter(on_follower.socket, "b", 1_000_000)]
        for writer in writers:
            writer.start()
        wait("both write", lambda: all(len(w.outcomes) >= 5 for w in writers))
        killed = time.monotonic()
        etcd.processes[leader].kill()
        survivors = [i for i in range(3) if i != leader]

        def elected():
            return any((etcd.status(i) or {}).get("leader") not in (None, old) for i in survivors)
        wait("a new leader", elected, timeout=30, every=0.005)
        new_leader = time.monotonic()
        wait("writes go on", lambda: all(w.resumed(killed) for w in writers), timeout=30)
        for writer in writers:
            writer.stopping = True
            writer.join()
        results = ([new_leader - killed] + [w.resumed(killed) - killed for w in writers]
                   + [w.resumed(killed) - new_leader for w in writers])
        for writer, kvod in zip(writers, [on_leader, on_follower]):
            items = Line(kvod.socket).ask({"op": "get", "object": writer.object, "keyPath": "items"})["value"]
            acknowledged = {v for v, _, _, outcome in writer.outcomes if outcome == "ok"}
            refused = {v for v, _, _, outcome in writer.outcomes if outcome == "refused"}
            if len(items) != len(set(items)) or not acknowledged <= set(items) or refused & set(items):
                raise RuntimeError(f"{writer.object}: applied twice, lost or refused yet stored: {items}")
        for kvod in (on_leader, on_follower):
            kvod.kill()
        return results
    finally:
        etcd.stop()


def measure_stale(binary, folder):
    etcd = Etcd(folder, 3)
    try:
        member = 0
        kvod = Kvod(binary, folder, "kvod", ["--etcd", etcd.urls[member]])
        line = Line(kvod.socket)
        line.set_until_ok({"op": "set", "object": "o", "keyPath": "k", "value": 0})
        host, port = etcd.urls[member].removeprefix("http://").split(":")
        watch = socket.create_connection((host, int(port)))
        body = json.dumps({"create_request": {"key": base64.b64encode(b"/verdict").decode()}})
        watch.sendall(f"POST /v3/watch HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                      f"Grpc-Metadata-hasleader: true\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode())
        received = b""
        while b'"created":true' not in received:
            received += watch.recv(65536)
        verdict = []

        def read_until_end():
            while watch.recv(65536):
                pass
            verdict.append(time.monotonic())
        threading.Thread(target=read_until_end, daemon=True).start()
        stopped = time.monotonic()
        for other in (1, 2):
            etcd.processes[other].send_signal(signal.SIGSTOP)
        wait("stale", lambda: line.ask({"op": "get", "object": "o", "keyPath": "k"}).get("stale"), timeout=30, every=0.005)
        stale = time.monotonic()
        wait("etcd's verdict", lambda: verdict, timeout=30)
        kvod.kill()
        return [stale - stopped, verdict[0] - stopped]
    finally:
        etcd.stop()


def measure_ephemeral(binary, folder, ttl):
    etcd = Etcd(folder, 1)
    try:
        a = Kvod(binary, folder, "a", ["--etcd", etcd.urls[0], "--etcd-lease-ttl", str(ttl)])
        b = Kvod(binary, folder, "b", ["--etcd", etcd.urls[0]])
        owner = Line(a.socket)
        owner.set_until_ok({"op": "set", "object": "e", "keyPath": "v", "value": 1, "ephemeral": True})
        observer = Line(b.socket)
        if not observer.ask({"op": "observe", "object": "e", "keyPath": "v", "options": ["new"]}).get("ok"):
            raise RuntimeError("observe failed")
        # Killed right after the set granted the connection's lease: its end comes a whole ttl later (the
        # longest it can be after a renewal), and the time beyond the ttl is etcd's and kvod's detection.
        killed = time.monotonic()
        a.kill()
        while True:
            event = observer.read()
            if event.get("event") and event.get("cause"):
                break
        deleted = time.monotonic() - killed
        b.kill()
        return [deleted]
    finally:
        etcd.stop()


def fill(binary, folder, etcd, revisions):
    """Sets through a kvod, one at a time on each of 4 connections, until etcd's revision passes `revisions`."""
    writer = Kvod(binary, folder, "filler", ["--etcd", etcd.urls[0]])
    lines = [Line(writer.socket) for _ in range(4)]

    def write(line, offset):
        n = offset
        while int(etcd.status(0)["header"]["revision"]) < revisions:
            for _ in range(100):
                line.set_until_ok({"op": "set", "object": f"doc{n % 100}", "keyPath": "v", "value": n})
                n += len(lines)
    threads = [threading.Thread(target=write, args=(line, i)) for i, line in enumerate(lines)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writer.kill()


def measure_start(binary, folder, window):
    etcd = Etcd(folder, 1)
    try:
        fill(binary, folder, etcd, 10_000)
        kvod = Kvod(binary, folder, f"start-{window}", ["--etcd", etcd.urls[0], "--etcd-history-revisions", str(window)])
        started = kvod.listening - kvod.started
        kvod.kill()
        return [started]
    finally:
        etcd.stop()


MEASURES = {
    "leader": (["new leader after the kill", "writes through the leader's kvod after the kill",
                "writes through the follower's kvod after the kill", "through the leader's kvod after the new leader",
                "through the follower's kvod after the new leader"], measure_leader),
    "stale": (["stale after the SIGSTOPs", "etcd's verdict after them"], measure_stale),
    "ephemeral": None,
    "start": None,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kvod", default=".build/release/kvod")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("measures", nargs="*", default=list(MEASURES))
    options = parser.parse_args()
    binary = os.path.abspath(options.kvod)
    plans = []
    for name in options.measures:
        if name == "ephemeral":
            for ttl in (2, 5, 10):
                plans.append((f"ephemeral, --etcd-lease-ttl {ttl}", [f"deleted after the kill (ttl {ttl})"],
                              lambda b, f, ttl=ttl: measure_ephemeral(b, f, ttl)))
        elif name == "start":
            for window in (10_000, 0):
                plans.append((f"start, --etcd-history-revisions {window}", [f"listening after the exec ({window})"],
                              lambda b, f, window=window: measure_start(b, f, window)))
        elif name in MEASURES:
            labels, function = MEASURES[name]
            plans.append((name, labels, function))
        else:
            sys.exit(f"unknown measure {name}: {', '.join(MEASURES)}")
    for title, labels, function in plans:
        samples = []
        for run in range(options.runs):
            folder = tempfile.mkdtemp(prefix="kvod-timings-")
            try:
                values = function(binary, folder)
            finally:
                for kvod in Kvod.running:
                    kvod.kill()
                Kvod.running = []
                shutil.rmtree(folder, ignore_errors=True)
            samples.append(values)
            print(f"{title} run {run + 1}: " + ", ".join(f"{label} {value:.2f} s" for label, value in zip(labels, values)),
                  flush=True)
        for index, label in enumerate(labels):
            column = [values[index] for values in samples]
            print(f"{title}: {label}: median {statistics.median(column):.2f} s, "
                  f"{min(column):.2f}-{max(column):.2f} s over {len(column)} runs", flush=True)


if __name__ == "__main__":
    main()
