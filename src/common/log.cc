#include "common/log.h"

#include <atomic>
#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/log_file.h"
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

absl::Status ConfigureLogging(const LogOptions& options) {
  auto lvl = spdlog::level::from_str(options.level);
  if (lvl == spdlog::level::off && options.level != "off") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown log level \"", options.level,
        "\" (want trace|debug|info|warn|error|critical|off)"));
  }
  std::shared_ptr<spdlog::logger> logger;
  if (options.file.empty()) {
    logger = std::make_shared<spdlog::logger>(
        "clusterd", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  } else {
    if (options.max_file_bytes == 0 || options.max_backups == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("log file ", options.file, ": the size and the number of backups must be > 0"));
    }
    absl::StatusOr<std::shared_ptr<spdlog::sinks::sink>> sink = OpenRotatingLogFile(
        options.file, options.max_file_bytes, options.max_backups, options.max_age_days);
    if (!sink.ok()) return sink.status();
    logger = std::make_shared<spdlog::logger>("clusterd", *std::move(sink));
    // A file buffers: warnings and worse reach it at once, the rest within a second.
    logger->flush_on(spdlog::level::warn);
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(lvl);
  if (!options.file.empty()) spdlog::flush_every(std::chrono::seconds(1));
  g_format = options.format;
  if (options.format == LogFormat::kJson) {
    spdlog::set_pattern("%v");
  } else {
    spdlog::set_pattern(options.file.empty() ? "%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v"
                                             : "%Y-%m-%dT%H:%M:%S.%e%z %l %v");
  }
  return absl::OkStatus();
}

absl::Status ConfigureLogging(absl::string_view level, LogFormat format) {
  LogOptions options;
  options.level = std::string(level);
  options.format = format;
  return ConfigureLogging(options);
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
