# guest_virtio_loopback.sh — runs in the hardware test's guest (bash; scripts/hw/guest_init.sh):
# the PCI path end to end on four virtio-net ports, two "NICs" of two ports cabled by the
# host's QEMU (UDP socket netdevs) as configs/hw/loopback_switch.toml wants, all with speed
# 10000 and host_mtu 4000. As a user with NICs would: prepare.sh, bind.sh by interface name
# (refused while one has an address), configs/hw/loopback.toml across one cable — refused at IB
# MTU 4096 (MTU limit 4000), completed and verified at 2048 with hardware PFC asked for (virtio
# has none: software) — loopback_switch.toml through the soft switch on the second NIC,
# loopback_workload.toml (shortened), rocemu_write_bw --loopback --pci across one cable, and
# unbind.sh giving all four back to virtio-pci under their old names.
set -u
R=/rocemu
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "== $* ($(( $(date +%s) - T0 )) s)"; }
T0=$(date +%s)
iface_of() {
  local n
  for n in /sys/class/net/*; do [ "$(cat "$n/address")" = "$1" ] && basename "$n"; done
  return 0
}
# NIC 1 ports A and B, NIC 2 ports C and D; cables A <-> C and D <-> B (virtio_guest_test.sh).
# "B" below is the far end of A's cable, NIC 2's port C: two NICs back to back.
MAC_A=52:54:00:77:01:0a MAC_B=52:54:00:77:01:0c MAC_C=52:54:00:77:01:0b MAC_D=52:54:00:77:01:0d
A_IF="$(iface_of $MAC_A)" B_IF="$(iface_of $MAC_B)" C_IF="$(iface_of $MAC_C)" D_IF="$(iface_of $MAC_D)"
[ -n "$A_IF" ] && [ -n "$B_IF" ] && [ -n "$C_IF" ] && [ -n "$D_IF" ] ||
  fail "no virtio ports with MACs $MAC_A, $MAC_B, $MAC_C, $MAC_D ($(ls /sys/class/net))"
step "ports: $A_IF $B_IF $C_IF $D_IF"

$R/scripts/hw/prepare.sh --driver uio_pci_generic --pages 400 || fail "prepare.sh"

ip link set "$A_IF" up
ip addr add 10.9.9.1/24 dev "$A_IF"
out="$($R/scripts/hw/bind.sh --driver uio_pci_generic "$B_IF" "$A_IF" 2>&1)" && fail "bind.sh took a port with an address: $out"
echo "$out"
echo "$out" | grep -q "refusing $A_IF: it has an address (10.9.9.1/24)" || fail "wrong refusal: $out"
[ -e "/sys/class/net/$B_IF" ] || fail "$B_IF was taken although $A_IF was refused"
ip addr flush dev "$A_IF" scope global
ip link set "$A_IF" down

pcis="$($R/scripts/hw/bind.sh --driver uio_pci_generic "$A_IF" "$B_IF" "$C_IF" "$D_IF")" || fail "bind.sh"
A="$(echo "$pcis" | sed -n 1p)" B="$(echo "$pcis" | sed -n 2p)"
C="$(echo "$pcis" | sed -n 3p)" D="$(echo "$pcis" | sed -n 4p)"
for p in "$A" "$B" "$C" "$D"; do
  d="$(basename "$(readlink -f /sys/bus/pci/devices/$p/driver)")"
  [ "$d" = uio_pci_generic ] || fail "$p is on '$d' after bind.sh"
done
step "bound $A $B $C $D"

cfg() {  # cfg MTU BYTES: configs/hw/loopback.toml on the guest's ports
  sed -e "s/0000:03:00.0/$A/" -e "s/0000:03:00.1/$B/" -e "s/^bytes = .*/bytes = $2/" \
      -e "s/^mtu_bytes = .*/mtu_bytes = $1/" -e "s/^hardware_pfc = .*/hardware_pfc = true/" \
      $R/configs/hw/loopback.toml > "/tmp/loopback_$1.toml"
  echo "/tmp/loopback_$1.toml"
}
rocemu-testbed "$(cfg 4096 4194304)" --out /tmp/o4096 > /tmp/r4096.txt 2>&1 && fail "ran with an MTU above the ports' limit"
cat /tmp/r4096.txt
grep -q "MTU limit 4000 bytes is below the 4160 this run needs" /tmp/r4096.txt || fail "no MTU refusal"
step "refused at IB MTU 4096"

ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }  # busybox date has no %N
t=$(ms)
rocemu-testbed "$(cfg 2048 8388608)" --out /tmp/o2048 > /tmp/r2048.txt 2>&1; rc=$?
cat /tmp/r2048.txt
[ $rc -eq 0 ] || fail "rocemu-testbed exit $rc"
for want in "completed: yes   data verified: yes" \
            "port $A: driver net_virtio, link up, speed 10 Gbps full duplex, MTU 2112 (limit 4000), PFC software (hardware PFC on priority" \
            "port $B: driver net_virtio, link up, speed 10 Gbps"; do
  grep -qF "$want" /tmp/r2048.txt || fail "missing '$want'"
