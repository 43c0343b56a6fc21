#!/usr/bin/env bash
# Builds gpuclean (via tools/setup.sh), fuzzes the model loader, the ONNX
# importer and the post-loader graph paths for a bounded time
# (tools/run_fuzz.sh, ASan+UBSan), runs the sanitizer lanes (the unit tests
# and the CLI under ASan+UBSan, the thread pool and parallel kernels under
# TSan: tools/run_sanitizers.sh), then runs the whole test suite with ctest,
# including the LiteRT.js conformance tests. ctest's summary line is the last
# thing printed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
GPUCLEAN_BUILD_TARGETS=all tools/setup.sh
tools/run_fuzz.sh "${GPUCLEAN_FUZZ_SECONDS:-90}" >&2
tools/run_sanitizers.sh >&2
ctest --test-dir "${GPUCLEAN_BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
