// perftest_report.h — perftest's result tables and latency statistics.
//
// Headers and row formats are perftest 4.5's (Debian 12; src/perftest_parameters.h:
// RESULT_LINE, RESULT_FMT / RESULT_FMT_G, REPORT_FMT / REPORT_FMT_EXT, RESULT_FMT_LAT /
// REPORT_FMT_LAT, RESULT_FMT_LAT_DUR / REPORT_FMT_LAT_DUR), and so are the preamble
// (ctx_print_test_info), the address block (ctx_print_pingpong_data) and the server's
// waiting banner; tests/perftest/data/perftest-4.5 holds real perftest 4.5 output they are
// checked against. Units: bandwidth in 2^20 bytes/s (which perftest 4.5 labels MB/sec) or
// Gb/s (10^9 bit/s),
// message rate in Mpps (10^6 messages/s), latencies in microseconds. Latency statistics
// follow perftest's print_report_lat: t_typical is the median (mean of the two middle
// samples for an even count), percentiles are nearest-rank (the sample at ceil(p*n) - 1 of
// the sorted list), t_stdev is the population standard deviation. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/perftest/perftest_options.h"

namespace rocemu::perftest {

inline constexpr const char* kResultLine =
    "---------------------------------------------------------------------------------------\n";
inline constexpr const char* kBwHeaderMiB =
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
inline constexpr const char* kBwHeaderGbits =
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";
inline constexpr const char* kLatHeader =
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
    "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
/// The latency header of a duration (-D) run.
inline constexpr const char* kLatDurHeader =
    " #bytes        #iterations       t_avg[usec]    tps average";

struct LatencyStats {
  double min_us = 0, max_us = 0, typical_us = 0, avg_us = 0, stdev_us = 0;
  double p99_us = 0, p999_us = 0;
};

/// perftest 4.5's latency statistics of `samples_us` (any order; copied and sorted): the two
/// largest samples are left out of the median, mean and stdev, t_max and the percentiles are
/// read one place past perftest's nearest rank, and the stdev truncates each deviation to
/// whole microseconds, all as `print_report_lat` does. All zero when empty.
LatencyStats latency_stats(std::vector<double> samples_us);

struct BwRow {
  uint64_t size_bytes = 0;
  uint64_t iters = 0;
  double peak_bytes_per_s = 0;
  double avg_bytes_per_s = 0;
  double msg_rate_pps = 0;
};

/// Bytes per second in the table's unit: MiB/s, or Gb/s with `gbits`.
double bw_in_unit(double bytes_per_s, bool gbits) noexcept;

/// The bandwidth header line (with its newline).
std::string bw_header(bool gbits);
/// One bandwidth row as perftest's REPORT_FMT prints it (with its newline).
std::string bw_row(const BwRow& r, bool gbits);
/// The latency header line (with its newline).
std::string lat_header();
/// One latency row as perftest's REPORT_FMT_LAT prints it (with its newline).
std::string lat_row(uint64_t size_bytes, uint64_t iters, const LatencyStats& s);
/// The latency header of a run of -n iterations, or of a -D run (with its newline).
std::string lat_header(bool duration);
/// One row of a -D latency run, perftest's REPORT_FMT_LAT_DUR: the mean latency and the
/// exchanges per second (with its newline).
std::string lat_duration_row(uint64_t size_bytes, uint64_t iters, double avg_us, double tps);

/// What the preamble shows besides the options: the side, the device name perftest prints
/// (`-d`'s interface in network mode).
struct TestInfo {
  bool server = false;
  std::string device;
};
/// perftest's preamble (ctx_print_test_info) for `o`, from its opening rule to its closing
/// one: title, device, QPs, the depths shown on this side, CQ moderation (bandwidth), MTU,
/// GID index (when given), Max inline data or Outstand reads, rdma_cm, data exchange.
std::string test_info(const PerftestOptions& o, const TestInfo& info);
/// The rule and banner perftest's server prints before it waits for the client (starting
/// with an empty line).
std::string waiting_banner();
/// The fields of one QP's key message that ctx_print_pingpong_data prints.
struct AddressFields {
  uint32_t lid = 0, qpn = 0, psn = 0, out_reads = 0, rkey = 0;
  uint64_t vaddr = 0;
  uint8_t gid[16] = {};
};
/// " local address: ..." / " remote address: ..." as perftest prints them for `o`'s verb
/// (READ adds OUT, READ and WRITE add RKey and VAddr), then the " GID: " line when `o` has a
/// GID index (each line with its newline).
std::string address_lines(const PerftestOptions& o, bool remote, const AddressFields& a);

}  // namespace rocemu::perftest
