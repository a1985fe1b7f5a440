#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faults/fault_policy.h"
#include "faults/node_fault_catalog.h"

namespace clusterd::agent {

// Where the shipped (or operator-supplied, via flags) policy files are.
struct PolicyFiles {
  std::string fault_code;           // faultCode.json
  std::string switch_fault_code;    // SwitchFaultCode.json
  std::string fault_customization;  // faultCustomization.json
  std::string node_configuration;   // NodeDConfiguration.json
  // All four from one directory.
  static PolicyFiles InDirectory(const std::string& dir);
};

// One line of the load report: logged, and counted in
// clusterd_npu_agent_policy_issues_total{file,kind}.
struct PolicyNote {
  std::string file;
  std::string kind;  // a PolicyIssue kind, or "format_error" / "fallback"
  std::string message;
};

struct DevicePolicyLoad {
  faults::FaultPolicyPtr policy;
  std::vector<PolicyNote> notes;
  std::map<std::string, std::string> sources;  // document -> "configmap" | file path
};

// Builds the device policy (faultCode.json, SwitchFaultCode.json, faultCustomization.json):
// each document from `config_map` (the data of kube-system/mindx-dl-fault-config, nullptr when
// absent) when its key is present and parses, else from its file (§4, §5 "format error ->
// defaults"). Fails only when a file itself cannot be read or parsed.
absl::StatusOr<DevicePolicyLoad> LoadDevicePolicy(
    const PolicyFiles& files, const std::map<std::string, std::string>* config_map);

struct NodePolicyLoad {
  std::shared_ptr<const faults::NodeFaultCatalog> catalog;
  std::vector<PolicyNote> notes;
  std::string source;
};

// NodeDConfiguration.json (§8): from `config_map` (mindx-dl/mindx-dl-node-fault-config) when
// present and valid; an invalid one keeps `previous`; with neither, the file.
absl::StatusOr<NodePolicyLoad> LoadNodePolicy(
    const PolicyFiles& files, const std::map<std::string, std::string>* config_map,
    std::shared_ptr<const faults::NodeFaultCatalog> previous);

}  // namespace clusterd::agent
