// clustersim scenario files: the built-in demo parses, and every kind of mistake is reported
// with the file and the line before the simulator starts anything.
#include "sim/scenario.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "faults/fault_code_catalog.h"
#include "gtest/gtest.h"

namespace clusterd::sim {
namespace scenario_test {

const faults::FaultCodeCatalog& Catalog() {
  static const faults::FaultCodeCatalog* catalog = [] {
    std::ifstream in(std::string(CLUSTERD_DATA_DIR) + "/faultCode.json");
    std::stringstream text;
    text << in.rdbuf();
    faults::PolicyIssues issues;
    auto parsed = faults::FaultCodeCatalog::Parse(text.str(), &issues);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return new faults::FaultCodeCatalog(*std::move(parsed));
  }();
  return *catalog;
}

std::string Error(std::string_view text) {
  auto s = ParseScenario(text, "s.yaml", &Catalog());
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : std::string(s.status().message());
}

constexpr char kBase[] = R"(name: t
cluster:
  nodes: 2
  npus_per_node: 8
jobs:
  - name: a
    pods: 2
    npus_per_pod: 4
faults:
)";

TEST(Scenario, DefaultDemoParses) {
  auto s = ParseScenario(DefaultDemoScenario(), "<demo>", &Catalog());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->cluster.nodes, 4);
  EXPECT_EQ(s->cluster.npus_per_node, 8);
  ASSERT_EQ(s->jobs.size(), 2u);
  ASSERT_EQ(s->faults.size(), 5u);
  EXPECT_EQ(s->faults[0].expect, "retry");
  EXPECT_EQ(s->faults[3].kind, "storm");
  EXPECT_EQ(s->faults[3].job, "gpt");
  EXPECT_EQ(s->faults[4].kind, "slow");
  EXPECT_TRUE(s->jobs[0].slow_node_detection);
}

TEST(Scenario, ASlowRankNeedsDetectionOnItsJobAndARankInRange) {
  // kBase's job a has 2 pods x 4 NPUs and no slow_node_detection.
  EXPECT_TRUE(
      absl::StrContains(Error(std::string(kBase) + "  - {at_s: 1, kind: slow, job: a, rank: 0}\n"),
                        "needs slow_node_detection: true"));
  std::string with_detection = std::string(kBase);
  const std::string job_line = "  - name: a\n";
  with_detection.insert(with_detection.find(job_line) + job_line.size(),
                        "    slow_node_detection: true\n");
  EXPECT_TRUE(
      absl::StrContains(Error(with_detection + "  - {at_s: 1, kind: slow, job: a, rank: 8}\n"),
                        "rank must be in [0, 8)"));
  EXPECT_TRUE(absl::StrContains(
      Error(with_detection + "  - {at_s: 1, kind: slow, job: a, rank: 1, magnitude: 0}\n"),
      "magnitude must be in (0, 10]"));
  auto ok = ParseScenario(with_detection + "  - {at_s: 1, kind: slow, job: a, rank: 3}\n", "s.yaml",
                          &Catalog());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_DOUBLE_EQ(ok->faults[0].magnitude, 0.5);
}

TEST(Scenario, UnknownFaultCodeNamesFileAndLine) {
  const std::string e = Error(std::string(kBase) +
                              "  - {at_s: 1, kind: chip, node: node-1, npu: 0, code: 80E0FFFF}\n");
  EXPECT_TRUE(absl::StrContains(e, "s.yaml:10:")) << e;
  EXPECT_TRUE(absl::StrContains(e, "unknown fault code")) << e;
}

TEST(Scenario, UnknownNodeAndJob) {
  EXPECT_TRUE(
      absl::StrContains(Error(std::string(kBase) +
                              "  - {at_s: 1, kind: chip, node: node-9, npu: 0, code: 80E01801}\n"),
                        "unknown node \"node-9\""));
  EXPECT_TRUE(absl::StrContains(
      Error(std::string(kBase) + "  - {at_s: 1, kind: software, job: b, rank: 0}\n"),
      "unknown job \"b\""));
}

TEST(Scenario, MalformedYamlAndUnknownKeys) {
  EXPECT_TRUE(absl::StrContains(Error("cluster: [1, 2\n"), "s.yaml:")) << Error("cluster: [1, 2\n");
  const std::string e = Error("name: t\nclutser:\n  nodes: 2\n");
  EXPECT_TRUE(absl::StrContains(e, "s.yaml:2:")) << e;
  EXPECT_TRUE(absl::StrContains(e, "unknown key \"clutser\"")) << e;
}

// Reproduced with fuzz_scenario under UBSan (tests/fuzz/corpus/scenario/
// jobs_npu_sum_overflow.yaml; 6 KiB, larger than the fuzzer's first inputs): the NPUs the jobs
// need were summed in an int, and 129 jobs each as large as the largest cluster (4096 x 64
// NPUs) overflowed it (undefined behaviour; a wrapped sum let the scenario through).
TEST(Scenario, TheJobsNpuSumDoesNotOverflow) {
  std::string text = "cluster: {nodes: 4096, npus_per_node: 64}\njobs:\n";
  for (int i = 0; i < 129; ++i) {
    text += "  - {name: j" + std::to_string(i) + ", pods: 262144, npus_per_pod: 64}\n";
  }
  EXPECT_TRUE(absl::StrContains(Error(text), "more NPUs than the cluster has"));
}

