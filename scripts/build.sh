#!/usr/bin/env bash
# Configures (once) and builds rocemu in ./build (or $ROCEMU_BUILD_DIR).
# Extra arguments go to `meson setup` on first configuration (e.g. -Db_sanitize=address,undefined).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${ROCEMU_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" "$@"
fi
# Two jobs: a LibTorch translation unit needs ~1.2 GB and ~20 s; more jobs only thrash a 2-core box.
ninja -C "$BUILD_DIR" -j "${ROCEMU_JOBS:-2}"
