#!/usr/bin/env bash
# Installs what is missing, builds everything and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
# One test at a time: the suite starts many daemons and load generators, and
# on 2 cores parallel suites starve each other into timeouts.
swift test --skip-build --no-parallel
