// fuzz_run_config.cc — libFuzzer target for the run-file loader rocemu-sim, rocemu-testbed
// and rocemu-switch use: the input is the text of a run file, read as load_run_config() reads
// one (common/config.h parse_toml, then fabric/run_config.h parse_run_config: [run],
// [topology] with its generators, [switch], [nic], [dcqcn], [workload], [job], [sim],
// [testbed], [capture], [telemetry], [agent]). Runs from the project root, so the paths the
// seed run files name (CDF files, DCQCN and ECN profiles, models) resolve.
// Aborts when: anything but a ConfigError escapes (an error must be reported as one), a
// ConfigError does not name the file, or a run file that loads has a switch or host that
// cannot be built from it (what load time promises: refused at load, not at start).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "fabric/run_config.h"
#include "nic/roce_host.h"
#include "switchsw/soft_switch.h"
#include "tests/support/eal_env.h"

namespace {

constexpr const char* kSource = "fuzz.toml";

[[noreturn]] void fail(const char* what, const char* detail) {
  std::fprintf(stderr, "fuzz_run_config: %s: %s\n", what, detail);
  std::abort();
}

// Every switch and host of an accepted run file builds (small topologies: building is the
// point, not the size). Throws what the constructors throw.
void build_nodes(const rocemu::fabric::RunConfig& cfg) {
  using namespace rocemu;
  const Topology& t = cfg.topology.topology;
  if (t.nodes().size() > 64) return;
  for (uint32_t n : t.switches())
    sw::SoftSwitch s(cfg.switch_params, t, n, test::test_mempool(), cfg.seed);
  for (uint32_t n : t.hosts())
    nic::RoceHost h(cfg.nic_params, t, n, test::test_mempool(), cfg.seed);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rocemu::test::test_mempool();  // EAL once, before the first input
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocemu;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fabric::RunConfig cfg;
  try {
    cfg = fabric::parse_run_config(parse_toml(text, kSource), kSource);
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    if (what.rfind(kSource, 0) != 0) fail("ConfigError that does not name the file", e.what());
    return 0;
  } catch (const std::exception& e) {
    fail("not a ConfigError", e.what());
  }
  try {
    build_nodes(cfg);
  } catch (const std::exception& e) {
    fail("run file accepted at load but its nodes cannot be built", e.what());
  }
  return 0;
}
