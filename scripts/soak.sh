#!/usr/bin/env bash
# The soak of docs/RELIABILITY.md: kvod (release, --data-dir, tight output limits, --max-memory
# and --max-client-memory) under the hostile client mix of scripts/soak/hostile_mix.py for
# SOAK_SECONDS (default 600) in two halves, while the fuzzer runs beside it for as long (FUZZ=0
# leaves it out). Between the halves kvod is killed with SIGKILL while a writer has sets in
# flight, and after the second; each time it is started again on its data and every change it
# acknowledged must be there. Its peak RSS must stay inside the bound of issue 17, item 4
# (history bytes + live data + contexts + 2 × output hard limit × connections + 64 MiB) and
# under --max-memory + --max-client-memory + 64 MiB (issue 33); every replay window the mix
# checks must equal the live events, and the loop's longest turn is printed.
# Usage: scripts/soak.sh            (SOAK_SECONDS=60 for a short run)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SOAK_SECONDS:-600}"
hard_limit_mib=1
history_mib=32
max_memory_mib=96
max_client_mib=32
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
swift build -c release --product kvod >/dev/null
kvod=.build/release/kvod
socket="$work/kvod.sock"
# Issue 33 row 10: one client of the mix runs as nobody (uid 65534), which may only write wo/;
# root, the rest of the mix, may everything. So nobody must reach the socket.
write_only_uid=65534
echo '{"grants": [{"uid": 65534, "prefix": "wo/", "allow": ["write"]}]}' > "$work/policy.json"
chmod 0711 "$work"
start_kvod() {
  "$kvod" --socket "$socket" --socket-mode 0666 --policy "$work/policy.json" \
    --data-dir "$work/data" --sync always --log-level notice \
    --output-hard-limit "${hard_limit_mib}m" --output-soft-limit 256k --output-soft-seconds 2 \
    --history-bytes "${history_mib}m" --max-memory "${max_memory_mib}m" --max-client-memory "${max_client_mib}m" \
    2>>"$work/kvod.log" &
  pid=$!
  # The socket file of a killed kvod is still there: wait until one connects.
  for _ in $(seq 400); do
    python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$socket" 2>/dev/null && return
    sleep 0.05
  done
  echo "soak: kvod did not start"; cat "$work/kvod.log"; exit 1
}
start_kvod
fuzz_pid=
if [ "${FUZZ:-1}" = 1 ]; then
  FUZZ_SECONDS="$seconds" scripts/ci/fuzz.sh > "$work/fuzz.out" 2>&1 & fuzz_pid=$!
