// The goodput bridge over a memory store and a manual clock: the inputs clusterd sees become a
// job's account, the state survives a new bridge (a restart), the repeat-offender policy comes
// from clusterd-config-cm (a refused one keeps the previous) and its action cordons the node.
#include "server/goodput_bridge.h"

#include <atomic>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"
#include "unit/forwarding_store.h"

namespace clusterd::server {
namespace goodput_bridge_test {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

class GoodputBridgeTest : public ::testing::Test {
 protected:
  GoodputBridgeTest() : clock_(kStart), store_(MemOptions()) {}
  store::MemoryStore::Options MemOptions() {
    store::MemoryStore::Options o;
    o.clock = &clock_;
    return o;
  }

  static model::JobSummarySignal Summary(std::string status, std::string op = "add") {
    model::JobSummarySignal s;
    s.job_id = "uid-1";
    s.job_name = "llama";
    s.ns = "default";
    s.job_status = std::move(status);
    s.op = std::move(op);
    return s;
  }
  static cluster::JobFaultRanks Faults(std::vector<std::pair<std::string, int64_t>> codes) {
    cluster::JobFaultRanks f;
    f.job_id = "uid-1";
    for (const auto& [code, at_ms] : codes) {
      cluster::FaultDevice d;
      d.server_name = "node-1";
      d.device_id = "3";
      d.code = code;
      d.level = "RestartNPU";
      d.fault_time_ms = at_ms;
      f.devices.push_back(d);
    }
    return f;
  }
  void PutPolicy(const std::string& text) {
    store::Object cm = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "clusterd-config-cm"}, {"namespace", "cluster-system"}}},
        {"data", {{std::string(kOffenderPolicyKey), text}}}};
    if (!store_.Update(store::kConfigMaps, cm).ok()) {
      ASSERT_TRUE(store_.Create(store::kConfigMaps, cm).ok());
    }
  }
  void PutNode(const std::string& name) {
    ASSERT_TRUE(store_
                    .Create(store::kNodes, {{"apiVersion", "v1"},
                                            {"kind", "Node"},
                                            {"metadata", {{"name", name}}},
                                            {"spec", nlohmann::json::object()}})
                    .ok());
  }
  int64_t Ms(absl::Duration d) { return absl::ToUnixMillis(kStart + d); }

  ManualClock clock_;
  store::MemoryStore store_;
};

TEST_F(GoodputBridgeTest, WhatClusterdSeesBecomesTheJobsAccount) {
  GoodputBridge bridge(store_, clock_);
  ASSERT_TRUE(bridge.Restore().ok());
  bridge.OnJobSummary(Summary("running"));
  clock_.Advance(absl::Seconds(100));
  bridge.OnJobFaults(Faults({{"80E01801", Ms(absl::Seconds(95))}}));
  // The same fault again (another snapshot of it) is not a new one.
  clock_.Advance(absl::Seconds(1));
  bridge.OnJobFaults(Faults({{"80E01801", Ms(absl::Seconds(95))}}));
  bridge.OnCycleStarted("uid-1", clock_.Now());
  clock_.Advance(absl::Seconds(4));
  bridge.OnStrategyDecided("uid-1", "recover", clock_.Now());
  clock_.Advance(absl::Seconds(30));
  bridge.OnCycleEnded("uid-1", "recover", "success", clock_.Now());
  clock_.Advance(absl::Seconds(65));

  absl::StatusOr<nlohmann::ordered_json> job = bridge.GoodputOf("llama", "");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ((*job)["jobId"], "uid-1");
  EXPECT_EQ((*job)["trainingSeconds"], 95.0 + 65.0);
  // The fault struck at 95 s, clusterd saw it at 100 s, decided at 105 s.
  EXPECT_EQ((*job)["lostSeconds"]["detection"], 5.0);
  EXPECT_EQ((*job)["lostSeconds"]["decision"], 5.0);
  EXPECT_EQ((*job)["lostSeconds"]["process_restart"], 30.0);
  EXPECT_EQ((*job)["ettr"], 0.8);
  EXPECT_EQ((*job)["faults"], 1);
  EXPECT_TRUE(bridge.GoodputOf("uid-1", "").ok());
  EXPECT_TRUE(absl::IsNotFound(bridge.GoodputOf("llama", "other").status()));
  EXPECT_EQ(bridge.GoodputList("default")["items"].size(), 1u);
  EXPECT_EQ(bridge.GoodputList("other")["items"].size(), 0u);
}

