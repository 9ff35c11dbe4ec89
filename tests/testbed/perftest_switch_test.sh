#!/usr/bin/env bash
# rocemu_write_bw between two namespaces through the rocemu-switch process
# (scripts/testbed/perftest.sh): the client's table is checked by
# tests/perftest/check_perftest_output.py (exact header, a sane row, the JSON file), then the
# switch's summary must show the transfer crossed it: at least -n x ceil(-s / 1024) packets
# received on the port facing the client and sent on the port facing the server.
# Usage: perftest_switch_test.sh CHECKER PERFTEST_SH ROCEMU_SWITCH TOOL -s BYTES -n ITERS [...]
# Needs root: under CI=true its absence is a failure, otherwise a skip (77).
set -u
checker=$1 script=$2 switch_bin=$3 tool=$4; shift 4
if [[ $(id -u) -ne 0 ]]; then
  [[ "${CI:-}" == true ]] && { echo "needs root (CI=true: failing, not skipping)"; exit 1; }
  echo "needs root; skipped"; exit 77
fi
out=$(mktemp -d /tmp/rocemu-tbtest-XXXXXX); trap 'rm -rf "$out"' EXIT
TB_OUT=$out TB_SWITCH_BIN=$switch_bin /usr/bin/python3 "$checker" bw "$script" "$tool" "$@" || exit 1
args=" $* "
size=$(sed -E 's/.* -s ([0-9]+) .*/\1/' <<<"$args")
iters=$(sed -E 's/.* -n ([0-9]+) .*/\1/' <<<"$args")
need=$((iters * ((size + 1023) / 1024)))
csv=$out/switch/switch_summary.csv
[[ -f "$csv" ]] || { echo "FAIL: no $csv"; ls -R "$out"; exit 1; }
cat "$csv"
/usr/bin/python3 - "$csv" "$need" <<'PY'
import csv, sys
rows = {r["peer"]: r for r in csv.DictReader(open(sys.argv[1]))}
need = int(sys.argv[2])
client, server = rows["h0"], rows["h1"]
ok = True
for what, v in (("rx_packets from the client (h0)", int(client["rx_packets"])),
                ("tx_packets to the server (h1)", int(server["tx_packets"]))):
    if v < need:
        print("FAIL: switch %s = %d, the transfer needs >= %d" % (what, v, need)); ok = False
    else:
        print("ok: switch %s = %d >= %d" % (what, v, need))
drops = sum(int(v) for k, v in server.items() if k.startswith("drop_buffer") or k.startswith("drop_headroom"))
print("switch admission drops on the server's port: %d" % drops)
sys.exit(0 if ok else 1)
PY