TEST(Scenario, RangesAreChecked) {
  EXPECT_TRUE(absl::StrContains(Error("cluster:\n  nodes: 0\n"), "nodes must be"));
  EXPECT_TRUE(absl::StrContains(Error("cluster:\n  nodes: 1\n  npus_per_node: 8\njobs:\n  - {name: "
                                      "a, pods: 3, npus_per_pod: 8}\n"),
                                "more NPUs than the cluster has"));
  EXPECT_TRUE(
      absl::StrContains(Error(std::string(kBase) +
                              "  - {at_s: 1, kind: chip, node: node-1, npu: 8, code: 80E01801}\n"),
                        "npu must be in [0, 8)"));
  EXPECT_TRUE(
      absl::StrContains(Error(std::string(kBase) + "  - {at_s: 1, kind: laser, node: node-1}\n"),
                        "unknown fault kind"));
  EXPECT_TRUE(absl::StrContains(Error("jobs:\n  - {name: a, strategies: [retry, teleport]}\n"),
                                "unknown strategy \"teleport\""));
  EXPECT_TRUE(absl::StrContains(Error("jobs:\n  - {name: A_b}\n"), "lower-case"));
  EXPECT_TRUE(absl::StrContains(Error("jobs: 3\n"), "jobs must be a list"));
  EXPECT_TRUE(absl::StrContains(Error("- 1\n- 2\n"), "a scenario is a YAML mapping"));
}

TEST(Scenario, NetworkFaultsMustBeNetworkCodes) {
  EXPECT_TRUE(absl::StrContains(
      Error(std::string(kBase) +
            "  - {at_s: 1, kind: network, node: node-1, npu: 0, code: 80E01801}\n"),
      "not a network fault code"));
  auto ok = ParseScenario(
      std::string(kBase) + "  - {at_s: 1, kind: network, node: node-1, npu: 0, code: 81078603}\n",
      "s.yaml", &Catalog());
  EXPECT_TRUE(ok.ok()) << ok.status();
}

TEST(Scenario, ASlowLinkNeedsAPingmeshSuperPodCluster) {
  EXPECT_TRUE(absl::StrContains(
      Error(std::string(kBase) +
            "  - {at_s: 1, kind: slow_link, node: node-1, npu: 0, magnitude: 9}\n"),
      "needs cluster pingmesh: true"));
  EXPECT_TRUE(absl::StrContains(Error("name: t\ncluster:\n  nodes: 2\n  pingmesh: true\n"),
                                "pingmesh needs chip Ascend910A3"));
  const std::string a3 =
      "name: t\ncluster:\n  nodes: 4\n  npus_per_node: 16\n  chip: Ascend910A3\n"
      "  nodes_per_super_pod: 4\n  pingmesh: true\nfaults:\n";
  EXPECT_TRUE(absl::StrContains(
      Error(a3 + "  - {at_s: 1, kind: slow_link, node: node-1, npu: 16, magnitude: 9}\n"),
      "npu must be in [0, 16)"));
  EXPECT_TRUE(
      absl::StrContains(Error(a3 + "  - {at_s: 1, kind: slow_link, node: node-1, npu: 1}\n"),
                        "magnitude of a slow_link must be in [3, 1000]"));
  EXPECT_TRUE(absl::StrContains(
      Error(a3 + "  - {at_s: 1, kind: slow_link, node: node-1, npu: 1, magnitude: 9, "
                 "after_detection_s: -1}\n"),
      "after_detection_s must be in [0, 3600]"));
  auto ok =
      ParseScenario(a3 + "  - {at_s: 1, kind: slow_link, node: node-4, npu: 3, magnitude: 9}\n",
                    "s.yaml", &Catalog());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->cluster.pingmesh);
}

constexpr char kA5[] = R"(name: t
cluster:
  nodes: 8
  npus_per_node: 8
  chip: npu
  nodes_per_super_pod: 8
  net_planes: 2
  nodes_per_rack: 2
  racks_per_l1: 2
  l1_per_l2: 2
  pingmesh: true
  pingmesh_warmup_s: 100
faults:
)";

