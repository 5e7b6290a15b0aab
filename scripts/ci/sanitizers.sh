#!/usr/bin/env bash
# CI: the test suite under AddressSanitizer (but kvoctl's command-line
# suites), then its multi-threaded part under ThreadSanitizer (kvod and the tests both built with the sanitizer, each in its own scratch
# path). Usage: scripts/ci/sanitizers.sh [address] [thread]
#
# The suite runs one test at a time (--no-parallel): sanitized processes are
# several times slower, and in parallel on two cores the client tests' 20 s
# deadlines were missed (kvoctl observe, docs/RELIABILITY.md). Each test still
# runs its own threads and processes concurrently, which is what the
# sanitizers check.
#
# KVOD_TEST_SANITIZER tells the tests: memory bounds are not checked (ASan's
# quarantine and shadow memory dominate RSS) and the heaviest load tests run
# at a tenth of their size; every other check stays. Suppressions name code
# that is not kvod's (scripts/ci/*.supp). gold warns "Cannot export local
# symbol '__asan_…'" about the toolchain's ASan runtime at every ASan link
# (about 140 lines, nothing of kvod's); those lines are filtered out. A suite
# that hangs is killed after SANITIZER_TEST_TIMEOUT seconds (default 1800),
# which fails the step instead of the whole CI run's time limit.
set -euo pipefail
cd "$(dirname "$0")/../.."
here="$PWD/scripts/ci"
export SWIFT_BACKTRACE=enable=no
sanitizers=("$@")
# ThreadSanitizer runs where kvod's code runs on more than one thread: the
# client library and kvoctl (their reader threads), the storage writer and WAL
# syncer (kvod with --data-dir), and the daemon suites that start kvod with a
# data directory. The engine and the in-memory daemon run on one loop thread,
# which ASan's whole-suite run covers; TSan over all of it took 638 s. Of
# kvoctl's suites only those whose kvoctl runs its reader thread against
# signals and endings (observe, exit reasons): the others start hundreds of
# kvoctl processes to check what the command line prints, 270 s under TSan
# for no thread that KVOClientTests does not already run.
thread_suites='KVOClientTests\.|KVOStorageTests\.|kvoctlTests\.(ObserveTests|ExitReasonTests|HoldCommandTests)|kvodTests\.(DurabilityTests|LeaseDaemonTests|DataDirectoryModeTests|CanonicalNameTests|DocumentDepthTests|HistoryBytesTests|ConditionalWriteTests|LifecycleTests|MetricsTests)'
# ASan runs everything but kvoctl's command-line suites (what it prints for
# each argument, recipes local and across kvods over etcd, resume files: 80 s under ASan). kvoctl's unsafe code
# is KVOClient's, which KVOClientTests and kvoctl's observe suites run.
# FuzzCorpusTests too: fuzz.sh runs every input of its folders under ASan first.
# And the cluster suites that wait out etcd's and kvod's clocks (staleness, lease
# lifetimes, freshness, history, catching up: 64 s under ASan, mostly
# waiting): the code they reach is KVOCluster's (KVOClusterTests, under ASan) and the
# etcd client's, which the other cluster suites run under ASan too.
address_skip='kvoctlTests\.(RecipeTests|ClusterRecipeTests|ValueArgumentTests|ResumeCommandTests|CommandTests|AtomicCommandTests|NamespaceCommandTests)|FuzzCorpusTests|kvodTests\.Cluster(Stale|Lifetime|Freshness|History|CatchUp)Tests'
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(address thread)
for s in "${sanitizers[@]}"; do
    case "$s" in
      address) scratch=.build-asan; filter=(--skip "$address_skip") ;;
      thread) scratch=.build-tsan; filter=(--filter "$thread_suites") ;;
      *) echo "unknown sanitizer $s (address or thread)" >&2; exit 2 ;;
    esac
    echo "== $s sanitizer: building kvod and the tests into $scratch"
    start=$SECONDS
    swift build --build-tests --sanitize="$s" --scratch-path "$scratch" 2>&1 \
      | { grep -v "Cannot export local symbol '__asan" || true; }
    echo "== $s sanitizer: build took $((SECONDS - start)) s; running the suite"
    start=$SECONDS
    # LSan reports leaks when the test process exits and then fails it.
    KVOD_TEST_SANITIZER="$s" \
    ASAN_OPTIONS="suppressions=$here/asan.supp:detect_leaks=1" \
    LSAN_OPTIONS="suppressions=$here/lsan.supp" \
    TSAN_OPTIONS="halt_on_error=1" \
      timeout --kill-after=30 "${SANITIZER_TEST_TIMEOUT:-1800}" \
      swift test --skip-build --no-parallel --sanitize="$s" --scratch-path "$scratch" ${filter[@]+"${filter[@]}"}
    echo "== $s sanitizer: suite took $((SECONDS - start)) s"
done
