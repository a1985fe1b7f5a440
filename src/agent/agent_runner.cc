#include "agent/agent_runner.h"

#include "common/log.h"
#include "common/thread_name.h"
#include "model/config_map_names.h"

namespace clusterd::agent {

AgentRunner::AgentRunner(AgentCore& core, store::ObjectStore& store, std::string node)
    : core_(core), store_(store), device_info_name_(model::DeviceInfoConfigMapName(node)) {}

AgentRunner::~AgentRunner() { Stop(); }

absl::Status AgentRunner::Start() {
  // One watch per ConfigMap, selected by name: the agent reads three ConfigMaps of the cluster,
  // and on the kube store a watch caches what it selects (a watch of their namespaces would
  // cache every ConfigMap there, on every node).
  const struct {
    std::string_view ns;
    std::string name;
    WatchedConfigMap which;
  } watched[] = {
      {model::kDeviceInfoNamespace, device_info_name_, WatchedConfigMap::kDeviceInfo},
      {model::kFaultConfigNamespace, std::string(model::kFaultConfigName),
       WatchedConfigMap::kFaultConfig},
      {model::kNodeFaultConfigNamespace, std::string(model::kNodeFaultConfigName),
       WatchedConfigMap::kNodeFaultConfig},
  };
  for (const auto& w : watched) {
    store::WatchOptions options;
    options.ns = std::string(w.ns);
    options.fields = store::FieldSelector::Equal("metadata.name", w.name);
    auto watch = store_.Watch(
        store::kConfigMaps, options,
        [this, which = w.which](const store::WatchEvent& event) { OnWatch(which, event); });
    if (!watch.ok()) return watch.status();
    watches_.push_back(*std::move(watch));
  }
  thread_ = std::thread([this] {
    SetCurrentThreadName("agent");
    Loop();
  });
  return absl::OkStatus();
}

void AgentRunner::OnWatch(WatchedConfigMap which, const store::WatchEvent& event) {
  absl::MutexLock lock(&mu_);
  switch (which) {
    case WatchedConfigMap::kDeviceInfo:
      if (event.type == store::WatchEventType::kDeleted) {
        device_info_seen_.push_back(std::nullopt);
      } else {
        device_info_seen_.push_back(DataOf(event.object()));
      }
      break;
    case WatchedConfigMap::kFaultConfig:
      fault_config_changed_ = true;
      break;
    case WatchedConfigMap::kNodeFaultConfig:
      node_config_changed_ = true;
      break;
  }
}

void AgentRunner::Inject(AgentEvent event) {
  absl::MutexLock lock(&mu_);
  inbox_.push_back(std::move(event));
}

void AgentRunner::Loop() {
  for (;;) {
    std::vector<AgentEvent> events;
    std::vector<std::optional<ConfigMapData>> seen;
    bool fault_config = false, node_config = false;
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
      events.swap(inbox_);
      seen.swap(device_info_seen_);
      std::swap(fault_config, fault_config_changed_);
      std::swap(node_config, node_config_changed_);
    }
    for (AgentEvent& e : events) core_.Inject(std::move(e));
    for (auto& data : seen) core_.ObserveDeviceInfo(std::move(data));
    if (fault_config) core_.NoteFaultConfigChanged();
    if (node_config) core_.NoteNodeFaultConfigChanged();
    core_.Step();

    // Sleep until an input arrives or the core's next piece of work is due. The wait is in
    // real time: the agent runs on the real clock; tests drive AgentCore directly.
    const absl::Time wake = core_.NextWakeup();
    absl::MutexLock lock(&mu_);
    auto has_input = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop_ || !inbox_.empty() || !device_info_seen_.empty() || fault_config_changed_ ||
             node_config_changed_;
    };
    mu_.AwaitWithDeadline(absl::Condition(&has_input), wake);
  }
}

void AgentRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
  watches_.clear();
}

}  // namespace clusterd::agent
