#!/usr/bin/env bash
# run_guest.sh — boot the rxe guest in a private network namespace next to a host-side peer.
#
# usage: run_guest.sh [--guest-dir DIR] [--timeout SEC] [--log FILE] [--file NAME=PATH]...
#                     [--capture FILE.pcapng] [--initrd FILE] [--memory MB] [--qemu-arg ARG]...
#                     --script GUEST_SCRIPT [-- HOST_COMMAND ARGS...]
# --initrd, --memory (default 768) and --qemu-arg (appended to QEMU's arguments, e.g. more
# devices) are for other guests on the same kernel (the hardware test: scripts/hw/build_guest.sh).
#
# Layout (recipe: /work/shared/INTEROP.md "A userspace host program as the guest's peer"),
# everything inside the namespace rocemu-interop-<pid>, deleted on exit (trap):
#
#   guest eth0 (10.77.0.10) -- tap0 --+-- br0 (10.77.0.1: kernel TCP side channel)
#                                     +-- veth-br == veth-dpdk (no IP, arp off: the DPDK
#                                                   program owns 10.77.0.2 and answers ARP)
#
# The guest (build_guest.sh) gets GUEST_SCRIPT as fw_cfg opt/rxe/script and every --file as
# opt/rxe/NAME (copied to /tmp/NAME in the guest). HOST_COMMAND runs inside the namespace at
# the same time as the guest boots, with ROCEMU_NS, ROCEMU_IFACE (veth-dpdk), ROCEMU_BRIDGE_IP,
# ROCEMU_GUEST_IP and ROCEMU_ENDPOINT_IP in its environment. Both are killed after --timeout.
# --capture records veth-br (all of the DPDK program's traffic, both ways) with dumpcap.
# Exit 0 only if the guest script ended with status 0 and HOST_COMMAND exited 0.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GUEST_DIR="" SCRIPT="" TIMEOUT_S=120 LOG="" FILES=() CAPTURE= INITRD="" MEMORY_MB=768 QEMU_EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --guest-dir) GUEST_DIR="$2"; shift 2 ;;
    --script) SCRIPT="$2"; shift 2 ;;
    --timeout) TIMEOUT_S="$2"; shift 2 ;;
    --log) LOG="$2"; shift 2 ;;
    --file) FILES+=("$2"); shift 2 ;;
    --capture) CAPTURE="$2"; shift 2 ;;
    --initrd) INITRD="$2"; shift 2 ;;
    --memory) MEMORY_MB="$2"; shift 2 ;;
    --qemu-arg) QEMU_EXTRA+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_guest: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$SCRIPT" ] && [ -f "$SCRIPT" ] || { echo "run_guest: --script FILE is required" >&2; exit 2; }
[ -n "$GUEST_DIR" ] || GUEST_DIR="$HERE/../../build/interop-guest"
[ -n "$INITRD" ] || INITRD="$GUEST_DIR/initrd.cpio"
for f in "$GUEST_DIR/vmlinux" "$INITRD"; do
  [ -f "$f" ] || { echo "run_guest: $f missing: run build_guest.sh" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "run_guest: must run as root (netns, tap)" >&2; exit 2; }

NS="rocemu-interop-$$"
WORK="$(mktemp -d /tmp/rocemu-interop.XXXXXX)"
[ -n "$LOG" ] || LOG="$WORK/serial.log"
: > "$LOG"
export ROCEMU_NS="$NS" ROCEMU_IFACE=veth-dpdk ROCEMU_BRIDGE_IP=10.77.0.1 \
       ROCEMU_GUEST_IP=10.77.0.10 ROCEMU_ENDPOINT_IP=10.77.0.2
QEMU_PID="" HOST_PID="" CAP_PID=""

