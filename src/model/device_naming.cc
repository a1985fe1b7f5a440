#include "model/device_naming.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "model/pod_device_allocation.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view kResourceType = "ResourceType";
constexpr std::string_view kDevicePublicType = "DevicePublicType";
constexpr std::string_view kDevicePublicNamePre = "DevicePublicNamePre";
constexpr std::string_view kPodConfigurationName = "PodConfigurationName";
constexpr std::string_view kKnownKeys[] = {kResourceType, kDevicePublicType, kDevicePublicNamePre,
                                           kPodConfigurationName};
constexpr char kKnownKeyList[] =
    "ResourceType, DevicePublicType, DevicePublicNamePre, PodConfigurationName";
// Seed 001 Table 7: the only types the file may rename.
constexpr std::string_view kCustomisableTypes[] = {"Ascend910", "Ascend310", "Ascend310P"};
// Every device type a node may report, for the resource-name collision rule (npu: A5, which
// the file cannot rename).
constexpr std::string_view kAllTypes[] = {"Ascend910", "Ascend310", "Ascend310P", "npu"};
constexpr size_t kMaxFileBytes = 1 << 20;

// "line:column" (both 1-based) of byte `offset` of `text`.
std::string LineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrCat(line, ":", offset - line_start + 1);
}

// Where each element of the top-level array starts, and where the keys of an element that is
// an object start (their opening quote), as written (escapes kept). The text already parsed,
// so the scan only tracks strings and nesting.
struct EntrySpan {
  size_t start = 0;
  std::vector<std::pair<std::string, size_t>> keys;
};

std::vector<EntrySpan> LocateEntries(std::string_view text) {
  std::vector<EntrySpan> out;
  int depth = 0;
  bool expect_element = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (depth == 1 && expect_element && !std::isspace(static_cast<unsigned char>(c)) && c != ']') {
      out.push_back({i, {}});
      expect_element = false;
    }
    if (c == '"') {
      const size_t start = i;
      std::string raw;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) raw += text[i++];
        raw += text[i];
      }
      if (depth == 2 && !out.empty()) {
        size_t j = i + 1;
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j < text.size() && text[j] == ':') out.back().keys.emplace_back(std::move(raw), start);
      }
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth == 1) expect_element = true;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 1) {
      expect_element = true;
    }
  }
  return out;
}

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

bool AllOf(std::string_view s, std::string_view extra) {
  return std::all_of(s.begin(), s.end(), [extra](char c) {
    return IsAlnum(c) || extra.find(c) != std::string_view::npos;
  });
}

// Seed 001 Table 7, one rule per field; "" when `value` is valid.
std::string CheckPublicType(std::string_view v) {
  // "Only the xxx.xxx/xxx format is supported. xxx can be letters and digits, 10 to 32
  // characters."
  const size_t dot = v.find('.');
  const size_t slash = v.find('/');
  const bool format = dot != std::string_view::npos && slash != std::string_view::npos && dot > 0 &&
                      slash > dot + 1 && slash + 1 < v.size() && AllOf(v.substr(0, dot), "") &&
                      AllOf(v.substr(dot + 1, slash - dot - 1), "") &&
                      AllOf(v.substr(slash + 1), "");
  if (!format) return "must have the form xxx.xxx/xxx with letters and digits only";
  if (v.size() < 10 || v.size() > 32) return "must be 10 to 32 characters long";
  return "";
}

std::string CheckNamePrefix(std::string_view v) {
  // "letters, hyphens and digits; starts with a letter; 2 to 16 characters"
  if (v.size() < 2 || v.size() > 16) return "must be 2 to 16 characters long";
  if (!IsAlpha(v.front())) return "must start with a letter";
  if (!AllOf(v, "-")) return "may hold only letters, digits and hyphens";
  return "";
}

std::string CheckPodConfigurationName(std::string_view v) {
  // "letters, hyphens, slashes, dots and digits; starts with a letter, ends with a letter or a
  // digit; 10 to 63 characters"
  if (v.size() < 10 || v.size() > 63) return "must be 10 to 63 characters long";
  if (!IsAlpha(v.front())) return "must start with a letter";
  if (!IsAlnum(v.back())) return "must end with a letter or a digit";
  if (!AllOf(v, "-/.")) return "may hold only letters, digits, hyphens, slashes and dots";
  return "";
}

std::string DefaultResourceName(std::string_view type) {
  return absl::StrCat("huawei.com/", Sv(type));
}

// Parses the well-formed document `doc` (the text `text` of `file`).
class EntryReader {
 public:
  EntryReader(std::string_view text, std::string_view file)
      : text_(text), file_(file), spans_(LocateEntries(text)) {}

