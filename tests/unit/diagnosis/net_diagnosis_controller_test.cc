#include "diagnosis/net_diagnosis_controller.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "gtest/gtest.h"
#include "store/object_store.h"
#include "unit/diagnosis/memory_pingmesh_result_source.h"

namespace clusterd::diagnosis {
namespace net_diagnosis_controller_test {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

class RecordingSink : public PublicFaultSink {
 public:
  absl::Status SendPublicFault(const PublicFaultReport& report) override {
    if (failures_left > 0) {
      --failures_left;
      return absl::UnavailableError("fault centre rate limited");
    }
    reports.push_back(report);
    return absl::OkStatus();
  }
  std::vector<PublicFaultReport> reports;
  int failures_left = 0;
};

// SDID of NPU `phy` on server `server`: the server field is (sdid >> 22) & 0x3FF.
uint32_t Sdid(uint32_t server, uint32_t phy) { return (server << 22) | (phy << 16) | phy; }

store::Object A3Node(const std::string& name, const std::string& pod, int server, int npus) {
  Json infos = Json::object();
  for (int p = 0; p < npus; ++p) {
    infos[absl::StrCat("Ascend910-", p)] = Json{{"IP", "x"}, {"SuperDeviceID", Sdid(server, p)}};
  }
  return store::Object{{"apiVersion", "v1"},
                       {"kind", "Node"},
                       {"metadata",
                        {{"name", name},
                         {"annotations",
                          {{"superPodID", pod},
                           {"serverType", "A3"},
                           {"serverIndex", std::to_string(server)},
                           {"baseDeviceInfos", infos.dump()}}}}}};
}

store::Object PingmeshConfig(std::map<std::string, std::string> data) {
  Json d = Json::object();
  for (const auto& [k, v] : data) d[k] = v;
  return store::Object{{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata",
                        {{"name", "pingmesh-config"},
                         {"namespace", "cluster-system"},
                         {"labels", {{"app", "pingmesh"}, {"mx-consumer-cim", "true"}}}}},
                       {"data", d}};
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr char kCsvHeader[] =
    "pingTaskId,srcType,srcAddr,dstType,dstAddr,minDelay,maxDelay,avgDelay,minLossRate,"
    "maxLossRate,avgLossRate,timestamp\n";

class NetDiagnosisControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ =
        fs::path(::testing::TempDir()) /
        absl::StrCat("netdiag-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    root_ = base_ / "root";
    fs::create_directories(root_);
    auto st = store::OpenStore("memory");
    ASSERT_TRUE(st.ok());
    store_ = std::move(*st);
    clock_.Set(absl::FromUnixSeconds(1735690000));
  }
  void TearDown() override {
    controller_.reset();
    fs::remove_all(base_);
  }

  void MakeController(fs::path root, PingmeshResultSource* results = nullptr) {
    NetDiagnosisOptions o;
    o.root = root.string();
    o.results = results;
    controller_ = std::make_unique<NetDiagnosisController>(*store_, clock_, sink_, o);
  }

  // Two A3 servers (indices 0 and 1) of super pod 0 with two NPUs each.
  void AddNodes() {
    ASSERT_TRUE(store_->Create("nodes", A3Node("node-a", "0", 0, 2)).ok());
    ASSERT_TRUE(store_->Create("nodes", A3Node("node-b", "0", 1, 2)).ok());
  }

  void SetConfig(std::map<std::string, std::string> data) {
    store::Object cm = PingmeshConfig(std::move(data));
    auto existing = store_->Get({"configmaps", "cluster-system", "pingmesh-config"});
    if (existing.ok()) {
      cm["metadata"]["resourceVersion"] = (*existing)["metadata"]["resourceVersion"];
      ASSERT_TRUE(store_->Update("configmaps", cm).ok());
    } else {
      ASSERT_TRUE(store_->Create("configmaps", cm).ok());
    }
  }

  void Resync() {
    controller_->Resync();
    controller_->controller().RunUntilIdleForTest();
  }

  fs::path PodDir() const { return root_ / "cluster" / "super-pod-0"; }

  // Appends one probe row per NPU pair, stamped now − 5 s, to ping_result_<server>.csv.
  // `loss(src, dst)` and `delay_us(src, dst)` shape the link.
  void WriteRound(const std::function<double(uint32_t, uint32_t)>& loss,
                  const std::function<double(uint32_t, uint32_t)>& delay_us) {
    const int64_t ts = absl::ToUnixMillis(clock_.Now() - absl::Seconds(5));
    std::vector<uint32_t> npus;
    for (uint32_t s = 0; s < 2; ++s) {
      for (uint32_t p = 0; p < 2; ++p) npus.push_back(Sdid(s, p));
    }
    for (uint32_t server = 0; server < 2; ++server) {
      const fs::path path = PodDir() / absl::StrCat("ping_result_", server, ".csv");
      const bool fresh = !fs::exists(path);
      std::ofstream out(path, std::ios::app);
      if (fresh) out << kCsvHeader;
      for (uint32_t src : npus) {
        if (SdidServer(src) != server) continue;
        for (uint32_t dst : npus) {
          if (src == dst) continue;
          const double l = loss(src, dst), d = delay_us(src, dst);
          out << "0,0," << src << ",0," << dst << "," << d << "," << d << "," << d << "," << l
              << "," << l << "," << l << "," << ts << "\n";
        }
      }
    }
  }

  // One period (task_interval 1: 10 s): the probes write, the clock moves, the round runs.
  void Period(const std::function<double(uint32_t, uint32_t)>& loss,
              const std::function<double(uint32_t, uint32_t)>& delay_us) {
    clock_.Advance(absl::Seconds(10));
    WriteRound(loss, delay_us);
    controller_->controller().RunUntilIdleForTest();
  }

  void StartDetection() {
    AddNodes();
    SetConfig({{"global", R"({"activate":"on","task_interval":1})"}});
    MakeController(root_);
    Resync();
  }

  fs::path base_, root_;
  ManualClock clock_;
  RecordingSink sink_;
  std::unique_ptr<store::ObjectStore> store_;
  std::unique_ptr<NetDiagnosisController> controller_;
};

double NoLoss(uint32_t, uint32_t) { return 0; }
double Steady(uint32_t, uint32_t) { return 9000; }

TEST_F(NetDiagnosisControllerTest, PublishesTopologyConfigMapAndFilesFromA3Nodes) {
  StartDetection();
  auto cm = store_->Get({"configmaps", "cluster-system", "super-pod-0"});
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ((*cm)["metadata"]["labels"]["app"], "pingmesh");
  const std::string device = (*cm)["data"]["superPodDevice"].get<std::string>();
  EXPECT_TRUE(absl::StartsWith(device, R"({"Version":"A3","SuperPodID":"0","NodeDeviceMap":{)"
                                       R"("node-a":{"NodeName":"node-a","ServerID":"0",)"
                                       R"("DeviceMap":{"0":"0","1":"65537"}},)"))
      << device;
  const std::string file = ReadAll(PodDir() / "super-pod-0.json");
  EXPECT_NE(file.find("\n    \"Version\": \"A3\""), std::string::npos) << file;
  EXPECT_EQ(ReadAll(PodDir() / "cathelper.conf"),
            "suppressedPeriod=0\nnetworkType=1\npingType=0\npingTimes=5\npingInterval=1\n"
            "period=10\nnetFault=on\n");
  // Ping lists: server 0's two NPUs probe the three others each.
  auto list = Json::parse(ReadAll(PodDir() / "ping_list_0.json"));
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), 1u);
  ASSERT_EQ(list[0]["pingList"].size(), 6u);
  EXPECT_EQ(list[0]["pingList"][0].dump(),
            R"({"srcType":0,"dstType":0,"pktSize":1024,"srcCardPhyId":0,"srcAddr":"0",)"
            R"("dstAddr":"65537","dstCardPhyId":1})");
  EXPECT_TRUE(fs::exists(PodDir() / "ping_list_1.json"));
  EXPECT_TRUE(fs::exists(PodDir() / "network_fault.json"));
  Json view = controller_->Views();
  EXPECT_EQ(view["detection"], "on");
  ASSERT_EQ(view["superPods"].size(), 1u);
  EXPECT_EQ(view["superPods"][0]["detection"], "on");
  EXPECT_EQ(view["superPods"][0]["period"], 10);
  EXPECT_EQ(view["superPods"][0]["npus"], 4);

