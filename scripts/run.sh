#!/usr/bin/env bash
# One command for a new user: installs what is needed, builds, and runs the default testbed
# (real time, one process, net_ring wires, 2 hosts + 1 switch; no hugepages needed: EAL falls
# back to --no-huge). Host A RDMA-WRITEs 4 MiB into host B through the soft switch, the data is
# verified and a summary printed. Arguments are passed to rocemu-testbed (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR="${ROCEMU_BUILD_DIR:-build}"
exec "$BUILD_DIR/apps/rocemu-testbed" configs/quickstart.toml "$@"
