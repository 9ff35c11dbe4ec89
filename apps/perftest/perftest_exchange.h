// perftest_exchange.h — the fixed-size messages of perftest's TCP side channel other than the
// QP key (apps/interop/side_channel.h has the 108-byte key), as perftest 4.5 in Debian 12
// sends them (src/perftest_communication.c exchange_versions, check_sys_data, check_mtu,
// xchg_bw_reports), checked against the golden rxe captures of ../shared/INTEROP.md
// (data/golden-rxe/06_write_bw_8k: client to server, in order):
//   16 bytes  version "6.06", NUL padded
//    4 bytes  page size, big-endian (00 00 10 00)
//    4 bytes  cache line size, big-endian (00 00 00 40)
//    2 bytes  the port's active MTU as perftest's ibv_mtu number in ASCII ("3\0" = 1024);
//             both sides then use the smaller MTU
//   40 bytes  bandwidth report after a WRITE/READ test (and after every size with -b): five
//             8-byte big-endian fields: size, iterations, then the IEEE doubles BW peak,
//             BW average (in the sender's table unit: MiB/s, or Gb/s with --report_gbits)
//             and message rate (Mpps), each sent as its bit pattern.
// Every message is exchanged lock-step: the client sends first and reads the server's. Pure.
#pragma once

#include <array>
#include <cstdint>

#include "apps/perftest/perftest_report.h"

namespace rocemu::perftest {

inline constexpr size_t kVersionMsgBytes = 16;
inline constexpr size_t kSysDataMsgBytes = 4;
inline constexpr size_t kMtuMsgBytes = 2;
inline constexpr size_t kBwReportFieldBytes = 8;
inline constexpr size_t kBwReportFields = 5;
inline constexpr uint32_t kPageSizeBytes = 4096;
inline constexpr uint32_t kCacheLineBytes = 64;

/// "6.06" padded with NULs to 16 bytes.
std::array<char, kVersionMsgBytes> version_message() noexcept;

/// `v` as 4 big-endian bytes (check_sys_data's page and cache-line sizes).
std::array<uint8_t, kSysDataMsgBytes> be32_message(uint32_t v) noexcept;

/// The MTU message of `mtu_bytes` (256..4096): ibv_mtu's number as ASCII, NUL-terminated.
std::array<char, kMtuMsgBytes> mtu_message(uint32_t mtu_bytes) noexcept;

/// The MTU in bytes of a peer's MTU message; 0 if malformed.
uint32_t mtu_from_message(const char* msg) noexcept;

/// The five report fields of `row` in the table unit (`gbits`), as 40 wire bytes.
std::array<uint8_t, kBwReportFields * kBwReportFieldBytes> bw_report_message(const BwRow& row,
                                                                             bool gbits) noexcept;

/// The row a peer reported (its numbers read in our unit, as perftest does).
BwRow bw_row_from_report(const uint8_t* msg, bool gbits) noexcept;

/// perftest -b's table row: size and iterations ours, peak, average and rate summed.
BwRow sum_rows(const BwRow& mine, const BwRow& theirs) noexcept;

/// perftest -R's key message: with rdma_cm the keys travel as one SEND of struct
/// pingpong_dest (rdma_write_keys), not as the 108-byte text of the TCP side channel. The
/// struct as it lies in memory on x86-64, each integer big-endian (htobe32/htobe64):
///   0 lid, 4 out_reads, 8 qpn, 12 psn, 16 rkey (4 bytes each), 20 padding (perftest sends
///   whatever its stack held there; we send zeros), 24 vaddr (8), 32 GID (16 raw bytes),
///   48 srqn, 52 gid_index (4 each; rdma_read_keys reads neither).
/// Checked against golden capture 13 (ib_send_bw -R between two rxe, frame 33).
inline constexpr size_t kCmKeyMsgBytes = 56;
std::array<uint8_t, kCmKeyMsgBytes> cm_key_message(const AddressFields& k,
                                                   int32_t gid_index) noexcept;
/// The fields rdma_read_keys takes from a peer's message (lid, out_reads, qpn, psn, rkey,
/// vaddr, GID); false if `len` is not kCmKeyMsgBytes.
bool parse_cm_key_message(const uint8_t* msg, size_t len, AddressFields& out) noexcept;

}  // namespace rocemu::perftest
