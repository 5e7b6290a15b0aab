#!/usr/bin/env bash
# Makes a release: CHANGELOG.md's "Unreleased" section becomes version X.Y.Z
# (dated today), in a commit of its own, tagged X.Y.Z with an annotated tag
# whose message is that section. Tags are plain semantic versions, without a
# "v": SwiftPM's `.package(url:…, from: "X.Y.Z")` reads only those, and kvod's
# build reads its version from the nearest one (scripts/build-info.sh).
#
# It refuses, changing nothing, unless: X.Y.Z is a semantic version (an
# optional -prerelease) above every existing version tag; no tag X.Y.Z exists;
# the tree is clean (no change, no untracked file); CHANGELOG.md has an
# "## Unreleased" section with at least one entry and no "## X.Y.Z" yet.
# It pushes nothing: it prints the command that publishes the release.
# Run it on the commit CI passed; the release commit only edits CHANGELOG.md.
#
# Usage: scripts/release.sh X.Y.Z
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "release.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || { echo "usage: scripts/release.sh X.Y.Z" >&2; exit 2; }
version=$1
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'
[[ "$version" =~ $semver ]] || die "$version is not a semantic version X.Y.Z (no leading v: SwiftPM reads plain versions)"

git rev-parse --git-dir >/dev/null 2>&1 || die "not in a git checkout"
[ -z "$(git status --porcelain)" ] || die "the tree has changes or untracked files; commit or remove them first:
$(git status --short)"
! git rev-parse -q --verify "refs/tags/$version" >/dev/null || die "tag $version exists already"
latest=$(git tag --list '[0-9]*.[0-9]*.[0-9]*' | sort -V | tail -n 1)
if [ -n "$latest" ] && [ "$(printf '%s\n%s\n' "$latest" "$version" | sort -V | tail -n 1)" != "$version" ]; then
  die "$version is not above the latest version tag, $latest"
fi

changelog=CHANGELOG.md
grep -qx '## Unreleased' "$changelog" || die "$changelog has no '## Unreleased' section"
! grep -qE "^## $(sed 's/\./\\./g' <<<"$version")( |$)" "$changelog" || die "$changelog has a section for $version already"
# The entries: the lines after "## Unreleased" up to the next section, blank lines dropped.
entries=$(awk '/^## Unreleased$/ { inside = 1; next } /^## / { inside = 0 } inside && NF' "$changelog")
[ -n "$entries" ] || die "$changelog's Unreleased section is empty: nothing to release"

date=$(date -u +%Y-%m-%d)
# A new, empty Unreleased section above the released one.
awk -v heading="## $version ($date)" \
  '/^## Unreleased$/ && !done { print; print ""; print heading; done = 1; next } { print }' \
  "$changelog" >"$changelog.new"
mv "$changelog.new" "$changelog"
git add "$changelog"
git commit -q -m "Release $version"
git tag -a "$version" -F - <<EOF
kvod $version ($date)

$entries
EOF
echo "release.sh: committed \"Release $version\" ($(git rev-parse --short HEAD)) and tagged $version."
echo "Check it (git show $version), then publish it: git push origin HEAD $version"
