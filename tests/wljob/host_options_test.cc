// rocemu-host's command line (apps/host/host_options.h) and flows.csv reader
// (apps/host/host_merge.h): every usage problem is reported at once; flows.csv written by
// workload::write_flows_csv reads back to the same records; malformed lines name the line.
#include "apps/host/host_options.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/host/host_merge.h"

namespace rocemu::apps {

namespace {
HostOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "rocemu-host");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_host_options(static_cast<int>(argv.size()), argv.data());
}
bool has(const HostOptions& o, const std::string& what) {
  for (const auto& e : o.errors)
    if (e.find(what) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(HostOptions, RunModeTakesHostIfaceStartAndEalArguments) {
  const HostOptions o =
      parse({"run.toml", "--host", "h1", "-d", "veth1", "--start-at", "1700000000000000000",
             "--grace-ms=200", "--time-limit-s", "5", "--", "-l", "1"});
  ASSERT_TRUE(o.errors.empty()) << o.errors.front();
  EXPECT_EQ(o.config_path, "run.toml");
  EXPECT_EQ(o.host, "h1");
  EXPECT_EQ(o.iface, "veth1");
  EXPECT_EQ(*o.start_at_ns, 1700000000000000000);
  EXPECT_EQ(o.grace_ns, 200'000'000);
  EXPECT_EQ(*o.time_limit_ns, 5'000'000'000);
  EXPECT_EQ(o.out_dir, "out/host-h1");
  EXPECT_EQ(o.eal_args, (std::vector<std::string>{"-l", "1"}));
  EXPECT_FALSE(o.merging());
}

TEST(HostOptions, EveryUsageProblemIsReportedTogether) {
  const HostOptions o = parse({"--start-at", "soon", "--grace-ms", "-5", "--bogus"});
  EXPECT_TRUE(has(o, "--start-at=soon"));
  EXPECT_TRUE(has(o, "--grace-ms=-5"));
  EXPECT_TRUE(has(o, "--bogus: unknown option"));
  EXPECT_TRUE(has(o, "missing the configuration file"));
  EXPECT_TRUE(has(o, "missing --host"));
  EXPECT_TRUE(has(o, "missing -d"));
}

TEST(HostOptions, StartFileIsTheOtherWayToGiveTheStartInstant) {
  const HostOptions o =
      parse({"run.toml", "--host", "h0", "-d", "veth0", "--start-file", "/tmp/wl/start"});
  ASSERT_TRUE(o.errors.empty()) << o.errors.front();
  EXPECT_EQ(o.start_file, "/tmp/wl/start");
  EXPECT_FALSE(o.start_at_ns);
  EXPECT_TRUE(has(parse({"run.toml", "--host", "h0", "-d", "veth0", "--start-file", "f",
                         "--start-at", "1700000000000000000"}),
                  "exclude each other"));
  EXPECT_TRUE(has(parse({"run.toml", "--host", "h0", "-d", "veth0", "--start-file="}),
                  "--start-file: expected a file name"));
}

TEST(HostOptions, StartInstantIsOnePositiveIntegerOptionallyEndingInANewline) {
  EXPECT_EQ(parse_start_instant("1700000000123456789\n"), 1700000000123456789);
  EXPECT_EQ(parse_start_instant("1700000000123456789"), 1700000000123456789);
  for (const char* bad : {"", "\n", "0", "-5", "17000 00", "1700000000123456789\n\n", "soon"})
    EXPECT_FALSE(parse_start_instant(bad)) << bad;
}

// The start file is looked at every millisecond until it appears: nothing before, its
// instant after, and an error (never a read without end) for what cannot be one.
TEST(HostOptions, StartFileIsWaitedForThenReadOrRefused) {
  const std::string dir = testing::TempDir() + "start_file_test/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "start";
  EXPECT_FALSE(read_start_file(path));
  std::ofstream(path) << "1700000000123456789\n";
  EXPECT_EQ(read_start_file(path), 1700000000123456789);
  const auto refused = [](const std::string& p) {
    try {
      read_start_file(p);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("not refused");
  };
  std::ofstream(path, std::ios::trunc) << "soon";
  EXPECT_EQ(refused(path), "--start-file " + path + ": 'soon' is not a start instant (nanoseconds since the epoch)");
  std::ofstream(path, std::ios::trunc) << std::string(65, '1');
  EXPECT_NE(refused(path).find("larger than the limit of 64"), std::string::npos);
  EXPECT_EQ(refused("/dev/zero"), "--start-file /dev/zero: not a regular file");
  EXPECT_EQ(refused(dir), "--start-file " + dir + ": not a regular file");
  ASSERT_EQ(mkfifo((dir + "fifo").c_str(), 0600), 0);
  EXPECT_EQ(refused(dir + "fifo"), "--start-file " + dir + "fifo: not a regular file");
  std::filesystem::remove_all(dir);
}

TEST(HostOptions, MergeModeTakesAnOutputAndDirectories) {
  const HostOptions o = parse({"run.toml", "--merge", "out/all", "out/h0", "out/h1"});
  ASSERT_TRUE(o.errors.empty()) << o.errors.front();
  EXPECT_TRUE(o.merging());
  EXPECT_EQ(o.merge_out, "out/all");
  EXPECT_EQ(o.merge_dirs, (std::vector<std::string>{"out/h0", "out/h1"}));
  EXPECT_TRUE(has(parse({"run.toml", "--merge", "out/all"}), "at least one"));
}

TEST(FlowsCsv, WrittenRecordsReadBackEqual) {
  std::vector<workload::FlowRecord> in(2);
  in[0].flow = {3, 1, 2, 1500, 100, workload::FlowOp::kWrite, workload::kNotIncast};
  in[0].finish_ns = 9000;
  in[0].ideal_ns = 4000;
  in[1].flow = {7, 2, 0, 32768, 5000, workload::FlowOp::kSend, 4};
  in[1].finish_ns = 60000;
  in[1].ideal_ns = 30000;
  std::stringstream s;
  workload::write_flows_csv(s, in);
  std::vector<workload::FlowRecord> out;
  std::string error;
  ASSERT_TRUE(parse_flows_csv(s, out, error)) << error;
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out[i].flow, in[i].flow);
    EXPECT_EQ(out[i].finish_ns, in[i].finish_ns);
    EXPECT_EQ(out[i].ideal_ns, in[i].ideal_ns);
  }
}

TEST(FlowsCsv, MalformedLineIsReportedWithItsNumber) {
  std::istringstream s(
      "id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown\n"
      "0,1,2,100,write,-1,0,10,10,5,2.000000\n"
      "1,1,2,100,read,-1,0,10,10,5,2.000000\n");
  std::vector<workload::FlowRecord> out;
  std::string error;
  EXPECT_FALSE(parse_flows_csv(s, out, error));
  EXPECT_NE(error.find("line 3"), std::string::npos) << error;
}

// A host's result directory read back for --merge: a file missing, or something other
// than a regular file in its place (a FIFO), is an error naming it, not a read that blocks.
TEST(HostResults, AMissingOrIrregularResultFileIsNamed) {
  const std::string dir = testing::TempDir() + "host_results_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto error = [&] {
    try {
      read_host_results(dir);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_EQ(error(), dir + "/flows.csv: cannot read: No such file or directory");
  std::ofstream(dir + "/flows.csv")
      << "id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown\n";
  ASSERT_EQ(mkfifo((dir + "/metrics.csv").c_str(), 0600), 0);
  EXPECT_EQ(error(), dir + "/metrics.csv: cannot read: not a regular file");
  std::filesystem::remove(dir + "/metrics.csv");
  std::ofstream(dir + "/metrics.csv") << "metric,value\nseed,1\n";
  std::filesystem::create_directory(dir + "/failures.csv");
  EXPECT_EQ(error(), dir + "/failures.csv: cannot read: not a regular file");
  std::filesystem::remove(dir + "/failures.csv");
  std::ofstream(dir + "/failures.csv") << "flow_id,src,dst,size_bytes,status\n";
  EXPECT_EQ(error(), "read");
  std::filesystem::remove_all(dir);
}

}  // namespace rocemu::apps
