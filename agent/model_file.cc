// model_file.cc — the versioned, checksummed model file (format in model_file.h).
#include "agent/model_file.h"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/file_read.h"
#include "common/file_write.h"

namespace rocemu::agent {

namespace {
static_assert(std::endian::native == std::endian::little, "model files are little-endian");

constexpr char kMagic[8] = {'R', 'O', 'C', 'E', 'M', 'U', 'A', 'G'};
constexpr int kNumDims = 8;
constexpr uint32_t kDims[kNumDims] = {kNumFeatures,   kHidden,     kMsgHidden, kUpdHidden,
                                      kReadoutHidden, kNumActions, kMpSteps,   kAccHidden};
constexpr const char* kDimNames[kNumDims] = {
    "features",       "hidden",  "message hidden",        "update hidden",
    "readout hidden", "actions", "message-passing steps", "ACC hidden"};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 4 * kNumDims + 4 + 8 + 8 + 8;

uint64_t fnv1a(const uint8_t* p, size_t n) noexcept {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.insert(out.end(), b, b + sizeof(T));
}

template <class T>
T get(const std::vector<uint8_t>& in, size_t& at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}

template <class Net>
void append_floats(std::vector<float>& out, const Net& net) {
  net.for_each_layer([&](const float* w, size_t nw, const float* b, size_t nb) {
    out.insert(out.end(), w, w + nw);
    out.insert(out.end(), b, b + nb);
  });
}

template <class Net>
size_t read_floats(const float* in, Net& net) {
  size_t at = 0;
  net.for_each_layer([&](float* w, size_t nw, float* b, size_t nb) {
    std::memcpy(w, in + at, nw * sizeof(float));
    at += nw;
    std::memcpy(b, in + at, nb * sizeof(float));
    at += nb;
  });
  return at;
}

size_t floats_of(const MpnnWeights& w) {
  size_t n = 0;
  w.for_each_layer([&](const float*, size_t nw, const float*, size_t nb) { n += nw + nb; });
  return n;
}
size_t floats_of(const AccNetWeights& w) {
  size_t n = 0;
  w.for_each_layer([&](const float*, size_t nw, const float*, size_t nb) { n += nw + nb; });
  return n;
}

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw ModelFileError("model file " + path + ": " + why);
}
}  // namespace

std::vector<uint8_t> model_file_bytes(const Model& model) {
  std::vector<float> payload;
  uint32_t nets = 1;
  if (model.kind == ModelKind::kGraphCc) {
    append_floats(payload, model.mpnn);
  } else {
    nets = static_cast<uint32_t>(model.acc.size());
    for (const auto& n : model.acc) append_floats(payload, n);
  }
  const auto* pb = reinterpret_cast<const uint8_t*>(payload.data());
  const size_t payload_bytes = payload.size() * sizeof(float);
  std::vector<uint8_t> out;
  out.reserve(kHeaderBytes + payload_bytes);
  out.insert(out.end(), kMagic, kMagic + 8);
  put<uint32_t>(out, kModelFormatVersion);
  put<uint32_t>(out, static_cast<uint32_t>(model.kind));
  for (uint32_t d : kDims) put<uint32_t>(out, d);
  put<uint32_t>(out, nets);
  put<uint64_t>(out, action_table_hash());
  put<uint64_t>(out, payload.size());
  put<uint64_t>(out, fnv1a(pb, payload_bytes));
  out.insert(out.end(), pb, pb + payload_bytes);
  return out;
}

void save_model(const std::string& path, const Model& model) {
  if (const std::string why = output_file_problem(path, false); !why.empty()) fail(path, why);
  const std::vector<uint8_t> out = model_file_bytes(model);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) fail(path, std::string("cannot open for writing: ") + std::strerror(errno));
    f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
    if (!f) fail(path, "write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fail(path, std::string("cannot rename into place: ") + std::strerror(errno));
}

