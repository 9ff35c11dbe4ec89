# host_perftest_report.sh — sourced by the host scripts whose rocemu servers serve real
# perftest clients in the guest, which the guest runs again in two cases (its
# guest_perftest_retry.sh); the server is then started again, up to 3 runs in all.
#
# serve_report CHECK_PY MODE TOOL ARGS... (WRITE, READ, ATOMIC bandwidth: perftest's server
# prints the row its client measured) runs check_perftest_output.py MODE-report; its exit 4
# says the real client reported all-zero rates, which perftest does when its clock
# calibration fails (r^2 < 0.9, a loaded TCG guest), and the guest runs that client again.
# A server whose client did not retry waits --server_wait and fails: rocemu printing zeros
# for a client that measured something is still caught.
#
# serve_stopped CHECK_PY MODE TOOL ARGS... runs check_perftest_output.py MODE for a SEND
# server whose real client may stall: Linux 6.1 rxe's requester can miss its wake-up
# (docs/interop.md, "Known problems") and then sends nothing more although everything it sent
# was acknowledged. The server then fails saying its peer's requester "stopped of its own
# accord" (check exit 5); the guest kills its client on its 60 s timeout and runs it again
# 20 s later (rerun_stalled), so the rerun's server waits 90 s for it (--server_wait 90).
#
# Any other failure, or a third rerun's cause, fails.
serve_report() {
  local check=$1 mode=$2
  shift 2
  serve_again 4 "the client reported zeros (perftest's clock calibration failed): serving its retry" \
    "" "$check" "$mode-report" "$@"
}

serve_stopped() {
  local check=$1 mode=$2
  shift 2
  serve_again 5 "the guest's requester stopped with everything answered (rxe's missed wake-up): serving its rerun" \
    "--server_wait 90" "$check" "$mode" "$@"
}

# serve_again CODE WHY EXTRA CHECK_PY MODE TOOL ARGS...: runs the check; when it exits CODE
# (the first two times) prints WHY and runs it again with the words of EXTRA appended.
serve_again() {
  local code=$1 why=$2 extra=$3 check=$4 mode=$5 run rc
  shift 5
  local args=("$@")
  for run in 1 2 3; do
    rc=0
    /usr/bin/python3 "$check" "$mode" "${args[@]}" || rc=$?
    if [[ $rc -eq $code && $run -lt 3 ]]; then
      echo "host: $why"
      # shellcheck disable=SC2206  # EXTRA is words
      args=("$@" $extra)
      continue
    fi
    return "$rc"
  done
}
