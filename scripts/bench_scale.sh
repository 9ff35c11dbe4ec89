#!/usr/bin/env bash
# bench_scale.sh — the virtual-time engine at datacenter scale (issue "Datacenter scale"):
# 3-tier fat trees under a permutation, with PFC, the shared buffer, RED-ECN and DCQCN all on
# (and DCQCN off), MTU 4096, 100 Gbps, 1 us per hop. Prints link-hops per second of wall time
# (a link-hop: one packet — data, ACK, CNP or pause — crossing one link; htsim's unit), events
# per second and the peak RSS of each run, against the targets. A figure, not a test: wall
# time swings with the machine's load; compare runs made side by side. A run whose mbuf pool
# ran dry is no figure (it measured the pool): the script stops there, with exit status 1.
#
# usage: scripts/bench_scale.sh [BUILD_DIR] [--smoke]
#   default: K=8 128 x 16 MiB (DCQCN on, off), K=16 1,024 x 2 MiB (DCQCN on)
#   --smoke: K=4 16 x 64 KiB, to check the script and the figures' parsing (CI's sim suite)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
smoke=0
for a in "$@"; do
  case "$a" in
    --smoke) smoke=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) build=$a ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME K SIZE_BYTES DCQCN(on|off): one rocemu-sim run; prints its figures, returns the
# link-hops per second (M/s) in $LHPS.
run() {
  local name=$1 k=$2 size=$3 dcqcn=$4
  {
    printf '[run]\nname = "%s"\nseed = 1\n' "$name"
    printf '[topology]\nkind = "fattree"\nk = %s\n' "$k"
    printf '[nic]\nmtu_bytes = 4096\n'
    # One QP pair per flow (docs/workload_runs.md): a permutation needs one per host, not a
    # mesh of 2 (n - 1) (K=16: 2,046 QPs per host).
    printf '[workload]\nqp_per_flow = true\n[workload.matrix]\npattern = "permutation"\nsize_bytes = %s\n' "$size"
    if [ "$dcqcn" = on ]; then printf '[dcqcn]\nprofile = "%s/configs/dcqcn/paper.toml"\n' "$root"; fi
    printf '[sim]\nuntil_us = 10000000\n'
  } >"$tmp/$name.toml"
  local t0 t1
  t0=$(date +%s.%N)
  if ! "$build/apps/rocemu-sim" "$tmp/$name.toml" --out "$tmp/$name" >"$tmp/$name.txt" 2>&1; then
    echo "$name: rocemu-sim failed:"; tail -20 "$tmp/$name.txt"; exit 1
  fi
  t1=$(date +%s.%N)
  # The run's cost.csv (docs/workload_runs.md): metric,value rows.
  local cost=$tmp/$name/cost.csv
  [ -s "$cost" ] || { echo "$name: no $cost"; cat "$tmp/$name.txt"; exit 1; }
  value() { awk -F, -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' "$cost" ||
              { echo "$name: no $1 in $cost" >&2; exit 1; }; }
  local hops events rss
  hops=$(value link_hops)
  LHPS=$(awk -v v="$(value link_hops_per_s)" 'BEGIN { printf "%.2f", v / 1e6 }')
  events="$(value events) ($(awk -v v="$(value events_per_s)" 'BEGIN { printf "%.2f", v / 1e6 }') M/s)"
  rss=$(awk -v v="$(value peak_rss_bytes)" 'BEGIN { printf "%.0f", v / 1048576 }')
  grep -q "all finished: yes" "$tmp/$name.txt" || { echo "$name: not every flow finished"; tail -20 "$tmp/$name.txt"; exit 1; }
  # A run whose mbuf pool ran dry measured the pool, not the network (docs/workload_runs.md).
  if grep -q "mbuf pool ran dry" "$tmp/$name.txt"; then
    echo "$name: not a figure: $(grep -o 'mbuf pool ran dry.*' "$tmp/$name.txt")"; exit 1
  fi
  printf '%-28s %12s link-hops  %7s M link-hops/s  events %-22s peak RSS %5s MiB  (%.1f s wall)\n' \
    "$name" "$hops" "$LHPS" "$events" "$rss" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
}

# memory_latency MIN_TIME_S: this machine's cost of one cache line read at random in 2, 8 and
# 32 MiB of data, and of one line per 4 KiB page over 32 MiB (the lines fit in the cache: the
# TLB's reach), on 4 KiB pages and with transparent huge pages advised (BM_MemoryLatency,
# tests/fabric/virtual_engine_bench.cc). A large fabric's events each touch a few lines spread
# over megabytes: this curve is why K=16 pays more per event than K=8 (docs/engines.md,
# fourteenth step).
memory_latency() {
  local bin=$build/tests/fabric/fabric_virtual_engine_bench
  [ -x "$bin" ] || { echo "no $bin: build the project first"; exit 1; }
  local line
  line=$("$bin" --benchmark_filter='BM_MemoryLatency' --benchmark_min_time="$1" \
           --benchmark_format=csv 2>/dev/null |
         awk -F, '/^"BM_MemoryLatency/ { split($1, a, "[/:\"]"); ns[a[4] "/" a[6] "/" a[8]] = $NF; k++ }
                  END {
                    if (k != 8) exit 1
                    printf "%.0f / %.0f / %.0f ns in 2 / 8 / 32 MiB (THP advised: %.0f / %.0f / %.0f); ",
                           ns["2/0/64"], ns["8/0/64"], ns["32/0/64"], ns["2/1/64"], ns["8/1/64"], ns["32/1/64"]
                    printf "one line per page over 32 MiB: %.0f ns (THP %.0f)\n", ns["32/0/4096"], ns["32/1/4096"]
                  }') ||
    { echo "memory latency: $bin gave no figures"; exit 1; }
  echo "memory latency, one random cache line: $line"
}

if [ "$smoke" = 1 ]; then
  run k4_perm_64k_dcqcn 4 65536 on
  memory_latency 0.01
  echo "smoke run: ok"
  exit 0
fi
run k8_perm_16m_dcqcn 8 16777216 on; k8=$LHPS
run k8_perm_16m_nodcqcn 8 16777216 off; k8off=$LHPS
run k16_perm_2m_dcqcn 16 2097152 on; k16=$LHPS
echo
echo "targets: K=8 with DCQCN >= 2.1 M link-hops/s (htsim, without DCQCN/shared buffer): $k8"
echo "         K=8 without DCQCN >= 4 M: $k8off"
echo "         K=16 >= 70% of K=8: $(awk -v a="$k16" -v b="$k8" 'BEGIN { printf "%.0f", 100 * a / b }')%"
memory_latency 0.2
