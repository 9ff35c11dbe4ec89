#!/usr/bin/env bash
# bench_agent.sh — what the [agent] loop costs (docs/agent.md "Figures"), side by side in one
# run: (1) the 24-host Clos episode in virtual time with no agent, the static policy and
# GraphCC every 100 us (target: the agent adds <= 10% wall time), and one 100 us step of the
# network training environment; (2) real-time forwarding through the soft switch
# (configs/bench_realtime.toml, net_ring, one lcore) with no agent and with the agent thread
# rewriting every port's thresholds every 100 us (test policy alternate, and GraphCC with a
# briefly trained model; target ratio >= 0.95), alternated ROUNDS times, and the agent's
# real-time step times. A figure, not a test: numbers swing with load.
#
# usage: scripts/bench_agent.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
rounds=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== virtual time: Clos episode (25 ms, 60% FbHdp + 16:1 incast), agent every 100 us"
"$build/tests/wljob/wljob_clos_episode_bench" \
  --benchmark_filter='BM_Clos24EpisodeAgent|BM_NetworkEnvStepClos24' 2>/dev/null |
  grep -E "^BM_" | sed 's/^/  /'

echo "== real time: frames through the switch per second, agent off / on (alternate, 100 us)"
pps() {  # pps OUT_DIR EXTRA-ARGS...: switch packets per engine second of the run
  local out=$1; shift
  "$build/apps/rocemu-testbed" "$root/configs/bench_realtime.toml" --out "$out" \
    --log-level warn "$@" >"$out.txt"
  awk -F, 'NR > 1 && $8 == "s0" { pkts += $10; ns = $6 } END { printf "%.0f", pkts * 1e9 / ns }' \
    "$out/summary.csv"
}
"$build/apps/rocemu-train" --steps 100 --eval-steps 0 --log-every 0 --log-level warn \
  --model-out "$tmp/graphcc.model" >/dev/null
off_sum=0 on_sum=0
for ((i = 1; i <= rounds; i++)); do
  off=$(pps "$tmp/off$i")
  on=$(pps "$tmp/on$i" --policy alternate --agent-interval-us 100)
  agent_line=$(grep -m1 '^agent:' "$tmp/on$i.txt" || true)
  g=$(pps "$tmp/g$i" --policy graphcc --agent-model "$tmp/graphcc.model" --agent-interval-us 100)
  g_line=$(grep -m1 '^agent:' "$tmp/g$i.txt" || true)
  echo "  round $i: off $off pps, alternate $on pps (ratio $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')), graphcc $g pps (ratio $(awk -v a="$g" -v b="$off" 'BEGIN { printf "%.3f", a / b }'))"
  echo "    $agent_line"
  echo "    $g_line"
  off_sum=$((off_sum + off)) on_sum=$((on_sum + on))
done
echo "  mean ratio on/off: $(awk -v a="$on_sum" -v b="$off_sum" 'BEGIN { printf "%.3f", a / b }') (target >= 0.95)"
