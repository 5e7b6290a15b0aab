#!/usr/bin/env bash
# Checks kvod's unit files with systemd's own tools:
# - systemd-analyze verify on kvod.service, kvod.socket, kvod-metrics.service
#   and kvod-metrics.timer, installed into a scratch root with the built kvod
#   and kvoctl and /bin/sh (verify wants the ExecStart binaries) and a copy of
#   the host's units (sysinit.target...). verify exits 0 even on unknown keys
#   and misspelt values, so any output at all fails.
# - systemd-analyze security --offline=yes on kvod.service: fails when the
#   exposure score is above the one docs/OPERATIONS.md states.
# Usage: scripts/ci/systemd-units.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

kvod=.build/debug/kvod
kvoctl=.build/debug/kvoctl
if [ ! -x "$kvod" ] || [ ! -x "$kvoctl" ]; then
  echo "systemd-units: building kvod and kvoctl for verify"
  swift build --product kvod
  swift build --product kvoctl
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
units=(kvod.service kvod.socket kvod-metrics.service kvod-metrics.timer)
mkdir -p "$root/usr/lib/systemd" "$root/usr/local/lib/systemd/system" "$root/usr/local/bin" "$root/bin"
cp -a /lib/systemd/system "$root/usr/lib/systemd/"
for unit in "${units[@]}"; do cp "systemd/$unit" "$root/usr/local/lib/systemd/system/"; done
cp "$kvod" "$root/usr/local/bin/kvod"
cp "$kvoctl" "$root/usr/local/bin/kvoctl"
cp /bin/sh "$root/bin/sh"

echo "systemd-units: systemd-analyze verify ${units[*]}"
output=$(systemd-analyze verify --root="$root" "${units[@]}" 2>&1) || true
if [ -n "$output" ]; then
  echo "$output" >&2
  echo "systemd-units: FAIL: systemd-analyze verify printed the lines above" >&2
  exit 1
fi
echo "  ok  no output"

documented=$(sed -n 's/^Exposure score: \*\*\([0-9.]*\)\*\*.*/\1/p' docs/OPERATIONS.md)
[ -n "$documented" ] || { echo "systemd-units: FAIL: docs/OPERATIONS.md states no 'Exposure score: **N**'" >&2; exit 1; }
echo "systemd-units: systemd-analyze security --offline=yes kvod.service (documented: $documented)"
report=$(systemd-analyze security --offline=yes --root="$root" kvod.service 2>&1)
score=$(sed -n 's/.*Overall exposure level for kvod.service: \([0-9.]*\).*/\1/p' <<<"$report")
[ -n "$score" ] || { echo "$report" >&2; echo "systemd-units: FAIL: no exposure level in the report" >&2; exit 1; }
grep '✗' <<<"$report" | sed 's/^/      /' || true
if awk -v s="$score" -v d="$documented" 'BEGIN { exit !(s > d) }'; then
  echo "systemd-units: FAIL: exposure $score is above the documented $documented" >&2
  exit 1
fi
echo "  ok  exposure $score (documented $documented)"
