#!/usr/bin/env bash
# The tree's C++ against .clang-format (Google style, 120 columns): lists
# every file clang-format would change and exits 1 if there is one. The
# op and pass tables (*.def, *.inc) are data laid out by hand and are not
# checked. `tools/check_format.sh --fix` rewrites the files in place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "clang-format not found (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format "$f" | cmp -s - "$f"; then
    echo "not formatted: $f (tools/check_format.sh --fix)"
    bad=1
  fi
done
[[ $bad == 0 ]] && echo "format: ${#files[@]} files as .clang-format lays them out"
exit $bad
