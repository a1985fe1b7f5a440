// The per-fault job check of a clustersim run: signals explained by the faults that touched the
// job, one hot switch per fault, every holder of an expected fault signalled.
#include "sim/signal_attribution.h"

#include "gtest/gtest.h"

namespace clusterd::sim {
namespace signal_attribution_test {

const absl::Time kStart = absl::FromUnixSeconds(1800000000);

absl::Time At(double seconds) { return kStart + absl::Seconds(seconds); }

AttributedFault FaultOn(const std::string& job, double injected, std::optional<double> handled) {
  AttributedFault f;
  f.label = "fault storm";
  f.injected = At(injected);
  f.touched[job] = Touch{At(injected), std::nullopt};
  if (handled.has_value()) f.handled = At(*handled);
  return f;
}

// A signal of the cycle going on (`starts` false) or one that starts a new cycle.
ReceivedSignal Signal(double at, std::string type, std::vector<std::string> actions = {},
                      bool starts = false) {
  return ReceivedSignal{At(at), std::move(type), std::move(actions), starts};
}
ReceivedSignal Starts(double at, std::string type, std::vector<std::string> actions = {}) {
  return Signal(at, std::move(type), std::move(actions), true);
}

TEST(SignalAttribution, SignalsOfTheJobAFaultHitAreExplained) {
  std::vector<AttributedFault> faults = {FaultOn("gpt", 50, 80)};
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"gpt",
       {Starts(60, "preExitProcess"), Signal(60.1, "stopTrain"), Signal(71, "globalFault"),
        Signal(131, "changeStrategy")}},
      {"llama", {}}};
  EXPECT_TRUE(CheckSignalAttribution(faults, signals, kStart).empty());
}

// The wrong-job bug: the storm on gpt's NPUs also stopped llama.
TEST(SignalAttribution, ASignalOfAJobNoFaultTouchedNamesTheJob) {
  std::vector<AttributedFault> faults = {FaultOn("gpt", 50, 80)};
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"gpt", {Starts(60, "stopTrain")}},
      {"llama", {Starts(60.2, "stopTrain"), Signal(61, "globalFault"), Starts(70, "stopTrain")}}};
  const std::vector<std::string> v = CheckSignalAttribution(faults, signals, kStart);
  ASSERT_EQ(v.size(), 1u);  // one line per job
  EXPECT_EQ(v[0],
            "job llama was signalled (stopTrain at 60.2s) but no injected fault touched "
            "its NPUs then");
}

TEST(SignalAttribution, ACycleAfterTheFaultClearedIsNotExplainedByIt) {
  AttributedFault sub = FaultOn("llama", 36, 38.7);
  sub.cleared = At(46);
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama",
       {Starts(36.1, "hot-switch", {"hot switch"}), Signal(39.5, "changeStrategy"),
        Starts(50, "stopTrain")}}};
  const std::vector<std::string> v = CheckSignalAttribution({sub}, signals, kStart);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("stopTrain at 50.0s"), std::string::npos);
}

// A UCE still reported after its retry window stops the job again: that cycle is the fault's.
TEST(SignalAttribution, AFaultThatLastsMayStartAnotherCycle) {
  AttributedFault uce = FaultOn("llama", 5, 6);
  uce.cleared = At(40);
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama", {Starts(5.1, "stopTrain"), Starts(35.6, "stopTrain")}}};
  EXPECT_TRUE(CheckSignalAttribution({uce}, signals, kStart).empty());
}

// The old pod of a hot-switched rank left the faulty NPU: a later cycle is not that fault's,
// though the fault is still there.
TEST(SignalAttribution, ACycleAfterTheJobLeftTheNpusIsNotExplainedByTheirFault) {
  AttributedFault sub = FaultOn("llama", 36.5, 38.7);
  sub.touched["llama"].until = At(37.6);
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama",
       {Starts(36.5, "hot-switch", {"hot switch"}), Starts(37.6, "hot-switch", {"new pod running"}),
        Starts(41.1, "hot-switch", {"hot switch"})}}};
  const std::vector<std::string> v = CheckSignalAttribution({sub}, signals, kStart);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("hot-switch at 41.1s"), std::string::npos);
}

TEST(SignalAttribution, OneFaultOneHotSwitch) {
  AttributedFault sub = FaultOn("llama", 36, std::nullopt);
  sub.label = "sub-health fault";
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama",
       {Starts(36.1, "hot-switch", {"hot switch"}), Starts(37.1, "hot-switch", {"new pod running"}),
        Starts(38, "hot-switch", {"hot switch"})}}};
  const std::vector<std::string> v = CheckSignalAttribution({sub}, signals, kStart);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0],
            "sub-health fault started a second hot switch of job llama at 38.0s (one "
            "fault, one switch)");
}

TEST(SignalAttribution, AnExpectedFaultMustSignalEveryHolderAtInjection) {
  AttributedFault node = FaultOn("llama", 10, 20);
  node.label = "node fault";
  node.touched["gpt"] = Touch{At(10), std::nullopt};
  node.touched["late"] = Touch{At(15), std::nullopt};  // placed later: not owed a signal
  node.must_signal = true;
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama", {Starts(11, "stopTrain")}}, {"gpt", {Starts(5, "stopTrain")}}};
  const std::vector<std::string> v = CheckSignalAttribution({node}, signals, kStart);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0],
            "job gpt was signalled (stopTrain at 5.0s) but no injected fault touched its "
            "NPUs then");
  EXPECT_EQ(v[1],
            "job gpt held the NPUs of node fault (injected at 10.0s) but was never "
            "signalled");
}

}  // namespace signal_attribution_test
}  // namespace clusterd::sim
