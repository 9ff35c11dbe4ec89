// eal.h — DPDK EAL bootstrap with sane defaults (docs/engines.md, DPDK-NOTES "EAL").
//
// Default arguments: `-l 0 --in-memory --no-pci --no-telemetry` (no lock files, several
// processes at once, no probing of the VM's own NIC). Where hugepages are missing (none
// free, or hugetlbfs not mounted) it uses `--no-huge -m 512 --file-prefix rocemu-<pid>`
// instead and logs why: --in-memory and --no-huge do not combine. The user's EAL
// arguments (after `--` on the command line) are appended and win: if they name lcores
// (-l/-c/--lcores) or a memory mode (--no-huge/--in-memory/--file-prefix), ours are left
// out. PCI devices, when wanted, are allowed one by one (`-a`) instead of `--no-pci`.
// After start the SIMD limit is raised to 512 bits (unless the user set
// --force-max-simd-bitwidth) and the fastest ICRC CRC path is selected.
// Only fabric/ calls this.
#pragma once

#include <string>
#include <vector>

namespace rocemu::fabric {

struct EalOptions {
  std::string program = "rocemu";
  std::vector<std::string> user_args;    // pass-through, appended last
  std::vector<std::string> pci_devices;  // allow-listed PCI addresses (drops --no-pci)
  std::string lcores = "0";              // -l value unless the user gave one
  int no_huge_memory_mb = 512;
};

/// The argument vector eal_start() would use (argv[0] first). `hugepages` says whether
/// hugepages are usable. Pure: exposed for tests and --help.
std::vector<std::string> eal_arguments(const EalOptions& opt, bool hugepages, int pid);

/// True if hugetlbfs is mounted and at least one hugepage is free (/proc/meminfo).
bool hugepages_available();

/// Starts EAL once per process (later calls return at once). Throws std::runtime_error
/// with rte_strerror's reason and the arguments if EAL cannot start. If the hugepage
/// attempt fails for lack of memory, retries once with --no-huge (logged).
void eal_start(const EalOptions& opt);

/// Releases EAL at process end (rte_eal_cleanup) and removes its runtime directory if it
/// is empty. Call after every port, pool and node is gone. No-op if EAL never started.
void eal_stop() noexcept;

/// True once eal_start() succeeded.
bool eal_started() noexcept;

}  // namespace rocemu::fabric
