// model_file.h — saving and loading exported agent weights (torch-free).
//
// Format (little-endian), version 1:
//   magic "ROCEMUAG" (8 bytes) | u32 format version | u32 ModelKind |
//   u32 dims[8] = {features, hidden, msg hidden, update hidden, readout hidden, actions,
//                  message-passing steps, ACC hidden} | u32 networks (1, or ports for ACC) |
//   u64 action_table_hash() | u64 payload floats | u64 FNV-1a of the payload bytes |
//   payload: float32 weights, layer by layer (w row-major [out][in], then b), network by
//   network, in the order of model_weights.h.
// A model trained with other dimensions or another action table, a truncated or corrupted
// file, weights that are NaN, infinite or absurd (|w| > 1e6), a file over 512 MiB, or a path
// that is not a regular file (/dev/zero, a FIFO, a directory) is refused with one
// ModelFileError naming the file and the reason.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/model_weights.h"

namespace rocemu::agent {

inline constexpr uint32_t kModelFormatVersion = 1;
/// Larger files are refused before they are read (an ACC model of 30,000 ports is ~500 MB).
inline constexpr uint64_t kMaxModelFileBytes = 512ull << 20;
/// A weight of larger magnitude is refused as corrupt (trained weights are O(1)).
inline constexpr float kMaxAbsWeight = 1e6f;

class ModelFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes `model` to `path` (via a temporary file renamed into place). Throws ModelFileError.
void save_model(const std::string& path, const Model& model);

/// Reads a model written by save_model. Throws ModelFileError (file, what was expected).
Model load_model(const std::string& path);

/// The bytes save_model writes for `model`.
std::vector<uint8_t> model_file_bytes(const Model& model);
/// Parses the bytes of a model file (what load_model does after reading the file); `name`
/// (the file's path) names it in errors. Throws ModelFileError.
Model parse_model(const std::vector<uint8_t>& in, const std::string& name);

}  // namespace rocemu::agent
