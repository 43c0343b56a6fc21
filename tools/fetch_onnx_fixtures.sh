#!/usr/bin/env bash
# Export the seeded, random-weight ONNX fixture models (torchvision
# classifiers, DeepLabV3, a small ViT, Swin-T, MaxViT-T, a small DETR,
# mha_parity, rfdetr_seg_small, a two-stage RF-DETR-Seg-style detector and
# segmenter, and sam2_hiera_t_256, SAM 2.1 Hiera-T's image encoder at 256x256)
# into .cache/onnx/ (git-ignored) with tools/export_onnx_fixtures.py, each
# with its reference input/expected-output .npy files and a NAME.json summary.
# Needs Debian's python3-torch, python3-torchvision, python3-onnx and
# python3-numpy (no weights are downloaded: every model is built from a seed).
#
# Idempotent: a model whose NAME.onnx and NAME.json exist, and whose NAME.json
# is newer than the export script, is skipped; only the others are exported.
# Prints one line per model: PATH SIZE_BYTES (exported|cached).
# Usage: tools/fetch_onnx_fixtures.sh [--force] [MODEL...]
#   MODEL... limits the set (default: all but the on-demand ones); --force
#   re-exports. sam2_hiera_t (the 1024x1024 encoder, for the benchmarks) is
#   exported only when named.
#   PYTHON=... picks the interpreter (default: the first of /usr/bin/python3,
#   python3 that can import torch, torchvision and onnx).
set -euo pipefail

die() { echo "fetch_onnx_fixtures: $*" >&2; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || die "cannot locate repository root"
cd "$ROOT"

SCRIPT=tools/export_onnx_fixtures.py
DEST=.cache/onnx
[[ -f "$SCRIPT" ]] || die "$SCRIPT missing"

force=0
wanted=()
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $a" ;;
    *) wanted+=("$a") ;;
  esac
done

# --list needs no third-party module, so any Python 3 will do.
lister="${PYTHON:-}"
[[ -n "$lister" ]] || { command -v /usr/bin/python3 >/dev/null 2>&1 && lister=/usr/bin/python3 || lister=python3; }
all=()
mapfile -t defaults < <("$lister" "$SCRIPT" --list)
((${#defaults[@]})) || die "$SCRIPT --list printed no model (is Python 3 installed?)"
# Models too large for the test suite are exported only when named.
mapfile -t on_demand < <("$lister" "$SCRIPT" --list-on-demand)
all=("${defaults[@]}" "${on_demand[@]}")
((${#wanted[@]})) || wanted=("${defaults[@]}")

todo=()
for name in "${wanted[@]}"; do
  printf '%s\n' "${all[@]}" | grep -qx -- "$name" || die "unknown model '$name' (known: ${all[*]})"
  if (( ! force )) && [[ -f "$DEST/$name.onnx" && -f "$DEST/$name.json" && "$DEST/$name.json" -nt "$SCRIPT" ]]; then
    continue
  fi
  todo+=("$name")
done

rc=0
if ((${#todo[@]})); then
  py=""
  for cand in ${PYTHON:-} /usr/bin/python3 python3; do
    command -v "$cand" >/dev/null 2>&1 || continue
    if "$cand" -c 'import torch, torchvision, onnx, numpy' >/dev/null 2>&1; then py="$cand"; break; fi
  done
  [[ -n "$py" ]] || die "no Python with torch, torchvision, onnx and numpy: install the Debian packages python3-torch python3-torchvision python3-onnx python3-numpy"
  only="$(IFS=,; echo "${todo[*]}")"
  echo "fetch_onnx_fixtures: exporting $only" >&2
  "$py" "$SCRIPT" --out "$DEST" --only "$only" >&2 || rc=$?
fi

for name in "${wanted[@]}"; do
  f="$DEST/$name.onnx"
  [[ -f "$f" && -f "$DEST/$name.json" ]] || continue
  how=cached
  printf '%s\n' "${todo[@]}" | grep -qx -- "$name" && how=exported
  printf '%-56s %10d  %s\n' "$f" "$(wc -c <"$f")" "$how"
done
((rc == 0)) || die "$SCRIPT failed (exit $rc)"
