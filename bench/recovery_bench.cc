// The recovery controller's own cost of a report: from ReportProcessFault posted to a job's
// strand to its first signal handed to the sink, with 1,000 registered and subscribed jobs.
// No gRPC and no other process: what is left is the hand-off to the job's worker, the machine,
// the durable record, the reset ConfigMap and the store (the `dir` store on tmpfs, or the
// memory store). The scale harness
// (bench/scale/recovery_latency.cc) measures the same path end to end.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "recovery/executor.h"
#include "recovery/job_config.h"
#include "recovery/vocabulary.h"
#include "spdlog/spdlog.h"
#include "store/object_store.h"

namespace recovery_bench {

using clusterd::recovery::Signal;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr int kJobs = 1000;

// Notes when the first non-keep-alive signal after Arm() is written.
class TimingSink : public clusterd::recovery::SignalSink {
 public:
  bool WriteSignal(const std::string&, const Signal& signal) override {
    if (signal.signal_type == "keep-alive") return true;
    absl::MutexLock lock(&mu_);
    if (!seen_) {
      seen_ = true;
      at_ = std::chrono::steady_clock::now();
    }
    return true;
  }
  bool PushSwitchRankList(const std::string&, const clusterd::recovery::NicSwitchParams&) override {
    return true;
  }
  bool PushStressTestParams(const std::string&,
                            const std::map<int64_t, std::vector<int64_t>>&) override {
    return true;
  }
  void QueueOmMessage(const std::string&, clusterd::recovery::OmKind, const std::string&) override {
  }
  void EndStreams(const std::string&, uint64_t) override {}
  void Reply(uint64_t, int32_t, const std::string&) override {}

  void Arm() {
    absl::MutexLock lock(&mu_);
    seen_ = false;
  }
  // When the signal was written; nullopt if none came within a second.
  std::optional<SteadyTime> Await() {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout(absl::Condition(&seen_), absl::Seconds(1))) return std::nullopt;
    return at_;
  }

 private:
  absl::Mutex mu_;
  bool seen_ ABSL_GUARDED_BY(mu_) = false;
  SteadyTime at_ ABSL_GUARDED_BY(mu_);
};

std::string JobName(int i) { return "bench-" + std::to_string(i); }

// 1,000 jobs of one pod each, registered and subscribed; each can be sampled once.
struct Cluster {
  explicit Cluster(const std::string& spec) {
    spdlog::set_level(spdlog::level::warn);  // one "controller reset" line per job otherwise
    store = *clusterd::store::OpenStore(spec);
    const clusterd::recovery::JobConfig config = clusterd::recovery::BuildJobConfig(
        {{std::string(clusterd::recovery::kLabelProcessRecoverEnable), "on"}},
        {{std::string(clusterd::recovery::kAnnotationRecoverStrategy), "recover,dump,exit"}});
    executor = std::make_unique<clusterd::recovery::RecoveryExecutor>(
        *store, clusterd::Clock::Real(), sink);
    for (int i = 0; i < kJobs; ++i) {
      const std::string name = JobName(i);
      (void)store->Create("podgroups",
                          {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                           {"kind", "PodGroup"},
                           {"metadata",
                            {{"name", name + "-pg"},
                             {"namespace", "default"},
                             {"labels", {{"process-recover-enable", "on"}}},
                             {"annotations", {{"recover-strategy", "recover,dump,exit"}}}}},
                           {"status", {{"phase", "Running"}}}});
      (void)store->Create(
          "pods",
          {{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata",
            {{"name", name + "-0"},
             {"namespace", "default"},
             {"annotations",
              {{"hccl/rankIndex", "0"},
               {"scheduling.k8s.io/group-name", name + "-pg"},
               {"huawei.com/AscendReal", "Ascend910-0"}}}}},
           {"spec",
            {{"nodeName", "node-1"},
             {"containers",
              {{{"name", "c"}, {"resources", {{"limits", {{"huawei.com/Ascend910", 1}}}}}}}}}},
           {"status", {{"phase", "Running"}}}});
      (void)store->Create(
          "configmaps",
          {{"apiVersion", "v1"},
           {"kind", "ConfigMap"},
           {"metadata", {{"name", "reset-config-" + name}, {"namespace", "default"}}},
           {"data", {{"reset.json", R"({"status":"initializing"})"}, {"checkCode", ""}}}});
      const std::string job_id = "uid-" + name;
      (void)executor->AddJob({job_id, "default", name + "-pg", name}, config);
      (void)executor->Post(job_id, clusterd::recovery::Subscribed{1});
    }
    executor->controller().RunUntilIdleForTest();
    executor->Start(1);  // as clusterd runs it: a worker wakes for the job's strand
  }
  ~Cluster() { executor->Stop(); }

  TimingSink sink;
  std::unique_ptr<clusterd::store::ObjectStore> store;
  std::unique_ptr<clusterd::recovery::RecoveryExecutor> executor;
};

void ReportToFirstSignal(benchmark::State& state, const std::string& spec) {
  Cluster cluster(spec);
  int next = 0;
  for (auto _ : state) {
    if (next == kJobs) {
      state.SkipWithError("every job sampled");
      break;
    }
    const std::string job_id = "uid-" + JobName(next++);
    cluster.sink.Arm();
    const SteadyTime start = std::chrono::steady_clock::now();
    (void)cluster.executor->Post(job_id, clusterd::recovery::ProcessFaultReported{{{0, 1}}, 0});
    const std::optional<SteadyTime> signalled = cluster.sink.Await();
    if (!signalled.has_value()) {
      state.SkipWithError("no signal");
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(*signalled - start).count());
    // Let the batch finish (the pod's label goes after the signal) before the next report.
    absl::SleepFor(absl::Milliseconds(2));
  }
}

void BM_RecoveryReportToFirstSignal_DirStoreOnTmpfs(benchmark::State& state) {
  char pattern[] = "/dev/shm/recovery-bench-XXXXXX";
  const char* dir = mkdtemp(pattern);
  if (dir == nullptr) {
    state.SkipWithError("cannot create a directory in /dev/shm");
    return;
  }
  ReportToFirstSignal(state, std::string("dir:") + dir);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
BENCHMARK(BM_RecoveryReportToFirstSignal_DirStoreOnTmpfs)
    ->UseManualTime()
    ->Iterations(kJobs)
    ->Unit(benchmark::kMicrosecond);

void BM_RecoveryReportToFirstSignal_MemoryStore(benchmark::State& state) {
  ReportToFirstSignal(state, "memory");
}
BENCHMARK(BM_RecoveryReportToFirstSignal_MemoryStore)
    ->UseManualTime()
    ->Iterations(kJobs)
    ->Unit(benchmark::kMicrosecond);

}  // namespace recovery_bench
