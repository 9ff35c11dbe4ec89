# guest_perftest_retry.sh — sourced by guest scripts (run_guest.sh --file
# perftest_retry.sh=this, so /tmp/perftest_retry.sh in the guest). calibrated CODE CMD...
# runs a real perftest client whose report a rocemu server prints. perftest first fits its
# cycle counter against gettimeofday; when the fit is poor (r^2 < 0.9: a loaded TCG guest) it
# prints "Correlation coefficient r^2: ... < 0.9" on stderr and reports every rate as 0. Such
# a run is done again (the host's serve_report, host_perftest_report.sh, serves the retry), up
# to 3 runs in all. A run that fails, or a third uncalibrated one, exits CODE.
# rerun_stalled CODE SECONDS CMD...: runs a real perftest client of a rocemu SEND server for at
# most SECONDS. Linux 6.1 rxe's requester can miss its wake-up (docs/interop.md, "Known
# problems") and then sends nothing more: the client hangs. When the client was killed on
# that timeout, it runs again 20 s later, up to 3 runs in all; the host's server (which saw
# the stall: host_perftest_report.sh, serve_stopped) serves the rerun. Any other failure, or
# a third timeout, exits CODE. A rerun nobody serves fails to connect. A run counts as timed
# out by how long it took, not by timeout's status: the guest's init runs this script in
# process group 0, where timeout's signal reaches timeout too, and it exits 143, not 124.
# uncalibrated FILE: FILE (a perftest client's stderr, or all its output) says its clock
# calibration failed.
uncalibrated() { grep -q "Correlation coefficient" "$1"; }

calibrated() {
  code=$1
  shift
  runs=0
  while :; do
    "$@" 2>/tmp/perftest.err
    rc=$?
    cat /tmp/perftest.err >&2
    [ "$rc" -eq 0 ] || exit "$code"
    uncalibrated /tmp/perftest.err || return 0
    runs=$((runs + 1))
    [ "$runs" -lt 3 ] || { echo "guest: perftest's clock calibration failed 3 times"; exit "$code"; }
    echo "guest: perftest's clock calibration failed (r^2 < 0.9): its report is zeros; again"
    sleep 3
  done
}

rerun_stalled() {
  code=$1 secs=$2
  shift 2
  runs=0
  while :; do
    start=$(date +%s)
    rc=0
    timeout "$secs" "$@" || rc=$?
    [ "$rc" -eq 0 ] && return 0
    [ $(($(date +%s) - start)) -ge "$secs" ] || exit "$code"
    runs=$((runs + 1))
    [ "$runs" -lt 3 ] || { echo "guest: $1 timed out 3 times"; exit "$code"; }
    echo "guest: $1 timed out after $secs s (status $rc; rxe's requester may have stalled): running it again in 20 s"
    sleep 20
  done
}
