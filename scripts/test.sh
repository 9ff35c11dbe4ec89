#!/usr/bin/env bash
# One command for a new user and for CI: installs what is needed, builds, and runs every test
# suite (unit, sim, dpdk, conformance, interop) in ./build, then
#   - the unit and sim suites again in build-ubsan/: clang with -fsanitize=undefined including
#     float-cast-overflow (gcc's UBSan has no float-cast-overflow, so a double cast to int64
#     out of range went unseen), every report fatal;
#   - the fuzz suite in build-fuzz/ (scripts/fuzz.sh's build: clang, ASan + UBSan, libraries
#     instrumented): each fuzz target for a short fixed time from its seed corpus.
# Benchmarks are not run here (scripts/bench*.sh). Extra arguments go to the first `meson test`
# (e.g. --suite unit); ROCEMU_SANITIZER_BUILDS=0 skips the two clang builds. Prints a closing
# line "N passed, N failed, N skipped" over all three build directories, after a line of the
# time each phase took ("phases: setup 95 s, build 560 s, ...; tests 700 s, in all 2000 s"):
# CI's limits are 45 minutes for the whole command and 15 for the tests themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
phases=()
phase_start=$SECONDS
test_s=0
# phase NAME: the time since the last phase ended goes to NAME (and to the tests' total when
# NAME ends in "tests").
phase() {
  local s=$((SECONDS - phase_start))
  phases+=("$1 $s s")
  [[ $1 == *tests ]] && test_s=$((test_s + s))
  phase_start=$SECONDS
}
bash scripts/setup.sh
phase setup
bash scripts/build.sh
phase build
BUILD_DIR="${ROCEMU_BUILD_DIR:-build}"
UBSAN_DIR="${ROCEMU_UBSAN_DIR:-build-ubsan}"
FUZZ_DIR="${ROCEMU_FUZZ_DIR:-build-fuzz}"
JOBS="${ROCEMU_TEST_JOBS:-2}"

# Builds only what the named suites of build directory $1 run: `meson test` would too, but
# with ninja's default job count; two jobs suit LibTorch's 1.2 GB translation units.
build_for_suites() {
  local dir="$1"
  shift
  local targets
  mapfile -t targets < <(/usr/bin/python3 - "$dir" "$@" <<'PY'
import json, os, subprocess, sys
d, suites = sys.argv[1], set(sys.argv[2:])
intro = lambda what: json.loads(subprocess.check_output(["meson", "introspect", what, d]))
files = {t["id"]: t["filename"] for t in intro("--targets")}
out = set()
for t in intro("--tests"):
    if suites & {s.split(":")[-1] for s in t["suite"]}:
        for dep in t["depends"]:
            out.update(os.path.relpath(f, d) for f in files[dep])
print("\n".join(sorted(out)))
PY
  )
  ninja -C "$dir" -j "${ROCEMU_JOBS:-2}" "${targets[@]}"
}

status=0
logs=("$BUILD_DIR/meson-logs/testlog.json")
meson test -C "$BUILD_DIR" --no-rebuild --print-errorlogs --num-processes "$JOBS" "$@" || status=$?
phase tests

if [ "${ROCEMU_SANITIZER_BUILDS:-1}" != 0 ]; then
  if [ ! -f "$UBSAN_DIR/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$UBSAN_DIR" -Db_sanitize=undefined -Db_lundef=false \
      "-Dcpp_args=['-fsanitize=float-cast-overflow', '-fno-sanitize-recover=all']"
  fi
  build_for_suites "$UBSAN_DIR" unit sim
  phase "UBSan build"
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 meson test -C "$UBSAN_DIR" --no-rebuild \
    --print-errorlogs --num-processes "$JOBS" --suite unit --suite sim || status=1
  phase "UBSan tests"
  logs+=("$UBSAN_DIR/meson-logs/testlog.json")

  ROCEMU_FUZZ_DIR="$FUZZ_DIR" bash scripts/fuzz.sh --setup
  build_for_suites "$FUZZ_DIR" fuzz
  phase "fuzz build"
  meson test -C "$FUZZ_DIR" --no-rebuild --print-errorlogs --num-processes "$JOBS" \
    --suite fuzz || status=1
  phase "fuzz tests"
  logs+=("$FUZZ_DIR/meson-logs/testlog.json")
fi
echo "phases: $(IFS=,; echo "${phases[*]}" | sed 's/,/, /g'); tests ${test_s} s, in all ${SECONDS} s"

# meson's own summary is not a format CI reads; give the plain closing line from its JSON logs.
# A test that did not pass is named there too, with the end of its output (gtest's failure
# lines and the test's own last words), so that the last lines of a CI log say what failed.
/usr/bin/python3 - "${logs[@]}" <<'PY'
import json, sys
total = [0, 0, 0]
failed = []
for log in sys.argv[1:]:
    n = [0, 0, 0]
    d = log.split('/meson-logs')[0]
    with open(log) as f:
        for line in f:
            t = json.loads(line)
            r = t.get("result", "")
            k = 0 if r in ("OK", "EXPECTEDFAIL") else 2 if r == "SKIP" else 1
            n[k] += 1
            if k == 1:
                failed.append((d, t))
    print(f"({d}: {n[0]} ok, {n[1]} not ok, {n[2]} skipped)")
    total = [a + b for a, b in zip(total, n)]
for d, t in failed:
    # meson keeps stderr apart (key "stderr") when the test wrote any: assert and abort
    # messages, DPDK's and spdlog's errors, a script's own.
    out = (t.get("stdout") or "").splitlines() + (t.get("stderr") or "").splitlines()
    marks = [l for l in out if l.startswith("[  FAILED  ]") or ": Failure" in l]
    print(f"not ok: {d}: {t['name']} ({t['result']}, exit {t.get('returncode')}, "
          f"{t.get('duration', 0):.1f} s)")
    for l in (marks[:10] + ["  ..."] if marks else []) + out[-25:]:
        print(f"    {l[:300]}")
print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
PY
exit "$status"
