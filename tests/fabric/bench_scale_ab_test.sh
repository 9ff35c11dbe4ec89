#!/usr/bin/env bash
# scripts/bench_scale.sh --against: two builds run side by side, their speeds compared as a
# median of paired ratios, and their result files compared. Same build on both sides: exit
# 0 and "results identical"; a build whose flows.csv differs (a wrapper that appends a row):
# exit 1 and "results DIFFER (flows.csv)"; the data path's and the agent's benchmarks compared
# when both builds have them, this build's alone when the other has none; bad options and a
# build without its benchmarks: exit 2. Each CPU's speed printed before and after; --cpu N pins
# every run to CPU N.
# Usage: bench_scale_ab_test.sh BUILD_ROOT SOURCE_ROOT WITH_AGENT_BENCH(0|1: whether this build
# has tests/agent/agent_bench, i.e. was built with LibTorch)
set -u
build=$(cd "$1" && pwd) src=$2 agent=$3
script=$src/scripts/bench_scale.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$script" "$build" --smoke --rounds 2 --against "$build" 2>&1); rc=$?
[ "$rc" = 0 ] || { echo "FAIL: same build on both sides: exit $rc"; echo "$out"; exit 1; }
echo "$out" | grep -qE '^k4_perm_64k_dcqcn: this [0-9.]+, other [0-9.]+ M link-hops/s \(medians of 2\); this/other [0-9.]+ .*ahead in [0-2] of 2\); results identical$' ||
  { echo "FAIL: no comparison line"; echo "$out"; exit 1; }
[ "$(echo "$out" | grep -c '^k4_perm_64k_dcqcn (other) ')" = 2 ] &&
  [ "$(echo "$out" | grep -c '^k4_perm_64k_dcqcn (this) ')" = 2 ] ||
  { echo "FAIL: not two runs of each build"; echo "$out"; exit 1; }
# The speed of each CPU the script may run on, before and after the runs.
ncpu=$(taskset -pc $$ | awk '{ print $NF }' | tr ',' '\n' |
       awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }')
for when in before after; do
  [ "$(echo "$out" | grep -cE "^core speed $when, cpu [0-9]+: clock [0-9.]+ cycles/ns, one-add loop [0-9.]+ per ns")" = "$ncpu" ] ||
    { echo "FAIL: no speed $when the runs for each of the $ncpu CPUs"; echo "$out"; exit 1; }
done
# One configuration's share of the other (K=16's of K=8 in a full run): the median of the
# rounds' own percentages, from this build's runs as printed, round by round.
read -r -a on <<<"$(echo "$out" | awk '/^k4_perm_64k_dcqcn \(this\) / { printf "%s ", $5 }')"
read -r -a off <<<"$(echo "$out" | awk '/^k4_perm_64k_nodcqcn \(this\) / { printf "%s ", $5 }')"
[ "${#on[@]}" = 2 ] && [ "${#off[@]}" = 2 ] || { echo "FAIL: not two runs of each configuration"; echo "$out"; exit 1; }
want=$(awk -v a0="${on[0]}" -v a1="${on[1]}" -v b0="${off[0]}" -v b1="${off[1]}" 'BEGIN {
  p0 = sprintf("%.1f", 100 * a0 / b0) + 0; p1 = sprintf("%.1f", 100 * a1 / b1) + 0
  lo = p0 < p1 ? p0 : p1; hi = p0 < p1 ? p1 : p0
  printf "%.0f%% (median of the 2 rounds'"'"' own percentages, each from runs back to back: %.1f to %.1f%%)", (p0 + p1) / 2, lo, hi }')
[ "$(echo "$out" | grep '^K=4 with DCQCN, share of K=4 without: ')" = "K=4 with DCQCN, share of K=4 without: $want" ] ||
  { echo "FAIL: the share is not the median of the rounds' own ($want)"; echo "$out"; exit 1; }
