#include "agent/agent_metrics.h"

#include <string>

namespace clusterd::agent {

Counter& AgentMetrics::Events(std::string_view kind, std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_npu_agent_events_total", "Fault events received, by kind and result.",
      {{"kind", std::string(kind)}, {"result", std::string(result)}});
}

Counter& AgentMetrics::ScriptErrors() {
  return MetricsRegistry::Default().GetCounter("clusterd_npu_agent_script_errors_total",
                                               "Fault script lines skipped as malformed.");
}

Counter& AgentMetrics::PolicyIssues(std::string_view file, std::string_view kind) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_npu_agent_policy_issues_total",
      "Policy file problems tolerated (entry ignored, field defaulted, fallback to the file).",
      {{"file", std::string(file)}, {"kind", std::string(kind)}});
}

Counter& AgentMetrics::Writes(std::string_view configmap, std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_npu_agent_configmap_writes_total", "ConfigMap writes, by ConfigMap and result.",
      {{"configmap", std::string(configmap)}, {"result", std::string(result)}});
}

Counter& AgentMetrics::Refusals(std::string_view configmap) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_npu_agent_configmap_refusals_total",
      "Writes and deletes refused because the ConfigMap belongs to another writer (the device "
      "plugin or NodeD), by ConfigMap.",
      {{"configmap", std::string(configmap)}});
}

Counter& AgentMetrics::Cycles() {
  return MetricsRegistry::Default().GetCounter("clusterd_npu_agent_cycles_total",
                                               "Fault processing cycles run.");
}

Counter& AgentMetrics::Releases(std::string_view type) {
  return MetricsRegistry::Default().GetCounter("clusterd_npu_agent_escalation_releases_total",
                                               "Escalation reasons released, by type.",
                                               {{"type", std::string(type)}});
}

Counter& AgentMetrics::KubeEvents(std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_npu_agent_kube_events_total",
      "Kubernetes Events for NPU faults and escalation releases, by result.",
      {{"result", std::string(result)}});
}

Counter& AgentMetrics::KubeEventsPruned() {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_npu_agent_kube_events_pruned_total",
      "Own Kubernetes Events deleted from an embedded store (beyond the count or age limit).");
}

}  // namespace clusterd::agent
