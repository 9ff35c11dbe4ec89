#!/usr/bin/env bash
# two_tools_test.sh — two perftest tools one after the other in one testbed run (between
# tb_up and tb_down of scripts/testbed/lib.sh, issue 14 section 4): rocemu_write_bw, then
# rocemu_read_bw, each with --check_data (the side the bytes land on checks every byte), each
# client's table checked by tests/perftest/check_perftest_output.py. Before the fix the
# second tool stopped with "no neighbour entry": the first tool's port start had flushed the
# testbed's permanent neighbour entries (fabric/kernel_neighbours.h). Checked in between and
# after: every host still has its permanent entry for the other host, with the gateway MAC
# of the plan. Then the switch summary: both transfers crossed the switch.
# Usage: two_tools_test.sh CHECKER LIB_SH ROCEMU_SWITCH WRITE_BW READ_BW
# Needs root: under CI=true its absence is a failure, otherwise a skip (77).
set -u
checker=$1 lib=$2 switch_bin=$3 write_bw=$4 read_bw=$5
if [[ $(id -u) -ne 0 ]]; then
  [[ "${CI:-}" == true ]] && { echo "needs root (CI=true: failing, not skipping)"; exit 1; }
  echo "needs root; skipped"; exit 77
fi
TB_OUT=$(mktemp -d /tmp/rocemu-tb2test-XXXXXX)
TB_SWITCH_BIN=$switch_bin
# shellcheck source=scripts/testbed/lib.sh
source "$lib"
server_pid=
# shellcheck disable=SC2317  # run by the EXIT trap
finish() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null
  tb_down
  rm -rf "$TB_OUT"
}
trap finish EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*"; exit 1; }

cat >"$TB_OUT/testbed.toml" <<'TOML'
[topology]
kind = "star"
hosts = 2
rate_gbps = 2.5
delay_ns = 1000
[switch]
buffer_mb = 72
headroom_kb = 20480
TOML
tb_up "$TB_OUT/testbed.toml" || fail "tb_up"
client=${TB_HOSTS[0]} server=${TB_HOSTS[1]}

# Each host's permanent neighbour entry for the other, with its gateway MAC (lib.sh).
check_neighbours() {
  local h o got
  for h in "$client" "$server"; do
    o=$([[ $h == "$client" ]] && echo "$server" || echo "$client")
    got=$(tb_exec "$h" ip neigh show "$(tb_ip "$o")" dev "$(tb_iface "$h")" nud permanent)
    [[ "$got" == *"lladdr ${TB_GW_OF[$h]} PERMANENT"* ]] ||
      fail "$1: $h has no permanent neighbour entry ${TB_GW_OF[$h]} for $(tb_ip "$o") (ip neigh: '$got')"
  done
  echo "ok: $1: both hosts keep their permanent neighbour entries"
}

# run_tool N TOOL: TOOL's server on the last host, its client (checked) on the first.
run_tool() {
  local n=$1 tool=$2 port=$((20000 + ($$ + $1) % 20000))
  local args=(-s 65536 -n 200 --check_data --idle_sleep_us=20)
  tb_spawn "$server" "$tool" -d "$(tb_iface "$server")" -p "$port" --server_wait=60 "${args[@]}" \
    >"$TB_OUT/server$n.log" 2>&1
  server_pid=$TB_PID
  /usr/bin/python3 "$checker" bw ip netns exec "$(tb_ns "$client")" "$tool" -d "$(tb_iface "$client")" \
    -p "$port" --connect_timeout=20 "${args[@]}" "$(tb_ip "$server")" | tee "$TB_OUT/client$n.txt"
  local client_rc=${PIPESTATUS[0]}
  wait "$server_pid"
  local server_rc=$?
  server_pid=
  echo "--- server $n (exit $server_rc)"
  cat "$TB_OUT/server$n.log"
  [[ $client_rc -eq 0 ]] || fail "tool $n ($(basename "$tool")): client failed"
  [[ $server_rc -eq 0 ]] || fail "tool $n ($(basename "$tool")): server exit $server_rc"
}

check_neighbours "after tb_up"
run_tool 1 "$write_bw"
grep -q '^ Data check: 1 QP(s) x 65536 bytes, every byte as the peer sent it$' "$TB_OUT/server1.log" ||
  fail "rocemu_write_bw: the server did not check the data it received"
check_neighbours "after rocemu_write_bw"
run_tool 2 "$read_bw"
grep -q '^Data check: 1 QP(s) x 65536 bytes, every byte as the peer sent it$' "$TB_OUT/client2.txt" ||
  fail "rocemu_read_bw: the client did not check the data it read"
check_neighbours "after rocemu_read_bw"

tb_down
csv=$TB_SUMMARY
[[ -f "$csv" ]] || fail "no switch summary $csv"
cat "$csv"
# 200 x 64 WRITE packets from the client, then 200 x 64 READ responses to it.
/usr/bin/python3 - "$csv" "$client" "$server" <<'PY' || fail "switch summary"
import csv, sys
rows = {r["peer"]: r for r in csv.DictReader(open(sys.argv[1]))}
c, s, need = rows[sys.argv[2]], rows[sys.argv[3]], 200 * 64
checks = (("rx from the client (WRITE data)", int(c["rx_packets"])),
          ("tx to the server (WRITE data)", int(s["tx_packets"])),
          ("rx from the server (READ responses)", int(s["rx_packets"])),
          ("tx to the client (READ responses)", int(c["tx_packets"])))
bad = [w for w, v in checks if v < need]
for w, v in checks:
    print("%s: switch %s = %d (>= %d)" % ("FAIL" if w in bad else "ok", w, v, need))
sys.exit(1 if bad else 0)
PY
echo PASS
