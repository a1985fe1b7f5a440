// Goodput accounting (docs/goodput.md): a scripted job life, time by cause, ETTR over the life
// and the window, a clock stepping back, pruning and persistence.
#include "cluster/goodput_ledger.h"

#include <map>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace goodput_ledger_test {

using model::JobStatus;

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);
absl::Time At(int seconds) { return kT0 + absl::Seconds(seconds); }
double Sec(const JobGoodput& j, TimeUse u, int now) {
  return absl::ToDoubleSeconds(j.Total(u, At(now)));
}

// pending 60 s, training 1000 s, a fault seen 10 s late (the cycle starts then), 20 s to
// decide, 100 s of restart,
// training again 800 s: ETTR = 1800 / 1990.
TEST(GoodputLedger, AScriptedLifeDividesItsTimeByCause) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "default/llama", JobStatus::kPending, false, At(0));
  ledger.ObserveJob("j", "default/llama", JobStatus::kRunning, false, At(60));
  ledger.ObserveFaults("j", At(1060), At(1070));
  ledger.CycleStarted("j", At(1070));
  ledger.StrategyDecided("j", "recover", At(1090));
  ledger.CycleEnded("j", At(1190));
  const JobGoodput* j = ledger.Find("j");
  ASSERT_NE(j, nullptr);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kWaitingForResources, 1990), 60);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kTraining, 1990), 1000 + 800);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDetection, 1990), 10);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDecision, 1990), 20);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kProcessRestart, 1990), 100);
  ASSERT_TRUE(j->Ettr(At(1990)).has_value());
  EXPECT_NEAR(*j->Ettr(At(1990)), 1800.0 / 1990.0, 1e-9);
  EXPECT_EQ(j->cycles, 1);
  EXPECT_EQ(j->faults, 1);

  const auto json = ledger.JobJson(*j, At(1990));
  EXPECT_EQ(json["namespace"], "default");
  EXPECT_EQ(json["name"], "llama");
  EXPECT_EQ(json["now"], "training");
  EXPECT_EQ(json["lostSeconds"]["process_restart"], 100.0);
  // waiting, training, detection, decision, restart (with its strategy), then the open stretch.
  ASSERT_EQ(json["timeline"].size(), 6u);
  EXPECT_EQ(json["timeline"][4]["use"], "process_restart");
  EXPECT_EQ(json["timeline"][4]["strategy"], "recover");
  EXPECT_TRUE(json["timeline"][5]["end"].is_null());
}

TEST(GoodputLedger, TheWindowSeesOnlyItsShare) {
  GoodputLedger ledger(GoodputOptions{.window = absl::Seconds(100)});
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(0));
  ledger.ObserveJob("j", "ns/a", JobStatus::kPending, false, At(950));  // rescheduled
  const JobGoodput* j = ledger.Find("j");
  // Over [900, 1000]: 50 s training, 50 s rescheduling.
  EXPECT_NEAR(*j->WindowEttr(At(1000), absl::Seconds(100)), 0.5, 1e-9);
  EXPECT_NEAR(*j->Ettr(At(1000)), 0.95, 1e-9);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kRescheduling, 1000), 50);
}

TEST(GoodputLedger, AFaultTheJobStopsRunningOnIsReschedulingNotDetection) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(0));
  ledger.ObserveFaults("j", At(100), At(105));
  ledger.ObserveJob("j", "ns/a", JobStatus::kPending, false, At(130));
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(200));
  const JobGoodput* j = ledger.Find("j");
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDetection, 300), 5);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDecision, 300), 25);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kRescheduling, 300), 70);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kTraining, 300), 100 + 100);
}

TEST(GoodputLedger, FaultsThatClearWithoutACycleGiveTheTimeBackToTraining) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(0));
  ledger.ObserveFaults("j", At(10), At(10));
  ledger.ObserveFaults("j", std::nullopt, At(15));
  const JobGoodput* j = ledger.Find("j");
  EXPECT_EQ(j->use, TimeUse::kTraining);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDetection, 20), 0);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDecision, 20), 5);
}

