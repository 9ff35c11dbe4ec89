# Guest: RDMA WRITE and READ of 1 MiB each way against rocemu-interop rdma-check, every word
# verified on both sides (apps/interop/guest_rdma_check.c, handed in by fw_cfg as /tmp/...).
timeout 100 /tmp/guest_rdma_check 10.77.0.1 1048576 11
