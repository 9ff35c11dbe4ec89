#!/usr/bin/env bash
# virtio_guest_test.sh SRC_ROOT BUILD_DIR — boots the hardware test's guest
# (scripts/hw/build_guest.sh) with four virtio-net PCI ports joined in pairs by QEMU UDP socket
# netdevs (in run_guest.sh's private namespace, so the ports cannot collide) and runs
# guest_virtio_loopback.sh in it. Needs root: under CI=true its absence is a failure,
# otherwise the test is skipped (exit 77). Prints its wall time.
set -u
if [[ $(id -u) -ne 0 ]]; then
  [[ "${CI:-}" == true ]] && { echo "needs root (CI=true: failing, not skipping)"; exit 1; }
  echo "needs root; skipped"; exit 77
fi
SRC="$1" BUILD="$2"
t0=$(date +%s)
GUEST="$("$SRC/scripts/hw/build_guest.sh" "$BUILD" | tail -n1)" || exit 1
port() {  # port ID MAC LOCAL_UDP PEER_UDP
  echo "-netdev socket,id=$1,udp=127.0.0.1:$4,localaddr=127.0.0.1:$3"
  echo "-device virtio-net-pci,netdev=$1,romfile=,mac=$2,speed=10000,duplex=full,host_mtu=4000"
}
qargs=()
# Two "NICs" of two ports: NIC 1 = a, b; NIC 2 = c, d. Cables: a <-> c, d <-> b (the
# cabling of configs/hw/loopback_switch.toml; a <-> c alone is two NICs back to back).
while read -r opt val; do qargs+=(--qemu-arg "$opt" --qemu-arg "$val"); done < <(
  port hwa 52:54:00:77:01:0a 47000 47002; port hwb 52:54:00:77:01:0b 47001 47003
  port hwc 52:54:00:77:01:0c 47002 47000; port hwd 52:54:00:77:01:0d 47003 47001)
"$SRC/scripts/interop/run_guest.sh" --guest-dir "$BUILD/interop-guest" --initrd "$GUEST/initrd.cpio" \
  --memory 1536 --timeout "${ROCEMU_HW_GUEST_TIMEOUT:-300}" "${qargs[@]}" \
  --script "$SRC/tests/hw/guest_virtio_loopback.sh"
rc=$?
echo "virtio_guest_test: wall time $(( $(date +%s) - t0 )) s (guest build, boot and run), status $rc"
exit $rc
