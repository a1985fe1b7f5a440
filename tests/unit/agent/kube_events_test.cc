// Kubernetes Events of the npu-agent (seed 001 Table 6, fault-pipeline.md §1.11): names and
// content, the 10-a-minute budget and queue of 100, failures, pruning, and the core's events.
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "agent/agent_metrics.h"
#include "agent/event_recorder.h"
#include "agent/kube_event.h"
#include "agent_test_util.h"
#include "gtest/gtest.h"
#include "unit/forwarding_store.h"

namespace clusterd::agent {
namespace kube_events_test {

using testing::AgentFixture;
using testing::TestOptions;

constexpr int64_t kNowMs = 1718000000123;

EventReporter Reporter() { return {"npu-agent-x7k2p", "mindx-dl", "node-1", absl::UTCTimeZone()}; }

NpuFaultReport Report(faults::Assertion assertion = faults::Assertion::kOccur) {
  NpuFaultReport r;
  r.logic_id = 3;
  r.card_id = 3;
  r.device_id = 0;
  r.assertion = assertion;
  r.fault_code = "80E01801";
  r.level = model::FaultLevel::kRestartBusiness;
  r.alarm_time_ms = 1718000000000;
  return r;
}

store::Object Event(int i) { return FaultEventObject(Reporter(), Report(), kNowMs + i); }

uint64_t Count(std::string_view result) { return AgentMetrics::KubeEvents(result).Value(); }

size_t StoredEvents(store::ObjectStore& store) {
  return store.List(store::kEvents, {})->items.size();
}

TEST(KubeEvent, FaultEventIsNamedAndFilledAsTable6) {
  const store::Object e = FaultEventObject(Reporter(), Report(), kNowMs);
  EXPECT_EQ(e["kind"], "Event");
  EXPECT_EQ(e["metadata"]["name"], "npu-agent-x7k2p.17180000001233");
  EXPECT_EQ(e["metadata"]["namespace"], "kube-system");
  EXPECT_EQ(
      e["involvedObject"],
      store::Object({{"kind", "Pod"}, {"namespace", "mindx-dl"}, {"name", "npu-agent-x7k2p"}}));
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["reason"], "Occur");
  EXPECT_EQ(e["action"], "RestartBusiness");
  EXPECT_EQ(e["message"],
            "device fault, nodeName:node-1, assertion:Occur, cardID:3, deviceID:0, "
            "faultCodes:80E01801, faultLevelName:RestartBusiness, alarmRaisedTime:2024-06-10 "
            "06:13:20");
  EXPECT_EQ(e["source"], store::Object({{"component", "device-plugin"}, {"host", "node-1"}}));
  EXPECT_EQ(e["reportingComponent"], "device-plugin");
  EXPECT_EQ(e["reportingInstance"], "npu-agent-x7k2p");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["firstTimestamp"], "2024-06-10T06:13:20Z");
  EXPECT_EQ(e["eventTime"], "2024-06-10T06:13:20.123000Z");
  EXPECT_TRUE(store::ValidateObject(store::kEvents, e).ok());
}

TEST(KubeEvent, RecoveryAndNoticeAreNormal) {
  const store::Object recover =
      FaultEventObject(Reporter(), Report(faults::Assertion::kRecover), kNowMs);
  EXPECT_EQ(recover["type"], "Normal");
  EXPECT_EQ(recover["reason"], "Recovery");
  const store::Object notice =
      FaultEventObject(Reporter(), Report(faults::Assertion::kOnce), kNowMs);
  EXPECT_EQ(notice["type"], "Normal");
  EXPECT_EQ(notice["reason"], "Notice");
  EXPECT_NE(notice["message"].get<std::string>().find("assertion:Notice"), std::string::npos);
}

TEST(KubeEvent, A5MessageNamesTheLogicId) {
  NpuFaultReport r = Report();
  r.by_logic_id = true;
  EXPECT_EQ(FaultEventMessage(Reporter(), r),
            "device fault, nodeName:node-1, assertion:Occur, logicID:3, faultCodes:80E01801, "
            "faultLevelName:RestartBusiness, alarmRaisedTime:2024-06-10 06:13:20");
}

TEST(KubeEvent, ReleaseEventCarriesTheRemovedReasons) {
  model::UpgradeFaultReasons released;
  released["Ascend910-3"].push_back(
      {1718000000000, "80e01801", "ManuallySeparateNPU", "FaultFrequency"});
  const store::Object e = ReleaseEventObject(Reporter(), released, kNowMs);
  EXPECT_EQ(e["metadata"]["name"], "npu-agent-x7k2p.eventreleaseupgradefault.1718000000123");
  EXPECT_EQ(e["metadata"]["namespace"], "kube-system");
  EXPECT_EQ(e["type"], "Normal");
  EXPECT_EQ(e["reason"], "EventReleaseUpgradeFault");
  EXPECT_EQ(e["action"], "EventReleaseUpgradeFault");
  EXPECT_EQ(e["message"], model::RenderUpgradeFaultReasons(released));
  EXPECT_TRUE(store::ValidateObject(store::kEvents, e).ok());
}

