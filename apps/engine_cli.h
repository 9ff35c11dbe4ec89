// engine_cli.h — the command line shared by rocemu-sim and rocemu-testbed (and the agent
// flags also by rocemu-switch): parsing, --help text, and applying overrides to a loaded
// RunConfig. Usage errors are collected and
// reported together (exit 2), like configuration errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/run_config.h"
#include "fabric/workload_job.h"
#include "fabric/write_job.h"

namespace rocemu::apps {

enum class EngineKind { kSim, kTestbed };

/// The agent flags the engine apps share (docs/agent.md "In the loop").
struct AgentFlags {
  std::string policy, model, profile;  // --policy, --agent-model, --agent-profile
  int64_t interval_us = 0;             // --agent-interval-us (0: the file's / default)
};

struct EngineCli {
  std::string config_path;
  std::optional<uint64_t> seed;
  std::string out_dir = "out";
  std::string log_level;                   // empty: $ROCEMU_LOG or info
  std::optional<int64_t> until_us;         // sim
  std::optional<std::string> ports;        // testbed
  std::optional<double> time_limit_s;      // testbed
  std::vector<std::string> eal_args;       // testbed: everything after `--`
  AgentFlags agent;                        // --policy, --agent-* ([agent] over the file's)
  bool help = false;
  std::vector<std::string> errors;
};

/// Reads one agent flag of rocemu-sim, rocemu-testbed or rocemu-switch (`--policy`,
/// `--agent-model`, `--agent-profile`, `--agent-interval-us`) with its `value` into `f`;
/// a bad value goes to `errors`. Returns false (nothing read) if `flag` is not one of them.
bool parse_agent_flag(const std::string& flag, const std::string& value, AgentFlags& f,
                      std::vector<std::string>& errors);
/// Whether `flag` is one of the agent flags.
bool is_agent_flag(const std::string& flag) noexcept;
/// Puts the agent flags over cfg.agent (fabric::apply_agent_flags; throws ConfigError).
void apply_agent_flags(fabric::RunConfig& cfg, const AgentFlags& f);

/// Parses argv (argv[0] skipped).
EngineCli parse_engine_cli(EngineKind kind, int argc, char** argv);
/// The --help text of `program`.
std::string engine_help(EngineKind kind, const std::string& program);
/// Applies --seed, --until-us, --ports, --time-limit-s to `cfg`.
void apply_overrides(const EngineCli& cli, fabric::RunConfig& cfg);

/// Parses the command line, sets up logging and loads the run configuration (with the
/// command line's overrides applied). Returns an exit status if the program should stop now
/// (0 after --help; kExitUsage after a usage or configuration error, reported on stderr),
/// or nullopt when `cli` and `cfg` are ready for a run.
std::optional<int> prepare_run(EngineKind kind, const char* program, int argc, char** argv,
                               EngineCli& cli, fabric::RunConfig& cfg);

/// Prints a workload run's summary, writes flows/bins/metrics CSV to `out_dir`, stops EAL
/// and returns the exit status (0: no flow failed and at least one finished).
int finish_workload(const char* program, const fabric::WorkloadResult& w, const std::string& out_dir);
/// Prints a write job's summary, writes summary.json/csv to `out_dir`, stops EAL and returns
/// the exit status (0: completed and the data verified).
int finish_write_job(const char* program, const fabric::JobResult& r, const std::string& out_dir);

}  // namespace rocemu::apps
