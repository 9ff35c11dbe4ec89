#!/usr/bin/env bash
# guest_test.sh SOURCE_ROOT BUILD_ROOT GUEST_SCRIPT [run_guest.sh options] [-- HOST_COMMAND...]
# One interop test: build (or reuse) the rxe guest under BUILD_ROOT, then boot it next to the
# host command with run_guest.sh. Fails, never skips, when something needed is missing.
set -euo pipefail
SRC="$1" BLD="$2" GUEST_SCRIPT="$3"; shift 3
if [ "$(id -u)" -ne 0 ]; then
  echo "interop tests need root (network namespace, TAP, debootstrap)" >&2; exit 1
fi
"$SRC/scripts/interop/build_guest.sh" "$BLD" >/dev/null
exec "$SRC/scripts/interop/run_guest.sh" --guest-dir "$BLD/interop-guest" \
  --script "$GUEST_SCRIPT" "$@"
