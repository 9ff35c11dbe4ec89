# Guest: perftest's ib_write_bw then ib_read_bw (100 messages of 64 KiB, 6400 packets each)
# as clients of rocemu-interop perftest-server; then ib_send_bw, ib_write_bw and ib_read_bw as
# clients of rocemu_send_bw / rocemu_write_bw / rocemu_read_bw -d, the user-facing tools as
# servers (TCP 18516..18518). host_perftest_servers.sh starts each server when the previous
# one has finished: the pauses let it listen first (perftest's client does not retry). Last
# ib_write_lat -s 64 -n 100 against rocemu_write_lat -d as server (TCP 18519), then
# ib_send_bw -a (every size, 5 messages each) against rocemu_send_bw -a (TCP 18520), then
# ib_atomic_bw (1000 FETCH_AND_ADDs, TCP 18521) and ib_atomic_lat -A CMP_AND_SWAP (TCP 18522)
# against rocemu_atomic_bw / rocemu_atomic_lat -d.
# GID index 1 (IPv4-mapped). Each must exit 0 (perftest fails on any error completion or
# side-channel mismatch).
# -u 18 on every guest tool: see guest_perftest_server.sh (spurious timeouts of the TCG guest
# trigger a Linux 6.1 rxe retry bug).
# The two SEND clients run again when they time out (rerun_stalled, below): Linux 6.1 rxe's
# requester can stall, and the host's server then serves the rerun.
# The WRITE, READ and ATOMIC servers print their client's report: calibrated (below) runs
# such a client again when perftest's clock calibration failed and it reported zeros.
. /tmp/perftest_retry.sh
opts="-d rxe0 -x 1 -s 65536 -n 100 -F -u 18 --report_gbits"
timeout 90 ib_write_bw $opts 10.77.0.1 || exit 11
timeout 90 ib_read_bw $opts 10.77.0.1 || exit 12
sleep 3
rerun_stalled 13 60 ib_send_bw $opts -p 18516 10.77.0.1
sleep 3
calibrated 14 timeout 60 ib_write_bw $opts -p 18517 10.77.0.1
sleep 3
calibrated 15 timeout 60 ib_read_bw $opts -p 18518 10.77.0.1
sleep 3
timeout 60 ib_write_lat -d rxe0 -x 1 -s 64 -n 100 -F -u 18 -p 18519 10.77.0.1 || exit 16
sleep 3
rerun_stalled 17 60 ib_send_bw -d rxe0 -x 1 -a -n 5 -F -u 18 --report_gbits -p 18520 10.77.0.1
sleep 3
calibrated 18 timeout 60 ib_atomic_bw -d rxe0 -x 1 -n 1000 -F -u 18 -p 18521 10.77.0.1
sleep 3
timeout 60 ib_atomic_lat -d rxe0 -x 1 -n 100 -F -u 18 -A CMP_AND_SWAP -p 18522 10.77.0.1 || exit 19
