// The switch record during an A3 NPU hot reset (fault-pipeline.md §1.2.2): NodeStatus is forced
// to Healthy while the reset runs, and from the reset's second cycle the per-code levels (and
// FaultLevel, unless the 16-port rule applies) read NotHandle; both end with the reset.
#include <string>
#include <vector>

#include "agent/agent_core.h"
#include "agent_test_util.h"
#include "gtest/gtest.h"
#include "model/device_info.h"
#include "model/switch_info.h"

namespace clusterd::agent {
namespace a3_hot_reset_test {

using testing::AddGraceJob;
using testing::AgentFixture;
using testing::TestOptions;

const absl::Time kStart = absl::FromUnixSeconds(1718000000);

// A switch fault registered as Separate in the shipped SwitchFaultCode.json (peer: CPU), and
// a RestartNPU chip fault on NPU 3 that the graceful tolerance hot-resets.
constexpr char kSeparateSwitchFault[] =
    R"({"at_ms": 500, "kind": "switch", "chip_id": 0, "port_id": 1, "code": "[0x08520003,na,cpu,na]", "assertion": "occur"})";
constexpr char kResetFault[] =
    R"({"at_ms": 500, "kind": "chip", "npu": 3, "code": "80E18005", "assertion": "occur"})";
constexpr char kSwitchKey[] = "[0x08520003,na,cpu,na]_0_1";

AgentOptions ResetOptions(const std::string& chip, std::set<int> fail = {}) {
  AgentOptions o = TestOptions(chip);
  o.grace_tolerance = true;
  o.reset_duration_ms = 10000;
  o.reset_fail_npus = std::move(fail);
  return o;
}

// What one device-info write said.
struct Written {
  absl::Duration at;  // since kStart
  std::string recovering;
  std::optional<model::SwitchInfo> switch_info;  // nullopt: no SwitchInfoCfg key
  std::string switch_text;
};

// Steps the agent from wakeup to wakeup until `until`, keeping every device-info write.
std::vector<Written> Trace(AgentFixture& f, absl::Time until, const std::string& recovering_key) {
  std::vector<Written> out;
  int writes = f.core->device_info_writes();
  for (absl::Time wake = f.core->NextWakeup(); wake <= until; wake = f.core->NextWakeup()) {
    if (wake > f.clock.Now()) f.clock.Set(wake);
    f.core->Step();
    if (f.core->device_info_writes() == writes) continue;
    writes = f.core->device_info_writes();
    const ConfigMapData data = f.DeviceInfo();
    Written w;
    w.at = f.clock.Now() - kStart;
    w.recovering = model::ParseDeviceInfoCfg(data.at("DeviceInfoCfg"))
                       ->device_info.device_list.at(recovering_key);
    if (auto it = data.find("SwitchInfoCfg"); it != data.end()) {
      w.switch_text = it->second;
      auto parsed = model::ParseSwitchInfo(it->second);
      EXPECT_TRUE(parsed.ok()) << it->second;
      if (parsed.ok()) w.switch_info = *parsed;
    }
    out.push_back(std::move(w));
  }
  return out;
}

// Index of the first write with a non-empty Recovering list, and of the first empty one after
// it (the reset's end); -1 when absent.
std::pair<int, int> ResetWindow(const std::vector<Written>& trace) {
  int start = -1;
  for (int i = 0; i < static_cast<int>(trace.size()); ++i) {
    if (start < 0 && !trace[i].recovering.empty()) start = i;
    if (start >= 0 && trace[i].recovering.empty()) return {start, i};
  }
  return {start, -1};
}

std::string CodeLevel(const Written& w, const std::string& key) {
  return w.switch_info->fault_time_and_level_map->at(key).fault_level;
}

void ExpectRealValues(const Written& w) {
  ASSERT_TRUE(w.switch_info.has_value());
  EXPECT_EQ(w.switch_info->node_status, "UnHealthy") << w.switch_text;
  EXPECT_EQ(w.switch_info->fault_level, "Separate") << w.switch_text;
  EXPECT_EQ(CodeLevel(w, kSwitchKey), "Separate") << w.switch_text;
}

// The first cycle of the reset forces only NodeStatus; the second masks the levels too.
void ExpectResetPhases(const std::vector<Written>& trace, int start, int end) {
  ASSERT_GE(start, 1);
  ASSERT_GT(end, start + 1);
  ExpectRealValues(trace[start - 1]);
  const Written& first = trace[start];
  EXPECT_EQ(first.recovering, "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3");
  EXPECT_EQ(first.switch_info->node_status, "Healthy") << first.switch_text;
  EXPECT_EQ(first.switch_info->fault_level, "Separate") << first.switch_text;
  EXPECT_EQ(CodeLevel(first, kSwitchKey), "Separate") << first.switch_text;
  // The second cycle follows at the write spacing, not at the reset's end.
  const Written& second = trace[start + 1];
  EXPECT_EQ(second.at - first.at, absl::Seconds(1));
  EXPECT_FALSE(second.recovering.empty());
  EXPECT_EQ(second.switch_info->node_status, "Healthy") << second.switch_text;
  EXPECT_EQ(second.switch_info->fault_level, "NotHandle") << second.switch_text;
  EXPECT_EQ(CodeLevel(second, kSwitchKey), "NotHandle") << second.switch_text;
  EXPECT_EQ(second.switch_info->fault_code, first.switch_info->fault_code);
  for (int i = start + 1; i < end; ++i) {
    EXPECT_EQ(trace[i].switch_info->node_status, "Healthy") << trace[i].switch_text;
    EXPECT_EQ(trace[i].switch_info->fault_level, "NotHandle") << trace[i].switch_text;
  }
  EXPECT_EQ(trace[end].at - first.at, absl::Seconds(10));  // --reset-duration
}

TEST(A3HotReset, SwitchRecordIsHealthyThenNotHandleAndRealAgainAfterASuccessfulReset) {
  AgentFixture f(ResetOptions("Ascend910A3"));
  AddGraceJob(*f.store);
  f.StartWithScript(std::string(kSeparateSwitchFault) + "\n" + kResetFault);
  const std::vector<Written> trace =
      Trace(f, kStart + absl::Seconds(120), "huawei.com/Ascend910-Recovering");
  const auto [start, end] = ResetWindow(trace);
  ExpectResetPhases(trace, start, end);
  ExpectRealValues(trace[end]);
  ExpectRealValues(trace.back());
  // The reset cleared the chip fault: the ring is back in service.
  EXPECT_EQ(model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))
                ->device_info.device_list.at("huawei.com/Ascend910-Unhealthy"),
            "");
}