# The data path's and the agent's figures, compared the same way (the other build has their
# benchmarks here).
figs=("clos_episode_cpu s lower" "nic_rc_write_1m_mtu1024 Gbps higher" "nic_rc_write_1m_mtu4096 Gbps higher")
[ "$agent" = 1 ] && figs+=("graphcc_step_k16 ns/port lower")
[ "$agent" = 1 ] || echo "$out" | grep -q '^graphcc_step_k16: not measured (this build has no tests/agent/agent_bench: built without LibTorch)$' ||
  { echo "FAIL: no agent_bench, and not said"; echo "$out"; exit 1; }
for fig in "${figs[@]}"; do
  # shellcheck disable=SC2086
  set -- $fig
  echo "$out" | grep -qE "^$1: this [0-9.]+, other [0-9.]+ $2 \(medians of 2\); this/other [0-9.]+ \(median of the rounds' ratios, $3 is better; ahead in [0-2] of 2\)\$" ||
    { echo "FAIL: no comparison line for $1"; echo "$out"; exit 1; }
  [ "$(echo "$out" | grep -c "^$1 (other) ")" = 2 ] && [ "$(echo "$out" | grep -c "^$1 (this) ")" = 2 ] ||
    { echo "FAIL: not two runs of each build's $1"; echo "$out"; exit 1; }
done

# A "build" whose runs give other results (and which notes the CPUs it may run on).
mkdir -p "$tmp/other/apps"
cat >"$tmp/other/apps/rocemu-sim" <<WRAP
#!/usr/bin/env bash
grep Cpus_allowed_list /proc/self/status | cut -f2 >>"$tmp/allowed"
"$build/apps/rocemu-sim" "\$@"; rc=\$?
out=; prev=; for a in "\$@"; do [ "\$prev" = --out ] && out=\$a; prev=\$a; done
echo "1,2,3" >>"\$out/flows.csv"
exit \$rc
WRAP
chmod +x "$tmp/other/apps/rocemu-sim"
# With --cpu, every run is pinned to that CPU (the last one allowed here).
last=$(taskset -pc $$ | awk '{ print $NF }' | tr ',-' '\n\n' | tail -1)
out=$("$script" "$build" --smoke --against "$tmp/other" --cpu "$last" 2>&1); rc=$?
[ "$rc" = 1 ] || { echo "FAIL: differing results: exit $rc, want 1"; echo "$out"; exit 1; }
echo "$out" | grep -q 'results DIFFER (flows.csv)' || { echo "FAIL: the difference is not named"; echo "$out"; exit 1; }
echo "$out" | grep -q "^every run on cpu $last\$" && [ "$(sort -u "$tmp/allowed")" = "$last" ] ||
  { echo "FAIL: --cpu $last: runs allowed on $(sort -u "$tmp/allowed" | tr '\n' ' ')"; echo "$out"; exit 1; }
# That build has no benchmarks: this build's figures alone.
echo "$out" | grep -q '^nic_rc_write_1m_mtu4096: the other build has no tests/nic/nic_write_goodput_bench: this build only$' &&
  echo "$out" | grep -qE '^nic_rc_write_1m_mtu4096 +[0-9.]+ Gbps$' ||
  { echo "FAIL: no figure of this build alone"; echo "$out"; exit 1; }

# A build whose benchmarks are far slower (wrappers that print google-benchmark CSV rows):
# this build is ahead in every round, whichever way its figure is better.
mkdir -p "$tmp/slow/apps" "$tmp/slow/tests/wljob" "$tmp/slow/tests/nic" "$tmp/slow/tests/agent"
ln -s "$build/apps/rocemu-sim" "$tmp/slow/apps/rocemu-sim"
fake() {  # fake PATH HEADER_TAIL ROW...: lists the rows' benchmarks, prints the rows as CSV
  local path=$1 head=$2 row; shift 2
  { echo '#!/usr/bin/env bash'
    echo 'if [ "$1" = --benchmark_list_tests ]; then'
    for row in "$@"; do echo "  echo '$(echo "$row" | cut -d, -f1 | tr -d '"')'"; done
    echo '  exit 0'
    echo 'fi'
    echo "echo 'name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,error_occurred,error_message$head'"
    for row in "$@"; do echo "echo '$row'"; done; } >"$path"
  chmod +x "$path"
}
fake "$tmp/slow/tests/wljob/wljob_clos_episode_bench" ',"engine_wall_s"' \
  '"BM_Clos24EpisodeFbHdp60Incast16/qps_per_pair:1/iterations:1/real_time",1,900,900,s,,,,,,899'
