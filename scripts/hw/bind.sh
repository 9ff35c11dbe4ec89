#!/usr/bin/env bash
# bind.sh [--driver vfio-pci|uio_pci_generic] [--dry-run] DEV... — gives PCI NIC ports to
# DPDK (docs/hardware.md). DEV is a PCI address (0000:03:00.0 or 03:00.0) or a kernel
# interface name. Refuses an interface that has an address or carries a route (IPv6
# link-local ones excepted), and anything that is not a PCI device, before touching any.
# The kernel driver of each is recorded in /run/rocemu-hw/<pci>.driver for unbind.sh.
# Prints the PCI addresses bound, one per line (for a_dev/b_dev). --dry-run: checks and
# prints, binds nothing. Needs root and prepare.sh first (the driver module loaded).
set -euo pipefail
HW_PROG=bind.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/common.sh"
driver=vfio-pci dry=0 devs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --driver) driver="${2:?--driver vfio-pci|uio_pci_generic}"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) hw_die "unknown option '$1' (see --help)" ;;
    *) devs+=("$1"); shift ;;
  esac
done
[ ${#devs[@]} -gt 0 ] || hw_die "usage: bind.sh [--driver vfio-pci|uio_pci_generic] [--dry-run] DEV..."
case "$driver" in vfio-pci|uio_pci_generic) ;; *) hw_die "--driver must be vfio-pci or uio_pci_generic" ;; esac
hw_need_root
pcis=()
for d in "${devs[@]}"; do pcis+=("$(hw_resolve "$d")"); done   # all checked before any is taken
if [ "$dry" -eq 1 ]; then
  for p in "${pcis[@]}"; do hw_log "would bind $p (now: $(hw_driver_of "$p")) to $driver"; echo "$p"; done
  exit 0
fi
command -v "$DEVBIND" >/dev/null || hw_die "no $DEVBIND (Debian's dpdk package: scripts/setup.sh)"
[ -d "/sys/bus/pci/drivers/${driver}" ] || [ -d "/sys/bus/pci/drivers/${driver//-/_}" ] ||
  hw_die "driver $driver is not loaded: run scripts/hw/prepare.sh first"
mkdir -p "$HW_STATE_DIR"
for p in "${pcis[@]}"; do
  cur="$(hw_driver_of "$p")"
  if [ "$cur" = "$driver" ]; then hw_log "$p is already on $driver"; echo "$p"; continue; fi
  # The first driver seen is the one to restore (a second bind keeps it).
  [ -e "$HW_STATE_DIR/$p.driver" ] || echo "$cur" > "$HW_STATE_DIR/$p.driver"
  "$DEVBIND" --bind="$driver" "$p" >&2 || hw_die "$DEVBIND --bind=$driver $p failed"
  [ "$(hw_driver_of "$p")" = "$driver" ] || hw_die "$p is not on $driver after binding (dmesg says why)"
  hw_log "$p: $cur -> $driver"
  echo "$p"
done
