// file_read.h — the one way rocemu reads a whole input file (configuration, flow-size CDF,
// model): only a regular file, only up to a size that makes sense for what it holds. A path
// to /dev/zero, a FIFO or a directory is refused at once instead of being read forever.
#ifndef ROCEMU_COMMON_FILE_READ_H_
#define ROCEMU_COMMON_FILE_READ_H_

#include <cstdint>
#include <string>

namespace rocemu {

/// Reads the whole file at `path` into *out. Returns "" on success, otherwise why it could
/// not ("No such file or directory", "not a regular file", "N bytes: larger than the limit of M",
/// or the system's reason); *out is then left empty. The caller wraps the reason in its own error
/// type, with the path and what the file was meant to be.
std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string* out);

}  // namespace rocemu

#endif  // ROCEMU_COMMON_FILE_READ_H_
