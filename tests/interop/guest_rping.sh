# Guest: librdmacm's rping both ways with rocemu over rdma_cm (host side: host_rping.sh, in
# this order). First rping -c against rocemu-interop rping-server (10.77.0.2, port 7174),
# then rping -s for rocemu's rping-client (which also checks meanwhile that a port nobody
# listens on is refused at once). 10 pings of 1024 bytes, data validated (-V) on the rping
# side, the rping pattern checked on rocemu's.
# rping -c does not retry a refused connection, and the rocemu server may take seconds to
# listen on a loaded machine: the client is run again (after 1 s, up to 30 times) only while
# rdma_cm reports the REJ of a port nobody listens on, before any RDMA traffic.
n=0
while :; do
  out=$(timeout 60 rping -c -a 10.77.0.2 -p 7174 -C 10 -S 1024 -V -v 2>&1)
  rc=$?
  printf '%s\n' "$out"
  case "$out" in
    *REJECTED*) n=$((n + 1)); [ "$n" -lt 30 ] || exit 21; sleep 1 ;;
    *) [ "$rc" -eq 0 ] || exit 22; break ;;
  esac
done
printf '%s\n' "$out" | grep -q "ping data: rdma-ping-9: " || { echo "guest: no 10th ping"; exit 23; }
timeout 60 rping -s -a 10.77.0.10 -p 7174 -C 10 -S 1024 -V -v || exit 24
# perftest -R (rdma_cm, no TCP) on the same boot: real ib_send_bw and ib_write_bw servers for
# rocemu's clients, then rocemu's servers (ports 18530, 18531) for real clients. A real client
# does not retry a refused connection either: it is run again (after 1 s, up to 30 times)
# only while it failed before printing its table.
timeout 60 ib_send_bw -d rxe0 -x 1 -R -s 65536 -n 100 -F || exit 25
timeout 60 ib_write_bw -d rxe0 -x 1 -R -s 65536 -n 100 -F || exit 26
# The WRITE server prints its client's report: a client whose clock calibration failed
# (zeros) is run again, up to 3 runs (guest_perftest_retry.sh; the host serves the retry).
. /tmp/perftest_retry.sh
for t in "ib_send_bw 18530" "ib_write_bw 18531"; do
  set -- $t
  n=0
  runs=0
  while :; do
    out=$(timeout 60 "$1" -d rxe0 -x 1 -R -s 65536 -n 100 -F -p "$2" 10.77.0.2 2>&1)
    rc=$?
    printf '%s\n' "$out"
    printf '%s\n' "$out" >/tmp/perftest.out
    if [ "$rc" -eq 0 ] && [ "$2" = 18531 ] && uncalibrated /tmp/perftest.out; then
      runs=$((runs + 1))
      [ "$runs" -lt 3 ] || { echo "guest: perftest's clock calibration failed 3 times"; exit 27; }
      echo "guest: perftest's clock calibration failed (r^2 < 0.9): its report is zeros; again"
      sleep 3
      continue
    fi
    [ "$rc" -eq 0 ] && break
    case "$out" in
      *"#bytes"*) exit 27 ;;
      *) n=$((n + 1)); [ "$n" -lt 30 ] || exit 28; sleep 1 ;;
    esac
  done
  printf '%s\n' "$out" | grep -q "Data ex. method : rdma_cm" || { echo "guest: $1 not over rdma_cm"; exit 29; }
done
