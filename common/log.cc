// log.cc — spdlog set-up.
#include "common/log.h"

#include <cstdlib>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace rocemu {

bool setup_logging(std::string_view level) {
  std::string name(level);
  if (name.empty()) {
    const char* env = std::getenv("ROCEMU_LOG");
    name = env ? env : "info";
  }
  static bool sink_set = false;
  if (!sink_set) {
    auto logger = spdlog::stderr_color_mt("rocemu");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    sink_set = true;
  }
  const auto lvl = spdlog::level::from_str(name);
  if (lvl == spdlog::level::off && name != "off") return false;
  spdlog::set_level(lvl);
  return true;
}

}  // namespace rocemu
