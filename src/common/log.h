#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

namespace clusterd {

// Structured logging: every line carries a component name and key=value fields, e.g.
//   LogInfo("store", "file skipped", {{"path", p}, {"reason", "malformed JSON"}});
// The text sink prints `... [store] file skipped path="..." reason="..."`;
// with --log-format=json each line is one JSON object.
// Accepts both string_view flavours: Debian's Abseil is built with its own absl::string_view.
struct LogText {
  std::string_view text;
  LogText(std::string_view t) : text(t) {}
  LogText(absl::string_view t) : text(t.data(), t.size()) {}
  LogText(const char* t) : text(t) {}
  LogText(const std::string& t) : text(t) {}
};

struct LogField {
  std::string_view key;
  std::string value;
  LogField(LogText k, std::string_view v) : key(k.text), value(v) {}
  LogField(LogText k, absl::string_view v) : key(k.text), value(v) {}
  LogField(LogText k, const std::string& v) : key(k.text), value(v) {}
  LogField(LogText k, const char* v) : key(k.text), value(v) {}
  template <typename T>
    requires std::is_arithmetic_v<T>
  LogField(LogText k, T v) : key(k.text), value(std::to_string(v)) {}
  LogField(LogText k, const absl::Status& s) : key(k.text), value(s.ToString()) {}
};

enum class LogFormat { kText, kJson };

// Configures the process logger (stderr). level: trace, debug, info, warn, error, off.
absl::Status ConfigureLogging(absl::string_view level, LogFormat format);

void Log(spdlog::level::level_enum level, LogText component, LogText message,
         std::initializer_list<LogField> fields = {});

inline void LogDebug(LogText c, LogText m, std::initializer_list<LogField> f = {}) {
  Log(spdlog::level::debug, c, m, f);
}
inline void LogInfo(LogText c, LogText m, std::initializer_list<LogField> f = {}) {
  Log(spdlog::level::info, c, m, f);
}
inline void LogWarn(LogText c, LogText m, std::initializer_list<LogField> f = {}) {
  Log(spdlog::level::warn, c, m, f);
}
inline void LogError(LogText c, LogText m, std::initializer_list<LogField> f = {}) {
  Log(spdlog::level::err, c, m, f);
}

}  // namespace clusterd
