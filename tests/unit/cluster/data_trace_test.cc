// Profiling switches and the data-trace ConfigMap, jobs-ranktable-diagnosis.md §5.1-§5.4.
#include "cluster/data_trace.h"

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job_test_objects.h"
#include "store/memory/memory_store.h"

namespace clusterd::cluster {
namespace data_trace_test {

using model::ProfilingSwitch;
using store::WatchEvent;
using store::WatchEventType;
using testing::ExamplePod;
using testing::kJobUid;
using testing::PodGroupObject;
using testing::PodObject;
using testing::PodSpec;

const ProfilingSwitch kSwitch{"off", "on", "on", "on", "on"};

class DataTraceTest : public ::testing::Test {
 protected:
  DataTraceTest() : registry_(store_, clock_, Fast()), switches_(store_, registry_) {
    switches_.SetNotifier([this](const std::string& job_id, const ProfilingSwitch& value) {
      notified_.emplace_back(job_id, value);
      return notifier_status_;
    });
  }

  static JobRegistry::Options Fast() {
    JobRegistry::Options o;
    o.reconcile_rate = 1e6;
    o.reconcile_burst = 1000000;
    return o;
  }

  // The §2.2 job; its pods mount the switch directory when `mounted`.
  void RunJob(bool mounted) {
    registry_.OnPodGroupEvent(WatchEvent{WatchEventType::kAdded, PodGroupObject({})});
    for (int rank : {0, 1}) {
      PodSpec p = ExamplePod(rank);
      p.data_trace_mount = mounted;
      registry_.OnPodEvent(WatchEvent{WatchEventType::kAdded, PodObject(p)});
    }
    registry_.controller().RunUntilIdleForTest();
  }

  absl::StatusOr<store::Object> TraceConfigMap() {
    return store_.Get(store::ObjectKey{"configmaps", "default", "data-trace-pt-2x8"});
  }

