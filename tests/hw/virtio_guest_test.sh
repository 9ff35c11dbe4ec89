#!/usr/bin/env bash
# virtio_guest_test.sh SRC_ROOT BUILD_DIR — boots the hardware test's guest
# (scripts/hw/build_guest.sh) with two virtio-net PCI ports joined by a QEMU UDP socket
# netdev (in run_guest.sh's private namespace, so the ports cannot collide) and runs
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
while read -r opt val; do qargs+=(--qemu-arg "$opt" --qemu-arg "$val"); done < <(
  port hwa 52:54:00:77:01:0a 47000 47001; port hwb 52:54:00:77:01:0b 47001 47000)
"$SRC/scripts/interop/run_guest.sh" --guest-dir "$BUILD/interop-guest" --initrd "$GUEST/initrd.cpio" \
  --memory 1536 --timeout "${ROCEMU_HW_GUEST_TIMEOUT:-300}" "${qargs[@]}" \
  --script "$SRC/tests/hw/guest_virtio_loopback.sh"
rc=$?
echo "virtio_guest_test: wall time $(( $(date +%s) - t0 )) s (guest build, boot and run), status $rc"
exit $rc
