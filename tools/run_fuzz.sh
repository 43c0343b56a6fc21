#!/usr/bin/env bash
# Builds the libFuzzer targets for the model loader (fuzz/load_model_fuzzer.cc),
# the ONNX importer (fuzz/onnx_import_fuzzer.cc) and what comes after the
# loader (fuzz/graph_fuzzer.cc: mutated valid graphs through validation,
# lint, the interpreter, fix and split) with clang and ASan+UBSan in
# build-fuzz/, seeds their corpora (fixture models and a few tiny hand-made
# ones; small ONNX node tests from libonnx-testdata; the graph fuzzer builds
# its own base graphs), and fuzzes each for a bounded time: SECONDS in all,
# 40% to the model loader, 25% to the ONNX importer, 35% to the graph fuzzer.
#
# Usage: tools/run_fuzz.sh [SECONDS] [all|load_model|onnx_import|graph]
#        (default 60 all; from any directory)
# Needs: clang, clang++, libclang-rt-14-dev (the fuzzer and sanitizer
# runtimes), flatc, cmake, ninja. Fixture models come from
# tools/fetch_models.sh; without them only the hand-made seeds are used.
#
# Exit status: 0 when the fuzzer ran the whole time without a finding;
# non-zero when it found a crash, leak, timeout or out-of-memory input (kept
# in build-fuzz/fuzz-artifacts/ or build-fuzz/onnx-fuzz-artifacts/; reproduce
# with build-fuzz/fuzz/load_model_fuzzer FILE or
# build-fuzz/fuzz/onnx_import_fuzzer FILE) or when the build failed.
set -euo pipefail

die() { echo "run_fuzz: $*" >&2; exit 2; }

FUZZ_SECONDS="${1:-60}"
[[ "$FUZZ_SECONDS" =~ ^[0-9]+$ ]] || die "SECONDS must be a whole number, got '$FUZZ_SECONDS'"
WHICH="${2:-all}"
LOAD_SECONDS=0 ONNX_SECONDS=0 GRAPH_SECONDS=0
case "$WHICH" in
  all) ONNX_SECONDS=$((FUZZ_SECONDS / 4)); GRAPH_SECONDS=$((FUZZ_SECONDS * 35 / 100))
       LOAD_SECONDS=$((FUZZ_SECONDS - ONNX_SECONDS - GRAPH_SECONDS)) ;;
  load_model) LOAD_SECONDS=$FUZZ_SECONDS ;;
  onnx_import) ONNX_SECONDS=$FUZZ_SECONDS ;;
  graph) GRAPH_SECONDS=$FUZZ_SECONDS ;;
  *) die "which fuzzer: all, load_model, onnx_import or graph, got '$WHICH'" ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || die "cannot locate repository root"
BUILD="$ROOT/build-fuzz"
FUZZER="$BUILD/fuzz/load_model_fuzzer"
SEEDS="$BUILD/fuzz-seeds"
CORPUS="$BUILD/fuzz-corpus"
ARTIFACTS="$BUILD/fuzz-artifacts"

for tool in clang clang++ cmake ninja flatc; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
done

# --- build ---------------------------------------------------------------------
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPUCLEAN_BUILD_FUZZERS=ON -DGPUCLEAN_BUILD_TESTS=OFF -DGPUCLEAN_BUILD_BENCH=OFF >/dev/null ||
    die "cmake configure failed (is libclang-rt-14-dev installed?)"
fi
targets=()
((LOAD_SECONDS > 0)) && targets+=(load_model_fuzzer)
((ONNX_SECONDS > 0)) && targets+=(onnx_import_fuzzer)
((GRAPH_SECONDS > 0)) && targets+=(graph_fuzzer)
ninja -C "$BUILD" "${targets[@]}" || die "building ${targets[*]} failed"

