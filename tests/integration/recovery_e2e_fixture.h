#pragma once

// The fixture of the recovery end-to-end tests (recovery_e2e_test.cc, recovery_paths_e2e_test.cc):
// a real clusterd on the `dir` store, the §15 job written as files (as the operator and the
// scheduler would), and the C++ TaskD-like client (src/client/recover_client.h) driven by a
// ScriptedTrainingAgent answering the signals.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "../unit/cluster/fault_test_util.h"
#include "../unit/cluster/job_test_objects.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "client/recover_client.h"
#include "client/training_agent_driver.h"
#include "common/check_code.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "recover.grpc.pb.h"
#include "store/object_store.h"
#include "test_env.h"

namespace clusterd::e2e {

using client::AgentBehaviour;
using client::RecoverClient;
using client::TrainingAgentDriver;
using client::TrainingPhase;
using cluster::testing::ExamplePod;
using cluster::testing::Json;
using cluster::testing::NodeObject;
using cluster::testing::PodGroupObject;
using cluster::testing::PodGroupSpec;
using cluster::testing::PodObject;
using cluster::testing::PodSpec;
using clusterd::testing::TempDir;

inline constexpr char kJob[] = "7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11";  // the AscendJob's UID
inline constexpr char kNs[] = "default";
inline constexpr char kPodGroup[] = "pt-2x8-pg";
inline constexpr char kResetConfig[] = "reset-config-pt-2x8";
inline constexpr char kInitializing[] = R"({"status":"initializing"})";
// Waits for one protocol step; the longest fixed wait before a signal is the 10 s force-release
// pause before the normal global fault (§7.4 A_GLOBAL), plus up to 15 s for recover-in-place.
inline constexpr absl::Duration kStep = absl::Seconds(40);

using FaultSet = std::set<std::pair<std::string, std::string>>;

inline FaultSet Faults(const ::ProcessManageSignal& s) {
  FaultSet out;
  for (const auto& f : s.faultranks()) out.insert({f.rankid(), f.faulttype()});
  return out;
}
inline FaultSet PodFaults(int first, int last) {
  FaultSet out;
  for (int r = first; r <= last; ++r) out.insert({std::to_string(r), "1"});
  return out;
}
inline std::vector<std::string> Sorted(const google::protobuf::RepeatedPtrField<std::string>& in) {
  std::vector<std::string> out(in.begin(), in.end());
  std::sort(out.begin(), out.end());
  return out;
}
inline std::vector<std::string> Actions(const ::ProcessManageSignal& s) {
  return {s.actions().begin(), s.actions().end()};
}
inline auto OfType(const std::string& type) {
  return [type](const ::ProcessManageSignal& s) { return s.signaltype() == type; };
}
inline auto Strategy(const std::string& strategy) {
  return [strategy](const ::ProcessManageSignal& s) {
    return s.signaltype() == "changeStrategy" && s.changestrategy() == strategy;
  };
}

// Variations of the §15 job for the paths that need them.
struct JobExtras {
  std::vector<std::pair<std::string, std::string>> pod_group_labels = {};       // added
  std::vector<std::pair<std::string, std::string>> pod_group_annotations = {};  // added
  int64_t super_pod_id = -2;  // of both pods' device allocation (>= 0: super-pod members)
  // Node objects with condition Ready=True. Without it the fault centre counts every rank of
  // the job as SeparateNPU (a not-ready node), so the job is UnHealthy and sub-health faults
  // are left out (§8.6).
  bool ready_nodes = false;
};

class RecoveryE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path() + "/state";
    std::filesystem::create_directories(state_);
  }

  void TearDown() override {
    if (client_ != nullptr) client_->Stop();
    if (HasFailure()) {
      for (int i = 1; i <= starts_; ++i) {
        std::ifstream log(LogPath(i));
        std::cerr << "---- clusterd log #" << i << " ----\n" << log.rdbuf() << "----\n";
      }
    }
    if (proc_.has_value() && proc_->Running()) {
      proc_->Signal(SIGTERM);
      (void)proc_->Wait(absl::Seconds(15));
    }
  }

  std::string LogPath(int n) const { return absl::StrCat(dir_.path(), "/clusterd-", n, ".log"); }

  // Starts clusterd on `grpc_listen` (port 0 the first time; the same port after a restart, so
  // that the client's channel reconnects by itself).
  void StartClusterd(const std::string& grpc_listen = "127.0.0.1:0") {
    const std::string info = dir_.path() + "/listen.json";
    std::filesystem::remove(info);
    ++starts_;
    Subprocess::Options spawn;
    spawn.argv = {CLUSTERD_BIN,
                  "--store",
                  "dir:" + state_,
                  "--grpc-listen",
                  grpc_listen,
                  "--http-listen",
                  "127.0.0.1:0",
                  "--listen-info-file",
                  info,
                  "--http-store-mirror"};
    if (const char* level = std::getenv("RECOVERY_E2E_LOG_LEVEL"); level != nullptr) {
      spawn.argv.insert(spawn.argv.end(), {"--log-level", level});
    }
    spawn.stdout_path = spawn.stderr_path = LogPath(starts_);
    absl::StatusOr<Subprocess> child = Subprocess::Start(spawn);
    ASSERT_TRUE(child.ok()) << child.status();
    proc_.emplace(std::move(*child));
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!std::filesystem::exists(info)) {
      ASSERT_TRUE(proc_->Running()) << "clusterd exited during start-up";
      ASSERT_LT(absl::Now(), deadline) << "clusterd did not start";
      absl::SleepFor(absl::Milliseconds(20));
    }
    std::ifstream in(info);
    nlohmann::json addrs = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(addrs.is_discarded());
    grpc_address_ = addrs["grpc"].get<std::string>();
    http_address_ = addrs["http"].get<std::string>();
  }

  // SIGKILL, then a new clusterd on the same store and the same gRPC port.
  void KillAndRestart() {
    proc_->Signal(SIGKILL);
    ASSERT_TRUE(proc_->Wait(absl::Seconds(10)).ok());
    StartClusterd(grpc_address_);
  }

  // True when the server side of the Recover service is wired (not UNIMPLEMENTED).
  bool RecoverServiceReady() {
    auto stub = ::Recover::NewStub(client::MakeChannel(grpc_address_));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ::ClientInfo req;
    req.set_jobid("probe-job");
    req.set_role("taskd");
    ::Status resp;
    grpc::Status st = stub->Init(&ctx, req, &resp);
    return st.error_code() != grpc::StatusCode::UNIMPLEMENTED;
  }

  void WriteObject(const std::string& resource, const Json& object) {
    clusterd::testing::WriteStoreObjectFile(state_, resource, object);
  }

  // The §15 job: AscendJob default/pt-2x8, PodGroup pt-2x8-pg with process-recover-enable=on and
  // recover-strategy=`strategies`, 2 pods x 8 NPUs (D=8) with hccl/rankIndex and the device
  // allocation annotation, and the reset ConfigMap the operator creates with the job.
  void WriteJob(const std::string& strategies, const JobExtras& extras = {}) {
    for (auto [name, ip, sn] : {std::tuple{"node-a", "192.168.0.11", "2102313LNR10P5100001"},
                                std::tuple{"node-b", "192.168.0.12", "2102313LNR10P5100002"}}) {
      Json node = NodeObject(name, ip, sn);
      if (extras.ready_nodes) {
        node["status"]["conditions"] = Json::array({{{"type", "Ready"}, {"status", "True"}}});
      }
      WriteObject("nodes", node);
    }
    // The device plugin's view of both nodes (healthy): the fault centre correlates a client's
    // retry report with the job's NPUs through it (§8.3).
    for (const char* node : {"node-a", "node-b"}) {
      cluster::testing::NodeSpec spec;
      spec.node = node;
      WriteObject("configmaps", cluster::testing::DeviceInfoConfigMap(spec));
    }
    PodGroupSpec g;
    g.labels = {{"framework", "pytorch"}, {"process-recover-enable", "on"}};
    g.annotations = {{"recover-strategy", strategies}};
    for (const auto& kv : extras.pod_group_labels) g.labels.push_back(kv);
    for (const auto& kv : extras.pod_group_annotations) g.annotations.push_back(kv);
    Json pg = PodGroupObject(g);
    pg["status"] = {{"phase", "Running"}};
    WriteObject("podgroups", pg);
    for (int rank : {0, 1}) {
      PodSpec p = ExamplePod(rank);
      p.master_addr_env = "192.168.0.11";
      p.extra_annotations.push_back({"scheduling.k8s.io/group-name", kPodGroup});
      p.labels.push_back({"job-name", "pt-2x8"});
      if (extras.super_pod_id != -2) {
        Json alloc = Json::parse(cluster::testing::AllocationJson(p));
        alloc["super_pod_id"] = extras.super_pod_id;
        p.allocation_override = alloc.dump();
      }
      WriteObject("pods", PodObject(p));
    }
    Json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", kResetConfig}, {"namespace", kNs}}},
               {"data", {{"reset.json", kInitializing}, {"checkCode", Sha256Hex(kInitializing)}}}};
    WriteObject("configmaps", cm);
  }

  // Writes the job, starts clusterd and the client; false (and the test is skipped) when the
  // Recover service is not wired yet.
  bool Begin(const std::string& strategies, AgentBehaviour behaviour = {},
             const JobExtras& extras = {}) {
    WriteJob(strategies, extras);
    StartClusterd();
    if (HasFatalFailure()) return false;
    if (!RecoverServiceReady()) return false;
    driver_ = std::make_unique<TrainingAgentDriver>(kJob, std::move(behaviour));
    RecoverClient::Options options;
    options.address = grpc_address_;
    options.job_id = kJob;
    options.role = "taskd";
    options.seed = 7;
    client_ = std::make_unique<RecoverClient>(options, driver_.get());
    driver_->Attach(client_.get());
    client_->Start();
    return true;
  }

  // Subscribed: the stream is open once the first keep-alive (5 s) arrived.
  void AwaitSubscribed() {
    ASSERT_TRUE(client_->WaitSubscribed(absl::Seconds(20)))
        << "client never subscribed: " << client_->stats().last_error;
  }

  std::optional<Json> Get(const std::string& path) {
    httplib::Client http("http://" + http_address_);
    auto res = http.Get(path);
    if (!res || res->status != 200) return std::nullopt;
    Json body = Json::parse(res->body, nullptr, false);
    if (body.is_discarded()) return std::nullopt;
    return body;
  }
  std::optional<Json> ConfigMap(const std::string& name) {
    return Get(absl::StrCat("/api/v1/namespaces/", kNs, "/configmaps/", name));
  }
  std::optional<Json> PodGroup() {
    return Get(absl::StrCat("/api/v1/namespaces/", kNs, "/podgroups/", kPodGroup));
  }
  std::string PodGroupAnnotation(const std::string& key) {
    auto pg = PodGroup();
    if (!pg.has_value()) return "";
    return (*pg)["metadata"]["annotations"].value(key, "");
  }
  // reset.json of the reset ConfigMap, checked against its checkCode.
  Json ResetJson() {
    auto cm = ConfigMap(kResetConfig);
    if (!cm.has_value()) {
      ADD_FAILURE() << "no reset ConfigMap";
      return Json();
    }
    const std::string text = (*cm)["data"].value("reset.json", "");
    EXPECT_EQ((*cm)["data"].value("checkCode", ""), Sha256Hex(text)) << text;
    return Json::parse(text, nullptr, false);
  }
  // The state in the durable record ConfigMap clusterd-recovery-<jobId>, "" when absent.
  std::string RecordState() {
    auto cm = ConfigMap(absl::StrCat("clusterd-recovery-", kJob));
    if (!cm.has_value()) return "";
    Json record = Json::parse((*cm)["data"].value("record.json", ""), nullptr, false);
    if (record.is_discarded()) return "";
    return record.value("state", "");
  }
  template <typename Pred>
  bool Eventually(Pred pred, absl::Duration timeout = kStep) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (pred()) return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return pred();
  }

  std::optional<::ProcessManageSignal> Next(
      const std::function<bool(const ::ProcessManageSignal&)>& pred,
      absl::Duration timeout = kStep) {
    return driver_->WaitForSignal(pred, &seen_, timeout);
  }

  // What the test plays as MindIO: the lost ranks of a fault.
  void ReportFault(std::vector<std::pair<int, int>> ranks) {
    std::vector<::FaultRank> faults;
    for (auto [rank, type] : ranks) faults.push_back(RecoverClient::Fault(rank, type));
    absl::StatusOr<::Status> st = client_->ReportProcessFault(faults);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->code(), 0);
    EXPECT_EQ(st->info(), "receive ReportProcessFault");
  }

  // The info of the first reply matching `prefix`.
  // The info of the first answer to a client report named `prefix`, waiting for it: clusterd
  // may send the next signal, or end the stream, before the report's own answer is back at
  // the client (they travel on different calls), so a signal seen does not mean the reply of
  // the report that led to it has been recorded yet.
  std::string ReplyInfo(const std::string& prefix, absl::Duration timeout = kStep) {
    std::string info;
    Eventually(
        [&] {
          for (const auto& r : driver_->replies()) {
            if (absl::StartsWith(r.description, prefix) && r.response.ok()) {
              info = r.response->info();
              return true;
            }
          }
          return false;
        },
        timeout);
    return info;
  }

  // The same `dir` store clusterd uses, opened by the test (several processes may share it):
  // what the platform, the scheduler or the operator write while clusterd runs.
  store::ObjectStore& Store() {
    if (store_ == nullptr) {
      auto opened = store::OpenStore("dir:" + state_);
      if (!opened.ok()) {
        ADD_FAILURE() << "cannot open the test's store: " << opened.status();
        std::abort();
      }
      store_ = *std::move(opened);
    }
    return *store_;
  }
  // JSON merge patch of the PodGroup's annotations (a null value removes the key).
  void PatchPodGroupAnnotations(const Json& annotations) {
    absl::StatusOr<store::Object> patched =
        Store().Patch(store::ObjectKey{std::string(store::kPodGroups), kNs, kPodGroup},
                      Json{{"metadata", {{"annotations", annotations}}}});
    ASSERT_TRUE(patched.ok()) << patched.status();
  }
  // The scheduler replaces the pod of `rank`: the old pod is deleted and a new one (new UID,
  // NPUs really bound: `huawei.com/AscendReal`) is created in its place.
  void ReplacePod(int rank, const std::string& new_uid) {
    PodSpec p = ExamplePod(rank);
    const store::ObjectKey key{std::string(store::kPods), kNs, p.name};
    ASSERT_TRUE(Store().Delete(key).ok());
    p.uid = new_uid;
    p.master_addr_env = "192.168.0.11";
    p.extra_annotations.push_back({"scheduling.k8s.io/group-name", kPodGroup});
    p.extra_annotations.push_back({"huawei.com/AscendReal", "Ascend910-0,Ascend910-1"});
    p.labels.push_back({"job-name", "pt-2x8"});
    absl::StatusOr<store::Object> created = Store().Create(store::kPods, PodObject(p));
    ASSERT_TRUE(created.ok()) << created.status();
  }
  // The controller's view (GET /api/clusterd/v1/recovery/<jobId>), null when absent.
  Json Recovery() { return Get(absl::StrCat("/api/clusterd/v1/recovery/", kJob)).value_or(Json()); }

  TempDir dir_;
  std::string state_;
  int starts_ = 0;
  std::optional<Subprocess> proc_;
  std::string grpc_address_;
  std::string http_address_;
  std::unique_ptr<TrainingAgentDriver> driver_;
  std::unique_ptr<RecoverClient> client_;
  size_t seen_ = 0;
  std::unique_ptr<store::ObjectStore> store_;  // after dir_: closed before it is removed
};

#define BEGIN_OR_SKIP(...)                                                                 \
  do {                                                                                     \
    if (!Begin(__VA_ARGS__)) {                                                             \
      if (HasFatalFailure()) return;                                                       \
      GTEST_SKIP() << "the Recover service answers UNIMPLEMENTED: its server side "        \
                      "(src/server/recover_service.cc, recovery_bridge) is not wired yet"; \
    }                                                                                      \
  } while (0)

}  // namespace clusterd::e2e