done
step "loopback write job: 8 MiB verified in $(( $(ms) - t )) ms of wall time"

# The soft switch between the hosts on the second NIC: h0 on A <-> s0 port 0 on NIC 2's
# first port (B here), s0 port 1 on NIC 2's second port (D) <-> h1 on NIC 1's second (C).
sed -e "s/0000:03:00.0/$A/" -e "s/0000:04:00.0/$B/" -e "s/0000:04:00.1/$D/" -e "s/0000:03:00.1/$C/" \
    -e "s/^bytes = .*/bytes = 4194304/" -e "s/^mtu_bytes = .*/mtu_bytes = 2048/" \
    $R/configs/hw/loopback_switch.toml > /tmp/switch.toml
t=$(ms)
rocemu-testbed /tmp/switch.toml --out /tmp/osw > /tmp/rsw.txt 2>&1; rc=$?
cat /tmp/rsw.txt
[ $rc -eq 0 ] || fail "rocemu-testbed (switch) exit $rc"
grep -qF "completed: yes   data verified: yes" /tmp/rsw.txt || fail "switch run not completed and verified"
[ "$(grep -c "driver net_virtio, link up, speed 10 Gbps" /tmp/rsw.txt)" -ge 4 ] || fail "not four ports up at 10 Gbps"
awk '$1 == "s0" && $2 == 1 && $3 > 0 {ok = 1} END {exit !ok}' /tmp/rsw.txt || fail "s0 port 1 sent nothing"
step "through the soft switch: 4 MiB verified in $(( $(ms) - t )) ms of wall time"

sed -e "s/0000:03:00.0/$A/" -e "s/0000:03:00.1/$B/" -e "s/^mtu_bytes = .*/mtu_bytes = 2048/" \
    -e "s/^duration_us = .*/duration_us = 5000/" -e "s/^load = .*/load = 0.2/" \
    $R/configs/hw/loopback_workload.toml > /tmp/configs_hw_workload.toml
# cdf_file is relative to the run file's directory: keep it beside configs/hw.
cp /tmp/configs_hw_workload.toml $R/configs/hw/guest_workload.toml
t=$(ms)
rocemu-testbed $R/configs/hw/guest_workload.toml --out /tmp/owl > /tmp/rwl.txt 2>&1; rc=$?
cat /tmp/rwl.txt
[ $rc -eq 0 ] || fail "rocemu-testbed (workload) exit $rc"
grep -q "all finished: yes" /tmp/rwl.txt || fail "workload flows not all finished"
flows="$(sed -n 's/.*flows generated \([0-9]*\), posted \([0-9]*\), failed 0;.*/\1 \2/p' /tmp/rwl.txt)"
set -- $flows
[ "${1:-0}" -ge 5 ] && [ "$1" = "${2:-}" ] || fail "workload: '$flows' (want at least 5 flows, all posted, none failed)"
step "workload variant: $1 flows in $(( $(ms) - t )) ms of wall time"

rocemu_write_bw --loopback --pci="$A,$B" -m 2048 -s 65536 -n 200 > /tmp/bw.txt 2>&1; rc=$?
cat /tmp/bw.txt
[ $rc -eq 0 ] || fail "rocemu_write_bw exit $rc"
grep -qF "port $A: driver net_virtio, link up, speed 10 Gbps" /tmp/bw.txt || fail "rocemu_write_bw printed no port line"
grep -qF "Device         : rocemu (loopback, PCI $A <-> $B)" /tmp/bw.txt || fail "rocemu_write_bw's banner names no PCI ports"
awk '$1 == 65536 && $2 == 200 && $4 > 0 {ok = 1} END {exit !ok}' /tmp/bw.txt || fail "no 65536 x 200 result row"
step "rocemu_write_bw --pci"

$R/scripts/hw/unbind.sh "$A" "$B" "$C" "$D" || fail "unbind.sh"
for m in $MAC_A $MAC_B $MAC_C $MAC_D; do
  i=0; while [ -z "$(iface_of $m)" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
  [ -n "$(iface_of $m)" ] || fail "no interface with $m after unbind.sh"
done
for p in "$A" "$B" "$C" "$D"; do
  d="$(basename "$(readlink -f /sys/bus/pci/devices/$p/driver)")"
  [ "$d" = virtio-pci ] || fail "$p is on '$d' after unbind.sh"
done
step "all four ports back on virtio-pci: $(iface_of $MAC_A) $(iface_of $MAC_B) $(iface_of $MAC_C) $(iface_of $MAC_D)"
echo "PASS"
