#!/usr/bin/env bash
# Installs what building needs (scripts/install-deps.sh --build), builds kvod and kvoctl in release mode
# (both in .build/release) and runs kvod in the foreground.
# Arguments go to kvod (e.g. --socket /tmp/kvod.sock). Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build
swift build -c release --product kvod
swift build -c release --product kvoctl
echo "kvoctl: $PWD/.build/release/kvoctl (export PATH=\"$PWD/.build/release:\$PATH\")" >&2
exec .build/release/kvod "$@"
