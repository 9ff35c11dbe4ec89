#!/usr/bin/env bash
# host_perftest_clients.sh TOOL_DIR CHECK_PY — the host side of guest_perftest_server.sh, run
# by run_guest.sh in the interop namespace: rocemu_write_bw, rocemu_read_bw and rocemu_send_bw
# -d on the DPDK veth (RoCE address ROCEMU_ENDPOINT_IP) as clients of the guest's real perftest
# servers at ROCEMU_GUEST_IP, in the guest's order, first one way, then with -b. The first
# waits for the guest to boot (the client retries the TCP connection); each table is checked
# by check_perftest_output.py. -u 18 (ACK timeout 1.07 s): with the default 67 ms the TCG
# guest, slow to take 128 messages in flight, makes rocemu time out and resend its whole
# window again and again until the retry count runs out (docs/interop.md "Known problems").
# Then rocemu_write_lat against the guest's ib_write_lat, last rocemu_send_bw -a against
# ib_send_bw -a (perftest's handshake before and after every size), then rocemu_atomic_bw
# (FETCH_AND_ADD) and rocemu_atomic_lat -A CMP_AND_SWAP against ib_atomic_bw / ib_atomic_lat.
set -euo pipefail
dir="$1" check="$2"
for extra in "" "-b"; do
  for verb in write read send; do
    /usr/bin/python3 "$check" bw-gbits "$dir/rocemu_${verb}_bw" -d "$ROCEMU_IFACE" \
      --roce_ip "$ROCEMU_ENDPOINT_IP" -s 65536 -n 100 --report_gbits --connect_timeout 100 -u 18 \
      $extra "$ROCEMU_GUEST_IP"
  done
done
/usr/bin/python3 "$check" lat "$dir/rocemu_write_lat" -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -s 64 -n 100 --connect_timeout 100 "$ROCEMU_GUEST_IP"
# rocemu_send_bw -a against ib_send_bw -a: 23 rows, 2 B to 8 MiB, each of 5 messages.
/usr/bin/python3 "$check" bw-gbits-all "$dir/rocemu_send_bw" -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -a -n 5 --report_gbits --connect_timeout 100 -u 18 \
  "$ROCEMU_GUEST_IP"
/usr/bin/python3 "$check" bw-rate "$dir/rocemu_atomic_bw" -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -s 8 -n 1000 --connect_timeout 100 -u 18 "$ROCEMU_GUEST_IP"
/usr/bin/python3 "$check" lat "$dir/rocemu_atomic_lat" -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -s 8 -n 100 -A CMP_AND_SWAP --connect_timeout 100 \
  "$ROCEMU_GUEST_IP"
