# Guest: real perftest servers, one after another on TCP 18515, for rocemu's clients on the
# host (host_perftest_clients.sh): ib_write_bw, ib_read_bw, ib_send_bw, then the same three
# with -b (both sides send at once and both print the sum of the two directions); each 100
# messages of 64 KiB, GID index 1 (IPv4-mapped). Each must exit 0; they print their own
# tables (the WRITE/READ servers print the rocemu client's reported row, the SEND server its
# own, -b the sum); last ib_write_lat -s 64 -n 100 as server (perftest's WRITE ping-pong: the
# server writes first; no closing messages); then ib_send_bw -a (all sizes); last
# ib_atomic_bw (FETCH_AND_ADD, 1000 operations) and ib_atomic_lat -A CMP_AND_SWAP (100).
# -u 18 (ACK timeout 1.07 s) on every guest tool: with rxe's default 67 ms the TCG guest, slow
# to process the ACKs it has received, times out spuriously, and a retry started while the
# previous one is still pending hits a Linux 6.1 rxe requester bug (docs/interop.md "Known
# problems": it resends with message boundaries shifted by one PSN, rocemu NAKs the stray
# opcode as an invalid request and the guest fails with status 9).
opts="-d rxe0 -x 1 -s 65536 -n 100 -F -u 18 --report_gbits"
timeout 100 ib_write_bw $opts || exit 21
timeout 60 ib_read_bw $opts || exit 22
timeout 60 ib_send_bw $opts || exit 23
timeout 60 ib_write_bw $opts -b || exit 24
timeout 60 ib_read_bw $opts -b || exit 25
timeout 60 ib_send_bw $opts -b || exit 26
timeout 60 ib_write_lat -d rxe0 -x 1 -s 64 -n 100 -F -u 18 || exit 27
# -a: every size from 2 B to 8 MiB, 5 messages each; send_bw syncs before and after each.
timeout 120 ib_send_bw -d rxe0 -x 1 -a -n 5 -F -u 18 --report_gbits || exit 28
timeout 60 ib_atomic_bw -d rxe0 -x 1 -n 1000 -F -u 18 || exit 29
timeout 60 ib_atomic_lat -d rxe0 -x 1 -n 100 -F -u 18 -A CMP_AND_SWAP || exit 30
