#!/usr/bin/env bash
# Instructions per keep-alive HTTP GET and per socket get, in kvod's loop
# thread (docs/PERFORMANCE.md, "HTTP beside etcd's gateway and beside the
# socket"): runs kvod with --http and a tokens file under callgrind, sets x.k
# to "small", then one client sends COUNT GETs of it over one keep-alive
# connection with a bearer token, and COUNT `get`s over the socket, each
# counted from zeroed counters.
#   scripts/profile-http-get.sh [KVOD] [COUNT]
# KVOD defaults to .build/release/kvod (a stripped copy is profiled); COUNT to 2000.
# CALLGRIND_OUT=FILE keeps the HTTP part's profile (from zeroed counters) for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
kvod="${1:-.build/release/kvod}"
count="${2:-2000}"
source scripts/stripped-kvod.sh
token=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf 'uid:65534 %s\n' "$(printf %s "$token" | sha256sum | cut -d' ' -f1)" > "$work/tokens"
chmod 600 "$work/tokens"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/cg.%p" \
  "$work/kvod" --socket "$work/kvod.sock" --http "127.0.0.1:$port" --http-tokens "$work/tokens" \
  --log-level warning > "$work/kvod.log" 2>&1 &
daemon=$!
for _ in $(seq 240); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.5; done
python3 - "$port" "$token" "$count" "$daemon" "$work/kvod.sock" <<'PY'
import http.client, socket, subprocess, sys
port, token, count, pid, path = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]

def counted(send):
    for _ in range(50):
        send()
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    for _ in range(count):
        send()
    subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)

web = http.client.HTTPConnection("127.0.0.1", port)
auth = {"Authorization": "Bearer " + token}
web.request("PUT", "/v1/objects/x/k", body='"small"', headers=auth)
assert web.getresponse().read().startswith(b'{"seq":'), "the PUT failed"

def http_get():
    web.request("GET", "/v1/objects/x/k", headers=auth)
    body = web.getresponse().read()
    assert body == b'"small"\n', body

sock = socket.socket(socket.AF_UNIX)
sock.connect(path)
lines = sock.makefile("rb")

def socket_get():
    sock.sendall(b'{"op":"get","object":"x","keyPath":"k"}\n')
    line = lines.readline()
    assert b'"value":"small"' in line, line

counted(http_get)
counted(socket_get)
PY
kill "$daemon"
wait "$daemon" 2> /dev/null || true
[ -z "${CALLGRIND_OUT:-}" ] || cp "$work/cg.$daemon.1-01" "$CALLGRIND_OUT"
for part in 1 2; do
  total=$(callgrind_annotate --threshold=100 "$work/cg.$daemon.$part-01" 2> /dev/null \
    | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
  [ "$part" = 1 ] && what="HTTP GET" || what="socket get"
  awk -v t="$total" -v n="$count" -v w="$what" 'BEGIN { printf "%s: %.0f instructions each (%d requests)\n", w, t / n, n }'
done
