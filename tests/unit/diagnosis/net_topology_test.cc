#include "diagnosis/net_topology.h"

#include <functional>
#include <string>
#include <vector>

#include "diagnosis/net_fault.h"
#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace net_topology_test {

// One plane "p": racks R0..R5 of 2 NPUs each; L1 switch a above R0, R1, b above R2, R3, c above
// R4, R5; one L2 switch x above a, b, c. NPU addresses "10.0.<rack>.<i>".
NetTopology Plane() {
  NetTopology t;
  const char* l1[] = {"a", "a", "b", "b", "c", "c"};
  for (int r = 0; r < 6; ++r) {
    for (int i = 0; i < 2; ++i) {
      t["10.0." + std::to_string(r) + "." + std::to_string(i)] =
          NpuNetPath{"p", "R" + std::to_string(r), l1[r], "x"};
    }
  }
  return t;
}

// Every ordered pair probed; `slow` says which paths are faulty on delay.
std::vector<FaultyPath> Probes(
    const NetTopology& t, const std::function<bool(const std::string&, const std::string&)>& slow) {
  std::vector<FaultyPath> out;
  for (const auto& [s, sp] : t) {
    for (const auto& [d, dp] : t) {
      if (s == d) continue;
      FaultyPath p;
      p.task_id = "0";
      p.src_addr = s;
      p.dst_addr = d;
      p.delay = slow(s, d);
      p.delay_indicator = p.min_delay = p.max_delay = p.delay ? 20 : 1;
      p.newest = 9;
      out.push_back(p);
    }
  }
  return out;
}

std::vector<FaultyPath> FaultyOf(const std::vector<FaultyPath>& all) {
  std::vector<FaultyPath> out;
  for (const FaultyPath& p : all) {
    if (p.loss || p.delay) out.push_back(p);
  }
  return out;
}

std::string RackOf(const std::string& addr) { return addr.substr(5, 1); }
std::string L1Of(const std::string& addr) {
  const int r = RackOf(addr)[0] - '0';
  return r < 2 ? "a" : r < 4 ? "b" : "c";
}

struct Want {
  int64_t src_type;
  std::string src_id;
  int64_t dst_type;
  std::string dst_id;
  int64_t level;
};

struct Case {
  std::string name;
  std::function<bool(const std::string&, const std::string&)> slow;
  std::vector<Want> want;
};

