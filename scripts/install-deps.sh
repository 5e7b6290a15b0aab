#!/usr/bin/env bash
# Installs the Debian packages kvod needs, when they are missing, in three
# nested sets:
#   --run    what the installed kvod runs with: libuv1, libsqlite3-0, libcurl4, libh2o0.13
#            (the Swift runtime is linked in by scripts/install.sh)
#   --build  what building it needs besides the Swift toolchain: --run's, the
#            -dev packages and pkg-config (scripts/run.sh, scripts/install.sh)
#   --test   (the default) what the tests and benchmarks use besides: socat,
#            netcat-openbsd, jq, redis-server, systemd, python3-prometheus-client,
#            etcd-server, etcd-client, iproute2, curl and openssl (scripts/test.sh, CI)
# Usage: scripts/install-deps.sh [--run|--build|--test] [extra-package[=version] ...]
# A package given as name=version is installed at that version if it is missing.
set -euo pipefail
set_name=test
case "${1:-}" in
  --run|--build|--test) set_name=${1#--}; shift ;;
esac
# libh2o0.13: H2O on libuv, kvod's --http (docs/HTTP.md); its headers need libssl-dev.
run=(libuv1 libsqlite3-0 libcurl4 libh2o0.13)
build=("${run[@]}" libuv1-dev libsqlite3-dev libcurl4-openssl-dev libh2o-dev libssl-dev pkg-config)
# systemd: the tests run kvod under systemd-socket-activate.
# python3-prometheus-client: its parser reads the metrics op's text in the tests.
# etcd-server, etcd-client: KVOEtcdTests and ClusterDaemonTests start a 3-member etcd cluster
# (etcd, etcdctl) on loopback ports of their own. (libcurl, in --run and --build: kvod's etcd
# client, for --etcd; docs/CLUSTER.md.)
# iproute2: ClusterPartitionTests put a kvod in a network namespace of its own (ip netns, a veth pair).
# curl: HTTPTests and docs/HTTP.md call kvod's --http with it; openssl: HTTPTests make a certificate.
test=("${build[@]}" socat netcat-openbsd jq redis-server systemd python3-prometheus-client
  etcd-server etcd-client iproute2 curl openssl)
case "$set_name" in
  run) packages=("${run[@]}") ;;
  build) packages=("${build[@]}") ;;
  test) packages=("${test[@]}") ;;
esac
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "${p%%=*}" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "installing: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
