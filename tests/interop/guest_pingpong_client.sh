# Guest: ibv_rc_pingpong as client of rocemu (rocemu-interop pingpong-server listens on the
# namespace bridge 10.77.0.1; its RoCE address 10.77.0.2 is learned from its GID). GID index 1
# is the IPv4-mapped GID (RoCEv2 over IPv4). Exit status is rc_pingpong's.
timeout 100 ibv_rc_pingpong -g 1 -n 100 10.77.0.1
