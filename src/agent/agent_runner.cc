#include "agent/agent_runner.h"

#include "common/log.h"
#include "common/thread_name.h"
#include "model/config_map_names.h"

namespace clusterd::agent {

AgentRunner::AgentRunner(AgentCore& core, store::ObjectStore& store, std::string node)
    : core_(core), store_(store), device_info_name_(model::DeviceInfoConfigMapName(node)) {}

AgentRunner::~AgentRunner() { Stop(); }

absl::Status AgentRunner::Start() {
  for (std::string_view ns : {model::kDeviceInfoNamespace, model::kNodeFaultConfigNamespace}) {
    store::WatchOptions options;
    options.ns = std::string(ns);
    auto watch = store_.Watch(store::kConfigMaps, options,
                              [this](const store::WatchEvent& event) { OnWatch(event); });
    if (!watch.ok()) return watch.status();
    watches_.push_back(*std::move(watch));
  }
  thread_ = std::thread([this] {
    SetCurrentThreadName("agent");
    Loop();
  });
  return absl::OkStatus();
}

void AgentRunner::OnWatch(const store::WatchEvent& event) {
  const std::string ns = store::NamespaceOf(event.object());
  const std::string name = store::NameOf(event.object());
  absl::MutexLock lock(&mu_);
  if (ns == model::kDeviceInfoNamespace && name == device_info_name_) {
    if (event.type == store::WatchEventType::kDeleted) {
      device_info_seen_.push_back(std::nullopt);
    } else {
      device_info_seen_.push_back(DataOf(event.object()));
    }
  } else if (ns == model::kFaultConfigNamespace && name == model::kFaultConfigName) {
    fault_config_changed_ = true;
  } else if (ns == model::kNodeFaultConfigNamespace && name == model::kNodeFaultConfigName) {
    node_config_changed_ = true;
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
