#include "model/pod_device_allocation.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {
namespace {

// Allocations of A5 devices carry levelList and can be long; the annotation limit of
// Kubernetes (256 KiB in total) is far below this.
constexpr size_t kMaxAllocationBytes = 4 << 20;

}  // namespace

absl::StatusOr<PodDeviceAllocation> ParsePodDeviceAllocation(std::string_view text,
                                                             std::string_view what) {
  CLUSTERD_ASSIGN_OR_RETURN(nlohmann::ordered_json doc, ParseJson(text, what, kMaxAllocationBytes));
  PodDeviceAllocation alloc;
  auto fail = [&](const absl::Status& s) { return Annotate(s, what); };
  if (absl::Status s = go_json::ExpectObject(doc, "allocation", /*allow_null=*/true); !s.ok()) {
    return fail(s);
  }
  for (auto [key, field] : {std::pair<std::string_view, std::string*>{"pod_name", &alloc.pod_name},
                            {"server_id", &alloc.server_id},
                            {"host_ip", &alloc.host_ip},
                            {"server_index", &alloc.server_index},
                            {"server_ip", &alloc.server_ip}}) {
    if (absl::Status s = go_json::ReadString(doc, key, field); !s.ok()) return fail(s);
  }
  if (absl::Status s = go_json::ReadInt64(doc, "super_pod_id", &alloc.super_pod_id); !s.ok()) {
    return fail(s);
  }
  if (absl::Status s = go_json::ReadInt64(doc, "rack_id", &alloc.rack_id); !s.ok()) {
    return fail(s);
  }
  if (doc.is_object() && doc.contains("devices") && !doc["devices"].is_null()) {
    const auto& devices = doc["devices"];
    if (!devices.is_array()) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("field \"devices\" is ", devices.type_name(), ", want array")));
    }
    for (size_t i = 0; i < devices.size(); ++i) {
      const auto& d = devices[i];
      const std::string where = absl::StrCat("devices[", i, "]");
      if (absl::Status s = go_json::ExpectObject(d, where, true); !s.ok()) return fail(s);
      AllocatedDevice dev;
      for (auto [key, field] :
           {std::pair<std::string_view, std::string*>{"device_id", &dev.device_id},
            {"device_ip", &dev.device_ip},
            {"super_device_id", &dev.super_device_id}}) {
        if (absl::Status s = go_json::ReadString(d, key, field); !s.ok()) {
          return fail(Annotate(s, where));
        }
      }
      if (d.is_object() && d.contains("levelList") && !d["levelList"].is_null()) {
        const auto& levels = d["levelList"];
        if (!levels.is_array()) {
          return fail(absl::InvalidArgumentError(absl::StrCat(where, ": field \"levelList\" is ",
                                                              levels.type_name(), ", want array")));
        }
        for (size_t k = 0; k < levels.size(); ++k) {
          auto level = RankLevelFromJson(levels[k], absl::StrCat(where, ".levelList[", k, "]"));
          if (!level.ok()) return fail(level.status());
          dev.level_list.push_back(*std::move(level));
        }
      }
      alloc.devices.push_back(std::move(dev));
    }
  }
  return alloc;
}

}  // namespace clusterd::model