  // Unchanged content is not rewritten (the hash suppresses it).
  const auto before = (*cm)["metadata"]["resourceVersion"];
  Resync();
  EXPECT_EQ((*store_->Get(
                {"configmaps", "cluster-system", "super-pod-0"}))["metadata"]["resourceVersion"],
            before);
}

TEST_F(NetDiagnosisControllerTest, AllOffTurnsDetectionOffAndRewritesCathelper) {
  StartDetection();
  ASSERT_TRUE(fs::exists(PodDir() / "ping_list_0.json"));
  SetConfig({{"global", R"({"activate":"off","task_interval":2})"},
             {"roce", R"({"activate":"off","task_interval":1})"}});
  Resync();
  EXPECT_EQ(ReadAll(PodDir() / "cathelper.conf"),
            "suppressedPeriod=0\nnetworkType=1\npingType=0\npingTimes=5\npingInterval=1\n"
            "period=20\nnetFault=off\n");
  EXPECT_FALSE(fs::exists(PodDir() / "ping_list_0.json"));  // deleted when detection stops
  Json view = controller_->Views();
  EXPECT_EQ(view["detection"], "off");
  EXPECT_EQ(view["superPods"][0]["detection"], "off");
  // A super pod's own entry wins over global.
  SetConfig({{"global", R"({"activate":"off","task_interval":1})"},
             {"0", R"({"activate":"on","task_interval":3})"}});
  Resync();
  EXPECT_NE(ReadAll(PodDir() / "cathelper.conf").find("period=30\nnetFault=on\n"),
            std::string::npos);
  EXPECT_EQ(controller_->Views()["superPods"][0]["period"], 30);
}

