// The profiling switches of §6.2 and their default writer, the data-trace-<job> ConfigMap of
// §5.2.

#include <string>

#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "diagnosis/slow_node_controller.h"
#include "nlohmann/json.hpp"

namespace clusterd::diagnosis {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kDataTracePrefix = "data-trace-";
constexpr std::string_view kProfilingSwitchKey = "profilingSwitch";
constexpr std::string_view kOn = "on";
constexpr std::string_view kOff = "off";

}  // namespace

model::ProfilingSwitch HeavyProfiling() {
  const std::string on(kOn);
  return {on, on, on, on, on};
}

model::ProfilingSwitch LightProfiling() {
  const std::string on(kOn);
  return {std::string(kOff), on, on, on, on};
}

model::ProfilingSwitch NoProfiling() {
  const std::string off(kOff);
  return {off, off, off, off, off};
}

absl::Status StoreProfilingSwitchWriter::SetProfiling(const SlowNodeJob& job,
                                                      const model::ProfilingSwitch& value) {
  const std::string name = absl::StrCat(Sv(kDataTracePrefix), job.name);
  const store::ObjectKey key{std::string(store::kConfigMaps), job.ns, name};
  const std::string serialized = model::SerializeProfilingSwitch(value);
  auto existing = store_.Get(key);
  if (existing.ok()) {
    store::Object cm = *existing;
    cm["data"][std::string(kProfilingSwitchKey)] = serialized;
    auto updated = store_.Update(store::kConfigMaps, cm);
    return updated.status();
  }
  if (existing.status().code() != absl::StatusCode::kNotFound) return existing.status();
  store::Object cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", name}, {"namespace", job.ns}, {"labels", {{"reset", "true"}}}}}};
  if (!job.job_id.empty()) {
    cm["metadata"]["ownerReferences"] = Json::array({Json{{"apiVersion", "mindxdl.gitee.com/v1"},
                                                          {"kind", "AscendJob"},
                                                          {"name", job.name},
                                                          {"uid", job.job_id},
                                                          {"controller", true}}});
  }
  cm["data"] = {{std::string(kProfilingSwitchKey), serialized}};
  auto created = store_.Create(store::kConfigMaps, cm);
  return created.status();
}

}  // namespace clusterd::diagnosis
