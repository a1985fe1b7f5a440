#pragma once

#include <string_view>

#include "common/metrics.h"

namespace clusterd::agent {

// The npu-agent's series in the default registry.
struct AgentMetrics {
  static Counter& Events(std::string_view kind, std::string_view result);  // accepted|rejected
  static Counter& ScriptErrors();
  static Counter& PolicyIssues(std::string_view file, std::string_view kind);
  static Counter& Writes(std::string_view configmap, std::string_view result);  // ok|error
  // Writes and deletes refused because another writer owns the ConfigMap.
  static Counter& Refusals(std::string_view configmap);
  static Counter& Cycles();
  static Counter& Releases(std::string_view type);
  // Kubernetes Event writes: written|patched|failed|dropped.
  static Counter& KubeEvents(std::string_view result);
  static Counter& KubeEventsPruned();
};

}  // namespace clusterd::agent
