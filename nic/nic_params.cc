// nic_params.cc — parsing and validating the [nic] table (see nic_params.h).
#include "nic/nic_params.h"

#include <string>

namespace rocemu::nic {

NicParams parse_nic_params(ConfigReader& r) {
  NicParams p;
  const int64_t mtu = r.integer("mtu_bytes", p.mtu_bytes, 256, 4096);
  if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
    r.error("mtu_bytes", "must be one of 256, 512, 1024, 2048, 4096 (IB MTUs)");
  p.mtu_bytes = static_cast<uint32_t>(mtu);
  p.data_dscp = static_cast<uint8_t>(r.integer("data_dscp", p.data_dscp, 0, 63));
  p.control_dscp = static_cast<uint8_t>(r.integer("control_dscp", p.control_dscp, 0, 63));
  std::vector<int64_t> def(p.dscp_to_priority.begin(), p.dscp_to_priority.end());
  const auto map = r.integer_array("dscp_to_priority", def, 0, 7);
  if (map.size() != 64)
    r.error("dscp_to_priority", "needs 64 entries (one per DSCP), got " + std::to_string(map.size()));
  else
    for (int d = 0; d < 64; ++d) p.dscp_to_priority[d] = static_cast<uint8_t>(map[d]);
  p.ecn_capable = r.boolean("ecn_capable", p.ecn_capable);
  p.max_outstanding_packets = static_cast<uint32_t>(
      r.integer("max_outstanding_packets", p.max_outstanding_packets, 1, 1 << 22));
  p.ack_every_packets =
      static_cast<uint32_t>(r.integer("ack_every_packets", p.ack_every_packets, 1, 1 << 20));
  p.timeout = static_cast<uint8_t>(r.integer("timeout", p.timeout, 0, 31));
  p.retry_cnt = static_cast<uint8_t>(r.integer("retry_cnt", p.retry_cnt, 0, 7));
  p.rnr_retry = static_cast<uint8_t>(r.integer("rnr_retry", p.rnr_retry, 0, 7));
  p.min_rnr_timer = static_cast<uint8_t>(r.integer("min_rnr_timer", p.min_rnr_timer, 0, 31));
  p.max_qps = static_cast<uint32_t>(r.integer("max_qps", p.max_qps, 1, 1 << 16));
  p.max_read_jobs = static_cast<uint32_t>(r.integer("max_read_jobs", p.max_read_jobs, 1, 256));
  if (auto w = r.table("pfc_watchdog")) p.pfc_watchdog = parse_pfc_watchdog(*w, {"forward"});
  r.finish();
  return p;
}

}  // namespace rocemu::nic
