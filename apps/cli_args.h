// cli_args.h — walks a GNU-style command line for the apps' own parsers: "--flag=value" or
// "--flag value" (and "-x value" for short flags); "--" ends the options, and what follows it
// (EAL arguments) is kept apart. A flag whose value is missing adds "FLAG: needs a value" to
// the caller's error list, so every problem of a command line is reported at once.
#pragma once

#include <string>
#include <vector>

namespace rocemu::apps {

class ArgCursor {
 public:
  ArgCursor(int argc, char** argv, std::vector<std::string>& errors)
      : argc_(argc), argv_(argv), errors_(errors) {}

  /// Moves to the next argument; false at the end or at "--" (see at_separator()).
  bool next() {
    if (++i_ >= argc_) return false;
    flag_ = argv_[i_];
    has_inline_ = false;
    if (flag_ == "--") {
      separator_ = true;
      return false;
    }
    if (flag_.rfind("--", 0) == 0) {
      if (const auto eq = flag_.find('='); eq != std::string::npos) {
        inline_ = flag_.substr(eq + 1);
        flag_.resize(eq);
        has_inline_ = true;
      }
    }
    return true;
  }
  /// The current argument without its "=value".
  const std::string& flag() const noexcept { return flag_; }
  /// The current flag's value (after '=', else the next argument, which it consumes).
  /// false, with "FLAG: needs a value" added to the errors, if there is none.
  bool value(std::string& out) {
    if (has_inline_) {
      out = inline_;
      return true;
    }
    if (i_ + 1 >= argc_) {
      errors_.push_back(flag_ + ": needs a value");
      return false;
    }
    out = argv_[++i_];
    return true;
  }
  /// True once next() stopped at "--".
  bool at_separator() const noexcept { return separator_; }
  /// The arguments after "--" (empty if there was none).
  std::vector<std::string> rest() const {
    std::vector<std::string> r;
    if (separator_)
      for (int k = i_ + 1; k < argc_; ++k) r.emplace_back(argv_[k]);
    return r;
  }

 private:
  int argc_;
  char** argv_;
  std::vector<std::string>& errors_;
  int i_ = 0;  // argv_[0] is the program
  std::string flag_, inline_;
  bool has_inline_ = false, separator_ = false;
};

}  // namespace rocemu::apps
