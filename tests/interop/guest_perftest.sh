# Guest: perftest's ib_write_bw then ib_read_bw (100 messages of 64 KiB, 6400 packets each)
# as clients of rocemu-interop perftest-server; GID index 1 (IPv4-mapped). Each must exit 0
# (perftest fails on any error completion or side-channel mismatch).
timeout 90 ib_write_bw -d rxe0 -x 1 -s 65536 -n 100 -F --report_gbits 10.77.0.1 || exit 11
timeout 90 ib_read_bw -d rxe0 -x 1 -s 65536 -n 100 -F --report_gbits 10.77.0.1 || exit 12
