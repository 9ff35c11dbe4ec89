#!/usr/bin/env bash
# train_network_test.sh BUILD_ROOT SOURCE_ROOT — rocemu-train on the virtual-time network
# (--env network --run FILE) as a user runs it: a short GraphCC training on a 6-host star
# writes a model, rocemu-sim then runs that model in the loop on the same run file; two
# episodes on a small Clos are deterministic with the learner thread and through a
# checkpoint and --resume; usage errors (also a bad --model-in) exit 2 and bad checkpoints 1
# with the reason.
# Seconds of CPU, no root.
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

# Two short episodes on a small Clos (one leaf-spine link down), the learner on its own
# thread: the same bytes twice; stopped after the first episode and resumed from its
# checkpoint, the same bytes again; the model runs in rocemu-sim on that fabric.
clos="$src/tests/wljob/agent_clos8.toml"
small=(--config "$src/tests/wljob/train_small.toml" --env network --run "$clos" --eval-steps 0
       --log-every 0 --threads 2)
"$build/apps/rocemu-train" "${small[@]}" --steps 20 --model-out "$work/a.model" >/dev/null
"$build/apps/rocemu-train" "${small[@]}" --steps 20 --model-out "$work/b.model" \
  --curve "$work/b.csv" >/dev/null
cmp "$work/a.model" "$work/b.model"
"$build/apps/rocemu-train" "${small[@]}" --steps 10 --checkpoint "$work/c.ckpt" \
  --curve "$work/c.csv" >/dev/null
[[ "$(wc -l <"$work/c.csv")" -eq 2 ]]
# The same curve with rows that are not curve rows (a line of 4,000 bytes, binary bytes, a
# NaN time, an episode after the checkpoint's): a resume keeps what it should, drops the rest
# and says so.
{ cat "$work/c.csv"; head -c 4000 /dev/zero | tr '\0' 'x'; echo; printf '\001\377,\n'
  echo "1,2,3,4,5,6,nan"; echo "9,150,0.5,0.5,0.5,0.5,1.0"; } >"$work/d.csv"
resumed="$("$build/apps/rocemu-train" "${small[@]}" --steps 20 --resume "$work/c.ckpt" \
           --curve "$work/c.csv" --model-out "$work/c.model" 2>&1)"
grep -q "resumed from $work/c.ckpt: 10 of 20 steps taken, 1 episodes" <<<"$resumed"
cmp "$work/a.model" "$work/c.model"
diff <(cut -d, -f1-6 "$work/b.csv") <(cut -d, -f1-6 "$work/c.csv")
dropped="$("$build/apps/rocemu-train" "${small[@]}" --steps 20 --resume "$work/c.ckpt" \
           --curve "$work/d.csv" 2>&1)"
grep -q -- "--curve $work/d.csv: dropped 3 of its 5 rows that were not curve rows" <<<"$dropped"
diff <(cut -d, -f1-6 "$work/b.csv") <(cut -d, -f1-6 "$work/d.csv")
# A curve that is no regular file (/dev/zero) keeps no rows and is written as given: it is
# not read forever.
timeout 120 "$build/apps/rocemu-train" "${small[@]}" --steps 20 --resume "$work/c.ckpt" \
  --curve /dev/zero >/dev/null
/usr/bin/python3 "$src/scripts/plot_training.py" --curve "straight=$work/b.csv" \
  --curve "resumed=$work/c.csv" --out "$work/curve.png" | grep -q "training curves written"
[[ -s "$work/curve.png" ]]
clos_sim="$("$build/apps/rocemu-sim" "$clos" --policy graphcc --agent-model "$work/a.model" \
            --until-us 50000 --out "$work/clos" 2>&1)"
grep -q "links down from the start: leaf1-spine0" <<<"$clos_sim"
grep -q "all finished: yes" <<<"$clos_sim"
expect_exit() {  # expect_exit CODE WHAT -- COMMAND...: exit CODE and a line naming WHAT
  local code="$1" what="$2"; shift 3
  local rc=0 msg
  msg="$("$@" 2>&1)" || rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -q -- "$what" <<<"$msg"; then
    echo "FAIL: expected exit $code mentioning '$what', got $rc: $msg" >&2; exit 1
  fi
}
expect_exit 1 "its seed is 1, this one's is 2" -- "$build/apps/rocemu-train" "${small[@]}" \
  --steps 20 --seed 2 --resume "$work/c.ckpt"
head -c 100000 "$work/c.ckpt" >"$work/cut.ckpt"
expect_exit 1 "not a readable rocemu-train checkpoint" -- "$build/apps/rocemu-train" "${small[@]}" \
  --steps 20 --resume "$work/cut.ckpt"

expect_exit 2 "needs --run" -- "$build/apps/rocemu-train" --env network
expect_exit 2 "expected queue or network" -- "$build/apps/rocemu-train" --env cloud --run "$run"
expect_exit 2 "needs a run file with \[workload\]" -- "$build/apps/rocemu-train" --env network \
  --run "$src/configs/quickstart.toml"
printf 'not a model' > "$work/bad.model"
expect_exit 2 "agent-model" -- "$build/apps/rocemu-sim" "$run" --policy graphcc --agent-model "$work/bad.model"
expect_exit 2 "exclude each other" -- "$build/apps/rocemu-train" "${small[@]}" --resume "$work/c.ckpt" \
  --model-in "$work/a.model"
expect_exit 2 "expected 1 or 2" -- "$build/apps/rocemu-train" --threads 3
# Where the model or checkpoints cannot go is found before training, not after it (exit 2),
# and a device is never replaced by a rename; a missing directory is created.
expect_exit 2 "--model-out /dev/null: exists and is not a regular file" -- \
  "$build/apps/rocemu-train" "${small[@]}" --steps 20 --model-out /dev/null
[ -c /dev/null ]
expect_exit 2 "--checkpoint $work/a.model/c.ckpt: cannot create its directory" -- \
  "$build/apps/rocemu-train" "${small[@]}" --steps 20 --checkpoint "$work/a.model/c.ckpt"
"$build/apps/rocemu-train" "${small[@]}" --steps 20 --model-out "$work/new/dir/m.model" >/dev/null
cmp "$work/a.model" "$work/new/dir/m.model"
# A model to start from is checked first: unreadable, or of the other kind, exits 2 naming
# the file and both kinds, before EAL or the network start.
expect_exit 2 "--model-in: model file $work/bad.model: truncated" -- "$build/apps/rocemu-train" "${small[@]}" \
  --steps 20 --model-in "$work/bad.model"
expect_exit 2 "a graphcc model, but this run trains acc" -- "$build/apps/rocemu-train" \
  "${small[@]}" --steps 20 --model acc --model-in "$work/a.model"
expect_exit 2 "must be one of static, graphcc" -- "$build/apps/rocemu-sim" "$run" --policy magic
echo "train_network_test: OK"
