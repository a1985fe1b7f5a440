// Job registry and rank-table benchmarks (issue 4):
//   BM_RegistryRebuild_1000Jobs20000Pods   Start() of a registry over a store holding 1 000 jobs
//                                          (PodGroup + 20 pods x 8 NPUs each) and the reconcile of
//                                          every job: the restart cost, ConfigMap writes included.
//   BM_RegistryPodUpdateUnchanged          with that registry running, one pod event that changes
//                                          nothing (the common case: an unrelated annotation),
//                                          intake + reconcile.
//   BM_RegistryPodUpdateStatusChange       one pod event that flips a job running <-> failed:
//                                          status derivation, rank-table rebuild of 160 ranks,
//                                          job-summary ConfigMap write and signal.
//   BM_RankTableBuild_8192Ranks            BuildJobRankTable for a 1 024-pod x 8-NPU job.
//   BM_RankTableSliceAndSerialize_8192Ranks  its job-summary slices (≈800 KiB each).
// The store is the memory backend and the clock a ManualClock: figures are CPU cost, not fsync.
#include <memory>
#include <vector>

#include "../tests/unit/cluster/job_test_objects.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "cluster/job_registry.h"
#include "cluster/job_summary.h"
#include "cluster/rank_table_builder.h"
#include "common/clock.h"
#include "common/log.h"
#include "store/memory/memory_store.h"

