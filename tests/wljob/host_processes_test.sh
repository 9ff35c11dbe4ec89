#!/usr/bin/env bash
# host_processes_test.sh BUILD_DIR SOURCE_DIR — rocemu-host as separate processes (suite
# dpdk, root; never skips). 1) scripts/testbed/workload.sh --direct: 2 hosts in 2 network
# namespaces joined by a veth pair, a seeded 1 Gbps workload of small flows
# (tests/wljob/small_flows_cdf.txt); both processes exit 0, the merged flows.csv holds every
# generated flow, each with FCT >= ideal FCT, and bins/metrics parse; the same run with h1's
# process started 5 s after h0's (the readiness handshake holds the start until both are
# ready) finishes every flow too; 3 hosts through the rocemu-switch process with incast all
# finish. 2) Bad input exits 2
# with a clear message: unknown --host, an interface without IPv4, a start time in the past.
# 3) An unreachable peer: h0 runs alone; its flows fail with a timeout naming h1's address
# and the process ends (exit 1) well within its time limit. Namespaces: rocemu-*<pid>*,
# removed on exit (trap).
set -euo pipefail
build=$(readlink -f "$1")
src=$(readlink -f "$2")
bin=$build/apps/host/rocemu-host
[[ $(id -u) -eq 0 ]] || { echo "FAIL: needs root (CI runs the dpdk suite as root)"; exit 1; }
tmp=$(mktemp -d /tmp/rocemu-wlhost-XXXXXX)
tag=$$
ns=rocemu-wlt$tag
cleanup() {
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

# --- 1) two host processes over a veth pair -------------------------------------------
t0=$(date +%s)
"$src/scripts/testbed/workload.sh" --direct --hosts 2 --rate-gbps 1 --load 0.3 --duration-us 5000 \
  --cdf "$src/tests/wljob/small_flows_cdf.txt" --seed 5 --grace-ms 300 --time-limit-s 15 \
  --start-delay-s 1 --build "$build" --out "$tmp/run" >"$tmp/run.log" 2>&1 || {
  cat "$tmp/run.log"; for f in "$tmp"/run/*.log; do echo "--- $f"; cat "$f"; done; fail "workload.sh failed"; }
cat "$tmp/run.log"
merged=$tmp/run/merged
for f in flows.csv bins.csv metrics.csv; do [[ -s "$merged/$f" ]] || fail "merged $f missing"; done
gen=$(awk -F, '$1=="flows_generated"{print $2}' "$merged/metrics.csv")
fin=$(awk -F, '$1=="flows_finished"{print $2}' "$merged/metrics.csv")
rows=$(($(wc -l <"$merged/flows.csv") - 1))
echo "flows generated $gen, finished $fin, rows $rows"
[[ "$gen" -ge 20 && "$gen" -le 80 ]] || fail "expected 20-80 flows, generated $gen"
[[ "$rows" -eq "$gen" && "$fin" -eq "$gen" ]] || fail "not every flow finished"
grep -q '^all_finished,true$' "$merged/metrics.csv" || fail "all_finished is not true"
grep -q '^flows_failed,0$' "$merged/metrics.csv" || fail "flows failed"
# The direct veth has neither the topology's link delays (base RTT 4 us: 2 links of 1 us, both
# ways) nor the serialisation of a flow's last frame (a host releases a frame when its wire
# becomes free, the veth delivers it at once), which the ideal FCT counts: as in the
# in-process real-time test (workload_job_dpdk_test.cc) the bound is the ideal minus these.
# Frame = payload <= MTU 1024 + 58 header bytes + RETH 16; at 1 Gbps 8 ns per byte.
awk -F, 'NR>1 { last = ($4 < 1024 ? $4 : 1024) + 58 + 16; bound = $10 - 4000 - 8 * last;
                if ($9 <= 0 || $9 < bound) {bad++; print "flow " $1 ": fct " $9 " < bound " bound}
                if ($9 >= $10) strict++ }
         END { printf "FCT >= ideal for %d of %d flows; every FCT >= ideal - base RTT - last frame\n", strict, NR - 1;
               exit bad > 0 }' "$merged/flows.csv" || fail "an FCT below its bound"
awk -F, 'NR>1 {s[$2]++} END {exit !(length(s) == 2)}' "$merged/flows.csv" || fail "flows from only one host"
head -2 "$merged/bins.csv" | tail -1 | grep -q '^all,0,,' || fail "bins.csv has no 'all' row"
echo "ok: 2 host processes, $gen flows, in $(( $(date +%s) - t0 )) s"

# --- 1a) the same run with h1's process started 5 s late ----------------------------------
# Before the readiness handshake every process got one --start-at (now + 2 s): a host later
# than that found its peers' flows to it already failed ("a host started 5 s late, every
# flow failed", issue 14 section 5). Now the start instant is set once both are ready.
t0=$(date +%s)
WL_HOST_WRAPPER="$src/tests/wljob/late_host_wrapper.sh $tmp/h1_delayed" \
  "$src/scripts/testbed/workload.sh" --direct --hosts 2 --rate-gbps 1 --load 0.3 --duration-us 5000 \
  --cdf "$src/tests/wljob/small_flows_cdf.txt" --seed 5 --grace-ms 300 --time-limit-s 15 \
  --start-delay-s 1 --build "$build" --out "$tmp/late" >"$tmp/late.log" 2>&1 || {
  cat "$tmp/late.log"; for f in "$tmp"/late/*.log; do echo "--- $f"; cat "$f"; done
  fail "workload.sh with h1 5 s late failed"; }
[[ -s "$tmp/h1_delayed" ]] || fail "the wrapper did not delay h1"
late_gen=$(awk -F, '$1=="flows_generated"{print $2}' "$tmp/late/merged/metrics.csv")
grep -q '^all_finished,true$' "$tmp/late/merged/metrics.csv" || fail "h1 5 s late: not every flow finished"
grep -q '^flows_failed,0$' "$tmp/late/merged/metrics.csv" || fail "h1 5 s late: flows failed"
[[ "$late_gen" -eq "$gen" ]] || fail "h1 5 s late: $late_gen flows, the same run had $gen"
for n in h0 h1; do
  grep -q "^rocemu-host: $n ready$" "$tmp/late/$n.log" || fail "h1 5 s late: $n never said ready"
done
echo "ok: h1 started 5 s late, all $late_gen flows finished, in $(( $(date +%s) - t0 )) s"

# --- 1b) three hosts through the rocemu-switch process, incast, 2 QPs per pair ------------
cat >"$tmp/three.toml" <<TOML
[run]
seed = 3
[topology]
kind = "star"
hosts = 3
rate_gbps = 1
delay_ns = 1000
[switch]
buffer_mb = 64
headroom_kb = 20480
[workload]
cdf_file = "$src/tests/wljob/small_flows_cdf.txt"
load = 0.2
duration_us = 4000
qps_per_pair = 2
[workload.incast]
senders = 2
size_bytes = 16384
period_us = 2000
receiver = 0
TOML
# Three host processes through the rocemu-switch process (scripts/testbed/lib.sh).
TB_OUT=$tmp/tb TB_BUILD=$build "$src/scripts/testbed/workload.sh" --config "$tmp/three.toml" --grace-ms 300 \
  --time-limit-s 15 --start-delay-s 1 --build "$build" --out "$tmp/three" >"$tmp/three.log" 2>&1 || {
  cat "$tmp/three.log"; for f in "$tmp"/three/*.log "$tmp"/tb/switch.log; do echo "--- $f"; cat "$f"; done
  fail "switch testbed run failed"; }
m3=$tmp/three/merged
gen3=$(awk -F, '$1=="flows_generated"{print $2}' "$m3/metrics.csv")
grep -q '^all_finished,true$' "$m3/metrics.csv" || fail "switch run: not every flow finished"
[[ $(($(wc -l <"$m3/flows.csv") - 1)) -eq "$gen3" ]] || fail "switch run: merged rows != generated"
awk -F, 'NR>1 {s[$2]++; if ($6 != -1) inc++} END {exit !(length(s) == 3 && inc == 4)}' "$m3/flows.csv" ||
  fail "switch run: expected flows from 3 hosts and 2 incast events x 2 senders"
# Every host's traffic crossed the switch: each host-facing port received frames.
awk -F, 'NR==1 {for (i = 1; i <= NF; i++) if ($i == "rx_packets") c = i; next}
         {n++; if ($c + 0 < 20) {bad++; print "port " $1 ": rx_packets " $c}}
         END {exit !(n == 3 && bad == 0)}' "$tmp/tb/switch/switch_summary.csv" ||
  fail "switch run: the switch summary does not show every host's frames"
echo "ok: 3 host processes through rocemu-switch, $gen3 flows (4 incast)"

# --- 2) bad input -----------------------------------------------------------------------
cfg=$tmp/run/run.toml
expect_usage() {
  local what=$1; shift
  set +e
  "$@" >"$tmp/out.txt" 2>&1
  local rc=$?
  set -e
  [[ $rc -eq 2 ]] || { cat "$tmp/out.txt"; fail "$what: exit $rc, expected 2"; }
  grep -q -- "$EXPECT" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "$what: no '$EXPECT'"; }
  echo "ok: $what -> $(grep -m1 -- "$EXPECT" "$tmp/out.txt")"
}
ip netns add "$ns"
ip -n "$ns" link add rocemu-x$tag type veth peer name rocemu-y$tag
ip -n "$ns" link set rocemu-x$tag up
ip -n "$ns" link set rocemu-y$tag up
now=$(date +%s%N)
EXPECT="not a host of the topology" expect_usage "unknown host" \
  ip netns exec "$ns" "$bin" "$cfg" --host nosuch -d rocemu-x$tag
EXPECT="has no IPv4 address" expect_usage "interface without IPv4" \
  ip netns exec "$ns" "$bin" "$cfg" --host h0 -d rocemu-x$tag
EXPECT="no such interface" expect_usage "missing interface" \
  ip netns exec "$ns" "$bin" "$cfg" --host h0 -d rocemu-none
h0_ip=$(awk '$1=="h0"{print $2}' < <("$bin" "$cfg" --list-hosts))
ip -n "$ns" addr add "$h0_ip/8" dev rocemu-x$tag
EXPECT="in the past" expect_usage "start time in the past" \
  ip netns exec "$ns" "$bin" "$cfg" --host h0 -d rocemu-x$tag --start-at $((now - 60000000000))

# --- 3) unreachable peer ----------------------------------------------------------------
t1=$(date +%s%N)
set +e
ip netns exec "$ns" sysctl -qw net.ipv4.icmp_ratelimit=1000000
ip netns exec "$ns" "$bin" "$cfg" --host h0 -d rocemu-x$tag --grace-ms 100 --time-limit-s 10 \
  --out "$tmp/alone" -- -l 0 >"$tmp/alone.txt" 2>&1
rc=$?
set -e
secs=$(( ($(date +%s%N) - t1) / 1000000000 ))
peer_ip=$(awk '$1=="h1"{print $2}' < <("$bin" "$cfg" --list-hosts))
[[ $rc -eq 1 ]] || { cat "$tmp/alone.txt"; fail "unreachable peer: exit $rc, expected 1"; }
grep -q "no answer from $peer_ip" "$tmp/alone.txt" || { cat "$tmp/alone.txt"; fail "no timeout naming $peer_ip"; }
[[ $secs -lt 9 ]] || fail "unreachable peer: took $secs s (time limit 10 s)"
echo "ok: unreachable peer -> $(grep -m1 'no answer' "$tmp/alone.txt") ($secs s)"
echo PASS
