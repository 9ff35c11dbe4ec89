#!/bin/sh
# /init of the rxe guest (busybox sh). Recipe: /work/shared/INTEROP.md "Booting an rxe peer".
# Brings up eth0 with the address given on the kernel command line (rocemu_ip=A.B.C.D/N),
# creates the soft-RoCE device rxe0 on it, runs the script handed in by QEMU's fw_cfg
# (opt/rxe/script) and powers off. Every line of the script's output goes to the serial
# console; the last line is "ROCEMU-GUEST-EXIT <status>" so the host can tell success from a
# crash or a timeout. Optional fw_cfg files opt/rxe/<name> are copied to /tmp/<name>.
export PATH=/usr/bin:/usr/sbin:/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
. /guest_fw_cfg.sh  # say, finish, run_fw_cfg_script

ip_cidr=""
for arg in $(cat /proc/cmdline); do
  case "$arg" in rocemu_ip=*) ip_cidr="${arg#rocemu_ip=}" ;; esac
done
[ -n "$ip_cidr" ] || { say "no rocemu_ip= on the kernel command line"; finish 90; }

# GID-0 (IPv6 link-local) QPs fail "Failed to modify QP to RTR" while DAD runs.
echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad
echo 0 > /proc/sys/net/ipv6/conf/all/accept_dad
for ko in /modules/*.ko; do
  insmod "$ko" || { say "insmod $ko failed"; finish 91; }
done
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
ip link set lo up
ip link set eth0 up
ip addr add "$ip_cidr" dev eth0
rdma link add rxe0 type rxe netdev eth0 || { say "rdma link add failed"; finish 92; }
say "UP rxe0 on eth0 $ip_cidr"

run_fw_cfg_script sh
