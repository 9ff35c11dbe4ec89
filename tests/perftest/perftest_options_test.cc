// perftest_options_test.cc — perftest's flags (perftest 4.5 perftest_parameters.c) parsed into
// PerftestOptions: defaults per tool, long and short spellings, usage errors exit 2.
#include "apps/perftest/perftest_options.h"

#include <gtest/gtest.h>

namespace rocemu::perftest {
namespace {

ParseOutcome parse(const std::string& tool, std::vector<std::string> a) {
  return parse_perftest_args(tool, a);
}

TEST(PerftestOptions, ToolNamesGiveVerbAndMetric) {
  Verb v;
  Metric m;
  ASSERT_TRUE(tool_from_name("rocemu_read_lat", v, m));
  EXPECT_EQ(v, Verb::kRead);
  EXPECT_EQ(m, Metric::kLatency);
  ASSERT_TRUE(tool_from_name("rocemu_send_bw", v, m));
  EXPECT_EQ(v, Verb::kSend);
  EXPECT_EQ(m, Metric::kBandwidth);
  EXPECT_FALSE(tool_from_name("ib_write_bw", v, m));
}

TEST(PerftestOptions, DefaultsFollowPerftestPerMetric) {
  const auto bw = parse("rocemu_write_bw", {"--loopback"});
  ASSERT_EQ(bw.exit_code, -1) << bw.message;
  EXPECT_EQ(bw.opt.size_bytes, 65536u);
  EXPECT_EQ(bw.opt.iters, 5000u);
  EXPECT_EQ(bw.opt.tx_depth, 128u);
  EXPECT_EQ(bw.opt.rx_depth, 512u);
  EXPECT_EQ(bw.opt.tcp_port, 18515);
  EXPECT_EQ(bw.opt.mtu_bytes, 1024u);
  EXPECT_TRUE(bw.opt.loopback);
  const auto lat = parse("rocemu_send_lat", {"--loopback"});
  ASSERT_EQ(lat.exit_code, -1);
  EXPECT_EQ(lat.opt.size_bytes, 2u);
  EXPECT_EQ(lat.opt.iters, 1000u);
  EXPECT_EQ(lat.opt.tx_depth, 1u);
  // perftest's DEF_ITERS_WB is WRITE bandwidth's alone; the other tests run DEF_ITERS.
  for (const char* t : {"rocemu_send_bw", "rocemu_read_bw", "rocemu_atomic_bw"}) {
    const auto o = parse(t, {"--loopback"});
    ASSERT_EQ(o.exit_code, -1) << o.message;
    EXPECT_EQ(o.opt.iters, 1000u) << t;
  }
}

TEST(PerftestOptions, DerivedParametersFollowPerftestsForceDependencies) {
  // 64 KiB > 8 KiB: CQ moderation disabled (1); 200 iterations > tx depth 128: kept.
  auto o = parse("rocemu_write_bw", {"--loopback", "-s", "65536", "-n", "200"});
  ASSERT_EQ(o.exit_code, -1) << o.message;
  EXPECT_EQ(o.opt.cq_mod, 1u);
  EXPECT_EQ(o.opt.tx_depth, 128u);
  EXPECT_EQ(o.opt.out_reads, 1u);
  EXPECT_FALSE(o.opt.rdma_cm);
  // -a -n 5: tx depth clamped to 5, CQ moderation 100 clamped to the tx depth.
  o = parse("rocemu_write_bw", {"--loopback", "-a", "-n", "5"});
  EXPECT_EQ(o.opt.tx_depth, 5u);
  EXPECT_EQ(o.opt.cq_mod, 5u);
  // Small messages keep 100; SEND's rx depth is clamped to -n and made even (not with -a).
  o = parse("rocemu_send_bw", {"--loopback", "-s", "4096", "-n", "301"});
  EXPECT_EQ(o.opt.cq_mod, 100u);
  EXPECT_EQ(o.opt.rx_depth, 302u);
  o = parse("rocemu_send_bw", {"--loopback", "-a", "-n", "5"});
  EXPECT_EQ(o.opt.rx_depth, 5u);
  // -D: no clamping; READ and atomics advertise 128 outstanding requests.
  o = parse("rocemu_read_bw", {"--loopback", "-s", "64", "-D", "2"});
  EXPECT_EQ(o.opt.tx_depth, 128u);
  EXPECT_EQ(o.opt.out_reads, 128u);
  EXPECT_EQ(parse("rocemu_atomic_lat", {"--loopback"}).opt.out_reads, 128u);
}

TEST(PerftestOptions, ShortLongAndEqualsSpellingsAllParse) {
  const auto o = parse("rocemu_write_bw", {"-s",
                                           "4096",
                                           "--iters=300",
                                           "-q",
                                           "4",
                                           "--mtu",
                                           "4096",
                                           "-t",
                                           "64",
                                           "-r",
                                           "256",
                                           "-p",
                                           "20000",
                                           "-b",
                                           "-F",
                                           "-x",
                                           "0",
                                           "--report_gbits",
                                           "--out_json=res.json",
                                           "--link_gbps=25",
                                           "--loopback",
                                           "--",
                                           "--no-huge",
                                           "-m",
                                           "256"});
  ASSERT_EQ(o.exit_code, -1) << o.message;
  EXPECT_EQ(o.opt.size_bytes, 4096u);
  EXPECT_EQ(o.opt.iters, 300u);
  EXPECT_EQ(o.opt.num_qps, 4u);
  EXPECT_EQ(o.opt.mtu_bytes, 4096u);
  EXPECT_EQ(o.opt.tx_depth, 64u);
  EXPECT_EQ(o.opt.rx_depth, 256u);
  EXPECT_EQ(o.opt.tcp_port, 20000);
  EXPECT_TRUE(o.opt.bidirectional);
  EXPECT_TRUE(o.opt.ignore_cpu_freq);
  EXPECT_EQ(o.opt.gid_index, 0);
  EXPECT_TRUE(o.opt.report_gbits);
  EXPECT_EQ(o.opt.out_json, "res.json");
  EXPECT_DOUBLE_EQ(o.opt.link_gbps, 25.0);
  EXPECT_TRUE(o.opt.loopback);
  EXPECT_EQ(o.opt.eal_args, (std::vector<std::string>{"--no-huge", "-m", "256"}));
}

TEST(PerftestOptions, NetworkModeNeedsAnInterfaceAndTakesAServerName) {
  const auto c = parse("rocemu_write_bw", {"-d", "rocemu-va", "--connect_timeout=3", "10.0.0.2"});
  ASSERT_EQ(c.exit_code, -1) << c.message;
  EXPECT_EQ(c.opt.iface, "rocemu-va");
  EXPECT_EQ(c.opt.server_name, "10.0.0.2");
  EXPECT_EQ(c.opt.connect_timeout_s, 3u);
  const auto s = parse("rocemu_write_bw", {"--ib-dev=rocemu-vb", "--server_wait=60"});
  ASSERT_EQ(s.exit_code, -1) << s.message;
  EXPECT_TRUE(s.opt.server_name.empty());
  EXPECT_EQ(s.opt.server_wait_s, 60u);
  EXPECT_EQ(parse("rocemu_write_bw", {"10.0.0.2"}).exit_code, 2);  // no -d, no --loopback
  // -b and MTUs above 1024 work in network mode too; --roce_ip is network mode's only.
  const auto b = parse("rocemu_send_bw", {"-d", "x", "-b", "-m", "4096", "--roce_ip=10.77.0.2"});
  ASSERT_EQ(b.exit_code, -1) << b.message;
  EXPECT_TRUE(b.opt.bidirectional);
  EXPECT_EQ(b.opt.mtu_bytes, 4096u);
  EXPECT_EQ(b.opt.roce_ip, "10.77.0.2");
  EXPECT_EQ(parse("rocemu_write_bw", {"-d", "x", "--roce_ip", "10.0.0.256"}).exit_code, 2);
  EXPECT_EQ(parse("rocemu_write_bw", {"-d", "x", "--roce_ip", "10.0.0"}).exit_code, 2);
  EXPECT_EQ(parse("rocemu_write_bw", {"--loopback", "--roce_ip", "10.0.0.1"}).exit_code, 2);
  // -u: perftest's QP (ACK) timeout exponent.
  EXPECT_EQ(parse("rocemu_write_bw", {"--loopback", "-u", "18"}).opt.qp_timeout, 18);
  EXPECT_EQ(parse("rocemu_write_bw", {"--loopback"}).opt.qp_timeout, -1);
  EXPECT_EQ(parse("rocemu_write_bw", {"--loopback", "--qp-timeout=32"}).exit_code, 2);
}

TEST(PerftestOptions, RdmaCmIsNetworkModes) {
  for (const char* flag : {"-R", "--rdma_cm"}) {
    const auto c = parse("rocemu_send_lat", {"-d", "x", flag, "10.0.0.2"});
    ASSERT_EQ(c.exit_code, -1) << c.message;
    EXPECT_TRUE(c.opt.rdma_cm);
  }
  const auto l = parse("rocemu_write_bw", {"--loopback", "-R"});
  EXPECT_EQ(l.exit_code, 2);
  EXPECT_NE(l.message.find("-R is for network mode"), std::string::npos) << l.message;
  // rdma_cm here is IPv4 only: an IPv6 GID with -R is refused, not sent in an IPv4 CM header.
  const auto v6 = parse("rocemu_write_bw", {"-d", "x", "-R", "-x", "0", "10.0.0.2"});
  EXPECT_EQ(v6.exit_code, 2);
  EXPECT_NE(v6.message.find("use -x 1"), std::string::npos) << v6.message;
  EXPECT_EQ(parse("rocemu_write_bw", {"-d", "x", "-R", "-x", "1", "10.0.0.2"}).exit_code, -1);
}

TEST(PerftestOptions, TosIsForRdmaCmQps) {
  for (const char* flag : {"-T", "--tos"}) {
    const auto c = parse("rocemu_write_bw", {"-d", "x", "-R", flag, "106", "10.0.0.2"});
    ASSERT_EQ(c.exit_code, -1) << c.message;
    EXPECT_EQ(c.opt.tos, 106);
  }
  EXPECT_EQ(parse("rocemu_write_bw", {"-d", "x", "-R", "--tos=0"}).opt.tos, 0);
  EXPECT_EQ(parse("rocemu_write_bw", {"-d", "x", "-R"}).opt.tos, -1);  // unset: DEF_TOS
  // perftest: "TOS only valid for rdma_cm based QP and RawEth QP".
  const auto no_cm = parse("rocemu_write_bw", {"-d", "x", "-T", "106"});
  EXPECT_EQ(no_cm.exit_code, 2);
  EXPECT_NE(no_cm.message.find("give -R too"), std::string::npos) << no_cm.message;
  for (const char* bad : {"256", "-1", "x", ""})
    EXPECT_EQ(parse("rocemu_write_bw", {"-d", "x", "-R", "-T", bad}).exit_code, 2) << bad;
}

TEST(PerftestOptions, CheckDataIsForNetworkBandwidthTestsWithoutBidirectional) {
  for (const char* tool : {"rocemu_write_bw", "rocemu_send_bw", "rocemu_read_bw"}) {
    const auto o = parse(tool, {"-d", "x", "--check_data", "10.0.0.2"});
    ASSERT_EQ(o.exit_code, -1) << o.message;
    EXPECT_TRUE(o.opt.check_data);
  }
  EXPECT_FALSE(parse("rocemu_write_bw", {"-d", "x"}).opt.check_data);
  for (const auto& [tool, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"rocemu_write_bw", {"--loopback", "--check_data"}},
           {"rocemu_send_bw", {"-d", "x", "-b", "--check_data"}},
           {"rocemu_write_lat", {"-d", "x", "--check_data"}},
           {"rocemu_write_bw", {"-d", "x", "--check_data=1"}}}) {
    const auto o = parse(tool, args);
    EXPECT_EQ(o.exit_code, 2) << tool;
    EXPECT_NE(o.message.find("--check_data"), std::string::npos) << o.message;
  }
}

TEST(PerftestOptions, UnknownFlagExitsTwoWithUsage) {
  const auto o = parse("rocemu_write_bw", {"--loopback", "--frobnicate"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.message.find("unknown option '--frobnicate'"), std::string::npos);
  EXPECT_NE(o.message.find("Usage:"), std::string::npos);
}

TEST(PerftestOptions, BadValuesExitTwoNamingTheFlag) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"-m", "1000"},
                                                                {"-s", "0"},
                                                                {"-s", "abc"},
                                                                {"-q", "17"},
                                                                {"-x", "2"},
                                                                {"-n", "2"},
                                                                {"-t", "0"},
                                                                {"-s"},
                                                                {"-s", "8", "-a"},
                                                                {"-n", "10", "-D", "2"},
                                                                {"--link_gbps=0"},
                                                                {"--loopback", "host"},
                                                                {"--report_gbits=1"}}) {
    std::vector<std::string> full = args;
    full.push_back("--loopback");  // otherwise valid: the error is the flag's own
    const auto o = parse("rocemu_write_bw", full);
    EXPECT_EQ(o.exit_code, 2) << args[0];
    EXPECT_NE(o.message.find("Usage:"), std::string::npos) << args[0];
    EXPECT_NE(o.message.find(args[0].substr(0, args[0].find('='))), std::string::npos) << o.message;
  }
  EXPECT_EQ(parse("rocemu_write_lat", {"--loopback", "-b"}).exit_code, 2);
  EXPECT_EQ(parse("not_a_tool", {}).exit_code, 2);
}

