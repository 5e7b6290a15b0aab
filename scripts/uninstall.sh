#!/usr/bin/env bash
# Removes what scripts/install.sh installed, as listed in its manifest
# ($PREFIX/share/kvod/install-manifest): stops and disables the units, deletes
# the files (/etc/default/kvod only if unchanged), and deletes the user and group kvod if install.sh created them.
# /var/lib/kvod and /run/kvod, which systemd made for the service, go too if
# they are empty; anything kvod left in them stays, and is named.
#
# Usage: scripts/uninstall.sh [--root DIR]    (as root; PREFIX as for install.sh)
set -euo pipefail

prefix=${PREFIX:-/usr/local}
root=""
case "${1:-}" in
  --root) root=${2:?--root needs a directory}; root=${root%/} ;;
  "") ;;
  *) echo "usage: scripts/uninstall.sh [--root DIR]" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
  echo "uninstall.sh: run as root" >&2
  exit 1
fi
manifest="$root$prefix/share/kvod/install-manifest"
if [ ! -f "$manifest" ]; then
  echo "uninstall.sh: no $manifest: nothing installed by scripts/install.sh with PREFIX=$prefix" >&2
  exit 1
fi

mapfile -t entries <"$manifest"
live=0
[ -z "$root" ] && [ -d /run/systemd/system ] && live=1
if [ "$live" -eq 1 ]; then
  systemctl disable --now kvod-metrics.timer kvod.socket kvod.service 2>/dev/null || true
fi
for entry in "${entries[@]}"; do
  case "$entry" in
    "file "*) rm -f "$root${entry#file }" && echo "removed ${entry#file }" ;;
    # "config PATH SHA256": the settings file goes only as install.sh left it.
    "config "*)
      read -r _ path sum <<<"$entry"
      if [ ! -e "$root$path" ]; then :
      elif [ "$(sha256sum <"$root$path" | cut -d' ' -f1)" == "$sum" ]; then rm -f "$root$path" && echo "removed $path"
      else echo "kept $path: changed since install"
      fi ;;
  esac
done
# The folders install.sh made for kvod alone, and the debug symbols' build-id folders, once empty.
debug_dirs=$(printf '%s\n' "${entries[@]}" | sed -n 's|^file \(/usr/lib/debug/\.build-id/[0-9a-f]*\)/.*|\1|p' | sort -u)
for dir in "$prefix/share/kvod" "$prefix/share/doc/kvod" "$prefix/lib/sysusers.d" $debug_dirs; do
  rmdir --ignore-fail-on-non-empty "$root$dir" 2>/dev/null || true
done
if printf '%s\n' "${entries[@]}" | grep -qx 'user kvod'; then
  userdel ${root:+--root "$root"} kvod && echo "removed user kvod"
fi
if printf '%s\n' "${entries[@]}" | grep -qx 'group kvod' && grep -q '^kvod:' "$root/etc/group"; then
  groupdel ${root:+--root "$root"} kvod && echo "removed group kvod"
fi
for dir in /var/lib/kvod /var/lib/private/kvod /run/kvod; do
  [ -d "$root$dir" ] || continue
  if rmdir "$root$dir" 2>/dev/null; then echo "removed $dir"; else echo "kept $dir: not empty"; fi
done
if [ "$live" -eq 1 ]; then
  systemctl daemon-reload
fi
