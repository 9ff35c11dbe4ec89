#!/usr/bin/env bash
# rocemu-interop's command line without EAL: --help (alone or after a mode) lists every mode
# and option and exits 0; no mode, an unknown mode, an unknown option or a bad value exit 2
# naming the problem, with nothing started. Usage: cli_test.sh ROCEMU_INTEROP
set -u
bin=$1
. "$(dirname "$0")/../support/cli_check.sh"
opts=(--iface --vdev-kind --ip --mac --peer-ip --peer-mac --side-ip --iters --size --bytes
      --seed --rate-gbps --ack-timeout --timeout-s --drop-read-responses --transport --port
      --count --verbose)
out=$("$bin" --help 2>&1); check help 0 $? "$out" pingpong-server pingpong-client rdma-check \
  perftest-server rping-server rping-client "${opts[@]}" "exit: 0 success"
out=$("$bin" -h 2>&1); check help-short 0 $? "$out" "usage: rocemu-interop MODE"
out=$("$bin" rdma-check --bytes 8 --help 2>&1); check help-after-mode 0 $? "$out" --drop-read-responses
out=$("$bin" 2>&1); check no-mode 2 $? "$out" "no mode" "rocemu-interop --help"
out=$("$bin" frobnicate 2>&1); check unknown-mode 2 $? "$out" "unknown mode 'frobnicate'" perftest-server
out=$("$bin" rdma-check --frobnicate 1 2>&1); check unknown-option 2 $? "$out" "bad option '--frobnicate'"
out=$("$bin" rdma-check --bytes 12 2>&1); check bad-bytes 2 $? "$out" "multiple of 8"
out=$("$bin" rdma-check --ack-timeout 32 2>&1); check bad-ack-timeout 2 $? "$out" "--ack-timeout must be 0..31"
out=$("$bin" pingpong-server --drop-read-responses 0.1 2>&1)
check drop-outside-rdma-check 2 $? "$out" "--drop-read-responses is for rdma-check"
out=$("$bin" pingpong-client --transport rd 2>&1); check bad-transport 2 $? "$out" "--transport must be rc, uc or ud"
out=$("$bin" rdma-check --transport ud 2>&1)
check transport-outside-pingpong 2 $? "$out" "--transport is for pingpong-server and pingpong-client"
out=$("$bin" rping-client --port 0 2>&1); check bad-port 2 $? "$out" "--port must be 1..65535"
out=$("$bin" rping-server --count 0 2>&1); check bad-count 2 $? "$out" "--count must be positive"
exit $fail
