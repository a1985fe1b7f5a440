// The simulated nodes' pingmesh probes (jobs-ranktable-diagnosis.md §7.3) and the A3 super-pod
// identities they are built on.
#include "sim/sim_pingmesh.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/sim_objects.h"

namespace clusterd::sim {
namespace sim_pingmesh_test {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SimPingmeshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("sim-pingmesh-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    pod_ = root_ / "cluster" / "super-pod-0";
    fs::create_directories(pod_);
    WriteConf(true);
    // Server 0 pings 62914560 -> 62980097 and 62914560 -> 4259840 (server 1's NPU 0).
    std::ofstream(pod_ / "ping_list_0.json") << R"([{"pingList":[
      {"srcType":0,"dstType":0,"pktSize":1024,"srcCardPhyId":0,"srcAddr":"62914560","dstAddr":"62980097","dstCardPhyId":1},
      {"srcType":0,"dstType":0,"pktSize":1024,"srcCardPhyId":0,"srcAddr":"62914560","dstAddr":"4194304","dstCardPhyId":0}]}])";
  }
  void TearDown() override { fs::remove_all(root_); }
  void WriteConf(bool on) {
    std::ofstream(pod_ / "cathelper.conf")
        << "suppressedPeriod=0\nnetworkType=1\npingType=0\npingTimes=5\npingInterval=1\n"
        << "period=10\nnetFault=" << (on ? "on" : "off") << "\n";
  }
  std::vector<std::string> Rows() {
    std::vector<std::string> lines =
        absl::StrSplit(Read(pod_ / "ping_result_0.csv"), '\n', absl::SkipEmpty());
    return lines;
  }

  fs::path root_, pod_;
};

TEST_F(SimPingmeshTest, WritesOneRowPerListedPathPerRound) {
  SimPingmesh mesh(root_);
  const absl::Time t0 = absl::FromUnixSeconds(1735690000);
  ASSERT_TRUE(mesh.Probe(t0).ok());
  ASSERT_TRUE(mesh.Probe(t0 + absl::Seconds(1)).ok());
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0],
            "pingTaskId,srcType,srcAddr,dstType,dstAddr,minDelay,maxDelay,avgDelay,minLossRate,"
            "maxLossRate,avgLossRate,timestamp");
  std::vector<std::string> f = absl::StrSplit(rows[1], ',');
  ASSERT_EQ(f.size(), 12u);
  EXPECT_EQ(f[2], "62914560");
  EXPECT_EQ(f[4], "62980097");
  EXPECT_NEAR(std::stod(f[7]), 1000, 10);  // microseconds
  EXPECT_EQ(f[10], "0.000");
  EXPECT_EQ(f[11], "1735690000000");
  EXPECT_EQ(mesh.rows_written(), 4);
}

TEST_F(SimPingmeshTest, PathsFromOrToASlowNpuTakeItsDelayUntilHealed) {
  SimPingmesh mesh(root_);
  mesh.SetSlowNpu(4194304, 10);  // server 1's NPU 0: the second path's destination
  const absl::Time t0 = absl::FromUnixSeconds(1735690000);
  ASSERT_TRUE(mesh.Probe(t0).ok());
  mesh.SetSlowNpu(4194304, 0);
  ASSERT_TRUE(mesh.Probe(t0 + absl::Seconds(1)).ok());
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 5u);
  auto delay = [&](int row) {
    std::vector<std::string> f = absl::StrSplit(rows[row], ',');
    return std::stod(f[7]);
  };
  EXPECT_LT(delay(1), 1100);
  EXPECT_EQ(delay(2), 10000);
  EXPECT_LT(delay(4), 1100);
}

TEST_F(SimPingmeshTest, NothingWhileNetFaultIsOffAndTheFileRotatesEvery45Seconds) {
  SimPingmesh mesh(root_);
  WriteConf(false);
  const absl::Time t0 = absl::FromUnixSeconds(1735690000);
  ASSERT_TRUE(mesh.Probe(t0).ok());
  EXPECT_FALSE(fs::exists(pod_ / "ping_result_0.csv"));
  WriteConf(true);
  ASSERT_TRUE(mesh.Probe(t0).ok());
  ASSERT_TRUE(mesh.Probe(t0 + absl::Seconds(45)).ok());
  EXPECT_TRUE(fs::exists(pod_ / "ping_result_0.csv-bak"));
  EXPECT_EQ(Rows().size(), 3u);  // a fresh file: header and one round
  // No root yet, or a broken ping list: nothing to do, no error.
  EXPECT_TRUE(SimPingmesh(root_ / "missing").Probe(t0).ok());
  std::ofstream(pod_ / "ping_list_0.json") << "[{\"pingList\":";
  EXPECT_TRUE(mesh.Probe(t0 + absl::Seconds(46)).ok());
}

TEST_F(SimPingmeshTest, AWarmupWritesItsHistoryAtOnceAndStampsLaterProbesAhead) {
  SimPingmesh mesh(root_, absl::Seconds(20));
  const absl::Time t0 = absl::FromUnixSeconds(1735690000);
  ASSERT_TRUE(mesh.Probe(t0).ok());
  auto stamps = [&] {
    std::vector<std::string> out;
    std::vector<std::string> rows = Rows();
    for (size_t i = 1; i < rows.size(); ++i) {
      std::vector<std::string> f = absl::StrSplit(rows[i], ',');
      out.push_back(f[11]);
    }
    return out;
  };
  // Two paths: the history of 20 s (t0, +5, +10, +15), then the probe itself stamped +20.
  EXPECT_EQ(stamps(), (std::vector<std::string>{"1735690000000", "1735690000000", "1735690005000",
                                                "1735690005000", "1735690010000", "1735690010000",
                                                "1735690015000", "1735690015000", "1735690020000",
                                                "1735690020000"}));
  EXPECT_FALSE(fs::exists(pod_ / "ping_result_0.csv.tmp"));
  ASSERT_TRUE(mesh.Probe(t0 + absl::Seconds(5)).ok());
  const std::vector<std::string> after = stamps();
  ASSERT_EQ(after.size(), 12u);  // no second history
  EXPECT_EQ(after.back(), "1735690025000");
}

