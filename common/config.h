// config.h — reading TOML into typed structs, reporting every problem at once.
//
// A ConfigReader wraps one TOML table and the dotted path that leads to it. Each typed
// getter reads a key (or returns its default), checks range and type, and records any
// problem as `path=value: reason (line N)` in the shared ConfigErrors. Keys never read are
// reported as unknown when finish() is called, so misspellings do not pass silently.
// Callers parse everything, then check ConfigErrors::empty() and refuse to start (exit 2).
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace rocemu {

inline constexpr int kExitUsage = 2;  // usage or configuration error

class ConfigErrors {
 public:
  void add(std::string path, std::string value, std::string reason, int64_t line = 0);
  bool empty() const noexcept { return problems_.empty(); }
  size_t size() const noexcept { return problems_.size(); }
  const std::vector<std::string>& problems() const noexcept { return problems_; }
  /// All problems, one per line, prefixed with `source` (the file name).
  std::string format(std::string_view source) const;

 private:
  std::vector<std::string> problems_;
};

/// Thrown by load functions when the configuration is invalid; what() lists every problem.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigReader {
 public:
  ConfigReader(const toml::table& table, std::string path, ConfigErrors& errors);

  const std::string& path() const noexcept { return path_; }
  bool has(std::string_view key) const;
  /// True if `key` is present and a string (for keys that take a number or a word).
  bool is_string(std::string_view key) const;
  /// Line of the table in the source (0 if unknown).
  int64_t line() const noexcept;

  int64_t integer(std::string_view key, int64_t def, int64_t min, int64_t max);
  double number(std::string_view key, double def, double min, double max);
  bool boolean(std::string_view key, bool def);
  std::string string(std::string_view key, std::string def,
                     const std::vector<std::string>& allowed = {});
  /// Required variants: a missing key is an error (the returned value is then unspecified).
  int64_t required_integer(std::string_view key, int64_t min, int64_t max);
  double required_number(std::string_view key, double min, double max);
  std::string required_string(std::string_view key);
  std::vector<int64_t> integer_array(std::string_view key, std::vector<int64_t> def, int64_t min,
                                     int64_t max);
  std::vector<std::string> string_array(std::string_view key, std::vector<std::string> def);

  /// Sub-table `key`, if present (an error if present but not a table).
  std::optional<ConfigReader> table(std::string_view key);
  /// Array of tables `key` (e.g. [[links]]); empty if absent.
  std::vector<ConfigReader> tables(std::string_view key);

  /// Records an error for `key` of this table (for cross-field checks).
  void error(std::string_view key, std::string reason);
  /// A key this table no longer has: if present, an error `path=value: key removed: why`
  /// (instead of "unknown key", so an old file is told what happened to it).
  void removed(std::string_view key, std::string_view why);
  /// Reports every key of this table that no getter read as unknown.
  void finish();

  ConfigErrors& errors() noexcept { return *errors_; }

 private:
  const toml::node* get(std::string_view key);
  std::string key_path(std::string_view key) const;
  static std::string show(const toml::node& n);
  static int64_t line_of(const toml::node& n) noexcept;

  const toml::table* table_;
  std::string path_;
  ConfigErrors* errors_;
  std::unordered_set<std::string> read_;
};

/// Parses `path` as TOML. Throws ConfigError naming the file and the parse error with its
/// line, or that the file cannot be read.
toml::table parse_toml_file(const std::string& path);
/// Parses TOML text; `source` (a file name) names it in errors and in the nodes' source
/// regions. Throws ConfigError `source:line:column: TOML parse error: ...`.
toml::table parse_toml(std::string_view text, const std::string& source);

/// A number as a user would write it in a configuration file: the shortest text that reads
/// back as `v` ("200", "0.01", "1e-09"), never std::to_string's "200.000000".
std::string format_number(double v);

/// A path named in a run file: as given if it exists or is absolute, else beside the file
/// that named it (`source`: that file's path; "" for none) if it exists there, else as given
/// (so the error names what the user wrote).
std::string resolve_beside(const std::string& path, const std::string& source);
/// For an error about a file resolve_beside() did not find: where it looked, as
/// "; looked in the working directory (/w/x.txt) and beside run.toml (/d/x.txt)" — "" when
/// `path` exists or is absolute, or there was no `source`.
std::string where_looked(const std::string& path, const std::string& source);

}  // namespace rocemu
