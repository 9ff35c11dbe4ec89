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
. /guest_fw_cfg.sh  # say, finish, run_fw_cfg_script (scripts/interop/guest_fw_cfg.sh)
for ko in /modules/*.ko; do
  insmod "$ko" || { say "insmod $ko failed"; finish 91; }
done
ip link set lo up
say "UP"
run_fw_cfg_script bash
