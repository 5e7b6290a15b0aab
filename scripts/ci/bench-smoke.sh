#!/usr/bin/env bash
# CI: proves the benchmark still works, without timing anything. Runs every
# load scenario once at a tiny size (set-throughput and fan-out in each client
# shape, fan-out with the setter flat out (issue 16 item 3), and fan-out to
# KVOClient observer processes) against kvod and a redis-server it starts
# (debug binaries, already built by scripts/test.sh; any lost, out-of-order or
# failed request fails the step), durability included (kvod --data-dir with
# --sync always|batch, Redis appendonly), the cluster scenarios once when etcd
# is installed (kvod over a 3-member etcd cluster on loopback, etcd alone and
# local-mode kvod; about 20 s: etcd started ten times), then builds the engine micro-benchmarks
# (Benchmarks/, debug) so that they keep compiling; and the C load generator
# (scripts/bench-c.sh --smoke: built with -Werror, one tiny round against kvod).
# The figures are scripts/bench.sh's and scripts/bench-c.sh's job, on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh
swift build --product kvod
swift build --product kvod-bench
swift build --product kvod-bench-observer
echo "-- kvod-bench load --size tiny --rounds 1"
output=$(mktemp)
trap 'rm -f "$output"' EXIT
.build/debug/kvod-bench load --size tiny --rounds 1 --kvod .build/debug/kvod \
  --redis-server "$(command -v redis-server)" | tee "$output"
# Every client shape (issue 16) and the KVOClient observers must have been measured.
for row in 'socat-style lines, id first' 'Python json.dumps lines' 'KVOClient observers of one key' \
  'fanout flat out, 3 observers, events delivered'; do
  grep -qF "$row" "$output" || { echo "no row for $row"; exit 1; }
done
# The durability scenario's pairs must have been measured, not skipped.
for pair in '`--sync always` / `appendfsync always`' '`--sync batch` / `appendfsync everysec`'; do
  grep -qF "$pair" "$output" || { echo "no durability row for $pair"; exit 1; }
done
# The second load generator (C, issue 16): built with -Wall -Werror, one tiny round against kvod (seconds).
echo "-- scripts/bench-c.sh --smoke"
scripts/bench-c.sh --smoke --kvod .build/debug/kvod
# The KVOClient reader beside a C one (issue 30): one tiny round of debug builds, nothing timed (seconds).
echo "-- scripts/bench-client.sh --rounds 1 --sets 2000"
scripts/bench-client.sh --rounds 1 --sets 2000 --kvod .build/debug/kvod --reader .build/debug/kvod-client-rate \
  | tee "$output"
grep -qF 'decode and deliver only' "$output" || { echo "no decode-and-deliver row"; exit 1; }
if command -v etcd >/dev/null; then
  echo "-- kvod-bench cluster --size tiny --rounds 1"
  .build/debug/kvod-bench cluster --size tiny --rounds 1 --kvod .build/debug/kvod --etcd "$(command -v etcd)" \
    | tee "$output"
  # Every cluster scenario must have been measured (a failed measurement already failed the step).
  for row in 'set on host A to its event on hosts B and C' 'set throughput through 1 host' \
    'set throughput through 3 hosts' 'distinct objects through 1 host' 'many writers through 1 host' \
    "a change's first observer to its last"; do
    grep -qF "$row" "$output" || { echo "no cluster row for $row"; exit 1; }
  done
else
  echo "-- etcd is not installed (scripts/install-deps.sh installs etcd-server): cluster scenarios skipped"
fi
echo "-- building the engine micro-benchmarks (Benchmarks/, debug)"
# SwiftPM reuses its cached build plan for a path dependency (the root
# package, through Benchmarks/kvod) even when files were added to it since:
# drop the plan so that the engine's current sources are the ones compiled.
rm -f Benchmarks/.build/*/*/description.json
swift build --package-path Benchmarks
