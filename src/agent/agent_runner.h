#pragma once

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/agent_core.h"
#include "store/object_store.h"

namespace clusterd::agent {

// Owns the agent's one thread: it feeds AgentCore the inputs that arrive from other threads
// (injected events, store watch notifications) and sleeps on a condition until either an input
// arrives or the core's next wakeup is due. Nothing polls.
class AgentRunner {
 public:
  AgentRunner(AgentCore& core, store::ObjectStore& store, std::string node);
  ~AgentRunner();

  // Starts the watches (own device-info CM, mindx-dl-fault-config, mindx-dl-node-fault-config,
  // each selected by namespace and name) and the thread. core.Start() must have succeeded.
  absl::Status Start();
  // Thread-safe: queue an event for the core.
  void Inject(AgentEvent event);
  // Stops the thread and the watches; idempotent.
  void Stop();

 private:
  enum class WatchedConfigMap { kDeviceInfo, kFaultConfig, kNodeFaultConfig };

  void Loop();
  void OnWatch(WatchedConfigMap which, const store::WatchEvent& event);

  AgentCore& core_;
  store::ObjectStore& store_;
  const std::string device_info_name_;

  absl::Mutex mu_;
  std::vector<AgentEvent> inbox_ ABSL_GUARDED_BY(mu_);
  std::vector<std::optional<ConfigMapData>> device_info_seen_ ABSL_GUARDED_BY(mu_);
  bool fault_config_changed_ ABSL_GUARDED_BY(mu_) = false;
  bool node_config_changed_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;

  std::vector<std::unique_ptr<store::WatchHandle>> watches_;
  std::thread thread_;
};

}  // namespace clusterd::agent
