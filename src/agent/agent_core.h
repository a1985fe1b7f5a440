#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/agent_event.h"
#include "agent/config_map_io.h"
#include "agent/config_map_owner.h"
#include "agent/event_recorder.h"
#include "agent/event_schedule.h"
#include "agent/grace_controller.h"
#include "agent/kube_event.h"
#include "agent/policy_loader.h"
#include "common/clock.h"
#include "faults/chip_profile.h"
#include "faults/device_fault_engine.h"
#include "faults/device_info_render.h"
#include "faults/node_fault_engine.h"
#include "faults/switch_fault_engine.h"
#include "faults/write_gate.h"
#include "model/device_naming.h"
#include "store/object_store.h"

namespace clusterd::agent {

struct AgentOptions {
  std::string node;
  faults::ChipProfile profile;
  int num_npus = 8;
  faults::DeviceInfoIdentity identity;
  bool switch_faults = true;          // A3: report UnifiedBus switch faults (else the zero record)
  bool grace_tolerance = false;       // graceful fault tolerance (GraceController) on
  int64_t reset_duration_ms = 10000;  // simulated driver: hot reset time
  std::set<int> reset_fail_npus;      // simulated driver: resets of these NPUs fail
  PolicyFiles files;
  // deviceNameCustomization.json (seed 001 Table 7), already parsed (a broken file stops the
  // agent before it gets here), and where it came from ("" when none).
  model::DeviceNaming naming;
  std::string naming_file;
  // Replace device-info / node-info ConfigMaps another writer owns (normally refused: on a real
  // cluster the Ascend Device Plugin and NodeD own them).
  bool take_over = false;
  absl::TimeZone zone = absl::LocalTimeZone();  // of node-info updateTime
  // The pod the Kubernetes Events name as involvedObject and reportingInstance.
  std::string pod_name;
  std::string pod_namespace = "kube-system";
};

// The npu-agent's decisions and side effects, single-threaded and driven by Step(): it pops
// due scheduled events, reloads policy when told, runs a fault cycle when one is due and writes
// the device-info / node-info ConfigMaps by the §1.2.6 / §1.3 rules. It never sleeps or waits;
// NextWakeup() says when Step() has work again. AgentRunner supplies the thread; unit tests
// call Step() with a ManualClock. Not thread-safe.
class AgentCore {
 public:
  AgentCore(AgentOptions options, store::ObjectStore& store, const Clock& clock);

  // Loads the policy (ConfigMaps, else files) and restores ManuallySeparateNPU and
  // UpgradeFaultReason from the existing device-info ConfigMap. Fails when the policy files
  // cannot be loaded.
  absl::Status Start();

  void AddSchedule(std::unique_ptr<EventSchedule> schedule);
  // Where the Kubernetes Events for faults and escalation releases go; none without it. The
  // recorder only queues, so events never delay a ConfigMap write.
  void SetEventRecorder(EventRecorder* recorder) { events_ = recorder; }
  // An event from a source; an alarm time of 0 becomes now. False when the engine rejects it
  // (unknown NPU, malformed switch code).
  bool Inject(AgentEvent event);
  // The own device-info ConfigMap as the store now has it (nullopt: deleted). An edit by
  // someone else (an operator deleting a ManuallySeparateNPU name) makes a cycle due.
  void ObserveDeviceInfo(std::optional<ConfigMapData> data);
  void NoteFaultConfigChanged() { fault_config_dirty_ = true; }
  void NoteNodeFaultConfigChanged() { node_config_dirty_ = true; }

  void Step();
  // When Step() next has work; InfiniteFuture when only a new input can create some.
  absl::Time NextWakeup() const;

  const faults::DeviceFaultEngine& engine() const { return *engine_; }
  int device_info_writes() const { return device_writes_; }
  int node_info_writes() const { return node_writes_; }

 private:
  int64_t NowMs() const;
  void PopDueEvents(int64_t now_ms);
  void ReloadDevicePolicy();
  void ReloadNodePolicy();
  std::optional<int64_t> CycleDueMs() const;
  void RunCycle(int64_t now_ms);
  void WriteDeviceInfo(const faults::DeviceInfoContent& content,
                       const std::vector<faults::ReleasedReason>& released, int64_t now_ms);
  void WriteNodeInfo(int64_t now_ms);
  void ReportNotes(const std::vector<PolicyNote>& notes);
  void RecordFaultEvent(const faults::NpuFaultEvent& event, int64_t now_ms);
  void RecordReleaseEvent(const std::vector<faults::ReleasedReason>& released, int64_t now_ms);
  EventReporter Reporter() const;
  // Logs (once per ConfigMap until a write succeeds) and counts a refused write or delete.
  void NoteRefusal(std::string_view configmap, const std::string& name, const std::string& writer);
  void NoteWritten(const std::string& name, const GuardedWrite& write);
  // The stored ConfigMap's data when it is the agent's to read back (its mark, or --take-over).
  std::optional<ConfigMapData> ReadOwnData(std::string_view ns, const std::string& name);

  AgentOptions options_;
  store::ObjectStore& store_;
  const Clock& clock_;
  int64_t start_ms_ = 0;

  std::unique_ptr<faults::DeviceFaultEngine> engine_;
  faults::SwitchFaultEngine switches_;
  faults::NodeFaultEngine nodes_;
  std::shared_ptr<const faults::NodeFaultCatalog> node_catalog_;
  std::unique_ptr<GraceController> grace_;
  std::vector<std::unique_ptr<EventSchedule>> schedules_;
  EventRecorder* events_ = nullptr;

  bool events_pending_ = false;
  bool fault_config_dirty_ = false;
  bool node_config_dirty_ = false;
  bool device_cm_edited_ = false;
  bool policy_changed_ = false;

  // Device info: what was last written, when, and a pending retry.
  std::optional<int64_t> last_device_write_ms_;
  std::optional<faults::DeviceInfoFingerprint> last_fingerprint_;
  ConfigMapData last_device_data_;
  std::optional<int64_t> device_retry_ms_;
  std::vector<faults::ReleasedReason> unreported_releases_;
  int device_writes_ = 0;

  // Policy ConfigMap contents last loaded, so repeated notifications do not reload.
  std::optional<std::optional<ConfigMapData>> loaded_fault_config_;
  std::optional<std::optional<ConfigMapData>> loaded_node_config_;

  // Node info.
  bool node_cm_present_ = false;
  std::optional<int64_t> last_node_write_ms_;
  std::optional<model::NodeInfo> last_node_info_;
  std::optional<int64_t> node_retry_ms_;
  int node_writes_ = 0;

  // ConfigMaps whose refusal has been logged; cleared by a successful write.
  std::set<std::string> refused_;
};

}  // namespace clusterd::agent