TEST(GoodputLedger, AFaultTimeOutsideTheStretchIsClamped) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(100));
  ledger.ObserveFaults("j", At(0), At(150));  // older than the training stretch
  const JobGoodput* j = ledger.Find("j");
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDetection, 150), 50);
  GoodputLedger future;
  future.ObserveJob("k", "ns/b", JobStatus::kRunning, false, At(0));
  future.ObserveFaults("k", At(500), At(100));  // a fault clock ahead of ours
  EXPECT_DOUBLE_EQ(Sec(*future.Find("k"), TimeUse::kTraining, 100), 100);
  EXPECT_DOUBLE_EQ(Sec(*future.Find("k"), TimeUse::kDetection, 100), 0);
}

TEST(GoodputLedger, AClockSteppingBackNeverGivesNegativeDurations) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(1000));
  ledger.ObserveJob("j", "ns/a", JobStatus::kPending, false, At(400));  // stepped back 600 s
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(1100));
  const JobGoodput* j = ledger.Find("j");
  for (int i = 0; i < kTimeUseCount; ++i) {
    EXPECT_GE(j->Total(static_cast<TimeUse>(i), At(300)), absl::ZeroDuration());
  }
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kTraining, 1100), 0);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kRescheduling, 1100), 100);
  for (const TimeInterval& i : j->timeline) EXPECT_GE(i.end, i.start);
}

TEST(GoodputLedger, ACompleteOrDeletedJobStopsCounting) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(0));
  ledger.ObserveJob("j", "ns/a", JobStatus::kComplete, false, At(100));
  EXPECT_DOUBLE_EQ(absl::ToDoubleSeconds(ledger.Find("j")->Counted(At(5000))), 100);
  ledger.ObserveJob("k", "ns/b", JobStatus::kRunning, false, At(0));
  ledger.ObserveJob("k", "ns/b", JobStatus::kFailed, true, At(50));
  EXPECT_DOUBLE_EQ(absl::ToDoubleSeconds(ledger.Find("k")->Counted(At(5000))), 50);
}

TEST(GoodputLedger, DeletedJobsArePrunedAfterTheRetentionAndBeyondTheCap) {
  GoodputLedger ledger(GoodputOptions{.retention = absl::Hours(1), .max_jobs = 2});
  ledger.ObserveJob("old", "ns/old", JobStatus::kRunning, false, At(0));
  ledger.ObserveJob("old", "ns/old", JobStatus::kFailed, true, At(10));
  ledger.ObserveJob("live", "ns/live", JobStatus::kRunning, false, At(0));
  EXPECT_EQ(ledger.Prune(At(3000)), 0u);
  EXPECT_EQ(ledger.Prune(At(3610)), 1u);
  EXPECT_EQ(ledger.Find("old"), nullptr);
  // Over the cap: the oldest deleted go, live jobs stay.
  for (const char* id : {"d1", "d2", "d3"}) {
    ledger.ObserveJob(id, id, JobStatus::kRunning, false, At(4000));
    ledger.ObserveJob(id, id, JobStatus::kFailed, true, At(4000 + (id[1] - '0')));
  }
  ledger.Prune(At(4010));
  EXPECT_EQ(ledger.jobs().size(), 2u);
  EXPECT_NE(ledger.Find("live"), nullptr);
  EXPECT_NE(ledger.Find("d3"), nullptr);
}

TEST(GoodputLedger, SaveAndRestoreKeepTheAccountAndTheOpenStretch) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "default/llama", JobStatus::kRunning, false, At(0));
  ledger.CycleStarted("j", At(100));
  ledger.StrategyDecided("j", "retry", At(110));
  const nlohmann::json saved = ledger.Save(At(120));

  GoodputLedger restored;
  ASSERT_TRUE(restored.Restore(nlohmann::json::parse(saved.dump())).ok());
  const JobGoodput* j = restored.Find("j");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->use, TimeUse::kProcessRestart);
  EXPECT_EQ(j->name, "default/llama");
  restored.CycleEnded("j", At(200));
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kTraining, 300), 100 + 100);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kProcessRestart, 300), 90);
  EXPECT_DOUBLE_EQ(Sec(*j, TimeUse::kDecision, 300), 10);
}

