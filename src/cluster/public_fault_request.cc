#include "cluster/public_fault_request.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"
#include "model/fault_level.h"

namespace clusterd::cluster {
namespace {

using Json = nlohmann::ordered_json;
namespace gj = model::go_json;

constexpr int64_t kMinTimestampMs = 1735689600000;     // 2025-01-01T00:00:00Z
constexpr int64_t kMinThirteenDigits = 1000000000000;  // the smallest 13-digit value
constexpr int64_t kMaxTimestampMs = 9999999999999;     // 13 digits

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool ValidId(std::string_view id) {
  return id.size() >= 8 && id.size() <= 128 && std::all_of(id.begin(), id.end(), IsIdChar);
}

bool ValidTime(int64_t t) { return t >= kMinTimestampMs && t <= kMaxTimestampMs; }

// The original first wants 13 decimal digits, then a time not before 2025, and says which.
std::optional<std::string_view> TimestampProblem(int64_t t) {
  if (t < kMinThirteenDigits || t > kMaxTimestampMs) return "invalid timestamp";
  if (t < kMinTimestampMs) return "invalid timestamp, can not before 2025/01/01T00:00:00Z";
  return std::nullopt;
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool ValidNodeName(std::string_view n) {
  if (n.empty() || n.size() > 253) return false;
  if (!IsLowerAlnum(n.front()) || !IsLowerAlnum(n.back())) return false;
  return std::all_of(n.begin(), n.end(),
                     [](char c) { return IsLowerAlnum(c) || c == '-' || c == '.'; });
}

bool ValidDescription(std::string_view d) {
  size_t runes = 0;
  for (unsigned char c : d) {
    if (c == '\t' || c == '\n' || c == '\r' || c == '\f') return false;
    if ((c & 0xC0) != 0x80) ++runes;
  }
  return runes <= 512;
}

absl::Status ReadInt32Array(const Json& obj, std::string_view key, std::vector<int32_t>* out) {
  std::vector<int64_t> values;
  CLUSTERD_RETURN_IF_ERROR(gj::ReadInt64Array(obj, key, &values));
  for (int64_t v : values) {
    if (v < INT32_MIN || v > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(absl::string_view(key.data(), key.size()), ": ", v, " does not fit int32"));
    }
    out->push_back(static_cast<int32_t>(v));
  }
  return absl::OkStatus();
}

}  // namespace

std::string InvalidPublicFaultInfo(std::string_view reason) {
  return absl::StrCat("check public fault info failed, error: ",
                      absl::string_view(reason.data(), reason.size()));
}

absl::StatusOr<PublicFaultRequest> ParsePublicFaultRequest(std::string_view text) {
  CLUSTERD_ASSIGN_OR_RETURN(Json parsed, ParseJson(text, "PublicFault"));
  CLUSTERD_RETURN_IF_ERROR(gj::ExpectObject(parsed, "PublicFault"));
  PublicFaultRequest r;
  CLUSTERD_RETURN_IF_ERROR(gj::ReadString(parsed, "id", &r.id));
  CLUSTERD_RETURN_IF_ERROR(gj::ReadInt64(parsed, "timestamp", &r.timestamp));
  CLUSTERD_RETURN_IF_ERROR(gj::ReadString(parsed, "version", &r.version));
  CLUSTERD_RETURN_IF_ERROR(gj::ReadString(parsed, "resource", &r.resource));
  if (auto it = parsed.find("faults"); it != parsed.end() && !it->is_null()) {
    if (!it->is_array()) return absl::InvalidArgumentError("faults is not an array");
    for (const Json& f : *it) {
      CLUSTERD_RETURN_IF_ERROR(gj::ExpectObject(f, "fault", /*allow_null=*/true));
      PublicFaultItem item;
      CLUSTERD_RETURN_IF_ERROR(gj::ReadString(f, "faultId", &item.fault_id));
      CLUSTERD_RETURN_IF_ERROR(gj::ReadString(f, "faultType", &item.fault_type));
      CLUSTERD_RETURN_IF_ERROR(gj::ReadString(f, "faultCode", &item.fault_code));
      CLUSTERD_RETURN_IF_ERROR(gj::ReadInt64(f, "faultTime", &item.fault_time));
      CLUSTERD_RETURN_IF_ERROR(gj::ReadString(f, "assertion", &item.assertion));
      CLUSTERD_RETURN_IF_ERROR(gj::ReadStringMap(f, "faultLocation", &item.fault_location));
      CLUSTERD_RETURN_IF_ERROR(gj::ReadString(f, "description", &item.description));
      if (f.is_object()) {
        if (auto inf = f.find("influence"); inf != f.end() && !inf->is_null()) {
          if (!inf->is_array()) return absl::InvalidArgumentError("influence is not an array");
          for (const Json& i : *inf) {
            CLUSTERD_RETURN_IF_ERROR(gj::ExpectObject(i, "influence", /*allow_null=*/true));
            PublicFaultInfluence pi;
            CLUSTERD_RETURN_IF_ERROR(gj::ReadString(i, "nodeName", &pi.node_name));
            CLUSTERD_RETURN_IF_ERROR(gj::ReadString(i, "nodeSN", &pi.node_sn));
            CLUSTERD_RETURN_IF_ERROR(ReadInt32Array(i, "deviceIds", &pi.device_ids));
            item.influence.push_back(std::move(pi));
          }
        }
      }
      r.faults.push_back(std::move(item));
    }
  }
  return r;
}

std::optional<std::string> PublicFaultConfig::LevelOf(std::string_view code) const {
  auto it = level_of_code.find(std::string(code));
  if (it == level_of_code.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<PublicFaultConfig> ParsePublicFaultConfig(std::string_view text) {
  CLUSTERD_ASSIGN_OR_RETURN(Json parsed, ParseJson(text, "public fault configuration"));
  if (!parsed.is_object())
    return absl::InvalidArgumentError("public fault configuration is not an object");
  PublicFaultConfig config;
  auto codes = parsed.find("publicFaultCode");
  if (codes == parsed.end() || !codes->is_object()) {
    return absl::InvalidArgumentError("publicFaultCode missing or not an object");
  }
  // Least severe first, so that the §9.3 order (SeparateNPU, PreSeparateNPU, SubHealthFault,
  // NotHandleFault) wins by overwriting.
  const std::pair<const char*, std::string_view> categories[] = {
      {"NotHandleFaultCodes", model::kLevelNotHandleFault},
      {"SubHealthFaultCodes", model::kLevelSubHealthFault},
      {"PreSeparateNPUCodes", model::kLevelPreSeparateNPU},
      {"SeparateNPUCodes", model::kLevelSeparateNPU},
  };
  for (const auto& [key, level] : categories) {
    std::vector<std::string> list;
    CLUSTERD_RETURN_IF_ERROR(gj::ReadStringArray(*codes, key, &list));
    for (const std::string& c : list) config.level_of_code[c] = level;
  }
  std::vector<std::string> resources;
  CLUSTERD_RETURN_IF_ERROR(gj::ReadStringArray(parsed, "publicFaultResource", &resources));
  config.resources.insert(resources.begin(), resources.end());
  return config;
}

PublicFaultVerdict ValidatePublicFaultRequest(const PublicFaultRequest& request,
                                              const PublicFaultConfig& config,
                                              const NodeBySerialFn& node_by_serial) {
  PublicFaultVerdict v;
  auto reject = [&](std::string_view reason) {
    v.code = kPubFaultInvalid;
    v.info = InvalidPublicFaultInfo(reason);
    v.accepted.clear();
    return v;
  };
  if (!ValidId(request.id)) return reject("invalid id");
  if (auto problem = TimestampProblem(request.timestamp)) return reject(*problem);
  if (request.version != "1.0") return reject("invalid version");
  if (config.resources.count(request.resource) == 0) return reject("invalid resource");
  // A request without `faults` (absent or null) has none.
  if (request.faults.empty() || request.faults.size() > 100) return reject("invalid faults length");

  for (const PublicFaultItem& f : request.faults) {
    auto drop = [&](std::string_view reason) {
      v.dropped.push_back(absl::StrCat("fault ", f.fault_id, ": ",
                                       absl::string_view(reason.data(), reason.size())));
    };
    if (!ValidId(f.fault_id)) {
      drop("invalid faultId");
      continue;
    }
    if (!ValidTime(f.fault_time)) {
      drop("invalid faultTime");
      continue;
    }
    if (f.fault_type != "NPU" && f.fault_type != "Node" && f.fault_type != "Network" &&
        f.fault_type != "Storage") {
      drop("invalid faultType");
      continue;
    }
    std::optional<std::string> level = config.LevelOf(f.fault_code);
    if (f.fault_code.size() != 9 || !level.has_value()) {
      drop("invalid faultCode");
      continue;
    }
    if (f.assertion != kAssertionOccur && f.assertion != kAssertionRecover &&
        f.assertion != kAssertionOnce) {
      drop("invalid assertion");
      continue;
    }
    bool location_ok = f.fault_location.size() <= 10;
    for (const auto& [k, val] : f.fault_location) {
      if (k.size() > 16 || val.size() > 128) location_ok = false;
    }
    if (!location_ok) {
      drop("invalid faultLocation");
      continue;
    }
    if (!ValidDescription(f.description)) {
      drop("invalid description");
      continue;
    }
    if (f.influence.empty() || f.influence.size() > 1000) {
      drop("invalid influence");
      continue;
    }
    AcceptedPublicFault accepted;
    bool influence_ok = true;
    for (const PublicFaultInfluence& inf : f.influence) {
      std::string node;
      if (!inf.node_name.empty()) {
        if (!ValidNodeName(inf.node_name)) {
          influence_ok = false;
          break;
        }
        node = inf.node_name;
      } else {
        std::optional<std::string> resolved;
        if (!inf.node_sn.empty() && node_by_serial) resolved = node_by_serial(inf.node_sn);
        if (!resolved.has_value()) {
          influence_ok = false;
          break;
        }
        node = *resolved;
      }
      std::set<int32_t> unique(inf.device_ids.begin(), inf.device_ids.end());
      if (inf.device_ids.empty() || inf.device_ids.size() > 32 ||
          unique.size() != inf.device_ids.size() || *unique.begin() < 0 || *unique.rbegin() > 31) {
        influence_ok = false;
        break;
      }
      std::vector<int32_t>& ids = accepted.nodes[node];
      for (int32_t id : inf.device_ids) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
      }
    }
    if (!influence_ok) {
      drop("invalid influence");
      continue;
    }
    accepted.item = f;
    accepted.level = *level;
    v.accepted.push_back(std::move(accepted));
  }
  if (v.accepted.empty()) return reject("there is no valid fault");
  return v;
}

}  // namespace clusterd::cluster
