// A5 slow-network alarms as clusterd delivers them: the root cause of each faulty-path pattern
// (net_topology.h) becomes a public fault report (jobs-ranktable-diagnosis.md §7.5), which the
// diagnosis sink hands to a fault centre running the shipped public-fault configuration. The
// centre must keep every rack, switch, link and plane fault on the node its influence names.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_config_files.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "diagnosis/net_fault.h"
#include "diagnosis/net_topology.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/slow_node_bridge.h"
#include "store/memory/memory_store.h"

namespace clusterd::server {
namespace slow_network_fault_test {

using diagnosis::FaultyPath;
using diagnosis::NetAlarm;
using diagnosis::NetTopology;
using diagnosis::NpuNetPath;

constexpr int64_t kStartMs = 1767225600000;

// Plane "0": racks 0..3 of 2 NPUs at 10.0.<rack>.<i>; L1 switch a above racks 0, 1, b above
// racks 2, 3; L2 switch x above both.
NetTopology Plane() {
  NetTopology t;
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 2; ++i) {
      t[absl::StrCat("10.0.", r, ".", i)] =
          NpuNetPath{"0", std::to_string(r), r < 2 ? "a" : "b", "x"};
    }
  }
  return t;
}

int RackOf(const std::string& addr) { return addr[5] - '0'; }

// The root causes of every ordered pair probed, `slow` ones faulty on delay.
std::vector<NetAlarm> RootCauses(const std::function<bool(int, int)>& slow) {
  const NetTopology t = Plane();
  std::vector<FaultyPath> evaluated, faulty;
  for (const auto& [s, sp] : t) {
    for (const auto& [d, dp] : t) {
      if (s == d) continue;
      FaultyPath p;
      p.task_id = "0";
      p.src_addr = s;
      p.dst_addr = d;
      p.delay = slow(RackOf(s), RackOf(d));
      p.delay_indicator = p.min_delay = p.max_delay = p.delay ? 20 : 1;
      p.newest = kStartMs;
      evaluated.push_back(p);
      if (p.delay) faulty.push_back(p);
    }
  }
  return diagnosis::TopologyRootCause(faulty, evaluated, t);
}

class SlowNetworkFaultTest : public ::testing::Test {
 protected:
  SlowNetworkFaultTest() : clock_(absl::FromUnixMillis(kStartMs)), store_(MemOptions()) {}
  store::MemoryStore::Options MemOptions() {
    store::MemoryStore::Options o;
    o.clock = &clock_;
    return o;
  }
  void SetUp() override {
    files_ = std::make_unique<cluster::FaultConfigFiles>(
        cluster::FaultConfigFiles::Options{.data_dir = CLUSTERD_DATA_DIR}, clock_);
    cluster::FaultCentre::Options o;
    o.config = files_.get();
    o.watch_store = false;
    centre_ = std::make_unique<cluster::FaultCentre>(store_, clock_, nullptr, o);
    ASSERT_TRUE(centre_->Start().ok());
  }
  void TearDown() override { centre_->Stop(); }

  // node -> the public fault codes statistic-fault-info lists on it.
  std::map<std::string, std::set<std::string>> PublicFaults() {
    std::map<std::string, std::set<std::string>> out;
    auto cm = store_.Get({"configmaps", "cluster-system", "statistic-fault-info"});
    if (!cm.ok()) return out;
    const nlohmann::json faults =
        nlohmann::json::parse((*cm)["data"].value("PublicFaults", ""), nullptr, false);
    if (!faults.is_object()) return out;
    for (const auto& [node, list] : faults.items()) {
      for (const auto& f : list) out[node].insert(f.value("faultCode", ""));
    }
    return out;
  }

  ManualClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<cluster::FaultConfigFiles> files_;  // before centre_, which points to it
  std::unique_ptr<cluster::FaultCentre> centre_;
};

TEST_F(SlowNetworkFaultTest, EveryA5ElementAlarmReachesTheFaultCentreOnItsSourceNode) {
  struct Case {
    std::string name;
    std::function<bool(int, int)> slow;
    std::string src_id;  // the one root cause
  };
  const std::vector<Case> cases = {
      {"rack 1's L1 link", [](int s, int d) { return (s == 1) != (d == 1); }, "0.rack-1"},
      {"the L1 -> L2 links (a tie: the first)", [](int s, int d) { return (s < 2) != (d < 2); },
       "0.L1-a"},
      {"rack 3", [](int s, int d) { return s == 3 || d == 3; }, "0.rack-3"},
      {"L1 switch b", [](int s, int d) { return s != d && (s >= 2 || d >= 2); }, "0.L1-b"},
      {"the plane", [](int, int) { return true; }, "plane-0"},
  };
  Counter& refused = MetricsRegistry::Default().GetCounter(
      "clusterd_diagnosis_faults_refused_total",
      "Diagnosis public faults the fault centre refused (not retried)",
      {{"feature", "slow-network"}});
  const uint64_t refused_before = refused.Value();
  DiagnosisFaultSink sink(*centre_, "slow-network");
  std::set<std::string> nodes;
  for (const Case& c : cases) {
    const std::vector<NetAlarm> alarms = RootCauses(c.slow);
    ASSERT_EQ(alarms.size(), 1u) << c.name;
    EXPECT_EQ(alarms[0].src_id, c.src_id) << c.name;
    const diagnosis::PublicFaultReport report =
        diagnosis::NetFaultReport(alarms, clock_.Now(), absl::StrCat("a5-report-", nodes.size()));
    ASSERT_EQ(report.faults.size(), 1u);
    EXPECT_EQ(report.faults[0].fault_code, "200001012") << c.name;
    EXPECT_TRUE(sink.SendPublicFault(report).ok()) << c.name;
    nodes.insert(report.faults[0].influence.at(0).node_name);
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"0.rack-1", "0.l1-a", "0.rack-3", "0.l1-b", "plane-0"}));
  EXPECT_EQ(refused.Value(), refused_before);
  centre_->controller().RunUntilIdleForTest();
  const auto held = PublicFaults();
  for (const std::string& node : nodes) {
    ASSERT_TRUE(held.count(node)) << node << " missing from statistic-fault-info";
    EXPECT_EQ(held.at(node), std::set<std::string>{"200001012"}) << node;
  }
}

}  // namespace slow_network_fault_test
}  // namespace clusterd::server
