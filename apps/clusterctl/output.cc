#include "output.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace clusterctl {
namespace {

void EmitYaml(YAML::Emitter& out, const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, child] : v.items()) {
        out << YAML::Key << k << YAML::Value;
        EmitYaml(out, child);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::ordered_json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& child : v) EmitYaml(out, child);
      out << YAML::EndSeq;
      break;
    case nlohmann::ordered_json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (s.find('\n') != std::string::npos) {
        out << YAML::Literal << s;
      } else {
        out << YAML::DoubleQuoted << s;
      }
      break;
    }
    case nlohmann::ordered_json::value_t::null:
      out << YAML::Null;
      break;
    default:
      out << v.dump();
  }
}

}  // namespace

absl::StatusOr<Format> ParseFormat(const std::string& text) {
  if (text == "table" || text == "wide" || text.empty()) return Format::kTable;
  if (text == "json") return Format::kJson;
  if (text == "yaml") return Format::kYaml;
  if (text == "name") return Format::kName;
  if (text.rfind("jsonpath=", 0) == 0) return Format::kJsonPath;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown output format \"", text,
                   "\" (want table, wide, json, yaml, name or jsonpath=TEMPLATE)"));
}

std::string JsonPathTemplate(const std::string& text) {
  std::string t = text.substr(std::string("jsonpath=").size());
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front()) {
    t = t.substr(1, t.size() - 2);
  }
  return t;
}

std::string RenderNames(const nlohmann::ordered_json& value) {
  auto kind_of = [](const nlohmann::ordered_json& v, std::string fallback) {
    std::string kind = v.is_object() ? v.value("kind", "") : "";
    if (kind.empty()) kind = std::move(fallback);
    std::transform(kind.begin(), kind.end(), kind.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return kind;
  };
  auto name_of = [](const nlohmann::ordered_json& v) -> std::string {
    if (!v.is_object()) return "";
    if (auto md = v.find("metadata"); md != v.end() && md->is_object() && md->contains("name")) {
      return md->value("name", "");
    }
    for (const char* key : {"name", "jobName", "node", "jobId", "superPodId"}) {
      if (auto it = v.find(key);
          it != v.end() && it->is_string() && !it->get<std::string>().empty())
        return it->get<std::string>();
    }
    return "";
  };
  std::string list_kind = value.is_object() ? value.value("kind", "") : "";
  std::string item_kind = list_kind;
  if (item_kind.size() > 4 && item_kind.compare(item_kind.size() - 4, 4, "List") == 0) {
    item_kind.resize(item_kind.size() - 4);
  }
  std::string out;
  auto add = [&](const nlohmann::ordered_json& v) {
    const std::string name = name_of(v);
    if (name.empty()) return;
    const std::string kind = kind_of(v, item_kind);
    absl::StrAppend(&out, kind.empty() ? "" : kind + "/", name, "\n");
  };
  if (value.is_object() && value.contains("items") && value["items"].is_array()) {
    for (const auto& item : value["items"]) add(item);
  } else {
    add(value);
  }
  return out;
}

std::string ToYaml(const nlohmann::ordered_json& value) {
  YAML::Emitter out;
  EmitYaml(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string RenderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(headers.size(), 0);
  for (size_t i = 0; i < headers.size(); ++i) widths[i] = headers[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      out += cell;
      if (i + 1 < widths.size()) out += std::string(widths[i] - cell.size() + 3, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string Age(const std::string& rfc3339, absl::Time now) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) return "<unknown>";
  absl::Duration d = now - t;
  if (d < absl::ZeroDuration()) d = absl::ZeroDuration();
  int64_t s = absl::ToInt64Seconds(d);
  if (s < 120) return absl::StrCat(s, "s");
  if (s < 120 * 60) return absl::StrCat(s / 60, "m");
  if (s < 48 * 3600) return absl::StrCat(s / 3600, "h");
  return absl::StrCat(s / 86400, "d");
}

}  // namespace clusterctl
