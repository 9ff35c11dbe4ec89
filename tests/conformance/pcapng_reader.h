// pcapng_reader.h — the few pcapng blocks a capture of Ethernet frames needs (the pcapng
// draft, IETF opsawg-pcapng: Section Header 0x0A0D0D0A, Interface Description 1, Enhanced
// Packet 6, Simple Packet 3); little-endian sections only, as tcpdump/tshark write them here.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace rocemu::test {

/// The frames of every Enhanced/Simple Packet Block of `path`, in order. Throws
/// std::runtime_error on an unreadable file, a big-endian section or a truncated block.
inline std::vector<std::vector<uint8_t>> read_pcapng(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::vector<uint8_t> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, d.data() + at, 4);
    return v;
  };
  std::vector<std::vector<uint8_t>> frames;
  size_t off = 0;
  while (off + 12 <= d.size()) {
    const uint32_t type = u32(off), len = u32(off + 4);
    if (len < 12 || len % 4 != 0 || off + len > d.size())
      throw std::runtime_error(path + ": truncated block at " + std::to_string(off));
    if (type == 0x0A0D0D0A && u32(off + 8) != 0x1A2B3C4D)
      throw std::runtime_error(path + ": big-endian section not supported");
    if (type == 6) {  // EPB: iface(4) ts(8) caplen(4) origlen(4) data
      const uint32_t cap = u32(off + 20);
      if (28 + cap > len) throw std::runtime_error(path + ": bad EPB length");
      frames.emplace_back(d.begin() + off + 28, d.begin() + off + 28 + cap);
    } else if (type == 3) {  // SPB: origlen(4) data
      const uint32_t orig = u32(off + 8);
      const uint32_t cap = orig < len - 16 ? orig : len - 16;
      frames.emplace_back(d.begin() + off + 12, d.begin() + off + 12 + cap);
    }
    off += len;
  }
  return frames;
}

}  // namespace rocemu::test
