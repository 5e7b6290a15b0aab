#!/usr/bin/env bash
# Instructions per observe request in the whole daemon (docs/PERFORMANCE.md,
# "Observation memory and observe requests, again"): runs kvod under callgrind
# twice, once with 100 connections × PER pipelined observes of many-keys'
# shape (`k/N` of 10,000, `v`, `["new"]`), the connections then closing, once
# with the connections alone; prints the difference ÷ (100 × PER).
#   scripts/profile-observe.sh [KVOD] [PER]
# KVOD defaults to .build/release/kvod (a stripped copy is profiled: valgrind
# 3.19 cannot read DWARF 5); PER to 1000.
set -euo pipefail
cd "$(dirname "$0")/.."
kvod="${1:-.build/release/kvod}"
per="${2:-1000}"
source scripts/stripped-kvod.sh

# The instructions of one run (every thread) with `count` observes a connection.
run() {
  local count=$1 dir="$work/run-$1"
  mkdir -p "$dir"
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/cg.out" \
    "$work/kvod" --socket "$dir/kvod.sock" > "$dir/kvod.log" 2>&1 &
  local daemon=$!
  for _ in $(seq 240); do [ -S "$dir/kvod.sock" ] && break; sleep 0.5; done
  [ -S "$dir/kvod.sock" ] || { echo "kvod did not start: $(tail -3 "$dir/kvod.log")" >&2; kill "$daemon"; exit 1; }
  python3 - "$dir/kvod.sock" "$count" <<'PY'
import random, socket, sys, time
path, per = sys.argv[1], int(sys.argv[2])
pick = random.Random(5)
connections = []
for _ in range(100):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    connections.append(s)
for s in connections:
    keys = pick.sample(range(10_000), per)
    s.sendall(b"".join(b'{"op":"observe","object":"k/%d","keyPath":"v","options":["new"]}\n' % k for k in keys))
    replies, last = 0, b""
    while replies < per:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("kvod closed the connection")
        replies += chunk.count(b"\n")
        last = chunk
    if per and b'"ok":true' not in last:
        sys.exit(f"not ok: {last[:200]!r}")
for s in connections:
    s.close()
time.sleep(0.5)  # the closes handled before the daemon stops
PY
  kill -TERM "$daemon"
  wait "$daemon" || true
  local total=0
  local found
  for file in "$dir"/cg.out*; do
    # The file without a thread suffix holds no counts of its own.
    found=$(awk '/^summary:/ { print $2; exit }' "$file")
    total=$((total + ${found:-0}))
  done
  echo "$total"
}

with=$(run "$per")
without=$(run 0)
echo "instructions per observe: $(( (with - without) / (100 * per) )) (runs: $with with, $without without)"
