#!/usr/bin/env bash
# build_guest.sh BUILD_DIR — the QEMU guest of the hardware test (tests/hw/meson.build,
# docs/hardware.md "Testing without hardware"): the interop guest's kernel
# (scripts/interop/build_guest.sh, built or reused from BUILD_DIR/interop-guest) with an
# initramfs holding what a user needs on a machine with NICs: bash, iproute2, kmod, pciutils'
# lspci, python3 (a trimmed standard library) and Debian's dpdk-devbind.py, DPDK's PCI bus,
# ring mempool and virtio PMD plugins, rocemu-testbed and rocemu_write_bw from BUILD_DIR with
# their library closure (neither links LibTorch), scripts/hw/, scripts/hugepages.sh and
# configs/hw/ under /rocemu, uio_pci_generic loadable by modprobe (Debian 12's kernel has no
# CONFIG_VFIO_NOIOMMU), and /init = scripts/hw/guest_init.sh. Output:
# BUILD_DIR/hw-guest/initrd.cpio (uncompressed: TCG unpacks it faster). The tree is rebuilt
# when a binary, script or config is newer than the cpio. Needs root (chroot depmod).
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: $0 BUILD_DIR" >&2; exit 2; fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$(cd "$HERE/../.." && pwd)"
BUILD="$(cd "$1" && pwd)"
OUT="$BUILD/hw-guest"
log() { echo "build_hw_guest: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "must run as root"; exit 1; }
BINS=("$BUILD/apps/rocemu-testbed" "$BUILD/apps/perftest/rocemu_write_bw")
for b in "${BINS[@]}"; do [ -x "$b" ] || { log "missing $b: ninja -C $BUILD ${b#$BUILD/}"; exit 1; }; done
for t in busybox python3 lspci dpdk-devbind.py cpio; do
  command -v "$t" >/dev/null || { log "missing '$t': run scripts/setup.sh"; exit 1; }
done
GUEST="$("$SRC/scripts/interop/build_guest.sh" "$BUILD" | tail -n1)"   # kernel + rootfs, cached
R="$GUEST/rootfs"
KVER="$(ls "$GUEST/kernel/root/lib/modules" | head -n1)"
mkdir -p "$OUT"
exec 9> "$OUT/.lock"
flock -w 600 9 || { log "timed out waiting for $OUT/.lock"; exit 1; }

newest=0
for f in "${BINS[@]}" "$HERE"/*.sh "$SRC"/scripts/hugepages.sh "$SRC"/scripts/interop/guest_fw_cfg.sh "$SRC"/configs/hw/*.toml "$0"; do
  m="$(stat -c %Y "$f")"; [ "$m" -gt "$newest" ] && newest="$m"
done
if [ -f "$OUT/initrd.cpio" ] && [ "$(stat -c %Y "$OUT/initrd.cpio")" -ge "$newest" ]; then
  echo "$OUT"; exit 0
fi
log "assembling the initramfs"
I="$OUT/initrd"
rm -rf "$I" && mkdir -p "$I"/{bin,sbin,etc,proc,sys,dev,tmp,run,lib64,usr/bin,usr/lib/x86_64-linux-gnu,rocemu}
mkdir -p "$I/var" && ln -s /run "$I/var/run"  # EAL's runtime directory /var/run/dpdk
cp "$(command -v busybox)" "$I/bin/busybox"
for applet in $("$I/bin/busybox" --list); do
  [ -e "$I/bin/$applet" ] || ln -s busybox "$I/bin/$applet"
done
ln -sf /bin/busybox "$I/usr/bin/env"
# copy_with_libs ROOT FILE: FILE from ROOT ("" = this machine) and its ldd closure.
copy_with_libs() {
  local root="$1" f="$2" lib
  mkdir -p "$I$(dirname "$f")"
  rm -f "$I$f"
  cp -L "$root$f" "$I$f"
  if [ -n "$root" ]; then chroot "$root" ldd "$f"; else ldd "$f"; fi 2>/dev/null |
    awk '/=> \//{print $3} /^\t\/lib64/{print $1}' |
    while read -r lib; do
      mkdir -p "$I$(dirname "$lib")"
      [ -e "$I$lib" ] || cp -L "$root$lib" "$I$lib"
    done
}
for t in /bin/bash /usr/bin/ip /usr/bin/kmod /usr/bin/mountpoint; do copy_with_libs "$R" "$t"; done
rm -f "$I/bin/sh"; ln -s bash "$I/bin/sh"  # the scripts' /usr/bin/env bash and sh -> bash
for m in modprobe insmod lsmod rmmod depmod modinfo; do rm -f "$I/sbin/$m" "$I/bin/$m"; ln -s /usr/bin/kmod "$I/sbin/$m"; done
# This machine's tools (the same Debian 12 packages a user installs with scripts/setup.sh).
for t in /usr/bin/python3.11 /usr/bin/lspci "${BINS[@]}"; do copy_with_libs "" "$t"; done
for b in "${BINS[@]}"; do strip --strip-debug "$I$b"; done  # 40 MB of debug info boots slowly
ln -sf python3.11 "$I/usr/bin/python3"
mkdir -p "$I/usr/share/misc" && cp -L /usr/share/misc/pci.ids "$I/usr/share/misc/" 2>/dev/null || true
cp /usr/bin/dpdk-devbind.py "$I/usr/bin/"
PYLIB=/usr/lib/python3.11
mkdir -p "$I$PYLIB"
cp "$PYLIB"/*.py "$I$PYLIB/"
for d in encodings importlib re collections urllib lib-dynload; do cp -r "$PYLIB/$d" "$I$PYLIB/"; done
find "$I$PYLIB" -name __pycache__ -prune -exec rm -rf {} +
# Not what dpdk-devbind.py imports, and each pulls a large library (Tcl, Berkeley DB, ...).
rm -f "$I$PYLIB"/lib-dynload/{_tkinter,_dbm,_gdbm,_sqlite3,_ssl,_hashlib,_curses,_curses_panel,readline,_ctypes,_decimal,_uuid}.*so
for so in "$I$PYLIB"/lib-dynload/*.so; do copy_with_libs "" "${so#$I}"; done
# DPDK's plugins: EAL loads every driver in this directory (Debian's RTE_EAL_PMD_PATH).
PMDS=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
mkdir -p "$I$PMDS"
# A driver the binaries already link (bus_pci, ...) must not be there too: a second copy of
# the same library registers its tailq twice and EAL panics.
for p in librte_bus_pci librte_bus_vdev librte_mempool_ring librte_net_virtio; do
  [ -e "$I/lib/x86_64-linux-gnu/$p.so.23" ] || [ -e "$I/usr/lib/x86_64-linux-gnu/$p.so.23" ] && continue
  cp -a "$PMDS/$p".so* "$I$PMDS/"
  copy_with_libs "" "$(readlink -f "$PMDS/$p.so")"
done
# Kernel modules: virtio and fw_cfg insmod'ed by /init (in order), uio_pci_generic for modprobe.
if [ ! -e "$R/lib/modules/$KVER/modules.dep" ]; then
  mkdir -p "$R/lib/modules" && cp -a "$GUEST/kernel/root/lib/modules/$KVER" "$R/lib/modules/"
  chroot "$R" depmod "$KVER"
fi
mkdir -p "$I/modules"
n=0
for m in virtio_pci virtio_net qemu_fw_cfg; do
  chroot "$R" modprobe -S "$KVER" --show-depends "$m"
done | awk '$1=="insmod"{print $2}' | awk '!seen[$0]++' | while read -r ko; do
  n=$((n+1)); cp "$R$ko" "$I/modules/$(printf '%02d' $n)_$(basename "$ko")"
done
M="/lib/modules/$KVER"
mkdir -p "$I$M"
cp "$R$M"/modules.{dep,dep.bin,alias,alias.bin,softdep,symbols.bin,builtin,builtin.bin,builtin.alias.bin} "$I$M/"
chroot "$R" modprobe -S "$KVER" --show-depends uio_pci_generic | awk '$1=="insmod"{print $2}' |
  while read -r ko; do mkdir -p "$I$(dirname "$ko")"; cp "$R$ko" "$I$ko"; done
# rocemu's scripts and configs, as a checkout has them.
mkdir -p "$I/rocemu/scripts/hw" "$I/rocemu/configs/hw" "$I/rocemu/configs/workloads" "$I/rocemu/bin"
cp "$HERE"/*.sh "$I/rocemu/scripts/hw/"
cp "$SRC/scripts/hugepages.sh" "$I/rocemu/scripts/"
cp "$SRC"/configs/hw/*.toml "$I/rocemu/configs/hw/"
cp "$SRC/configs/workloads/FbHdp_distribution.txt" "$I/rocemu/configs/workloads/"
# The binaries themselves, not links to their build paths: the guest mounts a tmpfs on /tmp,
# which would hide a build directory under /tmp (a checkout there).
for b in "${BINS[@]}"; do mv "$I$b" "$I/rocemu/bin/$(basename "$b")"; done
echo "$KVER" > "$I/etc/kernel-version"
install -p -m 0755 "$HERE/guest_init.sh" "$I/init"
install -p -m 0644 "$SRC/scripts/interop/guest_fw_cfg.sh" "$I/guest_fw_cfg.sh"
(cd "$I" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$OUT/initrd.cpio.tmp"
mv "$OUT/initrd.cpio.tmp" "$OUT/initrd.cpio"
log "initrd.cpio: $(du -m "$OUT/initrd.cpio" | cut -f1) MB, kernel $KVER"
echo "$OUT"
