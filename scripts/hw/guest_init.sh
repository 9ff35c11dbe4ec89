#!/bin/sh
# /init of the hardware test's guest (scripts/hw/build_guest.sh). The same protocol as the
# interop guest (scripts/interop/guest_init.sh, booted by scripts/interop/run_guest.sh): runs
# the script QEMU hands in as fw_cfg opt/rxe/script (other opt/rxe/<name> files are copied to
# /tmp/<name>), with bash, output on the serial console, then prints "ROCEMU-GUEST EXIT
# <status>" and powers off. No addresses and no RDMA device: the virtio-net ports are for
# DPDK, and the script binds them itself (scripts/hw/bind.sh).
export PATH=/usr/bin:/usr/sbin:/bin:/sbin:/rocemu/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /run && mount -t tmpfs tmpfs /run
say() { echo "ROCEMU-GUEST $*"; }
finish() { say "EXIT $1"; sync; poweroff -f; }
for ko in /modules/*.ko; do
  insmod "$ko" || { say "insmod $ko failed"; finish 91; }
done
ip link set lo up
fw=/sys/firmware/qemu_fw_cfg/by_name/opt/rxe
i=0
while [ ! -e "$fw/script/raw" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
[ -e "$fw/script/raw" ] || { say "no fw_cfg opt/rxe/script"; finish 93; }
for d in "$fw"/*; do
  name="$(basename "$d")"
  cp "$d/raw" "/tmp/$name" && chmod +x "/tmp/$name"
done
say "UP"
cd /tmp
bash /tmp/script 2>&1
finish $?
