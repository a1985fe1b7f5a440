// Node-side fault engine throughput (issue 3): events per second through DeviceFaultEngine for
// a 16-NPU node with the full shipped catalogue, and the cost of rendering a full device-info
// ConfigMap (DeviceList, -Fault, CheckCode, reasons).

#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "faults/device_fault_engine.h"
#include "faults/device_info_render.h"
#include "model/device_info.h"

namespace clusterd::faults {
namespace faults_bench {

constexpr int kNpus = 16;
constexpr int64_t kT0 = 1718000000000;

std::string DataFile(const std::string& name) {
  std::ifstream in(std::string(CLUSTERD_DATA_DIR) + "/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

FaultPolicyPtr Shipped() {
  static const FaultPolicyPtr policy = [] {
    PolicyIssues issues;
    auto p = std::make_shared<FaultPolicy>();
    p->codes = *FaultCodeCatalog::Parse(DataFile("faultCode.json"), &issues);
    p->customization = *FaultCustomization::Parse(DataFile("faultCustomization.json"), &issues);
    p->switch_codes = *SwitchFaultCatalog::Parse(DataFile("SwitchFaultCode.json"), &issues);
    return p;
  }();
  return policy;
}

DeviceEngineOptions Options() {
  DeviceEngineOptions o;
  o.profile = *ChipProfile::FromName("Ascend910");
  for (int i = 0; i < kNpus; ++i) o.npu_ids.push_back(i);
  return o;
}

// Occur/recover pairs of codes drawn from the whole catalogue (frequency, duration and network
// codes included), on random NPUs.
std::vector<NpuFaultEvent> Events(size_t n) {
  std::vector<FaultCode> codes;
  for (const auto& [code, level] : Shipped()->codes.chip_levels()) codes.push_back(code);
  std::sort(codes.begin(), codes.end());
  codes.push_back(kRoceLinkDown);
  std::mt19937_64 rng(7);
  std::vector<NpuFaultEvent> events;
  while (events.size() < n) {
    NpuFaultEvent e;
    e.npu = static_cast<int>(rng() % kNpus);
    e.code = codes[rng() % codes.size()];
    e.severity = 1u;
    e.assertion = Assertion::kOccur;
    events.push_back(e);
    e.assertion = Assertion::kRecover;
    events.push_back(e);
  }
  return events;
}

// One cycle per event: the worst case (the agent batches every event of a cycle).
void BM_EngineEventPerCycle(benchmark::State& state) {
  const std::vector<NpuFaultEvent> events = Events(1 << 16);
  DeviceFaultEngine engine(Options(), Shipped(), kT0);
  int64_t now = kT0;
  size_t i = 0;
  for (auto _ : state) {
    NpuFaultEvent e = events[i++ & (events.size() - 1)];
    e.alarm_time_ms = ++now;
    engine.Submit(e);
    benchmark::DoNotOptimize(engine.RunCycle(now));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EngineEventPerCycle);

// `range(0)` events per cycle.
void BM_EngineEventsBatched(benchmark::State& state) {
  const std::vector<NpuFaultEvent> events = Events(1 << 16);
  const int batch = static_cast<int>(state.range(0));
  DeviceFaultEngine engine(Options(), Shipped(), kT0);
  int64_t now = kT0;
  size_t i = 0;
  for (auto _ : state) {
    for (int b = 0; b < batch; ++b) {
      NpuFaultEvent e = events[i++ & (events.size() - 1)];
      e.alarm_time_ms = ++now;
      engine.Submit(e);
    }
    benchmark::DoNotOptimize(engine.RunCycle(now));
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_EngineEventsBatched)->Arg(16)->Arg(256);

// An engine whose 16 NPUs each carry chip and network faults and an escalation.
std::unique_ptr<DeviceFaultEngine> LoadedEngine() {
  auto engine = std::make_unique<DeviceFaultEngine>(Options(), Shipped(), kT0);
  const FaultCode chip_codes[] = {0x80E01801, 0xA2301001, 0x80E21007, 0x80E18005};
  for (int npu = 0; npu < kNpus; ++npu) {
    for (FaultCode c : chip_codes) engine->Submit({npu, c, Assertion::kOccur, kT0 + npu, 1u});
    engine->Submit({npu, kRoceLinkDown, Assertion::kOccur, kT0, std::nullopt});
  }
  engine->RunCycle(kT0);
  engine->RunCycle(kT0 + 30000);  // RoCE timeouts: duration reasons on every NPU
  return engine;
}

// The whole device-info ConfigMap content: DeviceList, -Fault, DeviceInfoCfg with CheckCode,
// ManuallySeparateNPU, UpgradeFaultReason, fingerprint.
void BM_RenderDeviceInfoContent(benchmark::State& state) {
  auto engine = LoadedEngine();
  size_t bytes = 0;
  for (auto _ : state) {
    DeviceInfoContent c = BuildDeviceInfoContent(*engine, nullptr, {}, kT0 + 31000);
    bytes = c.data.at("DeviceInfoCfg").size();
    benchmark::DoNotOptimize(c);
  }
  state.counters["DeviceInfoCfg_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderDeviceInfoContent);

// Render + CheckCode of the DeviceInfoCfg value alone, from a prepared DeviceList.
void BM_RenderDeviceInfoCfgWithCheckCode(benchmark::State& state) {
  auto engine = LoadedEngine();
  model::DeviceInfoCfg cfg;
  cfg.device_info.device_list = BuildDeviceList(*engine);
  cfg.device_info.update_time = kT0 / 1000;
  for (auto _ : state) benchmark::DoNotOptimize(model::RenderDeviceInfoCfg(cfg));
}
BENCHMARK(BM_RenderDeviceInfoCfgWithCheckCode);

}  // namespace faults_bench
}  // namespace clusterd::faults
