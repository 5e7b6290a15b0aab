#!/usr/bin/env bash
# CI: the shell commands the documentation shows still work. Every fenced
# block marked as shell (```sh, ```bash, ```console) in README.md and
# docs/*.md is run by bash -e -o pipefail, as written, in an empty folder,
# against a fresh kvod of its own (debug binaries, already built by
# scripts/test.sh; kvod and kvoctl on PATH, KVOD_SOCKET set), with standard
# input empty. A second word in the fence's info string says how:
#   ```sh                 must exit 0 within 20 s
#   ```sh long-running    a watcher or a holder: must still run after 2 s
#                         (a failing command before it ends the block early)
#   ```sh each-line       a list of commands to pick from (kvoctl's cheat
#                         sheet): each line runs on its own, for at most 2 s,
#                         and must not be refused as usage (exit 2 with
#                         ArgumentParser's `Error: ` line or kvoctl's
#                         `kvoctl: unknown command` line: an unknown command
#                         or option, a missing argument); other failures
#                         (no such value, a condition) are the line's business
#   ```sh example         not run (it needs the host's systemd or root, a
#                         release build, minutes, or state set up first, or
#                         a test already runs it); only checked by bash -n
# In a ```console block only the lines after a `$ ` prompt are commands.
# A block that starts `kvod` itself gets no kvod from this script.
# Usage: scripts/ci/doc-commands.sh [FILE.md ...]  (default: README.md docs/*.md)
# BIN_DIR=.build/debug names where kvod and kvoctl are.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bin=$root/${BIN_DIR:-.build/debug}
for tool in kvod kvoctl; do
  [ -x "$bin/$tool" ] || { echo "doc-commands: no $bin/$tool: run swift build first"; exit 1; }
done
finish_seconds=20
running_seconds=2
[ $# -gt 0 ] || set -- README.md docs/*.md

work=$(mktemp -d /tmp/kvod-doc-commands.XXXXXX)
kvod_pid=""
block_pid=""
cleanup() {
  [ -z "$block_pid" ] || kill -KILL -- "-$block_pid" 2>/dev/null || true
  [ -z "$kvod_pid" ] || kill "$kvod_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Each block to its own file; the index says where it came from and how to run it.
mkdir "$work/blocks"
: >"$work/index"
for page in "$@"; do
  awk -v page="$page" -v prefix="$work/blocks/$(basename "$page" .md)-" -v index_file="$work/index" '
    /^```/ {
      if (open) { open = 0; close(file); next }
      if (other) { other = 0; next }
      split(substr($0, 4), words, " ")
      if (words[1] != "sh" && words[1] != "bash" && words[1] != "console") { other = 1; next }
      mode = "run"
      for (i = 2; i in words; i++) if (words[i] ~ /^(example|long-running|each-line)$/) mode = words[i]
      file = sprintf("%s%04d.sh", prefix, NR); language = words[1]; open = 1
      printf "" > file
      printf "%s\t%s:%d\t%s\n", file, page, NR, mode >> index_file
      next
    }
    open && language == "console" { if (sub(/^\$ /, "")) print > file; next }
    open { print > file }
  ' "$page"
done

start_kvod() {
  "$bin/kvod" --socket "$work/kvod.sock" >"$work/kvod.log" 2>&1 &
  kvod_pid=$!
  for _ in $(seq 100); do
    "$bin/kvoctl" --socket "$work/kvod.sock" --quiet ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "doc-commands: kvod did not start:"; cat "$work/kvod.log"; exit 1
}

stop_kvod() {
  [ -n "$kvod_pid" ] || return 0
  kill "$kvod_pid" 2>/dev/null || true
  wait "$kvod_pid" 2>/dev/null || true
  kvod_pid=""
  rm -f "$work/kvod.sock"
}

# Whether pid is still running, waiting up to $2 seconds for it to end.
ended_within() {
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# Runs `bash -e -o pipefail ARGS` in $folder with kvod and kvoctl on PATH, as a
# process group of its own (setsid), so that what it leaves in the background ends with it.
launch() {
  (cd "$folder" && PATH="$bin:$PATH" KVOD_SOCKET="$work/kvod.sock" \
    exec setsid bash -e -o pipefail "$@" </dev/null >"$work/out" 2>&1) &
  block_pid=$!
}

end_group() {
  kill -KILL -- "-$block_pid" 2>/dev/null || true
  wait "$block_pid" 2>/dev/null || true
  block_pid=""
}

# The first line of an each-line block that is refused as usage, with its output in $work/refused.
first_refused_line() {
  local line status
  while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    launch -c "$line"
    if ended_within "$block_pid" "$running_seconds"; then
      status=0; wait "$block_pid" || status=$?
      if [ "$status" -eq 2 ] && grep -q -e '^Error: ' -e '^kvoctl: unknown command ' "$work/out"; then
        end_group; cp "$work/out" "$work/refused"; echo "$line"; return
      fi
    fi
    end_group
  done <"$1"
}

ran=0 kept=0 lines=0 shown=0 broken=0
while IFS=$'\t' read -r file where mode; do
  if [ "$mode" = example ]; then
    if ! bash -n "$file" 2>"$work/syntax"; then
      echo "BROKEN $where (example): not valid shell:"; cat "$work/syntax"; broken=$((broken + 1))
    fi
    shown=$((shown + 1))
    continue
  fi
  folder=$(mktemp -d "$work/run.XXXXXX")
  grep -qE '^[[:space:]]*kvod([[:space:]]|$)' "$file" || start_kvod
  failure=""
  if [ "$mode" = each-line ]; then
    refused=$(first_refused_line "$file")
    if [ -n "$refused" ]; then
      failure="refused as usage: $refused"; cp "$work/refused" "$work/out"
    fi
    lines=$((lines + 1))
  else
    launch "$file"
  fi
  if [ "$mode" = each-line ]; then
    :
  elif [ "$mode" = long-running ]; then
    if ended_within "$block_pid" "$running_seconds"; then
      status=0; wait "$block_pid" || status=$?
      failure="ended (status $status) within $running_seconds s; a long-running block must keep running"
    fi
    kept=$((kept + 1))
  else
    if ended_within "$block_pid" "$finish_seconds"; then
      status=0; wait "$block_pid" || status=$?
      [ "$status" -eq 0 ] || failure="exited $status"
    else
      failure="still running after $finish_seconds s (mark it long-running?)"
    fi
    ran=$((ran + 1))
  fi
  [ -z "$block_pid" ] || end_group
  stop_kvod
  if [ -n "$failure" ]; then
    broken=$((broken + 1))
    echo "BROKEN $where ($mode): $failure"
    sed 's/^/  | /' "$file"
    echo "  output:"; sed 's/^/  > /' "$work/out"
  else
    echo "ok $where ($mode)"
  fi
done <"$work/index"

echo "doc commands: $ran ran to the end, $kept kept running, $lines run line by line, $shown shown as examples; $broken broken"
[ "$broken" -eq 0 ]
