#!/usr/bin/env bash
# A second load generator beside kvod-bench (issue 16): builds
# Benchmarks/loadgen-c/loadgen.c (C11, libc only) and kvod (release), then runs
# each scenario against kvod and redis-server alternately, round by round
# (whose runs come first alternates by round), each run on a server started
# afresh in a temporary directory, and prints a Markdown table of medians and
# kvod ÷ Redis ratios (the median of the rounds' ratios), the load average beside
# each row. Any error reply, dropped connection, lost or out-of-order event fails it.
# Usage: scripts/bench-c.sh [--rounds N] [--seconds S] [--read-bytes N] [--value-bytes N] [--kvod PATH] [--groups "G …"] [--raw FILE] [--smoke]
#   --rounds      rounds per peer (default 5)
#   --seconds     each run's measured window, after 0.5 s of warm-up (default 2)
#   --read-bytes  the observer thread's read size (default 4096)
#   --value-bytes each set's value padded to N bytes (default: the index alone, "17")
#   --kvod        a kvod binary to use (default: build the release one)
#   --groups      run only these scenario groups, of: set fanout-100 fanout-1000 ping (default: all)
#   --raw         also write every run's result line to FILE
#   --smoke       CI: one tiny round against kvod only, nothing timed (about 5 s)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=5 seconds=2 read_bytes=4096 value_bytes=0 kvod="" raw="" smoke=no groups="set fanout-100 fanout-1000 ping"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --read-bytes) read_bytes=$2; shift 2 ;;
    --value-bytes) value_bytes=$2; shift 2 ;;
    --kvod) kvod=$2; shift 2 ;;
    --groups) groups=$2; shift 2 ;;
    --raw) raw=$2; shift 2 ;;
    --smoke) smoke=yes; shift ;;
    *) echo "usage: $0 [--rounds N] [--seconds S] [--read-bytes N] [--value-bytes N] [--kvod PATH] [--groups \"G …\"] [--raw FILE] [--smoke]" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d /tmp/bench-c-XXXXXX)
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

# The Swift toolchain brings clang when no cc is installed.
compiler=${CC:-$(command -v cc || command -v clang)}
"$compiler" -std=c11 -O2 -pthread -Wall -Wextra -Werror -o "$work/loadgen" Benchmarks/loadgen-c/loadgen.c
if [ -z "$kvod" ]; then
  swift build -c release --product kvod >&2
  kvod=.build/release/kvod
fi
redis=$(command -v redis-server || true)

# Starts one server in a directory of its own; sets server_pid and socket.
start_server() {
  local peer=$1 dir
  dir=$(mktemp -d "$work/$peer-XXXXXX")
  socket=$dir/$peer.sock
  if [ "$peer" = kvod ]; then
    "$kvod" --socket "$socket" --log-level warning 2>"$dir/log" &
  else
    "$redis" --port 0 --unixsocket "$socket" --unixsocketperm 700 --save '' --appendonly no \
      --notify-keyspace-events 'K$' --dir "$dir" --loglevel warning --logfile "$dir/log" >/dev/null &
  fi
  server_pid=$!
  server_log=$dir/log
}

# One run: peer, label, loadgen's arguments. Appends "round= label= load= result ..." to the results.
run() {
  local peer=$1 label=$2 load output
  shift 2
  load=$(cut -d' ' -f1 /proc/loadavg)
  start_server "$peer"
  if ! output=$("$work/loadgen" --peer "$peer" --socket "$socket" --server-pid "$server_pid" "$@" 2>"$work/loadgen.err"); then
    echo "loadgen failed: round $round, $peer, $label ($*)" >&2
    cat "$work/loadgen.err" >&2
    echo "-- $peer's log:" >&2
    tail -20 "$server_log" >&2 || true
    exit 1
  fi
  stop_server
  echo "round=$round label=$label load=$load $output" >>"$work/results"
  [ "$smoke" = no ] || echo "$peer $label: $output"
}

if [ "$smoke" = yes ]; then
  round=1
  timing=(--seconds 0.2 --warmup 0.05 --drain-seconds 20 --read-bytes "$read_bytes")
  for shape in plain id dumps; do run kvod "set-$shape" --scenario set --shape "$shape" "${timing[@]}"; done
  run kvod fanout-3 --scenario fanout --observers 3 "${timing[@]}"
  run kvod fanout-3-compact --scenario fanout --observers 3 --compact "${timing[@]}"
  run kvod ping --scenario ping --ping-interval-us 5000 "${timing[@]}"
  exit 0
fi
[ -n "$redis" ] || { echo "redis-server is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }

timing=(--seconds "$seconds" --warmup 0.5 --read-bytes "$read_bytes" --value-bytes "$value_bytes")
echo "kvod: $kvod ($(git rev-parse --short HEAD)); $("$redis" --version)" >&2
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
started=$(date +%s)
for round in $(seq 1 "$rounds"); do
  echo "round $round of $rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  # Each group runs kvod's variants and Redis's one run next to each other; who goes first alternates.
  for group in $groups; do
    for peer in $( [ $((round % 2)) -eq 1 ] && echo kvod redis || echo redis kvod ); do
      case "$group:$peer" in
        set:kvod) for shape in plain id dumps; do run kvod "set-$shape" --scenario set --shape "$shape" "${timing[@]}"; done ;;
        set:redis) run redis set --scenario set "${timing[@]}" ;;
        fanout-*:kvod)
          run kvod "$group" --scenario fanout --observers "${group#fanout-}" "${timing[@]}"
          run kvod "$group-compact" --scenario fanout --observers "${group#fanout-}" --compact "${timing[@]}" ;;
        fanout-*:redis) run redis "$group" --scenario fanout --observers "${group#fanout-}" "${timing[@]}" ;;
        ping:*) run "$peer" ping --scenario ping "${timing[@]}" ;;
      esac
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(( $(date +%s) - started )) s" >&2
[ -z "$raw" ] || cp "$work/results" "$raw"

