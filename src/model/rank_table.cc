#include "model/rank_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/canonical_json.h"
#include "common/sv.h"
#include "model/go_json.h"

namespace clusterd::model {
namespace {

void AppendField(std::string* out, std::string_view key, std::string_view value, bool& first) {
  if (!first) out->push_back(',');
  first = false;
  out->append(QuoteGoString(key));
  out->push_back(':');
  out->append(QuoteGoString(value));
}

void AppendRaw(std::string* out, std::string_view key, std::string_view raw, bool& first) {
  if (!first) out->push_back(',');
  first = false;
  out->append(QuoteGoString(key));
  out->push_back(':');
  out->append(raw);
}

void AppendJoined(std::string* out, const std::vector<std::string>& parts) {
  out->push_back('[');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(parts[i]);
  }
  out->push_back(']');
}

std::string SerializeDevice(const RankTableDevice& d) {
  std::string out = "{";
  bool first = true;
  AppendField(&out, "device_id", d.device_id, first);
  AppendField(&out, "device_ip", d.device_ip, first);
  AppendField(&out, "rank_id", d.rank_id, first);
  if (!d.super_device_id.empty()) AppendField(&out, "super_device_id", d.super_device_id, first);
  out.push_back('}');
  return out;
}

std::string SerializeAddr(const RankAddrItem& a) {
  std::string out = "{";
  bool first = true;
  AppendField(&out, "addr_type", a.addr_type, first);
  AppendField(&out, "addr", a.addr, first);
  if (a.ports.has_value()) {
    std::vector<std::string> ports;
    for (const auto& p : *a.ports) ports.push_back(QuoteGoString(p));
    std::string raw;
    AppendJoined(&raw, ports);
    AppendRaw(&out, "ports", raw, first);
  } else {
    AppendRaw(&out, "ports", "null", first);
  }
  AppendField(&out, "plane_id", a.plane_id, first);
  out.push_back('}');
  return out;
}

}  // namespace

size_t RankTable::DeviceCount() const {
  size_t n = 0;
  if (server_list.has_value()) {
    for (const auto& s : *server_list) n += s.devices.size();
  }
  return n;
}

std::string SerializeRankLevelElement(const RankLevelElement& e) {
  std::string out = "{";
  bool first = true;
  AppendRaw(&out, "net_layer", std::to_string(e.net_layer), first);
  AppendField(&out, "net_instance_id", e.net_instance_id, first);
  AppendField(&out, "net_type", e.net_type, first);
  AppendField(&out, "net_attr", e.net_attr, first);
  if (e.rank_addr_list.has_value()) {
    std::vector<std::string> items;
    for (const auto& a : *e.rank_addr_list) items.push_back(SerializeAddr(a));
    std::string raw;
    AppendJoined(&raw, items);
    AppendRaw(&out, "rank_addr_list", raw, first);
  } else {
    AppendRaw(&out, "rank_addr_list", "null", first);
  }
  out.push_back('}');
  return out;
}

std::string SerializeRankTableServer(const RankTableServer& s) {
  std::string out = "{";
  bool first = true;
  std::vector<std::string> devices;
  devices.reserve(s.devices.size());
  for (const auto& d : s.devices) devices.push_back(SerializeDevice(d));
  std::string raw;
  AppendJoined(&raw, devices);
  AppendRaw(&out, "device", raw, first);
  AppendField(&out, "server_id", s.server_id, first);
  AppendField(&out, "host_ip", s.host_ip, first);
  AppendRaw(&out, "super_pod_id", std::to_string(s.super_pod_id), first);
  AppendField(&out, "server_name", s.server_name, first);
  AppendField(&out, "server_sn", s.server_sn, first);
  AppendField(&out, "pod_name", s.pod_name, first);
  // A Go map: keys sorted by byte value.
  std::string ids = "{";
  bool first_id = true;
  for (const auto& [name, id] : s.container_ids) AppendField(&ids, name, id, first_id);
  ids.push_back('}');
  AppendRaw(&out, "container_ids", ids, first);
  out.push_back('}');
  return out;
}

std::string SerializeRankV2(const RankV2& r) {
  std::string out = "{";
  bool first = true;
  AppendRaw(&out, "rank_id", std::to_string(r.rank_id), first);
  AppendRaw(&out, "local_id", std::to_string(r.local_id), first);
  AppendRaw(&out, "device_id", std::to_string(r.device_id), first);
  if (!r.level_list.empty()) {
    std::vector<std::string> levels;
    for (const auto& e : r.level_list) levels.push_back(SerializeRankLevelElement(e));
    std::string raw;
    AppendJoined(&raw, levels);
    AppendRaw(&out, "level_list", raw, first);
  }
  out.push_back('}');
  return out;
}

