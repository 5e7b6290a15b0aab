#!/usr/bin/env bash
# Checks kvod's unit files with systemd's own tools:
# - systemd-analyze verify on kvod.service and kvod.socket, installed into a
#   scratch root with the built kvod (verify wants the ExecStart binary) and a
#   copy of the host's units (sysinit.target...). verify exits 0 even on
#   unknown keys and misspelt values, so any output at all fails.
# - systemd-analyze security --offline=yes on kvod.service: fails when the
#   exposure score is above the one docs/OPERATIONS.md states.
# Usage: scripts/ci/systemd-units.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

kvod=.build/debug/kvod
if [ ! -x "$kvod" ]; then
  echo "systemd-units: building kvod for verify"
  swift build --product kvod
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/systemd" "$root/usr/local/lib/systemd/system" "$root/usr/local/bin"
cp -a /lib/systemd/system "$root/usr/lib/systemd/"
cp systemd/kvod.service systemd/kvod.socket "$root/usr/local/lib/systemd/system/"
cp "$kvod" "$root/usr/local/bin/kvod"

echo "systemd-units: systemd-analyze verify kvod.service kvod.socket"
output=$(systemd-analyze verify --root="$root" kvod.service kvod.socket 2>&1) || true
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
