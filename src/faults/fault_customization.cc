#include "faults/fault_customization.h"

#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "model/go_json.h"

namespace clusterd::faults {
namespace {

using nlohmann::ordered_json;
namespace go_json = model::go_json;

constexpr int64_t kUnsetRelease = int64_t{1} << 32;

// A FaultFrequency / FaultDuration element decoded into the Go schema (zero when absent).
struct RawEntry {
  std::vector<std::string> event_ids;
  int64_t time_window = 0, times = 0, release_time_window = 0;
  int64_t fault_timeout = 0, recover_timeout = 0;
  std::string fault_handling;
};

absl::StatusOr<RawEntry> DecodeEntry(const ordered_json& e, std::string_view what) {
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(e, what, /*allow_null=*/true));
  RawEntry raw;
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadStringArray(e, "EventId", &raw.event_ids));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(e, "TimeWindow", &raw.time_window));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(e, "Times", &raw.times));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(e, "ReleaseTimeWindow", &raw.release_time_window));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(e, "FaultTimeout", &raw.fault_timeout));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(e, "RecoverTimeout", &raw.recover_timeout));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(e, "FaultHandling", &raw.fault_handling));
  return raw;
}

absl::StatusOr<std::vector<RawEntry>> DecodeList(const ordered_json& doc, std::string_view key) {
  std::vector<RawEntry> out;
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("faultCustomization.json: ", Sv(key), " is ",
                                                   it->type_name(), ", want array"));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    auto raw = DecodeEntry((*it)[i], key);
    if (!raw.ok()) {
      return Annotate(raw.status(),
                      absl::StrCat("faultCustomization.json: ", Sv(key), "[", i, "]"));
    }
    out.push_back(*std::move(raw));
  }
  return out;
}

// §5.1: each field independently; missing, 0 or out of range -> default.
absl::StatusOr<GraceTolerance> DecodeGrace(const ordered_json& doc, PolicyIssues* issues) {
  GraceTolerance grace;
  auto it = doc.find("GraceTolerance");
  if (it == doc.end() || it->is_null()) return grace;
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(*it, "faultCustomization.json: GraceTolerance"));
  struct Field {
    std::string_view key;
    int64_t lo, hi;
    int64_t* out;
  };
  const Field fields[] = {
      {"WaitProcessReadCMTime", 5, 90, &grace.wait_process_read_cm_s},
      {"WaitDeviceResetTime", 60, 180, &grace.wait_device_reset_s},
      {"WaitFaultSelfHealingTime", 1, 30, &grace.wait_fault_self_healing_s},
  };
  for (const Field& f : fields) {
    int64_t value = 0;
    CLUSTERD_RETURN_IF_ERROR(Annotate(go_json::ReadInt64(*it, f.key, &value),
                                      "faultCustomization.json: GraceTolerance"));
    if (value == 0) continue;  // missing or 0: the default, silently
    if (value < f.lo || value > f.hi) {
      issues->push_back({"field_defaulted", absl::StrCat("faultCustomization.json: GraceTolerance.",
                                                         Sv(f.key), "=", value, " is outside [",
                                                         f.lo, ", ", f.hi, "]; using ", *f.out)});
      continue;
    }
    *f.out = value;
  }
  return grace;
}

bool ValidFrequencyHandling(FaultLevel level) {
  return level != FaultLevel::kNormalNPU && level != FaultLevel::kNormalNetwork;
}

std::string Describe(std::string_view list, size_t index) {
  return absl::StrCat("faultCustomization.json: ", Sv(list), "[", index, "]");
}

}  // namespace

