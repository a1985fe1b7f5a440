// The per-fault job check of a clustersim run: signals explained by the faults that touched the
// job, one hot switch per fault, every holder of an expected fault signalled.
#include "sim/signal_attribution.h"

#include "gtest/gtest.h"

namespace clusterd::sim {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1800000000);

absl::Time At(double seconds) { return kStart + absl::Seconds(seconds); }

AttributedFault FaultOn(const std::string& job, double injected, std::optional<double> handled) {
  AttributedFault f;
  f.label = "fault storm";
  f.injected = At(injected);
  f.touched[job] = At(injected);
  if (handled.has_value()) f.handled = At(*handled);
  return f;
}

ReceivedSignal Signal(double at, std::string type, std::vector<std::string> actions = {}) {
  return ReceivedSignal{At(at), std::move(type), std::move(actions)};
}

TEST(SignalAttribution, SignalsOfTheJobAFaultHitAreExplained) {
  std::vector<AttributedFault> faults = {FaultOn("gpt", 50, 80)};
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"gpt", {Signal(60, "preExitProcess"), Signal(60.1, "stopTrain"), Signal(71, "globalFault")}},
      {"llama", {}}};
  EXPECT_TRUE(CheckSignalAttribution(faults, signals, kStart).empty());
}

// The wrong-job bug: the storm on gpt's NPUs also stopped llama.
TEST(SignalAttribution, ASignalOfAJobNoFaultTouchedNamesTheJob) {
  std::vector<AttributedFault> faults = {FaultOn("gpt", 50, 80)};
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"gpt", {Signal(60, "stopTrain")}},
      {"llama", {Signal(60.2, "stopTrain"), Signal(61, "globalFault")}}};
  const std::vector<std::string> v = CheckSignalAttribution(faults, signals, kStart);
  ASSERT_EQ(v.size(), 1u);  // one line per job
  EXPECT_EQ(v[0],
            "job llama was signalled (stopTrain at 60.2s) but no injected fault touched "
            "its NPUs then");
}

TEST(SignalAttribution, ASignalLongAfterTheFaultWasHandledIsNotExplainedByIt) {
  std::vector<AttributedFault> faults = {FaultOn("llama", 36, 38.7)};
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama",
       {Signal(36.1, "hot-switch", {"hot switch"}), Signal(39.5, "changeStrategy"),
        Signal(45, "stopTrain")}}};
  const std::vector<std::string> v = CheckSignalAttribution(faults, signals, kStart);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("stopTrain at 45.0s"), std::string::npos);
}

TEST(SignalAttribution, AJobPlacedOnAFaultyNpuLaterIsTouchedFromThen) {
  AttributedFault link = FaultOn("llama", 20, std::nullopt);
  link.touched["gpt"] = At(45);  // gpt's pod moved onto the NPU at 45 s
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"gpt", {Signal(30, "stopTrain"), Signal(50, "stopTrain")}}};
  const std::vector<std::string> v = CheckSignalAttribution({link}, signals, kStart);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("stopTrain at 30.0s"), std::string::npos);
}

TEST(SignalAttribution, OneFaultOneHotSwitch) {
  AttributedFault sub = FaultOn("llama", 36, std::nullopt);
  sub.label = "sub-health fault";
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama",
       {Signal(36.1, "hot-switch", {"hot switch"}), Signal(37.1, "hot-switch", {"new pod running"}),
        Signal(38, "hot-switch", {"hot switch"})}}};
  const std::vector<std::string> v = CheckSignalAttribution({sub}, signals, kStart);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0],
            "sub-health fault started a second hot switch of job llama at 38.0s (one "
            "fault, one switch)");
}

TEST(SignalAttribution, AnExpectedFaultMustSignalEveryHolderAtInjection) {
  AttributedFault node = FaultOn("llama", 10, 20);
  node.label = "node fault";
  node.touched["gpt"] = At(10);
  node.touched["late"] = At(15);  // placed later: not owed a signal
  node.must_signal = true;
  std::map<std::string, std::vector<ReceivedSignal>> signals = {
      {"llama", {Signal(11, "stopTrain")}}, {"gpt", {Signal(5, "stopTrain")}}};
  const std::vector<std::string> v = CheckSignalAttribution({node}, signals, kStart);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0],
            "job gpt was signalled (stopTrain at 5.0s) but no injected fault touched its "
            "NPUs then");
  EXPECT_EQ(v[1],
            "job gpt held the NPUs of node fault (injected at 10.0s) but was never "
            "signalled");
}

}  // namespace
}  // namespace clusterd::sim
