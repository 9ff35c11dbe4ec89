// cm_mad.h — the InfiniBand Communication Manager's MADs as rdma_cm peers send them over
// RoCE (IBTA Vol. 1 rel. 1.4 ch. 12.6, tables 99-113; Linux include/rdma/ibta_vol1_c12.h):
// the 24-byte MAD header (base version 1, class 0x07, class version 2, method Send), then
// one of REQ, MRA, REJ, REP, RTU, DREQ, DREP in the 232 data bytes. Also rdma_cm's header at
// the start of a REQ's private data (Linux drivers/infiniband/core/cma.c, struct cma_hdr).
//
// Pure code: decode_cm_mad() reads every field of the message (reserved bits are ignored,
// as the spec asks of a receiver), encode_cm_mad() writes them back with reserved bits zero,
// so a MAD with zero reserved bits re-encodes byte for byte. Bit numbering as the IBTA's:
// bit 0 is the most significant bit of a byte.
#pragma once

#include <array>
#include <cstdint>
#include <variant>

namespace rocemu::nic::cm {

inline constexpr uint32_t kMadBytes = 256;
inline constexpr uint32_t kMadHeaderBytes = 24;
inline constexpr uint8_t kMadBaseVersion = 1;
inline constexpr uint8_t kMgmtClassCm = 0x07;
inline constexpr uint8_t kCmClassVersion = 2;
inline constexpr uint8_t kMethodSend = 0x03;
inline constexpr uint32_t kGsiQpn = 1;
inline constexpr uint32_t kGsiQkey = 0x80010000u;  // the well-known Q_Key of QP1 (IBTA 13.4.6.1)

enum class CmAttr : uint16_t {
  kReq = 0x0010,
  kMra = 0x0011,
  kRej = 0x0012,
  kRep = 0x0013,
  kRtu = 0x0014,
  kDreq = 0x0015,
  kDrep = 0x0016,
};
const char* cm_attr_name(uint16_t attr_id) noexcept;

/// REJ reasons (IBTA table 106) rdma_cm peers send or act on.
inline constexpr uint16_t kRejNoQp = 1;
inline constexpr uint16_t kRejNoResources = 3;
inline constexpr uint16_t kRejTimeout = 4;
inline constexpr uint16_t kRejInvalidCommId = 6;
inline constexpr uint16_t kRejInvalidServiceId = 8;
inline constexpr uint16_t kRejStaleConn = 10;
inline constexpr uint16_t kRejConsumerDefined = 28;
const char* rej_reason_name(uint16_t reason) noexcept;

/// REJ/MRA "message rejected / MRAed" (2 bits).
inline constexpr uint8_t kMsgReq = 0, kMsgRep = 1, kMsgOther = 2;

struct MadHeader {
  uint8_t base_version = kMadBaseVersion;
  uint8_t mgmt_class = kMgmtClassCm;
  uint8_t class_version = kCmClassVersion;
  uint8_t method = kMethodSend;
  uint16_t status = 0;
  uint16_t class_specific = 0;
  uint64_t tid = 0;
  uint16_t attr_id = 0;
  uint32_t attr_mod = 0;
};

using Gid = std::array<uint8_t, 16>;

/// The primary or alternate path of a REQ (44 bytes). Over RoCE: LIDs 0xFFFF, GIDs of the
/// two ends (IPv4-mapped), the flow label, traffic class and hop limit of the GRH.
struct CmPath {
  uint16_t local_lid = 0, remote_lid = 0;
  Gid local_gid{}, remote_gid{};
  uint32_t flow_label = 0;  // 20 bits
  uint8_t packet_rate = 0;  // 6 bits
  uint8_t traffic_class = 0, hop_limit = 0;
  uint8_t sl = 0;  // 4 bits
  bool subnet_local = false;
  uint8_t local_ack_timeout = 0;  // 5 bits: 4.096 us x 2^t
};

struct CmReq {
  uint32_t local_comm_id = 0;
  uint32_t vendor_id = 0;  // 24 bits
  uint64_t service_id = 0;
  uint64_t local_ca_guid = 0;
  uint32_t local_qkey = 0;
  uint32_t local_qpn = 0;  // 24 bits
  uint8_t responder_resources = 0;
  uint32_t local_eecn = 0;  // 24 bits
  uint8_t initiator_depth = 0;
  uint32_t remote_eecn = 0;                // 24 bits
  uint8_t remote_cm_response_timeout = 0;  // 5 bits
  uint8_t transport_service_type = 0;      // 2 bits: 0 RC, 1 UC, 3 extended
  bool end_to_end_flow_control = false;
  uint32_t starting_psn = 0;              // 24 bits
  uint8_t local_cm_response_timeout = 0;  // 5 bits
  uint8_t retry_count = 0;                // 3 bits
  uint16_t pkey = 0;
  uint8_t path_mtu = 0;  // 4 bits: IBV_MTU_* (3 = 1024)
  bool rdc_exists = false;
  uint8_t rnr_retry_count = 0;  // 3 bits
  uint8_t max_cm_retries = 0;   // 4 bits
  bool srq = false;
  uint8_t extended_transport_type = 0;  // 3 bits
  CmPath primary, alternate;
  bool sap_supported = false;
  std::array<uint8_t, 92> private_data{};
};

struct CmMra {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint8_t message_mraed = 0;    // 2 bits: kMsgReq, kMsgRep, kMsgOther
  uint8_t service_timeout = 0;  // 5 bits
  std::array<uint8_t, 222> private_data{};
};

struct CmRej {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint8_t message_rejected = 0;    // 2 bits
  uint8_t reject_info_length = 0;  // 7 bits
  uint16_t reason = 0;
  std::array<uint8_t, 72> ari{};
  std::array<uint8_t, 148> private_data{};
};

struct CmRep {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint32_t local_qkey = 0;
  uint32_t local_qpn = 0;     // 24 bits
  uint32_t local_eecn = 0;    // 24 bits
  uint32_t starting_psn = 0;  // 24 bits
  uint32_t vendor_id = 0;     // 24 bits, in the low bytes of the three words above
  uint8_t responder_resources = 0, initiator_depth = 0;
  uint8_t target_ack_delay = 0;   // 5 bits
  uint8_t failover_accepted = 0;  // 2 bits
  bool end_to_end_flow_control = false;
  uint8_t rnr_retry_count = 0;  // 3 bits
  bool srq = false;
  uint64_t local_ca_guid = 0;
  std::array<uint8_t, 196> private_data{};
};

struct CmRtu {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  std::array<uint8_t, 224> private_data{};
};

struct CmDreq {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint32_t remote_qpn = 0;  // 24 bits
  std::array<uint8_t, 220> private_data{};
};

struct CmDrep {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  std::array<uint8_t, 224> private_data{};
};

using CmBody = std::variant<CmReq, CmMra, CmRej, CmRep, CmRtu, CmDreq, CmDrep>;

struct CmMad {
  MadHeader hdr;
  CmBody body;
};

enum class MadError : uint8_t {
  kNone = 0,
  kTruncated,     // fewer than 256 bytes
  kBaseVersion,   // base version != 1
  kNotCm,         // management class != 0x07
  kClassVersion,  // CM class version != 2
  kMethod,        // not Send
  kAttribute,     // an attribute rocemu does not implement (ClassPortInfo, LAP, APR, SIDR)
};
const char* mad_error_name(MadError e) noexcept;

/// Decodes the MAD at `mad[0..len)`. kNone and `out` filled, or the reason it is not a CM
/// message rocemu handles.
MadError decode_cm_mad(const uint8_t* mad, uint32_t len, CmMad& out) noexcept;

/// Writes the 256 bytes of `m` (the header's attr_id is set from the body's type).
void encode_cm_mad(const CmMad& m, uint8_t* out) noexcept;

/// The attribute ID of a body.
uint16_t cm_attr_of(const CmBody& b) noexcept;

// ---- rdma_cm's conventions ----

/// RDMA_PS_TCP: the port space of rdma_cm's RC connections; service ID = ps << 16 | port.
inline constexpr uint64_t kRdmaPsTcp = 0x0106;
constexpr uint64_t rdma_cm_service_id(uint16_t port) noexcept { return kRdmaPsTcp << 16 | port; }
/// The port of an RDMA_PS_TCP service ID, or -1 if it is not one.
constexpr int32_t rdma_cm_port(uint64_t service_id) noexcept {
  return (service_id >> 16) == kRdmaPsTcp ? static_cast<int32_t>(service_id & 0xffff) : -1;
}

/// rdma_cm's header at the start of a REQ's private data (cma.c struct cma_hdr, 36 bytes):
/// cma_version 0x00, ip_version 0x40 (IPv4 in the high nibble), the source port, then the
/// source and destination addresses as 16 bytes each (IPv4: the last 4, the rest zero).
/// The application's private data follows (56 bytes at most).
inline constexpr uint32_t kCmaHeaderBytes = 36;
inline constexpr uint32_t kReqUserPrivateBytes = 92 - kCmaHeaderBytes;
struct CmaHeader {
  uint8_t cma_version = 0;
  uint8_t ip_version = 4;  // 4 or 6 (the nibble)
  uint16_t src_port = 0;
  std::array<uint8_t, 16> src_addr{}, dst_addr{};  // IPv4: in bytes 12..15
  uint32_t src_ipv4() const noexcept;
  uint32_t dst_ipv4() const noexcept;
};
CmaHeader make_cma_header(uint32_t src_ipv4, uint16_t src_port, uint32_t dst_ipv4) noexcept;
/// False if the private data does not start with a version-0 rdma_cm header for IPv4 or 6.
bool decode_cma_header(const uint8_t* private_data, CmaHeader& out) noexcept;
void encode_cma_header(const CmaHeader& h, uint8_t* private_data) noexcept;

/// ::ffff:a.b.c.d, as rdma_cm's GIDs for RoCEv2 over IPv4; and back (false if not mapped).
Gid ipv4_gid(uint32_t ipv4) noexcept;
bool gid_ipv4(const Gid& g, uint32_t& ipv4) noexcept;

/// The flow label rdma_cm puts in a RoCEv2 REQ (cma.c cma_get_roce_udp_flow_label):
/// (source port x 31 + destination port) in 20 bits.
constexpr uint32_t rdma_cm_flow_label(uint16_t src_port, uint16_t dst_port) noexcept {
  return (uint32_t{src_port} * 31 + dst_port) & 0xfffff;
}

/// 4.096 us x 2^t, the CM's and the transport's time-out encoding (IBTA 12.7.32, 9.7.6.1.3).
constexpr int64_t cm_timeout_ns(uint8_t t) noexcept { return int64_t{4096} << (t & 31); }

}  // namespace rocemu::nic::cm
