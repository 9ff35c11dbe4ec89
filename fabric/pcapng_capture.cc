// pcapng_capture.cc — rte_pcapng file set-up, our interface blocks, EPB re-stamping.
#include "fabric/pcapng_capture.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <stdexcept>

namespace rocemu::fabric {

namespace {

constexpr uint32_t kIdbType = 0x00000001;
constexpr uint16_t kLinkTypeEthernet = 1;
constexpr uint16_t kOptEnd = 0, kOptIfName = 2, kOptIfTsresol = 9;

// Enhanced Packet Block header as rte_pcapng_copy() prepends it (pcapng section 4.3).
struct Epb {
  uint32_t block_type;
  uint32_t block_length;
  uint32_t interface_id;
  uint32_t timestamp_hi;
  uint32_t timestamp_lo;
  uint32_t capture_length;
  uint32_t original_length;
};

void put_option(std::vector<uint8_t>& b, uint16_t code, const void* v, uint16_t len) {
  const size_t at = b.size();
  b.resize(at + 4 + ((len + 3u) & ~3u), 0);
  std::memcpy(&b[at], &code, 2);
  std::memcpy(&b[at + 2], &len, 2);
  if (len) std::memcpy(&b[at + 4], v, len);
}

// Interface Description Block (section 4.2), host byte order as the SHB declares.
std::vector<uint8_t> idb(const std::string& name, uint32_t snaplen) {
  std::vector<uint8_t> b(16, 0);
  const uint16_t link = kLinkTypeEthernet;
  std::memcpy(&b[8], &link, 2);
  std::memcpy(&b[12], &snaplen, 4);
  put_option(b, kOptIfName, name.data(), static_cast<uint16_t>(name.size()));
  const uint8_t ns = 9;
  put_option(b, kOptIfTsresol, &ns, 1);
  put_option(b, kOptEnd, nullptr, 0);
  const auto total = static_cast<uint32_t>(b.size() + 4);
  std::memcpy(&b[0], &kIdbType, 4);
  std::memcpy(&b[4], &total, 4);
  b.resize(total);
  std::memcpy(&b[total - 4], &total, 4);
  return b;
}

}  // namespace

PcapngCapture::PcapngCapture(const std::string& path, const std::vector<std::string>& interfaces,
                             uint32_t snaplen_bytes, TimeNs epoch_ns)
    : num_ifaces_(static_cast<uint16_t>(interfaces.size())),
      snaplen_(snaplen_bytes),
      epoch_ns_(epoch_ns) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd_ < 0) throw std::runtime_error(path + ": cannot create capture: " + std::strerror(errno));
  // rte_pcapng_fdopen writes the section header and an IDB per ethdev port; ours follow.
  iface_base_ = rte_eth_dev_count_avail();
  pcapng_ = rte_pcapng_fdopen(fd_, nullptr, nullptr, "rocemu", nullptr);
  if (!pcapng_) {
    ::close(fd_);
    throw std::runtime_error(path + ": rte_pcapng_fdopen: " + rte_strerror(rte_errno));
  }
  for (const auto& name : interfaces) {
    const auto b = idb(name, snaplen_);
    if (::write(fd_, b.data(), b.size()) != static_cast<ssize_t>(b.size())) {
      rte_pcapng_close(pcapng_);
      throw std::runtime_error(path + ": writing interface block: " + std::strerror(errno));
    }
  }
  static std::atomic<uint32_t> counter{0};
  const std::string pool_name = "pcapng_cap" + std::to_string(counter++);
  pool_ = rte_pktmbuf_pool_create(pool_name.c_str(), 1023, 0, 0,
                                  static_cast<uint16_t>(rte_pcapng_mbuf_size(snaplen_)),
                                  SOCKET_ID_ANY);
  if (!pool_) {
    rte_pcapng_close(pcapng_);
    throw std::runtime_error(path + ": capture mbuf pool: " + rte_strerror(rte_errno));
  }
}

PcapngCapture::~PcapngCapture() {
  flush();
  rte_pcapng_close(pcapng_);  // closes fd_
  rte_mempool_free(pool_);
}

void PcapngCapture::capture(const rte_mbuf* m, uint16_t iface, Direction dir, TimeNs now) noexcept {
  if (iface >= num_ifaces_) [[unlikely]] {
    ++dropped_;
    return;
  }
  rte_mbuf* c = rte_pcapng_copy(static_cast<uint16_t>(iface_base_ + iface), 0, m, pool_, snaplen_,
                                0, static_cast<rte_pcapng_direction>(dir));
  if (!c) [[unlikely]] {
    ++dropped_;
    return;
  }
  auto* epb = rte_pktmbuf_mtod(c, Epb*);
  const auto ts = static_cast<uint64_t>(epoch_ns_ + now);
  epb->interface_id = iface_base_ + iface;
  epb->timestamp_hi = static_cast<uint32_t>(ts >> 32);
  epb->timestamp_lo = static_cast<uint32_t>(ts);
  pending_[pending_n_++] = c;
  ++captured_;
  if (pending_n_ == 32) flush();
}

void PcapngCapture::flush() noexcept {
  if (pending_n_ == 0) return;
  // Written here rather than by rte_pcapng_write_packets(): in DPDK 22.11 that function
  // rewrites each block's interface id from a table filled only for ethdev ports, which
  // corrupts captures of engine ports that are not ethdevs.
  iovec iov[32 * 4];
  int n = 0;
  size_t bytes = 0;
  for (uint16_t i = 0; i < pending_n_; ++i)
    for (rte_mbuf* s = pending_[i]; s && n < static_cast<int>(std::size(iov)); s = s->next) {
      iov[n].iov_base = rte_pktmbuf_mtod(s, void*);
      iov[n].iov_len = rte_pktmbuf_data_len(s);
      bytes += iov[n].iov_len;
      ++n;
    }
  if (::writev(fd_, iov, n) != static_cast<ssize_t>(bytes)) dropped_ += pending_n_;
  for (uint16_t i = 0; i < pending_n_; ++i) rte_pktmbuf_free(pending_[i]);
  pending_n_ = 0;
}

}  // namespace rocemu::fabric
