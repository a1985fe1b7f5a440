// Object store micro-benchmarks:
//   BM_DirStoreWriteToWatchEvent  two DirStores on one directory (as two processes would be):
//                                 time from the start of an Update in one to the watch event
//                                 in the other. Counters: write_us is the Update call alone
//                                 (three fsyncs), after_write_us from its return to the event.
//   BM_MemoryStoreUpdate, BM_DirStoreUpdate  Update throughput of one store.

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

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

}  // namespace store_bench
}  // namespace clusterd::store
