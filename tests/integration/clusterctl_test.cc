// clusterctl against a running clusterd: health, get configmaps in each output format, errors.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_process.h"
#include "store/object_store.h"
#include "test_env.h"

namespace clusterd {
namespace clusterctl_test {

using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

class ClusterctlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path() + "/state";
    // Objects written before clusterd starts, as another process would.
    auto store = store::OpenStore("dir:" + state_);
    ASSERT_TRUE(store.ok()) << store.status();
    for (const char* name : {"alpha", "beta"}) {
      store::Object cm = {
          {"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "mindx-dl"}, {"labels", {{"app", name}}}}},
          {"data", {{"k", "v"}, {"k2", "v2"}}}};
      ASSERT_TRUE((*store)->Create(store::kConfigMaps, cm).ok());
    }
    sim::ClusterdProcess::Options options;
    options.binary = CLUSTERD_BIN;
    options.store = "dir:" + state_;
    options.work_dir = dir_.path() + "/run";
    auto proc = sim::ClusterdProcess::Start(options);
    ASSERT_TRUE(proc.ok()) << proc.status();
    proc_ = std::move(*proc);
  }

  CommandResult Ctl(const std::string& args) {
    return RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --addr ", proc_->grpc_address(), " --http ",
                                   proc_->http_address(), " ", args));
  }

  TempDir dir_;
  std::string state_;
  std::unique_ptr<sim::ClusterdProcess> proc_;
};

TEST_F(ClusterctlTest, HealthReportsEveryCheckOk) {
  CommandResult r = Ctl("health");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "grpc")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "readyz")) << r.output;
  EXPECT_FALSE(absl::StrContains(r.output, "FAIL")) << r.output;
}

TEST_F(ClusterctlTest, HealthOfAStoppedServerExitsThree) {
  ASSERT_TRUE(proc_->Stop().ok());
  CommandResult r = Ctl("--timeout 1 health");
  EXPECT_EQ(r.exit_code, 3) << r.output;
}

TEST_F(ClusterctlTest, GetConfigmapsAsATable) {
  CommandResult r = Ctl("get configmaps -n mindx-dl");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StartsWith(r.output, "NAME")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "alpha")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "beta")) << r.output;
}

TEST_F(ClusterctlTest, GetConfigmapsAsJsonIsAListOfTheStoredObjects) {
  CommandResult r = Ctl("get cm -n mindx-dl -o json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto list = nlohmann::json::parse(r.output);
  // clusterd writes its own ConfigMaps into mindx-dl too (cluster-info-*); ours are both there.
  std::map<std::string, nlohmann::json> ours;
  for (const auto& item : list["items"]) {
    const std::string name = item["metadata"]["name"];
    if (name == "alpha" || name == "beta") ours[name] = item;
  }
  ASSERT_EQ(ours.size(), 2u) << r.output;
  EXPECT_EQ(ours["alpha"]["data"]["k"], "v");
}

TEST_F(ClusterctlTest, GetOneConfigmapAsYaml) {
  CommandResult r = Ctl("get configmap alpha -n mindx-dl -o yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "name: \"alpha\"")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "k2: \"v2\"")) << r.output;
}

TEST_F(ClusterctlTest, LabelSelectorFilters) {
  CommandResult r = Ctl("get cm -A -l app=beta -o json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto list = nlohmann::json::parse(r.output);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "beta");
}

TEST_F(ClusterctlTest, AMissingObjectExitsOneWithTheReason) {
  CommandResult r = Ctl("get cm nope -n mindx-dl");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "nope")) << r.output;
}

TEST_F(ClusterctlTest, NameAndJsonPathOutputsAreKubectls) {
  CommandResult names = Ctl("get cm -n mindx-dl -l app -o name");
  ASSERT_EQ(names.exit_code, 0) << names.output;
  EXPECT_EQ(names.output, "configmap/alpha\nconfigmap/beta\n");
  CommandResult path = Ctl("get cm -n mindx-dl -l app -o 'jsonpath={.items[*].metadata.name}'");
  ASSERT_EQ(path.exit_code, 0) << path.output;
  EXPECT_EQ(path.output, "alpha beta");
  CommandResult range = Ctl(
      R"(get cm -n mindx-dl -l app -o 'jsonpath={range .items[*]}{.metadata.name}={.data.k}{"\n"}{end}')");
  ASSERT_EQ(range.exit_code, 0) << range.output;
  EXPECT_EQ(range.output, "alpha=v\nbeta=v\n");
  CommandResult bad = Ctl("get cm -n mindx-dl -o 'jsonpath={.items['");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(absl::StrContains(bad.output, "jsonpath:")) << bad.output;
}

TEST_F(ClusterctlTest, GoodputAndOffendersAnswerOnAFreshCluster) {
  CommandResult goodput = Ctl("get goodput -A -o json");
  ASSERT_EQ(goodput.exit_code, 0) << goodput.output;
  EXPECT_EQ(nlohmann::json::parse(goodput.output)["kind"], "GoodputList");
  CommandResult offenders = Ctl("get offenders");
  ASSERT_EQ(offenders.exit_code, 0) << offenders.output;
  EXPECT_TRUE(absl::StrContains(offenders.output, "Repeat-offender policy: off"))
      << offenders.output;
  // An unknown job is a clear error, not an empty answer.
  CommandResult unknown = Ctl("get goodput no-such-job");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_TRUE(absl::StrContains(unknown.output, "no goodput record of job no-such-job"))
      << unknown.output;
}