TEST_F(NetDiagnosisControllerTest, NoCathelperBeforeDetectionWasEverOn) {
  AddNodes();
  SetConfig({{"global", R"({"activate":"off","task_interval":1})"}});
  MakeController(root_);
  Resync();
  EXPECT_FALSE(fs::exists(PodDir() / "cathelper.conf"));
  EXPECT_FALSE(store_->Get({"configmaps", "cluster-system", "super-pod-0"}).ok());
  EXPECT_EQ(controller_->Views()["detection"], "off");
}

TEST_F(NetDiagnosisControllerTest, BadPingmeshUpdateIsIgnoredEntirely) {
  StartDetection();
  Counter& rejected = MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_rejected_configs_total",
      "pingmesh-config updates ignored because a value is invalid.");
  const uint64_t before = rejected.Value();
  // One bad value (task_interval 61) next to a good one that would turn detection off.
  SetConfig({{"global", R"({"activate":"off","task_interval":1})"},
             {"0", R"({"activate":"on","task_interval":61})"}});
  Resync();
  EXPECT_EQ(rejected.Value(), before + 1);
  Json view = controller_->Views();
  EXPECT_EQ(view["detection"], "on");
  EXPECT_NE(view["configError"].get<std::string>().find("task_interval"), std::string::npos);
  EXPECT_EQ(view["config"]["global"]["activate"], "on");
  EXPECT_NE(ReadAll(PodDir() / "cathelper.conf").find("netFault=on"), std::string::npos);
  EXPECT_TRUE(fs::exists(PodDir() / "ping_list_0.json"));
  // Not JSON at all.
  SetConfig({{"global", "{activate"}});
  Resync();
  EXPECT_EQ(rejected.Value(), before + 2);
  EXPECT_EQ(controller_->Views()["detection"], "on");
}

TEST_F(NetDiagnosisControllerTest, SteadyProbesRaiseNoFault) {
  StartDetection();
  for (int i = 0; i < 15; ++i) Period(NoLoss, Steady);
  EXPECT_TRUE(sink_.reports.empty());
  Json pod = controller_->Views()["superPods"][0];
  EXPECT_EQ(pod["rounds"], 15);
  EXPECT_GE(pod["analysedRounds"], 4);
  EXPECT_EQ(pod["alarmsTotal"], 0);
  const std::string log = ReadAll(PodDir() / "network_fault.json");
  EXPECT_TRUE(absl::StartsWith(log, "Detection 0 result(")) << log;
  EXPECT_EQ(log.find("srcId"), std::string::npos);
}

