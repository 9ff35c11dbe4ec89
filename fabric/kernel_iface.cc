// kernel_iface.cc — sysfs and SIOCGIFADDR reads of a kernel interface (see kernel_iface.h).
#include "fabric/kernel_iface.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

namespace rocemu::fabric {

namespace {
/// Whether `iface` can name an interface (and a sysfs directory): no '/', fits IFNAMSIZ.
bool plausible_name(const std::string& iface) {
  return !iface.empty() && iface.size() < IFNAMSIZ && iface.find('/') == std::string::npos &&
         iface != "." && iface != "..";
}
}  // namespace

std::optional<MacAddr> iface_mac(const std::string& iface) {
  if (!plausible_name(iface)) return std::nullopt;
  std::ifstream f("/sys/class/net/" + iface + "/address");
  std::string s;
  if (!(f >> s)) return std::nullopt;
  return parse_mac(s);
}

std::optional<uint32_t> iface_ipv4(const std::string& iface) {
  if (!plausible_name(iface)) return std::nullopt;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, iface.c_str(), IFNAMSIZ - 1);
  const int rc = ::ioctl(fd, SIOCGIFADDR, &ifr);
  ::close(fd);
  if (rc != 0) return std::nullopt;
  return ntohl(reinterpret_cast<const sockaddr_in*>(&ifr.ifr_addr)->sin_addr.s_addr);
}

std::optional<uint32_t> iface_mtu(const std::string& iface) {
  if (!plausible_name(iface)) return std::nullopt;
  std::ifstream f("/sys/class/net/" + iface + "/mtu");
  uint32_t mtu = 0;
  if (!(f >> mtu)) return std::nullopt;
  return mtu;
}

}  // namespace rocemu::fabric
