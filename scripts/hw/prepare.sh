#!/usr/bin/env bash
# prepare.sh [--pages N] [--driver vfio-pci|uio_pci_generic] — gets a machine ready for DPDK
# on PCI NICs (docs/hardware.md): 2 MB hugepages mounted (scripts/hugepages.sh, default 1024
# = 2 GiB), the driver module loaded. vfio-pci needs an IOMMU (intel_iommu=on / amd_iommu=on
# on the kernel command line); where the machine has none (no /sys/kernel/iommu_groups
# entries: a VM without a vIOMMU, a board with it off) vfio's no-IOMMU mode is turned on,
# with a warning: DMA is then unprotected, as with uio. Undo: scripts/hw/unbind.sh --all,
# echo 0 > /proc/sys/vm/nr_hugepages.
set -euo pipefail
HW_PROG=prepare.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/common.sh"
pages=1024 driver=vfio-pci
while [ $# -gt 0 ]; do
  case "$1" in
    --pages) pages="${2:?--pages N}"; shift 2 ;;
    --driver) driver="${2:?--driver vfio-pci|uio_pci_generic}"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) hw_die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$driver" in vfio-pci|uio_pci_generic) ;; *) hw_die "--driver must be vfio-pci or uio_pci_generic" ;; esac
hw_need_root
"$HERE/../hugepages.sh" "$pages"
if [ "$driver" = uio_pci_generic ]; then
  modprobe uio_pci_generic || hw_die "modprobe uio_pci_generic failed"
  hw_log "WARNING: uio_pci_generic gives the NIC unprotected DMA to all memory and no interrupts (no link-state events); prefer vfio-pci"
else
  if [ -z "$(ls -A /sys/kernel/iommu_groups 2>/dev/null)" ]; then
    modprobe vfio enable_unsafe_noiommu_mode=1 || hw_die "modprobe vfio failed"
    if [ -w /sys/module/vfio/parameters/enable_unsafe_noiommu_mode ]; then
      echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode
    fi
    [ "$(cat /sys/module/vfio/parameters/enable_unsafe_noiommu_mode 2>/dev/null)" = Y ] ||
      hw_die "this machine has no IOMMU and the kernel's vfio has no no-IOMMU mode (CONFIG_VFIO_NOIOMMU); use --driver uio_pci_generic"
    hw_log "WARNING: no IOMMU on this machine: vfio-pci runs in no-IOMMU mode (the NIC can DMA anywhere in memory, the kernel is tainted). Turn the IOMMU on (intel_iommu=on or amd_iommu=on) for protection"
  fi
  modprobe vfio-pci || hw_die "modprobe vfio-pci failed"
fi
hw_log "ready: $(cat /proc/sys/vm/nr_hugepages) hugepages, driver $driver loaded; bind ports with scripts/hw/bind.sh"
