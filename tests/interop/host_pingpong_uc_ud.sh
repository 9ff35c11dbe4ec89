#!/usr/bin/env bash
# host_pingpong_uc_ud.sh ROCEMU_INTEROP — the host side of guest_pingpong_uc_ud.sh, run by
# run_guest.sh in the interop namespace: rocemu-interop as UC then UD pingpong server, then
# as UC then UD pingpong client (the guest's tools as servers), each 100 round trips; then RC
# over the IPv6 link-local GIDs (--gid-index 0 / -g 0) as server and client, each 100 round
# trips, having answered the guest's Neighbor Solicitation; last an RC server the guest's UD
# client talks to, which must fail naming the UD transport.
set -euo pipefail
interop="$1"
"$interop" pingpong-server --transport uc --iters 100 --timeout-s 60
"$interop" pingpong-server --transport ud --iters 100 --size 1024 --timeout-s 60
"$interop" pingpong-client --transport uc --iters 100 --timeout-s 60
"$interop" pingpong-client --transport ud --iters 100 --size 1024 --timeout-s 60
out=$("$interop" pingpong-server --gid-index 0 --iters 100 --timeout-s 60 2>&1) ||
  { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
"$interop" pingpong-client -g 0 --iters 100 --timeout-s 60
set +e
out=$("$interop" pingpong-server --transport rc --iters 5 --timeout-s 8 2>&1)
rc=$?
set -e
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then echo "host: RC server against a UD client succeeded" >&2; exit 1; fi
for want in "of the UD transport, this QP is RC" "pass --transport ud" "wrong_transport"; do
  grep -qF "$want" <<<"$out" || { echo "host: missing '$want' in rocemu's output" >&2; exit 1; }
done
echo "host: RC server against a UD peer failed naming the transport, as it must"
