// frame_fixture.h — reads tests/nic/data/rxe_frames.txt (frames real Linux rxe put on the
// wire; source noted in the file) for the unit tests. Run with the test's source dir as cwd.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rocemu::test {

struct FixtureFrame {
  std::string name;
  uint8_t opcode = 0;
  std::vector<uint8_t> bytes;
};

inline std::vector<FixtureFrame> load_rxe_frames(const std::string& path = "data/rxe_frames.txt") {
  std::vector<FixtureFrame> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    FixtureFrame f;
    std::string op, hex;
    ls >> f.name >> op >> hex;
    f.opcode = static_cast<uint8_t>(std::stoul(op, nullptr, 16));
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
      f.bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    out.push_back(std::move(f));
  }
  return out;
}

/// Offset of the ICRC in an Ethernet/IPv4 or Ethernet/IPv6 RoCEv2 frame (from the IP length).
inline uint32_t fixture_icrc_off(const std::vector<uint8_t>& f) {
  if (f[14] >> 4 == 4) return 14 + (uint32_t{f[16]} << 8 | f[17]) - 4;
  return 14 + 40 + (uint32_t{f[18]} << 8 | f[19]) - 4;
}

}  // namespace rocemu::test
