#!/usr/bin/env bash
# Regenerates the committed man pages docs/man/kvod.8 and docs/man/kvoctl.1
# from kvod's and kvoctl's --help, with swift-argument-parser's generate-manual
# plugin (which builds every product in debug mode first). Run it after
# changing an option or a command, and commit the result; scripts/install.sh
# installs these files and ManualPageTests checks they name every option.
# Usage: scripts/generate-manuals.sh
set -euo pipefail
cd "$(dirname "$0")/.."
outputs=.build/plugins/GenerateManual/outputs
mkdir -p docs/man
# page PRODUCT SECTION: the plugin writes a page for every product in that section.
page() {
  swift package generate-manual --configuration debug --section "$2" --authors "the kvod authors" >/dev/null
  # A blank line in a discussion is a paragraph break (mdoc warns on blank lines).
  sed 's/^$/.Pp/' "$outputs/$1/$1.$2" >"docs/man/$1.$2"
  # Defaults, non-ASCII value names and no phantom `help` subcommand (the plugin's omissions).
  python3 scripts/man-page-fixes.py "docs/man/$1.$2" ".build/debug/$1"
  echo "docs/man/$1.$2"
}
page kvod 8
page kvoctl 1
