#!/usr/bin/env bash
# Issue 31's "Done when" figures for kvod over HTTP, in one run, interleaved round
# by round (whose runs come first alternates by round), each run on a server
# started afresh in a temporary directory:
#   get   wrk (keep-alive, --threads × --connections, --seconds) against kvod's
#         GET /v1/objects/x/k; the same wrk against etcd 3.4's JSON gateway
#         (POST /v3/kv/range for the same key, a single member on loopback ports
#         of its own); and kvod's socket get at the same concurrency
#         (Benchmarks/http-bench/httpload.c: one get in flight per connection).
#   fanout  --observers N watches of f.v over HTTP (/v1/watch, Server-Sent
#         Events, HTTP/1.0 connections) against N socket observes, one socket
#         writer setting f.v flat out; events delivered per second.
# Prints every run's result line, then a Markdown table of medians and of the
# ratios kvod-HTTP ÷ etcd's gateway, kvod-HTTP ÷ kvod-socket and SSE ÷ socket
# (each the median of the rounds' ratios), the 1-minute load average beside each.
# Any non-2xx answer, socket error, error reply or dropped connection fails it.
# Usage: scripts/bench-http.sh [--rounds N] [--seconds S] [--threads T] [--connections C] [--observers "100 1000"] [--kvod PATH] [--raw FILE]
#   --rounds       rounds (default 3)
#   --seconds      each run's measured window (default 5; the fan-out runs add 0.5 s of warm-up)
#   --threads      wrk's and httpload's threads (default 2)
#   --connections  wrk's and httpload's connections (default 32)
#   --observers    fan-out sizes, "" for none (default "100 1000")
#   --kvod         a kvod binary to use (default: build the release one)
#   --raw          also write every run's result line to FILE
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 seconds=5 threads=2 connections=32 observers="100 1000" kvod="" raw=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --observers) observers=$2; shift 2 ;;
    --kvod) kvod=$2; shift 2 ;;
    --raw) raw=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--seconds S] [--threads T] [--connections C] [--observers \"100 1000\"] [--kvod PATH] [--raw FILE]" >&2; exit 2 ;;
  esac
done
for tool in wrk etcd curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install wrk etcd-server curl)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/bench-http-XXXXXX)
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

compiler=${CC:-$(command -v cc || command -v clang)}
"$compiler" -std=c11 -O2 -pthread -Wall -Wextra -Werror -o "$work/httpload" Benchmarks/http-bench/httpload.c
if [ -z "$kvod" ]; then
  swift build -c release --product kvod >&2
  kvod=.build/release/kvod
fi

# A bearer token and its tokens file (uid 65534: any uid but root's, no --policy).
token=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf 'uid:65534 %s\n' "$(printf %s "$token" | sha256sum | cut -d' ' -f1)" >"$work/tokens"
chmod 600 "$work/tokens"
# etcd's gateway wants a POST with the key in base64 ("x/k" is eC9r).
cat >"$work/etcd-range.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"key":"eC9r"}'
wrk.headers["Content-Type"] = "application/json"
LUA

