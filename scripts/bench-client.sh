#!/usr/bin/env bash
# How fast a Swift program that uses KVOClient receives one key path's changes
# (issue 30), against a C program counting the same stream's lines, in the same
# run: a C writer pipelines N sets of bench/0 v into a release kvod while three
# readers observe it (options new): Benchmarks/client-rate's C counter,
# kvod-client-rate with a KVOController closure, and kvod-client-rate with
# `for try await`. Then, without kvod, each Swift reader on recorded bytes:
# written to its socket by an in-process stand-in (replay), and run through the
# connection's reader path with no socket at all (decode: the client's
# decode-and-deliver path alone). Prints each round's result lines and a
# Markdown table of medians, with the load average.
# KVOD_CLIENT_RATE_VALUE=object in the environment makes the recorded events'
# values (replay and decode rows) small objects in place of numbers.
# Usage: scripts/bench-client.sh [--rounds N] [--sets N] [--kvod PATH] [--reader PATH]
#   --rounds  rounds (default 3)
#   --sets    sets per round, and events per replay (default 300000)
#   --kvod    a kvod binary (default: build the release one)
#   --reader  a kvod-client-rate binary (default: build the release one)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 sets=300000 kvod="" reader=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --sets) sets=$2; shift 2 ;;
    --kvod) kvod=$2; shift 2 ;;
    --reader) reader=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--sets N] [--kvod PATH] [--reader PATH]" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d /tmp/bench-client-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

compiler=${CC:-$(command -v cc || command -v clang)}
"$compiler" -std=c11 -O2 -pthread -Wall -Wextra -Werror -o "$work/client-rate" Benchmarks/client-rate/client-rate.c
if [ -z "$kvod" ] || [ -z "$reader" ]; then
  swift build -c release --product kvod >&2
  swift build -c release --product kvod-client-rate >&2
  kvod=${kvod:-.build/release/kvod} reader=${reader:-.build/release/kvod-client-rate}
fi

# Waits (up to 30 s) until FILE has a line matching PATTERN.
wait_for() {
  local file=$1 pattern=$2 tries=0
  until grep -q "$pattern" "$file" 2>/dev/null; do
    tries=$((tries + 1))
    if [ $tries -gt 3000 ]; then echo "timed out waiting for $pattern in $file" >&2; cat "$file" >&2; exit 1; fi
    sleep 0.01
  done
}

results=$work/results
: >"$results"
for round in $(seq 1 "$rounds"); do
  dir=$work/round-$round
  mkdir -p "$dir"
  "$kvod" --socket "$dir/kvod.sock" --log-level warning 2>"$dir/kvod.log" &
  kvod_pid=$!
  pids+=("$kvod_pid")
  until [ -S "$dir/kvod.sock" ]; do sleep 0.01; done
  "$work/client-rate" count "$dir/kvod.sock" "$sets" >"$dir/c.out" & pids+=($!); c_pid=$!
  "$reader" closure "$dir/kvod.sock" "$sets" >"$dir/closure.out" & pids+=($!); closure_pid=$!
  "$reader" stream "$dir/kvod.sock" "$sets" >"$dir/stream.out" & pids+=($!); stream_pid=$!
  for out in c closure stream; do wait_for "$dir/$out.out" '^ready'; done
  "$work/client-rate" write "$dir/kvod.sock" "$sets" >"$dir/writer.out"
  for pid in $c_pid $closure_pid $stream_pid; do wait "$pid"; done
  kill "$kvod_pid"; wait "$kvod_pid" 2>/dev/null || true
  "$reader" replay-closure "$sets" >"$dir/replay-closure.out"
  "$reader" replay-stream "$sets" >"$dir/replay-stream.out"
  "$reader" decode-closure "$sets" >"$dir/decode-closure.out" || true  # not in readers before issue 30
  "$reader" decode-stream "$sets" >"$dir/decode-stream.out" || true
  load=$(cut -d' ' -f1 /proc/loadavg)
  for out in c closure stream replay-closure replay-stream decode-closure decode-stream; do
    grep "^result" "$dir/$out.out" 2>/dev/null | sed "s/\$/ load=$load round=$round/" | tee -a "$results" || true
  done
done

python3 - "$results" "$sets" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    fields = dict(part.split("=", 1) for part in line.split()[1:])
    rows.setdefault(fields["role"], []).append(fields)
sets = int(sys.argv[2])
c = statistics.median(float(r["rate"]) for r in rows["c"])
print(f"\n{len(rows['c'])} rounds of {sets} sets; medians (load average {', '.join(r['load'] for r in rows['c'])})\n")
print("| reader | changes/s | × C (same round) | delivered (not coalesced) | CPU µs per change (process) |")
print("|---|---|---|---|---|")
names = {"c": "C line counter", "closure": "KVOController closure", "stream": "`for try await`",
         "replay-closure": "closure, recorded bytes on a socket", "replay-stream": "`for try await`, recorded bytes on a socket",
         "decode-closure": "closure, decode and deliver only", "decode-stream": "`for try await`, decode and deliver only"}
for role in ["c", "closure", "stream", "replay-closure", "replay-stream", "decode-closure", "decode-stream"]:
    rs = rows.get(role, [])
    if not rs: continue
    rate = statistics.median(float(r["rate"]) for r in rs)
    delivered = statistics.median(int(r["events"]) / sets for r in rs)
    cpu = statistics.median(float(r["cpu_us"]) for r in rs)
    # The median of each round's ratio to the C counter of the same round.
    ratios = [float(r["rate"]) / float(next(x for x in rows["c"] if x["round"] == r["round"])["rate"]) for r in rs]
    ratio = f"{statistics.median(ratios):.2f}" if role in ("c", "closure", "stream") else ""
    print(f"| {names[role]} | {rate:,.0f} | {ratio} | {delivered:.0%} | {cpu:.2f} |")
PY