TEST_F(GoodputBridgeTest, APublicFaultsTimeInSecondsIsReadAsSeconds) {
  GoodputBridge bridge(store_, clock_);
  ASSERT_TRUE(bridge.Restore().ok());
  bridge.OnJobSummary(Summary("running"));
  clock_.Advance(absl::Seconds(100));
  // A public fault keeps the sender's seconds (fault-pipeline.md §7.3 step 1): struck at 97 s.
  bridge.OnJobFaults(Faults({{"220001001", absl::ToUnixSeconds(kStart + absl::Seconds(97))}}));
  clock_.Advance(absl::Seconds(3));
  absl::StatusOr<nlohmann::ordered_json> job = bridge.GoodputOf("uid-1", "");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ((*job)["trainingSeconds"], 97.0);
  EXPECT_EQ((*job)["lostSeconds"]["detection"], 3.0);
  const nlohmann::ordered_json episodes = bridge.Episodes("");
  ASSERT_EQ(episodes["items"].size(), 1u);
  EXPECT_EQ(episodes["items"][0]["seconds"]["detected"], 3.0);
}

TEST_F(GoodputBridgeTest, FaultEpisodesFollowTheCycleAndSurviveARestart) {
  {
    GoodputBridge bridge(store_, clock_);
    ASSERT_TRUE(bridge.Restore().ok());
    // The fault arrives before the job's summary: the episode gets the name when it comes.
    clock_.Advance(absl::Seconds(10));
    bridge.OnJobFaults(Faults({{"80E01801", Ms(absl::Seconds(9))}}));
    bridge.OnJobSummary(Summary("running"));
    // NotHandleFault is no episode; a second snapshot of the same fault is not a new one.
    cluster::JobFaultRanks again = Faults({{"80E01801", Ms(absl::Seconds(9))}});
    again.devices.push_back(again.devices[0]);
    again.devices.back().code = "80CB8002";
    again.devices.back().level = "NotHandleFault";
    bridge.OnJobFaults(again);
    clock_.Advance(absl::Seconds(1));
    bridge.OnCycleStarted("uid-1", clock_.Now());
    clock_.Advance(absl::Seconds(2));
    bridge.OnStrategyDecided("uid-1", "recover", clock_.Now());
    clock_.Advance(absl::Seconds(7));
    bridge.OnCycleEnded("uid-1", "recover", "success", clock_.Now());
    bridge.OnJobFaults(Faults({}));
    bridge.Stop();  // saves
  }
  GoodputBridge restarted(store_, clock_);
  ASSERT_TRUE(restarted.Restore().ok());
  const nlohmann::ordered_json list = restarted.Episodes("llama");
  ASSERT_EQ(list["items"].size(), 1u) << list.dump();
  const nlohmann::ordered_json& e = list["items"][0];
  EXPECT_EQ(e["namespace"], "default");
  EXPECT_EQ(e["faultCount"], 1);
  EXPECT_EQ(e["state"], "resumed");
  EXPECT_EQ(e["outcome"], "success");
  EXPECT_EQ(e["seconds"]["notified"], 2.0);
  EXPECT_EQ(e["seconds"]["decided"], 4.0);
  EXPECT_EQ(e["seconds"]["total"], 11.0);
  EXPECT_EQ(restarted.Episodes("other")["items"].size(), 0u);
}

