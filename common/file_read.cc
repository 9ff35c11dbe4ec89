// file_read.cc — see file_read.h.
#include "common/file_read.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace rocemu {

std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string* out) {
  out->clear();
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec) return ec.message();
  if (!std::filesystem::exists(st)) return std::strerror(ENOENT);
  if (!std::filesystem::is_regular_file(st)) return "not a regular file";
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return "cannot read its size: " + ec.message();
  if (size > max_bytes)
    return std::to_string(size) + " bytes: larger than the limit of " + std::to_string(max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::strerror(errno);
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  // A file that grew since file_size() is read up to the limit checked, never beyond.
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return "read failed";
  *out = std::move(text);
  return "";
}

}  // namespace rocemu
