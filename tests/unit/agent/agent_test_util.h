#pragma once

#include <memory>
#include <string>

#include "agent/agent_core.h"
#include "agent/config_map_io.h"
#include "agent/script_schedule.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "model/config_map_names.h"
#include "store/object_store.h"

namespace clusterd::agent::testing {

inline AgentOptions TestOptions(std::string chip = "Ascend910", int npus = 8) {
  AgentOptions o;
  o.node = "node-1";
  o.profile = *faults::ChipProfile::FromName(chip);
  o.num_npus = npus;
  o.files = PolicyFiles::InDirectory(CLUSTERD_DATA_DIR);
  o.zone = absl::UTCTimeZone();
  return o;
}

// A pod of job `job1` (rank index 1) holding NPUs 2 and 3 of node-1 (allocation annotation
// `allocation_key`), and the job's reset-config ConfigMap as the job template creates it.
inline void AddGraceJob(
    store::ObjectStore& store,
    const std::string& allocation_key = "ascend.kubectl.kubernetes.io/ascend-910-configuration") {
  store::Object pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "job1-worker-1"},
        {"namespace", "default"},
        {"labels", {{"job-name", "job1"}}},
        {"annotations",
         {{"hccl/rankIndex", "1"},
          {allocation_key,
           R"({"pod_name":"job1-worker-1","server_id":"u","host_ip":"10.0.0.1","super_pod_id":-2,"devices":[{"device_id":"2","device_ip":"-1","super_device_id":"0"},{"device_id":"3","device_ip":"-1","super_device_id":"0"}],"rack_id":-2,"server_index":"-2","server_ip":"10.0.0.1"})"}}}}},
      {"spec", {{"nodeName", "node-1"}}},
      {"status", {{"phase", "Running"}}}};
  ASSERT_TRUE(store.Create("pods", pod).ok());
  ASSERT_TRUE(
      WriteConfigMap(store, {"default",
                             "reset-config-job1",
                             {{"reset", "true"}},
                             {{"reset.json", R"({"status":"initializing"})"}, {"checkCode", ""}}})
          .ok());
}

// An agent on a memory store and a manual clock starting at 1718000000 s.
struct AgentFixture {
  explicit AgentFixture(AgentOptions options = TestOptions())
      : store(*store::OpenStore("memory")),
        core(std::make_unique<AgentCore>(std::move(options), *store, clock)) {}

  void StartWithScript(const std::string& script) {
    ASSERT_TRUE(core->Start().ok());
    FaultScript parsed = ParseFaultScript(script, 16);
    ASSERT_TRUE(parsed.errors.empty()) << parsed.errors[0].message;
    core->AddSchedule(std::make_unique<ScriptSchedule>(std::move(parsed.events)));
  }
  // Advances the clock to each wakeup up to `until` (absolute), stepping at each.
  void RunUntil(absl::Time until) {
    for (absl::Time wake = core->NextWakeup(); wake <= until; wake = core->NextWakeup()) {
      if (wake > clock.Now()) clock.Set(wake);
      core->Step();
    }
    clock.Set(until);
    core->Step();
  }
  void RunFor(absl::Duration d) { RunUntil(clock.Now() + d); }

  ConfigMapData DeviceInfo() {
    auto data =
        ReadConfigMapData(*store, model::kDeviceInfoNamespace, "mindx-dl-deviceinfo-node-1");
    EXPECT_TRUE(data.ok() && data->has_value());
    return data.ok() && data->has_value() ? **data : ConfigMapData{};
  }
  std::optional<ConfigMapData> NodeInfo() {
    auto data = ReadConfigMapData(*store, model::kNodeInfoNamespace, "mindx-dl-nodeinfo-node-1");
    return data.ok() ? *data : std::nullopt;
  }

  ManualClock clock;
  std::unique_ptr<store::ObjectStore> store;
  std::unique_ptr<AgentCore> core;
};

}  // namespace clusterd::agent::testing
