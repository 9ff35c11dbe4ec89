#!/usr/bin/env bash
# late_host_wrapper.sh MARKER CMD... — a WL_HOST_WRAPPER (scripts/testbed/workload.sh) for
# host_processes_test.sh: runs CMD, but when CMD is the rocemu-host of h1 only after 5 s, as
# a host whose setup is slow; MARKER is written first, so the test knows the delay happened.
marker=$1
shift
if [[ " $* " == *" --host h1 "* ]]; then
  date +%s%N >"$marker"
  sleep 5
fi
exec "$@"
