// cli_numbers.h — strict whole-string number parsing for the apps' flags and result files:
// the entire string must be the number (no sign for unsigned, no trailing text, no overflow).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace rocemu::apps {

/// Decimal int64; false if empty, trailing text or out of range.
inline bool parse_i64(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

/// Decimal uint64; false if empty, negative, trailing text or out of range.
inline bool parse_u64(const std::string& s, uint64_t& out) {
  if (s.empty() || s[0] == '-') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

/// A floating-point number; false if empty or trailing text.
inline bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0') return false;
  out = v;
  return true;
}

}  // namespace rocemu::apps
