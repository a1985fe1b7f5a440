#include "server/original_flags.h"

#include <optional>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clusterd::server {
namespace {

enum class Kind { kBool, kInt, kString };

struct OriginalFlag {
  std::string_view name;
  Kind kind;
};

constexpr OriginalFlag kOriginalFlags[] = {
    {"version", Kind::kBool},         {"logLevel", Kind::kInt},
    {"logFile", Kind::kString},       {"maxAge", Kind::kInt},
    {"maxBackups", Kind::kInt},       {"useProxy", Kind::kBool},
    {"enable-healthz", Kind::kBool},  {"healthz-address", Kind::kInt},
    {"tls-cert-file", Kind::kString}, {"tls-private-key-file", Kind::kString},
};

const OriginalFlag* FindOriginalFlag(std::string_view name) {
  for (const OriginalFlag& f : kOriginalFlags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Go's strconv.ParseBool.
std::optional<bool> ParseGoBool(std::string_view v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False")
    return false;
  return std::nullopt;
}

absl::Status Refused(const std::string& given, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("original flag ", given, ": ", why));
}

// The clusterd arguments for one original flag with its value.
absl::StatusOr<std::vector<std::string>> Translate(const OriginalFlag& flag,
                                                   const std::string& given,
                                                   const std::string& value) {
  const std::string_view name = flag.name;
  std::optional<bool> on;
  int64_t number = 0;
  if (flag.kind == Kind::kBool) {
    on = ParseGoBool(value);
    if (!on.has_value()) return Refused(given, "want true or false");
  } else if (flag.kind == Kind::kInt && !absl::SimpleAtoi(value, &number)) {
    return Refused(given, "want an integer");
  }
  if (name == "version") return std::vector<std::string>{*on ? "--version" : ""};
  if (name == "logLevel") {
    static constexpr const char* kLevels[] = {"debug", "info", "warning", "error", "critical"};
    if (number < -1 || number > 3) {
      return Refused(given,
                     "the original's levels are -1 (debug) to 3 (critical); or use "
                     "--log-level=trace|debug|info|warn|error|critical|off");
    }
    return std::vector<std::string>{absl::StrCat("--log-level=", kLevels[number + 1])};
  }
  if (name == "logFile") {
    if (value.empty())
      return Refused(given, "empty path; without --log-file clusterd logs to stderr");
    return std::vector<std::string>{absl::StrCat("--log-file=", value)};
  }
  if (name == "maxAge") {
    if (number < 7 || number > 700) {
      return Refused(given, "days must be in [7, 700] as in the original; or use --log-max-age");
    }
    return std::vector<std::string>{absl::StrCat("--log-max-age=", number)};
  }
  if (name == "maxBackups") {
    if (number <= 0 || number > 180) {
      return Refused(given,
                     "backups must be in (0, 180] as in the original; or use --log-max-backups");
    }
    return std::vector<std::string>{absl::StrCat("--log-max-backups=", number)};
  }
  if (name == "useProxy") {
    return std::vector<std::string>{*on ? "--grpc-listen=127.0.0.1:8899" : ""};
  }
  if (name == "enable-healthz") {
    if (!*on) {
      return Refused(given,
                     "clusterd always serves /healthz, /readyz and /metrics (its probes need "
                     "them); keep them on loopback with --http-listen=127.0.0.1:PORT");
    }
    return std::vector<std::string>{"--http-open-root"};
  }
  if (name == "healthz-address") {
    if (number < 1025 || number > 65535) {
      return Refused(given, "the port must be in [1025, 65535]; or use --http-listen=HOST:PORT");
    }
    return std::vector<std::string>{absl::StrCat("--http-listen=0.0.0.0:", number)};
  }
  if (name == "tls-cert-file")
    return std::vector<std::string>{absl::StrCat("--http-tls-cert=", value)};
  return std::vector<std::string>{absl::StrCat("--http-tls-key=", value)};  // tls-private-key-file
}

}  // namespace

absl::StatusOr<OriginalFlagTranslation> TranslateOriginalFlags(
    const std::vector<std::string>& argv) {
  OriginalFlagTranslation out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (i == 0 || arg == "--" || arg.size() < 2 || arg[0] != '-') {
      out.args.push_back(arg);
      if (arg == "--") {
        out.args.insert(out.args.end(), argv.begin() + static_cast<long>(i) + 1, argv.end());
        break;
      }
      continue;
    }
    std::string_view body = std::string_view(arg).substr(arg[1] == '-' ? 2 : 1);
    const size_t eq = body.find('=');
    const std::string_view name = body.substr(0, eq);
    const OriginalFlag* flag = FindOriginalFlag(name);
    // --version is clusterd's own flag too; both mean the same.
    if (flag == nullptr || arg == "--version") {
      out.args.push_back(arg);
      continue;
    }
    std::string value;
    std::string given = arg;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (flag->kind == Kind::kBool) {
      value = "true";
    } else if (i + 1 < argv.size()) {
      value = argv[++i];
      given = absl::StrCat(arg, " ", value);
    } else {
      return Refused(arg, "needs a value");
    }
    absl::StatusOr<std::vector<std::string>> args = Translate(*flag, given, value);
    if (!args.ok()) return args.status();
    std::vector<std::string> kept;
    for (std::string& a : *args) {
      if (!a.empty()) kept.push_back(std::move(a));
    }
    out.notes.push_back(absl::StrCat("original flag ", given, " read as ",
                                     kept.empty() ? "the default" : absl::StrJoin(kept, " ")));
    out.args.insert(out.args.end(), kept.begin(), kept.end());
  }
  return out;
}

}  // namespace clusterd::server
