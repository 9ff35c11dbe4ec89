// perftest_report_test.cc — perftest's result tables (perftest_parameters.h RESULT_FMT,
// RESULT_FMT_LAT, REPORT_FMT, REPORT_FMT_LAT) and latency statistics on hand-made data.
#include "apps/perftest/perftest_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace rocemu::perftest {
namespace {

TEST(PerftestReport, HeadersAreExactlyPerftests) {
  EXPECT_EQ(bw_header(false),
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   "
            "MsgRate[Mpps]\n");
  EXPECT_EQ(bw_header(true),
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
  EXPECT_EQ(lat_header(),
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
            "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n");
  EXPECT_EQ(std::string(kResultLine), std::string(87, '-') + "\n");
}

TEST(PerftestReport, BandwidthRowHasPerftestColumnWidths) {
  BwRow r;
  r.size_bytes = 65536;
  r.iters = 200;
  r.peak_bytes_per_s = 1254.64 * 1048576.0;
  r.avg_bytes_per_s = 669.5 * 1048576.0;
  r.msg_rate_pps = 10712.0;
  // " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf"
  EXPECT_EQ(bw_row(r, false),
            " 65536      200              1254.64            669.50 \t\t   0.010712\n");
  // Gb/s: bytes x 8 / 1e9.
  r.avg_bytes_per_s = 1.25e9;
  r.peak_bytes_per_s = 2.5e9;
  EXPECT_EQ(bw_row(r, true),
            " 65536      200              20.00              10.00  \t\t   0.010712\n");
}

TEST(PerftestReport, BandwidthRowOfAnAbsurdPeerReportIsStillOneWholeLine) {
  // Found by fuzz_perftest_msg: a peer's report of 1e300 MiB/s printed past the old 256-byte
  // buffer, and the row lost its newline.
  BwRow r;
  r.size_bytes = 0xb7a1a07fffc74400;
  r.iters = 0xffffffffffffffff;
  r.peak_bytes_per_s = 1e300 * 1048576.0;
  r.avg_bytes_per_s = 1e300 * 1048576.0;
  r.msg_rate_pps = 1e306;
  const std::string row = bw_row(r, false);
  EXPECT_GT(row.size(), 600u);
  EXPECT_EQ(row.find('\n'), row.size() - 1);
  EXPECT_EQ(row.substr(0, 21), " 13232033651803767808");
}

TEST(PerftestReport, LatencyRowHasPerftestColumnWidths) {
  LatencyStats s{1.5, 20.25, 2.0, 3.125, 0.5, 10.0, 20.0};
  EXPECT_EQ(
      lat_row(2, 1000, s),
      " 2       1000          1.50           20.25        2.00     \t       3.12        \t0.50   "
      "\t\t10.00   \t\t20.00  \n");  // %-7.2f then " \t\t"
}

TEST(PerftestReport, GbitsRowBelowATenthHasSixDecimalsAsPerftest) {
  // print_full_bw_report's inc_accuracy: REPORT_FMT_EXT (perftest 4.5's
  // " 65536      200           0.079108            0.040583            0.000077").
  BwRow r;
  r.size_bytes = 65536;
  r.iters = 200;
  r.peak_bytes_per_s = 0.079108e9 / 8;
  r.avg_bytes_per_s = 0.040583e9 / 8;
  r.msg_rate_pps = 77;
  EXPECT_EQ(bw_row(r, true),
            " 65536      200           0.079108            0.040583            0.000077\n");
}

TEST(PerftestReport, DurationLatencyRowIsPerftests) {
  EXPECT_EQ(lat_header(true), " #bytes        #iterations       t_avg[usec]    tps average\n");
  // perftest 4.5's " 64            75            13377.37        37.38  ".
  EXPECT_EQ(lat_duration_row(64, 75, 13377.37, 37.38),
            " 64            75            13377.37        37.38  \n");
}

PerftestOptions options(const char* tool, std::vector<std::string> args) {
  const ParseOutcome p = parse_perftest_args(tool, args);
  EXPECT_EQ(p.exit_code, -1) << p.message;
  return p.opt;
}

TEST(PerftestReport, PreambleIsPerftests) {
  // Real ib_write_bw -x 1 -s 65536 -n 200 client (tests/perftest/data/perftest-4.5).
  const PerftestOptions o =
      options("rocemu_write_bw", {"-d", "rxe0", "-x", "1", "-s", "65536", "-n", "200", "1.2.3.4"});
  const std::string rule(87, '-');
  EXPECT_EQ(test_info(o, TestInfo{false, "rxe0"}),
            rule +
                "\n"
                "                    RDMA_Write BW Test\n"
                " Dual-port       : OFF\t\tDevice         : rxe0\n"
                " Number of qps   : 1\t\tTransport type : IB\n"
                " Connection type : RC\t\tUsing SRQ      : OFF\n"
                " PCIe relax order: ON\n"
                " ibv_wr* API     : OFF\n"
                " TX depth        : 128\n"
                " CQ Moderation   : 1\n"
                " Mtu             : 1024[B]\n"
                " Link type       : Ethernet\n"
                " GID index       : 1\n"
                " Max inline data : 0[B]\n"
                " rdma_cm QPs\t : OFF\n"
                " Data ex. method : Ethernet\n" +
                rule + "\n");
  // The server shows no TX depth; SEND's server its RX depth; -b both, and "Bidirectional".
  const std::string send_srv =
      test_info(options("rocemu_send_bw", {"-d", "x", "-n", "200", "-b"}), TestInfo{true, "x"});
  EXPECT_NE(send_srv.find("Send Bidirectional BW Test\n"), std::string::npos);
  EXPECT_NE(send_srv.find(" TX depth        : 128\n RX depth        : 200\n"), std::string::npos);
  // Atomics: the operation in the title, Outstand reads instead of inline data, no CQ
  // moderation in a latency test; ib_write_lat alone turns relaxed ordering off.
  const std::string at = test_info(options("rocemu_atomic_lat", {"-d", "x", "-A", "CMP_AND_SWAP"}),
                                   TestInfo{true, "x"});
  EXPECT_NE(at.find("                    Atomic CMP_AND_SWAP Latency Test\n"), std::string::npos);
  EXPECT_NE(at.find(" Outstand reads  : 128\n"), std::string::npos);
  EXPECT_EQ(at.find("CQ Moderation"), std::string::npos);
  EXPECT_EQ(at.find("GID index"), std::string::npos);  // no -x: not shown
  EXPECT_NE(test_info(options("rocemu_write_lat", {"-d", "x"}), TestInfo{})
                .find(" PCIe relax order: OFF\n"),
            std::string::npos);
  PerftestOptions cm = o;
  cm.rdma_cm = true;
  EXPECT_NE(test_info(cm, TestInfo{}).find(" rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n"),
            std::string::npos);
  // ctx_print_test_info's rdma_cm server (perftest_parameters.c, perftest 4.5): a rule, the
  // two lines, the closing rule; a client prints none of it.
  const std::string srv = test_info(cm, TestInfo{true, "x"});
  EXPECT_EQ(srv.substr(srv.find(" Data ex. method")),
            std::string(" Data ex. method : rdma_cm\n") + kResultLine +
                " Waiting for client rdma_cm QP to connect\n"
                " Please run the same command with the IB/RoCE interface IP\n" +
                kResultLine);
  EXPECT_EQ(test_info(cm, TestInfo{}).find("Waiting for client"), std::string::npos);
  EXPECT_EQ(test_info(o, TestInfo{true, "x"}).find("Waiting for client"),
            std::string::npos);  // -T: ctx_print_test_info's " \tTOS    : %d" on the Data ex.
                                 // method line.
  cm.tos = 106;
  EXPECT_NE(test_info(cm, TestInfo{}).find(" Data ex. method : rdma_cm \tTOS    : 106\n"),
            std::string::npos);
  const std::string tos_srv = test_info(cm, TestInfo{true, "x"});
  EXPECT_NE(tos_srv.find(" Data ex. method : rdma_cm \tTOS    : 106\n" + std::string(kResultLine) +
                         " Waiting for client rdma_cm QP to connect\n"),
            std::string::npos);
}

TEST(PerftestReport, AddressLinesArePerftests) {
  AddressFields a;
  a.qpn = 0x11;
  a.psn = 0xa15738;
  a.rkey = 0x334;
  a.vaddr = 0x7f8fa492a000;
  a.out_reads = 128;
  const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 77, 0, 10};
  std::copy(gid, gid + 16, a.gid);
  const PerftestOptions w = options("rocemu_write_bw", {"-d", "x", "-x", "1"});
  EXPECT_EQ(
      address_lines(w, false, a),
      " local address: LID 0000 QPN 0x0011 PSN 0xa15738 RKey 0x000334 VAddr 0x007f8fa492a000\n"
      " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:10\n");
  const PerftestOptions r = options("rocemu_read_bw", {"-d", "x", "-x", "1"});
  EXPECT_EQ(address_lines(r, true, a).substr(0, 95),
            " remote address: LID 0000 QPN 0x0011 PSN 0xa15738 OUT 0x80 RKey 0x000334 VAddr "
            "0x007f8fa492a000");
  a.psn = 0x4b19e;  // %#06x is a minimum width
  EXPECT_EQ(address_lines(options("rocemu_atomic_bw", {"-d", "x"}), false, a),
            " local address: LID 0000 QPN 0x0011 PSN 0x4b19e\n");
  EXPECT_EQ(waiting_banner(),
            "\n************************************\n* Waiting for client to connect... *\n"
            "************************************\n");
}

TEST(PerftestReport, StatisticsFollowPerftestsPrintReportLat) {
  // 8 samples, unordered; sorted 1 2 3 4 4 5 8 9. perftest leaves out the two largest (8, 9):
  // measure_cnt 6 over 1 2 3 4 4 5.
  const LatencyStats s = latency_stats({9, 1, 4, 3, 2, 8, 5, 4});
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 8);        // delta[measure_cnt]: the smaller sample left out
  EXPECT_DOUBLE_EQ(s.typical_us, 3.5);  // even count: (delta[3] + delta[2]) / 2
  EXPECT_DOUBLE_EQ(s.avg_us, 19.0 / 6);
  // Deviations from 3.1667 truncated to int: 2 1 0 0 0 -1 -> squares 4 1 0 0 0 1.
  EXPECT_NEAR(s.stdev_us, std::sqrt(6.0 / 6), 1e-12);
  EXPECT_DOUBLE_EQ(s.p99_us, 8);  // delta[ceil(5.94)] = delta[6]
  EXPECT_DOUBLE_EQ(s.p999_us, 8);
  // An odd count takes the middle sample.
  EXPECT_DOUBLE_EQ(latency_stats({5, 1, 2, 100, 200}).typical_us, 2);  // 1 2 5 | 100 200
  const LatencyStats e = latency_stats({});
  EXPECT_EQ(e.max_us, 0);
  // One or two samples: nothing left out, nothing read past the end.
  EXPECT_DOUBLE_EQ(latency_stats({7}).max_us, 7);
  EXPECT_DOUBLE_EQ(latency_stats({7, 3}).typical_us, 5);
}