TEST_F(NetDiagnosisControllerTest, SlowLinksAreReportedAsPublicFaults) {
  StartDetection();
  const uint32_t a0 = Sdid(0, 0), a1 = Sdid(0, 1), b0 = Sdid(1, 0);
  for (int i = 0; i < 10; ++i) Period(NoLoss, Steady);  // the baseline
  sink_.failures_left = 1;                              // one retry through the timer
  // From now on: a0 <-> b0 (two servers) loses half its packets, a0 -> a1 (one server) is slow.
  auto loss = [&](uint32_t s, uint32_t d) {
    return (s == a0 && d == b0) || (s == b0 && d == a0) ? 0.5 : 0.0;
  };
  auto delay = [&](uint32_t s, uint32_t d) { return s == a0 && d == a1 ? 80000.0 : 9000.0; };
  for (int i = 0; i < 3 && controller_->Views()["superPods"][0]["alarmsTotal"] == 0; ++i) {
    Period(loss, delay);
  }
  EXPECT_TRUE(sink_.reports.empty());  // refused once: parked for the retry, worker not blocked
  EXPECT_EQ(controller_->Views()["pendingReports"], 1);
  clock_.Advance(absl::Seconds(3));
  controller_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.reports.size(), 1u);
  const PublicFaultReport& r = sink_.reports[0];
  EXPECT_EQ(r.resource, "fd-online");
  std::set<std::string> codes;
  for (const PublicFault& f : r.faults) codes.insert(f.fault_code);
  EXPECT_EQ(codes, (std::set<std::string>{"200001010", "200001011"}));
  for (const PublicFault& f : r.faults) {
    if (f.fault_code == "200001011") {
      EXPECT_EQ(f.fault_location.at("SrcID"), std::to_string(a0));
      EXPECT_EQ(f.fault_location.at("DstID"), std::to_string(b0));
    } else {
      EXPECT_EQ(f.fault_location.at("SrcID"), std::to_string(a0));
      EXPECT_EQ(f.fault_location.at("DstID"), std::to_string(a1));
      EXPECT_NE(f.description.find(R"("faultType":0)"), std::string::npos);
    }
  }
  const std::string log = ReadAll(PodDir() / "network_fault.json");
  EXPECT_NE(log.find(absl::StrCat("\"srcId\": \"", a0, "\"")), std::string::npos) << log;
  Json pod = controller_->Views()["superPods"][0];
  EXPECT_EQ(pod["alarmsTotal"], 2);
  EXPECT_EQ(pod["faultsSent"], 2);
  EXPECT_EQ(pod["lastAlarms"].size(), 2u);
}

TEST_F(NetDiagnosisControllerTest, RowsBeforeDetectionStartAreIgnored) {
  AddNodes();
  // Old rows from a previous run: a lossy link long before detection starts.
  fs::create_directories(PodDir());
  {
    std::ofstream out(PodDir() / "ping_result_0.csv-bak");
    out << kCsvHeader;
    for (int i = 0; i < 20; ++i) {
      out << "0,0,0,0,4194304,9000,9000,9000,0.9,0.9,0.9," << (1735600000000 + i * 10000) << "\n";
    }
  }
  SetConfig({{"global", R"({"activate":"on","task_interval":1})"}});
  MakeController(root_);
  Resync();
  for (int i = 0; i < 14; ++i) Period(NoLoss, Steady);
  EXPECT_TRUE(sink_.reports.empty());
}

TEST_F(NetDiagnosisControllerTest, MissingRootIdlesAndRechecks) {
  AddNodes();
  SetConfig({{"global", R"({"activate":"on","task_interval":1})"}});
  const fs::path late = base_ / "late-root";
  MakeController(late);
  Resync();
  Json view = controller_->Views();
  EXPECT_EQ(view["rootReady"], false);
  EXPECT_EQ(view["detection"], "on");  // the configuration is kept
  EXPECT_FALSE(store_->Get({"configmaps", "cluster-system", "super-pod-0"}).ok());
  for (int i = 0; i < 6; ++i) {  // re-checked every 5 s
    clock_.Advance(absl::Seconds(5));
    controller_->controller().RunUntilIdleForTest();
  }
  EXPECT_EQ(controller_->Views()["rootReady"], false);
  fs::create_directories(late);
  clock_.Advance(absl::Seconds(5));
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(controller_->Views()["rootReady"], true);
  EXPECT_TRUE(store_->Get({"configmaps", "cluster-system", "super-pod-0"}).ok());
  EXPECT_TRUE(fs::exists(late / "cluster" / "super-pod-0" / "cathelper.conf"));
}

