#!/usr/bin/env bash
# train_network_test.sh BUILD_ROOT SOURCE_ROOT — rocemu-train on the virtual-time network
# (--env network --run FILE) as a user runs it: a short GraphCC training on a 6-host star
# writes a model, rocemu-sim then runs that model in the loop on the same run file, and the
# usage errors exit 2 with the reason. Seconds of CPU, no root.
set -euo pipefail
build="$1" src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run="$src/tests/wljob/agent_star6.toml"
out="$("$build/apps/rocemu-train" --env network --run "$run" --steps 40 --eval-steps 10 \
       --log-every 0 --model-out "$work/g.model" --curve "$work/curve.csv" 2>&1)"
echo "$out"
grep -Eq "episode +1: 15 steps, epsilon [0-9.]+, mean reward [0-9.]+, mean queue [0-9.]+, [0-9]+ flows done, ETA" <<<"$out"
[[ "$(head -1 "$work/curve.csv")" == "episode,steps,epsilon,mean_reward,mean_queue,loss,wall_s" ]]
[[ "$(wc -l <"$work/curve.csv")" -eq 4 ]]  # header + episodes of 15, 15 and the last 10 steps
grep -q "model written to $work/g.model" <<<"$out"
grep -Eq "network environment: [0-9]+ episodes, 50 steps of 100 us" <<<"$out"
# Until every flow finished (the training episodes stop at 1.5 ms).
sim="$("$build/apps/rocemu-sim" "$run" --policy graphcc --agent-model "$work/g.model" \
       --until-us 50000 --out "$work/out" 2>&1)"
echo "$sim"
grep -Eq "agent: policy graphcc every 100 us: [0-9]+ intervals" <<<"$sim"
grep -q "all finished: yes" <<<"$sim"
grep -q "agent_policy,graphcc" "$work/out/metrics.csv"
expect_usage() {  # expect_usage WHAT -- COMMAND...: exit 2 and a line naming WHAT
  local what="$1"; shift 2
  local rc=0 msg
  msg="$("$@" 2>&1)" || rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "$what" <<<"$msg"; then
    echo "FAIL: expected exit 2 mentioning '$what', got $rc: $msg" >&2; exit 1
  fi
}
expect_usage "needs --run" -- "$build/apps/rocemu-train" --env network
expect_usage "expected queue or network" -- "$build/apps/rocemu-train" --env cloud --run "$run"
expect_usage "needs a run file with \[workload\]" -- "$build/apps/rocemu-train" --env network \
  --run "$src/configs/quickstart.toml"
printf 'not a model' > "$work/bad.model"
expect_usage "agent-model" -- "$build/apps/rocemu-sim" "$run" --policy graphcc --agent-model "$work/bad.model"
expect_usage "must be one of static, graphcc" -- "$build/apps/rocemu-sim" "$run" --policy magic
echo "train_network_test: OK"
