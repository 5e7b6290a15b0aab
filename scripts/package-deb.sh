#!/usr/bin/env bash
# Builds the Debian package kvod_<version>_<arch>.deb with dpkg-deb (no
# debhelper needed; its layout and maintainer-script conventions):
#   kvod, kvoctl (release, the Swift runtime linked in)  -> /usr/bin
#   docs/man/kvod.8, kvoctl.1 (gzipped)                  -> /usr/share/man/man8, man1
#   kvoctl's completions                                 -> /usr/share/bash-completion/completions/kvoctl,
#                                                           zsh/vendor-completions/_kvoctl, fish/vendor_completions.d
#   systemd/kvod.service, kvod.socket                    -> /lib/systemd/system
#   systemd/kvod.sysusers                                -> /usr/lib/sysusers.d/kvod.conf
#   systemd/kvod.default (a conffile)                    -> /etc/default/kvod
#   docs (README, OPERATIONS, PROTOCOL, ...), copyright  -> /usr/share/doc/kvod
# with packaging/deb's control, postinst, prerm and postrm. Depends: is
# dpkg-shlibdeps' reading of the binaries (glibc, libstdc++, libuv1,
# libsqlite3-0, libcurl4), plus systemd-sysusers (deb-systemd-helper is essential).
#
# The version is kvodVersion in Sources/KVOEngine/EngineConfiguration.swift
# (what kvod --version prints). The build is scripts/install.sh's
# (.build-install, --static-swift-stdlib), so after install.sh it costs nothing.
#
# Usage: scripts/package-deb.sh [--skip-build] [--version V] [--output DIR] [--gzip]
#   --skip-build  package what .build-install/release already holds
#   --version V   the package's version instead of kvodVersion (a test
#                 repackages one build as a newer version to try an upgrade)
#   --output DIR  where the .deb goes (default: the current directory)
#   --gzip        gzip instead of xz: the binaries hold the Swift runtime and
#                 Foundation (120 MB), which xz takes minutes to compress on 2
#                 cores and gzip seconds (a 47 MB package instead of 31 MB)
# Prints the .deb's path on its last line.
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
source_version=$(sed -nE 's/^public let kvodVersion = "([^"]+)"$/\1/p' Sources/KVOEngine/EngineConfiguration.swift)
[ -n "$source_version" ] || { echo "package-deb.sh: no kvodVersion in Sources/KVOEngine/EngineConfiguration.swift" >&2; exit 1; }
version=${version:-$source_version}
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
for exe in kvod kvoctl; do
  [ -x "$bin_path/$exe" ] || { echo "package-deb.sh: $bin_path/$exe is missing; build first" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/kvod
# put SOURCE DEST MODE: one file into the package's tree.
put() { install -D -m "$3" "$1" "$tree$2"; }

put "$bin_path/kvod" /usr/bin/kvod 0755
put "$bin_path/kvoctl" /usr/bin/kvoctl 0755
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$tree/usr/bin/kvod" "$tree/usr/bin/kvoctl"
for page in man8/kvod.8 man1/kvoctl.1; do
  install -d "$tree/usr/share/man/${page%/*}"
  gzip -9n <"docs/man/${page#*/}" >"$tree/usr/share/man/$page.gz"
done
# A completion is sourced, not run: no #! line (lintian).
"$bin_path/kvoctl" --generate-completion-script bash | sed '1{/^#!/d}' >"$work/kvoctl.bash"
"$bin_path/kvoctl" --generate-completion-script zsh >"$work/kvoctl.zsh"
"$bin_path/kvoctl" --generate-completion-script fish >"$work/kvoctl.fish"
put "$work/kvoctl.bash" /usr/share/bash-completion/completions/kvoctl 0644
put "$work/kvoctl.zsh" /usr/share/zsh/vendor-completions/_kvoctl 0644
put "$work/kvoctl.fish" /usr/share/fish/vendor_completions.d/kvoctl.fish 0644
# The units and settings name /usr/local (scripts/install.sh's prefix); here it is /usr.
for unit in kvod.service kvod.socket; do
  sed 's|/usr/local/|/usr/|g' "systemd/$unit" >"$work/$unit"
  put "$work/$unit" "/lib/systemd/system/$unit" 0644
done
put systemd/kvod.sysusers /usr/lib/sysusers.d/kvod.conf 0644
sed 's|/usr/local/|/usr/|g' systemd/kvod.default >"$work/kvod.default"
put "$work/kvod.default" /etc/default/kvod 0644
put README.md /usr/share/doc/kvod/README.md 0644
for doc in OPERATIONS PROTOCOL SECURITY RELIABILITY DURABILITY CLIENT; do
  put "docs/$doc.md" "/usr/share/doc/kvod/$doc.md" 0644
done
put packaging/deb/copyright /usr/share/doc/kvod/copyright 0644
# A native package's changelog: one entry for this version.
{
  echo "kvod ($version) unstable; urgency=medium"
  echo
  echo "  * Built by scripts/package-deb.sh from commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
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

mkdir -p "$tree/DEBIAN"
installed_size=$(du -sk --apparent-size "$tree" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@INSTALLED_SIZE@|$installed_size|" \
  -e "s|@SHLIBS@|$shlibs|" packaging/deb/control >"$tree/DEBIAN/control"
echo /etc/default/kvod >"$tree/DEBIAN/conffiles"
for script in postinst prerm postrm; do
  install -m 0755 "packaging/deb/$script" "$tree/DEBIAN/$script"
done
(cd "$tree" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | sort -z |
  xargs -0 md5sum) >"$tree/DEBIAN/md5sums"
chmod 0644 "$tree/DEBIAN/control" "$tree/DEBIAN/conffiles" "$tree/DEBIAN/md5sums"

mkdir -p "$output"
deb="$output/kvod_${version}_${arch}.deb"
dpkg-deb --root-owner-group "-Z$compression" --build "$tree" "$deb" >&2
echo "$deb"
