#!/usr/bin/env bash
# bench_realtime.sh — real-time engine packets per second through the soft switch on the
# quickstart topology (configs/bench_realtime.toml: 400 Gbps links so port-rate emulation
# does not bound it; one lcore polls both hosts and the switch over net_ring wires), and
# dpdk-testpmd io forwarding over net_ring vdevs in the same script run, and their ratio.
# A figure, not a test: numbers swing with the load of the machine.
#
# usage: scripts/bench_realtime.sh [BUILD_DIR] [TESTPMD_SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
secs=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "$(ls /dev/hugepages 2>/dev/null)" ] || grep -q '^HugePages_Free: *[1-9]' /proc/meminfo; then
  mem=(--in-memory)
else
  mem=(--no-huge -m 512 --no-shconf --file-prefix "rocemu-bench-$$")
fi

# 1. rocemu-testbed: frames through the switch (both directions) / engine time of the job.
"$build/apps/rocemu-testbed" "$root/configs/bench_realtime.toml" --out "$tmp/rocemu" \
  --log-level warn >"$tmp/rocemu.txt"
ours_pps=$(awk -F, 'NR > 1 && $8 == "s0" { pkts += $10; ns = $6 } END { printf "%.0f", pkts * 1e9 / ns }' \
  "$tmp/rocemu/summary.csv")
echo "rocemu-testbed (ring, 1 lcore, 2 hosts + switch, 1082-byte frames): $ours_pps packets/s through the switch"
grep -E "elapsed|wall" "$tmp/rocemu.txt" | sed 's/^/  /'

# 2. dpdk-testpmd io forwarding between two net_ring vdevs (each loops to itself).
if ! command -v dpdk-testpmd >/dev/null 2>&1; then
  echo "dpdk-testpmd: not installed on this machine (Debian package dpdk ships it); no ratio"
  exit 0
fi
# testpmd needs a forwarding lcore besides its main one: lcore 0 forwards (as our loop
# does), lcore 1 is its main lcore and only prints statistics.
timeout -s INT "$secs" dpdk-testpmd -l 0,1 --main-lcore 1 --no-pci "${mem[@]}" --no-telemetry \
  --vdev=net_ring0 --vdev=net_ring1 -- --forward-mode=io --tx-first --stats-period=1 \
  --total-num-mbufs=8192 >"$tmp/testpmd.txt" 2>&1 || true
# Last per-port "Rx-pps:" of each port: the final complete statistics block.
testpmd_pps=$( (grep -o 'Rx-pps: *[0-9]*' "$tmp/testpmd.txt" || true) | awk '{ v[NR] = $2 } END { if (NR >= 2) print v[NR-1] + v[NR]; else print 0 }')
echo "dpdk-testpmd io (net_ring x2, 1 lcore): $testpmd_pps packets/s"
if [ "$testpmd_pps" -gt 0 ]; then
  awk -v a="$ours_pps" -v b="$testpmd_pps" 'BEGIN { printf "ratio rocemu/testpmd: %.4f (testpmd is %.0fx faster)\n", a / b, b / a }'
else
  echo "dpdk-testpmd printed no rate; see its output:"; tail -20 "$tmp/testpmd.txt"
fi