free_ports() { python3 -c 'import socket,sys
s=[socket.socket() for _ in range(int(sys.argv[1]))]
[x.bind(("127.0.0.1",0)) for x in s]; print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"; }

# Waits (5 s at most) until a URL answers; the server must still run.
wait_url() {
  local i
  for i in $(seq 1 100); do
    curl -sf -o /dev/null "$@" && return 0
    kill -0 "$server_pid" 2>/dev/null || { echo "the server exited; its log:" >&2; tail -20 "$server_log" >&2; exit 1; }
    sleep 0.05
  done
  echo "no answer from $*; the server's log:" >&2; tail -20 "$server_log" >&2; exit 1
}

# Starts kvod with HTTP in a directory of its own, x.k set to a small string; sets socket, http.
start_kvod() {
  local dir port
  dir=$(mktemp -d "$work/kvod-XXXXXX")
  port=$(free_ports 1)
  socket=$dir/kvod.sock http=127.0.0.1:$port server_log=$dir/log
  "$kvod" --socket "$socket" --http "$http" --http-tokens "$work/tokens" --log-level warning \
    --max-connections 4000 --max-connections-per-uid 4000 2>"$server_log" &
  server_pid=$!
  wait_url "http://$http/readyz"
  curl -sf -o /dev/null -X PUT -H "Authorization: Bearer $token" --data '"small"' "http://$http/v1/objects/x/k"
  [ "$(curl -sf -H "Authorization: Bearer $token" "http://$http/v1/objects/x/k")" = '"small"' ] || { echo "kvod: GET x/k is not \"small\"" >&2; exit 1; }
}

# Starts a single-member etcd on loopback ports of its own, x/k set to the same value; sets http.
start_etcd() {
  local dir ports client peer
  dir=$(mktemp -d "$work/etcd-XXXXXX")
  ports=$(free_ports 2)
  client=http://127.0.0.1:${ports% *} peer=http://127.0.0.1:${ports#* }
  http=127.0.0.1:${ports% *} server_log=$dir/log
  etcd --name m0 --data-dir "$dir/m0" --listen-client-urls "$client" --advertise-client-urls "$client" \
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "m0=$peer" \
    --initial-cluster-state new --initial-cluster-token "$(basename "$dir")" >"$server_log" 2>&1 &
  server_pid=$!
  wait_url "$client/health"
  # The value "small", as JSON text (kvod's GET answers JSON too), base64: InNtYWxsIg==.
  curl -sf -o /dev/null -X POST --data '{"key":"eC9r","value":"InNtYWxsIg=="}' "$client/v3/kv/put"
  curl -sf -X POST --data '{"key":"eC9r"}' "$client/v3/kv/range" | grep -q '"value":"InNtYWxsIg=="' || { echo "etcd: range x/k has not the value" >&2; exit 1; }
}

record() { echo "round=$round label=$1 load=$load $2" | tee -a "$work/results" >&2; }

# The server's CPU time (user + system, all threads) in clock ticks, and the wall clock.
ticks=$(getconf CLK_TCK)
server_cpu() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }
# The server's CPU µs per request over a run that began at $cpu0, $wall0 and answered $1 requests/s.
cpu_per_request() {
  awk -v c0="$cpu0" -v c1="$(server_cpu)" -v w0="$wall0" -v w1="$(date +%s.%N)" -v rate="$1" -v hz="$ticks" \
    'BEGIN { printf "server_us_per_request=%.2f server_cpu_pct=%.0f", (c1 - c0) / hz * 1e6 / (rate * (w1 - w0)), (c1 - c0) / hz * 100 / (w1 - w0) }'
}

# The server's CPU share over a fan-out run (registration and warm-up included), and its
# CPU ns per event delivered in the measured window (an upper bound: the setup's CPU counts).
cpu_per_event() {
  local events
  events=$(sed 's/.*events_per_s=\([0-9]*\).*/\1/' <<<"$1")
  awk -v c0="$cpu0" -v c1="$(server_cpu)" -v w0="$wall0" -v w1="$(date +%s.%N)" -v events="$events" -v s="$seconds" -v hz="$ticks" \
    'BEGIN { printf "server_ns_per_event=%.0f server_cpu_pct=%.0f", (c1 - c0) / hz * 1e9 / (events * s), (c1 - c0) / hz * 100 / (w1 - w0) }'
}

# wrk against the running server; records requests/s, or fails on any error.
run_wrk() {
  local label=$1 output
  shift
  cpu0=$(server_cpu) wall0=$(date +%s.%N)
  output=$(wrk -t"$threads" -c"$connections" -d"${seconds}s" "$@")
  if grep -q 'Non-2xx\|Socket errors' <<<"$output"; then echo "$label: $output" >&2; exit 1; fi
  rate=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$output")
  record "$label" "requests_per_s=$rate $(cpu_per_request "$rate")"
}

run() {
  local label=$1 output
  load=$(cut -d' ' -f1 /proc/loadavg)
  case "$label" in
    http-get)
      start_kvod
      run_wrk "$label" -H "Authorization: Bearer $token" "http://$http/v1/objects/x/k" ;;
    etcd-get)
      start_etcd
      run_wrk "$label" -s "$work/etcd-range.lua" "http://$http/v3/kv/range" ;;
    socket-get)
      start_kvod
      cpu0=$(server_cpu) wall0=$(date +%s.%N)
      output=$("$work/httpload" get --socket "$socket" --threads "$threads" --connections "$connections" --seconds "$seconds" --warmup 0)
      rate=$(sed 's/.*gets_per_s=//' <<<"$output")
      record "$label" "requests_per_s=$rate $(cpu_per_request "$rate")" ;;
    sse-*|socket-fanout-*)
      start_kvod
      local transport=${label%%-*}
      [ "$transport" = sse ] || transport=socket
      cpu0=$(server_cpu) wall0=$(date +%s.%N)
      output=$("$work/httpload" fanout --transport "$transport" --socket "$socket" --http "$http" --token "$token" \
        --observers "${label##*-}" --seconds "$seconds")
      record "$label" "${output#result } $(cpu_per_event "$output")" ;;
  esac
  stop_server
}

