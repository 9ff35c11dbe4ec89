// file_write.h — the check every output file written beside its place and renamed into it
// (a model, a training checkpoint) passes first. A rename replaces whatever the path names:
// as root, `--model-out /dev/null` would have put a regular file where the device was.
#ifndef ROCEMU_COMMON_FILE_WRITE_H_
#define ROCEMU_COMMON_FILE_WRITE_H_

#include <string>

namespace rocemu {

/// Why `path` cannot take such an output file, or "" if it can: it exists and is not a
/// regular file (a directory, a device, a FIFO), or (with `probe_dir`) its directory does not
/// exist and cannot be created, or no file can be created in it. With `probe_dir` the
/// directory is created when missing (as rocemu-sim creates --out) and a file is created and
/// removed there, so that a long run finds out at its start, not at its end.
std::string output_file_problem(const std::string& path, bool probe_dir);

}  // namespace rocemu

#endif  // ROCEMU_COMMON_FILE_WRITE_H_
