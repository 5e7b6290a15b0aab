#!/usr/bin/env bash
# Set throughput with durability on: kvod --sync always|batch beside Redis
# appendonly yes with appendfsync always|everysec, run alternately in one run,
# fresh data directories each time, medians over ROUNDS rounds.
#
# Usage: scripts/bench/durability.sh [ROUNDS]   (default 5; prints a Markdown table)
# Loads: "c4 p100" = 4 connections × 100 pipelined sets (200,000 sets);
#        "c50 p1"  = 50 connections, one set in flight each (50,000 sets).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
scripts/install-deps.sh redis-server redis-tools >/dev/null
swift build -c release --product kvod >/dev/null
work=$(mktemp -d /tmp/kvod-bench-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
swiftc -O scripts/bench/SetLoad.swift -o "$work/setload"

wait_socket() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.05; done; echo "no socket $1" >&2; exit 1; }

start_server() { # name → sets $pid and $sock
  rm -rf "$work/data"; mkdir -p "$work/data"
  case $1 in
    kvod-*) sock=$work/kvod.sock
      .build/release/kvod --socket "$sock" --data-dir "$work/data" --sync "${1#kvod-}" --log-level warning & pid=$! ;;
    redis-*) sock=$work/redis.sock
      redis-server --port 0 --unixsocket "$sock" --dir "$work/data" --save "" --appendonly yes \
        --appendfsync "${1#redis-}" --daemonize no --loglevel warning >/dev/null & pid=$! ;;
  esac
  wait_socket "$sock"
}

declare -A results
configs=(kvod-always redis-always kvod-batch redis-everysec)
loads=("4 100 200000" "50 1 50000")
for round in $(seq "$rounds"); do
  for config in "${configs[@]}"; do
    for load in "${loads[@]}"; do
      start_server "$config"
      rate=$("$work/setload" "${config%%-*}" "$sock" $load)
      kill "$pid"; wait "$pid" 2>/dev/null || true
      results["$config $load"]+="$rate "
    done
  done
  echo "round $round done" >&2
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| load | kvod --sync always | Redis appendfsync always | ratio | kvod --sync batch | Redis appendfsync everysec | ratio |"
echo "|---|---|---|---|---|---|---|"
for load in "${loads[@]}"; do
  read -r c p n <<<"$load"
  ka=$(echo "${results["kvod-always $load"]}" | median); ra=$(echo "${results["redis-always $load"]}" | median)
  kb=$(echo "${results["kvod-batch $load"]}" | median); rb=$(echo "${results["redis-everysec $load"]}" | median)
  awk -v c="$c" -v p="$p" -v n="$n" -v ka="$ka" -v ra="$ra" -v kb="$kb" -v rb="$rb" 'BEGIN {
    printf "| c%s p%s (%s sets) | %d/s | %d/s | %.2f | %d/s | %d/s | %.2f |\n", c, p, n, ka, ra, ka / ra, kb, rb, kb / rb }'
done