struct RecorderFixture {
  explicit RecorderFixture(EventRecorderOptions options = {})
      : store(*store::OpenStore("memory")), recorder(options, *store, clock) {}
  ManualClock clock;
  std::unique_ptr<store::ObjectStore> store;
  EventRecorder recorder;
};

TEST(EventRecorder, WritesAtMostTenAMinute) {
  RecorderFixture f;
  const absl::Time start = f.clock.Now();
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(f.recorder.Record(Event(i)));
  EXPECT_EQ(f.recorder.NextDue(), f.clock.Now());
  f.recorder.WriteDue();
  EXPECT_EQ(StoredEvents(*f.store), 10u);
  EXPECT_EQ(f.recorder.queued(), 5u);
  EXPECT_EQ(f.recorder.NextDue(), f.clock.Now() + absl::Minutes(1));
  f.clock.Advance(absl::Seconds(59));
  f.recorder.WriteDue();
  EXPECT_EQ(StoredEvents(*f.store), 10u);
  f.clock.Advance(absl::Seconds(1));
  f.recorder.WriteDue();
  EXPECT_EQ(StoredEvents(*f.store), 15u);
  EXPECT_EQ(f.recorder.NextDue(), start + absl::Hours(1));  // the first one's age limit
}

TEST(EventRecorder, AFullQueueDropsAndCounts) {
  RecorderFixture f;
  const uint64_t dropped = Count("dropped");
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(f.recorder.Record(Event(i)));
  EXPECT_FALSE(f.recorder.Record(Event(100)));
  EXPECT_EQ(Count("dropped"), dropped + 1);
  EXPECT_EQ(f.recorder.queued(), 100u);
}

TEST(EventRecorder, TheSameNameIsPatchedWithACount) {
  RecorderFixture f;
  const uint64_t patched = Count("patched");
  ASSERT_TRUE(f.recorder.Record(Event(0)));
  ASSERT_TRUE(f.recorder.Record(Event(0)));
  f.recorder.WriteDue();
  EXPECT_EQ(Count("patched"), patched + 1);
  auto stored = f.store->Get({"events", "kube-system", "npu-agent-x7k2p.17180000001233"});
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["count"], 2);
}

// Fails every event write; other resources pass.
class FailingEventsStore : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<store::Object> Create(std::string_view resource, store::Object object) override {
    if (resource == store::kEvents) {
      return absl::PermissionDeniedError("events is forbidden: cannot create resource");
    }
    return ForwardingStore::Create(resource, std::move(object));
  }
};

TEST(EventRecorder, FailedWritesAreCountedAndSpendTheBudget) {
  ManualClock clock;
  auto memory = *store::OpenStore("memory");
  FailingEventsStore failing(*memory);
  EventRecorder recorder({}, failing, clock);
  const uint64_t failed = Count("failed");
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(recorder.Record(Event(i)));
  recorder.WriteDue();
  EXPECT_EQ(Count("failed"), failed + 10);
  EXPECT_EQ(recorder.queued(), 2u);  // not retried: the next two wait for the budget
  clock.Advance(absl::Minutes(1));
  recorder.WriteDue();
  EXPECT_EQ(Count("failed"), failed + 12);
  EXPECT_EQ(recorder.queued(), 0u);
  EXPECT_EQ(recorder.NextDue(), absl::InfiniteFuture());
}

TEST(EventRecorder, PrunesItsOwnEventsBeyondTheCountAndAge) {
  EventRecorderOptions options;
  options.keep = 3;
  options.own_prefix = "npu-agent-x7k2p.";
  RecorderFixture f(options);
  const uint64_t pruned = AgentMetrics::KubeEventsPruned().Value();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.recorder.Record(Event(i)));
  f.recorder.WriteDue();
  EXPECT_EQ(StoredEvents(*f.store), 3u);
  EXPECT_EQ(AgentMetrics::KubeEventsPruned().Value(), pruned + 2);
  EXPECT_FALSE(f.store->Get({"events", "kube-system", "npu-agent-x7k2p.17180000001243"}).ok());
  EXPECT_TRUE(f.store->Get({"events", "kube-system", "npu-agent-x7k2p.17180000001253"}).ok());

  // After a restart the new recorder finds them and deletes them at their age limit; another
  // reporter's event stays.
  store::Object other = Event(0);
  other["metadata"]["name"] = "someone-else.1";
  ASSERT_TRUE(f.store->Create(store::kEvents, other).ok());
  EventRecorder restarted(options, *f.store, f.clock);
  restarted.LoadOwnEvents();
  f.clock.Advance(absl::Hours(1) + absl::Seconds(1));  // their eventTime is 0.127 s later
  EXPECT_LE(restarted.NextDue(), f.clock.Now());
  restarted.WriteDue();
  EXPECT_EQ(StoredEvents(*f.store), 1u);
}

