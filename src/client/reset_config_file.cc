#include "client/reset_config_file.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/check_code.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "recovery/vocabulary.h"

namespace clusterd::client {
namespace {

using nlohmann::ordered_json;

// Go's decoder: absent keys keep the zero value, a present key of the wrong type is an error.
absl::Status ReadInt(const ordered_json& obj, std::string_view key, int64_t& out) {
  if (!obj.contains(key)) return absl::OkStatus();
  CLUSTERD_ASSIGN_OR_RETURN(out, GetInt64(obj, key));
  return absl::OkStatus();
}
absl::Status ReadBool(const ordered_json& obj, std::string_view key, bool& out) {
  if (!obj.contains(key)) return absl::OkStatus();
  CLUSTERD_ASSIGN_OR_RETURN(out, GetBool(obj, key));
  return absl::OkStatus();
}
absl::Status ReadString(const ordered_json& obj, std::string_view key, std::string& out) {
  if (!obj.contains(key) || obj.at(key).is_null()) return absl::OkStatus();
  CLUSTERD_ASSIGN_OR_RETURN(out, GetString(obj, key));
  return absl::OkStatus();
}

constexpr std::array<std::string_view, 5> kActionNames = {
    "none", "holdWorkers", "exit", "restartFaultyWorkers", "restartAllWorkers"};

}  // namespace

bool ResetConfig::Lists(int64_t rank) const {
  return std::any_of(ranks.begin(), ranks.end(),
                     [rank](const ResetRank& r) { return r.rank_id == rank; });
}

bool ResetConfig::HotResetMode() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const ResetRank& r) {
    return r.policy == "reset" || r.policy == "restart";
  });
}

absl::StatusOr<ResetConfig> ParseResetConfig(std::string_view reset_json) {
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json body, ParseJson(reset_json, recovery::kResetJsonKey));
  if (!body.is_object()) return absl::InvalidArgumentError("reset.json is not a JSON object");
  ResetConfig config;
  if (body.size() == 1 && StringOr(body, "status", "") == "initializing") {
    config.initializing = true;
    return config;
  }
  if (body.contains("RankList") && !body["RankList"].is_null()) {
    const ordered_json& list = body["RankList"];
    if (!list.is_array()) return absl::InvalidArgumentError("reset.json: RankList is not an array");
    for (size_t i = 0; i < list.size(); ++i) {
      const ordered_json& entry = list[i];
      if (!entry.is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat("reset.json: RankList[", i, "] is not an object"));
      }
      ResetRank rank;
      absl::Status st = ReadInt(entry, "RankId", rank.rank_id);
      if (st.ok()) st = ReadString(entry, "Status", rank.status);
      if (st.ok()) st = ReadString(entry, "Policy", rank.policy);
      if (!st.ok()) return Annotate(st, absl::StrCat("reset.json: RankList[", i, "]"));
      config.ranks.push_back(std::move(rank));
    }
  }
  absl::Status st = ReadInt(body, "UpdateTime", config.update_time);
  if (st.ok()) st = ReadInt(body, "RetryTime", config.retry_time);
  if (st.ok()) st = ReadBool(body, "FaultFlushing", config.fault_flushing);
  if (st.ok()) st = ReadInt(body, "GracefulExit", config.graceful_exit);
  if (st.ok()) st = ReadBool(body, "RestartFaultProcess", config.restart_fault_process);
  if (!st.ok()) return Annotate(st, "reset.json");
  return config;
}

absl::Status VerifyResetCheckCode(std::string_view reset_json, std::string_view check_code) {
  const std::string want = Sha256Hex(reset_json);
  std::string got(check_code);
  absl::StripAsciiWhitespace(&got);
  if (got != want) {
    return absl::DataLossError(absl::StrCat("reset.json checkCode mismatch: ConfigMap says ", got,
                                            ", content hashes to ", want));
  }
  return absl::OkStatus();
}

std::string_view ResetActionName(ResetAction action) {
  return kActionNames[static_cast<size_t>(action)];
}

ResetDirective DecideResetAction(const std::optional<ResetConfig>& previous,
                                 const ResetConfig& current,
                                 const std::vector<int64_t>& own_ranks) {
  ResetDirective directive;
  if (current.initializing) return directive;
  for (int64_t rank : own_ranks) {
    if (current.Lists(rank)) directive.ranks.push_back(rank);
  }
  const bool started = previous.has_value();
  if (!directive.ranks.empty()) {
    if (current.restart_fault_process) {
      directive.action = ResetAction::kRestartFaultyWorkers;
    } else {
      directive.action = started ? ResetAction::kExit : ResetAction::kHoldWorkers;
    }
    return directive;
  }
  if (started && !previous->initializing && previous->retry_time != current.retry_time) {
    directive.action = ResetAction::kRestartAllWorkers;
    return directive;
  }
  if (current.fault_flushing) directive.action = ResetAction::kHoldWorkers;
  return directive;
}

absl::StatusOr<std::string> ResetConfigFile::ReadRaw(std::string_view name, bool required) const {
  const std::string path = absl::StrCat(directory_, "/", Sv(name));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!required) return std::string();
    return absl::NotFoundError(absl::StrCat("cannot open ", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<ResetConfig> ResetConfigFile::Read() const {
  CLUSTERD_ASSIGN_OR_RETURN(std::string text, ReadRaw(recovery::kResetJsonKey, true));
  CLUSTERD_ASSIGN_OR_RETURN(std::string check, ReadRaw(recovery::kCheckCodeKey, false));
  if (!check.empty()) CLUSTERD_RETURN_IF_ERROR(VerifyResetCheckCode(text, check));
  return ParseResetConfig(text);
}

absl::StatusOr<std::optional<ResetDirective>> ResetConfigFile::Poll(
    const std::vector<int64_t>& own_ranks) {
  CLUSTERD_ASSIGN_OR_RETURN(std::string text, ReadRaw(recovery::kResetJsonKey, true));
  if (last_.has_value() && text == last_text_) return std::optional<ResetDirective>();
  CLUSTERD_ASSIGN_OR_RETURN(std::string check, ReadRaw(recovery::kCheckCodeKey, false));
  if (!check.empty()) CLUSTERD_RETURN_IF_ERROR(VerifyResetCheckCode(text, check));
  CLUSTERD_ASSIGN_OR_RETURN(ResetConfig config, ParseResetConfig(text));
  ResetDirective directive = DecideResetAction(last_, config, own_ranks);
  last_ = std::move(config);
  last_text_ = std::move(text);
  return std::optional<ResetDirective>(std::move(directive));
}

}  // namespace clusterd::client
