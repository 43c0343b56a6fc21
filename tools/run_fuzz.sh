#!/usr/bin/env bash
# Builds the libFuzzer target for the model loader (fuzz/load_model_fuzzer.cc)
# with clang and ASan+UBSan in build-fuzz/, seeds a corpus with the fixture
# models and a few tiny hand-made ones, and fuzzes for a bounded time.
#
# Usage: tools/run_fuzz.sh [SECONDS]     (default 60; from any directory)
# Needs: clang, clang++, libclang-rt-14-dev (the fuzzer and sanitizer
# runtimes), flatc, cmake, ninja. Fixture models come from
# tools/fetch_models.sh; without them only the hand-made seeds are used.
#
# Exit status: 0 when the fuzzer ran the whole time without a finding;
# non-zero when it found a crash, leak, timeout or out-of-memory input (kept
# in build-fuzz/fuzz-artifacts/; reproduce with
# build-fuzz/fuzz/load_model_fuzzer FILE) or when the build failed.
set -euo pipefail

die() { echo "run_fuzz: $*" >&2; exit 2; }

FUZZ_SECONDS="${1:-60}"
[[ "$FUZZ_SECONDS" =~ ^[0-9]+$ ]] || die "SECONDS must be a whole number, got '$FUZZ_SECONDS'"

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
ninja -C "$BUILD" load_model_fuzzer || die "building load_model_fuzzer failed"

# --- seeds ---------------------------------------------------------------------
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
echo "run_fuzz: fuzzing for ${FUZZ_SECONDS}s: $(ls "$SEEDS" | wc -l) seeds, corpus $CORPUS" >&2
find "$ARTIFACTS" -type f -delete
log="$BUILD/fuzz.log"
set +e
"$FUZZER" "$CORPUS" "$SEEDS" \
  -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" \
  -dict="$DICT" -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 2>&1 | tee "$log" | grep -v '^#[0-9]*	\(NEW\|REDUCE\|pulse\)'
status=${PIPESTATUS[0]}
set -e

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
echo "run_fuzz: ${execs:-?} runs, ${rate:-?} exec/s, corpus $(ls "$CORPUS" | wc -l) files; exit status $status" >&2
shopt -s nullglob
findings=("$ARTIFACTS"/*)
if ((status != 0 || ${#findings[@]} > 0)); then
  echo "run_fuzz: FOUND A PROBLEM; inputs kept in $ARTIFACTS:" >&2
  for f in "${findings[@]}"; do echo "  $f   (reproduce: $FUZZER $f)" >&2; done
  exit 1
fi
echo "run_fuzz: no findings" >&2
