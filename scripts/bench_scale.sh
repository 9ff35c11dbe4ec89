#!/usr/bin/env bash
# bench_scale.sh — the virtual-time engine at datacenter scale (issue "Datacenter scale"):
# 3-tier fat trees under a permutation, with PFC, the shared buffer, RED-ECN and DCQCN all on
# (and DCQCN off), MTU 4096, 100 Gbps, 1 us per hop. Prints link-hops per second of wall time
# (a link-hop: one packet — data, ACK, CNP or pause — crossing one link; htsim's unit), events
# per second and the peak RSS of each run, against the targets. A figure, not a test: wall
# time swings with the machine's load; compare runs made side by side. A run whose mbuf pool
# ran dry is no figure (it measured the pool): the script stops there, with exit status 1.
#
# usage: scripts/bench_scale.sh [BUILD_DIR] [--smoke] [--rounds N] [--against OTHER_BUILD_DIR]
#   default: K=8 128 x 16 MiB (DCQCN on, off), K=16 1,024 x 2 MiB (DCQCN on)
#   --smoke: K=4 16 x 64 KiB, to check the script and the figures' parsing (CI's sim suite)
#   --rounds N: run each configuration N times and give the median (and range) of each
#   --against OTHER_BUILD_DIR: in each round, run OTHER_BUILD_DIR's rocemu-sim and then
#     BUILD_DIR's, one after the other, and give per configuration both medians and the
#     median of the rounds' ratios (this / other; a ratio of runs made side by side is what
#     a noisy machine can compare), and check that both gave the same result files
#     (bins, failures, flows, metrics: exit status 1 if not).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
smoke=0
rounds=1
other=
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --rounds)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "--rounds needs a positive integer" >&2; exit 2; }
      rounds=$2; shift ;;
    --against)
      [ $# -ge 2 ] || { echo "--against needs a build directory" >&2; exit 2; }
      other=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
for b in "$build" ${other:+"$other"}; do
  [ -x "$b/apps/rocemu-sim" ] || { echo "no $b/apps/rocemu-sim: build the project first" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME K SIZE_BYTES DCQCN(on|off) [BUILD_DIR [TAG]]: one rocemu-sim run (of BUILD_DIR's,
# default the build measured; results in $tmp/NAME.TAG); prints its figures, returns the
# link-hops per second (M/s) in $LHPS.
run() {
  local name=$1 k=$2 size=$3 dcqcn=$4 bdir=${5:-$build} tag=${6:-run}
  local out=$tmp/$name.$tag
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
  rm -rf "$out"
  if ! "$bdir/apps/rocemu-sim" "$tmp/$name.toml" --out "$out" >"$out.txt" 2>&1; then
    echo "$name: rocemu-sim failed:"; tail -20 "$out.txt"; exit 1
  fi
  t1=$(date +%s.%N)
  # The run's cost.csv (docs/workload_runs.md): metric,value rows.
  local cost=$out/cost.csv
  [ -s "$cost" ] || { echo "$name: no $cost"; cat "$out.txt"; exit 1; }
  value() { awk -F, -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' "$cost" ||
              { echo "$name: no $1 in $cost" >&2; exit 1; }; }
  local hops events rss
  hops=$(value link_hops)
  LHPS=$(awk -v v="$(value link_hops_per_s)" 'BEGIN { printf "%.2f", v / 1e6 }')
  events="$(value events) ($(awk -v v="$(value events_per_s)" 'BEGIN { printf "%.2f", v / 1e6 }') M/s)"
  rss=$(awk -v v="$(value peak_rss_bytes)" 'BEGIN { printf "%.0f", v / 1048576 }')
  grep -q "all finished: yes" "$out.txt" || { echo "$name: not every flow finished"; tail -20 "$out.txt"; exit 1; }
  # A run whose mbuf pool ran dry measured the pool, not the network (docs/workload_runs.md).
  if grep -q "mbuf pool ran dry" "$out.txt"; then
    echo "$name: not a figure: $(grep -o 'mbuf pool ran dry.*' "$out.txt")"; exit 1
  fi
  local label=$name
  [ -n "$other" ] && label="$name ($tag)"
  printf '%-34s %12s link-hops  %7s M link-hops/s  events %-22s peak RSS %5s MiB  (%.1f s wall)\n' \
    "$label" "$hops" "$LHPS" "$events" "$rss" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
}

# median VALUES...: the median (the mean of the middle two for an even count), to 2 decimals
# (MEDIAN_DECIMALS to change that).
median() {
  printf '%s\n' "$@" | sort -g |
    awk -v d="${MEDIAN_DECIMALS:-2}" '{ v[NR] = $1 } END { printf "%.*f", d, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure NAME K SIZE_BYTES DCQCN: $rounds runs of the configuration (with --against, a run
# of the other build before each); prints a summary line when there is more than one run, and
# returns the median link-hops per second (M/s) of the build measured in $LHPS.
DIFFER=0
measure() {
  local name=$1 mine=() theirs=() ratios=() i f
  for ((i = 0; i < rounds; i++)); do
    if [ -n "$other" ]; then
      run "$@" "$other" other; theirs+=("$LHPS")
    fi
    run "$@" "$build" this; mine+=("$LHPS")
    [ -n "$other" ] && ratios+=("$(awk -v a="${theirs[-1]}" -v b="$LHPS" 'BEGIN { printf "%.4f", b / a }')")
  done
  if [ -n "$other" ]; then
    local same=identical
    for f in bins.csv failures.csv flows.csv metrics.csv; do
      cmp -s "$tmp/$name.this/$f" "$tmp/$name.other/$f" || { same="DIFFER ($f)"; DIFFER=1; break; }
    done
    local ahead
    ahead=$(printf '%s\n' "${ratios[@]}" | awk '$1 > 1 { n++ } END { print n + 0 }')
    printf '%s: this %s, other %s M link-hops/s (medians of %d); this/other %s (median of the rounds'"'"' ratios, ahead in %d of %d); results %s\n' \
      "$name" "$(median "${mine[@]}")" "$(median "${theirs[@]}")" "$rounds" "$(MEDIAN_DECIMALS=3 median "${ratios[@]}")" \
      "$ahead" "$rounds" "$same"
  elif [ "$rounds" -gt 1 ]; then
    printf '%s: median %s M link-hops/s of %d runs (%s to %s)\n' "$name" "$(median "${mine[@]}")" "$rounds" \
      "$(printf '%s\n' "${mine[@]}" | sort -g | head -1)" "$(printf '%s\n' "${mine[@]}" | sort -g | tail -1)"
  fi
  LHPS=$(median "${mine[@]}")
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
  measure k4_perm_64k_dcqcn 4 65536 on
  memory_latency 0.01
  [ "$DIFFER" = 0 ] || { echo "smoke run: the two builds' results differ"; exit 1; }
  echo "smoke run: ok"
  exit 0
fi
measure k8_perm_16m_dcqcn 8 16777216 on; k8=$LHPS
measure k8_perm_16m_nodcqcn 8 16777216 off; k8off=$LHPS
measure k16_perm_2m_dcqcn 16 2097152 on; k16=$LHPS
echo
echo "targets: K=8 with DCQCN >= 2.1 M link-hops/s (htsim, without DCQCN/shared buffer): $k8"
echo "         K=8 without DCQCN >= 4 M: $k8off"
echo "         K=16 >= 70% of K=8: $(awk -v a="$k16" -v b="$k8" 'BEGIN { printf "%.0f", 100 * a / b }')%"
memory_latency 0.2
if [ "$DIFFER" = 1 ]; then
  echo "the two builds' results differ (above): their speeds are not a like-for-like comparison"
  exit 1
fi