# --- seeds (model loader) ---------------------------------------------------------------------
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$CORPUS" "$ARTIFACTS"
# Fixtures up to 256 KB (face_detection_short_range, selfie_segmentation*):
# they cover the common conv-net ops, and a run takes milliseconds; mutating
# the multi-megabyte ones mostly flips weight bytes, 10-100x slower.
MAX_FIXTURE_BYTES=$((256 << 10))
shopt -s nullglob
fixtures=()
for f in "$ROOT"/.cache/models/*.tflite; do
  if (($(stat -c %s "$f") <= MAX_FIXTURE_BYTES)); then fixtures+=("$f"); fi
done
shopt -u nullglob
if [[ ${#fixtures[@]} -eq 0 ]]; then
  echo "run_fuzz: no fixture models in .cache/models (run tools/fetch_models.sh); using hand-made seeds only" >&2
else
  cp "${fixtures[@]}" "$SEEDS/"
fi

# Tiny models written as flatbuffer JSON against our schema; flatc makes the
# binaries (NAME.tflite: the schema sets file_extension). Each reaches a
# different part of the reader.
JSON="$BUILD/fuzz-seeds-json"
rm -rf "$JSON"
mkdir -p "$JSON"
cat >"$JSON/add.json" <<'EOF'
{ version: 3,
  operator_codes: [ { deprecated_builtin_code: 0, builtin_code: "ADD", version: 1 } ],
  subgraphs: [ { name: "main",
    tensors: [ { shape: [1, 4], type: "FLOAT32", buffer: 0, name: "x" },
               { shape: [1, 4], type: "FLOAT32", buffer: 1, name: "c" },
               { shape: [1, 4], type: "FLOAT32", buffer: 0, name: "y" } ],
    inputs: [0], outputs: [2],
    operators: [ { opcode_index: 0, inputs: [0, 1], outputs: [2],
                   builtin_options_type: "AddOptions", builtin_options: { fused_activation_function: "RELU" } } ] } ],
  buffers: [ {}, { data: [0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64] } ] }
EOF
cat >"$JSON/conv_int8.json" <<'EOF'
{ version: 3,
  operator_codes: [ { deprecated_builtin_code: 3, builtin_code: "CONV_2D", version: 3 } ],
  subgraphs: [ { name: "conv",
    tensors: [ { shape: [1, 3, 3, 1], type: "INT8", buffer: 0, name: "in",
                 quantization: { scale: [0.5], zero_point: [-1] } },
               { shape: [2, 1, 1, 1], type: "INT8", buffer: 1, name: "w",
                 quantization: { scale: [0.25, 0.125], zero_point: [0, 0], quantized_dimension: 0 } },
               { shape: [2], type: "INT32", buffer: 2, name: "b" },
               { shape: [1, 3, 3, 2], type: "INT8", buffer: 0, name: "out",
                 quantization: { scale: [1.0], zero_point: [3], min: [-3.0], max: [3.0] } } ],
    inputs: [0], outputs: [3],
    operators: [ { opcode_index: 0, inputs: [0, 1, 2], outputs: [3],
                   builtin_options_type: "Conv2DOptions",
                   builtin_options: { padding: "SAME", stride_w: 1, stride_h: 1, dilation_w_factor: 1 } } ] } ],
  buffers: [ {}, { data: [1, 2] }, { data: [5, 0, 0, 0, 250, 255, 255, 255] } ] }
EOF
cat >"$JSON/custom_signature_metadata.json" <<'EOF'
{ version: 3, description: "hand-made seed",
  operator_codes: [ { deprecated_builtin_code: 32, custom_code: "MyCustomOp", version: 1, builtin_code: "CUSTOM" },
                    { deprecated_builtin_code: 22, builtin_code: "RESHAPE", version: 1 } ],
  subgraphs: [ { name: "main",
    tensors: [ { shape: [1, 6], shape_signature: [-1, 6], type: "FLOAT32", buffer: 0, name: "x" },
               { shape: [2], type: "INT32", buffer: 1, name: "new_shape" },
               { shape: [1, 6], type: "FLOAT32", buffer: 0, name: "t" },
               { shape: [2, 3], shape_signature: [-1, 3], type: "FLOAT32", buffer: 0, name: "y" } ],
    inputs: [0], outputs: [3],
    operators: [ { opcode_index: 0, inputs: [0, -1], outputs: [2],
                   custom_options: [1, 2, 3, 4, 5], custom_options_format: "FLEXBUFFERS" },
                 { opcode_index: 1, inputs: [2, 1], outputs: [3],
                   builtin_options_type: "ReshapeOptions", builtin_options: { new_shape: [2, 3] } } ] } ],
  buffers: [ {}, { data: [2, 0, 0, 0, 3, 0, 0, 0] }, { data: [109, 105, 110] } ],
  metadata: [ { name: "min_runtime_version", buffer: 2 } ],
  metadata_buffer: [2],
  signature_defs: [ { signature_key: "serving_default", subgraph_index: 0,
                      inputs: [ { name: "x", tensor_index: 0 } ], outputs: [ { name: "y", tensor_index: 3 } ] } ] }
EOF
cat >"$JSON/sparse_two_subgraphs.json" <<'EOF'
{ version: 3,
  operator_codes: [ { deprecated_builtin_code: 9, builtin_code: "FULLY_CONNECTED", version: 1 },
                    { deprecated_builtin_code: 25, builtin_code: "SOFTMAX", version: 1 } ],
  subgraphs: [ { name: "main",
    tensors: [ { shape: [1, 4], type: "FLOAT32", buffer: 0, name: "x" },
               { shape: [4, 4], type: "FLOAT32", buffer: 1, name: "w_sparse",
                 sparsity: { traversal_order: [0, 1],
                             dim_metadata: [ { format: "DENSE", dense_size: 4 },
                                             { format: "SPARSE_CSR",
                                               array_segments_type: "Int32Vector", array_segments: { values: [0, 1, 2, 3, 4] },
                                               array_indices_type: "Uint8Vector", array_indices: { values: [0, 1, 2, 3] } } ] } },
               { shape: [1, 4], type: "FLOAT32", buffer: 0, name: "h" },
               { shape: [1, 4], type: "FLOAT32", buffer: 0, name: "y" } ],
    inputs: [0], outputs: [3],
    operators: [ { opcode_index: 0, inputs: [0, 1, -1], outputs: [2],
                   builtin_options_type: "FullyConnectedOptions", builtin_options: { } },
                 { opcode_index: 1, inputs: [2], outputs: [3],
                   builtin_options_type: "SoftmaxOptions", builtin_options: { beta: 1.0 } } ] },
    { name: "second",
      tensors: [ { shape: [], type: "INT32", buffer: 0, name: "s", has_rank: true },
                 { shape: [2], type: "BOOL", buffer: 2, name: "flags" } ],
      inputs: [0], outputs: [0] } ],
  buffers: [ {}, { data: [0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 128, 63] }, { data: [1, 0] } ] }
EOF
# Buffer 1 names bytes by offset/size (external to the flatbuffer's vectors);
# the offset points into the file's own header, which is always there.
cat >"$JSON/offset_buffer.json" <<'EOF'
{ version: 3,
  operator_codes: [ { deprecated_builtin_code: 18, builtin_code: "MUL", version: 1 } ],
  subgraphs: [ { tensors: [ { shape: [2], type: "INT32", buffer: 0, name: "a" },
                            { shape: [2], type: "INT32", buffer: 1, name: "b" },
                            { shape: [2], type: "INT32", buffer: 0, name: "c" } ],
                 inputs: [0], outputs: [2],
                 operators: [ { opcode_index: 0, inputs: [0, 1], outputs: [2] } ] } ],
  buffers: [ {}, { offset: 8, size: 8 } ] }
EOF
for json in "$JSON"/*.json; do
  flatc -b -o "$SEEDS" "$ROOT/schema/tflite.fbs" "$json" || die "flatc failed on $json"
  [[ -f "$SEEDS/$(basename "$json" .json).tflite" ]] || die "flatc did not write $(basename "$json" .json).tflite"
done

# Tokens worth splicing in: the file identifier and small integers.
DICT="$BUILD/tflite.dict"
printf '%s\n' '"TFL3"' '"\x00\x00\x00\x00"' '"\xff\xff\xff\xff"' '"\xff\xff\xff\x7f"' '"\x00\x00\x00\x80"' >"$DICT"

# The largest seed must fit whole: libFuzzer would otherwise cut it at 1 MB.
max_len=4096
for f in "$SEEDS"/*; do
  size=$(stat -c %s "$f")
  if ((size > max_len)); then max_len=$size; fi
done

# --- fuzz ----------------------------------------------------------------------
# run_fuzzer NAME BINARY SECONDS CORPUS SEEDS ARTIFACTS DICT MAX_LEN: sets
# FUZZ_STATUS (0: no finding).
FUZZ_STATUS=0
run_fuzzer() {
  local name=$1 binary=$2 seconds=$3 corpus=$4 seeds=$5 artifacts=$6 dict=$7 max_len=$8
  echo "run_fuzz: $name: fuzzing for ${seconds}s: $(ls "$seeds" | wc -l) seeds, corpus $corpus" >&2
  mkdir -p "$corpus" "$artifacts"
  find "$artifacts" -type f -delete
  local log="$BUILD/$name.log" status
  set +e
  "$binary" "$corpus" "$seeds" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" \
    -dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 2>&1 | tee "$log" | grep -v '^#[0-9]*	\(NEW\|REDUCE\|pulse\)'
  status=${PIPESTATUS[0]}
  set -e
  local execs rate
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  echo "run_fuzz: $name: ${execs:-?} runs, ${rate:-?} exec/s, corpus $(ls "$corpus" | wc -l) files; exit status $status" >&2
  shopt -s nullglob
  local findings=("$artifacts"/*)
  shopt -u nullglob
  if ((status != 0 || ${#findings[@]} > 0)); then
    echo "run_fuzz: $name: FOUND A PROBLEM; inputs kept in $artifacts:" >&2
    local f
    for f in "${findings[@]}"; do echo "  $f   (reproduce: $binary $f)" >&2; done
    FUZZ_STATUS=1
  fi
}

if ((LOAD_SECONDS > 0)); then
  run_fuzzer load_model_fuzzer "$FUZZER" "$LOAD_SECONDS" "$CORPUS" "$SEEDS" "$ARTIFACTS" "$DICT" "$max_len"
fi

# --- the ONNX importer -----------------------------------------------------------
if ((ONNX_SECONDS > 0)); then
  ONNX_SEEDS="$BUILD/onnx-fuzz-seeds"
  rm -rf "$ONNX_SEEDS"
  mkdir -p "$ONNX_SEEDS"
  # Small node tests (opsets 11..15: they go through opset conversion too),
  # copied at fuzz time; nothing binary is committed.
  TESTDATA=/usr/share/libonnx-testdata/data/node
  for t in add_bcast averagepool_2d_pads batchnorm_example concat_2d_axis_0 constant_pad conv_with_strides_padding \
           flatten_axis1 gather_0 gemm_default_vector_bias matmul_2d maxpool_2d_pads relu reshape_reduced_dims slice \
           softmax_axis_1 transpose_default; do
    [[ -f "$TESTDATA/test_$t/model.onnx" ]] && cp "$TESTDATA/test_$t/model.onnx" "$ONNX_SEEDS/$t.onnx"
  done
  if [[ -z "$(ls "$ONNX_SEEDS")" ]]; then
    echo "run_fuzz: no ONNX seeds in $TESTDATA (Debian's libonnx-testdata); starting from an empty corpus" >&2
    printf '\x08\x07\x3a\x00\x42\x02\x10\x11' >"$ONNX_SEEDS/minimal.onnx"  # ir_version 7, empty graph, opset 17
  fi
  ONNX_DICT="$BUILD/onnx.dict"
  printf '%s\n' '"ai.onnx"' '"com.microsoft"' '"location"' '"offset"' '"length"' '"Conv"' '"Reshape"' '"MatMul"' \
    '"Gemm"' '"Concat"' '"Slice"' '"Gather"' '"Transpose"' '"Constant"' '"Shape"' '"Resize"' '"Split"' '"Expand"' \
    '"Where"' '"Softmax"' '"ReduceMean"' '"BatchNormalization"' '"Pad"' '"Unsqueeze"' '"Squeeze"' '"Cast"' \
    '"\xff\xff\xff\xff\xff\xff\xff\xff\x7f"' '"\xff\xff\xff\xff\x0f"' '"\x80\x80\x80\x80\x08"' >"$ONNX_DICT"
  run_fuzzer onnx_import_fuzzer "$BUILD/fuzz/onnx_import_fuzzer" "$ONNX_SECONDS" "$BUILD/onnx-fuzz-corpus" \
    "$ONNX_SEEDS" "$BUILD/onnx-fuzz-artifacts" "$ONNX_DICT" 65536
fi

# --- after the loader ----------------------------------------------------------------
if ((GRAPH_SECONDS > 0)); then
  GRAPH_SEEDS="$BUILD/graph-fuzz-seeds"
  rm -rf "$GRAPH_SEEDS"
  mkdir -p "$GRAPH_SEEDS"
  # Recipes, read from the end (FuzzedDataProvider): a base graph and a few
  # mutations each; libFuzzer grows them from here.
  for i in $(seq 0 31); do
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((i * 7 % 256)) $((i * 13 % 256)) $((i % 4)) "$i")" >"$GRAPH_SEEDS/seed$i"
  done
  printf '%s\n' '"\x00\x00\x00\x00"' '"\xff\xff\xff\x7f"' '"\x00\x00\x00\x40"' >"$BUILD/graph.dict"
  run_fuzzer graph_fuzzer "$BUILD/fuzz/graph_fuzzer" "$GRAPH_SECONDS" "$BUILD/graph-fuzz-corpus" \
    "$GRAPH_SEEDS" "$BUILD/graph-fuzz-artifacts" "$BUILD/graph.dict" 256
fi

if ((FUZZ_STATUS != 0)); then exit 1; fi
echo "run_fuzz: no findings" >&2
