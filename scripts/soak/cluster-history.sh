#!/usr/bin/env bash
# The long history run of docs/RELIABILITY.md ("Histories under faults", issue 35 item 7):
# ClusterHistoryTests' scenario (three kvods over a 3-member etcd cluster, six clients setting,
# getting, comparing-and-setting and batching a few objects, observers on every kvod) for
# HISTORY_SECONDS (default 1800) on one cluster, in rounds: each round injects every fault
# (SIGKILL of etcd's leader, lost Txn answers, SIGSTOP of a member, SIGKILL of a kvod, a cut
# link where network namespaces can be made), then checks its history for linearizability, each
# client's reads of its own writes, and every observer's stream. Prints a line per round and the
# totals; exits 1 on any violation. HISTORY_SEED repeats a run's choices.
# Usage: scripts/soak/cluster-history.sh            (HISTORY_SECONDS=600 for ten minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${HISTORY_SECONDS:-1800}"
command -v etcd >/dev/null || { echo "cluster-history: etcd is not installed (apt-get install etcd-server etcd-client)"; exit 1; }
swift build --build-tests >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
CLUSTER_HISTORY_SECONDS="$seconds" CLUSTER_HISTORY_SEED="${HISTORY_SEED:-}" \
  swift test --skip-build --no-parallel --filter ClusterHistoryTests >"$out" 2>&1 || status=1
grep -E "^cluster history|violation|is not linearizable|Expectation failed|error:" "$out" | cut -c1-2000 || true
[ "$status" = 0 ] && echo "== cluster-history: passed" || { echo "== cluster-history: FAILED"; tail -40 "$out"; }
exit "$status"
