#!/usr/bin/env bash
# The real-weight npm models (tools/fetch_npm_onnx.sh) on our interpreter
# against onnxruntime, both at one thread by default: each is converted as a
# user would (its dynamic inputs pinned, silero's sample rate fixed with
# --input-value, --allow-remaining where the default target keeps ops off
# the GPU: the speed of the graph does not depend on that), run by
# `gpuclean run --repeat N` on generated inputs, and the same inputs (by
# name) go to probe/onnx_run.mjs on the original .onnx. Prints one line per
# model and ours / onnxruntime; run_ms on both sides is the median of runs
# 2..N. The convert benchmark (bench/convert_bench.cc) covers the fixtures.
#
# Usage: tools/bench_npm_models.sh [--threads T] [--repeat N] [OUT_DIR]
#   (default: 1 thread, 200 runs, .cache/npm-bench). Exit 0 when every model
#   converted and ran on both sides, 1 otherwise, 2 when fixtures are missing.
set -uo pipefail

die() { echo "bench_npm_models: $*" >&2; exit 2; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || die "cannot locate repository root"
GPUCLEAN="$ROOT/build/gpuclean"
NPM=.cache/onnx/npm
THREADS=1
REPEAT=200
OUT="$ROOT/.cache/npm-bench"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) THREADS="${2:?--threads needs a value}"; shift 2 ;;
    --repeat) REPEAT="${2:?--repeat needs a value}"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) OUT="$1"; shift ;;
  esac
done
OUT="$(realpath -m "$OUT")"
cd "$ROOT"
[[ -x "$GPUCLEAN" ]] || die "build/gpuclean missing: run tools/setup.sh"
[[ -d "$NPM" ]] || die "$NPM missing: run tools/fetch_npm_onnx.sh"
mkdir -p "$OUT"

# An int64 scalar .npy (silero's sample rate) for onnxruntime.
int64_npy() {
  node -e '
    const [file, value] = process.argv.slice(1);
    let h = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: (), }";
    while ((10 + h.length + 1) % 64) h += " ";
    h += "\n";
    const b = Buffer.alloc(10 + h.length + 8);
    b.write("\x93NUMPY", 0, "latin1"); b[6] = 1; b[7] = 0;
    b.writeUInt16LE(h.length, 8); b.write(h, 10, "latin1");
    b.writeBigInt64LE(BigInt(value), 10 + h.length);
    require("fs").writeFileSync(file, b);' "$1" "$2"
}
# node -e: a field of a JSON file.
json_field() { node -e 'const m = require(process.argv[1]); console.log(eval("m" + process.argv[2]));' "$1" "$2"; }

failed=0
rows=()
# NAME  then the convert flags the model needs.
bench() {
  local name=$1; shift
  local model="$NPM/$name.onnx" dir="$OUT/$name"
  if [[ ! -f "$model" ]]; then echo "$name: $model missing"; failed=1; return; fi
  rm -rf "$dir"; mkdir -p "$dir"
  echo "== $name: convert" >&2
  "$GPUCLEAN" convert "$model" -o "$dir/model.tflite" -q --allow-remaining "$@" >"$dir/convert.txt" 2>&1
  if [[ ! -f "$dir/model.tflite" ]]; then
    echo "$name: not converted: $(grep -v '^convert:' "$dir/convert.txt" | head -1)"; failed=1; return
  fi
  echo "== $name: timing (ours, then onnxruntime)" >&2
  if ! "$GPUCLEAN" run "$dir/model.tflite" --out "$dir/ours" --threads "$THREADS" --repeat "$REPEAT" >/dev/null 2>"$dir/ours.err"; then
    echo "$name: our run failed: $(head -1 "$dir/ours.err")"; failed=1; return
  fi
  local inputs=()
  while IFS= read -r arg; do inputs+=(--input "$arg"); done < <(node -e '
    const m = require(process.argv[1]);
    for (const i of m.inputs) console.log(`${i.name}=${process.argv[2]}/${i.file}`);' "$dir/ours/meta.json" "$dir/ours")
  for flag in "$@"; do
    if [[ "$flag" == sr=* ]]; then int64_npy "$dir/sr.npy" "${flag#sr=}"; inputs+=(--input "sr=$dir/sr.npy"); fi
  done
  if ! node probe/onnx_run.mjs "$model" "${inputs[@]}" --threads "$THREADS" --repeat "$REPEAT" --out "$dir/ort" \
       >/dev/null 2>"$dir/ort.err"; then
    echo "$name: onnxruntime failed: $(head -1 "$dir/ort.err")"; failed=1; return
  fi
  local ours ort
  ours=$(json_field "$dir/ours/meta.json" .run_ms)
  ort=$(json_field "$dir/ort/meta.json" .run_ms)
  rows+=("$(node -e 'const [n, o, t] = process.argv.slice(1);
    console.log(`${n.padEnd(20)} ${(+o).toFixed(3).padStart(10)} ${(+t).toFixed(3).padStart(10)} ${(o / t).toFixed(2).padStart(6)}`);' \
    "$name" "$ours" "$ort")")
}

bench blazeface_128
bench mlsd_tiny_320
bench oww_melspectrogram --input-shape input=1,16000
bench oww_embedding --input-shape input_1=1,76,32,1
bench oww_hey_jarvis
bench ppocr_cls --input-shape x=1,3,48,192
bench ppocrv4_det --input-shape x=1,3,640,640
bench ppocrv4_rec --input-shape x=1,3,48,320
bench silero_vad_v4 --input-shape input=1,512 --input-shape h=2,1,64 --input-shape c=2,1,64 --input-value sr=16000
bench silero_vad_v5 --input-shape input=1,512 --input-shape state=2,1,128 --input-value sr=16000
bench silero_vad_op18 --input-shape input=1,512 --input-shape state=2,1,128 --input-value sr=16000

echo
echo "model                  ours ms     ort ms  ratio   ($THREADS thread(s), median of runs 2..$REPEAT)"
for r in "${rows[@]}"; do echo "$r"; done
exit $failed
