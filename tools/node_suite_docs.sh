#!/usr/bin/env bash
# Regenerates the numbers and lists of docs/convert.md's "ONNX node-test
# suite" section from a fresh run of ONNX's node tests through convert.
#   tools/node_suite_docs.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build}/gpuclean"
doc="$root/docs/convert.md"
[ -x "$bin" ] || { echo "no $bin; build gpuclean first" >&2; exit 2; }
body="$(mktemp)"
trap 'rm -f "$body" "$body.doc"' EXIT
"$bin" convert-node-suite --markdown > "$body"
grep -q '^<!-- node-suite:begin' "$doc" && grep -q '^<!-- node-suite:end' "$doc" ||
  { echo "$doc has no node-suite markers" >&2; exit 2; }
awk -v body="$body" '
  /^<!-- node-suite:begin/ { print; print ""; while ((getline line < body) > 0) print line; skip = 1; next }
  /^<!-- node-suite:end/ { skip = 0 }
  !skip { print }
' "$doc" > "$body.doc"
mv "$body.doc" "$doc"
echo "updated $doc"
