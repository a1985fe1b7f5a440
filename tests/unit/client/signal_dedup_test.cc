#include "client/signal_dedup.h"

#include "gtest/gtest.h"

namespace clusterd::client {
namespace signal_dedup_test {

::ProcessManageSignal Signal(const std::string& uuid, const std::string& type,
                             const std::string& strategy = "") {
  ::ProcessManageSignal s;
  s.set_uuid(uuid);
  s.set_jobid("J");
  s.set_signaltype(type);
  s.set_changestrategy(strategy);
  return s;
}

TEST(SignalDeduplicator, ASignalRepeatedInTheSameCycleIsSuppressed) {
  SignalDeduplicator dedup;
  EXPECT_TRUE(dedup.Admit(Signal("U1", "stopTrain")));
  EXPECT_FALSE(dedup.Admit(Signal("U1", "stopTrain")));
  EXPECT_EQ(dedup.suppressed(), 1u);
}

TEST(SignalDeduplicator, ANewStrategyInTheSameCycleIsAdmitted) {
  SignalDeduplicator dedup;
  EXPECT_TRUE(dedup.Admit(Signal("U1", "changeStrategy", "recover")));
  EXPECT_TRUE(dedup.Admit(Signal("U1", "changeStrategy", "dump")));
  EXPECT_FALSE(dedup.Admit(Signal("U1", "changeStrategy", "recover")));
}

TEST(SignalDeduplicator, TheSameStepOfANewCycleIsAdmitted) {
  SignalDeduplicator dedup;
  EXPECT_TRUE(dedup.Admit(Signal("U1", "stopTrain")));
  EXPECT_TRUE(dedup.Admit(Signal("U2", "stopTrain")));
}

TEST(SignalDeduplicator, DifferentSignalTypesOfOneCycleAreDistinct) {
  SignalDeduplicator dedup;
  EXPECT_TRUE(dedup.Admit(Signal("U1", "stopTrain")));
  EXPECT_TRUE(dedup.Admit(Signal("U1", "globalFault")));
  EXPECT_TRUE(dedup.Admit(Signal("U1", "changeStrategy", "recover")));
  EXPECT_TRUE(dedup.Admit(Signal("U1", "killMaster")));
}

TEST(SignalDeduplicator, KeepAlivesAndEmptyUuidsAreNeverSuppressed) {
  SignalDeduplicator dedup;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(dedup.Admit(Signal("", "keep-alive")));
    EXPECT_TRUE(dedup.Admit(Signal("U1", "keep-alive")));
    EXPECT_TRUE(dedup.Admit(Signal("", "hot-switch")));
  }
  EXPECT_EQ(dedup.suppressed(), 0u);
}

TEST(SignalDeduplicator, OnlyTheLastCyclesAreRemembered) {
  SignalDeduplicator dedup(/*max_cycles=*/2);
  EXPECT_TRUE(dedup.Admit(Signal("U1", "stopTrain")));
  EXPECT_TRUE(dedup.Admit(Signal("U2", "stopTrain")));
  EXPECT_TRUE(dedup.Admit(Signal("U3", "stopTrain")));
  EXPECT_FALSE(dedup.Admit(Signal("U3", "stopTrain")));
  EXPECT_FALSE(dedup.Admit(Signal("U2", "stopTrain")));
  EXPECT_TRUE(dedup.Admit(Signal("U1", "stopTrain")));  // forgotten
}

TEST(SignalDeduplicator, ClearForgetsEverything) {
  SignalDeduplicator dedup;
  EXPECT_TRUE(dedup.Admit(Signal("U1", "stopTrain")));
  dedup.Clear();
  EXPECT_TRUE(dedup.Admit(Signal("U1", "stopTrain")));
}

}  // namespace signal_dedup_test
}  // namespace clusterd::client
