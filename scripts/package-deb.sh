#!/usr/bin/env bash
# Builds the Debian packages kvod_<version>_<arch>.deb and its debug symbols,
# kvod-dbgsym_<version>_<arch>.deb, with dpkg-deb (no debhelper needed; its
# layout and maintainer-script conventions). kvod holds the files
# scripts/install-files.sh lists for both installs, under Debian's paths:
#   kvod, kvoctl (release, the Swift runtime linked in, stripped) -> /usr/bin
#   docs/man/kvod.8, kvoctl.1 (gzipped)                  -> /usr/share/man/man8, man1
#   kvoctl's completions                                 -> /usr/share/bash-completion/completions/kvoctl,
#                                                           zsh/vendor-completions/_kvoctl, fish/vendor_completions.d
#   systemd/kvod.service, kvod.socket, kvod-metrics.{service,timer} -> /lib/systemd/system
#   systemd/kvod-http.conf (the HTTP drop-in, inactive)  -> /usr/share/kvod
#   systemd/kvod.sysusers                                -> /usr/lib/sysusers.d/kvod.conf
#   systemd/kvod.default (a conffile)                    -> /etc/default/kvod
#   README, CHANGELOG, NOTICE, docs/*.md but ARCHITECTURE, copyright -> /usr/share/doc/kvod
# with packaging/deb's control, postinst, prerm and postrm; kvod-dbgsym holds
# /usr/lib/debug/.build-id/NN/REST.debug for each binary. Depends: is
# dpkg-shlibdeps' reading of the binaries (glibc, libstdc++, libuv1,
# libsqlite3-0, libcurl4), plus systemd-sysusers (deb-systemd-helper is essential).
#
# The version is the one `kvod --version` prints (scripts/build-info.sh: the
# nearest release tag, 0.2.0 or 0.2.0+3; with no tag 0.0.0~COMMIT). The build is
# scripts/install.sh's (.build-install, --static-swift-stdlib), so after
# install.sh it costs nothing. Installed-Size is counted as dpkg-gencontrol counts
# it: each file's KiB rounded up, one for each directory.
#
# Usage: scripts/package-deb.sh [--skip-build] [--version V] [--output DIR] [--gzip]
#   --skip-build  package what .build-install/release already holds
#   --version V   the packages' version instead of the build's (a test
#                 repackages one build as a newer version to try an upgrade)
#   --output DIR  where the .debs go (default: the current directory)
#   --gzip        gzip instead of xz: the binaries hold the Swift runtime and
#                 Foundation, which xz takes minutes to compress on 2 cores
#                 and gzip seconds (a larger package)
# Prints kvod-dbgsym's path, then kvod's on its last line.
set -euo pipefail
# Files 0644, directories 0755, whatever the caller's umask.
umask 022
here=$(pwd)
cd "$(dirname "$0")/.."

build=1
version=""
output=$here
compression=xz
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-build) build=0; shift ;;
    --version) version=${2:?--version needs a version}; shift 2 ;;
    --output) output=${2:?--output needs a directory}; shift 2 ;;
    --gzip) compression=gzip; shift ;;
    *) echo "usage: scripts/package-deb.sh [--skip-build] [--version V] [--output DIR] [--gzip]" >&2; exit 2 ;;
  esac