std::string SerializeRankTableParts(const RankTable& table, const std::vector<std::string>& servers,
                                    bool server_list_null, const std::vector<std::string>& ranks) {
  std::string out = "{";
  bool first = true;
  AppendField(&out, "status", table.status, first);
  if (server_list_null) {
    AppendRaw(&out, "server_list", "null", first);
  } else {
    std::string raw;
    AppendJoined(&raw, servers);
    AppendRaw(&out, "server_list", raw, first);
  }
  AppendField(&out, "server_count", table.server_count, first);
  AppendRaw(&out, "total", std::to_string(table.total), first);
  if (!table.version.empty()) AppendField(&out, "version", table.version, first);
  if (!ranks.empty()) {
    std::string raw;
    AppendJoined(&raw, ranks);
    AppendRaw(&out, "rank_list", raw, first);
  }
  if (table.rank_count != 0) AppendRaw(&out, "rank_count", std::to_string(table.rank_count), first);
  out.push_back('}');
  return out;
}

std::string SerializeRankTable(const RankTable& table) {
  std::vector<std::string> servers;
  if (table.server_list.has_value()) {
    servers.reserve(table.server_list->size());
    for (const auto& s : *table.server_list) servers.push_back(SerializeRankTableServer(s));
  }
  std::vector<std::string> ranks;
  ranks.reserve(table.rank_list.size());
  for (const auto& r : table.rank_list) ranks.push_back(SerializeRankV2(r));
  return SerializeRankTableParts(table, servers, !table.server_list.has_value(), ranks);
}

absl::StatusOr<RankLevelElement> RankLevelElementFromJson(const nlohmann::ordered_json& value,
                                                          std::string_view what) {
  RankLevelElement e;
  if (absl::Status s = go_json::ExpectObject(value, what, /*allow_null=*/true); !s.ok()) return s;
  auto annotate = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(Sv(what), ": ", s.message()));
  };
  if (absl::Status s = go_json::ReadInt64(value, "net_layer", &e.net_layer); !s.ok()) {
    return annotate(s);
  }
  for (auto [key, field] :
       {std::pair<std::string_view, std::string*>{"net_instance_id", &e.net_instance_id},
        {"net_type", &e.net_type},
        {"net_attr", &e.net_attr}}) {
    if (absl::Status s = go_json::ReadString(value, key, field); !s.ok()) return annotate(s);
  }
  if (value.is_object() && value.contains("rank_addr_list") && !value["rank_addr_list"].is_null()) {
    const auto& list = value["rank_addr_list"];
    if (!list.is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": field \"rank_addr_list\" is ",
                                                     list.type_name(), ", want array"));
    }
    e.rank_addr_list.emplace();
    for (const auto& item : list) {
      if (absl::Status s = go_json::ExpectObject(item, "rank_addr_list[]", true); !s.ok()) {
        return annotate(s);
      }
      RankAddrItem a;
      for (auto [key, field] :
           {std::pair<std::string_view, std::string*>{"addr_type", &a.addr_type},
            {"addr", &a.addr},
            {"plane_id", &a.plane_id}}) {
        if (absl::Status s = go_json::ReadString(item, key, field); !s.ok()) return annotate(s);
      }
      bool ports_null = true;
      std::vector<std::string> ports;
      if (absl::Status s = go_json::ReadStringArray(item, "ports", &ports, &ports_null); !s.ok()) {
        return annotate(s);
      }
      if (!ports_null) a.ports = std::move(ports);
      e.rank_addr_list->push_back(std::move(a));
    }
  }
  return e;
}

absl::StatusOr<RankLevel> RankLevelFromJson(const nlohmann::ordered_json& value,
                                            std::string_view what) {
  RankLevel level;
  if (absl::Status s = go_json::ExpectObject(value, what, true); !s.ok()) return s;
  if (absl::Status s = go_json::ReadInt64(value, "level", &level.level); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": ", s.message()));
  }
  if (value.is_object() && value.contains("info") && !value["info"].is_null()) {
    const auto& info = value["info"];
    if (!info.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(what), ": field \"info\" is ", info.type_name(), ", want object"));
    }
    for (const auto& [port_type, element] : info.items()) {
      auto parsed = RankLevelElementFromJson(element, absl::StrCat(Sv(what), ".info.", port_type));
      if (!parsed.ok()) return parsed.status();
      level.info[port_type] = *std::move(parsed);
    }
  }
  return level;
}

}  // namespace clusterd::model
