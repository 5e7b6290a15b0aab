#!/usr/bin/env bash
# Instructions per request for each client spelling (docs/PERFORMANCE.md, "One
# decoder for every spelling"): callgrind counts kvod-decode-profile's run of N
# requests and of none; the difference ÷ N is one request's cost, decode alone
# and through the whole engine (RequestDecoder then Engine.handle(_:from:), one observer, outputs
# drained). Needs valgrind; builds the release binary first.
#   scripts/profile-decode.sh [N]       # N defaults to 20000
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-20000}"
command -v valgrind > /dev/null || { echo "valgrind is needed (apt-get install -y valgrind)"; exit 1; }
[ -n "${PROFILE_BINARY:-}" ] || swift build -c release --product kvod-decode-profile 2>&1 | { grep -E "error|warning" -A3 || true; }
binary="${PROFILE_BINARY:-.build/release/kvod-decode-profile}"
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$@" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '| spelling | decode | handle (one observer) |\n|---|---:|---:|\n'
for spelling in canonical id-first json-dumps shuffled escaped get-canonical get-json-dumps \
                observe-canonical observe-json-dumps; do
  row="| $spelling"
  for mode in decode handle; do
    base=$(instructions "$mode" "$spelling" 0)
    full=$(instructions "$mode" "$spelling" "$count")
    row="$row | $(( (full - base) / count ))"
  done
  echo "$row |"
done
