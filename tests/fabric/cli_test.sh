#!/usr/bin/env bash
# rocemu-sim / rocemu-testbed command line: --help documents every flag; bad flags, a bad
# configuration and a missing file exit 2 with every problem listed and nothing started.
# Usage: cli_test.sh BUILD_APPS_DIR SOURCE_ROOT
set -u
apps=$1 src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../support/cli_check.sh"
out=$("$apps/rocemu-sim" --help 2>&1); check sim-help 0 $? "$out" --seed --out --log-level --until-us CONFIG.toml
out=$("$apps/rocemu-testbed" --help 2>&1); check testbed-help 0 $? "$out" --seed --out --log-level --ports "-- EAL-ARGS" --time-limit-s af_xdp memif
out=$("$apps/rocemu-sim" 2>&1); check sim-no-config 2 $? "$out" "missing the configuration file"
out=$("$apps/rocemu-sim" "$src/configs/quickstart.toml" --seed x --until-us 0 --frobnicate 2>&1)
check sim-bad-flags 2 $? "$out" "--seed=x" "--until-us=0" "--frobnicate: unknown option"
out=$("$apps/rocemu-testbed" "$src/configs/quickstart.toml" --ports dpdk 2>&1)
check testbed-bad-ports 2 $? "$out" "--ports=dpdk"
out=$("$apps/rocemu-sim" "$tmp/none.toml" 2>&1); check sim-missing-file 2 $? "$out" "none.toml: cannot read configuration file"
cat > "$tmp/bad.toml" <<'TOML'
[topology]
[[topology.nodes]]
name = "a"
[[topology.nodes]]
name = "b"
[[topology.nodes]]
name = "s"
kind = "switch"
[[topology.links]]
a = "a"
b = "s"
rate_gbps = 10
[[topology.links]]
a = "b"
b = "t"
rate_gbps = 10
delay_ns = -5
[job]
from = "a"
too = "b"
TOML
out=$("$apps/rocemu-sim" "$tmp/bad.toml" --out "$tmp/o" 2>&1)
check sim-bad-config 2 $? "$out" "topology.links[1].b='t': no node with this name (line 15)" \
  "topology.links[1].delay_ns=-5: out of range" "job.too='b': unknown key (line 20)"
[ -e "$tmp/o" ] && { echo "FAIL sim-bad-config: started (wrote $tmp/o)"; fail=1; }
out=$("$apps/rocemu-testbed" "$tmp/bad.toml" 2>&1); check testbed-bad-config 2 $? "$out" "no node with this name"
exit $fail
