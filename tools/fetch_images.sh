#!/usr/bin/env bash
# Copy the default demo photograph into .cache/images/ (git-ignored), where
# image::DefaultImagePath() and `--image` examples look for it.
#
# The photograph is the official US Navy portrait of Grace Hopper (a work of
# the US federal government, so in the public domain; the JPEG's comment
# names its source, commons.wikimedia.org/wiki/File:Grace_Hopper.jpg), as
# Debian's python-matplotlib-data ships it for matplotlib's examples (a
# 2.7 MB package); tools/setup.sh installs that package.
# A head-and-shoulders portrait suits the selfie-segmentation, face and
# landmark fixture models.
#
# Idempotent: the copy is rewritten only when its bytes differ.
# Prints one line: PATH SIZE_BYTES SOURCE.
# Usage: tools/fetch_images.sh   (from any directory)
set -euo pipefail

die() { echo "fetch_images: $*" >&2; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || die "cannot locate repository root"
cd "$ROOT"

SRC=/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg
DEST=.cache/images/grace_hopper.jpg

[[ -f "$SRC" ]] || die "$SRC missing: install the Debian package python-matplotlib-data (tools/setup.sh does)"
mkdir -p "$(dirname "$DEST")"
if ! cmp -s "$SRC" "$DEST" 2>/dev/null; then
  cp -f "$SRC" "$DEST.tmp" && chmod 0644 "$DEST.tmp" && mv -f "$DEST.tmp" "$DEST" || die "cannot write $DEST"
fi
printf '%-56s %10d  %s\n' "$DEST" "$(wc -c <"$DEST")" "python-matplotlib-data"
