#!/usr/bin/env bash
# bench_switch_null.sh — the soft switch end to end over net_null ports (switch_null_e2e:
# 4 x net_null size=1024, star of 4 hosts + 1 switch, one lcore, bursts of 32) and
# dpdk-testpmd macswap over two net_null ports (size=1024) in the same script run, for the
# same number of seconds, and their ratio. docs/switch.md "Figures" quotes it.
# A figure, not a test: numbers swing with the load of the machine (uptime is printed).
#
# usage: scripts/bench_switch_null.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
secs=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "$(ls /dev/hugepages 2>/dev/null)" ] || grep -q '^HugePages_Free: *[1-9]' /proc/meminfo; then
  mem=(--in-memory)
else
  mem=(--no-huge -m 1024 --no-shconf)
fi
echo "load: $(uptime | sed 's/.*load average: //')"

# 1. The switch: an io phase (no switch) then the switch phase, $secs seconds each.
"$build/tests/switchsw/switch_null_e2e" "$secs" -- "${mem[@]}" >"$tmp/e2e.txt" 2>"$tmp/e2e.err" || {
  echo "switch_null_e2e failed:"; cat "$tmp/e2e.err"; exit 1; }
grep -v '^RESULT' "$tmp/e2e.txt" | sed 's/^/  /'
ours_pps=$(sed -n 's/^RESULT switch_pps=\([0-9]*\).*/\1/p' "$tmp/e2e.txt")

# 2. dpdk-testpmd macswap between two net_null vdevs. testpmd refuses to run without a
# forwarding lcore besides its main one, so `-l 0,1 --main-lcore 1`: lcore 0 forwards (the
# core switch_null_e2e polled on), lcore 1 only prints stats once a second. EAL start-up
# with --no-huge -m 1024 takes ~2 s here, so the timeout adds 2 s to forward ~$secs s.
if ! command -v dpdk-testpmd >/dev/null 2>&1; then
  echo "dpdk-testpmd: not installed on this machine (Debian package dpdk ships it); no ratio"
  exit 0
fi
timeout -s INT "$(awk -v s="$secs" 'BEGIN { print s + 2 }')" dpdk-testpmd -l 0,1 --main-lcore 1 --no-pci "${mem[@]}" --no-telemetry \
  --vdev=net_null0,size=1024 --vdev=net_null1,size=1024 -- --forward-mode=macswap \
  --stats-period=1 --total-num-mbufs=8192 >"$tmp/testpmd.txt" 2>&1 || true
# Last per-port "Rx-pps:" of each port (the final complete statistics block), summed.
testpmd_pps=$( (grep -o 'Rx-pps: *[0-9]*' "$tmp/testpmd.txt" || true) | awk '{ v[NR] = $2 } END { if (NR >= 2) print v[NR-1] + v[NR]; else print 0 }')

awk -v a="$ours_pps" 'BEGIN { printf "switch_null_e2e (4 x net_null, 1 lcore, 1 KB): %.2f Mpps through the switch\n", a / 1e6 }'
awk -v b="$testpmd_pps" 'BEGIN { printf "dpdk-testpmd macswap (2 x net_null, 1 lcore, 1 KB): %.2f Mpps\n", b / 1e6 }'
if [ "$testpmd_pps" -gt 0 ]; then
  awk -v a="$ours_pps" -v b="$testpmd_pps" 'BEGIN { printf "ratio switch/testpmd: %.3f (testpmd is %.1fx faster)\n", a / b, b / a }'
else
  echo "dpdk-testpmd printed no rate; see its output:"; tail -20 "$tmp/testpmd.txt"
fi
