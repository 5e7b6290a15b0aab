#!/usr/bin/env bash
# Runs the standard benchmark set and writes docs/PERFORMANCE.md's tables:
#   1. kvod-bench load: kvod beside Redis (redis-server, started here on its own
#      Unix socket, no persistence), every scenario, kvod and Redis alternately,
#      ROUNDS rounds (default 5); medians and kvod ÷ Redis ratios. Its durability
#      scenario starts both with their data on disk (kvod --data-dir --sync
#      always|batch, Redis appendonly with appendfsync always|everysec) and has
#      a section of its own.
#   2. kvod-bench cluster (issue 18), when etcd is installed: kvod over a 3-member
#      etcd cluster it starts on loopback, beside etcd itself (its JSON gateway)
#      and local-mode kvod, CLUSTER_ROUNDS rounds (default 3, about 3 minutes
#      each); CLUSTER=no skips it.
#   3. the engine micro-benchmarks (ordo-one/benchmark, in Benchmarks/).
# Usage: scripts/bench.sh [kvod-bench load options, e.g. --rounds 3 --scenario fanout]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
started=$(date +%s)
echo "== building kvod, kvod-bench and its KVOClient observer (release)"
swift build -c release --product kvod
swift build -c release --product kvod-bench
swift build -c release --product kvod-bench-observer
document=docs/PERFORMANCE.md
echo "== kvod-bench load (kvod and Redis alternately)"
# A failed load run (lost or out-of-order events, errors) still writes its
# figures and problems; the micro-benchmarks run anyway, and the script fails at the end.
status=0
.build/release/kvod-bench load --kvod .build/release/kvod --redis-server "$(command -v redis-server)" \
  --rounds "${ROUNDS:-5}" --write "$document" --command "scripts/bench.sh $*" \
  --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$@" || status=$?
if [ "${CLUSTER:-yes}" != no ] && command -v etcd >/dev/null; then
  echo "== kvod-bench cluster (kvod over etcd, etcd alone, local-mode kvod alternately)"
  .build/release/kvod-bench cluster --kvod .build/release/kvod --etcd "$(command -v etcd)" \
    --rounds "${CLUSTER_ROUNDS:-3}" --write "$document" --command "scripts/bench.sh (kvod-bench cluster)" \
    --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" || status=$?
fi
echo "== engine micro-benchmarks (Benchmarks/, ordo-one/benchmark)"
report=$(mktemp)
trap 'rm -f "$report"' EXIT
# SwiftPM reuses its cached build plan for a path dependency (the root
# package, through Benchmarks/kvod) even when files were added to it since:
# drop the plan so that the engine's current sources are the ones compiled.
rm -f Benchmarks/.build/*/*/description.json
swift package --package-path Benchmarks benchmark --format markdown --no-progress > "$report"
.build/release/kvod-bench micro-summary --input "$report" --write "$document"
echo "== done in $(( $(date +%s) - started )) s; see $document"
exit "$status"
