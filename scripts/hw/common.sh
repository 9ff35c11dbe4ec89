# common.sh — sourced by scripts/hw/*.sh: resolving a device (PCI address or interface
# name), the checks before a device is taken from the kernel, and the record of the kernel
# driver to give it back. Not run on its own.
HW_STATE_DIR="${ROCEMU_HW_STATE_DIR:-/run/rocemu-hw}"   # <pci>.driver: the driver to restore
DEVBIND="${ROCEMU_DEVBIND:-dpdk-devbind.py}"             # Debian's dpdk package: /usr/bin

hw_die() { echo "$HW_PROG: $*" >&2; exit 1; }
hw_log() { echo "$HW_PROG: $*" >&2; }

hw_need_root() { [ "$(id -u)" -eq 0 ] || hw_die "needs root (sysfs driver binding, modprobe)"; }

# hw_is_pci_addr S: S looks like a PCI address (domain optional).
hw_is_pci_addr() {
  [[ "$1" =~ ^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]]
}

# hw_full_addr ADDR: with the 0000: domain if it was left out.
hw_full_addr() {
  if [[ "$1" =~ ^[0-9a-fA-F]{4}: ]]; then echo "${1,,}"; else echo "0000:${1,,}"; fi
}

# hw_ifaces_of PCI: kernel interfaces the device has now (none once bound to vfio-pci).
hw_ifaces_of() {
  local d="/sys/bus/pci/devices/$1/net"
  [ -d "$d" ] && ls "$d"
  return 0
}

# hw_check_iface IF: refuses (exit 1) an interface that has an address or carries a route:
# taking it would cut this machine off from whatever that address or route reaches (the
# management port, an SSH session). IPv6 link-local addresses and the kernel's automatic
# fe80::/64 and multicast routes do not count: every interface that is up has them.
hw_check_iface() {
  local ifc="$1" addrs routes
  addrs="$(ip -o addr show dev "$ifc" 2>/dev/null | awk '$3=="inet" || ($3=="inet6" && $4 !~ /^fe80:/) {print $4}')"
  [ -z "$addrs" ] || hw_die "refusing $ifc: it has an address ($(echo $addrs)); remove it first (ip addr flush dev $ifc) if this port is really free"
  routes="$( { ip -4 route show table all dev "$ifc" 2>/dev/null; ip -6 route show table all dev "$ifc" 2>/dev/null; } |
             awk 'NF > 0 && $1 !~ /^(local|broadcast|anycast|multicast)$/ && $1 !~ /^fe80:/')"
  [ -z "$routes" ] || hw_die "refusing $ifc: it carries a route ($(echo "$routes" | head -n1)); delete it first if this port is really free"
  return 0
}

# hw_resolve DEV: prints the PCI address of DEV (a PCI address or a kernel interface),
# after checking every kernel interface the device has with hw_check_iface.
hw_resolve() {
  local dev="$1" pci ifc
  if hw_is_pci_addr "$dev"; then
    pci="$(hw_full_addr "$dev")"
    [ -e "/sys/bus/pci/devices/$pci" ] || hw_die "no PCI device $pci (lspci -D lists them)"
  else
    [ -e "/sys/class/net/$dev" ] || hw_die "no network interface '$dev' (give a PCI address or an interface of this namespace)"
    hw_check_iface "$dev"
    [ -e "/sys/class/net/$dev/device" ] || hw_die "refusing $dev: not a PCI device (a virtual interface: $(basename "$(readlink -f "/sys/class/net/$dev")" 2>/dev/null))"
    local path; path="$(readlink -f "/sys/class/net/$dev/device")"
    pci="$(basename "$path")"
    # virtio-net: the interface's device is virtioN on the virtio bus, the PCI function its parent.
    hw_is_pci_addr "$pci" || pci="$(basename "$(dirname "$path")")"
    hw_is_pci_addr "$pci" || hw_die "refusing $dev: its device $(basename "$path") is not on the PCI bus"
  fi
  for ifc in $(hw_ifaces_of "$pci"); do hw_check_iface "$ifc"; done
  echo "$pci"
}

# hw_driver_of PCI: the driver bound now ("" if none).
hw_driver_of() {
  local l="/sys/bus/pci/devices/$1/driver"
  [ -e "$l" ] && basename "$(readlink -f "$l")"
  return 0
}
