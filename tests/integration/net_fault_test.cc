// Slow-network diagnosis end to end (issue 9, jobs-ranktable-diagnosis.md §7): a real clusterd on
// a `dir` store with --ras-net-root, two A3 Nodes of super pod 0 and the pingmesh-config
// ConfigMap in the store. clusterd publishes the topology (super-pod-0 ConfigMap, files, ping
// lists); the test then writes the probes' ping_result CSVs as NodeD would, with one lossy link
// between the two servers. The window of §7.4 runs on the rows' timestamps, so the test writes
// eleven periods of rows at once (stamped just after detection start): the first round, one
// period (task_interval 1: 10 s) after detection start, already analyses a full window and the
// public fault 200001011 reaches the fault centre.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_process.h"
#include "store/object_store.h"
#include "test_env.h"

namespace clusterd {
namespace net_fault_test {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr int kNpus = 4;
// SDIDs of A3 servers 15 and 16: the server field is (sdid >> 22) & 0x3FF.
uint32_t Sdid(uint32_t server, uint32_t phy) { return (server << 22) | (phy << 16) | phy; }

Json A3Node(const std::string& name, uint32_t server) {
  Json infos = Json::object();
  for (uint32_t p = 0; p < kNpus; ++p) {
    infos[absl::StrCat("Ascend910-", p)] = Json{{"SuperDeviceID", Sdid(server, p)}};
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata",
               {{"name", name},
                {"annotations",
                 {{"superPodID", "0"},
                  {"serverType", "A3"},
                  {"serverIndex", std::to_string(server)},
                  {"baseDeviceInfos", infos.dump()}}}}}};
}

Json PingmeshConfig() {
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", "pingmesh-config"},
                {"namespace", "cluster-system"},
                {"labels", {{"app", "pingmesh"}, {"mx-consumer-cim", "true"}}}}},
              {"data",
               {{"global", R"({"activate": "on", "task_interval": 1})"},
                {"roce", R"({"activate": "off", "task_interval": 1})"}}}};
}

std::string ReadAll(const fs::path& p) {
  std::stringstream ss;
  ss << std::ifstream(p).rdbuf();
  return ss.str();
}

// The value of the first sample of `name` whose labels contain every one of `labels`.
double MetricValue(const std::string& text, const std::string& name,
                   const std::vector<std::string>& labels = {}) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, name)) continue;
    const absl::string_view rest = line.substr(name.size());
    if (rest.empty() || (rest[0] != ' ' && rest[0] != '{')) continue;
    bool match = true;
    for (const std::string& l : labels) match = match && absl::StrContains(rest, l);
    if (!match) continue;
    double v = 0;
    if (absl::SimpleAtod(rest.substr(rest.rfind(' ') + 1), &v)) return v;
  }
  return 0;
}

