#!/usr/bin/env bash
# bench_scale.sh — the virtual-time engine at datacenter scale (issue "Datacenter scale"):
# 3-tier fat trees under a permutation, with PFC, the shared buffer, RED-ECN and DCQCN all on
# (and DCQCN off), MTU 4096, 100 Gbps, 1 us per hop. Prints link-hops per second of wall time
# (a link-hop: one packet — data, ACK, CNP or pause — crossing one link; htsim's unit), events
# per second and the peak RSS of each run, against the targets. A figure, not a test: wall
# time swings with the machine's load; compare runs made side by side. A run whose mbuf pool
# ran dry is no figure (it measured the pool): the script stops there, with exit status 1.
# Then the issue's other targets, from their benchmarks (BUILD_DIR/tests): the 24-host Clos
# episode's CPU time, RC WRITE goodput of 1 MiB messages on one core at MTU 1024 and 4096,
# and the GraphCC control step per switch port at K=16; last, the memory latency probe. Before
# and after the runs, the speed of each CPU it may run on (with --cpu N, CPU N's): its clock,
# and a loop that slows when another thread shares the core (on a VM, another guest): the
# same binary's figures follow the second.
#
# usage: scripts/bench_scale.sh [BUILD_DIR] [--smoke] [--rounds N] [--against OTHER_BUILD_DIR]
#                               [--cpu N]
#   default: K=8 128 x 16 MiB (DCQCN on, off), K=16 1,024 x 2 MiB (DCQCN on)
#   --smoke: K=4 16 x 64 KiB (DCQCN on, off) and the other benchmarks for a few ms each, to
#     check the script and the figures' parsing (CI's sim suite)
#   --rounds N: run each configuration and benchmark N times and give the median (and range);
#     the three configurations run round by round, and K=16's share of K=8 is the median of
#     the rounds' own shares
#   --against OTHER_BUILD_DIR: in each round, run OTHER_BUILD_DIR's rocemu-sim and then
#     BUILD_DIR's, one after the other, and give per configuration both medians and the
#     median of the rounds' ratios (this / other; a ratio of runs made side by side is what
#     a noisy machine can compare), and check that both gave the same result files
#     (bins, failures, flows, metrics: exit status 1 if not). The other benchmarks are
#     compared the same way when OTHER_BUILD_DIR/tests has them (it may hold rocemu-sim only).
#   --cpu N: run everything on CPU N (taskset), so that no run moves between a free CPU and
#     a shared one; pick the CPU whose loop runs at its clock in the speeds printed
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
smoke=0
rounds=1
other=
cpu=
args=("$@")
# The CPUs this process may run on (its affinity, e.g. "0-1" or "0,2-3"), one per line.
allowed_cpus() {
  local part
  for part in $(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status | tr ',' ' '); do
    if [[ "$part" == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --rounds)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "--rounds needs a positive integer" >&2; exit 2; }
      rounds=$2; shift ;;
    --against)
      [ $# -ge 2 ] || { echo "--against needs a build directory" >&2; exit 2; }
      other=$2; shift ;;
    --cpu)
      [ $# -ge 2 ] && allowed_cpus | grep -qx -- "$2" ||
        { echo "--cpu needs the number of a CPU this process may run on: $(allowed_cpus | tr '\n' ' ')" >&2; exit 2; }
      cpu=$2; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
for b in "$build" ${other:+"$other"}; do
  [ -x "$b/apps/rocemu-sim" ] || { echo "no $b/apps/rocemu-sim: build the project first" >&2; exit 2; }
done
# The benchmarks of the data path and the memory probe: this build's (the other build's are
# used when it has them). The agent's is built with LibTorch only (not in the clang builds of
# scripts/test.sh): without it the GraphCC figure is left out, saying so.
for bench in wljob/wljob_clos_episode_bench nic/nic_write_goodput_bench \
             fabric/fabric_virtual_engine_bench; do
  [ -x "$build/tests/$bench" ] ||
    { echo "no $build/tests/$bench: build the project with its tests first" >&2; exit 2; }
done
if [ -n "$cpu" ] && [ "${ROCEMU_BENCH_CPU:-}" != "$cpu" ]; then
  command -v taskset >/dev/null || { echo "--cpu needs taskset (util-linux)" >&2; exit 2; }
  ROCEMU_BENCH_CPU=$cpu exec taskset -c "$cpu" "$0" "${args[@]}"
fi
[ -z "$cpu" ] || echo "every run on cpu $cpu"
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

# summarize LABEL UNIT BETTER(lower|higher) [SUFFIX]: the summary of the $rounds figures in
# MINE (this build's) and, with another build, THEIRS and RATIOS (this / other, round by
# round): both medians, the median of the ratios and in how many rounds this build was
# ahead, then SUFFIX; without another build, the median and range of more than one run.
summarize() {
  local label=$1 unit=$2 better=$3 suffix=${4:-} ahead
  if [ "${#THEIRS[@]}" -gt 0 ]; then
    ahead=$(printf '%s\n' "${RATIOS[@]}" |
              awk -v b="$better" '(b == "lower" && $1 < 1) || (b == "higher" && $1 > 1) { n++ } END { print n + 0 }')
    printf '%s: this %s, other %s %s (medians of %d); this/other %s (median of the rounds'"'"' ratios, %s is better; ahead in %d of %d)%s\n' \
      "$label" "$(median "${MINE[@]}")" "$(median "${THEIRS[@]}")" "$unit" "$rounds" \
      "$(MEDIAN_DECIMALS=3 median "${RATIOS[@]}")" "$better" "$ahead" "$rounds" "$suffix"
  elif [ "$rounds" -gt 1 ]; then
    printf '%s: median %s %s of %d runs (%s to %s)\n' "$label" "$(median "${MINE[@]}")" "$unit" "$rounds" \
      "$(printf '%s\n' "${MINE[@]}" | sort -g | sed -n '1p')" "$(printf '%s\n' "${MINE[@]}" | sort -g | sed -n '$p')"
  fi
}

# ratio THEIRS MINE: this / other, to 4 decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b / a }'; }

# measure_once NAME K SIZE_BYTES DCQCN: one round of the configuration (with --against, a run
# of the other build first); the link-hops per second of each build go to RUNS_MINE[NAME] and
# RUNS_THEIRS[NAME] (space-separated, round by round).
declare -A RUNS_MINE RUNS_THEIRS
DIFFER=0
measure_once() {
  local name=$1
  if [ -n "$other" ]; then
    run "$@" "$other" other; RUNS_THEIRS[$name]="${RUNS_THEIRS[$name]:-} $LHPS"
  fi
  run "$@" "$build" this; RUNS_MINE[$name]="${RUNS_MINE[$name]:-} $LHPS"
}

# measured NAME: after its rounds, prints a summary line when there is more than one run (with
# --against, both medians and the rounds' ratios, and whether the last runs of both builds gave
# the same result files), and returns the median link-hops per second (M/s) of the build
# measured in $LHPS.
measured() {
  local name=$1 i f
  read -r -a MINE <<<"${RUNS_MINE[$name]}"
  THEIRS=() RATIOS=()
  if [ -n "$other" ]; then
    read -r -a THEIRS <<<"${RUNS_THEIRS[$name]}"
    for i in "${!MINE[@]}"; do RATIOS+=("$(ratio "${THEIRS[$i]}" "${MINE[$i]}")"); done
  fi
  local same=
  if [ -n "$other" ]; then
    same="; results identical"
    for f in bins.csv failures.csv flows.csv metrics.csv; do
      cmp -s "$tmp/$name.this/$f" "$tmp/$name.other/$f" || { same="; results DIFFER ($f)"; DIFFER=1; break; }
    done
  fi
  summarize "$name" "M link-hops/s" higher "$same"
  LHPS=$(median "${MINE[@]}")
}

# paired_percent A B: A's link-hops/s as a percentage of B's, round by round (this build's
# runs), then the median over the rounds and the range; A and B were run back to back in each
# round, so a machine whose speed drifts between rounds moves both.
paired_percent() {
  local a b i pct=()
  read -r -a a <<<"${RUNS_MINE[$1]}"
  read -r -a b <<<"${RUNS_MINE[$2]}"
  for i in "${!a[@]}"; do pct+=("$(awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { printf "%.1f", 100 * x / y }')"); done
  printf '%s%%' "$(MEDIAN_DECIMALS=0 median "${pct[@]}")"
  [ "${#pct[@]}" -gt 1 ] && printf " (median of the %d rounds' own percentages, each from runs back to back: %s to %s%%)" \
    "${#pct[@]}" "$(printf '%s\n' "${pct[@]}" | sort -g | sed -n '1p')" "$(printf '%s\n' "${pct[@]}" | sort -g | sed -n '$p')"
  return 0
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

# core_speed WHEN MIN_TIME_S: per CPU this process may run on, BM_CoreSpeed (tests/fabric/virtual_engine_bench.cc):
# the clock (a chain of dependent adds, cycles per ns) and a loop of one add per iteration,
# which runs at the clock on a core of its own and slower when another hardware thread shares
# the core. A figure measured on a CPU whose loop lags its clock is a shared core's.
core_speed() {
  local bin=$build/tests/fabric/fabric_virtual_engine_bench c line clock loop note
  for c in $(allowed_cpus); do
    line=$(taskset -c "$c" "$bin" --benchmark_filter='BM_CoreSpeed' --benchmark_min_time="$2" \
             --benchmark_format=csv 2>/dev/null |
           awk -F, '/^"BM_CoreSpeed\/unroll:8"/ { c = $NF } /^"BM_CoreSpeed\/unroll:1"/ { l = $NF }
                    END { if (c == "" || l == "") exit 1; printf "%.2f %.2f", c, l }') ||
      { echo "core speed: $bin gave no figures on cpu $c"; exit 1; }
    read -r clock loop <<<"$line"
    note=$(awk -v c="$clock" -v l="$loop" 'BEGIN { if (l < 0.85 * c) printf "; the loop lags: another thread shares this core" }')
    echo "core speed $1, cpu $c: clock $clock cycles/ns, one-add loop $loop per ns$note"
  done
}

# bench_value BUILD_DIR BENCH FILTER FIELD SCALE MIN_TIME: one run of the google-benchmark
# binary BUILD_DIR/tests/BENCH on the one benchmark named FILTER; prints column FIELD of its
# CSV row (cpu_time, or a counter such as Gbps) times SCALE. Fails (status 1, a message on
# stderr) if the binary is missing or gives no such row.
bench_value() {
  local bdir=$1 bench=$2 filter=$3 field=$4 scale=$5 min_time=$6
  local bin=$bdir/tests/$bench
  [ -x "$bin" ] || { echo "no $bin: build the project (with its tests) first" >&2; return 1; }
  "$bin" --benchmark_filter="^$filter\$" --benchmark_min_time="$min_time" --benchmark_format=csv 2>/dev/null |
    awk -F, -v f="$field" -v s="$scale" -v name="$filter" '
      /^name,/ { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); if (h == f) col = i } next }
      { n = $1; gsub(/"/, "", n) }
      col && n == name && $col != "" && !found { printf "%.3f", $col * s; found = 1 }
      END { exit !found }' ||
    { echo "$bin: no $field for $filter" >&2; return 1; }
}

# figure LABEL UNIT BETTER(lower|higher) BENCH FILTER FIELD SCALE MIN_TIME: a figure of the
# data path or the agent, from its benchmark, $rounds times (with --against, the other build's
# first in each round, when it has that benchmark: its directory may hold rocemu-sim only, or
# an older build's benchmarks).
# Prints each run with --against, a summary line when there is more than one run, else the
# figure; returns the median in $FIG.
figure() {
  local label=$1 unit=$2 better=$3 bench=$4 rest=("${@:5}") i v vs=
  MINE=() THEIRS=() RATIOS=()
  if [ -n "$other" ]; then
    if [ ! -x "$other/tests/$bench" ]; then
      echo "$label: the other build has no tests/$bench: this build only"
    elif ! grep -qxF "${rest[0]}" <<<"$("$other/tests/$bench" --benchmark_list_tests 2>/dev/null || true)"; then
      echo "$label: the other build's tests/$bench has no ${rest[0]}: this build only"
    else
      vs=1
    fi
  fi
  for ((i = 0; i < rounds; i++)); do
    if [ -n "$vs" ]; then
      v=$(bench_value "$other" "$bench" "${rest[@]}") || exit 1
      THEIRS+=("$v"); printf '%-34s %10s %s\n' "$label (other)" "$v" "$unit"
    fi
    v=$(bench_value "$build" "$bench" "${rest[@]}") || exit 1
    MINE+=("$v")
    if [ -n "$vs" ]; then
      printf '%-34s %10s %s\n' "$label (this)" "$v" "$unit"
      RATIOS+=("$(ratio "${THEIRS[-1]}" "$v")")
    fi
  done
  FIG=$(median "${MINE[@]}")
  if [ -z "$vs" ] && [ "$rounds" = 1 ]; then
    printf '%-34s %10s %s\n' "$label" "$FIG" "$unit"
  else
    summarize "$label" "$unit" "$better"
  fi
}

# data_path MIN_TIME_S: the issue's other targets, from their benchmarks (docs/engines.md,
# docs/nic.md, docs/agent.md): the 24-host Clos episode's CPU time (the GraphCC training
# episode), RC WRITE goodput of 1 MiB messages on one core at MTU 1024 and 4096, and the
# GraphCC control step per switch port on the K=16 fat tree (the shipped model, on live
# counters; when this build has that benchmark). Sets CLOS_S, NIC1K, NIC4K and STEP_NS.
data_path() {
  local t=$1
  figure clos_episode_cpu s lower wljob/wljob_clos_episode_bench \
    'BM_Clos24EpisodeFbHdp60Incast16/qps_per_pair:1/iterations:1/real_time' cpu_time 1 "$t"; CLOS_S=$FIG
  MEDIAN_DECIMALS=1 figure nic_rc_write_1m_mtu1024 Gbps higher nic/nic_write_goodput_bench \
    'BM_RcWriteGoodput/1024/1048576' Gbps 1 "$t"; NIC1K=$FIG
  MEDIAN_DECIMALS=1 figure nic_rc_write_1m_mtu4096 Gbps higher nic/nic_write_goodput_bench \
    'BM_RcWriteGoodput/4096/1048576' Gbps 1 "$t"; NIC4K=$FIG
  if [ -x "$build/tests/agent/agent_bench" ]; then
    MEDIAN_DECIMALS=0 figure graphcc_step_k16 ns/port lower agent/agent_bench \
      'BM_FastControlStepGraphCc/1/1/1' per_port 1e9 "$t"; STEP_NS="$FIG ns"
  else
    STEP_NS="not measured (this build has no tests/agent/agent_bench: built without LibTorch)"
    echo "graphcc_step_k16: $STEP_NS"
  fi
}

if [ "$smoke" = 1 ]; then
  core_speed before 0.01
  # Two configurations round by round, as below, and the first's share of the second.
  for ((round = 0; round < rounds; round++)); do
    measure_once k4_perm_64k_dcqcn 4 65536 on
    measure_once k4_perm_64k_nodcqcn 4 65536 off
  done
  measured k4_perm_64k_dcqcn
  measured k4_perm_64k_nodcqcn
  echo "K=4 with DCQCN, share of K=4 without: $(paired_percent k4_perm_64k_dcqcn k4_perm_64k_nodcqcn)"
  data_path 0.01
  memory_latency 0.01
  core_speed after 0.01
  [ "$DIFFER" = 0 ] || { echo "smoke run: the two builds' results differ"; exit 1; }
  echo "smoke run: ok"
  exit 0
fi
# Round by round (each round runs the three configurations back to back), so that the K=16
# against K=8 figure compares runs made side by side.
core_speed before 0.1
for ((round = 0; round < rounds; round++)); do
  measure_once k8_perm_16m_dcqcn 8 16777216 on
  measure_once k8_perm_16m_nodcqcn 8 16777216 off
  measure_once k16_perm_2m_dcqcn 16 2097152 on
done
measured k8_perm_16m_dcqcn; k8=$LHPS
measured k8_perm_16m_nodcqcn; k8off=$LHPS
measured k16_perm_2m_dcqcn
data_path 0.5
echo
echo "targets: K=8 with DCQCN >= 2.1 M link-hops/s (htsim, without DCQCN/shared buffer): $k8"
echo "         K=8 without DCQCN >= 4 M: $k8off"
echo "         K=16 >= 70% of K=8: $(paired_percent k16_perm_2m_dcqcn k8_perm_16m_dcqcn)"
echo "         the 24-host Clos episode <= 1.5 s of CPU: $CLOS_S s"
echo "         RC WRITE 1 MiB on one core >= 50 / 100 Gbps at MTU 1024 / 4096: $NIC1K / $NIC4K Gbps"
echo "         GraphCC control step at K=16 <= 250 ns per switch port: $STEP_NS"
memory_latency 0.2
core_speed after 0.1
if [ "$DIFFER" = 1 ]; then
  echo "the two builds' results differ (above): their speeds are not a like-for-like comparison"
  exit 1
fi
