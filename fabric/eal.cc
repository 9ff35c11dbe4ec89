// eal.cc — EAL start with hugepage detection and the --no-huge fallback.
#include "fabric/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
// rte_vect.h of DPDK 22.11 declares its functions without C linkage guards.
extern "C" {
#include <rte_vect.h>
}
#include <spdlog/spdlog.h>

#include "common/icrc.h"

namespace rocemu::fabric {

namespace {
bool g_started = false;

bool user_has(const std::vector<std::string>& args, std::initializer_list<const char*> names) {
  for (const auto& a : args)
    for (const char* n : names) {
      const std::string s(n);
      if (a == s || (s.size() > 2 && a.rfind(s + "=", 0) == 0) ||
          (s.size() == 2 && a.size() > 2 && a.rfind(s, 0) == 0 && a[1] != '-'))
        return true;
    }
  return false;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

// The ICRC's CRC-32 is ~4x faster on 512-bit VPCLMULQDQ lanes (DPDK-NOTES), which EAL
// allows only with --force-max-simd-bitwidth=512: raise the limit unless the user chose
// one, then let common/crc32.cc pick (PCLMULQDQ where AVX-512 is missing or not allowed).
void select_crc(const EalOptions& opt) {
  if (!user_has(opt.user_args, {"--force-max-simd-bitwidth"}))
    rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
  icrc_select_fastest();
}

int try_init(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // EAL's own lines (its default stream is stdout, plus syslog) go to stderr: stdout is a
  // tool's output (perftest's tables), which scripts parse line by line.
  rte_openlog_stream(stderr);
  return rte_eal_init(static_cast<int>(args.size()), argv.data());
}
}  // namespace

std::vector<std::string> eal_arguments(const EalOptions& opt, bool hugepages, int pid) {
  std::vector<std::string> a{opt.program};
  const auto& u = opt.user_args;
  if (!user_has(u, {"-l", "-c", "--lcores"})) {
    a.push_back("-l");
    a.push_back(opt.lcores);
  }
  if (opt.pci_devices.empty()) {
    if (!user_has(u, {"--no-pci", "-a", "--allow", "-b", "--block"})) a.push_back("--no-pci");
  } else {
    for (const auto& d : opt.pci_devices) {
      a.push_back("-a");
      a.push_back(d);
    }
  }
  if (!user_has(u, {"--no-huge", "--in-memory", "--file-prefix", "-m", "--socket-mem"})) {
    if (hugepages) {
      a.push_back("--in-memory");
    } else {
      a.push_back("--no-huge");
      a.push_back("-m");
      a.push_back(std::to_string(opt.no_huge_memory_mb));
      a.push_back("--file-prefix");
      a.push_back("rocemu-" + std::to_string(pid));
      a.push_back("--no-shconf");  // no runtime files left behind in /var/run/dpdk
    }
  }
  if (!user_has(u, {"--telemetry", "--no-telemetry"})) a.push_back("--no-telemetry");
  a.insert(a.end(), u.begin(), u.end());
  return a;
}

bool hugepages_available() {
  bool mounted = false;
  {
    std::ifstream mounts("/proc/mounts");
    std::string dev, dir, type;
    std::string rest;
    while (mounts >> dev >> dir >> type) {
      std::getline(mounts, rest);
      if (type == "hugetlbfs") mounted = true;
    }
  }
  long free_pages = 0;
  std::ifstream mi("/proc/meminfo");
  std::string line;
  while (std::getline(mi, line)) {
    if (line.rfind("HugePages_Free:", 0) == 0) {
      std::istringstream is(line.substr(15));
      is >> free_pages;
    }
  }
  return mounted && free_pages > 0;
}

bool eal_started() noexcept { return g_started; }

void eal_stop() noexcept {
  if (!g_started) return;
  const std::string dir = rte_eal_get_runtime_dir();
  rte_eal_cleanup();
  g_started = false;
  ::rmdir(dir.c_str());  // only succeeds when empty (--no-shconf / --in-memory runs)
}

void eal_start(const EalOptions& opt) {
  if (g_started) return;
  const bool huge = hugepages_available();
  if (!huge)
    spdlog::info("EAL: no free hugepages (or hugetlbfs not mounted): using --no-huge -m {}",
                 opt.no_huge_memory_mb);
  auto args = eal_arguments(opt, huge, static_cast<int>(getpid()));
  spdlog::debug("EAL: {}", join(args));
  if (try_init(args) >= 0) {
    g_started = true;
    select_crc(opt);
    return;
  }
  const int err = rte_errno;
  const bool ours = !user_has(opt.user_args, {"--no-huge", "--in-memory", "--file-prefix", "-m",
                                              "--socket-mem"});
  if (huge && ours && (err == ENOMEM || err == EACCES)) {
    spdlog::warn("EAL with hugepages failed ({}); retrying with --no-huge", rte_strerror(err));
    args = eal_arguments(opt, false, static_cast<int>(getpid()));
    if (try_init(args) >= 0) {
      g_started = true;
      select_crc(opt);
      return;
    }
  }
  throw std::runtime_error("EAL failed to start: " + std::string(rte_strerror(rte_errno)) +
                           " (arguments: " + join(args) + ")");
}

}  // namespace rocemu::fabric
