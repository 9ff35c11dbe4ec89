// kernel_neighbours.cc — permanent neighbour entries over rtnetlink, and the port start that
// keeps them (see kernel_neighbours.h).
#include "fabric/kernel_neighbours.h"

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <rte_ethdev.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rocemu::fabric {

namespace {

constexpr size_t kReplyBytes = 32768;

std::string errno_text(int err) { return std::strerror(err); }

/// A NETLINK_ROUTE socket; one request at a time, answered in order.
class RtNetlink {
 public:
  RtNetlink() : fd_(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) {
    if (fd_ < 0) throw std::runtime_error("socket(AF_NETLINK): " + errno_text(errno));
  }
  ~RtNetlink() { ::close(fd_); }
  RtNetlink(const RtNetlink&) = delete;
  RtNetlink& operator=(const RtNetlink&) = delete;

  void send(nlmsghdr& msg) {
    msg.nlmsg_seq = ++seq_;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd_, &msg, msg.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
                 sizeof kernel) != static_cast<ssize_t>(msg.nlmsg_len))
      throw std::runtime_error("rtnetlink send: " + errno_text(errno));
  }
  /// The next datagram of replies; its length in bytes.
  size_t receive() {
    const ssize_t n = ::recv(fd_, buf_, sizeof buf_, 0);
    if (n < 0) throw std::runtime_error("rtnetlink receive: " + errno_text(errno));
    return static_cast<size_t>(n);
  }
  nlmsghdr* first() { return reinterpret_cast<nlmsghdr*>(buf_); }
  uint32_t seq() const { return seq_; }

 private:
  int fd_;
  uint32_t seq_ = 0;
  alignas(nlmsghdr) char buf_[kReplyBytes];
};

rtattr* first_attr(ndmsg* ndm) {
  return reinterpret_cast<rtattr*>(reinterpret_cast<char*>(ndm) + NLMSG_ALIGN(sizeof(ndmsg)));
}

/// Appends attribute `type` with `len` bytes of `data` to the message (room checked by the
/// caller's buffer size).
void put_attr(nlmsghdr& msg, uint16_t type, const void* data, size_t len) {
  auto* a = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&msg) + NLMSG_ALIGN(msg.nlmsg_len));
  a->rta_type = type;
  a->rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
  std::memcpy(RTA_DATA(a), data, len);
  msg.nlmsg_len = static_cast<uint32_t>(NLMSG_ALIGN(msg.nlmsg_len) + RTA_ALIGN(a->rta_len));
}

std::string iface_name(int ifindex) {
  char name[IF_NAMESIZE] = {};
  return if_indextoname(static_cast<unsigned>(ifindex), name) ? std::string(name)
                                                              : "#" + std::to_string(ifindex);
}

}  // namespace

std::vector<NeighbourEntry> permanent_neighbours(int ifindex) {
  RtNetlink nl;
  struct {
    nlmsghdr nh;
    ndmsg ndm;
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(ndmsg));
  req.nh.nlmsg_type = RTM_GETNEIGH;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.ndm.ndm_family = AF_UNSPEC;
  nl.send(req.nh);
  std::vector<NeighbourEntry> out;
  while (true) {
    auto len = static_cast<int>(nl.receive());
    for (nlmsghdr* nh = nl.first(); NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
      if (nh->nlmsg_seq != nl.seq()) continue;
      if (nh->nlmsg_type == NLMSG_DONE) return out;
      if (nh->nlmsg_type == NLMSG_ERROR) {
        const int err = -static_cast<nlmsgerr*>(NLMSG_DATA(nh))->error;
        throw std::runtime_error("rtnetlink RTM_GETNEIGH: " + errno_text(err));
      }
      if (nh->nlmsg_type != RTM_NEWNEIGH) continue;
      auto* ndm = static_cast<ndmsg*>(NLMSG_DATA(nh));
      if (ndm->ndm_ifindex != ifindex || !(ndm->ndm_state & NUD_PERMANENT)) continue;
      if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6) continue;
      NeighbourEntry e;
      e.family = ndm->ndm_family;
      e.flags = ndm->ndm_flags;
      int attr_len = static_cast<int>(NLMSG_PAYLOAD(nh, sizeof(ndmsg)));
      for (rtattr* a = first_attr(ndm); RTA_OK(a, attr_len); a = RTA_NEXT(a, attr_len)) {
        const auto* p = static_cast<const uint8_t*>(RTA_DATA(a));
        const auto n = static_cast<size_t>(RTA_PAYLOAD(a));
        if (a->rta_type == NDA_DST) e.dst.assign(p, p + n);
        if (a->rta_type == NDA_LLADDR) e.lladdr.assign(p, p + n);
      }
      if (!e.dst.empty() && !e.lladdr.empty()) out.push_back(std::move(e));
    }
  }
}

