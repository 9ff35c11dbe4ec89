#!/usr/bin/env bash
# host_retry_test.sh CHECK_PY — the host side's reruns of the interop perftest tests
# (host_perftest_report.sh), without a guest:
# - check_perftest_output.py exits 5 when a tool failed saying its peer's requester stopped of
#   its own accord, and 1 for any other failure;
# - serve_stopped serves a rerun after exit 5 (adding --server_wait 90), at most 3 runs, and
#   passes any other status through at once; serve_report does the same for exit 4.
set -uo pipefail
check="$1"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/host_perftest_report.sh"
tmp="$(mktemp -d /tmp/rocemu-host-retry.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {  # expect WANT GOT WHAT
  if [[ "$1" == "$2" ]]; then
    echo "ok: $3"
  else
    echo "FAIL: $3: got '$2', want '$1'"
    fails=$((fails + 1))
  fi
}

# A "tool" that fails as rocemu_send_bw does when the peer stopped, and one that fails otherwise.
cat > "$tmp/stopped.sh" <<'EOF'
#!/bin/sh
echo "rocemu_send_bw: the peer sent nothing for 10.0 s and every packet of it that arrived was answered: its requester stopped of its own accord (or a packet was lost and its retransmission timeout is over 5 s)" >&2
exit 1
EOF
cat > "$tmp/broken.sh" <<'EOF'
#!/bin/sh
echo "rocemu_send_bw: 65536-byte test failed: no completion for 10 s" >&2
exit 1
EOF
chmod +x "$tmp/stopped.sh" "$tmp/broken.sh"
rc=0; /usr/bin/python3 "$check" bw-gbits-all-nopeak "$tmp/stopped.sh" >/dev/null || rc=$?
expect 5 "$rc" "check_perftest_output.py: the peer stopped -> exit 5"
rc=0; /usr/bin/python3 "$check" bw-gbits-nopeak "$tmp/broken.sh" >/dev/null || rc=$?
expect 1 "$rc" "check_perftest_output.py: any other failure -> exit 1"

# A fake check script: logs its arguments, exits with the next status of its list.
cat > "$tmp/check.py" <<EOF
import sys
log = "$tmp/runs"
with open(log, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
with open(log) as f:
    n = sum(1 for _ in f)
codes = open("$tmp/codes").read().split()
sys.exit(int(codes[min(n, len(codes)) - 1]))
EOF
run() {  # run FUNCTION CODES... : prints "status runs last-args"
  local fn=$1
  shift
  rm -f "$tmp/runs"
  echo "$*" > "$tmp/codes"
  local rc=0
  "$fn" "$tmp/check.py" bw-gbits tool -p 18520 --server_wait 60 >/dev/null || rc=$?
  echo "$rc $(wc -l < "$tmp/runs") $(tail -n 1 "$tmp/runs")"
}
expect "0 2 bw-gbits tool -p 18520 --server_wait 60 --server_wait 90" "$(run serve_stopped 5 0)" \
  "serve_stopped: a stop, then a pass: served twice, the rerun waits 90 s"
expect "5 3 bw-gbits tool -p 18520 --server_wait 60 --server_wait 90" "$(run serve_stopped 5 5 5 0)" \
  "serve_stopped: three stops: fails after 3 runs"
expect "1 1 bw-gbits tool -p 18520 --server_wait 60" "$(run serve_stopped 1 0)" \
  "serve_stopped: another failure: no rerun"
expect "0 1 bw-gbits tool -p 18520 --server_wait 60" "$(run serve_stopped 0)" \
  "serve_stopped: a pass: one run"
expect "0 2 bw-gbits-report tool -p 18520 --server_wait 60" "$(run serve_report 4 0)" \
  "serve_report: zeros, then a pass: served twice"
expect "5 1 bw-gbits-report tool -p 18520 --server_wait 60" "$(run serve_report 5 0)" \
  "serve_report: a stop is not its business: no rerun"
[[ $fails -eq 0 ]] || { echo "$fails check(s) failed"; exit 1; }
echo "all host retry checks passed"
