// The goodput bridge's periodic work at 20,000 jobs (issue 21): what its 5 s tick and its 30 s
// save cost the process, all of it under the bridge's lock or the store's.
//   BM_GoodputTick_20000Jobs  one tick with no save due (policy, expiry, prune, the aggregate
//                             metrics summed over every job).
//   BM_GoodputSave_20000Jobs  one save after `range(0)` jobs changed since the last one (the
//                             saved state built, the changed shards written to a memory store).
// The jobs run, and every tenth has had a recovery cycle, so its timeline holds intervals.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "common/clock.h"
#include "model/job_summary_signal.h"
#include "server/goodput_bridge.h"
#include "spdlog/spdlog.h"
#include "store/memory/memory_store.h"

namespace clusterd::server {
namespace goodput_bench {

constexpr int kJobs = 20000;

model::JobSummarySignal Summary(int j, std::string_view status) {
  model::JobSummarySignal s;
  s.job_id = absl::StrCat("8f1c2d3e-4b5a-6978-8a9b-", 100000000000 + j);
  s.job_name = absl::StrCat("train-", j);
  s.ns = "team-a";
  s.job_status = std::string(status);
  s.op = std::string(model::kJobOperatorAdd);
  return s;
}

GoodputBridge::Options NoSaveOnTick() {
  GoodputBridge::Options options;
  options.save_every = absl::Hours(1000);
  return options;
}

struct Fixture {
  Fixture() : bridge(store, clock, NoSaveOnTick()) {
    spdlog::set_level(spdlog::level::err);
    for (int j = 0; j < kJobs; ++j) bridge.OnJobSummary(Summary(j, "pending"));
    clock.Advance(absl::Seconds(30));
    for (int j = 0; j < kJobs; ++j) bridge.OnJobSummary(Summary(j, "running"));
    for (int j = 0; j < kJobs; j += 10) {
      const std::string id = Summary(j, "").job_id;
      clock.Advance(absl::Milliseconds(1));
      bridge.OnCycleStarted(id, clock.Now());
      bridge.OnStrategyDecided(id, "retry", clock.Now());
      bridge.OnCycleEnded(id, "retry", "success", clock.Now() + absl::Seconds(20));
    }
    clock.Advance(absl::Seconds(60));
  }
  store::MemoryStore store;
  ManualClock clock;
  GoodputBridge bridge;
};

void BM_GoodputTick_20000Jobs(benchmark::State& state) {
  Fixture f;
  f.bridge.Tick();
  for (auto _ : state) {
    f.clock.Advance(absl::Seconds(5));
    f.bridge.Tick();
  }
}
BENCHMARK(BM_GoodputTick_20000Jobs)->Unit(benchmark::kMillisecond);

void BM_GoodputSave_20000Jobs(benchmark::State& state) {
  Fixture f;
  if (!f.bridge.Save().ok()) {
    state.SkipWithError("first save failed");
    return;
  }
  int next = 0;
  for (auto _ : state) {
    state.PauseTiming();
    f.clock.Advance(absl::Seconds(30));
    for (int i = 0; i < state.range(0); ++i) {
      const std::string id = Summary((next += 7919) % kJobs, "").job_id;
      f.bridge.OnCycleStarted(id, f.clock.Now());
    }
    state.ResumeTiming();
    if (!f.bridge.Save().ok()) state.SkipWithError("save failed");
  }
}
BENCHMARK(BM_GoodputSave_20000Jobs)->Arg(1)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace goodput_bench
}  // namespace clusterd::server