TEST(GoodputLedger, RestoreRefusesAMalformedStateAndKeepsWhatItHad) {
  GoodputLedger ledger;
  ledger.ObserveJob("j", "ns/a", JobStatus::kRunning, false, At(0));
  EXPECT_FALSE(ledger.Restore(nlohmann::json::parse(R"({"version":2,"jobs":[]})")).ok());
  EXPECT_FALSE(ledger.Restore(nlohmann::json::parse(R"({"version":1,"jobs":[{"id":5}]})")).ok());
  EXPECT_FALSE(ledger.Restore(nlohmann::json::parse(R"({"version":1,"jobs":[{}]})")).ok());
  EXPECT_NE(ledger.Find("j"), nullptr);
}

// Save's records by job id.
std::map<std::string, nlohmann::json> SavedRecords(const GoodputLedger& ledger, absl::Time now) {
  std::map<std::string, nlohmann::json> records;
  const nlohmann::json saved = ledger.Save(now);
  for (const nlohmann::json& r : saved["jobs"]) records[r["id"]] = r;
  return records;
}

std::vector<std::string> DeltaIds(const GoodputLedger::SaveDelta& delta) {
  std::vector<std::string> ids;
  for (const auto& [id, record] : delta.records) ids.push_back(id);
  return ids;
}

