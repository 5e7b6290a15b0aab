#!/usr/bin/env python3
"""Issue 34 item 4: what `kvoctl backup` costs the other clients of a kvod with a data directory
of about MB megabytes (default 80): the longest wait a writer's `set` and a reader's `ping` see
while the backup is taken and streamed, beside the same figures without a backup, and the loop's
longest turn (info's loopLagMaxMs, loopCpuMaxMs). docs/OPERATIONS.md, "Backup and restore".

usage: backup-pause.py KVOD KVOCTL [MB]   (release binaries: .build/release/kvod, kvoctl)
SYNC=batch|off runs kvod with that --sync (default always).
"""
import json, os, re, socket, subprocess, sys, tempfile, threading, time

KVOD, KVOCTL = sys.argv[1], sys.argv[2]
MEGABYTES = int(sys.argv[3]) if len(sys.argv) > 3 else 80
folder = tempfile.mkdtemp(prefix="kvod-backup-pause.")
sock, data, log = folder + "/kvod.sock", folder + "/data", folder + "/kvod.log"
kvod = subprocess.Popen([KVOD, "--socket", sock, "--data-dir", data, "--sync", os.environ.get("SYNC", "always")],
                        stderr=open(log, "w"))
for _ in range(400):
    if os.path.exists(sock): break
    time.sleep(0.05)

class Client:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX); self.s.connect(sock); self.buf = b""
    def line(self):
        while b"\n" not in self.buf:
            d = self.s.recv(1 << 20)
            if not d: raise EOFError
            self.buf += d
        l, self.buf = self.buf.split(b"\n", 1); return json.loads(l)
    def request(self, line):
        self.s.sendall((line + "\n").encode()); return self.line()

def db_bytes():
    return sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data))

# Fill: 4 KiB values, pipelined; the history keeps a copy of each, as a kvod that ran a while does.
loader, value, count = Client(), "x" * 4000, 0
while db_bytes() < MEGABYTES << 20:
    lines = "".join('{"op":"set","object":"fill/%d","keyPath":"v","value":"%s"}\n' % (count + i, value) for i in range(500))
    loader.s.sendall(lines.encode())
    for _ in range(500): loader.line()
    count += 500
print(f"data directory: {db_bytes() / 2**20:.1f} MiB, {count} objects")

def measure(label, during):
    """Runs a writer (set after set) and a reader (ping after ping) while `during` runs; their waits."""
    waits = {"set": [], "ping": []}
    stop = threading.Event()
    def loop(kind, line):
        client = Client(); n = 0
        while not stop.is_set():
            n += 1; t = time.perf_counter()
            reply = client.request(line % n if "%d" in line else line)
            waits[kind].append(time.perf_counter() - t)
            assert reply.get("ok"), reply
    threads = [threading.Thread(target=loop, args=("set", '{"op":"set","object":"live/%d","keyPath":"v","value":1}')),
               threading.Thread(target=loop, args=("ping", '{"op":"ping"}'))]
    monitor = Client(); monitor.request('{"op":"info"}')
    for t in threads: t.start()
    time.sleep(0.3)
    started = time.perf_counter(); during(); took = time.perf_counter() - started
    stop.set()
    for t in threads: t.join()
    info = monitor.request('{"op":"info"}')
    for kind, times in waits.items():
        times.sort()
        print(f"{label}: {kind} x{len(times)}: median {1000 * times[len(times) // 2]:.2f} ms, "
              f"p99 {1000 * times[int(len(times) * 0.99)]:.2f} ms, longest {1000 * times[-1]:.2f} ms")
    print(f"{label}: {took:.2f} s; loop's longest turn {info['loopLagMaxMs']} ms ({info['loopCpuMaxMs']} ms of CPU)")

measure("without a backup", lambda: time.sleep(3))
out = folder + "/kvod.backup"
def backup():
    run = subprocess.run([KVOCTL, "backup", out, "--socket", sock], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    print("kvoctl:", run.stdout.strip())
measure("during kvoctl backup", backup)
made = re.findall(r"backup made .* in (.*)", open(log).read())
print("kvod made the copy in", made[-1] if made else "?")
kvod.terminate(); kvod.wait()
subprocess.run(["rm", "-rf", folder])
