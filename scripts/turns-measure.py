#!/usr/bin/env python3
"""Issue 33 row 11: the longest loop turn (info's loopCpuMaxMs and loopLagMaxMs) of one long
request against a kvod binary, as in docs/PERFORMANCE.md "Long requests in slices".

usage: turns-measure.py KVOD batch [observed [READERS]] | unobserveAll | close | initial [OBJECTS]
(batch observed READERS: READERS connections each observe every object's key path `v` and read
their events as they come, on threads of their own)
(WRAP=cmd runs kvod under cmd, e.g. a script that execs perf record; TRACE=1 prints each window)
"""
import socket, json, sys, time, subprocess, os, tempfile, threading
BIN = sys.argv[1]; case = sys.argv[2]
sock = os.path.join(tempfile.mkdtemp(), "kvod.sock")
p = subprocess.Popen(([os.environ["WRAP"]] if os.environ.get("WRAP") else []) + [BIN, "--socket", sock], stderr=subprocess.DEVNULL)
for _ in range(200):
    if os.path.exists(sock): break
    time.sleep(0.05)
class C:
    def __init__(s):
        s.s = socket.socket(socket.AF_UNIX); s.s.connect(sock); s.buf = b""
    def send(s, line): s.s.sendall((line + "\n").encode())
    def line(s):
        while b"\n" not in s.buf:
            d = s.s.recv(1 << 20)
            if not d: raise EOFError
            s.buf += d
        l, s.buf = s.buf.split(b"\n", 1); return json.loads(l)
    def req(s, line):
        s.send(line); ev = 0
        while True:
            m = s.line()
            if "ok" in m or "error" in m: return m, ev
            ev += 1
    def pipeline(s, lines, batch=500):
        for i in range(0, len(lines), batch):
            chunk = lines[i:i+batch]
            s.s.sendall(("\n".join(chunk) + "\n").encode())
            for _ in chunk:
                m = s.line()
                while "ok" not in m and "error" not in m: m = s.line()
c = C(); mon = C()
def info():
    r, _ = mon.req('{"op":"info"}'); return r
def report(label, t0):
    r = info()
    print(f"{label}: wall {1000*(time.time()-t0):.1f} ms at client; loopLagMaxMs {r['loopLagMaxMs']} loopCpuMaxMs {r.get('loopCpuMaxMs')} turns {r['loopTurns']}")
if case == "batch":
    observe = len(sys.argv) > 3
    readers = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    if observe and readers == 0:
        w = C(); w.req('{"op":"observe","prefix":"o","keyPath":"","options":["new"]}')
    def drain(conn):
        try:
            while conn.s.recv(1 << 20): pass
        except OSError: pass
    for _ in range(readers):
        r = C(); r.req('{"op":"observe","prefix":"o","keyPath":"v","options":["new"]}')
        threading.Thread(target=drain, args=(r,), daemon=True).start()
    if readers:
        ops = ",".join('{"op":"set","object":"o%d","keyPath":"v","value":%d}' % (i, i) for i in range(10000))
    else:
        ops = ",".join('{"op":"set","object":"o%d","keyPath":"k%d","value":%d}' % (i % 100, i, i) for i in range(10000))
    for rep in range(3):
        info(); t0 = time.time()
        r, _ = c.req('{"op":"batch","ops":[%s]}' % ops)
        report(f"batch 10k {'observed' if observe else ''} {r.get('ok')}", t0)
elif case in ("unobserveAll", "close"):
    kps = "[" + ",".join('"k%d"' % j for j in range(1000)) + "]"
    c.pipeline(['{"op":"observe","object":"o%d","keyPaths":%s}' % (i, kps) for i in range(100)], batch=20)
    print("observations", info()["observations"])
    info(); t0 = time.time()
    if case == "unobserveAll":
        r, _ = c.req('{"op":"unobserveAll"}'); print(r)
    else:
        c.s.close()
    cpu = 0; lag = 0
    while True:
        r = info(); cpu = max(cpu, float(str(r.get('loopCpuMaxMs')))); lag = max(lag, float(str(r['loopLagMaxMs'])))
        if os.environ.get("TRACE"): print("  window", r.get('loopCpuMaxMs'), "bytes", r["memory"]["observations"], "turns", r["loopTurns"])
        if r["memory"]["observations"] == 0: break
    print(f"{case}: all unregistered after {1000*(time.time()-t0):.1f} ms; longest turn meanwhile: CPU {cpu} ms, wall {lag} ms, turns {r['loopTurns']}"); print("observations", info()["observations"])
elif case == "initial":
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300000
    c.pipeline(['{"op":"batch","ops":[%s]}' % ",".join('{"op":"set","object":"p/%d","keyPath":"v","value":%d}' % (i, i) for i in range(j, min(n, j+1000))) for j in range(0, n, 1000)], batch=10)
    print("objects", info()["objects"])
    info(); t0 = time.time()
    c.send('{"op":"observe","prefix":"p/","keyPath":"v","options":["new","initial"]}')
    ev = 0
    while True:
        m = c.line()
        if "ok" in m or "error" in m: break
        ev += 1
    print("events before reply", ev)
    # read the rest
    c.s.settimeout(2)
    try:
        while ev < n: c.line(); ev += 1
    except Exception as e: print("stopped", e)
    report(f"initial over {n}: events {ev}", t0)
p.terminate(); p.wait()
