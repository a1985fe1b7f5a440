#include <fstream>

#include "agent/agent_metrics.h"
#include "agent/agent_runner.h"
#include "agent/fault_sources.h"
#include "agent/sim_schedule.h"
#include "agent_test_util.h"
#include "gtest/gtest.h"

namespace clusterd::agent {
namespace sources_test {

std::vector<ScheduledEvent> Draw(SimSchedule& s, int n) {
  std::vector<ScheduledEvent> out;
  for (int i = 0; i < n && s.NextAtMs().has_value(); ++i) out.push_back(s.Pop());
  return out;
}

TEST(SimSchedule, SameSeedSameEventsAndEveryFaultRecovers) {
  testing::AgentFixture f;
  ASSERT_TRUE(f.core->Start().ok());
  FaultSourceOptions options;
  options.sim_seed = 42;
  options.sim_faults_per_hour = 3600;  // one a second on average
  SimSchedule a(f.core->engine().policy(), options), b(f.core->engine().policy(), options);
  const auto ea = Draw(a, 200), eb = Draw(b, 200);
  ASSERT_EQ(ea.size(), 200u);
  int occurs = 0, recovers = 0;
  int64_t last = 0;
  for (size_t i = 0; i < ea.size(); ++i) {
    const auto& x = std::get<faults::NpuFaultEvent>(ea[i].event);
    const auto& y = std::get<faults::NpuFaultEvent>(eb[i].event);
    EXPECT_EQ(ea[i].at_ms, eb[i].at_ms);
    EXPECT_EQ(x.code, y.code);
    EXPECT_EQ(x.npu, y.npu);
    EXPECT_GE(ea[i].at_ms, last);  // in time order
    last = ea[i].at_ms;
    EXPECT_LT(x.npu, 8);
    (x.assertion == faults::Assertion::kOccur ? occurs : recovers)++;
  }
  EXPECT_GT(occurs, 80);
  EXPECT_GT(recovers, 60);
  EXPECT_GT(last, 60 * 1000);  // about 100 faults at 1/s
  EXPECT_LT(last, 200 * 1000);

  options.sim_seed = 43;
  SimSchedule c(f.core->engine().policy(), options);
  EXPECT_NE(Draw(c, 1)[0].at_ms, ea[0].at_ms);
}

TEST(FaultSources, SpecsAreValidated) {
  testing::AgentFixture f;
  ASSERT_TRUE(f.core->Start().ok());
  AgentRunner runner(*f.core, *f.store, "node-1");
  FaultSourceOptions options;
  EXPECT_FALSE(AttachFaultSource("file:/x", options, *f.core, runner).ok());
  EXPECT_FALSE(AttachFaultSource("script:", options, *f.core, runner).ok());
  EXPECT_EQ(AttachFaultSource("script:/nonexistent", options, *f.core, runner).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(AttachFaultSource("grpc:nohostport", options, *f.core, runner).ok());
  auto sim = AttachFaultSource("sim", options, *f.core, runner);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ((*sim)->Describe(), "sim(seed=1, faults/h=60)");
}

TEST(FaultSources, ScriptFileEventsReachTheConfigMap) {
  testing::AgentFixture f;
  ASSERT_TRUE(f.core->Start().ok());
  const std::string path = ::testing::TempDir() + "/sources_test_script.jsonl";
  std::ofstream(path)
      << R"({"at_ms": 10, "kind": "chip", "npu": 1, "code": "A2301001", "assertion": "occur"}
oops
)";
  AgentRunner runner(*f.core, *f.store, "node-1");
  const uint64_t errors_before = AgentMetrics::ScriptErrors().Value();
  auto handle = AttachFaultSource("script:" + path, {}, *f.core, runner);
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_EQ(AgentMetrics::ScriptErrors().Value(), errors_before + 1);
  f.core->Step();
  f.RunFor(absl::Seconds(1));
  EXPECT_NE(
      f.DeviceInfo().at("DeviceInfoCfg").find(R"("huawei.com/Ascend910-Unhealthy":"Ascend910-1")"),
      std::string::npos);
}

}  // namespace sources_test
}  // namespace clusterd::agent