  ManualClock clock_;
  store::MemoryStore store_;
  JobRegistry registry_;
  DataTraceSwitches switches_;
  std::vector<std::pair<std::string, ProfilingSwitch>> notified_;
  absl::Status notifier_status_ = absl::OkStatus();
};

TEST(DataTraceNames, JobNsNameIsExactlyTwoParts) {
  EXPECT_EQ(ParseJobNsName("default/pt"),
            std::make_pair(std::string("default"), std::string("pt")));
  EXPECT_EQ(ParseJobNsName("/"), std::make_pair(std::string(""), std::string("")));
  EXPECT_FALSE(ParseJobNsName("a/b/c").has_value());
  EXPECT_FALSE(ParseJobNsName("plain").has_value());
  EXPECT_FALSE(ParseJobNsName("").has_value());
}

TEST_F(DataTraceTest, ModifyWithABadNameIsInvalidParameter) {
  DataTraceResult r = switches_.Modify("no-slash", kSwitch);
  EXPECT_EQ(r.code, 300);
  EXPECT_EQ(r.message, "the format of jobNsName is not namespace/jobName");
  EXPECT_TRUE(r.rpc_error);
}

TEST_F(DataTraceTest, WithoutTheMountTheRunningJobsSubscriberIsNotified) {
  RunJob(/*mounted=*/false);
  DataTraceResult r = switches_.Modify("default/pt-2x8", kSwitch);
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.message, "successfully changed profiling marker enable status");
  EXPECT_FALSE(r.rpc_error);
  ASSERT_EQ(notified_.size(), 1u);
  EXPECT_EQ(notified_[0].first, kJobUid);
  EXPECT_EQ(notified_[0].second, kSwitch);
  EXPECT_TRUE(absl::IsNotFound(TraceConfigMap().status()));
}

TEST_F(DataTraceTest, WithoutTheMountAFailedNotificationFailsTheCall) {
  RunJob(false);
  notifier_status_ = absl::NotFoundError("publisher for job x not found");
  DataTraceResult r = switches_.Modify("default/pt-2x8", kSwitch);
  EXPECT_EQ(r.code, 500);
  EXPECT_EQ(r.message, "notify subscribe failed");
  EXPECT_TRUE(r.rpc_error);
}

TEST_F(DataTraceTest, AnUnknownOrNotRunningJobCannotBeNotified) {
  DataTraceResult r = switches_.Modify("default/nope", kSwitch);
  EXPECT_EQ(r.code, 500);
  EXPECT_TRUE(notified_.empty());
  registry_.OnPodGroupEvent(WatchEvent{WatchEventType::kAdded, PodGroupObject({})});
  registry_.controller().RunUntilIdleForTest();  // pending, no pods
  r = switches_.Modify("default/pt-2x8", kSwitch);
  EXPECT_EQ(r.code, 500);
  EXPECT_TRUE(notified_.empty());
}

TEST_F(DataTraceTest, WithTheMountTheConfigMapIsCreatedAsSpecified) {
  RunJob(/*mounted=*/true);
  notifier_status_ = absl::NotFoundError("nobody listens");  // only logged on this path
  DataTraceResult r = switches_.Modify("default/pt-2x8", kSwitch);
  EXPECT_EQ(r.code, 200);
  EXPECT_FALSE(r.rpc_error);
  auto cm = TraceConfigMap();
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ((*cm)["metadata"]["labels"].dump(), R"({"reset":"true"})");
  EXPECT_EQ((*cm)["metadata"]["ownerReferences"].dump(),
            R"([{"apiVersion":"mindxdl.gitee.com/v1","kind":"AscendJob","name":"pt-2x8",)"
            R"("uid":"7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11","controller":true}])");
  EXPECT_EQ((*cm)["data"].dump(),
            R"({"profilingSwitch":"{\"CommunicationOperator\":\"off\",\"Step\":\"on\",)"
            R"(\"SaveCheckpoint\":\"on\",\"FP\":\"on\",\"DataLoader\":\"on\"}"})");
}

TEST_F(DataTraceTest, WithTheMountAnExistingConfigMapIsUpdatedKeepingOtherKeys) {
  RunJob(true);
  store::Object existing = DataTraceConfigMap("default", "pt-2x8", nullptr, kSwitch);
  existing["data"]["profilingSwitch"] = "not json";
  existing["data"]["other"] = "kept";
  ASSERT_TRUE(store_.Create("configmaps", existing).ok());
  ProfilingSwitch all_on{"on", "on", "on", "on", "on"};
  DataTraceResult r = switches_.Modify("default/pt-2x8", all_on);
  EXPECT_EQ(r.code, 200);
  auto cm = TraceConfigMap();
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ((*cm)["data"]["other"], "kept");
  EXPECT_EQ((*cm)["data"]["profilingSwitch"], model::SerializeProfilingSwitch(all_on));
  EXPECT_EQ((*cm)["metadata"]["ownerReferences"][0]["uid"], kJobUid);
}

TEST_F(DataTraceTest, GetReportsEachCaseWithItsCode) {
  DataTraceResult bad = switches_.Get("x");
  EXPECT_EQ(bad.code, 300);
  EXPECT_FALSE(bad.rpc_error);

  DataTraceResult missing = switches_.Get("default/pt-2x8");
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(missing.message, "failed to found configmap:[default/pt-2x8]");
  EXPECT_TRUE(missing.rpc_error);

  store::Object cm = DataTraceConfigMap("default", "pt-2x8", nullptr, kSwitch);
  cm["data"] = store::Object::object();
  ASSERT_TRUE(store_.Create("configmaps", cm).ok());
  DataTraceResult no_key = switches_.Get("default/pt-2x8");
  EXPECT_EQ(no_key.code, 404);
  EXPECT_EQ(no_key.message, "data trace configmap does not contain the 'profilingSwitch' field");
  EXPECT_FALSE(no_key.rpc_error);

  cm["data"]["profilingSwitch"] = "{";
  ASSERT_TRUE(store_.Update("configmaps", cm).ok());
  DataTraceResult broken = switches_.Get("default/pt-2x8");
  EXPECT_EQ(broken.code, 500);
  EXPECT_EQ(broken.message, "failed to convert configmap:[default/pt-2x8]");
  EXPECT_TRUE(broken.rpc_error);

  cm["data"]["profilingSwitch"] = model::SerializeProfilingSwitch(kSwitch);
  ASSERT_TRUE(store_.Update("configmaps", cm).ok());
  DataTraceResult ok = switches_.Get("default/pt-2x8");
  EXPECT_EQ(ok.code, 200);
  EXPECT_EQ(ok.message, "successfully get the status of job[default/pt-2x8]");
  EXPECT_EQ(ok.profiling_switch, kSwitch);
}

TEST_F(DataTraceTest, SubscriptionNeedsAKnownJobOrAMindIeInstance) {
  EXPECT_FALSE(switches_.SubscriptionAllowed(kJobUid, "taskd"));
  RunJob(false);
  EXPECT_TRUE(switches_.SubscriptionAllowed(kJobUid, "taskd"));
  testing::PodGroupSpec mindie;
  mindie.name = "server-pg";
  mindie.uid = "server-pg-uid";
  mindie.owner_uid = "server-uid";
  mindie.labels = {{"jobID", "mindie-job-001"}, {"app", "mindie-ms-server"}};
  registry_.OnPodGroupEvent(WatchEvent{WatchEventType::kAdded, PodGroupObject(mindie)});
  EXPECT_TRUE(switches_.SubscriptionAllowed("mindie-job-001", "mindie-ms-server"));
  EXPECT_FALSE(switches_.SubscriptionAllowed("mindie-job-001", "taskd"));
}

}  // namespace data_trace_test
}  // namespace clusterd::cluster
