#!/usr/bin/env bash
# CI: KVOClient's DocC catalog builds without a warning (swift-docc-plugin,
# `swift package generate-documentation --target KVOClient`, with DocC's
# --warnings-as-errors), and every public symbol of KVOClient has a doc
# comment (DocC itself warns about missing ones only for parameters; the
# symbol graph it was built from tells the rest). Symbols that KVOClient's
# types inherit from the standard library (map, filter, !=) are not its own.
set -euo pipefail
cd "$(dirname "$0")/../.."
log=$(mktemp)
started=$(mktemp)  # older than the symbol graph this run writes
trap 'rm -f "$log" "$started"' EXIT
swift package generate-documentation --target KVOClient --warnings-as-errors 2>&1 | tee "$log"
if grep -E "^(warning|error):" "$log" >/dev/null; then
  echo "docc: DocC warned about KVOClient's documentation (above)"
  exit 1
fi
graph=$(find .build -path "*/extracted-symbols/*/KVOClient/KVOClient.symbols.json" -newer "$started" | head -1)
[ -n "$graph" ] || { echo "docc: no symbol graph of KVOClient was written"; exit 1; }
undocumented=$(jq -r '.symbols[]
  | select(.identifier.precise | contains("::SYNTHESIZED::") | not)
  | select(.accessLevel == "public" or .accessLevel == "open")
  | select(.docComment == null)
  | "\(.kind.identifier) \(.pathComponents | join("."))"' "$graph")
if [ -n "$undocumented" ]; then
  echo "docc: public symbols of KVOClient without a doc comment:"; echo "$undocumented"
  exit 1
fi
echo "docc: KVOClient's catalog built without a warning; $(jq '[.symbols[] | select(.identifier.precise | contains("::SYNTHESIZED::") | not) | select(.accessLevel == "public" or .accessLevel == "open")] | length' "$graph") public symbols, each documented"
