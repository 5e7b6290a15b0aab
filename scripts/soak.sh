#!/usr/bin/env bash
# The soak of docs/RELIABILITY.md: kvod (release, --data-dir, tight output limits) under the
# hostile client mix of scripts/soak/hostile_mix.py for SOAK_SECONDS (default 600), while the
# fuzzer runs beside it for as long (FUZZ=0 leaves it out). Then kvod is killed with SIGKILL and
# started again on its data: every change it acknowledged must be there, and its peak RSS must
# have stayed inside the bound of issue 17, item 4:
#   history bytes + live data + 2 × output hard limit × connections + 64 MiB.
# Usage: scripts/soak.sh            (SOAK_SECONDS=60 for a short run)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SOAK_SECONDS:-600}"
hard_limit_mib=1
history_mib=32
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
swift build -c release --product kvod >/dev/null
kvod=.build/release/kvod
socket="$work/kvod.sock"
start_kvod() {
  "$kvod" --socket "$socket" --data-dir "$work/data" --sync always --log-level warning \
    --output-hard-limit "${hard_limit_mib}m" --output-soft-limit 256k --output-soft-seconds 2 \
    --history-bytes "${history_mib}m" --max-memory 512m --max-client-memory 16m 2>>"$work/kvod.log" &
  pid=$!
  for _ in $(seq 200); do [ -S "$socket" ] && return; sleep 0.05; done
  echo "soak: kvod did not start"; cat "$work/kvod.log"; exit 1
}
start_kvod
fuzz_pid=
if [ "${FUZZ:-1}" = 1 ]; then
  FUZZ_SECONDS="$seconds" scripts/ci/fuzz.sh > "$work/fuzz.out" 2>&1 & fuzz_pid=$!
fi
echo "== soak: $seconds s of the hostile mix against kvod (pid $pid)"
python3 scripts/soak/hostile_mix.py --socket "$socket" --pid "$pid" --seconds "$seconds" \
  --summary "$work/summary.json"
status=0
if [ -n "$fuzz_pid" ]; then
  wait "$fuzz_pid" || { echo "soak: the fuzzer failed"; tail -30 "$work/fuzz.out"; status=1; }
  grep -E "^== fuzz|Done" "$work/fuzz.out" || true
fi
kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
start_kvod
python3 - "$socket" "$work/summary.json" "$hard_limit_mib" "$history_mib" <<'PY' || status=1
import json, socket, sys
path, summary_path, hard_mib, history_mib = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
summary = json.load(open(summary_path))
MIB = 1 << 20
sock = socket.socket(socket.AF_UNIX); sock.connect(path); reader = sock.makefile("rb")
missing = 0
for obj, key_path, value in summary["acknowledged"]:
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
print(f"soak: {len(summary['acknowledged'])} acknowledged values, {missing} missing after SIGKILL and restart")
print(f"soak: peak RSS {summary['hwm'] / MIB:.1f} MiB; bound {bound / MIB:.1f} MiB "
      f"(history {history_mib} + live {live / MIB:.1f} + observations {observations * 300 / MIB:.1f} "
      f"+ 2 × {hard_mib} MiB × {connections} connections + 64)")
print(f"soak: {summary['errorCount']} client errors" + ("".join("\n  " + e[:200] for e in summary["errors"][:10])))
sys.exit(0 if missing == 0 and summary["hwm"] <= bound and summary["errorCount"] == 0 else 1)
PY
kill "$pid"; wait "$pid" 2>/dev/null || true
[ "$status" = 0 ] && echo "== soak: passed" || echo "== soak: FAILED"
exit "$status"
