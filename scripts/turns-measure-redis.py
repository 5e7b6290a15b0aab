#!/usr/bin/env python3
"""Redis beside kvod's large batch (docs/PERFORMANCE.md, "Long requests in slices"): MULTI,
10,000 PUBLISHes to channels o0…o9999, each matched by `PSUBSCRIBE o*` on READERS connections
that read on threads of their own, EXEC; the wall time from sending it to EXEC's whole reply.
usage: turns-measure-redis.py READERS   (redis-server on PATH)"""
import socket, sys, time, threading, subprocess, os, tempfile
readers = int(sys.argv[1]); d = tempfile.mkdtemp(); sock = os.path.join(d, "r.sock")
p = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
for _ in range(200):
    if os.path.exists(sock): break
    time.sleep(0.05)
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(sock); return s
def drain(s):
    try:
        while s.recv(1 << 20): pass
    except OSError: pass
subs = []
for _ in range(readers):
    s = conn(); s.sendall(b"*2\r\n$10\r\nPSUBSCRIBE\r\n$2\r\no*\r\n"); s.recv(100); subs.append(s)
    threading.Thread(target=drain, args=(s,), daemon=True).start()
w = conn()
def cmd(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
payload = b"".join(cmd(b"PUBLISH", b"o%d" % i, b'{"v":%d}' % i) for i in range(10000))
for rep in range(3):
    t0 = time.time()
    w.sendall(cmd(b"MULTI") + payload + cmd(b"EXEC"))
    # +OK, 10,000 +QUEUED, then EXEC's array header and its 10,000 integers.
    got = b""
    while got.count(b"\r\n") < 20002:
        got += w.recv(1 << 20)
    t1 = time.time()
    print(f"redis MULTI/EXEC 10k PUBLISH, {readers} readers: {1000*(t1-t0):.1f} ms")
p.terminate(); p.wait()
