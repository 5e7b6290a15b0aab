#!/usr/bin/env bash
# Checks kvod's unit files with systemd's own tools:
# - systemd-analyze verify on kvod.service, kvod.socket, kvod-metrics.service
#   and kvod-metrics.timer, installed into a scratch root with the built kvod
#   and kvoctl and /bin/sh (verify wants the ExecStart binaries) and a copy of
#   the host's units (sysinit.target...). verify exits 0 even on unknown keys
#   and misspelt values, so any output at all fails.
# - systemd-analyze security --offline=yes on kvod.service: fails when the
#   exposure score is above the one docs/OPERATIONS.md states.
# - both again with the HTTP drop-in systemd/kvod-http.conf in
#   /etc/systemd/system/kvod.service.d/, as an admin enables it: verify prints
#   nothing, the drop-in is loaded (AF_INET, PrivateNetwork=no, KVOD_HTTP), and
#   the score is at most the one OPERATIONS.md states for it; and the drop-in
#   OPERATIONS.md shows ("HTTP under systemd") is the file's settings.
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

# security ROOT DOCUMENTED: checks kvod.service's exposure score in ROOT;
# leaves systemd-analyze's report in $report.
security() {
  local root=$1 documented=$2 score
  report=$(systemd-analyze security --offline=yes --root="$root" kvod.service 2>&1)
  score=$(sed -n 's/.*Overall exposure level for kvod.service: \([0-9.]*\).*/\1/p' <<<"$report")
  [ -n "$score" ] || { echo "$report" >&2; echo "systemd-units: FAIL: no exposure level in the report" >&2; exit 1; }
  grep '✗' <<<"$report" | sed 's/^/      /' || true
  if awk -v s="$score" -v d="$documented" 'BEGIN { exit !(s > d) }'; then
    echo "systemd-units: FAIL: exposure $score is above the documented $documented" >&2
    exit 1
  fi
  echo "  ok  exposure $score (documented $documented)"
}

documented=$(sed -n 's/^Exposure score: \*\*\([0-9.]*\)\*\*.*/\1/p' docs/OPERATIONS.md)
[ -n "$documented" ] || { echo "systemd-units: FAIL: docs/OPERATIONS.md states no 'Exposure score: **N**'" >&2; exit 1; }
echo "systemd-units: systemd-analyze security --offline=yes kvod.service (documented: $documented)"
security "$root" "$documented"

# The HTTP drop-in, enabled as OPERATIONS.md says.
dropin_dir="$root/etc/systemd/system/kvod.service.d"
mkdir -p "$dropin_dir"
cp systemd/kvod-http.conf "$dropin_dir/http.conf"
echo "systemd-units: systemd-analyze verify kvod.service with kvod-http.conf"
output=$(systemd-analyze verify --root="$root" kvod.service 2>&1) || true
if [ -n "$output" ]; then
  echo "$output" >&2
  echo "systemd-units: FAIL: systemd-analyze verify with the drop-in printed the lines above" >&2
  exit 1
fi
echo "  ok  no output"
http_documented=$(sed -n 's/^Exposure score with `kvod-http.conf`: \*\*\([0-9.]*\)\*\*.*/\1/p' docs/OPERATIONS.md)
[ -n "$http_documented" ] || { echo "systemd-units: FAIL: docs/OPERATIONS.md states no 'Exposure score with \`kvod-http.conf\`: **N**'" >&2; exit 1; }
echo "systemd-units: systemd-analyze security --offline=yes kvod.service with kvod-http.conf (documented: $http_documented)"
security "$root" "$http_documented"
# The score counts the drop-in only if systemd read it: what it lifts must show.
for lifted in 'PrivateNetwork=' 'RestrictAddressFamilies=~AF_(INET|INET6)' 'IPAddressDeny=.*only localhost'; do
  grep -qE "✗ ${lifted//[()|]/\\&}" <<<"$report" || {
    echo "systemd-units: FAIL: the report with the drop-in does not show $lifted lifted" >&2; exit 1; }
done
echo "  ok  the drop-in is read: PrivateNetwork=no, AF_INET and AF_INET6, IP addresses of localhost only"

# OPERATIONS.md shows the drop-in's settings (its Environment= examples too): they must be the file's.
shown=$(awk '/^## HTTP under systemd/ { h = 1 } h && /^```ini/ { b = 1; next } b && /^```/ { exit } b' docs/OPERATIONS.md)
settings=$(grep -E '^(\[|[A-Za-z]|#Environment=)' systemd/kvod-http.conf)
if [ "$shown" != "$settings" ]; then
  diff <(echo "$shown") <(echo "$settings") >&2 || true
  echo "systemd-units: FAIL: docs/OPERATIONS.md's drop-in (<) differs from systemd/kvod-http.conf (>)" >&2
  exit 1
fi
echo "  ok  docs/OPERATIONS.md shows systemd/kvod-http.conf's settings"
