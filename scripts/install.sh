#!/usr/bin/env bash
# Builds kvod in release mode and installs it as a systemd service:
#   every executable product (kvod, and kvoctl where it exists) -> $PREFIX/bin
#   systemd/kvod.service, kvod.socket                           -> $PREFIX/lib/systemd/system
#   systemd/kvod.sysusers (user and group kvod)                 -> $PREFIX/lib/sysusers.d/kvod.conf
#   docs/OPERATIONS.md, docs/PROTOCOL.md                        -> $PREFIX/share/doc/kvod
# then creates the user and group kvod and prints how to enable the service.
# What it installed is listed in $PREFIX/share/kvod/install-manifest, which
# scripts/uninstall.sh reads to remove exactly that.
#
# Usage: scripts/install.sh [--root DIR] [--skip-build]    (as root)
#   PREFIX      where to install (default /usr/local; the units name $PREFIX/bin/kvod)
#   --root DIR  install into the file system tree at DIR (an image, a container)
#               instead of /; nothing is started or reloaded
#   --skip-build  install what .build/release already holds
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=${PREFIX:-/usr/local}
root=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --skip-build) build=0; shift ;;
    *) echo "usage: scripts/install.sh [--root DIR] [--skip-build]" >&2; exit 2 ;;
  esac
done
root=${root%/}
if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (it writes $prefix and creates the user kvod)" >&2
  exit 1
fi

scripts/install-deps.sh
if [ "$build" -eq 1 ]; then
  # The Swift runtime and Foundation are linked in, so the installed binary
  # needs only glibc, libstdc++, libuv and libsqlite3, not this machine's toolchain.
  echo "install.sh: building release binaries"
  swift build -c release --static-swift-stdlib
fi
bin_path=$(swift build -c release --static-swift-stdlib --show-bin-path)
mapfile -t executables < <(swift package describe --type json | jq -r '.products[] | select(.type | has("executable")) | .name')
[ ${#executables[@]} -gt 0 ] || { echo "install.sh: no executable products found" >&2; exit 1; }

manifest_dir="$prefix/share/kvod"
manifest="$root$manifest_dir/install-manifest"
mkdir -p "$root$manifest_dir"
: >"$manifest"
# put SOURCE DEST MODE: installs one file and records it in the manifest.
put() {
  install -D -m "$3" "$1" "$root$2"
  echo "file $2" >>"$manifest"
  echo "  $2"
}
echo "install.sh: installing into ${root:-/} (prefix $prefix)"
for exe in "${executables[@]}"; do
  [ -x "$bin_path/$exe" ] || { echo "install.sh: $bin_path/$exe is missing; build first" >&2; exit 1; }
  put "$bin_path/$exe" "$prefix/bin/$exe" 0755
done
units=$(mktemp -d)
trap 'rm -rf "$units"' EXIT
for unit in kvod.service kvod.socket; do
  sed "s|/usr/local/|$prefix/|g" "systemd/$unit" >"$units/$unit"
  put "$units/$unit" "$prefix/lib/systemd/system/$unit" 0644
done
put systemd/kvod.sysusers "$prefix/lib/sysusers.d/kvod.conf" 0644
for doc in OPERATIONS.md PROTOCOL.md; do
  put "docs/$doc" "$prefix/share/doc/kvod/$doc" 0644
done

# The user and group kvod. Recorded only if this run made them, so that
# uninstalling never removes an account that was there before.
# has DATABASE NAME: whether the passwd or group database of the target has NAME.
has() {
  if [ -n "$root" ]; then grep -q "^$2:" "$root/etc/$1" 2>/dev/null; else getent "$1" "$2" >/dev/null; fi
}
had_user=0; had_group=0
has passwd kvod && had_user=1
has group kvod && had_group=1
systemd-sysusers ${root:+--root="$root"} "$root$prefix/lib/sysusers.d/kvod.conf"
has passwd kvod && has group kvod || { echo "install.sh: systemd-sysusers did not create kvod" >&2; exit 1; }
[ "$had_user" -eq 1 ] || { echo "user kvod" >>"$manifest"; echo "  user kvod"; }
[ "$had_group" -eq 1 ] || { echo "group kvod" >>"$manifest"; echo "  group kvod"; }
echo "file $manifest_dir/install-manifest" >>"$manifest"

if [ -z "$root" ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi
cat <<EOF

kvod is installed. Start it on the first connection to /run/kvod/kvod.sock
(and at every boot) with:

    systemctl enable --now kvod.socket

or run it from boot on, socket or not:

    systemctl enable --now kvod.service

Let a user connect:   usermod -aG kvod USER   (root always may)
Status and logs:      systemctl status kvod.service; journalctl -u kvod
Remove it again:      scripts/uninstall.sh
More: $prefix/share/doc/kvod/OPERATIONS.md
EOF
