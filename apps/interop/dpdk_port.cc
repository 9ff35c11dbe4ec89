// dpdk_port.cc — the single ethdev port of the interop tool (EAL: fabric/eal.h).
#include "apps/interop/dpdk_port.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <stdexcept>

#include "fabric/kernel_neighbours.h"

namespace rocemu::interop {

namespace {
[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + rte_strerror(err < 0 ? -err : err));
}
}  // namespace

ExternalPort::ExternalPort(const std::string& dev_name, uint32_t pool_mbufs, uint16_t ring_size,
                           uint16_t mbuf_data_bytes) {
  static_assert(kDefaultMbufDataBytes == RTE_MBUF_DEFAULT_BUF_SIZE);
  if (int rc = rte_eth_dev_get_port_by_name(dev_name.c_str(), &port_); rc != 0)
    fail("no ethdev named " + dev_name, rc);
  pool_ = rte_pktmbuf_pool_create("interop_pool", pool_mbufs, 256, 0, mbuf_data_bytes,
                                  static_cast<int>(rte_socket_id()));
  if (!pool_) fail("rte_pktmbuf_pool_create", rte_errno);
  rte_eth_conf conf{};
  if (int rc = rte_eth_dev_configure(port_, 1, 1, &conf); rc != 0)
    fail("rte_eth_dev_configure", rc);
  uint16_t nrx = ring_size, ntx = ring_size;
  rte_eth_dev_adjust_nb_rx_tx_desc(port_, &nrx, &ntx);
  const int socket = rte_eth_dev_socket_id(port_);
  const auto sock = static_cast<unsigned>(socket < 0 ? 0 : socket);
  if (int rc = rte_eth_rx_queue_setup(port_, 0, nrx, sock, nullptr, pool_); rc != 0)
    fail("rte_eth_rx_queue_setup", rc);
  if (int rc = rte_eth_tx_queue_setup(port_, 0, ntx, sock, nullptr); rc != 0)
    fail("rte_eth_tx_queue_setup", rc);
  // A plain rte_eth_dev_start would flush the interface's neighbour entries, static ones
  // included (fabric/kernel_neighbours.h): the testbed's for the next program on it.
  if (int rc = fabric::start_port_keeping_neighbours(port_); rc != 0) fail("rte_eth_dev_start", rc);
  rte_eth_promiscuous_enable(port_);
}

ExternalPort::~ExternalPort() {
  rte_eth_dev_stop(port_);
  rte_eth_dev_close(port_);
}

uint16_t ExternalPort::rx(rte_mbuf** pkts, uint16_t n) noexcept {
  return rte_eth_rx_burst(port_, 0, pkts, n);
}

uint16_t ExternalPort::tx(rte_mbuf** pkts, uint16_t n) noexcept {
  return rte_eth_tx_burst(port_, 0, pkts, n);
}

int64_t tsc_now_ns() noexcept {
  static const uint64_t tsc0 = rte_get_tsc_cycles();
  static const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
  return static_cast<int64_t>(static_cast<double>(rte_get_tsc_cycles() - tsc0) * ns_per_tsc);
}

}  // namespace rocemu::interop