  absl::StatusOr<std::vector<DeviceNameEntry>> Read(const ordered_json& doc) {
    if (!doc.is_array()) {
      return Error(FirstToken(), absl::StrCat("the file must hold a JSON array of entries, not ",
                                              doc.type_name()));
    }
    std::vector<DeviceNameEntry> entries;
    for (size_t k = 0; k < doc.size(); ++k) {
      absl::StatusOr<DeviceNameEntry> entry = ReadEntry(doc[k], k);
      if (!entry.ok()) return entry.status();
      if (absl::Status s = CheckAgainst(entries, *entry, k); !s.ok()) return s;
      entries.push_back(*std::move(entry));
    }
    return entries;
  }

 private:
  absl::Status Error(size_t offset, std::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(file_), ":", LineColumn(text_, offset), ": ", Sv(message)));
  }
  size_t FirstToken() const {
    size_t i = 0;
    while (i < text_.size() && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
    return i;
  }
  size_t EntryStart(size_t k) const { return k < spans_.size() ? spans_[k].start : 0; }
  size_t KeyAt(size_t k, std::string_view key) const {
    if (k < spans_.size()) {
      for (const auto& [raw, at] : spans_[k].keys) {
        if (raw == key) return at;
      }
    }
    return EntryStart(k);
  }
  std::string What(size_t k) const { return absl::StrCat("entry ", k + 1); }

  absl::StatusOr<DeviceNameEntry> ReadEntry(const ordered_json& value, size_t k) const {
    if (!value.is_object()) {
      return Error(EntryStart(k),
                   absl::StrCat(What(k), " is ", value.type_name(), ", not an object"));
    }
    DeviceNameEntry e;
    for (const auto& [key, field] : value.items()) {
      const bool known =
          std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) != std::end(kKnownKeys);
      if (!known) {
        return Error(KeyAt(k, key), absl::StrCat(What(k), ": unknown key \"", key,
                                                 "\" (known: ", kKnownKeyList, ")"));
      }
      if (!field.is_string()) {
        return Error(KeyAt(k, key),
                     absl::StrCat(What(k), ": ", key, " is ", field.type_name(), ", not a string"));
      }
      std::string text = field.get<std::string>();
      if (key == kResourceType) e.resource_type = std::move(text);
      if (key == kDevicePublicType) e.device_public_type = std::move(text);
      if (key == kDevicePublicNamePre) e.device_public_name_pre = std::move(text);
      if (key == kPodConfigurationName) e.pod_configuration_name = std::move(text);
    }
    for (std::string_view mandatory : {kResourceType, kDevicePublicType, kDevicePublicNamePre}) {
      if (!value.contains(mandatory) || value[std::string(mandatory)].get<std::string>().empty()) {
        return Error(EntryStart(k),
                     absl::StrCat(What(k), ": ", Sv(mandatory), " is missing or empty"));
      }
    }
    if (std::find(std::begin(kCustomisableTypes), std::end(kCustomisableTypes), e.resource_type) ==
        std::end(kCustomisableTypes)) {
      return Error(KeyAt(k, kResourceType),
                   absl::StrCat(What(k), ": ResourceType \"", e.resource_type,
                                "\" is not Ascend910, Ascend310 or Ascend310P"));
    }
    const std::pair<std::string_view, std::string> checks[] = {
        {kDevicePublicType, CheckPublicType(e.device_public_type)},
        {kDevicePublicNamePre, CheckNamePrefix(e.device_public_name_pre)},
        {kPodConfigurationName, e.pod_configuration_name.empty()
                                    ? std::string()
                                    : CheckPodConfigurationName(e.pod_configuration_name)}};
    for (const auto& [key, problem] : checks) {
      if (problem.empty()) continue;
      return Error(KeyAt(k, key),
                   absl::StrCat(What(k), ": ", Sv(key), " \"",
                                value[std::string(key)].get<std::string>(), "\" ", problem));
    }
    if (e.resource_type == "Ascend910" && e.pod_configuration_name.empty()) {
      return Error(EntryStart(k), absl::StrCat(What(k),
                                               ": PodConfigurationName is missing (mandatory for "
                                               "ResourceType Ascend910)"));
    }
    return e;
  }

  // Rules across entries: one entry per type, and resource names that identify their type.
  absl::Status CheckAgainst(const std::vector<DeviceNameEntry>& earlier, const DeviceNameEntry& e,
                            size_t k) const {
    for (size_t i = 0; i < earlier.size(); ++i) {
      if (earlier[i].resource_type == e.resource_type) {
        return Error(KeyAt(k, kResourceType),
                     absl::StrCat(What(k), ": ResourceType ", e.resource_type,
                                  " is already customised by ", What(i)));
      }
      if (earlier[i].device_public_type == e.device_public_type) {
        return Error(KeyAt(k, kDevicePublicType),
                     absl::StrCat(What(k), ": DevicePublicType ", e.device_public_type,
                                  " is already the resource name of ", earlier[i].resource_type,
                                  " (", What(i), ")"));
      }
    }
    for (std::string_view type : kAllTypes) {
      if (type != e.resource_type && DefaultResourceName(type) == e.device_public_type) {
        return Error(KeyAt(k, kDevicePublicType),
                     absl::StrCat(What(k), ": DevicePublicType ", e.device_public_type,
                                  " is the resource name of ", Sv(type)));
      }
    }
    return absl::OkStatus();
  }

  std::string_view text_;
  std::string_view file_;
  std::vector<EntrySpan> spans_;
};

}  // namespace

