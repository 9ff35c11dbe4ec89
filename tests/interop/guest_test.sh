#!/usr/bin/env bash
# guest_test.sh SOURCE_ROOT BUILD_ROOT GUEST_SCRIPT [--check-capture MIN_FRAMES]
#               [run_guest.sh options] [-- HOST_COMMAND...]
# One interop test: build (or reuse) the rxe guest under BUILD_ROOT, then boot it next to the
# host command with run_guest.sh. With --check-capture the run is recorded and every RoCEv2
# frame checked by check_capture.py (ICRC recomputed by scapy, rocemu's header fields, at least
# MIN_FRAMES from rocemu). Fails, never skips, when something needed is missing.
set -euo pipefail
SRC="$1" BLD="$2" GUEST_SCRIPT="$3"; shift 3
MIN_FRAMES=""
if [ "${1:-}" = "--check-capture" ]; then MIN_FRAMES="$2"; shift 2; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "interop tests need root (network namespace, TAP, debootstrap)" >&2; exit 1
fi
"$SRC/scripts/interop/build_guest.sh" "$BLD" >/dev/null
if [ -z "$MIN_FRAMES" ]; then
  exec "$SRC/scripts/interop/run_guest.sh" --guest-dir "$BLD/interop-guest" \
    --script "$GUEST_SCRIPT" "$@"
fi
CAP="$(mktemp /tmp/rocemu-interop-capture.XXXXXX.pcapng)"
trap 'rm -f "$CAP"' EXIT
"$SRC/scripts/interop/run_guest.sh" --guest-dir "$BLD/interop-guest" --capture "$CAP" \
  --script "$GUEST_SCRIPT" "$@"
/usr/bin/python3 "$SRC/tests/interop/check_capture.py" "$CAP" 10.77.0.2 "$MIN_FRAMES"