int add_permanent_neighbour(int ifindex, const NeighbourEntry& e) {
  if (e.dst.size() > 16 || e.lladdr.size() > 32) return EINVAL;
  RtNetlink nl;
  struct {
    nlmsghdr nh;
    ndmsg ndm;
    char attrs[2 * RTA_SPACE(32)];
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(ndmsg));
  req.nh.nlmsg_type = RTM_NEWNEIGH;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
  req.ndm.ndm_family = e.family;
  req.ndm.ndm_ifindex = ifindex;
  req.ndm.ndm_state = NUD_PERMANENT;
  // Only the flags a user may set on a plain entry (NTF_PROXY would make it a proxy entry).
  req.ndm.ndm_flags = e.flags & (NTF_ROUTER | NTF_EXT_LEARNED);
  put_attr(req.nh, NDA_DST, e.dst.data(), e.dst.size());
  put_attr(req.nh, NDA_LLADDR, e.lladdr.data(), e.lladdr.size());
  nl.send(req.nh);
  while (true) {
    auto len = static_cast<int>(nl.receive());
    for (nlmsghdr* nh = nl.first(); NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len))
      if (nh->nlmsg_seq == nl.seq() && nh->nlmsg_type == NLMSG_ERROR)
        return -static_cast<nlmsgerr*>(NLMSG_DATA(nh))->error;
  }
}

int start_port_keeping_neighbours(uint16_t port_id) {
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port_id, &info) != 0 || info.if_index == 0)
    return rte_eth_dev_start(port_id);
  const int ifindex = static_cast<int>(info.if_index);
  std::vector<NeighbourEntry> before;
  try {
    before = permanent_neighbours(ifindex);
  } catch (const std::exception& e) {
    spdlog::warn(
        "ethdev port {}: cannot read the neighbour entries of {} ({}); its start may "
        "flush them",
        port_id, iface_name(ifindex), e.what());
    return rte_eth_dev_start(port_id);
  }
  const int rc = rte_eth_dev_start(port_id);
  if (before.empty()) return rc;
  std::vector<NeighbourEntry> after;
  try {
    after = permanent_neighbours(ifindex);
  } catch (const std::exception& e) {
    spdlog::warn(
        "ethdev port {}: cannot re-read the neighbour entries of {} ({}); writing all "
        "back",
        port_id, iface_name(ifindex), e.what());
  }
  size_t restored = 0, failed = 0;
  int err = 0;
  for (const NeighbourEntry& e : before) {
    if (std::find(after.begin(), after.end(), e) != after.end()) continue;
    if (const int r = add_permanent_neighbour(ifindex, e); r == 0) {
      ++restored;
    } else {
      ++failed;
      err = r;
    }
  }
  if (restored > 0)
    spdlog::debug(
        "ethdev port {}: its start flushed {} of {} permanent neighbour entries of {}; "
        "written back",
        port_id, restored + failed, before.size(), iface_name(ifindex));
  if (failed > 0)
    spdlog::warn(
        "ethdev port {}: {} permanent neighbour entries of {} flushed by the port start "
        "could not be written back ({})",
        port_id, failed, iface_name(ifindex), errno_text(err));
  return rc;
}

}  // namespace rocemu::fabric