TEST(NetFaultIntegration, LossyLinkIsReportedAsPublicFault) {
  testing::TempDir dir;
  const std::string state = dir.path() + "/state";
  const fs::path root = fs::path(dir.path()) / "ras-net";
  fs::create_directories(root);
  auto store = store::OpenStore("dir:" + state);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Create("nodes", A3Node("node-a", 15)).ok());
  ASSERT_TRUE((*store)->Create("nodes", A3Node("node-b", 16)).ok());
  ASSERT_TRUE((*store)->Create("configmaps", PingmeshConfig()).ok());

  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = "dir:" + state;
  options.work_dir = dir.path() + "/run";
  options.extra_args = {"--ras-net-root", root.string()};
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();
  httplib::Client http("http://" + (*proc)->http_address());

  // Detection starts once the topology is published: the ping lists appear.
  const fs::path pod = root / "cluster" / "super-pod-0";
  absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (!fs::exists(pod / "ping_list_16.json") && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(pod / "ping_list_15.json"));
  ASSERT_TRUE(fs::exists(pod / "super-pod-0.json"));
  EXPECT_NE(ReadAll(pod / "cathelper.conf").find("period=10\nnetFault=on\n"), std::string::npos);
  auto cm = (*store)->Get({"configmaps", "cluster-system", "super-pod-0"});
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_TRUE(
      absl::StrContains((*cm)["data"]["superPodDevice"].get<std::string>(), R"("ServerID":"16")"));

  // Eleven periods of probes, stamped from now on; the link 15/0 <-> 16/0 loses half its
  // packets in the last one (the "current" period of the first full window).
  const uint32_t bad_a = Sdid(15, 0), bad_b = Sdid(16, 0);
  const int64_t base = absl::ToUnixMillis(absl::Now()) + 1000;
  for (uint32_t server : {15u, 16u}) {
    std::ofstream out(pod / absl::StrCat("ping_result_", server, ".csv"));
    out << "pingTaskId,srcType,srcAddr,dstType,dstAddr,minDelay,maxDelay,avgDelay,minLossRate,"
           "maxLossRate,avgLossRate,timestamp\n";
    for (int k = 0; k <= 11; ++k) {
      for (uint32_t p = 0; p < kNpus; ++p) {
        const uint32_t src = Sdid(server, p);
        for (uint32_t ds : {15u, 16u}) {
          for (uint32_t q = 0; q < kNpus; ++q) {
            const uint32_t dst = Sdid(ds, q);
            if (dst == src) continue;
            const bool bad =
                k >= 10 && ((src == bad_a && dst == bad_b) || (src == bad_b && dst == bad_a));
            const char* loss = bad ? "0.500" : "0.000";
            out << "0,0," << src << ",0," << dst << ",8000,12000,9000," << loss << "," << loss
                << "," << loss << "," << base + k * 10000 << "\n";
          }
        }
      }
    }
  }

  auto sent = [&]() -> int64_t {
    auto res = http.Get("/api/clusterd/v1/netfault");
    if (!res || res->status != 200) return 0;
    Json body = Json::parse(res->body, nullptr, false);
    if (!body.is_object() || !body["superPods"].is_array() || body["superPods"].empty()) return 0;
    return body["superPods"][0].value("faultsSent", int64_t{0});
  };
  deadline = absl::Now() + absl::Seconds(30);
  while (sent() == 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(250));
  EXPECT_GE(sent(), 1);

  auto view = http.Get("/api/clusterd/v1/netfault");
  ASSERT_TRUE(view);
  ASSERT_EQ(view->status, 200) << view->body;
  Json v = Json::parse(view->body);
  EXPECT_EQ(v.value("detection", ""), "on") << view->body;
  ASSERT_EQ(v["superPods"].size(), 1u) << view->body;
  const Json& p0 = v["superPods"][0];
  EXPECT_EQ(p0.value("period", 0), 10);
  ASSERT_EQ(p0["lastAlarms"].size(), 1u) << view->body;
  EXPECT_EQ(p0["lastAlarms"][0].value("srcId", ""), std::to_string(bad_a));
  EXPECT_EQ(p0["lastAlarms"][0].value("dstId", ""), std::to_string(bad_b));
  EXPECT_EQ(p0["lastAlarms"][0].value("faultType", -1), 1);

  // The fault centre accepted it (SendPublicFault, resource fd-online, code 0). The alarm's
  // influence nodeName is its source SDID (§7.5), not a Node, so it is not listed on a node of
  // /api/clusterd/v1/faults; a `once` fault also leaves the public-fault cache after 5 s.
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_GE(MetricValue(metrics->body, "clusterd_public_fault_requests_total",
                        {"source=\"grpc\"", "code=\"0\""}),
            1);
  EXPECT_GE(MetricValue(metrics->body, "clusterd_netfault_alarms_total"), 1);

  // The operator's view of it.
  const std::string ctl = absl::StrCat(CLUSTERCTL_BIN, " --addr ", (*proc)->grpc_address(),
                                       " --http ", (*proc)->http_address());
  testing::CommandResult table = testing::RunCommand(ctl + " get netfault");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, "SUPER POD")) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, absl::StrCat(bad_a, "->", bad_b, " loss")))
      << table.output;
  testing::CommandResult one = testing::RunCommand(ctl + " get netfault 0 -o json");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(Json::parse(one.output, nullptr, false).value("superPodId", ""), "0") << one.output;
  testing::CommandResult missing = testing::RunCommand(ctl + " get netfault 42");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(absl::StrContains(missing.output, "super pod 42 is not known")) << missing.output;

  const std::string log = ReadAll(pod / "network_fault.json");
  EXPECT_TRUE(absl::StartsWith(log, "Detection 0 result(")) << log;
  EXPECT_TRUE(absl::StrContains(log, absl::StrCat("\"srcId\": \"", bad_a, "\""))) << log;

  std::stringstream text;
  text << std::ifstream((*proc)->log_path()).rdbuf();
  EXPECT_TRUE(absl::StrContains(text.str(), "network fault detected"));
  EXPECT_TRUE(absl::StrContains(text.str(), "200001011"));
  if (HasFailure()) std::cerr << "---- clusterd log ----\n" << text.str() << "----\n";
  auto code = (*proc)->Stop();
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
}

TEST(NetFaultIntegration, EndpointAnswers503WithoutRoot) {
  testing::TempDir dir;
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.work_dir = dir.path() + "/run";
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();
  httplib::Client http("http://" + (*proc)->http_address());
  auto res = http.Get("/api/clusterd/v1/netfault");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;
  testing::CommandResult ctl =
      testing::RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --addr ", (*proc)->grpc_address(),
                                       " --http ", (*proc)->http_address(), " get netfault"));
  EXPECT_NE(ctl.exit_code, 0) << ctl.output;
  auto code = (*proc)->Stop();
  ASSERT_TRUE(code.ok()) << code.status();
}

}  // namespace net_fault_test
}  // namespace clusterd