Model load_model(const std::string& path) {
  // Only a regular file of plausible size: /dev/zero, a FIFO or a directory would be read
  // forever or make no sense.
  std::string text;
  const std::string why = read_regular_file(path, kMaxModelFileBytes, &text);
  if (!why.empty()) fail(path, "cannot open: " + why);
  const std::vector<uint8_t> in(text.begin(), text.end());
  return parse_model(in, path);
}

Model parse_model(const std::vector<uint8_t>& in, const std::string& path) {
  if (in.size() < kHeaderBytes)
    fail(path, "truncated: " + std::to_string(in.size()) + " bytes, header needs " +
                   std::to_string(kHeaderBytes));
  if (std::memcmp(in.data(), kMagic, 8) != 0) fail(path, "bad magic (not a rocemu agent model)");
  size_t at = 8;
  const auto version = get<uint32_t>(in, at);
  if (version != kModelFormatVersion)
    fail(path, "format version " + std::to_string(version) + ", expected " +
                   std::to_string(kModelFormatVersion));
  Model m;
  const auto kind = get<uint32_t>(in, at);
  if (kind != static_cast<uint32_t>(ModelKind::kGraphCc) &&
      kind != static_cast<uint32_t>(ModelKind::kAccPerPort))
    fail(path, "unknown model kind " + std::to_string(kind));
  m.kind = static_cast<ModelKind>(kind);
  for (int i = 0; i < kNumDims; ++i) {
    const auto d = get<uint32_t>(in, at);
    if (d != kDims[i])
      fail(path, std::string("dimension mismatch: ") + kDimNames[i] + "=" + std::to_string(d) +
                     ", this build expects " + std::to_string(kDims[i]));
  }
  const auto nets = get<uint32_t>(in, at);
  const auto hash = get<uint64_t>(in, at);
  if (hash != action_table_hash()) fail(path, "trained with a different ECN action table");
  const auto nfloats = get<uint64_t>(in, at);
  const auto checksum = get<uint64_t>(in, at);
  const size_t per_net =
      m.kind == ModelKind::kGraphCc ? floats_of(m.mpnn) : floats_of(AccNetWeights{});
  if (m.kind == ModelKind::kGraphCc && nets != 1) fail(path, "a GraphCC model has one network");
  if (nets == 0 || nets > 1'000'000)
    fail(path, "implausible network count " + std::to_string(nets));
  if (nfloats != per_net * nets)
    fail(path, "payload of " + std::to_string(nfloats) + " floats, expected " +
                   std::to_string(per_net * nets));
  if (in.size() - kHeaderBytes != nfloats * sizeof(float))
    fail(path, "payload is " + std::to_string(in.size() - kHeaderBytes) + " bytes, header says " +
                   std::to_string(nfloats * sizeof(float)) + " (truncated or padded)");
  if (fnv1a(in.data() + kHeaderBytes, nfloats * sizeof(float)) != checksum)
    fail(path, "checksum mismatch (file corrupt)");
  std::vector<float> payload(nfloats);
  std::memcpy(payload.data(), in.data() + kHeaderBytes, nfloats * sizeof(float));
  // A checksum proves the bytes are what was written, not that they are weights: NaN, Inf or
  // absurd magnitudes (nothing DQN training produces) would act as garbage.
  for (size_t i = 0; i < payload.size(); ++i) {
    if (!std::isfinite(payload[i])) fail(path, "weight " + std::to_string(i) + " is not finite");
    if (std::fabs(payload[i]) > kMaxAbsWeight)
      fail(path, "weight " + std::to_string(i) + " = " + std::to_string(payload[i]) +
                     " is implausible (|w| > " + std::to_string(kMaxAbsWeight) + ")");
  }
  if (m.kind == ModelKind::kGraphCc) {
    read_floats(payload.data(), m.mpnn);
  } else {
    m.acc.resize(nets);
    for (uint32_t i = 0; i < nets; ++i) read_floats(payload.data() + i * per_net, m.acc[i]);
  }
  return m;
}

}  // namespace rocemu::agent
