#!/usr/bin/env bash
# Two rocemu-sim processes with one seed write byte-identical summary.json and summary.csv
# (separate processes: address-space layout and allocation must not leak into results),
# and the run verifies its data (exit 0). Usage: sim_determinism.sh BUILD_APPS_DIR SOURCE_ROOT
set -u
apps=$1 src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for run in a b; do
  if ! "$apps/rocemu-sim" "$src/configs/quickstart.toml" --seed 3 --out "$tmp/$run" >"$tmp/$run.txt" 2>&1; then
    echo "FAIL: rocemu-sim run $run exited non-zero"; cat "$tmp/$run.txt"; exit 1
  fi
done
for f in summary.json summary.csv; do
  [ -s "$tmp/a/$f" ] || { echo "FAIL: $f missing or empty"; exit 1; }
  cmp "$tmp/a/$f" "$tmp/b/$f" || { echo "FAIL: $f differs between runs"; diff "$tmp/a/$f" "$tmp/b/$f" | head; exit 1; }
done
grep -q '"verified": true' "$tmp/a/summary.json" || { echo "FAIL: not verified"; exit 1; }
echo "ok: byte-identical result files, data verified"