TEST_F(NetDiagnosisControllerTest, LastNodeDeletedRemovesConfigMapAndJson) {
  StartDetection();
  ASSERT_TRUE(store_->Get({"configmaps", "cluster-system", "super-pod-0"}).ok());
  ASSERT_TRUE(store_->Delete({"nodes", "", "node-b"}).ok());
  Resync();
  auto cm = store_->Get({"configmaps", "cluster-system", "super-pod-0"});
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ((*cm)["data"]["superPodDevice"].get<std::string>().find("node-b"), std::string::npos);
  EXPECT_FALSE(fs::exists(PodDir() / "ping_list_1.json"));  // restarted without server 1
  ASSERT_TRUE(store_->Delete({"nodes", "", "node-a"}).ok());
  Resync();
  EXPECT_TRUE(
      absl::IsNotFound(store_->Get({"configmaps", "cluster-system", "super-pod-0"}).status()));
  EXPECT_FALSE(fs::exists(PodDir() / "super-pod-0.json"));
  EXPECT_TRUE(fs::exists(PodDir() / "cathelper.conf"));  // left in place
  EXPECT_FALSE(fs::exists(PodDir() / "ping_list_0.json"));
  EXPECT_TRUE(controller_->Views()["superPods"].empty());
}

TEST_F(NetDiagnosisControllerTest, MalformedRowsAreSkippedAndCounted) {
  StartDetection();
  Counter& bad = MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_bad_rows_total",
      "ping_result CSV rows skipped (malformed) or files with a bad header.");
  const uint64_t before = bad.Value();
  for (int i = 0; i < 3; ++i) Period(NoLoss, Steady);
  {
    std::ofstream out(PodDir() / "ping_result_0.csv", std::ios::app);
    out << "0,0,1,0,2,not-a-number,1,1,0,0,0,1\n"
        << "0,0,1,0,2,9000,9000,9000,0,0,0,17356900";  // being written: not counted
  }
  clock_.Advance(absl::Seconds(10));
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(bad.Value(), before + 1);
  Json pod = controller_->Views()["superPods"][0];
  EXPECT_NE(pod["lastError"].get<std::string>().find("1 malformed rows"), std::string::npos)
      << pod.dump();
  EXPECT_EQ(pod["rounds"], 4);
}

TEST_F(NetDiagnosisControllerTest, RoundsReadThroughTheResultSourceAndNameWhatCouldNotBeRead) {
  // The controller still writes its files under the root; what it reads back comes from the
  // source.
  testing::MemoryPingmeshResultSource results;
  results.SetCathelper("0", RenderCathelperConf(CathelperFor(PingmeshEntry{true, 1})));
  results.SetTopology("0", true);
  AddNodes();
  SetConfig({{"global", R"({"activate":"on","task_interval":1})"}});
  MakeController(root_, &results);
  Resync();
  Json pod = controller_->Views()["superPods"][0];
  ASSERT_EQ(pod["detection"], "on") << pod.dump();
  const std::string name = "memory:super-pod-0/ping_result_0.csv";
  results.SetResults(
      "0", {{name, absl::ResourceExhaustedError(absl::StrCat(name, ": larger than 8 bytes"))}});
  clock_.Advance(absl::Seconds(10));
  controller_->controller().RunUntilIdleForTest();
  pod = controller_->Views()["superPods"][0];
  EXPECT_EQ(pod["rounds"], 1);
  EXPECT_EQ(pod["lastError"], absl::StrCat(name, ": larger than 8 bytes"));
}

