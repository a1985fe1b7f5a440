// Fault-centre benchmarks (issue 5):
//   BM_FaultCentreScale/<nodes>/<faults>  a `dir` store holding <nodes> device-info ConfigMaps
//       (16 NPUs each, healthy) and 16-node jobs on them (one pod of 16 NPUs per node), a job
//       registry and the fault centre over it, as clusterd runs them. Reports:
//         build_ms      FaultCentre::Start(): list, verify, process every node and job, render
//         publish_ms    then until every initial cluster-info ConfigMap is written
//         shard_p50/p99_ms   from the start of one device-info write (another store instance,
//                       like an npu-agent: fsync'd) to the watch event of the rewritten
//                       cluster-info-device shard holding the fault
//         signal_p50/p99_ms  from the same start to the Fault-service message of the job that
//                       owns the NPU (cluster::FaultSubscriptions, what the stream pushes)
//         *_after_write_*    the same two, from the return of the device-info write
//         bytes_per_fault    cluster-info bytes written per fault
//         rss_mb / rss_delta_mb  resident memory of the process at the end / its growth from
//                       just before the clusterd store, registry and centre were created (the
//                       agent-side store instance is opened after the measurement point)
//       Faults are paced 250 ms apart, so the 5 writes/s cap of the publisher does not queue them.
//   BM_DeviceCycleAndRender16Npu  one node's processors plus its cluster-info entry.
//   BM_ShardRender800KiB          rendering one full cluster-info-device shard.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "../tests/unit/cluster/job_test_objects.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "cluster/cluster_info_render.h"
#include "cluster/cluster_info_shards.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_config_files.h"
#include "cluster/fault_pipeline.h"
#include "cluster/fault_subscriptions.h"
#include "cluster/job_registry.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "model/device_fault.h"
#include "model/device_info.h"
#include "store/dir/dir_store.h"

namespace clusterd::cluster {
namespace fault_centre_bench {

using testing::Json;

constexpr int kNpus = 16;
constexpr int kNodesPerJob = 16;

class BenchDir {
 public:
  BenchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "clusterd-fault-bench-XXXXXX").string();
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

std::string NodeName(int i) { return absl::StrCat("node-", i); }

std::string DeviceInfoCfg(const std::string& fault_npu, const std::string& code, int64_t now_s) {
  model::DeviceInfoCfg cfg;
  const auto keys = model::DeviceListKeys::For("Ascend910");
  std::vector<model::DeviceFault> faults;
  std::string available, unhealthy;
  for (int n = 0; n < kNpus; ++n) {
    const std::string name = absl::StrCat("Ascend910-", n);
    if (name == fault_npu) {
      unhealthy = name;
      continue;
    }
    absl::StrAppend(&available, available.empty() ? "" : ",", name);
  }
  if (!fault_npu.empty()) {
    model::DeviceFault f;
    f.fault_type = "CardUnhealthy";
    f.npu_name = fault_npu;
    f.large_model_fault_level = f.fault_level = f.fault_handling = "SeparateNPU";
    f.fault_code = code;
    f.fault_time_and_level_map[code] = model::FaultTimeAndLevel{now_s * 1000, "SeparateNPU"};
    faults.push_back(f);
  }
  cfg.device_info.device_list[keys.available] = available;
  cfg.device_info.device_list[keys.fault] = model::RenderDeviceFaults(faults);
  cfg.device_info.device_list[keys.network_unhealthy] = "";
  cfg.device_info.device_list[keys.recovering] = "";
  cfg.device_info.device_list[keys.unhealthy] = unhealthy;
  cfg.device_info.update_time = now_s;
  return model::RenderDeviceInfoCfg(cfg);
}

Json DeviceInfoCm(int node, const std::string& fault_npu, const std::string& code, int64_t now_s) {
  Json cm;
  cm["apiVersion"] = "v1";
  cm["kind"] = "ConfigMap";
  cm["metadata"]["name"] = "mindx-dl-deviceinfo-" + NodeName(node);
  cm["metadata"]["namespace"] = "kube-system";
  cm["metadata"]["labels"]["mx-consumer-cim"] = "true";
  cm["data"]["DeviceInfoCfg"] = DeviceInfoCfg(fault_npu, code, now_s);
  cm["data"]["ManuallySeparateNPU"] = "";
  cm["data"]["UpgradeFaultReason"] = "{}";
  return cm;
}

// Writes the initial objects as files a store accepts without rewriting them (uid and a
// resourceVersion allocated from the counter), so that setting up 10 000 nodes takes seconds.
class Populator {
 public:
  explicit Populator(std::string root) : root_(std::move(root)) {}
  void Write(const std::string& resource, Json object) {
    object["metadata"]["uid"] = absl::StrCat("uid-", resource, "-", ++version_);
    object["metadata"]["resourceVersion"] = std::to_string(version_);
    std::filesystem::path dir = std::filesystem::path(root_) / resource;
    if (object["metadata"].contains("namespace"))
      dir /= object["metadata"]["namespace"].get<std::string>();
    std::filesystem::create_directories(dir);
    std::ofstream(dir / (object["metadata"]["name"].get<std::string>() + ".json")) << object.dump();
  }
  void Finish() {
    std::ofstream(std::filesystem::path(root_) / ".resource-version") << version_ << "\n";
  }

