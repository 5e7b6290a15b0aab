#!/usr/bin/env bash
# What durability costs: set throughput of kvod (no --data-dir, --sync off|batch|always)
# beside Redis 7 (no persistence, appendonly yes with appendfsync everysec|always),
# measured alternately in one run with fresh data each time; medians over ROUNDS rounds.
# Also: how long a client that only pings waits while 4 others write flat out.
#
# Usage: scripts/bench/durability.sh [ROUNDS]      (default 5; prints Markdown tables)
# Loads: "c4 p100" = 4 connections × 100 pipelined sets, 200,000 sets;
#        "c50 p1"  = 50 connections, one set in flight each, 50,000 sets.
# Each connection sets its own object's/key's 1,000 keys round robin (kvod:
# object bench/C, key path kN; Redis: key bench:C:N); both servers on Unix sockets.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
scripts/install-deps.sh redis-server redis-tools >/dev/null
swift build -c release --product kvod >/dev/null
work=$(mktemp -d /tmp/kvod-bench-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
swiftc -O scripts/bench/SetLoad.swift -o "$work/setload"

wait_socket() { for _ in $(seq 200); do [ -S "$1" ] && return 0; sleep 0.05; done; echo "no socket $1" >&2; exit 1; }

start_server() { # CONFIG → sets $pid, $sock, $protocol
  rm -rf "$work/data" "$work"/*.sock; mkdir -p "$work/data"
  protocol=${1%%-*}
  case $1 in
    kvod-none) sock=$work/kvod.sock
      .build/release/kvod --socket "$sock" --log-level warning & pid=$! ;;
    kvod-*) sock=$work/kvod.sock
      .build/release/kvod --socket "$sock" --data-dir "$work/data" --sync "${1#kvod-}" --log-level warning & pid=$! ;;
    redis-none) sock=$work/redis.sock
      redis-server --port 0 --unixsocket "$sock" --dir "$work/data" --save "" --appendonly no \
        --daemonize no --loglevel warning >/dev/null & pid=$! ;;
    redis-*) sock=$work/redis.sock
      redis-server --port 0 --unixsocket "$sock" --dir "$work/data" --save "" --appendonly yes \
        --appendfsync "${1#redis-}" --daemonize no --loglevel warning >/dev/null & pid=$! ;;
  esac
  wait_socket "$sock"
}

stop_server() { kill "$pid"; wait "$pid" 2>/dev/null || true; }

declare -A results
configs=(kvod-none redis-none kvod-off kvod-batch redis-everysec kvod-always redis-always)
loads=("4 100 200000" "50 1 50000")
for round in $(seq "$rounds"); do
  for config in "${configs[@]}"; do
    for load in "${loads[@]}"; do
      start_server "$config"
      results["$config $load"]+="$("$work/setload" "$protocol" "$sock" $load) "
      stop_server
    done
    # Ping latency while 4 connections write flat out.
    start_server "$config"
    "$work/setload" "$protocol" "$sock" 4 100 100000000 >/dev/null 2>&1 & load_pid=$!
    sleep 0.3
    read -r p50 p99 < <("$work/setload" ping "$protocol" "$sock" 300)
    kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true
    results["$config ping50"]+="$p50 "; results["$config ping99"]+="$p99 "
    stop_server
  done
  echo "round $round of $rounds done" >&2
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m() { echo "${results["$1"]}" | median; }
name() {
  case $1 in
    kvod-none) echo "kvod, no --data-dir" ;; kvod-*) echo "kvod --sync ${1#kvod-}" ;;
    redis-none) echo "Redis, no persistence" ;; redis-*) echo "Redis appendonly, appendfsync ${1#redis-}" ;;
  esac
}
echo
echo "Sets per second (median of $rounds), and a lone client's ping while 4 connections write flat out:"
echo
echo "| server | c4 p100 | c50 p1 | ping p50 | ping p99 |"
echo "|---|---:|---:|---:|---:|"
for config in "${configs[@]}"; do
  echo "| $(name "$config") | $(m "$config ${loads[0]}") | $(m "$config ${loads[1]}") | $(m "$config ping50") ms | $(m "$config ping99") ms |"
done
echo
echo "| kvod ÷ Redis | c4 p100 | c50 p1 |"
echo "|---|---:|---:|"
for pair in "kvod-none redis-none" "kvod-batch redis-everysec" "kvod-always redis-always"; do
  read -r k r <<<"$pair"
  awk -v name="$(name "$k") ÷ $(name "$r")" -v a="$(m "$k ${loads[0]}")" -v b="$(m "$r ${loads[0]}")" \
      -v c="$(m "$k ${loads[1]}")" -v d="$(m "$r ${loads[1]}")" \
      'BEGIN { printf "| %s | %.2f | %.2f |\n", name, a / b, c / d }'
done