TEST(A3HotReset, SwitchRecordIsRealAgainAfterAFailedReset) {
  AgentFixture f(ResetOptions("Ascend910A3", {3}));
  AddGraceJob(*f.store);
  f.StartWithScript(std::string(kSeparateSwitchFault) + "\n" + kResetFault);
  const std::vector<Written> trace =
      Trace(f, kStart + absl::Seconds(120), "huawei.com/Ascend910-Recovering");
  const auto [start, end] = ResetWindow(trace);
  ExpectResetPhases(trace, start, end);
  ExpectRealValues(trace[end]);
  ExpectRealValues(trace.back());
  // The failure isolated the NPU.
  EXPECT_EQ(model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))
                ->device_info.device_list.at("huawei.com/Ascend910-Unhealthy"),
            "Ascend910-3");
}

TEST(A3HotReset, SixteenL2PortsStillForceSeparateDuringTheReset) {
  AgentFixture f(ResetOptions("Ascend910A3"));
  AddGraceJob(*f.store);
  std::string script = std::string(kSeparateSwitchFault) + "\n" + kResetFault + "\n";
  for (int port = 0; port < 16; ++port) {
    script += R"({"at_ms": 500, "kind": "switch", "chip_id": 2, "port_id": )" +
              std::to_string(port) +
              R"(, "code": "[0x08520003,na,L2,na]", "assertion": "occur"})"
              "\n";
  }
  // With FaultLevel and NodeStatus unchanged by the second cycle, §1.2.6 writes nothing for the
  // masked per-code levels alone (the time/level map is not compared); a network fault during
  // the reset (which starts at 60.5 s) makes the next write.
  script +=
      R"({"at_ms": 65000, "kind": "network", "npu": 6, "code": "81078603", "assertion": "occur"})";
  f.StartWithScript(script);
  const std::vector<Written> trace =
      Trace(f, kStart + absl::Seconds(120), "huawei.com/Ascend910-Recovering");
  const auto [start, end] = ResetWindow(trace);
  ASSERT_GE(start, 1);
  ASSERT_EQ(end, start + 2);
  EXPECT_EQ(trace[start - 1].switch_info->node_status, "UnHealthy");
  EXPECT_EQ(trace[start - 1].switch_info->fault_level, "Separate");
  EXPECT_EQ(trace[start].switch_info->node_status, "Healthy");
  EXPECT_EQ(trace[start].switch_info->fault_level, "Separate");
  const Written& during = trace[start + 1];
  EXPECT_EQ(during.at, absl::Seconds(65));
  EXPECT_EQ(during.switch_info->node_status, "Healthy") << during.switch_text;
  EXPECT_EQ(during.switch_info->fault_level, "Separate") << during.switch_text;  // 16-port rule
  EXPECT_EQ(CodeLevel(during, kSwitchKey), "NotHandle") << during.switch_text;
  EXPECT_EQ(CodeLevel(during, "[0x08520003,na,L2,na]_2_0"), "NotHandle") << during.switch_text;
  EXPECT_EQ(trace[end].switch_info->node_status, "UnHealthy");
  EXPECT_EQ(trace[end].switch_info->fault_level, "Separate");
  EXPECT_EQ(CodeLevel(trace[end], kSwitchKey), "Separate");
}