fake "$tmp/slow/tests/nic/nic_write_goodput_bench" ',"Gbps","Mpps"' \
  '"BM_RcWriteGoodput/1024/1048576",1,9,9,ms,,,,,,0.01,0.001' '"BM_RcWriteGoodput/4096/1048576",1,9,9,ms,,,,,,0.01,0.001'
fake "$tmp/slow/tests/agent/agent_bench" ',"per_port","ports"' \
  '"BM_FastControlStepGraphCc/1/1/1",1,9,9,ns,,,"trained",,,0.001,5120'
out=$("$script" "$build" --smoke --rounds 2 --against "$tmp/slow" 2>&1); rc=$?
[ "$rc" = 0 ] || { echo "FAIL: against slow benchmarks: exit $rc"; echo "$out"; exit 1; }
slow=(clos_episode_cpu nic_rc_write_1m_mtu1024 nic_rc_write_1m_mtu4096)
[ "$agent" = 1 ] && slow+=(graphcc_step_k16)
for fig in "${slow[@]}"; do
  echo "$out" | grep -qE "^$fig: this [0-9.]+, other [0-9.]+ .*ahead in 2 of 2\)\$" ||
    { echo "FAIL: $fig: this build not ahead of a far slower one"; echo "$out"; exit 1; }
done
echo "$out" | grep -q '^clos_episode_cpu: this [0-9.]*, other 900.00 s' &&
  echo "$out" | grep -q '^nic_rc_write_1m_mtu1024: this [0-9.]*, other 0.0 Gbps' &&
  { [ "$agent" = 0 ] || echo "$out" | grep -q '^graphcc_step_k16: this [0-9]*, other 1000000 ns/port'; } ||
  { echo "FAIL: the other build's figures misread"; echo "$out"; exit 1; }

# An older build whose goodput benchmark has no 4096-byte MTU case: that figure is this
# build's alone, the others are compared.
fake "$tmp/slow/tests/nic/nic_write_goodput_bench" ',"Gbps","Mpps"' '"BM_RcWriteGoodput/1024/1048576",1,9,9,ms,,,,,,0.01,0.001'
out=$("$script" "$build" --smoke --against "$tmp/slow" 2>&1); rc=$?
[ "$rc" = 0 ] &&
  echo "$out" | grep -q "^nic_rc_write_1m_mtu4096: the other build's tests/nic/nic_write_goodput_bench has no BM_RcWriteGoodput/4096/1048576: this build only$" &&
  echo "$out" | grep -qE '^nic_rc_write_1m_mtu4096 +[0-9.]+ Gbps$' &&
  echo "$out" | grep -qE '^nic_rc_write_1m_mtu1024: this [0-9.]+, other 0.0 Gbps' ||
  { echo "FAIL: a benchmark the other build lacks: exit $rc"; echo "$out"; exit 1; }

for bad in "--rounds 0" "--rounds x" "--against" "--bogus" "--cpu" "--cpu x" "--cpu $((last + 1))"; do
  # shellcheck disable=SC2086
  "$script" "$build" --smoke $bad >/dev/null 2>&1; rc=$?
  [ "$rc" = 2 ] || { echo "FAIL: '$bad': exit $rc, want 2"; exit 1; }
done
"$script" "$tmp/nowhere" --smoke >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || { echo "FAIL: a build directory without rocemu-sim: exit $rc, want 2"; exit 1; }
out=$("$script" "$tmp/other" --smoke 2>&1); rc=$?
[ "$rc" = 2 ] && echo "$out" | grep -q "no $tmp/other/tests/wljob/wljob_clos_episode_bench: build the project with its tests first" ||
  { echo "FAIL: a build directory without the benchmarks: exit $rc, want 2 and the missing one named"; echo "$out"; exit 1; }
echo "ok: side-by-side comparison, differing results and bad options"
