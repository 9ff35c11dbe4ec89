#!/bin/sh
# Builds the libFuzzer target in build-fuzz/ (clang, ASan + UBSan) and runs it for $1
# seconds (default 60) on one core. Crashes are written to build-fuzz/ as crash-*.
set -eu
cd "$(dirname "$0")/../../.."
if [ ! -d build-fuzz ]; then
  CXX=clang++ meson setup build-fuzz -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C build-fuzz -j2 tests/nic/fuzz/fuzz_nic_rx
mkdir -p build-fuzz/corpus-nic-rx
ASAN_OPTIONS=detect_leaks=0 ./build-fuzz/tests/nic/fuzz/fuzz_nic_rx \
  -max_total_time="${1:-60}" -max_len=9000 -artifact_prefix=build-fuzz/ build-fuzz/corpus-nic-rx
