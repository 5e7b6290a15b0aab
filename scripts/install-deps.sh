#!/usr/bin/env bash
# Installs the Debian packages kvod builds and tests with, when they are missing.
# Usage: scripts/install-deps.sh [extra-package[=version] ...]
# A package given as name=version is installed at that version if it is missing.
set -euo pipefail
# systemd: the tests run kvod under systemd-socket-activate.
packages=(libuv1-dev libsqlite3-dev pkg-config socat netcat-openbsd jq redis-server systemd "$@")
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
