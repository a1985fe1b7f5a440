// npu-agent: the node side of the fault pipeline for one node. Parses flags and assembles
// src/agent; no logic lives here.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "agent/agent_core.h"
#include "agent/agent_runner.h"
#include "agent/event_recorder.h"
#include "agent/fault_sources.h"
#include "common/cli_parse.h"
#include "common/clock.h"
#include "common/data_dir.h"
#include "common/lock_order_checks.h"
#include "common/log.h"
#include "faults/chip_profile.h"
#include "model/device_naming.h"
#include "nlohmann/json.hpp"
#include "store/object_store.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "npu-agent: %s\n", std::string(status.message()).c_str());
  return 1;
}

absl::Status WriteListenInfo(const std::string& path, const nlohmann::ordered_json& info) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << info.dump() << "\n";
    if (!out) return absl::UnavailableError("cannot write " + path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError("cannot write " + path);
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  clusterd::SkipRuntimeLockOrderChecks();
  CLI::App app{
      "npu-agent: the node side of the NPU fault pipeline for one node. It takes raw NPU, "
      "network,\n"
      "switch and node faults from a fault source, decides their handling level and escalation\n"
      "(faultCode.json, faultCustomization.json, SwitchFaultCode.json, NodeDConfiguration.json)\n"
      "and keeps kube-system/mindx-dl-deviceinfo-<node> and mindx-dl/mindx-dl-nodeinfo-<node>\n"
      "current in the object store. Operators override the policy files with the flags below or\n"
      "with the ConfigMaps kube-system/mindx-dl-fault-config and "
      "mindx-dl/mindx-dl-node-fault-config\n"
      "(watched; changes apply without a restart). See docs/npu-agent.md."};
  app.set_version_flag("--version", absl::StrCat("npu-agent ", CLUSTERD_VERSION));

  std::string node;
  std::string store_spec = "dir:./state";
  std::string chip = "Ascend910";
  int npus = 8;
  int super_pod_id = -1;
  int server_index = -1;
  int rack_id = -1;
  std::vector<std::string> sources;
  std::string data_dir = clusterd::DefaultDataDir();
  std::string fault_code_file, switch_fault_code_file, fault_customization_file, node_config_file;
  std::string device_name_file;
  bool switch_faults = true;
  bool grace_tolerance = false;
  clusterd::agent::FaultSourceOptions source_options;
  std::string log_level = "info";
  std::string log_format = "text";
  std::string listen_info_file;
  const char* pod_env = std::getenv("POD_NAME");
  const char* pod_ns_env = std::getenv("POD_NAMESPACE");
  std::string pod_name = pod_env != nullptr ? pod_env : "";
  std::string pod_namespace =
      pod_ns_env != nullptr && *pod_ns_env != 0 ? pod_ns_env : "kube-system";
  bool kube_events = true;

  app.add_option("--node", node, "Node name; the ConfigMaps are named after it")->required();
  app.add_option("--store", store_spec,
                 "Object store: 'memory' or 'dir:PATH' (shared with clusterd and other agents)")
      ->capture_default_str();
  app.add_option("--chip", chip,
                 "Chip family: Ascend910 (910A/910B; also Ascend910A, Ascend910B), Ascend910A3 "
                 "(A3: writes SwitchInfoCfg), npu (A5, resource huawei.com/npu), Ascend310P, "
                 "Ascend310")
      ->capture_default_str();
  app.add_option("--npus", npus, "Number of NPUs on the node (physical ids 0..N-1)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--super-pod-id", super_pod_id,
                 "DeviceInfoCfg SuperPodID (-1: driver reported 0xffffffff, -2: unsupported)")
      ->capture_default_str();
  app.add_option("--server-index", server_index,
                 "DeviceInfoCfg ServerIndex inside the super pod (-1 / -2 as for --super-pod-id)")
      ->capture_default_str();
  app.add_option("--rack-id", rack_id,
                 "DeviceInfoCfg RackID (A5 1D/2D super pods only; omitted when negative)")
      ->capture_default_str();
  app.add_option("--fault-source", sources,
                 "Where faults come from; repeatable: 'script:FILE' (JSON lines, one event per "
                 "line, at_ms from the agent's start), 'grpc:HOST:PORT' (clusterd.agent."
                 "FaultInjection service; port 0 picks one), 'sim' (random faults, see --sim-*)");
  app.add_option("--data-dir", data_dir,
                 "Directory of the shipped policy files (faultCode.json, SwitchFaultCode.json, "
                 "faultCustomization.json, NodeDConfiguration.json)")
      ->capture_default_str();
  app.add_option("--fault-code-file", fault_code_file,
                 "faultCode.json to use instead of the one in --data-dir");
  app.add_option("--switch-fault-code-file", switch_fault_code_file,
                 "SwitchFaultCode.json to use instead of the one in --data-dir");
  app.add_option("--fault-customization-file", fault_customization_file,
                 "faultCustomization.json to use instead of the one in --data-dir");
  app.add_option("--node-fault-config-file", node_config_file,
                 "NodeDConfiguration.json to use instead of the one in --data-dir");
  app.add_option("--device-name-file", device_name_file,
                 "deviceNameCustomization.json: public resource and NPU names per device type "
                 "(Ascend910, Ascend310, Ascend310P). Default: that file in --data-dir when it "
                 "exists, else the fixed names. A broken file stops the agent");
  app.add_option("--switch-faults", switch_faults,
                 "A3 only: report UnifiedBus switch faults in SwitchInfoCfg (false writes the zero "
                 "record)")
      ->capture_default_str();
  app.add_option("--grace-tolerance", grace_tolerance,
                 "Graceful fault tolerance: for jobs on this node that have a reset-config-<job> "
                 "ConfigMap, write the RankList of faulty ranks, hot-reset chips (simulated "
                 "driver) and isolate on failure; FreeRestartNPU stays healthy on an NPU in use")
      ->capture_default_str();
  bool take_over = false;
  app.add_flag("--take-over", take_over,
               "Replace device-info / node-info ConfigMaps another writer owns (the Ascend Device "
               "Plugin, NodeD). Without it npu-agent leaves them untouched and logs a refusal");
  double reset_duration_s = 10;
  std::vector<int> reset_fail_npus;
  app.add_option("--reset-duration", reset_duration_s,
                 "Simulated driver: seconds a hot reset takes")
      ->capture_default_str();
  app.add_option("--reset-fail-npus", reset_fail_npus,
                 "Simulated driver: NPUs whose hot reset fails (comma-separated or repeated)")
      ->delimiter(',');
  app.add_option("--sim-seed", source_options.sim_seed, "sim source: random seed")
      ->capture_default_str();
  app.add_option("--sim-faults-per-hour", source_options.sim_faults_per_hour,
                 "sim source: mean number of faults per hour on this node")
      ->capture_default_str();
  app.add_option("--sim-mean-duration", source_options.sim_mean_duration_s,
                 "sim source: mean seconds until a fault recovers")
      ->capture_default_str();
  app.add_option("--inject-token-file", source_options.inject_token_file,
                 "grpc source: bearer tokens (token,user,uid[,\"groups\"[,expires]]) that may "
                 "Inject from other hosts; without it only loopback callers may Inject")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--listen-info-file", listen_info_file,
                 "Once running, write {\"sources\":[...],\"pid\":N} here (the bound address of a "
                 "grpc source with port 0 is in sources)");

  app.add_option("--pod-name", pod_name,
                 "The agent's pod, named by its Kubernetes Events (involvedObject, "
                 "reportingInstance, the event names); default $POD_NAME, else npu-agent-<node>");
  app.add_option("--pod-namespace", pod_namespace,
                 "Namespace of that pod; default $POD_NAMESPACE, else kube-system (the events "
                 "themselves always go to kube-system)")
      ->capture_default_str();
  app.add_option("--kube-events", kube_events,
                 "Write Kubernetes Events for NPU faults and escalation releases (at most 10 a "
                 "minute, as the Ascend Device Plugin)")
      ->capture_default_str();

  if (std::optional<int> rc = clusterd::ParseFlags(app, argc, argv)) return *rc;

  if (absl::Status s =
          clusterd::ConfigureLogging(log_level, log_format == "json" ? clusterd::LogFormat::kJson
                                                                     : clusterd::LogFormat::kText);
      !s.ok()) {
    return Fail(s);
  }
  const std::optional<clusterd::faults::ChipProfile> profile =
      clusterd::faults::ChipProfile::FromName(chip);
  if (!profile.has_value()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--chip ", chip, " is not a known chip")));
  }

  // A broken customisation file stops the agent: it would name every NPU wrongly.
  absl::StatusOr<clusterd::model::DeviceNaming> naming =
      clusterd::model::DeviceNaming::Load(device_name_file, data_dir, &device_name_file);
  if (!naming.ok()) {
    clusterd::LogError("npu-agent", "device-name customisation file refused",
                       {{"error", naming.status()}});
    return Fail(naming.status());
  }

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // On the kube store the agent caches only what it lists and watches (its node's pods, its
  // ConfigMaps by name) and asks the server for any other object it reads: one agent runs on
  // every node, and none may cache the whole cluster.
  clusterd::store::StoreOptions store_options;
  store_options.kube_scoped_reads = true;
  auto store = clusterd::store::OpenStore(store_spec, store_options);
  if (!store.ok()) return Fail(store.status());

  clusterd::agent::AgentOptions options;
  options.node = node;
  options.profile = *profile;
  options.num_npus = npus;
  options.identity = {super_pod_id, server_index,
                      rack_id >= 0 ? std::optional<int32_t>(rack_id) : std::nullopt};
  options.switch_faults = switch_faults;
  options.grace_tolerance = grace_tolerance;
  options.reset_duration_ms = static_cast<int64_t>(reset_duration_s * 1000);
  options.reset_fail_npus.insert(reset_fail_npus.begin(), reset_fail_npus.end());
  options.take_over = take_over;
  options.pod_name = pod_name.empty() ? "npu-agent-" + node : pod_name;
  options.pod_namespace = pod_namespace;
  options.naming = *std::move(naming);
  options.naming_file = device_name_file;
  options.files = clusterd::agent::PolicyFiles::InDirectory(data_dir);
  if (!fault_code_file.empty()) options.files.fault_code = fault_code_file;
  if (!switch_fault_code_file.empty()) options.files.switch_fault_code = switch_fault_code_file;
  if (!fault_customization_file.empty()) {
    options.files.fault_customization = fault_customization_file;
  }
  if (!node_config_file.empty()) options.files.node_configuration = node_config_file;

  clusterd::agent::EventRecorderOptions event_options;
  event_options.own_prefix = options.pod_name + ".";
  // The API server expires events itself; the embedded stores keep them until pruned.
  event_options.prune = !store_spec.starts_with("kube");
  clusterd::agent::EventRecorder events(event_options, **store, clusterd::Clock::Real());
  clusterd::agent::AgentCore core(options, **store, clusterd::Clock::Real());
  if (kube_events) core.SetEventRecorder(&events);
  if (absl::Status s = core.Start(); !s.ok()) return Fail(s);
  clusterd::agent::AgentRunner runner(core, **store, node);

  source_options.num_npus = npus;
  std::vector<std::unique_ptr<clusterd::agent::FaultSourceHandle>> handles;
  nlohmann::ordered_json described = nlohmann::ordered_json::array();
  for (const std::string& spec : sources) {
    auto handle = clusterd::agent::AttachFaultSource(spec, source_options, core, runner);
    if (!handle.ok()) return Fail(handle.status());
    described.push_back((*handle)->Describe());
    clusterd::LogInfo("npu-agent", "fault source attached", {{"source", (*handle)->Describe()}});
    handles.push_back(*std::move(handle));
  }
  if (kube_events) events.Start();
  if (absl::Status s = runner.Start(); !s.ok()) return Fail(s);
  if (!listen_info_file.empty()) {
    nlohmann::ordered_json info = {{"sources", described}, {"pid", static_cast<int64_t>(getpid())}};
    if (absl::Status s = WriteListenInfo(listen_info_file, info); !s.ok()) return Fail(s);
  }

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  clusterd::LogInfo("npu-agent", "stopping", {{"signal", strsignal(signal_number)}});
  handles.clear();
  runner.Stop();
  events.Stop();
  clusterd::LogInfo("npu-agent", "stopped");
  return 0;
}
