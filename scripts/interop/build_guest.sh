#!/usr/bin/env bash
# build_guest.sh BUILD_DIR — build (once) the QEMU guest that runs Linux soft-RoCE (rdma_rxe).
#
# Recipe from /work/shared/INTEROP.md "Booting an rxe peer in QEMU" (measured: ~2 min cold,
# ~4 s a boot under TCG). Outputs, all under BUILD_DIR/interop-guest/:
#   vmlinux          uncompressed kernel of Debian's linux-image-amd64 (boots much faster under
#                    TCG than the bzImage), XZ stream extracted from vmlinuz with Python's lzma
#   initrd.cpio      busybox + the ldd closure of the RDMA tools + rdma_rxe and its module
#                    dependencies + our /init (scripts/interop/guest_init.sh)
#   rootfs/          debootstrap --variant=minbase bookworm with rdma-core, ibverbs-utils, perftest
# Cached: every step whose output exists is skipped, so a second run costs nothing. The /init
# is re-copied (cheap) so editing guest_init.sh needs no rebuild of the rest.
# Needs root (debootstrap, chroot) and the packages listed in scripts/setup.sh.
set -euo pipefail

if [ $# -ne 1 ]; then echo "usage: $0 BUILD_DIR" >&2; exit 2; fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$(mkdir -p "$1" && cd "$1" && pwd)/interop-guest"
MIRROR="${ROCEMU_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
PY=/usr/bin/python3
mkdir -p "$OUT"
# Tests may call this concurrently: one builds, the others wait and then find it cached.
exec 9> "$OUT/.lock"
flock -w 900 9 || { echo "build_guest: timed out waiting for $OUT/.lock" >&2; exit 1; }
log() { echo "build_guest: $*" >&2; }
for tool in debootstrap cpio busybox qemu-system-x86_64 apt-get dpkg-deb; do
  command -v "$tool" >/dev/null || { log "missing '$tool': run scripts/setup.sh"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { log "must run as root (debootstrap, chroot)"; exit 1; }

# 1. Kernel package (the versioned image that linux-image-amd64 depends on).
if [ ! -f "$OUT/kernel/.done" ]; then
  log "downloading the kernel package"
  rm -rf "$OUT/kernel" && mkdir -p "$OUT/kernel/deb"
  resolve() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
  pkg="$(resolve)"
  if [ -z "$pkg" ]; then  # a fresh machine may have no package lists yet
    apt-get update -q >/dev/null || true
    pkg="$(resolve)"
  fi
  [ -n "$pkg" ] || { log "cannot resolve linux-image-amd64 from the Debian mirror"; exit 1; }
  (cd "$OUT/kernel/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null)
  dpkg-deb -x "$OUT"/kernel/deb/*.deb "$OUT/kernel/root"
  rm -rf "$OUT/kernel/deb"
  touch "$OUT/kernel/.done"
fi
KVER="$(ls "$OUT/kernel/root/lib/modules" | head -n1)"

# 2. Uncompressed vmlinux: the bzImage carries one XZ stream; decode from its magic.
if [ ! -f "$OUT/vmlinux" ]; then
  log "extracting vmlinux from vmlinuz-$KVER"
  "$PY" - "$OUT/kernel/root/boot/vmlinuz-$KVER" "$OUT/vmlinux.tmp" <<'PYEOF'
import lzma, sys
data = open(sys.argv[1], 'rb').read()
at = data.find(b'\xfd7zXZ\x00')
if at < 0:
    sys.exit('no XZ stream in ' + sys.argv[1])
out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[at:])
if out[:4] != b'\x7fELF':
    sys.exit('decoded stream is not an ELF vmlinux')
open(sys.argv[2], 'wb').write(out)
PYEOF
  mv "$OUT/vmlinux.tmp" "$OUT/vmlinux"
fi

# 3. Root filesystem (the source of the user-space tools and their libraries).
if [ ! -f "$OUT/rootfs/.done" ]; then
  log "debootstrap $SUITE minbase (about a minute)"
  rm -rf "$OUT/rootfs"
  debootstrap --variant=minbase \
    --include=rdma-core,ibverbs-providers,ibverbs-utils,perftest,rdmacm-utils,iproute2,kmod,busybox \
    "$SUITE" "$OUT/rootfs" "$MIRROR" > "$OUT/debootstrap.log" 2>&1 \
    || { log "debootstrap failed, see $OUT/debootstrap.log"; tail -5 "$OUT/debootstrap.log" >&2; exit 1; }
  touch "$OUT/rootfs/.done"
fi

# 4. Initramfs tree: busybox, the tools with their library closure, the modules, /init.
# iproute2 (ip, rdma, ss) lands in /usr/bin, ahead of busybox's applets in /init's PATH. The
# list is recorded in initrd/.done: a tree built with another list is built again.
tools=(/usr/bin/ibv_rc_pingpong /usr/bin/ibv_uc_pingpong /usr/bin/ibv_ud_pingpong
       /usr/bin/ibv_devinfo /usr/bin/ibv_devices /usr/bin/ib_write_bw
       /usr/bin/ib_read_bw /usr/bin/ib_write_lat /usr/bin/ib_send_bw /usr/bin/ib_atomic_bw
       /usr/bin/ib_atomic_lat /usr/bin/ib_send_lat /usr/bin/ib_read_lat /usr/bin/ip /usr/bin/rdma
       /usr/bin/ss /usr/bin/rping
       /usr/lib/x86_64-linux-gnu/libgcc_s.so.1)  # glibc dlopens it for pthread_exit (rping)
if [ ! -f "$OUT/initrd/.done" ] || [ "$(cat "$OUT/initrd/.done")" != "${tools[*]}" ]; then
  log "assembling the initramfs"
  R="$OUT/rootfs"; I="$OUT/initrd"
  rm -rf "$I" && mkdir -p "$I"/{bin,sbin,etc,proc,sys,dev,tmp,run,lib64,usr/lib/x86_64-linux-gnu}
  cp "$(command -v busybox)" "$I/bin/busybox"
  for applet in $("$I/bin/busybox" --list); do
    [ -e "$I/bin/$applet" ] || ln -s busybox "$I/bin/$applet"
  done
  copy_with_libs() {  # $1: absolute path inside the rootfs
    local f="$1"
    [ -e "$R$f" ] || return 0
    mkdir -p "$I$(dirname "$f")"
    rm -f "$I$f"  # never write through a busybox applet link
    cp -L "$R$f" "$I$f"
    chroot "$R" ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib64/{print $1}' |
      while read -r lib; do
        mkdir -p "$I$(dirname "$lib")"
        [ -e "$I$lib" ] || cp -L "$R$lib" "$I$lib"
      done
  }
  for t in "${tools[@]}"; do copy_with_libs "$t"; done
  # The verbs provider for rxe (dlopen'ed, so ldd does not list it) and its driver file.
  mkdir -p "$I/etc/libibverbs.d" "$I/usr/lib/x86_64-linux-gnu/libibverbs"
  cp "$R/etc/libibverbs.d/rxe.driver" "$I/etc/libibverbs.d/"
  copy_with_libs /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
  # Kernel modules: depmod inside the rootfs, then copy what modprobe would insmod, in order.
  rm -rf "$R/lib/modules/$KVER"
  mkdir -p "$R/lib/modules"
  cp -a "$OUT/kernel/root/lib/modules/$KVER" "$R/lib/modules/"
  chroot "$R" depmod "$KVER"
  # crc32_generic: rxe allocates the "crc32" shash for the ICRC (a soft dependency that
  # --show-depends does not list).
  for m in virtio_pci virtio_net qemu_fw_cfg crc32_generic rdma_rxe ib_uverbs rdma_ucm; do
    chroot "$R" modprobe -S "$KVER" --show-depends "$m"
  done | awk '$1=="insmod"{print $2}' | awk '!seen[$0]++' > "$OUT/modules.order"
  mkdir -p "$I/modules"
  n=0
  while read -r ko; do
    n=$((n+1)); name="$(printf '%02d' $n)_$(basename "$ko")"
    cp "$R$ko" "$I/modules/$name"
    case "$name" in *.xz) xz -d "$I/modules/$name" ;; *.zst) zstd -q -d --rm "$I/modules/$name" ;; esac
  done < "$OUT/modules.order"
  echo "$KVER" > "$I/etc/kernel-version"
  echo "${tools[*]}" > "$I/.done"
fi
install -p -m 0755 "$HERE/guest_init.sh" "$OUT/initrd/init"
install -p -m 0644 "$HERE/guest_fw_cfg.sh" "$OUT/initrd/guest_fw_cfg.sh"

# 5. Pack (uncompressed: the kernel unpacks it faster than it could gunzip under TCG).
if [ ! -f "$OUT/initrd.cpio" ] || [ "$OUT/initrd/init" -nt "$OUT/initrd.cpio" ] ||
   [ "$OUT/initrd/guest_fw_cfg.sh" -nt "$OUT/initrd.cpio" ] || [ "$OUT/initrd/.done" -nt "$OUT/initrd.cpio" ]; then
  (cd "$OUT/initrd" && find . ! -name .done | LC_ALL=C sort | cpio -o -H newc --quiet) \
    > "$OUT/initrd.cpio.tmp"
  mv "$OUT/initrd.cpio.tmp" "$OUT/initrd.cpio"
  log "initrd.cpio: $(du -m "$OUT/initrd.cpio" | cut -f1) MB, kernel $KVER"
fi
echo "$OUT"