echo "kvod: $kvod ($(git rev-parse --short HEAD)); $(etcd --version | head -1); $(wrk --version 2>&1 | head -1)" >&2
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
started=$(date +%s)
for round in $(seq 1 "$rounds"); do
  echo "round $round of $rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  if [ $((round % 2)) -eq 1 ]; then gets="http-get etcd-get socket-get"; else gets="socket-get etcd-get http-get"; fi
  for label in $gets; do run "$label"; done
  for n in $observers; do
    if [ $((round % 2)) -eq 1 ]; then pair="sse-$n socket-fanout-$n"; else pair="socket-fanout-$n sse-$n"; fi
    for label in $pair; do run "$label"; done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(( $(date +%s) - started )) s" >&2
[ -z "$raw" ] || cp "$work/results" "$raw"

# Rows: title | unit | label | metric | the label it is divided by ("" for none).
rows="GET x.k, HTTP (wrk, keep-alive)|requests/s|http-get|requests_per_s|
GET x/k, etcd 3.4's JSON gateway (wrk, POST /v3/kv/range)|requests/s|etcd-get|requests_per_s|
get x.k, kvod's socket (httpload, 1 in flight per connection)|requests/s|socket-get|requests_per_s|
kvod HTTP ÷ etcd's gateway|×|http-get|requests_per_s|etcd-get
kvod HTTP ÷ kvod's socket|×|http-get|requests_per_s|socket-get
kvod's CPU per GET over HTTP|µs|http-get|server_us_per_request|
etcd's CPU per range over its gateway (all its threads)|µs|etcd-get|server_us_per_request|
kvod's CPU per get over its socket|µs|socket-get|server_us_per_request|
kvod's CPU per request, HTTP ÷ socket|×|http-get|server_us_per_request|socket-get
kvod's CPU during the HTTP run (100 % = one core)|%|http-get|server_cpu_pct|
etcd's CPU during its run|%|etcd-get|server_cpu_pct|
kvod's CPU during the socket run|%|socket-get|server_cpu_pct|"
for n in $observers; do
  rows="$rows
fan-out, $n SSE watches, events delivered|events/s|sse-$n|events_per_s|
fan-out, $n socket observers, events delivered|events/s|socket-fanout-$n|events_per_s|
fan-out, $n: SSE ÷ socket|×|sse-$n|events_per_s|socket-fanout-$n
fan-out, $n SSE watches, kvod's CPU per event (setup included)|ns|sse-$n|server_ns_per_event|
fan-out, $n socket observers, kvod's CPU per event (setup included)|ns|socket-fanout-$n|server_ns_per_event|
fan-out, $n SSE watches, kvod's CPU (100 % = one core)|%|sse-$n|server_cpu_pct|
fan-out, $n socket observers, kvod's CPU (100 % = one core)|%|socket-fanout-$n|server_cpu_pct|
fan-out, $n SSE watches, the writer's sets|sets/s|sse-$n|sets_per_s|
fan-out, $n socket observers, the writer's sets|sets/s|socket-fanout-$n|sets_per_s|"
done
awk -v rounds="$rounds" '
  function median(list, n,   i, j, t, a) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function show(x,   s) {
    if (x < 100) return sprintf("%.3g", x)
    s = sprintf("%.0f", x)
    while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
    return s
  }
  FNR == NR {
    n = split($0, field, " ")
    for (i = 1; i <= n; i++) { eq = index(field[i], "="); if (eq) kv[substr(field[i], 1, eq - 1)] = substr(field[i], eq + 1) }
    for (name in kv) value[kv["round"], kv["label"], name] = kv[name]
    delete kv
    next
  }
  {
    split($0, row, "|")
    list = ""; shown = ""; low = ""; high = ""
    for (r = 1; r <= rounds; r++) {
      x = value[r, row[3], row[4]]
      if (row[5] != "") { d = value[r, row[5], row[4]]; x = d > 0 ? x / d : 0 }
      list = list " " x; shown = shown " " (row[5] != "" ? sprintf("%.2f", x) : show(x))
      split(value[r, row[3], "load"] " " value[r, row[5] == "" ? row[3] : row[5], "load"], loads, " ")
      for (l in loads) { if (low == "" || loads[l] + 0 < low + 0) low = loads[l]; if (high == "" || loads[l] + 0 > high + 0) high = loads[l] }
    }
    m = median(list)
    printf "| %s | %s | %s | %s–%s |%s |\n", row[1], row[2], row[5] != "" ? sprintf("%.2f×", m) : show(m), low, high, shown
  }
' "$work/results" - <<<"$rows" | { echo "| measure | unit | median | load avg (1 min) | rounds |"; echo "|---|---|---:|---|---|"; cat; }
