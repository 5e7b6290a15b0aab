#!/usr/bin/env bash
# CI: builds the fuzz target (framing + request decoding + engine, see
# Sources/KVOFuzzing) with libFuzzer and AddressSanitizer, and fuzzes it for
# FUZZ_SECONDS (default 45) from the committed inputs in Fuzz/. New inputs go
# to a scratch directory, not into the repository; a crash leaves its input in
# .build-fuzz/crashes/ and fails the step.
#
# Longer runs, e.g. an hour on every core, then keep what they found:
#   FUZZ_SECONDS=3600 FUZZ_JOBS=$(nproc) scripts/ci/fuzz.sh
#   .build-fuzz/release/kvod-fuzz -set_cover_merge=1 Fuzz/corpus .build-fuzz/work
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${FUZZ_SECONDS:-45}"
jobs="${FUZZ_JOBS:-1}"
echo "== fuzz: building kvod-fuzz (release, -sanitize=fuzzer,address) into .build-fuzz"
start=$SECONDS
# libFuzzer's main is not linked (SwiftPM gives the executable its own), so
# kvod-fuzz finds libFuzzer's driver with dlsym: export it.
swift build -c release --product kvod-fuzz --scratch-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xlinker --export-dynamic-symbol=LLVMFuzzerRunDriver 2>&1 \
  | { grep -v "Cannot export local symbol '__asan" || true; }
echo "== fuzz: build took $((SECONDS - start)) s; fuzzing for $seconds s with $jobs job(s)"
mkdir -p .build-fuzz/work .build-fuzz/crashes
log=.build-fuzz/fuzz.log
parallel=()
[ "$jobs" -le 1 ] || parallel=(-jobs="$jobs" -workers="$jobs")
status=0
SWIFT_BACKTRACE=enable=no .build-fuzz/release/kvod-fuzz \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 -dict=Fuzz/kvod.dict \
  "${parallel[@]}" -print_final_stats=1 \
  -artifact_prefix=.build-fuzz/crashes/ \
  .build-fuzz/work Fuzz/corpus Fuzz/seeds Fuzz/regressions > "$log" 2>&1 || status=$?
grep -h -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|==[0-9]+==" "$log" fuzz-*.log 2>/dev/null || true
if [ "$status" -ne 0 ]; then
  tail -50 "$log"
  echo "== fuzz: FAILED (status $status); inputs that broke kvod:"
  ls -l .build-fuzz/crashes/
  exit "$status"
fi
echo "== fuzz: no invariant broken"