# Rows: title | unit | kvod's label | Redis's label | metric | which is better.
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
    split($0, field, " ")
    for (i in field) { eq = index(field[i], "="); if (eq) kv[substr(field[i], 1, eq - 1)] = substr(field[i], eq + 1) }
    key = kv["round"] SUBSEP kv["label"] SUBSEP kv["peer"]
    for (name in kv) value[key, name] = kv[name]
    delete kv
    next
  }
  {
    split($0, row, "|")
    ks = ""; rs = ""; ratios = ""; low = ""; high = ""; noratio = 0
    for (r = 1; r <= rounds; r++) {
      k = value[r, row[3], "kvod", row[5]]; d = value[r, row[4], "redis", row[5]]
      ks = ks " " show(k); rs = rs " " show(d)
      kl[r] = k; dl[r] = d; ratios = ratios " " (d > 0 ? k / d : 0); if (d + 0 == 0) noratio = 1
      split(value[r, row[3], "kvod", "load"] " " value[r, row[4], "redis", "load"], loads, " ")
      for (l in loads) { if (low == "" || loads[l] + 0 < low + 0) low = loads[l]; if (high == "" || loads[l] + 0 > high + 0) high = loads[l] }
    }
    kmed = ""; dmed = ""
    for (r = 1; r <= rounds; r++) { kmed = kmed " " kl[r]; dmed = dmed " " dl[r] }
    ratio = noratio ? "–" : sprintf("%.2f×", median(ratios))
    printf "| %s | %s | %s | %s | %s | %s | %s–%s |%s;%s |\n", row[1], row[2], show(median(kmed)), show(median(dmed)), ratio, row[6], low, high, ks, rs
  }
' "$work/results" - <<'ROWS' | { echo "| scenario | unit | kvod (median) | Redis (median) | kvod ÷ Redis (median of rounds) | better | load avg (1 min) | rounds (kvod; Redis) |"; echo "|---|---|---:|---:|---:|---|---|---|"; cat; }
set-throughput, 4 conn × 64, KVOClient's lines|sets/s|set-plain|set|sets_per_s|higher
set-throughput, 4 conn × 64, id first|sets/s|set-id|set|sets_per_s|higher
set-throughput, 4 conn × 64, json.dumps|sets/s|set-dumps|set|sets_per_s|higher
fan-out flat out, 100 observers, events delivered|events/s|fanout-100|fanout-100|events_per_s|higher
fan-out flat out, 100 observers, compact events|events/s|fanout-100-compact|fanout-100|events_per_s|higher
fan-out flat out, 1000 observers, events delivered|events/s|fanout-1000|fanout-1000|events_per_s|higher
fan-out flat out, 1000 observers, compact events|events/s|fanout-1000-compact|fanout-1000|events_per_s|higher
fan-out flat out, 100 observers, coalesced (the whole run, drain included)|% of changes|fanout-100|fanout-100|coalesced_pct|lower
fan-out flat out, 1000 observers, coalesced (the whole run, drain included)|% of changes|fanout-1000|fanout-1000|coalesced_pct|lower
fan-out flat out, 100 observers, setter|sets/s|fanout-100|fanout-100|sets_per_s|higher
fan-out flat out, 1000 observers, setter|sets/s|fanout-1000|fanout-1000|sets_per_s|higher
fan-out flat out, 100 observers, bytes read per event|B|fanout-100|fanout-100|bytes_per_event|lower
fan-out flat out, 100 observers, compact, bytes read per event|B|fanout-100-compact|fanout-100|bytes_per_event|lower
fan-out flat out, 100 observers, observer thread CPU per event|ns|fanout-100|fanout-100|observer_ns_per_event|lower
fan-out flat out, 100 observers, compact, observer thread CPU per event|ns|fanout-100-compact|fanout-100|observer_ns_per_event|lower
fan-out flat out, 1000 observers, observer thread CPU per event|ns|fanout-1000|fanout-1000|observer_ns_per_event|lower
fan-out flat out, 1000 observers, compact, observer thread CPU per event|ns|fanout-1000-compact|fanout-1000|observer_ns_per_event|lower
fan-out flat out, 100 observers, server CPU per event delivered|ns|fanout-100|fanout-100|server_ns_per_event|lower
fan-out flat out, 100 observers, compact, server CPU per event delivered|ns|fanout-100-compact|fanout-100|server_ns_per_event|lower
fan-out flat out, 1000 observers, server CPU per event delivered|ns|fanout-1000|fanout-1000|server_ns_per_event|lower
fan-out flat out, 1000 observers, compact, server CPU per event delivered|ns|fanout-1000-compact|fanout-1000|server_ns_per_event|lower
a lone client's ping while 4 conn × 64 set, p50|µs|ping|ping|p50_us|lower
a lone client's ping while 4 conn × 64 set, p99|µs|ping|ping|p99_us|lower
the 4 setters meanwhile|sets/s|ping|ping|sets_per_s|higher
ROWS
