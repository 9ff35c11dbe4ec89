// fabric_eal.h — starts fabric's EAL (fabric/eal.h: the apps' own bootstrap) once per test
// process, quietly, for tests and benchmarks that run jobs through the engines.
#pragma once

#include "fabric/eal.h"

namespace rocemu::test {

/// Idempotent: the first call starts EAL as `program` on `lcores` (EAL -l; empty: the
/// default, lcore 0); later calls do nothing.
inline void start_fabric_eal(const char* program, const char* lcores = "") {
  static const bool started = [program, lcores] {
    fabric::EalOptions o;
    o.program = program;
    if (lcores[0] != '\0') o.lcores = lcores;
    o.user_args = {"--log-level", "lib.eal:error"};
    o.no_huge_memory_mb = 1024;  // room for a test pool beside a job's own pool
    fabric::eal_start(o);
    return true;
  }();
  (void)started;
}

}  // namespace rocemu::test