done
[[ "$output" == /* ]] || output="$here/$output"
arch=$(dpkg --print-architecture)
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "package-deb.sh: $tool is missing (apt-get install dpkg-dev)" >&2; exit 1; }
done

build_dir=.build-install
swift_build=(swift build -c release --static-swift-stdlib --scratch-path "$build_dir")
if [ "$build" -eq 1 ]; then
  scripts/install-deps.sh --build
  command -v swift >/dev/null || { echo "package-deb.sh: swift is not on PATH" >&2; exit 1; }
  for product in kvod kvoctl; do "${swift_build[@]}" --product "$product" >&2; done
fi
bin_path=$build_dir/release
[ -x "$bin_path/kvod" ] || { echo "package-deb.sh: $bin_path/kvod is missing; build first" >&2; exit 1; }
# "0.2.0+3 (commit 1234abcd5678)": the build's own version, as Debian spells one.
read -r built _ commit < <("$bin_path/kvod" --version)
commit=${commit%)}
if [ "$built" = unknown ]; then built="0.0.0~$commit"; fi
version=${version:-$built}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/kvod
debug_tree=$work/kvod-dbgsym
mkdir -p "$work/scratch"
# put SOURCE DEST MODE: one file into the package's tree; debug symbols into kvod-dbgsym's.
put() {
  case "$2" in
    /usr/lib/debug/*) install -D -m "$3" "$1" "$debug_tree$2" ;;
    *) install -D -m "$3" "$1" "$tree$2" ;;
  esac
}
# shellcheck source=scripts/install-files.sh
source scripts/install-files.sh
install_files debian "$bin_path" "$work/scratch"
sed 's|/usr/local/|/usr/|g' systemd/kvod.default >"$work/kvod.default"
put "$work/kvod.default" /etc/default/kvod 0644
# A native package's changelog: one entry for this version.
{
  echo "kvod ($version) unstable; urgency=medium"
  echo
  echo "  * Built by scripts/package-deb.sh from commit $commit."
  echo
  echo " -- $(sed -n 's/^Maintainer: //p' packaging/deb/control)  $(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n >"$work/changelog.gz"
put "$work/changelog.gz" /usr/share/doc/kvod/changelog.gz 0644

# What the binaries link, as Debian packages with their minimum versions.
mkdir -p "$work/shlibs/debian"
printf 'Source: kvod\n\nPackage: kvod\nArchitecture: any\n' >"$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$tree/usr/bin/kvod" "$tree/usr/bin/kvoctl" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "package-deb.sh: dpkg-shlibdeps found no libraries" >&2; exit 1; }

# installed_size TREE: KiB as dpkg-gencontrol counts them (each file's size
# rounded up to a KiB, each directory one, the top one too), DEBIAN/ left out.
installed_size() {
  (cd "$1" && find . -path ./DEBIAN -prune -o -printf '%y %s\n') |
    awk '$1 == "f" { kib += int(($2 + 1023) / 1024) } $1 != "f" { kib += 1 } END { print kib }'
}
# md5sums TREE: what dpkg checks the installed files against (conffiles aside).
md5sums() {
  (cd "$1" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | sort -z |
    xargs -0 md5sum) >"$1/DEBIAN/md5sums"
}

mkdir -p "$tree/DEBIAN" "$debug_tree/DEBIAN" "$debug_tree/usr/share/doc"
# kvod-dbgsym's copyright and changelog are kvod's, on which it depends (as debhelper does it).
ln -s kvod "$debug_tree/usr/share/doc/kvod-dbgsym"
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@INSTALLED_SIZE@|$(installed_size "$tree")|" \
  -e "s|@SHLIBS@|$shlibs|" packaging/deb/control >"$tree/DEBIAN/control"
echo /etc/default/kvod >"$tree/DEBIAN/conffiles"
for script in postinst prerm postrm; do
  install -m 0755 "packaging/deb/$script" "$tree/DEBIAN/$script"
done
md5sums "$tree"
# The debug symbols' package, as debhelper's dh_strip makes one (a .deb, not a .ddeb:
# apt-get installs it from a file like any other).
build_ids=$(cd "$debug_tree/usr/lib/debug/.build-id" && find . -name '*.debug' | sed -E 's|^\./(..)/(.*)\.debug$|\1\2|' | sort | xargs)
sed -e "s|@VERSION@|$version|g" -e "s|@ARCH@|$arch|" -e "s|@INSTALLED_SIZE@|$(installed_size "$debug_tree")|" \
  -e "s|@BUILD_IDS@|$build_ids|" -e "s|@MAINTAINER@|$(sed -n 's/^Maintainer: //p' packaging/deb/control)|" \
  packaging/deb/dbgsym-control >"$debug_tree/DEBIAN/control"
md5sums "$debug_tree"
chmod 0644 "$tree/DEBIAN/control" "$tree/DEBIAN/conffiles" "$tree/DEBIAN/md5sums" \
  "$debug_tree/DEBIAN/control" "$debug_tree/DEBIAN/md5sums"

mkdir -p "$output"
debug_deb="$output/kvod-dbgsym_${version}_${arch}.deb"
deb="$output/kvod_${version}_${arch}.deb"
dpkg-deb --root-owner-group "-Z$compression" --build "$debug_tree" "$debug_deb" >&2
dpkg-deb --root-owner-group "-Z$compression" --build "$tree" "$deb" >&2
echo "$debug_deb"
echo "$deb"