TEST(PerftestOptions, PciGivesTheLoopbackPairTwoPortsAtTheirOwnRate) {
  const auto o = parse("rocemu_write_bw", {"--loopback", "--pci=0000:00:04.0,0000:00:05.0"});
  ASSERT_EQ(o.exit_code, -1) << o.message;
  EXPECT_EQ(o.opt.pci, (std::vector<std::string>{"0000:00:04.0", "0000:00:05.0"}));
  EXPECT_FALSE(o.opt.link_gbps_set);  // the wire runs at the ports' reported speed
  const auto r =
      parse("rocemu_write_bw", {"--loopback", "--pci", "04:00.0,04:00.1", "--link_gbps=5"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  EXPECT_TRUE(r.opt.link_gbps_set);
  EXPECT_DOUBLE_EQ(r.opt.link_gbps, 5.0);
  for (const char* bad :
       {"--pci=0000:00:04.0", "--pci=a,", "--pci=,b", "--pci=a,b,c", "--pci=a,a"}) {
    const auto e = parse("rocemu_write_bw", {"--loopback", bad});
    EXPECT_EQ(e.exit_code, 2) << bad;
    EXPECT_NE(e.message.find("--pci="), std::string::npos) << e.message;
  }
  const auto n = parse("rocemu_write_bw", {"-d", "eth0", "--pci=a,b"});
  EXPECT_EQ(n.exit_code, 2);
  EXPECT_NE(n.message.find("--pci is for --loopback"), std::string::npos) << n.message;
}

TEST(PerftestOptions, HelpExitsZero) {
  const auto o = parse("rocemu_read_bw", {"--help"});  // help wins over missing --loopback
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.message.find("rocemu_read_bw"), std::string::npos);
}

TEST(PerftestOptions, AllSizesArePowersOfTwoFrom2To8MiB) {
  auto o = parse("rocemu_write_bw", {"-a", "--loopback"});
  ASSERT_EQ(o.exit_code, -1);
  const auto s = run_sizes(o.opt);
  ASSERT_EQ(s.size(), 23u);
  EXPECT_EQ(s.front(), 2u);
  EXPECT_EQ(s.back(), 8u << 20);
  o.opt.all_sizes = false;
  EXPECT_EQ(run_sizes(o.opt), std::vector<uint32_t>{65536});
}

TEST(PerftestOptions, RunInfinitelyDefaultsToFiveSecondPeriods) {
  const auto o = parse("rocemu_write_bw", {"--run_infinitely", "--loopback"});
  ASSERT_EQ(o.exit_code, -1);
  EXPECT_TRUE(o.opt.run_infinitely);
  EXPECT_EQ(o.opt.duration_s, 5u);
  EXPECT_EQ(parse("rocemu_write_bw", {"--out_json", "--loopback"}).opt.out_json,
            "perftest_out.json");
}

// perftest's atomic tests: -A CMP_AND_SWAP | FETCH_AND_ADD (default FETCH_AND_ADD), 8-byte
// messages that cannot be changed ("Message size cannot be changed for Atomic tests"), no -a;
// -A on another tool is an error, as perftest's "You are not running the atomic_lat/bw test!".
TEST(PerftestOptions, AtomicToolsTakeTheirTypeAndOnlyEightBytes) {
  Verb v;
  Metric m;
  ASSERT_TRUE(tool_from_name("rocemu_atomic_bw", v, m));
  EXPECT_EQ(v, Verb::kAtomic);
  EXPECT_EQ(m, Metric::kBandwidth);
  ASSERT_TRUE(tool_from_name("rocemu_atomic_lat", v, m));
  EXPECT_EQ(m, Metric::kLatency);
  EXPECT_TRUE(reads_back(Verb::kAtomic));
  EXPECT_FALSE(reads_back(Verb::kWrite));
  for (const char* tool : {"rocemu_atomic_bw", "rocemu_atomic_lat"}) {
    SCOPED_TRACE(tool);
    const auto d = parse(tool, {"--loopback"});
    ASSERT_EQ(d.exit_code, -1) << d.message;
    EXPECT_EQ(d.opt.atomic_op, AtomicOp::kFetchAdd);
    EXPECT_EQ(d.opt.size_bytes, 8u);
    const auto cas = parse(tool, {"--loopback", "-A", "CMP_AND_SWAP", "-s", "8"});
    ASSERT_EQ(cas.exit_code, -1) << cas.message;
    EXPECT_EQ(cas.opt.atomic_op, AtomicOp::kCmpSwap);
    const auto faa = parse(tool, {"--loopback", "--atomic_type=FETCH_AND_ADD"});
    ASSERT_EQ(faa.exit_code, -1) << faa.message;
    EXPECT_EQ(faa.opt.atomic_op, AtomicOp::kFetchAdd);
    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"--loopback", "-A", "SWAP"},
          std::vector<std::string>{"--loopback", "-A", "cmp_and_swap"},
          std::vector<std::string>{"--loopback", "-s", "16"},
          std::vector<std::string>{"--loopback", "-a"},
          std::vector<std::string>{"-d", "x", "--check_data", "10.0.0.2"}}) {
      const auto o = parse(tool, bad);
      EXPECT_EQ(o.exit_code, 2) << bad.back();
    }
    EXPECT_NE(parse(tool, {"-h"}).message.find("-A, --atomic_type"), std::string::npos);
  }
  const auto o = parse("rocemu_read_bw", {"--loopback", "-A", "FETCH_AND_ADD"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.message.find("atomic"), std::string::npos) << o.message;
  EXPECT_EQ(parse("rocemu_read_bw", {"-h"}).message.find("--atomic_type"), std::string::npos);
  EXPECT_STREQ(atomic_op_name(AtomicOp::kCmpSwap), "CMP_AND_SWAP");
  EXPECT_STREQ(atomic_op_name(AtomicOp::kFetchAdd), "FETCH_AND_ADD");
}

}  // namespace
}  // namespace rocemu::perftest
