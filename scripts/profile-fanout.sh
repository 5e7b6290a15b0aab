#!/usr/bin/env bash
# Instructions per fan-out event in the whole daemon (docs/PERFORMANCE.md,
# "Fan-out per event since c905639"): runs kvod under callgrind, registers N
# observers of one key (full events, `new`), zeroes the counters, has one
# setter send SETS sets with 64 in flight (PIPELINE=1 in the environment: one
# at a time, the latency scenario's shape), and dumps once every event is read.
# Prints the loop thread's instructions per event and per set.
#   scripts/profile-fanout.sh [KVOD] [OBSERVERS] [SETS]
# KVOD defaults to .build/release/kvod (a stripped copy is profiled: valgrind
# 3.19 cannot read DWARF 5); OBSERVERS to 100; SETS to 5000. CALLGRIND_OUT=FILE
# keeps the loop thread's profile for callgrind_annotate; KVOD_ARGS adds
# arguments to kvod's command line (e.g. "--history 1000"), CALLGRIND_ARGS to
# valgrind's (e.g. "--cache-sim=yes").
set -euo pipefail
cd "$(dirname "$0")/.."
kvod="${1:-.build/release/kvod}"
observers="${2:-100}"
sets="${3:-5000}"
source scripts/stripped-kvod.sh
socket="$work/kvod.sock"
# shellcheck disable=SC2086 # the two lists are split on spaces on purpose
valgrind --tool=callgrind --separate-threads=yes ${CALLGRIND_ARGS:-} --callgrind-out-file="$work/cg.%p" \
  "$work/kvod" --socket "$socket" ${KVOD_ARGS:-} > "$work/kvod.log" 2>&1 &
daemon=$!
for _ in $(seq 240); do [ -S "$socket" ] && break; sleep 0.5; done
[ -S "$socket" ] || { echo "kvod did not start: $(tail -3 "$work/kvod.log")"; kill "$daemon"; exit 1; }
python3 - "$socket" "$observers" "$sets" "$daemon" "${PIPELINE:-64}" <<'PY'
import selectors, socket, subprocess, sys
path, count, sets, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
pipeline = int(sys.argv[5])

def connect():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s

def ask(s, line):
    s.sendall(line.encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        reply += s.recv(65536)
    return reply

observers = []
for _ in range(count):
    s = connect()
    reply = ask(s, '{"op":"observe","object":"fan/0","keyPath":"v","options":["new"]}')
    assert b'"ok":true' in reply, reply
    s.setblocking(False)
    observers.append(s)
setter = connect()
# A first set makes the object, outside the count; each observer reads its event.
ask(setter, '{"op":"set","object":"fan/0","keyPath":"v","value":"warm"}')
for s in observers:
    s.setblocking(True)
    line = b""
    while not line.endswith(b"\n"):
        line += s.recv(65536)
    s.setblocking(False)
setter.setblocking(False)
subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
poller = selectors.DefaultSelector()
for s in observers + [setter]:
    poller.register(s, selectors.EVENT_READ)
events = {s: 0 for s in observers}
sent = replies = 0

def send_more():
    global sent
    n = min(pipeline - (sent - replies), sets - sent)
    if n <= 0:
        return
    batch = b"".join(b'{"op":"set","object":"fan/0","keyPath":"v","value":"123456,%d"}\n'
                     % (1732676400123456789 + sent + k) for k in range(n))
    setter.setblocking(True)
    setter.sendall(batch)
    setter.setblocking(False)
    sent += n

send_more()
while min(events.values()) < sets:
    ready = poller.select(30)
    assert ready, "no event for 30 s"
    for key, _ in ready:
        data = key.fileobj.recv(1 << 18)
        if key.fileobj is setter:
            replies += data.count(b"\n")
            send_more()
        else:
            events[key.fileobj] += data.count(b"\n")
subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
PY
kill "$daemon"
wait "$daemon" 2> /dev/null || true
[ -z "${CALLGRIND_OUT:-}" ] || cp "$work"/cg."$daemon".1-01 "$CALLGRIND_OUT"
total=$(callgrind_annotate --threshold=100 "$work"/cg."$daemon".1-01 2> /dev/null \
  | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
awk -v t="$total" -v o="$observers" -v s="$sets" \
  'BEGIN { printf "%d observers, %d sets: %.1f instructions per event, %.0f per set\n", o, s, t / (o * s), t / s }'
