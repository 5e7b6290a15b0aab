#!/usr/bin/env bash
# KVOClient as another project depends on it: `.package(url:…, from: "X.Y.Z")`
# on a release tag. SwiftPM refuses a versioned dependency whose product reaches
# a target with unsafe build flags, so this fails as soon as one creeps into
# what KVOClient is built from.
#
# In a temporary directory: clones this checkout's HEAD, releases it there with
# scripts/release.sh (one CHANGELOG line added, the next patch version after
# the newest tag or CHANGELOG section; so the release script runs too), writes
# a consumer package that depends on that clone `from:` the new tag and uses
# KVOClient, resolves it (offline: the clone's own dependencies come from the
# same places as this checkout's), builds it in debug (KVOClient and what it
# needs, nothing else), and runs it against the kvod of this checkout's debug
# build (scripts/test.sh made it): a set, then a get of the same value.
# Nothing is reused between runs, and nothing of the checkout is changed.
# Usage: scripts/ci/client-package.sh [KVOD]   (KVOD: default .build/debug/kvod)
set -euo pipefail
cd "$(dirname "$0")/../.."
repository=$(pwd)
kvod=$(realpath "${1:-.build/debug/kvod}")
[ -x "$kvod" ] || { echo "client-package.sh: no kvod at $kvod; build it first (swift build --product kvod)" >&2; exit 1; }

work=$(mktemp -d)
daemon=""
cleanup() {
  [ -z "$daemon" ] || kill "$daemon" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
started=$(date +%s)
step() { echo "-- $1 ($(( $(date +%s) - started )) s)"; }

step "releasing HEAD in a clone"
git clone -q "$repository" "$work/kvod"
(
  cd "$work/kvod"
  git config user.name "client-package.sh"
  git config user.email "ci@localhost"
  newest=$( (git tag --list '[0-9]*.[0-9]*.[0-9]*'; sed -nE 's/^## ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' CHANGELOG.md) |
    sort -V | tail -n 1)
  IFS=. read -r major minor patch <<<"${newest:-0.0.0}"
  patch=${patch%%-*}
  version="$major.$minor.$((patch + 1))"
  sed -i '/^## Unreleased$/a - A release made by scripts/ci/client-package.sh.' CHANGELOG.md
  git commit -q -am "An Unreleased line to release"
  scripts/release.sh "$version" >/dev/null
  [ "$(git cat-file -t "$version")" = tag ] || { echo "release.sh made no annotated tag $version" >&2; exit 1; }
  grep -qE "^## $version \([0-9]{4}-[0-9]{2}-[0-9]{2}\)$" CHANGELOG.md || { echo "release.sh did not date $version in CHANGELOG.md" >&2; exit 1; }
  echo "$version" >"$work/version"
)
version=$(cat "$work/version")
echo "   tagged $version"

mkdir -p "$work/consumer/Sources/consumer"
cat >"$work/consumer/Package.swift" <<EOF
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "consumer",
    platforms: [.macOS(.v13)],
    dependencies: [.package(url: "file://$work/kvod", from: "$version")],
    targets: [.executableTarget(name: "consumer", dependencies: [.product(name: "KVOClient", package: "kvod")])]
)
EOF
cat >"$work/consumer/Sources/consumer/main.swift" <<'EOF'
import KVOClient

// A set and a get through KVOClient, on the socket named by $KVOD_SOCKET.
let connection = try KVOConnection()
let seq = try await connection.set("consumer/1", "greeting", to: "hello")
let greeting = try await connection.get(String.self, "consumer/1", "greeting")
print("seq \(seq): \(greeting)")
EOF

# A home of its own, so no SwiftPM cache: the packages come from where a fresh machine gets
# them (the system's git configuration reads github.com from the machine's local copies).
fresh=(env HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache")
mkdir -p "$work/home"
step "resolving the consumer (from: \"$version\")"
(cd "$work/consumer" && "${fresh[@]}" swift package resolve)
step "building the consumer and KVOClient (debug)"
(cd "$work/consumer" && "${fresh[@]}" swift build 2>&1 | grep -E "error|warning:|Build complete" || true)
[ -x "$work/consumer/.build/debug/consumer" ] || { echo "client-package.sh: the consumer did not build" >&2; exit 1; }

step "running it against $kvod"
export KVOD_SOCKET="$work/kvod.sock"
"$kvod" --socket "$KVOD_SOCKET" >"$work/kvod.log" 2>&1 &
daemon=$!
for _ in $(seq 200); do [ -S "$KVOD_SOCKET" ] && break; sleep 0.05; done
[ -S "$KVOD_SOCKET" ] || { echo "kvod did not start: $(cat "$work/kvod.log")" >&2; exit 1; }
output=$("$work/consumer/.build/debug/consumer")
[ "$output" = "seq 1: hello" ] || { echo "client-package.sh: the consumer printed '$output', not 'seq 1: hello'" >&2; exit 1; }
step "the consumer printed '$output'"
