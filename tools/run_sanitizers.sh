#!/usr/bin/env bash
# The sanitizer lanes of the test command:
#  1. ASan + UBSan: the unit-labelled tests (tests/CMakeLists.txt's labels)
#     and the CLI they drive, built in build-fuzz/ on the libraries the
#     fuzzers instrument (RelWithDebInfo, graph invariant checks on). The
#     hostile-model tests run every command of this instrumented gpuclean.
#  2. TSan: the thread pool and the kernels that split work over it
#     (tests/exec/thread_pool_test.cc), in build-tsan/.
# Any sanitizer report fails the lane (halt_on_error), as does a failing test.
#
# Usage: tools/run_sanitizers.sh [all|asan|tsan]   (from any directory)
# Needs: clang, clang++, libclang-rt-14-dev, cmake, ninja, GoogleTest.
set -euo pipefail

die() { echo "run_sanitizers: $*" >&2; exit 2; }
WHICH="${1:-all}"
case "$WHICH" in all | asan | tsan) ;; *) die "which lane: all, asan or tsan, got '$WHICH'" ;; esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || die "cannot locate repository root"
for tool in clang clang++ cmake ninja; do command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"; done
JOBS="$(nproc)"

configure() {  # DIR EXTRA-CMAKE-ARGS...
  local dir=$1
  shift
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
    CC=clang CXX=clang++ cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DGPUCLEAN_BUILD_TESTS=OFF -DGPUCLEAN_BUILD_BENCH=OFF -DGPUCLEAN_BUILD_PYTHON=OFF "$@" >/dev/null ||
      die "cmake configure of $dir failed (is libclang-rt-14-dev installed?)"
  fi
}

status=0
if [[ "$WHICH" != tsan ]]; then
  BUILD="$ROOT/build-fuzz"
  configure "$BUILD" -DGPUCLEAN_BUILD_FUZZERS=ON
  ninja -C "$BUILD" unit_tests_asan gpuclean_asan || die "building the ASan lane failed"
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # Shards in parallel, one log each; the logs of a failing shard are shown.
  pids=()
  for ((shard = 0; shard < JOBS; ++shard)); do
    GTEST_TOTAL_SHARDS=$JOBS GTEST_SHARD_INDEX=$shard "$BUILD/fuzz/unit_tests_asan" --gtest_brief=1 \
      >"$BUILD/asan-shard$shard.log" 2>&1 &
    pids+=($!)
  done
  for ((shard = 0; shard < JOBS; ++shard)); do
    if wait "${pids[$shard]}"; then
      echo "run_sanitizers: asan shard $shard/$JOBS: $(grep -E '^\[  PASSED  \]' "$BUILD/asan-shard$shard.log")" >&2
    else
      echo "run_sanitizers: asan shard $shard/$JOBS FAILED:" >&2
      tail -n 80 "$BUILD/asan-shard$shard.log" >&2
      status=1
    fi
  done
fi

if [[ "$WHICH" != asan ]]; then
  BUILD="$ROOT/build-tsan"
  configure "$BUILD" -DGPUCLEAN_BUILD_TSAN=ON
  ninja -C "$BUILD" thread_tests_tsan || die "building the TSan lane failed"
  if TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" "$BUILD/sanitize/thread_tests_tsan" --gtest_brief=1 \
    >"$BUILD/tsan.log" 2>&1; then
    echo "run_sanitizers: tsan: $(grep -E '^\[  PASSED  \]' "$BUILD/tsan.log")" >&2
  else
    echo "run_sanitizers: tsan FAILED:" >&2
    tail -n 80 "$BUILD/tsan.log" >&2
    status=1
  fi
fi

if ((status != 0)); then exit 1; fi
echo "run_sanitizers: no findings" >&2
