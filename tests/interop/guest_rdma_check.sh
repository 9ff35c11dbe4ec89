# Guest: RDMA WRITE, READ and SEND of 4 MiB each way (4096 packets at IB MTU 1024: more than
# rocemu's 1024-packet window) against rocemu-interop rdma-check, every word verified on both
# sides (apps/interop/guest_rdma_check.c, handed in by fw_cfg). Local ACK timeout 18
# (4.096 us x 2^18 = 1.07 s) on both sides: this TCG guest can take longer than rxe's usual
# 67 ms to ACK a full window, and a spurious timeout is not what this test is about.
# On failure, rxe's own counters (sent and received packets, retries, sequence errors) say
# which side stopped.
if ! timeout 100 /tmp/guest_rdma_check 10.77.0.1 4194304 11 18516 10.77.0.2 18; then
  rdma statistic show link rxe0/1 2>&1 | sed 's/^/rxe counters: /'
  exit 1
fi