TEST(PerftestReport, PercentilesIndexOnePastNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 1002; ++i) v.push_back(i);  // 1..1002; 1001 and 1002 are left out
  const LatencyStats s = latency_stats(v);
  EXPECT_DOUBLE_EQ(s.p99_us, 991.0);    // delta[ceil(990)] = 991
  EXPECT_DOUBLE_EQ(s.p999_us, 1000.0);  // delta[ceil(999)] = 1000
  EXPECT_DOUBLE_EQ(s.max_us, 1001.0);
}

TEST(PerftestReport, StatisticsReproduceARealPerftestRow) {
  // tests/perftest/data/perftest-4.5/read_lat_a.client.stdout, the 2-byte row of 5 iterations:
  // "t_min 41.42 t_max 83.48 t_typical 45.01 t_avg 45.01 t_stdev 3.00 99% 83.48". perftest
  // had 4 deltas; two are left out, so the median and mean are those of 41.42 and 48.60 and
  // the stdev is sqrt((3^2 + (-3)^2) / 2) = 3 exactly, the int truncation showing.
  const LatencyStats s = latency_stats({48.60, 83.48, 41.42, 95.0});
  EXPECT_EQ(lat_row(2, 5, s),
            " 2       5          41.42          83.48        45.01    \t       45.01       "
            "\t3.00   \t\t83.48   \t\t83.48  \n");
}

TEST(PerftestReport, BandwidthUnitsAreMiBAndGbits) {
  EXPECT_DOUBLE_EQ(bw_in_unit(1048576.0, false), 1.0);
  EXPECT_DOUBLE_EQ(bw_in_unit(125e6, true), 1.0);
}

}  // namespace
}  // namespace rocemu::perftest