TEST(Scenario, AnA5ClusterCarriesItsNetworkLayoutAndSlowLinks) {
  auto s = ParseScenario(std::string(kA5) +
                             "  - {at_s: 0, kind: slow_l1_link, plane: 1, rack: 3, magnitude: 19,"
                             " expect: link 1.rack-3->1.L1-1}\n"
                             "  - {at_s: 0, kind: slow_l2_link, plane: 0, l1: 1, magnitude: 9}\n",
                         "s.yaml", &Catalog());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(IsA5(s->cluster));
  EXPECT_EQ(s->cluster.net_planes, 2);
  EXPECT_EQ(s->cluster.nodes_per_rack, 2);
  EXPECT_EQ(s->cluster.pingmesh_warmup_s, 100);
  ASSERT_EQ(s->faults.size(), 2u);
  EXPECT_EQ(s->faults[0].rack, 3);
  EXPECT_EQ(s->faults[0].plane, 1);
  EXPECT_EQ(s->faults[0].expect, "link 1.rack-3->1.L1-1");
  EXPECT_EQ(s->faults[1].l1, 1);
  // The chip profile's alias names A5 too.
  std::string alias = kA5;
  alias.replace(alias.find("chip: npu"), 9, "chip: A5");
  alias += "  - {at_s: 0, kind: slow_l1_link, rack: 0, magnitude: 9}\n";
  auto a = ParseScenario(alias, "s.yaml", &Catalog());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->faults[0].plane, 0);  // plane 0 unless told
}

TEST(Scenario, A5LayoutAndLinkFaultsAreChecked) {
  const std::string a5 = kA5;
  auto with = [&](std::string from, std::string to) {
    std::string text = a5;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  EXPECT_TRUE(absl::StrContains(Error(std::string(kBase) + "  - {at_s: 1, kind: slow_l1_link, "
                                                           "rack: 0, magnitude: 9}\n"),
                                "needs chip npu and pingmesh: true"));
  EXPECT_TRUE(absl::StrContains(Error("name: t\ncluster:\n  nodes: 2\n  nodes_per_rack: 2\n"),
                                "need chip npu"));
  EXPECT_TRUE(absl::StrContains(Error(with("  pingmesh: true\n", "")),
                                "pingmesh_warmup_s needs pingmesh: true"));
  EXPECT_TRUE(absl::StrContains(Error(with("warmup_s: 100", "warmup_s: 601")),
                                "pingmesh_warmup_s must be in [0, 600]"));
  EXPECT_TRUE(absl::StrContains(Error(with("net_planes: 2", "net_planes: 9")),
                                "net_planes must be in [1, npus_per_node]"));
  EXPECT_TRUE(absl::StrContains(Error(with("racks_per_l1: 2", "racks_per_l1: 0")), "must be >= 1"));
  EXPECT_TRUE(absl::StrContains(Error(with("nodes_per_rack: 2", "nodes_per_rack: 3")),
                                "nodes_per_super_pod must be a multiple of nodes_per_rack"));
  EXPECT_TRUE(absl::StrContains(
      Error(a5 + "  - {at_s: 0, kind: slow_l1_link, plane: 0, rack: 4, magnitude: 9}\n"),
      "rack must be in [0, 4)"));
  EXPECT_TRUE(absl::StrContains(
      Error(a5 + "  - {at_s: 0, kind: slow_l2_link, plane: 0, l1: 2, magnitude: 9}\n"),
      "l1 must be in [0, 2)"));
  EXPECT_TRUE(absl::StrContains(
      Error(a5 + "  - {at_s: 0, kind: slow_l2_link, plane: 2, l1: 0, magnitude: 9}\n"),
      "plane must be in [0, 2)"));
  EXPECT_TRUE(absl::StrContains(
      Error(a5 + "  - {at_s: 0, kind: slow_l1_link, plane: 0, rack: 0, magnitude: 2}\n"),
      "magnitude of a slow_l1_link must be in [3, 1000]"));
  EXPECT_TRUE(absl::StrContains(Error(a5 + "jobs:\n  - {name: a, pods: 1, npus_per_pod: 8}\n"),
                                "jobs on an A5 (chip npu) cluster are not simulated"));
}

TEST(Scenario, GoodputChecksParseAndRefuseNonsense) {
  std::string base = std::string(kBase) + "  - {at_s: 1, kind: software, job: a, rank: 0}\n";
  auto ok = ParseScenario(base + R"(goodput:
  tolerance: 0.1
  offender_policy: '{"enabled": true, "faults": 3}'
  offenders: [node-2]
)",
                          "s.yaml", &Catalog());
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_TRUE(ok->goodput.has_value());
  EXPECT_EQ(ok->goodput->tolerance, 0.1);
  EXPECT_EQ(ok->goodput->offenders, std::vector<std::string>{"node-2"});
  EXPECT_TRUE(absl::StrContains(Error(base + "goodput:\n  tolerance: 0\n"), "tolerance must be"));
  EXPECT_TRUE(absl::StrContains(Error(base + "goodput:\n  offenders: [node-9]\n"),
                                "unknown node \"node-9\""));
  EXPECT_TRUE(absl::StrContains(Error(base + "goodput:\n  offender_policy: '{\"faults\": 1}'\n"),
                                "offender_policy: faults"));
  EXPECT_TRUE(absl::StrContains(Error(base + "goodput:\n  tolerence: 0.1\n"),
                                "unknown key \"tolerence\" in goodput"));
}

}  // namespace scenario_test
}  // namespace clusterd::sim