namespace clusterd::cluster {
namespace cluster_bench {

using testing::Json;
using testing::PodSpec;

constexpr int kJobs = 1000;
constexpr int kPodsPerJob = 20;

std::string JobUid(int j) { return absl::StrCat("job-uid-", j); }

PodSpec BenchPod(int job, int rank) {
  PodSpec p;
  p.name = absl::StrCat("job-", job, "-worker-", rank);
  p.uid = absl::StrCat("pod-", job, "-", rank);
  p.node = absl::StrCat("node-", job, "-", rank);
  p.host_ip = absl::StrCat("10.", job / 200, ".", job % 200, ".", rank + 1);
  p.rank_index = std::to_string(rank);
  p.owner_uid = JobUid(job);
  p.owner_name = absl::StrCat("job-", job);
  p.device_ip_prefix = absl::StrCat("29.", job / 200, ".", job % 200 * 10 + rank % 10, ".");
  return p;
}

testing::PodGroupSpec BenchPodGroup(int job) {
  testing::PodGroupSpec g;
  g.name = absl::StrCat("job-", job, "-pg");
  g.uid = absl::StrCat("pg-", job);
  g.owner_uid = JobUid(job);
  g.owner_name = absl::StrCat("job-", job);
  g.min_member = kPodsPerJob;
  return g;
}

void FillStore(store::ObjectStore& store) {
  for (int j = 0; j < kJobs; ++j) {
    (void)store.Create(store::kPodGroups, testing::PodGroupObject(BenchPodGroup(j)));
    for (int r = 0; r < kPodsPerJob; ++r) {
      (void)store.Create(store::kPods, testing::PodObject(BenchPod(j, r)));
    }
  }
}

JobRegistry::Options Unlimited() {
  JobRegistry::Options o;
  o.reconcile_rate = 1e9;
  o.reconcile_burst = 1000000000;
  return o;
}

void QuietLogs() {
  static const bool configured = ConfigureLogging("warn", LogFormat::kText).ok();
  (void)configured;
}

void BM_RegistryRebuild_1000Jobs20000Pods(benchmark::State& state) {
  QuietLogs();
  for (auto _ : state) {
    state.PauseTiming();
    auto store = std::make_unique<store::MemoryStore>();
    FillStore(*store);
    ManualClock clock;
    state.ResumeTiming();
    JobRegistry registry(*store, clock, Unlimited());
    if (!registry.Start().ok()) state.SkipWithError("start failed");
    registry.controller().RunUntilIdleForTest();
    registry.Stop();
    state.PauseTiming();
    if (registry.Jobs().size() != static_cast<size_t>(kJobs)) state.SkipWithError("jobs missing");
    store.reset();
    state.ResumeTiming();
  }
  state.counters["jobs"] = kJobs;
  state.counters["pods"] = kJobs * kPodsPerJob;
}
BENCHMARK(BM_RegistryRebuild_1000Jobs20000Pods)->Unit(benchmark::kMillisecond)->Iterations(3);

// A running registry holding the 1 000 jobs, for per-event costs.
struct LoadedRegistry {
  ManualClock clock;
  store::MemoryStore store;
  std::unique_ptr<JobRegistry> registry;
  LoadedRegistry() {
    FillStore(store);
    registry = std::make_unique<JobRegistry>(store, clock, Unlimited());
    (void)registry->Start();
    registry->controller().RunUntilIdleForTest();
  }
};

LoadedRegistry& Loaded() {
  static auto* loaded = new LoadedRegistry();
  return *loaded;
}

void BM_RegistryPodUpdateUnchanged(benchmark::State& state) {
  QuietLogs();
  LoadedRegistry& l = Loaded();
  std::vector<Json> events;
  for (int j = 0; j < 64; ++j) {
    PodSpec p = BenchPod(j * 15, 3);
    p.extra_annotations = {{"unrelated", absl::StrCat("v", j)}};
    events.push_back(testing::PodObject(p));
  }
  size_t i = 0;
  for (auto _ : state) {
    l.registry->OnPodEvent(
        store::WatchEvent{store::WatchEventType::kModified, events[i++ % events.size()]});
    l.registry->controller().RunUntilIdleForTest();
  }
  state.counters["jobs"] = static_cast<double>(l.registry->Jobs().size());
}
BENCHMARK(BM_RegistryPodUpdateUnchanged)->Unit(benchmark::kMicrosecond);

void BM_RegistryPodUpdateStatusChange(benchmark::State& state) {
  QuietLogs();
  LoadedRegistry& l = Loaded();
  std::vector<Json> failed, running;
  for (int j = 0; j < 64; ++j) {
    PodSpec p = BenchPod(j * 15 + 7, 5);
    running.push_back(testing::PodObject(p));
    p.phase = "Failed";
    failed.push_back(testing::PodObject(p));
  }
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % failed.size();
    // Odd rounds fail the job, even rounds bring it back: every event changes the status.
    const bool fail = (i / failed.size()) % 2 == 0;
    l.registry->OnPodEvent(
        store::WatchEvent{store::WatchEventType::kModified, fail ? failed[k] : running[k]});
    l.registry->controller().RunUntilIdleForTest();
  }
}
BENCHMARK(BM_RegistryPodUpdateStatusChange)->Unit(benchmark::kMicrosecond);

struct BigJob {
  std::vector<model::PodInfo> pods;
  std::vector<const model::PodInfo*> ptrs;
  NodeSerials serials;
  BigJob() {
    for (int r = 0; r < 1024; ++r) {
      PodSpec p = BenchPod(r / 20, r);
      p.owner_uid = "big";
      pods.push_back(*model::PodInfoFromObject(testing::PodObject(p)));
      serials.by_node_name[p.node] = absl::StrCat("SN", r);
    }
    for (const auto& p : pods) ptrs.push_back(&p);
  }
};

void BM_RankTableBuild_8192Ranks(benchmark::State& state) {
  static BigJob* job = new BigJob();
  for (auto _ : state) {
    RankTableBuild build = BuildJobRankTable(job->ptrs, 1024, job->serials, "Ascend910", "");
    benchmark::DoNotOptimize(build);
  }
  state.counters["ranks"] = 8192;
}
BENCHMARK(BM_RankTableBuild_8192Ranks)->Unit(benchmark::kMillisecond);

void BM_RankTableSliceAndSerialize_8192Ranks(benchmark::State& state) {
  static BigJob* job = new BigJob();
  RankTableBuild build = BuildJobRankTable(job->ptrs, 1024, job->serials, "Ascend910", "");
  size_t bytes = 0, slices = 0;
  for (auto _ : state) {
    std::vector<std::string> out = SliceRankTable(build.table);
    slices = out.size();
    bytes = 0;
    for (const auto& s : out) bytes += s.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["slices"] = static_cast<double>(slices);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RankTableSliceAndSerialize_8192Ranks)->Unit(benchmark::kMillisecond);

}  // namespace cluster_bench
}  // namespace clusterd::cluster