TEST_F(GoodputBridgeTest, ACycleInFlightShowsInTheStuckRecoveryGauges) {
  GoodputBridge bridge(store_, clock_);
  ASSERT_TRUE(bridge.Restore().ok());
  bridge.OnJobSummary(Summary("running"));
  bridge.OnCycleStarted("uid-1", clock_.Now());
  clock_.Advance(absl::Seconds(90));
  bridge.Tick();
  const std::string text = MetricsRegistry::Default().RenderPrometheus();
  EXPECT_TRUE(absl::StrContains(text, "clusterd_recovery_cycles_running 1\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "clusterd_recovery_oldest_cycle_seconds 90\n")) << text;
  bridge.OnCycleEnded("uid-1", "retry", "success", clock_.Now());
  bridge.Tick();
  EXPECT_TRUE(absl::StrContains(MetricsRegistry::Default().RenderPrometheus(),
                                "clusterd_recovery_oldest_cycle_seconds 0\n"));
}

// A clock whose next reading, once armed, waits until released: the caller stays wherever it
// read the time (a bridge method holding the bridge's lock).
class GateClock final : public Clock {
 public:
  explicit GateClock(absl::Time now) : now_(now) {}
  absl::Time Now() const override {
    if (armed_.exchange(false)) {
      entered.Notify();
      released_.WaitForNotification();
    }
    return now_;
  }
  void Arm() { armed_ = true; }
  void Release() { released_.Notify(); }
  mutable absl::Notification entered;

 private:
  const absl::Time now_;
  mutable std::atomic<bool> armed_{false};
  absl::Notification released_;
};

// A recovery strand reports its cycle to the bridge before it sends the cycle's first signal, so
// it must not wait for the bridge's lock: a tick or a save holds it over every job (at 20,000
// jobs a save built its state for 126-176 ms, and a process-fault report waited as long).
TEST_F(GoodputBridgeTest, ARecoveryStrandsCycleEventsDoNotWaitForTheBridgesLock) {
  GateClock clock(kStart);
  GoodputBridge bridge(store_, clock);
  ASSERT_TRUE(bridge.Restore().ok());
  clock.Arm();
  std::thread holder([&] { bridge.OnJobSummary(Summary("running")); });  // reads the time locked
  clock.entered.WaitForNotification();
  absl::Notification reported;
  std::thread strand([&] {
    bridge.OnCycleStarted("uid-1", kStart);
    reported.Notify();
  });
  const bool returned = reported.WaitForNotificationWithTimeout(absl::Seconds(10));
  clock.Release();
  holder.join();
  strand.join();
  EXPECT_TRUE(returned) << "the strand waited for the lock the summary held";
  // The event counts as soon as anything reads the account.
  bridge.Tick();
  EXPECT_TRUE(absl::StrContains(MetricsRegistry::Default().RenderPrometheus(),
                                "clusterd_recovery_cycles_running 1\n"));
}

TEST_F(GoodputBridgeTest, TheStateSurvivesARestart) {
  {
    GoodputBridge bridge(store_, clock_);
    ASSERT_TRUE(bridge.Restore().ok());
    bridge.OnJobSummary(Summary("running"));
    clock_.Advance(absl::Seconds(50));
    bridge.OnFaultOccurred("node-1", "3", "80E01801", "RestartNPU", clock_.Now());
    bridge.Stop();  // saves
  }
  clock_.Advance(absl::Seconds(10));  // clusterd was away: the job kept its use (training)
  GoodputBridge again(store_, clock_);
  ASSERT_TRUE(again.Restore().ok());
  absl::StatusOr<nlohmann::ordered_json> job = again.GoodputOf("uid-1", "");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ((*job)["trainingSeconds"], 60.0);
  EXPECT_EQ(again.Offenders()["items"][0]["faults"], 1);
  // The fault is still active: the feed's backlog repeating it is not a second occurrence.
  again.OnFaultOccurred("node-1", "3", "80E01801", "RestartNPU", clock_.Now());
  EXPECT_EQ(again.Offenders()["items"][0]["faults"], 1);
}

// Fails every create and update while `fail_writes` is set.
class FailingStore final : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  bool fail_writes = false;
  absl::StatusOr<store::Object> Create(std::string_view r, store::Object o) override {
    if (fail_writes) return absl::UnavailableError("disk full");
    return ForwardingStore::Create(r, std::move(o));
  }
  absl::StatusOr<store::Object> Update(std::string_view r, store::Object o) override {
    if (fail_writes) return absl::UnavailableError("disk full");
    return ForwardingStore::Update(r, std::move(o));
  }
};

// A save writes only what changed since the last one; what a failed save took is written by the
// next.
TEST_F(GoodputBridgeTest, AChangeAFailedSaveTookIsWrittenByTheNext) {
  FailingStore store(store_);
  {
    GoodputBridge bridge(store, clock_);
    ASSERT_TRUE(bridge.Restore().ok());
    bridge.OnJobSummary(Summary("running"));
    ASSERT_TRUE(bridge.Save().ok());
    clock_.Advance(absl::Seconds(30));
    bridge.OnJobSummary(Summary("failed"));
    store.fail_writes = true;
    EXPECT_FALSE(bridge.Save().ok());
    store.fail_writes = false;
    ASSERT_TRUE(bridge.Save().ok());
  }
  GoodputBridge again(store_, clock_);
  ASSERT_TRUE(again.Restore().ok());
  absl::StatusOr<nlohmann::ordered_json> job = again.GoodputOf("uid-1", "");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ((*job)["status"], "failed");
  EXPECT_EQ((*job)["trainingSeconds"], 30.0);
}

// Resource versions of the goodput state's ConfigMaps, by name; every one within 1 MiB.
std::map<std::string, std::string> StateConfigMaps(store::ObjectStore& store) {
  std::map<std::string, std::string> versions;
  store::ListOptions in_ns;
  in_ns.ns = "cluster-system";
  absl::StatusOr<store::ObjectList> list = store.List(store::kConfigMaps, in_ns);
  EXPECT_TRUE(list.ok()) << list.status();
  if (!list.ok()) return versions;
  for (const store::Object& cm : list->items) {
    const std::string name = cm["metadata"]["name"];
    if (!name.starts_with("clusterd-goodput")) continue;
    size_t bytes = 0;
    for (const auto& [key, value] : cm["data"].items()) {
      bytes += key.size() + value.get_ref<const std::string&>().size();
    }
    EXPECT_LE(bytes, store::kMaxConfigMapDataBytes) << name;
    versions[name] = store::ResourceVersionOf(cm);
  }
  return versions;
}

TEST_F(GoodputBridgeTest, TheStateOfManyJobsIsSplitUnderTheConfigMapLimitAndSurvivesARestart) {
  constexpr int kJobs = 5000;  // about 2 MB of records: more than one ConfigMap holds
  auto summary = [](int i, std::string status) {
    model::JobSummarySignal s = Summary(std::move(status));
    s.job_id = absl::StrCat("uid-", i);
    s.job_name = absl::StrCat("job-", i);
    return s;
  };
  std::map<std::string, std::string> before;
  {
    GoodputBridge bridge(store_, clock_);
    ASSERT_TRUE(bridge.Restore().ok());
    for (int i = 0; i < kJobs; ++i) bridge.OnJobSummary(summary(i, "running"));
    clock_.Advance(absl::Seconds(30));
    ASSERT_TRUE(bridge.Save().ok());
    before = StateConfigMaps(store_);
    EXPECT_GE(before.size(), 4u);  // the main ConfigMap and at least three job shards
    // One job changes: only the shard that holds it is written again.
    bridge.OnJobSummary(summary(7, "failed"));
    ASSERT_TRUE(bridge.Save().ok());
    std::map<std::string, std::string> after = StateConfigMaps(store_);
    int rewritten = 0;
    for (const auto& [name, version] : after) rewritten += before[name] != version ? 1 : 0;
    // The main ConfigMap says the same as before: that write commits nothing (a no-op update,
    // as on the API server).
    EXPECT_EQ(rewritten, 1) << "the job's shard only";
  }
  GoodputBridge again(store_, clock_);
  ASSERT_TRUE(again.Restore().ok());
  EXPECT_EQ(again.GoodputList("")["items"].size(), static_cast<size_t>(kJobs));
  absl::StatusOr<nlohmann::ordered_json> job = again.GoodputOf("uid-4999", "");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ((*job)["trainingSeconds"], 30.0);
}

TEST_F(GoodputBridgeTest, StateSavedInOneConfigMapBeforeTheSplitStillLoads) {
  {
    GoodputBridge bridge(store_, clock_);
    ASSERT_TRUE(bridge.Restore().ok());
    bridge.OnJobSummary(Summary("running"));
    clock_.Advance(absl::Seconds(40));
    ASSERT_TRUE(bridge.Save().ok());
  }
  // Fold the shards back into the main ConfigMap, as clusterd wrote it before the split.
  store::ListOptions in_ns;
  in_ns.ns = "cluster-system";
  nlohmann::json jobs = nlohmann::json::array();
  absl::StatusOr<store::ObjectList> list = store_.List(store::kConfigMaps, in_ns);
  ASSERT_TRUE(list.ok()) << list.status();
  for (const store::Object& cm : list->items) {
    const std::string name = cm["metadata"]["name"];
    if (!name.starts_with("clusterd-goodput-jobs-")) continue;
    const nlohmann::json records = nlohmann::json::parse(cm["data"]["jobs.json"].get<std::string>());
    for (const auto& [id, record] : records.items()) jobs.push_back(record);
    ASSERT_TRUE(store_.Delete({std::string(store::kConfigMaps), "cluster-system", name}).ok());
  }
  store::Object main =
      *store_.Get({std::string(store::kConfigMaps), "cluster-system", "clusterd-goodput"});
  main["data"]["goodput.json"] = nlohmann::json{{"version", 1}, {"jobs", jobs}}.dump();
  ASSERT_TRUE(store_.Update(store::kConfigMaps, main).ok());

  GoodputBridge again(store_, clock_);
  ASSERT_TRUE(again.Restore().ok());
  absl::StatusOr<nlohmann::ordered_json> job = again.GoodputOf("uid-1", "");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ((*job)["trainingSeconds"], 40.0);
}

TEST_F(GoodputBridgeTest, AMalformedJobShardCountIsRefusedAndCounted) {
  ASSERT_TRUE(store_
                  .Create(store::kConfigMaps,
                          {{"apiVersion", "v1"},
                           {"kind", "ConfigMap"},
                           {"metadata",
                            {{"name", "clusterd-goodput"}, {"namespace", "cluster-system"}}},
                           {"data", {{"goodput.json", R"({"version":1,"jobs":[],"jobShards":"x"})"}}}})
                  .ok());
  Counter& malformed = GoodputStateCounter("read", "malformed");
  const uint64_t before = malformed.Value();
  GoodputBridge bridge(store_, clock_);
  EXPECT_TRUE(bridge.Restore().ok());
  EXPECT_EQ(bridge.GoodputList("")["items"].size(), 0u);
  EXPECT_EQ(malformed.Value(), before + 1);
}

TEST_F(GoodputBridgeTest, AMalformedSavedStateStartsAfresh) {
  ASSERT_TRUE(
      store_
          .Create(store::kConfigMaps,
                  {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", "clusterd-goodput"}, {"namespace", "cluster-system"}}},
                   {"data", {{"goodput.json", "{not json"}, {"offenders.json", "[]"}}}})
          .ok());
  GoodputBridge bridge(store_, clock_);
  EXPECT_TRUE(bridge.Restore().ok());
  EXPECT_EQ(bridge.GoodputList("")["items"].size(), 0u);
}

TEST_F(GoodputBridgeTest, ThePolicyComesFromTheConfigMapAndARefusedOneKeepsThePrevious) {
  PutNode("node-1");
  GoodputBridge bridge(store_, clock_);
  ASSERT_TRUE(bridge.Restore().ok());
  EXPECT_EQ(bridge.Offenders()["policy"]["enabled"], false);
  PutPolicy(R"({"enabled":true,"faults":3,"windowHours":1,"action":"cordon"})");
  bridge.Tick();
  EXPECT_EQ(bridge.Offenders()["policy"]["enabled"], true);
  PutPolicy(R"({"enabled":true,"faults":0})");
  bridge.Tick();
  EXPECT_EQ(bridge.Offenders()["policy"]["faults"], 3);
  EXPECT_EQ(bridge.Offenders()["policy"]["action"], "cordon");

  for (int i = 0; i < 3; ++i) {
    clock_.Advance(absl::Minutes(5));  // apart: three faults, not one on three NPUs
    bridge.OnFaultOccurred("node-1", std::to_string(i), "80E01801", "RestartNPU", clock_.Now());
  }
  absl::StatusOr<store::Object> node = store_.Get({std::string(store::kNodes), "", "node-1"});
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)["spec"]["unschedulable"], true);
  const std::string why = (*node)["metadata"]["annotations"][std::string(kOffenderAnnotation)];
  EXPECT_TRUE(absl::StrContains(why, "3 faults within 1h")) << why;
  EXPECT_EQ(bridge.Offenders()["items"][0]["offender"], true);
}