 private:
  std::string root_;
  uint64_t version_ = 0;
};

double RssMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// What a Fault-service subscriber of every job would be sent.
class SignalProbe final : public JobFaultSink {
 public:
  void OnJobFaults(const JobFaultRanks& faults) override {
    auto known = [](const std::string&, const std::string&) { return true; };
    if (!subs_.IsRegistered(faults.job_id, "bench")) subs_.Register(faults.job_id, "bench", known);
    auto exists = [](const std::string&) { return true; };
    const absl::Time now = absl::Now();
    for (const auto& d : subs_.Update(faults, exists)) {
      for (const auto& n : d.signal.nodes) {
        for (const auto& dev : n.fault_devices) {
          for (const auto& code : dev.fault_codes) {
            absl::MutexLock lock(&mu_);
            seen_.emplace(code, now);
          }
        }
      }
    }
  }
  std::optional<absl::Time> WaitFor(const std::string& code, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto ready = [&] { return seen_.count(code) != 0; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) return std::nullopt;
    return seen_[code];
  }

 private:
  FaultSubscriptions subs_;
  absl::Mutex mu_;
  std::map<std::string, absl::Time> seen_;
};

class ShardProbe {
 public:
  void OnEvent(const store::WatchEvent& e) {
    const absl::Time now = absl::Now();
    const std::string name = store::NameOf(e.object());
    auto data = e.object().find("data");
    if (data == e.object().end()) return;
    const std::string value = data->value(name, "");
    absl::MutexLock lock(&mu_);
    ++events_;
    for (const std::string& code : waiting_) {
      if (seen_.count(code) == 0 && value.find(code) != std::string::npos) seen_.emplace(code, now);
    }
  }
  void Expect(const std::string& code) {
    absl::MutexLock lock(&mu_);
    waiting_.push_back(code);
  }
  std::optional<absl::Time> WaitFor(const std::string& code, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto ready = [&] { return seen_.count(code) != 0; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) return std::nullopt;
    return seen_[code];
  }
  size_t events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> waiting_;
  std::map<std::string, absl::Time> seen_;
  size_t events_ = 0;
};

void BM_FaultCentreScale(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int faults = static_cast<int>(state.range(1));
  (void)ConfigureLogging("warn", LogFormat::kText);
  for (auto _ : state) {
    BenchDir dir;
    const int64_t now_s = absl::ToUnixSeconds(absl::Now());
    {
      Populator pop(dir.path());
      for (int i = 0; i < nodes; ++i) pop.Write("configmaps", DeviceInfoCm(i, "", "", now_s));
      for (int j = 0; j < nodes / kNodesPerJob; ++j) {
        testing::PodGroupSpec g;
        g.name = absl::StrCat("job-", j, "-pg");
        g.uid = absl::StrCat("pg-", j);
        g.owner_uid = absl::StrCat("job-uid-", j);
        g.owner_name = absl::StrCat("job-", j);
        g.min_member = kNodesPerJob;
        pop.Write("podgroups", testing::PodGroupObject(g));
        for (int r = 0; r < kNodesPerJob; ++r) {
          const int node = j * kNodesPerJob + r;
          testing::PodSpec p;
          p.name = absl::StrCat("job-", j, "-worker-", r);
          p.uid = absl::StrCat("pod-", j, "-", r);
          p.node = NodeName(node);
          p.host_ip = absl::StrCat("10.", node / 250, ".", node % 250, ".1");
          p.rank_index = std::to_string(r);
          p.owner_uid = g.owner_uid;
          p.owner_name = g.owner_name;
          p.devices = kNpus;
          p.device_ip_prefix = absl::StrCat("29.", node / 250, ".", node % 250, ".");
          pop.Write("pods", testing::PodObject(p));
        }
      }
      pop.Finish();
    }
    const double rss_before = RssMb();
    auto clusterd_store = store::DirStore::Open(dir.path());
    if (!clusterd_store.ok()) {
      state.SkipWithError(std::string(clusterd_store.status().message()).c_str());
      return;
    }
    JobRegistry::Options ro;
    ro.reconcile_rate = 1e9;
    ro.reconcile_burst = 1000000000;
    JobRegistry registry(**clusterd_store, Clock::Real(), ro);
    FaultCentre::Options fo;
    FaultConfigFiles config_files({.data_dir = CLUSTERD_DATA_DIR}, Clock::Real());
    fo.config = &config_files;
    // The initial publication (about 11 shards) in one burst of the writer's bucket; the faults
    // below come at 4/s, under its 5/s rate.
    fo.write_burst = 16;
    FaultCentre centre(**clusterd_store, Clock::Real(), &registry, fo);
    SignalProbe signals;
    centre.AddJobFaultSink(&signals);
    registry.AddSignalListener([&](const model::JobSummarySignal&) { centre.JobsChanged(); });
    if (!registry.Start().ok()) {
      state.SkipWithError("registry start failed");
      return;
    }
    while (registry.controller().RunUntilIdleForTest() > 0 || registry.PendingOperations() > 0) {
    }
    registry.controller().Start();

    const absl::Time t0 = absl::Now();
    if (absl::Status s = centre.Start(); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    const absl::Time t1 = absl::Now();
    Counter& bytes =
        MetricsRegistry::Default().GetCounter("clusterd_fault_centre_cm_write_bytes_total", "");
    Counter& writes = MetricsRegistry::Default().GetCounter("clusterd_fault_centre_cm_writes_total",
                                                            "", {{"result", "ok"}});
    centre.FlushWrites();  // the initial publication, the writer's reconcile on this thread
    const absl::Time t2 = absl::Now();
    centre.controller().Start();
    centre.writer().Start();

    ShardProbe shards;
    store::WatchOptions wo;
    wo.ns = std::string(kClusterInfoNamespace);
    store::ListOptions lo;
    lo.ns = std::string(kClusterInfoNamespace);
    auto list = (*clusterd_store)->List(store::kConfigMaps, lo);
    wo.resource_version = list.ok() ? list->resource_version : "";
    auto watch = (*clusterd_store)->Watch(store::kConfigMaps, wo, [&](const store::WatchEvent& e) {
      shards.OnEvent(e);
    });

    // The agent side: another store instance on the same directory.
    auto agent_store = store::DirStore::Open(dir.path());
    std::mt19937 rng(42);
    std::vector<double> shard_ms, signal_ms, shard_after_ms, signal_after_ms;
    const uint64_t bytes_before = bytes.Value();
    const uint64_t writes_before = writes.Value();
    int missed = 0;
    for (int f = 0; f < faults; ++f) {
      const int node = static_cast<int>(rng() % static_cast<uint32_t>(nodes));
      const std::string code = absl::StrCat("B", absl::Hex(0x1000000 + f, absl::kZeroPad7));
      shards.Expect(code);
      Json cm = DeviceInfoCm(node, absl::StrCat("Ascend910-", f % kNpus), code, now_s);
      const absl::Time start = absl::Now();
      auto updated = (*agent_store)->Update(store::kConfigMaps, cm);
      const absl::Time written = absl::Now();
      if (!updated.ok()) {
        state.SkipWithError(std::string(updated.status().message()).c_str());
        break;
      }
      auto shard_at = shards.WaitFor(code, absl::Seconds(10));
      auto signal_at = signals.WaitFor(code, absl::Seconds(10));
      if (!shard_at || !signal_at) {
        ++missed;
        continue;
      }
      shard_ms.push_back(absl::ToDoubleMilliseconds(*shard_at - start));
      signal_ms.push_back(absl::ToDoubleMilliseconds(*signal_at - start));
      shard_after_ms.push_back(absl::ToDoubleMilliseconds(*shard_at - written));
      signal_after_ms.push_back(absl::ToDoubleMilliseconds(*signal_at - written));
      absl::SleepFor(absl::Milliseconds(250) - (absl::Now() - start));
    }
    const double rss_end = RssMb();
    centre.Stop();
    registry.Stop();
    if (watch.ok()) watch->reset();

    state.counters["nodes"] = nodes;
    state.counters["jobs"] = static_cast<double>(nodes / kNodesPerJob);
    state.counters["build_ms"] = absl::ToDoubleMilliseconds(t1 - t0);
    state.counters["publish_ms"] = absl::ToDoubleMilliseconds(t2 - t1);
    state.counters["shard_p50_ms"] = Percentile(shard_ms, 0.5);
    state.counters["shard_p99_ms"] = Percentile(shard_ms, 0.99);
    state.counters["signal_p50_ms"] = Percentile(signal_ms, 0.5);
    state.counters["signal_p99_ms"] = Percentile(signal_ms, 0.99);
    state.counters["shard_after_write_p50_ms"] = Percentile(shard_after_ms, 0.5);
    state.counters["shard_after_write_p99_ms"] = Percentile(shard_after_ms, 0.99);
    state.counters["signal_after_write_p50_ms"] = Percentile(signal_after_ms, 0.5);
    state.counters["signal_after_write_p99_ms"] = Percentile(signal_after_ms, 0.99);
    state.counters["bytes_per_fault"] =
        shard_ms.empty() ? 0 : static_cast<double>(bytes.Value() - bytes_before) / shard_ms.size();
    state.counters["writes_per_fault"] =
        shard_ms.empty() ? 0
                         : static_cast<double>(writes.Value() - writes_before) / shard_ms.size();
    state.counters["missed"] = missed;
    state.counters["rss_mb"] = rss_end;
    state.counters["rss_delta_mb"] = rss_end - rss_before;
    state.counters["device_shards"] = static_cast<double>(centre.DeviceShardCount());
  }
}
BENCHMARK(BM_FaultCentreScale)
    ->Args({10000, 200})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

void BM_DeviceCycleAndRender16Npu(benchmark::State& state) {
  DeviceRecord r;
  r.node = "node-1";
  r.cm_name = "mindx-dl-deviceinfo-node-1";
  r.device_type = "Ascend910";
  for (int n = 0; n < kNpus; ++n) SortedInsert(r.available, absl::StrCat("Ascend910-", n));
  AddFault(r, NpuFault{"CardUnhealthy", "Ascend910-3", "80E01801", "RestartBusiness", 1, 1});
  AddFault(r, NpuFault{"CardNetworkUnhealthy", "Ascend910-6", "81078603", "NotHandleFault", 1, 1});
  DeviceCycleState st;
  DeviceCycleInput in;
  in.now_ms = 1718000000000;
  for (int n = 0; n < kNpus; ++n) in.used_npus.insert(absl::StrCat("Ascend910-", n));
  for (auto _ : state) {
    DeviceCycleOutput out = RunDeviceCycle(r, st, in);
    benchmark::DoNotOptimize(RenderDeviceEntry(out.record));
  }
}
BENCHMARK(BM_DeviceCycleAndRender16Npu);

void BM_ShardRender800KiB(benchmark::State& state) {
  ClusterInfoShards shards{std::string(kClusterInfoDevicePrefix)};
  DeviceRecord r;
  r.device_type = "Ascend910";
  for (int n = 0; n < kNpus; ++n) SortedInsert(r.available, absl::StrCat("Ascend910-", n));
  for (int i = 0; shards.Count() < 2; ++i) {
    r.node = NodeName(i);
    r.cm_name = "mindx-dl-deviceinfo-" + r.node;
    shards.Upsert(r.cm_name, RenderDeviceEntry(r));
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string s = shards.Render(0);
    bytes += s.size();
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["shard_bytes"] = static_cast<double>(shards.ShardBytes(0));
}
BENCHMARK(BM_ShardRender800KiB)->Unit(benchmark::kMicrosecond);

}  // namespace fault_centre_bench
}  // namespace clusterd::cluster
