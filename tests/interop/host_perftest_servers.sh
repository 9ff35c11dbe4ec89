#!/usr/bin/env bash
# host_perftest_servers.sh ROCEMU_INTEROP TOOL_DIR CHECK_PY — the host side of
# guest_perftest.sh, run by run_guest.sh in the interop namespace: rocemu-interop
# perftest-server serves the guest's ib_write_bw and ib_read_bw, then rocemu_send_bw,
# rocemu_write_bw and rocemu_read_bw -d serve the guest's ib_send_bw, ib_write_bw and
# ib_read_bw (RoCE address ROCEMU_ENDPOINT_IP on the DPDK veth, TCP 18516..18518 on the
# bridge). Each tool's table (SEND: what it received; WRITE/READ: the client's report, as
# perftest's server prints it) is checked by check_perftest_output.py. Last rocemu_write_lat
# -d serves the guest's ib_write_lat (TCP 18519; a rocemu latency server prints no table:
# its exit status is the check); then rocemu_send_bw -a serves ib_send_bw -a (TCP 18520);
# last rocemu_atomic_bw and rocemu_atomic_lat -d serve ib_atomic_bw and ib_atomic_lat
# (TCP 18521, 18522; the latency server's exit status is the check).
set -euo pipefail
interop="$1" dir="$2" check="$3"
. "$(dirname "$0")/host_perftest_report.sh"  # serve_report, serve_stopped
"$interop" perftest-server --iters 2 --timeout-s 150
port=18516
# perftest's SEND server measures no peak (noPeak) and prints 0.00; WRITE/READ servers print
# the client's row.
for verb in send write read; do
  set -- "$dir/rocemu_${verb}_bw" -d "$ROCEMU_IFACE" --roce_ip "$ROCEMU_ENDPOINT_IP" -p "$port" \
    -s 65536 -n 100 --report_gbits --server_wait 60
  if [[ $verb == send ]]; then
    serve_stopped "$check" bw-gbits-nopeak "$@"
  else
    serve_report "$check" bw-gbits "$@"
  fi
  port=$((port + 1))
done
"$dir/rocemu_write_lat" -d "$ROCEMU_IFACE" --roce_ip "$ROCEMU_ENDPOINT_IP" -p 18519 -s 64 -n 100 \
  --server_wait 60
# ib_send_bw -a: 23 sizes with perftest's handshake before and after each. The two SEND
# servers are served again when the guest's rxe requester stalls (serve_stopped).
serve_stopped "$check" bw-gbits-all-nopeak "$dir/rocemu_send_bw" -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -p 18520 -a -n 5 --report_gbits --server_wait 60
# ib_atomic_bw: 1000 8-byte FETCH_AND_ADDs executed by rocemu's responder (the row is the
# client's, as perftest's server prints it; bw-rate: a few hundred operations per second
# round to 0.00 MB/sec, MsgRate must show them); ib_atomic_lat: CMP_AND_SWAP ping-pong.
serve_report "$check" bw-rate "$dir/rocemu_atomic_bw" -d "$ROCEMU_IFACE" \
  --roce_ip "$ROCEMU_ENDPOINT_IP" -p 18521 -s 8 -n 1000 --server_wait 60
"$dir/rocemu_atomic_lat" -d "$ROCEMU_IFACE" --roce_ip "$ROCEMU_ENDPOINT_IP" -p 18522 -n 100 \
  -A CMP_AND_SWAP --server_wait 60