TEST_F(NetDiagnosisControllerTest, AtMostFiveSuperPodsArePublishedPerTick) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(
        store_->Create("nodes", A3Node(absl::StrCat("node-", i), std::to_string(i), 0, 1)).ok());
  }
  SetConfig({{"global", R"({"activate":"on","task_interval":1})"}});
  MakeController(root_);
  Resync();
  auto published = [&] {
    int n = 0;
    for (int i = 0; i < 7; ++i) {
      n += store_->Get({"configmaps", "cluster-system", absl::StrCat("super-pod-", i)}).ok();
    }
    return n;
  };
  EXPECT_EQ(published(), 5);
  clock_.Advance(absl::Seconds(5));
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(published(), 7);
}

TEST_F(NetDiagnosisControllerTest, WatchesDriveTheWorker) {
  AddNodes();
  MakeController(root_);
  // The test follows the super-pod ConfigMap through its own watch.
  absl::Mutex mu;
  std::vector<std::string> devices;  // superPodDevice values seen
  absl::Notification published, republished;
  store::WatchOptions wo;
  wo.ns = "cluster-system";
  auto watch = store_->Watch("configmaps", wo, [&](const store::WatchEvent& e) {
    if (store::NameOf(e.object()) != "super-pod-0") return;
    absl::MutexLock lock(&mu);
    devices.push_back(e.object()["data"]["superPodDevice"].get<std::string>());
    if (devices.size() == 1) published.Notify();
    if (devices.size() == 2) republished.Notify();
  });
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(controller_->Start().ok());
  // Nothing is published before the configuration turns detection on.
  SetConfig({{"global", R"({"activate":"on","task_interval":1})"}});
  ASSERT_TRUE(published.WaitForNotificationWithTimeout(absl::Seconds(30)));
  // A node change is published on the topology tick: the clock has to move.
  ASSERT_TRUE(store_->Delete({"nodes", "", "node-b"}).ok());
  for (int i = 0; i < 3000 && !republished.HasBeenNotified(); ++i) {
    clock_.Advance(absl::Milliseconds(500));
    controller_->controller().RunUntilIdleForTest();
    republished.WaitForNotificationWithTimeout(absl::Milliseconds(10));
  }
  ASSERT_TRUE(republished.HasBeenNotified());
  controller_->Stop();
  (*watch).reset();
  absl::MutexLock lock(&mu);
  EXPECT_NE(devices[0].find("node-b"), std::string::npos);
  EXPECT_EQ(devices[1].find("node-b"), std::string::npos);
}

namespace a5 {

// An A5 node of super pod 5: rack `rack`, its two NPUs at 10.0.<rack>.<phy> in plane "0", under
// L1 switch a (racks 0, 1) or b (racks 2, 3) and L2 switch x.
store::Object A5Node(int rack, const std::string& bad_l2 = "") {
  Json infos = Json::object();
  for (int p = 0; p < 2; ++p) {
    Json info = {{"IP", absl::StrCat("10.0.", rack, ".", p)},
                 {"SuperDeviceID", p},
                 {"NetPlaneId", "0"},
                 {"L1", rack < 2 ? "a" : "b"},
                 {"L2", "x"}};
    if (!bad_l2.empty() && p == 1) {
      info.erase("L1");
      info["L2"] = bad_l2;
    }
    infos[absl::StrCat("Ascend910-", p)] = info;
  }
  return store::Object{{"apiVersion", "v1"},
                       {"kind", "Node"},
                       {"metadata",
                        {{"name", absl::StrCat("a5-", rack)},
                         {"labels", {{"accelerator-type", "950-SuperPod-Atlas-8"}}},
                         {"annotations",
                          {{"superPodID", "5"},
                           {"serverType", "npu"},
                           {"serverIndex", std::to_string(rack)},
                           {"rackID", std::to_string(rack)},
                           {"baseDeviceInfos", infos.dump()}}}}}};
}

}  // namespace a5

