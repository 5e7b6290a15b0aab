# Sourced by the profile-*.sh scripts, with $kvod set: a stripped copy of it at
# "$work/kvod" (valgrind 3.19 cannot read DWARF 5), $work removed on exit.
command -v valgrind > /dev/null || { echo "valgrind is needed (apt-get install -y valgrind)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$kvod" "$work/kvod"
