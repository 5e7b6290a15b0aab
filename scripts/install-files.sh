# Sourced by scripts/install.sh and scripts/package-deb.sh: the one list of
# what an installed kvod is, so that the two install the same files.
#
#   install_files LAYOUT BIN_PATH SCRATCH
#
# calls the caller's `put SOURCE DEST MODE` once per file. LAYOUT says where:
#   local   install.sh: under $prefix (default /usr/local), units in
#           $prefix/lib/systemd/system, zsh's site-functions, LICENSE and NOTICE
#   debian  the package: under /usr, units in /lib/systemd/system, zsh's
#           vendor-completions, Debian's copyright file
# Both: kvod and kvoctl stripped, with their debug symbols beside them as
# /usr/lib/debug/.build-id/NN/REST.debug (what gdb, coredumpctl and eu-stack
# look up by the binaries' build id; the package puts them in kvod-dbgsym);
# the man pages gzipped; kvoctl's completions; the four systemd units
# (kvod-metrics.{service,timer} not enabled: docs/OPERATIONS.md, "Metrics");
# the HTTP drop-in kvod-http.conf, inactive, in share/kvod (an admin copies it
# into kvod.service.d: docs/OPERATIONS.md, "HTTP under systemd");
# systemd-sysusers' kvod.conf; /etc/default/kvod; README.md, CHANGELOG.md and
# every user's document of docs/ (all but ARCHITECTURE.md, which is for
# changing kvod): the ones --help and the man pages name among them.
# SCRATCH is a directory for the files made on the way (stripped binaries,
# completions, rewritten units).

# The documents installed from docs/, beside README.md and CHANGELOG.md.
install_docs() {
  local doc
  for doc in docs/*.md; do
    [ "$doc" != docs/ARCHITECTURE.md ] && echo "$doc"
  done
}

# strip_with_debug BINARY SCRATCH: prints "STRIPPED DEBUG_FILE BUILD_ID": a
# stripped copy of BINARY (as dh_strip strips) that names, by a gnu-debuglink,
# a compressed copy of its debug symbols.
strip_with_debug() {
  local binary=$1 scratch=$2 name build_id
  name=$(basename "$binary")
  build_id=$(readelf -n "$binary" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
  [ -n "$build_id" ] || { echo "install-files.sh: $binary has no build id" >&2; return 1; }
  mkdir -p "$scratch/debug"
  objcopy --only-keep-debug --compress-debug-sections "$binary" "$scratch/debug/$build_id.debug"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note \
    -o "$scratch/$name" "$binary"
  objcopy --add-gnu-debuglink="$scratch/debug/$build_id.debug" "$scratch/$name"
  echo "$scratch/$name $scratch/debug/$build_id.debug $build_id"
}

install_files() {
  local layout=$1 bin_path=$2 scratch=$3
  local usr unit_dir zsh_dir exe stripped debug build_id page shell unit doc
  case "$layout" in
    local) usr=$prefix; unit_dir=$prefix/lib/systemd/system; zsh_dir=$prefix/share/zsh/site-functions ;;
    debian) usr=/usr; unit_dir=/lib/systemd/system; zsh_dir=/usr/share/zsh/vendor-completions ;;
    *) echo "install-files.sh: unknown layout $layout" >&2; return 2 ;;
  esac
  for exe in kvod kvoctl; do
    [ -x "$bin_path/$exe" ] || { echo "install-files.sh: $bin_path/$exe is missing; build first" >&2; return 1; }
    read -r stripped debug build_id < <(strip_with_debug "$bin_path/$exe" "$scratch")
    put "$stripped" "$usr/bin/$exe" 0755
    put "$debug" "/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug" 0644
  done
  for page in man8/kvod.8 man1/kvoctl.1; do
    gzip -9n <"docs/man/${page#*/}" >"$scratch/${page#*/}.gz"
    put "$scratch/${page#*/}.gz" "$usr/share/man/$page.gz" 0644
  done
  # A completion is sourced, not run: no #! line (lintian).
  "$bin_path/kvoctl" --generate-completion-script bash | sed '1{/^#!/d}' >"$scratch/kvoctl.bash"
  for shell in zsh fish; do
    "$bin_path/kvoctl" --generate-completion-script "$shell" >"$scratch/kvoctl.$shell"
  done
  put "$scratch/kvoctl.bash" "$usr/share/bash-completion/completions/kvoctl" 0644
  put "$scratch/kvoctl.zsh" "$zsh_dir/_kvoctl" 0644
  put "$scratch/kvoctl.fish" "$usr/share/fish/vendor_completions.d/kvoctl.fish" 0644
  # The units name /usr/local (install.sh's default prefix): rewritten to where kvod is.
  for unit in kvod.service kvod.socket kvod-metrics.service kvod-metrics.timer; do
    sed "s|/usr/local/|$usr/|g" "systemd/$unit" >"$scratch/$unit"
    put "$scratch/$unit" "$unit_dir/$unit" 0644
  done
  # The HTTP drop-in, where systemd does not read it: the admin opts in by copying it
  # to /etc/systemd/system/kvod.service.d/ (docs/OPERATIONS.md, "HTTP under systemd").
  sed "s|/usr/local/|$usr/|g" systemd/kvod-http.conf >"$scratch/kvod-http.conf"
  put "$scratch/kvod-http.conf" "$usr/share/kvod/kvod-http.conf" 0644
  put systemd/kvod.sysusers "$usr/lib/sysusers.d/kvod.conf" 0644
  put README.md "$usr/share/doc/kvod/README.md" 0644
  put CHANGELOG.md "$usr/share/doc/kvod/CHANGELOG.md" 0644
  put NOTICE "$usr/share/doc/kvod/NOTICE" 0644
  for doc in $(install_docs); do
    put "$doc" "$usr/share/doc/kvod/$(basename "$doc")" 0644
  done
  case "$layout" in
    local) put LICENSE "$usr/share/doc/kvod/LICENSE" 0644 ;;
    # The licence is in Debian's copyright file (lintian: extra-license-file).
    debian) put packaging/deb/copyright /usr/share/doc/kvod/copyright 0644 ;;
  esac
}
