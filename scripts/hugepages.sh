#!/usr/bin/env bash
# Optional: reserves 2 MB hugepages and mounts hugetlbfs so DPDK runs with --in-memory on
# hugepages (about 2x faster than the --no-huge fallback). Usage: scripts/hugepages.sh [PAGES]
# (default 512 = 1 GiB). Needs root. Undo: echo 0 > /proc/sys/vm/nr_hugepages.
set -euo pipefail
pages="${1:-512}"
if [ "$(id -u)" -ne 0 ]; then echo "hugepages.sh: needs root" >&2; exit 1; fi
mountpoint -q /dev/hugepages || { mkdir -p /dev/hugepages; mount -t hugetlbfs nodev /dev/hugepages; }
echo "$pages" > /proc/sys/vm/nr_hugepages
got=$(cat /proc/sys/vm/nr_hugepages)
echo "hugepages.sh: $got x 2 MB pages reserved (asked $pages), hugetlbfs on /dev/hugepages"
[ "$got" -ge "$pages" ] || { echo "hugepages.sh: fewer pages than asked (memory fragmented?)" >&2; exit 1; }