TEST_F(NetDiagnosisControllerTest, A5SlowL1LinkIsTheLinkAndRoceFilesAreWritten) {
  for (int rack = 0; rack < 4; ++rack) ASSERT_TRUE(store_->Create("nodes", a5::A5Node(rack)).ok());
  SetConfig({{"global", R"({"activate":"on","task_interval":1})"},
             {"roce", R"({"activate":"on","task_interval":2})"}});
  MakeController(root_);
  Resync();
  const fs::path dir = root_ / "cluster" / "super-pod-5";
  // The topology file carries the paths; the ping lists probe by address.
  const std::string file = ReadAll(dir / "super-pod-5.json");
  EXPECT_NE(file.find("\"NpuInfoMap\""), std::string::npos) << file;
  EXPECT_TRUE(ParseSuperPodTopology(file, "f").ok());
  EXPECT_EQ(ParseSuperPodTopology(file, "f")->paths.at("10.0.3.1"),
            (NpuNetPath{"0", "3", "b", "x"}));
  const std::string list = ReadAll(dir / "ping_list_0.json");
  EXPECT_NE(list.find("\"srcAddr\": \"10.0.0.0\""), std::string::npos) << list;
  // The RoCE files (§7.2).
  const fs::path roce = root_ / "cluster" / "super-pod-roce";
  EXPECT_EQ(ReadAll(roce / "super-pod-roce.json"),
            "{\n    \"superPodList\": [\n        5\n    ]\n}");
  EXPECT_NE(ReadAll(roce / "cathelper.conf").find("period=20\nnetFault=on\n"), std::string::npos);

  std::vector<std::string> npus;
  for (int r = 0; r < 4; ++r) {
    for (int p = 0; p < 2; ++p) npus.push_back(absl::StrCat("10.0.", r, ".", p));
  }
  auto period = [&](bool slow) {
    clock_.Advance(absl::Seconds(10));
    const int64_t ts = absl::ToUnixMillis(clock_.Now() - absl::Seconds(5));
    const fs::path path = dir / "ping_result_0.csv";
    const bool fresh = !fs::exists(path);
    std::ofstream out(path, std::ios::app);
    if (fresh) out << kCsvHeader;
    for (const std::string& s : npus) {
      for (const std::string& d : npus) {
        if (s == d) continue;
        // Rack 0's L1 link: every path leaving rack 0 is slow.
        const bool cross = (s[5] == '0') != (d[5] == '0');
        const int delay = slow && cross ? 60000 : 9000;
        out << "0,0," << s << ",0," << d << "," << delay << "," << delay << "," << delay
            << ",0,0,0," << ts << "\n";
      }
    }
    out.close();
    controller_->controller().RunUntilIdleForTest();
  };
  for (int i = 0; i < 10; ++i) period(false);
  for (int i = 0; i < 3 && sink_.reports.empty(); ++i) period(true);
  ASSERT_EQ(sink_.reports.size(), 1u);
  ASSERT_EQ(sink_.reports[0].faults.size(), 1u);
  const PublicFault& f = sink_.reports[0].faults[0];
  EXPECT_EQ(f.fault_code, "200001012");
  EXPECT_EQ(f.fault_location.at("SrcType"), "3");
  EXPECT_EQ(f.fault_location.at("SrcID"), "0.rack-0");
  EXPECT_EQ(f.fault_location.at("DstType"), "5");
  EXPECT_EQ(f.fault_location.at("DstID"), "0.L1-a");
}

TEST_F(NetDiagnosisControllerTest, MalformedA5PathIsRefusedAndCounted) {
  Counter& bad = MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_bad_topology_total",
      "A5 topology annotations refused (an NPU's network path, or a super pod's address map).");
  const uint64_t before = bad.Value();
  ASSERT_TRUE(store_->Create("nodes", a5::A5Node(0, "x")).ok());
  SetConfig({{"global", R"({"activate":"on","task_interval":1})"}});
  MakeController(root_);
  Resync();
  EXPECT_EQ(bad.Value(), before + 1);
  const std::string file = ReadAll(root_ / "cluster" / "super-pod-5" / "super-pod-5.json");
  auto topo = ParseSuperPodTopology(file, "f");
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->paths.count("10.0.0.0"), 1u);
  EXPECT_EQ(topo->paths.count("10.0.0.1"), 0u);  // L2 without L1: NPU-direct
  // No roce key: no RoCE files.
  EXPECT_FALSE(fs::exists(root_ / "cluster" / "super-pod-roce"));
}

}  // namespace net_diagnosis_controller_test
}  // namespace clusterd::diagnosis
