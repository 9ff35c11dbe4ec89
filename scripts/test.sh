#!/usr/bin/env bash
# One command for a new user and for CI: installs what is needed, builds, and runs every test
# suite (unit, sim, dpdk, conformance, interop). Benchmarks are not run here (scripts/bench*.sh).
# Prints a closing line "N passed, N failed". Extra arguments go to `meson test`
# (e.g. --suite unit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR="${ROCEMU_BUILD_DIR:-build}"
status=0
meson test -C "$BUILD_DIR" --no-rebuild --print-errorlogs --num-processes "${ROCEMU_TEST_JOBS:-2}" "$@" || status=$?
# meson's own summary is not a format CI reads; give the plain closing line from its JSON log.
/usr/bin/python3 - "$BUILD_DIR/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
with open(sys.argv[1]) as f:
    for line in f:
        r = json.loads(line).get("result", "")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit "$status"
