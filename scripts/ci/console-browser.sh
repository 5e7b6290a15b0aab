#!/usr/bin/env bash
# kvod's console in a real browser (issue 31; docs/HTTP.md, "The console"): Debian's
# chromium driven by Playwright for Python (its wheel, no browser download), against the
# kvod and kvoctl of the debug build scripts/test.sh made. Tests/Browser/console_test.py says what it checks.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh --test chromium
python3 -c "import playwright" 2>/dev/null ||
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore playwright
swift build --product kvod
swift build --product kvoctl
bin=$(swift build --show-bin-path)
python3 Tests/Browser/console_test.py "$bin"
