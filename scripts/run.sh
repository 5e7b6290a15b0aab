#!/usr/bin/env bash
# Installs what building needs (scripts/install-deps.sh --build), builds kvod in release mode and runs it in the foreground.
# Arguments go to kvod (e.g. --socket /tmp/kvod.sock). Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build
swift build -c release --product kvod
exec .build/release/kvod "$@"