TEST(EventRecorder, NoPruningForTheKubeStore) {
  EventRecorderOptions options;
  options.keep = 3;
  options.prune = false;
  RecorderFixture f(options);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.recorder.Record(Event(i)));
  f.recorder.WriteDue();
  EXPECT_EQ(StoredEvents(*f.store), 5u);
  EXPECT_EQ(f.recorder.NextDue(), absl::InfiniteFuture());
}

TEST(AgentCoreEvents, AFaultAndItsRecoveryBecomeEvents) {
  AgentOptions options = TestOptions();
  options.pod_name = "npu-agent-x7k2p";
  AgentFixture f(options);
  EventRecorder recorder({}, *f.store, f.clock);
  f.core->SetEventRecorder(&recorder);
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
{"at_ms": 2000, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "recover"})");
  f.RunFor(absl::Seconds(3));
  recorder.WriteDue();
  auto occur = f.store->Get({"events", "kube-system", "npu-agent-x7k2p.17180000000003"});
  ASSERT_TRUE(occur.ok()) << occur.status();
  EXPECT_EQ((*occur)["type"], "Warning");
  EXPECT_EQ((*occur)["action"], "RestartBusiness");
  auto recover = f.store->Get({"events", "kube-system", "npu-agent-x7k2p.17180000020003"});
  ASSERT_TRUE(recover.ok()) << recover.status();
  EXPECT_EQ((*recover)["reason"], "Recovery");
}

TEST(AgentCoreEvents, AnOperatorReleaseBecomesAReleaseEvent) {
  AgentOptions options = TestOptions();
  options.pod_name = "npu-agent-x7k2p";
  AgentFixture f(options);
  EventRecorder recorder({}, *f.store, f.clock);
  f.core->SetEventRecorder(&recorder);
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
{"at_ms": 2000, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "recover"}
{"at_ms": 4000, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
{"at_ms": 6000, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "recover"})");
  f.RunFor(absl::Seconds(10));
  ASSERT_EQ(f.DeviceInfo().at("ManuallySeparateNPU"), "Ascend910-3");
  auto object = *f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  object["data"]["ManuallySeparateNPU"] = "";
  ASSERT_TRUE(f.store->Update("configmaps", object).ok());
  f.core->ObserveDeviceInfo(DataOf(object));
  f.core->Step();
  recorder.WriteDue();
  const std::string name = "npu-agent-x7k2p.eventreleaseupgradefault." +
                           std::to_string(absl::ToUnixMillis(f.clock.Now()));
  auto release = f.store->Get({"events", "kube-system", name});
  ASSERT_TRUE(release.ok()) << release.status();
  EXPECT_EQ((*release)["reason"], "EventReleaseUpgradeFault");
  EXPECT_NE((*release)["message"].get<std::string>().find("\"Ascend910-3\""), std::string::npos);
}

// Blocks event writes until released, to show they never hold up a device-info write.
class StuckEventsStore : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<store::Object> Create(std::string_view resource, store::Object object) override {
    if (resource == store::kEvents) {
      entered.Notify();
      release.WaitForNotification();
      return absl::UnavailableError("store down");
    }
    return ForwardingStore::Create(resource, std::move(object));
  }
  absl::Notification entered, release;
};

TEST(AgentCoreEvents, AStuckEventWriteDoesNotDelayTheDeviceInfoWrite) {
  AgentFixture f;
  StuckEventsStore stuck(*f.store);
  EventRecorder recorder({}, stuck, Clock::Real());
  recorder.Start();
  auto core = std::make_unique<AgentCore>(TestOptions(), stuck, f.clock);
  core->SetEventRecorder(&recorder);
  ASSERT_TRUE(core->Start().ok());
  ASSERT_TRUE(core->Inject(faults::NpuFaultEvent{3, 0x80E01801, faults::Assertion::kOccur, 0, {}}));
  stuck.entered.WaitForNotification();  // the writer thread is inside the event write
  core->Step();
  EXPECT_EQ(core->device_info_writes(), 1);
  EXPECT_NE(f.DeviceInfo().at("DeviceInfoCfg").find("Ascend910-3"), std::string::npos);
  stuck.release.Notify();
  recorder.Stop();
}

}  // namespace kube_events_test
}  // namespace clusterd::agent
