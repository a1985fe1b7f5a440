// The repeat-offender policy against a running clusterd (docs/goodput.md): a policy written to
// cluster-system/clusterd-config-cm is applied within seconds; a nonsense one is refused with the
// reason (log line, metric) and the previous one stays in force, so that two faults on a node
// still cordon it through the store as the kept policy says.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_process.h"
#include "sim/mini_scheduler.h"
#include "sim/sim_nodes.h"
#include "test_env.h"

namespace clusterd {
namespace offender_policy_test {

void PutPolicy(store::ObjectStore& store, const std::string& text) {
  store::Object cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "clusterd-config-cm"}, {"namespace", "cluster-system"}}},
      {"data", {{"repeat-offender-policy.json", text}}}};
  if (!store.Update(store::kConfigMaps, cm).ok()) {
    ASSERT_TRUE(store.Create(store::kConfigMaps, cm).ok());
  }
}

nlohmann::json Offenders(httplib::Client& http) {
  auto res = http.Get("/api/clusterd/v1/offenders");
  if (!res || res->status != 200) return nlohmann::json();
  return nlohmann::json::parse(res->body, nullptr, false);
}

template <typename Pred>
bool WaitFor(Pred pred, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(200));
  }
  return pred();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OffenderPolicy, ARefusedPolicyKeepsThePreviousOneWhichStillCordonsTheNode) {
  testing::TempDir dir;
  const std::string state = dir.path() + "/state";
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = "dir:" + state;
  options.work_dir = dir.path() + "/run";
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();
  auto store = store::OpenStore("dir:" + state);
  ASSERT_TRUE(store.ok()) << store.status();
  sim::ClusterSpec cluster;
  cluster.nodes = 1;
  cluster.npus_per_node = 8;
  const std::string node = "node-1";  // the simulated node's name
  ASSERT_TRUE((*store)
                  ->Create(store::kNodes, {{"apiVersion", "v1"},
                                           {"kind", "Node"},
                                           {"metadata", {{"name", node}}},
                                           {"spec", nlohmann::json::object()}})
                  .ok());
  sim::SimNodes nodes(**store, cluster, CLUSTERD_DATA_DIR);
  ASSERT_TRUE(nodes.Start().ok());
  httplib::Client http("http://" + (*proc)->http_address());
  http.set_read_timeout(std::chrono::seconds(5));

  PutPolicy(**store, R"({"enabled": true, "faults": 2, "windowHours": 1, "action": "cordon"})");
  ASSERT_TRUE(
      WaitFor([&] { return Offenders(http)["policy"].value("enabled", false); }, absl::Seconds(20)))
      << Offenders(http).dump();

  // Nonsense: one fault is no repeat. Refused, said why, counted; the policy in force stays.
  PutPolicy(**store, R"({"enabled": true, "faults": 1, "action": "explode"})");
  const std::string refused = "clusterd_repeat_offender_policy_total{result=\"refused\"}";
  const std::string base_url = "http://" + (*proc)->http_address();
  ASSERT_TRUE(
      WaitFor([&] { return testing::MetricSample(base_url, refused) >= 1; }, absl::Seconds(20)));
  const nlohmann::json policy = Offenders(http)["policy"];
  EXPECT_EQ(policy.value("faults", 0), 2) << policy.dump();
  EXPECT_EQ(policy.value("action", ""), "cordon") << policy.dump();
  const std::string log = ReadFile((*proc)->log_path());
  EXPECT_TRUE(absl::StrContains(log, "repeat-offender policy refused; the previous one stays"))
      << log;
  EXPECT_TRUE(absl::StrContains(log, R"(action: \"explode\" is not one of none, cordon, taint)"))
      << log;

  // Two faults on the node: the kept policy judges it and cordons it through the store.
  for (const char* code : {"220001001", "220001002"}) {
    testing::CommandResult inject = testing::RunCommand(absl::StrCat(
        CLUSTERCTL_BIN, " --addr ", (*proc)->grpc_address(), " --http ", (*proc)->http_address(),
        " inject fault --node ", node, " --npu 3 --code ", code));
    ASSERT_EQ(inject.exit_code, 0) << inject.output;
    absl::SleepFor(absl::Milliseconds(300));
  }
  nlohmann::json node_object;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto got = (*store)->Get(store::ObjectKey{std::string(store::kNodes), "", node});
        if (!got.ok()) return false;
        node_object = *got;
        return node_object["spec"].value("unschedulable", false);
      },
      absl::Seconds(30)))
      << node_object.dump();
  const std::string reason =
      node_object.is_object() && node_object["metadata"].contains("annotations")
          ? node_object["metadata"]["annotations"].value("clusterd.io/repeat-offender", "")
          : "";
  EXPECT_TRUE(absl::StrContains(reason, "2 faults within 1h (policy: 2)")) << reason;
  const nlohmann::json offenders = Offenders(http);
  ASSERT_FALSE(offenders["items"].empty()) << offenders.dump();
  EXPECT_EQ(offenders["items"][0].value("node", ""), node);
  EXPECT_TRUE(offenders["items"][0].value("offender", false)) << offenders.dump();

  nodes.Stop();
  if (HasFailure()) std::cerr << "---- clusterd log ----\n" << ReadFile((*proc)->log_path());
}

}  // namespace offender_policy_test
}  // namespace clusterd
