// Feeds the NodeInfo value of a `mindx-dl-nodeinfo-<node>` ConfigMap (written by NodeD: CPU,
// memory, PSU faults of the node) to its parser and, re-signed, to the fault centre's intake,
// with the same text as the ConfigMap's updateTime key.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/fault_intake.h"
#include "fuzz_util.h"
#include "model/config_map_names.h"
#include "model/node_info.h"
#include "store/object_store.h"

using namespace clusterd;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  (void)model::ParseNodeInfoUpdateTimeMs(text);
  absl::StatusOr<model::NodeInfo> info = model::ParseNodeInfoValue(text);
  if (info.ok()) (void)model::ParseNodeInfoValue(model::RenderNodeInfoValue(*info));

  const std::string signed_text =
      fuzz::Resign(text, [](std::string_view t) { return model::ParseNodeInfoValue(t).status(); });
  store::Object cm = {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", std::string(model::kNodeInfoPrefix) + "node-1"},
                        {"namespace", std::string(model::kNodeInfoNamespace)}}},
                      {"data",
                       {{std::string(model::kNodeInfoKey), signed_text},
                        {std::string(model::kNodeInfoUpdateTimeKey), std::string(text)}}}};
  (void)cluster::NodeRecordFromConfigMap(cm);
  return 0;
}
