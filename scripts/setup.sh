#!/usr/bin/env bash
# Installs every Debian 12 package rocemu needs to build, test, benchmark and plot.
# Idempotent: apt-get skips what is already installed. Run as root (or with sudo).
set -euo pipefail

PACKAGES=(
  # build
  build-essential pkg-config meson ninja-build git
  # data plane
  dpdk dpdk-dev libdpdk-dev libibverbs-dev rdma-core libpcap-dev
  # agent: LibTorch with OpenBLAS (takes over libblas.so.3; the netlib reference BLAS is ~6x slower)
  libtorch-dev libopenblas0-pthread libopenblas-dev
  # config and logging
  libtomlplusplus-dev libspdlog-dev libfmt-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev clang libclang-rt-14-dev
  # conformance tests, captures, plots, testbed
  tshark python3-scapy python3-matplotlib iproute2 procps
  # interop suite: a QEMU guest running Linux rdma_rxe (scripts/interop/build_guest.sh)
  qemu-system-x86 debootstrap cpio busybox-static util-linux
  # hardware NIC runs (scripts/hw/): dpdk-devbind.py (in dpdk) reads lspci; modprobe
  pciutils kmod
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup.sh: must run as root (or have sudo) to install packages" >&2; exit 1; fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup.sh: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "setup.sh: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections || true
if ! $SUDO apt-get update -q; then
  echo "setup.sh: 'apt-get update' failed: check network access to the Debian mirrors" >&2; exit 1
fi
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  echo "setup.sh: 'apt-get install' failed for: ${missing[*]}" >&2; exit 1
fi
echo "setup.sh: done"
