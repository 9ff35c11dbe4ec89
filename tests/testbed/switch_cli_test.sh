#!/usr/bin/env bash
# rocemu-switch's command line without EAL: --help, bad flags and a bad configuration exit 2
# with every problem named (nothing started), ring/memif ports are refused, and --plan
# prints the topology's addressing. Usage: switch_cli_test.sh ROCEMU_SWITCH
set -u
bin=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../support/cli_check.sh"
out=$("$bin" --help 2>&1); check help 0 $? "$out" --plan --switch-links --duration --out --ports "-- EAL-ARGS" "rocemu-switch: ready"
out=$("$bin" 2>&1); check no-config 2 $? "$out" "missing the configuration file"
cat > "$tmp/star3.toml" <<'TOML'
[topology]
kind = "star"
hosts = 3
rate_gbps = 25
TOML
out=$("$bin" "$tmp/star3.toml" --duration x --bogus --ports dpdk 2>&1)
check bad-flags 2 $? "$out" "--duration=x" "--bogus: unknown option" "--ports=dpdk"
cat > "$tmp/bad.toml" <<'TOML'
[topology]
kind = "star"
hosts = 1
rate_gbps = 0
[switch]
frobnicate = 1
TOML
out=$("$bin" "$tmp/bad.toml" --out "$tmp/o" 2>&1)
check bad-config 2 $? "$out" "topology.hosts=1: out of range" "topology.rate_gbps=0" "(line 4)" \
  "switch.frobnicate=1: unknown key (line 6)"
[ -e "$tmp/o" ] && { echo "FAIL bad-config: started (wrote $tmp/o)"; fail=1; }
out=$("$bin" "$tmp/none.toml" 2>&1); check missing-file 2 $? "$out" "none.toml: cannot read configuration file"
for p in ring memif; do
  out=$("$bin" "$tmp/star3.toml" --ports $p --out "$tmp/o" 2>&1)
  check "refuses-$p" 2 $? "$out" "--ports=$p" "node h0 is external" "use af_packet, af_xdp, tap or pci"
done
out=$("$bin" "$tmp/star3.toml" --plan 2>&1)
want=$(printf '%s\n' \
  $'host\tipv4\thost_mac\tgateway_mac\tswitch_dev\thost_dev\trate_bps' \
  $'h0\t10.0.0.1\t02:52:00:00:00:00\t02:52:00:03:00:00\tre0b\tre0a\t25000000000' \
  $'h1\t10.0.0.2\t02:52:00:01:00:00\t02:52:00:03:00:01\tre1b\tre1a\t25000000000' \
  $'h2\t10.0.0.3\t02:52:00:02:00:00\t02:52:00:03:00:02\tre2b\tre2a\t25000000000')
if [ "$out" != "$want" ]; then echo "FAIL plan: got"; echo "$out"; echo "want"; echo "$want"; fail=1
else echo "ok   plan"; fi
cat > "$tmp/dumbbell.toml" <<'TOML'
[topology]
kind = "dumbbell"
left_hosts = 1
right_hosts = 1
TOML
out=$("$bin" "$tmp/dumbbell.toml" --switch-links 2>&1)
want=$(printf '%s\n' $'link\ta_node\tb_node\ta_dev\tb_dev\trate_bps' $'2\ts0\ts1\tre2a\tre2b\t10000000000')
if [ "$out" != "$want" ]; then echo "FAIL switch-links: got"; echo "$out"; fail=1; else echo "ok   switch-links"; fi
exit $fail