absl::StatusOr<FaultCustomization> FaultCustomization::Parse(std::string_view text,
                                                             PolicyIssues* issues) {
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json doc, ParseJson(text, "faultCustomization.json"));
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("faultCustomization.json is ", doc.type_name(), ", want object"));
  }
  FaultCustomization out;
  CLUSTERD_ASSIGN_OR_RETURN(out.grace_, DecodeGrace(doc, issues));
  CLUSTERD_ASSIGN_OR_RETURN(std::vector<RawEntry> frequency, DecodeList(doc, "FaultFrequency"));
  CLUSTERD_ASSIGN_OR_RETURN(std::vector<RawEntry> duration, DecodeList(doc, "FaultDuration"));

  for (size_t i = 0; i < frequency.size(); ++i) {
    const RawEntry& e = frequency[i];
    const std::string where = Describe("FaultFrequency", i);
    auto reject = [&](std::string_view why) {
      issues->push_back({"entry_ignored", absl::StrCat(where, " ignored: ", Sv(why))});
    };
    const std::optional<FaultLevel> handling = model::ParseFaultLevel(e.fault_handling);
    if (e.event_ids.empty()) {
      reject("EventId is empty");
      continue;
    }
    if (e.time_window < 60 || e.time_window > 864000) {
      reject(absl::StrCat("TimeWindow ", e.time_window, " is outside [60, 864000]"));
      continue;
    }
    std::optional<int64_t> release;
    if (e.release_time_window != 0) {
      if (e.release_time_window < 60 || e.release_time_window > kUnsetRelease) {
        reject(absl::StrCat("ReleaseTimeWindow ", e.release_time_window,
                            " is outside [60, 4294967296]"));
        continue;
      }
      release = e.release_time_window;
    }
    if (e.times < 1 || e.times > 100) {
      reject(absl::StrCat("Times ", e.times, " is outside [1, 100]"));
      continue;
    }
    if (handling != FaultLevel::kManuallySeparateNPU && !release.has_value()) {
      reject("a FaultHandling other than ManuallySeparateNPU needs a ReleaseTimeWindow");
      continue;
    }
    if (!handling.has_value() || !ValidFrequencyHandling(*handling)) {
      reject(absl::StrCat("FaultHandling \"", e.fault_handling, "\" is not a handling level"));
      continue;
    }
    if (release.has_value()) {
      out.max_release_ms_ = std::max(out.max_release_ms_.value_or(0), *release * 1000);
    }
    for (const std::string& id : e.event_ids) {
      const std::optional<FaultCode> code = ParseHexCode(id);
      if (!code.has_value()) {
        issues->push_back(
            {"code_skipped", absl::StrCat(where, ": EventId \"", id, "\" is not a hex code")});
        continue;
      }
      FrequencyPolicy policy{
          AsciiLower(id), e.time_window * 1000, e.times, *handling,
          release.has_value() ? std::optional<int64_t>(*release * 1000) : std::nullopt};
      if (!out.frequency_.try_emplace(*code, std::move(policy)).second) {
        issues->push_back(
            {"duplicate_ignored", absl::StrCat(where, ": EventId ", id, " is already configured")});
      }
    }
  }

  for (size_t i = 0; i < duration.size(); ++i) {
    const RawEntry& e = duration[i];
    const std::string where = Describe("FaultDuration", i);
    auto reject = [&](std::string_view why) {
      issues->push_back({"entry_ignored", absl::StrCat(where, " ignored: ", Sv(why))});
    };
    const std::optional<FaultLevel> handling = model::ParseFaultLevel(e.fault_handling);
    if (e.event_ids.empty()) {
      reject("EventId is empty");
      continue;
    }
    if (e.fault_timeout < 0 || e.fault_timeout > 600) {
      reject(absl::StrCat("FaultTimeout ", e.fault_timeout, " is outside [0, 600]"));
      continue;
    }
    if (e.recover_timeout < 0 || e.recover_timeout > 86400) {
      reject(absl::StrCat("RecoverTimeout ", e.recover_timeout, " is outside [0, 86400]"));
      continue;
    }
    if (!handling.has_value() || !ValidFrequencyHandling(*handling) ||
        *handling == FaultLevel::kManuallySeparateNPU) {
      reject(absl::StrCat("FaultHandling \"", e.fault_handling,
                          "\" is not a handling level allowed for FaultDuration"));
      continue;
    }
    for (const std::string& id : e.event_ids) {
      const std::optional<FaultCode> code = ParseHexCode(id);
      if (!code.has_value()) {
        issues->push_back(
            {"code_skipped", absl::StrCat(where, ": EventId \"", id, "\" is not a hex code")});
        continue;
      }
      DurationPolicy policy{AsciiLower(id), e.fault_timeout * 1000, e.recover_timeout * 1000,
                            *handling};
      if (!out.duration_.try_emplace(*code, std::move(policy)).second) {
        issues->push_back(
            {"duplicate_ignored", absl::StrCat(where, ": EventId ", id, " is already configured")});
      }
    }
  }
  return out;
}

const FrequencyPolicy* FaultCustomization::Frequency(FaultCode code) const {
  auto it = frequency_.find(code);
  return it == frequency_.end() ? nullptr : &it->second;
}

const DurationPolicy* FaultCustomization::Duration(FaultCode code) const {
  auto it = duration_.find(code);
  return it == duration_.end() ? nullptr : &it->second;
}

const std::string* FaultCustomization::Spelling(FaultCode code) const {
  if (const FrequencyPolicy* f = Frequency(code)) return &f->spelling;
  if (const DurationPolicy* d = Duration(code)) return &d->spelling;
  return nullptr;
}

}  // namespace clusterd::faults
