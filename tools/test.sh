#!/usr/bin/env bash
# Builds gpuclean (via tools/setup.sh) and runs the whole test suite with
# ctest, including the LiteRT.js conformance tests and a bounded fuzz run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
tools/setup.sh
ctest --test-dir "${GPUCLEAN_BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
