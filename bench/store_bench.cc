// Object store micro-benchmarks:
//   BM_DirStoreWriteToWatchEvent  two DirStores on one directory (as two processes would be):
//                                 time from the start of an Update in one to the watch event
//                                 in the other. Counters: write_us is the Update call alone
//                                 (three fsyncs), after_write_us from its return to the event.
//   BM_MemoryStoreUpdate, BM_DirStoreUpdate  Update throughput of one store.
//   BM_DirStoreSmallWriteBesideALargeWriter  a small write's wait behind a large one.

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "store/admission.h"
#include "store/dir/dir_store.h"
#include "store/memory/memory_store.h"

namespace clusterd::store {
namespace store_bench {

class BenchDir {
 public:
  BenchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "clusterd-store-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~BenchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Object BenchConfigMap() {
  Object o;
  o["apiVersion"] = "v1";
  o["kind"] = "ConfigMap";
  o["metadata"]["name"] = "bench";
  o["metadata"]["namespace"] = "default";
  o["metadata"]["labels"]["app"] = "bench";
  o["data"]["counter"] = "0";
  o["data"]["payload"] = std::string(512, 'x');  // a rank table is a few hundred bytes
  return o;
}

std::unique_ptr<DirStore> MustOpen(benchmark::State& state, const std::string& path) {
  auto store = DirStore::Open(path);
  if (!store.ok()) {
    state.SkipWithError(std::string(store.status().message()).c_str());
    return nullptr;
  }
  return *std::move(store);
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void BM_DirStoreWriteToWatchEvent(benchmark::State& state) {
  BenchDir dir;
  auto writer = MustOpen(state, dir.path());
  auto reader = MustOpen(state, dir.path());
  if (writer == nullptr || reader == nullptr) return;
  auto created = writer->Create(kConfigMaps, BenchConfigMap());
  if (!created.ok()) {
    state.SkipWithError("create failed");
    return;
  }
  Object cm = *created;

  absl::Mutex mu;
  uint64_t seen = 0;
  auto handle = reader->Watch(kConfigMaps, {}, [&](const WatchEvent& e) {
    uint64_t v = ParseResourceVersion(ResourceVersionOf(e.object())).value_or(0);
    absl::MutexLock lock(&mu);
    seen = std::max(seen, v);
  });
  if (!handle.ok()) {
    state.SkipWithError("watch failed");
    return;
  }
  auto wait_for = [&](uint64_t version) {
    absl::MutexLock lock(&mu);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return seen >= version; };
    return mu.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  };
  if (!wait_for(*ParseResourceVersion(ResourceVersionOf(cm)))) {
    state.SkipWithError("initial event not seen");
    return;
  }

  double write_seconds = 0;
  double after_write_seconds = 0;
  int64_t counter = 0;
  for (auto _ : state) {
    cm["data"]["counter"] = std::to_string(++counter);
    auto start = std::chrono::steady_clock::now();
    auto updated = writer->Update(kConfigMaps, cm);
    auto written = std::chrono::steady_clock::now();
    if (!updated.ok()) {
      state.SkipWithError("update failed");
      return;
    }
    if (!wait_for(*ParseResourceVersion(ResourceVersionOf(*updated)))) {
      state.SkipWithError("event not seen within 10 s");
      return;
    }
    auto seen_at = std::chrono::steady_clock::now();
    state.SetIterationTime(Seconds(seen_at - start));
    write_seconds += Seconds(written - start);
    after_write_seconds += Seconds(seen_at - written);
    cm = *updated;
  }
  state.counters["write_us"] =
      benchmark::Counter(write_seconds * 1e6, benchmark::Counter::kAvgIterations);
  state.counters["after_write_us"] =
      benchmark::Counter(after_write_seconds * 1e6, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_DirStoreWriteToWatchEvent)->UseManualTime()->Unit(benchmark::kMicrosecond);

void UpdateLoop(benchmark::State& state, ObjectStore& store) {
  auto created = store.Create(kConfigMaps, BenchConfigMap());
  if (!created.ok()) {
    state.SkipWithError("create failed");
    return;
  }
  Object cm = *created;
  cm["metadata"].erase("resourceVersion");  // unconditional updates
  int64_t counter = 0;
  for (auto _ : state) {
    cm["data"]["counter"] = std::to_string(++counter);
    auto updated = store.Update(kConfigMaps, cm);
    if (!updated.ok()) {
      state.SkipWithError("update failed");
      return;
    }
    benchmark::DoNotOptimize(updated);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_MemoryStoreUpdate(benchmark::State& state) {
  MemoryStore store;
  UpdateLoop(state, store);
}
BENCHMARK(BM_MemoryStoreUpdate);

void BM_DirStoreUpdate(benchmark::State& state) {
  BenchDir dir;
  auto store = MustOpen(state, dir.path());
  if (store == nullptr) return;
  UpdateLoop(state, *store);
}
BENCHMARK(BM_DirStoreUpdate)->Unit(benchmark::kMicrosecond);

// A small write (a recovery record, a reset ConfigMap) while another thread keeps rewriting a
// large ConfigMap (a goodput state or cluster-info shard of `range(0)` KiB), as the goodput
// bridge's save does beside a report. The store takes one write at a time, so the small write
// waits for whatever part of the large one runs under its lock. Counters: p50_us, p99_us,
// max_us of the small writes, and big_writes done meanwhile. Run with TMPDIR=/dev/shm to leave
// the disk out.
void BM_DirStoreSmallWriteBesideALargeWriter(benchmark::State& state) {
  BenchDir dir;
  auto store = MustOpen(state, dir.path());
  if (store == nullptr) return;
  Object big = BenchConfigMap();
  big["metadata"]["name"] = "bench-shard";
  // A shard's value is JSON text: quotes to escape, as in the real ones.
  std::string payload;
  while (payload.size() < static_cast<size_t>(state.range(0)) * 1024) {
    payload +=
        R"({"id":"job-0000","timeline":[{"use":"training","start":"2026-12-07T06:00:00Z"}]},)";
  }
  big["data"]["payload"] = payload;
  if (!store->Create(kConfigMaps, big).ok() || !store->Create(kConfigMaps, BenchConfigMap()).ok()) {
    state.SkipWithError("create failed");
    return;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> big_writes{0};
  std::thread writer([&] {
    Object next = big;
    int64_t n = 0;
    while (!stop.load()) {
      next["data"]["counter"] = std::to_string(++n);
      if (store->Update(kConfigMaps, next).ok()) big_writes.fetch_add(1);
    }
  });
  Object cm = BenchConfigMap();
  int64_t counter = 0;
  std::vector<double> micros;
  for (auto _ : state) {
    cm["data"]["counter"] = std::to_string(++counter);
    auto start = std::chrono::steady_clock::now();
    auto updated = store->Update(kConfigMaps, cm);
    const double took = Seconds(std::chrono::steady_clock::now() - start);
    if (!updated.ok()) {
      state.SkipWithError("update failed");
      break;
    }
    state.SetIterationTime(took);
    micros.push_back(took * 1e6);
    // Paced, as reports are: the large writer gets the lock in between.
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  stop = true;
  writer.join();
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p99_us"] = micros[micros.size() * 99 / 100];
  state.counters["max_us"] = micros.back();
  state.counters["big_writes"] = static_cast<double>(big_writes.load());
}
BENCHMARK(BM_DirStoreSmallWriteBesideALargeWriter)
    ->Arg(800)
    ->Iterations(2000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace store_bench
}  // namespace clusterd::store
