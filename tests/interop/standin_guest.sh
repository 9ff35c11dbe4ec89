# Guest side of the stand-in check: ibv_rc_pingpong as client towards the scapy stand-in.
# The stand-in never ACKs, so the pingpong itself must fail (retry exhaustion); what counts is
# that the handshake completed and rxe put a frame on the wire (checked on the host).
ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE || exit 3
timeout 5 ibv_rc_pingpong -g 1 -n 1 10.77.0.1
echo "pingpong status $? (expected non-zero: nobody ACKs)"
exit 0
