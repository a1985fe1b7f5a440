#include "agent/agent_core.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/agent_metrics.h"
#include "common/log.h"
#include "model/config_map_names.h"
#include "model/device_info.h"
#include "model/node_info.h"
#include "model/npu_name_list.h"
#include "model/upgrade_fault_reason.h"

namespace clusterd::agent {
namespace {

constexpr std::string_view kAgentCoreLog = "npu-agent";

std::map<std::string, std::string> CimLabels() {
  return {{std::string(model::kConsumerCimLabel), "true"}};
}

// A refused ConfigMap is looked at again this often, so the agent takes the name over without a
// restart once its owner deletes it.
constexpr int64_t kRefusedRecheckMs = 30000;

void Earliest(std::optional<int64_t>& best, std::optional<int64_t> t) {
  if (t.has_value() && (!best.has_value() || *t < *best)) best = t;
}

}  // namespace

AgentCore::AgentCore(AgentOptions options, store::ObjectStore& store, const Clock& clock)
    : options_(std::move(options)), store_(store), clock_(clock) {
  // The engine names NPUs and DeviceList keys from the profile, so the customised names are
  // the ones written, restored and compared with the ConfigMap (§1.2.1).
  options_.profile.ApplyNaming(options_.naming);
}

int64_t AgentCore::NowMs() const { return absl::ToUnixMillis(clock_.Now()); }

void AgentCore::ReportNotes(const std::vector<PolicyNote>& notes) {
  for (const PolicyNote& note : notes) {
    LogWarn(kAgentCoreLog, "policy problem tolerated",
            {{"file", note.file}, {"kind", note.kind}, {"detail", note.message}});
    AgentMetrics::PolicyIssues(note.file, note.kind).Increment();
  }
}

void AgentCore::NoteRefusal(std::string_view configmap, const std::string& name,
                            const std::string& writer) {
  AgentMetrics::Refusals(configmap).Increment();
  AgentMetrics::Writes(configmap, "refused").Increment();
  if (!refused_.insert(name).second) return;
  LogError(kAgentCoreLog,
           "REFUSING to write a ConfigMap another writer owns (the Ascend Device Plugin or NodeD "
           "on a real cluster); it stays untouched. Run npu-agent only on simulated nodes, or "
           "pass --take-over to replace it",
           {{"configmap", name},
            {"writer", writer.empty() ? std::string("unmarked") : writer},
            {"mark", std::string(kWriterAnnotation) + "=" + std::string(kAgentWriter)}});
}

void AgentCore::NoteWritten(const std::string& name, const GuardedWrite& write) {
  refused_.erase(name);
  if (write.existed && write.writer != kAgentWriter) {
    LogWarn(kAgentCoreLog, "took over a ConfigMap another writer owned (--take-over)",
            {{"configmap", name},
             {"writer", write.writer.empty() ? std::string("unmarked") : write.writer}});
  }
}

std::optional<ConfigMapData> AgentCore::ReadOwnData(std::string_view ns, const std::string& name) {
  absl::StatusOr<store::Object> stored =
      store_.Get({std::string(store::kConfigMaps), std::string(ns), name});
  if (!stored.ok()) return std::nullopt;
  if (WriterOf(*stored) != kAgentWriter && !options_.take_over) return std::nullopt;
  return DataOf(*stored);
}

absl::Status AgentCore::Start() {
  start_ms_ = NowMs();
  auto fault_config =
      ReadConfigMapData(store_, model::kFaultConfigNamespace, model::kFaultConfigName);
  if (!fault_config.ok()) {
    LogWarn(kAgentCoreLog, "cannot read the fault policy configmap",
            {{"error", fault_config.status()}});
    fault_config = std::optional<ConfigMapData>();
  }
  absl::StatusOr<DevicePolicyLoad> device =
      LoadDevicePolicy(options_.files, fault_config->has_value() ? &**fault_config : nullptr);
  if (!device.ok()) return device.status();
  ReportNotes(device->notes);
  loaded_fault_config_ = *fault_config;

  auto node_config =
      ReadConfigMapData(store_, model::kNodeFaultConfigNamespace, model::kNodeFaultConfigName);
  if (!node_config.ok()) node_config = std::optional<ConfigMapData>();
  absl::StatusOr<NodePolicyLoad> node =
      LoadNodePolicy(options_.files, node_config->has_value() ? &**node_config : nullptr, nullptr);
  if (!node.ok()) return node.status();
  ReportNotes(node->notes);
  node_catalog_ = node->catalog;
  loaded_node_config_ = *node_config;

  faults::DeviceEngineOptions engine_options;
  engine_options.profile = options_.profile;
  for (int i = 0; i < options_.num_npus; ++i) engine_options.npu_ids.push_back(i);
  engine_options.grace_tolerance = options_.grace_tolerance;
  engine_ = std::make_unique<faults::DeviceFaultEngine>(engine_options, device->policy, start_ms_);
  GraceOptions grace;
  grace.enabled = options_.grace_tolerance;
  grace.profile = options_.profile;
  grace.num_npus = options_.num_npus;
  grace.reset_duration_ms = options_.reset_duration_ms;
  grace.reset_fail_npus = options_.reset_fail_npus;
  grace.allocation_keys = options_.naming.AllocationAnnotationKeys();
  grace_ = std::make_unique<GraceController>(options_.node, std::move(grace), store_);

  // §5.5: ManuallySeparateNPU and UpgradeFaultReason survive a restart through the ConfigMap.
  // Only from the agent's own ConfigMap: another writer's names are not the agent's to keep.
  const std::optional<ConfigMapData> own =
      ReadOwnData(model::kDeviceInfoNamespace, model::DeviceInfoConfigMapName(options_.node));
  if (own.has_value()) {
    const ConfigMapData& data = *own;
    std::vector<std::string> names;
    model::UpgradeFaultReasons reasons;
    if (auto it = data.find(std::string(model::kManuallySeparateNpuKey)); it != data.end()) {
      names = model::SplitNpuNames(it->second);
    }
    if (auto it = data.find(std::string(model::kUpgradeFaultReasonKey)); it != data.end()) {
      auto parsed = model::ParseUpgradeFaultReasons(it->second);
      if (parsed.ok()) {
        reasons = *std::move(parsed);
      } else {
        LogWarn(kAgentCoreLog, "ignoring the stored UpgradeFaultReason",
                {{"error", parsed.status()}});
      }
    }
    engine_->Restore(names, reasons, start_ms_);
    LogInfo(kAgentCoreLog, "restored from the device-info configmap",
            {{"manually_separated", absl::StrJoin(names, ",")},
             {"reasons", static_cast<int64_t>(reasons.size())}});
  }
  auto node_cm = ReadConfigMapData(store_, model::kNodeInfoNamespace,
                                   model::NodeInfoConfigMapName(options_.node));
  node_cm_present_ = node_cm.ok() && node_cm->has_value();
  events_pending_ = true;  // the first cycle writes, replacing whatever the CM held
  LogInfo(kAgentCoreLog, "started",
          {{"node", options_.node},
           {"chip", options_.profile.device_type},
           {"npus", options_.num_npus},
           {"faultCode.json", device->sources["faultCode.json"]},
           {"faultCustomization.json", device->sources["faultCustomization.json"]},
           {"NodeDConfiguration.json", node->source},
           {"resource", options_.profile.keys().available},
           {"first_npu", options_.profile.NpuName(0)},
           {"deviceNameCustomization.json",
            options_.naming_file.empty() ? std::string("none") : options_.naming_file}});
  return absl::OkStatus();
}

void AgentCore::AddSchedule(std::unique_ptr<EventSchedule> schedule) {
  schedules_.push_back(std::move(schedule));
}

bool AgentCore::Inject(AgentEvent event) {
  const int64_t now = NowMs();
  bool accepted = false;
  if (auto* e = std::get_if<faults::NpuFaultEvent>(&event)) {
    if (e->alarm_time_ms == 0) e->alarm_time_ms = now;
    accepted = engine_->Submit(*e);
    if (accepted) RecordFaultEvent(*e, now);
  } else if (auto* s = std::get_if<faults::SwitchFaultInput>(&event)) {
    if (s->alarm_time_ms == 0) s->alarm_time_ms = now;
    accepted = options_.profile.family == faults::ChipFamily::kA3 && options_.switch_faults &&
               switches_.Submit(*s);
  } else {
    nodes_.Submit(std::get<faults::NodeFaultInput>(event));
    accepted = true;
  }
  AgentMetrics::Events(EventKind(event), accepted ? "accepted" : "rejected").Increment();
  if (!accepted) {
    LogWarn(kAgentCoreLog, "event rejected",
            {{"kind", EventKind(event)},
             {"reason", std::holds_alternative<faults::SwitchFaultInput>(event)
                            ? "switch faults are reported on A3 nodes with --switch-faults"
                            : "unknown NPU"}});
    return false;
  }
  events_pending_ = true;
  return true;
}

void AgentCore::RecordFaultEvent(const faults::NpuFaultEvent& event, int64_t now_ms) {
  if (events_ == nullptr) return;
  const bool network = faults::IsNetworkCode(event.code);
  if (network && !options_.profile.has_network()) return;  // the engine drops it too
  const faults::FaultPolicy& policy = engine_->policy();
  NpuFaultReport report;
  // Physical ids 0..N-1 are enumerated in order, so the logic id equals the physical id. An A3
  // card carries two dies; the other chips one NPU per card.
  report.logic_id = event.npu;
  const bool two_dies = options_.profile.family == faults::ChipFamily::kA3;
  report.card_id = two_dies ? event.npu / 2 : event.npu;
  report.device_id = two_dies ? event.npu % 2 : 0;
  report.by_logic_id = options_.profile.family == faults::ChipFamily::kA5;
  report.assertion = event.assertion;
  report.fault_code = policy.UpperHex(event.code);
  report.level = network ? policy.codes.NetworkCodeLevel(event.code)
                         : policy.codes.ChipCodeLevel(event.code, event.severity);
  report.alarm_time_ms = event.alarm_time_ms;
  events_->Record(FaultEventObject(Reporter(), report, now_ms));
}

void AgentCore::RecordReleaseEvent(const std::vector<faults::ReleasedReason>& released,
                                   int64_t now_ms) {
  if (events_ == nullptr || released.empty()) return;
  model::UpgradeFaultReasons reasons;
  for (const faults::ReleasedReason& r : released) reasons[r.npu_name].push_back(r.reason);
  events_->Record(ReleaseEventObject(Reporter(), reasons, now_ms));
}

EventReporter AgentCore::Reporter() const {
  return {options_.pod_name, options_.pod_namespace, options_.node, options_.zone};
}

void AgentCore::ObserveDeviceInfo(std::optional<ConfigMapData> data) {
  if (!last_device_write_ms_.has_value()) return;  // the first write replaces it anyway
  if (!data.has_value() || *data != last_device_data_) device_cm_edited_ = true;
}

void AgentCore::PopDueEvents(int64_t now_ms) {
  for (auto& schedule : schedules_) {
    for (auto at = schedule->NextAtMs(); at.has_value() && start_ms_ + *at <= now_ms;
         at = schedule->NextAtMs()) {
      ScheduledEvent due = schedule->Pop();
      const int64_t alarm = start_ms_ + due.at_ms;
      if (auto* e = std::get_if<faults::NpuFaultEvent>(&due.event)) e->alarm_time_ms = alarm;
      if (auto* s = std::get_if<faults::SwitchFaultInput>(&due.event)) s->alarm_time_ms = alarm;
      Inject(std::move(due.event));
    }
  }
}

void AgentCore::ReloadDevicePolicy() {
  fault_config_dirty_ = false;
  auto data = ReadConfigMapData(store_, model::kFaultConfigNamespace, model::kFaultConfigName);
  if (!data.ok()) {
    LogWarn(kAgentCoreLog, "cannot read the fault policy configmap", {{"error", data.status()}});
    return;
  }
  if (loaded_fault_config_.has_value() && *loaded_fault_config_ == *data) return;
  auto load = LoadDevicePolicy(options_.files, data->has_value() ? &**data : nullptr);
  if (!load.ok()) {
    LogError(kAgentCoreLog, "policy reload failed; keeping the previous policy",
             {{"error", load.status()}});
    AgentMetrics::PolicyIssues("policy", "reload_failed").Increment();
    return;
  }
  ReportNotes(load->notes);
  loaded_fault_config_ = *data;
  engine_->SetPolicy(load->policy);
  policy_changed_ = true;
  LogInfo(kAgentCoreLog, "device fault policy reloaded",
          {{"faultCode.json", load->sources["faultCode.json"]},
           {"faultCustomization.json", load->sources["faultCustomization.json"]},
           {"SwitchFaultCode.json", load->sources["SwitchFaultCode.json"]}});
}

void AgentCore::ReloadNodePolicy() {
  node_config_dirty_ = false;
  auto data =
      ReadConfigMapData(store_, model::kNodeFaultConfigNamespace, model::kNodeFaultConfigName);
  if (!data.ok()) return;
  if (loaded_node_config_.has_value() && *loaded_node_config_ == *data) return;
  loaded_node_config_ = *data;
  auto load = LoadNodePolicy(options_.files, data->has_value() ? &**data : nullptr, node_catalog_);
  if (!load.ok()) return;
  ReportNotes(load->notes);
  if (load->catalog != node_catalog_) {
    node_catalog_ = load->catalog;
    policy_changed_ = true;
    LogInfo(kAgentCoreLog, "node fault policy reloaded", {{"source", load->source}});
  }
}

std::optional<int64_t> AgentCore::CycleDueMs() const {
  std::optional<int64_t> due;
  if (events_pending_ || device_cm_edited_ || policy_changed_ ||
      switches_.NextCycleChangesRecord() || nodes_.HasTransient()) {
    return 0;
  }
  Earliest(due, engine_->NextDeadlineMs());
  Earliest(due, grace_->NextDeadlineMs());
  Earliest(due, device_retry_ms_);
  Earliest(due, node_retry_ms_);
  if (last_device_write_ms_.has_value()) {
    Earliest(due, *last_device_write_ms_ + faults::kDeviceInfoRefreshMs);
  }
  if (node_cm_present_ && last_node_write_ms_.has_value()) {
    Earliest(due, *last_node_write_ms_ + faults::kNodeInfoRefreshMs);
  }
  return due;
}

absl::Time AgentCore::NextWakeup() const {
  std::optional<int64_t> wake;
  if (fault_config_dirty_ || node_config_dirty_) wake = 0;
  for (const auto& schedule : schedules_) {
    if (auto at = schedule->NextAtMs()) Earliest(wake, start_ms_ + *at);
  }
  if (std::optional<int64_t> cycle = CycleDueMs()) {
    // Cycles wait for the write spacing, so what one cycle reports is always written.
    int64_t gated = *cycle;
    if (last_device_write_ms_.has_value()) {
      gated = std::max(gated, *last_device_write_ms_ + faults::kWriteSpacingMs);
    }
    Earliest(wake, gated);
  }
  return wake.has_value() ? absl::FromUnixMillis(*wake) : absl::InfiniteFuture();
}

void AgentCore::Step() {
  const int64_t now = NowMs();
  PopDueEvents(now);
  if (fault_config_dirty_) ReloadDevicePolicy();
  if (node_config_dirty_) ReloadNodePolicy();
  const std::optional<int64_t> due = CycleDueMs();
  if (!due.has_value() || *due > now) return;
  if (last_device_write_ms_.has_value() && now < *last_device_write_ms_ + faults::kWriteSpacingMs) {
    return;
  }
  RunCycle(now);
}

void AgentCore::RunCycle(int64_t now_ms) {
  AgentMetrics::Cycles().Increment();
  // §5.5: the ManuallySeparateNPU field is re-read from the ConfigMap on every write; names the
  // operator deleted release their NPUs in this same cycle.
  std::vector<faults::ReleasedReason> released;
  bool edited = device_cm_edited_;
  absl::StatusOr<store::Object> stored =
      store_.Get({std::string(store::kConfigMaps), std::string(model::kDeviceInfoNamespace),
                  model::DeviceInfoConfigMapName(options_.node)});
  if (stored.ok() && (WriterOf(*stored) == kAgentWriter || options_.take_over)) {
    const ConfigMapData data = DataOf(*stored);
    auto it = data.find(std::string(model::kManuallySeparateNpuKey));
    released =
        engine_->ApplyPublishedManualList(model::SplitNpuNames(it == data.end() ? "" : it->second));
    if (last_device_write_ms_.has_value() && data != last_device_data_) edited = true;
  } else if (absl::IsNotFound(stored.status()) && last_device_write_ms_.has_value()) {
    edited = true;  // deleted behind our back
  }

  std::vector<AgentEvent> driver_events;
  grace_->BeforeCycle(*engine_, now_ms, &driver_events);
  for (const AgentEvent& e : driver_events) engine_->Submit(std::get<faults::NpuFaultEvent>(e));
  faults::CycleResult result = engine_->RunCycle(now_ms);
  grace_->AfterCycle(*engine_, now_ms);
  // §1.2.2 (A3 only): a hot reset in progress forces the switch NodeStatus to Healthy and, from
  // the reset's second cycle, the switch levels to NotHandle. A cycle is one RunCycle, one
  // evaluation of the device-info content (written when it changed, §1.2.6): the reset's first
  // cycle is the one whose AfterCycle started it (its write already lists the ring
  // as Recovering), the second is the next RunCycle, which NextCycleChangesRecord makes due at
  // once (so 1 s later, the write spacing) rather than at the reset's end; the cycle whose
  // BeforeCycle sees the reset finished (success or failure) shows the real values again. The
  // original's cycle is the plugin's periodic device check; here cycles run on demand.
  switches_.RunCycle(
      now_ms, options_.profile.family == faults::ChipFamily::kA3 && grace_->ResetInProgress());
  nodes_.RunCycle();
  released.insert(released.end(), result.released.begin(), result.released.end());
  events_pending_ = device_cm_edited_ = policy_changed_ = false;

  const bool report_switches =
      options_.profile.family == faults::ChipFamily::kA3 && options_.switch_faults;
  faults::DeviceInfoContent content = faults::BuildDeviceInfoContent(
      *engine_, report_switches ? &switches_ : nullptr, options_.identity, now_ms);
  const bool changed = !last_fingerprint_.has_value() || content.fingerprint != *last_fingerprint_;
  const bool refresh = !last_device_write_ms_.has_value() ||
                       now_ms - *last_device_write_ms_ >= faults::kDeviceInfoRefreshMs;
  if (changed || refresh || edited || device_retry_ms_.has_value()) {
    WriteDeviceInfo(content, released, now_ms);
  } else {
    unreported_releases_.insert(unreported_releases_.end(), released.begin(), released.end());
  }
  WriteNodeInfo(now_ms);
}

void AgentCore::WriteDeviceInfo(const faults::DeviceInfoContent& content,
                                const std::vector<faults::ReleasedReason>& released,
                                int64_t now_ms) {
  unreported_releases_.insert(unreported_releases_.end(), released.begin(), released.end());
  ConfigMapSpec spec{std::string(model::kDeviceInfoNamespace),
                     model::DeviceInfoConfigMapName(options_.node), CimLabels(), content.data};
  absl::StatusOr<GuardedWrite> write = WriteOwnedConfigMap(store_, spec, options_.take_over);
  if (!write.ok()) {
    AgentMetrics::Writes("deviceinfo", "error").Increment();
    LogWarn(kAgentCoreLog, "device-info write failed; retrying in 1 s",
            {{"error", write.status()}});
    device_retry_ms_ = now_ms + faults::kWriteSpacingMs;
    return;
  }
  const std::string qualified = absl::StrCat(spec.ns, "/", spec.name);
  if (!write->done) {
    NoteRefusal("deviceinfo", qualified, write->writer);
    device_retry_ms_ = now_ms + kRefusedRecheckMs;
    return;
  }
  NoteWritten(qualified, *write);
  AgentMetrics::Writes("deviceinfo", "ok").Increment();
  ++device_writes_;
  device_retry_ms_.reset();
  last_device_write_ms_ = now_ms;
  last_fingerprint_ = content.fingerprint;
  last_device_data_ = content.data;
  engine_->MarkPublished(content.manually_separated);
  // Releases are announced after the write that shows them (§5.7 B).
  for (const faults::ReleasedReason& r : unreported_releases_) {
    AgentMetrics::Releases(r.reason.upgrade_type).Increment();
    LogInfo(kAgentCoreLog, "EventReleaseUpgradeFault",
            {{"npu", r.npu_name},
             {"fault_code", r.reason.fault_code},
             {"fault_level", r.reason.fault_level},
             {"upgrade_type", r.reason.upgrade_type},
             {"upgrade_time", r.reason.upgrade_time}});
  }
  RecordReleaseEvent(unreported_releases_, now_ms);
  unreported_releases_.clear();
}

void AgentCore::WriteNodeInfo(int64_t now_ms) {
  const model::NodeInfo info = nodes_.Snapshot(*node_catalog_);
  const std::string name = model::NodeInfoConfigMapName(options_.node);
  if (info.fault_dev_list.empty() && info.node_status == model::kNodeStatusHealthy) {
    if (!node_cm_present_) return;
    absl::StatusOr<GuardedWrite> deleted =
        DeleteOwnedConfigMap(store_, model::kNodeInfoNamespace, name, options_.take_over);
    if (!deleted.ok()) {
      AgentMetrics::Writes("nodeinfo", "error").Increment();
      LogWarn(kAgentCoreLog, "node-info delete failed; retrying in 1 s",
              {{"error", deleted.status()}});
      node_retry_ms_ = now_ms + faults::kWriteSpacingMs;
      return;
    }
    // Refused: another writer's node-info is not the agent's to delete, now or later.
    if (!deleted->done) {
      NoteRefusal("nodeinfo", std::string(model::kNodeInfoNamespace) + "/" + name, deleted->writer);
    }
    node_cm_present_ = false;
    node_retry_ms_.reset();
    last_node_info_.reset();
    last_node_write_ms_.reset();
    return;
  }
  const bool due = !last_node_info_.has_value() || !faults::SameNodeInfo(info, *last_node_info_) ||
                   !last_node_write_ms_.has_value() ||
                   now_ms - *last_node_write_ms_ >= faults::kNodeInfoRefreshMs ||
                   node_retry_ms_.has_value();
  if (!due) return;
  ConfigMapSpec spec{
      std::string(model::kNodeInfoNamespace),
      name,
      CimLabels(),
      {{std::string(model::kNodeInfoKey), model::RenderNodeInfoValue(info)},
       {std::string(model::kNodeInfoUpdateTimeKey),
        model::FormatNodeInfoUpdateTime(absl::FromUnixMillis(now_ms), options_.zone)}}};
  absl::StatusOr<GuardedWrite> write = WriteOwnedConfigMap(store_, spec, options_.take_over);
  if (!write.ok()) {
    AgentMetrics::Writes("nodeinfo", "error").Increment();
    LogWarn(kAgentCoreLog, "node-info write failed; retrying in 1 s", {{"error", write.status()}});
    node_retry_ms_ = now_ms + faults::kWriteSpacingMs;
    return;
  }
  const std::string qualified = absl::StrCat(spec.ns, "/", spec.name);
  if (!write->done) {
    NoteRefusal("nodeinfo", qualified, write->writer);
    node_retry_ms_ = now_ms + kRefusedRecheckMs;
    return;
  }
  NoteWritten(qualified, *write);
  AgentMetrics::Writes("nodeinfo", "ok").Increment();
  ++node_writes_;
  node_cm_present_ = true;
  node_retry_ms_.reset();
  last_node_info_ = info;
  last_node_write_ms_ = now_ms;
}

}  // namespace clusterd::agent
