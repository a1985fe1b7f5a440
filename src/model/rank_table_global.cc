#include "model/rank_table_global.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/canonical_json.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {
namespace {

using Json = nlohmann::ordered_json;

absl::Status ReadStrings(const Json& obj,
                         std::initializer_list<std::pair<std::string_view, std::string*>> fields) {
  for (auto [key, field] : fields) {
    if (absl::Status s = go_json::ReadString(obj, key, field); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The array at `key`, or nullptr when missing/null; an error when it is not an array.
absl::StatusOr<const Json*> ArrayAt(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("field \"",
                                                   absl::string_view(key.data(), key.size()),
                                                   "\" is ", it->type_name(), ", want array"));
  }
  return &*it;
}

void Field(std::string* out, std::string_view key, std::string_view value, bool& first) {
  if (!first) out->push_back(',');
  first = false;
  absl::StrAppend(out, QuoteGoString(key), ":", QuoteGoString(value));
}

void Raw(std::string* out, std::string_view key, std::string_view raw, bool& first) {
  if (!first) out->push_back(',');
  first = false;
  absl::StrAppend(out, QuoteGoString(key), ":", absl::string_view(raw.data(), raw.size()));
}

template <typename T, typename F>
std::string Join(const std::vector<T>& items, F&& render) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += render(items[i]);
  }
  out.push_back(']');
  return out;
}

std::string RenderSuperPod(const SuperPodEntry& sp) {
  std::string out = "{";
  bool first = true;
  Field(&out, "super_pod_id", sp.super_pod_id, first);
  Raw(&out, "server_list",
      Join(sp.server_ids,
           [](const std::string& id) {
             return absl::StrCat("{\"server_id\":", QuoteGoString(id), "}");
           }),
      first);
  out.push_back('}');
  return out;
}

}  // namespace

absl::StatusOr<InstanceRankTable> ParseInstanceRankTable(std::string_view text,
                                                         std::string_view what) {
  CLUSTERD_ASSIGN_OR_RETURN(Json doc, ParseJson(text, what, 8 << 20));
  InstanceRankTable table;
  auto fail = [&](const absl::Status& s) { return Annotate(s, what); };
  if (absl::Status s = go_json::ExpectObject(doc, "rank table", true); !s.ok()) return fail(s);
  if (absl::Status s = ReadStrings(doc, {{"status", &table.status},
                                         {"version", &table.version},
                                         {"server_count", &table.server_count}});
      !s.ok()) {
    return fail(s);
  }
  auto servers = ArrayAt(doc, "server_list");
  if (!servers.ok()) return fail(servers.status());
  if (*servers != nullptr) {
    for (const Json& s : **servers) {
      if (absl::Status st = go_json::ExpectObject(s, "server_list[]", true); !st.ok())
        return fail(st);
      InstanceRankTable::Server server;
      if (absl::Status st = ReadStrings(s, {{"server_id", &server.server_id},
                                            {"host_ip", &server.host_ip},
                                            {"container_ip", &server.container_ip},
                                            {"hardware_type", &server.hardware_type}});
          !st.ok()) {
        return fail(st);
      }
      auto devices = ArrayAt(s, "device");
      if (!devices.ok()) return fail(devices.status());
      if (*devices != nullptr) {
        for (const Json& d : **devices) {
          if (absl::Status st = go_json::ExpectObject(d, "device[]", true); !st.ok())
            return fail(st);
          InstanceRankTable::Device dev;
          if (absl::Status st = ReadStrings(d, {{"device_id", &dev.device_id},
                                                {"device_ip", &dev.device_ip},
                                                {"super_device_id", &dev.super_device_id},
                                                {"rank_id", &dev.rank_id}});
              !st.ok()) {
            return fail(st);
          }
          server.devices.push_back(std::move(dev));
        }
      }
      table.servers.push_back(std::move(server));
    }
  }
  auto super_pods = ArrayAt(doc, "super_pod_list");
  if (!super_pods.ok()) return fail(super_pods.status());
  if (*super_pods != nullptr) {
    for (const Json& sp : **super_pods) {
      if (absl::Status st = go_json::ExpectObject(sp, "super_pod_list[]", true); !st.ok()) {
        return fail(st);
      }
      SuperPodEntry entry;
      if (absl::Status st = go_json::ReadString(sp, "super_pod_id", &entry.super_pod_id);
          !st.ok()) {
        return fail(st);
      }
      auto list = ArrayAt(sp, "server_list");
      if (!list.ok()) return fail(list.status());
      if (*list != nullptr) {
        for (const Json& item : **list) {
          std::string id;
          if (absl::Status st = go_json::ReadString(item, "server_id", &id); !st.ok())
            return fail(st);
          entry.server_ids.push_back(std::move(id));
        }
      }
      table.super_pod_list.push_back(std::move(entry));
    }
  }
  return table;
}

size_t GlobalRankTable::RankCount() const {
  size_t n = 0;
  for (const auto& g : groups) {
    for (const auto& s : g.servers) n += s.devices.size();
  }
  return n;
}

std::string SerializeGlobalRankTable(const GlobalRankTable& table) {
  auto render_device = [](const GlobalRankTable::Device& d) {
    std::string out = "{";
    bool first = true;
    Field(&out, "device_id", d.device_id, first);
    Field(&out, "device_ip", d.device_ip, first);
    if (!d.super_device_id.empty()) Field(&out, "super_device_id", d.super_device_id, first);
    Field(&out, "device_logical_id", d.device_logical_id, first);
    Field(&out, "rank_id", d.rank_id, first);
    out.push_back('}');
    return out;
  };
  auto render_server = [&](const GlobalRankTable::Server& s) {
    std::string out = "{";
    bool first = true;
    if (!s.devices.empty()) Raw(&out, "device", Join(s.devices, render_device), first);
    Field(&out, "server_id", s.server_id, first);
    if (!s.server_ip.empty()) Field(&out, "server_ip", s.server_ip, first);
    if (!s.hardware_type.empty()) Field(&out, "hardware_type", s.hardware_type, first);
    out.push_back('}');
    return out;
  };
  auto render_group = [&](const GlobalRankTable::Group& g) {
    std::string out = "{";
    bool first = true;
    Field(&out, "group_id", g.group_id, first);
    if (!g.deploy_server.empty()) Field(&out, "deploy_server", g.deploy_server, first);
    Field(&out, "server_count", g.server_count, first);
    Raw(&out, "server_list", Join(g.servers, render_server), first);
    if (!g.super_pod_list.empty())
      Raw(&out, "super_pod_list", Join(g.super_pod_list, RenderSuperPod), first);
    out.push_back('}');
    return out;
  };
  std::string out = "{";
  bool first = true;
  Field(&out, "version", table.version, first);
  Field(&out, "status", table.status, first);
  Raw(&out, "server_group_list", Join(table.groups, render_group), first);
  out.push_back('}');
  return out;
}

}  // namespace clusterd::model
