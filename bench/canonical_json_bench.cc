// Cost of producing a device-info ConfigMap's canonical bytes and checkCode
// (fault-pipeline.md §1.2.1, §2) for a full 16-NPU node with four faulty NPUs.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "common/canonical_json.h"
#include "common/check_code.h"

namespace clusterd {
namespace canonical_json_bench {

using nlohmann::ordered_json;

constexpr int kNpus = 16;
constexpr char kType[] = "Ascend910";

ordered_json Fault(std::string_view fault_type, int npu, std::string_view level,
                   const std::vector<std::string>& codes, int64_t first_time_ms) {
  ordered_json map;
  for (size_t i = 0; i < codes.size(); ++i) {
    ordered_json entry;
    entry["fault_time"] = first_time_ms + static_cast<int64_t>(i) * 1500;
    entry["fault_level"] = level;
    map[codes[i]] = std::move(entry);
  }
  ordered_json fault;
  fault["fault_type"] = fault_type;
  fault["npu_name"] = absl::StrCat(kType, "-", npu);
  fault["large_model_fault_level"] = level;
  fault["fault_level"] = level;
  fault["fault_handling"] = level;
  fault["fault_code"] = absl::StrJoin(codes, ",");
  fault["fault_time_and_level_map"] = SortedObject(map);
  return fault;
}

// Faulty NPUs 3 (two chip codes), 7 (network), 11 (chip) and 12 (network and chip).
ordered_json FaultList() {
  ordered_json faults = ordered_json::array();
  faults.push_back(
      Fault("CardUnhealthy", 3, "RestartBusiness", {"80E01801", "80C98000"}, 1718000000123));
  faults.push_back(Fault("CardNetworkUnhealthy", 7, "PreSeparateNPU", {"81078603"}, 1718000000456));
  faults.push_back(Fault("CardUnhealthy", 11, "SeparateNPU", {"80CB8009"}, 1718000000789));
  faults.push_back(
      Fault("CardNetworkUnhealthy", 12, "NotHandleFault", {"8C1F8608", "8C1F8609"}, 1718000001011));
  faults.push_back(Fault("CardUnhealthy", 12, "RestartRequest", {"80E18402"}, 1718000001213));
  return faults;
}

std::string Names(const std::vector<int>& npus) {
  std::vector<std::string> names;
  for (int npu : npus) names.push_back(absl::StrCat(kType, "-", npu));
  return absl::StrJoin(names, ",");
}

ordered_json DeviceInfo(const ordered_json& faults) {
  std::vector<int> healthy;
  for (int npu = 0; npu < kNpus; ++npu) {
    if (npu != 3 && npu != 7 && npu != 11 && npu != 12) healthy.push_back(npu);
  }
  const std::string prefix = absl::StrCat("huawei.com/", kType);
  ordered_json device_list;
  device_list[prefix] = Names(healthy);
  device_list[prefix + "-Unhealthy"] = Names({3, 11, 12});
  device_list[prefix + "-NetworkUnhealthy"] = Names({7, 12});
  device_list[prefix + "-Recovering"] = "";
  device_list[prefix + "-Fault"] = CanonicalJson(faults);
  ordered_json device_info;
  device_info["DeviceList"] = SortedObject(device_list);
  device_info["UpdateTime"] = 1718000001;
  return device_info;
}

// What a writer does per update: serialise the fault list into its string value, then hash
// the canonical DeviceInfo.
void BM_DeviceInfoCheckCode16Npu(benchmark::State& state) {
  const ordered_json faults = FaultList();
  ordered_json device_info = DeviceInfo(faults);
  ordered_json& fault_value =
      device_info["DeviceList"][absl::StrCat("huawei.com/", kType, "-Fault")];
  for (auto _ : state) {
    fault_value = CanonicalJson(faults);
    std::string check_code = CheckCode(device_info);
    benchmark::DoNotOptimize(check_code);
  }
  state.counters["cj_bytes"] = static_cast<double>(CanonicalJson(device_info).size());
}
BENCHMARK(BM_DeviceInfoCheckCode16Npu);

void BM_CanonicalJsonOnly(benchmark::State& state) {
  const ordered_json device_info = DeviceInfo(FaultList());
  size_t bytes = 0;
  for (auto _ : state) {
    std::string cj = CanonicalJson(device_info);
    bytes = cj.size();
    benchmark::DoNotOptimize(cj);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_CanonicalJsonOnly);

}  // namespace canonical_json_bench
}  // namespace clusterd
