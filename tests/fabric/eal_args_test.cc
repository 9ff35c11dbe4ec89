// EAL argument construction: defaults, the --no-huge fallback, user pass-through; vdev
// strings of the real-time engine's backends.
#include "fabric/eal.h"
#include "fabric/realtime_engine.h"

#include <gtest/gtest.h>

namespace rocemu::fabric {

namespace {
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}
}  // namespace

TEST(EalArguments, DefaultsAreInMemoryNoPciOnLcore0) {
  EXPECT_EQ(joined(eal_arguments(EalOptions{}, true, 42)),
            "rocemu -l 0 --no-pci --in-memory --no-telemetry");
}

TEST(EalArguments, WithoutHugepagesFallsBackToNoHugeWithAUniquePrefix) {
  EXPECT_EQ(joined(eal_arguments(EalOptions{}, false, 42)),
            "rocemu -l 0 --no-pci --no-huge -m 512 --file-prefix rocemu-42 --no-shconf --no-telemetry");
}

TEST(EalArguments, UserArgumentsReplaceOurLcoresAndMemoryMode) {
  EalOptions o;
  o.user_args = {"-l", "0-1", "--no-huge", "-m", "256", "--vdev=net_null0"};
  EXPECT_EQ(joined(eal_arguments(o, true, 1)),
            "rocemu --no-pci --no-telemetry -l 0-1 --no-huge -m 256 --vdev=net_null0");
}

TEST(EalArguments, PciDevicesAreAllowListedInsteadOfNoPci) {
  EalOptions o;
  o.pci_devices = {"0000:03:00.0"};
  EXPECT_EQ(joined(eal_arguments(o, true, 1)),
            "rocemu -l 0 -a 0000:03:00.0 --in-memory --no-telemetry");
}

TEST(VdevArgs, EachBackendNamesItsDeviceAndInterface) {
  EXPECT_EQ(vdev_args(PortBackend::kAfPacket, 3, 0, false, "", ""),
            "net_af_packet3,iface=re0a,framecnt=16384,qdisc_bypass=1");
  // The perftest tools' MTU 4096 ring: 8 KB frames in 8 KB blocks.
  EXPECT_EQ(vdev_args(PortBackend::kAfPacket, 0, 0, false, "veth0", "", AfPacketRing{2048, 8192}),
            "net_af_packet0,iface=veth0,framecnt=2048,qdisc_bypass=1,framesz=8192,blocksz=8192");
  EXPECT_EQ(vdev_args(PortBackend::kAfXdp, 4, 2, true, "veth7", ""),
            "net_af_xdp4,iface=veth7,start_queue=0,queue_count=1");
  EXPECT_EQ(vdev_args(PortBackend::kTap, 5, 1, true, "", ""), "net_tap5,iface=re1b");
  EXPECT_EQ(vdev_args(PortBackend::kMemif, 6, 1, false, "", "/tmp/m.sock"),
            "net_memif6,role=server,id=1,socket=/tmp/m.sock");
  EXPECT_EQ(vdev_args(PortBackend::kMemif, 7, 1, true, "", "/tmp/m.sock"),
            "net_memif7,role=client,id=1,socket=/tmp/m.sock");
  PortBackend b{};
  EXPECT_TRUE(parse_backend("af_xdp", b));
  EXPECT_EQ(b, PortBackend::kAfXdp);
  EXPECT_FALSE(parse_backend("xdp", b));
}

}  // namespace rocemu::fabric
