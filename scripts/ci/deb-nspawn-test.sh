#!/usr/bin/env bash
# kvod's Debian package under a real systemd, as an admin uses it: builds
# kvod_<version>_<arch>.deb and kvod-dbgsym with scripts/package-deb.sh (reusing
# the release build scripts/install.sh made in .build-install) and checks their
# files: stripped binaries whose debug symbols kvod-dbgsym holds by build id, the
# documents --help names, an honest Installed-Size, the same files as
# scripts/install.sh installs. Then it repackages the same build as a newer
# version, and in a systemd-nspawn container made from the same cached root file
# system as systemd-nspawn-test.sh:
#   apt-get install ./kvod_….deb   the user kvod, kvod.socket enabled and listening,
#                                  a set observed through kvoctl
#   apt-get install ./kvod_…+ci1   the upgrade: the running kvod restarted with its data
#                                  (the value and the epoch), the admin's /etc/default/kvod kept
#   apt-get remove                 kvod stopped, its files gone, its data kept
#   apt-get purge                  the data gone and nothing named kvod left
# Any failed check fails the script, loudly.
# Usage: scripts/ci/deb-nspawn-test.sh   (as root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# Booting a container and apt need root.
[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"

nspawn_name=deb-test
# shellcheck source=scripts/ci/nspawn-container.sh
source scripts/ci/nspawn-container.sh

# ---------------------------------------------------------------- packages
say "packages: systemd-container, debootstrap, dpkg-dev"
scripts/install-deps.sh "systemd-container=$(dpkg-query -W -f='${Version}' systemd)" debootstrap dpkg-dev
tarball=$(scripts/ci/nspawn-rootfs.sh)
machine=$(mktemp -d /var/tmp/kvod-deb.XXXXXX)
tar -C "$machine" -xf "$tarball"
say "building the package (the release build is install.sh's, when it made one)"
# /srv in the container: apt's _apt user may read it.
built=$(scripts/package-deb.sh --gzip --output "$machine/srv")
first=$(tail -n 1 <<<"$built")
first_dbgsym=$(tail -n 2 <<<"$built" | head -n 1)
version=$(dpkg-deb -f "$first" Version)
second=$(scripts/package-deb.sh --gzip --skip-build --version "$version+ci1" --output "$machine/srv" | tail -n 1)
ok "built $(basename "$first") ($(du -k "$first" | cut -f1) KiB), $(basename "$first_dbgsym") and $(basename "$second")"
unpacked=$machine/var/tmp/unpacked
dpkg-deb -x "$first" "$unpacked"
dpkg-deb -x "$first_dbgsym" "$unpacked-dbgsym"
for exe in kvod kvoctl; do
  # The binaries need no Swift toolchain: only Debian's libraries.
  missing=$(ldd "$unpacked/usr/bin/$exe" | grep -E 'not found|swift|Foundation' || true)
  expect "$exe links no Swift library (ldd)" "" "$missing"
  # Stripped, naming their debug symbols, which kvod-dbgsym has under their build id.
  sections=$(readelf -S --wide "$unpacked/usr/bin/$exe")
  expect "$exe is stripped (no .symtab, no .debug_info)" "" "$(grep -oE '\.symtab|\.debug_info' <<<"$sections" || true)"
  grep -q '\.gnu_debuglink' <<<"$sections" || fail "$exe has no .gnu_debuglink"
  id=$(readelf -n "$unpacked/usr/bin/$exe" | sed -n 's/^ *Build ID: *//p')
  debug=$unpacked-dbgsym/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  readelf -S --wide "$debug" | grep -q '\.debug_info' || fail "kvod-dbgsym has no debug symbols for $exe at ${debug#"$unpacked-dbgsym"}"
  ok "$exe: $(du -k "$unpacked/usr/bin/$exe" | cut -f1) KiB stripped, $(du -k "$debug" | cut -f1) KiB of debug symbols in kvod-dbgsym"
done
# Every document that --help (so the man pages) names is installed.
for doc in $(grep -ohE 'docs/[A-Z]+\.md' docs/man/kvod.8 docs/man/kvoctl.1 | sort -u); do
  [ -s "$unpacked/usr/share/doc/kvod/${doc#docs/}" ] || fail "the package lacks $doc, which --help names"
done
ok "the documents --help names are installed: $(grep -ohE 'docs/[A-Z]+\.md' docs/man/kvod.8 docs/man/kvoctl.1 | sort -u | xargs)"
# Installed-Size as dpkg counts it, from dpkg-deb's own listing: each file's KiB rounded up, a directory 1.
listed=$(dpkg-deb -c "$first" | awk '/^-/ { kib += int(($3 + 1023) / 1024) } /^[dl]/ { kib += 1 } END { print kib }')
expect "Installed-Size is what the package holds (KiB)" "$listed" "$(dpkg-deb -f "$first" Installed-Size)"
# The same files as scripts/install.sh installs, once each's own paths are mapped onto the other's.
local_tree=$(mktemp -d /var/tmp/kvod-install-set.XXXXXX)
scripts/install.sh --root "$local_tree" --skip-build >/dev/null 2>&1 || fail "scripts/install.sh --root $local_tree failed"
from_install=$(cd "$local_tree" && find . -type f -printf '/%P\n' | sed -e 's|^/usr/local/lib/systemd/|/lib/systemd/|' \
  -e 's|^/usr/local/share/zsh/site-functions/|/usr/share/zsh/vendor-completions/|' -e 's|^/usr/local/|/usr/|' |
  grep -vxE '/usr/share/kvod/install-manifest|/usr/share/doc/kvod/LICENSE' | sort)
from_packages=$( (dpkg-deb -c "$first"; dpkg-deb -c "$first_dbgsym") | awk '/^-/ { print substr($6, 2) }' |
  grep -vxE '/usr/share/doc/kvod/(copyright|changelog\.gz)' | sort)
rm -rf "$local_tree" "$unpacked" "$unpacked-dbgsym"
expect "install.sh and the packages install the same files" "" "$(diff <(echo "$from_install") <(echo "$from_packages") || true)"
ok "the same $(wc -l <<<"$from_packages") files"

boot_container

# apt_get ARGS...: apt-get in the container, without questions.
apt_get() { inside env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Use-Pty=0 "$@"; }
installed_version() { inside dpkg-query -W -f='${Status} ${Version}' kvod 2>/dev/null || true; }
kvoctl() { inside timeout 20 /usr/bin/kvoctl "$@"; }
epoch() { kvoctl info | grep -o '"epoch":"[0-9a-f]*"'; }

# ---------------------------------------------------------------- install
say "apt-get install ./$(basename "$first")"
apt_get install "/srv/$(basename "$first")" | sed 's/^/      /'
expect "kvod is installed at $version" "install ok installed $version" "$(installed_version)"
inside id kvod >/dev/null || fail "the postinst made no user kvod"
ok "the postinst made the user kvod: $(inside id kvod)"
expect "kvod.socket is enabled and listening" "enabled active" \
  "$(inside systemctl is-enabled kvod.socket || true) $(inside systemctl is-active kvod.socket || true)"
expect "kvod.service waits for a first connection" inactive "$(inside systemctl is-active kvod.service || true)"
expect "socket file owner, group, mode" "kvod:kvod 660 socket" "$(inside stat -c '%U:%G %a %F' /run/kvod/kvod.sock)"
for path in /usr/share/man/man8/kvod.8.gz /usr/share/man/man1/kvoctl.1.gz /usr/share/bash-completion/completions/kvoctl \
            /usr/share/doc/kvod/OPERATIONS.md /usr/share/doc/kvod/copyright /usr/lib/sysusers.d/kvod.conf; do
  inside test -s "$path" || fail "the package did not install $path"
done
ok "man pages, completions, docs and sysusers.d installed"

# Set and observe through kvoctl: an observer waits for one change.
observed=$(mktemp)
inside timeout 30 /usr/bin/kvoctl observe ci answer --new --count 1 >"$observed" &
observer=$!
observing() { kvoctl info | grep -q '"observations":1,'; }
wait_for "kvoctl observe is observing" 20 observing
expect "kvoctl set prints the change's seq" 1 "$(kvoctl set ci answer 42)"
wait "$observer" || fail "kvoctl observe failed: $(cat "$observed")"
grep -q '"new":42' "$observed" || fail "kvoctl observe printed no change to 42: $(cat "$observed")"
ok "kvoctl observe printed the change: $(cat "$observed")"
rm -f "$observed"
before_epoch=$(epoch)
# The admin's settings, which the upgrade must keep (a conffile).
inside sh -c 'echo KVOD_LOG_LEVEL=debug >>/etc/default/kvod'
pid=$(show MainPID kvod.service)

# ---------------------------------------------------------------- upgrade
say "upgrade: apt-get install ./$(basename "$second")"
apt_get install "/srv/$(basename "$second")" | sed 's/^/      /'
expect "kvod is upgraded to $version+ci1" "install ok installed $version+ci1" "$(installed_version)"
now=$(show MainPID kvod.service)
[ "$now" != 0 ] && [ "$now" != "$pid" ] || fail "the running kvod was not restarted (MainPID $pid, then $now)"
ok "the running kvod was restarted by the postinst (pid $pid, then $now)"
expect "after the upgrade, the value set before is there" 42 "$(kvoctl get ci answer)"
expect "after the upgrade, the epoch is the same (observers resume)" "$before_epoch" "$(epoch)"
inside grep -qx KVOD_LOG_LEVEL=debug /etc/default/kvod || fail "the upgrade lost the admin's /etc/default/kvod"
ok "the admin's /etc/default/kvod is kept"
expect "kvod.socket is still enabled and listening" "enabled active" \
  "$(inside systemctl is-enabled kvod.socket || true) $(inside systemctl is-active kvod.socket || true)"

# ---------------------------------------------------------------- remove
say "apt-get remove kvod"
apt_get remove kvod | sed 's/^/      /'
expect "kvod.service and kvod.socket are stopped" "inactive inactive" \
  "$(inside systemctl is-active kvod.service || true) $(inside systemctl is-active kvod.socket || true)"
inside test ! -e /usr/bin/kvod || fail "remove left /usr/bin/kvod"
inside test -s /var/lib/kvod/kvod.db || fail "remove deleted kvod's data"
ok "remove deleted the binaries and kept /var/lib/kvod/kvod.db"

# ---------------------------------------------------------------- purge
say "apt-get purge kvod"
apt_get purge kvod | sed 's/^/      /'
expect "kvod is gone from dpkg's database" "" "$(installed_version)"
inside test ! -e /var/lib/kvod || fail "purge left /var/lib/kvod"
ok "purge deleted /var/lib/kvod"
left=$(inside find / \( -path /proc -o -path /sys -o -path /dev -o -path /srv \) -prune -o -name '*kvod*' -print)
expect "nothing named kvod is left (in /usr, /etc, /var, /run...)" "" "$left"
kvod_uid=$(inside id -u kvod)
left=$(inside sh -c "grep -l '^Uid:[[:space:]]*$kvod_uid[[:space:]]' /proc/[0-9]*/status 2>/dev/null" || true)
expect "no process of the user kvod is left" "" "$left"
# Debian keeps system users on purge: their uid may still own files elsewhere.
ok "the user kvod stays, as Debian keeps system users: $(inside id kvod)"

poweroff_container
say "all checks passed"