TEST(GoodputLedger, ASaveDeltaTakesOnlyTheJobsChangedSinceTheLast) {
  GoodputLedger ledger;
  for (const char* id : {"a", "b", "c"}) {
    ledger.ObserveJob(id, absl::StrCat("ns/", id), JobStatus::kRunning, false, At(0));
  }
  EXPECT_EQ(DeltaIds(ledger.TakeSaveDelta(At(10))), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(ledger.TakeSaveDelta(At(20)).records.empty()) << "nothing changed";
  ledger.CycleStarted("b", At(30));
  ledger.CycleStarted("zz", At(30));  // not a job: changes nothing
  const GoodputLedger::SaveDelta delta = ledger.TakeSaveDelta(At(40));
  ASSERT_EQ(DeltaIds(delta), std::vector<std::string>{"b"});
  EXPECT_EQ(delta.records[0].second, SavedRecords(ledger, At(40))["b"]);
  EXPECT_TRUE(delta.removed.empty());
}

TEST(GoodputLedger, ASaveDeltaTakesAJobAgainWhenItsSavedIntervalLeavesTheWindow) {
  GoodputLedger ledger(GoodputOptions{.window = absl::Hours(1)});
  ledger.ObserveJob("j", "ns/j", JobStatus::kPending, false, At(0));
  ledger.ObserveJob("j", "ns/j", JobStatus::kRunning, false, At(100));  // [0, 100] waiting
  ASSERT_EQ(DeltaIds(ledger.TakeSaveDelta(At(200))).size(), 1u);
  EXPECT_TRUE(ledger.TakeSaveDelta(At(3700)).records.empty()) << "100 is the window's edge";
  const GoodputLedger::SaveDelta delta = ledger.TakeSaveDelta(At(3701));
  ASSERT_EQ(DeltaIds(delta), std::vector<std::string>{"j"});
  EXPECT_TRUE(delta.records[0].second["timeline"].empty());
  EXPECT_EQ(delta.records[0].second, SavedRecords(ledger, At(3701))["j"]);
  EXPECT_TRUE(ledger.TakeSaveDelta(At(9000)).records.empty()) << "nothing left to leave";
}

TEST(GoodputLedger, ASaveDeltaListsThePrunedJobsAndThoseARestoreDropped) {
  GoodputLedger ledger(GoodputOptions{.retention = absl::Hours(1)});
  ledger.ObserveJob("gone", "ns/gone", JobStatus::kRunning, false, At(0));
  ledger.ObserveJob("gone", "ns/gone", JobStatus::kFailed, true, At(10));
  ledger.ObserveJob("kept", "ns/kept", JobStatus::kRunning, false, At(0));
  ledger.TakeSaveDelta(At(20));
  ASSERT_EQ(ledger.Prune(At(3700)), 1u);
  GoodputLedger::SaveDelta delta = ledger.TakeSaveDelta(At(3700));
  EXPECT_EQ(delta.removed, std::vector<std::string>{"gone"});
  EXPECT_TRUE(delta.records.empty());
  // Pruned, then seen again before the next save: dropped, then set afresh.
  ledger.ObserveJob("back", "ns/back", JobStatus::kRunning, false, At(3700));
  ledger.ObserveJob("back", "ns/back", JobStatus::kFailed, true, At(3701));
  ledger.TakeSaveDelta(At(3702));
  ASSERT_EQ(ledger.Prune(At(7400)), 1u);
  ledger.ObserveJob("back", "ns/back", JobStatus::kRunning, false, At(7401));
  delta = ledger.TakeSaveDelta(At(7402));
  EXPECT_EQ(delta.removed, std::vector<std::string>{"back"});
  EXPECT_EQ(DeltaIds(delta), std::vector<std::string>{"back"});
  // A restore: every restored job is taken, the jobs it did not hold are removed.
  GoodputLedger other;
  other.ObserveJob("kept", "ns/kept", JobStatus::kRunning, false, At(0));
  ASSERT_TRUE(ledger.Restore(other.Save(At(7500))).ok());
  delta = ledger.TakeSaveDelta(At(7500));
  EXPECT_EQ(delta.removed, std::vector<std::string>{"back"});
  EXPECT_EQ(DeltaIds(delta), std::vector<std::string>{"kept"});
}

// Whatever happens between saves, the records the deltas built up are the ones a whole Save
// writes at that moment: the incremental save loses and keeps nothing a full one would not.
TEST(GoodputLedger, RecordsBuiltFromSaveDeltasAreTheWholeSaveAtEveryMoment) {
  GoodputLedger ledger(GoodputOptions{.window = absl::Minutes(10),
                                      .retention = absl::Minutes(20),
                                      .max_jobs = 30,
                                      .max_intervals_per_job = 8});
  std::mt19937 random(21);
  std::map<std::string, nlohmann::json> built;
  int seconds = 0;
  for (int step = 0; step < 4000; ++step) {
    seconds += static_cast<int>(random() % 40);
    const std::string id = absl::StrCat("job-", random() % 40);
    switch (random() % 8) {
      case 0:
        ledger.ObserveJob(id, "ns/" + id, JobStatus::kRunning, false, At(seconds));
        break;
      case 1:
        ledger.ObserveJob(id, "ns/" + id, JobStatus::kPending, false, At(seconds));
        break;
      case 2:
        ledger.ObserveJob(id, "ns/" + id, JobStatus::kFailed, random() % 2 == 0, At(seconds));
        break;
      case 3:
        ledger.ObserveFaults(id, At(seconds - 5), At(seconds));
        break;
      case 4:
        ledger.CycleStarted(id, At(seconds));
        break;
      case 5:
        ledger.StrategyDecided(id, "retry", At(seconds));
        break;
      case 6:
        ledger.CycleEnded(id, At(seconds));
        break;
      default:
        ledger.Prune(At(seconds));
        break;
    }
    if (random() % 5 != 0) continue;
    GoodputLedger::SaveDelta delta = ledger.TakeSaveDelta(At(seconds));
    for (const std::string& gone : delta.removed) built.erase(gone);
    for (auto& [job, record] : delta.records) built[job] = std::move(record);
    ASSERT_EQ(built, SavedRecords(ledger, At(seconds))) << "after step " << step;
  }
}

TEST(GoodputLedger, OnlyInterruptingLevelsCount) {
  EXPECT_TRUE(InterruptsTraining("RestartNPU"));
  EXPECT_TRUE(InterruptsTraining("SeparateNPU"));
  EXPECT_FALSE(InterruptsTraining("SubHealthFault"));
  EXPECT_FALSE(InterruptsTraining("NotHandleFault"));
  EXPECT_FALSE(InterruptsTraining(""));
}

}  // namespace goodput_ledger_test
}  // namespace clusterd::cluster
