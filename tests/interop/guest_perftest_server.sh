# Guest: real perftest servers, one after another on TCP 18515, for rocemu's clients on the
# host (host_perftest_clients.sh): ib_write_bw, ib_read_bw, ib_send_bw, each 100 messages of
# 64 KiB, GID index 1 (IPv4-mapped). Each must exit 0; they print their own tables (the
# WRITE/READ servers print the rocemu client's reported row, the SEND server its own).
timeout 100 ib_write_bw -d rxe0 -x 1 -s 65536 -n 100 -F --report_gbits || exit 21
timeout 60 ib_read_bw -d rxe0 -x 1 -s 65536 -n 100 -F --report_gbits || exit 22
timeout 60 ib_send_bw -d rxe0 -x 1 -s 65536 -n 100 -F --report_gbits || exit 23
