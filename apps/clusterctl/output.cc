#include "output.h"

#include <algorithm>

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
  return absl::InvalidArgumentError(
      absl::StrCat("unknown output format \"", text, "\" (want table, json or yaml)"));
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