TEST_F(ClusterctlTest, InjectingAFaultOnAnUnknownNodeWarns) {
  CommandResult r = Ctl("inject fault --node node-x --npu 0 --code 220001001");
  EXPECT_TRUE(absl::StrContains(r.output, "warning: clusterd knows no node \"node-x\""))
      << r.output;
}

TEST_F(ClusterctlTest, GetWatchPrintsTheViewAndAgainWhenItChanges) {
  std::thread writer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    auto store = store::OpenStore("dir:" + state_);
    ASSERT_TRUE(store.ok());
    store::Object cm = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata",
         {{"name", "gamma"}, {"namespace", "mindx-dl"}, {"labels", {{"app", "gamma"}}}}},
        {"data", {{"k", "v"}}}};
    ASSERT_TRUE((*store)->Create(store::kConfigMaps, cm).ok());
  });
  CommandResult r = Ctl("get cm -n mindx-dl -l app -o name -w --watch-for 7");
  writer.join();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The first view, then the changed one after a time stamp line.
  const size_t first = r.output.find("configmap/alpha\nconfigmap/beta\n");
  const size_t again = r.output.find("configmap/alpha\nconfigmap/beta\nconfigmap/gamma\n");
  EXPECT_NE(first, std::string::npos) << r.output;
  EXPECT_NE(again, std::string::npos) << r.output;
  EXPECT_LT(first, again) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "\n# ")) << r.output;
}

TEST_F(ClusterctlTest, DescribeNodeShowsTheNodeItsNpusAndItsFaultHistory) {
  {
    auto store = store::OpenStore("dir:" + state_);
    ASSERT_TRUE(store.ok());
    store::Object node = {
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata", {{"name", "node-1"}, {"labels", {{"accelerator", "huawei-Ascend910"}}}}},
        {"spec", {{"taints", {{{"key", "maintenance"}, {"effect", "NoSchedule"}}}}}},
        {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    ASSERT_TRUE((*store)->Create(store::kNodes, node).ok());
  }
  CommandResult r;
  for (int i = 0; i < 50; ++i) {
    r = Ctl("describe node node-1");
    if (r.exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "Name:           node-1")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "Ready:          Ready")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "maintenance:NoSchedule")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "accelerator=huawei-Ascend910")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "Fault history:  no fault seen")) << r.output;
  CommandResult json = Ctl("describe node node-1 -o json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(nlohmann::json::parse(json.output)["node"]["metadata"]["name"], "node-1");
  EXPECT_EQ(Ctl("describe node nope").exit_code, 1);
  EXPECT_EQ(Ctl("describe widget x").exit_code, 2);
}

TEST_F(ClusterctlTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Ctl("get widgets").exit_code, 2);
  EXPECT_EQ(Ctl("-o xml get cm").exit_code, 2);
  EXPECT_EQ(Ctl("frobnicate").exit_code, 2);
}

// An operator edits clusterd-config-cm: the policy is in force within seconds (its watch, not
// the original's 300 s poll), `clusterctl get configuration` shows it with its source, and the
// log confirms it.
TEST_F(ClusterctlTest, AManualSeparationPolicyEditShowsInGetConfigurationWithinSeconds) {
  CommandResult before = Ctl("get configuration -o json");
  ASSERT_EQ(before.exit_code, 0) << before.output;
  auto initial = nlohmann::json::parse(before.output);
  EXPECT_FALSE(initial["manualSeparation"]["enabled"].get<bool>()) << before.output;
  EXPECT_TRUE(absl::StrContains(initial["publicFaults"]["source"].get<std::string>(),
                                "publicFaultConfiguration.json"))
      << before.output;

  auto store = store::OpenStore("dir:" + state_);
  ASSERT_TRUE(store.ok()) << store.status();
  store::Object cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "clusterd-config-cm"}, {"namespace", "cluster-system"}}},
      {"data",
       {{"manually_separate_policy.conf",
         "enabled: true\nseparate:\n  fault_window_hours: 12\n  fault_threshold: 2\n"}}}};
  ASSERT_TRUE((*store)->Create(store::kConfigMaps, cm).ok());
  const absl::Time edited = absl::Now();
  nlohmann::json view;
  while (absl::Now() - edited < absl::Seconds(10)) {
    CommandResult r = Ctl("get configuration -o json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    view = nlohmann::json::parse(r.output);
    if (view["manualSeparation"]["enabled"].get<bool>()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(view["manualSeparation"]["enabled"].get<bool>()) << view.dump();
  EXPECT_EQ(view["manualSeparation"]["faultThreshold"], 2) << view.dump();
  EXPECT_EQ(view["manualSeparation"]["faultWindowHours"], 12) << view.dump();
  EXPECT_EQ(view["manualSeparation"]["source"], "cluster-system/clusterd-config-cm");
  CommandResult table = Ctl("get configuration");
  EXPECT_TRUE(absl::StrContains(table.output, "enabled window=12h threshold=2")) << table.output;
  std::ifstream log(proc_->log_path());
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_TRUE(absl::StrContains(
      text.str(), "manual separation policy applied from cluster-system/clusterd-config-cm"))
      << text.str();
}

}  // namespace clusterctl_test
}  // namespace clusterd
