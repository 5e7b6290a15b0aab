#!/usr/bin/env bash
# Builds kvod and kvoctl in release mode and installs them as a systemd service,
# the files scripts/install-files.sh lists (the Debian package installs the same):
#   kvod, kvoctl, stripped                        -> $PREFIX/bin
#   their debug symbols, by build id              -> /usr/lib/debug/.build-id/NN/REST.debug
#   docs/man/kvod.8, docs/man/kvoctl.1, gzipped   -> $PREFIX/share/man/man8, man1
#   kvoctl's completions (bash, zsh, fish)        -> $PREFIX/share/{bash-completion/completions,zsh/site-functions,fish/vendor_completions.d}
#   systemd/kvod.service, kvod.socket             -> $PREFIX/lib/systemd/system
#   systemd/kvod-metrics.service, .timer (not enabled: docs/OPERATIONS.md, "Metrics") -> the same
#   systemd/kvod-http.conf (HTTP drop-in, inactive: docs/OPERATIONS.md, "HTTP under systemd") -> $PREFIX/share/kvod
#   systemd/kvod.sysusers (user and group kvod)   -> $PREFIX/lib/sysusers.d/kvod.conf
#   systemd/kvod.default, where none exists yet   -> /etc/default/kvod
#   README.md, CHANGELOG.md, LICENSE, NOTICE and docs/*.md but ARCHITECTURE.md -> $PREFIX/share/doc/kvod
# then creates the user and group kvod and prints how to enable the service.
# Nothing else: no benchmark, fuzzer or example, no test tool (install-deps.sh --build).
# What it installed is listed in $PREFIX/share/kvod/install-manifest, which
# scripts/uninstall.sh reads to remove exactly that.
#
# The build runs in .build-install (not .build), as the owner of the checkout
# (not root, under sudo), with the swift found on PATH, in $SWIFT, or on the
# owner's login PATH: sudo's secure_path drops the toolchain's folder.
#
# Usage: scripts/install.sh [--root DIR] [--skip-build]    (as root, e.g. with sudo)
#   PREFIX      where to install (default /usr/local; the units name $PREFIX/bin/kvod)
#   SWIFT       the swift executable, if it is not found
#   --root DIR  install into the file system tree at DIR (an image, a container)
#               instead of /; nothing is started or reloaded, and where DIR has
#               no /etc/passwd yet, systemd-sysusers makes the user at its first boot
#   --skip-build  install what .build-install/release already holds
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
  echo "install.sh: run as root, e.g. sudo scripts/install.sh (it writes $prefix and creates the user kvod)" >&2
  exit 1
fi
products=(kvod kvoctl)
build_dir=.build-install

scripts/install-deps.sh --build

# The build runs as whoever owns the checkout, so that no root-owned file lands in it.
builder=$(stat -c %U .)
# as_builder CMD...: runs CMD as the builder, with its home (SwiftPM's caches) and PATH.
as_builder() {
  if [ "$builder" == root ]; then "$@"; else setpriv --reuid="$builder" --regid="$(id -g "$builder")" --init-groups \
    env HOME="$(getent passwd "$builder" | cut -d: -f6)" PATH="$PATH" "$@"; fi
}
# find_swift: the toolchain's swift, where the user had it.
find_swift() {
  local home candidate
  if [ -n "${SWIFT:-}" ]; then echo "$SWIFT"; return; fi
  command -v swift && return
  for user in ${SUDO_USER:-} "$builder"; do
    [ "$user" != root ] || continue
    home=$(getent passwd "$user" | cut -d: -f6)
    # Their login shell's PATH (profile files), then where toolchains usually go.
    candidate=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
      env -i HOME="$home" USER="$user" bash -lc 'command -v swift' 2>/dev/null || true)
    [ -n "$candidate" ] && { echo "$candidate"; return; }
    for candidate in "$home/.local/share/swiftly/bin/swift" "$home/.swiftly/bin/swift"; do
      [ -x "$candidate" ] && { echo "$candidate"; return; }
    done
  done
  for candidate in /opt/swift/usr/bin/swift /usr/share/swift/usr/bin/swift /usr/local/swift/usr/bin/swift; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  return 1
}
if ! swift=$(find_swift); then
  cat >&2 <<'EOF'