TEST(NetTopology, FaultyPathsGoToTheDeepestCommonElement) {
  const NetTopology t = Plane();
  auto crosses_rack = [](const std::string& r) {
    return [r](const std::string& s, const std::string& d) {
      return (RackOf(s) == r) != (RackOf(d) == r);
    };
  };
  const std::vector<Case> cases = {
      {"one slow NPU",
       [](const std::string& s, const std::string& d) {
         return s == "10.0.2.1" || d == "10.0.2.1";
       },
       {{0, "10.0.2.1", 0, "10.0.2.1", 1}}},
      {"one slow rack",
       [](const std::string& s, const std::string& d) {
         return RackOf(s) == "3" || RackOf(d) == "3";
       },
       {{3, "p.rack-R3", 3, "p.rack-R3", 1}}},
      {"one slow L1 link", crosses_rack("1"), {{3, "p.rack-R1", 5, "p.L1-a", 0}}},
      {"one slow L1 switch",
       [](const std::string& s, const std::string& d) {
         return RackOf(s) != RackOf(d) && (L1Of(s) == "b" || L1Of(d) == "b");
       },
       {{5, "p.L1-b", 5, "p.L1-b", 1}}},
      {"one slow L2 switch",
       [](const std::string& s, const std::string& d) { return L1Of(s) != L1Of(d); },
       {{6, "p.L2-x", 6, "p.L2-x", 1}}},
      {"one slow L2 link",
       [](const std::string& s, const std::string& d) {
         return L1Of(s) != L1Of(d) && (L1Of(s) == "c" || L1Of(d) == "c");
       },
       {{5, "p.L1-c", 6, "p.L2-x", 0}}},
      {"the whole plane",
       [](const std::string&, const std::string&) { return true; },
       {{7, "plane-p", 7, "plane-p", 1}}},
      {"a slow NPU and a slow L1 link",
       [&](const std::string& s, const std::string& d) {
         return s == "10.0.0.0" || d == "10.0.0.0" || crosses_rack("4")(s, d);
       },
       {{0, "10.0.0.0", 0, "10.0.0.0", 1}, {3, "p.rack-R4", 5, "p.L1-c", 0}}},
      {"nothing slow", [](const std::string&, const std::string&) { return false; }, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<FaultyPath> all = Probes(t, c.slow);
    std::vector<NetAlarm> alarms = TopologyRootCause(FaultyOf(all), all, t);
    ASSERT_EQ(alarms.size(), c.want.size());
    for (size_t i = 0; i < alarms.size(); ++i) {
      EXPECT_EQ(alarms[i].src_type, c.want[i].src_type);
      EXPECT_EQ(alarms[i].src_id, c.want[i].src_id);
      EXPECT_EQ(alarms[i].dst_type, c.want[i].dst_type);
      EXPECT_EQ(alarms[i].dst_id, c.want[i].dst_id);
      EXPECT_EQ(alarms[i].level, c.want[i].level);
      EXPECT_EQ(alarms[i].fault_type, 0);
      EXPECT_DOUBLE_EQ(alarms[i].avg_delay, 20);
    }
  }
}

TEST(NetTopology, LinkAlarmIsANonNpuPublicFault) {
  const NetTopology t = Plane();
  const std::vector<FaultyPath> all = Probes(t, [](const std::string& s, const std::string& d) {
    return (RackOf(s) == "1") != (RackOf(d) == "1");
  });
  std::vector<NetAlarm> alarms = TopologyRootCause(FaultyOf(all), all, t);
  ASSERT_EQ(alarms.size(), 1u);
  EXPECT_EQ(AlarmToPublicFault(alarms[0]).fault_code, "200001012");
  // 2 NPUs of R1 x 10 NPUs elsewhere, both ways.
  EXPECT_EQ(alarms[0].timestamp, 9);
}

TEST(NetTopology, UnannotatedAndPartlyFaultyPathsFallBackToNpuDirect) {
  const NetTopology t = Plane();
  // A3-style SDIDs outside the map: the NPU-direct rule, as RootCause.
  std::vector<FaultyPath> all;
  for (const char* d : {"2", "3", "4"}) {
    FaultyPath p;
    p.src_addr = "1";
    p.dst_addr = d;
    p.loss = true;
    p.loss_indicator = p.min_loss = p.max_loss = 50;
    all.push_back(p);
  }
  std::vector<NetAlarm> alarms = TopologyRootCause(all, all, t);
  EXPECT_EQ(alarms, RootCause(all));
  // One slow path inside the plane: no element is fully faulty but the pair.
  const std::vector<FaultyPath> one = Probes(t, [](const std::string& s, const std::string& d) {
    return s == "10.0.0.0" && d == "10.0.5.1";
  });
  alarms = TopologyRootCause(FaultyOf(one), one, t);
  ASSERT_EQ(alarms.size(), 1u);
  EXPECT_EQ(alarms[0].src_type, 0);
  EXPECT_EQ(alarms[0].level, 0);  // NPU pair, minor
  EXPECT_EQ(alarms[0].src_id, "10.0.0.0");
  EXPECT_EQ(alarms[0].dst_id, "10.0.5.1");
  // Empty topology: exactly RootCause.
  EXPECT_EQ(TopologyRootCause(FaultyOf(one), one, {}), RootCause(FaultyOf(one)));
}

TEST(NetTopology, SuperPodAddressMapRefusesAnAddressOnTwoNodes) {
  SuperPodDevice pod;
  pod.super_pod_id = "4";
  for (const char* name : {"n1", "n2"}) {
    SuperPodNodeEntry& n = pod.nodes[name];
    n.node_name = name;
    n.rack_id = "0";
    n.npu_info["0"] = NpuNetInfo{"10.1.0.1", "p", "a", ""};
  }
  auto t = NetTopologyOf(pod);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("10.1.0.1"), std::string::npos);
  pod.nodes["n2"].npu_info["0"].addr = "10.1.0.2";
  t = NetTopologyOf(pod);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->at("10.1.0.2"), (NpuNetPath{"p", "0", "a", ""}));
}

}  // namespace net_topology_test
}  // namespace clusterd::diagnosis