// An A5 ping list from server 0, by address: a and b share rack 0, c is in rack 1 (same L1
// switch 0), d in rack 2 (L1 switch 1); all in plane 0 under L2 switch 0.
class SimPingmeshA5Test : public SimPingmeshTest {
 protected:
  void SetUp() override {
    SimPingmeshTest::SetUp();
    std::ofstream(pod_ / "ping_list_0.json") << R"([{"pingList":[
      {"srcType":0,"dstType":0,"srcAddr":"a","dstAddr":"b"},
      {"srcType":0,"dstType":0,"srcAddr":"a","dstAddr":"c"},
      {"srcType":0,"dstType":0,"srcAddr":"a","dstAddr":"d"},
      {"srcType":0,"dstType":0,"srcAddr":"c","dstAddr":"d"},
      {"srcType":0,"dstType":0,"srcAddr":"d","dstAddr":"a"}]}])";
    mesh_ = std::make_unique<SimPingmesh>(root_);
    mesh_->SetNetPaths({{"a", {"0", "0", "0", "0"}},
                        {"b", {"0", "0", "0", "0"}},
                        {"c", {"0", "1", "0", "0"}},
                        {"d", {"0", "2", "1", "0"}}});
  }
  // Whether each path of one probe round took the slow link's 20 ms.
  std::vector<bool> SlowPaths() {
    EXPECT_TRUE(mesh_->Probe(absl::FromUnixSeconds(1735690000)).ok());
    std::vector<bool> out;
    std::vector<std::string> rows = Rows();
    for (size_t i = 1; i < rows.size(); ++i) {
      std::vector<std::string> f = absl::StrSplit(rows[i], ',');
      out.push_back(std::stod(f[7]) == 20000);
    }
    return out;
  }
  std::unique_ptr<SimPingmesh> mesh_;
};

TEST_F(SimPingmeshA5Test, ASlowRackUplinkSlowsEveryProbeLeavingTheRackBothWays) {
  mesh_->SetSlowLink(SimPingmesh::Link::kRackToL1, "0", "0", 20);
  // a-b stays in rack 0; c-d never enters it.
  EXPECT_EQ(SlowPaths(), (std::vector<bool>{false, true, true, false, true}));
}

TEST_F(SimPingmeshA5Test, ASlowL1UplinkSlowsOnlyProbesBetweenL1Switches) {
  mesh_->SetSlowLink(SimPingmesh::Link::kL1ToL2, "0", "1", 20);
  // a-c turns at L1 switch 0; the paths to and from d (L1 switch 1) go up to the L2 switch.
  EXPECT_EQ(SlowPaths(), (std::vector<bool>{false, false, true, true, true}));
  mesh_->SetSlowLink(SimPingmesh::Link::kL1ToL2, "0", "1", 0);
  mesh_->SetSlowLink(SimPingmesh::Link::kL1ToL2, "1", "1", 20);  // another plane's switch
  std::vector<bool> healed = SlowPaths();
  EXPECT_EQ(std::vector<bool>(healed.begin() + 5, healed.end()), std::vector<bool>(5, false));
}

TEST(SuperPodIdentity, SdidsFollowTheSpecExampleLayout) {
  // jobs-ranktable-diagnosis.md §7.2: server 15, NPUs 0-3 and 15.
  ClusterSpec cluster;
  cluster.chip = "Ascend910A3";
  cluster.nodes = 32;
  cluster.npus_per_node = 16;
  cluster.nodes_per_super_pod = 16;
  EXPECT_EQ(ServerIndex(cluster, 16), 15);
  EXPECT_EQ(ServerIndex(cluster, 17), 0);  // the next super pod starts again at 0
  EXPECT_EQ(SuperDeviceId(cluster, 16, 0), 62914560u);
  EXPECT_EQ(SuperDeviceId(cluster, 16, 1), 62980097u);
  EXPECT_EQ(SuperDeviceId(cluster, 16, 2), 63176706u);
  EXPECT_EQ(SuperDeviceId(cluster, 16, 3), 63242243u);
  EXPECT_EQ(SuperDeviceId(cluster, 16, 15), 64815119u);

  const Json node = NodeObject(cluster, 16);
  const Json& a = node["metadata"]["annotations"];
  EXPECT_EQ(a.value("serverType", ""), "A3");
  EXPECT_EQ(a.value("serverIndex", ""), "15");
  EXPECT_EQ(a.value("superPodID", ""), "0");
  auto infos = nlohmann::json::parse(a.value("baseDeviceInfos", "{}"));
  EXPECT_EQ(infos["Ascend910-15"]["SuperDeviceID"], 64815119u);
  // A2 nodes carry none of it.
  cluster.chip = "Ascend910";
  cluster.nodes_per_super_pod = 0;
  EXPECT_FALSE(NodeObject(cluster, 1)["metadata"]["annotations"].contains("baseDeviceInfos"));
}

}  // namespace sim_pingmesh_test
}  // namespace clusterd::sim
