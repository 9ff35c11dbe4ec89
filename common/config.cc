// config.cc — typed, validating TOML reader.
#include "common/config.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/file_read.h"

namespace rocemu {

void ConfigErrors::add(std::string path, std::string value, std::string reason, int64_t line) {
  std::string s = path;
  if (!value.empty()) s += "=" + value;
  s += ": " + reason;
  if (line > 0) s += " (line " + std::to_string(line) + ")";
  problems_.push_back(std::move(s));
}

std::string ConfigErrors::format(std::string_view source) const {
  std::string out;
  for (const auto& p : problems_) {
    out += std::string(source);
    out += ": ";
    out += p;
    out += '\n';
  }
  return out;
}

ConfigReader::ConfigReader(const toml::table& table, std::string path, ConfigErrors& errors)
    : table_(&table), path_(std::move(path)), errors_(&errors) {}

bool ConfigReader::has(std::string_view key) const { return table_->contains(key); }

bool ConfigReader::is_string(std::string_view key) const {
  const toml::node* n = table_->get(key);
  return n != nullptr && n->is_string();
}

int64_t ConfigReader::line() const noexcept { return line_of(*table_); }

int64_t ConfigReader::line_of(const toml::node& n) noexcept {
  return static_cast<int64_t>(n.source().begin.line);
}

std::string ConfigReader::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string ConfigReader::show(const toml::node& n) {
  std::ostringstream os;
  if (n.is_table()) return "{...}";
  if (n.is_array()) return "[...]";
  n.visit([&](auto&& v) { os << v; });
  return os.str();
}

const toml::node* ConfigReader::get(std::string_view key) {
  read_.insert(std::string(key));
  return table_->get(key);
}

void ConfigReader::error(std::string_view key, std::string reason) {
  const toml::node* n = table_->get(key);
  errors_->add(key_path(key), n ? show(*n) : std::string(), std::move(reason),
               n ? line_of(*n) : line());
}

void ConfigReader::removed(std::string_view key, std::string_view why) {
  const toml::node* n = get(key);  // read: finish() does not call it unknown too
  if (n) errors_->add(key_path(key), show(*n), "key removed: " + std::string(why), line_of(*n));
}

int64_t ConfigReader::integer(std::string_view key, int64_t def, int64_t min, int64_t max) {
  const toml::node* n = get(key);
  if (!n) return def;
  int64_t v = 0;
  if (auto i = n->value_exact<int64_t>()) {
    v = *i;
  } else if (auto d = n->value_exact<double>(); d && std::floor(*d) == *d && std::isfinite(*d)) {
    // Range-check in double first: casting a double outside int64's range (1e30, 9.3e18) is
    // undefined behaviour. 2^63 itself is not an int64 either.
    if (*d < static_cast<double>(min) || *d > static_cast<double>(max) || *d >= 0x1p63 ||
        *d < -0x1p63) {
      errors_->add(key_path(key), show(*n),
                   "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                   line_of(*n));
      return def;
    }
    v = static_cast<int64_t>(*d);
  } else {
    errors_->add(key_path(key), show(*n), "expected an integer", line_of(*n));
    return def;
  }
  if (v < min || v > max) {
    errors_->add(key_path(key), show(*n),
                 "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                 line_of(*n));
    return def;
  }
  return v;
}

double ConfigReader::number(std::string_view key, double def, double min, double max) {
  const toml::node* n = get(key);
  if (!n) return def;
  std::optional<double> v = n->value<double>();  // accepts integers too
  if (!v || n->is_string() || n->is_boolean()) {
    errors_->add(key_path(key), show(*n), "expected a number", line_of(*n));
    return def;
  }
  if (!std::isfinite(*v) || *v < min || *v > max) {
    std::ostringstream r;
    r << "out of range [" << min << ", " << max << "]";
    errors_->add(key_path(key), show(*n), r.str(), line_of(*n));
    return def;
  }
  return *v;
}

bool ConfigReader::boolean(std::string_view key, bool def) {
  const toml::node* n = get(key);
  if (!n) return def;
  if (auto b = n->value_exact<bool>()) return *b;
  errors_->add(key_path(key), show(*n), "expected true or false", line_of(*n));
  return def;
}

std::string ConfigReader::string(std::string_view key, std::string def,
                                 const std::vector<std::string>& allowed) {
  const toml::node* n = get(key);
  if (!n) return def;
  auto s = n->value_exact<std::string>();
  if (!s) {
    errors_->add(key_path(key), show(*n), "expected a string", line_of(*n));
    return def;
  }
  if (!allowed.empty()) {
    bool ok = false;
    std::string list;
    for (const auto& a : allowed) {
      ok |= (a == *s);
      list += (list.empty() ? "" : ", ") + a;
    }
    if (!ok) {
      errors_->add(key_path(key), *s, "expected one of: " + list, line_of(*n));
      return def;
    }
  }
  return *s;
}

int64_t ConfigReader::required_integer(std::string_view key, int64_t min, int64_t max) {
  if (!has(key)) {
    read_.insert(std::string(key));
    errors_->add(key_path(key), "", "required key is missing", line());
    return min;
  }
  return integer(key, min, min, max);
}

double ConfigReader::required_number(std::string_view key, double min, double max) {
  if (!has(key)) {
    read_.insert(std::string(key));
    errors_->add(key_path(key), "", "required key is missing", line());
    return min;
  }
  return number(key, min, min, max);
}

std::string ConfigReader::required_string(std::string_view key) {
  if (!has(key)) {
    read_.insert(std::string(key));
    errors_->add(key_path(key), "", "required key is missing", line());
    return {};
  }
  return string(key, {});
}

std::vector<int64_t> ConfigReader::integer_array(std::string_view key, std::vector<int64_t> def,
                                                 int64_t min, int64_t max) {
  const toml::node* n = get(key);
  if (!n) return def;
  const toml::array* a = n->as_array();
  if (!a) {
    errors_->add(key_path(key), show(*n), "expected an array of integers", line_of(*n));
    return def;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    auto v = e.value_exact<int64_t>();
    const std::string p = key_path(key) + "[" + std::to_string(i) + "]";
    if (!v) {
      errors_->add(p, show(e), "expected an integer", line_of(e));
    } else if (*v < min || *v > max) {
      errors_->add(p, show(e),
                   "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                   line_of(e));
    } else {
      out.push_back(*v);
    }
  }
  return out;
}

std::vector<std::string> ConfigReader::string_array(std::string_view key,
                                                    std::vector<std::string> def) {
  const toml::node* n = get(key);
  if (!n) return def;
  const toml::array* a = n->as_array();
  if (!a) {
    errors_->add(key_path(key), show(*n), "expected an array of strings", line_of(*n));
    return def;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    if (auto v = e.value_exact<std::string>()) {
      out.push_back(*v);
    } else {
      errors_->add(key_path(key) + "[" + std::to_string(i) + "]", show(e), "expected a string",
                   line_of(e));
    }
  }
  return out;
}

std::optional<ConfigReader> ConfigReader::table(std::string_view key) {
  const toml::node* n = get(key);
  if (!n) return std::nullopt;
  const toml::table* t = n->as_table();
  if (!t) {
    errors_->add(key_path(key), show(*n), "expected a table", line_of(*n));
    return std::nullopt;
  }
  return ConfigReader(*t, key_path(key), *errors_);
}

std::vector<ConfigReader> ConfigReader::tables(std::string_view key) {
  std::vector<ConfigReader> out;
  const toml::node* n = get(key);
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) {
    errors_->add(key_path(key), show(*n),
                 "expected an array of tables ([[" + std::string(key) + "]])", line_of(*n));
    return out;
  }
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    const std::string p = key_path(key) + "[" + std::to_string(i) + "]";
    if (const toml::table* t = e.as_table()) {
      out.emplace_back(*t, p, *errors_);
    } else {
      errors_->add(p, show(e), "expected a table", line_of(e));
    }
  }
  return out;
}

void ConfigReader::finish() {
  for (const auto& [k, v] : *table_) {
    if (!read_.count(std::string(k.str()))) {
      errors_->add(key_path(k.str()), show(v), "unknown key", line_of(v));
    }
  }
}

// The largest configuration file read (a hand-written TOML is kilobytes; a topology with a
// thousand hosts some hundreds of kilobytes): bigger is not a configuration.
constexpr uint64_t kMaxConfigFileBytes = 64ull << 20;

toml::table parse_toml_file(const std::string& path) {
  std::string text;
  const std::string why = read_regular_file(path, kMaxConfigFileBytes, &text);
  if (!why.empty()) throw ConfigError(path + ": cannot read configuration file (" + why + ")");
  return parse_toml(text, path);
}

toml::table parse_toml(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << source << ":" << e.source().begin.line << ":" << e.source().begin.column
       << ": TOML parse error: " << e.description();
    throw ConfigError(os.str());
  }
}

std::string format_number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string resolve_beside(const std::string& path, const std::string& source) {
  namespace fs = std::filesystem;
  if (path.empty() || source.empty() || fs::exists(path) || !fs::path(path).is_relative())
    return path;
  const fs::path beside = fs::path(source).parent_path() / path;
  return fs::exists(beside) ? beside.string() : path;
}

std::string where_looked(const std::string& path, const std::string& source) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty() || fs::exists(path, ec) || !fs::path(path).is_relative()) return "";
  std::string out =
      "; looked in the working directory (" + (fs::current_path(ec) / path).string() + ")";
  if (!source.empty())
    out += " and beside " + source + " (" + (fs::path(source).parent_path() / path).string() + ")";
  return out;
}

}  // namespace rocemu
