// What the agent reads of the cluster: the pods of its own node and three ConfigMaps by name,
// selected by the store (on the kube store, by the API server), never everything to filter here.
// An agent runs on every node: reading the whole cluster each does not scale.

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/agent_core.h"
#include "agent/agent_runner.h"
#include "agent_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/forwarding_store.h"

namespace clusterd::agent {
namespace store_reads_test {

using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// A List or Watch the agent made: resource, namespace, field selector, label selector.
struct Read {
  std::string resource;
  std::string ns;
  std::string fields;
  std::string labels;

  bool operator==(const Read&) const = default;
};

void PrintTo(const Read& r, std::ostream* os) {
  *os << r.resource << " ns=" << r.ns << " fields=" << r.fields << " labels=" << r.labels;
}

// Records the options of every List and Watch.
class RecordingStore : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  absl::StatusOr<store::ObjectList> List(std::string_view resource,
                                         const store::ListOptions& options) override {
    Record(Kind::kList, resource, options.ns, options.fields, options.selector);
    return inner_.List(resource, options);
  }
  absl::StatusOr<std::unique_ptr<store::WatchHandle>> Watch(std::string_view resource,
                                                            const store::WatchOptions& options,
                                                            store::WatchHandler handler) override {
    Record(Kind::kWatch, resource, options.ns, options.fields, options.selector);
    return inner_.Watch(resource, options, std::move(handler));
  }

  std::vector<Read> Lists(std::string_view resource) const { return Of(Kind::kList, resource); }
  std::vector<Read> Watches(std::string_view resource) const { return Of(Kind::kWatch, resource); }

 private:
  enum class Kind { kList, kWatch };
  void Record(Kind kind, std::string_view resource, const std::string& ns,
              const store::FieldSelector& fields, const store::LabelSelector& labels) {
    absl::MutexLock lock(&mu_);
    (kind == Kind::kList ? lists_ : watches_)
        .push_back({std::string(resource), ns, fields.ToString(), labels.ToString()});
  }
  std::vector<Read> Of(Kind kind, std::string_view resource) const {
    absl::MutexLock lock(&mu_);
    std::vector<Read> out;
    for (const Read& r : kind == Kind::kList ? lists_ : watches_) {
      if (r.resource == resource) out.push_back(r);
    }
    return out;
  }

  mutable absl::Mutex mu_;
  std::vector<Read> lists_ ABSL_GUARDED_BY(mu_);
  std::vector<Read> watches_ ABSL_GUARDED_BY(mu_);
};

// A pod of another node's job, holding that node's NPUs 4 and 5.
void AddOtherNodesPod(store::ObjectStore& store) {
  store::Object pod = {{"apiVersion", "v1"},
                       {"kind", "Pod"},
                       {"metadata",
                        {{"name", "job2-worker-0"},
                         {"namespace", "default"},
                         {"labels", {{"job-name", "job2"}}},
                         {"annotations",
                          {{"hccl/rankIndex", "0"},
                           {"ascend.kubectl.kubernetes.io/ascend-910-configuration",
                            R"({"devices":[{"device_id":"4"},{"device_id":"5"}]})"}}}}},
                       {"spec", {{"nodeName", "node-2"}}},
                       {"status", {{"phase", "Running"}}}};
  ASSERT_TRUE(store.Create("pods", pod).ok());
}

TEST(AgentStoreReads, EachCycleListsThePodsOfThisNodeOnly) {
  ManualClock clock(absl::FromUnixSeconds(1718000000));
  auto memory = *store::OpenStore("memory");
  testing::AddGraceJob(*memory);
  AddOtherNodesPod(*memory);
  RecordingStore store(*memory);
  AgentOptions options = testing::TestOptions();
  options.grace_tolerance = true;
  AgentCore core(options, store, clock);
  ASSERT_TRUE(core.Start().ok());
  core.Step();
  clock.Set(clock.Now() + absl::Minutes(10));
  core.Step();

  const std::vector<Read> lists = store.Lists(store::kPods);
  ASSERT_FALSE(lists.empty());  // one per cycle
  for (const Read& r : lists) {
    EXPECT_EQ(r, (Read{"pods", "", "spec.nodeName=node-1", ""}));
  }
  // And what it found is this node's: NPUs 2 and 3 in use, node-2's 4 and 5 not.
  auto device_info = ReadConfigMapData(*memory, model::kDeviceInfoNamespace,
                                       model::DeviceInfoConfigMapName("node-1"));
  ASSERT_TRUE(device_info.ok() && device_info->has_value());
  EXPECT_NE(
      (**device_info)
          .at("DeviceInfoCfg")
          .find(R"("huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-4,Ascend910-5,)"),
      std::string::npos)
      << (**device_info).at("DeviceInfoCfg");
}

TEST(AgentStoreReads, TheRunnerWatchesItsThreeConfigMapsByName) {
  ManualClock clock(absl::FromUnixSeconds(1718000000));
  auto memory = *store::OpenStore("memory");
  RecordingStore store(*memory);
  AgentCore core(testing::TestOptions(), store, clock);
  ASSERT_TRUE(core.Start().ok());
  EXPECT_THAT(store.Watches(store::kConfigMaps), IsEmpty());
  AgentRunner runner(core, store, "node-1");
  ASSERT_TRUE(runner.Start().ok());
  runner.Stop();
  EXPECT_THAT(store.Watches(store::kConfigMaps),
              UnorderedElementsAre(
                  Read{"configmaps", "kube-system", "metadata.name=mindx-dl-deviceinfo-node-1", ""},
                  Read{"configmaps", "kube-system", "metadata.name=mindx-dl-fault-config", ""},
                  Read{"configmaps", "mindx-dl", "metadata.name=mindx-dl-node-fault-config", ""}));
  EXPECT_THAT(store.Lists(store::kConfigMaps), IsEmpty());
}

}  // namespace store_reads_test
}  // namespace clusterd::agent
