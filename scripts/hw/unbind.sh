#!/usr/bin/env bash
# unbind.sh DEV... | --all — gives PCI ports back to the kernel driver bind.sh recorded
# (/run/rocemu-hw/<pci>.driver); a device with no record is left alone. --all: every
# recorded device. Needs root.
set -euo pipefail
HW_PROG=unbind.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/common.sh"
[ $# -gt 0 ] || hw_die "usage: unbind.sh DEV... | --all"
[ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] && { sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
hw_need_root
pcis=()
if [ "$1" = --all ]; then
  for f in "$HW_STATE_DIR"/*.driver; do [ -e "$f" ] && pcis+=("$(basename "$f" .driver)"); done
else
  for d in "$@"; do
    hw_is_pci_addr "$d" || hw_die "'$d': give the PCI address (a bound port has no interface name)"
    pcis+=("$(hw_full_addr "$d")")
  done
fi
rc=0
for p in "${pcis[@]}"; do
  f="$HW_STATE_DIR/$p.driver"
  [ -e "$f" ] || { hw_log "$p: no record of its kernel driver, left alone"; continue; }
  orig="$(cat "$f")"
  if [ -z "$orig" ]; then
    "$DEVBIND" --unbind "$p" >&2 || { hw_log "unbinding $p failed"; rc=1; continue; }
  else
    "$DEVBIND" --bind="$orig" "$p" >&2 || { hw_log "binding $p back to $orig failed"; rc=1; continue; }
  fi
  rm -f "$f"
  hw_log "$p: back on ${orig:-no driver}"
done
exit $rc
