#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] [TARGET...] — runs every fuzz target of tests/fuzz/ (or the ones
# named) for SECONDS each (default 60), one after another, on one core each.
# scripts/fuzz.sh --setup — only configures the build directory (scripts/test.sh uses it).
#
# Sets up build-fuzz/ (or $ROCEMU_FUZZ_DIR) once: clang, ASan + UBSan with every report fatal,
# -Dfuzz=true (every library carries libFuzzer's coverage hooks); builds only the fuzz targets
# and the seed corpora (scripts/fuzz_corpus.py). Each target fuzzes a corpus that persists
# across runs, build-fuzz/fuzz-corpus/<target> (delete it to start from the seeds again), and
# reads the seeds. Per target it prints execs, exec/s, coverage (cov = edges, ft = features),
# crashes and sanitizer reports; crash inputs go to build-fuzz/fuzz-artifacts/ with the command
# that reproduces them, full logs to build-fuzz/fuzz-logs/. Exit status 1 on any crash or
# sanitizer report.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
shift || true
DIR="${ROCEMU_FUZZ_DIR:-build-fuzz}"
if [ ! -f "$DIR/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$DIR" -Dfuzz=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dcpp_args=-fno-sanitize-recover=all
fi
[ "$SECONDS_EACH" != --setup ] || exit 0
# The fuzz targets as meson knows them (tests/fuzz/meson.build).
mapfile -t ALL < <(meson introspect --tests "$DIR" | /usr/bin/python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if any(s.split(":")[-1] == "fuzz" for s in t["suite"]):
        print(t["name"])')
TARGETS=("$@")
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=("${ALL[@]}")
ninja -C "$DIR" -j "${ROCEMU_JOBS:-2}" tests/fuzz/corpus.stamp \
  $(printf 'tests/fuzz/%s ' "${TARGETS[@]}")
mkdir -p "$DIR/fuzz-logs"
status=0
for t in "${TARGETS[@]}"; do
  /usr/bin/python3 tests/fuzz/run_fuzz.py "$DIR/tests/fuzz/$t" --seconds "$SECONDS_EACH" \
    --seeds "$DIR/tests/fuzz/corpus/$t" --work "$DIR/fuzz-corpus/$t" \
    --artifacts "$DIR/fuzz-artifacts" --log "$DIR/fuzz-logs/$t.log" || status=1
done
exit "$status"
