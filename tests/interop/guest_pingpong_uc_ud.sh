# Guest: ibv_uc_pingpong and ibv_ud_pingpong both ways with rocemu (host side:
# host_pingpong_uc_ud.sh, one rocemu-interop run per step, in this order). First as clients
# of rocemu-interop pingpong-server --transport uc / ud (side channel on the namespace bridge
# 10.77.0.1), then as servers of rocemu's pingpong-client. Last a UD client against a rocemu
# RC server: rocemu must name the UD transport and fail, the UD client is stopped by its
# timeout (busybox timeout: 143, killed by SIGTERM; coreutils: 124). UD messages are one
# packet: -s 1024, the rxe port's active MTU on a 1500-byte link. GID index 1 is the
# IPv4-mapped GID. Then ibv_rc_pingpong -g 0 both ways (RoCEv2 over IPv6 between the
# link-local GIDs: rxe resolves rocemu's address by a Neighbor Solicitation, which
# rocemu-interop answers).
# The pingpong clients do not retry a refused connection, and the next rocemu server may take
# seconds to listen on a loaded machine: client() runs the tool again (after 1 s, up to 30
# times) only while it reports "Couldn't connect", which happens before any RDMA traffic.
client() {
  n=0
  while :; do
    out=$("$@" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    case "$out" in
      *"Couldn't connect"*) n=$((n + 1)); [ "$n" -lt 30 ] || return 1; sleep 1 ;;
      *) return "$rc" ;;
    esac
  done
}
client timeout 60 ibv_uc_pingpong -g 1 -n 100 10.77.0.1 || exit 21
client timeout 60 ibv_ud_pingpong -g 1 -n 100 -s 1024 10.77.0.1 || exit 22
timeout 60 ibv_uc_pingpong -g 1 -n 100 || exit 23
timeout 60 ibv_ud_pingpong -g 1 -n 100 -s 1024 || exit 24
client timeout 60 ibv_rc_pingpong -g 0 -n 100 10.77.0.1 || exit 26
timeout 60 ibv_rc_pingpong -g 0 -n 100 || exit 27
client timeout 15 ibv_ud_pingpong -g 1 -n 5 -s 1024 10.77.0.1
rc=$?
[ "$rc" -eq 124 ] || [ "$rc" -eq 143 ] ||
  { echo "ud client against an RC server: status $rc, expected its timeout"; exit 25; }
