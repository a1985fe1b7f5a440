#include "common/log.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace clusterd {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kText};

std::string QuoteIfNeeded(const std::string& v) {
  bool plain = !v.empty();
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20) {
      plain = false;
      break;
    }
  }
  return plain ? v : nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

absl::Status ConfigureLogging(absl::string_view level, LogFormat format) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level \"", level, "\" (want trace|debug|info|warn|error|off)"));
  }
  auto logger = spdlog::stderr_color_mt("clusterd");
  spdlog::set_default_logger(logger);
  spdlog::set_level(lvl);
  g_format = format;
  if (format == LogFormat::kJson) {
    spdlog::set_pattern("%v");
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  }
  return absl::OkStatus();
}

void Log(spdlog::level::level_enum level, LogText component, LogText message,
         std::initializer_list<LogField> fields) {
  if (!spdlog::should_log(level)) return;
  if (g_format.load() == LogFormat::kJson) {
    nlohmann::ordered_json line;
    line["ts"] = absl::FormatTime(absl::RFC3339_full, absl::Now(), absl::UTCTimeZone());
    line["level"] = spdlog::level::to_string_view(level).data();
    line["component"] = std::string(component.text);
    line["msg"] = std::string(message.text);
    for (const auto& f : fields) line[std::string(f.key)] = f.value;
    spdlog::log(level, "{}", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  std::string text = absl::StrCat("[", absl::string_view(component.text.data(), component.text.size()), "] ",
                                  absl::string_view(message.text.data(), message.text.size()));
  for (const auto& f : fields) {
    absl::StrAppend(&text, " ", absl::string_view(f.key.data(), f.key.size()), "=", QuoteIfNeeded(f.value));
  }
  spdlog::log(level, "{}", text);
}

}  // namespace clusterd