fi
half=$(( (seconds + 1) / 2 ))
status=0
# check SUMMARY [INFLIGHT]: after a SIGKILL and restart, every acknowledged value is there, and
# the run before it stayed inside the bounds.
check() {
python3 - "$socket" "$1" "${2:-}" "$hard_limit_mib" "$history_mib" "$max_memory_mib" "$max_client_mib" <<'PY'
import json, socket, sys
path, summary_path, inflight_path = sys.argv[1], sys.argv[2], sys.argv[3]
hard_mib, history_mib, max_memory_mib, max_client_mib = (int(a) for a in sys.argv[4:8])
summary = json.load(open(summary_path))
acknowledged = [tuple(a) for a in summary["acknowledged"]]
if inflight_path:
    acknowledged += [tuple(json.loads(line)) for line in open(inflight_path)]
MIB = 1 << 20
sock = socket.socket(socket.AF_UNIX); sock.connect(path); reader = sock.makefile("rb")
missing = 0
for obj, key_path, value in acknowledged:
    sock.sendall((json.dumps({"op": "get", "object": obj, "keyPath": key_path}) + "\n").encode())
    reply = json.loads(reader.readline())
    if reply.get("value") != value:
        missing += 1
        if missing <= 5: print(f"soak: {obj} {key_path[:40]}: acknowledged {str(value)[:60]}, after restart {str(reply)[:120]}")
live = sum(len(json.dumps(v)) for _, _, v in summary["acknowledged"])
connections = 25  # the mix's clients at most at once (scripts/soak/hostile_mix.py's defaults)
observations = summary["counts"].get("observations", 0)
contexts = 50 * 200_000  # issue 33's worker: 50 observations with a 100 KB context, counted twice
bound = history_mib * MIB + live + observations * 300 + contexts + 2 * hard_mib * MIB * connections + 64 * MIB
budgets = (max_memory_mib + max_client_mib + 64) * MIB
print(f"soak: {len(acknowledged)} acknowledged values, {missing} missing after SIGKILL and restart")
print(f"soak: peak RSS {summary['hwm'] / MIB:.1f} MiB; bound {bound / MIB:.1f} MiB "
      f"(history {history_mib} + live {live / MIB:.1f} + observations {observations * 300 / MIB:.1f} "
      f"+ contexts {contexts / MIB:.1f} + 2 × {hard_mib} MiB × {connections} connections + 64); "
      f"--max-memory + --max-client-memory + 64: {budgets / MIB:.0f} MiB")
print(f"soak: {summary['errorCount']} client errors" + ("".join("\n  " + e[:200] for e in summary["errors"][:10])))
sys.exit(0 if missing == 0 and summary["hwm"] <= min(bound, budgets) and summary["errorCount"] == 0 else 1)
PY
}
loop_turns() {
  echo '{"op":"info"}' | python3 -c 'import json,socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
i=json.loads(s.makefile("rb").readline()); print("soak: longest loop turn", i.get("loopCpuPeakMs"), "ms of the loop'"'"'s CPU time (", i.get("loopLagPeakMs"), "ms wall ); accounts", i.get("memory",{}).get("total"), "+", i.get("clientMemory",{}).get("total"))' "$socket"
}
for phase in 1 2; do
  echo "== soak: phase $phase, $half s of the hostile mix against kvod (pid $pid)"
  python3 scripts/soak/hostile_mix.py --socket "$socket" --pid "$pid" --seconds "$half" \
    --summary "$work/summary$phase.json" --write-only-uid "$([ "$(id -u)" = 0 ] && echo $write_only_uid || echo 0)"
  loop_turns
  inflight=""
  if [ "$phase" = 1 ]; then
    # A writer with 16 sets in flight (each of a key of its own), each acknowledged one logged as
    # it comes; SIGKILL once 2,000 are.
    inflight="$work/inflight.jsonl"
    python3 - "$socket" "$inflight" <<'PY' & writer=$!
import json, socket, sys
sock = socket.socket(socket.AF_UNIX); sock.connect(sys.argv[1]); reader = sock.makefile("rb")
log = open(sys.argv[2], "w", buffering=1)
sent = {}
n = 0
try:
    while True:
        while len(sent) < 16:
            sent[n] = ["inflight/" + str(n), "v", {"n": n}]
            obj, key, value = sent[n]
            sock.sendall((json.dumps({"id": n, "op": "set", "object": obj, "keyPath": key, "value": value}) + "\n").encode())
            n += 1
        line = reader.readline()
        if not line: break
        reply = json.loads(line)
        if reply.get("ok"): log.write(json.dumps(sent.pop(reply["id"])) + "\n")
        else: sent.pop(reply.get("id"), None)
except OSError:
    pass
PY
    for _ in $(seq 600); do [ -f "$inflight" ] && [ "$(wc -l < "$inflight")" -ge 2000 ] && break; sleep 0.05; done
  fi
  kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
  [ -z "$inflight" ] || wait "$writer" 2>/dev/null || true
  start_kvod
  check "$work/summary$phase.json" "$inflight" || status=1
done
if [ -n "$fuzz_pid" ]; then
  wait "$fuzz_pid" || { echo "soak: the fuzzer failed"; tail -30 "$work/fuzz.out"; status=1; }
  grep -E "^== fuzz|Done" "$work/fuzz.out" || true
fi
kill "$pid"; wait "$pid" 2>/dev/null || true
# Turns over issue 33's 50 ms of CPU, each with its longest request (kvod logs them at notice).
slow=$(grep -c "a loop turn worked" "$work/kvod.log" || true)
echo "soak: $slow loop turns over 50 ms of CPU logged"
grep "a loop turn worked" "$work/kvod.log" | tail -10 || true
[ "$status" = 0 ] && echo "== soak: passed" || echo "== soak: FAILED"
exit "$status"