install.sh: cannot find swift: sudo's secure_path leaves the Swift toolchain off PATH.
Run it with your PATH:            sudo env "PATH=$PATH" scripts/install.sh
or name the toolchain's swift:    sudo SWIFT="$(command -v swift)" scripts/install.sh
EOF
  exit 1
fi
PATH="$(dirname "$swift"):$PATH"
# The Swift runtime and Foundation are linked in, so the installed binaries
# need only glibc, libstdc++ and the libraries install-deps.sh --run names (libuv, libsqlite3,
# libcurl, libh2o and its OpenSSL), not this machine's toolchain.
swift_build=("$swift" build -c release --static-swift-stdlib --scratch-path "$build_dir")
if [ "$build" -eq 1 ]; then
  echo "install.sh: building ${products[*]} in $build_dir as $builder with $swift"
  for product in "${products[@]}"; do as_builder "${swift_build[@]}" --product "$product"; done
fi
bin_path=$(as_builder "${swift_build[@]}" --show-bin-path)

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
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
# shellcheck source=scripts/install-files.sh
source scripts/install-files.sh
echo "install.sh: installing into ${root:-/} (prefix $prefix)"
install_files local "$bin_path" "$generated"
# The settings file is the admin's: installed only where none exists, and
# recorded with its checksum, so that uninstall.sh keeps it once edited.
if [ -e "$root/etc/default/kvod" ]; then
  echo "  /etc/default/kvod (kept as it was)"
else
  sed "s|/usr/local/|$prefix/|g" systemd/kvod.default >"$generated/kvod.default"
  install -D -m 0644 "$generated/kvod.default" "$root/etc/default/kvod"
  echo "config /etc/default/kvod $(sha256sum <"$root/etc/default/kvod" | cut -d' ' -f1)" >>"$manifest"
  echo "  /etc/default/kvod"
fi

# The user and group kvod. Recorded only if this run made them, so that
# uninstalling never removes an account that was there before.
# has DATABASE NAME: whether the passwd or group database of the target has NAME.
has() {
  if [ -n "$root" ]; then grep -q "^$2:" "$root/etc/$1" 2>/dev/null; else getent "$1" "$2" >/dev/null; fi
}
if [ -n "$root" ] && [ ! -e "$root/etc/passwd" ]; then
  # An image without accounts yet: systemd-sysusers.service reads kvod.conf at its first boot.
  echo "  (no $root/etc/passwd: the user and group kvod are made by systemd-sysusers at first boot)"
else
  had_user=0; had_group=0
  has passwd kvod && had_user=1
  has group kvod && had_group=1
  systemd-sysusers ${root:+--root="$root"} "$root$prefix/lib/sysusers.d/kvod.conf"
  has passwd kvod && has group kvod || { echo "install.sh: systemd-sysusers did not create kvod" >&2; exit 1; }
  [ "$had_user" -eq 1 ] || { echo "user kvod" >>"$manifest"; echo "  user kvod"; }
  [ "$had_group" -eq 1 ] || { echo "group kvod" >>"$manifest"; echo "  group kvod"; }
fi
echo "file $manifest_dir/install-manifest" >>"$manifest"

if [ -n "$root" ]; then
  # Nothing runs in the tree: its units are enabled offline, or once it boots.
  cat <<EOF

kvod is installed into $root. To have kvod.socket listen (and start kvod at
the first connection) once the tree boots:

    systemctl --root=$root enable kvod.socket

Settings: $root/etc/default/kvod. Remove it again: scripts/uninstall.sh --root $root
More: $root$prefix/share/doc/kvod/OPERATIONS.md
EOF
  exit 0
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi
cat <<EOF

kvod is installed. Start it on the first connection to /run/kvod/kvod.sock
(and at every boot) with:

    systemctl enable --now kvod.socket

or run it from boot on, socket or not:

    systemctl enable --now kvod.service

Settings (log level, history, policy, limits): /etc/default/kvod, then
                      systemctl restart kvod.service
Let a user connect:   usermod -aG kvod USER   (root always may)
Status and logs:      systemctl status kvod.service; journalctl -u kvod
Manuals:              man 8 kvod; man kvoctl
Remove it again:      scripts/uninstall.sh
More: $prefix/share/doc/kvod/OPERATIONS.md
EOF
