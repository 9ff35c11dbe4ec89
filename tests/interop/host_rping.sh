#!/usr/bin/env bash
# host_rping.sh ROCEMU_INTEROP — the host side of guest_rping.sh, run by run_guest.sh in the
# interop namespace: rocemu-interop rping-server for the guest's rping -c; then rping-client
# to a port nobody listens on (the guest's rdma_cm must refuse it with REJ reason 8 within a
# second or two, not leave it hanging); then rping-client against the guest's rping -s,
# retried while the guest's server is not listening yet. Then perftest -R: rocemu_send_bw and
# rocemu_write_bw -R clients of the guest's ib_send_bw/ib_write_bw -R servers (retrying a
# refused REQ themselves), and -R servers for the guest's clients, each output checked.
set -euo pipefail
interop="$1" dir="$2" check="$3"
. "$(dirname "$0")/host_perftest_report.sh"  # serve_report
"$interop" rping-server --count 10 --size 1024 --timeout-s 90
set +e
t0=$(date +%s%N)
out=$("$interop" rping-client --port 7175 --count 1 --size 1024 --timeout-s 20 2>&1)
rc=$?
t1=$(date +%s%N)
set -e
printf '%s\n' "$out"
[ "$rc" -ne 0 ] || { echo "host: a connection to a port nobody listens on succeeded" >&2; exit 1; }
grep -qF "REJ reason 8" <<<"$out" || { echo "host: no REJ reason 8 in rocemu's output" >&2; exit 1; }
ms=$(( (t1 - t0) / 1000000 ))
echo "host: refused in $ms ms (tool start included)"
[ "$ms" -lt 15000 ] || { echo "host: the refusal took $ms ms" >&2; exit 1; }
for i in $(seq 1 30); do
  set +e
  out=$("$interop" rping-client --count 10 --size 1024 --verbose 1 --timeout-s 60 2>&1)
  rc=$?
  set -e
  printf '%s\n' "$out"
  [ "$rc" -eq 0 ] && break
  grep -qF "REJ reason 8" <<<"$out" || exit "$rc"
  [ "$i" -lt 30 ] || { echo "host: the guest's rping -s never listened" >&2; exit 1; }
  sleep 1
done
for verb in send write; do
  /usr/bin/python3 "$check" bw "$dir/rocemu_${verb}_bw" -R -d "$ROCEMU_IFACE" \
    --roce_ip "$ROCEMU_ENDPOINT_IP" -s 65536 -n 100 --connect_timeout 60 -u 18 "$ROCEMU_GUEST_IP"
done
/usr/bin/python3 "$check" bw-nopeak "$dir/rocemu_send_bw" -R -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -p 18530 -s 65536 -n 100 -u 18 --server_wait 90
serve_report "$check" bw "$dir/rocemu_write_bw" -R -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -p 18531 -s 65536 -n 100 -u 18 --server_wait 60