cleanup() {
  set +e
  # TERM first (timeout forwards it: dumpcap flushes, the DPDK program closes its port), then
  # whatever is still inside the namespace after 3 s is ours to kill.
  for pid in $CAP_PID $HOST_PID $QEMU_PID; do kill -TERM "$pid" 2>/dev/null; done
  if ip netns pids "$NS" >/dev/null 2>&1; then
    for _ in $(seq 1 30); do [ -z "$(ip netns pids "$NS")" ] && break; sleep 0.1; done
    for p in $(ip netns pids "$NS"); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$NS" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS"
nsx() { ip netns exec "$NS" "$@"; }
ip -n "$NS" link set lo up
ip -n "$NS" link add br0 type bridge
ip -n "$NS" addr add "$ROCEMU_BRIDGE_IP/24" dev br0
ip -n "$NS" tuntap add dev tap0 mode tap
# QEMU under TCG drains the TAP in bursts: a deep queue absorbs a 1 MB WRITE burst.
ip -n "$NS" link set tap0 txqueuelen 10000
ip -n "$NS" link add veth-dpdk type veth peer name veth-br
nsx sysctl -qw net.ipv6.conf.veth-dpdk.disable_ipv6=1
ip -n "$NS" link set tap0 master br0
ip -n "$NS" link set veth-br master br0
ip -n "$NS" link set veth-dpdk arp off
for dev in br0 tap0 veth-br veth-dpdk; do ip -n "$NS" link set "$dev" up; done

if [ -n "$CAPTURE" ]; then
  command -v dumpcap >/dev/null || { echo "run_guest: --capture needs dumpcap (tshark)" >&2; exit 2; }
  ip netns exec "$NS" timeout -k 5 "$TIMEOUT_S" dumpcap -q -i veth-br -w "$CAPTURE" &
  CAP_PID=$!
  sleep 1  # dumpcap must be capturing before the guest's first frame
fi

fwcfg=(-fw_cfg "name=opt/rxe/script,file=$SCRIPT")
for nf in "${FILES[@]+"${FILES[@]}"}"; do
  fwcfg+=(-fw_cfg "name=opt/rxe/${nf%%=*},file=${nf#*=}")
done
KOPTS="console=ttyS0 quiet panic=-1 mitigations=off nokaslr i8042.noaux i8042.nokbd \
i8042.nopnp i8042.dumbkbd 8250.nr_uarts=1 tsc=reliable no_timer_check cryptomgr.notests \
rocemu_ip=$ROCEMU_GUEST_IP/24"
ip netns exec "$NS" timeout -k 5 "$TIMEOUT_S" qemu-system-x86_64 \
  -accel tcg,thread=single -cpu max -smp 1 -m "$MEMORY_MB" -display none -no-reboot -nodefaults \
  -serial "file:$LOG" -monitor none \
  -kernel "$GUEST_DIR/vmlinux" -initrd "$INITRD" -append "$KOPTS" \
  -netdev tap,id=n0,ifname=tap0,script=no,downscript=no \
  -device virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:77:00:10 \
  "${fwcfg[@]}" "${QEMU_EXTRA[@]+"${QEMU_EXTRA[@]}"}" &
QEMU_PID=$!

host_rc=0
if [ $# -gt 0 ]; then
  ip netns exec "$NS" timeout -k 5 "$TIMEOUT_S" "$@" &
  HOST_PID=$!
fi
# Wait for the guest; if the host command fails first, stop the guest at once instead of
# waiting for its tools to time out.
while kill -0 "$QEMU_PID" 2>/dev/null; do
  if [ -n "$HOST_PID" ] && ! kill -0 "$HOST_PID" 2>/dev/null; then
    wait "$HOST_PID" || host_rc=$?
    HOST_PID=""
    if [ "$host_rc" -ne 0 ]; then
      echo "run_guest: host command failed (status $host_rc): stopping the guest" >&2
      kill -TERM "$QEMU_PID" 2>/dev/null || true
    fi
  fi
  sleep 0.2
done
qemu_rc=0
wait "$QEMU_PID" || qemu_rc=$?
QEMU_PID=""
if [ -n "$HOST_PID" ]; then
  # The guest is gone: give the host side a moment to finish its own checks.
  for _ in $(seq 1 50); do kill -0 "$HOST_PID" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$HOST_PID" 2>/dev/null && { echo "run_guest: host command still running after the guest ended" >&2; kill "$HOST_PID" 2>/dev/null || true; }
  wait "$HOST_PID" || host_rc=$?
  HOST_PID=""
fi

if [ -n "$CAP_PID" ]; then
  sleep 0.5  # the last frames reach dumpcap's buffer
  kill -TERM "$CAP_PID" 2>/dev/null || true
  wait "$CAP_PID" 2>/dev/null || true
  CAP_PID=""
fi
sed 's/^/guest| /' "$LOG"
guest_rc="$(sed -n 's/^ROCEMU-GUEST EXIT \([0-9]*\).*/\1/p' "$LOG" | tail -n1 | tr -d '\r')"
if [ "$host_rc" != 0 ]; then
  echo "run_guest: FAIL: host command status $host_rc (guest script status ${guest_rc:-none})" >&2
  exit 1
fi
if [ -z "$guest_rc" ]; then
  echo "run_guest: FAIL: guest did not finish its script (qemu status $qemu_rc; 124 = timeout ${TIMEOUT_S}s)" >&2
  exit 1
fi
if [ "$guest_rc" != 0 ]; then
  echo "run_guest: FAIL: guest script status $guest_rc" >&2
  exit 1
fi
echo "run_guest: OK (guest script and host command both succeeded)"
