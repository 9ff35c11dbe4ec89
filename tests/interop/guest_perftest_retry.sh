# guest_perftest_retry.sh — sourced by guest scripts (run_guest.sh --file
# perftest_retry.sh=this, so /tmp/perftest_retry.sh in the guest). calibrated CODE CMD...
# runs a real perftest client whose report a rocemu server prints. perftest first fits its
# cycle counter against gettimeofday; when the fit is poor (r^2 < 0.9: a loaded TCG guest) it
# prints "Correlation coefficient r^2: ... < 0.9" on stderr and reports every rate as 0. Such
# a run is done again (the host's serve_report, host_perftest_report.sh, serves the retry), up
# to 3 runs in all. A run that fails, or a third uncalibrated one, exits CODE.
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
