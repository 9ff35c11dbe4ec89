// file_write.cc — see file_write.h.
#include "common/file_write.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace rocemu {

std::string output_file_problem(const std::string& path, bool probe_dir) {
  namespace fs = std::filesystem;
  if (path.empty()) return "no file name";
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    return "exists and is not a regular file (writing would replace it)";
  if (!probe_dir) return "";
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  fs::create_directories(dir, ec);
  if (ec) return "cannot create its directory " + dir.string() + ": " + ec.message();
  const fs::path probe = dir / (".rocemu-write-probe-" + std::to_string(::getpid()));
  std::FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) return "cannot create a file in " + dir.string() + ": " + std::strerror(errno);
  std::fclose(f);
  fs::remove(probe, ec);
  return "";
}

}  // namespace rocemu
