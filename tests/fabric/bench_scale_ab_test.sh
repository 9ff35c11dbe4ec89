#!/usr/bin/env bash
# scripts/bench_scale.sh --against: two builds run side by side, their speeds compared as a
# median of paired ratios, and their result files compared. Same build on both sides: exit
# 0 and "results identical"; a build whose flows.csv differs (a wrapper that appends a row):
# exit 1 and "results DIFFER (flows.csv)"; bad options: exit 2.
# Usage: bench_scale_ab_test.sh BUILD_ROOT SOURCE_ROOT
set -u
build=$1 src=$2
script=$src/scripts/bench_scale.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$script" "$build" --smoke --rounds 2 --against "$build" 2>&1); rc=$?
[ "$rc" = 0 ] || { echo "FAIL: same build on both sides: exit $rc"; echo "$out"; exit 1; }
echo "$out" | grep -qE '^k4_perm_64k_dcqcn: this [0-9.]+, other [0-9.]+ M link-hops/s \(medians of 2\); this/other [0-9.]+ .*ahead in [0-2] of 2\); results identical$' ||
  { echo "FAIL: no comparison line"; echo "$out"; exit 1; }
[ "$(echo "$out" | grep -c '(other) ')" = 2 ] && [ "$(echo "$out" | grep -c '(this) ')" = 2 ] ||
  { echo "FAIL: not two runs of each build"; echo "$out"; exit 1; }

# A "build" whose runs give other results.
mkdir -p "$tmp/other/apps"
cat >"$tmp/other/apps/rocemu-sim" <<WRAP
#!/usr/bin/env bash
"$build/apps/rocemu-sim" "\$@"; rc=\$?
out=; prev=; for a in "\$@"; do [ "\$prev" = --out ] && out=\$a; prev=\$a; done
echo "1,2,3" >>"\$out/flows.csv"
exit \$rc
WRAP
chmod +x "$tmp/other/apps/rocemu-sim"
out=$("$script" "$build" --smoke --against "$tmp/other" 2>&1); rc=$?
[ "$rc" = 1 ] || { echo "FAIL: differing results: exit $rc, want 1"; echo "$out"; exit 1; }
echo "$out" | grep -q 'results DIFFER (flows.csv)' || { echo "FAIL: the difference is not named"; echo "$out"; exit 1; }

for bad in "--rounds 0" "--rounds x" "--against" "--bogus"; do
  # shellcheck disable=SC2086
  "$script" "$build" --smoke $bad >/dev/null 2>&1; rc=$?
  [ "$rc" = 2 ] || { echo "FAIL: '$bad': exit $rc, want 2"; exit 1; }
done
"$script" "$tmp/nowhere" --smoke >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || { echo "FAIL: a build directory without rocemu-sim: exit $rc, want 2"; exit 1; }
echo "ok: side-by-side comparison, differing results and bad options"
