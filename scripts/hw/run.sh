#!/usr/bin/env bash
# run.sh [--driver D] DEV... -- CMD... — binds DEV... (bind.sh), runs CMD, and gives the
# ports back to their kernel drivers (unbind.sh) when CMD ends, fails or is interrupted.
# Exit status: CMD's. Example (docs/hardware.md):
#   scripts/hw/run.sh enp3s0f0 enp3s0f1 -- build/apps/rocemu-testbed configs/hw/loopback.toml
set -euo pipefail
HW_PROG=run.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/common.sh"
args=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
[ "${1:-}" = -- ] && [ $# -gt 1 ] || hw_die "usage: run.sh [--driver D] DEV... -- CMD..."
shift
bound=()
restore() { [ ${#bound[@]} -eq 0 ] || "$HERE/unbind.sh" "${bound[@]}" || true; }
trap restore EXIT
out="$("$HERE/bind.sh" "${args[@]}")" && ok=1 || ok=0
mapfile -t bound <<< "$out"
[ -n "$out" ] || bound=()
[ "$ok" -eq 1 ] || exit 1   # what was bound before the failure is given back (EXIT trap)
trap 'exit 130' INT TERM
set +e
"$@"
rc=$?
exit $rc
