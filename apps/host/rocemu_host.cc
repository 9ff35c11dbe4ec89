// rocemu-host — one host of a workload run as its own process on a DPDK af_packet port, and
// the merge of the per-host results (docs/workload_runs.md "Host processes in namespaces").
// Usage: rocemu-host --help. Exit: 0 ok, 1 failed flows or setup failure, 2 usage/config.
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "apps/host/host_merge.h"
#include "apps/host/host_options.h"
#include "apps/host/host_run.h"
#include "common/config.h"
#include "common/log.h"
#include "fabric/run_config.h"
#include "fabric/workload_fabric.h"

using namespace rocemu;

namespace {

int merge(const fabric::RunConfig& cfg, const apps::HostOptions& o) {
  const workload::WorkloadConfig wcfg = fabric::make_workload_config_of(cfg);
  std::vector<apps::HostResultFiles> parts;
  for (const auto& d : o.merge_dirs) parts.push_back(apps::read_host_results(d));
  const fabric::WorkloadResult r =
      apps::merge_host_results(fabric::workload_size_bins(wcfg), cfg.seed, parts);
  std::fputs(fabric::workload_text(r).c_str(), stdout);
  fabric::write_workload_files(r, o.merge_out);
  std::fputs(fabric::workload_files_line(r, o.merge_out).c_str(), stdout);
  return fabric::workload_exit_status(r);
}

}  // namespace

int main(int argc, char** argv) {
  const char* prog = "rocemu-host";
  apps::HostOptions o = apps::parse_host_options(argc, argv);
  if (o.help) {
    std::fputs(apps::host_help(prog).c_str(), stdout);
    return 0;
  }
  if (!setup_logging(o.log_level))
    o.errors.push_back("--log-level=" + o.log_level + ": unknown level");
  if (!o.errors.empty()) {
    for (const auto& e : o.errors) std::fprintf(stderr, "%s: %s\n", prog, e.c_str());
    return kExitUsage;
  }
  fabric::RunConfig cfg;
  try {
    cfg = fabric::load_run_config(o.config_path);
    if (o.seed) cfg.seed = *o.seed;
    if (o.list_hosts) {
      const Topology& t = cfg.topology.topology;
      for (uint32_t h : t.hosts()) {
        const auto& m = t.node(h).ports.empty() ? MacAddr{} : t.node(h).ports[0].mac;
        std::printf("%s %s %s\n", t.node(h).name.c_str(), ipv4_to_string(t.node(h).ipv4).c_str(),
                    mac_to_string(m).c_str());
      }
      return 0;
    }
    if (o.merging()) return merge(cfg, o);
    std::vector<std::string> warnings;
    const auto problems = apps::check_host_run(cfg, o, apps::realtime_ns(), warnings);
    for (const auto& w : warnings) std::fprintf(stderr, "%s: warning: %s\n", prog, w.c_str());
    if (!problems.empty()) {
      for (const auto& e : problems) std::fprintf(stderr, "%s: %s\n", prog, e.c_str());
      return kExitUsage;
    }
    return apps::run_host(cfg, o);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s", e.what());
    if (std::string(e.what()).back() != '\n') std::fputc('\n', stderr);
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    return 1;
  }
}
