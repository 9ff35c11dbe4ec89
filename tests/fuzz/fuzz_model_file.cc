// fuzz_model_file.cc — libFuzzer target for the agent's model-file reader (agent/
// model_file.h: parse_model, what load_model does with a file's bytes) and the policy built
// from a model it accepts (make_policy, the fast forward pass that picks actions).
// Input byte 0 picks how the rest is used: 0 = the file as is; 1 = its payload checksum
// recomputed (so a mutated payload or header gets past the FNV-1a check to the checks after
// it); 2 = also its payload float count set to what the file holds.
// Aborts when: anything but a ModelFileError escapes, an error does not name the file, an
// accepted model does not write back to exactly the bytes read (the format is canonical),
// or a GraphCC policy from it picks an action outside the action table.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/action_table.h"
#include "agent/model_file.h"
#include "agent/policy.h"
#include "agent/port_features.h"
#include "agent/port_graph.h"
#include "common/topology.h"

namespace {

using namespace rocemu;

// Offsets of model_file.h's header: magic 8, version 4, kind 4, dims 32, networks 4, action
// table hash 8, then the payload float count and its checksum; checked on the first input.
constexpr size_t kCountOff = 60;
constexpr size_t kChecksumOff = 68;
constexpr size_t kHeaderBytes = 76;

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_model_file: %s %s\n", what, detail.c_str());
  std::abort();
}

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

void check_layout() {
  const std::vector<uint8_t> b = agent::model_file_bytes(agent::Model{});
  uint64_t count = 0, sum = 0;
  std::memcpy(&count, b.data() + kCountOff, 8);
  std::memcpy(&sum, b.data() + kChecksumOff, 8);
  if (count * sizeof(float) != b.size() - kHeaderBytes ||
      sum != fnv1a(b.data() + kHeaderBytes, b.size() - kHeaderBytes))
    fail("model_file.h's header layout changed: update the offsets in fuzz_model_file.cc");
}

struct Graph {
  Topology topo;
  std::unique_ptr<agent::PortGraph> graph;
  Graph() {
    const uint32_t s0 = topo.add_node("s0", NodeKind::kSwitch);
    const uint32_t s1 = topo.add_node("s1", NodeKind::kSwitch);
    for (int i = 0; i < 4; ++i) {
      const uint32_t h = topo.add_node("h" + std::to_string(i), NodeKind::kHost);
      topo.add_link(h, i < 2 ? s0 : s1, 25 * kBpsPerGbps, 1000);
    }
    topo.add_link(s0, s1, 100 * kBpsPerGbps, 1000);
    graph = std::make_unique<agent::PortGraph>(topo);
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  check_layout();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> in(data + 1, data + size);
  const int mode = data[0] % 3;
  if (mode >= 1 && in.size() >= kHeaderBytes) {
    if (mode == 2) {
      const uint64_t count = (in.size() - kHeaderBytes) / sizeof(float);
      std::memcpy(in.data() + kCountOff, &count, 8);
    }
    const uint64_t sum = fnv1a(in.data() + kHeaderBytes, in.size() - kHeaderBytes);
    std::memcpy(in.data() + kChecksumOff, &sum, 8);
  }
  agent::Model m;
  try {
    m = agent::parse_model(in, "fuzz.model");
  } catch (const agent::ModelFileError& e) {
    if (std::string(e.what()).rfind("model file fuzz.model: ", 0) != 0)
      fail("error does not name the file:", e.what());
    return 0;
  } catch (const std::exception& e) {
    fail("not a ModelFileError:", e.what());
  }
  if (agent::model_file_bytes(m) != in) fail("accepted model does not write back to its bytes");

  static Graph g;
  std::unique_ptr<agent::EcnPolicy> policy;
  try {
    policy = agent::make_policy(m, *g.graph);
  } catch (const std::invalid_argument& e) {
    // An ACC model has one network per port: one for another topology is refused.
    if (m.kind != agent::ModelKind::kAccPerPort)
      fail("GraphCC model refused by the policy:", e.what());
    return 0;
  }
  agent::FeatureTracker tracker(*g.graph, agent::FeatureConfig{});
  std::vector<uint16_t> actions(static_cast<size_t>(g.graph->num_agents()), 0xffff);
  policy->act(tracker, actions);
  for (uint16_t a : actions)
    if (a >= agent::kNumActions) fail("policy picked an action outside the table");
  return 0;
}
