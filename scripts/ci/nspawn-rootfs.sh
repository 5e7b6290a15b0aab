#!/usr/bin/env bash
# Prints the path of a tarball holding a minimal Debian bookworm that boots
# systemd under systemd-nspawn, building it with debootstrap if it is not
# cached yet (about 2 minutes; later runs reuse it).
#
# The cache lives outside the repository, in $KVOD_TEST_CACHE (default
# /var/cache/kvod-test). The tarball's name carries everything that shapes
# its contents, so changing the package list builds a new one.
# Usage: scripts/ci/nspawn-rootfs.sh   (as root)
set -euo pipefail

suite=bookworm
# systemd, systemd-sysv, dbus: a booting system. libuv1, libsqlite3-0, libcurl4, libh2o0.13: kvod's
# shared libraries besides glibc. socat: the test's client inside the container.
include=systemd,systemd-sysv,dbus,libuv1,libsqlite3-0,libcurl4,libh2o0.13,socat
cache=${KVOD_TEST_CACHE:-/var/cache/kvod-test}
tarball="$cache/rootfs-$suite-minbase-${include//,/-}.tar"

# The mirror apt already uses (deb822 .sources or one-line sources.list).
mirror() {
  local uri
  uri=$(grep -hs -A3 '^Types:.*deb' /etc/apt/sources.list.d/*.sources \
          | awk -v s="$suite" '/^URIs:/ {u=$2} /^Suites:/ {for (i=2;i<=NF;i++) if ($i==s) {print u; exit}}' || true)
  if [ -z "$uri" ]; then
    uri=$(awk -v s="$suite" '$1=="deb" && $3==s {print $2; exit}' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

if [ -s "$tarball" ]; then
  echo "$tarball"
  exit 0
fi

command -v debootstrap >/dev/null || { echo "nspawn-rootfs: debootstrap is not installed" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf --one-file-system "$work"' EXIT
url=$(mirror)
echo "nspawn-rootfs: debootstrap $suite from $url into $work (once; cached as $tarball)" >&2
debootstrap --variant=minbase --include="$include" "$suite" "$work/root" "$url" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  echo "nspawn-rootfs: debootstrap failed (log above)" >&2
  exit 1
}
# Smaller and quicker to unpack: no apt lists or downloaded .debs.
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
tar -C "$work/root" -cf "$work/rootfs.tar" .
mv "$work/rootfs.tar" "$tarball"
echo "$tarball"