absl::StatusOr<std::vector<DeviceNameEntry>> ParseDeviceNameCustomization(std::string_view text,
                                                                          std::string_view file) {
  if (text.size() > kMaxFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(file), ": ", text.size(), " bytes, over the limit of ", kMaxFileBytes));
  }
  ordered_json doc;
  try {
    doc = ordered_json::parse(text.begin(), text.end());
  } catch (const ordered_json::parse_error& e) {
    // e.byte counts from 1 and points at the character that failed.
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    std::string_view what = e.what();
    if (size_t tag = what.find("] "); !what.empty() && what.front() == '[' && tag != what.npos) {
      what.remove_prefix(tag + 2);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(file), ":", LineColumn(text, at), ": malformed JSON: ", Sv(what)));
  } catch (const ordered_json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(file), ": malformed JSON: ", e.what()));
  }
  return EntryReader(text, file).Read(doc);
}

absl::StatusOr<DeviceNaming> DeviceNaming::ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<std::vector<DeviceNameEntry>> entries =
      ParseDeviceNameCustomization(buffer.str(), path);
  if (!entries.ok()) return entries.status();
  return DeviceNaming(*std::move(entries));
}

absl::StatusOr<DeviceNaming> DeviceNaming::Load(const std::string& file,
                                                const std::string& data_dir, std::string* used) {
  std::string path = file;
  if (path.empty()) {
    const std::string candidate = absl::StrCat(data_dir, "/", Sv(kDeviceNameCustomizationFile));
    if (std::ifstream(candidate).good()) path = candidate;
  }
  used->clear();
  if (path.empty()) return DeviceNaming();
  absl::StatusOr<DeviceNaming> naming = ReadFile(path);
  if (naming.ok()) *used = path;
  return naming;
}

const DeviceNaming& DeviceNaming::Fixed() {
  static const DeviceNaming* const fixed = new DeviceNaming();
  return *fixed;
}

const DeviceNameEntry* DeviceNaming::EntryFor(std::string_view device_type) const {
  for (const DeviceNameEntry& e : entries_) {
    if (e.resource_type == device_type) return &e;
  }
  return nullptr;
}

std::string DeviceNaming::ResourceName(std::string_view device_type) const {
  const DeviceNameEntry* e = EntryFor(device_type);
  return e != nullptr ? e->device_public_type : DefaultResourceName(device_type);
}

std::string DeviceNaming::NamePrefix(std::string_view device_type) const {
  const DeviceNameEntry* e = EntryFor(device_type);
  return e != nullptr ? e->device_public_name_pre : absl::StrCat(Sv(device_type), "-");
}

std::string DeviceNaming::NpuName(std::string_view device_type, int64_t physical_id) const {
  return absl::StrCat(NamePrefix(device_type), physical_id);
}

DeviceListKeys DeviceNaming::Keys(std::string_view device_type) const {
  return DeviceListKeys::WithBase(ResourceName(device_type));
}

std::vector<std::string> DeviceNaming::AllocationAnnotationKeys() const {
  std::vector<std::string> keys;
  if (const DeviceNameEntry* e = EntryFor("Ascend910"); e != nullptr) {
    keys.push_back(e->pod_configuration_name);
  }
  keys.emplace_back(kAnnotationAscend910Configuration);
  keys.emplace_back(kAnnotationAscendNpuConfiguration);
  return keys;
}

const DeviceNameEntry* DeviceNaming::EntryOfDeviceListKey(std::string_view key) const {
  // A DevicePublicType holds no '-', so the suffix starts at the first one.
  const size_t dash = key.find('-');
  const std::string_view base = key.substr(0, dash);
  const std::string_view suffix = dash == std::string_view::npos ? "" : key.substr(dash);
  if (suffix != "" && suffix != "-Unhealthy" && suffix != "-NetworkUnhealthy" &&
      suffix != "-Recovering" && suffix != "-Fault") {
    return nullptr;
  }
  for (const DeviceNameEntry& e : entries_) {
    if (e.device_public_type == base) return &e;
  }
  return nullptr;
}

std::optional<std::string> DeviceNaming::CustomTypeOf(std::string_view resource_name) const {
  for (const DeviceNameEntry& e : entries_) {
    if (e.device_public_type == resource_name) return e.resource_type;
  }
  return std::nullopt;
}

bool DeviceNaming::IsNpuResource(std::string_view resource_name) const {
  return absl::StrContains(Sv(resource_name), "huawei.com/") ||
         CustomTypeOf(resource_name).has_value();
}

}  // namespace clusterd::model
