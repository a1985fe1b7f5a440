#include "agent/policy_loader.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "faults/hex_code.h"
#include "model/config_map_names.h"

namespace clusterd::agent {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read policy file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::string* Key(const std::map<std::string, std::string>* data, std::string_view key) {
  if (data == nullptr) return nullptr;
  auto it = data->find(std::string(key));
  return it == data->end() ? nullptr : &it->second;
}

// Parses one document from the ConfigMap when present, falling back to its file.
template <typename T, typename ParseFn>
absl::StatusOr<T> LoadDocument(std::string_view key, const std::string& path,
                               const std::map<std::string, std::string>* config_map, ParseFn parse,
                               DevicePolicyLoad& load) {
  const std::string name(key);
  if (const std::string* text = Key(config_map, key)) {
    faults::PolicyIssues issues;
    absl::StatusOr<T> parsed = parse(*text, &issues);
    if (parsed.ok()) {
      for (auto& issue : issues) load.notes.push_back({name, issue.kind, issue.message});
      load.sources[name] = "configmap";
      return parsed;
    }
    load.notes.push_back({name, "format_error",
                          absl::StrCat("configmap ", Sv(model::kFaultConfigName), " key ", name,
                                       ": ", parsed.status().message(), "; using ", path)});
  }
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  faults::PolicyIssues issues;
  absl::StatusOr<T> parsed = parse(*text, &issues);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", parsed.status().message()));
  }
  for (auto& issue : issues) load.notes.push_back({name, issue.kind, issue.message});
  load.sources[name] = path;
  return parsed;
}

}  // namespace

PolicyFiles PolicyFiles::InDirectory(const std::string& dir) {
  return PolicyFiles{dir + "/faultCode.json", dir + "/SwitchFaultCode.json",
                     dir + "/faultCustomization.json", dir + "/NodeDConfiguration.json"};
}

absl::StatusOr<DevicePolicyLoad> LoadDevicePolicy(
    const PolicyFiles& files, const std::map<std::string, std::string>* config_map) {
  DevicePolicyLoad load;
  auto policy = std::make_shared<faults::FaultPolicy>();
  auto codes = LoadDocument<faults::FaultCodeCatalog>(
      model::kFaultCodeKey, files.fault_code, config_map,
      [](const std::string& t, faults::PolicyIssues* i) {
        return faults::FaultCodeCatalog::Parse(t, i);
      },
      load);
  if (!codes.ok()) return codes.status();
  auto custom = LoadDocument<faults::FaultCustomization>(
      model::kFaultCustomizationKey, files.fault_customization, config_map,
      [](const std::string& t, faults::PolicyIssues* i) {
        return faults::FaultCustomization::Parse(t, i);
      },
      load);
  if (!custom.ok()) return custom.status();
  auto switches = LoadDocument<faults::SwitchFaultCatalog>(
      model::kSwitchFaultCodeKey, files.switch_fault_code, config_map,
      [](const std::string& t, faults::PolicyIssues* i) {
        return faults::SwitchFaultCatalog::Parse(t, i);
      },
      load);
  if (!switches.ok()) return switches.status();
  policy->codes = *std::move(codes);
  policy->customization = *std::move(custom);
  policy->switch_codes = *std::move(switches);
  load.policy = std::move(policy);
  return load;
}

absl::StatusOr<NodePolicyLoad> LoadNodePolicy(
    const PolicyFiles& files, const std::map<std::string, std::string>* config_map,
    std::shared_ptr<const faults::NodeFaultCatalog> previous) {
  NodePolicyLoad load;
  const std::string name(model::kNodeDConfigurationKey);
  if (const std::string* text = Key(config_map, model::kNodeDConfigurationKey)) {
    auto parsed = faults::NodeFaultCatalog::Parse(*text);
    if (parsed.ok()) {
      load.catalog = std::make_shared<faults::NodeFaultCatalog>(*std::move(parsed));
      load.source = "configmap";
      return load;
    }
    load.notes.push_back(
        {name, "format_error",
         absl::StrCat("configmap ", Sv(model::kNodeFaultConfigName), ": ",
                      parsed.status().message(),
                      previous ? "; keeping the previous configuration" : "; using the file")});
  }
  if (previous != nullptr) {
    load.catalog = std::move(previous);
    load.source = "previous";
    return load;
  }
  absl::StatusOr<std::string> text = ReadFile(files.node_configuration);
  if (!text.ok()) return text.status();
  auto parsed = faults::NodeFaultCatalog::Parse(*text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.node_configuration, ": ", parsed.status().message()));
  }
  load.catalog = std::make_shared<faults::NodeFaultCatalog>(*std::move(parsed));
  load.source = files.node_configuration;
  return load;
}

}  // namespace clusterd::agent
