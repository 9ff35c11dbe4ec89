// cm_mad.cc — CM MAD codec (see cm_mad.h). Field positions from IBTA Vol. 1 tables 99-113
// as Linux's include/rdma/ibta_vol1_c12.h names them: (byte offset in the message data,
// first bit counted from the MSB, width).
#include "nic/cm_mad.h"

#include <cstring>
#include <type_traits>

#include "common/wire.h"
#include "nic/roce_host.h"

namespace rocemu::nic::cm {

using wire::detail::get16;
using wire::detail::get32;
using wire::detail::get64;
using wire::detail::put16;
using wire::detail::put32;
using wire::detail::put64;

namespace {

/// `bits` bits starting `bit` bits (from the MSB) into the big-endian 32-bit word at `p`.
uint32_t getb(const uint8_t* p, uint32_t bit, uint32_t bits) noexcept {
  const uint32_t w = get32(p);
  return bits == 32 ? w : (w >> (32 - bit - bits)) & ((1u << bits) - 1);
}
void putb(uint8_t* p, uint32_t bit, uint32_t bits, uint32_t v) noexcept {
  const uint32_t mask = bits == 32 ? ~0u : ((1u << bits) - 1) << (32 - bit - bits);
  const uint32_t shifted = bits == 32 ? v : v << (32 - bit - bits);
  put32(p, (get32(p) & ~mask) | (shifted & mask));
}
uint8_t get8b(const uint8_t* p, uint32_t bit, uint32_t bits) noexcept {
  return static_cast<uint8_t>((p[0] >> (8 - bit - bits)) & ((1u << bits) - 1));
}
void put8b(uint8_t* p, uint32_t bit, uint32_t bits, uint32_t v) noexcept {
  const uint32_t mask = ((1u << bits) - 1) << (8 - bit - bits);
  p[0] = static_cast<uint8_t>((p[0] & ~mask) | ((v << (8 - bit - bits)) & mask));
}

template <size_t N>
void get_bytes(std::array<uint8_t, N>& a, const uint8_t* p) noexcept {
  std::memcpy(a.data(), p, N);
}
template <size_t N>
void put_bytes(uint8_t* p, const std::array<uint8_t, N>& a) noexcept {
  std::memcpy(p, a.data(), N);
}

// The 44 bytes of a REQ path at `d` (primary at 52, alternate at 96).
void decode_path(const uint8_t* d, CmPath& p) noexcept {
  p.local_lid = get16(d);
  p.remote_lid = get16(d + 2);
  get_bytes(p.local_gid, d + 4);
  get_bytes(p.remote_gid, d + 20);
  p.flow_label = getb(d + 36, 0, 20);
  p.packet_rate = get8b(d + 39, 2, 6);
  p.traffic_class = d[40];
  p.hop_limit = d[41];
  p.sl = get8b(d + 42, 0, 4);
  p.subnet_local = get8b(d + 42, 4, 1);
  p.local_ack_timeout = get8b(d + 43, 0, 5);
}
void encode_path(uint8_t* d, const CmPath& p) noexcept {
  put16(d, p.local_lid);
  put16(d + 2, p.remote_lid);
  put_bytes(d + 4, p.local_gid);
  put_bytes(d + 20, p.remote_gid);
  putb(d + 36, 0, 20, p.flow_label);
  put8b(d + 39, 2, 6, p.packet_rate);
  d[40] = p.traffic_class;
  d[41] = p.hop_limit;
  put8b(d + 42, 0, 4, p.sl);
  put8b(d + 42, 4, 1, p.subnet_local);
  put8b(d + 43, 0, 5, p.local_ack_timeout);
}

void decode(const uint8_t* d, CmReq& m) noexcept {
  m.local_comm_id = get32(d);
  m.vendor_id = getb(d + 4, 8, 24);
  m.service_id = get64(d + 8);
  m.local_ca_guid = get64(d + 16);
  m.local_qkey = get32(d + 28);
  m.local_qpn = getb(d + 32, 0, 24);
  m.responder_resources = d[35];
  m.local_eecn = getb(d + 36, 0, 24);
  m.initiator_depth = d[39];
  m.remote_eecn = getb(d + 40, 0, 24);
  m.remote_cm_response_timeout = get8b(d + 43, 0, 5);
  m.transport_service_type = get8b(d + 43, 5, 2);
  m.end_to_end_flow_control = get8b(d + 43, 7, 1);
  m.starting_psn = getb(d + 44, 0, 24);
  m.local_cm_response_timeout = get8b(d + 47, 0, 5);
  m.retry_count = get8b(d + 47, 5, 3);
  m.pkey = get16(d + 48);
  m.path_mtu = get8b(d + 50, 0, 4);
  m.rdc_exists = get8b(d + 50, 4, 1);
  m.rnr_retry_count = get8b(d + 50, 5, 3);
  m.max_cm_retries = get8b(d + 51, 0, 4);
  m.srq = get8b(d + 51, 4, 1);
  m.extended_transport_type = get8b(d + 51, 5, 3);
  decode_path(d + 52, m.primary);
  decode_path(d + 96, m.alternate);
  m.sap_supported = get8b(d + 139, 5, 1);
  get_bytes(m.private_data, d + 140);
}
void encode(uint8_t* d, const CmReq& m) noexcept {
  put32(d, m.local_comm_id);
  putb(d + 4, 8, 24, m.vendor_id);
  put64(d + 8, m.service_id);
  put64(d + 16, m.local_ca_guid);
  put32(d + 28, m.local_qkey);
  putb(d + 32, 0, 24, m.local_qpn);
  d[35] = m.responder_resources;
  putb(d + 36, 0, 24, m.local_eecn);
  d[39] = m.initiator_depth;
  putb(d + 40, 0, 24, m.remote_eecn);
  put8b(d + 43, 0, 5, m.remote_cm_response_timeout);
  put8b(d + 43, 5, 2, m.transport_service_type);
  put8b(d + 43, 7, 1, m.end_to_end_flow_control);
  putb(d + 44, 0, 24, m.starting_psn);
  put8b(d + 47, 0, 5, m.local_cm_response_timeout);
  put8b(d + 47, 5, 3, m.retry_count);
  put16(d + 48, m.pkey);
  put8b(d + 50, 0, 4, m.path_mtu);
  put8b(d + 50, 4, 1, m.rdc_exists);
  put8b(d + 50, 5, 3, m.rnr_retry_count);
  put8b(d + 51, 0, 4, m.max_cm_retries);
  put8b(d + 51, 4, 1, m.srq);
  put8b(d + 51, 5, 3, m.extended_transport_type);
  encode_path(d + 52, m.primary);
  encode_path(d + 96, m.alternate);
  put8b(d + 139, 5, 1, m.sap_supported);
  put_bytes(d + 140, m.private_data);
}

void decode(const uint8_t* d, CmMra& m) noexcept {
  m.local_comm_id = get32(d);
  m.remote_comm_id = get32(d + 4);
  m.message_mraed = get8b(d + 8, 0, 2);
  m.service_timeout = get8b(d + 9, 0, 5);
  get_bytes(m.private_data, d + 10);
}
void encode(uint8_t* d, const CmMra& m) noexcept {
  put32(d, m.local_comm_id);
  put32(d + 4, m.remote_comm_id);
  put8b(d + 8, 0, 2, m.message_mraed);
  put8b(d + 9, 0, 5, m.service_timeout);
  put_bytes(d + 10, m.private_data);
}

void decode(const uint8_t* d, CmRej& m) noexcept {
  m.local_comm_id = get32(d);
  m.remote_comm_id = get32(d + 4);
  m.message_rejected = get8b(d + 8, 0, 2);
  m.reject_info_length = get8b(d + 9, 0, 7);
  m.reason = get16(d + 10);
  get_bytes(m.ari, d + 12);
  get_bytes(m.private_data, d + 84);
}
void encode(uint8_t* d, const CmRej& m) noexcept {
  put32(d, m.local_comm_id);
  put32(d + 4, m.remote_comm_id);
  put8b(d + 8, 0, 2, m.message_rejected);
  put8b(d + 9, 0, 7, m.reject_info_length);
  put16(d + 10, m.reason);
  put_bytes(d + 12, m.ari);
  put_bytes(d + 84, m.private_data);
}

void decode(const uint8_t* d, CmRep& m) noexcept {
  m.local_comm_id = get32(d);
  m.remote_comm_id = get32(d + 4);
  m.local_qkey = get32(d + 8);
  m.local_qpn = getb(d + 12, 0, 24);
  m.local_eecn = getb(d + 16, 0, 24);
  m.starting_psn = getb(d + 20, 0, 24);
  m.vendor_id = uint32_t{d[15]} << 16 | uint32_t{d[19]} << 8 | d[23];
  m.responder_resources = d[24];
  m.initiator_depth = d[25];
  m.target_ack_delay = get8b(d + 26, 0, 5);
  m.failover_accepted = get8b(d + 26, 5, 2);
  m.end_to_end_flow_control = get8b(d + 26, 7, 1);
  m.rnr_retry_count = get8b(d + 27, 0, 3);
  m.srq = get8b(d + 27, 3, 1);
  m.local_ca_guid = get64(d + 28);
  get_bytes(m.private_data, d + 36);
}
void encode(uint8_t* d, const CmRep& m) noexcept {
  put32(d, m.local_comm_id);
  put32(d + 4, m.remote_comm_id);
  put32(d + 8, m.local_qkey);
  putb(d + 12, 0, 24, m.local_qpn);
  putb(d + 16, 0, 24, m.local_eecn);
  putb(d + 20, 0, 24, m.starting_psn);
  d[15] = static_cast<uint8_t>(m.vendor_id >> 16);
  d[19] = static_cast<uint8_t>(m.vendor_id >> 8);
  d[23] = static_cast<uint8_t>(m.vendor_id);
  d[24] = m.responder_resources;
  d[25] = m.initiator_depth;
  put8b(d + 26, 0, 5, m.target_ack_delay);
  put8b(d + 26, 5, 2, m.failover_accepted);
  put8b(d + 26, 7, 1, m.end_to_end_flow_control);
  put8b(d + 27, 0, 3, m.rnr_retry_count);
  put8b(d + 27, 3, 1, m.srq);
  put64(d + 28, m.local_ca_guid);
  put_bytes(d + 36, m.private_data);
}

template <typename T>
void decode_ids_and_data(const uint8_t* d, T& m) noexcept {
  m.local_comm_id = get32(d);
  m.remote_comm_id = get32(d + 4);
  get_bytes(m.private_data, d + 8);
}
template <typename T>
void encode_ids_and_data(uint8_t* d, const T& m) noexcept {
  put32(d, m.local_comm_id);
  put32(d + 4, m.remote_comm_id);
  put_bytes(d + 8, m.private_data);
}
void decode(const uint8_t* d, CmRtu& m) noexcept { decode_ids_and_data(d, m); }
void encode(uint8_t* d, const CmRtu& m) noexcept { encode_ids_and_data(d, m); }
void decode(const uint8_t* d, CmDrep& m) noexcept { decode_ids_and_data(d, m); }
void encode(uint8_t* d, const CmDrep& m) noexcept { encode_ids_and_data(d, m); }
void decode(const uint8_t* d, CmDreq& m) noexcept {
  m.local_comm_id = get32(d);
  m.remote_comm_id = get32(d + 4);
  m.remote_qpn = getb(d + 8, 0, 24);
  get_bytes(m.private_data, d + 12);
}
void encode(uint8_t* d, const CmDreq& m) noexcept {
  put32(d, m.local_comm_id);
  put32(d + 4, m.remote_comm_id);
  putb(d + 8, 0, 24, m.remote_qpn);
  put_bytes(d + 12, m.private_data);
}

template <typename T>
MadError decode_as(const uint8_t* d, CmBody& body) noexcept {
  T m;
  decode(d, m);
  body = m;
  return MadError::kNone;
}

}  // namespace

const char* cm_attr_name(uint16_t attr_id) noexcept {
  switch (static_cast<CmAttr>(attr_id)) {
    case CmAttr::kReq:
      return "REQ";
    case CmAttr::kMra:
      return "MRA";
    case CmAttr::kRej:
      return "REJ";
    case CmAttr::kRep:
      return "REP";
    case CmAttr::kRtu:
      return "RTU";
    case CmAttr::kDreq:
      return "DREQ";
    case CmAttr::kDrep:
      return "DREP";
  }
  return "unknown";
}

const char* rej_reason_name(uint16_t reason) noexcept {
  switch (reason) {
    case kRejNoQp:
      return "no QP";
    case kRejNoResources:
      return "no resources";
    case kRejTimeout:
      return "timeout";
    case kRejInvalidCommId:
      return "invalid communication ID";
    case kRejInvalidServiceId:
      return "invalid service ID (no listener)";
    case kRejStaleConn:
      return "stale connection";
    case kRejConsumerDefined:
      return "consumer defined (the peer's application refused)";
    default:
      return "see IBTA table 106";
  }
}

const char* mad_error_name(MadError e) noexcept {
  switch (e) {
    case MadError::kNone:
      return "none";
    case MadError::kTruncated:
      return "truncated MAD";
    case MadError::kBaseVersion:
      return "MAD base version is not 1";
    case MadError::kNotCm:
      return "management class is not CM (0x07)";
    case MadError::kClassVersion:
      return "CM class version is not 2";
    case MadError::kMethod:
      return "method is not Send";
    case MadError::kAttribute:
      return "CM attribute rocemu does not implement";
  }
  return "?";
}

uint16_t cm_attr_of(const CmBody& b) noexcept {
  constexpr CmAttr kAttrs[] = {CmAttr::kReq, CmAttr::kMra,  CmAttr::kRej, CmAttr::kRep,
                               CmAttr::kRtu, CmAttr::kDreq, CmAttr::kDrep};
  return static_cast<uint16_t>(kAttrs[b.index()]);
}

MadError decode_cm_mad(const uint8_t* mad, uint32_t len, CmMad& out) noexcept {
  if (len < kMadBytes) return MadError::kTruncated;
  MadHeader& h = out.hdr;
  h.base_version = mad[0];
  h.mgmt_class = mad[1];
  h.class_version = mad[2];
  h.method = mad[3];
  h.status = get16(mad + 4);
  h.class_specific = get16(mad + 6);
  h.tid = get64(mad + 8);
  h.attr_id = get16(mad + 16);
  h.attr_mod = get32(mad + 20);
  if (h.base_version != kMadBaseVersion) return MadError::kBaseVersion;
  if (h.mgmt_class != kMgmtClassCm) return MadError::kNotCm;
  if (h.class_version != kCmClassVersion) return MadError::kClassVersion;
  if (h.method != kMethodSend) return MadError::kMethod;
  const uint8_t* d = mad + kMadHeaderBytes;
  switch (static_cast<CmAttr>(h.attr_id)) {
    case CmAttr::kReq:
      return decode_as<CmReq>(d, out.body);
    case CmAttr::kMra:
      return decode_as<CmMra>(d, out.body);
    case CmAttr::kRej:
      return decode_as<CmRej>(d, out.body);
    case CmAttr::kRep:
      return decode_as<CmRep>(d, out.body);
    case CmAttr::kRtu:
      return decode_as<CmRtu>(d, out.body);
    case CmAttr::kDreq:
      return decode_as<CmDreq>(d, out.body);
    case CmAttr::kDrep:
      return decode_as<CmDrep>(d, out.body);
  }
  return MadError::kAttribute;
}

void encode_cm_mad(const CmMad& m, uint8_t* out) noexcept {
  std::memset(out, 0, kMadBytes);
  const MadHeader& h = m.hdr;
  out[0] = h.base_version;
  out[1] = h.mgmt_class;
  out[2] = h.class_version;
  out[3] = h.method;
  put16(out + 4, h.status);
  put16(out + 6, h.class_specific);
  put64(out + 8, h.tid);
  put16(out + 16, cm_attr_of(m.body));
  put32(out + 20, h.attr_mod);
  std::visit([&](const auto& body) { encode(out + kMadHeaderBytes, body); }, m.body);
}

uint32_t CmaHeader::src_ipv4() const noexcept { return get32(src_addr.data() + 12); }
uint32_t CmaHeader::dst_ipv4() const noexcept { return get32(dst_addr.data() + 12); }

CmaHeader make_cma_header(uint32_t src_ipv4, uint16_t src_port, uint32_t dst_ipv4) noexcept {
  CmaHeader h;
  h.src_port = src_port;
  put32(h.src_addr.data() + 12, src_ipv4);
  put32(h.dst_addr.data() + 12, dst_ipv4);
  return h;
}

bool decode_cma_header(const uint8_t* pd, CmaHeader& out) noexcept {
  out.cma_version = pd[0];
  out.ip_version = pd[1] >> 4;
  out.src_port = get16(pd + 2);
  std::memcpy(out.src_addr.data(), pd + 4, 16);
  std::memcpy(out.dst_addr.data(), pd + 20, 16);
  return out.cma_version == 0 && (out.ip_version == 4 || out.ip_version == 6);
}

void encode_cma_header(const CmaHeader& h, uint8_t* pd) noexcept {
  pd[0] = h.cma_version;
  pd[1] = static_cast<uint8_t>(h.ip_version << 4);
  put16(pd + 2, h.src_port);
  std::memcpy(pd + 4, h.src_addr.data(), 16);
  std::memcpy(pd + 20, h.dst_addr.data(), 16);
}

Gid ipv4_gid(uint32_t ipv4) noexcept {
  const ibv_gid g = ipv4_mapped_gid(ipv4);
  Gid out;
  std::memcpy(out.data(), g.raw, 16);
  return out;
}

bool gid_ipv4(const Gid& g, uint32_t& ipv4) noexcept {
  ipv4 = get32(g.data() + 12);
  return ipv4_gid(ipv4) == g;
}

}  // namespace rocemu::nic::cm
