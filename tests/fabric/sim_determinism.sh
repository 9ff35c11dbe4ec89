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

# Every trace too: the capture (no heap address in a RETH, no wall clock in the stamps), the
# queue series and the DCQCN reaction points, from two processes.
for run in ta tb; do
  if ! "$apps/rocemu-sim" "$src/tests/fabric/traced_quickstart.toml" --out "$tmp/$run" >"$tmp/$run.txt" 2>&1; then
    echo "FAIL: traced rocemu-sim run $run exited non-zero"; cat "$tmp/$run.txt"; exit 1
  fi
done
for f in summary.json s0-1.pcapng queues_s0.csv dcqcn_h0.csv dcqcn_h1.csv; do
  [ -s "$tmp/ta/$f" ] || { echo "FAIL: traced $f missing or empty"; ls -l "$tmp/ta"; exit 1; }
  cmp "$tmp/ta/$f" "$tmp/tb/$f" || { echo "FAIL: traced $f differs between runs"; exit 1; }
done
rows=$(($(wc -l <"$tmp/ta/dcqcn_h0.csv") - 1))
[ "$rows" -gt 10 ] || { echo "FAIL: dcqcn_h0.csv has $rows rows"; exit 1; }
grep -q "cnp_tx" "$tmp/ta.txt" || { echo "FAIL: no congestion columns in the summary"; cat "$tmp/ta.txt"; exit 1; }
out=$(/usr/bin/python3 "$src/scripts/plot_dcqcn.py" "$tmp/ta/dcqcn_h0.csv" --queue "$tmp/ta/queues_s0.csv" \
      --port 1 --kmin-kb 5 --kmax-kb 200 -o "$tmp/h0.png" 2>&1) || { echo "FAIL: plot_dcqcn.py: $out"; exit 1; }
[ -s "$tmp/h0.png" ] || { echo "FAIL: no plot written"; exit 1; }
if out=$(/usr/bin/python3 "$src/scripts/plot_dcqcn.py" "$tmp/ta/dcqcn_h0.csv" --queue "$tmp/ta/queues_s0.csv" \
         -o "$tmp/x.png" 2>&1) || ! grep -q "pick one with --port" <<<"$out"; then
  echo "FAIL: a queue CSV of two ports without --port: $out"; exit 1
fi
echo "ok: byte-identical capture, queue and DCQCN traces; $rows DCQCN rows plotted"
