// Reading one store object's text into an ordered_json: nlohmann's own parser against
// ParseJsonQuickly (simdjson, building the same value). A restart reads every object file of
// the `dir` store this way, and every device-info document once more.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "common/json_quick_parse.h"
#include "nlohmann/json.hpp"

namespace clusterd {
namespace json_parse_bench {

using nlohmann::ordered_json;

// A scheduled pod of the scale harness's shape: labels, annotations (the NPU allocation is
// JSON inside a string), one container with its environment, status.
std::string PodText() {
  ordered_json env = ordered_json::array();
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "ASCEND_VISIBLE"}) {
    env.push_back({{"name", name}, {"value", absl::StrCat(name, "-value-0123456789")}});
  }
  std::string allocation = "[";
  for (int npu = 0; npu < 8; ++npu) {
    absl::StrAppend(&allocation, npu == 0 ? "" : ",", R"({"device_id":")", npu,
                    R"(","device_ip":"192.168.100.)", npu, R"(","rank_id":")", npu, R"("})");
  }
  allocation += "]";
  ordered_json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "job-00042-worker-3"},
        {"namespace", "default"},
        {"uid", "6f1c2a9e-1d0b-4c55-9b8e-0a3f5d7e9c21"},
        {"resourceVersion", "123456"},
        {"creationTimestamp", "2026-12-06T14:29:54Z"},
        {"labels",
         {{"app", "pytorch"}, {"job-name", "job-00042"}, {"ring-controller.atlas", "ascend-910"}}},
        {"annotations",
         {{"huawei.com/Ascend910", "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3"},
          {"ascend.kubectl.kubernetes.io/ascend-910-configuration", allocation},
          {"hccl/rankIndex", "3"}}},
        {"ownerReferences", ordered_json::array({{{"apiVersion", "batch.volcano.sh/v1alpha1"},
                                                  {"kind", "Job"},
                                                  {"name", "job-00042"},
                                                  {"uid", "0b7d5e2f-8a61-4c3e-a1f9-5d2c7e8b9a40"},
                                                  {"controller", true}}})}}},
      {"spec",
       {{"nodeName", "node-00170"},
        {"containers",
         ordered_json::array({{{"name", "main"},
                               {"image", "mindspore:2.3"},
                               {"env", env},
                               {"resources", {{"limits", {{"huawei.com/Ascend910", 8}}}}}}})}}},
      {"status",
       {{"phase", "Running"}, {"podIP", "10.0.17.3"}, {"startTime", "2026-12-06T14:30:01Z"}}}};
  return pod.dump(2);
}

void BM_ParseStoreObject_Nlohmann(benchmark::State& state) {
  const std::string text = PodText();
  for (auto _ : state) {
    ordered_json parsed = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseStoreObject_Nlohmann);

void BM_ParseStoreObject_Quick(benchmark::State& state) {
  const std::string text = PodText();
  for (auto _ : state) {
    std::optional<ordered_json> parsed = ParseJsonQuickly(text);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseStoreObject_Quick);

}  // namespace json_parse_bench
}  // namespace clusterd
