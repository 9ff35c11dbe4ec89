# Guest: ibv_rc_pingpong as server; rocemu-interop pingpong-client connects to 10.77.0.10.
timeout 100 ibv_rc_pingpong -g 1 -n 100