TEST(A3HotReset, ANodeWithoutSwitchFaultsStaysHealthyAndNeedsNoExtraCycle) {
  AgentFixture f(ResetOptions("Ascend910A3"));
  AddGraceJob(*f.store);
  f.StartWithScript(kResetFault);
  const std::vector<Written> trace =
      Trace(f, kStart + absl::Seconds(120), "huawei.com/Ascend910-Recovering");
  const auto [start, end] = ResetWindow(trace);
  ASSERT_GE(start, 1);
  ASSERT_GT(end, start);
  for (const Written& w : trace) {
    EXPECT_EQ(w.switch_info->node_status, "Healthy") << w.switch_text;
    EXPECT_EQ(w.switch_info->fault_level, "") << w.switch_text;
  }
}

TEST(A3HotReset, A910BNodeHasNoSwitchRecordDuringItsReset) {
  AgentFixture f(ResetOptions("Ascend910"));
  AddGraceJob(*f.store);
  f.StartWithScript(kResetFault);
  const std::vector<Written> trace =
      Trace(f, kStart + absl::Seconds(120), "huawei.com/Ascend910-Recovering");
  const auto [start, end] = ResetWindow(trace);
  ASSERT_GE(start, 1);
  ASSERT_GT(end, start);
  for (const Written& w : trace) EXPECT_FALSE(w.switch_info.has_value()) << w.switch_text;
}

TEST(A3HotReset, AnA5NodeKeepsTheZeroSwitchRecordDuringItsReset) {
  AgentFixture f(ResetOptions("npu"));
  AddGraceJob(*f.store);
  f.StartWithScript(kResetFault);
  const std::vector<Written> trace =
      Trace(f, kStart + absl::Seconds(120), "huawei.com/npu-Recovering");
  const auto [start, end] = ResetWindow(trace);
  ASSERT_GE(start, 1);
  ASSERT_GT(end, start);
  for (const Written& w : trace) {
    EXPECT_EQ(
        w.switch_text,
        R"({"FaultCode":null,"FaultLevel":"","UpdateTime":0,"NodeStatus":"","FaultTimeAndLevelMap":null})");
  }
}

}  // namespace a3_hot_reset_test
}  // namespace clusterd::agent