TEST_F(GoodputBridgeTest, ATaintIsAddedOnceBesideTheNodesOwn) {
  ASSERT_TRUE(store_
                  .Create(store::kNodes,
                          {{"apiVersion", "v1"},
                           {"kind", "Node"},
                           {"metadata", {{"name", "node-2"}}},
                           {"spec", {{"taints", {{{"key", "other"}, {"effect", "NoExecute"}}}}}}})
                  .ok());
  GoodputBridge bridge(store_, clock_);
  ASSERT_TRUE(bridge.Restore().ok());
  PutPolicy(R"({"enabled":true,"faults":2,"action":"taint"})");
  bridge.Tick();
  bridge.OnFaultOccurred("node-2", "0", "a", "RestartNPU", clock_.Now());
  bridge.OnFaultOccurred("node-2", "1", "b", "RestartNPU", clock_.Now());
  absl::StatusOr<store::Object> node = store_.Get({std::string(store::kNodes), "", "node-2"});
  ASSERT_TRUE(node.ok());
  ASSERT_EQ((*node)["spec"]["taints"].size(), 2u);
  EXPECT_EQ((*node)["spec"]["taints"][0]["key"], "other");
  EXPECT_EQ((*node)["spec"]["taints"][1]["key"], std::string(kOffenderAnnotation));
}

}  // namespace goodput_bridge_test
}  // namespace clusterd::server
