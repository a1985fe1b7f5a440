// Which rows of a clustersim run fail it by their `expect`: slow_link and slow_*_link rows bind
// (a missed or wrong detection fails the run with one line); the job fault kinds only show it.
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "sim/scenario_run.h"

namespace clusterd::sim {
namespace scenario_expect_test {

FaultSpec SlowLink(std::string expect) {
  FaultSpec f;
  f.kind = "slow_link";
  f.node = "node-2";
  f.npu = 3;
  f.label = "slow NPU link";
  f.expect = std::move(expect);
  return f;
}

FaultRun Row(const FaultSpec& spec, std::string strategy, bool injected = true) {
  FaultRun r;
  r.spec = &spec;
  if (injected) r.injected = absl::Now();
  r.strategy = std::move(strategy);
  if (!r.strategy.empty()) r.detected = r.decided = r.resumed = r.injected;
  return r;
}

TEST(ScenarioExpect, SlowLinkFoundAsExpectedPasses) {
  const FaultSpec spec = SlowLink("200001010 slow link");
  EXPECT_TRUE(ExpectationFailures({Row(spec, "200001010 slow link")}).empty());
}

TEST(ScenarioExpect, SlowLinkMissedFailsTheRun) {
  const FaultSpec spec = SlowLink("200001010 slow link");
  EXPECT_EQ(ExpectationFailures({Row(spec, "")}),
            std::vector<std::string>{"SLOW LINK: slow NPU link at node-2/npu3: clusterd reported "
                                     "no slow link, expected 200001010 slow link"});
  EXPECT_EQ(ExpectationFailures({Row(spec, "", false)}),
            std::vector<std::string>{"SLOW LINK: slow NPU link at node-2/npu3: the fault was "
                                     "never injected, expected 200001010 slow link"});
}

TEST(ScenarioExpect, SlowLinkReportedWithAnotherCodeFailsTheRun) {
  const FaultSpec spec = SlowLink("200001010 slow link");
  EXPECT_EQ(ExpectationFailures({Row(spec, "200001011 slow link")}),
            std::vector<std::string>{"SLOW LINK: slow NPU link at node-2/npu3: clusterd reported "
                                     "200001011 slow link, expected 200001010 slow link"});
}

TEST(ScenarioExpect, SlowLinkWithoutExpectAndJobFaultsDoNotBind) {
  const FaultSpec free = SlowLink("");
  FaultSpec chip;
  chip.kind = "chip";
  chip.expect = "retry";
  EXPECT_TRUE(ExpectationFailures({Row(free, ""), Row(chip, "recover")}).empty());
}

TEST(ScenarioExpect, A5LinkNamedButNotInTheFaultCentreFailsTheRun) {
  FaultSpec spec;
  spec.kind = "slow_l1_link";
  spec.label = "slow rack->L1 link";
  spec.expect = "link 0.rack-1->0.L1-0";
  FaultRun r = Row(spec, "link 0.rack-1->0.L1-0");
  r.resumed.reset();
  r.net_fault_nodes = {"0.rack-1"};
  EXPECT_EQ(ExpectationFailures({r}),
            std::vector<std::string>{
                "PUBLIC FAULT: slow rack->L1 link: clusterd reported link 0.rack-1->0.L1-0 but its "
                "fault centre holds no public fault 200001012 on 0.rack-1 "
                "(cluster-system/statistic-fault-info)"});
  EXPECT_EQ(ExpectationFailures({Row(spec, "npu 10.0.3.10")}),
            std::vector<std::string>{"ROOT CAUSE: slow rack->L1 link: clusterd reported root "
                                     "cause(s) npu 10.0.3.10, expected link 0.rack-1->0.L1-0"});
}

}  // namespace scenario_expect_test
}  // namespace clusterd::sim
